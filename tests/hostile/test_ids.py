"""Issue 17 row 1: ids of every JSON type, over stdio and HTTP, in both eras.

An ``id`` (or a cancellation's ``requestId``) that is not a string or an integer must never be
used as a key: a request with one is answered -32600 with id null, a response or notification
with one is ignored, and the server keeps serving everything else, including what was queued
before it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hostile.probe import HttpServer, StdioServer, initialize, modern, modern_headers

BAD_IDS: list[Any] = [
    {"a": 1},
    [1],
    [],
    {},
    [[{"x": []}]],
    {"id": {"id": 1}},
    None,
    True,
    False,
    1.5,
    1.0,
    -0.0,
    1e300,
]
GOOD_IDS: list[Any] = [0, -7, 2**63, 10**30, "", "x", "\u00e9\u2603", "1", " ", "a" * 1000]


def legacy_request(rid: Any, method: str = "ping") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method}


def cancelled(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


def assert_invalid_request(reply: dict[str, Any]) -> None:
    # an unread id is left out: 2025-11-25 and 2026-07-28 make it optional (neither allows null)
    assert "id" not in reply and reply["error"]["code"] == -32600, reply


def test_stdio_legacy_bad_ids_are_32600_and_nothing_queued_is_lost() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            # the initialize reply is queued when the hostile lines arrive right behind it
            lines: list[Any] = [initialize(1), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
            for rid in BAD_IDS:
                lines += [legacy_request(rid), legacy_request(rid, "tools/list"), cancelled(rid)]
                lines += [{"jsonrpc": "2.0", "id": rid, "result": {}}, {"jsonrpc": "2.0", "id": rid, "error": {}}]
            lines += [legacy_request(rid) for rid in GOOD_IDS]
            lines.append(legacy_request("last"))
            await server.send(*lines)
            await server.response("last")
            assert (await server.response(1))["result"]["protocolVersion"] == "2025-11-25"
            for rid in GOOD_IDS:
                assert (await server.response(rid))["result"] == {}
            errors = [m for m in server.responses() if "error" in m]
            assert len(errors) == 2 * len(BAD_IDS)  # one per bad request; none for responses or notifications
            for reply in errors:
                assert_invalid_request(reply)

    asyncio.run(go())


def test_stdio_modern_bad_ids_are_32600_and_the_server_serves_on() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            lines: list[Any] = []
            for rid in BAD_IDS:
                lines += [modern(rid, "tools/list"), modern(rid, "server/discover"), cancelled(rid)]
                lines.append({"jsonrpc": "2.0", "id": rid, "result": {}})
            await server.send(*lines)
            for rid in GOOD_IDS:
                await server.send(modern(rid, "tools/call", {"name": "test_simple_text"}))
                assert "result" in await server.response(rid)
            await server.alive()
            errors = [m for m in server.responses() if "error" in m]
            assert len(errors) == 2 * len(BAD_IDS)
            for reply in errors:
                assert_invalid_request(reply)

    asyncio.run(go())


def test_stdio_cancel_with_a_bad_request_id_leaves_the_request_running() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            await server.send(modern(5, "tools/call", {"name": "test_tool_with_progress"}, progressToken="t"))
            await server.send(*(cancelled(rid) for rid in BAD_IDS))
            assert "result" in await server.response(5)
            await server.alive()

    asyncio.run(go())


@pytest.fixture(scope="module")
def http() -> Iterator[HttpServer]:
    with HttpServer() as server:
        yield server


@pytest.mark.parametrize("rid", BAD_IDS, ids=repr)
def test_http_bad_ids_on_a_legacy_session(http: HttpServer, rid: Any) -> None:
    sid = http.legacy_session()
    head = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    for body in (legacy_request(rid), legacy_request(rid, "tools/list")):
        reply = http.request(body, head)
        assert reply.status in (200, 400), reply
        assert_invalid_request(reply.json())
    for body in (cancelled(rid), {"jsonrpc": "2.0", "id": rid, "result": {}}):
        reply = http.request(body, head)
        assert reply.status in (202, 400) and not reply.body.strip().startswith(b"5"), reply
    assert http.request(legacy_request(9), head).json()["result"] == {}


@pytest.mark.parametrize("rid", BAD_IDS, ids=repr)
def test_http_bad_ids_on_modern_requests(http: HttpServer, rid: Any) -> None:
    body = modern(rid, "tools/call", {"name": "test_simple_text"})
    reply = http.request(body, modern_headers(body))
    assert reply.status == 400, reply
    assert_invalid_request(reply.json())
    http.alive()


@pytest.mark.parametrize("rid", GOOD_IDS, ids=repr)
def test_http_good_ids_come_back_unchanged(http: HttpServer, rid: Any) -> None:
    body = modern(rid, "tools/call", {"name": "test_simple_text"})
    reply = http.request(body, modern_headers(body))
    assert reply.status == 200 and reply.json()["id"] == rid, reply


def test_each_request_of_a_batch_counts_is_unique_and_cancellable() -> None:
    """A 2025-03-26 batch is one message, but each request in it is in flight: it counts toward
    ``max_inflight``, its id may not be one in flight, and ``notifications/cancelled`` stops it
    (found by a server review: batches slipped past all three, on HTTP and stdio)."""
    from mcpgen._runtime.server import Limits

    from tests.server.servers import Demo

    class Busy(Demo):
        limits = Limits(max_inflight=2)

    def call(rid: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "slow"}}

    async def go() -> None:
        server = Busy()
        router = server.router
        conn = router.connect()

        async def send(data: bytes) -> None:
            pass

        opened = await router.handle(initialize(0, "2025-03-26"), send, conn)
        assert opened.body is not None and conn.legacy is not None
        first = asyncio.ensure_future(router.handle([call(1)], send, conn))
        second = asyncio.ensure_future(router.handle([call(2)], send, conn))
        await asyncio.sleep(0.05)
        assert sorted(conn.inflight) == [1, 2]
        busy = await router.handle([call(3)], send, conn)
        assert b"too many requests in flight" in (busy.body or b""), busy
        await router.handle(cancelled(1), send, conn)
        assert (await asyncio.wait_for(first, 5)).body is None  # cancelled: no response
        assert server.cancelled == ["slow"]
        reused = await router.handle([call(2)], send, conn)
        assert b"already in flight" in (reused.body or b""), reused
        second.cancel()

    asyncio.run(go())
