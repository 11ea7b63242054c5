"""Schema-first tools: ``mcp-codegen tools FILE`` writes typed models and handler stubs; the tools are served
exactly as defined, arguments checked by the generated models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcpgen._runtime.server.authoring import ToolSpec
from mcpgen._runtime.server.authoring.spec_model import SpecModel
from mcpgen.v2026_07_28.server import App
from pydantic import ConfigDict, Field

from mcp_schema_codegen.commands.cli import main
from tests.authoring.apps import Driver, run

TOOLS = {
    "tools": [
        {
            "name": "get-forecast",
            "title": "Forecast",
            "description": "The forecast.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "minLength": 1},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7, "default": 3},
                    "units": {"type": "string", "enum": ["c", "f"]},
                },
                "required": ["city"],
                "additionalProperties": False,
            },
            "outputSchema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "highs": {"type": "array", "items": {"type": "number"}}},
                "required": ["city", "highs"],
            },
        },
        {"name": "ping", "inputSchema": {"type": "object"}},
    ]
}

SERVER = """
from mcpgen.v2026_07_28.server import App

import declared_handlers

app = App("declared", surface="no_surface")
declared_handlers.register(app)
"""

FILLED = '''
async def get_forecast(args: GetForecastArguments, ctx: Context) -> GetForecastOutput:
    """The forecast."""
    return GetForecastOutput(city=args.city, highs=[20.0] * args.days)


async def ping(args: PingArguments, ctx: Context) -> Any:
    return "pong " + json.dumps(args.model_dump())


def register'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    monkeypatch.chdir(tmp_path)
    assert main(["tools", "tools.json", "--module", "declared"]) == 0
    out = capsys.readouterr().out
    assert "declared.py: written" in out and "declared_handlers.py: written (yours" in out
    return tmp_path


def test_generated_models_and_stubs_type_check(project: Path, mypy_cache: list[str]) -> None:
    handlers = (project / "declared_handlers.py").read_text()
    assert "async def get_forecast(args: GetForecastArguments, ctx: Context) -> GetForecastOutput:" in handlers
    assert "    app.tool(GET_FORECAST)(get_forecast)" in handlers
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *mypy_cache, "declared.py", "declared_handlers.py"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]


def drive(project: Path, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    (project / "server.py").write_text(SERVER)
    probe = f"""
import asyncio, json, sys
sys.path.insert(0, {str(project)!r})
sys.path.insert(0, {str(Path(__file__).parents[2])!r})
from server import app
from tests.server.servers import Stdio

async def main():
    async with Stdio(app.server) as io:
        for i, call in enumerate({calls!r}, 1):
            io.send({{"jsonrpc": "2.0", "id": i, **call, "params": {{**call.get("params", {{}}), "_meta": {meta!r}}}}})
            print(json.dumps(await io.response(i)))

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_schema_first_tools_are_served_as_defined_and_validated(project: Path) -> None:
    handlers = project / "declared_handlers.py"
    text = handlers.read_text()
    start, end = text.index("\n\nasync def get_forecast"), text.index("\n\ndef register")
    filled = text[:start] + "\n" + FILLED + text[end + len("\n\ndef register") :]
    handlers.write_text(filled.replace("from typing import Any", "import json\nfrom typing import Any"))
    listed, good, bad, free = drive(
        project,
        {"method": "tools/list"},
        {"method": "tools/call", "params": {"name": "get-forecast", "arguments": {"city": "Oslo", "days": 2}}},
        {"method": "tools/call", "params": {"name": "get-forecast", "arguments": {"city": "", "days": "2", "x": 1}}},
        {"method": "tools/call", "params": {"name": "ping", "arguments": {"anything": [1]}}},
    )
    assert listed["result"]["tools"] == TOOLS["tools"]  # exactly as the file defines them
    assert good["result"]["structuredContent"] == {"city": "Oslo", "highs": [20.0, 20.0]}
    text = bad["result"]["content"][0]["text"]
    assert bad["result"]["isError"] is True
    assert (
        "- city: String should have at least 1 character" in text and "- days: Input should be a valid integer" in text
    )
    assert "- x: unexpected argument" in text  # additionalProperties: false
    assert free["result"]["content"][0]["text"] == 'pong {"anything": [1]}'  # an open object keeps its keys


