"""Encoding: what each era stamps on outgoing messages, and the round trip through decode."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from tests.conftest import VERSIONS

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def codec_module(version: str) -> Any:
    return importlib.import_module(f"mcpgen.v{version.replace('-', '_')}.codec")


@pytest.mark.parametrize("version", VERSIONS)
def test_each_revision_binds_its_eras_codec_to_its_table(version: str) -> None:
    package = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}")
    module = codec_module(version)
    assert module.REVISION.methods is package.METHODS
    assert module.REVISION.version == version
    assert module.REVISION.batching is package.BATCHING
    for side in (module.CLIENT, module.SERVER):
        assert side.era == package.ERA
    assert (module.CLIENT.side, module.SERVER.side) == ("client", "server")


def test_modern_request_carries_the_meta_envelope() -> None:
    from mcpgen.v2026_07_28 import models
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    client = ModernCodec(
        REVISION,
        "client",
        client_info=models.Implementation(name="probe", version="1.0"),
        client_capabilities={"elicitation": {}},
    )
    wire = client.encode_request(5, "tools/call", {"name": "add", "arguments": {"a": 1}}, meta={"traceparent": "00-ab"})
    meta = wire["params"]["_meta"]
    assert meta == {
        PROTOCOL_VERSION: "2026-07-28",
        CAPABILITIES: {"elicitation": {}},
        CLIENT_INFO: {"name": "probe", "version": "1.0"},
        "traceparent": "00-ab",
    }
    decoded = ModernCodec(REVISION, "server").decode(client.to_bytes(wire))
    assert decoded.meta.protocol_version == "2026-07-28"
    assert decoded.meta.client_info.name == "probe"
    assert decoded.meta.model_extra == {"traceparent": "00-ab"}  # unknown _meta keys survive
    assert decoded.params.name == "add" and decoded.params.arguments == {"a": 1}


def test_modern_request_from_a_model_keeps_its_own_meta_keys() -> None:
    from mcpgen.v2026_07_28 import codec, models

    params = models.PaginatedRequestParams.model_validate(
        {"cursor": "c2", "_meta": {PROTOCOL_VERSION: "2026-07-28", CAPABILITIES: {}, "progressToken": 9}}
    )
    wire = codec.CLIENT.encode_request("r1", "tools/list", params)
    assert wire["params"]["_meta"]["progressToken"] == 9
    assert wire["params"]["cursor"] == "c2"
    assert codec.SERVER.encode_message(codec.SERVER.decode(codec.CLIENT.to_bytes(wire))) == wire


def test_modern_results_are_stamped() -> None:
    from mcpgen.v2026_07_28 import models
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    server = ModernCodec(REVISION, "server", server_info={"name": "srv", "version": "2"}, ttl_ms=1000)
    listed = server.encode_result(1, "tools/list", {"tools": []})["result"]
    assert listed == {
        "tools": [],
        "resultType": "complete",
        "_meta": {SERVER_INFO: {"name": "srv", "version": "2"}},
        "ttlMs": 1000,
        "cacheScope": "private",
    }
    called = server.encode_result(2, "tools/call", {"content": []})["result"]
    assert "ttlMs" not in called and called["resultType"] == "complete"  # tools/call is not cacheable
    interim = models.InputRequiredResult.model_validate({"resultType": "input_required", "requestState": "s1"})
    assert server.encode_result(3, "tools/call", interim)["result"]["resultType"] == "input_required"
    decoded = ModernCodec(REVISION, "client").decode(
        server.to_bytes(server.encode_result(3, "tools/call", interim)), pending={3: "tools/call"}
    )
    assert isinstance(decoded.result, models.InputRequiredResult) and decoded.result.request_state == "s1"


def test_modern_result_without_result_type_is_complete() -> None:
    from mcpgen.v2026_07_28 import codec, models

    wire = b'{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"hi"}]}}'
    decoded = codec.CLIENT.decode(wire, pending={4: "tools/call"})
    assert isinstance(decoded.result, models.CallToolResult)
    assert decoded.result.result_type == "complete"


def test_modern_sides_send_only_what_the_spec_lets_them() -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError
    from mcpgen.v2026_07_28 import codec

    with pytest.raises(ProtocolError) as raised:
        codec.SERVER.encode_request(1, "roots/list")  # servers send no requests in 2026
    assert raised.value.code == -32601
    with pytest.raises(ProtocolError) as raised:
        codec.CLIENT.encode_request(1, "initialize", {})
    assert raised.value.code == -32601


def test_a_dict_is_checked_before_it_is_sent() -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError
    from mcpgen.v2026_07_28 import codec

    with pytest.raises(ProtocolError) as raised:
        codec.CLIENT.encode_request(1, "tools/call", {"name": 3})
    assert raised.value.code == -32602
    with pytest.raises(ProtocolError) as raised:  # the answering side's own fault: -32603, not -32602
        codec.SERVER.encode_result(1, "tools/list", {"tools": "none"})
    assert (raised.value.code, raised.value.message) == (
        -32603,
        "the tools/list result is invalid: tools: Input should be a valid list",  # the first problem named
    )
    assert raised.value.data["errors"][0]["loc"] == ["result", "tools"]
    with pytest.raises(ProtocolError):
        codec.CLIENT.encode_request(True, "tools/list", {})  # a boolean is not an id


def test_legacy_request_has_no_envelope_meta_and_results_no_result_type() -> None:
    from mcpgen.v2025_06_18 import codec, models

    wire = codec.CLIENT.encode_request("a", "tools/list")
    assert wire == {"jsonrpc": "2.0", "id": "a", "method": "tools/list"}
    result = codec.SERVER.encode_result("a", "tools/list", models.ListToolsResult(tools=[]))
    assert result == {"jsonrpc": "2.0", "id": "a", "result": {"tools": []}}
    decoded = codec.CLIENT.decode(codec.SERVER.to_bytes(result), pending={"a": "tools/list"})
    assert isinstance(decoded.result, models.ListToolsResult) and decoded.method == "tools/list"


def test_legacy_handshake_and_server_requests_round_trip() -> None:
    from mcpgen.v2025_06_18 import codec, models

    init = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "c", "version": "1"},
    }
    wire = codec.CLIENT.encode_request(0, "initialize", init)
    decoded = codec.SERVER.decode(codec.CLIENT.to_bytes(wire))
    assert decoded.params.protocol_version == "2025-06-18"
    assert codec.SERVER.encode_message(decoded) == wire
    ask = codec.SERVER.encode_request(9, "roots/list")  # legacy servers send requests
    assert codec.CLIENT.decode(codec.SERVER.to_bytes(ask)).method == "roots/list"
    pong = codec.CLIENT.decode(b'{"jsonrpc":"2.0","id":1,"result":{}}', pending={1: "ping"})
    assert isinstance(pong.result, models.Result)  # EmptyResult is an alias of Result


def test_ids_keep_their_json_type() -> None:
    from mcpgen.v2025_11_25 import codec

    for rid in ("1", 1):
        wire = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode()
        decoded = codec.SERVER.decode(wire)
        assert decoded.id == rid and type(decoded.id) is type(rid)
        assert codec.SERVER.encode_result(decoded.id, "ping", {})["id"] == rid
    decoded = codec.CLIENT.decode(b'{"jsonrpc":"2.0","id":"1","result":{}}', pending={1: "ping"})
    assert decoded.method is None  # "1" is not 1: not the pending request


TASK = {  # a 2025-11-25 Task, as CreateTaskResult carries it
    "taskId": "t1",
    "status": "working",
    "createdAt": "2025-11-25T00:00:00Z",
    "lastUpdatedAt": "2025-11-25T00:00:00Z",
    "ttl": None,
}


def test_task_augmented_result_2025_11_25() -> None:
    from mcpgen.v2025_11_25 import codec, models

    task = TASK
    wire = json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"task": task}}).encode()
    decoded = codec.CLIENT.decode(wire, pending={3: "tools/call"})
    assert isinstance(decoded.result, models.CreateTaskResult), decoded
    assert codec.CLIENT.encode_message(decoded) == json.loads(wire)


def test_legacy_typed_error_2025_11_25() -> None:
    from mcpgen.v2025_11_25 import codec, models

    error = {
        "code": -32042,
        "message": "open this",
        "data": {"elicitations": [{"mode": "url", "elicitationId": "e", "url": "https://x", "message": "m"}]},
    }
    decoded = codec.CLIENT.decode(json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode())
    assert decoded.error.code == -32042
    assert isinstance(decoded.error.data, models.URLElicitationRequiredErrorErrorData)
    assert codec.CLIENT.encode_message(decoded)["error"] == error


def test_notifications_encode_and_decode() -> None:
    from mcpgen.v2026_07_28 import codec, models

    wire = codec.SERVER.encode_notification("notifications/progress", {"progressToken": "p", "progress": 0.5})
    decoded = codec.CLIENT.decode(codec.SERVER.to_bytes(wire))
    assert isinstance(decoded.params, models.ProgressNotificationParams) and decoded.params.progress == 0.5
    assert codec.CLIENT.encode_message(decoded) == wire


LISTED = {"resultType": "complete", "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
CACHED = {**LISTED, "ttlMs": 5, "cacheScope": "public"}
COMPLETED = {"resultType": "complete", "completion": {"values": ["a"]}}
AUTHORS_META = {"io.modelcontextprotocol/serverInfo": {"name": "own", "version": "9"}}


def typed_results() -> list[tuple[str, str, Any]]:
    """Typed results of every shape the encoder stamps differently (fast path or via data)."""
    from mcpgen.v2026_07_28 import models
    from mcpgen.v2026_07_28 import server as s

    return [
        ("tools/list", "cache keys given", models.ListToolsResult.model_validate(CACHED)),
        ("tools/list", "cache keys left to the server", s.ListToolsResult.model_validate(LISTED)),
        ("tools/list", "only a ttl given", s.ListToolsResult.model_validate({**LISTED, "ttlMs": 7})),
        ("tools/list", "an author's _meta", models.ListToolsResult.model_validate({**CACHED, "_meta": {"k": 1}})),
        (
            "tools/list",
            "an author's serverInfo",
            models.ListToolsResult.model_validate({**CACHED, "_meta": AUTHORS_META}),
        ),
        ("tools/call", "not cacheable", s.CallToolResult(content=[], structured_content={"a": [1, "ü", None]})),
        ("tools/call", "an interim result", s.InputRequiredResult(request_state="r")),
        ("completion/complete", "a plain result", models.CompleteResult.model_validate(COMPLETED)),
    ]


@pytest.mark.parametrize("server_info", [None, {"name": "srv", "version": "2"}])
@pytest.mark.parametrize("case", range(8))
def test_dumps_equals_encode_then_to_bytes(server_info: Any, case: int) -> None:
    """``dumps_result`` serialises a typed result once and adds the era's stamps as bytes; the
    bytes must mean what ``encode_result`` (dump, stamp the data, serialise) means."""
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    server = ModernCodec(REVISION, "server", server_info=server_info, ttl_ms=60, cache_scope="public")
    method, _, result = typed_results()[case]
    fast = server.dumps_result("x", method, result)
    assert json.loads(fast) == server.encode_result("x", method, result)
    assert ("serverInfo" in fast.decode()) is (server_info is not None or "serverInfo" in result.model_dump_json())


def test_dumps_of_a_typed_legacy_result_equals_encode() -> None:
    from mcpgen.v2025_11_25 import SERVER, models

    result = models.CallToolResult(content=[models.TextContent(type="text", text="hi")], is_error=False)
    assert json.loads(SERVER.dumps_result(7, "tools/call", result)) == SERVER.encode_result(7, "tools/call", result)


@pytest.mark.parametrize("client_info", [None, {"name": "cli", "version": "2"}])
def test_dumps_of_typed_params_equals_encode(client_info: Any) -> None:
    from mcpgen.v2026_07_28 import models
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    client = ModernCodec(REVISION, "client", client_info=client_info)
    params = models.CallToolRequestParams.model_validate(
        {"name": "t", "_meta": {PROTOCOL_VERSION: "2026-07-28", CAPABILITIES: {}}}
    )
    fast = client.dumps_request(1, "tools/call", params)
    assert json.loads(fast) == client.encode_request(1, "tools/call", params)
    assert (CLIENT_INFO in fast.decode()) is (client_info is not None)


def test_batches_are_produced_only_where_the_revision_has_them() -> None:
    from mcpgen._runtime.jsonrpc import Batch, ProtocolError
    from mcpgen.v2025_03_26 import CLIENT, SERVER
    from mcpgen.v2025_11_25 import CLIENT as CLIENT_1125

    batch = CLIENT.encode_batch(
        [CLIENT.encode_request(1, "ping"), CLIENT.encode_notification("notifications/initialized")]
    )
    decoded = SERVER.decode(CLIENT.to_bytes(batch))
    assert isinstance(decoded, Batch) and [SERVER.encode_message(m) for m in decoded.items] == batch
    for codec, messages in ((CLIENT_1125, [CLIENT_1125.encode_request(1, "ping")]), (CLIENT, [])):
        with pytest.raises(ProtocolError) as refused:
            codec.encode_batch(messages)
        assert refused.value.code == -32600


def test_modern_typed_errors_round_trip_into_their_models() -> None:
    from mcpgen._runtime.codec_modern import (
        header_mismatch,
        missing_required_client_capability,
        unsupported_protocol_version,
    )
    from mcpgen.v2026_07_28 import CLIENT, SERVER, models

    errors = [
        unsupported_protocol_version(["2026-07-28"], "2025-01-01"),
        missing_required_client_capability(models.ClientCapabilities(elicitation={})),
        header_mismatch("Mcp-Method does not match the body"),
    ]
    for rid, error in enumerate(errors):
        decoded = CLIENT.decode(SERVER.to_bytes(SERVER.encode_error(rid, error)))
        assert decoded.error.code == error.code and decoded.error.message == error.message
    assert isinstance(
        CLIENT.decode(SERVER.to_bytes(SERVER.encode_error(0, errors[0]))).error.data,
        models.UnsupportedProtocolVersionErrorErrorData,
    )
    data = CLIENT.decode(SERVER.to_bytes(SERVER.encode_error(1, errors[1]))).error.data
    assert (
        isinstance(data, models.MissingRequiredClientCapabilityErrorErrorData)
        and data.required_capabilities.elicitation
    )
