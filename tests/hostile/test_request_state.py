"""Issue 17 row 9: a sealed MRTR ``requestState`` is bound to its request and to time.

A state the server issued for one request (method, the tool/prompt/resource it names, its
arguments) is refused (-32602) on any other, and after its expiry; the request it was issued
for, retried in time, goes through. Tampering is refused as before; workers sharing a key
still accept each other's states (``tests/server/test_scale_out.py``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpgen._runtime.server.services import RequestStateSealer

from tests.hostile.probe import StdioServer, modern
from tests.server.servers import Demo, Stdio, request, run

ELICIT = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
CONFIRM = {"confirm": {"action": "accept", "content": {"ok": True}}}


def retry(rid: Any, method: str, params: dict[str, Any], state: str, responses: dict[str, Any]) -> dict[str, Any]:
    return modern(rid, method, {**params, "requestState": state, "inputResponses": responses}, **ELICIT)


def test_a_state_is_accepted_only_on_the_request_it_was_issued_for() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            tool = {"name": "test_input_required_result_request_state", "arguments": {}}
            await server.send(modern(1, "tools/call", tool, **ELICIT))
            state = (await server.response(1))["result"]["requestState"]
            replays = {
                2: ("tools/call", {"name": "test_input_required_result_multi_round", "arguments": {}}),
                3: ("tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}}),
                4: ("prompts/get", {"name": "test_input_required_result_prompt"}),
                5: ("resources/read", {"uri": "test://static-text"}),
                6: ("tools/call", {**tool, "arguments": {"extra": 1}}),
                8: ("tools/call", {**tool, "arguments": {"x": [1, {"y": None}]}}),
            }
            for rid, (method, params) in replays.items():
                await server.send(retry(rid, method, params, state, CONFIRM))
            for rid in replays:
                reply = await server.response(rid)
                assert reply.get("error", {}).get("code") == -32602, (replays[rid], reply)
                assert "requestState" in reply["error"]["message"]
            tampered = state[:-1] + ("A" if state[-1] != "A" else "B")
            await server.send(retry(9, "tools/call", tool, tampered, CONFIRM))
            assert (await server.response(9))["error"]["code"] == -32602
            await server.send(retry(10, "tools/call", tool, state, CONFIRM))  # the request it was issued for
            done = await server.response(10)
            assert done["result"]["content"][0]["text"] == "state-ok: confirmed", done
            await server.send(retry(11, "tools/call", {"name": tool["name"]}, state, CONFIRM))  # no arguments: {}
            assert "result" in await server.response(11)

    asyncio.run(go())


def test_a_state_bound_to_arguments_survives_their_key_order() -> None:
    # a handler-base tool that takes any arguments (the everything server's tools validate theirs)
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with Stdio(Demo()) as io:
            ask = {"name": "ask", "arguments": {"b": 1, "a": {"d": 2, "c": [3, "x"]}}}
            io.send(request(1, "tools/call", ask, **ELICIT))
            state = (await io.response(1))["result"]["requestState"]
            answer = {"q": {"action": "accept", "content": {"n": "x"}}}
            reordered = {**ask, "arguments": {"a": {"c": [3, "x"], "d": 2}, "b": 1}}
            io.send(request(2, "tools/call", {**reordered, "requestState": state, "inputResponses": answer}, **ELICIT))
            changed = {**ask, "arguments": {"a": {"c": [3, "y"], "d": 2}, "b": 1}}
            io.send(request(3, "tools/call", {**changed, "requestState": state, "inputResponses": answer}, **ELICIT))
            return await io.response(2), await io.response(3)

    reordered, changed = run(go())
    assert reordered["result"]["content"][0]["text"] == 'accept:{"n": "x"} state=round-1', reordered
    assert changed["error"]["code"] == -32602, changed


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_state_expires() -> None:
    async def go() -> list[dict[str, Any]]:
        server = Demo()
        clock = Clock()
        sealer = server.router.services.request_state
        sealer.clock = clock
        async with Stdio(server) as io:
            ask = {"name": "ask", "arguments": {}}
            caps = {"elicitation": {"form": {}}}
            io.send(request(1, "tools/call", ask, **{"io.modelcontextprotocol/clientCapabilities": caps}))
            state = (await io.response(1))["result"]["requestState"]
            answer = {"q": {"action": "accept", "content": {"n": "x"}}}
            params = {**ask, "requestState": state, "inputResponses": answer}
            meta = {"io.modelcontextprotocol/clientCapabilities": caps}
            clock.now += sealer.ttl - 1
            io.send(request(2, "tools/call", params, **meta))
            in_time = await io.response(2)
            clock.now += 2
            io.send(request(3, "tools/call", params, **meta))
            late = await io.response(3)
            return [in_time, late]

    in_time, late = run(go())
    assert "result" in in_time, in_time
    assert late["error"]["code"] == -32602 and "expired" in late["error"]["message"], late


def test_states_with_text_json_cannot_carry_are_refused_not_crashed() -> None:
    sealer = RequestStateSealer(b"k")
    sealed = sealer.seal("s", request="tools/call")
    for hostile in ("\ud800", sealed + "\ud800", "\x00", sealed.replace(".", "\ud800", 1), "", ".", "..", "a" * 10_000):
        try:
            sealer.open(hostile, request="tools/call")
        except Exception as exc:
            assert getattr(exc, "code", None) == -32602, (hostile, exc)
        else:
            raise AssertionError(f"{hostile!r} was accepted")
    assert sealer.open(sealed, request="tools/call") == "s"
    assert sealer.seal("\ud800", request="x")  # a handler's odd state is still sealed
