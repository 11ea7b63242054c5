"""Writing a generated tree: stage it beside the target, swap it in atomically.

The whole package is built in a temporary sibling directory and exchanged with the
previous one in a single ``renameat2(RENAME_EXCHANGE)`` where the OS has it, so a
generator killed at any point leaves either the old tree or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import atomic_write
from mcp_schema_codegen.output.faults import crash_point, exchange_disabled

TMP_PREFIX = ".mcpgen-tmp-"
OLD_PREFIX = ".mcpgen-old-"


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where unsupported."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc: int = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


LOCK_FILE = ".mcpgen-lock"


@contextlib.contextmanager
def exclusive(out: Path) -> Iterator[None]:
    """Serialise generators writing into the same directory (another run waits its turn)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise GeneratorError(f"the output directory {out} is a file, not a directory") from None
    except OSError as exc:
        raise GeneratorError(f"cannot create the output directory {out}: {exc.strerror or exc}") from None
    with open(out / LOCK_FILE, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def clean_stale(out: Path) -> None:
    """Remove leftovers of a run that was killed; restore a tree stranded mid-swap."""
    if not out.is_dir():
        return
    for leftover in out.iterdir():
        if leftover.name.startswith(TMP_PREFIX):
            shutil.rmtree(leftover, ignore_errors=True)
        elif leftover.name.startswith(OLD_PREFIX):
            target = out / leftover.name[len(OLD_PREFIX) :]
            if target.exists():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.rename(target)


def staging_dir(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=out))


def swap_in(staged: Path, target: Path) -> None:
    """Replace ``target`` with ``staged`` (a sibling directory) atomically."""
    if not target.exists():
        staged.rename(target)
        return
    crash_point("exchange")
    if not exchange_disabled() and _exchange(staged, target):
        shutil.rmtree(staged)
        return
    old = target.with_name(OLD_PREFIX + target.name)
    target.rename(old)  # clean_stale() restores this if we die before the next line
    crash_point("mid-swap")
    staged.rename(target)
    shutil.rmtree(old)


@contextlib.contextmanager
def restored_on_failure(directory: Path, files: tuple[Path, ...] = ()) -> Iterator[None]:
    """Put ``directory`` (a generated package) and ``files`` back as they were when the block
    raises: a command that fails after its swap (an app that cannot be described once its package
    moved) leaves the disk as it was. A copy of the directory waits in the system's temporary
    directory meanwhile (not beside it, where ``clean_stale`` clears leftovers); the copy goes
    back in by the same atomic swap as a generation."""
    saved = {path: path.read_bytes() for path in files if path.is_file()}
    keep_root = Path(tempfile.mkdtemp(prefix="mcp-codegen-keep-")) if directory.is_dir() else None
    kept = keep_root / directory.name if keep_root is not None else None
    try:
        if kept is not None:
            shutil.copytree(directory, kept, symlinks=True)
        yield
    except BaseException:
        if kept is not None:
            stage_root = staging_dir(directory.parent)
            try:
                shutil.copytree(kept, stage_root / directory.name, symlinks=True)
                swap_in(stage_root / directory.name, directory)
            finally:
                shutil.rmtree(stage_root, ignore_errors=True)
        elif directory.exists():
            shutil.rmtree(directory, ignore_errors=True)  # the block made it
        for path, data in saved.items():
            atomic_write(path, data)
        raise
    finally:
        if keep_root is not None:
            shutil.rmtree(keep_root, ignore_errors=True)
