"""The stdio transport: spawn the server, newline-delimited JSON on stdin/stdout.

The server's stderr passes through to ours (it is logging, never an error). Shutdown
follows the specification: close stdin, wait, then terminate, then kill. On POSIX the server
leads a session of its own (as the official SDK starts it): a Ctrl-C at the terminal reaches the
client, which closes the server, and what the server started and left running (its process
group) is terminated, then killed, once the server has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from collections.abc import Mapping, Sequence
from typing import IO, Any

from pydantic_core import to_json

from ..jsonrpc import leading_id
from ..lines import Overlong, chunks
from .errors import TransportError
from .transport import JSONObject, Receiver, Transport

LINE_LIMIT = 64 * 1024 * 1024
EXIT_POLL = 0.25  # s between looks at whether the process has exited (see _watch)
EXIT_GRACE = 1.0  # s to read what an exited server wrote, when its output stays open
STDERR_TAIL = 64 * 1024  # bytes of a piped stderr kept (stderr_tail)
STDERR_WAIT = 2.0  # s an exit's error waits for the rest of a piped stderr
OWN_SESSION = os.name == "posix"  # the server leads a session (and a process group) of its own


class StdioTransport(Transport):
    """Talk to a server process over its stdin and stdout.

    ``command`` is an argument list (or a shell-style string, split with ``shlex``);
    ``env`` is added to the current environment; ``stderr`` is where the server's stderr
    goes (default: ours). With ``subprocess.PIPE`` the transport reads it (so do not read
    ``process.stderr`` yourself), keeps its last ``STDERR_TAIL`` bytes in ``stderr_tail`` and
    quotes the last 2,000 characters when the server exits (unread, asyncio buffered about 128
    MiB, then the server stopped, every request timing out).
    """

    kind = "stdio"

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr: IO[Any] | int | None = None,
        shutdown_timeout: float = 2.0,
        line_limit: int = LINE_LIMIT,
    ) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise ValueError("empty server command")
        self.env = {**os.environ, **env} if env is not None else None
        self.cwd = cwd
        self.stderr = stderr
        self.shutdown_timeout = shutdown_timeout
        self.line_limit = line_limit  # bytes of one line read at most; a longer one is skipped
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._stderr_reader: asyncio.Task[None] | None = None
        self._receiver: Receiver | None = None
        self._closing = False
        self.stderr_tail = b""  # with stderr=PIPE: the end of what the server wrote there
        self._ending: tuple[asyncio.subprocess.Process, asyncio.Task[None]] | None = None  # its group's end

    def __repr__(self) -> str:
        return f"StdioTransport({shlex.join(self.command)!r})"

    def describe(self) -> str:
        return "stdio:" + shlex.join(self.command)

    async def start(self, receiver: Receiver) -> None:
        self._receiver = receiver
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=self.stderr,
                env=self.env,
                cwd=self.cwd,
                limit=self.line_limit,
                start_new_session=OWN_SESSION,
            )
        except OSError as exc:
            raise TransportError(f"cannot start {shlex.join(self.command)}: {exc}") from exc
        if self.process.stderr is not None:  # stderr=PIPE: read here, or the server stops when it fills
            self.stderr_tail = b""
            self._stderr_reader = asyncio.create_task(self._read_stderr(self.process.stderr))
        self._reader = asyncio.create_task(self._read(self.process, receiver))

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        with contextlib.suppress(Exception):
            while chunk := await stream.read(1 << 16):
                self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL:]

    async def _exit_said(self, code: int) -> str:
        """``_exited``, once a piped stderr is read to its end (at most ``STDERR_WAIT`` s: it ends
        with the process, but a loaded machine ran the reader late, and the error said only the
        exit code, not the server's last words)."""
        if self._stderr_reader is not None:  # (asyncio.wait: a reader cancelled meanwhile, by a
            # close or a restart, ends the wait; it raised CancelledError in a task nobody cancelled)
            await asyncio.wait({self._stderr_reader}, timeout=STDERR_WAIT)
        return self._exited(code)

    def _exited(self, code: int) -> str:
        said = self.stderr_tail.decode(errors="replace").strip()
        return f"the server process exited (code {code})" + (f"; its stderr ended: {said[-2000:]}" if said else "")

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def restartable(self) -> bool:
        """The process exited without this client closing it."""
        return not self._closing and self.process is not None and self.process.returncode is not None

    async def restart(self, receiver: Receiver) -> None:
        """A fresh process of the same command, what the old one held released first."""
        await self.close()
        self._closing = False
        await self.start(receiver)

    async def _read(self, process: asyncio.subprocess.Process, receiver: Receiver) -> None:
        assert process.stdout is not None
        error: TransportError | None = None
        watch = asyncio.ensure_future(self._watch(process))
        try:
            async for batch in chunks(process.stdout, self.line_limit):
                for line in batch:
                    if isinstance(line, Overlong):  # skipped, in bounded memory: the session carries on
                        said = f"the server wrote a line longer than {self.line_limit} bytes: skipped"
                        rid = leading_id(line.head, "response")  # a request's answer: that request fails now
                        if rid is not None and receiver.awaiting(rid):
                            receiver.transport_failed(rid, TransportError(f"{said} (the answer to request {rid!r})"))
                        else:
                            receiver.unreadable(said)
                    elif line.strip():
                        await receiver.receive(line)
        except Exception as exc:  # a broken pipe; the session learns of it below
            error = TransportError(f"reading from the server failed: {exc!r}")
        finally:
            watch.cancel()
        if error is None:
            code = await _wait(process, 1.0)
            if code is not None:
                self._end_group(process)
            if self._closing:
                return
            if code is None:  # nothing more can come from it: stopped, so a modern client starts another
                await self._stop(process)
                error = TransportError("the server closed its output while running; it was stopped")
            else:
                error = TransportError(await self._exit_said(code))
        receiver.transport_failed(None, error)

    async def _watch(self, process: asyncio.subprocess.Process) -> None:
        """End the reading when the process has exited but its output stays open (a process it
        started holds it): what the server wrote is read for ``EXIT_GRACE`` s, then its pipes are
        closed, which ends the output. Polled: asyncio (3.11) reports the exit only once every
        pipe is closed."""
        while process.returncode is None:
            await asyncio.sleep(EXIT_POLL)
        self._end_group(process)
        await asyncio.sleep(EXIT_GRACE)
        _release(process)  # its pipes closed: the output ends here, whoever else holds it

    async def send(self, message: JSONObject, *, headers: Mapping[str, str] | None = None) -> None:
        process = self.process
        if process is not None and process.returncode is not None:  # told as the reader tells it
            raise TransportError(await self._exit_said(process.returncode))
        if process is None or process.stdin is None:
            raise TransportError("the server process is not running")
        try:
            process.stdin.write(to_json(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            # most often it has exited (a loaded machine runs it to its end before this write):
            # told as the reader tells an exit, its code and stderr, not as the broken pipe
            code = await _wait(process, 1.0)
            if code is not None:
                raise TransportError(await self._exit_said(code)) from exc
            raise TransportError(f"the server process closed its input: {exc!r}") from exc

    async def close(self) -> None:
        self._closing = True
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            if await _wait(process, self.shutdown_timeout) is None:
                await self._stop(process)
        for reader in (self._reader, self._stderr_reader):
            if reader is not None:
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader
        if process is not None:
            ending = self._end_group(process)
            if ending is not None:
                await asyncio.shield(ending)
            _release(process)

    def _end_group(self, process: asyncio.subprocess.Process) -> asyncio.Task[None] | None:
        """Once the server has exited, and as soon as that is seen: what it left running ended.
        At once, not at ``close``: by then (hours later, for an idle client) its pid may lead
        another program's group. The ending's task (one per process)."""
        if not OWN_SESSION or process.returncode is None:
            return None
        if self._ending is None or self._ending[0] is not process:  # a task of its own: who saw the
            # exit goes on (the session is told at once), and cancelling it (close cancels the
            # reader and the watcher) does not cut the ending short; close waits for it
            self._ending = (process, asyncio.ensure_future(_terminate_group(process.pid, self.shutdown_timeout)))
        return self._ending[1]

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        """Terminate, then kill."""
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        if await _wait(process, self.shutdown_timeout) is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await _wait(process, self.shutdown_timeout)


async def _wait(process: asyncio.subprocess.Process, timeout: float) -> int | None:
    """The exit code within ``timeout`` s, or None. The code as soon as the process has exited,
    whether or not a process it started still holds its output (``wait`` waits for that too)."""
    if process.returncode is not None:
        return process.returncode
    try:
        return await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        return process.returncode


async def _terminate_group(group: int, timeout: float) -> None:
    """The processes the exited server (``group``'s leader, reaped) started and left running:
    terminated, then killed after ``timeout`` s; ended ones not yet reaped are not waited for.
    Signalled only while no process holds the leader's pid: Linux keeps the number for the group
    while a member lives, and once none does the number may name another process's group."""
    if _exists(group) or not _signal_group(group, signal.SIGTERM):
        return
    members = _members(group)  # one look at /proc (each one costs ~20 us a process), then at these only
    deadline = time.monotonic() + timeout
    while _signal_group(group, 0) and (members is None or any(_runs(pid, group) for pid in members)):
        if time.monotonic() >= deadline:
            _signal_group(group, signal.SIGKILL)
            return
        await asyncio.sleep(0.02)


def _signal_group(group: int, sig: int) -> bool:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _members(group: int) -> list[int] | None:
    """The processes of ``group`` that run (not ended and unreaped: a zombie, which an init that
    reaps nothing keeps for ever); None without ``/proc`` (then any member counts)."""
    try:
        pids = [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()]
    except OSError:
        return None
    return [pid for pid in pids if _runs(pid, group)]


def _runs(pid: int, group: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    fields = stat[stat.rindex(b")") + 2 :].split()  # state, ppid, pgrp, ...
    return len(fields) > 2 and fields[2] == str(group).encode() and fields[0] != b"Z"


def _release(process: asyncio.subprocess.Process) -> None:
    """Close the pipes of an exited process that a process it started may still hold open."""
    if process.returncode is not None:
        transport = getattr(process, "_transport", None)
        if transport is not None:
            with contextlib.suppress(Exception):
                transport.close()
