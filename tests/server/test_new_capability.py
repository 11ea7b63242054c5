"""A capability a new revision adds is data: an overlay entry, no runtime code.

The revision exists only here: 2026-07-28's schema plus a ``greetings`` server capability (for the
new request ``greetings/get``, its ``listChanged`` flag for the new notification
``notifications/greetings/list_changed``, which a new ``SubscriptionFilter`` member
``greetingsListChanged`` opts in to), a ``validate`` flag of ``tools`` (for the new request
``tools/validate``) and a ``notes`` client capability (for the new input request ``notes/list``),
the capabilities (and ``greetings/get``'s ``Mcp-Name`` header source, ``params.name``) added to
the lock's overlay as a maintainer would, adopted and generated into
``capmcp`` against the installed runtime. Before, which capability stood for which messages, and
which filter member for which notification, were tables in the runtime: such a server served
``greetings/get`` but never declared ``greetings``, and could not send the new notification.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.hostile.probe import initialize
from tests.server.revisions import made_up_revision
from tests.server.servers import Stdio, run

NEW = "2027-03-01"
BASE = "2026-07-28"
PACKAGE = f"capmcp.v{NEW.replace('-', '_')}"


def request_definition(method: str, params: str | None) -> dict[str, Any]:
    properties: dict[str, Any] = {"method": {"const": method, "type": "string"}}
    if params is not None:
        properties.update(
            {
                "id": {"$ref": "#/$defs/RequestId"},
                "jsonrpc": {"const": "2.0", "type": "string"},
                "params": {"$ref": f"#/$defs/{params}"},
            }
        )
    required = ["id", "jsonrpc", "method", "params"] if params is not None else ["method"]
    return {"properties": properties, "required": required, "type": "object"}


def result_definition(field: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "properties": {"_meta": {"$ref": "#/$defs/ResultMetaObject"}, field: schema, "resultType": {"type": "string"}},
        "required": [field, "resultType"],
        "type": "object",
    }


def with_capabilities(base: dict[str, Any]) -> dict[str, Any]:
    document = json.loads(json.dumps(base))
    defs = document["$defs"]
    named = {"properties": {"_meta": {"$ref": "#/$defs/RequestMetaObject"}, "name": {"type": "string"}}}
    defs["GetGreetingRequest"] = request_definition("greetings/get", "GetGreetingRequestParams")
    defs["GetGreetingRequestParams"] = {**named, "required": ["_meta", "name"], "type": "object"}
    defs["GetGreetingResult"] = result_definition("greeting", {"type": "string"})
    defs["ValidateToolRequest"] = request_definition("tools/validate", "ValidateToolRequestParams")
    defs["ValidateToolRequestParams"] = {**named, "required": ["_meta", "name"], "type": "object"}
    defs["ValidateToolResult"] = result_definition("valid", {"type": "boolean"})
    defs["ClientRequest"]["anyOf"] += [{"$ref": "#/$defs/GetGreetingRequest"}, {"$ref": "#/$defs/ValidateToolRequest"}]
    defs["ListNotesRequest"] = request_definition("notes/list", None)
    defs["ListNotesRequest"]["properties"]["params"] = {"$ref": "#/$defs/ListNotesRequestParams"}
    defs["ListNotesRequestParams"] = {
        "properties": {"scope": {"enum": ["mine", "shared"], "type": "string"}, "archivedSince": {"type": "string"}},
        "type": "object",
    }
    defs["ListNotesResult"] = {
        "properties": {"notes": {"items": {"type": "string"}, "type": "array"}},
        "required": ["notes"],
        "type": "object",
    }
    defs["GreetingListChangedNotification"] = {
        "properties": {
            "jsonrpc": {"const": "2.0", "type": "string"},
            "method": {"const": "notifications/greetings/list_changed", "type": "string"},
            "params": {"$ref": "#/$defs/NotificationParams"},
        },
        "required": ["jsonrpc", "method"],
        "type": "object",
    }
    defs["ServerNotification"]["anyOf"].append({"$ref": "#/$defs/GreetingListChangedNotification"})
    defs["SubscriptionFilter"]["properties"]["greetingsListChanged"] = {
        "description": "If true, receive {@link GreetingListChangedNotificationnotifications/greetings/list_changed}.",
        "type": "boolean",
    }
    defs["InputRequest"]["anyOf"].append({"$ref": "#/$defs/ListNotesRequest"})
    defs["InputResponse"]["anyOf"].append({"$ref": "#/$defs/ListNotesResult"})
    defs["ServerCapabilities"]["properties"]["greetings"] = {
        "description": "Offers greetings.",
        "properties": {"listChanged": {"type": "boolean"}},
        "type": "object",
    }
    defs["ServerCapabilities"]["properties"]["tools"]["properties"]["validate"] = {"type": "boolean"}
    defs["ClientCapabilities"]["properties"]["notes"] = {
        "description": "Lists its notes.",
        "properties": {name: {"type": "object"} for name in ("mine", "shared", "archived")},
        "type": "object",
    }
    return document


def overlay(raw: dict[str, Any]) -> None:
    raw["capabilities"]["server"]["greetings"] = {
        "requests": "greetings/",
        "flags": {"listChanged": "notifications/greetings/list_changed"},
    }
    raw["capabilities"]["server"]["tools"]["flags"]["validate"] = "tools/validate"
    raw["capabilities"]["client"]["notes"] = {
        "requests": "notes/",
        "members": {  # as elicitation's modes (``{}`` is "mine"), and sampling's tools
            "mine": {"param": "scope", "value": "mine", "when_absent": True, "implied": True},
            "shared": {"param": "scope", "value": "shared"},
            "archived": {"param": "archivedSince"},
        },
    }
    raw["mcp_name"]["params"]["greetings/get"] = "name"


@pytest.fixture(scope="module")
def capmcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    with made_up_revision(tmp_path_factory.mktemp("capabilities"), NEW, with_capabilities, "capmcp", overlay):
        yield importlib.import_module("capmcp")


def server(capmcp: ModuleType, validating: bool) -> Any:
    s = importlib.import_module(f"{PACKAGE}.server")
    m = importlib.import_module(f"{PACKAGE}.models")

    class Greeter(s.Server):  # type: ignore[misc,name-defined]
        name = "greeter"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})])

        async def get_greeting(self, params: Any, ctx: Any) -> Any:
            return s.GetGreetingResult(greeting=f"hello {params.name}")

    if not validating:
        return Greeter()

    class Validating(Greeter):
        async def validate_tool(self, params: Any, ctx: Any) -> Any:
            return s.ValidateToolResult(valid=params.name == "echo")

    return Validating()


def discovered(app: Any, *versions: str) -> list[dict[str, Any]]:
    """The capabilities ``server/discover`` tells a client of each modern revision, and
    ``initialize`` one of each legacy revision."""

    async def go() -> list[dict[str, Any]]:
        async with Stdio(app) as conn:
            for i, version in enumerate(versions):
                if version == BASE or version == NEW:
                    meta = {
                        "io.modelcontextprotocol/protocolVersion": version,
                        "io.modelcontextprotocol/clientCapabilities": {},
                    }
                    conn.send({"jsonrpc": "2.0", "id": i, "method": "server/discover", "params": {"_meta": meta}})
                else:
                    conn.send(initialize(i, version))
                await conn.response(i)
            return [msg["result"]["capabilities"] for msg in conn.out if "id" in msg]

    return run(go())


def test_the_package_carries_what_each_capability_stands_for(capmcp: ModuleType) -> None:
    entry = capmcp.REGISTRY.entry(NEW)
    assert entry.server_capabilities["greetings"].requests == ("greetings/get",)
    assert entry.subscription_filter["greetingsListChanged"] == ("notifications/greetings/list_changed", False)
    assert "greetingsListChanged" not in capmcp.REGISTRY.entry(BASE).subscription_filter
    assert entry.server_capabilities["tools"].flags == {
        "listChanged": "notifications/tools/list_changed",
        "validate": "tools/validate",
    }
    methods = capmcp.REGISTRY.revision(NEW).methods
    assert methods.request("notes/list").client_capability == "notes"
    assert methods.request("elicitation/create").client_capability == "elicitation"


def test_a_server_declares_a_new_capability_and_a_flag_of_a_new_request_to_its_revision_only(
    capmcp: ModuleType,
) -> None:
    new, base, legacy = discovered(server(capmcp, validating=False), NEW, BASE, "2025-11-25")
    assert new["greetings"] == {"listChanged": True} and new["tools"] == {"listChanged": True}
    assert "validate" not in new["tools"]  # its request is not implemented
    assert "greetings" not in base and "greetings" not in legacy
    new, base, legacy = discovered(server(capmcp, validating=True), NEW, BASE, "2025-11-25")
    assert new["tools"] == {"listChanged": True, "validate": True}
    assert base["tools"] == {"listChanged": True} and legacy["tools"] == {"listChanged": True}


def test_a_client_declares_a_new_capability_for_its_handler_and_a_server_checks_it(capmcp: ModuleType) -> None:
    from mcpgen._runtime.client.session import ClientOptions
    from mcpgen._runtime.server.services.capabilities import undeclared

    options = ClientOptions(handlers={"notes/list": lambda params: {"notes": []}})
    # and the member a request in its default mode needs (as elicitation's form)
    assert options.client_capabilities(capmcp.REGISTRY.revision(NEW).methods) == {"notes": {"mine": {}}}
    assert options.client_capabilities(capmcp.REGISTRY.revision(BASE).methods) == {}
    methods = capmcp.REGISTRY.revision(NEW).methods
    assert undeclared("notes/list", {}, {}, methods) == {"notes": {}}
    assert undeclared("notes/list", {}, {"notes": {}}, methods) is None


@pytest.mark.parametrize(
    ("params", "declared", "lacking"),
    [
        ({}, {"notes": {}}, None),  # a capability naming none of its members stands for "mine"
        ({"scope": "mine"}, {"notes": {"mine": {}}}, None),
        ({"scope": "shared"}, {"notes": {}}, {"notes": {"shared": {}}}),
        ({"scope": "shared"}, {"notes": {"shared": {}}}, None),
        ({}, {"notes": {"shared": {}}}, {"notes": {"mine": {}}}),  # naming one member, it stands for no other
        ({"archivedSince": "2026-01-01"}, {"notes": {}}, {"notes": {"archived": {}}}),
        # naming a member, it no longer stands for "mine", which a request without a scope needs
        ({"archivedSince": "2026-01-01"}, {"notes": {"archived": {}}}, {"notes": {"mine": {}}}),
        ({"archivedSince": "2026-01-01"}, {"notes": {"mine": {}, "archived": {}}}, None),
        ({"scope": "shared", "archivedSince": "x"}, {"notes": {"shared": {}, "archived": {}}}, None),
    ],
)
def test_the_members_a_new_capabilitys_requests_need_are_overlay_data(
    capmcp: ModuleType, params: dict[str, str], declared: dict[str, Any], lacking: dict[str, Any] | None
) -> None:
    """Which member of a client capability a request's params need (``elicitation.url`` for url
    mode, ``sampling.tools`` for a sampling request with tools) was code in the runtime: a new
    revision's member went unchecked, and a server sent a request its client had not agreed to."""
    from mcpgen._runtime.server.services.capabilities import undeclared

    methods = capmcp.REGISTRY.revision(NEW).methods
    assert [member.name for member in methods.request("notes/list").client_capability_members] == [
        "mine",
        "shared",
        "archived",
    ]
    assert undeclared("notes/list", params, declared, methods) == lacking
    model = methods.request("notes/list").params.model_validate(params)  # a model is read by wire name too
    assert undeclared("notes/list", model, declared, methods) == lacking


