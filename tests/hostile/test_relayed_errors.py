"""Issue 17 row 8: a client's error answer to a server->client request, relayed into the reply.

On a legacy session the server asks the client (``elicitation/create``) and the client answers
with an error whose code is not an integer, is huge, a float, or overflows to infinity, or whose
data holds such numbers. Whatever it sends, the original ``tools/call`` is answered with a valid
JSON-RPC error (integer code, string message, plain JSON) and the server serves on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcpgen._runtime.jsonrpc import ProtocolError, dumps, error_envelope

from tests.hostile.probe import HttpServer, StdioServer, initialize, modern, receive_until, sse_events, strict_json

ELICITATION = {"elicitation": {"form": {}}}
# raw JSON text of the "error" member a hostile client answers with
ERRORS: list[str] = [
    '{"code": 1e999999, "message": "inf"}',
    '{"code": -1e999999, "message": "-inf"}',
    '{"code": 1.5, "message": "float"}',
    '{"code": -32600.0, "message": "integral float"}',
    '{"code": 100000000000000000000000000000, "message": "huge"}',
    '{"code": -9007199254740993, "message": "beyond 2**53"}',
    '{"code": "-32600", "message": "string code"}',
    '{"code": true, "message": "bool"}',
    '{"code": null, "message": "null"}',
    '{"code": [1], "message": "array"}',
    '{"message": "no code"}',
    '{"code": -32601}',
    '{"code": -32601, "message": 7}',
    '{"code": -1, "message": "declined", "data": {"n": 1e999, "m": [-1e400], "k": 100000000000000000000000}}',
    '{"code": -1, "message": "declined", "data": 1e999}',
    '{"code": -1, "message": "ok error"}',
    '"not an object"',
    "[]",
]


def call_elicitation(rid: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "hi"}},
    }


def error_line(rid: str, error: str) -> bytes:
    return b'{"jsonrpc": "2.0", "id": "' + rid.encode() + b'", "error": ' + error.encode() + b"}"


def test_stdio_relayed_errors_are_valid_json_rpc_errors() -> None:
    async def go() -> None:
        async with StdioServer() as server:
            await server.send(
                initialize(0, capabilities=ELICITATION), {"jsonrpc": "2.0", "method": "notifications/initialized"}
            )
            await server.response(0)
            for n, error in enumerate(ERRORS, start=1):
                await server.send(call_elicitation(n))
                asked = await server.until(lambda m: m.get("method") == "elicitation/create" and m["id"] not in seen)
                seen.add(asked["id"])
                await server.send(error_line(asked["id"], error))
                reply = await server.response(n)
                assert "error" in reply, (error, reply)
            await server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
            assert (await server.response("last"))["result"] == {}

    seen: set[str] = set()
    asyncio.run(go())


@pytest.fixture(scope="module")
def http() -> Iterator[HttpServer]:
    with HttpServer() as server:
        yield server


@pytest.mark.parametrize("error", ERRORS)
def test_http_relayed_errors_are_valid_json_rpc_errors(http: HttpServer, error: str) -> None:
    sid = http.legacy_session(capabilities=ELICITATION)
    head = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
    with http.connect() as sock:  # the tools/call stays open on its SSE stream while we answer
        body = json.dumps(call_elicitation(1), separators=(",", ":")).encode()
        lines = "".join(f"{k}: {v}\r\n" for k, v in head.items())
        start = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        start += f"accept: application/json, text/event-stream\r\n{lines}content-length: {len(body)}\r\n\r\n"
        sock.sendall(start.encode() + body)
        seen = receive_until(sock, lambda data: b"\n\n" in data.partition(b"elicitation/create")[2])
        rid = seen.split(b'"id":"', 1)[1].split(b'"', 1)[0].decode()
        answer = http.request(raw_body=error_line(rid, error), headers=head)
        assert answer.status in (202, 400), answer
        rest = receive_until(sock, lambda data: b'"id":1,' in data or b'"id":1}' in data)
    events = sse_events(seen + rest)
    assert "error" in events[-1] and events[-1]["id"] == 1, events
    http.alive()


@pytest.mark.parametrize("code", [1.5, 10**30, -(2**53), "x", True, None, float("inf"), -32602])
def test_any_protocol_error_is_written_as_a_valid_error_object(code: Any) -> None:
    """Whatever a handler raises, the error object the wire layer writes is valid JSON-RPC."""
    error = ProtocolError(code, 7, {"x": float("inf"), "y": [float("nan")]})  # type: ignore[arg-type]
    written = strict_json(dumps(error_envelope(1, error)))["error"]
    assert written["code"] == (code if code == -32602 else -32603)
    assert written["message"] == "7" and written["data"] == {"x": None, "y": [None]}


def test_the_example_server_refuses_a_completion_for_a_prompt_or_template_it_does_not_have() -> None:
    """completion.mdx: an invalid prompt name is -32602; the example completed any reference."""

    async def go() -> list[dict[str, Any]]:
        async with StdioServer() as server:
            argument = {"name": "arg1", "value": "p"}
            refs = [
                {"type": "ref/prompt", "name": "nope"},
                {"type": "ref/resource", "uri": "nope://{x}"},
                {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            ]
            for rid, ref in enumerate(refs):
                await server.send(modern(rid, "completion/complete", {"ref": ref, "argument": argument}))
            return [await server.response(rid) for rid in range(len(refs))]

    unknown_prompt, unknown_template, known = asyncio.run(go())
    assert unknown_prompt["error"]["code"] == -32602 and "nope" in unknown_prompt["error"]["message"]
    assert unknown_template["error"]["code"] == -32602
    assert known["result"]["completion"]["values"] == ["paris", "park", "party"]
