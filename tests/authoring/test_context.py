"""An author's own test builds a ``Context`` by keywords and calls a tool through ``App.call_tool``:
the sessions build it positionally (per request), and that must not change what authors write."""

import asyncio

import pytest
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28.server import App, Context

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def make_app() -> App:
    app = App("context", surface="tests.authoring.no_such_surface")

    @app.tool
    async def whoami(a: int, ctx: Context) -> str:
        return f"{a} {ctx.request_id} {ctx.method} {ctx.protocol_version} {ctx.meta is not None}"

    return app


async def sent(data: bytes) -> None:
    raise AssertionError(f"the tool sent nothing, yet {data!r}")


def call(ctx: Context) -> str:
    params = m.CallToolRequestParams.model_validate({"name": "whoami", "arguments": {"a": 2}, "_meta": META})
    result = asyncio.run(make_app().call_tool(params, ctx))
    assert isinstance(result, dict) and not result.get("isError"), result
    (block,) = result["content"]
    assert block["type"] == "text"
    text: str = block["text"]
    return text


def test_a_context_built_by_keywords_without_meta() -> None:
    ctx = Context(7, "tools/call", send=sent, protocol_version="2026-07-28", client_capabilities={})
    assert call(ctx) == "2 7 tools/call 2026-07-28 False"


def test_a_context_built_by_keywords_with_meta() -> None:
    meta = m.CallToolRequestParams.model_validate({"name": "x", "_meta": META}).meta
    ctx = Context(
        "r1", "tools/call", send=sent, meta=meta, protocol_version="2026-07-28", client_capabilities={}, era="modern"
    )
    assert call(ctx) == "2 r1 tools/call 2026-07-28 True"


def test_a_level_the_runtime_cannot_rank_is_refused_not_ranked_as_debug() -> None:
    ctx = Context(7, "tools/call", send=sent, protocol_version="2026-07-28", client_capabilities={})
    assert not ctx.logs("emergency")  # the client asked for no logs
    ctx.log_level = "info"
    assert ctx.logs("warning") and not ctx.logs("debug")
    with pytest.raises(ValueError, match="unknown log level 'trace'"):
        ctx.logs("trace")  # was 0, as debug: sent to a client at debug, where trace is below it
    with pytest.raises(ValueError, match="unknown log level 'trace'"):
        asyncio.run(ctx.log("trace", "below debug"))
