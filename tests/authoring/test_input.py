"""``ctx.elicit``/``sample``/``list_roots``: multi round-trip replay on 2026-07-28, real requests on legacy sessions."""

import asyncio
from typing import Any, Literal

import pytest
from mcpgen._runtime.server.services.capabilities import undeclared
from mcpgen.v2026_07_28.protocol import METHODS
from mcpgen.v2026_07_28.server import App, Context
from pydantic import BaseModel

from tests.authoring.apps import Driver, run
from tests.server.servers import Stdio

ELICIT = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}}}
RUNS: list[str] = []
QUESTION = {"text": "Name?"}
INFO = {"name": "test", "version": "1"}


class Name(BaseModel):
    name: str


class Place(BaseModel):
    city: Name  # an object: no form field
    tags: list[str] = []


class Picks(BaseModel):
    sizes: list[Literal["s", "m", "l"]]
    note: str | None = None


def make_app() -> App:
    app = App("asking", surface="tests.authoring.no_such_surface")

    @app.tool
    async def ask_name(ctx: Context) -> str:
        RUNS.append("ask_name")
        answer = await ctx.elicit(QUESTION["text"], Name)
        return f"hi {answer.data.name}" if answer.data else answer.action

    @app.tool
    async def two_steps(ctx: Context) -> str:
        name = await ctx.elicit("Name?", Name)
        sampled = await ctx.sample(f"A greeting for {name.data.name if name.data else '?'}", max_tokens=20)
        return f"{sampled.text} (model {sampled.model})"

    @app.tool
    async def together(ctx: Context) -> str:
        name, sampled, roots = await asyncio.gather(
            ctx.elicit("Name?", Name), ctx.sample("Hi", max_tokens=5), ctx.list_roots()
        )
        return f"{name.action} {sampled.text} {[r.uri for r in roots]}"

    @app.tool
    async def visit(ctx: Context) -> str:
        answer = await ctx.elicit_url("Sign in", "https://example.com/login")
        return answer.action

    @app.tool
    async def by_schema(ctx: Context) -> str:
        form = {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "size": {"type": "string", "enum": ["s", "m"]}},
            "required": ["ok"],
        }
        answer = await ctx.elicit("Sure?", form, key="sure")
        return f"{answer.action}: {answer.data}"

    @app.tool
    async def guarded(ctx: Context) -> str:
        try:  # ordinary Python around a remote call: the question must still reach the client
            answer = await ctx.elicit("Name?", Name)
        except Exception as exc:
            return f"caught {type(exc).__name__}"
        return answer.action

    @app.tool
    async def grouped(ctx: Context) -> str:
        async with asyncio.TaskGroup() as group:  # questions asked in tasks: a group of InputRequired
            first = group.create_task(ctx.elicit("Name?", Name))
            second = group.create_task(ctx.elicit("Other?", Name))
        return f"{first.result().action} {second.result().action}"

    @app.tool
    async def nested(ctx: Context) -> str:
        answer = await ctx.elicit("Where?", Place)
        return answer.action

    @app.tool
    async def picks(ctx: Context) -> str:
        answer = await ctx.elicit("Which?", Picks)
        return f"{answer.action}: {answer.data}"

    @app.tool
    async def keyed(x: int, ctx: Context) -> str:
        answer = await ctx.elicit("Name?", Name, key="user_name")
        return f"{x} {answer.data.name if answer.data else answer.action}"

    return app


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}


SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Hello!"}, "model": "m1", "stopReason": "endTurn"}
ROOTS = {"roots": [{"uri": "file:///work", "name": "work"}]}


def test_a_question_is_answered_over_rounds_and_the_tool_runs_again() -> None:
    async def go() -> tuple[Any, Any]:
        async with Driver(make_app()) as d:
            RUNS.clear()
            first = await d.call("ask_name", **ELICIT)
            retry = {"name": "ask_name", "arguments": {}, "inputResponses": {"elicit-1": accept(name="Ada")}}
            retry["requestState"] = first["requestState"]
            return first, await d.result("tools/call", retry, **ELICIT)

    first, done = run(go())
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {
        "elicit-1": {
            "method": "elicitation/create",
            "params": {
                "message": "Name?",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"name": {"title": "Name", "type": "string"}},
                    "required": ["name"],
                },
            },
        }
    }
    assert isinstance(first["requestState"], str)
    assert done["content"] == [{"type": "text", "text": "hi Ada"}]
    assert RUNS == ["ask_name", "ask_name"]  # replayed: the function runs again with the answer


