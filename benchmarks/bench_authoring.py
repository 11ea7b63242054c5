"""Typed tools (the authoring layer, issue 12): cold start of a 20-tool server and per-call overhead.

**Cold start**: spawn to the first answered ``tools/list`` (a 2026-07-28 request over stdio, written
at spawn), median of ``--rounds`` interleaved spawns of each variant:

- ``app, generated surface``: 20 typed functions on ``App``, ``tools/list`` served from the
  generated surface module (what ``mcp-codegen regen`` writes; fingerprints compared at start);
- ``app, no surface``: the same app without its surface module, so every schema is built from the
  annotations at start (what the generator saves);
- ``bare handler base``: a ``Server`` subclass answering ``tools/list`` with the same 20 entries as
  literals (no authoring layer in the request path: what a scaffold was before);
- ``official MCPServer``: the same 20 functions on ``mcp`` 2.3.0's ``MCPServer``;
- ``python floor``: an interpreter that reads the line and answers ``{}``.

**Start-up work** (median of ``--rounds`` fresh interpreters): the server module's import and the
building of its handler, timed after the generated runtime is imported, so spawn noise and the
runtime's own import (the same for every variant) drop out.

**Per call** (in process, best of ``--rounds`` loops): calling the function directly, against its
argument validation and result conversion (what ``App.call_tool`` adds around the call), and the
whole ``App.call_tool`` path; plus ``tools/call`` round trips per second over stdio for the app, the
bare handler base and ``MCPServer``.

Usage::

    python benchmarks/bench_authoring.py [--rounds 15] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
TOOLS = 20

FUNCTIONS = "\n".join(
    textwrap.dedent(
        f'''
        def forecast_{i}(city: str, days: Annotated[int, Field(ge=1, le=7, description="How many days")] = 3,
                        units: Literal["c", "f"] = "c") -> Forecast:
            """Forecast number {i}."""
            return Forecast(city=city, units=units, highs=[20.0 + {i}] * days)


        def add_{i}(a: int, b: int) -> int:
            """Add two integers ({i})."""
            return a + b
        '''
    )
    for i in range(TOOLS // 2)
) + textwrap.dedent(
    '''

    async def add_async(a: int, b: int) -> int:
        """Add two integers, on the event loop."""
        return a + b
    '''
)
MODELS = """
from typing import Annotated, Literal

from pydantic import BaseModel, Field


class Forecast(BaseModel):
    city: str
    units: Literal["c", "f"]
    highs: list[float]
"""
APP = (
    MODELS
    + "\nfrom mcpgen.v2026_07_28.server import App\n\napp = App('bench')\n"
    + FUNCTIONS
    + "\n"
    + "\n".join(f"app.tool(forecast_{i})\napp.tool(add_{i})" for i in range(TOOLS // 2))
    + "\napp.tool(add_async)\n\nif __name__ == '__main__':\n    app.run_stdio()\n"
)
OFFICIAL = (
    MODELS
    + "\nfrom mcp.server.mcpserver import MCPServer\n\nmcp = MCPServer('bench')\n"
    + FUNCTIONS
    + "\n"
    + "\n".join(f"mcp.tool()(forecast_{i})\nmcp.tool()(add_{i})" for i in range(TOOLS // 2))
    + "\nmcp.tool()(add_async)\n\nif __name__ == '__main__':\n    mcp.run()\n"
)
BARE = """
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

TOOLS = {tools!r}


class Bare(s.Server):
    name = "bench"

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        return s.ListToolsResult.model_validate({{"tools": TOOLS}})

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> m.CallToolResult:
        args = {{}} if params.arguments is MISSING else params.arguments
        total = int(args["a"]) + int(args["b"])
        content = [m.TextContent(type="text", text=str(total))]
        return s.CallToolResult(content=content, structured_content={{"result": total}})


if __name__ == "__main__":
    Bare().run_stdio()
"""
FLOOR = 'import sys\nsys.stdin.readline()\nsys.stdout.write(\'{"jsonrpc": "2.0", "id": 1, "result": {}}\\n\')\n'


def tools_list() -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}).encode() + b"\n"


def add_call(rid: int, tool: str = "add_3") -> bytes:
    params = {"name": tool, "arguments": {"a": rid, "b": 1}, "_meta": META}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}).encode() + b"\n"


def server_env() -> dict[str, str]:
    """The servers' environment: bytecode is cached (as in any installed deployment), so a spawn does
    not compile the runtime, the app and its surface module from source every time."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT / "generated")}


