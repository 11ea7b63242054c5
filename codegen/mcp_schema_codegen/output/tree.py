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
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import atomic_write
from mcp_schema_codegen.output.faults import crash_point, exchange_disabled
from mcp_schema_codegen.output.manifest import MANIFEST as MANIFEST_FILE

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
LOCK_ATTEMPTS = 100  # lock files removed while waited on (each by a failed run), before giving up


_held = threading.local()  # the output directories this thread holds the lock of


@contextlib.contextmanager
def exclusive(out: Path) -> Iterator[None]:
    """Serialise generators writing into the same directory (another run waits its turn).

    A run that failed to make a new output directory removes it, lock file and all, and a run
    waiting meanwhile then gets a lock on a file no longer there: it locks the one in place
    instead (making it, and the directory, again), so no two runs hold the lock at once.
    Reentrant within a thread (``regen`` holds it from the package's swap to the app's
    description, and ``generate`` takes it again inside)."""
    held: set[Path] = _held.__dict__.setdefault("dirs", set())
    key = Path(os.path.realpath(out))  # (resolves what exists of it)
    if key in held:
        yield
        return
    held.add(key)
    try:
        with _exclusive(out):
            yield
    finally:
        held.discard(key)


@contextlib.contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    for _ in range(LOCK_ATTEMPTS):
        try:
            out.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise GeneratorError(f"the output directory {out} is a file, not a directory") from None
        except OSError as exc:
            raise GeneratorError(f"cannot create the output directory {out}: {exc.strerror or exc}") from None
        with open(out / LOCK_FILE, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                if _same_file(handle.fileno(), out / LOCK_FILE):
                    yield
                    return
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    raise GeneratorError(f"cannot lock {out / LOCK_FILE}: it was replaced {LOCK_ATTEMPTS} times while waited on")


def remove_if_only_the_lock(out: Path) -> None:
    """Remove an output directory a failed run made, if nothing but the lock file is in it. Called
    with the lock held: a run waiting on it then finds its file gone and locks anew (``exclusive``);
    removed after the lock was released, a waiting run could take the old file's lock and pass
    that check before the removal, while a third run locked a new file."""
    if out.is_dir() and {p.name for p in out.iterdir()} <= {LOCK_FILE}:
        shutil.rmtree(out, ignore_errors=True)


def _same_file(fd: int, path: Path) -> bool:
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


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
    return staged_directory(TMP_PREFIX, out)


STAGED: list[Path] = []  # every staging directory this process made: an interrupt removes what is left


def staged_directory(prefix: str, parent: Path) -> Path:
    """A new directory in ``parent`` to build a tree in and rename into place, with the mode a
    plain ``mkdir`` gives (``mkdtemp`` makes it 0700 whatever the umask: a scaffolded project,
    renamed into place, was unreadable to every other user). It is made and recorded in
    ``STAGED`` in one step: a signal landing after ``mkdtemp``, before the caller's cleanup took
    it over, left it behind (``remove_staged`` is the CLI's cleanup on an interrupt)."""
    with signals_deferred():
        stage = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        STAGED.append(stage)
    umask = os.umask(0o022)
    os.umask(umask)
    stage.chmod(0o777 & ~umask)
    return stage


def remove_staged() -> None:
    """Remove what is left of this process's staging directories (an interrupted command's; one
    renamed into place is no longer there)."""
    while STAGED:
        shutil.rmtree(STAGED.pop(), ignore_errors=True)


def swap_in(staged: Path, target: Path) -> None:
    """Replace ``target`` with ``staged`` (a sibling directory) atomically. Once the new tree is in
    the swap has succeeded: removing the old one is best effort (a tree the user cannot delete,
    such as a read-only directory, stays behind for ``clean_stale``, and fails nothing)."""
    if not target.exists():
        staged.rename(target)
        return
    crash_point("exchange")
    if not exchange_disabled() and _exchange(staged, target):
        shutil.rmtree(staged, ignore_errors=True)
        return
    old = target.with_name(OLD_PREFIX + target.name)
    target.rename(old)  # clean_stale() restores this if we die before the next line
    crash_point("mid-swap")
    staged.rename(target)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM arriving in the block are delivered when it ends (to the handlers in place
    before it): a swap and the bookkeeping that makes it undoable are one step, not interrupted
    between the two. Only the main thread receives signals; elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []

    def hold(signum: int, frame: object) -> None:
        caught.append(signum)

    previous = {
        sig: signal.signal(sig, hold)
        for sig in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(sig) not in (None, signal.SIG_IGN)  # None: a handler set outside Python
    }
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


class Undo:
    """What ``restored_on_failure`` puts back, once the block ``mark``s what it wrote."""

    def __init__(self, directory: Path, files: tuple[Path, ...]) -> None:
        self.directory = directory
        self.files = files
        self.saved = {path: path.read_bytes() for path in files if path.is_file()}
        self.existed = directory.is_dir()
        self.out_existed = directory.parent.is_dir()
        self.written: tuple[bytes | None, dict[Path, bytes | None]] | None = None

    def mark(self) -> None:
        """The block has written the package and files: put them back if it fails from here on,
        provided they are still as it left them (another run may have written since)."""
        self.written = (_manifest_bytes(self.directory), {path: _bytes(path) for path in self.files})


@contextlib.contextmanager
def restored_on_failure(directory: Path, files: tuple[Path, ...] = ()) -> Iterator[Undo]:
    """Put ``directory`` (a generated package) and ``files`` back as they were when the block fails
    after calling ``Undo.mark`` (it swapped a new package in, then failed: an app that cannot be
    described). Before the mark there is nothing to undo (``generate`` leaves the tree as it was
    on its own failures). What another run wrote since the mark is left alone. A copy of the
    package waits in the system's temporary directory meanwhile; taking it and putting it back
    hold the output directory's lock, the second by the same atomic swap as a generation, with
    SIGINT and SIGTERM held until it is done. A failure to put things back never hides the
    block's own error."""
    undo = Undo(directory, files)
    keep_root = Path(tempfile.mkdtemp(prefix="mcp-codegen-keep-")) if undo.existed else None
    try:
        if keep_root is not None:
            with exclusive(directory.parent):
                shutil.copytree(directory, keep_root / directory.name, symlinks=True)
    except BaseException:
        if keep_root is not None:
            shutil.rmtree(keep_root, ignore_errors=True)
        raise
    try:
        yield undo
    except BaseException as failure:
        if undo.written is not None:
            try:
                with signals_deferred():  # a second Ctrl-C waits for the put-back: never half put back
                    _put_back(undo, keep_root)
            except Exception as exc:
                if isinstance(failure, GeneratorError):
                    raise GeneratorError(
                        f"{failure}; and putting {directory} back failed: {exc}", hint=failure.hint
                    ) from None
        raise
    finally:
        if keep_root is not None:
            shutil.rmtree(keep_root, ignore_errors=True)


def _put_back(undo: Undo, keep_root: Path | None) -> None:
    assert undo.written is not None
    directory, (manifest, files) = undo.directory, undo.written
    out = directory.parent
    with exclusive(out):
        if _manifest_bytes(directory) == manifest:  # still the package this run wrote
            if keep_root is not None:
                stage_root = staging_dir(out)
                try:
                    shutil.copytree(keep_root / directory.name, stage_root / directory.name, symlinks=True)
                    swap_in(stage_root / directory.name, directory)
                finally:
                    shutil.rmtree(stage_root, ignore_errors=True)
            elif directory.exists():
                shutil.rmtree(directory)  # this run made it
        for path, data in undo.saved.items():
            if _bytes(path) == files.get(path):
                atomic_write(path, data)
        if not undo.out_existed:
            remove_if_only_the_lock(out)  # this run made the output directory too


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _manifest_bytes(directory: Path) -> bytes | None:
    return _bytes(directory / MANIFEST_FILE)
