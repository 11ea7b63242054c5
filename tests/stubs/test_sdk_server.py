"""Acceptance: a typed client generated from an official-SDK ``MCPServer`` with structured
output, over Streamable HTTP, used in both eras.

Every tool is called through its typed method; structured results come back as the
generated models (nested models, lists, ``Literal`` fields, a recursive model typed ``Any``
past its first level); non-identifier, colliding and hostile tool names reach exactly their
own tool; ``isError`` raises ``ToolError``; progress and elicitation (MRTR on 2026-07-28, a
real server request on 2025-11-25) work through the wrapped client.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import mcpgen
import pytest
from mcpgen.v2026_07_28 import models as mm

from tests.stubs.conftest import SDK_SNAPSHOT, cli, imported, tree

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

ODD = {  # method -> the wire name it must reach
    "get_weather": "get-weather",
    "get_weather_2": "get_weather",
    "u5929_u6c17": "\u5929\u6c17",
    "say_hi": 'say"""hi\\',
    "x_import_os_os_system_echo_pwned": "x'); import os; os.system('echo pwned') #",
}


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(scenario(), 90))


async def elicit(params: Any) -> dict[str, Any]:
    assert "name" in params.message
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.fixture(scope="module")
def generated(sdk_tools_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sdk-live")
    status, stdout, stderr = cli("client", "sdk_tools", "--from-server", sdk_tools_url, "--out", str(out))
    assert status == 0, stderr
    assert "16 tools, 1 prompt, 1 resource template (server" in stdout
    return out


def test_live_and_snapshot_give_identical_packages(generated: Path, tmp_path: Path) -> None:
    snapshot = generated / "sdk_tools" / "snapshot.json"
    status, _, stderr = cli("client", "sdk_tools", "--from-snapshot", str(snapshot), "--out", str(tmp_path))
    assert status == 0, stderr
    live, again = tree(generated / "sdk_tools"), tree(tmp_path / "sdk_tools")
    assert sorted(live) == ["__init__.py", "client.py", "models.py", "py.typed", "snapshot.json"]
    assert live == again


def test_checked_in_snapshot_matches_the_server(sdk_tools_url: str) -> None:
    """The drift gate against a live server: no change since tests/stubs/snapshots/sdk_tools.json."""
    status, stdout, stderr = cli("client", "--check", "--baseline", str(SDK_SNAPSHOT), "--from-server", sdk_tools_url)
    assert (status, stdout) == (0, ""), stderr


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_every_tool_through_its_typed_method(generated: Path, sdk_tools_url: str, era: str) -> None:
    with imported(generated, "sdk_tools") as sdk:
        m = sdk.models
        called: set[str] = set()

        async def scenario() -> None:
            versions = ["2025-11-25"] if era == "legacy" else None
            raw = await mcpgen.connect(
                sdk_tools_url, versions=versions, handlers={"elicitation/create": elicit}, cache=None, timeout=30
            )
            async with sdk.Client(raw) as client:
                assert client.client.version == ("2025-11-25" if era == "legacy" else "2026-07-28")

                def call(method: str) -> Any:
                    called.add(method)
                    return getattr(client, method)

                forecast = await call("get_forecast")(city="Paris", days=2, units="imperial")
                assert isinstance(forecast, m.GetForecastOutput)
                assert forecast.units == "imperial" and forecast.note is None
                assert [type(d) for d in forecast.days] == [m.Day, m.Day]
                assert [(d.day, d.high, d.conditions) for d in forecast.days] == [(1, 20.5, "sunny"), (2, 21.5, "rain")]
                assert len((await call("get_forecast")(city="Oslo")).days) == 3  # the default is sent

                total = await call("add")(a=2, b=3)
                assert isinstance(total, m.AddOutput) and total.result == 5 and type(total.result) is int

                assert (await call("list_cities")(prefix="L")).result == ["Lyon", "Lille"]
                assert len((await call("list_cities")()).result) == 4  # an omitted optional argument

                trip = m.Trip(city="Rome", nights=2, travellers=["a", "b"])
                booking = await call("book")(trip=trip, insurance=True)
                assert isinstance(booking, m.BookOutput) and isinstance(booking.trip, m.Trip)
                assert (booking.reference, booking.total, booking.trip) == ("BK-Rome-2", 425.0, trip)

                node = await call("tree")(depth=2)
                assert isinstance(node.children[0], m.Node)  # the recursive level below is Any
                assert node.children[0].children == [{"name": "level-2", "children": []}]

                assert (await call("ns_echo")(text="hi")).result == "hi"
                assert (await call("class_")(of="y")).result == "class y"

                shouted = await call("shout")(text="hi")  # no output schema: the CallToolResult
                assert isinstance(shouted, mm.CallToolResult)  # typed with the snapshot's revision in either era
                assert [c.text for c in shouted.content] == ["HI"]

                with pytest.raises(sdk.ToolError) as failed:
                    await call("fail")(reason="nope")
                assert failed.value.tool == "fail" and failed.value.content

                progress: list[float] = []
                done = await call("slow")(steps=3, on_progress=lambda p: progress.append(p.progress))
                assert done.result == "done" and progress == [1, 2, 3]

                assert (await call("greet")()).result == "Hello, Ada!"  # elicitation through the handler

                for method, wire in ODD.items():
                    assert (await call(method)()).result == wire

                prompt = await client.prompts.plan_trip(city="Oslo")
                assert isinstance(prompt, mm.GetPromptResult)
                assert prompt.messages[0].content.text == "Plan 3 days in Oslo."
                read = await client.resources.current_weather(city="Oslo")
                assert isinstance(read, mm.ReadResourceResult)
                assert read.contents[0].uri == "weather://Oslo/current"

        run(scenario)
        tool_methods = {
            name
            for name, member in inspect.getmembers(sdk.Client, inspect.iscoroutinefunction)
            if not name.startswith("_") and name != "aclose"
        }
        assert len(tool_methods) == 16
        assert called == tool_methods


def test_a_drifted_output_raises_tool_output_error(sdk_tools_url: str, tmp_path: Path) -> None:
    """Stubs from an older snapshot whose output enum lacked a value the server now sends."""
    data = json.loads(SDK_SNAPSHOT.read_text(encoding="utf-8"))
    forecast = next(t for t in data["tools"] if t["name"] == "get_forecast")
    forecast["outputSchema"]["properties"]["units"]["enum"] = ["metric"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    assert cli("client", "sdk_old", "--from-snapshot", str(old), "--out", str(tmp_path))[0] == 0
    status, stdout, _ = cli("client", "--check", "--baseline", str(old), "--from-server", sdk_tools_url)
    assert status == 1
    assert "breaking: tool 'get_forecast': output field 'units': enum value \"imperial\" added" in stdout.splitlines()
    with imported(tmp_path, "sdk_old") as sdk:

        async def scenario() -> None:
            async with await sdk.connect(sdk_tools_url, cache=None) as client:
                assert (await client.get_forecast(city="Paris", units="metric")).units == "metric"
                with pytest.raises(sdk.ToolOutputError, match="does not match the output schema"):
                    await client.get_forecast(city="Paris", units="imperial")

        run(scenario)


def test_stubs_typed_with_a_legacy_revision_work_on_a_modern_session(sdk_tools_url: str, tmp_path: Path) -> None:
    """Snapshot at 2025-11-25, call at 2026-07-28: results are re-read into the legacy types."""
    status, stdout, stderr = cli(
        "client",
        "sdk_legacy",
        "--from-server",
        sdk_tools_url,
        "--protocol-version",
        "2025-11-25",
        "--out",
        str(tmp_path),
    )
    assert status == 0, stderr
    assert "MCP 2025-11-25" in stdout
    from mcpgen.v2025_11_25 import models as lm

    with imported(tmp_path, "sdk_legacy") as sdk:

        async def scenario() -> None:
            async with await sdk.connect(sdk_tools_url, cache=None) as client:
                assert client.client.version == "2026-07-28"
                shouted = await client.shout(text="hi")
                assert isinstance(shouted, lm.CallToolResult) and shouted.content[0].text == "HI"
                assert (await client.add(a=1, b=2)).result == 3
                assert isinstance(await client.prompts.plan_trip(city="Oslo"), lm.GetPromptResult)
                assert isinstance(await client.resources.current_weather(city="Oslo"), lm.ReadResourceResult)
                with pytest.raises(sdk.ToolError):
                    await client.fail()

        run(scenario)
