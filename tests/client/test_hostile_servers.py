"""The client against servers that misbehave over Streamable HTTP (a scripted ASGI app under
uvicorn): every case ends in a typed error or is survived, never in a hang, a stray exception or
an exhausted connection pool.

- a response stream the server leaves open after the response: the client closes it (a hundred
  of them held every pooled connection before);
- an answer far beyond the codec's limit: refused while it is read, not after it is in memory;
- a session id that is not visible ASCII: a ``TransportError`` for the request;
- a tool list whose cursors go round in a circle, re-read after a -32020: the re-listing ends;
- a listen request the server answers with something other than the acknowledgement: nothing of
  it stays pending;
- a 2026-07-28 stream that sends event ids and closes before the response: not resumed (those
  streams are not resumable), the request fails at once;
- an error with a null id (the server could not read the message) in a POST's answer: the error of
  that POST's request, at once;
- a redirect: a ``TransportError`` naming where to, at once;
- an event of a POST's stream that the codec refuses: the request of that stream, timing out,
  names it; another request waiting meanwhile does not.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import gzip
import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import mcpgen
import pytest
from mcpgen._runtime.client import TransportError
from mcpgen._runtime.client.connect import open_client
from mcpgen._runtime.client.http import HttpTransport
from mcpgen._runtime.jsonrpc import ProtocolError
from mcpgen.v2026_07_28.client import Client

from tests.auth.protected import request_body, served_in_thread

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": [MODERN],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "private",
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1"}},
}
LISTING = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
TOOL = {"name": "echo", "inputSchema": {"type": "object"}}


class Hostile:
    """An ASGI MCP endpoint answering each method as ``mode`` says (``seen`` counts methods)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.seen: dict[str, int] = {}
        self.sessions: list[bytes | None] = []  # the Mcp-Session-Id each POST carried
        self.slow: Any = None  # cross-*: the id of the "slow" call in flight
        self.encodings: list[bytes | None] = []  # gzip*, br: the Accept-Encoding of each tools/call

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["method"] != "POST":  # a resumption (GET with Last-Event-ID), or a DELETE
            self.seen[scope["method"]] = self.seen.get(scope["method"], 0) + 1
            if self.mode == "delete-bomb" and scope["method"] == "DELETE":
                await reply(send, 200, gzip_bomb(), [(b"content-encoding", b"gzip")])
                return
            await reply(send, 405, b"")
            return
        if self.mode == "401-bomb":  # every POST: a 401 whose body is a gzip bomb
            await request_body(receive)
            self.seen["POST"] = self.seen.get("POST", 0) + 1
            await reply(send, 401, gzip_bomb(), [(b"content-encoding", b"gzip")])
            return
        request = json.loads(await request_body(receive))
        method = request.get("method")
        self.seen[method] = self.seen.get(method, 0) + 1
        rid = request.get("id")
        if rid is None:
            if self.mode == "redirect":
                await reply(send, 307, b"", [(b"location", b"https://elsewhere.example/mcp")])
            else:
                await reply(send, 202, b"")
            return
        bad_session = [(b"mcp-session-id", "S\u00e9".encode("latin-1"))] if self.mode == "session-id" else []
        if self.mode == "delete-bomb":
            bad_session = [(b"mcp-session-id", b"S1")]  # a good one: the client ends it with a DELETE
        self.sessions.append(dict(scope["headers"]).get(b"mcp-session-id"))
        if method == "server/discover":
            await reply(send, 200, answer(rid, DISCOVER), bad_session)
        elif method == "initialize":
            initialized = {
                "protocolVersion": LEGACY,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "h", "version": "1"},
            }
            await reply(send, 200, answer(rid, initialized), bad_session)
        elif method == "tools/list":
            cursor = request["params"].get("cursor")
            following = {None: "a", "a": "b", "b": "a"}[cursor] if self.mode == "cycle" else None
            if self.mode == "big-cursors":  # 20 pages, each cursor 1 MiB
                page = self.seen["tools/list"]
                following = f"{page:03d}" + "x" * (1 << 20) if page < 20 else None
            cursor_member = {"nextCursor": following} if following is not None else {}
            await reply(send, 200, answer(rid, {**LISTING, "tools": [TOOL], **cursor_member}))
        elif method == "tools/call" and self.mode == "cycle":
            error = {"code": -32020, "message": "header mismatch"}
            await reply(send, 400, json.dumps({"jsonrpc": "2.0", "id": rid, "error": error}).encode())
        elif method == "tools/call" and self.mode == "linger":
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            )
            text = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
            await send(
                {"type": "http.response.body", "body": b"data: " + answer(rid, text) + b"\n\n", "more_body": True}
            )
            gone = asyncio.ensure_future(receive())  # the stream stays open: keep-alives until the client goes
            while not gone.done():
                await asyncio.sleep(0.1)
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
        elif method == "tools/call" and self.mode == "huge":
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            chunk = b" " * (1 << 20)
            for _ in range(64):  # 64 MiB of nothing: the codec takes 16
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"{}", "more_body": False})
        elif method == "tools/call" and self.mode == "resume":
            start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            await send(start)
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            event = b"id: 1\nretry: 100\ndata: " + json.dumps(note).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": event, "more_body": False})  # closed: no response
        elif method == "tools/call" and self.mode in ("null-id-json", "null-id-stream", "no-id-json", "no-id-stream"):
            unread: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Invalid Request"},
            }
            if self.mode.startswith("no-id"):  # the id left out, as 2025-11-25 and 2026-07-28 have it
                del unread["id"]  # (and its data naming "id": the message is read all the same)
                unread["error"]["data"] = {"errors": [{"loc": ["id"], "msg": "bad"}]}
            if self.mode.endswith("json"):
                await reply(send, 200, json.dumps(unread).encode())
            else:
                stream = [(b"content-type", b"text/event-stream")]
                await send({"type": "http.response.start", "status": 200, "headers": stream})
                await send({"type": "http.response.body", "body": b"data: " + json.dumps(unread).encode() + b"\n\n"})
        elif method == "tools/call" and self.mode == "bad-event":  # "bad": a refused event; then nothing
            start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
            await send(start)
            if request["params"]["name"] == "bad":
                await send({"type": "http.response.body", "body": b"data: {not json\n\n", "more_body": True})
            gone = asyncio.ensure_future(receive())
            while not gone.done():
                await asyncio.sleep(0.1)
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
        elif method == "tools/call" and self.mode in ("cross-json", "cross-stream", "cross-invalid"):
            # "slow" is answered after a while; "bad" at once, with the id of the "slow" in flight
            # (cross-invalid: and a result that fails validation too)
            name = request["params"]["name"]
            if name == "slow":
                self.slow = rid
                await asyncio.sleep(1.0)
            text = {"resultType": "complete", "content": [{"type": "text", "text": f"for {name}"}]}
            if self.mode == "cross-invalid" and name == "bad":
                text["content"] = "not a list"
            body = answer(self.slow if name == "bad" else rid, text)
            if self.mode in ("cross-json", "cross-invalid"):
                await reply(send, 200, body)
            else:
                stream = [(b"content-type", b"text/event-stream")]
                await send({"type": "http.response.start", "status": 200, "headers": stream})
                await send({"type": "http.response.body", "body": b"data: " + body + b"\n\n"})
        elif method == "tools/call" and self.mode in ("gzip", "gzip-stream", "gzip-bomb", "br"):
            self.encodings.append(dict(scope["headers"]).get(b"accept-encoding"))
            text = {"resultType": "complete", "content": [{"type": "text", "text": "hi"}]}
            if self.mode == "gzip":  # two members (RFC 1952 allows a series)
                ctype, body = (
                    b"application/json",
                    gzip.compress(answer(rid, text)[:9]) + gzip.compress(answer(rid, text)[9:]),
                )
            elif self.mode == "gzip-stream":
                ctype, body = b"text/event-stream", gzip.compress(b"data: " + answer(rid, text) + b"\n\n")
            elif self.mode == "gzip-bomb":  # 64 MiB of spaces in 64 KiB
                ctype, body = b"application/json", gzip_bomb()
            else:
                ctype, body = b"application/json", b"not really brotli"
            coding = b"br" if self.mode == "br" else b"gzip"
            head = [(b"content-type", ctype), (b"content-encoding", coding)]
            await send({"type": "http.response.start", "status": 200, "headers": head})
            await send({"type": "http.response.body", "body": body})
        elif method == "tools/call" and self.mode == "garbage":
            await reply(send, 200, b"<html>not JSON-RPC</html>")
        elif method == "tools/call" and self.mode == "redirect":
            await reply(send, 307, b"", [(b"location", b"https://elsewhere.example/mcp")])
        elif method == "subscriptions/listen":
            await reply(send, 200, answer(rid, {"resultType": "complete"}))  # a result, not the acknowledgement
        else:
            await reply(send, 404, b"")


