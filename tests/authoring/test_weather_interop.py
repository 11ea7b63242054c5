"""examples/weather against real clients: the official ``mcp`` 2.3.0 client and the TypeScript SDK v2
client, both eras, stdio and Streamable HTTP (issue 12's acceptance).

What a user checks: ``add`` with a string gives ``isError: true`` naming ``a``; ``get_forecast``
returns ``structuredContent`` valid against its advertised ``outputSchema``; ``fail`` gives
``isError: true`` with its message; the resource template reads; the prompt renders.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.peers import TS_CLIENT, node22, node_env, npm_install
from tests.server.servers import WEATHER, free_port, start_example_http, stop

pytestmark = pytest.mark.interop  # real peers: the official SDK, npm packages

TIMEOUT = 30
SCRIPT = Path(__file__).parents[1] / "server" / "peers" / "ts_client.mjs"
MODES = [("legacy", "2025-11-25"), ("modern", "2026-07-28")]


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    proc = start_example_http(WEATHER, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def check(seen: dict[str, Any], version: str) -> None:
    assert seen["version"] == version
    tools = {t["name"]: t for t in seen["tools"]}
    assert sorted(tools) == ["add", "fail", "get_forecast"]
    assert seen["bad"]["isError"] is True
    assert "a: Input should be a valid integer" in seen["bad"]["text"]
    assert "b:" not in seen["bad"]["text"]  # only the bad field is named
    forecast = seen["forecast"]
    assert forecast["isError"] is False
    jsonschema.Draft202012Validator(tools["get_forecast"]["outputSchema"]).validate(forecast["structured"])
    assert forecast["structured"]["city"] == "Paris" and len(forecast["structured"]["days"]) == 2
    assert json.loads(forecast["text"]) == forecast["structured"]  # the JSON of it as text, too
    assert seen["fail"] == {"isError": True, "text": "the weather service is unavailable"}
    assert seen["resource"].startswith("Paris: ") and seen["resource"].endswith("degrees Celsius")
    assert seen["prompt"].startswith("Plan a three-day trip to Rome")


# -- the official Python SDK client ---------------------------------------------------------------


async def python_sdk(target: Any, mode: str) -> dict[str, Any]:
    # the official SDK, imported here: only the interop tests pay its second of import time
    from mcp.client import Client

    seen: dict[str, Any] = {}
    async with asyncio.timeout(TIMEOUT):
        async with Client(target, mode=mode) as client:
            seen["version"] = client.session.protocol_version
            listed = await client.list_tools()
            seen["tools"] = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
            for key, name, arguments in (
                ("bad", "add", {"a": "x", "b": 1}),
                ("forecast", "get_forecast", {"city": "Paris", "days": 2}),
                ("fail", "fail", {}),
            ):
                result = await client.call_tool(name, arguments)
                seen[key] = {"isError": bool(result.is_error), "text": result.content[0].text}  # type: ignore[union-attr]
                if key == "forecast":
                    seen[key]["structured"] = result.structured_content
            read = await client.read_resource("weather://Paris/current")
            seen["resource"] = read.contents[0].text  # type: ignore[union-attr]
            prompt = await client.get_prompt("plan_trip", {"city": "Rome"})
            seen["prompt"] = prompt.messages[0].content.text  # type: ignore[union-attr]
    return seen


SDK_MODES = {"legacy": "legacy", "modern": "auto"}


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_python_sdk_client_over_stdio(mode: str, version: str) -> None:
    from mcp.client.stdio import StdioServerParameters

    target = StdioServerParameters(command=sys.executable, args=[str(WEATHER)])
    check(asyncio.run(python_sdk(target, SDK_MODES[mode])), version)


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_python_sdk_client_over_http(http_url: str, mode: str, version: str) -> None:
    check(asyncio.run(python_sdk(http_url, SDK_MODES[mode])), version)


# -- the TypeScript SDK v2 client -------------------------------------------------------------------


@pytest.fixture(scope="module")
def script() -> Path:
    target = npm_install(TS_CLIENT) / "ts_client.mjs"
    shutil.copyfile(SCRIPT, target)
    return target


def typescript(script: Path, mode: str, *target: str) -> dict[str, Any]:
    done = subprocess.run(
        [str(node22()), str(script), "legacy" if mode == "legacy" else "2026-07-28", *target],
        capture_output=True,
        text=True,
        timeout=60,
        env={**node_env(), "MCP_INTEROP_PROFILE": "weather", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_typescript_client_over_stdio(script: Path, mode: str, version: str) -> None:
    check(typescript(script, mode, "stdio", sys.executable, str(WEATHER)), version)


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_typescript_client_over_http(script: Path, http_url: str, mode: str, version: str) -> None:
    check(typescript(script, mode, http_url), version)
