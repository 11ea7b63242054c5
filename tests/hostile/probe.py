"""Drivers for the hostile-input tests: the everything server as a real process, over stdio and HTTP.

``StdioServer`` talks newline-delimited JSON to ``examples/everything_server --stdio``;
``HttpServer`` runs it under uvicorn on a free loopback port (``serve_everything.py``, which
takes the server's ``Limits`` as JSON) and speaks raw HTTP/1.1 over sockets, so a test can send
what no well-behaved client library would. Every line or body the server writes is checked
with ``strict_json``: JSON with no ``NaN``/``Infinity`` and, for a JSON-RPC error, an integer
code and a string message.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tests.conftest import ROOT
from tests.server.servers import EVERYTHING, free_port, stop, wait_http

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
SERVE = Path(__file__).with_name("serve_everything.py")


def env() -> dict[str, str]:
    """The server process's environment; ``HOSTILE_RUNTIME=DIR`` runs another generated tree
    (e.g. an older commit's) to see which of these tests it fails."""
    runtime = os.environ.get("HOSTILE_RUNTIME", str(ROOT / "generated"))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([runtime, str(EVERYTHING)])}


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(data: bytes | str) -> Any:
    """Parse what the server wrote; fail on anything that is not plain JSON or not a valid JSON-RPC error."""
    value = json.loads(data, parse_constant=_constant)
    for message in value if isinstance(value, list) else [value]:
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", message
        if "error" in message:
            error = message["error"]
            assert type(error.get("code")) is int and type(error.get("message")) is str, message
            assert abs(error["code"]) < 2**53, message
            assert message.get("id") is None or type(message["id"]) in (str, int), message
    return value


