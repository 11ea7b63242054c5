"""A cache of datamodel-code-generator's output, keyed by everything that output depends on.

Running datamodel-code-generator is most of a revision's generation time (about 1.8 of 2.5 s
for 2026-07-28, plus 0.7 s to import it). Its output is a pure function of the document it is
given, its options, its own version and Python's, so ``generate`` and ``check --full`` keep
what it wrote, one file per key, and skip it the next time the same input comes.
``RevisionCache`` keeps, beside it, the files a whole revision renders to (before ruff, which
has its own per-file cache: ``output/format.py``), keyed by everything ``Inputs`` records for
the manifest (schema, patches, overlay, templates, toolchain, layout), the schema's bytes, the
target package and the sha256 of the generator's own source, so an edited generator never gets
an old rendering. A hit still loads and analyses the schema (the IR is needed for the package's
registry and the command's report); it skips the models, the templates and the split. ``check``
compares the result with the tree byte for byte either way.

The cache is an optimisation and never an error: an entry that cannot be read, parsed or that
names another key is a miss, and a directory that cannot be written is skipped. Entries are
written atomically (a temporary file renamed over), so a killed run leaves a whole entry or
none. The newest ``KEEP`` entries are kept.

Where: ``MCP_CODEGEN_CACHE_DIR``, else ``$XDG_CACHE_HOME/mcp-codegen``, else
``~/.cache/mcp-codegen``. ``MCP_CODEGEN_NO_CACHE=1`` (or ``--no-cache``) turns it off.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from mcp_schema_codegen import __version__
from mcp_schema_codegen.frontend.lock import atomic_write

CACHE_DIR = "MCP_CODEGEN_CACHE_DIR"
NO_CACHE = "MCP_CODEGEN_NO_CACHE"
FORMAT = 1  # bump when an entry's layout changes
KEEP = 32
KEEP_RENDERED = 128  # revision renderings kept (about 350 KB each)
SCRATCH = ".entry-"  # prefix of an entry being written


def default_dir() -> Path:
    explicit = os.environ.get(CACHE_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mcp-codegen"


def enabled_by_environment() -> bool:
    return os.environ.get(NO_CACHE, "").strip().lower() not in {"1", "true", "yes", "on"}


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"  # not installed: nothing is cached without it (its run would fail)


@dataclass(frozen=True)
class ModelCache:
    """datamodel-code-generator's source and model metadata, by the sha256 of their inputs."""

    root: Path

    @classmethod
    def default(cls) -> ModelCache | None:
        """The cache the environment asks for, or None when it is turned off."""
        return cls(default_dir()) if enabled_by_environment() else None

    @staticmethod
    def key(text: str, options: dict[str, Any]) -> str:
        """The key of one run: the document as given, the options, and the tools' versions."""
        parts = {
            "format": FORMAT,
            "generator": __version__,
            "datamodel-code-generator": _version("datamodel-code-generator"),
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "options": {name: repr(value) for name, value in sorted(options.items())},
            # an entry is written only for a document its metaschema passed (``generate_models``);
            # entries from before that check are not taken
            "checked": "metaschema",
        }
        digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def get(self, key: str) -> tuple[str, dict[str, Any]] | None:
        entry = read_entry(
            self.root, key, lambda e: isinstance(e.get("source"), str) and isinstance(e.get("metadata"), dict)
        )
        return (entry["source"], entry["metadata"]) if entry is not None else None

    def put(self, key: str, source: str, model_metadata: dict[str, Any]) -> None:
        write_entry(self.root, key, {"key": key, "source": source, "metadata": model_metadata}, KEEP)

    def prune(self) -> None:
        prune_entries(self.root, KEEP)


def read_entry(root: Path, key: str, valid: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    """``root/KEY.json`` when it parses to an object naming ``key`` that ``valid`` accepts (marked
    used, so the newest are kept); else None."""
    path = root / f"{key}.json"
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(entry, dict) and entry.get("key") == key and valid(entry)):
        return None
    with contextlib.suppress(OSError):
        os.utime(path)
    return entry


def write_entry(root: Path, key: str, entry: dict[str, Any], keep: int) -> None:
    """``root/KEY.json`` holds ``entry``, atomically; then ``root`` is pruned to ``keep`` entries."""
    try:
        atomic_write(root / f"{key}.json", json.dumps(entry).encode(), prefix=SCRATCH)
        prune_entries(root, keep)
    except OSError:
        return  # a cache that cannot be written is no cache, not an error


def prune_entries(root: Path, keep: int) -> None:
    """Keep the ``keep`` entries used last; drop what a writer killed more than an hour ago left
    half-written."""
    for scratch in root.glob(f"{SCRATCH}*.tmp"):
        with contextlib.suppress(OSError):
            if scratch.stat().st_mtime < time.time() - 3600:
                scratch.unlink()
    entries = []
    for path in root.glob("*.json"):
        try:
            entries.append((path.stat().st_mtime, path))
        except OSError:
            continue
    entries.sort(reverse=True)
    for _, path in entries[keep:]:
        path.unlink(missing_ok=True)


@functools.cache
def source_digest() -> str:
    """sha256 over the generator's own Python source (this package's ``.py`` files)."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


@dataclass(frozen=True)
class RevisionCache:
    """The files one revision renders to (path inside the revision package -> source, unformatted),
    by the sha256 of every input of that rendering; one JSON file per key, the ``KEEP_RENDERED`` used last
    kept, written atomically; a damaged entry is a miss and an unwritable directory no cache."""

    root: Path

    @classmethod
    def default(cls) -> RevisionCache | None:
        return cls(default_dir() / "revisions") if enabled_by_environment() else None

    @staticmethod
    def key(inputs: dict[str, str]) -> str:
        parts = {
            "format": FORMAT,
            "source": source_digest(),
            "python": f"{sys.version_info.major}.{sys.version_info.minor}",
            "jinja2": _version("jinja2"),  # renders the files (the manifest's inputs name the other tools)
            "inputs": dict(sorted(inputs.items())),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict[str, str] | None:
        def valid(entry: dict[str, Any]) -> bool:
            files = entry.get("files")
            return isinstance(files, dict) and bool(files) and all(isinstance(v, str) for v in files.values())

        entry = read_entry(self.root, key, valid)
        return entry["files"] if entry is not None else None

    def put(self, key: str, files: dict[str, str]) -> None:
        write_entry(self.root, key, {"key": key, "files": files}, KEEP_RENDERED)
