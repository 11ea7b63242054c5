"""The user module written into the scaffolded ``loadsrv`` project by the reliability tests.

Tools: ``echo`` (answers at once), ``fail`` (raises), ``hang`` (never answers), ``slow``
(answers after ``ms`` milliseconds). The server gives a handler at most one second. It is
written on the handler base (a raising handler is -32603 here, not a tool result); the scaffold's
``__main__`` runs ``app.server``, so ``app`` carries an instance of it.
"""

from __future__ import annotations

import asyncio

from loadsrv_mcp import models as m
from loadsrv_mcp import server as s
from pydantic import MISSING


class Server(s.Server):
    name = "loadsrv"
    version = "0.1.0"
    handler_timeout = 1.0

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        tools = [m.Tool(name=n, input_schema={"type": "object"}) for n in ("echo", "fail", "hang", "slow")]
        return s.ListToolsResult(tools=tools)

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        args = {} if params.arguments is MISSING else params.arguments
        if params.name == "fail":
            raise RuntimeError("secret internal detail: /etc/passwd")
        if params.name == "hang":
            await asyncio.Event().wait()
        if params.name == "slow":
            await asyncio.sleep(float(args.get("ms", 10)) / 1000)
        return s.CallToolResult(content=[m.TextContent(type="text", text=str(args.get("text", "")))])


class Handlers:
    """What the scaffold's ``__main__`` needs of ``app`` (an ``App`` in a scaffolded project): ``server``."""

    server = Server()


app = Handlers()
