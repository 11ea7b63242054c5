"""Readable wire conversations, top to bottom: what each side encodes and what the other decodes."""

from __future__ import annotations

import json

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


def test_mrtr_tools_call_with_an_elicitation_2026() -> None:
    from mcpgen._runtime.jsonrpc import Request, Response
    from mcpgen.v2026_07_28 import models
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    client = ModernCodec(
        REVISION, "client", client_info={"name": "c", "version": "1"}, client_capabilities={"elicitation": {}}
    )
    server = ModernCodec(REVISION, "server", server_info={"name": "s", "version": "1"})

    # client -> server: tools/call
    sent = client.dumps_request(1, "tools/call", {"name": "book_flight", "arguments": {"to": "LIS"}})
    call = server.decode(sent)
    assert isinstance(call, Request) and call.params.name == "book_flight"
    assert call.meta.client_capabilities.elicitation is not None

    # server -> client: input_required, asking for a seat by form elicitation
    interim = {
        "inputRequests": {
            "seat": {
                "method": "elicitation/create",
                "params": {
                    "message": "Window or aisle?",
                    "requestedSchema": {"type": "object", "properties": {"seat": {"type": "string"}}},
                },
            }
        },
        "requestState": "opaque-1",
        "resultType": "input_required",
    }
    answer = client.decode(
        server.to_bytes(server.encode_result(call.id, "tools/call", interim)), pending={1: "tools/call"}
    )
    assert isinstance(answer, Response) and isinstance(answer.result, models.InputRequiredResult)
    asked = answer.result.input_requests["seat"]
    assert isinstance(asked, models.ElicitRequest) and asked.params.message == "Window or aisle?"
    assert answer.result.meta.server_info.name == "s"

    # client -> server: the retry, a new id, the original params plus inputResponses and requestState
    retry = client.encode_request(
        2,
        "tools/call",
        {
            "name": "book_flight",
            "arguments": {"to": "LIS"},
            "inputResponses": {"seat": {"action": "accept", "content": {"seat": "window"}}},
            "requestState": answer.result.request_state,
        },
    )
    decoded_retry = server.decode(json.dumps(retry).encode())
    assert isinstance(decoded_retry, Request) and decoded_retry.id == 2
    response = decoded_retry.params.input_responses["seat"]
    assert isinstance(response, models.ElicitResult) and response.content == {"seat": "window"}
    assert decoded_retry.params.request_state == "opaque-1"

    # server -> client: complete
    done = server.dumps_result(2, "tools/call", {"content": [{"type": "text", "text": "Booked 12A"}]})
    final = client.decode(done, pending={2: "tools/call"})
    assert isinstance(final.result, models.CallToolResult)
    assert final.result.result_type == "complete" and final.result.content[0].text == "Booked 12A"


def test_legacy_session_2025_03_26_with_a_batch() -> None:
    from mcpgen._runtime.jsonrpc import Batch, Request, Response
    from mcpgen.v2025_03_26 import codec, models

    init = codec.CLIENT.dumps_request(
        0,
        "initialize",
        {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    )
    assert isinstance(codec.SERVER.decode(init), Request)
    batch = b"[" + codec.CLIENT.dumps_request(1, "tools/list") + b"," + codec.CLIENT.dumps_request(2, "ping") + b"]"
    decoded = codec.SERVER.decode(batch)
    assert isinstance(decoded, Batch) and [m.method for m in decoded.items] == ["tools/list", "ping"]
    replies = [
        codec.SERVER.encode_result(1, "tools/list", models.ListToolsResult(tools=[])),
        codec.SERVER.encode_result(2, "ping", {}),
    ]
    back = codec.CLIENT.decode(codec.SERVER.to_bytes(replies), pending={1: "tools/list", 2: "ping"})
    assert isinstance(back, Batch)
    tools, pong = back.items
    assert isinstance(tools, Response) and isinstance(tools.result, models.ListToolsResult)
    assert isinstance(pong, Response) and pong.method == "ping"
    assert "resultType" not in codec.SERVER.to_bytes(replies).decode()  # legacy results carry none
