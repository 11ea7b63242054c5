"""What the server benchmarks share: a free loopback port, stopping a child, a raw keep-alive
HTTP/1.1 client for Streamable HTTP (on a plain socket, so the client is never the bottleneck),
and one POST through an ASGI app in process.

Imported by the scripts beside it (``python benchmarks/X.py`` puts this folder on ``sys.path``).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

META_VERSION = "io.modelcontextprotocol/protocolVersion"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(proc: subprocess.Popen[bytes], terminate: bool = False) -> None:
    """Wait for ``proc`` to exit (after its stdin was closed, or ``terminate``d), killing it after 5 s."""
    if terminate:
        proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class HttpPeer:
    """One keep-alive connection to a server child, opened as soon as the child listens on ``port``.

    ``rpc`` posts one message with the headers the transport asks for: after ``initialize`` the
    session id and the negotiated revision, and on a message with ``_meta`` its revision, method
    and tool name. It returns the answer (from a JSON body or an SSE stream), None for a
    notification.
    """

    def __init__(self, command: list[str], cwd: Path, port: int, env: Mapping[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.port = port
        self.headers: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.close()
                    raise TimeoutError(f"{command} did not listen on {port}") from None
                time.sleep(0.002)  # a poll, not synchronisation: the port is the only signal
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.file = self.sock.makefile("rb")

    def post(self, body: bytes, headers: Mapping[str, str]) -> tuple[dict[str, str], bytes]:
        """POST ``body`` to /mcp; the response's headers (lower-case names) and body."""
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        request = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-length: {len(body)}\r\n{head}\r\n"
        self.sock.sendall(request.encode() + body)
        if not self.file.readline():
            raise ConnectionError("server closed the connection")
        got: dict[str, str] = {}
        while (line := self.file.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            got[name.strip().lower()] = value.strip()
        if "content-length" in got:
            return got, self.file.read(int(got["content-length"]))
        chunks = []
        if got.get("transfer-encoding") == "chunked":
            while (size := int(self.file.readline().strip() or b"0", 16)) > 0:
                chunks.append(self.file.read(size))
                self.file.readline()
            self.file.readline()
        return got, b"".join(chunks)

    def rpc(self, message: dict[str, Any]) -> dict[str, Any] | None:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        headers.update(self.headers)
        params = message.get("params", {})
        if "_meta" in params:
            headers["mcp-protocol-version"] = params["_meta"][META_VERSION]
            headers["mcp-method"] = message["method"]
            if "name" in params:
                headers["mcp-name"] = params["name"]
        got, data = self.post(orjson.dumps(message), headers)
        if "id" not in message:
            return None
        answer = self.answer(got, data, message["id"])
        if message.get("method") == "initialize" and "result" in answer:
            if "mcp-session-id" in got:
                self.headers["mcp-session-id"] = got["mcp-session-id"]
            self.headers["mcp-protocol-version"] = answer["result"]["protocolVersion"]
        return answer

    @staticmethod
    def answer(headers: Mapping[str, str], data: bytes, rid: Any) -> dict[str, Any]:
        """The answer to request ``rid`` in a response: its JSON body, or the event carrying it."""
        if headers.get("content-type", "").startswith("text/event-stream"):
            for line in data.decode().splitlines():
                if line.startswith("data: ") and '"id"' in line:
                    msg = orjson.loads(line[6:])
                    if msg.get("id") == rid:
                        return dict(msg)
            raise RuntimeError(f"no answer in {data[:200]!r}")
        return dict(orjson.loads(data))

    def close(self) -> None:
        if hasattr(self, "sock"):
            self.file.close()
            self.sock.close()
        stop(self.proc, terminate=True)


async def asgi_post(app: Any, headers: list[tuple[bytes, bytes]], body: bytes) -> list[dict[str, Any]]:
    """One POST through an ASGI app in process (no sockets): what it sent."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": "/mcp", "headers": headers}, receive, send)
    return sent
