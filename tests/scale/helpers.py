"""Drivers of the scale-out tests: worker processes, legacy and modern HTTP requests, SSE parsing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT
from tests.server.servers import free_port, stop, wait_http

WORKER = Path(__file__).with_name("worker.py")
LEGACY = "2025-11-25"
MODERN = "2026-07-28"
SSE = "application/json, text/event-stream"


class Worker:
    """One server process (``tests/scale/worker.py``) on its own port; stderr kept in a file."""

    def __init__(self, redis_url: str | None, log: Path, *, workers: int = 1, env: dict[str, str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.log = log
        extra = {"MCP_REDIS_URL": redis_url} if redis_url else {}
        environ = {**os.environ, "PYTHONPATH": str(ROOT), **extra, **(env or {})}
        if not redis_url:
            environ.pop("MCP_REDIS_URL", None)
        self.stderr = log.open("wb")
        command = [sys.executable, str(WORKER), "--port", str(self.port), "--workers", str(workers)]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.stderr, env=environ)
        try:
            wait_http(self.port, self.proc)  # type: ignore[arg-type]
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        stop(self.proc)  # type: ignore[arg-type]
        self.stderr.close()

    def errors(self) -> str:
        return self.log.read_text()


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def forked_workers(pid: int, expected: int, timeout: float = 20) -> set[int]:
    """The children of ``pid`` once there are ``expected`` of them (bounded wait): the parent listens
    before it forks, so the port answers while the workers are still starting."""
    deadline = time.monotonic() + timeout
    while len(found := children(pid)) < expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def legacy_headers(session: str | None = None) -> dict[str, str]:
    headers = {"accept": SSE, "content-type": "application/json", "mcp-protocol-version": LEGACY}
    if session is not None:
        headers["mcp-session-id"] = session
    return headers


def initialize(client: httpx.Client, url: str) -> str:
    """A legacy session opened on ``url`` (2025-11-25); its id."""
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "scale-test", "version": "1"}}
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    reply = client.post(url, json=body, headers=legacy_headers())
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert client.post(url, json=note, headers=legacy_headers(session)).status_code == 202
    return session


def legacy(client: httpx.Client, url: str, session: str, rid: int, method: str, params: Any = None) -> httpx.Response:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        body["params"] = params
    return client.post(url, json=body, headers=legacy_headers(session))


def modern_meta(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


def modern_body(rid: int, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": modern_meta()}}
    headers = {"accept": SSE, "mcp-protocol-version": MODERN, "mcp-method": method}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    return body, headers


def call_tool(client: httpx.Client, url: str, rid: int, name: str, **arguments: Any) -> dict[str, Any]:
    """A stateless (2026-07-28) tools/call; its result."""
    body, headers = modern_body(rid, "tools/call", {"name": name, "arguments": arguments})
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["result"]
    return result


class Event:
    """One server-sent event: its id, its data (None when empty), and a retry field."""

    def __init__(self, id: str | None, data: str, retry: int | None) -> None:
        self.id, self.retry = id, retry
        self.data: dict[str, Any] | None = json.loads(data) if data else None

    def __repr__(self) -> str:
        return f"Event(id={self.id!r}, data={self.data!r}, retry={self.retry!r})"


def events(lines: Iterator[str]) -> Iterator[Event]:
    """The events of an SSE body (comments skipped; an event of only ``retry`` is kept)."""
    event_id: str | None = None
    data: list[str] = []
    retry: int | None = None
    seen = False
    for line in lines:
        if line == "":
            if seen:
                yield Event(event_id, "\n".join(data), retry)
            event_id, data, retry, seen = None, [], None, False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        seen = True
        if name == "id":
            event_id = value
        elif name == "data":
            data.append(value)
        elif name == "retry":
            retry = int(value)
    if seen:
        yield Event(event_id, "\n".join(data), retry)


def progress(event: Event) -> float | None:
    """The progress value of a ``notifications/progress`` event, else None."""
    data = event.data
    if data is None or data.get("method") != "notifications/progress":
        return None
    value: float = data["params"]["progress"]
    return value
