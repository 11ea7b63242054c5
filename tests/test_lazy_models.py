"""Models built on first use: a server imports and builds only what its messages touch (issue 15).

The revision's ``models`` module is an index over ``_models`` submodules (one per group of
definitions that refer to each other, ``backend/split.py``); the method table and the codec
name models by ``ModelRef``. These tests pin what a cold server pays for: nothing at import,
the closure of ``tools/call`` on a first ``tools/call``, never the models of other methods.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcp_schema_codegen.backend.split import module_name, segment, source_lines, split
from mcp_schema_codegen.errors import GeneratorError
from tests.conftest import GENERATED, VERSIONS

PACKAGES = {v: "v" + v.replace("-", "_") for v in VERSIONS}


def probe(code: str, then: str = "") -> Any:
    """Run ``code``, then ``then``, in a fresh interpreter (nothing imported yet); the JSON it prints last."""
    source = textwrap.dedent(code) + then
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, cwd=GENERATED, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


LOADED = """
import json, sys
print(json.dumps(sorted(m.rsplit(".", 1)[1] for m in sys.modules if "._models." in m or "._results." in m)))
"""


def test_importing_a_server_builds_no_model() -> None:
    loaded = probe("import mcpgen.v2026_07_28.server, mcpgen.v2025_11_25.server, mcpgen.v2026_07_28.models", LOADED)
    assert loaded == []


def test_a_first_tools_call_imports_its_models_only() -> None:
    loaded = probe(
        """
        import asyncio
        from mcpgen.v2026_07_28 import models as m, server as s
        from mcpgen._runtime.server.router import Connection

        class Server(s.Server):
            async def call_tool(self, params, ctx):
                return s.CallToolResult(content=[m.TextContent(type="text", text=params.arguments["text"])])

        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
        meta["io.modelcontextprotocol/clientCapabilities"] = {}
        params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}

        async def discard(data): pass

        reply = asyncio.run(Server().router.handle(call, discard, Connection()))
        assert b'"text":"hi"' in reply.body, reply
        """,
        LOADED,
    )
    assert {"call_tool_request", "call_tool_request_params", "call_tool_result", "text_content"} <= set(loaded)
    # the models of methods never called are not even imported
    for other in ("tool", "list_tools_result", "get_prompt_result", "read_resource_result", "input_required_result"):
        assert other not in loaded
    modules = len(list((GENERATED / "mcpgen" / "v2026_07_28" / "_models").glob("*.py")))
    assert len(loaded) < modules / 3, (len(loaded), modules)


HEAVY = ("httpx", "uvicorn", "starlette", "h11", "httptools")

STDIO_SERVER = f"""
import atexit, json, sys
from mcpgen.v2026_07_28 import server as s

atexit.register(lambda: print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr))

class Server(s.Server):
    async def list_tools(self, params, ctx):
        return s.ListToolsResult(tools=[])

