"""A tool's JSON Schemas -> Python annotations and pydantic model classes.

One small, total mapping: every schema gets a type, and what cannot be typed exactly
(recursion, ``not``, ``if``/``then``, tuple arrays, external ``$ref``) becomes ``Any`` with a
fixed-text comment saying why, never an error. Objects with properties become model classes
(named after where they occur; ``$defs`` after their definition name), enums and consts
``Literal``, ``anyOf``/``oneOf`` unions, ``allOf`` of objects one merged model. Local
``$ref``/``$defs``/``definitions`` are resolved. Every string from the schema reaches the
output as a literal (``pysource.literal``/``docstring``) or a checked identifier.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_schema_codegen.pointer import MISSING, lookup
from mcp_schema_codegen.tools.names import Namer, pascal, snake
from mcp_schema_codegen.tools.pysource import Code, Ident, comment, is_literal_value, literal

JSON = Any

# Keywords whose meaning no Python annotation can carry: the schema becomes Any.
UNTYPABLE = {
    "not": "Any: a 'not' schema cannot be typed",
    "if": "Any: an 'if'/'then' schema cannot be typed",
    "then": "Any: an 'if'/'then' schema cannot be typed",
    "else": "Any: an 'if'/'then' schema cannot be typed",
    "dependentSchemas": "Any: 'dependentSchemas' cannot be typed",
}
RECURSIVE = "Any: recursive schema"
EXTERNAL_REF = "Any: a $ref outside this schema"
BAD_REF = "Any: a $ref that does not resolve"
TUPLE = "Any: tuple-shaped array items"
MIXED_ALL_OF = "Any: an 'allOf' that is not all objects"
NOT_A_SCHEMA = "Any: not a JSON Schema"
STRUCTURED_ENUM = "Any: an enum of objects or arrays"
FALSE_SCHEMA = "Any: the schema 'false' accepts nothing"
ANCHOR_REF = "Any: a $ref to an anchor"
TOO_DEEP = "Any: nested too deeply"
UNHOLDABLE = "Any: a string with a lone surrogate (no model can hold it)"
MAX_DEPTH = 64  # schemas nested deeper: Any (a list nested 210 deep made code Python cannot parse)

# Names a model field may not take: what annotations refer to, and BaseModel's own attributes.
ANNOTATION_NAMES = frozenset(
    {"str", "int", "float", "bool", "list", "dict", "object", "Any", "Literal", "Annotated", "Field"}
)


def _base_model_attributes() -> frozenset[str]:
    from pydantic import BaseModel

    return frozenset(name for name in dir(BaseModel) if not name.startswith("__"))


FIELD_RESERVED = ANNOTATION_NAMES | _base_model_attributes()


@dataclass(frozen=True)
class PyType:
    """An annotation, what values it admits (to check defaults), and why it is Any, if it is."""

    code: Code
    kinds: frozenset[str] = frozenset()  # "str", "int", "float", "bool", "none", "list", "dict", "model", "any"
    literals: tuple[JSON, ...] | None = None  # a Literal's values
    why_any: str | None = None

    @property
    def comment(self) -> Code | None:
        return comment(self.why_any) if self.why_any else None

    @property
    def nullable(self) -> bool:
        return "none" in self.kinds or "any" in self.kinds

    def accepts(self, value: JSON) -> bool:
        """Whether a JSON scalar is a valid Python value of this annotation (for defaults)."""
        if "any" in self.kinds:
            return is_literal_value(value)
        if self.literals is not None and any(_same(value, v) for v in self.literals):
            return True
        checks = {
            "str": isinstance(value, str),
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, int | float) and not isinstance(value, bool) and is_literal_value(value),
            "bool": isinstance(value, bool),
            "none": value is None,
        }
        return any(checks.get(kind, False) for kind in self.kinds)


def _same(a: JSON, b: JSON) -> bool:
    return type(a) is type(b) and a == b


ANY = PyType(Code("Any"), frozenset({"any"}))


def any_because(reason: str) -> PyType:
    return PyType(Code("Any"), frozenset({"any"}), why_any=reason)


def union(members: Sequence[PyType]) -> PyType:
    """``A | B``, flattened and deduplicated; Any absorbs everything."""
    for member in members:
        if "any" in member.kinds:
            return member
    codes: list[str] = []
    kinds: set[str] = set()
    literal_values: list[JSON] = []
    only_literals = True
    for member in members:
        for part in _split_union(member.code):
            if part not in codes:
                codes.append(part)
        kinds |= member.kinds
        if member.literals is None:
            only_literals = False
        else:
            literal_values.extend(member.literals)
    if not codes:
        return ANY
    # None last, as people write it
    codes.sort(key=lambda c: c == "None")
    why = next((m.why_any for m in members if m.why_any), None)
    return PyType(Code(" | ".join(codes)), frozenset(kinds), tuple(literal_values) if only_literals else None, why)


def _split_union(code: str) -> list[str]:
    """Top-level ``|`` members of an annotation we built (brackets nest; literals never hold ``|``
    outside brackets)."""
    parts, depth, start, quote = [], 0, 0, ""
    i = 0
    while i < len(code):
        char = code[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "|" and depth == 0:
            parts.append(code[start:i].strip())
            start = i + 1
        i += 1
    parts.append(code[start:].strip())
    return parts


@dataclass(frozen=True)
class ModelField:
    name: Ident
    wire: Code  # the property name, as a literal
    type: PyType
    required: bool
    default: Code | None  # a literal, or None for "no default" (optional fields default to None)
    description: str | None
    aliased: bool  # the Python name differs from the wire name

    @property
    def annotation(self) -> Code:
        if self.required or self.type.nullable:
            return self.type.code
        return Code(f"{self.type.code} | None")


@dataclass(frozen=True)
class ModelClass:
    name: Ident
    description: str | None
    fields: tuple[ModelField, ...] = ()
    extra: str = "allow"  # "allow" | "forbid"
    root: PyType | None = None  # a RootModel over this type (non-object output schemas)

    def key(self) -> str:
        """Everything that makes two classes interchangeable, apart from the name."""
        return json.dumps(
            [
                self.description,
                self.extra,
                self.root.code if self.root else None,
                [[f.name, f.wire, f.annotation, f.required, f.default, f.description] for f in self.fields],
            ]
        )


@dataclass
class Parameter:
    """One keyword argument of a generated method."""

    name: Ident
    wire: Code
    type: PyType
    required: bool
    default: Code | None
    description: str | None
    default_note: str | None = None  # a default the signature could not carry, for the docstring
    takes_null: bool = False  # null is valid against the property's schema (checked with jsonschema)

    @property
    def sends_null(self) -> bool:
        """Optional, without a default, and null valid against its schema: leaving it out is
        ``MISSING`` (the default, imported as ``_MISSING``: a model may be named ``MISSING``), so
        ``None`` can be sent (``assignee=None``: unassign)."""
        return not self.required and self.default is None and self.takes_null

    @property
    def annotation(self) -> Code:
        if self.sends_null:
            return Code(f"{self.type.code} | _MISSING")
        if self.required or self.default is not None or self.type.nullable:
            return self.type.code
        return Code(f"{self.type.code} | None")

    @property
    def comment(self) -> Code | None:
        return self.type.comment


@dataclass
class Root:
    """One schema document: pointers and ``$ref`` resolve inside it."""

    document: JSON
    label: str  # a class-name prefix for this document's definitions on collision


# keys beside an ``allOf`` that say nothing of the value (a title, definitions): not a part of it
NOT_CONSTRAINTS = frozenset(
    {"title", "description", "$defs", "definitions", "$schema", "$id", "$comment", "examples", "default"}
)


@dataclass
class TypeBuilder:
    """Builds annotations and model classes for any number of schemas into one module."""

    reserved: frozenset[str] = frozenset()
    classes: list[ModelClass] = field(default_factory=list)
    _namer: Namer = field(init=False)
    _by_key: dict[tuple[str, str], Ident] = field(default_factory=dict)
    _refs: dict[tuple[int, str, bool], PyType] = field(default_factory=dict)
    _resolving: set[tuple[int, str]] = field(default_factory=set)
    _depth: int = 0

    def __post_init__(self) -> None:
        self._namer = Namer(self.reserved)

    # -- entry points -----------------------------------------------------------------------

    def parameters(self, schema: JSON, hint: str, reserved: frozenset[str]) -> tuple[list[Parameter], str | None]:
        """A tool's ``inputSchema`` as keyword parameters; (params, why the schema was not
        an object with properties, if it was not)."""
        root = Root(schema, hint)
        resolved = self._deref(schema, root)
        why = _free_form(resolved)
        if why is not None:
            return [], why
        if not isinstance(resolved, dict) or not isinstance(resolved.get("properties"), dict):
            return [], None  # an object without declared properties: no parameters
        namer = Namer(reserved)
        required = _required(resolved)
        params: list[Parameter] = []
        ordered = sorted(resolved["properties"], key=lambda w: (w not in required, w))
        # a wire name that is a parameter name as it is keeps it (as a model field's does): handed
        # out in order, ``page_size=`` sent "page-size" and the property page_size was page_size_2
        names = {wire: namer.take(wire) for wire in ordered if snake(wire, "arg") == wire and namer.free(wire)}
        for wire in ordered:
            prop = resolved["properties"][wire]
            py = self.type_of(prop, root, hint + pascal(wire, "Arg"), constrained=False)
            default, note = self._default(prop, py, root)
            params.append(
                Parameter(
                    name=names[wire] if wire in names else namer.take(snake(wire, "arg")),
                    wire=literal(wire),
                    type=py,
                    required=wire in required,
                    default=default if wire not in required else None,
                    description=_description(prop),
                    default_note=note if wire not in required else None,
                    takes_null=wire not in required and _valid(None, prop, root),
                )
            )
        return params, None

    def output_model(self, schema: JSON, hint: str) -> Ident:
        """A tool's ``outputSchema`` as one model class (a ``RootModel`` when not an object)."""
        root = Root(schema, hint)
        if isinstance(schema, dict) and "$ref" in schema:
            py = self.type_of(schema, root, hint, constrained=True)
            if py.kinds == {"model"}:
                return Ident(py.code)
        resolved = self._deref(schema, root)
        if isinstance(resolved, dict) and _is_object(resolved) and not _untypable(resolved):
            if "additionalProperties" not in resolved or "properties" in resolved:
                return Ident(self._object(resolved, root, hint).code)
        py = self.type_of(schema, root, hint + "Value", constrained=True)
        return self._register(ModelClass(Ident(hint), _description(resolved), root=py), hint)

    def arguments_model(self, schema: JSON, hint: str) -> Ident:
        """A tool's ``inputSchema`` as one model class of its properties (a server validating its
        arguments). Keywords beside the properties that no model expresses (``if``/``then``,
        ``not``, ``allOf`` of bare ``required`` lists) are left to the schema: the model checks
        what it can type."""
        root = Root(schema, hint)
        resolved = self._deref(schema, root)
        if not isinstance(resolved, dict):
            resolved = {}
        typed = {k: v for k, v in resolved.items() if k in ("properties", "required", "additionalProperties")}
        if isinstance(typed.get("properties"), dict) and typed["properties"]:
            return Ident(self._object({**typed, "description": resolved.get("description")}, root, hint).code)
        extra = "forbid" if _closed(resolved) else "allow"
        return self._register(ModelClass(Ident("_"), _description(resolved), (), extra), hint)

    # -- the mapping ------------------------------------------------------------------------

    def type_of(self, schema: JSON, root: Root, hint: str, *, constrained: bool) -> PyType:
        if self._depth >= MAX_DEPTH:
            return any_because(TOO_DEEP)
        self._depth += 1
        try:
            return self._type_of(schema, root, hint, constrained)
        finally:
            self._depth -= 1

    def _type_of(self, schema: JSON, root: Root, hint: str, constrained: bool) -> PyType:
        if schema is True or schema == {}:
            return ANY
        if schema is False:
            return any_because(FALSE_SCHEMA)
        if not isinstance(schema, dict):
            return any_because(NOT_A_SCHEMA)
        why = _untypable(schema)
        if why:
            return any_because(why)
        if "$ref" in schema:
            return self._ref(schema["$ref"], root, constrained)
        if "const" in schema:
            return _literals([schema["const"]])
        if "enum" in schema and isinstance(schema["enum"], list) and schema["enum"]:
            return _literals(schema["enum"])
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return union(
                    [
                        self.type_of(_inherit(schema, m), root, f"{hint}Variant{i + 1}", constrained=constrained)
                        for i, m in enumerate(schema[key])
                    ]
                )
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self._all_of(schema, root, hint, constrained)
        types = schema.get("type")
        if isinstance(types, list):
            return union([self._typed(schema, t, root, hint, constrained) for t in types if isinstance(t, str)])
        if isinstance(types, str):
            return self._typed(schema, types, root, hint, constrained)
        if _is_object(schema):
            return self._typed(schema, "object", root, hint, constrained)
        if "items" in schema or "prefixItems" in schema:
            return self._typed(schema, "array", root, hint, constrained)
        return ANY

    def _typed(self, schema: dict[str, JSON], kind: str, root: Root, hint: str, constrained: bool) -> PyType:
        if kind == "string":
            return _constrained(
                PyType(Code("str"), frozenset({"str"})), schema, ("minLength", "maxLength"), constrained
            )
        if kind == "integer":
            return _constrained(PyType(Code("int"), frozenset({"int"})), schema, _NUMERIC, constrained)
        if kind == "number":
            # int | float, as the protocol models: pydantic keeps 5 an int and 5.0 a float, so an
            # integer stays one (and a big one keeps every digit) where ``float`` made 5 into 5.0
            return _constrained(PyType(Code("int | float"), frozenset({"int", "float"})), schema, _NUMERIC, constrained)
        if kind == "boolean":
            return PyType(Code("bool"), frozenset({"bool"}))
        if kind == "null":
            return PyType(Code("None"), frozenset({"none"}))
        if kind == "array":
            if "prefixItems" in schema or isinstance(schema.get("items"), list):
                return any_because(TUPLE)
            items = schema.get("items", True)
            item = self.type_of(items, root, hint + "Item", constrained=constrained)
            return _constrained(
                PyType(Code(f"list[{item.code}]"), frozenset({"list"}), why_any=item.why_any),
                schema,
                ("minItems", "maxItems"),
                constrained,
            )
        if kind == "object":
            if isinstance(schema.get("properties"), dict) and schema["properties"]:
                return self._object(schema, root, hint)
            extra = schema.get("additionalProperties", True)
            value = self.type_of(extra, root, hint + "Value", constrained=constrained) if extra is not False else ANY
            return PyType(Code(f"dict[str, {value.code}]"), frozenset({"dict"}), why_any=value.why_any)
        return any_because(NOT_A_SCHEMA)

    def _object(self, schema: dict[str, JSON], root: Root, hint: str) -> PyType:
        properties: dict[str, JSON] = schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        if any(_unholdable(wire) for wire in properties):
            return any_because(UNHOLDABLE)
        required = _required(schema)
        namer = Namer(FIELD_RESERVED)
        ordered = sorted(properties, key=lambda w: (w not in required, w))
        # a property whose wire name is its own field name keeps it first: another field named
        # after that wire name would take its values too (pydantic matches a keyword by name and
        # by alias: ``a-b`` as ``a_b`` beside ``a_b`` sent one value under both)
        names = {wire: namer.take(wire) for wire in ordered if snake(wire, "field") == wire and namer.free(wire)}
        fields = []
        for wire in ordered:
            prop = properties[wire]
            py = self.type_of(prop, root, hint + pascal(wire, "Field"), constrained=True)
            default, _ = self._default(prop, py, root)
            name = names[wire] if wire in names else namer.take(snake(wire, "field"))
            fields.append(
                ModelField(
                    name=name,
                    wire=literal(wire),
                    type=py,
                    required=wire in required,
                    default=None if wire in required else default,
                    description=_description(prop),
                    aliased=name != wire,
                )
            )
        extra = "forbid" if _closed(schema) else "allow"
        model = ModelClass(Ident("_"), _description(schema), tuple(fields), extra)
        return PyType(self._register(model, hint), frozenset({"model"}))

    def _all_of(self, schema: dict[str, JSON], root: Root, hint: str, constrained: bool) -> PyType:
        members = [self._deref(m, root) for m in schema["allOf"]]
        if len(members) == 1 and not any(k in schema for k in ("properties", "type")):
            return self.type_of(_inherit(schema, schema["allOf"][0]), root, hint, constrained=constrained)
        merged: dict[str, JSON] = {"type": "object", "properties": {}, "required": []}
        if "description" in schema:
            merged["description"] = schema["description"]
        beside = {k: v for k, v in schema.items() if k != "allOf" and k not in NOT_CONSTRAINTS}
        for part in [beside, *members]:
            if not isinstance(part, dict) or (part and not _is_object(part)) or _untypable(part) or "$ref" in part:
                return any_because(MIXED_ALL_OF)
            merged["properties"].update(part.get("properties") or {})
            merged["required"].extend(r for r in _required(part) if r not in merged["required"])
            if part.get("additionalProperties") is False:
                merged["additionalProperties"] = False
            if "description" in part and "description" not in merged:
                merged["description"] = part["description"]
        return self._typed(merged, "object", root, hint, constrained)

    def _ref(self, ref: JSON, root: Root, constrained: bool) -> PyType:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return any_because(EXTERNAL_REF)
        if not _is_pointer(ref):  # "#name": an $anchor
            return any_because(ANCHOR_REF)
        where = (id(root.document), ref)
        key = (*where, constrained)  # a parameter's type carries no bounds, a field's does
        if key in self._refs:
            return self._refs[key]
        if where in self._resolving:
            return any_because(RECURSIVE)
        target = lookup(root.document, ref[1:])
        if target is MISSING:
            return any_because(BAD_REF)
        segments = [s for s in ref[1:].split("/") if s]
        name = pascal(segments[-1], "Definition") if segments else root.label
        self._resolving.add(where)
        try:
            py = self.type_of(target, root, name, constrained=constrained)
        finally:
            self._resolving.discard(where)
        self._refs[key] = py
        return py

    def _deref(self, schema: JSON, root: Root) -> JSON:
        """Follow ``$ref`` chains at the top of a schema (for shape checks), cycle-safe."""
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
            ref = schema["$ref"]
            if not _is_pointer(ref):  # an $anchor: not followed (see ``_ref``)
                return {}
            if ref in seen:
                return {}
            seen.add(ref)
            target = lookup(root.document, ref[1:])
            if target is MISSING:
                return {}
            schema = target
        return schema

    def _register(self, model: ModelClass, requested: str) -> Ident:
        """Add a class, or reuse an identical one asked for under the same name."""
        key = (requested, model.key())
        if key in self._by_key:
            return self._by_key[key]
        name = self._namer.take(requested)
        self._by_key[key] = name
        self.classes.append(ModelClass(name, model.description, model.fields, model.extra, model.root))
        return name

    def _default(self, schema: JSON, py: PyType, root: Root) -> tuple[Code | None, str | None]:
        """The schema's default as a literal when the annotation admits it and the schema does
        (a default outside its own enum or bounds went into every call, and the server refused
        it), else a docstring note."""
        if not isinstance(schema, dict) or "default" not in schema:
            return None, None
        value = schema["default"]
        if is_literal_value(value) and value is not None and py.accepts(value) and _valid(value, schema, root):
            return literal(value), None
        return None, json.dumps(value, ensure_ascii=False, sort_keys=True)


