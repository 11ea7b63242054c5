"""The everything server's memory under load and under abandoned legacy sessions (HTTP, loopback).

``python -m tests.reliability.memory [--requests 60000] [--sessions 30000]`` prints the server's
RSS after warming up, after a mixed load (modern tools/call, discover, prompts, resources; legacy
session requests), and after opening sessions that are never used again, at the default limits
(at most ``max_sessions`` kept: the oldest idle ones are evicted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.hostile.probe import LEGACY, HttpServer, initialize, modern, modern_headers  # noqa: E402


async def post(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int, body: Any, headers: dict[str, str]
) -> tuple[int, dict[str, str]]:
    data = json.dumps(body).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(
        f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\ncontent-type: application/json\r\n"
        f"accept: application/json, text/event-stream\r\n{head}content-length: {len(data)}\r\n\r\n".encode()
        + data
    )
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw.decode("latin-1").split("\r\n")
    got = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in got:
        await reader.readexactly(int(got["content-length"]))
    else:  # an SSE reply: read to its last chunk
        while not (await reader.readuntil(b"\r\n")).startswith(b"0\r\n"):
            pass
        await reader.readuntil(b"\r\n")
    return int(lines[0].split()[1]), got


def mixed(n: int, session: str) -> tuple[Any, dict[str, str]]:
    kind = n % 5
    if kind == 0:
        body = modern(n, "tools/call", {"name": "test_simple_text", "arguments": {}})
    elif kind == 1:
        body = modern(n, "prompts/get", {"name": "test_simple_prompt"})
    elif kind == 2:
        body = modern(n, "resources/read", {"uri": "test://static-text"})
    elif kind == 3:
        body = modern(n, "server/discover")
    else:
        legacy = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "test_simple_text"}}
        return legacy, {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
    return body, modern_headers(body)


async def load(port: int, total: int, clients: int, session: str) -> int:
    errors = 0

    async def worker(first: int) -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for n in range(first, total, clients):
                status, _ = await post(reader, writer, port, *mixed(n, session))
                errors += status != 200
        finally:
            writer.close()

    await asyncio.gather(*(worker(i) for i in range(clients)))
    return errors


async def abandon(port: int, total: int, clients: int) -> int:
    opened = 0

    async def worker(first: int) -> None:
        nonlocal opened
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            for n in range(first, total, clients):
                status, headers = await post(reader, writer, port, initialize(n), {})
                opened += status == 200 and "mcp-session-id" in headers
        finally:
            writer.close()

    await asyncio.gather(*(worker(i) for i in range(clients)))
    return opened


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=60_000)
    parser.add_argument("--sessions", type=int, default=30_000)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()
    with HttpServer() as server:
        session = server.legacy_session()
        asyncio.run(load(server.port, 2000, args.clients, session))  # warm up: every path loaded once
        warm = server.rss_kib()
        started = time.monotonic()
        errors = asyncio.run(load(server.port, args.requests, args.clients, session))
        loaded = server.rss_kib()
        seconds = time.monotonic() - started
        phases = []
        for _ in range(3):  # the cap is reached in the first third, after that RSS should hold
            opened = asyncio.run(abandon(server.port, args.sessions // 3, args.clients))
            phases.append((opened, server.rss_kib()))
        server.alive()
    print("| after | server RSS | growth |")
    print("|---|---:|---:|")
    print(f"| warm-up (2,000 requests) | {warm / 1024:.1f} MiB | |")
    print(
        f"| {args.requests:,} mixed requests ({errors} errors, {seconds:.0f} s) | {loaded / 1024:.1f} MiB "
        f"| {(loaded - warm) / 1024:+.1f} MiB |"
    )
    total = 0
    for opened, rss in phases:
        total += opened
        growth = (rss - loaded) / 1024
        print(f"| {total:,} abandoned legacy sessions (cap 10,000) | {rss / 1024:.1f} MiB | {growth:+.1f} MiB |")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
