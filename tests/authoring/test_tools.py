"""Typed tools, resources and prompts, served in-process: what a model and a user see on the wire."""

from __future__ import annotations

import argparse
import asyncio
import base64
import enum
import functools
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from mcpgen._runtime.codec import MAX_REPORTED_ERRORS
from mcpgen._runtime.server.authoring.signatures import DeclarationError, UriTemplate
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28.server import App, Audio, Context, File, Image, Server, ToolError
from pydantic import AfterValidator, Base64Bytes, BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from tests.authoring.apps import CALLS, Driver, make_app, run
from tests.server.servers import request


def schemas(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in listed["tools"]}


def refs(schema: Any) -> list[str]:
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("$ref"), str):
            found.append(schema["$ref"])
        for value in schema.values():
            found += refs(value)
    elif isinstance(schema, list):
        for value in schema:
            found += refs(value)
    return found


def test_schemas_are_built_from_the_annotations_and_self_contained() -> None:
    async def go() -> dict[str, Any]:
        async with Driver(make_app()) as d:
            return await d.result("tools/list")

    tools = schemas(run(go()))
    add = tools["add"]
    assert add["description"] == "Add two integers."
    assert add["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert add["outputSchema"] == {  # an int is wrapped: structuredContent is an object up to 2025-11-25
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    props = tools["describe"]["inputSchema"]["properties"]
    assert props["scale"] == {"type": "number", "exclusiveMinimum": 0, "default": 1.0, "description": "How much bigger"}
    assert props["mode"] == {"enum": ["fast", "exact"], "type": "string", "default": "fast"}
    assert tools["describe"]["inputSchema"]["required"] == ["shape"]
    assert "title" not in json.dumps(props["scale"])  # no titles made up from parameter names
    assert "outputSchema" not in tools["describe"]  # a str stays unstructured
    for name in ("describe", "grow", "forecast"):
        for key in ("inputSchema", "outputSchema"):
            schema = tools[name].get(key)
            if schema is None:
                continue
            jsonschema.Draft202012Validator.check_schema(schema)
            for ref in refs(schema):  # every $ref resolves inside its own schema
                assert ref.startswith("#/$defs/") and ref.split("/")[-1] in schema["$defs"], (name, key, ref)
    assert tools["grow"]["outputSchema"]["type"] == "object"  # a recursive root is inlined, $defs kept
    get_data = tools["get-data"]
    assert get_data["title"] == "Get data" and get_data["annotations"] == {"readOnlyHint": True}
    assert "outputSchema" not in get_data


def test_invalid_arguments_are_a_tool_error_naming_each_field_and_the_function_never_runs() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            CALLS.clear()
            return [
                await d.call("add", {"a": "x", "b": 1}),
                await d.call("add", {"a": "5", "b": 1.5}),  # strict JSON: no coercion
                await d.call("add", {"a": 1}),
                await d.call("add", {"a": 1, "b": 2, "c": 3}),
                await d.call("describe", {"shape": {"name": "sq", "points": [{"x": 1}], "color": "green"}}),
                await d.call("describe", {"shape": {"name": "sq", "points": []}, "scale": 0, "mode": "slow"}),
            ]

    results = run(go())
    assert CALLS == []
    texts = [r["content"][0]["text"] for r in results]
    assert all(r["isError"] is True and "structuredContent" not in r for r in results)
    assert texts[0] == "Invalid arguments for tool 'add':\n- a: Input should be a valid integer (got \"x\")"
    assert "- a: Input should be a valid integer" in texts[1] and "- b: Input should be a valid integer" in texts[1]
    assert texts[2].endswith("- b: Field required")
    assert texts[3].endswith("- c: unexpected argument")
    assert (
        "- shape.points.0.y: Field required" in texts[4]
        and "- shape.color: Input should be 'red' or 'blue'" in texts[4]
    )
    assert (
        "- scale: Input should be greater than 0" in texts[5]
        and "- mode: Input should be 'fast' or 'exact'" in texts[5]
    )


def test_the_errors_named_for_invalid_arguments_are_bounded_whatever_was_sent() -> None:
    points = [{"x": "k" * 10_000} for _ in range(500)]  # each: x not an integer, y missing

    async def go() -> Any:
        async with Driver(make_app()) as d:
            return await d.call("describe", {"shape": {"name": "sq", "points": points}})

    text = run(go())["content"][0]["text"]
    lines = text.splitlines()[1:]
    assert len(lines) == MAX_REPORTED_ERRORS + 1 and lines[-1] == f"- ...: {1000 - MAX_REPORTED_ERRORS} more"
    assert lines[0].startswith('- shape.points.0.x: Input should be a valid integer (got "kkk')
    assert len(text) < 2_000


def test_valid_arguments_reach_the_function_as_the_authors_types() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            shape = {"name": "sq", "points": [{"x": 1, "y": 2}], "color": "blue"}
            return [
                await d.call("add", {"a": 2, "b": 3}),
                await d.call("describe", {"shape": shape, "scale": 2, "label": None}),
                await d.call("grow", {"tree": {"value": 1, "children": [{"value": 0}]}}),
            ]

    added, described, grown = run(go())
    assert added == {
        "content": [{"type": "text", "text": "5"}],
        "structuredContent": {"result": 5},
        "resultType": "complete",
        "_meta": added["_meta"],
    }
    assert described["content"] == [{"type": "text", "text": "sq x2.0 blue fast None"}]
    assert grown["structuredContent"]["value"] == 2 and grown["structuredContent"]["children"][0]["value"] == 1


def test_structured_output_is_validated_and_sent_with_its_json_as_text() -> None:
    async def go() -> tuple[Any, Any, Any]:
        async with Driver(make_app()) as d:
            listed = schemas(await d.result("tools/list"))
            return listed, await d.call("forecast", {"city": "Oslo"}), await d.call("broken_forecast", {"city": "Oslo"})

    listed, good, broken = run(go())
    jsonschema.Draft202012Validator(listed["forecast"]["outputSchema"]).validate(good["structuredContent"])
    assert good["structuredContent"] == {"city": "Oslo", "highs": [20.5, 21.0], "units": "celsius"}
    assert json.loads(good["content"][0]["text"]) == good["structuredContent"]
    assert broken["isError"] is True and "structuredContent" not in broken  # never sent as success
    assert "does not fit its return annotation: highs: Input should be a valid list" in broken["content"][0]["text"]


def test_exceptions_become_tool_errors_and_masking_hides_all_but_tool_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def go(**options: Any) -> list[Any]:
        async with Driver(make_app(**options)) as d:
            return [await d.call("fail"), await d.call("refuse")]

    fail, refuse = run(go())
    assert fail["isError"] is True and fail["content"][0]["text"] == "the secret database password is hunter2"
    assert refuse["content"][0]["text"] == "you may not do that"
    assert "RuntimeError: the secret database password is hunter2" in capsys.readouterr().err  # the log keeps it
    fail, refuse = run(go(mask_errors=True))
    assert fail["isError"] is True and fail["content"][0]["text"] == "tool 'fail' failed"
    assert "hunter2" not in json.dumps(fail)
    assert refuse["content"][0]["text"] == "you may not do that"


def test_content_unknown_tools_and_threads() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            return [
                await d.call("picture"),
                await d.call("get-data"),
                await d.send("tools/call", {"name": "nope", "arguments": {}}),
                await d.call("where"),
            ]

    picture, data, unknown, where = run(go())
    assert picture["content"] == [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    assert data["content"] == [{"type": "text", "text": '{"n":1}'}] and "structuredContent" not in data
    assert unknown["error"]["code"] == -32602 and unknown["error"]["message"] == "Unknown tool: nope"
    assert where["content"][0]["text"] == "worker"  # a sync function runs in a worker thread, not on the loop


def test_resources_and_templates() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            return [
                await d.result("resources/list"),
                await d.result("resources/templates/list"),
                await d.result("resources/read", {"uri": "memo://static"}),
                await d.result("resources/read", {"uri": "files://a/b%20c.txt"}),
                await d.result("resources/read", {"uri": "points://3/4"}),
                await d.send("resources/read", {"uri": "points://x/4"}),
                await d.send("resources/read", {"uri": "files://missing/file"}),
                await d.send("resources/read", {"uri": "nowhere://at/all"}),
            ]

    listed, templates, memo, file, point, bad, missing, nowhere = run(go())
    assert listed["resources"] == [
        {"uri": "memo://static", "name": "memo", "description": "A static memo", "mimeType": "text/markdown"}
    ]
    assert [t["uriTemplate"] for t in templates["resourceTemplates"]] == ["files://{+path}", "points://{x}/{y}"]
    assert memo["contents"] == [{"uri": "memo://static", "mimeType": "text/markdown", "text": "# memo"}]
    assert file["contents"] == [
        {"uri": "files://a/b%20c.txt", "mimeType": "application/octet-stream", "blob": "YS9iIGMudHh0"}  # a/b c.txt
    ]
    assert json.loads(point["contents"][0]["text"]) == {"x": 3, "y": 4}
    assert point["contents"][0]["mimeType"] == "application/json"
    assert bad["error"]["code"] == -32602 and "x: Input should be a valid integer" in bad["error"]["message"]
    for reply, uri in ((missing, "files://missing/file"), (nowhere, "nowhere://at/all")):
        assert reply["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": uri}}


def test_prompts() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            return [
                await d.result("prompts/list"),
                await d.result("prompts/get", {"name": "greet", "arguments": {"name": "Ada", "times": "2"}}),
                await d.result("prompts/get", {"name": "chat", "arguments": {"topic": "tides"}}),
                await d.send("prompts/get", {"name": "greet", "arguments": {}}),
                await d.send("prompts/get", {"name": "nope"}),
            ]

    listed, greeted, chat, missing, unknown = run(go())
    assert listed["prompts"][0] == {
        "name": "greet",
        "description": "A greeting.",
        "arguments": [
            {"name": "name", "description": "Who", "required": True},
            {"name": "times", "required": False},
        ],
    }
    assert greeted["messages"] == [{"role": "user", "content": {"type": "text", "text": "Hello Ada Hello Ada"}}]
    assert greeted["description"] == "A greeting."
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant"]
    assert missing["error"]["code"] == -32602 and "name: Field required" in missing["error"]["message"]
    assert unknown["error"] == {"code": -32602, "message": "Unknown prompt: nope", "data": {"name": "nope"}}


def test_a_prompt_lists_its_arguments_as_get_validates_them() -> None:
    """Found by a typed-tools review: ``topic: str = Field(description=...)`` was listed as not
    required and without its description, while prompts/get refused a call without it (-32602)."""
    app = App("prompted", surface="tests.authoring.no_such_surface")

    @app.prompt
    def brief(
        topic: str = Field(description="The topic"),
        tone: str = Field("neutral", description="Tone"),
        length: Annotated[int, Field(description="Words")] = 100,
    ) -> str:
        return f"{topic} {tone} {length}"

    async def go() -> tuple[Any, Any]:
        async with Driver(app) as d:
            return await d.result("prompts/list"), await d.send("prompts/get", {"name": "brief", "arguments": {}})

    listed, missing = run(go())
    assert listed["prompts"][0]["arguments"] == [
        {"name": "topic", "description": "The topic", "required": True},
        {"name": "tone", "description": "Tone", "required": False},
        {"name": "length", "description": "Words", "required": False},
    ]
    assert missing["error"]["code"] == -32602 and "topic: Field required" in missing["error"]["message"], missing


class Audience(BaseModel):
    level: Literal["novice", "expert"]


def test_a_prompt_argument_a_string_cannot_be_is_read_as_json() -> None:
    """Prompt arguments are strings on the wire: a parameter a string can never be (a list, a
    model, ``None``) takes the JSON the string holds; it was -32602 for
    any value (an author review). A string that is not such JSON, or whose JSON does not fit, is
    still -32602, naming what the JSON got wrong; a value a string already is stays that string."""
    app = App("prompted", surface="tests.authoring.no_such_surface")

    @app.prompt
    def brief(topic: str, tags: list[str] | None, audience: Audience | None = None, count: int = 1) -> str:
        return f"{topic} {tags} {audience.level if audience else '-'} {count}"

    async def go() -> list[Any]:
        async with Driver(app) as d:
            listed.append(await d.result("prompts/list"))
            calls = [
                {"topic": '["x"]', "tags": '["tides", "moon"]', "audience": '{"level": "expert"}', "count": "3"},
                {"topic": "null", "tags": "null"},
                {"topic": "t", "tags": "tides"},
                {"topic": "t", "tags": '["tides", 2]'},
                {"topic": "t", "tags": "[]", "audience": '{"level": "guru"}'},
            ]
            return [await d.send("prompts/get", {"name": "brief", "arguments": a}) for a in calls]

    listed: list[Any] = []
    both, nulls, plain, wrong_item, wrong_model = run(go())
    # the listing says which arguments are JSON (prompt arguments have no type): with the schema
    # when it is short and needs no definitions
    assert listed[0]["prompts"][0]["arguments"] == [
        {"name": "topic", "required": True},
        {
            "name": "tags",
            "description": 'Given as JSON: {"anyOf":[{"items":{"type":"string"},"type":"array"},{"type":"null"}]}',
            "required": True,
        },
        {"name": "audience", "description": "Given as JSON", "required": False},
        {"name": "count", "required": False},
    ]
    assert both["result"]["messages"][0]["content"]["text"] == "[\"x\"] ['tides', 'moon'] expert 3"
    assert nulls["result"]["messages"][0]["content"]["text"] == "null None - 1"
    assert plain["error"]["code"] == -32602 and "tags: Input should be a valid list" in plain["error"]["message"]
    assert wrong_item["error"]["code"] == -32602
    assert "tags.1: Input should be a valid string" in wrong_item["error"]["message"], wrong_item
    assert wrong_model["error"]["code"] == -32602 and "audience.level" in wrong_model["error"]["message"]


AMOUNT = Field(json_schema_extra={"x-mcp-header": "Amount"})
BAD_NAME = Field(json_schema_extra={"x-mcp-header": "Bad Name"})


def float_amount(amount: Annotated[float, AMOUNT]) -> str:
    return "never"


def optional_amount(amount: Annotated[str | None, AMOUNT] = None) -> str:
    return "never"


def named_amount(amount: Annotated[str, BAD_NAME]) -> str:
    return "never"


@pytest.mark.parametrize(
    ("function", "said"),
    [
        (float_amount, "x-mcp-header 'Amount' is on 'amount', whose type is not string, integer or boolean"),
        (optional_amount, "x-mcp-header 'Amount' is on 'amount', whose type is not string, integer or boolean"),
        (named_amount, "x-mcp-header 'Bad Name' of 'amount' is not an HTTP header name"),
    ],
)
def test_a_tool_whose_header_annotation_a_client_would_drop_is_refused(function: Any, said: str) -> None:
    """tools.mdx: ``x-mcp-header`` only on a string, integer or boolean, named by an HTTP token,
    else the definition is invalid and a client drops the tool. Found by a typed-tools review:
    an App listed such a tool as it was (this project's own client then dropped it)."""
    app = App("headers", surface="tests.authoring.no_such_surface")
    app.add_tool(function)
    with pytest.raises(DeclarationError) as refused:
        app.describe()
    assert str(refused.value).endswith(f"tool {function.__name__!r}: {said}"), refused.value


def region(where: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return where


def test_a_tool_with_a_valid_header_annotation_is_listed_with_it() -> None:
    app = App("headers", surface="tests.authoring.no_such_surface")

    app.add_tool(region)
    assert app.describe()["tools"][0]["inputSchema"]["properties"]["where"]["x-mcp-header"] == "Region"


def test_capabilities_follow_what_is_declared() -> None:
    from mcpgen.v2026_07_28.server import App

    only_tools = App("t", surface="tests.authoring.no_such_surface")
    only_tools.tool(name="x")(lambda: "x")
    caps = only_tools.server.capabilities()
    assert "tools" in caps and "prompts" not in caps and "resources" not in caps
    caps = make_app().server.capabilities()
    assert caps["tools"] == {"listChanged": True} and caps["prompts"] == {"listChanged": True}
    assert caps["resources"] == {"listChanged": True, "subscribe": True}


def test_tools_added_and_removed_while_serving_are_listed_and_announced() -> None:
    async def go() -> tuple[list[str], list[str], list[dict[str, Any]]]:
        app = make_app()
        async with Driver(app) as d:
            listen = request("listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            d.io.send(listen)
            await d.io.until(lambda msg: msg.get("method") == "notifications/subscriptions/acknowledged")

            def triple(n: int) -> int:
                """Three times n."""
                return 3 * n

            def announced() -> list[dict[str, Any]]:
                return [msg for msg in d.io.out if msg.get("method") == "notifications/tools/list_changed"]

            app.add_tool(triple)
            await d.io.until(lambda _: len(announced()) == 1)
            after_add = [t["name"] for t in (await d.result("tools/list"))["tools"]]
            tripled = await d.call("triple", {"n": 4})

            def drop() -> str:
                """Removes add, from a worker thread (a sync tool)."""
                app.remove_tool("add")
                return "dropped"

            app.add_tool(drop)
            await d.io.until(lambda _: len(announced()) == 2)
            await d.call("drop")

            await d.io.until(lambda _: len(announced()) == 3)
            changed = announced()
            after_remove = [t["name"] for t in (await d.result("tools/list"))["tools"]]
            app.server.router.services.subscriptions.close()
            assert tripled["structuredContent"] == {"result": 12}
            return after_add, after_remove, changed

    after_add, after_remove, changed = run(go())
    assert after_add[-1] == "triple" and "add" in after_add
    assert "add" not in after_remove and "triple" in after_remove
    assert changed[0]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen"}


@pytest.mark.parametrize(("version", "code"), [("2025-11-25", -32002), ("2024-11-05", -32002)])
def test_an_unknown_resource_gets_its_revisions_code_on_a_legacy_session(version: str, code: int) -> None:
    """-32002 before 2026 (server/resources, "Resource not found"), -32602 on 2026-07-28: the
    overlay's resource_not_found reaches the registry, and a legacy session answers with its own."""

    async def go() -> list[dict[str, Any]]:
        async with Driver(make_app()) as d:
            modern = await d.send("resources/read", {"uri": "nowhere://at/all"})
            init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
            d.io.send({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": init})
            await d.io.response("i")
            replies = [modern]
            for n, uri in enumerate(("nowhere://at/all", "files://missing/file")):
                d.io.send({"jsonrpc": "2.0", "id": f"r{n}", "method": "resources/read", "params": {"uri": uri}})
                replies.append(await d.io.response(f"r{n}"))
            return replies

    modern, unknown, missing = run(go())
    assert modern["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": "nowhere://at/all"}}
    assert unknown["error"] == {"code": code, "message": "Resource not found", "data": {"uri": "nowhere://at/all"}}
    assert missing["error"] == {"code": code, "message": "Resource not found", "data": {"uri": "files://missing/file"}}


def path_app() -> tuple[App, list[str]]:
    """Resource templates taking a segment and a path, with and without ``allow_paths``."""
    app = App("paths", surface="tests.authoring.no_such_surface")
    seen: list[str] = []

    @app.resource("notes://{name}")
    def note(name: str) -> str:
        seen.append(name)
        return name

    @app.resource("docs://{+path}")
    def doc(path: str) -> str:
        seen.append(path)
        return path

    @app.resource("raw://{name}", allow_paths=True)
    def raw(name: str) -> str:
        seen.append(name)
        return name

    @app.resource("tree://{owner}/{+path}", allow_paths=["path"])
    def tree(owner: str, path: str) -> str:
        seen.append(f"{owner}:{path}")
        return f"{owner}:{path}"

    @app.resource("tree://{+anything}", allow_paths=True)  # never tried for a URI tree://{owner}/ refused
    def anything(anything: str) -> str:
        seen.append(anything)
        return anything

    return app, seen


REFUSED = [
    "notes://..%2F..%2Fetc%2Fpasswd",  # %2F decoded: a {name} is one segment
    "notes://%2Fetc%2Fshadow",
    "notes://a%00b",
    "notes://..",
    "notes://a%5Cb",  # a backslash separates too
    "notes://C:%5Cboot.ini",
    "docs://../../etc/passwd",
    "docs://a/../../etc/passwd",
    "docs://a/../b",
    "docs://%2E%2E/secret",
    "docs:///etc/passwd",
    "docs://%2Fetc%2Fpasswd",
    "docs://a%5C..%5Cb",
    "docs://%5C%5Chost%5Cshare",
    "docs://C:/Windows",
    "docs://a/b%00.txt",
    "tree://..%2Fx/readme",  # {owner} is checked, {path} is not
]
PASSED = {
    "notes://hello%20world.txt": "hello world.txt",
    "notes://v1..2": "v1..2",  # .. inside a segment climbs nowhere
    "notes://.hidden": ".hidden",
    "docs://a/b/c.txt": "a/b/c.txt",
    "docs://a/./b": "a/./b",
    "raw://..%2F..%2Fetc%2Fpasswd": "../../etc/passwd",  # allow_paths=True
    "raw://%2Fetc%2Fshadow": "/etc/shadow",
    "raw://a%00b": "a\x00b",
    "tree://me/../../etc/passwd": "me:../../etc/passwd",  # allow_paths=["path"]
}


def test_a_resource_template_refuses_values_that_climb_out_of_a_directory_unless_allowed() -> None:
    """resources.mdx (Security): servers MUST sanitize file paths against directory traversal. A
    variable holding a NUL, a ``..`` segment, an absolute path or (``{name}``) a decoded separator
    is not found and the function never called, as the official SDK answers; ``allow_paths``
    passes them."""
    app, seen = path_app()

    async def go() -> tuple[list[dict[str, Any]], list[Any]]:
        async with Driver(app) as d:
            refused = [await d.send("resources/read", {"uri": uri}) for uri in REFUSED]
            passed = [await d.result("resources/read", {"uri": uri}) for uri in PASSED]
            return refused, passed

    refused, passed = run(go())
    for uri, reply in zip(REFUSED, refused, strict=True):
        assert reply["error"] == {"code": -32602, "message": "Resource not found", "data": {"uri": uri}}, uri
    assert [result["contents"][0]["text"] for result in passed] == list(PASSED.values())
    assert seen == list(PASSED.values())  # the refused ones never reached a function


def test_allow_paths_names_variables_of_a_template() -> None:
    app = App("paths", surface="tests.authoring.no_such_surface")
    with pytest.raises(DeclarationError, match=re.escape("allow_paths names nope, no variable of 'x://{name}'")):
        app.add_resource(fine_function, "x://{name}", allow_paths=["nope"])
    with pytest.raises(DeclarationError, match="allow_paths is for a resource template"):
        app.add_resource(fine_function, "x://static", allow_paths=True)
    assert not app.templates and not app.resources


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/list", "resources/templates/list"])
def test_an_app_lists_on_one_page_and_refuses_any_cursor(method: str) -> None:
    """An App gives out no cursor, so any cursor is not its own: -32602 (pagination.mdx), not the
    whole list again as if the cursor meant nothing."""

    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Driver(make_app()) as d:
            whole = await d.send(method)
            garbage = await d.send(method, {"cursor": "garbage"})
            empty = await d.send(method, {"cursor": ""})
            return whole, garbage, empty

    whole, garbage, empty = run(go())
    assert "result" in whole and "nextCursor" not in whole["result"]
    for refused in (garbage, empty):
        assert refused["error"]["code"] == -32602 and "Invalid cursor" in refused["error"]["message"]


class Point(BaseModel):
    x: int


def test_outputs_a_model_instance_hides_are_checked_as_they_are_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by an authoring review: pydantic takes a model instance as it is, so one changed after
    it was built went out as a success against its outputSchema; a value with no JSON form was a
    -32603 instead of the tool's error."""
    app = App("outputs", surface="tests.authoring.no_such_surface")

    @app.tool
    def changed() -> Point:
        point = Point(x=1)
        point.x = "nope"  # type: ignore[assignment]
        return point

    @app.tool
    def opaque() -> dict[str, Any]:
        return {"a": object()}

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call(name) for name in ("changed", "opaque")]

    for result in run(go()):
        assert result["isError"] is True and "structuredContent" not in result, result
    capsys.readouterr()


class Blob(BaseModel):
    name: str
    data: list[bytes]


def raw() -> bytes:
    return b"\x89PNG\xff"


def raw_inside() -> Blob:
    return Blob(name="x", data=[b"\xff"])


@pytest.mark.parametrize("function", [raw, raw_inside])
def test_a_return_type_holding_bytes_is_refused_at_declaration(function: Any) -> None:
    """A fresh user's review: ``-> bytes`` was declared (outputSchema ``format: binary``) and every
    call failed for bytes that are not UTF-8 text (a PNG): JSON carries bytes only as text."""
    app = App("bytes", surface="tests.authoring.no_such_surface")
    app.add_tool(function)
    with pytest.raises(DeclarationError, match="its return type holds bytes, which JSON carries only as text"):
        app.describe()


class Documented(BaseModel):
    blob: str = Field(json_schema_extra={"format": "binary"})  # text, whatever the schema says
    data: Base64Bytes


class Hexed(BaseModel):
    model_config = ConfigDict(ser_json_bytes="hex")
    data: bytes


def written_as_text() -> Documented:
    return Documented(blob="aGk=", data=base64.b64encode(b"\x89PNG"))


def hexed() -> Annotated[bytes, PlainSerializer(lambda b: b.hex())]:
    return b"\x89PNG"


def hexed_by_config() -> Hexed:
    return Hexed(data=b"\x89PNG")


def test_bytes_with_a_serializer_of_their_own_are_served() -> None:
    """A review of the diff: the first check read the JSON Schema, refusing a ``str`` documented
    as ``format: binary`` and bytes with a serializer of their own."""
    app = App("bytes", surface="tests.authoring.no_such_surface")
    for function in (written_as_text, hexed, hexed_by_config):
        app.add_tool(function)

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call(name) for name in ("written_as_text", "hexed", "hexed_by_config")]

    text, hexed_result, by_config = run(go())
    assert text["structuredContent"] == {"blob": "aGk=", "data": "iVBORw=="}, text
    assert hexed_result["structuredContent"] == {"result": "89504e47"}, hexed_result
    assert by_config["structuredContent"] == {"data": "89504e47"}, by_config


def test_outputs_with_no_json_form_are_the_tools_errors(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a typed-tools review: a ``float`` result of NaN went out as a success with
    ``structuredContent`` ``{"result": null}`` (its outputSchema says number) and text ``NaN``;
    an unannotated result with a cycle, or a key JSON cannot write, was a -32603 and a traceback
    rather than the tool's error (tools.mdx: errors in the tool's execution are results)."""
    app = App("no-json", surface="tests.authoring.no_such_surface")

    @app.tool
    def not_a_number() -> float:
        return float("nan")

    @app.tool
    def unbounded() -> dict[str, float]:
        return {"a": 1.0, "b": float("-inf")}

    @app.tool
    def cycle():  # type: ignore[no-untyped-def]
        loop: dict[str, Any] = {}
        loop["self"] = loop
        return loop

    @app.tool
    def set_key():  # type: ignore[no-untyped-def]
        return {frozenset([1]): 1}

    @app.tool
    def named_nan() -> dict[str, str]:
        return {"NaN": "Infinity"}  # the words, in strings: JSON

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call(name) for name in ("not_a_number", "unbounded", "cycle", "set_key", "named_nan")]

    *failed, named = run(go())
    for result in failed:
        assert result["isError"] is True and "structuredContent" not in result, result
        assert "cannot be written as JSON" in result["content"][0]["text"], result
    assert named["structuredContent"] == {"NaN": "Infinity"} and not named.get("isError")
    capsys.readouterr()


@pytest.mark.parametrize("version", [None, "2025-11-25", "2025-06-18"])
def test_a_result_with_a_lone_surrogate_is_answered_and_the_server_serves_on(
    version: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A string with a lone surrogate (``os.fsdecode`` of a file name that is no UTF-8) has no
    JSON form. Found by a typed-tools review: a modern request returning one was never answered
    (the writer's error left the session); now it is -32603 with the request's id on every
    revision, and a structured result with one is the tool's error, like other values JSON
    cannot write."""
    app = App("surrogates", surface="tests.authoring.no_such_surface")

    @app.tool
    def listing() -> str:
        return "report.txt\n" + os.fsdecode(b"caf\xe9.txt")

    @app.tool
    def structured() -> dict[str, str]:
        return {"name": os.fsdecode(b"caf\xe9.txt")}

    @app.tool
    def ping() -> str:
        return "pong"

    async def go() -> list[dict[str, Any]]:
        async with Driver(app) as d:
            if version is not None:
                init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
                d.io.send({"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": init})
                await d.io.response("i")
                d.io.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            replies = []
            for n, name in enumerate(("listing", "structured", "ping")):
                params = {"name": name, "arguments": {}}
                d.io.send(
                    request(n, "tools/call", params)
                    if version is None
                    else {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
                )
                replies.append(await asyncio.wait_for(d.io.response(n), 10))
            return replies

    listed, written, pong = run(go())
    assert listed["id"] == 0 and listed["error"]["code"] == -32603, listed
    assert "cannot be written as JSON" in listed["error"]["message"], listed
    assert written["result"]["isError"] is True, written
    assert "cannot be written as JSON" in written["result"]["content"][0]["text"], written
    assert pong["result"]["content"] == [{"type": "text", "text": "pong"}], pong
    capsys.readouterr()


def test_a_cancelled_error_a_tool_raises_itself_is_its_failure_not_a_cancellation(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found by a typed-tools review: ``asyncio.CancelledError`` raised by a tool (an awaited task
    of its own was cancelled, say) left the request unanswered, the server serving on; nothing
    had cancelled the call, so it is the tool's error like any other exception."""
    import asyncio

    app = App("cancelled", surface="tests.authoring.no_such_surface")

    @app.tool
    async def inner() -> str:
        child = asyncio.ensure_future(asyncio.sleep(10))
        child.cancel()
        await child  # raises CancelledError here, though this call was never cancelled
        return "unreachable"

    @app.tool
    def threaded() -> str:
        raise asyncio.CancelledError

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await asyncio.wait_for(d.call(name), 10) for name in ("inner", "threaded")]

    for result in run(go()):
        assert result["isError"] is True and result["content"] == [{"type": "text", "text": "CancelledError"}]
    capsys.readouterr()


def fine_function() -> str:
    return "fine"


def test_declarations_the_review_found_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    """A parameter renamed internally (``_x``) takes no other parameter's field (``field_0``); a
    second Context parameter is refused; a tool name outside the spec's advice is said on
    stderr; a tool added while serving that cannot be served leaves the app as it was."""
    app = App("declared", surface="tests.authoring.no_such_surface")

    @app.tool
    def both(_x: int, field_0: int) -> str:
        return f"{_x} {field_0}"

    @app.tool(name="bad name, with spaces!")
    def spaced() -> str:
        return "ok"

    assert "tool name 'bad name, with spaces!' is not 1-128 of" in capsys.readouterr().err

    def two(*, ctx: Context, other: Context | None = None) -> str:
        return "two"

    other = App("other", surface="tests.authoring.no_such_surface")
    other.add_tool(two)
    with pytest.raises(DeclarationError, match="both take the Context"):
        other.describe()  # declarations are read when the app is described or served

    hinted = App("hinted", surface="tests.authoring.no_such_surface")  # the options, as the revision's Tool has them
    hinted.add_tool(fine_function, annotations={"readOnlyHint": "yes"})  # tools/list failed for every tool
    with pytest.raises(DeclarationError, match=r"tool 'fine_function': annotations.readOnlyHint: Input should be"):
        hinted.describe()

    # a revision whose Tool requires what the declaration lacks (a made-up next one requiring a
    # description): the whole entry is checked, so describe (regen, check) says so in one line
    # instead of tools/list failing with -32603 for every tool once served
    class DescribedTool(hinted.types.tool):  # type: ignore[misc,name-defined]
        description: str

    strict = App("strict", surface="tests.authoring.no_such_surface")
    strict.types = strict.types._replace(tool=DescribedTool)

    @strict.tool
    def undocumented() -> str:
        return "?"

    with pytest.raises(DeclarationError, match=r"tool 'undocumented': description: Field required"):
        strict.describe()

    def starred(*args: int) -> str:
        return "never"

    def fine() -> str:
        return "fine"

    async def go() -> tuple[Any, Any, list[str]]:
        async with Driver(app) as d:
            called = await d.call("both", {"_x": 1, "field_0": 2})
            with pytest.raises(DeclarationError):
                app.add_tool(starred)
            app.add_tool(fine)  # the app serves on: this one is listed
            listed = [t["name"] for t in (await d.result("tools/list"))["tools"]]
            return called, await d.call("fine"), listed

    called, fine_result, listed = run(go())
    assert called["content"][0]["text"] == "1 2", called
    assert fine_result["content"][0]["text"] == "fine"
    assert "fine" in listed and "starred" not in listed


def refuse(value: int) -> int:
    """A validator raising what pydantic does not wrap (a KeyError)."""
    missing: dict[int, int] = {}
    return missing[value]


def test_what_an_authors_function_does_to_its_call_stays_in_its_call(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a typed-tools review: ``sys.exit`` in a tool (argparse, click) ended the whole
    server; a sync ``functools.wraps`` wrapper of an async function was answered with the text
    of its coroutine; a validator or ``default_factory`` that raised was -32603, not the tool's
    error; sync functions shared the loop's default executor (``min(32, cpus + 4)`` threads: 6
    here), so a few hung calls stopped every other; a generator was served as its object."""
    app = App("contained", surface="tests.authoring.no_such_surface", max_threads=8)
    together = threading.Barrier(8)

    @app.tool
    def parses(argv: list[str]) -> str:
        argparse.ArgumentParser(prog="parses", exit_on_error=True).parse_args(argv)
        return "parsed"

    @app.tool
    async def exits() -> str:
        sys.exit(3)

    @app.tool
    async def interrupts() -> str:
        raise KeyboardInterrupt  # the function's own (an author review: it ended a stdio server)

    def logged(fn: Any) -> Any:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return fn(*args, **kwargs)

        return wrapper

    @app.tool
    @logged
    async def fetched(url: str) -> str:
        await asyncio.sleep(0)
        return f"fetched {url}"

    @app.tool
    def validated(n: Annotated[int, AfterValidator(refuse)]) -> str:
        return "never"

    @app.tool
    def meets() -> str:
        together.wait(10)  # all eight calls at once, each in its own thread, or BrokenBarrierError
        return "met"

    async def go() -> list[Any]:
        async with Driver(app) as d:
            first = [
                await d.call("parses", {"argv": ["--bogus"]}),
                await d.call("exits"),
                await d.call("interrupts"),
                await d.call("fetched", {"url": "u"}),
                await d.call("validated", {"n": 1}),
            ]
            return first + list(await asyncio.gather(*(d.call("meets") for _ in range(8))))

    parsed, exited, interrupted, fetched_result, refused, *met = run(go())
    assert parsed["isError"] is True and "exited (SystemExit: 2)" in parsed["content"][0]["text"], parsed
    assert exited["isError"] is True and "exited (SystemExit: 3)" in exited["content"][0]["text"], exited
    assert interrupted["isError"] is True and "raised KeyboardInterrupt" in interrupted["content"][0]["text"]
    assert fetched_result["content"] == [{"type": "text", "text": "fetched u"}], fetched_result
    assert refused["isError"] is True and "Invalid arguments for tool 'validated'" in refused["content"][0]["text"]
    assert [r["content"][0]["text"] for r in met] == ["met"] * 8, met

    def numbers() -> Iterator[int]:
        yield 1

    async def stream() -> AsyncIterator[int]:
        yield 1

    for generator in (numbers, stream):
        other = App("generators", surface="tests.authoring.no_such_surface")
        with pytest.raises(DeclarationError, match="a generator cannot be served"):
            other.add_tool(generator)  # at the declaration (a typed-tools review: only when described)
        assert not other.tools

    def star(*values: int) -> int:
        return sum(values)

    def slash(a: int, /) -> int:
        return a

    for kind, unnamed in (("tool", star), ("prompt", slash)):
        other = App("shapes", surface="tests.authoring.no_such_surface")
        with pytest.raises(DeclarationError, match="must be passable by name"):
            getattr(other, kind)(unnamed)
    with pytest.raises(ValueError, match="max_threads"):
        App("none", surface="tests.authoring.no_such_surface", max_threads=0)
    for wrong in (Server(), dict, "Server"):  # an instance, a class of another kind, a name
        with pytest.raises(TypeError, match="server= takes a class derived from a generated server module's Server"):
            App("wrong", surface="tests.authoring.no_such_surface", server=wrong)  # type: ignore[arg-type]
    capsys.readouterr()


def test_a_set_argument_advertises_what_validation_takes() -> None:
    """Validation takes ``[1, 1]`` for a ``set[int]`` (as ``{1}``), so the input schema does not
    say ``uniqueItems`` (it did: what passed was not what the schema advertised); an output set
    is unique, and says so."""
    app = App("sets", surface="tests.authoring.no_such_surface")

    @app.tool
    def distinct(values: set[int]) -> set[int]:
        return values

    async def go() -> tuple[Any, Any]:
        async with Driver(app) as d:
            listed = (await d.result("tools/list"))["tools"][0]
            return listed, await d.call("distinct", {"values": [1, 1, 2]})

    listed, called = run(go())
    assert listed["inputSchema"]["properties"]["values"] == {"type": "array", "items": {"type": "integer"}}
    assert listed["outputSchema"]["properties"]["result"]["uniqueItems"] is True
    assert sorted(called["structuredContent"]["result"]) == [1, 2]


class Connection:
    """A parameter type with no JSON Schema."""


def connected(conn: Connection) -> str:
    return "never"


def test_a_declaration_that_cannot_be_listed_says_so_naming_its_function() -> None:
    """Found by a typed-tools review: a lambda was served as ``<lambda>`` (with a warning about
    the name), and a parameter type with no JSON Schema passed the decorator, then failed the
    first listing with pydantic's own error, naming no function."""
    app = App("declared", surface="tests.authoring.no_such_surface")
    with pytest.raises(DeclarationError, match="a tool needs a name: pass name="):
        app.add_tool(lambda: "x")
    with pytest.raises(DeclarationError, match="a prompt needs a name: pass name="):
        app.add_prompt(lambda: "x")
    app.add_tool(lambda: "x", name="named")
    app.add_tool(connected)
    line = connected.__code__.co_firstlineno
    where = rf"test_tools\.connected \(at tests/authoring/test_tools\.py, line {line}\)"
    with pytest.raises(DeclarationError, match=where + ": its parameters have no JSON Schema"):
        app.describe()


def test_a_server_whose_declaration_cannot_be_served_ends_with_one_line(tmp_path: Path) -> None:
    """A fresh-user review: a tool taking a ``socket.socket`` passed its decorator (schemas are
    built at the first listing, off the import path) and the server died at start with 25 lines
    of traceback into the runtime; it ends with one line naming the function and its file."""
    script = tmp_path / "bad.py"
    script.write_text(
        "import socket\n"
        "from mcpgen.v2026_07_28.server import App\n"
        "app = App('bad', surface='no_such_surface')\n"
        "@app.tool\n"
        "def wired(s: socket.socket) -> str:\n"
        "    return 'x'\n"
        "app.run_stdio()\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, input="", capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 1 and done.stdout == ""
    said = [line for line in done.stderr.splitlines() if "warning" not in line.lower()]
    assert len(said) == 1 and said[0].startswith(
        "cannot serve the app 'bad': bad.wired (at bad.py, line 4): its parameters have no JSON Schema: "
    ), done.stderr


def search(q: str = "", limit: int = 10) -> str:
    return f"{q}|{limit}"


def spot(region: str, name: str, ext: str, lang: str = "") -> str:
    return f"{region}|{name}|{ext}|{lang}"


def test_resource_templates_take_rfc_6570_level_3_expressions() -> None:
    """Found by a typed-tools review: only {name} and {+name} were taken (the official SDK takes
    query, path and the other level 3 operators), so a search resource could not be declared.
    A query expression comes last; its variables may be absent (their defaults apply), in any
    order, others ignored; a '+' in a value is a plus (RFC 6570 writes a space %20)."""
    app = App("templated", surface="tests.authoring.no_such_surface")
    app.add_resource(search, "search://items{?q,limit}")
    app.add_resource(spot, "maps://{region}{/name,ext}{;lang}")

    async def go() -> list[Any]:
        async with Driver(app) as d:
            uris = [
                "search://items?q=tide%20pools&limit=3",
                "search://items?limit=5&other=x&q=c++",
                "search://items",
                "maps://eu/harbour/png;lang=fr",
                "maps://eu/harbour/png;lang",
            ]
            return [await d.send("resources/read", {"uri": uri}) for uri in [*uris, "search://items?limit=many"]]

    *read, bad = run(go())
    texts = [reply["result"]["contents"][0]["text"] for reply in read]
    assert texts == ["tide pools|3", "c++|5", "|10", "eu|harbour|png|fr", "eu|harbour|png|"], texts
    assert bad["error"]["code"] == -32602 and "limit" in bad["error"]["message"], bad
    for template, said in (
        ("x://{a:3}", "{a:3} is not supported"),
        ("x://{a*}", "{a*} is not supported"),
        ("x://{?a}/rest", "a query expression ({?...}) comes last"),
    ):
        with pytest.raises(DeclarationError, match=re.escape(said)):
            UriTemplate.parse(template)


@pytest.mark.parametrize(
    ("template", "values"),
    [
        ("notes://{name}", {"name": "a b,c"}),
        ("docs://{+path}", {"path": "a/b c/d.txt"}),
        ("f://doc{#section}", {"section": "intro/part 2"}),
        ("l://file{.ext}", {"ext": "tar"}),
        ("files://{dir}{/name,ext}", {"dir": "home", "name": "a b", "ext": "txt"}),
        ("m://x{;lang,v}", {"lang": "en", "v": ""}),
        ("search://items{?q,limit}{&page}", {"q": "c++ & more", "limit": "3", "page": "2"}),
        ("search://items{?q,limit}", {"limit": "3"}),
    ],
)
def test_what_the_client_expands_the_server_matches(template: str, values: dict[str, str]) -> None:
    """The typed client's RFC 6570 expansion and the App's matching read one another."""
    from mcpgen._runtime.client.tool_client import expand_uri_template

    parsed = UriTemplate.parse(template)
    assert parsed is not None
    assert parsed.match(expand_uri_template(template, values)) == values


def test_icons_are_taken_by_every_decorator() -> None:
    """Found by a typed-tools review: only add_tool(..., icons=...) took icons."""
    app = App("iconic", surface="tests.authoring.no_such_surface")
    icon = {"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}

    @app.tool(icons=[icon])
    def lit() -> str:
        return "lit"

    @app.prompt(icons=(icon,))
    def said() -> str:
        return "said"

    @app.resource("memo://iconic", icons=[icon])
    def memo() -> str:
        return "memo"

    described = app.describe()
    assert [entry["icons"] for kind in ("tools", "prompts", "resources") for entry in described[kind]] == [[icon]] * 3


class Reading(BaseModel):
    value: Any


def test_nan_inside_a_value_typed_any_is_the_tools_error_not_null(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a typed-tools review: where the type is ``Any`` (``dict[str, Any]``, a bare
    ``dict``, a model field typed ``Any``) pydantic writes NaN and infinities as null, so a NaN
    reading went out as a success holding null."""
    app = App("any-nan", surface="tests.authoring.no_such_surface")

    @app.tool
    def reading() -> dict[str, Any]:
        return {"value": float("nan"), "max": 1.0}

    @app.tool
    def bare() -> dict:  # type: ignore[type-arg]
        return {"nested": [{"x": float("inf")}]}

    @app.tool
    def anything() -> Any:
        return [1, float("-inf")]

    @app.tool
    def model() -> Reading:
        return Reading(value={"deep": (float("nan"),)})

    @app.tool
    def honest_null() -> dict[str, Any]:
        return {"value": None, "text": "null"}  # a null that was never a NaN

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call(name) for name in ("reading", "bare", "anything", "model", "honest_null")]

    *refused, honest = run(go())
    for result in refused:
        assert result["isError"] is True and "structuredContent" not in result, result
        assert "NaN and infinities have no JSON form" in result["content"][0]["text"], result
    assert honest["structuredContent"] == {"value": None, "text": "null"} and not honest.get("isError")
    capsys.readouterr()


def test_annotated_defaults_constraints_and_failing_messages_as_a_review_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Found by a typed-tools review: ``Annotated[int, Field(default=20)]`` made a required
    argument; constraints of an ``Annotated`` return type were neither listed nor checked; an
    output error was located at "(arguments)"; a float argument too large for a float reached the
    function as inf; an exception whose ``__str__`` raises was a -32603, and an exception's
    message went out whatever its size; a prompt's or resource's exception was a bare -32603."""
    app = App("review", surface="tests.authoring.no_such_surface")

    @app.tool
    def page(size: Annotated[int, Field(default=20, ge=1)]) -> int:
        return size

    @app.tool
    def count(n: int) -> Annotated[int, Field(ge=0, description="never negative")]:
        return n

    @app.tool
    def shaped() -> dict[str, int]:
        return [1]  # type: ignore[return-value]

    @app.tool
    def half(x: float) -> str:
        return repr(x / 2)

    class Unsayable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no words")

    @app.tool
    def unsayable() -> str:
        raise Unsayable

    @app.tool
    def wordy() -> str:
        raise ValueError("E" * 50_000)

    @app.tool
    def wordy_on_purpose() -> str:
        raise ToolError("T" * 50_000)

    @app.prompt
    def brief() -> str:
        raise RuntimeError("the template is missing")

    @app.resource("memo://broken")
    def broken() -> str:
        raise RuntimeError("the disk is gone")

    described = {tool["name"]: tool for tool in app.describe()["tools"]}
    assert "size" not in described["page"]["inputSchema"].get("required", [])
    assert described["page"]["inputSchema"]["properties"]["size"] == {"default": 20, "minimum": 1, "type": "integer"}
    assert described["count"]["outputSchema"]["properties"]["result"] == {
        "description": "never negative",
        "minimum": 0,
        "type": "integer",
    }

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [
                await d.call("page"),
                await d.call("page", {"size": 3}),
                await d.call("page", {"size": 0}),
                await d.call("count", {"n": 2}),
                await d.call("count", {"n": -1}),
                await d.call("shaped"),
                await d.call("half", {"x": 10**400}),
                await d.call("unsayable"),
                await d.call("wordy"),
                await d.call("wordy_on_purpose"),
                await d.send("prompts/get", {"name": "brief"}),
                await d.send("resources/read", {"uri": "memo://broken"}),
            ]

    page_default, page_3, page_0, two, minus, shape, huge, unsaid, long, long_tool_error, prompt, resource = run(go())
    assert page_default["structuredContent"] == {"result": 20} and page_3["structuredContent"] == {"result": 3}
    assert page_0["isError"] is True and "size" in page_0["content"][0]["text"]
    assert two["structuredContent"] == {"result": 2}
    assert minus["isError"] is True and "structuredContent" not in minus
    assert "result: Input should be greater than or equal to 0 (got -1)" in minus["content"][0]["text"]
    assert (
        shape["isError"] is True
        and "annotation: (result): Input should be a valid dictionary" in shape["content"][0]["text"]
    )
    assert huge["isError"] is True and "x:" in huge["content"][0]["text"], huge  # never inf
    assert unsaid["isError"] is True and unsaid["content"][0]["text"] == "Unsayable"
    text = long["content"][0]["text"]
    assert long["isError"] is True and text.startswith("E" * 4000 + "... (46000 more characters)")
    assert len(text) < 4100
    assert long_tool_error["content"][0]["text"] == "T" * 50_000  # the author's own message, whole
    assert prompt["error"]["code"] == -32603
    assert prompt["error"]["message"] == "the prompt 'brief' failed: the template is missing"
    assert resource["error"]["code"] == -32603
    assert resource["error"]["message"] == "the resource 'memo://broken' failed: the disk is gone"
    assert "RuntimeError: the disk is gone" in capsys.readouterr().err  # the traceback stays in the log

    masked = App("masked", surface="tests.authoring.no_such_surface", mask_errors=True)
    masked.prompt(brief)

    async def masked_go() -> Any:
        async with Driver(masked) as d:
            return await d.send("prompts/get", {"name": "brief"})

    hidden = run(masked_go())
    assert hidden["error"] == {"code": -32603, "message": "the prompt 'brief' failed"}
    capsys.readouterr()


def test_a_resource_value_with_no_json_form_is_an_error_not_invalid_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by a typed-tools review: a resource returning ``{"v": nan}`` was served as
    ``application/json`` with the text ``{"v":NaN}``, which is not JSON."""
    app = App("nan-resource", surface="tests.authoring.no_such_surface")

    @app.resource("memo://nan")
    def nan() -> dict[str, float]:
        return {"v": float("nan")}

    @app.resource("memo://cycle")
    def cycle() -> Any:
        loop: list[Any] = []
        loop.append(loop)
        return loop

    @app.resource("memo://words")
    def words() -> dict[str, str]:
        return {"NaN": "Infinity"}

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.send("resources/read", {"uri": f"memo://{name}"}) for name in ("nan", "cycle", "words")]

    nan_read, cycle_read, words_read = run(go())
    assert nan_read["error"]["code"] == -32603
    assert nan_read["error"]["message"] == (
        "the resource 'memo://nan' cannot be written as JSON: NaN and infinities have no JSON form"
    )
    assert cycle_read["error"]["code"] == -32603 and "cannot be written as JSON" in cycle_read["error"]["message"]
    (contents,) = words_read["result"]["contents"]
    assert json.loads(contents["text"]) == {"NaN": "Infinity"} and contents["mimeType"] == "application/json"
    capsys.readouterr()


def test_a_list_of_text_and_content_blocks_is_unstructured() -> None:
    """An author's review: ``list[str | ImageContent]`` became structured output (its schema the
    image's, the image sent as base64 text), though a list of strings and blocks is content."""
    app = App("mixed")

    @app.tool
    def captioned() -> list[str | m.ImageContent]:
        return ["a caption", m.ImageContent(type="image", data="AAAA", mime_type="image/png")]

    @app.tool
    def words() -> list[str]:  # strings alone stay structured, as before
        return ["a", "b"]

    async def go() -> tuple[Any, Any, Any]:
        async with Driver(app) as d:
            return schemas(await d.result("tools/list")), await d.call("captioned"), await d.call("words")

    listed, mixed, strings = run(go())
    assert "outputSchema" not in listed["captioned"] and "outputSchema" in listed["words"]
    assert mixed["content"] == [
        {"type": "text", "text": "a caption"},
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
    ]
    assert "structuredContent" not in mixed
    assert strings["structuredContent"] == {"result": ["a", "b"]}


def test_a_tool_returns_images_and_audio_as_bytes_and_a_mime_type(tmp_path: Path) -> None:
    """FastMCP's ``Image``; the official SDK's too: a tool had to build ``ImageContent`` with base64
    text itself. ``Image``/``Audio`` carry bytes and a MIME type (from a file's name by default)."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    (tmp_path / "plot.png").write_bytes(png)
    (tmp_path / "plot").write_bytes(png)
    app = App("media")

    @app.tool
    def plot() -> Image:
        return Image.from_file(tmp_path / "plot.png")

    @app.tool
    def captioned() -> list[str | Image | Audio]:
        return ["a caption", Image(png, "image/png"), Audio(b"RIFF....WAVE", "audio/wav")]

    async def go() -> tuple[Any, Any, Any]:
        async with Driver(app) as d:
            return schemas(await d.result("tools/list")), await d.call("plot"), await d.call("captioned")

    listed, image, mixed = run(go())
    assert "outputSchema" not in listed["plot"] and "outputSchema" not in listed["captioned"]
    block = {"type": "image", "data": base64.b64encode(png).decode(), "mimeType": "image/png"}
    assert image["content"] == [block] and "structuredContent" not in image
    assert mixed["content"] == [
        {"type": "text", "text": "a caption"},
        block,
        {"type": "audio", "data": base64.b64encode(b"RIFF....WAVE").decode(), "mimeType": "audio/wav"},
    ]
    with pytest.raises(ValueError, match="needs an image/\\* MIME type, not 'audio/wav'"):
        Image(png, "audio/wav")
    with pytest.raises(ValueError, match="its name tells no MIME type: give mime_type="):
        Image.from_file(tmp_path / "plot")
    with pytest.raises(TypeError, match="Audio data must be bytes, not str"):
        Audio("UklGRg==", "audio/wav")  # type: ignore[arg-type]


def test_a_text_or_content_result_that_does_not_fit_its_annotation_is_the_tools_error() -> None:
    """Noted at earlier stops: ``-> str`` (and ``-> None``) was not checked (a returned 5 went out as "5"), though
    a result that does not fit the return annotation is the tool's error, never success, as
    structured output already was."""
    app = App("text", surface="tests.authoring.no_such_surface")

    @app.tool
    def count() -> str:
        return 5  # type: ignore[return-value]

    @app.tool
    def nothing() -> None:
        return 5  # type: ignore[return-value]

    @app.tool
    def quiet() -> None:
        pass

    @app.tool
    def maybe(flag: bool) -> str | None:
        return None if flag else "yes"

    @app.tool
    def gallery() -> list[str | Image]:
        return ["ok", {"type": "image"}]  # type: ignore[list-item]

    @app.tool
    def fine() -> list[str | Image]:
        return ("a", Image(b"x", "image/png"))  # type: ignore[return-value]

    async def go() -> list[Any]:
        async with Driver(app) as d:
            calls = [
                ("count", {}),
                ("maybe", {"flag": True}),
                ("maybe", {"flag": False}),
                ("gallery", {}),
                ("fine", {}),
                ("nothing", {}),
                ("quiet", {}),
            ]
            return [await d.call(name, arguments) for name, arguments in calls]

    count_result, none, yes, gallery_result, fine_result, nothing_result, quiet_result = run(go())
    assert nothing_result["isError"] is True
    assert nothing_result["content"][0]["text"].endswith("(result): int where the return annotation has None")
    assert quiet_result["content"] == [] and "isError" not in quiet_result
    assert count_result["isError"] is True
    assert count_result["content"][0]["text"] == (
        "tool 'count' returned a result that does not fit its return annotation: "
        "(result): int where the return annotation has str"
    )
    assert none["content"] == [] and "isError" not in none and yes["content"] == [{"type": "text", "text": "yes"}]
    assert gallery_result["isError"] is True
    assert gallery_result["content"][0]["text"].endswith(
        "(result)[1]: dict where the return annotation has list[str | Image]"
    )
    assert "isError" not in fine_result and [b["type"] for b in fine_result["content"]] == ["text", "image"]


class Dangling(BaseModel):
    price: Money  # type: ignore[name-defined]  # noqa: F821  # never defined


def test_data_sent_as_text_is_checked_against_its_annotation() -> None:
    """Noted at earlier stops: ``-> int`` returning "x" went out as the text "x" where the result is
    text only (``structured=False``, a revision without structured output); it is the tool's error,
    as it is where the result is structured. A value that fits goes out as it was returned."""
    app = App("text-data", surface="tests.authoring.no_such_surface")

    @app.tool(structured=False)
    def total() -> int:
        return "x"  # type: ignore[return-value]

    @app.tool(structured=False)
    def pairs() -> dict[str, list[int]]:
        return {"a": [1, 2], "b": [3, "four"]}  # type: ignore[dict-item]

    @app.tool(structured=False)
    def fine() -> dict[str, float]:
        return {"a": 1}

    @app.tool(structured=False)
    def numbers() -> list[int]:
        return ["1", "2"]  # type: ignore[list-item]

    @app.tool(structured=False)
    def word() -> str | Setting:
        return "plain"

    @app.tool(structured=False)
    def maybe() -> Setting | None:
        return None

    @app.tool(structured=False)
    def broken() -> Setting:
        return Setting.model_construct(level="high")  # built without validation: no Level

    @app.tool(structured=False)
    def unresolved() -> Dangling:
        return {"price": 1}  # type: ignore[return-value]

    async def go() -> list[Any]:
        async with Driver(app) as d:
            names = ("total", "pairs", "fine", "numbers", "word", "broken", "unresolved", "maybe")
            return [await d.call(name) for name in names]

    results = run(go())
    total_result, pairs_result, fine_result, numbers_result, word_result, broken_result, unresolved_result = results[:7]
    assert results[7]["content"] == [] and "isError" not in results[7]  # None: no content, as before
    # written as structured output writes it (its text is the same JSON), a string as it is
    assert numbers_result["content"] == [{"type": "text", "text": "[1,2]"}]
    assert word_result["content"] == [{"type": "text", "text": "plain"}]
    assert broken_result["isError"] is True and "cannot be written as JSON" in broken_result["content"][0]["text"]
    # a model whose annotations name what is not defined: nothing to check with, sent as returned
    assert unresolved_result["content"] == [{"type": "text", "text": '{"price":1}'}]
    assert total_result["isError"] is True and total_result["content"][0]["text"] == (
        "tool 'total' returned a result that does not fit its return annotation: "
        '(result): Input should be a valid integer, unable to parse string as an integer (got "x")'
    )
    assert pairs_result["isError"] is True
    assert pairs_result["content"][0]["text"].endswith(
        'b.1: Input should be a valid integer, unable to parse string as an integer (got "four")'
    )
    assert fine_result["content"] == [{"type": "text", "text": '{"a":1.0}'}] and "isError" not in fine_result

    from mcpgen._runtime.server.authoring.signatures import Output, OutputError, RevisionTypes
    from mcpgen.v2024_11_05.server import App as OldApp

    old = RevisionTypes.of(OldApp.server_class.revision)  # no structured output at all
    output = Output(total, int, old, None)
    with pytest.raises(OutputError, match=r"\(result\): Input should be a valid integer"):
        output.result("x")
    assert output.result(5) == {"content": [{"type": "text", "text": "5"}]}
    assert output.result(True) == {"content": [{"type": "text", "text": "1"}]}  # as structured output writes it


def test_an_image_from_a_resource_is_a_blob_and_from_a_prompt_an_image_message() -> None:
    """A review of ``Image``: a resource returning one was written as JSON of its fields (or failed
    on bytes no text is), and a prompt returning one was a bare -32603 "Internal error"."""

    png = b"\x89PNG\r\n\x1a\n\xff"
    app = App("media", surface="tests.authoring.no_such_surface")

    @app.resource("img://plot")
    def plot() -> Image:
        return Image(png, "image/png")

    @app.prompt
    def look() -> list[str | Image]:
        return ["what is this?", Image(bytearray(png), "image/png")]

    @app.prompt
    def bad() -> list[str]:
        return [5]  # type: ignore[list-item]

    async def go() -> tuple[Any, Any, Any]:
        async with Driver(app) as d:
            read = await d.result("resources/read", {"uri": "img://plot"})
            return read, await d.result("prompts/get", {"name": "look"}), await d.send("prompts/get", {"name": "bad"})

    read, prompt, failed = run(go())
    data = base64.b64encode(png).decode()
    assert read["contents"] == [{"uri": "img://plot", "mimeType": "image/png", "blob": data}]
    assert prompt["messages"][1] == {
        "role": "user",
        "content": {"type": "image", "data": data, "mimeType": "image/png"},
    }
    assert failed["error"] == {
        "code": -32603,
        "message": "the prompt 'bad': a prompt message must be text, a content block, an Image, Audio or File "
        "or a message, not int",
    }
    buffer = bytearray(b"ab")
    image = Image(buffer, "image/png")  # type: ignore[arg-type]
    buffer[0] = 0
    assert image.data == b"ab" and Image(memoryview(b"abcdef")[::2], "image/png").data == b"ace"  # type: ignore[arg-type]


def test_a_misfit_names_the_item_of_a_sequence() -> None:
    from mcpgen._runtime.server.authoring.signatures import misfit

    assert misfit(["ok", {"type": "image"}], list[str | Image]) == (
        "(result)[1]: dict where the return annotation has list[str | Image]"
    )
    assert misfit(5, tuple[str, ...]) == "(result): int where the return annotation has tuple[str, ...]"


def speak() -> Audio:
    return Audio(b"x", "audio/wav")


def test_a_file_is_an_embedded_resource_its_text_as_text_and_any_other_bytes_as_a_blob(tmp_path: Path) -> None:
    """Noted at earlier stops: beside ``Image`` and ``Audio``, a tool returning a PDF or a CSV had
    to build the embedded resource block itself (its ``uri``, base64 by hand)."""
    pdf = b"%PDF-1.7\n\xe2\xe3\xcf\xd3"
    (tmp_path / "q3 report.pdf").write_bytes(pdf)
    app = App("files", surface="tests.authoring.no_such_surface")

    @app.tool
    def report() -> File:
        return File.from_file(tmp_path / "q3 report.pdf")

    @app.tool
    def table() -> list[str | File]:
        return ["the table:", File("a,b\n1,2\n", "text/csv", uri="tables://q3")]

    @app.tool
    def latin() -> list[File]:
        return [
            File(b"caf\xe9", "text/plain; charset=latin-1", uri="notes://latin"),  # read in its charset
            File(b"caf\xe9", "text/plain", uri="notes://bytes"),  # no charset: UTF-8, which these are not
        ]

    @app.resource("tables://current", mime_type="text/csv")
    def current() -> File:
        return File(b"a,b\n", "text/csv")

    @app.resource("tables://raw", mime_type="application/octet-stream")
    def raw() -> File:
        return File("a,b\n", "text/csv")  # the resource's type is written, and says bytes

    @app.prompt
    def review() -> list[str | File]:
        return ["review this:", File(b'{"a": 1}', "application/json")]

    async def go() -> list[Any]:
        async with Driver(app) as d:
            calls = [await d.call(name) for name in ("report", "table", "latin")]
            read = await d.result("resources/read", {"uri": "tables://current"})
            raw_read = await d.result("resources/read", {"uri": "tables://raw"})
            prompt = await d.result("prompts/get", {"name": "review"})
            return [*calls, read, raw_read, prompt]

    report_result, table_result, latin_result, read, raw_read, prompt = run(go())
    assert report_result["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "file:///q3%20report.pdf",  # the name only: the server's directories stay its own
                "mimeType": "application/pdf",
                "blob": base64.b64encode(pdf).decode(),
            },
        }
    ]
    assert table_result["content"] == [
        {"type": "text", "text": "the table:"},
        {"type": "resource", "resource": {"uri": "tables://q3", "mimeType": "text/csv", "text": "a,b\n1,2\n"}},
    ]
    assert [block["resource"] for block in latin_result["content"]] == [
        {"uri": "notes://latin", "mimeType": "text/plain; charset=latin-1", "text": "café"},
        {"uri": "notes://bytes", "mimeType": "text/plain", "blob": base64.b64encode(b"caf\xe9").decode()},
    ]
    assert read["contents"] == [{"uri": "tables://current", "mimeType": "text/csv", "text": "a,b\n"}]
    assert raw_read["contents"] == [
        {"uri": "tables://raw", "mimeType": "application/octet-stream", "blob": base64.b64encode(b"a,b\n").decode()}
    ]
    assert prompt["messages"][1] == {
        "role": "user",
        "content": {
            "type": "resource",
            "resource": {"uri": "file:///file.json", "mimeType": "application/json", "text": '{"a": 1}'},
        },
    }
    assert "isError" not in report_result and "structuredContent" not in table_result
    assert File("ok", "text/markdown").data == b"ok" and File(b"", "image/svg+xml").text() == ""
    with pytest.raises(ValueError, match="File needs a MIME type \\(type/subtype\\), not 'csv'"):
        File(b"a", "csv")
    with pytest.raises(TypeError, match="File data must be bytes or str, not int"):
        File(5, "text/plain")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("File uri must be a URI (scheme:...), not 'report.txt'")):
        File(b"a", "text/plain", uri="report.txt")
    (tmp_path / "config.yaml").write_text("a: 1\n")  # a name Python 3.11's mimetypes does not know
    assert File.from_file(tmp_path / "config.yaml").block()["resource"] == {
        "uri": "file:///config.yaml",
        "mimeType": "application/yaml",
        "text": "a: 1\n",
    }
    assert File(b"select 1", "application/sql").text() == "select 1"
    # text given as str is written in the charset its type names (it was UTF-8 bytes read as latin-1)
    assert File("café", "text/plain; charset=latin-1").data == b"caf\xe9"
    assert File("café", "text/plain; charset=latin-1").contents() == {"text": "café"}
    assert File("x", "text/plain; charset=utf-16").contents() == {"text": "x"}
    with pytest.raises(ValueError, match="File text has characters its charset cannot hold"):
        File("日本", "text/plain; charset=latin-1")
    assert File(b"x", "text/plain; charset=no-such-charset").contents() == {"blob": "eA=="}

    from mcpgen.v2024_11_05.server import App as OldApp

    old = OldApp("old", surface="tests.authoring.no_such_surface")
    old.add_tool(report)  # every revision has embedded resources
    assert old.describe()["tools"][0]["name"] == "report"


def test_content_returned_where_the_annotation_asks_for_data_says_how_to_annotate_it() -> None:
    """Noted at earlier stops: ``-> Any`` returning an ``Image`` was the tool's error "cannot be
    written as JSON: 'utf-8' codec can't decode byte 0x89", which said nothing of the annotation."""
    app = App("any", surface="tests.authoring.no_such_surface")

    @app.tool
    def pic() -> Any:
        return Image(b"\x89PNG", "image/png")

    @app.tool
    def files() -> list[Any]:
        return ["a", File(b"x", "text/plain")]

    async def go() -> list[Any]:
        async with Driver(app) as d:
            return [await d.call("pic"), await d.call("files")]

    pic_result, files_result = run(go())
    assert pic_result["isError"] is True and pic_result["content"][0]["text"].endswith(
        "Image is content, and the return annotation Any asks for structured data: "
        "annotate the function -> Image (or a list of content: -> list[str | Image])"
    )
    assert "File is content, and the return annotation list[Any] asks" in files_result["content"][0]["text"]


def test_a_docstrings_args_section_describes_the_parameters() -> None:
    """Noted at earlier stops: ``Args:`` sections (the way most Python authors describe parameters)
    were not parameter descriptions, so a client's model saw bare names; a description the
    annotation or a ``Field`` default gives still wins."""
    app = App("docs", surface="tests.authoring.no_such_surface")

    @app.tool
    def add(
        a: int, b: Annotated[int, Field(description="From the annotation")], c: int = Field(0, description="From Field")
    ) -> int:
        """Add numbers.

        Args:
            a: The first
                number.
            b: Not this one.
            c (int): Nor this one.
        """
        return a + b + c

    @app.prompt
    def greet(name: str, tone: str = "warm") -> str:
        """Greet someone.

        Parameters
        ----------
        name : str
            Who to greet.
        tone : str
            How.
        """
        return f"hi {name}"

    @app.tool
    def place(city: str, shape: tuple[int, int], *, units: str = "metric") -> str:
        """Place something (a review found each of these cut short or lost).

        Args:
            city: The city,
                spelled out.

                A second paragraph.
            shape (tuple(int, int)): Its shape.

        Keyword Args:
            units: Metric or imperial.
        """
        return city

    @app.tool
    def move(x: float, y: float) -> str:
        """Move.

        Parameters
        ----------
        x, y : float
            Where to.
        """
        return "ok"

    described = app.describe()
    properties = described["tools"][0]["inputSchema"]["properties"]
    assert properties["a"]["description"] == "The first number."
    place_properties = described["tools"][1]["inputSchema"]["properties"]
    assert {name: p["description"] for name, p in place_properties.items()} == {
        "city": "The city, spelled out. A second paragraph.",
        "shape": "Its shape.",
        "units": "Metric or imperial.",
    }
    move_properties = described["tools"][2]["inputSchema"]["properties"]
    assert move_properties["x"]["description"] == move_properties["y"]["description"] == "Where to."
    assert properties["b"]["description"] == "From the annotation"
    assert properties["c"]["description"] == "From Field"
    assert described["tools"][0]["description"].startswith("Add numbers.")  # the docstring, as written
    assert described["prompts"][0]["arguments"] == [
        {"name": "name", "description": "Who to greet.", "required": True},
        {"name": "tone", "description": "How.", "required": False},
    ]


def test_audio_is_refused_where_the_revision_has_no_audio_content() -> None:
    """2024-11-05 has image content and no audio: a tool declared to return ``Audio`` there is a
    declaration error, and one that returns it anyway fails as the tool's error."""
    from mcpgen.v2024_11_05.server import App as OldApp

    app = OldApp("old", surface="tests.authoring.no_such_surface")
    app.add_tool(speak)
    with pytest.raises(DeclarationError, match="returns Audio, but this revision has no audio content"):
        app.describe()

    from mcpgen._runtime.server.authoring.signatures import OutputError, RevisionTypes, content_blocks

    types = RevisionTypes.of(OldApp.server_class.revision)
    with pytest.raises(OutputError, match="Audio: this revision has no audio content"):
        content_blocks(Audio(b"x", "audio/wav"), types)


class Shade(enum.Enum):  # a plain Enum of numbers
    DARK = 1
    LIGHT = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Setting(BaseModel):
    level: Level
    weights: dict[str, Literal[0, 1]] = {}


def kinds_app() -> App:
    app = App("kinds", surface="tests.authoring.no_such_surface")

    @app.tool
    def pick(
        choice: Literal[1, 2, "a"] = 1,
        level: Level = Level.LOW,
        flag: Literal[True] = True,
        nested: list[Setting] | None = None,
        shade: Shade = Shade.DARK,
        converted: Annotated[Literal[0, 1], BeforeValidator(int)] = 0,
    ) -> str:
        return repr((choice, level, flag, nested))

    return app


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        ({"choice": True}, "- choice: Input should be 1, 2 or 'a'"),
        ({"level": True}, "- level: Input should be 1 or 2"),
        ({"flag": 1}, "- flag: Input should be True"),
        ({"shade": False}, "- shade: Input should be 1 or 2"),
        ({"nested": [{"level": 2}, {"level": True}]}, "- nested.1.level: Input should be 1 or 2"),
        ({"nested": [{"level": 2, "weights": {"w": False}}]}, "- nested.0.weights.w: Input should be 0 or 1"),
    ],
)
def test_a_boolean_is_not_taken_for_a_number_nor_a_number_for_a_boolean(arguments: dict[str, Any], said: str) -> None:
    """An author's review: pydantic's strict JSON mode took ``true`` for ``Literal[1, ...]`` and an
    ``IntEnum`` (``true == 1``) and ``1`` for ``Literal[True]``, which the advertised ``enum`` and
    ``const`` refuse (what passes is what the schema advertises)."""

    async def go() -> tuple[Any, Any, Any]:
        async with Driver(kinds_app()) as d:
            listed = schemas(await d.result("tools/list"))
            # a validator of the author's before pydantic's may turn a boolean into the number it wants
            taken = await d.call("pick", {"choice": 2, "level": 2, "nested": [{"level": 1}], "converted": True})
            return listed, await d.call("pick", arguments), taken

    listed, refused, taken = run(go())
    assert not jsonschema.Draft202012Validator(listed["pick"]["inputSchema"]).is_valid(arguments)
    assert refused.get("isError") is True and said in refused["content"][0]["text"], refused
    assert taken["content"][0]["text"] == "(2, <Level.HIGH: 2>, True, [Setting(level=<Level.LOW: 1>, weights={})])"
