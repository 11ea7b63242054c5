"""The stdio transport: spawn the server, newline-delimited JSON on stdin/stdout.

The server's stderr passes through to ours (it is logging, never an error). Shutdown
follows the specification: close stdin, wait, then terminate, then kill.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
from collections.abc import Mapping, Sequence
from typing import IO, Any

from pydantic_core import to_json

from .errors import TransportError
from .transport import JSONObject, Receiver, Transport

LINE_LIMIT = 64 * 1024 * 1024


class StdioTransport(Transport):
    """Talk to a server process over its stdin and stdout.

    ``command`` is an argument list (or a shell-style string, split with ``shlex``);
    ``env`` is added to the current environment; ``stderr`` is where the server's stderr
    goes (default: ours).
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
    ) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise ValueError("empty server command")
        self.env = {**os.environ, **env} if env is not None else None
        self.cwd = cwd
        self.stderr = stderr
        self.shutdown_timeout = shutdown_timeout
        self.process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._receiver: Receiver | None = None
        self._closing = False

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
                limit=LINE_LIMIT,
            )
        except OSError as exc:
            raise TransportError(f"cannot start {shlex.join(self.command)}: {exc}") from exc
        self._reader = asyncio.create_task(self._read(self.process, receiver))

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
        try:
            while True:
                line = await process.stdout.readline()
                if not line:
                    break
                if line.strip():
                    await receiver.receive(line)
        except (ValueError, asyncio.LimitOverrunError) as exc:
            error = TransportError(f"unreadable output from the server: {exc}")
        except Exception as exc:  # a broken pipe; the session learns of it below
            error = TransportError(f"reading from the server failed: {exc!r}")
        if error is None:
            code = await _wait(process, 1.0)
            if not self._closing:
                error = TransportError(f"the server process exited (code {code})")
        if error is not None:
            receiver.transport_failed(None, error)

    async def send(self, message: JSONObject, *, headers: Mapping[str, str] | None = None) -> None:
        process = self.process
        if process is None or process.stdin is None or process.returncode is not None:
            raise TransportError("the server process is not running")
        try:
            process.stdin.write(to_json(message) + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise TransportError(f"the server process closed its input: {exc!r}") from exc

    async def close(self) -> None:
        self._closing = True
        process = self.process
        if process is not None and process.returncode is None:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    process.stdin.close()
            if await _wait(process, self.shutdown_timeout) is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
                if await _wait(process, self.shutdown_timeout) is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
                    await _wait(process, self.shutdown_timeout)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader


async def _wait(process: asyncio.subprocess.Process, timeout: float) -> int | None:
    try:
        return await asyncio.wait_for(process.wait(), timeout)
    except TimeoutError:
        return None