def test_a_new_notification_reaches_the_listeners_that_opted_in_by_the_new_filter_member(capmcp: ModuleType) -> None:
    app = server(capmcp, validating=False)
    greetings = "notifications/greetings/list_changed"
    wanted = {"greetingsListChanged": True, "toolsListChanged": True}

    def listen(rid: str, version: str) -> dict[str, Any]:
        meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}
        return {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "subscriptions/listen",
            "params": {"notifications": wanted, "_meta": meta},
        }

    async def go() -> list[dict[str, Any]]:
        async with Stdio(app) as conn:
            conn.send(listen("new", NEW), listen("base", BASE))
            await conn.until(lambda m: len([x for x in conn.out if x.get("method", "").endswith("acknowledged")]) == 2)
            await app.notify(greetings)
            await app.notify_tools_changed()
            await conn.until(lambda m: len(conn.out) == 5)
        return conn.out

    out = run(go())
    acks = {
        m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]: m["params"]["notifications"] for m in out[:2]
    }
    assert acks == {"new": wanted, "base": {"toolsListChanged": True}}  # 2026-07-28's filter has no such member
    sent = [(m["method"], m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]) for m in out[2:]]
    assert sorted(sent) == [
        (greetings, "new"),
        ("notifications/tools/list_changed", "base"),
        ("notifications/tools/list_changed", "new"),
    ]
    with pytest.raises(ValueError, match="notifications/nothing is not a notification a subscriber can ask for"):
        run(app.notify("notifications/nothing"))
    with pytest.raises(ValueError, match="names the URI it is about"):
        run(app.notify("notifications/resources/updated"))


