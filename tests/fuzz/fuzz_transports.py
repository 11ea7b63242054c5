"""Fuzzing the server's transports end to end: whole HTTP requests over sockets, and stdio lines.

HTTP: the everything server under uvicorn (real sockets on loopback, the runner's limits with
short timeouts). Each input is one raw HTTP/1.1 exchange on a fresh connection, built from a
real message (the codec fuzzer's seeds and mutants, plus well-formed modern and legacy requests
with their headers) and then mutated at every level: the method, the request target, the HTTP
version, the headers (dropped, repeated with the same or another value, renamed in other case,
values non-ASCII, control characters, huge, base64 sentinels, wrong session ids and versions),
the framing (content-length short, long, repeated, non-numeric; chunked bodies, good and bad;
bytes flipped in the head) and the body.

stdio: the everything server as a child process, fed mutated lines (both eras: a legacy episode
starts with ``initialize`` declaring random capabilities, and the fuzzer answers the server's
own requests with mutated responses, errors and garbage), random bytes, batches, long lines.

A finding is: a 5xx status; a JSON body, SSE event or stdout line that is not strict JSON or
not a valid JSON-RPC message (an error needs an integer code and a string message); a server
that died, stopped answering (a liveness request after every batch of inputs) or did not exit
after EOF; a traceback on stderr other than an author's handler failing. Memory is the server's
RSS before and after.

Long run (figures in tests/fuzz/README.md):

    .venv/bin/python -m tests.fuzz.fuzz_transports --seconds 600 --seed 1
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import copy
import json
import random
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fuzz.fuzz_codec import mutant, mutate_bytes, mutate_json, nasty, seeds  # noqa: E402
from tests.hostile.probe import LEGACY, META, HttpServer, StdioServer, initialize, strict_json  # noqa: E402

HTTP_LIMITS = {"header_timeout": 1.0, "body_timeout": 1.0, "keep_alive_timeout": 1.0, "max_header_bytes": 32768}
READ_TIMEOUT = 5.0  # seconds to wait for a response (streams left open are closed after it)
TOOLS = ["test_simple_text", "test_custom_headers", "test_elicitation", "test_sampling", "nope", "test_error_handling"]
HEADER_VALUES: list[str] = [
    "",
    " ",
    "2026-07-28",
    "2025-11-25",
    "2025-03-26",
    "tools/call",
    "=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=",
    "=?base64?!!!?=",
    "=?base64??=",
    "caf\u00e9",
    "\u00ff" * 40,
    "\x7f",
    "\x01\x02",
    "a" * 5000,
    "a" * 40000,
    "1e999",
    "-0",
    "\u0661\u0662",
    "null",
    "0" * 32,
]
METHODS = ["POST"] * 12 + [
    "GET",
    "DELETE",
    "PUT",
    "OPTIONS",
    "HEAD",
    "PATCH",
    "post",
    "CONNECT",
    "TRACE",
    "M\x00X",
    "P OST",
]
TARGETS = ["/mcp"] * 12 + [
    "/mcp/",
    "/",
    "/mcp?x=1",
    "/MCP",
    "/mcp%00",
    "*",
    "/" + "m" * 3000,
    "http://127.0.0.1/mcp",
    "/mcp#f",
]
VERSIONS = ["HTTP/1.1"] * 12 + ["HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1x", "", "http/1.1"]


@dataclass
class Figures:
    tried: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    closed: int = 0  # the server closed without a response (malformed framing)
    streams: int = 0  # an SSE stream still open when the client gave up reading (listen)
    stdio_lines: int = 0
    stdio_replies: int = 0
    handler_failures: int = 0  # an author's handler raised: -32603, traceback on stderr
    findings: list[str] = field(default_factory=list)
    rss_kib: list[tuple[str, int, int]] = field(default_factory=list)

    def summary(self) -> str:
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))
        fives = sum(n for code, n in self.statuses.items() if code >= 500)
        memory = ""
        for name in ("HTTP", "stdio"):
            runs = [(a, b) for n, a, b in self.rss_kib if n == name]
            if runs:
                grown = max(b - a for a, b in runs) / 1024
                start = runs[0][0] / 1024
                memory += f"; {name}: {len(runs)} server(s), RSS {start:.1f} MiB at start, most growth {grown:+.1f} MiB"
        return (
            f"HTTP requests: {self.tried} (statuses {codes}; closed without a response: {self.closed}; "
            f"streams left open: {self.streams}); 5xx: {fives}; stdio lines: {self.stdio_lines}, "
            f"replies: {self.stdio_replies}; handler failures: {self.handler_failures}; "
            f"findings: {len(self.findings)}{memory}"
        )


# -- HTTP -------------------------------------------------------------------------------------


def mcp_headers(body: Any) -> dict[str, str]:
    """The headers a conforming client sends with ``body`` (a modern request), as far as it has them."""
    headers: dict[str, str] = {}
    if not isinstance(body, dict):
        return headers
    params = body.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    if isinstance(version, str):
        headers["mcp-protocol-version"] = version
    if isinstance(body.get("method"), str):
        headers["mcp-method"] = body["method"]
    if isinstance(params, dict):
        for key in ("name", "uri"):
            if isinstance(params.get(key), str):
                value = params[key]
                safe = value.isascii() and value.isprintable() and value == value.strip()
                headers["mcp-name"] = (
                    value
                    if safe
                    else "=?base64?" + base64.b64encode(value.encode("utf-8", "surrogatepass")).decode() + "?="
                )
        args = params.get("arguments")
        if isinstance(args, dict):
            for arg, suffix in (("region", "Region"), ("priority", "Priority")):
                if arg in args:
                    headers["mcp-param-" + suffix.lower()] = json.dumps(args[arg]).strip('"')
    return headers


def well_formed(rng: random.Random, sessions: list[str]) -> tuple[Any, dict[str, str]]:
    """A valid message and its headers: a modern request, or a legacy session's request."""
    if rng.random() < 0.6:
        method = rng.choice(["tools/call", "tools/list", "prompts/get", "resources/read", "server/discover"])
        params: dict[str, Any] = {"_meta": copy.deepcopy(META)}
        if method == "tools/call":
            params |= {"name": rng.choice(TOOLS), "arguments": {"region": "us-west1", "priority": rng.randrange(9)}}
        elif method == "prompts/get":
            params["name"] = rng.choice(["test_simple_prompt", "t\u00e9st"])
        elif method == "resources/read":
            params["uri"] = rng.choice(["test://static-text", "test://template/1/data"])
        body = {"jsonrpc": "2.0", "id": rng.randrange(1000), "method": method, "params": params}
        return body, mcp_headers(body)
    method = rng.choice(["ping", "tools/list", "tools/call", "logging/setLevel", "resources/subscribe"])
    legacy: dict[str, Any] = {"jsonrpc": "2.0", "id": rng.randrange(1000), "method": method}
    if method == "tools/call":
        legacy["params"] = {"name": rng.choice(TOOLS), "arguments": {}}
    headers = {"mcp-session-id": rng.choice(sessions), "mcp-protocol-version": LEGACY}
    if rng.random() < 0.2:
        legacy = initialize(rng.randrange(100), rng.choice(["2025-11-25", "2025-03-26", "2099-01-01"]))
        headers = {}
    return legacy, headers