def write_variants(tmp: Path) -> dict[str, Path]:
    from mcp_schema_codegen.commands.app_surface import write_surface

    dirs = {}
    for name, source in (("app_surface", APP), ("app_plain", APP), ("official", OFFICIAL), ("floor", FLOOR)):
        d = tmp / name
        d.mkdir()
        (d / "server.py").write_text(source)
        dirs[name] = d
    write_surface(dirs["app_surface"], "server:app")
    from importlib import import_module

    sys.path.insert(0, str(dirs["app_surface"]))
    tools = import_module("server_surface").TOOLS
    sys.path.remove(str(dirs["app_surface"]))
    d = tmp / "bare"
    d.mkdir()
    (d / "server.py").write_text(BARE.format(tools=tools))
    dirs["bare"] = d
    env = server_env()
    for name, expected in (("app_surface", ""), ("app_plain", "no generated surface module")):
        done = subprocess.run(
            [sys.executable, "server.py"], cwd=dirs[name], input=tools_list(), capture_output=True, env=env, check=True
        )
        assert expected in done.stderr.decode() and (expected or not done.stderr), done.stderr
    return dirs


LABELS = {
    "app_surface": "app, generated surface",
    "app_plain": "app, no surface (schemas built at start)",
    "bare": "bare handler base (literal tools/list)",
    "official": "official MCPServer",
    "floor": "python floor",
}


def spawn(directory: Path) -> tuple[subprocess.Popen[bytes], IO[bytes], IO[bytes]]:
    """The variant's ``server.py`` over unbuffered pipes: the process, its stdin and its stdout."""
    proc = subprocess.Popen(
        [sys.executable, "server.py"],
        cwd=directory,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=server_env(),
        bufsize=0,
    )
    assert proc.stdin is not None and proc.stdout is not None
    return proc, proc.stdin, proc.stdout


def cold_start(directory: Path) -> float:
    start = time.perf_counter()
    proc, stdin, stdout = spawn(directory)
    stdin.write(tools_list())
    line = stdout.readline()
    elapsed = time.perf_counter() - start
    reply = json.loads(line)
    assert "result" in reply, reply
    stdin.close()
    proc.wait(10)
    return elapsed


# In a fresh interpreter, after the generated runtime is imported and pydantic's one-time costs are
# paid (its lazily imported field machinery and its plugin discovery, which every variant pays
# before its first answer, wherever it first builds a model): the server module's import and the
# building of its handler, which is all a variant adds to start-up.
STARTUP_PROBE = """
import time
import mcpgen.v2026_07_28.server
import pydantic.fields
pydantic.TypeAdapter(int).validate_python(1)
start = time.perf_counter()
import server
app = getattr(server, "app", None)
if app is not None:
    app.server.router
else:
    server.Bare().router
print(time.perf_counter() - start)
"""


def startup_work(directory: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", STARTUP_PROBE], cwd=directory, capture_output=True, env=server_env(), check=True
    )
    return float(done.stdout)


def round_trips(directory: Path, calls: int, tool: str) -> float:
    proc, stdin, stdout = spawn(directory)
    try:
        for rid in range(1, 51):  # warm-up
            stdin.write(add_call(rid, tool))
            stdout.readline()
        start = time.perf_counter()
        for rid in range(1, calls + 1):
            stdin.write(add_call(rid, tool))
            reply = json.loads(stdout.readline())
            assert "result" in reply and not reply["result"].get("isError"), reply
        return calls / (time.perf_counter() - start)
    finally:
        stdin.close()
        proc.wait(10)


def best_loop(fn: Any, loops: int, n: int) -> float:
    """Best per-call seconds over ``loops`` loops of ``n`` calls (gc off during a loop)."""
    best = float("inf")
    for _ in range(loops):
        gc.disable()
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
        gc.enable()
    return best


