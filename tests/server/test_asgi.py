"""The Streamable HTTP ASGI app, driven in process: headers, statuses, sessions, SSE, limits."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from typing import Any

import pytest
from mcpgen._runtime.server import Limits
from mcpgen._runtime.server.transports.asgi import HttpApp, Soon
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

from tests.server.servers import MODERN, Demo, request, run

Headers = dict[str, str]


class Reply:
    def __init__(self, status: int, headers: Headers, body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[dict[str, Any]]:
        assert self.headers["content-type"] == "text/event-stream"
        return [json.loads(line[6:]) for line in self.body.decode().splitlines() if line.startswith("data: ")]


async def call(
    app: HttpApp, body: Any = None, headers: Headers | None = None, method: str = "POST", raw: bytes | None = None
) -> Reply:
    """One HTTP exchange with the app (bounded)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
    head = {"host": "127.0.0.1:8000", "content-type": "application/json", **(headers or {})}
    scope = {
        "type": "http",
        "method": method,
        "path": "/mcp",
        "headers": [(k.lower().encode(), v.encode()) for k, v in head.items()],
    }
    chunks = [{"type": "http.request", "body": data, "more_body": False}]
    disconnect = asyncio.Event()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop(0)
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async with asyncio.timeout(5):
        await app(scope, receive, send)
    start = sent[0]
    headers_out = {k.decode(): v.decode() for k, v in start.get("headers", [])}
    return Reply(start["status"], headers_out, b"".join(m.get("body", b"") for m in sent[1:]))


def modern_headers(body: dict[str, Any]) -> Headers:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": body["method"]}
    params = body.get("params", {})
    for key in ("name", "uri"):
        if key in params:
            headers["mcp-name"] = params[key]
    return headers


def modern_post_scope(body: dict[str, Any]) -> dict[str, Any]:
    """The ASGI scope of a 2026-07-28 POST of ``body`` to /mcp (its headers from the body)."""
    head = {"host": "127.0.0.1", **modern_headers(body)}
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in head.items()],
    }