def test_a_question_asked_inside_except_exception_still_reaches_the_client() -> None:
    async def go() -> tuple[Any, Any]:
        async with Driver(make_app()) as d:
            first = await d.call("guarded", **ELICIT)
            retry = {"name": "guarded", "arguments": {}, "inputResponses": {"elicit-1": {"action": "decline"}}}
            return first, await d.result("tools/call", {**retry, "requestState": first["requestState"]}, **ELICIT)

    first, done = run(go())
    assert first["resultType"] == "input_required" and list(first["inputRequests"]) == ["elicit-1"]
    assert done["content"] == [{"type": "text", "text": "decline"}]


def test_questions_asked_in_a_task_group_end_the_call_with_input_required() -> None:
    """A review of the diff: with InputRequired a BaseException, a TaskGroup's group of them was
    caught by nothing and the request was never answered."""

    async def go() -> tuple[Any, Any]:
        async with Driver(make_app()) as d:
            first = await d.call("grouped", **ELICIT)
            no = {"action": "decline"}
            retry = {"name": "grouped", "arguments": {}, "inputResponses": {"elicit-1": no, "elicit-2": no}}
            return first, await d.result("tools/call", {**retry, "requestState": first["requestState"]}, **ELICIT)

    first, done = run(go())
    assert first["resultType"] == "input_required" and sorted(first["inputRequests"]) == ["elicit-1", "elicit-2"]
    assert done["content"] == [{"type": "text", "text": "decline decline"}]


def test_several_rounds_carry_earlier_answers_in_the_state() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            one = await d.call("two_steps", **ELICIT)
            params = {"name": "two_steps", "arguments": {}, "inputResponses": {"elicit-1": accept(name="Ada")}}
            two = await d.result("tools/call", {**params, "requestState": one["requestState"]}, **ELICIT)
            params["inputResponses"] = {"sample-1": SAMPLED}  # only this round's answer; Ada rides in the state
            three = await d.result("tools/call", {**params, "requestState": two["requestState"]}, **ELICIT)
            return [one, two, three]

    one, two, three = run(go())
    assert list(one["inputRequests"]) == ["elicit-1"]
    assert list(two["inputRequests"]) == ["sample-1"] and two["requestState"] != one["requestState"]
    assert two["inputRequests"]["sample-1"]["params"]["messages"][0]["content"]["text"] == "A greeting for Ada"
    assert three["content"][0]["text"] == "Hello! (model m1)"


def test_questions_asked_together_go_out_in_one_round() -> None:
    async def go() -> tuple[Any, Any]:
        async with Driver(make_app()) as d:
            first = await d.call("together", **ELICIT)
            answers = {"elicit-1": accept(name="Ada"), "sample-1": SAMPLED, "roots-1": ROOTS}
            params = {"name": "together", "arguments": {}, "inputResponses": answers}
            return first, await d.result("tools/call", {**params, "requestState": first["requestState"]}, **ELICIT)

    first, done = run(go())
    assert {k: v["method"] for k, v in first["inputRequests"].items()} == {
        "elicit-1": "elicitation/create",
        "sample-1": "sampling/createMessage",
        "roots-1": "roots/list",
    }
    assert done["content"][0]["text"] == "accept Hello! ['file:///work']"


