"""A protected MCP endpoint for the OAuth tests: our server app with the runtime's own
protection (``asgi_app(auth=ResourceServer(...))``), on a loopback port.

``Notes`` records every handler call with the ``Principal`` its ``Context`` carried, so a test
can prove that a refused request ran no handler. ``Observed`` watches the app from outside
without changing anything: for each exchange it notes the JSON-RPC method the client sent and
the HTTP status and ``WWW-Authenticate`` challenge the app answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import uvicorn
from mcpgen._runtime.client.auth import parse_www_authenticate
from mcpgen._runtime.server.auth import Principal
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Notes(s.Server):
    """Two tools: ``read_notes`` and ``write_note`` (the scope policy decides who may call which)."""

    name = "notes"

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.calls: list[tuple[str, Principal | None]] = []

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        self.calls.append(("tools/list", ctx.principal))
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return s.ListToolsResult(
            tools=[
                m.Tool(name="read_notes", input_schema={"type": "object"}),
                m.Tool(name="write_note", input_schema=schema),
            ]
        )

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        self.calls.append((f"tools/call {params.name}", ctx.principal))
        if params.name == "write_note":
            self.notes.append(str((params.arguments or {}).get("text", "")))
        return s.CallToolResult(content=[m.TextContent(type="text", text="\n".join(self.notes) or "(none)")])

    def principals(self) -> list[Principal]:
        return [p for _, p in self.calls if p is not None]


@dataclass
class Exchange:
    """One HTTP exchange as seen from outside the app."""

    http_method: str
    path: str
    method: str | None  # the JSON-RPC method of the body, when it had one
    status: int
    www_authenticate: str | None

    @property
    def challenge(self) -> dict[str, str]:
        """The Bearer challenge's parameters (empty without one)."""
        if self.www_authenticate is None:
            return {}
        ((scheme, params),) = parse_www_authenticate([self.www_authenticate])
        assert scheme == "bearer"
        return params

    @property
    def error(self) -> str | None:
        return self.challenge.get("error")


class Observed:
    """``app`` unchanged, with every exchange recorded in ``exchanges``."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = bytearray()

        async def tee() -> Message:
            message = await receive()
            body.extend(message.get("body", b""))
            return message

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: dict[str, str] = {}
                for k, v in message.get("headers", []):  # a repeated header: its values joined (RFC 9110 §5.3)
                    name, value = k.decode("latin-1").lower(), v.decode("latin-1")
                    headers[name] = f"{headers[name]}, {value}" if name in headers else value
                method = None
                with contextlib.suppress(ValueError, AttributeError):
                    method = json.loads(bytes(body)).get("method")
                self.exchanges.append(
                    Exchange(scope["method"], scope["path"], method, message["status"], headers.get("www-authenticate"))
                )
            await send(message)

        await self.app(scope, tee, watch)

    def refused(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.status in (401, 403, 503)]


def listening_socket() -> socket.socket:
    """A loopback socket already listening: clients can connect before the server accepts."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@contextlib.asynccontextmanager
async def serving(app: App, sock: socket.socket) -> AsyncIterator[None]:
    """Serve ``app`` with uvicorn on ``sock`` in this event loop; shut down on exit."""
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield
    finally:
        server.should_exit = True
        await task
        sock.close()


async def request_body(receive: Any) -> bytes:
    """The whole body of the ASGI request ``receive`` reads."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


@contextlib.contextmanager
def served_in_thread(app: App, sock: socket.socket | None = None) -> Iterator[str]:
    """Serve ``app`` with uvicorn in a thread of its own (its own event loop), for synchronous
    tests and clients that run their own loops, on ``sock`` (default: a new loopback socket);
    yields ``http://127.0.0.1:PORT``."""
    sock = sock or listening_socket()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", loop="asyncio"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
