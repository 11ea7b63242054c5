"""The session cap behind a balancer keeps the rule of one process: past ``max_sessions`` the
least recently used idle session goes, a busy one (a GET stream open, here on either worker)
never does, and when every one is busy a new ``initialize`` is refused with 503, in memory and
on Redis alike."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from mcpgen._runtime.tls import default_context

from tests.scale.helpers import LEGACY, Worker, initialize, legacy, legacy_headers
from tests.scale.redis_server import start_redis

TIMEOUT = httpx.Timeout(10.0)
CAP = {"MAX_SESSIONS": "2"}


@pytest.fixture(params=["memory", "redis"])
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Worker, Worker]]:
    """Two workers sharing a private Redis, or (memory) one worker standing in for both."""
    if request.param == "memory":
        one = Worker(None, tmp_path / "one.log", env=CAP)
        try:
            yield one, one
        finally:
            one.stop()
        return
    server, directory = start_redis()
    workers: list[Worker] = []
    try:
        workers.append(Worker(server.url, tmp_path / "a.log", env=CAP))
        workers.append(Worker(server.url, tmp_path / "b.log", env=CAP))
        yield workers[0], workers[1]
    finally:
        for worker in workers:
            worker.stop()
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
    for worker in workers:
        assert "Traceback" not in worker.errors(), worker.errors()


def open_stream(stack: ExitStack, url: str, session: str) -> Iterator[str]:
    """Hold a GET stream of ``session`` open on ``url`` until ``stack`` closes; its lines (hold
    them: a dropped line iterator closes the stream)."""
    client = stack.enter_context(httpx.Client(timeout=TIMEOUT, verify=default_context()))
    head = {**legacy_headers(session), "accept": "text/event-stream"}
    stream = stack.enter_context(client.stream("GET", url, headers=head))
    assert stream.status_code == 200
    lines = stream.iter_lines()
    next(lines)  # the stream is open on the server
    return lines


def refused(client: httpx.Client, url: str) -> httpx.Response:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "scale-test", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params}
    return client.post(url, json=body, headers=legacy_headers())


def test_a_busy_session_is_never_evicted(pair: tuple[Worker, Worker]) -> None:
    a, b = pair
    with httpx.Client(timeout=TIMEOUT) as client, ExitStack() as streams:
        streaming = initialize(client, a.url)
        held = open_stream(streams, a.url, streaming)  # busy on A
        idle = initialize(client, b.url)  # used after the busy one
        third = initialize(client, b.url)  # the cap: the idle session goes, not the busy one
        assert legacy(client, b.url, idle, 1, "ping").status_code == 404
        assert legacy(client, b.url, streaming, 2, "ping").status_code == 200
        with ExitStack() as second:
            also = open_stream(second, b.url, third)  # every session busy
            reply = refused(client, a.url)
            assert reply.status_code == 503
            error = reply.json()["error"]
            assert error["code"] == -32603 and error["message"] == "all 2 sessions are in use"
            assert "mcp-session-id" not in reply.headers
            assert legacy(client, a.url, third, 3, "ping").status_code == 200
            del also
        # the stream of ``third`` ended: once its server saw it go, ``third`` is the one to go
        deadline = time.monotonic() + 10
        while (reply := refused(client, a.url)).status_code == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # polling for the server to notice the closed connection
        assert reply.status_code == 200, reply.text
        assert legacy(client, b.url, third, 4, "ping").status_code == 404
        assert legacy(client, a.url, streaming, 5, "ping").status_code == 200
        del held
