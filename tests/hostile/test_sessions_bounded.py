"""Issue 17 row 5: legacy HTTP sessions expire when idle and are capped; an initialize that
fails (or is a notification) opens none. Driven through the ASGI app with the store's clock
replaced, so time passes without waiting."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpgen._runtime.server import Limits
from mcpgen._runtime.server.services import MemorySessionStore
from mcpgen._runtime.server.transports.asgi import HttpApp

from tests.server.servers import Demo, run
from tests.server.test_asgi import Reply, call

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def app_with(limits: Limits) -> tuple[HttpApp, MemorySessionStore[Any], Clock]:
    server = Demo()
    server.limits = limits  # type: ignore[misc]
    app = server.asgi_app()
    store = server.router.services.sessions
    assert isinstance(store, MemorySessionStore)
    clock = Clock()
    store.clock = clock
    return app, store, clock


async def open_session(app: HttpApp) -> str:
    reply = await call(app, INIT)
    assert reply.status == 200, reply.body
    return reply.headers["mcp-session-id"]


async def ping(app: HttpApp, sid: str) -> Reply:
    return await call(app, PING, {"mcp-session-id": sid})


def test_an_idle_session_expires_and_a_used_one_lives_on() -> None:
    async def go() -> None:
        app, store, clock = app_with(Limits(session_idle_timeout=60))
        idle, used = await open_session(app), await open_session(app)
        for _ in range(5):  # 200 s in all, never 60 s without a request
            clock.now += 40
            assert (await ping(app, used)).status == 200
        gone = await ping(app, idle)
        assert gone.status == 404 and gone.json()["error"]["code"] == -32600
        assert len(store) == 1
        clock.now += 61
        assert (await ping(app, used)).status == 404
        assert (await ping(app, await open_session(app))).status == 200  # the client starts over

    run(go())


def test_the_cap_evicts_the_session_idle_the_longest() -> None:
    async def go() -> None:
        app, store, clock = app_with(Limits(max_sessions=3))
        first, second, third = [await open_session(app) for _ in range(3)]
        clock.now += 1
        assert (await ping(app, first)).status == 200  # now the second is the longest idle
        fourth = await open_session(app)
        assert len(store) == 3
        assert (await ping(app, second)).status == 404
        for sid in (first, third, fourth):
            assert (await ping(app, sid)).status == 200

    run(go())


def test_abandoned_sessions_stay_bounded() -> None:
    async def go() -> None:
        app, store, clock = app_with(Limits(max_sessions=50, session_idle_timeout=30))
        ids = []
        for _ in range(400):
            ids.append(await open_session(app))
            clock.now += 0.5
            assert len(store) <= 50
        assert [(await ping(app, sid)).status for sid in ids[-3:]] == [200, 200, 200]
        assert (await ping(app, ids[0])).status == 404
        clock.now += 31
        assert (await ping(app, ids[-1])).status == 404
        assert len(store) == 0

    run(go())


def test_failed_or_notification_initialize_opens_no_session() -> None:
    async def go() -> list[Reply]:
        app, store, _ = app_with(Limits())
        note = {k: v for k, v in INIT.items() if k != "id"}
        bad = {**INIT, "params": {"protocolVersion": 7}}
        odd_id = {**INIT, "id": {"a": 1}}
        replies = [await call(app, body) for body in (note, bad, odd_id)]
        assert len(store) == 0
        return replies

    note, bad, odd_id = run(go())
    assert "mcp-session-id" not in note.headers and note.status in (202, 400)
    assert "mcp-session-id" not in bad.headers and bad.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in odd_id.headers and odd_id.json()["error"]["code"] == -32600


def test_a_session_with_an_open_stream_is_not_evicted_and_ends_with_its_session() -> None:
    async def go() -> None:
        app, store, clock = app_with(Limits(max_sessions=2, session_idle_timeout=60))
        streaming, idle = await open_session(app), await open_session(app)
        sent: list[dict[str, Any]] = []
        opened = asyncio.Event()

        async def receive() -> dict[str, Any]:
            await asyncio.Event().wait()  # the client never leaves on its own
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            opened.set()

        head = [(b"host", b"127.0.0.1"), (b"mcp-session-id", streaming.encode())]
        scope = {"type": "http", "method": "GET", "path": "/mcp", "headers": head}
        stream = asyncio.create_task(app(scope, receive, send))
        await asyncio.wait_for(opened.wait(), 5)
        clock.now += 100  # both idle past the timeout, but one has a stream open
        third = await open_session(app)
        assert (await ping(app, idle)).status == 404
        assert (await ping(app, third)).status == 200
        assert not stream.done()
        assert (await call(app, method="DELETE", headers={"mcp-session-id": streaming})).status == 200
        await asyncio.wait_for(stream, 5)  # the stream ended with its session
        assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
        assert len(store) == 1

    run(go())


def test_when_every_session_is_busy_initialize_is_503() -> None:
    async def go() -> Reply:
        app, store, _ = app_with(Limits(max_sessions=1))
        sid = await open_session(app)
        conn = await store.get(sid)
        assert conn is not None
        conn.streams += 1  # as if its stream were open
        return await call(app, INIT)

    reply = run(go())
    assert reply.status == 503 and reply.json()["error"]["code"] == -32603
    assert "mcp-session-id" not in reply.headers


def test_session_ids_are_unguessable_and_visible_ascii() -> None:
    async def go() -> list[str]:
        app, _, _ = app_with(Limits())
        return [await open_session(app) for _ in range(20)]

    ids = run(go())
    assert len(set(ids)) == 20
    for sid in ids:
        assert len(sid) >= 32 and all(0x21 <= ord(c) <= 0x7E for c in sid)
        assert json.dumps(sid)  # plain text
