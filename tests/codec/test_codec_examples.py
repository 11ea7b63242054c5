"""Every 2026-07-28 example that is (or wraps into) a wire message goes through the codec and back.

The examples are bare instances of their definition. Envelopes (``*Request``,
``*Notification``, ``*ResultResponse``, the error responses) are decoded as they are; results
and bare ``Error`` objects are first wrapped into a response. Each must decode into the
expected typed value and re-encode to equal JSON, integers staying integers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES

EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))
# A complete read result without the ttlMs/cacheScope a server MUST send (research/spec-eras.md
# 6.2): a client reads it as caching.mdx says it SHOULD, ttlMs 0 (and cacheScope private), so it
# decodes with them and encodes back with them.
CACHE_HINTS_READ = {"ReadResourceResultResponse/read-resource-result-response": {"ttlMs": 0, "cacheScope": "private"}}
EMBEDDED_REQUESTS = {"CreateMessageRequest", "ElicitRequest", "ListRootsRequest"}  # no jsonrpc, no id
EMBEDDED_RESULTS = {"CreateMessageResult", "ElicitResult", "ListRootsResult"}
RETRY_PARAMS = {
    "name": "get_weather",
    "requestState": "opaque",
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    },
}
BARE_ERRORS = {"ParseError", "InvalidRequestError", "MethodNotFoundError", "InvalidParamsError", "InternalError"}
ERROR_RESPONSES = {"HeaderMismatchError", "MissingRequiredClientCapabilityError", "UnsupportedProtocolVersionError"}


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.stem}"


def _v2026() -> Any:
    from mcpgen.v2026_07_28 import codec, models

    return codec, models


def _method_of_result(definition: str) -> str:
    """The request method a result definition answers (CallToolResult -> tools/call)."""
    codec, _ = _v2026()
    stem = definition.removesuffix("ResultResponse").removesuffix("Result")
    if stem == "InputRequired":
        return "tools/call"
    for spec in codec.REVISION.methods:
        if spec.kind == "request" and spec.message.__name__ == stem + "Request":
            return str(spec.name)
    raise AssertionError(f"no request for {definition}")


def _codec_for(kind: str, method: str) -> Any:
    codec, _ = _v2026()
    spec = codec.REVISION.methods.request(method) or codec.REVISION.methods.notification(method)
    assert spec is not None, method
    if kind == "notification" and spec.direction == "server_to_client":
        return codec.CLIENT
    return codec.SERVER


WIRE_EXAMPLES = [
    p
    for p in EXAMPLE_FILES
    if p.parent.name.endswith(("Request", "Notification", "ResultResponse", "Result"))
    or p.parent.name in BARE_ERRORS | ERROR_RESPONSES
]


def test_the_wire_examples_cover_every_message_kind() -> None:
    dirs = {p.parent.name for p in WIRE_EXAMPLES}
    assert {"CallToolRequest", "ProgressNotification", "CallToolResultResponse", "ParseError"} <= dirs
    assert ERROR_RESPONSES <= dirs
    assert len(WIRE_EXAMPLES) >= 60


@pytest.mark.parametrize("path", WIRE_EXAMPLES, ids=_name)
def test_example_decodes_and_reencodes_exactly(path: Path) -> None:
    from mcpgen._runtime.jsonrpc import ErrorResponse, Notification, ProtocolError, Request, Response

    codec, models = _v2026()
    definition = path.parent.name
    raw = json.loads(path.read_bytes())

    if definition in EMBEDDED_REQUESTS:  # MRTR-only: never a JSON-RPC message of its own in 2026
        with pytest.raises(ProtocolError) as rejected:
            codec.SERVER.decode(path.read_bytes())
        assert rejected.value.code in (-32600, -32601)
        return

    if definition.endswith("Request"):
        side, wire, pending = _codec_for("request", raw["method"]), raw, None
    elif definition.endswith("Notification"):
        side, wire, pending = _codec_for("notification", raw["method"]), raw, None
    elif definition.endswith("ResultResponse"):
        side, wire, pending = codec.CLIENT, raw, {raw["id"]: _method_of_result(definition)}
    elif definition in EMBEDDED_RESULTS:  # an InputResponse: travels in a retried request's params
        side, pending = codec.SERVER, None
        wire = {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {**RETRY_PARAMS, "inputResponses": {"k": raw}},
        }
    elif definition.endswith("Result"):
        method = _method_of_result(definition)
        side, wire, pending = codec.CLIENT, {"jsonrpc": "2.0", "id": 7, "result": raw}, {7: method}
    elif definition in BARE_ERRORS:
        side, wire, pending = codec.CLIENT, {"jsonrpc": "2.0", "id": "e1", "error": raw}, None
    else:  # a whole error response
        side, wire, pending = codec.CLIENT, raw, None

    decoded = side.decode(json.dumps(wire).encode(), pending=pending)
    if definition.endswith("Request") and definition not in EMBEDDED_RESULTS:
        assert isinstance(decoded, Request)
        assert isinstance(decoded.params, getattr(models, definition).model_fields["params"].annotation)
        assert decoded.meta is decoded.params.meta  # the _meta envelope, lifted
        assert decoded.meta.protocol_version == "2026-07-28"
    elif definition.endswith("Notification"):
        assert isinstance(decoded, Notification)
    elif definition in EMBEDDED_RESULTS:
        assert isinstance(decoded, Request)
        assert type(decoded.params.input_responses["k"]) is getattr(models, definition)
    elif definition.endswith("Result") or definition.endswith("ResultResponse"):
        assert isinstance(decoded, Response)
        expected = getattr(models, definition.removesuffix("Response"))
        if wire["result"].get("resultType") == "input_required":
            expected = models.InputRequiredResult
        assert type(decoded.result) is expected
    else:
        assert isinstance(decoded, ErrorResponse)
        assert decoded.error.code == raw.get("code", wire["error"]["code"])

    again = side.encode_message(decoded)
    if _name(path) in CACHE_HINTS_READ:
        wire = {**wire, "result": {**wire["result"], **CACHE_HINTS_READ[_name(path)]}}
    assert again == wire
    assert json.dumps(again, sort_keys=True) == json.dumps(wire, sort_keys=True)  # 1 stays 1, "1" stays "1"
    assert json.loads(side.to_bytes(again)) == wire


def test_typed_error_data_is_decoded_into_its_model() -> None:
    codec, models = _v2026()
    path = next((EXAMPLES / "UnsupportedProtocolVersionError").glob("*.json"))
    decoded = codec.CLIENT.decode(path.read_bytes())
    assert isinstance(decoded.error.data, models.UnsupportedProtocolVersionErrorErrorData)
    assert decoded.error.data.supported
    path = next((EXAMPLES / "MissingRequiredClientCapabilityError").glob("*.json"))
    decoded = codec.CLIENT.decode(path.read_bytes())
    assert isinstance(decoded.error.data.required_capabilities, models.ClientCapabilities)


def test_an_embedded_request_has_no_json_rpc_response_in_2026() -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError

    codec, _ = _v2026()
    wire = b'{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}'
    with pytest.raises(ProtocolError) as refused:
        codec.CLIENT.decode(wire, pending={1: "roots/list"})
    assert refused.value.code == -32601 and refused.value.id == 1 and refused.value.kind == "response"
