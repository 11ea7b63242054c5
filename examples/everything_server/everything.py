"""The conformance "everything" server, written with the authoring layer of the generated runtime (``mcpgen``).

It exposes the tools, resources and prompts that the official conformance suite's server
scenarios call, for both eras: the functions below are served to 2026-07-28 clients (input by
multi round-trip requests) and to legacy ``initialize`` clients (input by server->client
requests) alike. Two tools are declared schema-first (``declared_tools.json``, the generated
``declared`` module and the handlers in ``declared_handlers``); ``everything_surface`` is the
generated surface the server lists from.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable
from typing import Annotated, Any

import declared_handlers
from mcpgen._runtime.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import BaseModel, Field

IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="


class Everything(s.Server):
    """The handler base, for what the app does not declare: completion."""

    async def complete(self, params: m.CompleteRequestParams, ctx: s.Context) -> m.CompleteResult:
        ref = params.ref
        known = app.prompts if ref.type == "ref/prompt" else app.templates
        name = ref.name if isinstance(ref, m.PromptReference) else ref.uri
        if name not in known:  # completion.mdx: an invalid prompt name (or template) is -32602
            raise ProtocolError(
                INVALID_PARAMS, f"no {'prompt' if ref.type == 'ref/prompt' else 'resource template'} {name!r}"
            )
        value = params.argument.value
        values = [v for v in ("paris", "park", "party") if v.startswith(value)]
        return s.CompleteResult(completion=m.CompleteResultCompletion(values=values, total=len(values), has_more=False))


app = s.App("mcp-conformance-test-server", version="1.0.0", server=Everything)
declared_handlers.register(app)


class Name(BaseModel):
    name: str


class Contact(BaseModel):
    username: str
    email: str


def form(**properties: str) -> dict[str, Any]:
    """A ``requestedSchema`` of required fields of the given JSON types."""
    return {
        "type": "object",
        "properties": {k: {"type": t} for k, t in properties.items()},
        "required": list(properties),
    }


def dumped(data: Any) -> str:
    return json.dumps(data or {}, separators=(",", ":"))


# -- tools: content -------------------------------------------------------------------------------


@app.tool
def test_simple_text() -> str:
    """Tests simple text content response"""
    return "This is a simple text response for testing."


@app.tool
def test_image_content() -> m.ImageContent:
    """Tests image content response"""
    return m.ImageContent(type="image", data=IMAGE, mime_type="image/png")


@app.tool
def test_audio_content() -> m.AudioContent:
    """Tests audio content response"""
    return m.AudioContent(type="audio", data=AUDIO, mime_type="audio/wav")


def embedded(uri: str, mime_type: str, text: str) -> m.EmbeddedResource:
    return m.EmbeddedResource(type="resource", resource=m.TextResourceContents(uri=uri, mime_type=mime_type, text=text))


@app.tool
def test_embedded_resource() -> m.EmbeddedResource:
    """Tests embedded resource content response"""
    return embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")


@app.tool
def test_multiple_content_types() -> list[m.TextContent | m.ImageContent | m.EmbeddedResource]:
    """Tests response with multiple content types (text, image, resource)"""
    return [
        m.TextContent(type="text", text="Multiple content types test:"),
        m.ImageContent(type="image", data=IMAGE, mime_type="image/png"),
        embedded("test://mixed-content-resource", "application/json", dumped({"test": "data", "value": 123})),
    ]


# -- tools: logging, progress, errors, list changes -----------------------------------------------


@app.tool
async def test_tool_with_logging(ctx: s.Context) -> str:
    """Tests tool that emits log messages during execution"""
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.log("info", message)
        if message != "Tool execution completed":
            await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@app.tool
async def test_logging_tool(ctx: s.Context) -> str:
    """Emits a log message (sent only when the request opted in)"""
    await ctx.log("info", "a log message")
    return "logged"


@app.tool
async def test_tool_with_progress(ctx: s.Context) -> str:
    """Tests tool that reports progress notifications"""
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100, f"Completed step {step} of 100")
        if step < 100:
            await asyncio.sleep(0.05)
    return str(ctx.progress_token)


@app.tool
def test_error_handling() -> str:
    """Tests error response handling"""
    raise RuntimeError("This tool intentionally returns an error for testing")


@app.tool
def test_missing_capability(ctx: s.Context) -> str:
    """Needs the sampling capability, which the client must declare"""
    if not ctx.supports("sampling"):
        raise ProtocolError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "this tool needs the sampling capability",
            {"requiredCapabilities": {"sampling": {}}},
        )
    return "sampling is declared"


def dynamic_tool() -> str:
    """Appears and disappears with test_trigger_tool_change"""
    return "dynamic"


def dynamic_prompt() -> str:
    """Appears and disappears with test_trigger_prompt_change"""
    return "dynamic"


@app.tool
def test_trigger_tool_change() -> str:
    """Changes the tool list (notifies listeners)"""
    if "test_dynamic_tool" in app.tools:
        app.remove_tool("test_dynamic_tool")
    else:
        app.add_tool(dynamic_tool, name="test_dynamic_tool")
    return "tool list changed"


@app.tool
async def test_reconnection(ctx: s.Context) -> str:
    """Closes the SSE connection mid-call; the result comes on the resumed stream"""
    await ctx.close_sse_stream(retry_ms=100)  # the client polls: GET with Last-Event-ID
    return "Reconnection test completed"


@app.tool
def test_trigger_prompt_change() -> str:
    """Changes the prompt list (notifies listeners)"""
    if "test_dynamic_prompt" in app.prompts:
        app.remove_prompt("test_dynamic_prompt")
    else:
        app.add_prompt(dynamic_prompt, name="test_dynamic_prompt")
    return "prompt list changed"


# -- tools: input from the client (MRTR on 2026-07-28, server->client requests on legacy) ---------


@app.tool
async def test_sampling(prompt: Annotated[str, Field(description="The prompt")], ctx: s.Context) -> str:
    """Tests server-initiated sampling (LLM completion request)"""
    sampled = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {sampled.text or 'No response'}"


@app.tool
async def test_elicitation(
    message: Annotated[str, Field(description="The message to show the user")], ctx: s.Context
) -> str:
    """Tests server-initiated elicitation"""
    answer = await ctx.elicit(message, Contact)
    content = answer.data.model_dump() if answer.data else {}
    return f"User response: action={answer.action}, content={dumped(content)}"


async def elicit_form(ctx: s.Context, message: str, properties: dict[str, Any]) -> str:
    answer = await ctx.elicit(message, {"type": "object", "properties": properties, "required": []})
    return f"Elicitation completed: action={answer.action}, content={dumped(answer.data)}"


@app.tool
async def test_elicitation_sep1034_defaults(ctx: s.Context) -> str:
    """Tests elicitation with default values per SEP-1034"""
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
    return await elicit_form(ctx, "Please review and update the form fields with defaults", properties)


@app.tool
async def test_elicitation_sep1330_enums(ctx: s.Context) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330"""
    options = ("option1", "option2", "option3")
    titled = [{"const": f"value{i}", "title": t} for i, t in enumerate(("First", "Second", "Third"), 1)]
    properties = {
        "untitledSingle": {"type": "string", "enum": list(options)},
        "titledSingle": {"type": "string", "oneOf": [{**o, "title": f"{o['title']} Option"} for o in titled]},
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": list(options)}},
        "titledMulti": {"type": "array", "items": {"anyOf": [{**o, "title": f"{o['title']} Choice"} for o in titled]}},
    }
    return await elicit_form(ctx, "Please select options", properties)


