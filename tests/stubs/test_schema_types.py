"""JSON Schema -> Python annotations and models, table-tested; names and literals."""

from __future__ import annotations

import ast
import inspect
from typing import Any

import jinja2
import pytest
from mcpgen._runtime.client.tool_client import ToolClient, expand_uri_template, uri_template_variables

from mcp_schema_codegen.backend.stubs import CLIENT_RESERVED
from mcp_schema_codegen.tools.names import Namer, pascal, snake
from mcp_schema_codegen.tools.pysource import Code, Ident, docstring, finalize, literal
from mcp_schema_codegen.tools.schema_types import ANCHOR_REF, Root, TypeBuilder

OBJ = {"type": "object", "properties": {"x": {"type": "string"}}}
S = {"type": "string"}
TYPES: list[tuple[str, Any, str, str | None]] = [
    # (id, property schema, parameter annotation, why it is Any)
    ("string", {"type": "string"}, "str", None),
    ("integer", {"type": "integer"}, "int", None),
    ("number", {"type": "number"}, "int | float", None),
    ("integer or number", {"type": ["integer", "number"]}, "int | float", None),
    ("boolean", {"type": "boolean"}, "bool", None),
    ("null", {"type": "null"}, "None", None),
    ("no type", {}, "Any", None),
    ("true", True, "Any", None),
    ("false", False, "Any", "Any: the schema 'false' accepts nothing"),
    ("type list", {"type": ["string", "null"]}, "str | None", None),
    ("enum", {"enum": ["a", "b'c", 1, True, None]}, "Literal['a', \"b'c\", 1, True, None]", None),
    ("enum of floats", {"enum": [1.5, 2]}, "float | int", None),
    ("enum of objects", {"enum": [{"a": 1}]}, "Any", "Any: an enum of objects or arrays"),
    ("const", {"const": "x"}, "Literal['x']", None),
    ("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "str | int", None),
    ("oneOf with null", {"oneOf": [{"type": "null"}, {"type": "string"}]}, "str | None", None),
    ("array", {"type": "array", "items": {"type": "integer"}}, "list[int]", None),
    ("array of anything", {"type": "array"}, "list[Any]", None),
    ("tuple", {"type": "array", "prefixItems": [{"type": "string"}]}, "Any", "Any: tuple-shaped array items"),
    ("map", {"type": "object", "additionalProperties": {"type": "number"}}, "dict[str, int | float]", None),
    ("open object", {"type": "object"}, "dict[str, Any]", None),
    ("object", OBJ, "TArg", None),
    ("$ref", {"$ref": "#/$defs/Place"}, "Place", None),
    ("definitions", {"$ref": "#/definitions/Old"}, "Old", None),
    ("recursive", {"$ref": "#/$defs/Tree"}, "Tree", None),
    ("external $ref", {"$ref": "other.json#/x"}, "Any", "Any: a $ref outside this schema"),
    ("dangling $ref", {"$ref": "#/$defs/Nope"}, "Any", "Any: a $ref that does not resolve"),
    ("not", {"not": {"type": "string"}}, "Any", "Any: a 'not' schema cannot be typed"),
    ("if/then", {"if": {"type": "string"}, "then": {}}, "Any", "Any: an 'if'/'then' schema cannot be typed"),
    ("allOf of one", {"allOf": [{"$ref": "#/$defs/Place"}], "description": "d"}, "Place", None),
    ("allOf of objects", {"allOf": [OBJ, {"properties": {"y": {"type": "integer"}}, "required": ["y"]}]}, "TArg", None),
    (
        "allOf mixed",
        {"allOf": [{"type": "string"}, {"minLength": 1}]},
        "Any",
        "Any: an 'allOf' that is not all objects",
    ),
    ("array of the root", {"type": "array", "items": {"$ref": "#"}}, "list[T]", None),
]
DEFS = {
    "Place": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}},
}


@pytest.mark.parametrize(("schema", "annotation", "why"), [r[1:] for r in TYPES], ids=[r[0] for r in TYPES])
def test_parameter_types(schema: Any, annotation: str, why: str | None) -> None:
    builder = TypeBuilder()
    root = {"type": "object", "properties": {"arg": schema}, "$defs": DEFS, "definitions": {"Old": OBJ}}
    params, problem = builder.parameters(root, "T", frozenset())
    assert problem is None
    (param,) = params
    assert (param.type.code, param.type.why_any) == (annotation, why)
    ast.parse(f"x: {param.annotation}")  # a valid annotation


