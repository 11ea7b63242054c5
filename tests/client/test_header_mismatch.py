"""A -32020 HeaderMismatch on tools/call makes the client re-list tools and retry once.

The server (our runtime, in process over ASGI) starts requiring an ``Mcp-Param-Region``
header after the client cached a tool list without the annotation: the first call is
refused, the client re-reads ``tools/list`` and the retry carries the header.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import mcpgen
import pytest
from mcpgen._runtime.client.connect import open_client
from mcpgen._runtime.client.http import HttpTransport
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from mcpgen.v2026_07_28.client import Client


class Regional(s.Server):
    annotated = False
    seen: list[dict[str, str]]

    def __init__(self, paged: bool = False) -> None:
        self.seen = []
        self.paged = paged

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        region: dict[str, Any] = {"type": "string"}
        if self.annotated:
            region["x-mcp-header"] = "Region"
        schema = {"type": "object", "properties": {"region": region}}
        weather = m.Tool(name="weather", input_schema=schema)
        if self.paged and not isinstance(params.cursor, str):  # the first page; the next one's cursor is ""
            other = m.Tool(name="other", input_schema={"type": "object"})
            return s.ListToolsResult(tools=[other], next_cursor="")
        return s.ListToolsResult(tools=[weather])

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        return s.CallToolResult(content=[m.TextContent(type="text", text="sunny")])


@pytest.mark.parametrize("paged", [False, True], ids=["one-page", "second-page-after-an-empty-cursor"])
def test_header_mismatch_relists_tools_and_retries(paged: bool) -> None:
    """Paged: the tool is on the page whose cursor is the empty string, a cursor like any other."""
    server = Regional(paged)
    app = server.asgi_app()
    requests: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        requests.append(request)

    async def go() -> str:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), event_hooks={"request": [record]})
        transport = HttpTransport("http://127.0.0.1/mcp", client=http)
        client = await open_client(transport, "2026-07-28", registry=mcpgen.REGISTRY)
        assert isinstance(client, Client)
        async with client:
            await client.list_tools()  # cached: no x-mcp-header yet
            server.annotated = True  # the tool now routes on a header
            result = await client.call_tool(name="weather", arguments={"region": "eu-west"})
        await http.aclose()
        block = result.content[0]
        assert isinstance(block, m.TextContent)
        return block.text

    assert asyncio.run(go()) == "sunny"
    methods = [(r.headers.get("mcp-method"), r.headers.get("mcp-param-region")) for r in requests]
    relisted = [("tools/list", None)] * (2 if paged else 1)
    assert methods[-len(relisted) - 2 :] == [("tools/call", None), *relisted, ("tools/call", "eu-west")]


class Numbered(Regional):
    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        schema = {"type": "object", "properties": {"level": {"type": "number", "x-mcp-header": "Level"}}}
        return s.ListToolsResult(tools=[m.Tool(name="levels", input_schema=schema)])


def test_a_tool_dropped_for_its_annotations_is_logged_with_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    """streamable-http.mdx: a client dropping such a tool SHOULD log a warning with the tool's name
    and the reason; the warning said only "invalid x-mcp-header annotations" (a client review)."""

    async def go() -> list[str]:
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=Numbered().asgi_app()))
        client = await open_client(
            HttpTransport("http://127.0.0.1/mcp", client=http), "2026-07-28", registry=mcpgen.REGISTRY
        )
        assert isinstance(client, Client)
        async with client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
        await http.aclose()
        return listed

    assert asyncio.run(go()) == []
    said = "ignoring tool 'levels': x-mcp-header 'Level' is on 'level', whose type is not string, integer or boolean"
    assert said in caplog.text, caplog.text