def test_modern_post_answers_json_with_status_by_error() -> None:
    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        ok = request(1, "tools/list")
        unknown = request(2, "prompts/list")
        no_meta = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
        version = request(4, "tools/list", **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"})
        return [
            await call(app, ok, modern_headers(ok)),
            await call(app, unknown, modern_headers(unknown)),
            await call(app, no_meta, {"mcp-method": "tools/list"}),
            await call(app, version, {**modern_headers(version), "mcp-protocol-version": "2099-01-01"}),
        ]

    ok, unknown, no_meta, version = run(go())
    assert ok.status == 200 and ok.headers["content-type"] == "application/json"
    assert ok.json()["result"]["tools"][0]["name"] == "echo"
    assert "mcp-session-id" not in ok.headers  # modern: no sessions
    assert (unknown.status, unknown.json()["error"]["code"]) == (404, -32601)
    assert (no_meta.status, no_meta.json()["error"]["code"]) == (400, -32602)
    assert (version.status, version.json()["error"]["code"]) == (400, -32022)


def test_header_body_mismatch_is_32020() -> None:
    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        body = request(1, "tools/call", {"name": "echo"})
        good = modern_headers(body)
        cases = [
            {k: v for k, v in good.items() if k != "mcp-protocol-version"},
            {**good, "mcp-method": "tools/list"},
            {**good, "mcp-method": "TOOLS/CALL"},
            {k: v for k, v in good.items() if k != "mcp-method"},
            {**good, "mcp-name": "other"},
            {k: v for k, v in good.items() if k != "mcp-name"},
        ]
        replies = [await call(app, body, h) for h in cases]
        replies.append(await call(app, body, {**good, "mcp-name": "=?base64?ZWNobw==?=", "mcp-method": " tools/call "}))
        return replies

    *bad, encoded = run(go())
    for reply in bad:
        assert (reply.status, reply.json()["error"]["code"], reply.json()["id"]) == (400, -32020, 1)
    # a header left out is said to be missing (a fresh user read "does not match" for one never sent)
    assert [reply.json()["error"]["message"] for reply in bad] == [
        "MCP-Protocol-Version header is missing (_meta names a protocolVersion)",
        "Mcp-Method header does not match the body's method",
        "Mcp-Method header does not match the body's method",
        "Mcp-Method header is missing",
        "Mcp-Name header does not match params.name",
        "Mcp-Name header is missing (params.name is given)",
    ]
    assert encoded.status == 200, encoded.body


def test_progress_turns_the_reply_into_an_sse_stream() -> None:
    async def go() -> Reply:
        body = request(1, "tools/call", {"name": "echo"}, progressToken="p")
        return await call(Demo().asgi_app(), body, modern_headers(body))

    reply = run(go())
    events = reply.events()
    assert [e.get("method") for e in events] == ["notifications/progress", None]
    assert events[-1]["id"] == 1 and "result" in events[-1]


def test_notification_is_202_and_get_delete_are_405_without_a_session() -> None:
    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        return [await call(app, note), await call(app, method="GET"), await call(app, method="DELETE")]

    note, get, delete = run(go())
    assert note.status == 202 and get.status == 405
    assert delete.status == 405 and get.headers["allow"] == delete.headers["allow"] == "GET, POST, DELETE"


def test_a_notification_or_response_the_server_refuses_is_400_with_the_error() -> None:
    """Streamable HTTP: a notification or response the server cannot accept gets an HTTP error
    status, its body a JSON-RPC error without an id (2026-07-28 and 2025-11-25 alike); a client
    never sends a response outside a legacy session."""

    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        unknown = {"jsonrpc": "2.0", "method": "notifications/unknown"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}  # no session: not a 2026 notification
        response = {"jsonrpc": "2.0", "id": 3, "result": {}}
        return [await call(app, message) for message in (unknown, initialized, response)]

    unknown, initialized, response = run(go())
    for reply, code in ((unknown, -32601), (initialized, -32601), (response, -32600)):
        assert reply.status == 400 and reply.headers["content-type"] == "application/json"
        assert "id" not in reply.json() and reply.json()["error"]["code"] == code
    assert unknown.json()["error"]["data"] == {"method": "notifications/unknown"}  # the codec's own error


def test_an_invalid_cancellation_is_ignored_with_202_in_either_era() -> None:
    """cancellation.mdx (both eras): invalid cancellation notifications SHOULD be ignored, as
    stdio does; over HTTP they got 400 with -32602 (a spec review)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    odd = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}, "_meta": meta}}
    bare = {"jsonrpc": "2.0", "method": "notifications/cancelled"}

    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        session = await legacy_session(app, "2025-11-25")
        legacy_odd = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}}
        replies = [await call(app, odd, modern_headers(odd))]
        replies += [await call(app, message, session) for message in (legacy_odd, bare)]
        return [*replies, await call(app, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)]

    *ignored, ping = run(go())
    assert [reply.status for reply in ignored] == [202, 202, 202], [r.body for r in ignored]
    assert ping.status == 200 and ping.json()["result"] == {}


async def legacy_session(app: HttpApp, version: str) -> Headers:
    """Initialize a legacy session at ``version``: the headers its later requests carry."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    return {"mcp-session-id": (await call(app, init)).headers["mcp-session-id"], "mcp-protocol-version": version}


def test_a_legacy_request_cancelled_before_it_sent_anything_gets_an_empty_stream() -> None:
    """A request's POST is answered by JSON or an event stream, never 202 (that is for
    notifications and responses); a request cancelled by notifications/cancelled gets no
    JSON-RPC response, so its stream ends empty."""

    async def go() -> tuple[Reply, Reply, list[str]]:
        server = Demo()
        app = server.asgi_app()
        session = await legacy_session(app, "2025-11-25")
        slow = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "slow"}}
        waiting = asyncio.create_task(call(app, slow, session))
        await asyncio.sleep(0.1)
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
        cancelled = await call(app, cancel, session)
        return await waiting, cancelled, server.cancelled

    answered, cancelled, seen = run(go())
    assert cancelled.status == 202 and seen == ["slow"]
    assert answered.status == 200 and answered.headers["content-type"] == "text/event-stream" and answered.body == b""


def test_a_legacy_batch_of_notifications_and_responses_is_202() -> None:
    """2025-03-26 batches: a POST holding no request gets 202 with no body (an empty stream is
    only for a request whose answer was cancelled)."""

    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        session = await legacy_session(app, "2025-03-26")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        return [
            await call(app, [note], session),
            await call(app, [{"jsonrpc": "2.0", "id": 99, "result": {}}], session),
        ]

    for reply in run(go()):
        assert (reply.status, reply.body) == (202, b"")


def test_input_holding_no_request_that_a_legacy_session_refuses_gets_an_error_status() -> None:
    """Inside a legacy session too, input that is no request and cannot be accepted gets an HTTP
    error status (transports.mdx), not 200: a batch where the revision has none, a message that is
    neither request, notification nor response. A request's error stays its 200 response."""

    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        session = await legacy_session(app, "2025-11-25")
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        bad_request = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}
        return [
            await call(app, [note], session),
            await call(app, {"jsonrpc": "2.0"}, session),
            await call(app, bad_request, session),
        ]

    batch, neither, bad_request = run(go())
    assert (batch.status, batch.json()["error"]["code"]) == (400, -32600)
    assert (neither.status, neither.json()["error"]["code"]) == (400, -32600)
    assert (bad_request.status, bad_request.json()["id"], bad_request.json()["error"]["code"]) == (200, 5, -32602)


