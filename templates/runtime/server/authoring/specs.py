"""Schema-first tools: a tool declared by its JSON definition, with models generated from its schemas.

``mcp-codegen tools TOOLS.json --module pkg.declared`` writes ``pkg/declared.py`` (generator-owned):
for each tool of the file (a ``tools/list`` result), an arguments model, an output model when it
has an ``outputSchema``, and a ``ToolSpec`` binding them to the definition; and, once, a handlers
module with one typed stub per tool for the author to fill in (``app.tool(SPEC)(handler)``).

Such a tool is listed exactly as its definition says; its arguments are checked against its
``inputSchema`` as advertised (``jsonschema``, the reference validator: keywords a model cannot
express, ``if``/``then``, ``not``, a branch that only requires a member, are enforced too;
tools.mdx: servers MUST validate all tool inputs) after the arguments model validated them
(strictly, as JSON: its messages come first); the handler receives the model; its result is
validated by the output model and checked against the ``outputSchema`` the same way, then sent
as ``structuredContent``.
``jsonschema`` is imported at the first call of such a tool, not at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, RootModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from ...codec import MAX_REPORTED_ERRORS, shortened
from .signatures import (
    ArgumentsError,
    OutputError,
    RevisionTypes,
    content_blocks,
    validation_problems,
    with_the_rest_counted,
)

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

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


class SchemaCheck:
    """A tool's advertised JSON Schema, checked as written by ``jsonschema`` (its ``$schema``, else
    2020-12, MCP's default dialect; ``format`` an annotation, as 2020-12 has it); the validator
    is built at the first check."""

    def __init__(self, schema: Mapping[str, Any], whole: str) -> None:
        self.schema = schema
        self.whole = whole  # what an error of the instance itself is called
        self._validator: Validator | None = None

    def validator(self) -> Validator:
        if self._validator is None:
            from jsonschema.validators import Draft202012Validator, validator_for

            self._validator = validator_for(self.schema, default=Draft202012Validator)(self.schema)
        return self._validator

    def problems(self, instance: Any) -> list[tuple[str, str]]:
        """One ``(where, what)`` per error, at most ``MAX_REPORTED_ERRORS`` and a count of the rest
        (the text goes back to the client, bounded whatever was sent); none when it is valid."""
        errors = sorted(self.validator().iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
        problems = [
            (shortened(".".join(str(p) for p in error.absolute_path) or self.whole), shortened(error.message))
            for error in errors[:MAX_REPORTED_ERRORS]
        ]
        return with_the_rest_counted(problems, len(errors))


class SpecArguments:
    """Arguments validated by the spec's model, then checked against its ``inputSchema`` (what
    the model cannot express); the handler's one parameter receives the model."""

    def __init__(self, spec: ToolSpec[Any, Any], parameter: str) -> None:
        self.spec = spec
        self.parameter = parameter
        self.check = SchemaCheck(self.schema(), "(arguments)")

    def schema(self) -> dict[str, Any]:
        return dict(self.spec.definition.get("inputSchema", {}))

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:  # the model first: its messages name the arguments as a typed tool's do
            instance = self.spec.arguments.model_validate_json(to_json(arguments), strict=True)
        except ValidationError as exc:
            raise ArgumentsError(validation_problems(exc)) from None
        problems = self.check.problems(arguments)  # what the model could not express
        if problems:
            raise ArgumentsError(problems)
        return {self.parameter: instance}


def unset_nones_dropped(value: Any, dumped: Any) -> Any:
    """``dumped`` (``value`` dumped whole, with wire names) without the fields a model left unset
    whose value is None, at every level (each model's own ``model_fields_set``): an optional field
    of a generated model (``X | None = None``) is absent, as its schema has it (written as null, it
    failed an outputSchema whose field is no null), while a default that is a value, or one
    changed in place (a default list appended to), is kept, and so is a None the handler set."""
    if isinstance(value, RootModel):
        return unset_nones_dropped(value.root, dumped)
    if isinstance(value, BaseModel) and isinstance(dumped, dict):
        fields = type(value).model_fields
        wire = {field.serialization_alias or field.alias or name: name for name, field in fields.items()}
        out = {}
        for key, item in dumped.items():
            name = wire.get(key)
            if name is None:  # an extra member: as it was given
                out[key] = item
                continue
            attribute = getattr(value, name)
            if attribute is None and name not in value.model_fields_set:
                continue
            out[key] = unset_nones_dropped(attribute, item)
        return out
    if isinstance(value, list | tuple) and isinstance(dumped, list) and len(value) == len(dumped):
        return [unset_nones_dropped(a, b) for a, b in zip(value, dumped, strict=True)]
    if isinstance(value, dict) and isinstance(dumped, dict) and len(value) == len(dumped):
        return {key: unset_nones_dropped(v, dumped[key]) for key, v in zip(dumped, value.values(), strict=True)}
    return dumped


