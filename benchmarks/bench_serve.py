"""Serving figures of issue 15: cold start, idle memory, pipelined throughput and CPU per call.

Three servers with one ``echo(text)`` tool, each started fresh for every sample:

* **ours**: a ``mcpgen.v2026_07_28.server.Server`` subclass (the runtime distribution's
  generated 2026-07-28 package), driven in the modern era (``_meta`` on every request) and in
  the legacy era (``initialize`` at 2025-11-25, then requests on that session);
* **official**: the official ``mcp`` 2.3.0 ``MCPServer`` with the same tool, both eras;
* **floor**: a bare asyncio JSON-RPC loop with ``orjson`` and no validation (answers inline,
  one line in, one line out); over HTTP a bare ASGI app under the same uvicorn settings as ours
  (``log_level="warning"``, ``lifespan="off"``, uvicorn's defaults otherwise: uvloop, httptools).

Each round starts every variant once, in turn (interleaved), and measures in that process:

* cold start, stdio: spawn to the first answered ``tools/call`` (legacy: ``initialize``
  answered, ``notifications/initialized``, then the call);
* idle RSS: ``VmRSS`` from ``/proc`` right after that first answer;
* stdio throughput with 1 request in flight (sequential round trips) and with 32 in flight
  (a pipelined client keeps 32 requests outstanding), each for ``--seconds``;
* server CPU per call with 32 in flight: the server's CPU time (``/proc/PID/task/*/schedstat``,
  every thread, nanoseconds) over the calls answered;
* exit: from closing the server's stdin (after those loops) until the process has ended.

then, in separate fresh processes, cold start over Streamable HTTP (spawn, connect as soon as
the port accepts, first ``tools/call`` answered) and the import of a generated revision
package for serving (``import mcpgen.vYYYY_MM_DD.server`` in a fresh interpreter: alone, and
with pydantic and asyncio imported first, which is the package's own cost).

Figures are medians over the rounds; ratios are taken within each round (same load) and their
median printed with the range. The client is plain Python on raw pipes and sockets, the same
for every server. Children run with bytecode caching on (a warm-up start writes the ``.pyc``
files first), as an installed package would.

Usage::

    python benchmarks/bench_serve.py [--rounds 5] [--seconds 1.0] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from _peers import HttpPeer, free_port, stop

ROOT = Path(__file__).resolve().parents[1]
LEGACY, MODERN = "2025-11-25", "2026-07-28"
ERAS = {"legacy": LEGACY, "modern": MODERN}
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
INFO = {"name": "bench", "version": "1"}
IN_FLIGHT = 32
HTTP_CONNECTIONS = 8
HTTP_HEADERS = "accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n"

OURS = textwrap.dedent(
    """
    import sys

    from mcpgen.v2026_07_28 import models as m
    from mcpgen.v2026_07_28 import server as s


    class Server(s.Server):
        name = "bench"

        async def call_tool(self, params, ctx):
            return s.CallToolResult(content=[m.TextContent(type="text", text=params.arguments["text"])])


    if sys.argv[1] == "stdio":
        Server().run_stdio()
    else:
        Server().run_http("127.0.0.1", int(sys.argv[2]))
    """
)

OFFICIAL = textwrap.dedent(
    """
    import sys

    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("bench")


    @mcp.tool()
    def echo(text: str) -> str:
        \"\"\"Echo the text.\"\"\"
        return text


    if sys.argv[1] == "stdio":
        mcp.run()
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), json_response=True)
    """
)

FLOOR = textwrap.dedent(
    """
    import asyncio
    import sys

    import orjson

    INFO = {"name": "floor", "version": "1"}
    INIT = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": INFO}


    def answer(msg):
        method = msg["method"]
        if method == "tools/call":
            result = {"content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]}
            if "_meta" in msg["params"]:
                result["resultType"] = "complete"
        elif method == "initialize":
            result = INIT
        else:
            result = {}
        return orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})


    async def stdio():
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
        while line := await reader.readline():
            msg = orjson.loads(line)
            if "id" in msg:
                transport.write(answer(msg) + b"\\n")


    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        msg = orjson.loads(body)
        if "id" not in msg:
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        out = answer(msg)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": out})


    if sys.argv[1] == "stdio":
        asyncio.run(stdio())
    else:
        import uvicorn

        uvicorn.run(
            app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", lifespan="off",
            access_log=False, proxy_headers=False,
        )
    """
)

SERVERS = {"ours": OURS, "official": OFFICIAL, "floor": FLOOR}


def child_env() -> dict[str, str]:
    """The environment of every child: bytecode caching on (as installed packages have it)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("PYTHONPATH", None)
    return env


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# -- messages ----------------------------------------------------------------------------------