def test_models_carry_fields_aliases_defaults_constraints_and_reasons() -> None:
    builder = TypeBuilder()
    schema = {
        "type": "object",
        "description": "Out",
        "properties": {
            "firstName": {"type": "string", "description": "who"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "json": {"type": "string"},
            "kind": {"enum": ["a", "b"], "default": "a"},
            "tree": {"$ref": "#/$defs/Tree"},
            "count": {"type": "integer", "default": "three"},
        },
        "required": ["firstName"],
        "additionalProperties": False,
        "$defs": DEFS,
    }
    assert builder.output_model(schema, "GetOutput") == "GetOutput"
    tree, out = builder.classes
    assert tree.name == "Tree" and tree.fields[0].type.why_any == "Any: recursive schema"
    fields = {f.name: f for f in out.fields}
    assert (out.description, out.extra) == ("Out", "forbid")
    assert [f.name for f in out.fields] == ["first_name", "age", "count", "json_", "kind", "tree"]
    assert fields["first_name"].wire == "'firstName'" and fields["first_name"].aliased
    assert fields["first_name"].required and fields["first_name"].description == "who"
    assert fields["age"].annotation == "Annotated[int, Field(ge=0, le=150)] | None"
    assert fields["json_"].aliased  # BaseModel.json is not shadowed
    assert (fields["kind"].annotation, fields["kind"].default) == ("Literal['a', 'b'] | None", "'a'")
    assert fields["count"].default is None  # "three" is no int: no default
    assert fields["tree"].annotation == "Tree | None"


def test_non_object_outputs_are_root_models_and_identical_classes_are_shared() -> None:
    builder = TypeBuilder()
    assert (
        builder.output_model({"type": "array", "items": {"$ref": "#/$defs/Place"}, "$defs": DEFS}, "AOutput")
        == "AOutput"
    )
    assert builder.output_model({"$ref": "#/$defs/Place", "$defs": DEFS}, "BOutput") == "Place"
    _, listing = builder.classes
    assert listing.root is not None and listing.root.code == "list[Place]"
    assert [c.name for c in builder.classes] == ["Place", "AOutput"]


def test_a_non_object_input_schema_is_reported() -> None:
    params, problem = TypeBuilder().parameters({"type": "string"}, "T", frozenset())
    assert (params, problem) == ([], "its input schema is not an object with properties")
    assert TypeBuilder().parameters({"type": "object"}, "T", frozenset()) == ([], None)


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"anyOf": [OBJ]}, "its input schema combines its arguments (anyOf)"),
        ({"type": "object", "oneOf": [OBJ, OBJ]}, "its input schema combines its arguments (oneOf)"),
        (
            {"type": "object", "properties": {"q": {"type": "string"}}, "allOf": [OBJ]},
            "its input schema combines its arguments (allOf)",
        ),
        ({"type": "object", "additionalProperties": {"type": "string"}}, "its input schema takes keys of its own"),
        ({"type": "object", "patternProperties": {"^x-": {}}}, "its input schema takes keys of its own choosing"),
        (
            {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q", "api_version"]},
            "its input schema requires a name no property declares",
        ),
    ],
)
def test_arguments_the_properties_cannot_carry_go_as_one_mapping(schema: dict[str, Any], why: str) -> None:
    """A review: each of these gave the tool no parameters, or none for a required argument, and
    no ``arguments`` mapping either: no call could reach it."""
    params, problem = TypeBuilder().parameters(schema, "T", frozenset())
    assert params == [] and problem is not None and problem.startswith(why)


def output_model(tmp_path: Any, schema: dict[str, Any]) -> Any:
    """The stub's model of ``schema`` as a tool's output, generated and imported."""
    import json as json_module
    import sys

    from mcp_schema_codegen.commands.client_stubs import generate_client
    from mcp_schema_codegen.tools.snapshot import Snapshot
    from tests.conftest import ROOT

    data = json_module.loads((ROOT / "tests" / "stubs" / "snapshots" / "sdk_tools.json").read_text())
    data["tools"] = [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]
    package = generate_client(Snapshot.from_json(data, "test"), "output_check", tmp_path)
    sys.path.insert(0, str(package.parent))
    try:
        return __import__("output_check.models", fromlist=["*"]).TOutput
    finally:
        sys.path.remove(str(package.parent))
        for name in [m for m in sys.modules if m.startswith("output_check")]:
            del sys.modules[name]


