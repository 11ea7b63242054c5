"""Small servers and drivers shared by the server tests: in-process stdio and ASGI, and real processes."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcpgen._runtime.server.transports.stdio import serve
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

from tests.conftest import ROOT

EVERYTHING = ROOT / "examples" / "everything_server"
WEATHER = ROOT / "examples" / "weather"
MODERN = "2026-07-28"


def meta(**extra: Any) -> dict[str, Any]:
    """A modern request ``_meta`` envelope with no client capabilities, plus ``extra`` keys."""
    base: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    base.update(extra)
    return base


def request(rid: int | str, method: str, params: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
    """A modern request: ``params`` with the ``_meta`` envelope added."""
    body = dict(params or {})
    body["_meta"] = {**meta(**meta_extra), **body.get("_meta", {})}
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": body}


class Demo(s.Server):
    """A small server: an echo tool, an MRTR tool, a slow tool, one resource."""

    name = "demo"
    version = "1.2.3"
    ttl_ms = 5000
    cache_scope = "public"

    def __init__(self) -> None:
        self.cancelled: list[str] = []

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})])

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        args = {} if params.arguments is MISSING else params.arguments
        if params.name == "echo":
            await ctx.report_progress(1, 2, "half")
            await ctx.log("info", "echoing")
            await ctx.log("debug", "details")
            return s.CallToolResult(content=[m.TextContent(type="text", text=json.dumps(args, sort_keys=True))])
        if params.name == "ask":
            if params.input_responses is MISSING:
                question = {
                    "message": "name?",
                    "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
                }
                return s.InputRequiredResult(
                    input_requests={"q": {"method": "elicitation/create", "params": question}}, request_state="round-1"
                )
            answer = params.input_responses["q"]
            text = f"{answer.action}:{json.dumps(answer.content, sort_keys=True)} state={params.request_state}"
            return s.CallToolResult(content=[m.TextContent(type="text", text=text)])
        if params.name in ("slow", "stream"):
            if params.name == "stream":
                await ctx.report_progress(1)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancelled.append(params.name)
                raise
        if params.name in ("poll", "poll-at-once"):  # let go of the connection (at once: before any event)
            if params.name == "poll":
                await ctx.report_progress(1)
            await ctx.close_sse_stream(retry_ms=10)
            await ctx.report_progress(2)
            return s.CallToolResult(content=[m.TextContent(type="text", text="polled")])
        if params.name == "fail":
            raise RuntimeError("boom")
        if params.name == "cancelled_inside":  # a task of its own cancelled; the call never was
            raise asyncio.CancelledError
        return s.CallToolResult(content=[], is_error=True)

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: s.Context
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        return s.ReadResourceResult(contents=[{"uri": params.uri, "text": "hi"}], ttl_ms=1, cache_scope="private")


class Stdio:
    """An in-process stdio connection to a server: feed lines, read what it writes."""

    def __init__(self, server: s.Server, on_write: Callable[[Stdio, dict[str, Any]], None] | None = None) -> None:
        self.server = server
        self.reader = asyncio.StreamReader()
        self.out: list[dict[str, Any]] = []
        self.on_write = on_write
        self.task: asyncio.Task[None] | None = None

    def write(self, data: bytes) -> None:
        assert data.endswith(b"\n") and data.count(b"\n") == 1, data
        message = json.loads(data)
        self.out.append(message)
        if self.on_write is not None:
            self.on_write(self, message)

    def send(self, *messages: dict[str, Any] | bytes) -> None:
        for message in messages:
            line = message if isinstance(message, bytes) else json.dumps(message).encode()
            self.reader.feed_data(line + b"\n")

    async def __aenter__(self) -> Stdio:
        self.task = asyncio.create_task(serve(self.server.router, self.reader, self.write))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.reader.feed_eof()
        assert self.task is not None
        await asyncio.wait_for(self.task, 5)

    async def response(self, rid: Any, timeout: float = 5) -> dict[str, Any]:
        """Wait (bounded) for the response to ``rid``."""
        async with asyncio.timeout(timeout):
            while True:
                for message in self.out:
                    if message.get("id") == rid and ("result" in message or "error" in message):
                        return message
                await asyncio.sleep(0)

    async def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 5) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                for message in self.out:
                    if predicate(message):
                        return message
                await asyncio.sleep(0)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_http(port: int, proc: subprocess.Popen[bytes], timeout: float = 20) -> None:
    """Wait (bounded) until something listens on ``port``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read() if proc.stderr else ''}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on port {port} after {timeout}s")


def start_everything_http(port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return start_example_http(EVERYTHING, port, env)


def start_example_http(example: Path, port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``python examples/NAME --port PORT``, once it listens."""
    proc = subprocess.Popen(
        [sys.executable, str(example), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "generated"), **(env or {})},
    )
    try:
        wait_http(port, proc)
    except BaseException:
        stop(proc)
        raise
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def everything_stdio_command() -> tuple[str, list[str]]:
    return sys.executable, [str(EVERYTHING), "--stdio"]


def example_path() -> Path:
    return EVERYTHING
