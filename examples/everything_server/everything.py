"""The conformance "everything" server, built only on the generated runtime (``mcpgen``).

It exposes the tools, resources and prompts that the official conformance suite's server
scenarios call, for both eras: one set of handlers written against the 2026-07-28 types
serves legacy (``initialize``) clients through the runtime's dual-era adapter.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpgen._runtime.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


def schema(**properties: str) -> dict[str, Any]:
    """An object schema of required string properties, each with its description."""
    return {
        "type": "object",
        "properties": {k: {"type": "string", "description": v} for k, v in properties.items()},
        "required": list(properties),
    }


def form(message: str, **properties: str) -> dict[str, Any]:
    """An ``elicitation/create`` input request for a form of required fields of the given types."""
    return {
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {k: {"type": t} for k, t in properties.items()},
                "required": list(properties),
            },
        },
    }


def sampling(text: str, max_tokens: int = 100) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens},
    }


ROOTS = {"method": "roots/list", "params": {}}

TOOLS: list[tuple[str, str, dict[str, Any]]] = [
    ("test_simple_text", "Tests simple text content response", EMPTY),
    ("test_image_content", "Tests image content response", EMPTY),
    ("test_audio_content", "Tests audio content response", EMPTY),
    ("test_embedded_resource", "Tests embedded resource content response", EMPTY),
    ("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", EMPTY),
    ("test_tool_with_logging", "Tests tool that emits log messages during execution", EMPTY),
    ("test_logging_tool", "Emits a log message (sent only when the request opted in)", EMPTY),
    ("test_tool_with_progress", "Tests tool that reports progress notifications", EMPTY),
    ("test_error_handling", "Tests error response handling", EMPTY),
    ("test_sampling", "Tests server-initiated sampling (LLM completion request)", schema(prompt="The prompt")),
    ("test_elicitation", "Tests server-initiated elicitation", schema(message="The message to show the user")),
    ("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034", EMPTY),
    ("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330", EMPTY),
    ("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", JSON_SCHEMA_2020_12),
    ("test_missing_capability", "Needs the sampling capability, which the client must declare", EMPTY),
    ("test_streaming_elicitation", "Asks for input through an input_required result", EMPTY),
    ("test_trigger_tool_change", "Changes the tool list (notifies listeners)", EMPTY),
    ("test_reconnection", "Closes the SSE connection mid-call; the result comes on the resumed stream", EMPTY),
    ("test_trigger_prompt_change", "Changes the prompt list (notifies listeners)", EMPTY),
    ("test_input_required_result_elicitation", "input_required: one elicitation", EMPTY),
    ("test_input_required_result_sampling", "input_required: one sampling request", EMPTY),
    ("test_input_required_result_list_roots", "input_required: roots/list", EMPTY),
    ("test_input_required_result_request_state", "input_required with requestState", EMPTY),
    ("test_input_required_result_multiple_inputs", "input_required: elicitation, sampling and roots", EMPTY),
    ("test_input_required_result_multi_round", "input_required over two rounds", EMPTY),
    ("test_input_required_result_tampered_state", "input_required with integrity-protected state", EMPTY),
    ("test_input_required_result_capabilities", "input_required only for declared capabilities", EMPTY),
    (
        "test_custom_headers",
        "Mirrors x-mcp-header parameters into Mcp-Param headers",
        {
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "query": {"type": "string"},
            },
            "required": ["region"],
        },
    ),
]

PROMPTS = [
    m.Prompt(name="test_simple_prompt", description="A simple prompt without arguments"),
    m.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with arguments",
        arguments=[
            m.PromptArgument(name="arg1", description="First test argument", required=True),
            m.PromptArgument(name="arg2", description="Second test argument", required=True),
        ],
    ),
    m.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt with an embedded resource",
        arguments=[m.PromptArgument(name="resourceUri", description="URI of the resource to embed", required=True)],
    ),
    m.Prompt(name="test_prompt_with_image", description="A prompt with image content"),
    m.Prompt(name="test_input_required_result_prompt", description="A prompt that asks for context first"),
]

RESOURCES = [
    m.Resource(
        uri="test://static-text", name="static-text", description="A static text resource", mime_type="text/plain"
    ),
    m.Resource(
        uri="test://static-binary", name="static-binary", description="A static binary resource", mime_type="image/png"
    ),
    m.Resource(
        uri="test://watched-resource",
        name="watched-resource",
        description="A subscribable resource",
        mime_type="text/plain",
    ),
]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def result(*content: dict[str, Any], error: bool = False) -> s.CallToolResult:
    if error:
        return s.CallToolResult(content=list(content), is_error=True)
    return s.CallToolResult(content=list(content))


def answers(params: Any) -> dict[str, Any]:
    """The ``inputResponses`` of a retried request as plain dicts (empty on the first round)."""
    given = params.input_responses
    if given is MISSING:
        return {}
    return {k: v.model_dump(mode="json") if hasattr(v, "model_dump") else v for k, v in given.items()}


def state(params: Any) -> str | None:
    return None if params.request_state is MISSING else params.request_state


class Everything(s.Server):
    name = "mcp-conformance-test-server"
    version = "1.0.0"

    def __init__(self) -> None:
        self.tool_generation = 0

    def capabilities(self) -> dict[str, Any]:
        caps = super().capabilities()
        caps["completions"] = {}
        return caps

    # -- tools ---------------------------------------------------------------------------

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        tools = [m.Tool(name=n, description=d, input_schema=i) for n, d, i in TOOLS]
        return s.ListToolsResult(tools=tools)

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        name = params.name
        args = {} if params.arguments is MISSING else params.arguments
        handler = getattr(self, f"tool_{name}", None)
        if handler is None:
            return result(text(f"Unknown tool: {name}"), error=True)
        try:
            out: m.CallToolResult | m.InputRequiredResult = await handler(args, params, ctx)
        except ProtocolError:
            raise
        except Exception as exc:
            return result(text(str(exc)), error=True)
        return out

    async def tool_test_simple_text(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        return result(text("This is a simple text response for testing."))

    async def tool_test_image_content(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        return result({"type": "image", "data": IMAGE, "mimeType": "image/png"})

    async def tool_test_audio_content(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        return result({"type": "audio", "data": AUDIO, "mimeType": "audio/wav"})

    async def tool_test_embedded_resource(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        resource = {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        }
        return result({"type": "resource", "resource": resource})

    async def tool_test_multiple_content_types(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        resource = {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
        }
        return result(
            text("Multiple content types test:"),
            {"type": "image", "data": IMAGE, "mimeType": "image/png"},
            {"type": "resource", "resource": resource},
        )

    async def tool_test_tool_with_logging(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        await ctx.log("info", "Tool execution started")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool processing data")
        await asyncio.sleep(0.05)
        await ctx.log("info", "Tool execution completed")
        return result(text("Tool with logging executed successfully"))

    async def tool_test_logging_tool(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        await ctx.log("info", "a log message")
        return result(text("logged"))

    async def tool_test_reconnection(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        await ctx.close_sse_stream(retry_ms=100)  # the client polls: GET with Last-Event-ID
        return result(text("Reconnection test completed"))

    async def tool_test_tool_with_progress(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            if step < 100:
                await asyncio.sleep(0.05)
        return result(text(str(ctx.progress_token)))

    async def tool_test_error_handling(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        raise RuntimeError("This tool intentionally returns an error for testing")

    async def tool_test_sampling(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        got = answers(params).get("sample")
        if got is None:
            return s.InputRequiredResult(input_requests={"sample": sampling(args.get("prompt", ""))})
        content = got.get("content")
        reply = content.get("text") if isinstance(content, dict) else None
        return result(text(f"LLM response: {reply or 'No response'}"))

    async def _elicit(self, params: Any, request: dict[str, Any], prefix: str) -> Any:
        got = answers(params).get("input")
        if got is None:
            return s.InputRequiredResult(input_requests={"input": request})
        content = json.dumps(got.get("content") or {}, separators=(",", ":"))
        return result(text(f"{prefix}: action={got.get('action')}, content={content}"))

    async def tool_test_elicitation(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        request = form(args.get("message", ""), username="string", email="string")
        return await self._elicit(params, request, "User response")

    async def tool_test_elicitation_sep1034_defaults(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        properties = {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        }
        request = {
            "method": "elicitation/create",
            "params": {
                "message": "Please review and update the form fields with defaults",
                "requestedSchema": {"type": "object", "properties": properties, "required": []},
            },
        }
        return await self._elicit(params, request, "Elicitation completed")

    async def tool_test_elicitation_sep1330_enums(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        properties = {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        }
        request = {
            "method": "elicitation/create",
            "params": {
                "message": "Please select options",
                "requestedSchema": {"type": "object", "properties": properties, "required": []},
            },
        }
        return await self._elicit(params, request, "Elicitation completed")

    async def tool_json_schema_2020_12_tool(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        return result(text(json.dumps(args)))

    async def tool_test_missing_capability(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        if not ctx.supports("sampling"):
            raise ProtocolError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "this tool needs the sampling capability",
                {"requiredCapabilities": {"sampling": {}}},
            )
        return result(text("sampling is declared"))

    async def tool_test_streaming_elicitation(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        await ctx.report_progress(1, 2)
        return await self._elicit(params, form("Please confirm", ok="boolean"), "Confirmed")

    async def tool_test_trigger_tool_change(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        self.tool_generation += 1
        await self.notify_tools_changed()
        return result(text("tool list changed"))

    async def tool_test_trigger_prompt_change(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        await self.notify_prompts_changed()
        return result(text("prompt list changed"))

    async def tool_test_input_required_result_elicitation(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got = answers(params).get("user_name")
        name = (got or {}).get("content", {}) or {}
        if not isinstance(name, dict) or "name" not in name:
            return s.InputRequiredResult(input_requests={"user_name": form("What is your name?", name="string")})
        return result(text(f"Hello, {name['name']}!"))

    async def tool_test_input_required_result_sampling(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        got = answers(params).get("capital_question")
        if got is None:
            return s.InputRequiredResult(
                input_requests={"capital_question": sampling("What is the capital of France?")}
            )
        content = got.get("content")
        return result(text(f"Sampling response: {content.get('text') if isinstance(content, dict) else content}"))

    async def tool_test_input_required_result_list_roots(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got = answers(params).get("client_roots")
        if got is None:
            return s.InputRequiredResult(input_requests={"client_roots": ROOTS})
        roots = [r.get("uri") for r in got.get("roots", [])]
        return result(text(f"Roots: {', '.join(roots)}"))

    async def tool_test_input_required_result_request_state(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got = answers(params).get("confirm")
        if got is None or state(params) != "confirm-round-1":
            return s.InputRequiredResult(
                input_requests={"confirm": form("Please confirm", ok="boolean")}, request_state="confirm-round-1"
            )
        return result(text("state-ok: confirmed"))

    async def tool_test_input_required_result_multiple_inputs(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got = answers(params)
        wanted = {
            "user_name": form("What is your name?", name="string"),
            "greeting": sampling("Generate a greeting", 50),
            "client_roots": ROOTS,
        }
        missing = {k: v for k, v in wanted.items() if k not in got}
        if missing or state(params) != "multi":
            return s.InputRequiredResult(input_requests=missing or wanted, request_state="multi")
        return result(text(f"Received all inputs: {', '.join(sorted(got))}"))

    async def tool_test_input_required_result_multi_round(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got, at = answers(params), state(params)
        if at == "round-2" and "step2" in got:
            return result(text(f"Done: color={(got['step2'].get('content') or {}).get('color')}"))
        if at == "round-1" and "step1" in got:
            request = form("Step 2: What is your favorite color?", color="string")
            return s.InputRequiredResult(input_requests={"step2": request}, request_state="round-2")
        request = form("Step 1: What is your name?", name="string")
        return s.InputRequiredResult(input_requests={"step1": request}, request_state="round-1")

    async def tool_test_input_required_result_tampered_state(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        if state(params) == "untampered" and "confirm" in answers(params):
            return result(text("state verified"))
        return s.InputRequiredResult(
            input_requests={"confirm": form("Please confirm", ok="boolean")}, request_state="untampered"
        )

    async def tool_test_input_required_result_capabilities(
        self, args: dict[str, Any], params: Any, ctx: s.Context
    ) -> Any:
        got = answers(params)
        offered = {
            "user_name": ("elicitation", form("What is your name?", name="string")),
            "greeting": ("sampling", sampling("Generate a greeting", 50)),
            "client_roots": ("roots", ROOTS),
        }
        requests = {k: r for k, (cap, r) in offered.items() if ctx.supports(cap) and k not in got}
        if not requests:
            return result(text(f"Received: {', '.join(sorted(got)) or 'nothing needed'}"))
        return s.InputRequiredResult(input_requests=requests)

    async def tool_test_custom_headers(self, args: dict[str, Any], params: Any, ctx: s.Context) -> Any:
        return result(text(f"region={args.get('region')}"))

    # -- resources -----------------------------------------------------------------------

    async def list_resources(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListResourcesResult:
        return s.ListResourcesResult(resources=RESOURCES)

    async def list_resource_templates(
        self, params: m.PaginatedRequestParams, ctx: s.Context
    ) -> m.ListResourceTemplatesResult:
        template = m.ResourceTemplate(
            uri_template="test://template/{id}/data",
            name="template",
            description="A resource template with an id",
            mime_type="application/json",
        )
        return s.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: s.Context
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        uri = params.uri
        if uri == "test://static-text":
            contents = [
                {"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."}
            ]
        elif uri == "test://static-binary":
            contents = [{"uri": uri, "mimeType": "image/png", "blob": IMAGE}]
        elif uri == "test://watched-resource":
            contents = [{"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}]
        elif uri.startswith("test://template/") and uri.endswith("/data"):
            ident = uri[len("test://template/") : -len("/data")]
            data = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
            contents = [{"uri": uri, "mimeType": "application/json", "text": json.dumps(data, separators=(",", ":"))}]
        else:
            raise ProtocolError(INVALID_PARAMS, "Resource not found", {"uri": uri})
        return s.ReadResourceResult(contents=contents)

    # -- prompts -------------------------------------------------------------------------

    async def list_prompts(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListPromptsResult:
        return s.ListPromptsResult(prompts=PROMPTS)

    async def get_prompt(
        self, params: m.GetPromptRequestParams, ctx: s.Context
    ) -> m.GetPromptResult | m.InputRequiredResult:
        name = params.name
        args = {} if params.arguments is MISSING else params.arguments
        if name == "test_simple_prompt":
            messages = [{"role": "user", "content": text("This is a simple prompt for testing.")}]
        elif name == "test_prompt_with_arguments":
            said = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
            messages = [{"role": "user", "content": text(said)}]
        elif name == "test_prompt_with_embedded_resource":
            resource = {
                "uri": args.get("resourceUri"),
                "mimeType": "text/plain",
                "text": "Embedded resource content for testing.",
            }
            messages = [
                {"role": "user", "content": {"type": "resource", "resource": resource}},
                {"role": "user", "content": text("Please process the embedded resource above.")},
            ]
        elif name == "test_prompt_with_image":
            messages = [
                {"role": "user", "content": {"type": "image", "data": IMAGE, "mimeType": "image/png"}},
                {"role": "user", "content": text("Please analyze the image above.")},
            ]
        elif name == "test_input_required_result_prompt":
            got = answers(params).get("user_context")
            if got is None:
                request = form("What context should the prompt use?", context="string")
                return s.InputRequiredResult(input_requests={"user_context": request})
            context = (got.get("content") or {}).get("context")
            messages = [{"role": "user", "content": text(f"Prompt with context: {context}")}]
        else:
            raise ProtocolError(INVALID_PARAMS, f"unknown prompt {name!r}", {"name": name})
        return s.GetPromptResult(messages=messages)

    # -- completion ----------------------------------------------------------------------

    async def complete(self, params: m.CompleteRequestParams, ctx: s.Context) -> m.CompleteResult:
        value = params.argument.value
        values = [v for v in ("paris", "park", "party") if v.startswith(value)]
        return s.CompleteResult(completion={"values": values, "total": len(values), "hasMore": False})
