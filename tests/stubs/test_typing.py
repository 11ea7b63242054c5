"""The generated packages pass ``mypy --strict``, and so does a program using them; the same
program with a wrong argument type, a wrong ``Literal`` or a wrong result field fails it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_schema_codegen.commands.client_stubs import generate_client
from mcp_schema_codegen.tools.snapshot import load_snapshot
from tests.conftest import GENERATED, ROOT
from tests.stubs.conftest import SDK_SNAPSHOT
from tests.stubs.hostile import hostile_snapshot

GOOD = """
from __future__ import annotations

import mcpgen
import sdk_tools
from sdk_tools import ToolError
from sdk_tools.models import Day, GetForecastOutput, Trip
from mcpgen.v2026_07_28 import models as mcp


async def plan(url: str) -> float:
    async with await sdk_tools.connect(url) as client:
        forecast: GetForecastOutput = await client.get_forecast(city="Paris", days=2, units="imperial")
        first: Day = forecast.days[0]
        warmest = max(d.high for d in forecast.days) + first.day
        booking = await client.book(trip=Trip(city="Rome", nights=2), insurance=True)
        total: float = booking.total + (await client.add(a=1, b=2)).result
        shouted: mcp.CallToolResult = await client.shout(text="hi")
        print(shouted.content, (await client.list_cities()).result[0].upper())
        print((await client.get_weather()).result, (await client.class_(of="x")).result)
        try:
            await client.fail()
        except ToolError as error:
            print(error.content)
        prompt: mcp.GetPromptResult = await client.prompts.plan_trip(city="Oslo", days="2")
        read: mcp.ReadResourceResult = await client.resources.current_weather(city="Oslo")
        print(prompt.messages, read.contents)
        return warmest + total


async def wrapped(url: str) -> None:
    client = sdk_tools.Client(await mcpgen.connect(url, timeout=5))
    await client.slow(steps=2, on_progress=print, timeout=10)
    await client.aclose()
"""
BAD = """
from __future__ import annotations

import sdk_tools


async def wrong(client: sdk_tools.Client) -> None:
    await client.add(a="2", b=3)
    await client.get_forecast(city="Paris", units="kelvin")
    forecast = await client.get_forecast(city="Paris")
    print(forecast.no_such_field)
    await client.get_forecast(days=2)
"""


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("typed")
    generate_client(load_snapshot(SDK_SNAPSHOT), "sdk_tools", out)
    generate_client(hostile_snapshot(), "hostile_tools", out)
    return out


def mypy(cache: list[str], packages: Path, *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *cache, *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"MYPYPATH": f"{GENERATED}:{packages}", "PATH": ""},
        check=False,
    )


def test_packages_and_a_program_using_them_pass_mypy_strict(packages: Path, mypy_cache: list[str]) -> None:
    program = packages / "use_stubs.py"
    program.write_text(GOOD, encoding="utf-8")
    done = mypy(mypy_cache, packages, packages / "sdk_tools", packages / "hostile_tools", program)
    assert done.returncode == 0, done.stdout[-4000:]


def test_wrong_arguments_and_fields_fail_mypy(packages: Path, mypy_cache: list[str]) -> None:
    program = packages / "misuse_stubs.py"
    program.write_text(BAD, encoding="utf-8")
    done = mypy(mypy_cache, packages, program)
    assert done.returncode == 1
    errors = [line.split(": error: ", 1)[1] for line in done.stdout.splitlines() if ": error: " in line]
    assert any('Argument "a" to "add" of "Client" has incompatible type "str"' in e for e in errors), errors
    assert any('Argument "units" to "get_forecast" of "Client"' in e and "kelvin" in e for e in errors), errors
    assert any('"GetForecastOutput" has no attribute "no_such_field"' in e for e in errors), errors
    assert any('Missing named argument "city"' in e for e in errors), errors