_NUMERIC = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_CONSTRAINTS = {
    "minimum": "ge",
    "maximum": "le",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minItems": "min_length",
    "maxItems": "max_length",
}


def _constrained(py: PyType, schema: dict[str, JSON], keys: Sequence[str], on: bool) -> PyType:
    """``Annotated[T, Field(ge=...)]`` for the numeric and length bounds a model enforces."""
    if not on:
        return py
    args = []
    for key in keys:
        value = schema.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or not is_literal_value(value):
            continue  # draft-04 boolean exclusive bounds, or not a number: not enforced
        if key in ("minLength", "maxLength", "minItems", "maxItems") and not isinstance(value, int):
            continue
        args.append(f"{_CONSTRAINTS[key]}={literal(value)}")
    if not args:
        return py
    return PyType(Code(f"Annotated[{py.code}, Field({', '.join(args)})]"), py.kinds, py.literals, py.why_any)


def _literals(values: Sequence[JSON]) -> PyType:
    """``Literal[...]`` of scalar enum values; floats and structures fall back to their base type."""
    if any(_unholdable(v) for v in values):
        return any_because(UNHOLDABLE)
    if all(is_literal_value(v) and not isinstance(v, float) for v in values):
        unique: list[JSON] = []
        for v in values:
            if not any(_same(v, u) for u in unique):
                unique.append(v)
        kinds = frozenset(_kind(v) for v in unique)
        return PyType(Code(f"Literal[{', '.join(literal(v) for v in unique)}]"), kinds, tuple(unique))
    if any(isinstance(v, dict | list) for v in values):
        return any_because(STRUCTURED_ENUM)
    base = {"str": "str", "int": "int", "bool": "bool", "none": "None", "float": "float"}
    return union([PyType(Code(base[k]), frozenset({k})) for k in sorted({_kind(v) for v in values})])