@functools.cache
def gzip_bomb() -> bytes:
    """64 MiB of spaces in 64 KiB of gzip."""
    return gzip.compress(b" " * (64 << 20))


def answer(rid: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


async def reply(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    head = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Hostile, str]]:
    app = Hostile(request.param)
    with served_in_thread(app) as base:  # type: ignore[arg-type]
        yield app, f"{base}/mcp"


async def client_of(url: str, **options: Any) -> Client:
    client = await open_client(HttpTransport(url), MODERN, registry=mcpgen.REGISTRY, **options)
    assert isinstance(client, Client)
    return client


async def call_fails(url: str) -> str:
    """The message of the ``TransportError`` a ``tools/call`` ends in."""
    client = await client_of(url, timeout=30)
    async with client:
        with pytest.raises(TransportError) as raised:
            await client.call_tool(name="echo", arguments={})
    return str(raised.value)


@pytest.mark.parametrize("served", ["linger"], indirect=True)
def test_a_response_stream_left_open_is_closed_once_its_response_came(served: tuple[Hostile, str]) -> None:
    _, url = served

    async def go() -> int:
        client = await client_of(url, timeout=10)
        async with client:
            for _ in range(120):  # more than httpx's pool of 100 connections
                result = await client.call_tool(name="echo", arguments={})
                assert result.content[0].text == "hi"  # type: ignore[union-attr]
        return 120

    assert asyncio.run(asyncio.wait_for(go(), 60)) == 120


