"""Formatting generated code with ruff (pinned exactly: its output is part of ours).

ruff's output for a file is a pure function of the file's text, its name (``__init__.py`` keeps
re-exports), the options below and ruff's version: ``src`` is pinned empty and isort's
``detect-same-package`` off, so what counts as a first-party import is the package alone, never
whatever directories the caller's working directory or the tree's parents happen to hold. That
makes it cacheable per file (``FormatCache``, beside the generation cache): a tree whose every
file was formatted before costs no ruff run at all, and only the files not seen before are handed
to ruff. ``check`` renders the whole package again on every run, so most of its ruff time was
spent on the same files.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import random
import shutil
import subprocess
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from mcp_schema_codegen.backend.cache import SCRATCH, default_dir, enabled_by_environment
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import atomic_write

LINE_LENGTH = "100"
FORMAT = 1  # bump when an entry's layout changes
KEEP_FILES = 20_000  # formatted files kept (a generated package is about 900; some 50 MB in all)
PRUNE_EVERY = 200  # new entries between two prunes, on average


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("ruff")
        if found is None:
            raise GeneratorError(
                "ruff is not installed", hint="pip install the generator with its dependencies"
            ) from None
        return found


def ruff_version() -> str | None:
    """The installed ruff distribution's version; None for a ruff found only on ``PATH`` (its
    output is then never cached: nothing says which ruff wrote an entry)."""
    try:
        from ruff.__main__ import find_ruff_bin

        find_ruff_bin()
        return metadata.version("ruff")
    except (ImportError, FileNotFoundError, metadata.PackageNotFoundError):
        return None


def ruff_steps(package: str) -> list[list[str]]:
    """The two ruff runs, without their paths: lint-fix (unused imports, import order, pyupgrade),
    then format. ``--no-cache``: ruff's own cache would be written into the caller's directory and
    never hit (every tree is staged afresh)."""
    common = ["--isolated", "--no-cache", "--line-length", LINE_LENGTH, "--target-version", "py311"]
    first_party = [
        *("--config", f"lint.isort.known-first-party=['{package}']"),
        *("--config", "src=[]"),
        *("--config", "lint.isort.detect-same-package=false"),  # not the packages above the tree
    ]
    return [
        ["check", "--fix-only", "--exit-zero", "--quiet", *common, "--select", "F401,I,UP", *first_party],
        ["format", "--quiet", *common],
    ]


@dataclass(frozen=True)
class FormatCache:
    """ruff's output, one entry per file, keyed by the sha256 of the file's unformatted text, its
    path inside the tree, the package, the options and ruff's version.

    An entry is the key and the sha256 of the formatted text on its first line, the text after
    it, written atomically; one that cannot be read, names another key or does not match its
    digest (cut short) is a miss. A hit marks the entry used, and the
    ``KEEP_FILES`` used last are kept. Never an error: a directory that cannot be written is no
    cache.
    """

    root: Path

    @classmethod
    def default(cls) -> FormatCache | None:
        """The cache the environment asks for (``<generation cache>/format``), or None when it is off."""
        return cls(default_dir() / "format") if enabled_by_environment() else None

    @staticmethod
    def key(settings: str, relative: str, text: bytes) -> str:
        digest = hashlib.sha256(settings.encode())
        digest.update(b"\0" + relative.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(text)
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.py"

    @staticmethod
    def _head(key: str, formatted: bytes) -> bytes:
        return f"{key} {hashlib.sha256(formatted).hexdigest()}\n".encode()

    def get(self, key: str) -> bytes | None:
        path = self._path(key)
        try:
            entry = path.read_bytes()
        except OSError:
            return None
        head, _, formatted = entry.partition(b"\n")
        if head + b"\n" != self._head(key, formatted):  # another key's, or cut short
            return None
        try:
            os.utime(path)  # the newest are kept
        except OSError:
            pass
        return formatted

    def put(self, key: str, formatted: bytes) -> bool:
        """Store one entry; False when the directory cannot be written."""
        try:
            atomic_write(self._path(key), self._head(key, formatted) + formatted, prefix=SCRATCH)
        except OSError:
            return False
        return True

    def prune(self) -> None:
        """Keep the ``KEEP_FILES`` entries used last."""
        entries = []
        try:
            shards = list(os.scandir(self.root))
        except OSError:
            return
        for shard in shards:
            if not shard.is_dir():
                continue
            try:
                for entry in os.scandir(shard.path):
                    if entry.name.startswith(SCRATCH):  # a killed writer's
                        with contextlib.suppress(OSError):
                            if entry.stat().st_mtime < time.time() - 3600:
                                os.unlink(entry.path)
                    elif entry.name.endswith(".py"):
                        try:
                            entries.append((entry.stat().st_mtime, entry.path))
                        except OSError:
                            continue
            except OSError:
                continue
        if len(entries) <= KEEP_FILES:
            return
        entries.sort(reverse=True)
        for _, path in entries[KEEP_FILES:]:
            Path(path).unlink(missing_ok=True)


def _run_ruff(steps: list[list[str]], files: list[Path], root: Path) -> None:
    ruff = ruff_binary()
    for step in steps:
        done = subprocess.run([ruff, *step, "--", *map(str, files)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise GeneratorError(ruff_failure(f"ruff {step[0]}", done, files, root, "generated code"))


def ruff_failure(what: str, done: subprocess.CompletedProcess[str], files: list[Path], root: Path, subject: str) -> str:
    """Why a ruff run failed, in one line: the first file that is no Python (``--quiet`` hides
    ruff's own parse error), else ruff's last words, else its exit status."""
    for path in files:
        try:
            ast.parse(path.read_bytes(), filename=str(path))  # parsed only, never compiled or run
        except SyntaxError as exc:
            where = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
            return f"{subject} is not valid Python: {where}, line {exc.lineno}: {exc.msg}"
        except (OSError, ValueError):
            continue
    said = [line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines() if line.strip()]
    if not said:
        return f"{what} failed on {subject}: exit status {done.returncode}"
    first_last = said[0] if len(said) == 1 else f"{said[0]} ... {said[-1]}"
    return f"{what} failed on {subject}: {first_last[:300]}"


def format_tree(root: Path, package: str, cache: FormatCache | None = None) -> None:
    """Lint-fix (unused imports, import order) and format every ``.py`` file under ``root``,
    taking from ``cache`` what ruff wrote for the same file before and running ruff on the rest."""
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.relative_to(root).parts)
    if not files:
        return
    steps = ruff_steps(package)
    version = ruff_version() if cache is not None else None
    if cache is None or version is None:
        _run_ruff(steps, files, root)
        return
    settings = json.dumps({"format": FORMAT, "ruff": version, "steps": steps})
    # a file that never names the package imports nothing ``known-first-party`` is about: its
    # entry is shared by every package (the runtime's and the models' files of other packages)
    shared = json.dumps({"format": FORMAT, "ruff": version, "steps": ruff_steps("")})
    missed: dict[Path, str] = {}
    for path in files:
        text = path.read_bytes()
        own = package.encode() in text
        key = FormatCache.key(settings if own else shared, path.relative_to(root).as_posix(), text)
        formatted = cache.get(key)
        if formatted is None:
            missed[path] = key
        else:
            path.write_bytes(formatted)
    if not missed:
        return
    _run_ruff(steps, list(missed), root)
    for path, key in missed.items():
        if not cache.put(key, path.read_bytes()):
            return
    if len(missed) >= PRUNE_EVERY or random.random() < len(missed) / PRUNE_EVERY:
        cache.prune()  # a scan of every entry: about once per PRUNE_EVERY new ones
