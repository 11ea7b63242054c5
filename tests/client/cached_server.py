"""A modern stdio server for the client's result cache (tests/client/test_result_cache.py).

Each ``tools/list`` answer names how many it has answered (tool ``listed-N``), ``resources/read``
too (``read-N of URI``); pages follow ``cursor`` ``"2"`` and a cursor it no longer knows is
invalid params. ``tools/call`` of ``change`` sends tools' list_changed, of ``touch`` the
resource's updated, of ``forget`` makes every cursor unknown. TTL from argv[1] (ms).
"""

from __future__ import annotations

import sys
from typing import Any

from mcpgen._runtime.jsonrpc import INVALID_PARAMS, ProtocolError
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING


class Counting(s.Server):
    name = "counting"
    ttl_ms = int(sys.argv[1])

    def __init__(self) -> None:
        self.listed = 0
        self.read = 0
        self.cursors = True

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        cursor = getattr(params, "cursor", None)
        cursor = None if cursor is MISSING else cursor
        if cursor is not None and (cursor != "2" or not self.cursors):
            raise ProtocolError(INVALID_PARAMS, f"unknown cursor {cursor!r}")
        self.listed += 1
        tool = m.Tool(name=f"listed-{self.listed}", input_schema={"type": "object"})
        if cursor is None:
            return s.ListToolsResult(tools=[tool], next_cursor="2")
        return s.ListToolsResult(tools=[tool])

    async def list_resources(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListResourcesResult:
        return s.ListResourcesResult(resources=[m.Resource(name="r", uri="file:///r")])

    async def read_resource(self, params: m.ReadResourceRequestParams, ctx: s.Context) -> Any:
        self.read += 1
        contents = [m.TextResourceContents(uri=params.uri, text=f"read-{self.read} of {params.uri}")]
        return s.ReadResourceResult(contents=contents)

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> Any:
        if params.name == "change":
            await self.notify_tools_changed()
        elif params.name == "touch":
            await self.notify_resource_updated("file:///r")
        elif params.name == "forget":
            self.cursors = False
        return s.CallToolResult(content=[m.TextContent(text="done")])


if __name__ == "__main__":
    Counting().run_stdio()
