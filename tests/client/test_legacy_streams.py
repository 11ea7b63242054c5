"""The client's legacy Streamable HTTP streams against a scripted 2025-11-25 server (an ASGI app
under uvicorn): a request's event stream the server closes to be polled, or whose connection
breaks, is resumed with ``Last-Event-ID`` for as long as the server brings events; every request
after ``initialize`` carries ``MCP-Protocol-Version``, GET and DELETE too; and closing the client
ends it whatever ending the session meets.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Generator, Iterator
from typing import Any

import httpx
import mcpgen
import pytest
from mcpgen._runtime.client import TransportError
from mcpgen._runtime.client.connect import open_client
from mcpgen._runtime.client.http import MAX_RESUMES, HttpTransport
from mcpgen.v2025_11_25.client import Client

from tests.auth.protected import request_body, served_in_thread

VERSION = "2025-11-25"
RESULT = {"content": [{"type": "text", "text": "done"}]}


class Poller:
    """A legacy endpoint whose ``tools/call`` streams close (``mode`` "close") or break ("drop")
    after each event, or close with nothing but a ``retry`` ("retry": the request runs on, as a
    server's resumed stream does when nothing new came), ``polls`` times, before the response
    comes on the last resumption; a call
    of ``hang`` is never answered. ``seen``: each HTTP request's method, ``Last-Event-ID`` and
    ``MCP-Protocol-Version``."""

    def __init__(self, mode: str, polls: int) -> None:
        self.mode = mode
        self.polls = polls
        self.call_id: Any = None
        self.resumed = 0
        self.seen: list[tuple[str, str | None, str | None]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.seen.append((scope["method"], headers.get("last-event-id"), headers.get("mcp-protocol-version")))
        if scope["method"] == "DELETE":
            await reply(send, 200, b"")
        elif scope["method"] == "GET" and "last-event-id" not in headers:
            await reply(send, 405, b"")  # no stream of the server's own
        elif scope["method"] == "GET" and self.mode == "retry":  # nothing new: only "come back"
            self.resumed += 1
            if self.resumed <= self.polls:
                await self.event(send, "retry: 10\n\n")
            else:
                answer = {"jsonrpc": "2.0", "id": self.call_id, "result": RESULT}
                await self.event(send, f"id: final\ndata: {json.dumps(answer)}\n\n", last=True)
        elif scope["method"] == "GET":
            polled = int(headers["last-event-id"].removeprefix("e")) + 1
            if polled <= self.polls:
                await self.event(send, f"id: e{polled}\nretry: 10\ndata: \n\n")
            else:
                answer = {"jsonrpc": "2.0", "id": self.call_id, "result": RESULT}
                await self.event(send, f"id: final\ndata: {json.dumps(answer)}\n\n", last=True)
        else:
            await self.post(json.loads(await request_body(receive)), receive, send)

    async def post(self, message: dict[str, Any], receive: Any, send: Any) -> None:
        rid = message.get("id")
        if message.get("method") == "initialize":
            info = {"name": "poller", "version": "1"}
            result = {"protocolVersion": VERSION, "capabilities": {"tools": {}}, "serverInfo": info}
            body = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
            await reply(send, 200, body, [(b"mcp-session-id", b"s1")])
        elif rid is None:
            await reply(send, 202, b"")
        elif message["params"]["name"] == "hang":
            await start_stream(send)
            await receive()  # until the client goes
        else:
            self.call_id = rid
            await self.event(send, "id: e0\nretry: 10\ndata: \n\n")

    async def event(self, send: Any, text: str, *, last: bool = False) -> None:
        await start_stream(send)
        await send({"type": "http.response.body", "body": text.encode(), "more_body": True})
        if self.mode == "drop" and not last:
            raise ConnectionAbortedError("the connection breaks")  # uvicorn drops it mid-stream
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def start_stream(send: Any) -> None:
    headers = [(b"content-type", b"text/event-stream"), (b"mcp-session-id", b"s1")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def reply(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    head = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Poller, str]]:
    app = Poller(*request.param)
    with served_in_thread(app) as base:  # type: ignore[arg-type]
        yield app, f"{base}/mcp"


async def legacy(url: str, **transport: Any) -> Client:
    client = await open_client(HttpTransport(url, **transport), VERSION, registry=mcpgen.REGISTRY)
    assert isinstance(client, Client)
    return client


async def call(url: str) -> str:
    async with await legacy(url) as client:
        result = await client.call_tool(name="slow", arguments={}, timeout=30)
    return str(result.content[0].text)  # type: ignore[union-attr]


@pytest.mark.parametrize("served", [("close", 2 * MAX_RESUMES)], indirect=True)
def test_a_stream_polled_for_longer_than_the_resumption_limit_gets_its_response(served: tuple[Poller, str]) -> None:
    """2025-11-25: a server may close a request's stream after an event id and the client polls;
    each resumption that brings an event starts the count again (five in all failed the request)."""
    app, url = served

    assert asyncio.run(asyncio.wait_for(call(url), 30)) == "done"
    resumed = [last for method, last, _ in app.seen if method == "GET" and last is not None]
    assert resumed == [f"e{n}" for n in range(2 * MAX_RESUMES + 1)]
    assert all(version == VERSION for method, _, version in app.seen[1:]), app.seen  # GET and DELETE too
    assert app.seen[-1][0] == "DELETE"


@pytest.mark.parametrize("served", [("retry", 2 * MAX_RESUMES)], indirect=True)
def test_a_request_running_past_many_polls_with_nothing_new_gets_its_response(served: tuple[Poller, str]) -> None:
    """A resumed stream that ends with only a ``retry`` (this runtime's server does so after
    ``resume_wait`` with nothing new) is the server asking to be polled, not a dead end."""
    app, url = served

    assert asyncio.run(asyncio.wait_for(call(url), 30)) == "done"
    assert app.resumed == 2 * MAX_RESUMES + 1


@pytest.mark.parametrize("served", [("drop", 2)], indirect=True)
def test_a_stream_whose_connection_breaks_is_resumed(served: tuple[Poller, str]) -> None:
    """transports.mdx: resume "after a disconnection (whether due to network failure or
    server-initiated closure)"; a broken connection failed the request at once."""
    app, url = served

    assert asyncio.run(asyncio.wait_for(call(url), 30)) == "done"
    assert [last for method, last, _ in app.seen if method == "GET" and last is not None] == ["e0", "e1", "e2"]


class FailingOnDelete(httpx.Auth):
    """An authorization that fails when the session is ended (as an OAuth flow whose metadata
    cannot be fetched does)."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if request.method == "DELETE":
            raise RuntimeError("the authorization server is gone")
        yield request


@pytest.mark.parametrize("served", [("close", 0)], indirect=True)
def test_closing_ends_the_client_whatever_ending_the_session_meets(served: tuple[Poller, str]) -> None:
    """The DELETE's failure is not the caller's: closing raised it, left the transport's own
    HTTP client open and the requests waiting unanswered."""
    _, url = served

    async def go() -> tuple[BaseException | None, bool]:
        transport = HttpTransport(url, auth=FailingOnDelete())
        client = await open_client(transport, VERSION, registry=mcpgen.REGISTRY)
        waiting = asyncio.ensure_future(client.call_tool(name="hang", arguments={}))
        await asyncio.sleep(0.2)
        await client.aclose()
        outcome = await asyncio.gather(waiting, return_exceptions=True)
        return outcome[0], transport.client.is_closed

    failed, closed = asyncio.run(asyncio.wait_for(go(), 20))
    assert isinstance(failed, TransportError) and "closed" in str(failed), failed
    assert closed
