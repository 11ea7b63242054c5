"""Schema-first tools: a tool declared by its JSON definition, with models generated from its schemas.

``mcp-codegen tools TOOLS.json --module pkg.declared`` writes ``pkg/declared.py`` (generator-owned):
for each tool of the file (a ``tools/list`` result), an arguments model, an output model when it
has an ``outputSchema``, and a ``ToolSpec`` binding them to the definition; and, once, a handlers
module with one typed stub per tool for the author to fill in (``app.tool(SPEC)(handler)``).

Such a tool is listed exactly as its definition says; its arguments are validated (strictly, as
JSON) by the arguments model, which its handler receives; its result is validated by the output
model and sent as ``structuredContent``. Keywords a model cannot express (``if``/``then``,
``not``) are advertised but not checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from .signatures import ArgumentsError, OutputError, RevisionTypes, content_blocks, validation_problems

A = TypeVar("A", bound=BaseModel)
O = TypeVar("O")  # noqa: E741 (the output type)


class ToolSpec(Generic[A, O]):
    """A tool's definition (its ``tools/list`` entry, verbatim) and the models of its schemas."""

    __slots__ = ("arguments", "definition", "output")

    def __init__(self, definition: Mapping[str, Any], arguments: type[A], output: type[O] | None = None) -> None:
        self.definition = definition
        self.arguments = arguments
        self.output = output

    @property
    def name(self) -> str:
        return str(self.definition["name"])


class SpecArguments:
    """Arguments validated by the spec's model; the handler's one parameter receives the model."""

    def __init__(self, spec: ToolSpec[Any, Any], parameter: str) -> None:
        self.spec = spec
        self.parameter = parameter

    def schema(self) -> dict[str, Any]:
        return dict(self.spec.definition.get("inputSchema", {}))

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            instance = self.spec.arguments.model_validate_json(to_json(arguments), strict=True)
        except ValidationError as exc:
            raise ArgumentsError(validation_problems(exc)) from None
        return {self.parameter: instance}


class SpecOutput:
    """The result validated by the spec's output model (when it has one) and sent as structured content."""

    def __init__(self, spec: ToolSpec[Any, Any], types: RevisionTypes) -> None:
        self.types = types
        self.adapter: TypeAdapter[Any] | None = TypeAdapter(spec.output) if spec.output is not None else None
        schema = spec.definition.get("outputSchema")
        self.schema: dict[str, Any] | None = dict(schema) if isinstance(schema, Mapping) else None

    def result(self, value: Any) -> Any:
        if self.types.passthrough(value, self.types.call_tool_result):
            return value
        if self.adapter is None:
            return {"content": content_blocks(value, self.types)}
        try:
            data = self.adapter.dump_python(self.adapter.validate_python(value), mode="json", by_alias=True)
        except ValidationError as exc:
            raise OutputError("; ".join(f"{f}: {m}" for f, m in validation_problems(exc, whole="(result)"))) from None
        return {"content": [{"type": "text", "text": to_json(data).decode()}], "structuredContent": data}
