"""Where a cold start and a call spend their CPU: the profile behind ``bench_serve.py``'s figures.

Two breakdowns of the 2026-07-28 ``echo`` server of ``bench_serve.py``:

* **cold start, by stage** (CPU ms, ``time.process_time``, and ``VmRSS`` after each stage; medians
  of fresh interpreters):
  interpreter start, ``import asyncio``, pydantic as the runtime imports it, the runtime and
  the revision package, pydantic's plugin discovery (``importlib.metadata`` over every
  installed distribution, at the first model build), and the first ``tools/call`` (the models
  it touches: classes, validators, the call); the floor's stages beside it (``orjson``, one
  parse and one dump);
* **one call, in process** (µs, best of several loops): parsing, the codec's one-pass decode,
  the handler's two model constructions, the result's serialisation with the era's stamps, what
  pydantic alone takes to validate the message and to serialise the result (the part of a call
  no server validating with these models avoids),
  ``Router.handle`` end to end, the stdio transport's ``serve`` with 32 requests per read, and
  one POST through the Streamable HTTP ASGI app (no sockets; both eras: the legacy session at
  2025-11-25); against ``orjson.loads`` + ``orjson.dumps`` of the same call.

``--asgi ERA N`` only sends N requests through the ASGI app: run it under valgrind's
cachegrind (``--cache-sim=no``) with N and with 0 for instructions per request.

Usage::

    python benchmarks/profile_serve.py [--runs 9] [--asgi ERA N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import orjson
from _peers import asgi_post
from bench_serve import IN_FLIGHT, INITIALIZED, call, initialize

CALL, LEGACY_CALL = call(1, "modern"), call(1, "legacy")  # bench_serve's messages
INITIALIZE = initialize()

RSS = textwrap.dedent(
    """
    def rss():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024
    """
)
OURS_STAGES = textwrap.dedent(
    """
    import time
    c0 = time.process_time()
    r0 = rss()
    import asyncio
    c1 = time.process_time()
    r1 = rss()
    from pydantic import BaseModel, ConfigDict, Field, StrictStr, TypeAdapter  # as the runtime and models do
    c2 = time.process_time()
    r2 = rss()
    from mcpgen.v2026_07_28 import models as m
    from mcpgen.v2026_07_28 import server as s
    from mcpgen._runtime.server.router import Connection


    class Server(s.Server):
        name = "bench"

        async def call_tool(self, params, ctx):
            return s.CallToolResult(content=[m.TextContent(type="text", text=params.arguments["text"])])


    router = Server().router
    c3 = time.process_time()
    r3 = rss()
    from pydantic.plugin._loader import get_plugins

    list(get_plugins())
    c4 = time.process_time()
    r4 = rss()


    async def discard(data):
        pass


    reply = asyncio.run(router.handle(CALL, discard, Connection()))
    assert b'"text":"hello 1"' in reply.body, reply
    c5 = time.process_time()
    r5 = rss()
    print("STAGES", c0, c1 - c0, c2 - c1, c3 - c2, c4 - c3, c5 - c4)
    print("RSS", r0, r1, r2, r3, r4, r5)
    """
)
OURS_NAMES = (
    "interpreter start",
    "import asyncio",
    "import pydantic (what the runtime uses)",
    "import the runtime and the revision package, build the server",
    "pydantic's plugin discovery (first model build)",
    "first tools/call: its models (classes, validators) and the call",
)
FLOOR_STAGES = textwrap.dedent(
    """
    import time
    c0 = time.process_time()
    r0 = rss()
    import asyncio
    c1 = time.process_time()
    r1 = rss()
    import orjson
    c2 = time.process_time()
    r2 = rss()
    msg = orjson.loads(orjson.dumps(CALL))
    text = msg["params"]["arguments"]["text"]
    orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": text}]}})
    c3 = time.process_time()
    r3 = rss()
    print("STAGES", c0, c1 - c0, c2 - c1, c3 - c2)
    print("RSS", r0, r1, r2, r3)
    """
)
FLOOR_NAMES = ("interpreter start", "import asyncio", "import orjson", "first call")


def stages(source: str, runs: int) -> tuple[list[float], list[float]]:
    """Over ``runs`` fresh interpreters (bytecode caching on): the median CPU ms of each stage, and
    the median RSS in MiB after it (``VmRSS``)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = f"CALL = {CALL!r}\n" + RSS + source
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)  # write the .pyc files
    cpu, rss = [], []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True, text=True)
        lines = out.stdout.splitlines()
        cpu.append([float(v) * 1000 for v in next(x for x in lines if x.startswith("STAGES")).split()[1:]])
        rss.append([float(v) for v in next(x for x in lines if x.startswith("RSS")).split()[1:]])
    return (
        [statistics.median(r[i] for r in cpu) for i in range(len(cpu[0]))],
        [statistics.median(r[i] for r in rss) for i in range(len(rss[0]))],
    )