def test_the_state_is_bound_to_its_request_sealed_and_expires() -> None:
    async def go() -> list[Any]:
        async with Driver(make_app()) as d:
            first = await d.call("keyed", {"x": 1}, **ELICIT)
            state = first["requestState"]
            answer = {"user_name": accept(name="Ada")}

            def retry(x: int, state: str) -> dict[str, Any]:
                return {"name": "keyed", "arguments": {"x": x}, "inputResponses": answer, "requestState": state}

            other = await d.send("tools/call", retry(2, state), **ELICIT)
            tampered = await d.send("tools/call", retry(1, state[:-2] + "xx"), **ELICIT)
            good = await d.result("tools/call", retry(1, state), **ELICIT)
            sealer = d.app.server.router.services.request_state
            later = sealer.clock() + sealer.ttl + 2
            sealer.clock = lambda: later
            expired = await d.send("tools/call", retry(1, state), **ELICIT)
            return [other, tampered, good, expired]

    other, tampered, good, expired = run(go())
    assert other["error"]["code"] == -32602 and "another request" in other["error"]["message"]
    assert tampered["error"]["code"] == -32602 and "integrity" in tampered["error"]["message"]
    assert good["content"][0]["text"] == "1 Ada"
    assert expired["error"]["code"] == -32602 and "expired" in expired["error"]["message"]


def test_an_answer_is_only_used_for_the_question_it_answers() -> None:
    async def go() -> tuple[Any, Any, Any]:
        async with Driver(make_app()) as d:
            QUESTION["text"] = "Name?"
            first = await d.call("ask_name", **ELICIT)
            QUESTION["text"] = "Your full name?"  # the function now asks something else under the same key
            params = {"name": "ask_name", "arguments": {}, "inputResponses": {"elicit-1": accept(name="Ada")}}
            again = await d.result("tools/call", {**params, "requestState": first["requestState"]}, **ELICIT)
            unasked = await d.result(
                "tools/call", {**params, "inputResponses": {"user_name": accept(name="x")}}, **ELICIT
            )
            QUESTION["text"] = "Name?"
            return first, again, unasked

    first, again, unasked = run(go())
    assert first["inputRequests"]["elicit-1"]["params"]["message"] == "Name?"
    assert again["resultType"] == "input_required"
    assert again["inputRequests"]["elicit-1"]["params"]["message"] == "Your full name?"
    assert unasked["resultType"] == "input_required"  # answers to keys never asked are ignored


def test_a_key_the_client_already_answers_needs_no_state() -> None:
    async def go() -> Any:
        async with Driver(make_app()) as d:
            answers = {"user_name": accept(name="Bo"), "unknown_extra_key": accept(foo="bar")}
            return await d.result(
                "tools/call", {"name": "keyed", "arguments": {"x": 7}, "inputResponses": answers}, **ELICIT
            )

    assert run(go())["content"][0]["text"] == "7 Bo"


