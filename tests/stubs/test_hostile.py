"""Hostile servers: names, descriptions, enum values, consts and defaults never inject code,
every name becomes a distinct valid method, wire names stay exact, and schemas that cannot
be typed become ``Any`` with a comment saying why."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_schema_codegen.commands.client_stubs import generate_client
from tests.stubs.hostile import NAMES, PAYLOAD, hostile_snapshot

FORBIDDEN_NAMES = {"__import__", "eval", "exec", "compile", "open", "os", "system", "pathlib", "getattr"}
ALLOWED_CALLS = {"Field", "ConfigDict", "Client", "Prompts", "ResourceTemplates", "_connect", "_expand", "dict"}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hostile")
    return generate_client(hostile_snapshot(), "hostile_tools", out)


def modules(package: Path) -> dict[str, ast.Module]:
    return {p.name: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(package.glob("*.py"))}


def test_nothing_from_the_server_becomes_code(package: Path) -> None:
    for name, tree in modules(package).items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Name | ast.alias):
                ident = node.id if isinstance(node, ast.Name) else node.name
                assert ident not in FORBIDDEN_NAMES, (name, ident)
            if isinstance(node, ast.Attribute):
                assert node.attr not in FORBIDDEN_NAMES, (name, node.attr)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id in ALLOWED_CALLS, (name, node.func.id)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and PAYLOAD in node.value:
                continue  # the payload is data, where it belongs
    texts = "".join(p.read_text(encoding="utf-8") for p in package.glob("*.py"))
    assert texts.count(PAYLOAD) > 10  # the payloads are in the package, as literals


def test_importing_and_using_it_executes_nothing(package: Path) -> None:
    script = """
import inspect, sys
sys.path.insert(0, sys.argv[1])
import hostile_tools as h
from hostile_tools import models as m
for cls in (h.Client, h.Prompts, h.ResourceTemplates):
    for name, fn in inspect.getmembers(cls, inspect.iscoroutinefunction):
        inspect.signature(fn)
for name in m.__all__:
    cls = getattr(m, name)
    cls.model_json_schema()
wire = {"label": '\"\"\"', "class": {'\"\"\"': 1.5}, "children": [{"x": 1}]}
node = m.Node.model_validate(wire, by_alias=True, by_name=False)
assert node.class_ is not None and node.class_.field == 1.5
assert node.model_dump(mode="json", exclude_unset=True) == wire
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(package.parent)],
        capture_output=True,
        text=True,
        cwd=package.parent,
        check=False,
    )
    assert done.stdout.strip() == "ok", done.stderr[-3000:]
    assert not (package.parent / "PWNED").exists()


def _calls(tree: ast.Module, cls: str, target: str) -> dict[str, object]:
    """method name -> the constant first argument of its call to ``target``."""
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for method in node.body:
                if isinstance(method, ast.AsyncFunctionDef):
                    for call in ast.walk(method):
                        if (
                            isinstance(call, ast.Call)
                            and (getattr(call.func, "attr", None) == target or getattr(call.func, "id", None) == target)
                            and isinstance(call.args[0], ast.Constant)
                        ):
                            found[method.name] = call.args[0].value
    return found


def test_names_become_distinct_methods_and_wire_names_stay_exact(package: Path) -> None:
    client = modules(package)["client.py"]
    snapshot = hostile_snapshot()
    tools = {**_calls(client, "Client", "_call_tool"), **_calls(client, "Client", "_call_tool_for")}
    assert sorted(map(str, tools.values())) == sorted(t["name"] for t in snapshot.tools)
    assert all(m.isidentifier() and m.isascii() for m in tools)
    assert {"get_weather", "get_weather_2", "get_weather_3", "ns_tool", "class_", "u5929_u6c17", "temperature"} <= set(
        tools
    )
    assert "aclose" not in tools and "client" not in tools and "prompts" not in tools  # the wrapper's own names
    prompts = _calls(client, "Prompts", "_get_prompt")
    assert sorted(map(str, prompts.values())) == sorted(NAMES)
    templates = _calls(client, "ResourceTemplates", "_expand")
    assert sorted(map(str, templates.values())) == sorted(t["uriTemplate"] for t in snapshot.resource_templates)


def test_untypable_schemas_become_any_with_a_reason(package: Path) -> None:
    text = (package / "client.py").read_text(encoding="utf-8") + (package / "models.py").read_text(encoding="utf-8")
    for reason in (
        "# Any: recursive schema",
        "# Any: a 'not' schema cannot be typed",
        "# Any: an 'if'/'then' schema cannot be typed",
        "# Any: a $ref outside this schema",
        "# Any: a $ref that does not resolve",
        "# Any: tuple-shaped array items",
        "# Any: the schema 'false' accepts nothing",
        "# Any: its input schema is not an object with properties",
    ):
        assert reason in text, reason
    # a default the annotation cannot hold is documented, not put in the signature
    assert "count: int | None = None," in text
    assert '(default "not a number")' in text
