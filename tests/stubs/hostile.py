"""A snapshot of a hostile server: names, descriptions, enum values, consts and defaults that
would inject code if any of them reached a generated module other than as a literal, and
schemas that cannot be typed."""

from __future__ import annotations

from typing import Any

from mcp_schema_codegen.tools.snapshot import Snapshot

PAYLOAD = "__import__('pathlib').Path('PWNED').touch()"
STRINGS = [
    '"""',
    "'''",
    '"; ' + PAYLOAD + " #",
    "'); " + PAYLOAD + " #",
    "\\",
    "\\x41",
    "line\n" + PAYLOAD,
    "\r\n\x00\x1b[31m",
    "\u2028" + PAYLOAD,
    "\ud800",
    "{{ 7 * 7 }}{% raw %}",
    "\ufeff\u202e",
    "x" * 5000,
]
NAMES = [
    "get-weather",
    "get_weather",
    "getWeather",
    "ns.tool",
    "class",
    "None",
    "\u5929\u6c17",
    "temp\u00e9rature",
    "3d",
    "",
    "__init__",
    "self",
    "aclose",
    "prompts",
    "client",
    "codec",
    "float",  # builtins the generated annotations use: a method of that name broke them for mypy
    "str",
    'x"); ' + PAYLOAD + " #",
]
PROPERTIES = [
    "a-b",
    "class",
    "self",
    "timeout",
    "on_progress",
    "_arguments",
    "model_config",
    "json",
    "str",
    "int",
    "Field",
    "__class__",
    '"x"',
    "a'b",
    "\u00e9t\u00e9",
    "",
]


def _input_schema(i: int) -> dict[str, Any]:
    properties: dict[str, Any] = {
        name: {"type": "string", "description": STRINGS[j % len(STRINGS)], "default": STRINGS[(j + i) % len(STRINGS)]}
        for j, name in enumerate(PROPERTIES)
    }
    properties["choice"] = {"enum": STRINGS[:10], "default": STRINGS[0]}
    properties["constant"] = {"const": PAYLOAD}
    properties["count"] = {"type": "integer", "default": "not a number"}
    properties["nested"] = {"$ref": "#/$defs/Node"}
    properties["negated"] = {"not": {"type": "string"}}
    properties["conditional"] = {"if": {"type": "string"}, "then": {"minLength": 1}}
    properties["elsewhere"] = {"$ref": "https://example.com/schema.json"}
    properties["dangling"] = {"$ref": "#/$defs/Missing"}
    properties["pair"] = {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}
    properties["never"] = False
    properties["floats"] = {"enum": [1.5, float("1e308"), "x"]}
    return {
        "type": "object",
        "properties": properties,
        "required": ["choice", PROPERTIES[i % len(PROPERTIES)]],
        "$defs": {
            "Node": {
                "type": "object",
                "description": STRINGS[i % len(STRINGS)],
                "properties": {
                    "label": {"type": "string", "enum": STRINGS[:4]},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    "class": {"type": "object", "properties": {'"""': {"type": "number", "minimum": 0}}},
                },
            }
        },
    }


def _output_schema(i: int) -> dict[str, Any]:
    return {
        "type": "object",
        "description": STRINGS[i % len(STRINGS)],
        "properties": {
            name: {"type": ["string", "null"], "description": STRINGS[j % len(STRINGS)]}
            for j, name in enumerate(PROPERTIES)
        },
        "required": PROPERTIES[:3],
        "additionalProperties": False,
    }


def hostile_snapshot() -> Snapshot:
    tools = [
        {
            "name": name,
            "title": STRINGS[i % len(STRINGS)],
            "description": STRINGS[(i + 1) % len(STRINGS)],
            "inputSchema": _input_schema(i),
            **({"outputSchema": _output_schema(i)} if i % 2 == 0 else {}),
        }
        for i, name in enumerate(NAMES)
    ]
    tools.append(
        {
            "name": "array-output",
            "inputSchema": {"anyOf": [{"type": "object"}]},
            "outputSchema": {"type": "array", "items": {"enum": STRINGS[:3]}},
        }
    )
    prompts = [
        {
            "name": name,
            "description": STRINGS[i % len(STRINGS)],
            "arguments": [
                {"name": arg, "description": STRINGS[j % len(STRINGS)], "required": j % 2 == 0}
                for j, arg in enumerate(PROPERTIES)
            ],
        }
        for i, name in enumerate(NAMES)
    ]
    templates = [
        {
            "name": name,
            "uriTemplate": "x://{a}/{+b}{?c,d}" + STRINGS[i % len(STRINGS)].replace("{", "(").replace("}", ")"),
            "description": STRINGS[i % len(STRINGS)],
            "mimeType": STRINGS[(i + 2) % len(STRINGS)],
        }
        for i, name in enumerate(NAMES)
    ]
    return Snapshot.of("2025-11-25", {"name": STRINGS[2], "version": STRINGS[6]}, {}, tools, prompts, templates)