def test_the_mcp_name_header_of_a_new_request_is_checked_against_the_param_the_overlay_names(
    capmcp: ModuleType,
) -> None:
    """The Streamable HTTP ``Mcp-Name`` source of each method was a table in the runtime (twice:
    the server's check and the client's headers): a new request's header went unchecked."""
    from tests.server.test_asgi import call

    methods = capmcp.REGISTRY.revision(NEW).methods
    assert methods.request("greetings/get").target_param == "name"
    assert methods.request("tools/call").target_param == "name"
    assert capmcp.REGISTRY.revision("2025-11-25").methods.request("tools/call").target_param is None
    app = server(capmcp, validating=False).asgi_app()
    meta = {"io.modelcontextprotocol/protocolVersion": NEW, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "greetings/get", "params": {"name": "ada", "_meta": meta}}
    headers = {
        "mcp-protocol-version": NEW,
        "mcp-method": "greetings/get",
        "accept": "application/json, text/event-stream",
    }

    async def go() -> tuple[Any, Any, Any]:
        wrong = await call(app, body, {**headers, "mcp-name": "bob"})
        missing = await call(app, body, headers)
        right = await call(app, body, {**headers, "mcp-name": "ada"})
        return wrong, missing, right

    wrong, missing, right = run(go())
    assert wrong.status == 400 and wrong.json()["error"]["code"] == -32020
    assert wrong.json()["error"]["message"] == "Mcp-Name header does not match params.name"
    assert missing.json()["error"]["message"] == "Mcp-Name header is missing (params.name is given)"
    assert right.status == 200 and right.json()["result"]["greeting"] == "hello ada"