def http_input(rng: random.Random, corpus: list[bytes], sessions: list[str]) -> tuple[bytes, bool]:
    """One raw HTTP request, and whether its framing is complete (a response is owed)."""
    value, headers = well_formed(rng, sessions)
    roll = rng.random()
    if roll < 0.35:
        body = json.dumps(value).encode()
    elif roll < 0.65:
        for _ in range(rng.randrange(1, 3)):
            value = mutate_json(rng, value)
        body = json.dumps(value).encode().replace(b'"\\u0001deep\\u0001"', b"[" * 100 + b"]" * 100)
        headers = mcp_headers(value) | {k: v for k, v in headers.items() if rng.random() < 0.5}
    elif roll < 0.9:
        body = mutant(rng, corpus)
    else:
        body = b""
    items: list[tuple[str, str]] = [("host", "127.0.0.1"), ("content-type", "application/json")]
    items.append(("accept", "application/json, text/event-stream"))
    items += list(headers.items())
    for _ in range(rng.choice([0, 0, 1, 2, 4])):  # header mutations
        op = rng.randrange(7)
        if op == 0 and items:
            del items[rng.randrange(len(items))]
        elif op == 1 and items:  # repeated: same value or another
            name, val = rng.choice(items)
            items.insert(
                rng.randrange(len(items) + 1), (name, val if rng.random() < 0.5 else rng.choice(HEADER_VALUES))
            )
        elif op == 2 and items:
            at = rng.randrange(len(items))
            items[at] = (items[at][0], rng.choice(HEADER_VALUES))
        elif op == 3 and items:
            at = rng.randrange(len(items))
            items[at] = (items[at][0].upper(), items[at][1])
        elif op == 4:
            name = rng.choice(["mcp-method", "mcp-name", "mcp-param-region", "mcp-param-priority", "mcp-session-id"])
            items.append((name, rng.choice(HEADER_VALUES)))
        elif op == 5:
            items.append(("origin", rng.choice(["http://evil.example", "null", "http://localhost:1", "file://"])))
        else:
            items.append(("host", rng.choice(["evil.example", "127.0.0.1:1", "[::1]", "", "a" * 300])))
    complete = True
    framing = rng.random()
    if framing < 0.8:
        items.append(("content-length", str(len(body))))
        payload = body
    elif framing < 0.88:  # chunked, well or badly framed
        items.append(("transfer-encoding", "chunked"))
        cut = rng.randrange(len(body) + 1)
        payload = (
            b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:cut], body[cut:]) if part) + b"0\r\n\r\n"
        )
        if rng.random() < 0.3:
            payload = mutate_bytes(rng, payload)
            complete = False
    elif framing < 0.93:  # short: the rest reads as another request
        items.append(("content-length", str(max(0, len(body) - rng.randrange(1, 20)))))
        payload = body
    elif framing < 0.96:  # long: the server waits for the rest until body_timeout
        items.append(("content-length", str(len(body) + rng.randrange(1, 100))))
        payload = body
        complete = False
    else:
        items.append(("content-length", rng.choice(["-1", "x", "1e3", " 5", "99999999999999999999", "\u00b2"])))
        items.append(("content-length", str(len(body))))
        payload = body
    items.append(("connection", "close"))
    method = rng.choice(METHODS) if rng.random() < 0.1 else "POST"
    target = rng.choice(TARGETS) if rng.random() < 0.1 else "/mcp"
    version = rng.choice(VERSIONS) if rng.random() < 0.05 else "HTTP/1.1"
    head = f"{method} {target} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in items) + "\r\n"
    raw = head.encode("utf-8" if rng.random() < 0.3 else "latin-1", "replace") + payload
    if rng.random() < 0.05:
        raw = mutate_bytes(rng, raw[: len(head)]) + payload
        complete = False
    return raw, complete


