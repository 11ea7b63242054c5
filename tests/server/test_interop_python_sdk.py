"""Interop with the official Python SDK client (``mcp`` 2.3.0), legacy and auto modes, stdio and HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from tests.server.servers import everything_stdio_command, free_port, start_everything_http, stop

if TYPE_CHECKING:
    from mcp import types
    from mcp.client.stdio import StdioServerParameters

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

TIMEOUT = 30


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    proc = start_everything_http(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def stdio_target() -> StdioServerParameters:
    # the official SDK, imported here: only the interop tests pay its second of import time
    from mcp.client.stdio import StdioServerParameters

    command, args = everything_stdio_command()
    return StdioServerParameters(command=command, args=args)


async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    from mcp import types

    return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c", "name": "ada"})


async def exercise(target: Any, mode: str) -> dict[str, Any]:
    """Connect, then list and call across tools, resources and prompts; what a user would check."""
    from mcp.client import Client

    seen: dict[str, Any] = {}
    progress: list[float] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(p)

    async with asyncio.timeout(TIMEOUT):
        async with Client(target, mode=mode, elicitation_callback=elicit) as client:
            seen["version"] = client.session.protocol_version
            tools = await client.list_tools()
            seen["tools"] = {t.name for t in tools.tools}
            simple = await client.call_tool("test_simple_text", {})
            seen["simple"] = simple.content[0].text  # type: ignore[union-attr]
            error = await client.call_tool("test_error_handling", {})
            seen["error"] = error.is_error
            await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            seen["progress"] = progress
            elicited = await client.call_tool("test_elicitation", {"message": "who?"})
            seen["elicited"] = elicited.content[0].text  # type: ignore[union-attr]
            read = await client.read_resource("test://static-text")
            seen["resource"] = read.contents[0].text  # type: ignore[union-attr]
            prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            seen["prompt"] = prompt.messages[0].content.text  # type: ignore[union-attr]
    return seen


def check(seen: dict[str, Any], version: str) -> None:
    assert seen["version"] == version
    assert {"test_simple_text", "test_elicitation", "test_input_required_result_elicitation"} <= seen["tools"]
    assert seen["simple"] == "This is a simple text response for testing."
    assert seen["error"] is True
    assert seen["progress"] == [0, 50, 100]
    assert seen["elicited"].startswith("User response: action=accept")
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["prompt"] == "Prompt with arguments: arg1='a', arg2='b'"


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_python_sdk_client_over_http(http_url: str, mode: str, version: str) -> None:
    check(asyncio.run(exercise(http_url, mode)), version)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_python_sdk_client_over_stdio(mode: str, version: str) -> None:
    check(asyncio.run(exercise(stdio_target(), mode)), version)
