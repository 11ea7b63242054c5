"""A server written against a revision newer than every peer's serves every revision of its registry.

The revision exists only here: 2026-07-28's schema with a new version string, one more method
(``greetings/get``) and one more field (``Tool.category``), adopted into a temporary lock and
generated into the package ``futuremcp`` against the installed runtime (whose registry it chains
to). Served to the official ``mcp`` 2.3.0 client in auto mode, to ``mcpgen.connect`` (which knows
2026-07-28 only) and to ``futuremcp.connect`` (which knows the new revision).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import mcpgen
import pytest

from tests.revisions import VERSIONS, newest_first, of_era
from tests.server.revisions import made_up_revision
from tests.server.servers import Stdio, everything_stdio_command, free_port, request, stop, wait_http

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

NEW = "2027-03-01"
BASE = "2026-07-28"
LEGACY = list(of_era("legacy"))  # every locked legacy revision, newest first
SERVED = list(newest_first([NEW, *VERSIONS]))  # the new revision and every one mcpgen's registry holds
TIMEOUT = 60

SERVER = f"""
import sys

from futuremcp.v{NEW.replace("-", "_")} import models as m
from futuremcp.v{NEW.replace("-", "_")} import server as s


class Future(s.Server):
    name = "future"

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        tool = m.Tool(name="greet", input_schema={{"type": "object"}}, category="social")
        return s.ListToolsResult(tools=[tool])

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> m.CallToolResult:
        who = params.arguments.get("who") if isinstance(params.arguments, dict) else None
        revision = type(params).__module__.split("._models.")[0]  # the package of the params' revision
        text = f"hello {{who}} at {{ctx.protocol_version}} as {{revision}}"
        return s.CallToolResult(content=[m.TextContent(type="text", text=text)])

    async def get_greeting(self, params: m.GetGreetingRequestParams, ctx: s.Context) -> m.GetGreetingResult:
        return s.GetGreetingResult(greeting=f"hi {{params.name}}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--http"]:
        Future().run_http("127.0.0.1", int(sys.argv[2]))
    else:
        Future().run_stdio()
"""


def newer_schema(base: dict[str, Any]) -> dict[str, Any]:
    """2026-07-28 plus ``greetings/get`` and ``Tool.category``."""
    document = json.loads(json.dumps(base))
    defs = document["$defs"]
    defs["GetGreetingRequest"] = {
        "description": "Ask the server for a greeting.",
        "properties": {
            "id": {"$ref": "#/$defs/RequestId"},
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "greetings/get", "type": "string"},
            "params": {"$ref": "#/$defs/GetGreetingRequestParams"},
        },
        "required": ["id", "jsonrpc", "method", "params"],
        "type": "object",
    }
    defs["GetGreetingRequestParams"] = {
        "properties": {"_meta": {"$ref": "#/$defs/RequestMetaObject"}, "name": {"type": "string"}},
        "required": ["_meta", "name"],
        "type": "object",
    }
    defs["GetGreetingResult"] = {
        "properties": {
            "_meta": {"$ref": "#/$defs/ResultMetaObject"},
            "greeting": {"type": "string"},
            "resultType": {"type": "string"},
        },
        "required": ["greeting", "resultType"],
        "type": "object",
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/GetGreetingRequest"})
    defs["Tool"]["properties"]["category"] = {"type": "string", "description": "A grouping."}
    return document


@pytest.fixture(scope="module")
def future(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The directory holding the generated ``futuremcp`` package and ``future_server.py``; importable meanwhile."""
    with made_up_revision(tmp_path_factory.mktemp("future"), NEW, newer_schema, "futuremcp") as out:
        assert not (out / "futuremcp" / "_runtime").exists()  # the installed runtime serves it
        (out / "future_server.py").write_text(SERVER)
        try:
            yield out
        finally:
            sys.modules.pop("future_server", None)


def load(future: Path, name: str) -> ModuleType:
    __import__(name)
    return sys.modules[name]


def server(future: Path) -> Any:
    return load(future, "future_server").Future()


def test_the_package_chains_to_the_runtime_registry(future: Path) -> None:
    futuremcp = load(future, "futuremcp")
    assert futuremcp.REGISTRY.versions == tuple(SERVED)
    assert futuremcp.REGISTRY.entry(NEW).package == "futuremcp.v2027_03_01"
    assert futuremcp.REGISTRY.entry(BASE).package == "mcpgen.v2026_07_28"
    assert futuremcp.GENERATED_WITH == mcpgen.GENERATED_WITH