def test_rerunning_keeps_the_handlers_and_names_the_new_tools(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handlers = (project / "declared_handlers.py").read_text() + "\n# mine\n"
    (project / "declared_handlers.py").write_text(handlers)
    tools = json.loads((project / "tools.json").read_text())
    tools["tools"].append({"name": "new.tool", "inputSchema": {"type": "object"}})
    (project / "tools.json").write_text(json.dumps(tools))
    assert main(["tools", "tools.json", "--module", "declared"]) == 0
    out = capsys.readouterr().out
    assert "declared.py: written" in out and "it has no handler for new_tool" in out
    assert (project / "declared_handlers.py").read_text() == handlers
    assert "NEW_TOOL: ToolSpec[NewToolArguments, Any]" in (project / "declared.py").read_text()
    generated = project / "declared.py"
    generated.write_text(generated.read_text() + "# edit\n")
    assert main(["tools", "tools.json", "--module", "declared"]) == 2
    assert "edited by hand" in capsys.readouterr().err


def test_a_bad_tools_file_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tools": [{"name": "x"}]}))
    assert main(["tools", str(bad), "--module", "m", "--out", str(tmp_path)]) == 2
    assert "tool 'x' has no inputSchema object" in capsys.readouterr().err
    assert main(["tools", str(bad), "--module", "not a module"]) == 2
    # a schema the server would check every call against, which is no JSON Schema: said now
    malformed = {"type": "object", "properties": {"days": {"type": "integr"}}}
    bad.write_text(json.dumps({"tools": [{"name": "x", "inputSchema": malformed}]}))
    capsys.readouterr()
    assert main(["tools", str(bad), "--module", "m", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: tool 'x': inputSchema is not a valid JSON Schema at /properties/days/type: " in err, err
    assert len(err.strip().splitlines()) == 1


def test_the_everything_servers_declared_module_is_what_the_generator_writes(tmp_path: Path) -> None:
    from mcp_schema_codegen.commands.tool_specs import generate_specs
    from tests.conftest import ROOT

    example = ROOT / "examples" / "everything_server"
    generate_specs(example / "declared_tools.json", "declared", tmp_path)
    assert (tmp_path / "declared.py").read_text() == (example / "declared.py").read_text(), (
        "run `mcp-codegen tools declared_tools.json --module declared` in examples/everything_server"
    )


def test_in_a_project_that_vendors_its_runtime_the_tools_module_imports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mcp-codegen]\nversions = ["2026-07-28"]\nout = "."\npackage = "vend_mcp"\nvendor-runtime = true\n'
    )
    monkeypatch.chdir(tmp_path)
    assert main(["tools", "tools.json", "--module", "declared"]) == 0
    text = (tmp_path / "declared.py").read_text()
    assert "from vend_mcp._runtime." in text and "mcpgen" not in text


def test_a_long_description_leaves_the_projects_linter_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by a fresh-user review: a tool description over 120 characters made E501 in both
    modules, so a scaffold's own test (ruff at line length 120) failed after `mcp-codegen tools`.
    The generated module is left alone by the author's linter (as client stubs are); the handlers
    module, the author's, gets the description wrapped."""
    long = " ".join(["Returns the forecast for a city over the next days, in the units asked for."] * 5)
    url = "https://example.com/" + "a" * 150
    tools = {"tools": [{"name": "wordy", "description": f"{long}\n\nSee {url}", "inputSchema": {"type": "object"}}]}
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    (tmp_path / "ruff.toml").write_text('line-length = 120\n[lint]\nselect = ["E", "F", "W", "I", "UP", "B"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["tools", "tools.json", "--module", "declared"]) == 0
    linted = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "declared.py", "declared_handlers.py"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout
    handlers = (tmp_path / "declared_handlers.py").read_text()
    assert max(len(line) for line in handlers.splitlines() if url not in line) <= 120
    assert url in handlers and "over the next days" in handlers


CONTACT = {
    "name": "contact",
    "inputSchema": {
        "type": "object",
        "properties": {
            "contactMethod": {"enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "anyOf": [{"required": ["phone"]}, {"required": ["email"]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
    },
    "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "not": {"required": ["secret"]}},
}


class Open(SpecModel):
    model_config = ConfigDict(extra="allow")


async def contact(args: Open) -> Open:
    return Open(n=1, **({"secret": "x"} if args.model_extra and "leak" in args.model_extra else {}))


def test_schema_first_arguments_and_results_are_checked_against_the_schemas_as_advertised() -> None:
    """A server review: keywords the generated models cannot express (``if``/``then``, ``not``, an
    ``anyOf`` whose branches only require a member) were advertised and not checked, so arguments
    the schema refuses reached the handler (tools.mdx: servers MUST validate all tool inputs) and a
    result it refuses went out as structured content."""
    app = App("contacts", surface="no_surface")
    app.tool(ToolSpec(CONTACT, Open, Open))(contact)

    async def go() -> list[Any]:
        async with Driver(app) as d:
            calls = [
                {"email": "a@b"},
                {"contactMethod": "phone", "phone": "1"},
                {},
                {"contactMethod": "phone", "email": "a@b"},
                {"email": "a@b", "leak": True},
            ]
            return [await d.call("contact", arguments) for arguments in calls]

    fine, also_fine, neither, phone_missing, leaked = run(go())
    assert fine["structuredContent"] == {"n": 1} and also_fine["structuredContent"] == {"n": 1}
    assert neither["isError"] and "is not valid under any of the given schemas" in neither["content"][0]["text"], (
        neither
    )
    assert phone_missing["isError"] and "'phone' is a required property" in phone_missing["content"][0]["text"]
    assert leaked["isError"] and "structuredContent" not in leaked, leaked
    assert "should not be valid under" in leaked["content"][0]["text"], leaked


FORECAST_OUT = {
    "name": "forecast",
    "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
    "outputSchema": {
        "type": "object",
        "properties": {
            "temp": {"type": "number"},
            "note": {"type": "string"},
            "units": {"type": "string"},
            "alerts": {
                "type": "array",
                "items": {"type": "object", "properties": {"kind": {"type": "string"}, "detail": {"type": "string"}}},
            },
        },
        "required": ["temp", "units"],
    },
}


class Alert(SpecModel):
    kind: str
    detail: str | None = None


class ForecastOut(SpecModel):
    temp: float
    note: str | None = None
    units: str = "c"
    alerts: list[Alert] = Field(default_factory=list)


async def forecast(args: Open) -> ForecastOut:
    city = (args.model_extra or {}).get("city")
    if city == "null":  # None set by hand where the schema has no null, at two levels
        return ForecastOut(temp=1.0, note=None, alerts=[Alert(kind="fog", detail=None)])
    out = ForecastOut(temp=1.0)
    if city == "storm":
        out.alerts.append(Alert(kind="storm"))  # a default changed in place, its item's detail unset
    return out


def test_an_optional_output_field_left_unset_or_set_to_none_is_absent_not_null() -> None:
    """A review of the diff: the output model's optional fields (``str | None = None``, as the
    generator writes them) were dumped as null, which the outputSchema refuses for a string; what
    the handler did not set is now absent. A fresh user's review: one set to None (which the type
    allows and mypy passes) failed the call; where the schema lets it be absent but not null, it
    is absent too."""
    app = App("forecasts", surface="no_surface")
    app.tool(ToolSpec(FORECAST_OUT, Open, ForecastOut))(forecast)

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call("forecast", {"city": city}) for city in ("oslo", "null", "storm")]

    unset, explicit, storm = run(go())
    # the unset None is absent; defaults that are values stay (a second diff review: dropping
    # every unset field lost them, and a required field with a default failed the schema)
    assert unset["structuredContent"] == {"temp": 1.0, "units": "c", "alerts": []}, unset
    assert storm["structuredContent"] == {"temp": 1.0, "units": "c", "alerts": [{"kind": "storm"}]}, storm
    assert explicit["structuredContent"] == {"temp": 1.0, "units": "c", "alerts": [{"kind": "fog"}]}, explicit


def test_only_nulls_the_schema_refuses_and_lets_be_absent_are_dropped() -> None:
    from mcpgen._runtime.server.authoring.specs import refused_nones_dropped

    schema = {
        "type": "object",
        "properties": {
            "gone": {"type": "string"},
            "nullable": {"type": ["string", "null"]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "needed": {"type": "string"},
            "any": {},
            "point": {"$ref": "#/$defs/Point"},
        },
        "required": ["needed"],
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"enum": [1, 2]}}}},
    }
    data = {"gone": None, "nullable": None, "either": None, "needed": None, "any": None, "extra": None}
    data["point"] = {"x": None, "y": None}
    assert refused_nones_dropped(data, schema, schema) == {
        "nullable": None,
        "either": None,
        "needed": None,  # required: left for the schema check to refuse
        "any": None,
        "extra": None,  # not described: the schema's own rule judges it
        "point": {},
    }


def test_a_number_is_int_or_float_so_an_integer_stays_one(project: Path) -> None:
    """``number`` was ``float``: a handler's ``highs=[20]`` went out as ``[20.0]``."""
    assert "highs: list[int | float]" in (project / "declared.py").read_text()
    sys.path.insert(0, str(project))
    try:
        declared = __import__("declared")
        assert declared.GetForecastOutput(city="x", highs=[20, 2.5]).model_dump()["highs"] == [20, 2.5]
        assert type(declared.GetForecastOutput(city="x", highs=[20]).highs[0]) is int
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("declared", None)
