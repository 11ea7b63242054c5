"""Scale-out: ``tools/call`` round trips and ``subscriptions/listen`` fan-out latency, with 1, 2 and
4 workers sharing state through Redis, against one worker keeping it in memory, in one run.

Each configuration is a set of server processes (this file, ``--serve``), one port each, with a
client-side round-robin balancer in front: ``memory x1`` (no Redis), ``redis x1``, ``redis x2``
and ``redis x4`` (every worker on one private ``redis-server`` started here, on a free loopback
port with an empty data directory). All of them run for the whole benchmark; the rounds
interleave the configurations, so all see the same load on this shared machine.

- round trips: ``--clients`` concurrent clients (raw HTTP/1.1 keep-alive, one connection per
  worker each), each sending 2026-07-28 ``tools/call`` requests one after another, each request
  to the next worker; per round a batch of ``--calls`` requests. Reported: requests per
  second, p50 and p99 latency, and the ratio of throughput to ``memory x1``.
- fan-out: one listen stream on every worker (``toolsListChanged``); a ``tools/call`` on one
  worker raises the change; latency is from sending that request to each stream receiving the
  notification, so it includes the request's own HTTP round trip (the in-memory figure is that
  plus an in-process hand-off; with Redis the change goes through a publish and the channel).
  With more than one worker, the change is raised on a worker other than each listener's for
  all but one listener.

Usage::

    python benchmarks/bench_scale.py [--rounds 5] [--calls 2000] [--clients 8] [--events 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _peers import free_port

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "generated"))

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT = "application/json, text/event-stream"


def serve(port: int) -> None:
    """One worker: an ``echo`` tool and a ``change`` tool (the tool list changed)."""
    from mcpgen.v2026_07_28 import models as m
    from mcpgen.v2026_07_28 import server as s

    class Bench(s.Server):
        name = "bench-scale"

        async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
            return s.ListToolsResult(
                tools=[m.Tool(name=n, input_schema=m.ToolInputSchema(type="object")) for n in ("echo", "change")]
            )

        async def call_tool(
            self, params: m.CallToolRequestParams, ctx: s.Context
        ) -> m.CallToolResult | m.InputRequiredResult:
            if params.name == "change":
                await self.notify_tools_changed()
            return s.CallToolResult(content=[m.TextContent(type="text", text=params.name)])

    Bench().run_http("127.0.0.1", port)


def wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process on port {port} exited with {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


class Config:
    def __init__(self, name: str, workers: int, redis_url: str | None) -> None:
        self.name = name
        self.procs: list[subprocess.Popen[bytes]] = []
        self.urls: list[str] = []
        env = {k: v for k, v in os.environ.items() if k != "MCP_REDIS_URL"}
        if redis_url is not None:
            env["MCP_REDIS_URL"] = redis_url
        for _ in range(workers):
            port = free_port()
            proc = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(port)], env=env, stdout=subprocess.DEVNULL
            )
            self.procs.append(proc)
            self.urls.append(f"http://127.0.0.1:{port}/mcp")
            wait_port(port, proc)
        self.latency: list[float] = []
        self.rate: list[float] = []
        self.fanout: list[float] = []

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(10)


def call(rid: int, name: str) -> tuple[bytes, dict[str, str]]:
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"_meta": META, "name": name, "arguments": {}},
    }
    headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
    return json.dumps(body).encode(), headers


class RawClient:
    """A minimal HTTP/1.1 keep-alive client on an asyncio stream, so the client is not the bottleneck."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int) -> None:
        self.reader, self.writer, self.port = reader, writer, port

    @classmethod
    async def open(cls, url: str) -> RawClient:
        port = int(url.split(":")[2].split("/")[0])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer, port)

    async def post(self, body: bytes, headers: dict[str, str]) -> bytes:
        head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-type: application/json\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        head += f"content-length: {len(body)}\r\n\r\n"
        self.writer.write(head.encode() + body)
        status = await self.reader.readuntil(b"\r\n\r\n")
        assert status.startswith(b"HTTP/1.1 200"), status
        length = next(
            int(line.split(b":", 1)[1]) for line in status.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        return await self.reader.readexactly(length)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


async def round_trips(config: Config, calls: int, clients: int) -> None:
    latencies: list[float] = []
    counter = iter(range(calls))

    async def client(offset: int) -> None:
        urls = config.urls
        connections = [await RawClient.open(url) for url in urls]  # one per worker, as a balancer keeps
        try:
            for i in counter:
                body, headers = call(i, "echo")
                start = time.perf_counter()
                reply = await connections[(i + offset) % len(urls)].post(body, headers)
                latencies.append(time.perf_counter() - start)
                assert b'"result"' in reply, reply
        finally:
            for connection in connections:
                await connection.close()

    start = time.perf_counter()
    await asyncio.gather(*(client(k) for k in range(clients)))
    config.rate.append(calls / (time.perf_counter() - start))
    config.latency.extend(latencies)


async def fan_out(config: Config, events: int) -> None:
    import httpx

    params = {"_meta": META, "notifications": {"toolsListChanged": True}}
    headers = {"accept": ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": "subscriptions/listen"}
    received: list[asyncio.Queue[float]] = [asyncio.Queue() for _ in config.urls]
    ready = [asyncio.Event() for _ in config.urls]

    async def listen(index: int, url: str, http: httpx.AsyncClient) -> None:
        body = {"jsonrpc": "2.0", "id": index, "method": "subscriptions/listen", "params": params}
        async with http.stream("POST", url, json=body, headers=headers) as stream:
            async for line in stream.aiter_lines():
                if "subscriptions/acknowledged" in line:
                    ready[index].set()
                elif "tools/list_changed" in line:
                    received[index].put_nowait(time.perf_counter())

    async with httpx.AsyncClient(timeout=30) as http:
        listeners = [asyncio.create_task(listen(i, url, http)) for i, url in enumerate(config.urls)]
        for event in ready:
            await asyncio.wait_for(event.wait(), 10)
        for n in range(events):
            body, head = call(n, "change")
            source = config.urls[(n + 1) % len(config.urls)]
            start = time.perf_counter()
            reply = await http.post(source, content=body, headers=head)
            assert reply.status_code == 200
            for queue in received:
                config.fanout.append(await asyncio.wait_for(queue.get(), 10) - start)
        for task in listeners:
            task.cancel()
        await asyncio.gather(*listeners, return_exceptions=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_redis(directory: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    wait_port(port, proc)
    return proc, f"redis://127.0.0.1:{port}/0"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000, help="tools/call requests per configuration per round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--events", type=int, default=40, help="changes raised per configuration per round")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    directory = tempfile.mkdtemp(prefix="bench-redis-")
    redis_proc, url = start_redis(directory)
    configs: list[Config] = []
    try:
        configs = [Config("memory x1", 1, None)] + [Config(f"redis x{n}", n, url) for n in (1, 2, 4)]
        for config in configs:  # warm-up
            asyncio.run(round_trips(config, 50, 4))
            asyncio.run(fan_out(config, 3))
            for samples in (config.latency, config.rate, config.fanout):
                samples.clear()
        for _ in range(args.rounds):
            for config in configs:
                asyncio.run(round_trips(config, args.calls, args.clients))
                asyncio.run(fan_out(config, args.events))
    finally:
        for config in configs:
            config.stop()
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(directory, ignore_errors=True)
    base = statistics.median(configs[0].rate)
    rows = []
    work = f"{args.rounds} rounds of {args.calls} calls ({args.clients} clients) and {args.events} changes"
    print(f"{os.cpu_count()} CPUs; {work} per configuration")
    print()
    print("| configuration | tools/call req/s | vs memory x1 | p50 ms | p99 ms | fan-out p50 ms | fan-out p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for config in configs:
        rate = statistics.median(config.rate)
        row = {
            "configuration": config.name,
            "rate": rate,
            "ratio": rate / base,
            "p50_ms": percentile(config.latency, 0.5) * 1000,
            "p99_ms": percentile(config.latency, 0.99) * 1000,
            "fanout_p50_ms": percentile(config.fanout, 0.5) * 1000,
            "fanout_p99_ms": percentile(config.fanout, 0.99) * 1000,
        }
        rows.append(row)
        print(
            f"| {row['configuration']} | {rate:.0f} | {row['ratio']:.2f} | {row['p50_ms']:.2f} | {row['p99_ms']:.2f}"
            f" | {row['fanout_p50_ms']:.2f} | {row['fanout_p99_ms']:.2f} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