def test_a_client_drops_a_new_notification_its_acknowledged_filter_did_not_agree_to(capmcp: ModuleType) -> None:
    """subscriptions.mdx: the client checks the acknowledged filter. Which member covers which
    notification was a table in the client: a new member's notification always passed."""
    from types import SimpleNamespace

    from mcpgen._runtime.client.modern import agreed
    from mcpgen._runtime.jsonrpc import Notification

    members = capmcp.REGISTRY.entry(NEW).subscription_filter
    greetings = Notification("notifications/greetings/list_changed", None)
    updated = Notification("notifications/resources/updated", SimpleNamespace(uri="x://a"))
    only_tools = SimpleNamespace(notifications={"toolsListChanged": True})
    both = SimpleNamespace(notifications={"greetingsListChanged": True, "resourceSubscriptions": ["x://a"]})
    assert not agreed(members, only_tools, greetings) and agreed(members, both, greetings)
    assert not agreed(members, only_tools, updated) and agreed(members, both, updated)
    assert agreed(members, only_tools, Notification("notifications/message", None))  # no member names it


def test_notify_takes_a_uri_exactly_where_the_notifications_params_require_one() -> None:
    """A review of the diff: on a server of a revision without a SubscriptionFilter (2025-11-25),
    ``notify_resource_updated(None)`` was sent to every legacy session with no params, and a URI
    given with a list change was kept (and the change sent only to that URI's subscribers)."""
    from mcpgen.v2025_11_25 import server as legacy

    class Old(legacy.Server):  # type: ignore[misc]
        pass

    old = Old()
    with pytest.raises(ValueError, match="notifications/resources/updated names the URI it is about"):
        run(old.notify("notifications/resources/updated"))
    with pytest.raises(ValueError, match="notifications/tools/list_changed names no URI"):
        run(old.notify("notifications/tools/list_changed", "x://a"))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
def test_a_member_a_revision_lacks_is_refused_not_sent_as_if_agreed(version: str) -> None:
    """A review of the move to data: the members were kept only where the revision's
    ``ClientCapabilities`` has them, so a 2025-06-18 server's sampling request with ``tools`` (which
    its clients cannot declare) went out as if agreed, where it was -32021 before; url-mode
    elicitation on 2025-06-18 likewise. Such a member is kept, unavailable."""
    from mcpgen import REGISTRY
    from mcpgen._runtime.server.services.capabilities import undeclared

    methods = REGISTRY.revision(version).methods
    tools = {"messages": [], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    assert undeclared("sampling/createMessage", tools, {"sampling": {}}, methods) == {"sampling": {"tools": {}}}
    assert undeclared("sampling/createMessage", {"messages": [], "maxTokens": 5}, {"sampling": {}}, methods) is None
    if methods.request("elicitation/create") is None:
        return
    url = {"mode": "url", "url": "https://x", "message": "m", "elicitationId": "e"}
    assert undeclared("elicitation/create", url, {"elicitation": {}}, methods) == {"elicitation": {"url": {}}}
    assert undeclared("elicitation/create", {"message": "m"}, {"elicitation": {}}, methods) is None
    members = {m.name: m.available for m in methods.request("elicitation/create").client_capability_members}
    assert members == {"form": version >= "2025-11-25", "url": version >= "2025-11-25"}
    if version < "2025-11-25":  # a member the revision lacks, declared anyway, agrees to nothing
        assert undeclared("elicitation/create", {"message": "m"}, {"elicitation": {"url": {}}}, methods) is None
        assert undeclared("elicitation/create", url, {"elicitation": {"url": {}}}, methods) == {
            "elicitation": {"url": {}}
        }
        assert undeclared("sampling/createMessage", tools, {"sampling": {"tools": {}}}, methods) == {
            "sampling": {"tools": {}}
        }
