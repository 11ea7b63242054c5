"""Handlers of the tools declared in declared_tools.json: yours to fill in.

``mcp-codegen tools`` wrote this module once and never touches it again; the definitions and
models live in ``declared`` (regenerated). Call ``register(app)`` from your server module.
"""

from __future__ import annotations

import json

from declared import (
    JSON_SCHEMA_2020_12_TOOL,
    TEST_CUSTOM_HEADERS,
    JsonSchema202012ToolArguments,
    TestCustomHeadersArguments,
)
from mcpgen._runtime.server.authoring import App, Context


async def json_schema_2020_12_tool(args: JsonSchema202012ToolArguments, ctx: Context) -> str:
    """Tool with JSON Schema 2020-12 features"""
    return json.dumps(args.model_dump(mode="json", exclude_unset=True))


async def test_custom_headers(args: TestCustomHeadersArguments, ctx: Context) -> str:
    """Mirrors x-mcp-header parameters into Mcp-Param headers"""
    return f"region={args.region}"


def register(app: App) -> None:
    """Declare every tool of declared_tools.json on ``app``."""
    app.tool(JSON_SCHEMA_2020_12_TOOL)(json_schema_2020_12_tool)
    app.tool(TEST_CUSTOM_HEADERS)(test_custom_headers)
