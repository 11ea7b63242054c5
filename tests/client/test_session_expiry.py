"""Legacy Streamable HTTP sessions: a 404 for a request carrying ``Mcp-Session-Id`` means the
server ended the session; the client starts a new one with ``initialize`` and sends the request
again. ``connect`` returns once the server has answered the session's GET stream."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import mcpgen
from mcpgen._runtime.client.connect import open_client
from mcpgen._runtime.client.http import HttpTransport
from mcpgen._runtime.server.services import MemorySessionStore
from mcpgen.v2025_11_25.client import Client as Legacy
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

from tests.auth.protected import served_in_thread


class Tools(s.Server):
    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})])


async def in_process(app: Any, record: Any) -> tuple[httpx.AsyncClient, Legacy]:
    """A 2025-11-25 client of ``app`` over ``httpx.ASGITransport``, ``record`` seeing each request."""
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), event_hooks={"request": [record]})
    client = await open_client(
        HttpTransport("http://127.0.0.1/mcp", client=http), "2025-11-25", registry=mcpgen.REGISTRY
    )
    assert isinstance(client, Legacy)
    return http, client


def test_expired_session_is_renewed_and_the_request_resent() -> None:
    app = Tools().asgi_app()
    sent: list[tuple[str | None, str | None]] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            body = request.content.decode()
            method = "initialize" if '"initialize"' in body else "tools/list" if '"tools/list"' in body else None
            sent.append((method, request.headers.get("mcp-session-id")))

    async def go() -> list[str]:
        http, client = await in_process(app, record)
        async with client:
            first = await client.list_tools()
            assert len(app.router.services.sessions) == 1
            app.router.services.sessions = MemorySessionStore()  # the server forgets every session (a restart)
            second = await client.list_tools()
        await http.aclose()
        return [t.name for t in first.tools + second.tools]

    assert asyncio.run(go()) == ["echo", "echo"]
    calls = [(method, sid is not None) for method, sid in sent if method]
    assert calls == [
        ("initialize", False),
        ("tools/list", True),
        ("tools/list", True),
        ("initialize", False),
        ("tools/list", True),
    ]
    old, new = sent[1][1], sent[-1][1]
    assert old != new


def test_connect_returns_once_the_server_has_answered_the_event_stream() -> None:
    """A server drops what it pushes with no GET stream open, and the conformance suite's
    sse-retry server took a GET that came after the next request for the resumption (CI, once in
    about forty runs): ``connect`` returned with the GET not yet sent."""
    app = Tools().asgi_app()
    methods: list[str] = []

    async def recorded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            methods.append(scope["method"])
        await app(scope, receive, send)

    async def go(url: str) -> list[str]:
        client = await open_client(HttpTransport(url), "2025-11-25", registry=mcpgen.REGISTRY)
        arrived = list(methods)  # before anything else runs
        async with client:
            await client.list_tools()
        return arrived

    with served_in_thread(recorded) as base:  # type: ignore[arg-type]
        arrived = asyncio.run(asyncio.wait_for(go(f"{base}/mcp"), 30))
    assert arrived == ["POST", "POST", "GET"], arrived


def test_requests_that_meet_the_same_expiry_share_one_new_session() -> None:
    """Three requests in flight when the server forgets the session: one ``initialize``, and all
    three answered (the second 404 failed, and a late one threw the new session away)."""
    app = Tools().asgi_app()
    initialized: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST" and b'"initialize"' in request.content:
            initialized.append(request.headers.get("mcp-session-id", "none"))

    async def go() -> list[str]:
        http, client = await in_process(app, record)
        async with client:
            app.router.services.sessions = MemorySessionStore()  # the server forgets every session
            results = await asyncio.gather(*(client.list_tools() for _ in range(3)))
            assert len(app.router.services.sessions) == 1, "one new session, none thrown away"
        await http.aclose()
        return [t.name for r in results for t in r.tools]

    assert asyncio.run(go()) == ["echo"] * 3
    assert initialized == ["none", "none"]


class Documents(Tools):
    """A resource, and a tool that says it changed."""

    async def list_resources(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListResourcesResult:
        return s.ListResourcesResult(resources=[m.Resource(name="doc", uri="test://doc")])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> m.CallToolResult:
        await self.notify_resource_updated("test://doc")
        return s.CallToolResult(content=[m.TextContent(type="text", text="touched")])


def test_an_open_listen_is_subscribed_again_in_the_new_session() -> None:
    """Found by a client review: after the server ended the session (a restart), the client's new
    session had none of the resources an open ``listen`` had subscribed to, so the listen stayed
    open and got nothing, without a word. The client subscribes again for it."""
    app = Documents().asgi_app()
    subscribes: list[str | None] = []

    async def recorded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            headers = dict(scope["headers"])

            async def peek() -> Any:
                message = await receive()
                if b'"resources/subscribe"' in message.get("body", b""):
                    subscribes.append(headers.get(b"mcp-session-id", b"").decode() or None)
                return message

            await app(scope, peek, send)
            return
        await app(scope, receive, send)

    async def go(url: str) -> Any:
        client = await open_client(HttpTransport(url), "2025-11-25", registry=mcpgen.REGISTRY)
        async with client, client.listen(resource_subscriptions=["test://doc"]) as updates:
            await client.call_tool(name="touch", arguments={})
            first = await asyncio.wait_for(updates.__anext__(), 10)
            app.router.services.sessions = MemorySessionStore()  # the server forgets every session (a restart)
            await client.call_tool(name="touch", arguments={})  # 404: a new session, subscribed again
            second = await asyncio.wait_for(updates.__anext__(), 10)
        return first, second

    with served_in_thread(recorded) as base:  # type: ignore[arg-type]
        first, second = asyncio.run(asyncio.wait_for(go(f"{base}/mcp"), 60))
    assert first.params.uri == second.params.uri == "test://doc"
    assert len(subscribes) == 2 and subscribes[0] != subscribes[1], subscribes  # once in each session
