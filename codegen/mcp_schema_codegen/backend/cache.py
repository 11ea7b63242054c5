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
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from mcp_schema_codegen import __version__

CACHE_DIR = "MCP_CODEGEN_CACHE_DIR"
NO_CACHE = "MCP_CODEGEN_NO_CACHE"
FORMAT = 1  # bump when an entry's layout changes
KEEP = 32
KEEP_RENDERED = 128  # revision renderings kept (about 350 KB each)


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
        }
        digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode())
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def get(self, key: str) -> tuple[str, dict[str, Any]] | None:
        path = self.root / f"{key}.json"
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not (
            isinstance(entry, dict)
            and entry.get("key") == key
            and isinstance(entry.get("source"), str)
            and isinstance(entry.get("metadata"), dict)
        ):
            return None
        try:
            os.utime(path)  # the newest are kept
        except OSError:
            pass
        return entry["source"], entry["metadata"]

    def put(self, key: str, source: str, model_metadata: dict[str, Any]) -> None:
        self.write(key, json.dumps({"key": key, "source": source, "metadata": model_metadata}))

    def write(self, key: str, entry: str, keep: int | None = None) -> None:
        """``root/KEY.json`` holds ``entry``, atomically; then the directory is pruned to ``keep``
        entries (default ``KEEP``)."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, scratch = tempfile.mkstemp(prefix=".entry-", suffix=".tmp", dir=self.root)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    out.write(entry)
                os.replace(scratch, self.root / f"{key}.json")
            except BaseException:
                Path(scratch).unlink(missing_ok=True)
                raise
            self.prune(keep)
        except OSError:
            return  # a cache that cannot be written is no cache, not an error

    def prune(self, keep: int | None = None) -> None:
        """Keep the ``keep`` (default ``KEEP``) entries used last; drop what a writer killed more than
        an hour ago left half-written."""
        for scratch in self.root.glob(".entry-*.tmp"):
            with contextlib.suppress(OSError):
                if scratch.stat().st_mtime < time.time() - 3600:
                    scratch.unlink()
        entries = []
        for path in self.root.glob("*.json"):
            try:
                entries.append((path.stat().st_mtime, path))
            except OSError:
                continue
        entries.sort(reverse=True)
        for _, path in entries[KEEP if keep is None else keep :]:
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
            "inputs": dict(sorted(inputs.items())),
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict[str, str] | None:
        path = self.root / f"{key}.json"
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        files = entry.get("files") if isinstance(entry, dict) and entry.get("key") == key else None
        if not (isinstance(files, dict) and files and all(isinstance(v, str) for v in files.values())):
            return None
        try:
            os.utime(path)
        except OSError:
            pass
        return files

    def put(self, key: str, files: dict[str, str]) -> None:
        ModelCache(self.root).write(key, json.dumps({"key": key, "files": files}), keep=KEEP_RENDERED)