def initialize(rid: int = 0) -> dict[str, Any]:
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": INFO}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(rid: int, era: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": f"hello {rid}"}}
    if era == "modern":
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def check_answer(msg: dict[str, Any], rid: int | None = None) -> None:
    if "result" not in msg or (rid is not None and msg.get("id") != rid):
        raise RuntimeError(f"unexpected answer: {str(msg)[:300]}")


# -- CPU and memory of a child, from /proc -------------------------------------------------------


def cpu_ns(pid: int) -> int:
    """CPU time of every thread of ``pid``, nanoseconds (schedstat: on CPU, per task)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


# -- stdio -------------------------------------------------------------------------------------


class Stdio:
    """A server child over pipes, with a line reader on the raw file descriptor."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=child_env()
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.win, self.rout = self.proc.stdin.fileno(), self.proc.stdout.fileno()
        self.buffer = b""

    def send(self, *messages: dict[str, Any]) -> None:
        self.write(b"".join(orjson.dumps(m) + b"\n" for m in messages))

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.win, view) :]

    def lines(self) -> list[bytes]:
        """The complete lines available after one read (blocking until some arrive)."""
        data = os.read(self.rout, 1 << 20)
        if not data:
            raise ConnectionError("the server closed its output")
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        return lines

    def answer(self, rid: int) -> dict[str, Any]:
        while True:
            for line in self.lines():
                msg = orjson.loads(line)
                if msg.get("id") == rid:
                    check_answer(msg)
                    return dict(msg)

    def answer_line(self) -> bytes:
        """The next line with an ``id`` (sequential client: exactly one request outstanding)."""
        while True:
            if b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
            else:
                data = os.read(self.rout, 1 << 16)
                if not data:
                    raise ConnectionError("the server closed its output")
                self.buffer += data
                continue
            if b'"id"' in line:
                return line

    def close(self) -> float:
        """Close the server's input; the seconds from then until the process has exited."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        closed = time.perf_counter()
        self.proc.stdin.close()
        stop(self.proc)
        ended = time.perf_counter() - closed
        self.proc.stdout.close()
        return ended


def first_call(peer: Stdio, era: str) -> float:
    """Seconds from spawn to the first answered tools/call (legacy: after initialize)."""
    if era == "legacy":
        peer.send(initialize())
        peer.answer(0)
        peer.send(INITIALIZED, call(1, era))
    else:
        peer.send(call(1, era))
    peer.answer(1)
    return time.perf_counter() - peer.started


def sequential(peer: Stdio, era: str, start: int, seconds: float) -> tuple[float, int]:
    """Round trips per second with one request in flight, for about ``seconds``."""
    lines = [orjson.dumps(call(start + i, era)) + b"\n" for i in range(200_000)]
    began = time.perf_counter()
    deadline = began + seconds
    n = 0
    while True:
        peer.write(lines[n])
        msg = orjson.loads(peer.answer_line())
        check_answer(msg, start + n)
        n += 1
        if n % 16 == 0 and time.perf_counter() > deadline:
            break
    return n / (time.perf_counter() - began), start + n


def pipelined(peer: Stdio, era: str, start: int, seconds: float) -> tuple[float, float, int]:
    """Calls per second and server CPU microseconds per call with ``IN_FLIGHT`` requests outstanding."""
    lines = [orjson.dumps(call(start + i, era)) + b"\n" for i in range(400_000)]
    cpu0 = cpu_ns(peer.proc.pid)
    began = time.perf_counter()
    deadline = began + seconds
    sent = IN_FLIGHT
    peer.write(b"".join(lines[:sent]))
    done = 0
    while done < sent:
        answered = 0
        for line in peer.lines():
            msg = orjson.loads(line)
            if "id" in msg:
                check_answer(msg)
                answered += 1
        done += answered
        if answered and time.perf_counter() < deadline:
            peer.write(b"".join(lines[sent : sent + answered]))
            sent += answered
    elapsed = time.perf_counter() - began
    cpu = cpu_ns(peer.proc.pid) - cpu0
    return done / elapsed, cpu / done / 1000, start + done


# -- HTTP --------------------------------------------------------------------------------------


def http_first_call(command: list[str], cwd: Path, era: str) -> tuple[HttpPeer, float]:
    """A fresh HTTP server child and the seconds from its spawn to the first answered tools/call
    (legacy: after initialize); the child keeps running for the throughput loops."""
    port = free_port()
    peer = HttpPeer([*command, "http", str(port)], cwd, port, env=child_env())
    try:
        if era == "legacy":
            check_answer(peer.rpc(initialize()) or {})
            peer.rpc(INITIALIZED)
        check_answer(peer.rpc(call(1, era)) or {}, 1)
        return peer, time.perf_counter() - peer.started
    except BaseException:
        peer.close()
        raise


class HttpConn:
    """One keep-alive HTTP/1.1 connection with one request outstanding at a time (a raw socket,
    ``orjson``): the headers the transport asks for (modern: revision, method and tool name; legacy:
    its own session, initialized on this connection, and its revision)."""

    def __init__(self, port: int, era: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.era, self.buffer, self.rid = era, b"", 0
        self.head = f"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n{HTTP_HEADERS}"
        if era == "modern":
            self.head += f"mcp-protocol-version: {MODERN}\r\nmcp-method: tools/call\r\nmcp-name: echo\r\n"
        else:
            headers, data = self.exchange(orjson.dumps(initialize()))
            check_answer(HttpPeer.answer(headers, data, 0))
            if "mcp-session-id" in headers:  # the floor keeps no sessions
                self.head += f"mcp-session-id: {headers['mcp-session-id']}\r\n"
            self.head += f"mcp-protocol-version: {LEGACY}\r\n"
            self.exchange(orjson.dumps(INITIALIZED))

    def send(self, rid: int) -> None:
        body = orjson.dumps(call(rid, self.era))
        self.rid = rid
        self.sock.sendall(f"{self.head}content-length: {len(body)}\r\n\r\n".encode() + body)

    def exchange(self, body: bytes) -> tuple[dict[str, str], bytes]:
        """One blocking round trip (set-up only)."""
        self.sock.sendall(f"{self.head}content-length: {len(body)}\r\n\r\n".encode() + body)
        while (got := self.response()) is None:
            self.receive()
        return got

    def receive(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def response(self) -> tuple[dict[str, str], bytes] | None:
        """The next complete response in the buffer (its headers by lower-case name, its body)."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        lines = self.buffer[:end].decode("latin-1").split("\r\n")
        if " 200 " not in lines[0] and " 202 " not in lines[0]:
            raise RuntimeError(f"unexpected response: {self.buffer[:300]!r}")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            total = end + 4 + int(headers["content-length"])
            if len(self.buffer) < total:
                return None
            body, self.buffer = self.buffer[end + 4 : total], self.buffer[total:]
            return headers, body
        if headers.get("transfer-encoding") != "chunked":
            raise RuntimeError(f"a response without a length: {lines}")
        chunks, at = [], end + 4
        while True:  # chunked: size line, data, CRLF; a zero size and a CRLF end the body
            eol = self.buffer.find(b"\r\n", at)
            if eol < 0:
                return None
            size = int(self.buffer[at:eol], 16)
            if len(self.buffer) < eol + 2 + size + 2:
                return None
            chunks.append(self.buffer[eol + 2 : eol + 2 + size])
            at = eol + 2 + size + 2
            if size == 0:
                self.buffer = self.buffer[at:]
                return headers, b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