@pytest.mark.parametrize("served", ["huge"], indirect=True)
def test_an_answer_beyond_the_limit_is_refused_while_it_is_read(served: tuple[Hostile, str]) -> None:
    _, url = served

    assert "larger than" in asyncio.run(asyncio.wait_for(call_fails(url), 60))


@pytest.mark.parametrize("served", ["huge"], indirect=True)
def test_connect_takes_a_message_size_limit_of_its_own(served: tuple[Hostile, str]) -> None:
    """``connect(max_message_size=...)`` bounds what the HTTP transport reads (it was 16 MiB, fixed)."""
    _, url = served

    async def go() -> str:
        async with await mcpgen.connect(url, versions=[MODERN], max_message_size=1 << 20, cache=None) as client:
            with pytest.raises(TransportError) as raised:
                await client.call_tool(name="echo", arguments={})  # type: ignore[attr-defined]
        return str(raised.value)

    assert "larger than 1048576 bytes" in asyncio.run(asyncio.wait_for(go(), 60))
    for wrong in (0, 1000, 2.5e6, "16MiB", None):
        with pytest.raises(ValueError, match="max_message_size must be an int of at least 65536 bytes"):
            asyncio.run(mcpgen.connect(url, max_message_size=wrong, cache=None))  # type: ignore[arg-type]


@pytest.mark.parametrize("served", ["gzip", "gzip-stream"], indirect=True)
def test_a_gzip_answer_is_read_and_only_codings_the_client_reads_are_asked_for(served: tuple[Hostile, str]) -> None:
    app, url = served

    async def go() -> str:
        async with await client_of(url, timeout=10) as client:
            result = await client.call_tool(name="echo", arguments={})
        return result.content[0].text  # type: ignore[union-attr,no-any-return]

    assert asyncio.run(asyncio.wait_for(go(), 60)) == "hi"
    assert app.encodings == [b"gzip, deflate"]


