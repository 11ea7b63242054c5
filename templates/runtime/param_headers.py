"""``x-mcp-header``: the tool arguments a 2026-07-28 client mirrors into ``Mcp-Param-{Name}``
headers over Streamable HTTP, read from a tool's ``inputSchema``, for the client that sends the
headers and the server that checks them against the body.

An annotation names a property statically reachable from the schema's root through
``properties`` keys only (nested objects included); an annotation anywhere else (under
``items``, ``anyOf``, ``$ref``...), a name that is not an HTTP token, a type other than string,
integer or boolean, or two names equal ignoring case make the tool definition invalid.
"""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field-name (fullmatch)
ToolHeaders = tuple[tuple[tuple[str, ...], str], ...]  # (property path, header name) per annotated argument


def reachable(schema: Any) -> ToolHeaders:
    """Every annotation on a property reachable through ``properties`` keys: its path and name
    (the name as written, whatever it is)."""
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(node: Any, path: tuple[str, ...]) -> None:
        props = node.get("properties") if isinstance(node, dict) else None
        if not isinstance(props, dict):
            return
        for key, prop in props.items():
            if isinstance(prop, dict):
                if "x-mcp-header" in prop:
                    found.append(((*path, key), prop["x-mcp-header"]))
                walk(prop, (*path, key))

    walk(schema, ())
    return tuple(found)


def tool_headers(schema: Any) -> ToolHeaders | None:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``; None when they are invalid."""
    found = reachable(schema)
    return None if _problem(schema, found) is not None else found


def header_problem(schema: Any) -> str | None:
    """Why the ``x-mcp-header`` annotations of a tool's ``inputSchema`` make it invalid (a client
    drops such a tool), or None."""
    return _problem(schema, reachable(schema))


def _problem(schema: Any, found: ToolHeaders) -> str | None:
    if _count(schema) != len(found):  # annotations under items, anyOf, $ref ...: invalid
        return "an x-mcp-header annotation is on a schema not reached through 'properties' alone"
    for path, name in found:
        where = ".".join(path)
        if not isinstance(name, str) or TOKEN.fullmatch(name) is None:
            return f"x-mcp-header {name!r} of {where!r} is not an HTTP header name"
        kind = value_at(schema, _schema_path(path)).get("type")
        if kind not in ("string", "integer", "boolean"):
            return f"x-mcp-header {name!r} is on {where!r}, whose type is not string, integer or boolean"
    names = [name.lower() for _, name in found]
    if len(set(names)) != len(names):
        return "two x-mcp-header names are the same ignoring case"
    return None


def value_at(data: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` (object keys) in ``data``; None when a step is missing or not an object."""
    value = data
    for step in path:
        value = value.get(step) if isinstance(value, dict) else None
    return value


def _schema_path(path: tuple[str, ...]) -> tuple[str, ...]:
    """The path of a property's schema: ``properties`` before each key."""
    return tuple(part for key in path for part in ("properties", key))


# keywords whose value is a schema, a list of schemas, or a map of names to schemas (JSON Schema
# 2020-12 and draft-07); anything else (const, default, enum, examples, ...) is data, where a key
# named x-mcp-header is no annotation
_SCHEMA = frozenset(
    {
        "additionalProperties",
        "items",
        "additionalItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "contentSchema",
    }
)
_SCHEMAS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


def _count(node: Any) -> int:
    """The ``x-mcp-header`` annotations anywhere in a schema (every subschema, not data)."""
    if not isinstance(node, dict):
        return 0
    found = int("x-mcp-header" in node)
    for key, value in node.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            found += sum(_count(sub) for sub in value.values())
        elif key in _SCHEMAS and isinstance(value, list):
            found += sum(_count(sub) for sub in value)
        elif key in _SCHEMA:
            found += _count(value)
        elif key == "dependencies" and isinstance(value, dict):  # draft-07: schemas, or lists of names
            found += sum(_count(sub) for sub in value.values())
    return found
