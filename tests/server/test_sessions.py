"""Legacy sessions through the negotiated revision's codec, lazy loading, conversion failures."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

from tests.conftest import ROOT
from tests.server.servers import Demo, Stdio, request, run


def initialize(version: str, rid: int = 0, **capabilities: Any) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": {"name": "c", "version": "1"}}
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def call(rid: int, name: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, **params}}


LOADED = """
import asyncio, json, sys
sys.path.insert(0, {root!r})
from tests.server.servers import Demo, Stdio, request

def revisions():
    return sorted(m.rsplit(".", 1)[-1] for m in sys.modules if m.startswith("mcpgen.v") and m.count(".") == 1)

async def main():
    seen = {{}}
    async with Stdio(Demo()) as conn:
        conn.send(request(1, "tools/list"), request(2, "server/discover"))
        await conn.response(1), await conn.response(2)
        seen["modern"] = revisions()
        conn.send({init})
        await conn.response(0)
        seen["legacy"] = revisions()
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_a_legacy_revision_loads_only_when_a_legacy_client_initializes() -> None:
    script = LOADED.format(root=str(ROOT), init=json.dumps(initialize("2025-06-18")))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT / "generated"
    )
    seen = json.loads(done.stdout)
    assert seen == {"modern": ["v2026_07_28"], "legacy": ["v2025_06_18", "v2026_07_28"]}


def test_initialize_is_decoded_by_the_negotiated_revision_and_a_refused_one_opens_no_session() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            bad = initialize("2025-06-18")
            del bad["params"]["capabilities"]
            conn.send(bad)
            refused = await conn.response(0)
            conn.send(request(1, "tools/list"))  # still a modern connection
            listed = await conn.response(1)
            conn.send(initialize("2025-06-18", rid=2), call(3, "echo"))
            return [refused, listed, await conn.response(2), await conn.response(3)]

    refused, listed, opened, called = run(go())
    assert refused["error"]["code"] == -32602
    assert refused["error"]["data"]["errors"][0]["loc"] == ["params", "capabilities"]
    assert listed["result"]["resultType"] == "complete"
    assert opened["result"]["protocolVersion"] == "2025-06-18"
    assert called["result"] == {"content": [{"text": "{}", "type": "text"}]}


def test_a_modern_request_after_a_legacy_initialize_is_served_statelessly() -> None:
    """versioning.mdx: a request carrying the modern ``_meta`` is served as 2026-07-28 whatever
    came before it on the process; ``initialize`` selects legacy semantics for the rest."""

    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(request(1, "tools/list"), initialize("2025-06-18", rid=2))
            listed, opened = await conn.response(1), await conn.response(2)
            conn.send(request(3, "server/discover"), request(4, "tools/call", {"name": "echo"}), call(5, "echo"))
            return [listed, opened, await conn.response(3), await conn.response(4), await conn.response(5)]

    listed, opened, discovered, modern, legacy = run(go())
    assert listed["result"]["resultType"] == "complete"
    assert opened["result"]["protocolVersion"] == "2025-06-18"
    assert "2026-07-28" in discovered["result"]["supportedVersions"]
    assert modern["result"]["resultType"] == "complete"
    assert modern["result"]["content"] == [{"type": "text", "text": "{}"}]
    assert legacy["result"] == {"content": [{"text": "{}", "type": "text"}]}


def test_batches_only_where_the_negotiated_revision_has_them() -> None:
    batch = [{"jsonrpc": "2.0", "id": 1, "method": "ping"}, call(2, "echo", arguments={"a": 1}), {"bad": 1}]

    async def go(version: str) -> dict[str, Any] | list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(initialize(version))
            await conn.response(0)
            conn.send(json.dumps(batch).encode())
            return await conn.until(lambda m: isinstance(m, list) or "error" in m)

    answers = run(go("2025-03-26"))
    assert isinstance(answers, list)
    assert [a.get("id") for a in answers] == [1, 2, None]
    assert answers[0]["result"] == {} and answers[1]["result"]["content"][0]["text"] == '{"a": 1}'
    assert answers[2]["error"]["code"] == -32600
    refused = run(go("2025-06-18"))
    assert isinstance(refused, dict) and refused["error"]["code"] == -32600
    assert "no JSON-RPC batches" in refused["error"]["message"]


