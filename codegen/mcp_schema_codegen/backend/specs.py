"""A tools file (a ``tools/list`` result) -> the source of a schema-first server module and its handler stubs.

For each tool: an arguments model (its ``inputSchema``'s properties), an output model when it
has an ``outputSchema``, and a ``ToolSpec`` constant binding them to the definition, kept
verbatim as a literal; the handlers module gets one typed stub per tool and a ``register(app)``.
Models come from the same JSON Schema -> Python mapping as the typed clients
(``tools.schema_types``); every string from the file is a literal or a checked identifier.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from mcp_schema_codegen.backend.stubs import ClassView, _class_view
from mcp_schema_codegen.backend.views import Doc
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.tools.names import Namer, pascal, snake
from mcp_schema_codegen.tools.pysource import Code, Ident, docstring, finalize, literal
from mcp_schema_codegen.tools.schema_types import TypeBuilder

TEMPLATES = "specs"
# names the generated module defines or imports
RESERVED = frozenset({"Annotated", "Any", "ConfigDict", "Field", "Literal", "RootModel", "SpecModel", "ToolSpec"})


@dataclass(frozen=True)
class SpecView:
    constant: Ident  # GET_FORECAST
    handler: Ident  # get_forecast
    wire: Code  # the tool's name, a literal
    definition: Code  # the tool's definition, a literal
    arguments: Ident
    output: Ident | None
    returns: Code  # the handler's return annotation: the output model, or Any
    doc: Code


@dataclass
class SpecsView:
    module: Code  # the generated module's dotted name
    source: Code  # the tools file's name, escaped for a docstring
    runtime: Code  # the runtime's dotted import root
    specs: list[SpecView] = field(default_factory=list)
    classes: list[ClassView] = field(default_factory=list)

    @property
    def names(self) -> list[Ident]:
        names = [*(c.name for c in self.classes), *(s.constant for s in self.specs)]
        return sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[:1].isupper() else 2, n))  # isort's order


DOC_WIDTH = 100  # the handlers module is the author's, linted with their line length (the scaffold's: 120)


def wrapped(text: str) -> str:
    """A description as the docstring of a handler: each line wrapped at ``DOC_WIDTH`` (a word
    longer than that, a URL, is kept whole; the linters let such a line be)."""
    return "\n".join(
        textwrap.fill(line, DOC_WIDTH, break_long_words=False, break_on_hyphens=False) or line
        for line in text.split("\n")
    )


def read_tools(document: Any, source: str) -> list[dict[str, Any]]:
    """The tools of a ``tools/list`` result (or a bare list of tools), each with a name and an input schema."""
    tools = document.get("tools") if isinstance(document, dict) else document
    if not isinstance(tools, list) or not tools:
        raise GeneratorError(f'{source}: expected a tools/list result ({{"tools": [...]}}) with at least one tool')
    seen: set[str] = set()
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str) or not tool["name"]:
            raise GeneratorError(f"{source}: tools[{index}] has no name")
        if not isinstance(tool.get("inputSchema"), dict):
            raise GeneratorError(f"{source}: tool {tool['name']!r} has no inputSchema object")
        if tool["name"] in seen:
            raise GeneratorError(f"{source}: tool {tool['name']!r} is declared twice")
        seen.add(tool["name"])
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                check_tool_schema(tool[key], f"{source}: tool {tool['name']!r}: {key}")
    return tools


def check_tool_schema(schema: Any, where: str) -> None:
    """A tool's schema is a JSON Schema of its dialect (``$schema``, else 2020-12): the server checks
    arguments and results against it as written (``jsonschema``), which a malformed one would fail
    at every call."""
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import Draft202012Validator, validator_for

    if not isinstance(schema, dict):
        raise GeneratorError(f"{where} is not a JSON object")
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as exc:
        at = "/".join(str(part) for part in exc.path)
        raise GeneratorError(f"{where} is not a valid JSON Schema{f' at /{at}' if at else ''}: {exc.message}") from None


def build_views(tools: list[dict[str, Any]], module: str, source: str, runtime: str) -> SpecsView:
    dotted = Code(".".join(Ident(part) for part in module.split(".")))
    view = SpecsView(dotted, Doc(source), Code(".".join(Ident(p) for p in runtime.split("."))))
    builder = TypeBuilder(reserved=RESERVED)
    constants, handlers = Namer(RESERVED | {"register", "app"}), Namer({"register", "app", "App", "Context"})
    for tool in tools:
        wire = str(tool["name"])
        hint = pascal(wire, "Tool")
        arguments = builder.arguments_model(tool["inputSchema"], hint + "Arguments")
        output_schema = tool.get("outputSchema")
        output = builder.output_model(output_schema, hint + "Output") if output_schema is not None else None
        description = tool.get("description") if isinstance(tool.get("description"), str) else None
        view.specs.append(
            SpecView(
                constant=constants.take(snake(wire, "tool").upper()),
                handler=handlers.take(snake(wire, "tool")),
                wire=literal(wire),
                definition=literal(tool),
                arguments=arguments,
                output=output,
                returns=output if output is not None else Code("Any"),
                doc=docstring(wrapped((description or f"The tool {wire!r}.").strip())),
            )
        )
    view.classes = [_class_view(c) for c in builder.classes]
    return view


class SpecRenderer:
    def __init__(self, templates: Path) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates / TEMPLATES)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,
            finalize=finalize,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def spec_module(self, view: SpecsView) -> str:
        return self.env.get_template("spec.py.j2").render(v=view)

    def handlers_module(self, view: SpecsView) -> str:
        return self.env.get_template("handlers.py.j2").render(v=view)
