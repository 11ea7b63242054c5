"""The router over in-process stdio: modern rules, dual-era sessions, cancellation, subscriptions."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import pytest
from mcpgen._runtime.method_table import MethodTable
from mcpgen._runtime.server.services.request_state import RequestStateSealer
from mcpgen._runtime.versions import VersionRegistry
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

from tests.hostile.probe import initialize
from tests.revisions import VERSIONS, newest_first
from tests.server.servers import MODERN, Demo, Stdio, meta, request, run

LEGACY_INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "legacy", "version": "1"},
    },
}


def test_discover_derives_capabilities_and_stamps_server_info() -> None:
    async def go() -> dict[str, Any]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "server/discover"))
            return await conn.response(1)

    result = run(go())["result"]
    assert result["supportedVersions"][0] == MODERN
    assert "2025-11-25" in result["supportedVersions"]
    assert set(result["capabilities"]) == {"logging", "tools", "resources"}  # prompts not implemented
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "demo", "version": "1.2.3"}
    assert (result["resultType"], result["ttlMs"], result["cacheScope"]) == ("complete", 5000, "public")


def test_cacheable_results_take_server_defaults_unless_the_handler_sets_them() -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/list"), request(2, "resources/read", {"uri": "x://y"}))
            return (await conn.response(1))["result"], (await conn.response(2))["result"]

    listed, read = run(go())
    assert (listed["ttlMs"], listed["cacheScope"]) == (5000, "public")
    assert (read["ttlMs"], read["cacheScope"]) == (1, "private")


def test_unimplemented_removed_and_unknown_methods_answer_32601() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(
                request(1, "prompts/list"),
                request(2, "ping"),
                request(3, "logging/setLevel", {"level": "info"}),
                request(
                    4,
                    "initialize",
                    {"protocolVersion": MODERN, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
                ),
                request(5, "nope/nope"),
            )
            return [await conn.response(i) for i in range(1, 6)]

    assert [r["error"]["code"] for r in run(go())] == [-32601] * 5


def test_required_meta_version_and_capability_errors() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/list",
                    "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
                },
                request(3, "tools/list", **{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
                request(4, "tools/call", {"name": "ask"}),  # elicitation not declared
                b"{not json",
            )
            return [await conn.response(i) for i in (1, 2, 3, 4)] + [await conn.response(None)]

    missing, partial, version, capability, parse = run(go())
    assert missing["error"]["code"] == partial["error"]["code"] == -32602
    assert version["error"]["code"] == -32022
    served = list(newest_first(v for v in VERSIONS if v <= MODERN))  # every locked revision up to its own
    assert version["error"]["data"] == {"supported": served, "requested": "2099-01-01"}
    assert capability["error"]["code"] == -32021
    assert capability["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}
    assert parse["error"]["code"] == -32700


def test_progress_and_logs_only_when_the_request_opted_in() -> None:
    async def go(**extra: Any) -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "echo", "arguments": {"a": 1}}, **extra))
            await conn.response(1)
            return conn.out

    silent = run(go())
    assert [m.get("method") for m in silent] == [None]  # the response only
    chatty = run(go(progressToken="tok", **{"io.modelcontextprotocol/logLevel": "info"}))
    methods = [m.get("method") for m in chatty]
    assert methods == ["notifications/progress", "notifications/message", None]  # debug filtered out
    assert chatty[0]["params"] == {"progressToken": "tok", "progress": 1, "total": 2, "message": "half"}
    assert chatty[2]["result"]["content"][0]["text"] == '{"a": 1}'


def test_progress_only_increases_and_nothing_goes_after_the_answer() -> None:
    """progress.mdx: progress MUST increase with each notification and MUST stop after
    completion. A report that does not increase is dropped; a task the handler left running with
    its context sends nothing once the request is answered."""
    late: list[asyncio.Task[None]] = []

    class Reporter(s.Server):
        async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> m.CallToolResult:
            for value in (50, 10, 50, 60):
                await ctx.report_progress(value)

            async def after() -> None:
                await asyncio.sleep(0.05)
                await ctx.report_progress(99)
                await ctx.log("info", "late")

            late.append(asyncio.ensure_future(after()))
            return m.CallToolResult(content=[m.TextContent(type="text", text="done")])

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Reporter()) as conn:
            extra = {"progressToken": "t", "io.modelcontextprotocol/logLevel": "debug"}
            conn.send(request(1, "tools/call", {"name": "x", "arguments": {}}, **extra))
            await conn.response(1)
            await asyncio.gather(*late)
            return conn.out

    out = run(go())
    assert [(m.get("method"), m.get("params", {}).get("progress")) for m in out] == [
        ("notifications/progress", 50),
        ("notifications/progress", 60),
        (None, None),  # the answer, and nothing after it
    ]


def test_input_required_state_is_sealed_and_a_tampered_state_is_rejected() -> None:
    caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}

    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "ask"}, **caps))
            first = (await conn.response(1))["result"]
            state = first["requestState"]
            answer = {"q": {"action": "accept", "content": {"n": "ada"}}}
            conn.send(
                request(2, "tools/call", {"name": "ask", "inputResponses": answer, "requestState": state}, **caps)
            )
            tampered = state[:-1] + ("2" if state[-1] != "2" else "3")
            conn.send(
                request(3, "tools/call", {"name": "ask", "inputResponses": answer, "requestState": tampered}, **caps)
            )
            return first, await conn.response(2), await conn.response(3)

    first, second, third = run(go())
    assert first["resultType"] == "input_required"
    assert first["inputRequests"]["q"]["method"] == "elicitation/create"
    assert first["requestState"] != "round-1" and first["requestState"].endswith(".round-1")
    assert second["result"]["content"][0]["text"] == 'accept:{"n": "ada"} state=round-1'
    assert third["error"]["code"] == -32602


def test_request_state_sealer_shares_a_key_across_instances() -> None:
    a, b, c = RequestStateSealer(b"k"), RequestStateSealer(b"k"), RequestStateSealer(b"other")
    sealed = a.seal("s")
    assert b.open(sealed) == "s"
    for bad in (sealed.replace(".", "x"), "s", c.seal("s")):
        try:
            b.open(bad)
        except Exception as exc:
            assert getattr(exc, "code", None) == -32602
        else:
            raise AssertionError(f"accepted {bad!r}")


def test_handler_exceptions_become_32603_and_the_server_keeps_serving() -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "fail"}), request(2, "tools/list"))
            return await conn.response(1), await conn.response(2)

    failed, listed = run(go())
    assert failed["error"] == {"code": -32603, "message": "Internal error"}  # nothing of the exception leaks
    assert "result" in listed


def test_a_cancelled_error_a_handler_raises_itself_is_answered_32603() -> None:
    """Nothing cancelled the request, so an answer is owed (it went unanswered: a typed-tools review)."""

    async def go() -> dict[str, Any]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "cancelled_inside"}))
            return await asyncio.wait_for(conn.response(1), 10)

    assert run(go())["error"] == {"code": -32603, "message": "Internal error"}


def test_cancelled_request_gets_no_response() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "slow"}))
            await asyncio.sleep(0.01)
            conn.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            conn.send(request(2, "tools/list"))
            await conn.response(2)
        return conn.out

    out = run(go())
    assert [m.get("id") for m in out] == [2]


def test_subscriptions_listen_acknowledges_first_and_tags_notifications() -> None:
    async def go() -> list[dict[str, Any]]:
        server = Demo()
        async with Stdio(server) as conn:
            filt = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["x://a"]}
            conn.send(request("sub", "subscriptions/listen", {"notifications": filt}))
            await conn.until(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")
            await server.notify_tools_changed()
            await server.notify_prompts_changed()  # not honoured: no prompts
            await server.notify_resource_updated("x://b")  # not subscribed
            await server.notify_resource_updated("x://a")
            conn.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "sub"}})
            conn.send(request(9, "tools/list"))
            await conn.response(9)
        return conn.out

    out = run(go())
    ack, tools, updated, listed = out
    assert ack["params"] == {
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": ["x://a"]},
        "_meta": {"io.modelcontextprotocol/subscriptionId": "sub"},
    }
    assert tools == {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "sub"}},
    }
    assert updated["method"] == "notifications/resources/updated" and updated["params"]["uri"] == "x://a"
    assert listed["id"] == 9


def test_legacy_session_converts_and_answers_legacy_only_requests() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(
                LEGACY_INIT,
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "warning"}},
                {"jsonrpc": "2.0", "id": 4, "method": "resources/subscribe", "params": {"uri": "x://a"}},
                {
                    "jsonrpc": "2.0",
                    "id": 5,
                    "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"b": 2}, "_meta": {"progressToken": 7}},
                },
                {"jsonrpc": "2.0", "id": 6, "method": "server/discover"},  # not a 2025-06-18 request
            )
            return [await conn.response(i) for i in range(0, 7)] + [conn.out]

    init, ping, listed, level, sub, call, discover, out = run(go())
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["serverInfo"] == {"name": "demo", "version": "1.2.3"}
    assert ping["result"] == {} and level["result"] == {} and sub["result"] == {}
    assert listed["result"] == {"tools": [{"inputSchema": {"type": "object"}, "name": "echo"}]}  # no resultType/ttl
    assert call["result"] == {"content": [{"text": '{"b": 2}', "type": "text"}]}
    assert discover["error"]["code"] == -32601
    progress = [m for m in out if m.get("method") == "notifications/progress"]
    logs = [m for m in out if m.get("method") == "notifications/message"]
    assert progress and progress[0]["params"]["progressToken"] == 7
    assert logs == []  # setLevel warning filters info


def test_legacy_input_required_becomes_server_to_client_requests() -> None:
    def answer(conn: Stdio, message: dict[str, Any]) -> None:
        if message.get("method") == "elicitation/create":
            result = {"action": "accept", "content": {"n": "bob"}}
            conn.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo(), on_write=answer) as conn:
            conn.send(LEGACY_INIT, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}})
            await conn.response(1)
        return conn.out

    out = run(go())
    asked = [m for m in out if m.get("method") == "elicitation/create"]
    assert len(asked) == 1 and "id" in asked[0]
    assert asked[0]["params"]["message"] == "name?"
    final = next(m for m in out if m.get("id") == 1)
    assert final["result"]["content"][0]["text"] == 'accept:{"n": "bob"} state=round-1'


@pytest.mark.parametrize("ending", ["timeout", "cancelled"])
def test_a_request_to_the_client_no_longer_waited_for_is_cancelled(
    ending: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lifecycle.mdx (Timeouts): a sender that stops waiting for a request SHOULD send a
    cancellation for it. The server's elicitation of a legacy client went unanswered past its
    timeout, or the tools/call asking was cancelled, and the client was never told."""
    from mcpgen._runtime.server.sessions import legacy

    monkeypatch.setattr(legacy, "INPUT_TIMEOUT", 0.3)

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(LEGACY_INIT, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}})
            asked = await conn.until(lambda m: m.get("method") == "elicitation/create")
            if ending == "cancelled":
                conn.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            cancel = await conn.until(lambda m: m.get("method") == "notifications/cancelled")
            return [asked, cancel]

    asked, cancel = run(go())
    reason = "timed out" if ending == "timeout" else "no longer needed"
    assert cancel["params"] == {"requestId": asked["id"], "reason": reason}