def http_load(pid: int, conns: list[HttpConn], start: int, seconds: float) -> tuple[float, float, int]:
    """Calls per second and server CPU microseconds per call, each connection keeping one
    ``tools/call`` outstanding for about ``seconds``."""
    selector = selectors.DefaultSelector()
    for conn in conns:
        selector.register(conn.sock, selectors.EVENT_READ, conn)
    try:
        cpu0 = cpu_ns(pid)
        began = time.perf_counter()
        deadline = began + seconds
        rid = start
        for conn in conns:
            conn.send(rid)
            rid += 1
        outstanding, done = len(conns), 0
        while outstanding:
            for key, _ in selector.select():
                conn = key.data
                conn.receive()
                while (got := conn.response()) is not None:
                    check_answer(HttpPeer.answer(got[0], got[1], conn.rid), conn.rid)
                    done += 1
                    outstanding -= 1
                    if time.perf_counter() < deadline:
                        conn.send(rid)
                        rid += 1
                        outstanding += 1
        elapsed = time.perf_counter() - began
        cpu = cpu_ns(pid) - cpu0
    finally:
        selector.close()
    return done / elapsed, cpu / done / 1000, rid


def http_figures(peer: HttpPeer, era: str, seconds: float) -> dict[str, float]:
    """Throughput and server CPU per call with 1 and with ``HTTP_CONNECTIONS`` connections."""
    conns = [HttpConn(peer.port, era) for _ in range(HTTP_CONNECTIONS)]
    try:
        _, _, nxt = http_load(peer.proc.pid, conns[:1], 2, seconds / 5)  # warm-up
        rate1, cpu1, nxt = http_load(peer.proc.pid, conns[:1], nxt, seconds)
        rate_n, cpu_n, nxt = http_load(peer.proc.pid, conns, nxt, seconds)
    finally:
        for conn in conns:
            conn.close()
    return {"http1": rate1, "httpcpu1": cpu1, "httpn": rate_n, "httpcpun": cpu_n}


