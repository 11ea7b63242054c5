"""Interop with ``@modelcontextprotocol/server-everything`` (npm, legacy only) over stdio:
``connect`` probes ``server/discover``, falls back to ``initialize`` and calls ``echo``.
"""

from __future__ import annotations

import asyncio
import subprocess

import pytest
from mcpgen import connect
from mcpgen._runtime.client.connect import VERDICTS, Verdict
from mcpgen.v2025_11_25 import client as legacy_client

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels


@pytest.fixture(scope="module")
def everything() -> list[str]:
    from tests.peers import SERVER_EVERYTHING, npm_bin, npm_install

    directory = npm_install(SERVER_EVERYTHING)  # a real peer is required: an install failure fails the test
    return [*npm_bin(directory, "mcp-server-everything"), "stdio"]


def test_connect_falls_back_to_legacy_and_calls_echo(everything: list[str]) -> None:
    cache: dict[str, Verdict] = {}

    async def scenario() -> None:
        client = await connect(everything, cache=cache, probe_timeout=20, timeout=30, stderr=subprocess.DEVNULL)
        async with client:
            assert client.era == "legacy"
            assert isinstance(client, legacy_client.Client)
            tools = await client.list_tools()
            assert "echo" in {t.name for t in tools.tools}
            result = await client.call_tool(name="echo", arguments={"message": "hello"})
            assert "hello" in result.content[0].text  # type: ignore[union-attr]
        assert list(cache.values()) == [("legacy", "2025-11-25")]
        # the cached verdict skips the probe
        again = await connect(everything, cache=cache, timeout=30, stderr=subprocess.DEVNULL)
        async with again:
            assert again.era == "legacy"

    asyncio.run(asyncio.wait_for(scenario(), 120))
    assert VERDICTS is not cache