Server().run_stdio()
"""


def test_stdio_client_and_server_never_import_the_http_stack(tmp_path: Path) -> None:
    """A client of a stdio server, and the server, connect, talk and close without importing httpx,
    uvicorn or their parts (the HTTP transport loads on first use: a URL, or ``HttpTransport``)."""
    server_log = tmp_path / "server.err"
    loaded = probe(
        f"""
        import asyncio, json, sys
        import mcpgen

        async def main():
            with open({str(server_log)!r}, "w") as err:
                async with await mcpgen.connect([sys.executable, "-c", {STDIO_SERVER!r}], stderr=err) as client:
                    assert (await client.list_tools()).tools == []
        asyncio.run(main())
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
        """
    )
    assert loaded == [], "the stdio client imported the HTTP stack"
    assert json.loads(server_log.read_text().splitlines()[-1]) == [], "the stdio server imported the HTTP stack"
    on_use = "import mcpgen._runtime.client as c\nc.HttpTransport\nprint(json.dumps('httpx' in sys.modules))"
    assert probe("import json, sys\n" + on_use), "HttpTransport did not load on first use"


def test_building_an_app_imports_no_interim_result_model() -> None:
    """An ``App`` recognises the MRTR interim result (a tool returning it, an annotation naming it)
    without importing it at construction: importing it and the elicitation and sampling models it
    refers to cost an App about 40 ms of start-up."""
    loaded = probe(
        """
        from mcpgen.v2026_07_28.server import App

        app = App("lazy")

        @app.tool
        def echo(text: str) -> str:
            \"\"\"Echo.\"\"\"
            return text

        app.server.router
        """,
        LOADED,
    )
    assert "input_required_result" not in loaded and "elicit_request" not in loaded


@pytest.mark.parametrize("version", VERSIONS)
def test_every_definition_is_reachable_through_the_index(version: str) -> None:
    found = probe(
        f"""
        import json, sys
        from mcpgen.{PACKAGES[version]} import models
        names = list(models.__all__)
        assert sorted(names) == names and set(names) <= set(dir(models))
        for name in names:
            value = getattr(models, name)
            module = sys.modules[f"mcpgen.{PACKAGES[version]}._models.{{models._MODULES[name]}}"]
            assert getattr(module, name) is value, name
        star = {{}}
        exec("from mcpgen.{PACKAGES[version]}.models import *", star)
        assert set(names) <= set(star)
        print(json.dumps(len(names)))
        """
    )
    assert found > 70


def test_an_interim_result_is_recognised_without_importing_it_first() -> None:
    """``Revision.is_input_required`` answers from what is loaded: a model never imported has no
    instances, and one imported through another submodule (not the index) is still recognised."""
    assert probe(
        """
        import json, sys
        from mcpgen.v2026_07_28.codec import REVISION
        assert REVISION.is_input_required(object()) is False
        assert not any(m.endswith("._models.input_required_result") for m in sys.modules)
        from mcpgen.v2026_07_28._models.input_required_result import InputRequiredResult
        interim = InputRequiredResult.model_validate({"resultType": "input_required", "requestState": "s"})
        print(json.dumps([REVISION.is_input_required(interim), REVISION.input_required_model() is InputRequiredResult]))
        """
    ) == [True, True]


SOURCE = '''
from __future__ import annotations

from typing import Union

from pydantic import BaseModel
from typing_extensions import TypeAliasType


class Leaf(BaseModel):
    """A leaf: no references."""

    x: int
    """Mentions Tree in a docstring only."""


Cursor = TypeAliasType("Cursor", str)
"""An alias with a docstring."""


class Tree(BaseModel):
    children: list[Node]
    leaf: Leaf


class Node(BaseModel):
    tree: Tree | None = None


Either = TypeAliasType("Either", Union["Leaf", "Import"])


class Import(BaseModel):
    pass


Tree.model_rebuild()
'''


def test_split_groups_cycles_and_imports_forward_references() -> None:
    parts = split(SOURCE, "x")
    groups = [m.definitions for m in parts.modules]
    assert ("Tree", "Node") in groups  # a cycle stays in one module, in source order
    assert ("Leaf",) in groups and ("Cursor",) in groups
    by_name = {m.name: m for m in parts.modules}
    assert parts.where["Import"] == "import_model"  # a keyword is not a module name
    either = by_name[parts.where["Either"]]
    assert either.imports == {"import_model": ("Import",), "leaf": ("Leaf",)}  # string references count
    assert by_name["leaf"].imports == {}  # a docstring is not a reference
    assert '"""An alias with a docstring."""' in by_name["cursor"].body
    assert "model_rebuild" not in "".join(m.body for m in parts.modules)
    order = [m.name for m in parts.modules]
    for module in parts.modules:  # every module after those it imports
        assert all(order.index(dep) < order.index(module.name) for dep in module.imports)


def test_split_refuses_what_it_cannot_place() -> None:
    with pytest.raises(GeneratorError, match="cannot place"):
        split(SOURCE + "\nprint('side effect')\n", "x")


def test_module_names_are_distinct_ignoring_case() -> None:
    taken: set[str] = set()
    names = []
    for definition in ("JSONValue", "JsonValue", "Class", "HTTPServer"):
        names.append(module_name(definition, taken))
        taken.add(names[-1].lower())
    assert names == ["json_value", "json_value_2", "class_model", "http_server"]


def test_statement_text_is_what_the_parser_reports() -> None:
    """Cut from lines split once: the same text as ``ast.get_source_segment`` for every statement, with
    a form feed, a line separator, non-ASCII text and CRLF line ends in the source."""
    source = (
        'class Note(BaseModel):\r\n    text: str = "a\\x0cb \u2028 \u00e9t\u00e9"\r\n'
        '    """Caf\u00e9 \x0c docs."""\r\n\r\nAlias = TypeAliasType("Alias", "Note")\r\n'
        'X = 1; Y = "\u00fc"'
    )
    tree = ast.parse(source)
    lines = source_lines(source)
    assert [segment(lines, node) for node in tree.body] == [ast.get_source_segment(source, n) for n in tree.body]
    generated = (GENERATED / "mcpgen" / "v2026_07_28" / "_models" / "call_tool_result.py").read_text()
    tree = ast.parse(generated)
    assert [segment(source_lines(generated), n) for n in tree.body] == [
        ast.get_source_segment(generated, n) for n in tree.body
    ]
