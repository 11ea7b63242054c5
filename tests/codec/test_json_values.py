"""JSON values of any depth, refusals of a bounded size, finite numbers only.

2026-07-28's ``JSONValue`` (the values of every ``JSONObject`` field: capabilities' ``experimental``,
sampling's ``metadata``) was a union pydantic validated by recursion: a value nested past 127
levels was refused though the schema allows it, and every alternative at every level made an
error, so that a 58 KiB message took seconds and 800 MiB to refuse and was answered with 64 MB.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import jsonschema
import pytest
from mcpgen._runtime.codec import MAX_REPORTED_ERRORS, MAX_REPORTED_STEPS, MAX_REPORTED_TEXT
from mcpgen.v2026_07_28 import models

from mcp_schema_codegen.backend.models import json_value_definitions
from tests.codec.test_codec_bad_input import MODERN_META, codec, j, refuse
from tests.conftest import SCHEMA_DIR, VERSIONS

SCHEMA = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text(encoding="utf-8"))


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def with_experimental(experimental: dict[str, Any]) -> bytes:
    capabilities = {"experimental": experimental}
    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
    return j({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"_meta": meta}})


def test_a_value_nested_deeper_than_pydantic_recursed_is_accepted_as_the_schema_allows() -> None:
    wire = with_experimental({"x": nested(180)})
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # jsonschema recurses too, some frames a level
    try:
        jsonschema.validate(json.loads(wire), {**SCHEMA, "$ref": "#/$defs/ListToolsRequest"})
    finally:
        sys.setrecursionlimit(limit)
    decoded = codec("2026-07-28", "server").decode(wire)
    assert decoded.params.meta.client_capabilities.experimental["x"] == nested(180)


def test_many_deep_bad_values_are_refused_quickly_with_a_short_reply() -> None:
    bad = with_experimental({f"x{i}": nested(130, leaf="LEAF") for i in range(200)})
    bad = bad.replace(b'"LEAF"', b"1e400")  # valid JSON, but no float holds it: read as infinity
    error = refuse(codec("2026-07-28", "server"), bad)
    assert error.code == -32602
    assert len(error.data["errors"]) == MAX_REPORTED_ERRORS
    assert error.data["omitted"] == 200 - MAX_REPORTED_ERRORS  # one error per bad value, not per level
    reply = json.dumps(error.data)
    assert len(reply) < 8_000 < len(bad)
    assert all(len(e["loc"]) <= MAX_REPORTED_STEPS for e in error.data["errors"])
    assert error.data["errors"][0]["msg"].startswith("an infinite or NaN number at ['a']['a']")


def test_a_reported_location_or_message_is_cut_to_a_bounded_length() -> None:
    long_key = "k" * 50_000
    wire = with_experimental({long_key: 1.5, "deep": nested(100, leaf={long_key: "LEAF"})})
    error = refuse(codec("2026-07-28", "server"), wire.replace(b'"LEAF"', b"1e400"))
    assert [e["type"] for e in error.data["errors"]] == ["dict_type", "json_value"]
    assert len(json.dumps(error.data)) < 2 * (MAX_REPORTED_TEXT + 200) * MAX_REPORTED_STEPS


@pytest.mark.parametrize("version", [v for v in VERSIONS if v >= "2025-03-26"])
def test_a_number_too_large_for_a_float_is_refused_not_read_as_infinity(version: str) -> None:
    progress = {"progressToken": 1, "progress": 1}
    wire = j({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}).replace(
        b'"progress": 1}', b'"progress": 1e400}'
    )
    assert b"1e400" in wire
    assert refuse(codec(version, "client"), wire).code == -32602


@pytest.mark.parametrize(
    ("value", "where", "problem"),
    [
        ([1, {2: 3}], "experimental.x.a", "an object key must be a string, not int at [1]"),
        ({"b": {1, 2}}, "experimental.x.a", "a set, not a JSON value at ['b']"),
        ({1, 2}, "experimental.x.a", "a set, not a JSON value"),
        (float("nan"), "experimental.x.a", "an infinite or NaN number"),
        (
            nested(30, leaf=float("inf")),
            "experimental.x.a",
            "an infinite or NaN number at ['a']['a']['a']['a']...['a']['a']['a']['a']['a']",
        ),
    ],
)
def test_a_python_value_that_is_not_json_is_refused_naming_where(value: Any, where: str, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        models.ClientCapabilities(experimental={"x": {"a": value}})
    assert f"{where}\n  {problem} [type=json_value" in str(raised.value)


def test_a_container_holding_itself_is_refused_and_one_shared_is_not() -> None:
    looped: dict[str, Any] = {}
    looped["self"] = [1, looped]
    with pytest.raises(
        ValueError, match=r"x\.self\n  a container holding itself, which no JSON can at \[1\]\['self'\]"
    ):
        models.ClientCapabilities(experimental={"x": looped})
    shared = [1, 2]
    built = models.ClientCapabilities(experimental={"x": {"a": shared, "b": [shared, (3, shared)]}})
    assert json.loads(built.model_dump_json())["experimental"]["x"] == {"a": [1, 2], "b": [[1, 2], [3, [1, 2]]]}


def test_a_value_deeper_than_pydantic_recursed_is_written_back_and_described() -> None:
    """Accepted at any depth, so written at any depth too (by the type of each value, not through
    the union pydantic recursed into), and the JSON Schema of either mode is there: a tool's
    ``outputSchema`` is the serialization one."""
    deep = models.ClientCapabilities(experimental={"x": nested(180)})
    assert json.loads(deep.model_dump_json()) == {"experimental": {"x": nested(180)}}
    validation = models.ClientCapabilities.model_json_schema()["$defs"]["JSONValue"]
    assert {"$ref": "#/$defs/JSONObject"} in validation["anyOf"]
    assert models.ClientCapabilities.model_json_schema(mode="serialization")["$defs"]["JSONValue"] == {}


def test_json_values_keep_every_scalar_the_schema_allows_and_their_json_schema() -> None:
    value = {"a": [1, 2.5, None, "s", True, {"b": []}], "big": 2**80, "pair": (1, (2,))}
    capabilities = models.ClientCapabilities(experimental={"x": value})
    assert json.loads(capabilities.model_dump_json())["experimental"]["x"] == {**value, "pair": [1, [2]]}
    assert capabilities.experimental["x"]["pair"] == [1, [2]]  # a tuple is taken as an array: a list
    schema = models.ClientCapabilities.model_json_schema()["$defs"]["JSONValue"]
    assert {"type": "null"} in schema["anyOf"] and {"$ref": "#/$defs/JSONObject"} in schema["anyOf"]


def test_the_json_value_definition_is_found_by_its_shape_only() -> None:
    assert json_value_definitions(SCHEMA) == {"JSONValue": ("string", "integer", "boolean")}  # before its patch
    defs = {
        "V": {"anyOf": [{"$ref": "#/$defs/O"}, {"type": "array", "items": {"$ref": "#/$defs/V"}}, {"type": "string"}]},
        "O": {"type": "object", "additionalProperties": {"$ref": "#/$defs/V"}},
        "NoArray": {"anyOf": [{"$ref": "#/$defs/O"}, {"type": "string"}]},
        "Bounded": {
            "anyOf": [
                {"$ref": "#/$defs/O"},
                {"type": "array", "items": {"$ref": "#/$defs/V"}},
                {"type": "string", "maxLength": 3},
            ]
        },
        "Other": {
            "anyOf": [{"$ref": "#/$defs/O"}, {"type": "array", "items": {"$ref": "#/$defs/V"}}, {"type": "string"}]
        },
    }
    # "Other"'s array and object hold V, not Other: not a definition of all the JSON values it names
    assert json_value_definitions({"$defs": defs}) == {"V": ("string",)}
