"""``--workers N`` supervises: a worker that dies is reported in one line and replaced on the same
socket; a worker that cannot start stops the server (exit 1, one line) instead of a fork loop;
SIGTERM or SIGINT stops every worker, replaces nobody, and the parent exits 0."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from mcpgen._runtime.tls import default_context

from tests.conftest import ROOT
from tests.scale.helpers import WORKER, Worker, call_tool, children, forked_workers
from tests.scale.redis_server import RedisServer
from tests.server.servers import free_port

TIMEOUT = httpx.Timeout(10.0)
GIVE_UP = re.compile(r"worker \d \(pid \d+\) exited with status 3: 6 workers died within 10 s, stopping the server")


def replaced(parent: int, before: set[int], dead: int, timeout: float = 20) -> set[int]:
    """The children of ``parent`` once ``dead`` is gone and a new one took its place (bounded wait)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        now = children(parent)
        if dead not in now and len(now) == len(before) and now != before:
            return now
        time.sleep(0.02)
    return children(parent)


def answering(url: str, expected: set[int], limit: int = 200) -> set[int]:
    """The worker pids that answer ``pid`` on fresh connections, until all of ``expected`` have
    (at most ``limit`` connections: which worker accepts one is the kernel's choice)."""
    seen: set[int] = set()
    for rid in range(limit):
        with httpx.Client(timeout=TIMEOUT, verify=default_context()) as client:  # a new connection each time
            seen.add(int(call_tool(client, url, rid, "pid")["content"][0]["text"]))
        if seen >= expected:
            break
    return seen


def test_a_killed_worker_is_replaced(redis_server: RedisServer, tmp_path: Path) -> None:
    server = Worker(redis_server.url, tmp_path / "w.log", workers=2)
    try:
        parent = server.proc.pid
        first = forked_workers(parent, 2)
        assert len(first) == 2
        assert answering(server.url, first) == first  # both serve before the kill
        doomed = min(first)
        os.kill(doomed, signal.SIGKILL)
        now = replaced(parent, first, doomed)
        assert doomed not in now and len(now) == 2, now
        assert answering(server.url, now) == now  # the survivor and the newcomer share the port
        log = server.errors()
        assert re.fullmatch(rf"worker [12] \(pid {doomed}\) was killed by SIGKILL; starting a new one\n", log), log
    finally:
        server.stop()
    assert server.proc.returncode == 0, server.errors()
    assert not [pid for pid in now if Path(f"/proc/{pid}").exists()]  # the newcomer too


def test_a_worker_that_cannot_start_stops_the_server(redis_server: RedisServer, tmp_path: Path) -> None:
    """Both first workers start; every later fork dies at once (status 3). A kill -9 starts the
    loop: five deaths are replaced, the sixth within 10 s stops the healthy worker and the parent."""
    server = Worker(redis_server.url, tmp_path / "w.log", workers=2, env={"HEALTHY_FORKS": "2"})
    try:
        parent = server.proc.pid
        first = forked_workers(parent, 2)
        assert len(first) == 2
        healthy, doomed = sorted(first)
        os.kill(doomed, signal.SIGKILL)
        assert server.proc.wait(30) == 1
    finally:
        server.stop()
    lines = server.errors().splitlines()
    assert len(lines) == 6, lines
    assert re.fullmatch(rf"worker [12] \(pid {doomed}\) was killed by SIGKILL; starting a new one", lines[0])
    assert all(re.fullmatch(r"worker [12] \(pid \d+\) exited with status 3; starting a new one", x) for x in lines[1:5])
    assert GIVE_UP.fullmatch(lines[5]), lines[5]
    assert not Path(f"/proc/{healthy}").exists()  # reaped by the parent before it exited


def test_workers_that_never_start_end_in_one_line(redis_server: RedisServer) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_REDIS_URL": redis_server.url, "HEALTHY_FORKS": "0"}
    command = [sys.executable, str(WORKER), "--port", str(free_port()), "--workers", "2"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=30, check=False)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 6 and GIVE_UP.fullmatch(lines[-1]), lines
    assert all(line.endswith("exited with status 3; starting a new one") for line in lines[:-1])


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_stops_every_worker_and_replaces_none(
    signum: int, redis_server: RedisServer, tmp_path: Path
) -> None:
    server = Worker(redis_server.url, tmp_path / "w.log", workers=2)
    try:
        parent = server.proc.pid
        first = forked_workers(parent, 2)
        assert len(first) == 2
        with httpx.Client(timeout=TIMEOUT) as client:
            assert int(call_tool(client, server.url, 1, "pid")["content"][0]["text"]) in first
        server.proc.send_signal(signum)
        assert server.proc.wait(20) == 0  # every worker exited with status 0
    finally:
        server.stop()
    assert server.errors() == ""  # no death reported, nobody replaced
    assert not [pid for pid in first if Path(f"/proc/{pid}").exists()]


def test_a_port_in_use_is_one_sentence_and_workers_end_with_their_supervisor(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Found by a scale-out review: ``--workers N`` on a port in use raised a traceback (exit 1),
    and workers whose supervisor was killed (``kill -9``) served on unsupervised, holding the
    port against a restart."""
    server = Worker(redis_server.url, tmp_path / "w.log", workers=2)
    try:
        workers = forked_workers(server.proc.pid, 2)
        assert len(workers) == 2
        command = [sys.executable, str(WORKER), "--port", str(server.port), "--workers", "2"]
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MCP_REDIS_URL": redis_server.url}
        busy = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False)
        assert busy.returncode == 2 and "Traceback" not in busy.stderr, busy.stderr
        assert f"cannot listen on 127.0.0.1:{server.port}" in busy.stderr, busy.stderr
        os.kill(server.proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [
            pid
            for pid in workers
            if Path(f"/proc/{pid}/status").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
        ], "workers outlived their supervisor"
    finally:
        server.stop()