def best(fn: Callable[[], Any], n: int = 5000, loops: int = 5) -> float:
    fn()
    times = []
    for _ in range(loops):
        start = time.process_time()
        for _ in range(n):
            fn()
        times.append((time.process_time() - start) / n)
    return min(times) * 1e6


def echo_server() -> Any:
    """``bench_serve.py``'s 2026-07-28 echo server, built in this process."""
    from mcpgen.v2026_07_28 import models as m
    from mcpgen.v2026_07_28 import server as s

    class Server(s.Server):
        name = "bench"

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            return s.CallToolResult(content=[m.TextContent(type="text", text=params.arguments["text"])])

    return Server()


HTTP_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]


async def asgi_client(app: Any, era: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body of a tools/call in ``era`` (legacy: on a session initialized here)."""
    if era == "modern":
        extra = [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call"), (b"mcp-name", b"echo")]
        return HTTP_HEADERS + extra, orjson.dumps(CALL)
    sent = await asgi_post(app, HTTP_HEADERS, orjson.dumps(INITIALIZE))
    session = dict(sent[0]["headers"])[b"mcp-session-id"]
    headers = [*HTTP_HEADERS, (b"mcp-session-id", session), (b"mcp-protocol-version", b"2025-11-25")]
    await asgi_post(app, headers, orjson.dumps(INITIALIZED))
    return headers, orjson.dumps(LEGACY_CALL)


async def asgi_calls(era: str, n: int, loops: int = 1) -> float:
    """``n`` tools/call requests through the server's ASGI app in process, ``loops`` times: the
    best loop's CPU µs per request."""
    app = echo_server().asgi_app()
    headers, body = await asgi_client(app, era)
    for _ in range(min(n, 200)):
        sent = await asgi_post(app, headers, body)
        assert sent[0]["status"] == 200, sent
    times = []
    for _ in range(loops):
        start = time.process_time()
        for _ in range(n):
            await asgi_post(app, headers, body)
        times.append((time.process_time() - start) / max(n, 1))
    return min(times) * 1e6


def per_call() -> list[tuple[str, float]]:
    from mcpgen._runtime.server.router import Connection
    from mcpgen._runtime.server.transports.stdio import serve
    from mcpgen.v2026_07_28 import models as m
    from mcpgen.v2026_07_28 import server as s
    from pydantic_core import from_json

    router = echo_server().router
    assert router.modern is not None
    codec = router.modern.codec
    line = orjson.dumps(CALL)
    obj = from_json(line)
    result = s.CallToolResult(content=[m.TextContent(type="text", text="hi")])
    conn = Connection()
    spec = codec.methods.request("tools/call")
    assert spec is not None and spec.message is not None
    message_validator = spec.message.__pydantic_validator__
    message_validator.validate_python(obj, by_alias=True, by_name=False)  # built (deferred until now)
    validate_message = spec.message.__pydantic_validator__.validate_python
    to_json = type(result).__pydantic_serializer__.to_json

    async def discard(data: bytes) -> None:
        pass

    async def handle_loop(n: int) -> float:
        for _ in range(200):
            await router.handle(from_json(line), discard, conn)
        times = []
        for _ in range(5):
            start = time.process_time()
            for _ in range(n):
                await router.handle(from_json(line), discard, conn)
            times.append((time.process_time() - start) / n)
        return min(times) * 1e6

    def floor() -> bytes:
        msg = orjson.loads(line)
        text = msg["params"]["arguments"]["text"]
        return orjson.dumps(
            {"jsonrpc": "2.0", "id": msg["id"], "result": {"content": [{"type": "text", "text": text}]}}
        )

    async def stdio_loop(era: str, rounds: int = 150) -> float:
        """``serve`` over an in-memory reader, ``IN_FLIGHT`` requests per read, as a pipelined client."""
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        state: dict[str, Any] = {"got": 0, "want": 0, "waiter": None}

        def write(data: bytes) -> None:
            state["got"] += data.count(b"\n")
            waiter = state["waiter"]
            if waiter is not None and state["got"] >= state["want"] and not waiter.done():
                waiter.set_result(None)

        async def answered(data: bytes, count: int) -> None:
            state["want"] = state["got"] + count
            state["waiter"] = loop.create_future()
            reader.feed_data(data)
            await state["waiter"]

        served = asyncio.create_task(serve(router, reader, write))
        if era == "legacy":
            await answered(orjson.dumps(INITIALIZE) + b"\n" + orjson.dumps(INITIALIZED) + b"\n", 1)
        calls = LEGACY_CALL if era == "legacy" else CALL
        batches = [
            b"".join(orjson.dumps({**calls, "id": k * IN_FLIGHT + i + 1}) + b"\n" for i in range(IN_FLIGHT))
            for k in range(30 + 5 * rounds)
        ]
        times = []
        for k in range(30):
            await answered(batches[k], IN_FLIGHT)
        for r in range(5):
            start = time.process_time()
            for data in batches[30 + r * rounds : 30 + (r + 1) * rounds]:
                await answered(data, IN_FLIGHT)
            times.append((time.process_time() - start) / (rounds * IN_FLIGHT))
        reader.feed_eof()
        await served
        return min(times) * 1e6

    return [
        ("parse the line (pydantic_core.from_json)", best(lambda: from_json(line))),
        ("decode: the codec's one-pass validation (decode_value)", best(lambda: codec.decode_value(obj))),
        (
            "the handler's result: CallToolResult(content=[TextContent(...)])",
            best(lambda: s.CallToolResult(content=[m.TextContent(type="text", text="hi")])),
        ),
        (
            "encode: dumps_result (serialise once, stamp serverInfo)",
            best(lambda: codec.dumps_result(1, "tools/call", result)),
        ),
        (
            "pydantic alone: the request's definition validating the parsed message (envelope included)",
            best(lambda: validate_message(obj, by_alias=True, by_name=False)),
        ),
        (
            "pydantic alone: its serializer writing the result (to_json, wire names, unset left out)",
            best(lambda: to_json(result, by_alias=True, exclude_unset=True)),
        ),
        ("Router.handle end to end, parse included", asyncio.run(handle_loop(5000))),
        (f"stdio serve in process, {IN_FLIGHT} in flight, per call (modern)", asyncio.run(stdio_loop("modern"))),
        (
            f"stdio serve in process, {IN_FLIGHT} in flight, per call (legacy at 2025-11-25)",
            asyncio.run(stdio_loop("legacy")),
        ),
        ("ASGI app in process, one POST per call (modern)", asyncio.run(asgi_calls("modern", 5000, 5))),
        ("ASGI app in process, one POST per call (legacy at 2025-11-25)", asyncio.run(asgi_calls("legacy", 5000, 5))),
        ("floor: orjson.loads + orjson.dumps of the same call", best(floor)),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="fresh interpreters per cold start breakdown")
    parser.add_argument(
        "--asgi",
        nargs=2,
        metavar=("ERA", "N"),
        help="only run N tools/call requests through the ASGI app (modern or legacy): for instruction "
        "counts, run under valgrind --tool=cachegrind --cache-sim=no with N and with 0 and divide the difference by N",
    )
    args = parser.parse_args(argv)
    if args.asgi:
        asyncio.run(asgi_calls(args.asgi[0], int(args.asgi[1])))
        return
    for title, (cpu, rss), names in (
        ("ours (2026-07-28 echo server)", stages(OURS_STAGES, args.runs), OURS_NAMES),
        ("floor (asyncio + orjson)", stages(FLOOR_STAGES, args.runs), FLOOR_NAMES),
    ):
        print(f"Cold start by stage, {title}: CPU ms and RSS after it, medians of {args.runs} fresh interpreters:\n")
        print("| stage | CPU ms | RSS after, MiB |\n|---|---:|---:|")
        for name, ms, mib in zip(names, cpu, rss, strict=True):
            print(f"| {name} | {ms:.1f} | {mib:.1f} |")
        print(f"| **total** | **{sum(cpu):.1f}** | **{rss[-1]:.1f}** |\n")
    print("One tools/call in process, CPU µs, best of 5 loops of 5,000:\n")
    print("| step | µs |\n|---|---:|")
    for name, value in per_call():
        print(f"| {name} | {value:.1f} |")


if __name__ == "__main__":
    main()