def test_a_legacy_message_without_a_session_id_is_400_on_a_server_of_both_eras() -> None:
    """transports.mdx: a message other than initialize without Mcp-Session-Id gets 400. A server
    of both eras told the legacy revision by MCP-Protocol-Version (or by its absence: 2025-03-26)
    answers so, not with the modern era's answer (404 for a method 2026-07-28 does not have, which
    means "session gone")."""

    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        await legacy_session(app, "2025-11-25")
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        told = [await call(app, body, {"mcp-protocol-version": "2025-11-25"}) for body in (ping, listing)]
        return [*told, await call(app, ping)]  # no header: 2025-03-26, whose clients send none

    for reply in run(go()):
        assert reply.status == 400 and reply.json()["error"]["code"] == -32600
        assert "Mcp-Session-Id" in reply.json()["error"]["message"]


def test_host_origin_and_body_size_are_checked() -> None:
    async def go() -> list[Reply]:
        server = Demo()
        server.limits = Limits(max_body_bytes=1000)  # type: ignore[misc]
        app = server.asgi_app()
        body = request(1, "tools/list")
        head = modern_headers(body)
        return [
            await call(app, body, {**head, "host": "evil.example:8000"}),
            await call(app, body, {**head, "origin": "http://evil.example"}),
            await call(app, body, {**head, "origin": "http://localhost:5173"}),
            await call(app, raw=b"x" * 2000, headers=head),
            await call(app, raw=b"{oops", headers=head),
        ]

    host, origin, local, big, parse = run(go())
    assert host.status == 421 and origin.status == 403 and local.status == 200
    assert big.status == 413
    assert (parse.status, parse.json()["error"]["code"]) == (400, -32700)


def test_legacy_session_lifecycle_over_http() -> None:
    async def go() -> list[Reply]:
        app = Demo().asgi_app()
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }
        first = await call(app, init)
        sid = first.headers["mcp-session-id"]
        session = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        listed = await call(app, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        ping = await call(app, {"jsonrpc": "2.0", "id": 3, "method": "ping"}, session)
        gone = await call(app, method="DELETE", headers=session)
        after = await call(app, {"jsonrpc": "2.0", "id": 4, "method": "ping"}, session)
        return [first, listed, ping, gone, after]

    first, listed, ping, gone, after = run(go())
    assert first.json()["result"]["protocolVersion"] == "2025-11-25"
    assert all(0x21 <= ord(c) <= 0x7E for c in first.headers["mcp-session-id"])
    assert listed.json()["result"] == {"tools": [{"inputSchema": {"type": "object"}, "name": "echo"}]}
    assert ping.json()["result"] == {}
    assert gone.status == 200 and after.status == 404


class OpenStream:
    """A GET stream of a legacy session held open in process: what it received, and a way to go."""

    def __init__(self, app: HttpApp, session: Headers) -> None:
        self.received = bytearray()
        self.gone = asyncio.Event()
        head = {"host": "127.0.0.1:8000", "accept": "text/event-stream", **session}
        scope = {
            "type": "http",
            "method": "GET",
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in head.items()],
        }
        self.task = asyncio.create_task(app(scope, self.receive, self.send))

    async def receive(self) -> dict[str, Any]:
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.received += message.get("body", b"")

    def methods(self) -> list[str]:
        return [
            json.loads(line[6:])["method"] for line in self.received.decode().splitlines() if line.startswith("data: {")
        ]

    async def close(self) -> None:
        self.gone.set()
        await asyncio.wait_for(self.task, 5)


def test_when_the_newest_of_two_get_streams_closes_the_other_carries_the_notifications() -> None:
    """transports.mdx: a client MAY hold several SSE streams; the server sends each message on
    one of them. The newest took over, and once it closed the first, still open, got nothing: a
    tools/list_changed was lost."""

    async def go() -> tuple[list[str], list[str]]:
        server = Demo()
        app = server.asgi_app()
        session = await legacy_session(app, "2025-11-25")
        first, second = OpenStream(app, session), OpenStream(app, session)
        await asyncio.sleep(0.1)
        await server.notify_tools_changed()
        await asyncio.sleep(0.1)
        await second.close()
        await server.notify_prompts_changed()
        await asyncio.sleep(0.1)
        await first.close()
        return first.methods(), second.methods()

    first, second = run(go())
    assert second == ["notifications/tools/list_changed"]
    assert first == ["notifications/prompts/list_changed"]


