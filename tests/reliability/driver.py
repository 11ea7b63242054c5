"""Load and fault drivers for a scaffolded server over Streamable HTTP and stdio (loopback only).

``python -m tests.reliability.driver --seconds 20`` runs the long load (figures for the
README); the default test run uses the same drivers with small, bounded counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def call(rid: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": META, "name": tool, "arguments": arguments},
    }


def http_headers(tool: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }


def scaffold(base: Path) -> Path:
    """A fresh scaffolded project with the reliability tools in its user module."""
    done = subprocess.run(
        [sys.executable, "-m", "mcp_schema_codegen", "scaffold", "loadsrv", "--dir", str(base)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    project = base / "loadsrv"
    shutil.copy(Path(__file__).with_name("loadsrv_server.py"), project / "loadsrv" / "server.py")
    return project


def server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


@dataclass
class Figures:
    served: int = 0
    errors: int = 0
    latencies: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def percentile(self, p: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0

    def row(self, label: str) -> str:
        rate = self.served / self.seconds if self.seconds else 0.0
        return (
            f"| {label} | {self.served} | {self.errors} | {rate:,.0f}/s | "
            f"{self.percentile(0.5):.2f} ms | {self.percentile(0.99):.2f} ms |"
        )


async def http_load(url: str, clients: int, per_client: int, seconds: float | None = None) -> Figures:
    """``clients`` keep-alive connections, each posting tools/call requests back to back.

    A minimal HTTP/1.1 client on asyncio streams, so the load generator (one Python
    process) is not the bottleneck the way a general-purpose client library would be.
    """
    figures = Figures()
    deadline = time.monotonic() + seconds if seconds else None
    host, port = url.split("//")[1].split("/")[0].split(":")
    path = "/" + url.split("//")[1].split("/", 1)[1]
    headers = "".join(f"{k}: {v}\r\n" for k, v in http_headers("echo").items())

    async def worker(first: int) -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        n = 0
        try:
            while (deadline is None and n < per_client) or (deadline is not None and time.monotonic() < deadline):
                body = json.dumps(call(first + n, "echo", text="hi")).encode()
                started = time.perf_counter()
                start_line = f"POST {path} HTTP/1.1\r\nhost: {host}:{port}\r\n{headers}"
                writer.write(f"{start_line}content-length: {len(body)}\r\n\r\n".encode() + body)
                status, payload = await read_response(reader)
                ok = status == 200 and json.loads(payload).get("result", {}).get("content") == [
                    {"type": "text", "text": "hi"}
                ]
                figures.latencies.append(time.perf_counter() - started)
                figures.served += ok
                figures.errors += not ok
                n += 1
        finally:
            writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(worker(i * 1_000_000) for i in range(clients)))
    figures.seconds = time.perf_counter() - started
    return figures


async def read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One HTTP/1.1 response with a content-length body (what the server sends for JSON replies)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    return status, await reader.readexactly(length)


async def stdio_load(project: Path, in_flight: int, total: int) -> Figures:
    """One stdio server process, ``in_flight`` requests outstanding at a time."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "loadsrv",
        cwd=project,
        env=server_env(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    figures = Figures()
    sent_at: dict[int, float] = {}
    window = asyncio.Semaphore(in_flight)

    async def reader() -> None:
        assert proc.stdout is not None
        while figures.served + figures.errors < total:
            line = await proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed stdout")
            reply = json.loads(line)
            if "id" not in reply:
                continue
            figures.latencies.append(time.perf_counter() - sent_at.pop(reply["id"]))
            ok = reply.get("result", {}).get("content") == [{"type": "text", "text": "hi"}]
            figures.served += ok
            figures.errors += not ok
            window.release()

    async def sender() -> None:
        assert proc.stdin is not None
        for rid in range(total):
            await window.acquire()
            sent_at[rid] = time.perf_counter()
            proc.stdin.write(json.dumps(call(rid, "echo", text="hi")).encode() + b"\n")
            if rid % 64 == 0:
                await proc.stdin.drain()
        await proc.stdin.drain()

    started = time.perf_counter()
    receiving, sending = asyncio.create_task(reader()), asyncio.create_task(sender())
    try:  # a server that dies (or never starts) fails the run instead of leaving the sender waiting
        await asyncio.wait_for(asyncio.gather(receiving, sending), 120)
    except BaseException:
        for task in (receiving, sending):
            task.cancel()
        if proc.returncode is None:
            proc.kill()
        raise
    figures.seconds = time.perf_counter() - started
    proc.stdin.close()
    await asyncio.wait_for(proc.wait(), 10)
    return figures


def start_http(project: Path, port: int) -> subprocess.Popen[bytes]:
    from tests.server.servers import wait_http

    proc = subprocess.Popen(
        [sys.executable, "-m", "loadsrv", "--http", "--port", str(port)],
        cwd=project,
        env=server_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    wait_http(port, proc)
    return proc


def main() -> int:
    parser = argparse.ArgumentParser(description="Load a scaffolded server over HTTP and stdio (loopback).")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    from tests.server.servers import free_port, stop

    with tempfile.TemporaryDirectory() as tmp:
        project = scaffold(Path(tmp))
        port = free_port()
        proc = start_http(project, port)
        try:
            http = asyncio.run(http_load(f"http://127.0.0.1:{port}/mcp", args.clients, 0, args.seconds))
        finally:
            stop(proc)
        stdio_total = max(1000, int(http.served / 2))
        stdio = asyncio.run(stdio_load(project, 32, stdio_total))
    print("| transport | served | errors | rate | p50 | p99 |")
    print("|---|---:|---:|---:|---:|---:|")
    print(http.row(f"HTTP, {args.clients} concurrent clients, {args.seconds:g} s"))
    print(stdio.row(f"stdio, 32 in flight, {stdio_total} requests"))
    return 1 if http.errors or stdio.errors else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
