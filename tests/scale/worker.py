"""The server the scale-out tests run as several processes: ``python worker.py --port P [--workers N]``.

It shares its state through ``$MCP_REDIS_URL`` (when set). Tools: ``change`` (the tool list
changed), ``touch`` (a resource was updated), ``log`` (an info and a debug message), ``poll``
(three progress events, then the server closes the connection, then three more), ``ticker``
(``n`` progress events, paced), ``pid`` (which worker answered), ``ask`` (an elicitation: on a
legacy session a server->client request).

``HEALTHY_FORKS=K`` (with ``--workers``): the first K workers forked start normally, every later
one dies at once with status 3, as a worker that cannot start would.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from mcpgen._runtime.server import Limits
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

TOOLS = ("change", "touch", "log", "poll", "ticker", "pid", "ask")


def text(value: str) -> m.CallToolResult:
    return s.CallToolResult(content=[m.TextContent(type="text", text=value)])


class Worker(s.Server):
    name = "scale-worker"
    request_state_key = "scale-out-tests"
    limits = Limits(
        resume_wait=float(os.environ.get("RESUME_WAIT", "2")),
        session_idle_timeout=float(os.environ.get("SESSION_IDLE", "1800")),
        max_sessions=int(os.environ.get("MAX_SESSIONS", "10000")),
    )

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        return s.ListToolsResult(tools=[m.Tool(name=n, input_schema={"type": "object"}) for n in TOOLS])

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        args: dict[str, Any] = {} if params.arguments is MISSING else params.arguments
        if params.name == "change":
            await self.notify_tools_changed()
            return text("changed")
        if params.name == "touch":
            await self.notify_resource_updated(str(args["uri"]))
            return text("touched")
        if params.name == "log":
            await ctx.log("info", "info-line")
            await ctx.log("debug", "debug-line")
            return text("logged")
        if params.name == "poll":
            for step in (1, 2, 3):
                await ctx.report_progress(step)
            await ctx.close_sse_stream(retry_ms=10)
            for step in (4, 5, 6):
                await ctx.report_progress(step)
            return text("polled")
        if params.name == "ticker":
            for step in range(1, int(args.get("n", 10)) + 1):
                await ctx.report_progress(step)
                await asyncio.sleep(0.01)
            return text("ticked")
        if params.name == "pid":
            return text(str(os.getpid()))
        if params.name == "ask":  # a server->client request (legacy): the answer may reach another worker
            answer = await ctx.elicit("name?", {"type": "object", "properties": {"n": {"type": "string"}}})
            return text(f"{answer.action}:{answer.data}")
        return s.CallToolResult(content=[], is_error=True)

    async def list_resources(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListResourcesResult:
        return s.ListResourcesResult(resources=[m.Resource(uri="test://a", name="a")])

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: s.Context
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        return s.ReadResourceResult(contents=[{"uri": params.uri, "text": "content"}])


def fail_after_healthy_forks(healthy: int) -> None:
    """Forks past the first ``healthy`` end in the child at once, with status 3."""
    forks = 0

    def count() -> None:
        nonlocal forks
        forks += 1

    def child() -> None:
        if forks > healthy:
            os._exit(3)

    os.register_at_fork(before=count, after_in_child=child)


def main() -> None:
    if "HEALTHY_FORKS" in os.environ:
        fail_after_healthy_forks(int(os.environ["HEALTHY_FORKS"]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    Worker().run_http("127.0.0.1", args.port, workers=args.workers)


if __name__ == "__main__":
    main()