def per_call(app_dir: Path, loops: int) -> dict[str, float]:
    sys.path.insert(0, str(app_dir))
    from mcpgen._runtime.server import Context
    from mcpgen.v2026_07_28 import models as m
    from server import add_3, app, forecast_3  # type: ignore[import-not-found]

    out: dict[str, float] = {}
    for name, fn, args in (
        ("add", add_3, {"a": 2, "b": 3}),
        ("forecast", forecast_3, {"city": "Oslo", "days": 3, "units": "f"}),
    ):
        binding = app.tools[fn.__name__].binding(app.types)
        out[f"{name}: direct call"] = best_loop(lambda fn=fn, args=args: fn(**args), loops, 20000)

        def validated(binding: Any = binding, fn: Any = fn, args: Any = args) -> Any:
            return binding.output.result(fn(**binding.arguments.validate(args)))

        out[f"{name}: validated call"] = best_loop(validated, loops, 5000)
    # the whole App.call_tool path (an async tool, so no worker thread is involved)
    params = m.CallToolRequestParams.model_validate({"name": "add_async", "arguments": {"a": 2, "b": 3}, "_meta": META})

    async def send(data: bytes) -> None:
        pass

    async def many(n: int) -> float:
        ctx = Context(1, "tools/call", send=send, protocol_version=MODERN, client_capabilities={})
        ctx.bind(params)
        start = time.perf_counter()
        for _ in range(n):
            await app.call_tool(params, ctx)
        return (time.perf_counter() - start) / n

    out["add: App.call_tool (async tool)"] = min(asyncio.run(many(5000)) for _ in range(loops))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = write_variants(Path(tmp))
        for d in dirs.values():
            cold_start(d)  # warm the file cache and .pyc files
        times: dict[str, list[float]] = {name: [] for name in dirs}
        for _ in range(args.rounds):
            for name, d in dirs.items():
                times[name].append(cold_start(d))
        medians = {name: statistics.median(t) for name, t in times.items()}
        work: dict[str, list[float]] = {name: [] for name in ("app_surface", "app_plain", "bare")}
        for _ in range(args.rounds):
            for name in work:
                work[name].append(startup_work(dirs[name]))
        work_medians = {name: statistics.median(t) for name, t in work.items()}
        rps: dict[str, float] = {}
        for _ in range(3):
            for name in ("app_surface", "bare", "official"):
                for tool in ("add_3", "add_async"):
                    key = f"{name} {tool}"
                    rps[key] = max(rps.get(key, 0.0), round_trips(dirs[name], args.calls, tool))
        calls = per_call(dirs["app_surface"], 7)
    print(f"Cold start, spawn to the first answered tools/list, {TOOLS} tools (median of {args.rounds}):\n")
    print("| variant | ms | vs bare handler base | vs official |")
    print("|---|---:|---:|---:|")
    for name, label in LABELS.items():
        ms = medians[name] * 1000
        print(
            f"| {label} | {ms:.0f} | {ms - medians['bare'] * 1000:+.0f} ms | "
            f"{medians[name] / medians['official']:.2f}x |"
        )
    print(f"\nStart-up work in process: the server module's import and its handler (median of {args.rounds}):\n")
    print("| variant | ms | vs bare handler base |")
    print("|---|---:|---:|")
    for name, seconds in work_medians.items():
        print(f"| {LABELS[name]} | {seconds * 1000:.1f} | {(seconds - work_medians['bare']) * 1000:+.1f} ms |")
    print("\nPer call, in process (best loop):\n")
    print("| what | µs |")
    print("|---|---:|")
    for what, seconds in calls.items():
        print(f"| {what} | {seconds * 1e6:.1f} |")
    print("\ntools/call round trips over stdio, 2026-07-28 (best of 3):\n")
    print("| server | sync tool calls/s | vs official | async tool calls/s | vs official |")
    print("|---|---:|---:|---:|---:|")
    for name in ("app_surface", "bare", "official"):
        sync, asyn = rps[f"{name} add_3"], rps[f"{name} add_async"]
        print(
            f"| {LABELS[name]} | {sync:,.0f} | {sync / rps['official add_3']:.1f}x "
            f"| {asyn:,.0f} | {asyn / rps['official add_async']:.1f}x |"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {"cold_start_s": times, "median_s": medians, "startup_work_s": work, "per_call_s": calls, "rps": rps},
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