def test_asking_for_what_the_client_did_not_declare_is_refused() -> None:
    async def go() -> Any:
        async with Driver(make_app()) as d:
            return await d.send("tools/call", {"name": "ask_name", "arguments": {}})

    error = run(go())["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_form_elicitation_is_refused_to_a_client_that_declared_url_mode_only() -> None:
    """client/elicitation.mdx: servers must not send a mode the client does not support; an
    ``elicitation`` naming ``url`` only does not support form mode (``{}`` means form only)."""

    async def go() -> Any:
        async with Driver(make_app()) as d:
            caps = {"elicitation": {"url": {}}, "sampling": {}, "roots": {}}
            return await d.send(
                "tools/call",
                {"name": "ask_name", "arguments": {}},
                **{"io.modelcontextprotocol/clientCapabilities": caps},
            )

    error = run(go())["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert error["message"] == "the client did not declare elicitation.form"


@pytest.mark.parametrize(
    ("method", "params", "declared", "missing"),
    [
        ("elicitation/create", {"message": "m"}, {}, {"elicitation": {}}),
        ("elicitation/create", {"message": "m"}, {"elicitation": {}}, None),  # {} is form mode
        ("elicitation/create", {"mode": "form"}, {"elicitation": {"form": {}}}, None),
        ("elicitation/create", {"message": "m"}, {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("elicitation/create", {"mode": "url"}, {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("elicitation/create", {"mode": "url"}, {"elicitation": {"form": {}, "url": {}}}, None),
        ("sampling/createMessage", {"messages": []}, {"sampling": {}}, None),
        ("sampling/createMessage", {"messages": [], "tools": []}, {"sampling": {}}, {"sampling": {"tools": {}}}),
        ("sampling/createMessage", {"messages": [], "tools": []}, {"sampling": {"tools": {}}}, None),
        ("roots/list", {}, {"sampling": {}}, {"roots": {}}),
        ("ping", {}, {}, None),
    ],
)
def test_what_each_request_to_the_client_needs_declared(
    method: str, params: dict[str, Any], declared: dict[str, Any], missing: dict[str, Any] | None
) -> None:
    assert undeclared(method, params, declared, METHODS) == missing


# -- legacy sessions: a real server->client request, the function runs once ------------------------


def legacy(capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "test", "version": "1"},
    }
    return [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]


def answer_requests(io: Stdio, message: dict[str, Any]) -> None:
    """The client side: answer the server's requests as they are written."""
    if message.get("method") == "elicitation/create":
        io.send({"jsonrpc": "2.0", "id": message["id"], "result": accept(name="Lin")})
    elif message.get("method") == "sampling/createMessage":
        io.send({"jsonrpc": "2.0", "id": message["id"], "result": SAMPLED})
    elif message.get("method") == "roots/list":
        io.send({"jsonrpc": "2.0", "id": message["id"], "result": ROOTS})


def test_on_a_legacy_session_questions_are_real_requests_and_nothing_is_replayed() -> None:
    async def go() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
        app = make_app()
        async with Stdio(app.server, on_write=answer_requests) as io:
            RUNS.clear()
            io.send(*legacy({"elicitation": {}, "sampling": {}, "roots": {}}))
            await io.response(0)
            io.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            )
            asked = await io.response(1)
            io.send(
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "together", "arguments": {}}}
            )
            together = await io.response(2)
            return [m for m in io.out if "method" in m and "id" in m], asked, together

    requests, asked, together = run(go())
    assert asked["result"]["content"] == [{"type": "text", "text": "hi Lin"}]
    assert RUNS == ["ask_name"]  # once: the answer came back to the waiting function
    assert requests[0]["method"] == "elicitation/create" and requests[0]["params"]["message"] == "Name?"
    assert together["result"]["content"][0]["text"] == "accept Hello! ['file:///work']"
    assert {r["method"] for r in requests} == {"elicitation/create", "sampling/createMessage", "roots/list"}


def test_on_a_legacy_session_an_undeclared_capability_is_refused() -> None:
    async def go() -> dict[str, Any]:
        async with Stdio(make_app().server) as io:
            io.send(*legacy({}))
            await io.response(0)
            io.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            )
            return await io.response(1)

    error = run(go())["error"]
    assert error["code"] == -32021 and error["message"] == "the client did not declare elicitation"


def test_on_a_legacy_session_form_elicitation_needs_form_mode_declared() -> None:
    async def go() -> dict[str, Any]:
        async with Stdio(make_app().server) as io:
            io.send(*legacy({"elicitation": {"url": {}}}))
            await io.response(0)
            io.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            )
            return await io.response(1)

    error = run(go())["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_url_elicitation_carries_an_id_only_to_a_legacy_session() -> None:
    """2026-07-28 removed ``elicitationId`` (changelog item 11); 2025-11-25 requires it."""

    async def modern() -> Any:
        async with Driver(make_app()) as d:
            caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"url": {}}}}
            return await d.call("visit", **caps)

    asked = run(modern())["inputRequests"]["elicit-1"]
    assert asked["params"] == {"mode": "url", "message": "Sign in", "url": "https://example.com/login"}

    async def legacy_session() -> list[dict[str, Any]]:
        async with Stdio(make_app().server, on_write=answer_requests) as io:
            io.send(*legacy({"elicitation": {"url": {}}}))
            await io.response(0)
            io.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "visit", "arguments": {}}})
            await io.response(1)
            return [m for m in io.out if m.get("method") == "elicitation/create"]

    (request,) = run(legacy_session())
    assert request["params"]["mode"] == "url" and len(request["params"]["elicitationId"]) == 32


