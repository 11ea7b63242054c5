"""A small protected MCP endpoint for the OAuth tests: our server app behind a thin ASGI
wrapper that uses ``mcpgen._runtime.server.auth`` (the runtime's own wiring comes later).

The wrapper serves the Protected Resource Metadata at its well-known path, and in front of
``/mcp`` asks a ``BearerGuard`` about each request (its JSON-RPC method and params for the
scope policy): a ``Denial`` is sent as is, and nothing reaches the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

import uvicorn
from mcpgen._runtime.server.auth import BearerGuard, Denial, Principal
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class Notes(s.Server):
    """Two tools: ``read_notes`` (needs ``mcp:read``), ``write_note`` (``mcp:write`` too)."""

    name = "notes"

    def __init__(self) -> None:
        self.notes: list[str] = []

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
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
        if params.name == "write_note":
            self.notes.append(str((params.arguments or {}).get("text", "")))
        return s.CallToolResult(content=[m.TextContent(type="text", text="\n".join(self.notes) or "(none)")])


class Protected:
    """``app`` behind ``guard``; records every decision in ``decisions``."""

    def __init__(self, app: App, guard: BearerGuard) -> None:
        self.app = app
        self.guard = guard
        self.decisions: list[tuple[str | None, Principal | Denial]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == self.guard.resource.metadata_path and scope["method"] == "GET":
            await respond(send, 200, self.guard.resource.document(), [(b"content-type", b"application/json")])
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        method, params = None, None
        with contextlib.suppress(ValueError, AttributeError):
            message = json.loads(body) if body else {}
            method, params = message.get("method"), message.get("params")
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        decision = await self.guard.check(headers.get("authorization"), method, params)
        self.decisions.append((method, decision))
        if isinstance(decision, Denial):
            await respond(send, decision.status, decision.body(), decision.headers())
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def respond(send: Send, status: int, data: Any, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(data).encode()})


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