def test_closing_the_sse_stream_cancels_the_request() -> None:
    async def go() -> tuple[list[dict[str, Any]], list[str]]:
        server = Demo()
        app = server.asgi_app()
        body = request(1, "tools/call", {"name": "stream"}, progressToken="p")
        scope = modern_post_scope(body)
        first = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]
        streaming = asyncio.Event()
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if first:
                return first.pop()
            await streaming.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message.get("more_body"):
                streaming.set()

        async with asyncio.timeout(5):
            await app(scope, receive, send)
        return sent, server.cancelled

    sent, cancelled = run(go())
    assert sent[0]["status"] == 200 and dict(sent[0]["headers"])[b"content-type"] == b"text/event-stream"
    assert b"notifications/progress" in sent[1]["body"]
    assert len(sent) == 2  # no response after the client left
    assert cancelled == ["stream"]


def test_a_client_that_goes_before_anything_was_sent_cancels_the_request() -> None:
    """cancellation.mdx: a client's disconnect cancels its request, also while the handler has
    sent nothing yet (no SSE stream started); nothing is written after it."""

    async def go() -> tuple[list[dict[str, Any]], list[str], float]:
        server = Demo()
        app = server.asgi_app()
        body = request(1, "tools/call", {"name": "slow"})
        scope = modern_post_scope(body)
        first = [{"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if first:
                return first.pop()
            await asyncio.sleep(0.2)  # the client gives up
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        started = asyncio.get_running_loop().time()
        async with asyncio.timeout(5):  # the slow tool sleeps 30 s
            await app(scope, receive, send)
        return sent, server.cancelled, asyncio.get_running_loop().time() - started

    sent, cancelled, took = run(go())
    assert cancelled == ["slow"] and sent == [] and took < 5


def sse_events(body: bytes) -> list[dict[str, str]]:
    """Each SSE event of ``body`` as its fields (comments dropped)."""
    events = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) if ": " in line else (line.rstrip(":"), "") for line in block.splitlines())
        fields.pop("", None)
        if fields:
            events.append(fields)
    return events


def test_legacy_streams_are_primed_only_where_the_revision_says_so() -> None:
    """2025-11-25 (the overlay's sse_priming): the stream opens with an id and empty data; an
    older revision's client reads every data field as a message, so its stream has no priming
    event, though every event still carries an id to resume from."""

    async def stream(version: str) -> list[dict[str, str]]:
        app = Demo().asgi_app()
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        }
        sid = (await call(app, init)).headers["mcp-session-id"]
        session = {"mcp-session-id": sid, "mcp-protocol-version": version, "accept": "text/event-stream"}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        body["params"] = {"name": "echo", "_meta": {"progressToken": "p"}}
        reply = await call(app, body, session)
        assert reply.headers["content-type"] == "text/event-stream", reply.body
        return sse_events(reply.body)

    primed, plain = run(stream("2025-11-25")), run(stream("2025-06-18"))
    assert primed[0]["data"] == "" and primed[0]["id"], primed
    messages = [json.loads(e["data"]) for e in primed[1:]]
    assert messages[0]["method"] == "notifications/progress" and messages[-1]["id"] == 2, messages
    assert [json.loads(e["data"]).get("method") for e in plain] == [m.get("method") for m in messages], plain
    assert all(e["id"] for e in plain)


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_a_handler_lets_go_of_the_connection_only_once_the_client_can_resume(version: str) -> None:
    """2025-11-25 transports: the server may close a request's stream only after an event with an
    id. A stream of 2025-06-18 or 2025-03-26 opens unprimed, so ``close_sse_stream`` before any
    event closed it with nothing to resume from and the response was lost (a transport review);
    it now leaves that stream open, and closes one whose client has an id."""

    async def exchange(tool: str) -> list[dict[str, str]]:
        app = Demo().asgi_app()
        session = {**(await legacy_session(app, version)), "accept": "application/json, text/event-stream"}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
        body["params"] = {"name": tool, "_meta": {"progressToken": "p"}}
        reply = await call(app, body, session)
        assert reply.headers["content-type"] == "text/event-stream", reply.body
        return sse_events(reply.body)

    def answered(events: list[dict[str, str]]) -> bool:
        return any(json.loads(e["data"]).get("id") == 2 for e in events if e.get("data"))

    at_once = run(exchange("poll-at-once"))
    primed = version == "2025-11-25"
    assert answered(at_once) is not primed, at_once  # unprimed: kept open, the response on it
    assert any("retry" in e for e in at_once) is primed
    after_an_event = run(exchange("poll"))  # an id went out with the progress: closed, resumable
    assert not answered(after_an_event) and after_an_event[-1] == {"retry": "10"}, after_an_event
    assert all(e["id"] for e in after_an_event if "data" in e)


