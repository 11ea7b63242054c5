"""Interop with the official Python SDK server (``mcp`` 2.3.0, ``MCPServer``): both eras,
over stdio and Streamable HTTP on loopback, through ``connect`` and the generated clients.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from mcpgen import connect
from mcpgen._runtime.client import (
    BaseClient,
    RequestTimeout,
    ServerError,
    TransportError,
)
from mcpgen.v2025_11_25 import client as legacy_client
from mcpgen.v2025_11_25 import models as lm
from mcpgen.v2026_07_28 import client as modern_client
from mcpgen.v2026_07_28 import models as mm

from tests.client.conftest import SDK_SERVER

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

LEGACY = ["2025-11-25", "2025-06-18"]
DEADLINE = 90.0


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), DEADLINE))


async def elicit(params: Any) -> dict[str, Any]:
    assert "name" in params.message
    return {"action": "accept", "content": {"name": "Ada"}}


async def open_client(target: str | list[str], era: str) -> BaseClient:
    return await connect(
        target,
        versions=LEGACY if era == "legacy" else None,
        client_info={"name": "interop-test", "version": "1.0"},
        handlers={"elicitation/create": elicit},
        timeout=30.0,
        probe_timeout=30.0,
        cache=None,
        stderr=subprocess.DEVNULL,
    )


def text_of(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def exercise_modern(client: modern_client.Client) -> None:
    assert client.version == "2026-07-28"
    assert client.server_info is not None and client.server_info.name == "sdk-interop"
    tools = await client.list_tools()
    names = {t.name for t in tools.tools}
    assert {"add", "echo", "greet", "add_tool"} <= names
    pages = [page async for page in client.list_tools_pages()]
    assert {t.name for p in pages for t in p.tools} == names
    result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
    assert text_of(result) == "5"
    greeted = await client.call_tool(name="greet", arguments={})  # MRTR: elicitation answered by the handler
    assert text_of(greeted) == "Hello, Ada!"
    raw = await client.call_tool(name="greet", arguments={}, input_required=True)
    assert isinstance(raw, mm.InputRequiredResult)
    resource = await client.read_resource(uri="test://greeting")
    assert resource.contents[0].text == "hello from a resource"  # type: ignore[union-attr]
    prompt = await client.get_prompt(name="review", arguments={"code": "x = 1"})
    assert "x = 1" in prompt.messages[0].content.text  # type: ignore[union-attr]
    completion = await client.complete(
        ref=mm.PromptReference(type="ref/prompt", name="review"),
        argument=mm.CompleteRequestParamsArgument(name="code", value="print"),
    )
    assert completion.completion.values == ["print(1)", "print(2)"]
    async with client.listen(tools_list_changed=True) as subscription:
        assert subscription.acknowledged is not None
        await client.call_tool(name="add_tool", arguments={"name": "late_modern"})
        note = await subscription.next(timeout=20)
        assert note.method == "notifications/tools/list_changed"


async def exercise_legacy(client: legacy_client.Client) -> None:
    assert client.version == "2025-11-25"
    assert client.server_info is not None and client.server_info.name == "sdk-interop"
    tools = await client.list_tools()
    assert {"add", "echo", "greet"} <= {t.name for t in tools.tools}
    result = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
    assert text_of(result) == "5"
    greeted = await client.call_tool(name="greet", arguments={})  # a real elicitation/create request
    assert text_of(greeted) == "Hello, Ada!"
    resource = await client.read_resource(uri="test://greeting")
    assert resource.contents[0].text == "hello from a resource"  # type: ignore[union-attr]
    prompt = await client.get_prompt(name="review", arguments={"code": "x = 1"})
    assert "x = 1" in prompt.messages[0].content.text  # type: ignore[union-attr]
    completion = await client.complete(
        ref=lm.PromptReference(type="ref/prompt", name="review"),
        argument=lm.CompleteRequestParamsArgument(name="code", value="print"),
    )
    assert completion.completion.values == ["print(1)", "print(2)"]
    async with client.listen(tools_list_changed=True) as subscription:
        await client.call_tool(name="add_tool", arguments={"name": "late_legacy"})
        note = await subscription.next(timeout=20)
        assert note.method == "notifications/tools/list_changed"


async def exercise_errors(client: BaseClient) -> None:
    progress: list[float] = []

    async def on_progress(params: Any) -> None:
        progress.append(params.progress)

    result = await client.request("tools/call", {"name": "slow", "arguments": {"steps": 3}}, on_progress=on_progress)
    assert getattr(result, "is_error", False) is False
    assert progress == [1, 2, 3]
    failed = await client.request("tools/call", {"name": "fail", "arguments": {}})
    assert failed.is_error is True  # a tool error is a result, not a JSON-RPC error
    with pytest.raises(ServerError) as info:
        await client.request("prompts/get", {"name": "no-such-prompt"})
    assert isinstance(info.value.code, int) and info.value.message  # the SDK's code and text vary by era
    with pytest.raises(RequestTimeout):
        await client.request("tools/call", {"name": "hang", "arguments": {}}, timeout=0.5)
    assert text_of(await client.request("tools/call", {"name": "echo", "arguments": {"text": "still alive"}})) == (
        "still alive"
    )


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sdk_server(transport: str, era: str, sdk_http_url: str) -> None:
    target: str | list[str] = [*SDK_SERVER, "stdio"] if transport == "stdio" else sdk_http_url

    async def scenario() -> None:
        async with await open_client(target, era) as client:
            if era == "modern":
                assert isinstance(client, modern_client.Client)
                await exercise_modern(client)
            else:
                assert isinstance(client, legacy_client.Client)
                await exercise_legacy(client)
            await exercise_errors(client)
            session_id = getattr(client.session.transport, "session_id", None)
            if transport == "http":  # legacy HTTP keeps the session the server minted; modern has none
                assert (session_id is not None) == (era == "legacy")
        assert getattr(client.session.transport, "session_id", None) is None  # ended with DELETE

    run(scenario)


def test_transport_failure_is_distinct() -> None:
    async def scenario() -> None:
        with pytest.raises(TransportError):
            await connect("http://127.0.0.1:9/mcp", probe_timeout=5, timeout=5, cache=None)
        with pytest.raises(TransportError):
            await connect(["/nonexistent/mcp-server"], probe_timeout=5, timeout=5, cache=None)

    run(scenario)