def test_the_legacy_only_requests_are_checked_by_the_revision() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Demo()) as conn:
            conn.send(
                initialize("2025-11-25"),
                {"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "loud"}},
                {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {}},
                {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}},
            )
            return [await conn.response(i) for i in (1, 2, 3)]

    level, subscribe, discover = run(go())
    assert level["error"]["code"] == subscribe["error"]["code"] == -32602
    assert discover["error"]["code"] == -32601
    assert discover["error"]["message"] == "'server/discover' is not a request of MCP 2025-11-25"


class Audio(s.Server):
    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        if params.name == "audio":
            return s.CallToolResult(content=[m.AudioContent(type="audio", data="AAAA", mime_type="audio/wav")])
        question = {"message": "n?", "requestedSchema": {"type": "object", "properties": {}}}
        if params.input_responses is MISSING:
            return s.InputRequiredResult(input_requests={"q": {"method": "elicitation/create", "params": question}})
        answer = params.input_responses["q"]
        return s.CallToolResult(content=[m.TextContent(type="text", text=f"{type(answer).__name__} {answer.action}")])


def test_a_result_without_a_form_in_the_negotiated_revision_is_the_servers_failure() -> None:
    async def go(version: str) -> dict[str, Any]:
        async with Stdio(Audio()) as conn:
            conn.send(initialize(version), call(1, "audio"))
            return await conn.response(1)

    failed = run(go("2024-11-05"))  # 2024-11-05 has no audio content
    assert failed["error"]["code"] == -32603
    assert failed["error"]["message"] == "the tools/call result has no MCP 2024-11-05 form"
    assert run(go("2025-03-26"))["result"]["content"][0]["type"] == "audio"


def test_answers_to_server_requests_are_decoded_by_the_revision_and_converted_to_the_handlers_types() -> None:
    def answer_with(result: dict[str, Any]) -> Any:
        def answer(conn: Stdio, message: dict[str, Any]) -> None:
            if message.get("method") == "elicitation/create":
                conn.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

        return answer

    async def go(result: dict[str, Any]) -> dict[str, Any]:
        async with Stdio(Audio(), on_write=answer_with(result)) as conn:
            conn.send(initialize("2025-06-18", elicitation={}), call(1, "ask"))
            return await conn.response(1)

    assert run(go({"action": "decline"}))["result"]["content"][0]["text"] == "ElicitResult decline"
    refused = run(go({"action": "shrug"}))  # not an ElicitResult of 2025-06-18: the request fails, nothing hangs
    assert refused["error"]["code"] == -32602


def test_an_unread_id_is_null_where_the_revision_requires_the_member_and_left_out_where_it_is_optional() -> None:
    """The error response's ``id`` when the request's could not be read: the schemas before
    2025-11-25 require the member (JSON-RPC 2.0 writes null), 2025-11-25 and 2026-07-28 make it
    optional and allow no null: it is left out. Before a session, the handler's revision decides."""

    async def go(version: str | None) -> dict[str, Any]:
        async with Stdio(Demo()) as conn:
            if version is not None:
                conn.send(initialize(version))
                await conn.response(0)
            conn.send({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})
            return await conn.until(lambda m: "error" in m)

    for version, null in (("2024-11-05", True), ("2025-06-18", True), ("2025-11-25", False), (None, False)):
        error = run(go(version))
        assert error["error"]["code"] == -32600, (version, error)
        assert (error["id"] is None) if null else ("id" not in error), (version, error)