def test_stalled_bodies_get_408_each_at_its_own_deadline() -> None:
    """The app's one body timer: each stalled body gets 408 its full ``body_timeout`` after its
    own request began (not at an earlier request's deadline), a body that arrives meanwhile is
    served, and a request cancelled by someone else is cancelled, not answered 408."""

    async def go() -> tuple[list[tuple[int, float]], int, bool, HttpApp]:
        server = Demo()
        server.limits = Limits(body_timeout=0.4)  # type: ignore[misc]
        app = server.asgi_app()
        body = request(1, "tools/list")
        scope = modern_post_scope(body)
        never = asyncio.Event()

        async def exchange(delay: float | None) -> tuple[int, float]:
            """One POST whose body comes after ``delay`` seconds (never, for None): status, seconds."""

            async def receive() -> dict[str, Any]:
                if delay is None:
                    await never.wait()
                await asyncio.sleep(delay or 0)
                return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}

            sent: list[dict[str, Any]] = []

            async def send(message: dict[str, Any]) -> None:
                sent.append(message)

            began = asyncio.get_running_loop().time()
            await app(scope, receive, send)
            return sent[0]["status"], asyncio.get_running_loop().time() - began

        first = asyncio.create_task(exchange(None))
        await asyncio.sleep(0.2)  # the second stalled request begins half a timeout later
        second = asyncio.create_task(exchange(None))
        served = asyncio.create_task(exchange(0.1))
        cancelled = asyncio.create_task(exchange(None))
        await asyncio.sleep(0.05)
        cancelled.cancel()
        stalled = [await first, await second]
        try:
            await cancelled
            was_cancelled = False
        except asyncio.CancelledError:
            was_cancelled = True
        return stalled, (await served)[0], was_cancelled, app

    stalled, served, was_cancelled, app = run(go())
    for status, seconds in stalled:
        assert status == 408 and 0.38 <= seconds < 2.0, stalled
    assert served == 200 and was_cancelled
    assert not app.deadlines.waiting and not app.deadlines.cancelled  # nothing left behind


def test_host_and_origin_verdicts_stay_per_value() -> None:
    """Host and Origin verdicts are remembered per value: a refused value stays refused after an
    accepted one, and the other way round."""

    async def go() -> list[int]:
        app = Demo().asgi_app()
        body = request(1, "tools/list")
        head = modern_headers(body)
        statuses = []
        for extra in ({}, {"host": "evil.example:8000"}, {}, {"origin": "http://evil.example"}, {}) * 2:
            statuses.append((await call(app, body, {**head, **extra})).status)
        return statuses

    assert run(go()) == [200, 421, 200, 403, 200] * 2


class Routed(s.Server):
    """Tools on two pages (the second's cursor the empty string): ``deep`` mirrors a nested
    argument, ``late`` gains its annotation when the tool list changes."""

    late_annotated = False

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        if not isinstance(params.cursor, str):
            return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})], next_cursor="")
        region: dict[str, Any] = {"type": "string", "x-mcp-header": "Region"}
        nested = {"type": "object", "properties": {"cfg": {"type": "object", "properties": {"region": region}}}}
        late = {"type": "object", "properties": {"zone": {"type": "string"}}}
        if self.late_annotated:
            late["properties"]["zone"]["x-mcp-header"] = "Zone"
        return s.ListToolsResult(
            tools=[m.Tool(name="deep", input_schema=nested), m.Tool(name="late", input_schema=late)]
        )

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        return s.CallToolResult(content=[m.TextContent(type="text", text="done")])