def refused_nones_dropped(data: Any, schema: Any, root: Mapping[str, Any]) -> Any:
    """``data`` without the members that are null where ``schema`` lets them be absent but not null
    (an optional field the generated model types ``X | None``, set to None by the handler: the
    type allowed it, the outputSchema refused it; absent is the one way to send it). ``root``:
    the schema ``$ref``s point into. Anything else is left for the schema check to judge."""
    schema = _resolved(schema, root)
    if not isinstance(schema, Mapping):
        return data
    if isinstance(data, dict):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return data
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        out = {}
        for key, item in data.items():
            sub = properties.get(key)
            if sub is None:
                out[key] = item
            elif item is None and key not in required and not _allows_null(sub, root, 0):
                continue
            else:
                out[key] = refused_nones_dropped(item, sub, root)
        return out
    items = schema.get("items")
    if isinstance(data, list) and isinstance(items, Mapping):
        return [refused_nones_dropped(item, items, root) for item in data]
    return data


def _resolved(schema: Any, root: Mapping[str, Any], depth: int = 0) -> Any:
    """``schema`` with its local ``$ref`` followed (a cycle or a miss: None, judged by nobody)."""
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        ref = schema["$ref"]
        if not ref.startswith("#") or depth > 32:
            return None
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        schema, depth = target, depth + 1
    return schema


def _allows_null(schema: Any, root: Mapping[str, Any], depth: int) -> bool:
    """Whether ``schema`` might take null (True when unsure: nothing is dropped then)."""
    schema = _resolved(schema, root)
    if not isinstance(schema, Mapping) or depth > 32:
        return True
    kind = schema.get("type")
    if (isinstance(kind, str) and kind != "null") or (isinstance(kind, list) and "null" not in kind):
        return False
    if "const" in schema and schema["const"] is not None:
        return False
    if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
        return False
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches and not any(_allows_null(b, root, depth + 1) for b in branches):
            return False
    branches = schema.get("allOf")
    return not (isinstance(branches, list) and not all(_allows_null(b, root, depth + 1) for b in branches))


class SpecOutput:
    """The result validated by the spec's output model (when it has one) and sent as structured content."""

    def __init__(self, spec: ToolSpec[Any, Any], types: RevisionTypes) -> None:
        self.types = types
        self.adapter: TypeAdapter[Any] | None = TypeAdapter(spec.output) if spec.output is not None else None
        schema = spec.definition.get("outputSchema")
        self.schema: dict[str, Any] | None = dict(schema) if isinstance(schema, Mapping) else None
        self.check = SchemaCheck(self.schema, "(result)") if self.schema is not None else None

    def result(self, value: Any) -> Any:
        if self.types.passthrough(value, self.types.call_tool_result):
            return value
        if self.adapter is None:
            return {"content": content_blocks(value, self.types)}
        try:
            validated = self.adapter.validate_python(value)
            data = unset_nones_dropped(validated, self.adapter.dump_python(validated, mode="json", by_alias=True))
            if self.schema is not None:
                data = refused_nones_dropped(data, self.schema, self.schema)
        except ValidationError as exc:
            raise OutputError("; ".join(f"{f}: {m}" for f, m in validation_problems(exc, whole="(result)"))) from None
        problems = self.check.problems(data) if self.check is not None else []
        if problems:  # the outputSchema as advertised (tools.mdx: structured results MUST conform)
            raise OutputError("; ".join(f"{f}: {m}" for f, m in problems))
        return {"content": [{"type": "text", "text": to_json(data).decode()}], "structuredContent": data}
