"""A server shutting down (SIGTERM) ends its open ``subscriptions/listen`` streams gracefully:
each listen request is answered with its ``SubscriptionsListenResult`` (on stdio after a
``notifications/cancelled`` naming it, as cancellation.mdx has a server tear a subscription
down), and the process exits instead of waiting forever for streams a client keeps open."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ROOT
from tests.server.servers import EVERYTHING, free_port, meta, start_everything_http, stop, wait_http

LISTEN = {
    "jsonrpc": "2.0",
    "id": "sub-1",
    "method": "subscriptions/listen",
    "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
}


def assert_graceful_end(reply: dict[str, Any]) -> None:
    assert reply["id"] == "sub-1"
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 128 + signal.SIGINT)])
def test_a_signal_ends_a_stdio_listen_stream_with_its_result(signum: int, status: int) -> None:
    """SIGTERM and Ctrl-C (SIGINT) stop a stdio server alike: streams end with their result and
    the requests in flight are answered. Ctrl-C then ends it with 130, silently, as the HTTP
    runner; it ended with 0, as at the end of its input."""
    proc = subprocess.Popen(
        [sys.executable, str(EVERYTHING), "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "generated")},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(json.dumps(LISTEN).encode() + b"\n")
        proc.stdin.flush()
        ack = json.loads(proc.stdout.readline())
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        proc.send_signal(signum)
        replies = [json.loads(line) for line in proc.stdout]  # until the server closes stdout
        assert proc.wait(10) == status
        assert proc.stderr.read() == b""
        assert len(replies) == 2
        cancelled, answer = replies
        assert cancelled["method"] == "notifications/cancelled" and cancelled["params"]["requestId"] == "sub-1"
        assert_graceful_end(answer)
    finally:
        stop(proc)


def test_sigterm_ends_an_http_listen_stream_with_its_result() -> None:
    port = free_port()
    proc = start_everything_http(port)
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
    }
    events: list[dict[str, Any]] = []
    try:
        with httpx.stream("POST", f"http://127.0.0.1:{port}/mcp", json=LISTEN, headers=headers, timeout=10) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                events.append(json.loads(line[5:]))
                if len(events) == 1:
                    assert events[0]["method"] == "notifications/subscriptions/acknowledged"
                    proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
    finally:
        stop(proc)
    assert len(events) == 2
    assert_graceful_end(events[1])


def test_sigterm_ends_a_legacy_get_stream_asking_the_client_to_come_back() -> None:
    """A legacy session's GET stream ended only when its client went: the server, signalled,
    waited on it for ever (found by a server review). It ends with a ``retry``."""
    port = free_port()
    proc = start_everything_http(port)
    url = f"http://127.0.0.1:{port}/mcp"
    accept = {"accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    lines: list[str] = []
    try:
        opened = httpx.post(url, json=initialize, headers=accept, timeout=10)
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert httpx.post(url, json=initialized, headers={**accept, **session}, timeout=10).status_code == 202
        get = {"accept": "text/event-stream", **session}
        with httpx.stream("GET", url, headers=get, timeout=10) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                lines.append(line)
                if line == ": stream open":
                    proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) in (0, -signal.SIGTERM)
    finally:
        stop(proc)
    assert "retry: 1000" in lines, lines


CLOSING = """
import asyncio, signal, sys
# as at a terminal: a run started in the background (nohup, `&`) inherits SIGINT ignored, and
# uvicorn's re-raised signal is then ignored too (exit 0, where a terminal's Ctrl-C gives 130)
signal.signal(signal.SIGINT, signal.default_int_handler)
from mcpgen._runtime.server import runners
from mcpgen._runtime.server.transports.asgi import HttpApp
from tests.server.servers import Demo
port, marker, fails = int(sys.argv[1]), sys.argv[2], sys.argv[3]
router = Demo().router
app = HttpApp(router)
def noted(what, close):
    async def closing():
        await asyncio.sleep(0.05)  # a real wait: a close cut short by the signal stops here
        if what == fails:
            raise RuntimeError(what + " could not close")
        await close()
        with open(marker, "a") as f:
            f.write(what + "\\n")
    return closing
app.aclose = noted("app", app.aclose)
router.services.aclose = noted("services", router.services.aclose)
runners.serve_uvicorn(router, runners.uvicorn_config(app, "127.0.0.1", port))
"""


def signal_the_closing_runner(tmp_path: Path, fails: str, signum: int) -> tuple[int, str, list[str]]:
    """Start ``CLOSING`` (its ``fails`` close raising), signal it once it serves: its exit status,
    stderr, and what it closed, in order."""
    port, marker = free_port(), tmp_path / "closed"
    proc = subprocess.Popen(
        [sys.executable, "-c", CLOSING, str(port), str(marker), fails],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])},
    )
    try:
        wait_http(port, proc)
        proc.send_signal(signum)
        code = proc.wait(10)
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
    finally:
        stop(proc)
    return code, err, marker.read_text().splitlines()


@pytest.mark.parametrize("fails", ["nothing", "app"])
def test_sigterm_stops_the_http_runner_after_it_closed_what_it_holds(tmp_path: Path, fails: str) -> None:
    """The runner closes the app's verifier client and the services' Redis connections once
    uvicorn has shut its connections down. Closed after ``serve`` instead, they never were on a
    signal: uvicorn re-raises it as ``serve`` returns (and a forked worker ends in ``os._exit``).
    A close that fails is logged, and the next is still closed: the process ends as it would."""
    code, err, closed = signal_the_closing_runner(tmp_path, fails, signal.SIGTERM)
    assert code == -signal.SIGTERM, (code, err)  # uvicorn re-raises the signal once it has shut down
    if fails == "nothing":
        assert closed == ["app", "services"]
    else:
        assert closed == ["services"]
        assert "closing the app failed: RuntimeError('app could not close')" in err, err


def test_ctrl_c_stops_the_http_runner_with_status_130_and_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) shuts the server down as SIGTERM does; uvicorn then raises the signal
    again, which Python makes a ``KeyboardInterrupt``: 32 lines of traceback on the terminal of
    the README's own ``python -m weather --http``. It ends with 130 (128 + SIGINT), silently."""
    code, err, closed = signal_the_closing_runner(tmp_path, "nothing", signal.SIGINT)
    assert (code, err) == (128 + signal.SIGINT, "")
    assert closed == ["app", "services"]