def test_32022_lists_what_discover_lists_every_revision_served(future: Path) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Stdio(server(future)) as conn:
            conn.send(
                request(1, "server/discover", **{"io.modelcontextprotocol/protocolVersion": NEW}),
                request(2, "server/discover"),  # at 2026-07-28
                request(3, "tools/list", **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
            )
            return await conn.response(1), await conn.response(2), await conn.response(3)

    new, old, refused = asyncio.run(go())
    assert new["result"]["supportedVersions"] == old["result"]["supportedVersions"] == SERVED
    assert refused["error"]["code"] == -32022
    assert refused["error"]["data"] == {"supported": SERVED, "requested": "2099-01-01"}


def test_an_older_modern_request_is_decoded_by_its_revision_and_converted(future: Path) -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(server(future)) as conn:
            conn.send(
                request(1, "tools/list"),
                request(2, "tools/call", {"name": "greet", "arguments": {"who": "ada"}}),
                request(3, "greetings/get", {"name": "ada"}),  # not a method of 2026-07-28
                request(4, "greetings/get", {"name": "ada"}, **{"io.modelcontextprotocol/protocolVersion": NEW}),
                request(5, "tools/call", {"name": 7}),  # 2026-07-28's own validation
            )
            return [await conn.response(i) for i in range(1, 6)]

    listed, called, unknown, greeted, invalid = asyncio.run(go())
    tool = listed["result"]["tools"][0]
    assert tool["category"] == "social"  # kept: an unknown key of 2026-07-28's open Tool
    assert listed["result"]["_meta"] == {"io.modelcontextprotocol/serverInfo": {"name": "future", "version": "0.1.0"}}
    assert called["result"]["content"][0]["text"] == f"hello ada at {BASE} as futuremcp.v2027_03_01"
    assert unknown["error"]["code"] == -32601
    assert greeted["result"] == {
        "greeting": "hi ada",
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "future", "version": "0.1.0"}},
    }
    assert invalid["error"]["code"] == -32602


def test_a_legacy_client_is_served_by_the_newer_handler(future: Path) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Stdio(server(future)) as conn:
            conn.send(init, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "greet"}})
            return await conn.response(0), await conn.response(1)

    opened, called = asyncio.run(go())
    assert opened["result"]["protocolVersion"] == "2025-06-18"
    assert called["result"] == {
        "content": [{"type": "text", "text": "hello None at 2025-06-18 as futuremcp.v2027_03_01"}]
    }


def sdk_exercise(target: Any) -> dict[str, Any]:
    # the official SDK, imported here: only the interop tests pay its second of import time
    from mcp.client import Client

    async def go() -> dict[str, Any]:
        async with asyncio.timeout(TIMEOUT):
            async with Client(target, mode="auto") as client:
                tools = await client.list_tools()
                called = await client.call_tool("greet", {"who": "sdk"})
                return {
                    "version": client.session.protocol_version,
                    "tools": [t.name for t in tools.tools],
                    "text": called.content[0].text,  # type: ignore[union-attr]
                }

    return asyncio.run(go())


def test_the_official_client_in_auto_mode_over_stdio(future: Path) -> None:
    from mcp.client.stdio import StdioServerParameters

    seen = sdk_exercise(StdioServerParameters(command=sys.executable, args=[str(future / "future_server.py")]))
    assert seen == {"version": BASE, "tools": ["greet"], "text": f"hello sdk at {BASE} as futuremcp.v2027_03_01"}


@pytest.fixture(scope="module")
def http_url(future: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(future / "future_server.py"), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_http(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def test_the_official_client_in_auto_mode_over_http(http_url: str) -> None:
    seen = sdk_exercise(http_url)
    assert seen["version"] == BASE and seen["tools"] == ["greet"]


def test_connect_picks_the_highest_mutual_revision(future: Path, http_url: str) -> None:
    futuremcp = load(future, "futuremcp")
    command = [sys.executable, str(future / "future_server.py")]

    async def go() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with await mcpgen.connect(command, cache=None, timeout=TIMEOUT) as old:  # knows 2026-07-28 at most
            seen["old"] = (old.version, type(old).__module__)
            listed = await old.list_tools()
            seen["category"] = listed.tools[0].model_extra
        async with await futuremcp.connect(http_url, cache=None, timeout=TIMEOUT) as new:
            seen["new"] = (new.version, type(new).__module__)
            seen["greeting"] = (await new.get_greeting(name="typed")).greeting
        async with await futuremcp.connect(command, versions=LEGACY, cache=None, timeout=TIMEOUT) as legacy:
            seen["legacy"] = legacy.version
        return seen

    seen = asyncio.run(go())
    assert seen["old"] == (BASE, "mcpgen.v2026_07_28.client")
    assert seen["category"] == {"category": "social"}
    assert seen["new"] == (NEW, "futuremcp.v2027_03_01.client")
    assert seen["greeting"] == "hi typed"
    assert seen["legacy"] == LEGACY[0]  # the newest legacy revision both speak


def test_a_newer_client_takes_the_revision_an_older_server_lists(future: Path) -> None:
    """``futuremcp.connect`` probes at 2027-03-01; a 2026-07-28 server answers -32022 listing what it
    serves, and the client continues at the highest mutual revision."""
    futuremcp = load(future, "futuremcp")
    command, args = everything_stdio_command()

    async def go() -> tuple[str, str]:
        async with await futuremcp.connect([command, *args], cache=None, timeout=TIMEOUT) as client:
            return client.version, type(client).__module__

    assert asyncio.run(go()) == (BASE, "mcpgen.v2026_07_28.client")