def test_an_answer_that_does_not_fit_its_question_is_the_clients_error() -> None:
    """Found by a review: an answer failing its form (or shaped for another method) was the
    handler's failure, -32603 (a tool's ``isError``); mrtr.mdx has protocol errors in
    ``inputResponses`` answered with a JSON-RPC error: -32602."""

    async def go() -> Any:
        async with Driver(make_app()) as d:
            answers = {"user_name": {"action": "accept", "content": {"name": 3}}}
            return await d.send(
                "tools/call", {"name": "keyed", "arguments": {"x": 1}, "inputResponses": answers}, **ELICIT
            )

    error = run(go())["error"]
    assert error["code"] == -32602 and "does not fit its form" in error["message"], error


def test_a_method_behind_a_capability_the_server_does_not_advertise_is_not_found() -> None:
    """The 2026-07-28 schema's MethodNotFoundError: ``prompts/list`` of a server that does not
    advertise ``prompts`` is -32601 (an App answered every list method, empty)."""

    async def go() -> tuple[Any, Any, Any]:
        async with Driver(make_app()) as d:  # tools only
            return await d.send("prompts/list"), await d.send("resources/list"), await d.send("tools/list")

    prompts, resources, tools = run(go())
    assert prompts["error"]["code"] == -32601 and resources["error"]["code"] == -32601, (prompts, resources)
    assert "result" in tools


class Prefs(BaseModel):
    name: str
    nickname: str | None = None
    seat: Literal["window", "aisle"] | None = None
    adults: int = 1


PREFS_FORM = {
    "type": "object",
    "properties": {
        "name": {"title": "Name", "type": "string"},
        "nickname": {"title": "Nickname", "type": "string"},
        "seat": {"title": "Seat", "type": "string", "enum": ["window", "aisle"]},
        "adults": {"title": "Adults", "type": "integer", "default": 1},
    },
    "required": ["name"],
}


def prefs_app() -> App:
    app = App("prefs", surface="tests.authoring.no_such_surface")

    @app.tool
    async def book(ctx: Context) -> str:
        answer = await ctx.elicit("Preferences?", Prefs)
        return repr(answer.data)

    return app


def test_optional_fields_are_form_fields_the_client_may_leave_out_in_either_era() -> None:
    """A review: ``nickname: str | None = None`` reached the form as pydantic wrote it, an
    ``anyOf`` with null and ``default: null``, which is no primitive schema of any revision: the
    2026-07-28 result failed its own validation and a 2025-11-25 request could not be written
    (-32603 either way). An optional field is now a property outside ``required``."""

    async def modern() -> Any:
        async with Driver(prefs_app()) as d:
            first = await d.call("book", **ELICIT)
            retry = {"name": "book", "arguments": {}, "inputResponses": {"elicit-1": accept(name="Ada", seat="aisle")}}
            return first, await d.result("tools/call", {**retry, "requestState": first["requestState"]}, **ELICIT)

    first, done = run(modern())
    assert first["inputRequests"]["elicit-1"]["params"]["requestedSchema"] == PREFS_FORM
    assert done["content"][0]["text"] == "Prefs(name='Ada', nickname=None, seat='aisle', adults=1)"

    def answer(io: Stdio, message: dict[str, Any]) -> None:
        if message.get("method") == "elicitation/create":
            assert message["params"]["requestedSchema"] == PREFS_FORM
            io.send({"jsonrpc": "2.0", "id": message["id"], "result": accept(name="Lin", nickname="L")})

    async def legacy_session() -> dict[str, Any]:
        async with Stdio(prefs_app().server, on_write=answer) as io:
            io.send(*legacy({"elicitation": {}}))
            await io.response(0)
            io.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "book", "arguments": {}}})
            return await io.response(1)

    text = run(legacy_session())["result"]["content"][0]["text"]
    assert text == "Prefs(name='Lin', nickname='L', seat=None, adults=1)"


