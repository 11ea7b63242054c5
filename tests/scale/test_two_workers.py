"""Issue 16: two server processes sharing one private Redis, a client alternating between them.

A legacy session opened on A continues on B (requests, ``logging/setLevel``, resource
subscriptions); a ``subscriptions/listen`` stream on A receives the change a tool call on B
caused, tagged with its subscription id; a legacy SSE stream the server dropped on A resumes on
B with ``Last-Event-ID`` and replays exactly the missed events, in order, once; a worker killed
mid-stream loses none of the events it stored.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis

from tests.scale.helpers import (
    Event,
    Worker,
    call_tool,
    events,
    initialize,
    legacy,
    legacy_headers,
    modern_body,
    progress,
)
from tests.scale.redis_server import RedisServer

TIMEOUT = httpx.Timeout(10.0)


@pytest.fixture(scope="module")
def workers(redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Worker, Worker]]:
    logs = tmp_path_factory.mktemp("workers")
    a = Worker(redis_server.url, logs / "a.log")
    try:
        b = Worker(redis_server.url, logs / "b.log")
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()
    for worker in (a, b):
        assert "Traceback" not in worker.errors(), worker.errors()


def texts(reply: httpx.Response) -> tuple[list[str], Any]:
    """The log lines (``notifications/message`` data) of a reply and its result."""
    if reply.headers["content-type"] == "application/json":
        return [], reply.json()["result"]
    got = list(events(iter(reply.text.splitlines())))
    logs = [e.data["params"]["data"] for e in got if e.data and e.data.get("method") == "notifications/message"]
    results = [e.data["result"] for e in got if e.data and "result" in e.data]
    assert len(results) == 1, got
    return logs, results[0]


def test_a_legacy_session_moves_between_workers(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    with httpx.Client(timeout=TIMEOUT) as client:
        session = initialize(client, a.url)
        listed = legacy(client, b.url, session, 1, "tools/list").json()["result"]
        assert [t["name"] for t in listed["tools"]][:2] == ["change", "touch"]
        # the log level set on one worker holds on the other
        assert legacy(client, a.url, session, 2, "logging/setLevel", {"level": "info"}).json()["result"] == {}
        logs, result = texts(legacy(client, b.url, session, 3, "tools/call", {"name": "log", "arguments": {}}))
        assert (logs, result["content"][0]["text"]) == (["info-line"], "logged")
        assert legacy(client, b.url, session, 4, "logging/setLevel", {"level": "warning"}).json()["result"] == {}
        logs, result = texts(legacy(client, a.url, session, 5, "tools/call", {"name": "log", "arguments": {}}))
        assert logs == []
        # a subscription made on B filters the GET stream open on A
        subscribed = legacy(client, b.url, session, 6, "resources/subscribe", {"uri": "test://a"})
        assert subscribed.json()["result"] == {}
        with httpx.Client(timeout=TIMEOUT) as other:
            head = {**legacy_headers(session), "accept": "text/event-stream"}
            with client.stream("GET", a.url, headers=head) as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()
                primed = next(events(lines))
                assert primed.id is not None and primed.data is None
                call_tool(other, b.url, 10, "touch", uri="test://b")  # not subscribed: filtered on A
                call_tool(other, b.url, 11, "touch", uri="test://a")
                first = next(e for e in events(lines) if e.data is not None)
                assert first.data is not None
                assert (first.data["method"], first.data["params"]) == (
                    "notifications/resources/updated",
                    {"uri": "test://a"},
                )
                assert first.id is not None and first.id.split(".")[0] == primed.id.split(".")[0]
                # unsubscribed on A: the next update is filtered, the list change is not
                unsubscribed = legacy(other, a.url, session, 12, "resources/unsubscribe", {"uri": "test://a"})
                assert unsubscribed.json()["result"] == {}
                call_tool(other, b.url, 13, "touch", uri="test://a")
                call_tool(other, b.url, 14, "change")
                second = next(e for e in events(lines) if e.data is not None)
                assert second.data is not None and second.data["method"] == "notifications/tools/list_changed"
        # deleted on B: gone on A too
        assert client.delete(b.url, headers=legacy_headers(session)).status_code == 200
        assert legacy(client, a.url, session, 20, "ping").status_code == 404


def test_listen_on_a_receives_the_change_caused_on_b(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    wanted = {"toolsListChanged": True, "resourceSubscriptions": ["test://a"]}
    body, headers = modern_body(7, "subscriptions/listen", {"notifications": wanted})
    with httpx.Client(timeout=TIMEOUT) as client, httpx.Client(timeout=TIMEOUT) as other:
        with client.stream("POST", a.url, json=body, headers=headers) as stream:
            assert stream.status_code == 200
            lines = stream.iter_lines()
            got = events(lines)
            ack = next(got)
            assert ack.data is not None and ack.data["method"] == "notifications/subscriptions/acknowledged"
            assert call_tool(other, b.url, 1, "touch", uri="test://elsewhere")["content"][0]["text"] == "touched"
            call_tool(other, b.url, 2, "touch", uri="test://a")
            call_tool(other, b.url, 3, "change")
            received = [next(got).data, next(got).data]
    meta = {"io.modelcontextprotocol/subscriptionId": 7}
    assert received == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://a", "_meta": meta},
        },
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}},
    ]


def test_a_stream_dropped_on_a_resumes_on_b_with_last_event_id(workers: tuple[Worker, Worker]) -> None:
    a, b = workers
    call = {"name": "poll", "arguments": {}, "_meta": {"progressToken": "t"}}
    with httpx.Client(timeout=TIMEOUT) as client:
        session = initialize(client, a.url)
        reply = legacy(client, a.url, session, 1, "tools/call", call)
        assert reply.headers["content-type"] == "text/event-stream"
        first = list(events(iter(reply.text.splitlines())))
        # priming event, three progress events, then the server let go of the connection (retry)
        assert first[0].data is None and first[0].id is not None
        assert [progress(e) for e in first[1:4]] == [1, 2, 3]
        assert first[-1].retry == 10 and not any(e.data and "result" in e.data for e in first)
        ids = [e.id for e in first[:4]]
        assert len(set(ids)) == 4 and all(ids)
        # the client saw only up to progress 2: B replays from there, then the rest of the stream
        head = {**legacy_headers(session), "accept": "text/event-stream", "last-event-id": str(first[2].id)}
        resumed = client.get(b.url, headers=head)
        assert resumed.status_code == 200
        rest = [e for e in events(iter(resumed.text.splitlines())) if e.data is not None]
        assert [progress(e) for e in rest[:-1]] == [3, 4, 5, 6]
        assert rest[-1].data is not None and rest[-1].data["result"]["content"][0]["text"] == "polled"
        assert rest[0].id == first[3].id
        assert len({e.id for e in rest}) == len(rest)
        # the stream belongs to its session: another session's GET with the id finds nothing
        # (400: that session lives on; a 404 would tell its client the session ended)
        stranger = initialize(client, b.url)
        head["mcp-session-id"] = stranger
        assert client.get(a.url, headers=head).status_code == 400


def test_a_session_deleted_on_b_takes_its_streams_and_cannot_be_resumed_on_a(
    workers: tuple[Worker, Worker], redis_server: RedisServer
) -> None:
    """DELETE removes the session's SSE streams from Redis at once (not at their expiry), and a
    GET resuming one of them, on either worker, gets the 404 of a terminated session."""
    a, b = workers
    store = redis.Redis.from_url(redis_server.url)
    call = {"name": "poll", "arguments": {}, "_meta": {"progressToken": "t"}}
    with httpx.Client(timeout=TIMEOUT) as client:
        session, neighbour = initialize(client, a.url), initialize(client, a.url)
        replies = [legacy(client, a.url, who, 1, "tools/call", call) for who in (session, neighbour)]
        assert all(reply.headers["content-type"] == "text/event-stream" for reply in replies)
        last_id = str(list(events(iter(replies[0].text.splitlines())))[2].id)
        streams = list(store.scan_iter(f"mcpgen:scale-worker:events:{session}:*"))
        assert len(streams) == 1
        deleted = client.delete(b.url, headers=legacy_headers(session))
        assert deleted.status_code == 200
        assert list(store.scan_iter(f"mcpgen:scale-worker:*{session}*")) == []
        assert len(list(store.scan_iter(f"mcpgen:scale-worker:events:{neighbour}:*"))) == 1
        for worker in (a, b):
            head = {**legacy_headers(session), "accept": "text/event-stream", "last-event-id": last_id}
            resumed = client.get(worker.url, headers=head)
            assert resumed.status_code == 404
            assert resumed.json()["error"]["message"] == "unknown or expired session"
        assert legacy(client, b.url, neighbour, 2, "ping").status_code == 200


def test_a_killed_worker_loses_no_stored_event(
    workers: tuple[Worker, Worker], redis_server: RedisServer, tmp_path: Path
) -> None:
    a, b = workers
    doomed = Worker(redis_server.url, tmp_path / "c.log")
    try:
        with httpx.Client(timeout=TIMEOUT) as client:
            session = initialize(client, a.url)
            call = {"name": "ticker", "arguments": {"n": 500}, "_meta": {"progressToken": "k"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}
            seen: list[Event] = []
            store = redis.Redis.from_url(redis_server.url)
            with client.stream("POST", doomed.url, json=body, headers=legacy_headers(session)) as stream:
                for event in events(stream.iter_lines()):
                    seen.append(event)
                    if len(seen) == 6:  # the priming event and five progress events
                        break
                last = seen[-1]
                assert last.id is not None and [progress(e) for e in seen[1:]] == [1, 2, 3, 4, 5]
                stream_key, _, position = last.id.partition(".")
                key = f"mcpgen:scale-worker:events:{session}:{stream_key}"
                # C stores on while this client reads no more; killed once 20 more are stored
                deadline = time.monotonic() + 20
                while len(store.xrange(key, min=f"({position}")) < 20 and time.monotonic() < deadline:
                    time.sleep(0.01)
                doomed.proc.send_signal(signal.SIGKILL)
            doomed.proc.wait(10)
            stored = store.xrange(key, min=f"({position}")
            assert len(stored) >= 20
            head = {**legacy_headers(session), "accept": "text/event-stream", "last-event-id": last.id}
            resumed = client.get(b.url, headers=head)  # ends after RESUME_WAIT without new events
            rest = [progress(e) for e in events(iter(resumed.text.splitlines())) if e.data is not None]
            # every event C stored after the last one seen, in order, once, and nothing else
            assert len(rest) == len(stored) > 0
            assert rest == list(range(6, 6 + len(rest)))
            # the session lives on in the other workers
            assert legacy(client, b.url, session, 2, "ping").json()["result"] == {}
    finally:
        doomed.stop()