def test_param_headers_of_nested_arguments_on_any_page_are_checked_until_the_tools_change() -> None:
    """Streamable HTTP, x-mcp-header: a property reached through nested ``properties`` is
    mirrored too; a tool on a later page (after an empty-string cursor) is checked like one on
    the first; what the server read is read again once the tool list changes. A header whose
    argument is absent or null disagrees with the body as much as a different value does."""

    def tool_call(name: str, arguments: dict[str, Any], **params: str) -> tuple[dict[str, Any], Headers]:
        body = request(1, "tools/call", {"name": name, "arguments": arguments})
        head = {"accept": "application/json, text/event-stream", "mcp-protocol-version": MODERN}
        return body, {**head, "mcp-method": "tools/call", "mcp-name": name, **params}

    async def go() -> list[int]:
        server = Routed()
        app = server.asgi_app()
        statuses = []
        for name, arguments, params in [
            ("deep", {"cfg": {"region": "us"}}, {}),  # the header is missing
            ("deep", {"cfg": {"region": "us"}}, {"mcp-param-region": "eu"}),  # it does not match
            ("deep", {"cfg": {"region": "us"}}, {"mcp-param-region": "us"}),
            ("deep", {"cfg": {}}, {}),  # no value: no header expected
            ("deep", {"cfg": {}}, {"mcp-param-region": "us"}),  # a header without its value
            ("deep", {"cfg": {"region": None}}, {"mcp-param-region": "us"}),  # null is no value
            ("deep", {"cfg": {}}, {"mcp-param-other": "us"}),  # a header no tool declares: ignored
            ("late", {"zone": "a"}, {}),  # not annotated (yet)
        ]:
            statuses.append((await call(app, *tool_call(name, arguments, **params))).status)
        server.late_annotated = True
        await server.notify_tools_changed()
        statuses.append((await call(app, *tool_call("late", {"zone": "a"}))).status)
        statuses.append((await call(app, *tool_call("late", {"zone": "a"}, **{"mcp-param-zone": "a"}))).status)
        return statuses

    assert run(go()) == [400, 400, 200, 200, 400, 400, 200, 200, 400, 200]


class Endless(s.Server):
    """A tool list whose pages never end; ``zone`` gains its annotation when told to."""

    def __init__(self) -> None:
        self.reads = 0
        self.annotated = False
        self.gate: asyncio.Event | None = None

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        self.reads += 1
        zone: dict[str, Any] = {"type": "string"}
        if self.annotated:
            zone["x-mcp-header"] = "Zone"
        if self.gate is not None:  # the page is made before the wait: it answers with the old list
            await self.gate.wait()
        page = int(params.cursor) if isinstance(params.cursor, str) else 0
        tools = (
            [m.Tool(name="late", input_schema={"type": "object", "properties": {"zone": zone}})] if page == 0 else []
        )
        return s.ListToolsResult(tools=tools, next_cursor=str(page + 1))

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        return s.CallToolResult(content=[m.TextContent(type="text", text="done")])


def _tool_call(name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], Headers]:
    body = request(1, "tools/call", {"name": name, "arguments": arguments})
    head = {"accept": "application/json, text/event-stream", "mcp-protocol-version": MODERN}
    return body, {**head, "mcp-method": "tools/call", "mcp-name": name}


def test_param_header_reads_are_bounded_and_a_change_during_one_is_not_lost() -> None:
    """An unlisted tool costs one bounded read of the list, not one per call; annotations read
    while the tool list changed are not kept (the next call reads them again)."""

    async def go() -> tuple[int, int, list[int]]:
        server = Endless()
        app = server.asgi_app()
        for _ in range(3):
            assert (await call(app, *_tool_call("nowhere", {}))).status == 200
        unlisted_reads = server.reads
        await server.notify_tools_changed()
        server.reads, server.gate = 0, asyncio.Event()
        reading = asyncio.create_task(call(app, *_tool_call("late", {"zone": "a"})))
        await asyncio.sleep(0.05)  # the read is waiting on list_tools
        server.annotated = True
        await server.notify_tools_changed()  # the change overtakes the read
        server.gate.set()
        first = (await reading).status
        second = (await call(app, *_tool_call("late", {"zone": "a"}))).status  # no Mcp-Param-Zone
        return unlisted_reads, server.reads, [first, second]

    unlisted_reads, reads, statuses = run(go())
    assert unlisted_reads == 100  # MAX_TOOL_PAGES, once for the three calls
    assert statuses == [200, 400] and reads >= 2  # read again after the overtaking change


def test_one_timer_acts_on_each_item_still_there_when_due_in_the_order_added() -> None:
    """``Soon`` (the disconnect watch of quick requests): one timer per loop; an item discarded
    before it is due is never acted on; one added while the timer waits for an older one gets
    its own turn."""

    async def go() -> list[tuple[str, float]]:
        loop = asyncio.get_running_loop()
        start = loop.time()
        acted: list[tuple[str, float]] = []
        soon = Soon(0.05, lambda item: acted.append((item, loop.time() - start)))
        soon.add("a")
        await asyncio.sleep(0.02)
        soon.add("b")
        soon.add("c")
        soon.discard("b")
        await asyncio.sleep(0.02)
        soon.add("d")
        await asyncio.sleep(0.15)
        return acted

    acted = run(go())
    assert [item for item, _ in acted] == ["a", "c", "d"]
    assert all(at >= due for (_, at), due in zip(acted, (0.05, 0.07, 0.09), strict=True))