async def exchange(port: int, raw: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        data = b""
        try:
            async with asyncio.timeout(READ_TIMEOUT):
                while chunk := await reader.read(65536):
                    data += chunk
        except TimeoutError:
            pass
        return data
    except ConnectionError:
        return b""
    finally:
        writer.close()


def check_http(raw: bytes, data: bytes, complete: bool, figures: Figures) -> None:
    if not data:
        figures.closed += 1
        return
    head, _, body = data.partition(b"\r\n\r\n")
    try:
        status = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        figures.findings.append(f"not an HTTP response: {data[:200]!r} to {raw[:300]!r}")
        return
    figures.statuses[status] += 1
    if status >= 500:
        figures.findings.append(f"{status}: {data[:300]!r} to {raw[:300]!r}")
    headers = head.lower()
    try:
        if b"content-type: application/json" in headers and b"content-length" in headers:
            strict_json(body)
        elif b"content-type: text/event-stream" in headers:
            text = body.decode("latin-1")
            events = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
            for line in events:
                strict_json(line)
            if not data.endswith(b"0\r\n\r\n"):
                figures.streams += 1
    except (AssertionError, ValueError) as exc:
        figures.findings.append(f"invalid JSON-RPC ({exc}): {body[:300]!r} to {raw[:300]!r}")


async def fuzz_http(rng: random.Random, rounds: int | None, seconds: float | None, figures: Figures) -> None:
    corpus = seeds()
    with HttpServer(HTTP_LIMITS) as server:
        sessions = [server.legacy_session(version) for version in ("2025-11-25", "2025-03-26", "2025-06-18")]
        sessions.append("no-such-session")
        before = server.rss_kib()
        deadline = time.monotonic() + seconds if seconds else None
        done = 0

        async def worker() -> None:
            nonlocal done
            while (rounds is None or done < rounds) and (deadline is None or time.monotonic() < deadline):
                done += 1
                raw, complete = http_input(rng, corpus, sessions)
                data = await exchange(server.port, raw)
                figures.tried += 1
                check_http(raw, data, complete, figures)
                if figures.tried % 200 == 0:
                    await asyncio.to_thread(alive_http, server, figures)

        await asyncio.gather(*(worker() for _ in range(8)))
        await asyncio.to_thread(alive_http, server, figures)
        figures.rss_kib.append(("HTTP", before, server.rss_kib()))
        assert server.proc is not None
        if server.proc.poll() is not None:
            figures.findings.append(f"the HTTP server exited with {server.proc.returncode}")
        log = server.stderr().decode(errors="replace")
        figures.handler_failures += len(TOOL_RAISED.findall(log))
        stray = next((m.start() for m in STRAY.finditer(log) if not TOOL_RAISED.match(log, m.start())), -1)
        if stray >= 0:  # the traceback itself, not the tail of the log (uvicorn warns per bad request)
            figures.findings.append(f"a traceback in the HTTP server's log: {log[stray : stray + 6000]}")


# the App logs a tool's own exception with its traceback (the call answers isError: true): expected,
# counted as a handler failure; any other traceback (uvicorn's "Exception in ASGI application" is
# one) is a finding
TOOL_RAISED = re.compile(r"mcp server: the tool '[^'\n]*' raised:\nTraceback")
STRAY = re.compile(
    r"^(?:mcp server: the tool '[^'\n]*' raised:\n)?Traceback|Exception in ASGI application", re.MULTILINE
)


def alive_http(server: HttpServer, figures: Figures) -> None:
    try:
        server.alive()
    except Exception as exc:
        figures.findings.append(f"the HTTP server stopped answering: {exc!r}")


# -- stdio ------------------------------------------------------------------------------------


CAPABILITIES = [{}, {"elicitation": {}}, {"sampling": {}}, {"roots": {}}, {"elicitation": {"form": {}}, "sampling": {}}]
ANSWERS: list[Any] = [
    {"action": "accept", "content": {"username": "u", "email": "e"}},
    {"role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m"},
    {"roots": [{"uri": "file:///x"}]},
    {},
    {"action": "decline"},
]


def stdio_line(rng: random.Random, corpus: list[bytes], asked: list[Any]) -> bytes:
    """One line: a mutant, an answer to one of the server's requests, random bytes, or a batch."""
    roll = rng.random()
    if asked and roll < 0.25:  # answer one of the server's own requests, well or badly
        rid = asked.pop(rng.randrange(len(asked)))
        if rng.random() < 0.3:
            rid = nasty(rng)
        message: Any = {"jsonrpc": "2.0", "id": rid, "result": copy.deepcopy(rng.choice(ANSWERS))}
        if rng.random() < 0.3:
            message = {"jsonrpc": "2.0", "id": rid, "error": {"code": nasty(rng), "message": nasty(rng)}}
        if rng.random() < 0.3:
            message = mutate_json(rng, message)
        if rng.random() < 0.2:
            message = [message]
        return json.dumps(message).encode().replace(b'"\\u0001deep\\u0001"', b"[]").replace(b"\n", b" ")
    if roll < 0.35:
        tool = {"name": rng.choice(TOOLS), "arguments": {"message": "m", "prompt": "p", "region": "r"}}
        request: Any = {"jsonrpc": "2.0", "id": rng.randrange(10**6), "method": "tools/call", "params": tool}
        if rng.random() < 0.5:
            request["params"]["_meta"] = copy.deepcopy(META)
        return json.dumps(rng.choice([request, [request], [request, {"jsonrpc": "2.0", "method": "x"}]])).encode()
    if roll < 0.4:
        return rng.randbytes(rng.randrange(0, 300)).replace(b"\n", b" ")
    if roll < 0.41:
        return b'{"x": "' + b"y" * rng.choice([1 << 10, 1 << 20, 17 << 20]) + b'"}'
    return mutant(rng, corpus).replace(b"\n", b" ")


async def stdio_episode(rng: random.Random, corpus: list[bytes], lines: int, figures: Figures) -> None:
    try:
        await stdio_run(rng, corpus, lines, figures)
    except (AssertionError, ValueError) as exc:  # a line on stdout that is not a valid message
        figures.findings.append(f"invalid stdio output: {exc!r}"[:2000])


async def stdio_run(rng: random.Random, corpus: list[bytes], lines: int, figures: Figures) -> None:
    async with StdioServer() as server:
        assert server.proc is not None
        legacy = rng.random() < 0.5
        if legacy:
            await server.send(initialize(0, rng.choice(["2025-11-25", "2025-03-26"]), rng.choice(CAPABILITIES)))
            await server.response(0)
        else:
            await server.alive("fuzz-start")
        before = rss(server.proc.pid)
        asked: list[Any] = []
        seen = 0
        for _ in range(lines):
            await server.send(stdio_line(rng, corpus, asked))
            figures.stdio_lines += 1
            for message in server.lines[seen:]:
                if isinstance(message, dict) and "method" in message and "id" in message:
                    asked.append(message["id"])
            seen = len(server.lines)
        probe = {"jsonrpc": "2.0", "id": "fuzz-alive", "method": "ping"}
        if not legacy:
            probe = {**probe, "method": "server/discover", "params": {"_meta": META}}
        try:
            await server.send(probe)
            await server.response("fuzz-alive", timeout=30)
        except Exception as exc:
            figures.findings.append(f"the stdio server stopped answering: {exc!r} ({server.stderr[-2000:]!r})")
        figures.rss_kib.append(("stdio", before, rss(server.proc.pid)))
        figures.stdio_replies += len(server.lines)
    if server.proc.returncode != 0:
        figures.findings.append(f"the stdio server exited with {server.proc.returncode}")
    err = server.stderr.decode(errors="replace")
    figures.handler_failures += err.count("handler raised:")
    stray = err.count("Traceback") - err.count("handler raised:")
    if stray > 0 or "never retrieved" in err:
        figures.findings.append(f"a traceback on stderr: {err[-3000:]}")


def rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


async def fuzz_stdio(
    rng: random.Random, episodes: int | None, seconds: float | None, lines: int, figures: Figures
) -> None:
    corpus = seeds()
    deadline = time.monotonic() + seconds if seconds else None
    done = 0
    while (episodes is None or done < episodes) and (deadline is None or time.monotonic() < deadline):
        await stdio_episode(rng, corpus, lines, figures)
        done += 1


def run(
    seed: int,
    *,
    http_rounds: int | None = None,
    stdio_episodes: int | None = None,
    seconds: float | None = None,
    lines: int = 200,
) -> Figures:
    figures = Figures()
    rng = random.Random(seed)
    half = seconds / 2 if seconds else None
    asyncio.run(fuzz_http(rng, http_rounds, half, figures))
    asyncio.run(fuzz_stdio(rng, stdio_episodes, half, lines, figures))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="Fuzz the server's HTTP and stdio transports end to end.")
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget, split between HTTP and stdio")
    parser.add_argument("--lines", type=int, default=2000, help="stdio lines per server process")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.monotonic()
    figures = run(args.seed, seconds=args.seconds, lines=args.lines)
    print(f"{figures.summary()}; {time.monotonic() - started:.0f} s, seed {args.seed}")
    for finding in figures.findings[:20]:
        print(finding)
    return 1 if figures.findings else 0


if __name__ == "__main__":
    raise SystemExit(main())
