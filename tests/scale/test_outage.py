"""Redis out of reach: at start one clear sentence (exit 2); mid-run stateless requests keep being
served, the loss is logged once, and the server reconnects. ``--workers N`` forks N workers."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcpgen._runtime.tls import default_context

from tests.conftest import ROOT
from tests.scale.helpers import (
    WORKER,
    Worker,
    call_tool,
    forked_workers,
    initialize,
    legacy,
    legacy_headers,
    modern_body,
)
from tests.scale.redis_server import RedisServer, start_redis
from tests.server.servers import free_port

TIMEOUT = httpx.Timeout(10.0)


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server, directory = start_redis()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("workers", [1, 2])
def test_redis_unreachable_at_start_is_one_sentence(workers: int) -> None:
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_REDIS_URL": nowhere}
    command = [sys.executable, str(WORKER), "--port", str(free_port()), "--workers", str(workers)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"cannot reach Redis at {nowhere}: ")


def test_workers_without_redis_are_refused() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MCP_REDIS_URL"}
    env["PYTHONPATH"] = str(ROOT)
    command = [sys.executable, str(WORKER), "--port", str(free_port()), "--workers", "2"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30, check=False)
    refusal = "2 workers need a shared store: set redis_url on the server class or MCP_REDIS_URL\n"
    assert (done.returncode, done.stderr) == (2, refusal)


def test_two_workers_on_one_port(own_redis: RedisServer, tmp_path: Path) -> None:
    server = Worker(own_redis.url, tmp_path / "w.log", workers=2)
    try:
        forked = forked_workers(server.proc.pid, 2)
        assert len(forked) == 2
        with httpx.Client(timeout=TIMEOUT) as client:
            answered = {int(call_tool(client, server.url, i, "pid")["content"][0]["text"]) for i in range(20)}
            assert answered <= forked
            session = initialize(client, server.url)
            for rid in range(10):  # whichever worker accepts the connection
                with httpx.Client(timeout=TIMEOUT, verify=default_context()) as fresh:
                    assert legacy(fresh, server.url, session, rid, "ping").json()["result"] == {}
    finally:
        server.stop()
    assert not [pid for pid in forked if Path(f"/proc/{pid}").exists()]  # the workers ended with their parent


def test_shared_sessions_expire_unless_a_stream_holds_them(own_redis: RedisServer, tmp_path: Path) -> None:
    """Idle sessions expire in Redis as in memory; one whose GET stream is open on A stays alive
    for B (the stream keeps it in use), as an open stream keeps a session in memory."""
    idle = {"SESSION_IDLE": "2"}
    a = Worker(own_redis.url, tmp_path / "a.log", env=idle)
    b = Worker(own_redis.url, tmp_path / "b.log", env=idle)
    try:
        with httpx.Client(timeout=TIMEOUT) as client, httpx.Client(timeout=TIMEOUT) as other:
            streaming, idle_one = initialize(client, a.url), initialize(client, a.url)
            head = {**legacy_headers(streaming), "accept": "text/event-stream"}
            with client.stream("GET", a.url, headers=head) as stream:
                assert stream.status_code == 200
                lines = stream.iter_lines()  # held: a dropped line iterator closes the stream
                next(lines)
                time.sleep(3.5)  # the time under test: past the idle timeout
                kept = legacy(other, b.url, streaming, 1, "ping")
                assert kept.status_code == 200, (kept.status_code, kept.text)
                assert legacy(other, b.url, idle_one, 2, "ping").status_code == 404
    finally:
        a.stop()
        b.stop()


def test_redis_lost_mid_run(own_redis: RedisServer, tmp_path: Path) -> None:
    worker = Worker(own_redis.url, tmp_path / "w.log")
    try:
        with httpx.Client(timeout=TIMEOUT) as client:
            session = initialize(client, worker.url)
            own_redis.stop()
            for rid in range(5):  # stateless requests are served, a change included
                assert call_tool(client, worker.url, rid, "pid")["content"][0]["text"].isdigit()
                assert call_tool(client, worker.url, rid, "change")["content"][0]["text"] == "changed"
            lost = legacy(client, worker.url, session, 9, "ping")  # a legacy session needs the store
            assert lost.status_code == 503 and lost.json()["error"]["code"] == -32603
            assert "out of reach" in lost.json()["error"]["message"]
            own_redis.start()  # same port, empty: the old session is gone, a new one works
            assert legacy(client, worker.url, session, 10, "ping").status_code == 404
            fresh = initialize(client, worker.url)
            assert legacy(client, worker.url, fresh, 11, "ping").json()["result"] == {}
        asyncio.run(listen_hears_a_change(worker.url))
    finally:
        worker.stop()
    log = worker.errors()
    assert log.count("lost Redis at") == 1, log
    assert "is back" in log and "Traceback" not in log, log


async def listen_hears_a_change(url: str) -> None:
    """After the outage the bus works again: a listen stream hears a change (the reader may still
    be waiting to reconnect, so the change is raised until it arrives, within a deadline)."""
    body, headers = modern_body(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    async with httpx.AsyncClient(timeout=TIMEOUT) as client:
        async with client.stream("POST", url, json=body, headers=headers) as stream:
            lines = stream.aiter_lines()
            heard = asyncio.Event()

            async def read() -> None:
                buffered: list[str] = []
                async for line in lines:
                    buffered.append(line)
                    if line == "" and any("tools/list_changed" in b for b in buffered):
                        heard.set()
                        return

            reader = asyncio.create_task(read())
            async with asyncio.timeout(20):
                rid = 100
                while not heard.is_set():
                    rid += 1
                    b, h = modern_body(rid, "tools/call", {"name": "change", "arguments": {}})
                    assert (await client.post(url, json=b, headers=h)).status_code == 200
                    try:
                        await asyncio.wait_for(asyncio.shield(heard.wait()), 0.5)
                    except TimeoutError:
                        continue
            reader.cancel()