def _kind(value: JSON) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, float):
        return "float"
    return "int" if isinstance(value, int) else "str"


def _untypable(schema: Mapping[str, JSON]) -> str | None:
    for key, reason in UNTYPABLE.items():
        if key in schema:
            return reason
    return None


def _is_object(schema: Mapping[str, JSON]) -> bool:
    types = schema.get("type")
    if types == "object" or (isinstance(types, list) and types == ["object"]):
        return True
    return types is None and ("properties" in schema or "additionalProperties" in schema)


def _required(schema: Mapping[str, JSON]) -> list[str]:
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _description(schema: JSON) -> str | None:
    if isinstance(schema, dict) and isinstance(schema.get("description"), str) and schema["description"].strip():
        return str(schema["description"]).strip()
    return None


def _inherit(parent: Mapping[str, JSON], member: JSON) -> JSON:
    """An ``anyOf`` member inherits its parent's sibling keywords it does not set (``type``)."""
    if not isinstance(member, dict):
        return member
    skip = {"anyOf", "oneOf", "allOf", "description", "title", "default", "examples"}
    inherited = {k: v for k, v in parent.items() if k not in skip and k not in member}
    if "$ref" in member:
        return member
    merged = {**inherited, **member}
    # both apply: the member's properties narrow the parent's, which stay allowed (a parent's
    # ``additionalProperties: false`` would otherwise refuse its own properties in the member)
    ours, theirs = parent.get("properties"), member.get("properties")
    if isinstance(ours, dict) and isinstance(theirs, dict):
        merged["properties"] = {**ours, **theirs}
        # a closed side refuses the names only the other declares (each ``additionalProperties:
        # false`` counts its own ``properties`` alone)
        for closed, own in ((parent, ours), (member, theirs)):
            if closed.get("additionalProperties") is False and not closed.get("patternProperties"):
                merged["properties"] = {k: v for k, v in merged["properties"].items() if k in own}
    if "required" in member and "required" in parent:
        required = _required(parent)
        merged["required"] = [*required, *(r for r in _required(member) if r not in required)]
    return merged