def test_members_of_a_union_keep_their_parents_properties(tmp_path: Any) -> None:
    """A review: the shared properties of a parent closed by ``additionalProperties: false`` were
    replaced by each member's own, and the member refused them: no valid value could be sent."""
    item = {
        "type": "object",
        "properties": {"mode": {"enum": ["file", "url"]}, "path": {"type": "string"}, "url": {"type": "string"}},
        "additionalProperties": False,
        "oneOf": [
            {"properties": {"mode": {"const": "file"}}, "required": ["mode", "path"]},
            {"properties": {"mode": {"const": "url"}}, "required": ["mode", "url"]},
        ],
    }
    model = output_model(tmp_path, {"type": "object", "properties": {"source": item}, "required": ["source"]})
    assert model.model_validate({"source": {"mode": "file", "path": "/tmp/x"}}).source.path == "/tmp/x"
    with pytest.raises(ValueError):
        model.model_validate({"source": {"mode": "file", "url": "u"}})  # the file variant requires path


def test_pattern_properties_stay_allowed_beside_additional_properties_false(tmp_path: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"content-type": {"type": "string"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    assert output_model(tmp_path, schema).model_validate({"content-type": "text/plain", "x-trace": "abc"})


def test_an_anchor_reference_a_default_outside_its_schema_and_deep_nesting_are_handled() -> None:
    builder = TypeBuilder()
    anchored = builder.type_of(
        {"$ref": "#count"}, Root({"$defs": {"c": {"$anchor": "count"}}}, "T"), "T", constrained=True
    )
    assert anchored.why_any == ANCHOR_REF  # it named the whole document before
    prop = {"enum": ["fast", "safe"], "default": "auto"}
    params, _ = TypeBuilder().parameters({"type": "object", "properties": {"mode": prop}}, "T", frozenset())
    assert params[0].default is None and params[0].default_note == '"auto"'  # not in every call
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(300):
        deep = {"type": "array", "items": deep}
    assert "Any" in str(TypeBuilder().type_of(deep, Root(deep, "T"), "T", constrained=True).code)


NAMES = [
    ("get-weather", "get_weather", "GetWeather"),
    ("ns.tool", "ns_tool", "NsTool"),
    ("class", "class_", "Class"),
    ("getHTTPResponse", "get_http_response", "GetHTTPResponse"),
    ("temp\u00e9rature", "temperature", "Temperature"),
    ("\u5929\u6c17", "u5929_u6c17", "U5929U6c17"),
    ("3d", "x_3d", "X3d"),
    ("", "x", "X"),
    ("__init__", "init", "Init"),
    ('a"; b', "a_b", "AB"),
]


@pytest.mark.parametrize(("wire", "python", "cls"), NAMES, ids=[n[0] or "empty" for n in NAMES])
def test_names(wire: str, python: str, cls: str) -> None:
    assert (snake(wire, "x"), pascal(wire, "X")) == (python, cls)


def test_namer_keeps_names_distinct_and_off_reserved() -> None:
    namer = Namer({"client"})
    assert [namer.take(n) for n in ("get_weather", "get_weather", "client", "client", "None", "x_2", "x", "x")] == [
        "get_weather",
        "get_weather_2",
        "client_",
        "client_2",
        "None_",
        "x_2",
        "x",
        "x_3",
    ]


@pytest.mark.parametrize(
    "text",
    ['"""', "'''", "a\\", '"', 'x"', "\\N{BULLET}", "\r\n\x00\x1b", "\u2028", "{{ x }}", 'end"""', "\ufeff"],
)
def test_literals_and_docstrings_round_trip(text: str) -> None:
    assert ast.literal_eval(literal(text)) == text
    assert ast.literal_eval(docstring(text)) == text
    assert "\n" not in literal(text)


def test_surrogates_survive_literals_but_not_docstrings() -> None:
    assert ast.literal_eval(literal("a\ud800")) == "a\ud800"
    assert ast.literal_eval(docstring("a\ud800")) == "a\ufffd"


def test_templates_refuse_plain_strings() -> None:
    env = jinja2.Environment(finalize=finalize)
    assert env.from_string("{{ a }} {{ b }} {{ n }}").render(a=Code("x"), b=Ident("y"), n=3) == "x y 3"
    with pytest.raises(TypeError, match="plain string"):
        env.from_string("{{ a }}").render(a="raw")
    with pytest.raises(ValueError):
        Ident("not an identifier")


def test_reserved_client_names_cover_the_runtime_client() -> None:
    public = {name for name, _ in inspect.getmembers(ToolClient) if not name.startswith("_")}
    public |= set(inspect.signature(ToolClient.__init__).parameters) - {"self"}
    assert public <= CLIENT_RESERVED


URI_TEMPLATES = [
    ("demo://text/{id}", {"id": "3"}, "demo://text/3"),
    ("x://{a}", {"a": "b c/d"}, "x://b%20c%2Fd"),
    ("x://{+a}", {"a": "b c/d"}, "x://b%20c/d"),
    ("x://h{#frag}", {"frag": "a/b"}, "x://h#a/b"),
    ("x://h{/p,q}", {"p": "a", "q": "b"}, "x://h/a/b"),
    ("x://h{.ext}", {"ext": "json"}, "x://h.json"),
    ("x://h{;v}", {"v": "1"}, "x://h;v=1"),
    ("x://h{?q,r}", {"q": "a b", "r": None}, "x://h?q=a%20b"),
    ("x://h?s=1{&q}", {"q": ""}, "x://h?s=1&q="),
    ("x://h{?q}", {}, "x://h"),
    ("x://{a:2}", {"a": "abcdef"}, "x://ab"),
]


@pytest.mark.parametrize(("template", "values", "uri"), URI_TEMPLATES)
def test_uri_templates_expand(template: str, values: dict[str, str | None], uri: str) -> None:
    assert expand_uri_template(template, values) == uri


def test_uri_template_variables_say_which_are_optional() -> None:
    assert uri_template_variables("x://{a}/{+b}{?c,d}{&c}{#e:3}") == [
        ("a", False),
        ("b", False),
        ("c", True),
        ("d", True),
        ("e", False),
    ]


def test_a_field_is_never_named_after_another_fields_wire_name() -> None:
    """Found by a review: ``a-b`` became ``a_b`` and the property ``a_b`` then ``a_b_2``; pydantic
    matches a keyword by name and by alias, so ``a_b=`` filled both and the wire got one value
    under both names. A property whose wire name is its own field name keeps it."""
    builder = TypeBuilder()
    schema = {"type": "object", "properties": {"a-b": {"type": "string"}, "a_b": {"type": "string"}}}
    builder.output_model(schema, "Pair")
    (pair,) = builder.classes
    by_wire = {f.wire: f.name for f in pair.fields}
    assert by_wire == {"'a_b'": "a_b", "'a-b'": "a_b_2"}, by_wire


def test_an_all_of_beside_a_title_or_definitions_is_still_merged() -> None:
    """Found by a review: a ``title``, ``description`` or ``$defs`` beside an ``allOf`` counted as
    a part that is no object, so the merge gave up (``Any``)."""
    builder = TypeBuilder()
    parts = [{"type": "object", "properties": {"a": {"type": "string"}}}, {"properties": {"z": {"type": "integer"}}}]
    schema = {"type": "object", "properties": {"inh": {"title": "Inh", "description": "d", "allOf": parts}}}
    builder.output_model(schema, "Out")
    inherited = next(c for c in builder.classes if c.name == "OutInh")
    assert [(f.name, f.annotation) for f in inherited.fields] == [("a", "str | None"), ("z", "int | None")]
    assert inherited.description == "d"


def test_a_percent_encoded_reference_resolves() -> None:
    """``#/$defs/My%20Type`` is a URI fragment: %-escapes come off before the JSON Pointer is read
    (RFC 6901 §6); it was "does not resolve", ``Any``."""
    builder = TypeBuilder()
    schema = {"type": "object", "properties": {"t": {"$ref": "#/$defs/My%20Type"}}, "$defs": {"My Type": S}}
    builder.output_model(schema, "Out")
    (out,) = builder.classes
    assert out.fields[0].annotation == "str | None"


def test_an_optional_field_that_is_not_nullable_never_goes_out_as_null(tmp_path: Any) -> None:
    """Found by a review: an argument model's optional field is typed ``X | None``, and an explicit
    ``None`` was sent as ``null``, which the schema refuses; it is left out (a nullable field's
    ``None`` is still sent)."""
    import json as json_module
    import sys

    from mcpgen._runtime.client.tool_client import plain

    from mcp_schema_codegen.commands.client_stubs import generate_client
    from mcp_schema_codegen.tools.snapshot import Snapshot
    from tests.conftest import ROOT

    data = json_module.loads((ROOT / "tests" / "stubs" / "snapshots" / "sdk_tools.json").read_text())
    options = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": ["string", "null"]}}}
    data["tools"] = [{"name": "opt", "inputSchema": {"type": "object", "properties": {"options": options}}}]
    package = generate_client(Snapshot.from_json(data, "test"), "nullable_check", tmp_path)
    sys.path.insert(0, str(package.parent))
    try:
        models = __import__("nullable_check.models", fromlist=["*"])
        model = next(getattr(models, n) for n in models.__all__ if n.endswith("Options"))
        assert plain(model(a=None, b=None)) == {"b": None}
        assert plain(model(a="x")) == {"a": "x"}
    finally:
        sys.path.remove(str(package.parent))
        for name in [m for m in sys.modules if m.startswith("nullable_check")]:
            del sys.modules[name]


def test_an_optional_nullable_argument_can_be_sent_as_null(tmp_path: Any) -> None:
    """A review: ``assignee: {"type": ["string", "null"]}`` (optional) was ``str | None = None``
    and omitted when None, so "null to unassign" could never be sent. Leaving it out is now
    ``MISSING`` (the default); None sends null. A non-nullable optional argument is as before."""
    import asyncio
    import json as json_module
    import sys

    from mcp_schema_codegen.commands.client_stubs import generate_client
    from mcp_schema_codegen.tools.snapshot import Snapshot
    from tests.conftest import ROOT

    data = json_module.loads((ROOT / "tests" / "stubs" / "snapshots" / "sdk_tools.json").read_text())
    properties = {"issue": {"type": "integer"}, "assignee": {"type": ["string", "null"]}, "note": {"type": "string"}}
    data["tools"] = [
        {"name": "update", "inputSchema": {"type": "object", "properties": properties, "required": ["issue"]}}
    ]
    package = generate_client(Snapshot.from_json(data, "test"), "null_args", tmp_path)
    sys.path.insert(0, str(package.parent))
    try:
        client_module = __import__("null_args.client", fromlist=["*"])
        sent: list[dict[str, Any]] = []

        class Recording(client_module.Client):  # type: ignore[name-defined,misc]
            def __init__(self) -> None:
                pass

            async def _call_tool(self, name: str, arguments: dict[str, Any], **_: Any) -> Any:
                sent.append(dict(arguments))

        client = Recording()
        asyncio.run(client.update(issue=1))
        asyncio.run(client.update(issue=1, assignee=None, note=None))
        asyncio.run(client.update(issue=1, assignee="ada", note="x"))
    finally:
        sys.path.remove(str(package.parent))
        for name in [m for m in sys.modules if m.startswith("null_args")]:
            del sys.modules[name]
    assert sent == [{"issue": 1}, {"issue": 1, "assignee": None}, {"issue": 1, "assignee": "ada", "note": "x"}]
    text = (package / "client.py").read_text(encoding="utf-8")
    assert "from pydantic import MISSING as _MISSING" in text  # a model may be named MISSING
    assert "assignee: str | None | _MISSING = _MISSING" in text


def test_a_wire_name_that_is_a_parameter_name_keeps_it() -> None:
    """A review: names were handed out in sort order, so ``page_size=`` sent "page-size" and the
    property literally named page_size became ``page_size_2``."""
    schema = {
        "type": "object",
        "properties": {p: {"type": "string"} for p in ("page-size", "page_size", "class", "class_")},
    }
    params, _ = TypeBuilder().parameters(schema, "T", frozenset())
    assert {p.name: p.wire for p in params} == {
        "page_size": "'page_size'",
        "page_size_2": "'page-size'",
        "class_": "'class_'",
        "class_2": "'class'",
    }


def test_a_definition_used_as_a_parameter_first_keeps_its_bounds_in_a_model() -> None:
    """A review: the type of a ``$ref`` was cached without its bounds when a parameter used it
    first (a parameter carries none), and a model field using it later lost them."""
    defs = {"Port": {"type": "integer", "minimum": 1}}
    remote = {"type": "object", "properties": {"port": {"$ref": "#/$defs/Port"}}}
    schema = {"type": "object", "$defs": defs, "properties": {"port": {"$ref": "#/$defs/Port"}, "remote": remote}}
    builder = TypeBuilder()
    builder.parameters(schema, "T", frozenset())
    (model,) = [c for c in builder.classes if c.name == "TRemote"]
    assert model.fields[0].annotation == "Annotated[int, Field(ge=1)] | None"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"query": {"type": "string"}}, "additionalProperties": {}},
        {
            "type": "object",
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
            "anyOf": [{"required": ["id"]}, {"required": ["name"]}],
        },
        {
            "type": "object",
            "properties": {"kind": {"enum": ["a", "b"]}, "x": {"type": "string"}},
            "required": ["kind"],
            "allOf": [{"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["x"]}}],
        },
        {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": {"type": "string"}},
    ],
)
def test_properties_that_carry_every_argument_stay_keyword_parameters(schema: dict[str, Any]) -> None:
    """A review of the change above: these took the one mapping, though their properties carry
    every argument (the combinations only require declared names or add conditions)."""
    params, problem = TypeBuilder().parameters(schema, "T", frozenset())
    assert problem is None and {p.wire.strip("'") for p in params} == set(schema["properties"])


def test_a_closed_side_of_a_union_member_refuses_the_names_only_the_other_declares(tmp_path: Any) -> None:
    """Merging a parent's properties into a member must not take a name the closed parent
    refuses (its ``additionalProperties: false`` counts its own properties alone)."""
    source = {
        "type": "object",
        "properties": {"mode": {"type": "string"}},
        "additionalProperties": False,
        "oneOf": [{"properties": {"extra": {"type": "string"}}}],
    }
    model = output_model(tmp_path, {"type": "object", "properties": {"src": source}, "required": ["src"]})
    assert model.model_validate({"src": {"mode": "a"}})
    with pytest.raises(ValueError):
        model.model_validate({"src": {"mode": "a", "extra": "b"}})


def test_null_is_sendable_exactly_where_the_schema_takes_it() -> None:
    """A review of the change above: whether null may be sent was read from the Python type, which
    holds None where a sibling ``type`` refuses it (``{"type": "string", "enum": ["a", null]}``)
    and says nothing for Any (``{"default": null}``, a tuple). It is now asked of the schema."""
    properties = {
        "refused": {"type": "string", "enum": ["low", "high", None]},
        "any": {"default": None, "title": "Extra"},
        "nullable": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
    }
    params, _ = TypeBuilder().parameters({"type": "object", "properties": properties}, "T", frozenset())
    sends = {p.wire.strip("'"): p.sends_null for p in params}
    assert sends == {"refused": False, "any": True, "nullable": True}


@pytest.mark.parametrize("open_keys", [True, {}])
def test_a_map_tool_said_to_take_any_keys_takes_the_mapping(open_keys: Any) -> None:
    schema = {"type": "object", "additionalProperties": open_keys}
    assert TypeBuilder().parameters(schema, "T", frozenset()) == ([], "its input schema takes keys of its own choosing")
    assert TypeBuilder().parameters({"type": "object"}, "T", frozenset()) == ([], None)  # a tool without arguments


def test_a_number_keeps_an_integer_an_integer(tmp_path: Any) -> None:
    """A number was typed ``float``: a server's ``{"sum": 5}`` became ``sum=5.0`` and a big integer
    lost digits; ``number`` is ``int | float`` as in the protocol models."""
    schema = {"type": "object", "properties": {"sum": {"type": "number", "minimum": 0}}, "required": ["sum"]}
    model = output_model(tmp_path, schema)
    five, half, big = (model.model_validate({"sum": v}).sum for v in (5, 2.5, 10**30))
    assert (type(five), five) == (int, 5) and (type(half), half) == (float, 2.5) and big == 10**30
    assert model.model_validate({"sum": 5.0}).sum.__class__ is float
    with pytest.raises(ValueError):
        model.model_validate({"sum": -1})  # the bound still holds