def test_two_event_loops_in_two_threads_keep_their_own_items() -> None:
    """An app served from two event loops at once (two threads): each loop's items come due on
    that loop, none is lost when the other loop adds its own, and nothing is left behind."""
    acted: list[tuple[str, int]] = []
    soon = Soon(0.05, lambda item: acted.append((item, threading.get_ident())))
    added = threading.Barrier(2)

    def serve(item: str) -> int:
        async def go() -> None:
            soon.add(item)
            await asyncio.to_thread(added.wait, 5)  # both loops hold an item before either is due
            await asyncio.sleep(0.15)

        asyncio.run(go())
        return threading.get_ident()

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        first, second = pool.map(serve, ["a", "b"])
    assert sorted(acted) == sorted([("a", first), ("b", second)])
    assert not soon.due and all(loop.is_closed() for loop in soon.queues)


def test_an_unread_id_in_a_legacy_session_is_written_as_its_revision_writes_it() -> None:
    """An HTTP error whose request id could not be read (unparsable, refused before the session
    is found): null where the session's revision requires the member (2025-06-18), left out where
    it makes it optional (2025-11-25), whatever the handler's revision does."""

    async def go(version: str) -> dict[str, Any]:
        app = Demo().asgi_app()
        session = {**await legacy_session(app, version), "accept": "application/json, text/event-stream"}
        refused = await call(app, None, session, raw=b"{not json")
        assert refused.status == 400
        answer: dict[str, Any] = refused.json()
        assert answer["error"]["code"] == -32700
        return answer

    assert run(go("2025-06-18"))["id"] is None
    assert "id" not in run(go("2025-11-25"))


# -- found by a review of the transport against the two Streamable HTTP pages --------------------


class Ticking(Demo):
    """A tool reporting progress six times, 0.1 s apart."""

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        if params.name == "tick":
            for i in range(6):
                await ctx.report_progress(i)
                await asyncio.sleep(0.1)
            return s.CallToolResult(content=[])
        return await super().call_tool(params, ctx)


class Held:
    """One exchange whose client stays connected until the app ends the response."""

    def __init__(self, app: Any, method: str, headers: dict[str, str], body: bytes = b"") -> None:
        self.buf, self.status, self.gone = bytearray(), None, asyncio.Event()
        head = {"host": "127.0.0.1", "content-type": "application/json", **headers}
        scope = {
            "type": "http",
            "method": method,
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in head.items()],
        }
        self.first = [{"type": "http.request", "body": body, "more_body": False}]
        self.task = asyncio.create_task(app(scope, self.receive, self.send))

    async def receive(self) -> dict[str, Any]:
        if self.first:
            return self.first.pop()
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.status = message.get("status", self.status)
        self.buf += message.get("body", b"")

    def kinds(self) -> list[str]:
        return [json.loads(e["data"]).get("method", "response") for e in sse_events(bytes(self.buf)) if e.get("data")]


def test_resuming_a_stream_the_server_does_not_know_keeps_the_session() -> None:
    """transports.mdx (2025-11-25): a 404 on a request with a session id tells the client the
    session ended. A Last-Event-ID naming no stream (garbage, evicted) got 404 on a live session."""

    async def go() -> tuple[Any, Any]:
        app = Demo().asgi_app()
        session = await legacy_session(app, "2025-11-25")
        resumed = await call(app, method="GET", headers={**session, "last-event-id": "garbage"})
        return resumed, await call(app, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)

    resumed, ping = run(go())
    assert resumed.status == 400 and resumed.json()["error"]["message"] == "unknown or expired event stream"
    assert ping.status == 200 and ping.json()["result"] == {}


def test_resuming_a_stream_whose_first_connection_is_open_takes_its_delivery_over() -> None:
    """transports.mdx: each message on one stream only. A GET resuming a POST's stream while
    that POST's connection was still open (half-open) got every later event on both, and the
    response on the first alone, which then forgot the stream."""

    async def go() -> tuple[Held, Held]:
        app = Ticking().asgi_app()
        session = await legacy_session(app, "2025-11-25")
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "tick", "_meta": {"progressToken": "p"}},
        }
        post = Held(app, "POST", session, json.dumps(body).encode())
        await asyncio.sleep(0.15)  # primed, one or two progress events out
        primed = sse_events(bytes(post.buf))[0]["id"]
        get = Held(app, "GET", {**session, "last-event-id": primed})
        await asyncio.wait_for(asyncio.gather(post.task, get.task), 10)
        return post, get

    post, get = run(go())
    assert post.kinds() and set(post.kinds()) == {"notifications/progress"}, post.kinds()  # ended, no response
    assert get.kinds() == ["notifications/progress"] * 6 + ["response"], get.kinds()
    assert len(post.kinds()) < 6