def _is_pointer(ref: str) -> bool:
    """A local ``$ref`` that is a JSON Pointer (``#``, ``#/...``), not an ``$anchor`` (``#name``)."""
    return ref == "#" or ref.startswith("#/")


def _free_form(schema: JSON) -> str | None:
    """Why a tool's input schema cannot be keyword parameters (its arguments then go as one
    ``arguments`` dict), None when its ``properties`` carry every argument (or it takes none): not
    an object; a combination (``allOf``/``anyOf``/``oneOf``) whose parts declare or require a name
    the top-level ``properties`` do not (parts that only require declared names, or only add
    ``if``/``then``/``not``, constrain the same parameters); keys of a type with no properties
    declared (a map tool); a required name no property declares. Each of these made a tool no
    call could reach."""
    if not isinstance(schema, dict):
        return "its input schema is not an object with properties"
    found = schema.get("properties")
    declared: dict[str, JSON] = found if isinstance(found, dict) else {}
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key) or ():
            named = [*(part.get("properties") or {}), *_required(part)] if isinstance(part, dict) else []
            if not isinstance(part, dict) or "$ref" in part or any(name not in declared for name in named):
                return f"its input schema combines its arguments ({key})"
    open_keys = schema.get("additionalProperties")
    if not declared and (isinstance(open_keys, dict) or open_keys is True or schema.get("patternProperties")):
        return "its input schema takes keys of its own choosing"  # said so: a bare object takes none
    if any(name not in declared for name in _required(schema)):
        return "its input schema requires a name no property declares"
    if declared or _is_object(schema):
        return None
    return "its input schema is not an object with properties"


def _closed(schema: Mapping[str, JSON]) -> bool:
    """``additionalProperties: false`` and no ``patternProperties`` (whose keys stay allowed)."""
    return schema.get("additionalProperties") is False and not schema.get("patternProperties")


def _unholdable(value: JSON) -> bool:
    """A string with a lone surrogate: valid JSON, but pydantic-core cannot build a model holding it."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _valid(value: JSON, schema: dict[str, JSON], root: Root) -> bool:
    """``value`` is valid against ``schema``, its references resolved in ``root``'s document."""
    import jsonschema

    document = root.document if isinstance(root.document, dict) else {}
    defs = {k: document[k] for k in ("$defs", "definitions") if k in document}
    try:
        return bool(jsonschema.Draft202012Validator({**defs, **schema}).is_valid(value))
    except Exception:  # a schema jsonschema cannot apply: the default goes to the docstring only
        return False