def test_a_question_a_sessions_revision_cannot_carry_fails_the_call_as_the_servers_error() -> None:
    """A review: 2025-03-26 has no ``elicitation/create``. A client that declared elicitation all
    the same (the official SDK does, on every revision) had its ``tools/call`` answered -32601,
    "Method not found", as if the tool call were what the server lacks."""

    async def go() -> dict[str, Any]:
        async with Stdio(make_app().server) as io:
            init = {"protocolVersion": "2025-03-26", "capabilities": {"elicitation": {}}, "clientInfo": INFO}
            io.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            assert (await io.response(0))["result"]["protocolVersion"] == "2025-03-26"
            io.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            io.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_name", "arguments": {}}}
            )
            return await io.response(1)

    error = run(go())["error"]
    assert error == {
        "code": -32603,
        "message": "MCP 2025-03-26 has no elicitation/create request: its client cannot be asked it",
    }


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"ok": "notbool"}, "ok: not a boolean"),
        ({}, "ok: a required field is missing"),
        ({"ok": True, "size": "xl"}, "size: 'xl' is not one of the choices"),
        ({"ok": True, "size": "m"}, None),
    ],
)
def test_an_answer_to_a_form_given_as_a_json_schema_is_checked_against_it(content: Any, problem: str | None) -> None:
    """elicitation.mdx: servers SHOULD validate the answer against the requested schema. A form
    given as a model was checked; one given as JSON Schema took any content (a string for a
    boolean, a required field left out, a choice not offered)."""

    async def go() -> Any:
        async with Driver(make_app()) as d:
            answers = {"sure": {"action": "accept", "content": content}}
            return await d.send(
                "tools/call", {"name": "by_schema", "arguments": {}, "inputResponses": answers}, **ELICIT
            )

    reply = run(go())
    if problem is None:
        assert reply["result"]["content"][0]["text"] == f"accept: {content}"
    else:
        assert reply["error"]["code"] == -32602 and problem in reply["error"]["message"], reply


def test_form_answers_are_read_as_json_schema_reads_them() -> None:
    """From a review: an integer past a float's range crashed the check (the tool failed, not
    the answer); RFC 3339's lower-case t and z and leap second were refused, and dates and times
    it does not allow (no offset, basic format, ISO weeks) were taken."""
    from mcpgen._runtime.server.services.inputs import form_problem

    form = {
        "type": "object",
        "properties": {
            "n": {"type": "integer", "maximum": 5},
            "d": {"type": "string", "format": "date"},
            "t": {"type": "string", "format": "date-time"},
        },
    }
    fits = [
        {"n": 3.0},
        {"t": "2024-01-01t10:00:00z"},
        {"t": "2016-12-31T23:59:60Z"},
        {"t": "2024-01-01T10:00:00.5+02:00"},
    ]
    for content in fits:
        assert form_problem(content, form) is None, content
    misfits = [
        ({"n": 10**400}, "n: above the maximum 5"),
        ({"n": 2.5}, "n: not an integer"),
        ({"d": "20240101"}, "d: not a date"),
        ({"d": "2024-W01-1"}, "d: not a date"),
        ({"d": "2024-02-30"}, "d: not a date"),
        ({"t": "2024-01-01T10:00:00"}, "t: not a date-time"),
        ({"t": "20240101T100000"}, "t: not a date-time"),
        ({"t": "2024-01-01 10:00"}, "t: not a date-time"),
    ]
    for content, problem in misfits:
        assert form_problem(content, form) == problem, content


def test_a_form_that_is_not_flat_fails_the_tool_in_the_authors_code_naming_the_field() -> None:
    """An author's review: a model with an object field went out as an elicitation the revision
    has no form for (-32603 naming 31 schema errors on 2026-07-28; "no MCP 2025-11-25 form" on a
    legacy session); ``ctx.elicit`` raises at once, so the call is the tool's error naming the field."""

    async def go() -> tuple[Any, Any]:
        async with Driver(make_app()) as d:
            return await d.call("nested", {}, **ELICIT), await d.call("picks", {}, **ELICIT)

    nested, picks = run(go())
    assert nested["isError"] is True, nested
    assert nested["content"][0]["text"] == (
        "Place.city cannot be asked in an elicitation form: its fields are strings, numbers, integers, "
        "booleans, enums or lists of enum values (a form is flat)"
    )
    # a list of enum values is a form field (a multi-select): asked, not refused
    assert picks.get("isError") is not True and picks["resultType"] == "input_required", picks
    schema = picks["inputRequests"][next(iter(picks["inputRequests"]))]["params"]["requestedSchema"]
    assert schema["properties"]["sizes"] == {
        "items": {"enum": ["s", "m", "l"], "type": "string"},
        "title": "Sizes",
        "type": "array",
    }
