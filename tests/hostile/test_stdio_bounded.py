"""Issue 17 rows 6 and 10 (stdio), and the in-flight limit: the everything server as a stdio child process.

- A 2025-03-26 batch whose request needs the client's input (a server->client request) is
  answered once the client answers, however the answer arrives (alone or in a batch).
- A line longer than ``max_line_bytes`` is answered -32600 (id null) and skipped, with bounded
  memory; the lines around it are served.
- Past ``max_inflight`` requests in flight, a request is answered -32600 at once; once one
  finishes, requests are accepted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from typing import Any

from tests.hostile.probe import SERVE, StdioServer, env, initialize
from tests.server.servers import stop

SAMPLING = {"sampling": {}}
ELICITATION = {"elicitation": {"form": {}}}


def tool(rid: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def sampled(rid: str, text: str) -> dict[str, Any]:
    content = {"type": "text", "text": text}
    return {"jsonrpc": "2.0", "id": rid, "result": {"role": "assistant", "content": content, "model": "m"}}


def is_request(method: str) -> Any:
    return lambda m: isinstance(m, dict) and m.get("method") == method and "id" in m


def test_a_batch_needing_client_input_is_answered() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            await server.send(
                initialize(0, "2025-03-26", SAMPLING), {"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            await server.response(0)
            batch = [tool(1, "test_sampling", prompt="p"), {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
            await server.send(batch)
            asked = await server.until(is_request("sampling/createMessage"))
            await server.send(sampled(asked["id"], "alone"))
            replies = await server.until(lambda m: isinstance(m, list))
            by_id = {r["id"]: r for r in replies}
            assert by_id[1]["result"]["content"][0]["text"] == "LLM response: alone", replies
            assert by_id[2]["result"] == {}
            # the answer in a batch of its own (a JSONRPCBatchResponse: responses only, never next to
            # a notification, which the schema's batches do not mix)
            await server.send([tool(3, "test_sampling", prompt="q")])
            asked = await server.until(lambda m: is_request("sampling/createMessage")(m) and m["id"] != asked["id"])
            await server.send([sampled(asked["id"], "batched")])
            second = await server.until(lambda m: isinstance(m, list) and m[0]["id"] == 3)
            assert second[0]["result"]["content"][0]["text"] == "LLM response: batched"

    asyncio.run(asyncio.wait_for(go(), 30))


def test_an_overlong_line_is_refused_and_skipped_with_bounded_memory() -> None:
    async def go() -> None:
        async with StdioServer() as server:  # the default limit: 16 MiB
            assert server.proc is not None
            ping = {"jsonrpc": "2.0", "id": "a", "method": "server/discover", "params": {"_meta": META}}
            await server.send(ping)
            assert "result" in await server.response("a", timeout=30)
            before = rss_kib(server.proc.pid)  # a server that is up, not an interpreter just exec'd
            huge = b'{"jsonrpc": "2.0", "id": "huge", "method": "tools/list", "params": {"x": "' + b"x" * (65 << 20)
            await server.send(huge + b'"}}', {**ping, "id": "b"}, b"[" * (20 << 20), {**ping, "id": "c"})
            for rid in ("b", "c"):
                assert "result" in await server.response(rid, timeout=30)
            refused = [m for m in server.responses() if "error" in m]
            assert [m["error"]["code"] for m in refused] == [-32600, -32600]
            # the first is answered under the id its head holds (a client dropping an error without
            # one waits for ever: the official SDK's); the second has none: left out, as 2026-07-28 has it
            assert [m.get("id", "none") for m in refused] == ["huge", "none"]
            assert rss_kib(server.proc.pid) - before < 40 * 1024  # not the 85 MiB sent

    asyncio.run(go())


def test_a_line_at_the_limit_is_served() -> None:
    async def go() -> None:
        async with StdioServer(["--limits", json.dumps({"max_line_bytes": 4096})]) as server:
            body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
            line = json.dumps(body).encode()
            padded = line[:-1] + b"," + b'"pad": "' + b"p" * (4096 - len(line) - 10) + b'"}'
            assert len(padded) == 4096
            await server.send(padded, padded + b" ")
            assert "result" in await server.until(lambda m: m.get("id") == 1 and "result" in m)
            refused = await server.until(lambda m: "error" in m)
            assert refused["error"]["code"] == -32600 and "4096" in refused["error"]["message"]
            assert refused["id"] == 1  # the one byte too long: refused under the id its head holds

    asyncio.run(go())


def test_requests_past_max_inflight_are_refused_until_one_finishes() -> None:
    async def go() -> None:
        limits = json.dumps({"max_inflight": 3})
        async with StdioServer(["--limits", limits]) as server:
            await server.send(
                initialize(0, capabilities=ELICITATION), {"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            await server.response(0)
            await server.send(*(tool(n, "test_elicitation", message="m") for n in (1, 2, 3)))
            asked = [
                await server.until(lambda m, k=k: is_request("elicitation/create")(m) and m["id"] == f"mcpgen-{k}")
                for k in (1, 2, 3)
            ]
            await server.send(tool(4, "test_simple_text"), {"jsonrpc": "2.0", "id": 5, "method": "ping"})
            for rid in (4, 5):
                busy = await server.response(rid)
                assert busy["error"]["code"] == -32600 and "in flight" in busy["error"]["message"], busy
            accept = {
                "jsonrpc": "2.0",
                "id": asked[0]["id"],
                "result": {"action": "accept", "content": {"username": "u", "email": "e"}},
            }
            await server.send(accept)
            assert "result" in await server.response(1)
            await server.send({"jsonrpc": "2.0", "id": 6, "method": "ping"})
            assert (await server.response(6))["result"] == {}
            batch = [{"jsonrpc": "2.0", "id": 7, "method": "ping"}, {"jsonrpc": "2.0", "id": 8, "method": "ping"}]
            await server.send(tool(9, "test_elicitation", message="m"))
            await server.until(lambda m: is_request("elicitation/create")(m) and m["id"] == "mcpgen-4")
            await server.send(batch)  # 3 in flight again (2, 3, 9): the batch is refused item by item
            refused = await server.until(lambda m: isinstance(m, list))
            assert [r["id"] for r in refused] == [7, 8] and all(r["error"]["code"] == -32600 for r in refused)

    asyncio.run(asyncio.wait_for(go(), 30))


META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def test_a_client_that_stops_reading_cannot_make_the_server_buffer_without_bound() -> None:
    limits = json.dumps({"max_line_bytes": 65536})
    proc = subprocess.Popen(
        [sys.executable, str(SERVE), "--stdio", "--limits", limits],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        line = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": META}}).encode()
        proc.stdin.write(line + b"\n")
        proc.stdin.flush()
        first = proc.stdout.readline()  # started, and tools/list is a few kB: 20,000 of them are ~100 MB
        before = rss_kib(proc.pid)
        total = 20_000

        def flood() -> None:
            assert proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                for _ in range(total):
                    proc.stdin.write(line + b"\n")
                proc.stdin.close()

        writer = threading.Thread(target=flood, daemon=True)
        writer.start()
        writer.join(3)  # the client writes and never reads, for a while
        grown = rss_kib(proc.pid) - before
        read = sum(1 for _ in iter(proc.stdout.readline, b""))  # now it reads: everything is answered
        writer.join(30)
    finally:
        stop(proc)
    assert len(first) * total > 50 << 20
    assert grown < 24 * 1024, f"the server buffered {grown} KiB of unread replies"
    assert read == total