def initialize(rid: Any = 1, version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "p", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def modern(rid: Any, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    body = dict(params or {})
    body["_meta"] = {**copy.deepcopy(META), **meta}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}


def modern_headers(body: dict[str, Any]) -> dict[str, str]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": body["method"]}
    params = body.get("params", {})
    for key in ("name", "uri"):
        if key in params:
            headers["mcp-name"] = params[key]
    return headers


class StdioServer:
    """``examples/everything_server --stdio`` as a child process; every line it writes is kept."""

    def __init__(self, args: Iterable[str] = ()) -> None:
        self.args = list(args)
        self.lines: list[Any] = []
        self.proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._changed = asyncio.Event()
        self._errors: asyncio.Task[None] | None = None
        self.failure: BaseException | None = None
        self.stderr = bytearray()  # what the server logged (the last MiB)

    async def __aenter__(self) -> StdioServer:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(SERVE),
            "--stdio",
            *self.args,
            env=env(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=256 * 1024 * 1024,
        )
        self._reader = asyncio.create_task(self._read())
        self._errors = asyncio.create_task(self._drain_stderr())
        return self

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(65536):
            self.stderr += chunk
            del self.stderr[: max(0, len(self.stderr) - (1 << 20))]

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                self.lines.append(strict_json(line))
                self._changed.set()
        except BaseException as exc:  # a line that is not valid output: every waiter fails with it
            self.failure = exc
        finally:
            self._changed.set()

    async def __aexit__(self, *exc: object) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        if self.proc.returncode is None:
            self.proc.stdin.close()
            try:
                await asyncio.wait_for(self.proc.wait(), 10)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            await asyncio.wait_for(self._reader, 5)
        if self._errors is not None:
            await asyncio.wait_for(self._errors, 5)
        if self.failure is not None:
            raise self.failure

    async def send(self, *messages: Any) -> None:
        """Write each message (a JSON value, or raw bytes) as one line."""
        assert self.proc is not None and self.proc.stdin is not None
        for message in messages:
            line = message if isinstance(message, bytes) else json.dumps(message).encode()
            self.proc.stdin.write(line + b"\n")
        await self.proc.stdin.drain()

    async def until(self, predicate: Callable[[Any], bool], timeout: float = 10) -> Any:
        """The first line written that satisfies ``predicate`` (waits, bounded)."""
        async with asyncio.timeout(timeout):
            seen = 0
            while True:
                for line in self.lines[seen:]:
                    if predicate(line):
                        return line
                seen = len(self.lines)
                if self.failure is not None:
                    raise self.failure
                if self.proc is not None and self.proc.returncode is not None and self._reader and self._reader.done():
                    raise AssertionError(f"the server exited ({self.proc.returncode}) before the line came")
                self._changed.clear()
                await self._changed.wait()

    async def response(self, rid: Any, timeout: float = 10) -> dict[str, Any]:
        reply: dict[str, Any] = await self.until(
            lambda m: isinstance(m, dict) and m.get("id") == rid and ("result" in m or "error" in m), timeout
        )
        return reply

    async def alive(self, rid: str = "alive") -> None:
        """The server still answers (a modern ping)."""
        await self.send(modern(rid, "server/discover"))
        reply = await self.response(rid)
        assert "result" in reply, reply

    def responses(self) -> list[dict[str, Any]]:
        return [m for m in self.lines if isinstance(m, dict) and ("result" in m or "error" in m)]


class Response:
    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status, self.header_list, self.body = status, headers, body
        self.headers = {k: v for k, v in headers}

    def json(self) -> Any:
        return strict_json(self.body)

    def events(self) -> list[Any]:
        return [strict_json(line[6:]) for line in self.body.decode().splitlines() if line.startswith("data: ")]

    def __repr__(self) -> str:
        return f"Response({self.status}, {self.headers}, {self.body[:300]!r})"


def read_response(sock: socket.socket, timeout: float = 10) -> Response:
    """One HTTP/1.1 response off ``sock`` (content-length, chunked, or until close)."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response: {data!r}")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = [(n.strip().lower(), v.strip()) for n, _, v in (line.partition(":") for line in lines[1:])]
    names = dict(headers)
    if "content-length" in names:
        length = int(names["content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
        return Response(status, headers, rest[:length])
    if names.get("transfer-encoding") == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += sock.recv(65536)
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                chunk = sock.recv(65536)
                if not chunk:
                    raise ConnectionError("closed inside a chunk")
                rest += chunk
            body, rest = body + rest[:size], rest[size + 2 :]
            if size == 0:
                return Response(status, headers, body)
    while chunk := sock.recv(65536):
        rest += chunk
    return Response(status, headers, rest)


class HttpServer:
    """The everything server under uvicorn on a free loopback port, with the given ``Limits`` (JSON)."""

    def __init__(self, limits: dict[str, Any] | None = None) -> None:
        self.limits = limits or {}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> HttpServer:
        args = [sys.executable, str(SERVE), "--port", str(self.port), "--limits", json.dumps(self.limits)]
        # a file, not a pipe: uvicorn logs each malformed request, and a full pipe would stall it
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(args, env=env(), stdout=subprocess.DEVNULL, stderr=self.log)
        try:
            wait_http(self.port, self.proc)
        except BaseException:
            stop(self.proc)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc is not None
        stop(self.proc)
        self.log.close()

    def stderr(self) -> bytes:
        """What the server logged so far."""
        self.log.seek(0)
        return self.log.read()

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=10)

    def raw(self, data: bytes, timeout: float = 10) -> Response:
        """Send raw bytes on a fresh connection and read one response."""
        with self.connect() as sock:
            sock.sendall(data)
            return read_response(sock, timeout)

    def request(
        self,
        body: Any = None,
        headers: dict[str, str] | list[tuple[str, str]] | None = None,
        method: str = "POST",
        raw_body: bytes | None = None,
    ) -> Response:
        """One HTTP/1.1 request; ``headers`` as a list may repeat a name."""
        data = raw_body if raw_body is not None else (json.dumps(body).encode() if body is not None else b"")
        items = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        names = {k.lower() for k, _ in items}
        base = [("host", f"127.0.0.1:{self.port}"), ("content-type", "application/json")]
        base.append(("accept", "application/json, text/event-stream"))
        head = [(k, v) for k, v in base if k not in names] + items
        lines = "".join(f"{k}: {v}\r\n" for k, v in head)
        start = f"{method} /mcp HTTP/1.1\r\n{lines}content-length: {len(data)}\r\nconnection: close\r\n\r\n"
        return self.raw(start.encode("latin-1") + data)

    def alive(self) -> None:
        body = modern("alive", "server/discover")
        reply = self.request(body, modern_headers(body))
        assert reply.status == 200 and "result" in reply.json(), reply

    def legacy_session(self, version: str = LEGACY, capabilities: dict[str, Any] | None = None) -> str:
        reply = self.request(initialize(1, version, capabilities))
        assert reply.status == 200, reply
        return reply.headers["mcp-session-id"]

    def rss_kib(self) -> int:
        assert self.proc is not None
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")


def receive_until(sock: socket.socket, done: Callable[[bytes], bool], timeout: float = 10) -> bytes:
    """Read from ``sock`` until ``done(everything read)`` (bounded)."""
    sock.settimeout(timeout)
    data = b""
    while not done(data):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed early: {data[-500:]!r}")
        data += chunk
    return data


def sse_events(data: bytes) -> list[Any]:
    """The JSON messages of the ``data:`` lines in raw SSE bytes (chunk framing ignored)."""
    return [strict_json(line[6:]) for line in data.decode("latin-1").splitlines() if line.startswith("data: ")]


def deadline(seconds: float) -> Callable[[], bool]:
    end = time.monotonic() + seconds
    return lambda: time.monotonic() < end