def test_legacy_input_required_without_the_capability_is_refused() -> None:
    async def go() -> dict[str, Any]:
        init = {**LEGACY_INIT, "params": {**LEGACY_INIT["params"], "capabilities": {}}}
        async with Stdio(Demo()) as conn:
            conn.send(init, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}})
            return await conn.response(1)

    assert run(go())["error"]["code"] == -32021


def test_modern_stdout_never_carries_requests() -> None:
    async def go() -> list[dict[str, Any]]:
        caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/call", {"name": "ask"}, **caps), request(2, "tools/call", {"name": "echo"}))
            await conn.response(1)
            await conn.response(2)
        return conn.out

    assert all("method" not in m or "id" not in m for m in run(go()))


def test_a_legacy_revision_handler_base_serves_its_revision_and_the_older_ones() -> None:
    from mcpgen.v2025_11_25 import models as lm
    from mcpgen.v2025_11_25 import server as ls

    class Legacy(ls.Server):
        async def call_tool(self, params: lm.CallToolRequestParams, ctx: ls.Context) -> lm.CallToolResult:
            text = f"{params.name} at {ctx.protocol_version}"
            return lm.CallToolResult(content=[lm.TextContent(type="text", text=text)], structured_content={"n": 1})

    async def session(requested: str) -> list[dict[str, Any]]:
        async with Stdio(Legacy()) as conn:
            conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "early"}})
            first = await conn.response(1)
            init = {**LEGACY_INIT, "params": {**LEGACY_INIT["params"], "protocolVersion": requested}}
            conn.send(init, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}})
            return [first, await conn.response(0), await conn.response(2)]

    early, init, call = run(session("2024-11-05"))
    assert early["error"]["code"] == -32600  # initialize first
    assert init["result"]["protocolVersion"] == "2024-11-05"  # older: converted
    assert init["result"]["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}
    # an unknown key for 2024-11-05 travels as an extra, as any open object's
    assert call["result"] == {"content": [{"text": "x at 2024-11-05", "type": "text"}], "structuredContent": {"n": 1}}
    _, init, call = run(session("2026-07-28"))
    assert init["result"]["protocolVersion"] == "2025-11-25"  # newer than the handler: its own
    assert call["result"]["content"][0]["text"] == "x at 2025-11-25"


def test_a_ping_before_initialize_is_answered_by_servers_of_either_kind() -> None:
    """lifecycle.mdx: the one request a legacy client may send before initialize is a ping, and
    ping.mdx: the receiver MUST answer it. A server of both eras took it for a modern request
    (-32601: not a 2026-07-28 method), a legacy one refused it (-32600, initialize first); the
    connection's era is still open after it."""
    from mcpgen.v2025_11_25 import server as ls

    ping = {"jsonrpc": "2.0", "id": "p1", "method": "ping"}

    async def session(server: Any, then: dict[str, Any]) -> list[dict[str, Any]]:
        async with Stdio(server) as conn:
            conn.send(ping)
            pong = await conn.response("p1")
            conn.send(then)
            return [pong, await conn.response(then["id"])]

    for server in (Demo(), ls.Server()):
        pong, init = run(session(server, LEGACY_INIT))
        assert pong == {"jsonrpc": "2.0", "id": "p1", "result": {}}
        assert init["result"]["protocolVersion"] == "2025-06-18"
    pong, listed = run(session(Demo(), request(3, "tools/list")))  # and a modern client after it
    assert pong["result"] == {} and "tools" in listed["result"]


def test_lines_written_in_one_loop_iteration_leave_in_one_write() -> None:
    """The stdio runner coalesces answers: with many requests in flight, one system call per
    batch of answers; order kept, what is pending written at close and nothing after it."""
    from mcpgen._runtime.server.runners import Coalescer

    async def go() -> list[bytes]:
        writes: list[bytes] = []
        out = Coalescer(asyncio.get_running_loop(), writes.append)
        for i in range(3):
            out.write(b"%d\n" % i)
        await asyncio.sleep(0)  # one iteration: the flush runs
        out.write(b"3\n")
        out.write(b"4\n")
        out.close()  # what is pending goes out at once
        out.write(b"lost\n")
        await asyncio.sleep(0)
        return writes

    assert run(go()) == [b"0\n1\n2\n", b"3\n4\n"]


def test_requests_cancelled_before_they_start_free_their_place() -> None:
    """A request cancelled in the same read as it arrived never runs; its place among the
    ``max_inflight`` is freed all the same, so later requests are answered, not refused."""
    from mcpgen._runtime.server.services import Limits

    class Two(Demo):
        limits = Limits(max_inflight=2)

    def cancel(rid: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Two()) as conn:
            slow = {"name": "slow"}
            conn.send(request(1, "tools/call", slow), cancel(1), request(2, "tools/call", slow), cancel(2))
            conn.send(request(3, "tools/list"))  # refused: both places are still held when it is read
            await conn.response(3)
            conn.send(request(4, "tools/list"), request(5, "tools/list"))
            return [await conn.response(4), await conn.response(5), await conn.response(3)]

    four, five, three = run(go())
    assert three["error"]["code"] == -32600
    assert "result" in four and "result" in five


def test_a_request_id_still_in_flight_is_refused_and_the_first_stays_cancellable() -> None:
    """A client must not reuse an id in flight: the second request is -32600 (it would slip past
    ``max_inflight`` and hide the first from ``notifications/cancelled``); the first runs on and
    is cancelled by its id."""

    async def go() -> tuple[dict[str, Any], list[str]]:
        server = Demo()
        async with Stdio(server) as conn:
            conn.send(request("L", "tools/call", {"name": "slow"}), request("L", "tools/call", {"name": "slow"}))
            second = await conn.response("L")
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L"}}
            conn.send(request(2, "ping"), {**cancel, "params": {**cancel["params"], "_meta": meta()}})
            await conn.response(2)
            for _ in range(100):
                if server.cancelled:
                    break
                await asyncio.sleep(0.01)
            return second, server.cancelled

    second, cancelled = run(go())
    assert second["error"]["code"] == -32600 and "already in flight" in second["error"]["message"]
    assert cancelled == ["slow"]


def test_a_legacy_http_session_refuses_an_id_in_flight_before_counting_it() -> None:
    """``Router.run`` (legacy HTTP sessions): an id in flight is -32600 whatever room is left."""

    async def go() -> dict[str, Any]:
        router = Demo().router
        conn = router.connect(None)
        first = asyncio.get_running_loop().create_future()
        conn.inflight["X"] = first  # type: ignore[assignment]  # a request of the session, still running
        reply = await router.run({"jsonrpc": "2.0", "id": "X", "method": "ping"}, _discard, conn)
        assert conn.inflight["X"] is first
        assert reply.body is not None
        return json.loads(reply.body)

    error = run(go())["error"]
    assert error["code"] == -32600 and error["message"] == "request id 'X' is already in flight"


async def _discard(data: bytes) -> None:
    pass


class AsksInList(Demo):
    async def list_prompts(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListPromptsResult:
        await ctx.elicit("name?", {"type": "object", "properties": {"n": {"type": "string"}}})
        return s.ListPromptsResult(prompts=[])


def test_a_handler_that_asks_for_input_where_its_method_cannot_is_the_servers_error() -> None:
    """Only tools/call, prompts/get and resources/read may answer input_required: elsewhere a
    handler asking the client is the author's bug (-32603), not the client's (-32602)."""

    async def go() -> dict[str, Any]:
        caps = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        reply = await AsksInList().router.handle(request(1, "prompts/list", **caps), _discard, None)
        assert reply.body is not None
        return json.loads(reply.body)

    error = run(go())["error"]
    assert error["code"] == -32603 and "prompts/list handler asked the client for input" in error["message"]


class Quiet(Demo):
    """Lists tools and resources but announces no change of either (no listChanged, no subscribe)."""

    def capabilities(self) -> dict[str, Any]:
        return {"tools": {}, "resources": {"listChanged": True}}


def test_the_acknowledgement_agrees_only_to_what_the_capabilities_declare() -> None:
    """subscriptions.mdx: notification types the server does not support are left out of the
    acknowledged filter; a tools capability without listChanged does not support tool changes."""

    async def go() -> dict[str, Any]:
        async with Stdio(Quiet()) as conn:
            wanted = {"toolsListChanged": True, "resourcesListChanged": True, "resourceSubscriptions": ["file:///a"]}
            conn.send(request("L", "subscriptions/listen", {"notifications": wanted}))
            return await conn.until(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")

    assert run(go())["params"]["notifications"] == {"resourcesListChanged": True}


class WithoutToolChanges:
    """The server's revision less ``notifications/tools/list_changed`` (as a next revision that
    removed it would be): every other attribute is the revision's."""

    def __init__(self, revision: Any) -> None:
        self._revision = revision
        self.methods = MethodTable(tuple(spec for spec in revision.methods if spec.name != TOOLS_CHANGED))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._revision, name)


def without_tool_changes(registry: VersionRegistry, version: str) -> VersionRegistry:
    """``registry`` with the entry of ``version`` as the generator writes it for such a revision:
    its ``tools`` capability without the ``listChanged`` flag (no notification to promise)."""
    entries = []
    for v in registry.versions:
        entry = registry.entry(v)
        if v == version:
            caps = dict(entry.server_capabilities)
            caps["tools"] = caps["tools"]._replace(flags={})
            entry = dataclasses.replace(entry, server_capabilities=caps)
        entries.append(entry)
    return VersionRegistry(entries)


TOOLS_CHANGED = "notifications/tools/list_changed"


def test_list_changed_is_declared_and_acknowledged_only_where_the_revision_has_the_notification() -> None:
    """The capabilities said ``listChanged`` for every listing a server implements, so a server
    of a revision without tools' list_changed acknowledged ``toolsListChanged`` and then sent a
    notification the revision does not have (the client's decoder dropped it: its listen never
    yielded). The flag now follows the session's revision (``as_spoken``), and the acknowledgement
    with it."""

    class Pruned(Demo):
        revision = WithoutToolChanges(Demo.revision)
        registry = without_tool_changes(Demo.registry, Demo.revision.version)

    async def go() -> dict[str, Any]:
        async with Stdio(Pruned()) as conn:
            wanted = {"toolsListChanged": True, "resourcesListChanged": True}
            conn.send(request("L", "subscriptions/listen", {"notifications": wanted}))
            return await conn.until(lambda m: m.get("method") == "notifications/subscriptions/acknowledged")

    assert run(go())["params"]["notifications"] == {"resourcesListChanged": True}

    async def discover() -> dict[str, Any]:
        async with Stdio(Pruned()) as conn:
            conn.send(request(1, "server/discover"))
            return await conn.response(1)

    discovered = run(discover())["result"]["capabilities"]
    assert discovered["tools"] == {} and discovered["resources"] == {"listChanged": True, "subscribe": True}


def test_a_session_of_an_older_revision_is_told_the_flags_its_revision_has_though_the_servers_lacks_one() -> None:
    """A server of a revision without tools' list_changed sends tool changes to a 2025-11-25
    session (its revision has the notification: ``LegacySession.sends``), so that session is told
    ``tools.listChanged``. ``capabilities()`` dropped the flag by the server's own revision, before
    each session's revision was asked, and the 2025-11-25 session was told ``tools: {}``."""

    class Pruned(Demo):
        revision = WithoutToolChanges(Demo.revision)
        registry = without_tool_changes(Demo.registry, Demo.revision.version)

    info = {"name": "c", "version": "1"}
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": info}

    async def go() -> dict[str, Any]:
        async with Stdio(Pruned()) as conn:
            conn.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            return await conn.until(lambda msg: msg.get("id") == 1)

    answer = run(go())["result"]
    assert answer["protocolVersion"] == "2025-11-25"
    assert answer["capabilities"]["tools"] == {"listChanged": True}


def test_a_legacy_session_is_sent_only_the_notifications_its_revision_has() -> None:
    import mcpgen
    from mcpgen._runtime.codec_legacy import LegacyCodec
    from mcpgen._runtime.server.sessions.legacy import LegacySession

    session = object.__new__(LegacySession)  # only its negotiated codec matters here
    session.codec = LegacyCodec(WithoutToolChanges(mcpgen.REGISTRY.revision("2025-11-25")), "server")
    assert not session.sends(TOOLS_CHANGED)
    assert session.sends("notifications/prompts/list_changed")
    assert not session.sends("notifications/initialized")  # the client's to send


def test_a_flag_promising_a_request_only_an_older_revision_has_needs_its_handler() -> None:
    """A review of the diff: a flag's message was taken for a notification (always declared)
    whenever the server's own table lacked it as a request, so a flag an older served revision
    gives for a request (``tools.validate`` -> ``tools/validate``) was declared with no handler."""
    entries = []
    for v in Demo.registry.versions:
        entry = Demo.registry.entry(v)
        if v == "2025-11-25":
            caps = dict(entry.server_capabilities)
            tools = caps["tools"]
            caps["tools"] = tools._replace(
                requests=(*tools.requests, "tools/validate"), flags={**tools.flags, "validate": "tools/validate"}
            )
            entry = dataclasses.replace(entry, server_capabilities=caps)
        entries.append(entry)

    class Older(Demo):
        registry = VersionRegistry(entries)

    assert Older().capabilities()["tools"] == {"listChanged": True}


def test_capabilities_as_spoken_take_a_model_as_an_override_may_return() -> None:
    from mcpgen._runtime.server.services.capabilities import as_spoken

    caps = m.ServerCapabilities.model_validate({"tools": {"listChanged": True}, "experimental": {"x": {}}})
    registry = without_tool_changes(Demo.registry, Demo.revision.version)
    assert as_spoken(caps, registry, Demo.revision.version) == {"tools": {}, "experimental": {"x": {}}}


def test_completions_are_not_declared_to_a_revision_whose_capabilities_have_no_such_field() -> None:
    """2024-11-05 has ``completion/complete`` but its ``ServerCapabilities`` no ``completions``
    (2025-03-26 added it): the capability is left out there, kept from 2025-03-26 on."""

    class Completing(Demo):
        async def complete(self, params: Any, ctx: s.Context) -> Any:
            return s.CompleteResult(completion=m.CompleteResultCompletion(values=[]))

    async def declared(version: str) -> dict[str, Any]:
        async with Stdio(Completing()) as conn:
            conn.send(initialize(1, version))
            answer = await conn.until(lambda msg: msg.get("id") == 1)
        caps: dict[str, Any] = answer["result"]["capabilities"]
        return caps

    assert "completions" not in run(declared("2024-11-05"))
    assert run(declared("2025-03-26"))["completions"] == {}


def test_a_batch_past_the_limit_writes_an_unread_id_as_the_sessions_revision_does() -> None:
    """A 2025-03-26 batch refused for max_inflight: a request whose id could not be read gets
    ``"id": null`` (that schema requires the member), as within the limit."""
    from mcpgen._runtime.server.services import Limits

    class One(Demo):
        limits = Limits(max_inflight=1)

    async def go() -> list[dict[str, Any]]:
        async with Stdio(One()) as conn:
            init = initialize(0, "2025-03-26")
            conn.send(init)
            await conn.response(0)
            conn.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow"}})
            conn.send(json.dumps([{"jsonrpc": "2.0", "id": [9], "method": "ping"}]).encode())
            batch: list[dict[str, Any]] = await conn.until(lambda m: isinstance(m, list))
            return batch

    (refused,) = run(go())
    assert refused["error"]["code"] == -32600 and refused["id"] is None, refused


def test_a_batch_refused_for_the_limit_answers_its_requests_only() -> None:
    """The client's responses in a batch past max_inflight (an answer to an elicitation) are no
    requests: they get no error (a review found each was answered with -32600)."""
    from mcpgen._runtime.server.transports.stdio import refused

    batch = [
        {"jsonrpc": "2.0", "id": "s1", "result": {}},
        {"jsonrpc": "2.0", "id": {"x": 1}, "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}},
    ]
    answers = json.loads(refused(batch, 3, True))  # 3 in flight already; the batch itself is within the limit
    assert [a.get("id", "absent") for a in answers] == [None, 5]
    assert {a["error"]["code"] for a in answers} == {-32600}


def test_a_batch_longer_than_max_inflight_is_refused_whole_before_it_is_decoded() -> None:
    """Found by a hostile-input review: a 2025-03-26 batch of 400,000 pings in a 16 MiB line
    took 1.47 GB and 28 s, every item decoded before any ran. A batch of more messages than
    ``max_inflight`` now gets one -32600 (id null), and the session serves on."""
    from mcpgen._runtime.server.services import Limits

    class Four(Demo):
        limits = Limits(max_inflight=4)

    def pings(first: int, count: int) -> bytes:
        return json.dumps([{"jsonrpc": "2.0", "id": first + n, "method": "ping"} for n in range(count)]).encode()

    async def go() -> list[Any]:
        async with Stdio(Four()) as conn:
            init = initialize(0, "2025-03-26")
            conn.send(init)
            await conn.response(0)
            conn.send(pings(10, 5))
            refused = await conn.until(lambda m: isinstance(m, dict) and "error" in m)
            conn.send(pings(20, 4))
            served = await conn.until(lambda m: isinstance(m, list))
            conn.out.clear()
            conn.send(json.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"}] * 5).encode())
            conn.send({"jsonrpc": "2.0", "id": 30, "method": "ping"})
            after = await conn.until(lambda m: isinstance(m, dict) and m.get("id") == 30)
            return [refused, served, after, conn.out[0]]

    refused, served, after, notifications = run(go())
    assert notifications["error"]["code"] == -32600 and "a batch of 5 messages" in notifications["error"]["message"]
    assert refused["error"]["code"] == -32600 and refused["id"] is None, refused
    assert refused["error"]["message"] == "a batch of 5 messages: this server takes at most 4 in one"
    assert sorted(answer["id"] for answer in served) == [20, 21, 22, 23]
    assert after["result"] == {}


def test_a_refused_batch_longer_than_the_limit_is_one_error() -> None:
    from mcpgen._runtime.server.transports.stdio import refused

    batch = [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(3)]
    (error,) = [json.loads(refused(batch, 2, True))]
    assert error["id"] is None and error["error"]["code"] == -32600 and "at most 2" in error["error"]["message"]


@pytest.mark.parametrize("started", [False, True])
def test_a_cancelled_requests_id_may_be_used_again_at_once(started: bool) -> None:
    """Found by a hostile-input review: request 7, its cancellation and a new request 7 in one
    write got the new one "request id 7 is already in flight": the cancelled one kept its id
    until it ended. Its id is free once the cancellation is read (the client will get no answer
    under it), whether it had started or was still queued."""

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(7, "tools/call", {"name": "slow"}))
            if started:
                await asyncio.sleep(0.01)
            conn.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
                request(7, "tools/call", {"name": "echo", "arguments": {"again": True}}),
            )
            await conn.response(7)
            await asyncio.sleep(0.05)  # anything late under id 7 would come now
        return [m for m in conn.out if m.get("id") == 7]

    (answer,) = run(go())
    assert answer["result"]["content"][0]["text"] == '{"again": true}', answer


def test_an_initialize_inside_a_batch_is_an_invalid_request() -> None:
    """2025-03-26's lifecycle: the initialize request MUST NOT be part of a JSON-RPC batch. A
    hostile-input review found it answered -32601 "'initialize' is not implemented"; the rest of
    the batch is answered as usual, and the session keeps its revision."""

    async def go() -> list[Any]:
        async with Stdio(Demo()) as conn:
            init = initialize(0, "2025-03-26")
            conn.send(init)
            await conn.response(0)
            again = {**init, "id": 1, "params": {**init["params"], "protocolVersion": "2024-11-05"}}
            conn.send(json.dumps([again, {"jsonrpc": "2.0", "id": 2, "method": "ping"}]).encode())
            batch = await conn.until(lambda m: isinstance(m, list))
            conn.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            listed = await conn.until(lambda m: isinstance(m, dict) and m.get("id") == 3)
            return [batch, listed]

    batch, listed = run(go())
    by_id = {answer["id"]: answer for answer in batch}
    assert by_id[1]["error"]["code"] == -32600 and "batch" in by_id[1]["error"]["message"]
    assert by_id[2]["result"] == {}
    assert "tools" in listed["result"]


class Stubborn(Demo):
    """A tool that answers even when it is cancelled (cleanup, then a partial result)."""

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> Any:
        if params.name == "stubborn":
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                return s.CallToolResult(content=[m.TextContent(type="text", text="cut short")])
        return await super().call_tool(params, ctx)


def test_a_cancelled_request_that_answers_anyway_does_not_answer_the_new_one_with_its_id() -> None:
    """Found by a review of the diff: once a cancellation freed the id, a handler that caught the
    cancellation and returned had its answer written under that id, which the client took for
    the answer to its new request. What a cancelled request answers is not written."""

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Stubborn()) as conn:
            conn.send(request(7, "tools/call", {"name": "stubborn"}))
            await asyncio.sleep(0.01)
            conn.send(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}},
                request(7, "tools/call", {"name": "echo", "arguments": {"second": True}}),
            )
            await conn.response(7)
            await asyncio.sleep(0.1)
        return [m for m in conn.out if m.get("id") == 7]

    (answer,) = run(go())
    assert answer["result"]["content"][0]["text"] == '{"second": true}', answer
