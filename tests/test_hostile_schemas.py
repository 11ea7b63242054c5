"""Schemas we did not write: hostile names and strings generate safe code or fail clearly.

Every string a schema carries (descriptions, property names, enum values, consts, method
names) reaches generated code only as data: the output compiles, imports, round-trips
instances, and executes nothing the schema smuggled in. Names that cannot be classes fail
with an error naming the definition.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_schema_codegen.commands.scaffold import scaffold
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.pipeline import Options, generate
from tests.conftest import ROOT, SCHEMA_DIR

VERSION = "2026-07-28"


def payloads(sentinel: Path) -> list[str]:
    touch = f"__import__('pathlib').Path({str(sentinel)!r}).touch()"
    return [
        f'"""; {touch}; """',
        f"'''; {touch}; '''",
        f'\\"); {touch} #',
        f"\n{touch}\n",
        f"{{{{ {touch} }}}} {{% raw %}} {{# #}}",
        f'\\n\\\\" \\u2028 \u2028 \x00 ünïcødé ✓ 🚀 {touch}',
        "x" * 100_000,
    ]


def hostile_schema(sentinel: Path) -> dict[str, Any]:
    schema = json.loads((SCHEMA_DIR / VERSION / "schema.json").read_text())
    defs = schema["$defs"]
    evil = payloads(sentinel)
    for i, name in enumerate(sorted(defs)):
        defs[name]["description"] = evil[i % len(evil)]
    tool = defs["Tool"]["properties"]
    for i, prop in enumerate(
        [
            "class",
            "def",
            "__init__",
            "model_config",
            "model_dump",
            "self",
            "x\"y'z",
            "a b",
            "ünï",
            "_private",
            "1abc",
            "None",
            "__class__",
            "{{x}}",
        ]
    ):
        tool[prop] = {"type": "string", "description": evil[i % len(evil)]}
    defs["HostileValues"] = {
        "type": "object",
        "properties": {
            "level": {"enum": [e[:200] for e in evil[:6]] + ['it\'s "quoted" \\'], "type": "string"},
            "tag": {"const": evil[0], "type": "string"},
        },
        "required": ["tag"],
    }
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/HostileRequest"})
    defs["HostileRequest"] = copy.deepcopy(defs["DiscoverRequest"])
    defs["HostileRequest"]["properties"]["method"]["const"] = evil[2]
    defs["HostileResult"] = copy.deepcopy(defs["CompleteResult"])
    defs["FieldRequest"] = copy.deepcopy(defs["DiscoverRequest"])  # a name the module could shadow
    defs["Field"] = {"type": "object", "properties": {"v": {"type": "integer"}}}
    return schema


def write_schema_dir(tmp: Path, schema: dict[str, Any]) -> Path:
    root = tmp / "schema"
    (root / VERSION).mkdir(parents=True)
    data = json.dumps(schema).encode()
    (root / VERSION / "schema.json").write_bytes(data)
    (root / "patches").mkdir()
    (root / "patches" / f"{VERSION}.json").write_bytes((SCHEMA_DIR / "patches" / f"{VERSION}.json").read_bytes())
    (root / "overlay.json").write_bytes((SCHEMA_DIR / "overlay.json").read_bytes())
    lock = json.loads((SCHEMA_DIR / "lock.json").read_text())
    entry = {"era": "modern", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "url": "file:///hostile"}
    lock["versions"] = {VERSION: entry}
    (root / "lock.json").write_text(json.dumps(lock))
    return root


def test_hostile_strings_stay_data(tmp_path: Path) -> None:
    sentinel = tmp_path / "PWNED"
    schema_dir = write_schema_dir(tmp_path, hostile_schema(sentinel))
    out = tmp_path / "out"
    generate(Options(schema_dir=schema_dir, out=out))
    assert not sentinel.exists()
    package = out / "mcpgen" / "v2026_07_28"
    for path in sorted((out / "mcpgen").rglob("*.py")):
        compile(path.read_text(encoding="utf-8"), str(path), "exec")  # compiles; nothing runs
    probe = f"""