# -- import of a revision package --------------------------------------------------------------

IMPORT_PROBE = textwrap.dedent(
    """
    import sys, time
    for name in sys.argv[2:]:
        __import__(name)
    wall, cpu = time.perf_counter(), time.process_time()
    __import__(sys.argv[1])
    print(time.perf_counter() - wall, time.process_time() - cpu)
    """
)


def import_time(module: str, first: Iterable[str] = ()) -> tuple[float, float]:
    command = [sys.executable, "-c", IMPORT_PROBE, module, *first]
    out = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env()).stdout.split()
    return float(out[0]), float(out[1])


# -- the run -----------------------------------------------------------------------------------


@dataclass
class Samples:
    values: dict[str, list[float]] = field(default_factory=dict)

    def add(self, key: str, value: float) -> None:
        self.values.setdefault(key, []).append(value)

    def median(self, key: str) -> float | None:
        got = self.values.get(key)
        return statistics.median(got) if got else None

    def ratio(self, num: str, den: str) -> tuple[float, float, float] | None:
        """Median, min and max of the per-round ratios ``num / den``."""
        a, b = self.values.get(num), self.values.get(den)
        if not a or not b:
            return None
        ratios = [x / y for x, y in zip(a, b, strict=False)]
        return statistics.median(ratios), min(ratios), max(ratios)


VARIANTS = [(who, era) for who in ("ours", "official", "floor") for era in ("legacy", "modern")]
IMPORTS = {
    "2026-07-28": "mcpgen.v2026_07_28.server",
    "2025-11-25": "mcpgen.v2025_11_25.server",
}


def run(rounds: int, seconds: float, progress: Callable[[str], None]) -> tuple[Samples, list[float]]:
    samples = Samples()
    loads = [loadavg()]
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        cwd = Path(tmp)
        commands = {}
        for who, source in SERVERS.items():
            (cwd / f"{who}_server.py").write_text(source)
            commands[who] = [sys.executable, str(cwd / f"{who}_server.py")]
        for who, era in VARIANTS:  # warm-up: every server answers once, the .pyc files get written
            peer = Stdio([*commands[who], "stdio"], cwd)
            first_call(peer, era)
            peer.close()
        for module in IMPORTS.values():
            import_time(module)
        for r in range(rounds):
            for who, era in VARIANTS:
                key = f"{who}/{era}"
                peer = Stdio([*commands[who], "stdio"], cwd)
                try:
                    samples.add(f"start/stdio/{key}", first_call(peer, era))
                    samples.add(f"rss/{key}", rss_mib(peer.proc.pid))
                    rate, nxt = sequential(peer, era, 2, seconds / 5)  # warm-up
                    rate, nxt = sequential(peer, era, nxt, seconds)
                    samples.add(f"seq/{key}", rate)
                    rate, cpu, nxt = pipelined(peer, era, nxt, seconds)
                    samples.add(f"pipe/{key}", rate)
                    samples.add(f"cpu/{key}", cpu)
                finally:
                    samples.add(f"exit/{key}", peer.close())
                http_peer, seconds_to_call = http_first_call(commands[who], cwd, era)
                try:
                    samples.add(f"start/http/{key}", seconds_to_call)
                    for name, value in http_figures(http_peer, era, seconds).items():
                        samples.add(f"{name}/{key}", value)
                finally:
                    http_peer.close()
            for version, module in IMPORTS.items():
                wall, cpu = import_time(module)
                samples.add(f"import/total/{version}", wall)
                samples.add(f"import/total-cpu/{version}", cpu)
                wall, cpu = import_time(module, ("asyncio", "pydantic.main", "pydantic.fields", "pydantic.types"))
                samples.add(f"import/own/{version}", wall)
                samples.add(f"import/own-cpu/{version}", cpu)
            loads.append(loadavg())
            progress(f"round {r + 1}/{rounds} done, load average {loads[-1]:.1f}")
    return samples, loads