@pytest.mark.parametrize("served", ["gzip-bomb"], indirect=True)
def test_a_gzip_bomb_is_refused_at_the_limit_without_inflating_past_it(served: tuple[Hostile, str]) -> None:
    """64 MiB from 64 KiB of gzip: httpx inflated each read (up to 64 KiB) at once, and the client
    held all 64 MiB (145 MiB from a 255 KiB answer) before it refused the answer at 16 MiB; now
    the inflated pieces are counted as they come."""
    _, url = served
    gzip_bomb()  # made before memory is traced
    tracemalloc.start()
    try:
        refused = asyncio.run(asyncio.wait_for(call_fails(url), 60))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "larger than 16777216 bytes" in refused
    assert peak < 32 << 20, f"{peak >> 20} MiB at the peak"  # the 16 MiB read, and pieces


class RetryOnce(httpx.Auth):
    """An auth flow that answers a 401 with the request again, once: httpx then reads the 401's
    body whole itself (``_send_handling_auth``), past any reader of ours."""

    async def async_auth_flow(self, request: httpx.Request) -> Any:
        response = yield request
        if response.status_code == 401:
            yield request


def traced_peak(run: Any) -> tuple[Any, int]:
    gzip_bomb()  # made before memory is traced
    tracemalloc.start()
    try:
        return run(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("served", ["401-bomb"], indirect=True)
def test_a_gzip_bomb_in_a_401_that_the_auth_flow_answers_is_refused_at_the_limit(served: tuple[Hostile, str]) -> None:
    """Found by a review: httpx reads the 401 an auth flow answers with a retry whole, with its
    own decoder: a 64 KiB gzip body took the client to 257 MiB. The transport's own client takes
    the coding off in a response hook and refuses an error's body past 16 MiB while it is read."""
    app, url = served

    async def go() -> str:
        with pytest.raises(TransportError) as failed:
            await open_client(HttpTransport(url, auth=RetryOnce()), MODERN, registry=mcpgen.REGISTRY, timeout=30)
        return str(failed.value)

    said, peak = traced_peak(lambda: asyncio.run(asyncio.wait_for(go(), 60)))
    assert "larger than 16777216 bytes" in said and app.seen["POST"] == 1
    assert peak < 32 << 20, f"{peak >> 20} MiB at the peak"


@pytest.mark.parametrize("served", ["delete-bomb"], indirect=True)
def test_the_answer_to_the_delete_that_ends_a_session_is_not_read(served: tuple[Hostile, str]) -> None:
    """Found by a review: ``close`` ended a legacy session with a plain DELETE, whose answer
    httpx read whole, decoding a gzip bomb to 256 MiB. Its answer is not read at all now."""
    app, url = served

    async def go() -> None:
        client = await open_client(HttpTransport(url), LEGACY, registry=mcpgen.REGISTRY, timeout=10)
        await client.aclose()

    _, peak = traced_peak(lambda: asyncio.run(asyncio.wait_for(go(), 60)))
    assert app.seen["DELETE"] == 1
    assert peak < 16 << 20, f"{peak >> 20} MiB at the peak"


@pytest.mark.parametrize("served", ["br"], indirect=True)
def test_an_answer_in_a_coding_the_client_does_not_read_fails_the_request_naming_it(
    served: tuple[Hostile, str],
) -> None:
    _, url = served
    refused = asyncio.run(asyncio.wait_for(call_fails(url), 60))
    assert "encoded with 'br', which the client does not read (it asks for gzip, deflate)" in refused


@pytest.mark.parametrize("served", ["session-id"], indirect=True)
def test_a_session_id_that_is_not_visible_ascii_fails_the_request(served: tuple[Hostile, str]) -> None:
    """On the legacy initialize's answer (where a session id belongs) it fails the request; a
    modern answer's is ignored: 2026-07-28 has no sessions, so none is sent back, nor a DELETE."""
    app, url = served

    async def go() -> str:
        with pytest.raises(TransportError) as raised:
            await open_client(HttpTransport(url), LEGACY, registry=mcpgen.REGISTRY, timeout=10)
        async with await client_of(url, timeout=10) as modern:
            await modern.list_tools()
        return str(raised.value)

    assert "Mcp-Session-Id is not visible ASCII" in asyncio.run(asyncio.wait_for(go(), 30))
    assert app.sessions[-2:] == [None, None] and "DELETE" not in app.seen  # the modern discover and tools/list


@pytest.mark.parametrize("served", ["cycle"], indirect=True)
def test_re_listing_after_a_header_mismatch_ends_when_the_cursors_go_round(served: tuple[Hostile, str]) -> None:
    app, url = served

    async def go() -> None:
        client = await client_of(url, timeout=10)
        async with client:
            with pytest.raises(Exception) as raised:  # the retry is refused again: the server's error
                await client.call_tool(name="echo", arguments={})
            assert getattr(raised.value, "code", None) == -32020

    asyncio.run(asyncio.wait_for(go(), 30))
    assert app.seen["tools/list"] == 3  # a, b, and a again: seen, so the re-listing ends
    assert app.seen["tools/call"] == 2  # the call and its one retry


@pytest.mark.parametrize("served", ["cycle"], indirect=True)
def test_pages_end_when_the_cursors_go_round(served: tuple[Hostile, str]) -> None:
    """The README's ``async for page in client.list_tools_pages()`` asked a server whose cursors go
    a, b, a, ... for ever (15,000 requests in 3 s against one that repeats its cursor)."""
    app, url = served
    pages: list[int] = []

    async def go() -> None:
        client = await client_of(url, timeout=10)
        async with client:
            async for page in client.list_tools_pages():
                pages.append(len(page.tools))

    asyncio.run(asyncio.wait_for(go(), 30))
    assert pages == [1, 1, 1] and app.seen["tools/list"] == 3  # no cursor, a, b; then a again: the end


@pytest.mark.parametrize("served", ["big-cursors"], indirect=True)
def test_the_pager_keeps_digests_of_the_cursors_it_followed_not_the_cursors(served: tuple[Hostile, str]) -> None:
    """Found by a review: to know a cursor again, the pager kept every one (4 MiB cursors: 120 MiB
    held after 30 pages, the pages themselves dropped). It keeps a 16-byte digest of each. What
    the client runtime holds is counted (the server runs in a thread of this process, and alone
    the test counted its first-use allocations: 10 MiB)."""
    app, url = served
    held: list[int] = []

    def runtime_held() -> int:  # what the client runtime allocated and still holds: allocations
        # with a frame of the client in their stack. The server runs in a thread of this process,
        # on the same shared modules (the codec, the wire): counting those modules' allocations
        # counted the pages the server was writing at the moment (once, 16 MiB)
        gc.collect()  # pages in reference cycles are garbage, freed when a collection runs
        only = [tracemalloc.Filter(True, "*/mcpgen/_runtime/client/*", all_frames=True)]
        return sum(stat.size for stat in tracemalloc.take_snapshot().filter_traces(only).statistics("filename"))

    async def go() -> None:
        client = await client_of(url, timeout=30)
        async with client:
            pages = 0
            async for _ in client.list_tools_pages():
                pages += 1
                if pages in (2, 20):  # the second page (the first builds what a first use does), the last
                    held.append(runtime_held())

    tracemalloc.start(8)  # stacks deep enough to reach the client's frames
    try:
        asyncio.run(asyncio.wait_for(go(), 60))
    finally:
        tracemalloc.stop()
    assert app.seen["tools/list"] == 20
    assert len(held) == 2 and held[1] - held[0] < 8 << 20, f"{(held[1] - held[0]) >> 20} MiB more after 18 more pages"


@pytest.mark.parametrize("served", ["listen-result"], indirect=True)
def test_a_listen_not_acknowledged_leaves_nothing_pending(served: tuple[Hostile, str]) -> None:
    _, url = served

    async def go() -> int:
        client = await client_of(url, timeout=10)
        async with client:
            for _ in range(3):
                with pytest.raises((ProtocolError, TransportError)):
                    async with client.listen(tools_list_changed=True):
                        pass
            return len(client.session._pending)

    assert asyncio.run(asyncio.wait_for(go(), 30)) == 0


@pytest.mark.parametrize("served", ["resume"], indirect=True)
def test_a_modern_stream_closed_early_is_not_resumed(served: tuple[Hostile, str]) -> None:
    app, url = served

    assert "ended without its response" in asyncio.run(asyncio.wait_for(call_fails(url), 30))
    assert "GET" not in app.seen


@pytest.mark.parametrize("served", ["null-id-json", "null-id-stream", "no-id-json", "no-id-stream"], indirect=True)
def test_an_error_with_a_null_id_in_a_posts_answer_is_its_requests(served: tuple[Hostile, str]) -> None:
    """JSON-RPC: a server that cannot read a request's id answers with a null id (the schemas
    from 2025-11-25: without one). Over HTTP the
    answer to a POST is about what that POST carried: the request fails with the server's error at
    once (it waited for its timeout, and the message said nothing of the server's answer)."""
    _, url = served

    async def go() -> None:
        client = await client_of(url, timeout=30)
        async with client:
            with pytest.raises(mcpgen.ServerError) as raised:
                await client.call_tool(name="echo", arguments={})
            assert (raised.value.code, raised.value.message) == (-32600, "Invalid Request")

    asyncio.run(asyncio.wait_for(go(), 10))


@pytest.mark.parametrize("served", ["redirect"], indirect=True)
def test_a_redirect_fails_the_request_naming_where_to(served: tuple[Hostile, str]) -> None:
    _, url = served

    message = asyncio.run(asyncio.wait_for(call_fails(url), 10))
    assert "HTTP 307" in message and "https://elsewhere.example/mcp" in message, message

    async def notified() -> str:  # a notification's POST too (it took the 307 for a success)
        client = await client_of(url, timeout=10)
        async with client:
            with pytest.raises(TransportError) as raised:
                await client.session.notify("notifications/cancelled", {"requestId": 1})
        return str(raised.value)

    message = asyncio.run(asyncio.wait_for(notified(), 10))
    assert "HTTP 307" in message and "https://elsewhere.example/mcp" in message, message


@pytest.mark.parametrize("served", ["garbage"], indirect=True)
def test_a_json_answer_that_is_no_json_rpc_fails_its_request_saying_why(served: tuple[Hostile, str]) -> None:
    """The answer to a POST refused whole is that request's: it fails saying what the codec
    refused (it said only "no response ... in the HTTP answer"), and no other request is
    marked with it."""
    _, url = served

    message = asyncio.run(asyncio.wait_for(call_fails(url), 10))
    assert "the answer to request" in message and "-32700" in message, message


@pytest.mark.parametrize("served", ["bad-event"], indirect=True)
def test_a_refused_event_is_named_by_its_streams_request_only(served: tuple[Hostile, str]) -> None:
    _, url = served

    async def go() -> tuple[str, str]:
        client = await client_of(url, timeout=30)
        async with client:
            calls = [client.call_tool(name=name, arguments={}, timeout=1.5) for name in ("bad", "other")]
            bad, other = await asyncio.gather(*calls, return_exceptions=True)
        assert isinstance(bad, mcpgen.RequestTimeout) and isinstance(other, mcpgen.RequestTimeout), (bad, other)
        return str(bad), str(other)

    bad, other = asyncio.run(asyncio.wait_for(go(), 20))
    assert "meanwhile the server sent a message this client refused: -32700 Parse error (" in bad, bad  # and why
    assert "(it began b'" in bad, bad  # and what it was (a client review: the line was not shown)
    assert "meanwhile" not in other, other


@pytest.mark.parametrize("served", ["cross-json", "cross-stream", "cross-invalid"], indirect=True)
def test_a_posts_answer_bearing_another_requests_id_is_not_that_requests_answer(
    served: tuple[Hostile, str],
) -> None:
    """Found by a client review: the answer to the POST of "bad" carried the id of "slow", in
    flight on another POST; "slow" returned bad's text and its own answer was dropped. A POST's
    answer (or stream) is that request's: another id is dropped and named, and "slow" gets its own."""
    _, url = served

    async def go() -> tuple[Any, Any]:
        client = await client_of(url, timeout=5)
        async with client:
            slow = asyncio.ensure_future(client.call_tool(name="slow", arguments={}))
            await asyncio.sleep(0.3)
            bad = await asyncio.gather(client.call_tool(name="bad", arguments={}), return_exceptions=True)
            return bad[0], await slow

    bad, slow = asyncio.run(asyncio.wait_for(go(), 20))
    assert slow.content[0].text == "for slow", slow
    assert isinstance(bad, TransportError | mcpgen.RequestTimeout), bad
    assert "no response for request" in str(bad) or "ended without its response" in str(bad), bad