import json, pathlib
from mcpgen.v2026_07_28 import models as m, METHODS
assert not pathlib.Path({str(sentinel)!r}).exists()
tool = {{"name": "t", "inputSchema": {{"type": "object"}}, "class": "c", "x\\"y'z": "q", "a b": "s", "None": "n"}}
parsed = m.Tool.model_validate_json(json.dumps(tool))
assert json.loads(parsed.model_dump_json()) == tool, parsed.model_dump_json()
spec = [s for s in METHODS if s.message is m.HostileRequest][0]
print(json.dumps({{"method": spec.name, "field": m.FieldModel.__name__}}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=out, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["method"] == payloads(sentinel)[2] and result["field"] == "FieldModel"
    assert not sentinel.exists()
    assert "HostileValues" in (package / "models.py").read_text()


def injections(sentinel: Path) -> list[str]:
    """Strings built to break out of each way a template could place them: "...", '...', docstrings, lines."""
    call = f"__import__('pathlib').Path({str(sentinel)!r}).touch()"
    return [
        f'x": {call}, "y',  # out of a "..." literal (the method name in a dict or a call)
        f"x': {call}, 'y",  # out of a '...' literal
        f'x""" + str({call}) + """y',  # out of a docstring
        f"x\n{call}\n#",  # onto a line of its own
        f'x\\\\"); {call} #',  # backslashes before a quote
    ]


def every_template_schema(sentinel: Path) -> dict[str, Any]:
    """2026-07-28 plus hostile methods, property names, titles, enum values and descriptions.

    Each hostile method is a client request with params and a result, so its wire name reaches
    every revision template: the method table, the codec, the server's handler table and
    docstrings, the typed client's calls, casts and docstrings.
    """
    schema = json.loads((SCHEMA_DIR / VERSION / "schema.json").read_text())
    defs = schema["$defs"]
    evil = injections(sentinel)
    for i, name in enumerate(evil):
        stem = f"Hostile{i}"
        request = copy.deepcopy(defs["CompleteRequest"])
        request["properties"]["method"]["const"] = name
        request["properties"]["params"] = {"$ref": f"#/$defs/{stem}RequestParams"}
        request["title"] = name
        request["description"] = name
        params = copy.deepcopy(defs["PaginatedRequestParams"])
        params["title"] = name
        params["properties"][name] = {"type": "string", "title": name, "description": name}  # property name
        params["properties"]["level"] = {"type": "string", "enum": evil, "title": name}  # enum values
        params["properties"]["tag"] = {"type": "string", "const": name, "default": name}
        params["required"] = [*params.get("required", ()), "tag"]
        result = copy.deepcopy(defs["CompleteResult"])
        result["title"] = name
        result["properties"]["note"] = {"type": "string", "default": name, "description": name}
        defs[f"{stem}Request"] = request
        defs[f"{stem}RequestParams"] = params
        defs[f"{stem}Result"] = result
        defs["ClientRequest"]["anyOf"].append({"$ref": f"#/$defs/{stem}Request"})
    return schema


def test_hostile_names_through_every_template_run_nothing(tmp_path: Path) -> None:
    """Method names, property names, titles and enum values from a schema are data in every module."""
    sentinel = tmp_path / "PWNED"
    schema_dir = write_schema_dir(tmp_path, every_template_schema(sentinel))
    out = tmp_path / "out"
    try:
        generate(Options(schema_dir=schema_dir, out=out))
    except GeneratorError as exc:  # refusing to render is safe too, but these names must be served
        raise AssertionError(f"generation failed: {exc}") from None
    assert not sentinel.exists()
    evil = injections(sentinel)
    probe = f"""
import json, pathlib
import mcpgen
from mcpgen.v2026_07_28 import client, codec, models, protocol, server, METHODS
assert not pathlib.Path({str(sentinel)!r}).exists()
stubs = dict(server.Server.handlers)
tables = sorted(s.name for s in METHODS if s.message.__name__.startswith("Hostile"))
clients = sorted(n for n in dir(client.Client) if n.startswith("hostile"))
print(json.dumps({{"stubs": stubs, "table": tables, "clients": clients}}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=out, check=False)
    assert not sentinel.exists(), "importing the generated package ran code from the schema"
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert seen["table"] == sorted(evil)
    assert {name: seen["stubs"][name] for name in evil} == {name: f"hostile{i}" for i, name in enumerate(evil)}
    assert seen["clients"] == [f"hostile{i}" for i in range(len(evil))]

    # the scaffold's templates, from the same schema: the project's generated server module has the
    # hostile handlers, and the user's server (an App on it) imports and lists its tool
    project = scaffold("hostile-project", tmp_path / "projects", VERSION, schema_dir)
    probe = """
import json
import hostile_project.server as user
from hostile_project_mcp import server as s
print(json.dumps({"stubs": dict(s.Server.handlers), "tools": [t["name"] for t in user.app.listing("tools")]}))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=project, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert {name: seen["stubs"][name] for name in evil} == {name: f"hostile{i}" for i, name in enumerate(evil)}
    assert seen["tools"] == ["add"]
    assert not sentinel.exists()


@pytest.mark.parametrize(
    "name", ['Evil"Name', "has space", "class", "9lives", "ünïcødé", "a.b", "match", "None", "True"]
)
def test_a_definition_name_that_is_no_class_name_fails_naming_it(tmp_path: Path, name: str) -> None:
    schema = json.loads((SCHEMA_DIR / VERSION / "schema.json").read_text())
    schema["$defs"][name] = {"type": "object", "properties": {"x": {"type": "string"}}}
    schema_dir = write_schema_dir(tmp_path, schema)
    with pytest.raises(GeneratorError) as info:
        generate(Options(schema_dir=schema_dir, out=tmp_path / "out"))
    # a keyword is said to be one (a spec-change review: "None" was refused by a rule it meets)
    why = "is a Python keyword" if name in ("class", "match", "None", "True") else "not a valid Python class name"
    assert f"definition {name!r}" in str(info.value) and why in str(info.value)
    assert not (tmp_path / "out" / "mcpgen").exists()


@pytest.mark.parametrize(
    ("names", "refused", "written"),
    [(["my_tool"], "my_tool", "MyTool"), (["Tool_1"], "Tool_1", "Tool1"), (["Tool", "tool"], "tool", "Tool")],
)
def test_a_definition_name_the_models_would_rename_fails_naming_it(
    tmp_path: Path, names: list[str], refused: str, written: str
) -> None:
    """datamodel-code-generator writes ``tool`` as class ``Tool`` and ``my_tool`` as ``MyTool``,
    so templates would name a class the module does not have (it failed after the models were
    written, as "emitted no class of this name (renamed?)"); it is refused first, saying so."""
    schema = json.loads((SCHEMA_DIR / VERSION / "schema.json").read_text())
    for name in names:
        schema["$defs"][name] = {"type": "object", "properties": {"x": {"type": "string"}}}
    with pytest.raises(GeneratorError) as info:
        generate(Options(schema_dir=write_schema_dir(tmp_path, schema), out=tmp_path / "out"))
    said = str(info.value)
    assert said.startswith(f"schema {VERSION}, definition {refused!r}: "), said
    assert f"datamodel-code-generator keeps: it would write {written!r}" in said, said
    assert not (tmp_path / "out" / "mcpgen").exists()


def test_a_reference_to_nothing_fails_naming_its_definition(tmp_path: Path) -> None:
    """A ``$ref`` that resolves to nothing was generated as ``Any`` (``Tool.name`` took 12345);
    ``schema sync`` refuses it, and so does generating from a lock that has it. A "$ref" in a
    value (a ``default``) is data, not a reference."""
    from mcp_schema_codegen.commands.schema import validate

    schema = json.loads((SCHEMA_DIR / VERSION / "schema.json").read_text())
    schema["$defs"]["Tool"]["properties"]["title"] = {"type": "object", "default": {"$ref": "#/$defs/Nowhere"}}
    validate(json.dumps(schema).encode(), VERSION)  # data is not looked into
    schema["$defs"]["Tool"]["properties"]["name"] = {"$ref": "#/$defs/NoSuchThing"}
    with pytest.raises(GeneratorError) as refused:
        validate(json.dumps(schema).encode(), VERSION)
    said = str(refused.value)
    assert "definition 'Tool'" in said and "'#/$defs/NoSuchThing' at /$defs/Tool/properties/name" in said, said
    schema_dir = write_schema_dir(tmp_path, schema)
    with pytest.raises(GeneratorError, match="names nothing in the schema"):
        generate(Options(schema_dir=schema_dir, out=tmp_path / "out"))
    assert not (tmp_path / "out" / "mcpgen").exists()


def test_no_eval_or_exec_anywhere_in_the_generator_or_runtime() -> None:
    pattern = re.compile(r"(?<![.\w])(eval|exec|compile)\s*\(")  # re.compile( is fine
    for root in (ROOT / "codegen", ROOT / "templates"):
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix in (".py", ".j2"):
                hits = [line for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line)]
                assert hits == [], f"{path}: {hits}"