@pytest.mark.parametrize(
    ("method", "params", "headers"),
    [
        ("tasks/get", {"taskId": "x"}, {"mcp-method": "tasks/get"}),  # a method 2026-07-28 lacks
        ("tools/call", {"name": "echo", "arguments": {}}, {"mcp-method": "tools/call"}),  # no Mcp-Name
    ],
    ids=["unknown-method", "missing-header"],
)
def test_a_request_naming_no_served_revision_is_minus_32022_before_its_method_and_headers_are_judged(
    method: str, params: dict[str, Any], headers: dict[str, str]
) -> None:
    """A spec review: a request naming 2099-01-01 got -32601 (a method 2026-07-28 lacks) or -32020
    (a header 2026-07-28 asks for), judged by a revision it did not ask for; versioning.mdx: a
    version not implemented MUST get -32022 with the supported versions (to downgrade to)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 2, "method": method, "params": {**params, "_meta": meta}}

    answer = run(call(Demo().asgi_app(), body, {"mcp-protocol-version": "2099-01-01", **headers}))
    assert answer.status == 400, answer.body
    error = answer.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "2099-01-01", error
    assert MODERN in error["data"]["supported"]


def test_a_body_version_apart_from_its_header_is_a_mismatch_even_when_not_served() -> None:
    """The conformance suite (SEP-2575): header and ``_meta`` naming different versions is 400
    -32020, whether or not the body's version is served (the check above ran first: -32022)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}
    answer = run(call(Demo().asgi_app(), body, {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}))
    assert (answer.status, answer.json()["error"]["code"]) == (400, -32020), answer.body


@pytest.mark.parametrize("method", ["ping", "tools/list"])
def test_a_protocol_version_header_naming_no_served_revision_is_minus_32022(method: str) -> None:
    """streamable-http.mdx: a version the server does not implement is 400 with -32022 and the
    supported versions, also when the body carries no _meta (it was -32601 or -32602)."""

    async def go() -> Any:
        body = {"jsonrpc": "2.0", "id": 2, "method": method}
        return await call(Demo().asgi_app(), body, {"mcp-protocol-version": "1999-01-01", "mcp-method": method})

    answer = run(go())
    assert answer.status == 400, answer.body
    error = answer.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "1999-01-01", error
    assert MODERN in error["data"]["supported"]


class Pausing(Demo):
    """A tool that reports progress once, then is silent for 0.35 s before it answers."""

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        if params.name == "pause":
            await ctx.report_progress(1)
            await asyncio.sleep(0.35)
            return s.CallToolResult(content=[])
        return await super().call_tool(params, ctx)


def test_a_silent_sse_stream_gets_comment_lines_so_idle_timeouts_keep_it() -> None:
    """Limits.sse_ping: a POST's SSE stream (modern and legacy) and a legacy GET stream silent
    for that long get a comment line (``: ping``), which SSE clients ignore; proxies that drop
    idle connections (nginx: 60 s) cut a quiet listen stream or a long tool call otherwise."""

    async def go() -> tuple[bytes, bytes, bytes]:
        server = Pausing()
        server.limits = Limits(sse_ping=0.1)  # type: ignore[misc]
        app = server.asgi_app()
        call_params = {"name": "pause", "arguments": {}}
        modern = request(1, "tools/call", {**call_params, "_meta": {"progressToken": "p"}})
        head = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "pause"}
        answered = await call(app, modern, head)
        session = await legacy_session(app, "2025-11-25")
        body = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {**call_params, "_meta": {"progressToken": "p"}},
        }
        legacy = await call(app, body, session)
        get = Held(app, "GET", {**session, "accept": "text/event-stream"})
        await asyncio.sleep(0.35)
        get.gone.set()
        await asyncio.wait_for(get.task, 5)
        return answered.body, legacy.body, bytes(get.buf)

    modern, legacy, stream = run(go())
    for body in (modern, legacy):
        progress, response = body.index(b"notifications/progress"), body.index(b'"result"')
        assert b": ping\n\n" in body[progress:response], body
        assert [e for e in sse_events(body) if e.get("data")][-1]["data"].startswith('{"jsonrpc":"2.0","id"')
    assert stream.count(b": ping\n\n") >= 2, stream
