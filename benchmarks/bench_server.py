"""Server round trips: a scaffolded mcp-codegen server against the official ``mcp`` MCPServer.

Both servers expose one tool, ``add(a, b)``. A small raw client (the same for both; JSON lines
over pipes for stdio, one raw keep-alive HTTP/1.1 connection for Streamable HTTP) sends sequential
``tools/call`` requests and waits for each answer, so the figure is round trips per second:
per-request server overhead plus the shared client floor. Both servers are measured in the
same run, interleaved, best of ``--rounds`` loops of ``--calls`` calls each, in the legacy era
(``initialize`` at 2025-11-25, which both speak) and the modern era (2026-07-28, per-request
``_meta``). Start-up time is spawn to the first answered request. Target (issue 5): at least
3x the official server's round trips per second.

Usage::

    python benchmarks/bench_server.py [--calls 2000] [--rounds 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _peers import HttpPeer, free_port, stop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "generated"))


LEGACY, MODERN = "2025-11-25", "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
OFFICIAL = textwrap.dedent(
    """
    import sys
    from mcp.server.mcpserver import MCPServer

    mcp = MCPServer("official-bench")

    @mcp.tool()
    def add(a: int, b: int) -> str:
        \"\"\"Add two integers.\"\"\"
        return str(a + b)

    if sys.argv[1] == "stdio":
        mcp.run()
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]), json_response=True)
    """
)


def call(rid: int, era: str) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "add", "arguments": {"a": rid, "b": 1}}
    if era == MODERN:
        params["_meta"] = META
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


class StdioPeer:
    def __init__(self, command: list[str], cwd: Path) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout

    def rpc(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.stdin.write(json.dumps(message).encode() + b"\n")
        if "id" not in message:
            return None
        while True:
            reply: dict[str, Any] = json.loads(self.stdout.readline())
            if reply.get("id") == message["id"]:
                return reply

    def close(self) -> None:
        self.stdin.close()
        stop(self.proc)


@contextmanager
def servers(tmp: Path) -> Iterator[dict[str, tuple[list[str], Path]]]:
    from mcp_schema_codegen.commands.scaffold import scaffold

    project = scaffold("bench-server", tmp)
    official = tmp / "official_server.py"
    official.write_text(OFFICIAL)
    yield {
        "mcp-codegen": ([sys.executable, "-m", "bench_server"], project),
        "official mcp": ([sys.executable, str(official)], tmp),
    }


def open_peer(kind: str, command: list[str], cwd: Path, who: str) -> StdioPeer | HttpPeer:
    if kind == "stdio":
        return StdioPeer(command + (["stdio"] if who == "official mcp" else []), cwd)
    port = free_port()
    extra = ["http", str(port)] if who == "official mcp" else ["--http", "--port", str(port)]
    return HttpPeer(command + extra, cwd, port)


def handshake(peer: StdioPeer | HttpPeer, era: str) -> float:
    """Initialize (legacy) or a first call (modern); seconds from spawn to that first answer."""
    if era == LEGACY:
        reply = peer.rpc(INIT)
        assert reply is not None and "result" in reply, reply
        peer.rpc({"jsonrpc": "2.0", "method": "notifications/initialized"})
    else:
        reply = peer.rpc(call(0, era))
        assert reply is not None and "result" in reply, reply
    return time.perf_counter() - peer.started


def loop(peer: StdioPeer | HttpPeer, era: str, calls: int) -> float:
    start = time.perf_counter()
    for rid in range(1, calls + 1):
        reply = peer.rpc(call(rid, era))
        if reply is None or "result" not in reply:
            raise RuntimeError(f"tools/call failed: {reply}")
    return calls / (time.perf_counter() - start)


def measure(calls: int, rounds: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, servers(Path(tmp)) as targets:
        for kind in ("stdio", "http"):
            for era in (LEGACY, MODERN):
                best: dict[str, float] = {}
                startup: dict[str, float] = {}
                failed: dict[str, str] = {}
                peers: dict[str, StdioPeer | HttpPeer] = {}
                try:
                    for who, (command, cwd) in targets.items():
                        peer = peers[who] = open_peer(kind, command, cwd, who)
                        try:
                            startup[who] = handshake(peer, era)
                            loop(peer, era, min(200, calls))  # warm-up
                        except Exception as exc:
                            failed[who] = f"{type(exc).__name__}: {str(exc)[:120]}"
                    for _ in range(rounds):  # interleaved
                        for who, peer in peers.items():
                            if who not in failed:
                                best[who] = max(best.get(who, 0.0), loop(peer, era, calls))
                finally:
                    for peer in peers.values():
                        peer.close()
                ours, theirs = best.get("mcp-codegen"), best.get("official mcp")
                rows.append(
                    {
                        "transport": kind,
                        "era": era,
                        "ours_rps": ours,
                        "official_rps": theirs,
                        "ratio": ours / theirs if ours and theirs else None,
                        "ours_startup_s": startup.get("mcp-codegen"),
                        "official_startup_s": startup.get("official mcp"),
                        "failed": failed,
                    }
                )
    return rows


def fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the raw numbers here")
    args = parser.parse_args()
    os.environ.pop("PYTHONPATH", None)
    rows = measure(args.calls, args.rounds)
    print("| transport | era | mcp-codegen calls/s | official mcp calls/s | ratio | start-up (ours / official) |")
    print("|---|---|---:|---:|---:|---|")
    for r in rows:
        startup = f"{fmt(r['ours_startup_s'], '.2f')} s / {fmt(r['official_startup_s'], '.2f')} s"
        ratio = fmt(r["ratio"], ".1f") + ("x" if r["ratio"] else "")
        print(
            f"| {r['transport']} | {r['era']} | {fmt(r['ours_rps'], ',.0f')} | {fmt(r['official_rps'], ',.0f')} "
            f"| {ratio} | {startup} |"
        )
        for who, why in r["failed"].items():
            print(f"|  | | {who} failed: {why} | | | |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