@app.tool
async def test_streaming_elicitation(ctx: s.Context) -> str:
    """Asks for input through an input_required result"""
    await ctx.report_progress(1, 2)
    answer = await ctx.elicit("Please confirm", form(ok="boolean"))
    return f"Confirmed: action={answer.action}, content={dumped(answer.data)}"


@app.tool
async def test_input_required_result_elicitation(ctx: s.Context) -> str:
    """input_required: one elicitation"""
    answer = await ctx.elicit("What is your name?", Name, key="user_name")
    return f"Hello, {answer.data.name if answer.data else 'stranger'}!"


@app.tool
async def test_input_required_result_sampling(ctx: s.Context) -> str:
    """input_required: one sampling request"""
    sampled = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"Sampling response: {sampled.text}"


@app.tool
async def test_input_required_result_list_roots(ctx: s.Context) -> str:
    """input_required: roots/list"""
    roots = await ctx.list_roots(key="client_roots")
    return f"Roots: {', '.join(root.uri for root in roots)}"


@app.tool
async def test_input_required_result_request_state(ctx: s.Context) -> str:
    """input_required with requestState"""
    answer = await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
    return f"state-ok: {'confirmed' if answer.accepted else answer.action}"


@app.tool
async def test_input_required_result_multiple_inputs(ctx: s.Context) -> str:
    """input_required: elicitation, sampling and roots"""
    await asyncio.gather(  # asked together: one round with the three requests
        ctx.elicit("What is your name?", Name, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return "Received all inputs: client_roots, greeting, user_name"


@app.tool
async def test_input_required_result_multi_round(ctx: s.Context) -> str:
    """input_required over two rounds"""
    await ctx.elicit("Step 1: What is your name?", Name, key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", form(color="string"), key="step2")
    return f"Done: color={(color.data or {}).get('color')}"


@app.tool
async def test_input_required_result_tampered_state(ctx: s.Context) -> str:
    """input_required with integrity-protected state"""
    await ctx.elicit("Please confirm", form(ok="boolean"), key="confirm")
    return "state verified"


@app.tool
async def test_input_required_result_capabilities(ctx: s.Context) -> str:
    """input_required only for declared capabilities"""
    asks: list[Awaitable[object]] = []
    if ctx.supports("elicitation"):
        asks.append(ctx.elicit("What is your name?", Name, key="user_name"))
    if ctx.supports("sampling"):
        asks.append(ctx.sample("Generate a greeting", max_tokens=50, key="greeting"))
    if ctx.supports("roots"):
        asks.append(ctx.list_roots(key="client_roots"))
    await asyncio.gather(*asks)
    received = [
        key
        for key, cap in (("client_roots", "roots"), ("greeting", "sampling"), ("user_name", "elicitation"))
        if ctx.supports(cap)
    ]
    return f"Received: {', '.join(received) or 'nothing needed'}"


# -- resources ------------------------------------------------------------------------------------


@app.resource("test://static-text", name="static-text", description="A static text resource", mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource(
    "test://static-binary", name="static-binary", description="A static binary resource", mime_type="image/png"
)
def static_binary() -> bytes:
    return base64.b64decode(IMAGE)


@app.resource(
    "test://watched-resource", name="watched-resource", description="A subscribable resource", mime_type="text/plain"
)
def watched_resource() -> str:
    return "Watched resource content"


@app.resource(
    "test://template/{id}/data",
    name="template",
    description="A resource template with an id",
    mime_type="application/json",
)
def template(id: str) -> str:
    return dumped({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


# -- prompts --------------------------------------------------------------------------------------


@app.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments"""
    return "This is a simple prompt for testing."


@app.prompt
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with arguments"""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[Any]:
    """A prompt with an embedded resource"""
    return [
        embedded(resourceUri, "text/plain", "Embedded resource content for testing."),
        "Please process the embedded resource above.",
    ]


@app.prompt
def test_prompt_with_image() -> list[Any]:
    """A prompt with image content"""
    return [m.ImageContent(type="image", data=IMAGE, mime_type="image/png"), "Please analyze the image above."]


@app.prompt
async def test_input_required_result_prompt(ctx: s.Context) -> str:
    """A prompt that asks for context first"""
    answer = await ctx.elicit("What context should the prompt use?", form(context="string"), key="user_context")
    return f"Prompt with context: {(answer.data or {}).get('context')}"