# -- report ------------------------------------------------------------------------------------


def fmt(value: float | None, spec: str, scale: float = 1.0) -> str:
    return "n/a" if value is None else format(value * scale, spec)


def fmt_ratio(r: tuple[float, float, float] | None) -> str:
    return "n/a" if r is None else f"{r[0]:.2f} ({r[1]:.2f}-{r[2]:.2f})"


def report(s: Samples, rounds: int, seconds: float, loads: list[float]) -> str:
    lines = [
        f"Python {platform.python_version()}, {os.cpu_count()} cores; {rounds} rounds, interleaved, a fresh server "
        f"per round; {seconds:g} s per throughput loop; load average {min(loads):.1f}-{max(loads):.1f} during the run.",
        "Medians over the rounds; ratios are per round (same load), median (min-max).",
        "",
        "| figure | era | ours | official `mcp` 2.3.0 | floor | ours / floor | official / floor |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    rows = [
        ("cold start, stdio, ms", "start/stdio", ",.0f", 1000, True),
        ("cold start, HTTP, ms", "start/http", ",.0f", 1000, True),
        ("idle RSS, stdio, MiB", "rss", ".1f", 1, True),
        ("stdio, 1 in flight, calls/s", "seq", ",.0f", 1, False),
        (f"stdio, {IN_FLIGHT} in flight, calls/s", "pipe", ",.0f", 1, False),
        (f"server CPU per call, stdio {IN_FLIGHT} in flight, µs", "cpu", ",.1f", 1, True),
        ("stdio, EOF to the process's end, ms", "exit", ",.0f", 1000, True),
        ("HTTP, 1 connection, calls/s", "http1", ",.0f", 1, False),
        (f"HTTP, {HTTP_CONNECTIONS} connections, calls/s", "httpn", ",.0f", 1, False),
        ("server CPU per call, HTTP 1 connection, µs", "httpcpu1", ",.1f", 1, True),
        (f"server CPU per call, HTTP {HTTP_CONNECTIONS} connections, µs", "httpcpun", ",.1f", 1, True),
    ]
    for title, key, spec, scale, _ in rows:
        for era in ("legacy", "modern"):
            ours, official, floor = (f"{key}/{who}/{era}" for who in ("ours", "official", "floor"))
            lines.append(
                f"| {title} | {era} | {fmt(s.median(ours), spec, scale)} | {fmt(s.median(official), spec, scale)} "
                f"| {fmt(s.median(floor), spec, scale)} | {fmt_ratio(s.ratio(ours, floor))} "
                f"| {fmt_ratio(s.ratio(official, floor))} |"
            )
    lines += [
        "",
        "| import for serving (fresh interpreter) | total ms (CPU ms) "
        "| own ms, pydantic and asyncio imported first (CPU ms) |",
        "|---|---:|---:|",
    ]
    for version, module in IMPORTS.items():
        lines.append(
            f"| `import {module}` | {fmt(s.median(f'import/total/{version}'), '.0f', 1000)} "
            f"({fmt(s.median(f'import/total-cpu/{version}'), '.0f', 1000)}) "
            f"| {fmt(s.median(f'import/own/{version}'), '.0f', 1000)} "
            f"({fmt(s.median(f'import/own-cpu/{version}'), '.0f', 1000)}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="length of each throughput loop")
    parser.add_argument("--json", type=Path, help="write the raw samples here")
    args = parser.parse_args(argv)

    def progress(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    samples, loads = run(args.rounds, args.seconds, progress)
    print(report(samples, args.rounds, args.seconds, loads))
    if args.json:
        args.json.write_text(json.dumps({"samples": samples.values, "loadavg": loads}, indent=1) + "\n")


if __name__ == "__main__":
    main()
