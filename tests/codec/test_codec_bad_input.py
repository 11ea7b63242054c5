"""Bad input never escapes the codec: each case decodes to ``Rejected`` with the right JSON-RPC code.

Read a row as: revision, the side that receives, the bytes on the wire, the code it must
answer, and whether the peer gets an error response (requests do; notifications and
responses do not).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import VERSIONS

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}


def codec(version: str, side: str) -> Any:
    module = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}.codec")
    return module.SERVER if side == "server" else module.CLIENT


def j(value: object) -> bytes:
    return json.dumps(value).encode()


# (case, version, receiving side, wire bytes, code, needs an error response)
CASES: list[tuple[str, str, str, bytes, int, bool]] = [
    # -- JSON and the envelope, any era
    ("not json", "2026-07-28", "server", b"{nope", -32700, True),
    ("truncated", "2025-06-18", "server", b'{"jsonrpc":"2.0","id":1', -32700, True),
    ("NaN is not JSON", "2026-07-28", "server", b'{"jsonrpc":"2.0","id":NaN,"method":"tools/list"}', -32700, True),
    ("empty input", "2025-11-25", "client", b"", -32700, True),
    ("invalid utf-8", "2026-07-28", "server", b'{"jsonrpc":"2.0","method":"\xff"}', -32700, True),
    ("a string", "2026-07-28", "server", b'"hello"', -32600, True),
    ("a number", "2024-11-05", "server", b"42", -32600, True),
    ("null", "2024-11-05", "server", b"null", -32600, True),
    ("no jsonrpc", "2026-07-28", "server", j({k: v for k, v in LIST_TOOLS.items() if k != "jsonrpc"}), -32600, True),
    ("jsonrpc 1.0", "2025-06-18", "server", j({"jsonrpc": "1.0", "id": 1, "method": "ping"}), -32600, True),
    ("neither method nor result", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": 1}), -32600, True),
    ("id null", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": None, "method": "ping"}), -32600, True),
    ("id float", "2026-07-28", "server", j({**LIST_TOOLS, "id": 1.5}), -32600, True),
    ("id true (not 1)", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": True, "method": "ping"}), -32600, True),
    ("id object", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": {}, "method": "ping"}), -32600, True),
    ("method not a string", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": 1, "method": 5}), -32600, True),
    (
        "result and error",
        "2025-06-18",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}),
        -32600,
        False,
    ),
    (
        "error without code",
        "2025-11-25",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "error": {"message": "x"}}),
        -32600,
        False,
    ),
    (
        "error code float",
        "2025-11-25",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.0, "message": "x"}}),
        -32600,
        False,
    ),
    ("result id missing", "2025-11-25", "client", j({"jsonrpc": "2.0", "result": {}}), -32600, False),
    ("result not an object", "2025-11-25", "client", j({"jsonrpc": "2.0", "id": 1, "result": [1]}), -32602, False),
    # -- batches: only 2025-03-26 has them
    ("batch in 2025-06-18", "2025-06-18", "server", j([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), -32600, True),
    ("batch in 2026-07-28", "2026-07-28", "server", j([LIST_TOOLS]), -32600, True),
    ("batch in 2024-11-05", "2024-11-05", "server", j([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]), -32600, True),
    ("empty batch", "2025-03-26", "server", b"[]", -32600, True),
    # -- method: not in this revision, or not in this direction (-32601)
    ("unknown method", "2025-06-18", "server", j({"jsonrpc": "2.0", "id": 1, "method": "tools/explode"}), -32601, True),
    (
        "initialize is gone in 2026",
        "2026-07-28",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
        -32601,
        True,
    ),
    ("ping is gone in 2026", "2026-07-28", "server", j({"jsonrpc": "2.0", "id": 1, "method": "ping"}), -32601, True),
    (
        "discover is new in 2026",
        "2025-11-25",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}),
        -32601,
        True,
    ),
    (
        "elicitation only from 2025-06-18",
        "2025-03-26",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {}}),
        -32601,
        True,
    ),
    (
        "server asks a server",
        "2025-06-18",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}),
        -32601,
        True,
    ),
    (
        "client asked to list tools",
        "2025-06-18",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        -32601,
        True,
    ),
    (
        "embedded request over the wire",
        "2026-07-28",
        "client",
        j(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "elicitation/create",
                "params": {"message": "x", "requestedSchema": {"type": "object", "properties": {}}},
            }
        ),
        -32601,
        True,
    ),
    (
        "client sends progress in 2026",
        "2026-07-28",
        "server",
        j({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
        -32601,
        False,
    ),
    (
        "unknown notification",
        "2025-06-18",
        "server",
        j({"jsonrpc": "2.0", "method": "notifications/whatever"}),
        -32601,
        False,
    ),
    # -- params (-32602)
    (
        "params an array",
        "2025-06-18",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["x"]}),
        -32602,
        True,
    ),
    (
        "tools/call without params",
        "2025-06-18",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
        -32602,
        True,
    ),
    (
        "tool name an int",
        "2025-06-18",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 1}}),
        -32602,
        True,
    ),
    (
        "lax types refused",
        "2025-11-25",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": 5}}),
        -32602,
        True,
    ),
    (
        "bad notification params",
        "2025-06-18",
        "client",
        j({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}),
        -32602,
        False,
    ),
    (
        "2026 request without params",
        "2026-07-28",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        -32602,
        True,
    ),
    ("2026 request without _meta", "2026-07-28", "server", j({**LIST_TOOLS, "params": {}}), -32602, True),
    (
        "2026 _meta without protocolVersion",
        "2026-07-28",
        "server",
        j({**LIST_TOOLS, "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}}),
        -32602,
        True,
    ),
    (
        "2026 _meta without clientCapabilities",
        "2026-07-28",
        "server",
        j({**LIST_TOOLS, "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
        -32602,
        True,
    ),
    (
        "2026 bad logLevel",
        "2026-07-28",
        "server",
        j({**LIST_TOOLS, "params": {"_meta": {**MODERN_META, "io.modelcontextprotocol/logLevel": "loud"}}}),
        -32602,
        True,
    ),
    (
        "Python name instead of the wire name",
        "2024-11-05",
        "client",
        j({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"request_id": 1}}),
        -32602,
        False,
    ),
    (
        "nested Python name",
        "2025-06-18",
        "server",
        j(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocol_version": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                },
            }
        ),
        -32602,
        True,
    ),
    (
        "2026 meta instead of _meta",
        "2026-07-28",
        "server",
        j({**LIST_TOOLS, "params": {"meta": MODERN_META}}),
        -32602,
        True,
    ),
    (
        "2026 Python names inside _meta",
        "2026-07-28",
        "server",
        j({**LIST_TOOLS, "params": {"_meta": {"protocol_version": "2026-07-28", "client_capabilities": {}}}}),
        -32602,
        True,
    ),
    # -- 2026 version and response rules
    (
        "2026 unsupported version",
        "2026-07-28",
        "server",
        j(
            {
                **LIST_TOOLS,
                "params": {"_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}},
            }
        ),
        -32022,
        True,
    ),
    (
        "2026 server receives a response",
        "2026-07-28",
        "server",
        j({"jsonrpc": "2.0", "id": 1, "result": {}}),
        -32600,
        False,
    ),
    (
        "2026 MCP error with bad data",
        "2026-07-28",
        "client",
        j({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x", "data": {"supported": "2026-07-28"}}}),
        -32602,
        False,
    ),
]
RESULT_CASES: list[tuple[str, str, str, dict[str, Any], int]] = [
    ("unknown resultType", "2026-07-28", "tools/call", {"resultType": "later", "content": []}, -32602),
    (
        "input_required on a non-MRTR method",
        "2026-07-28",
        "tools/list",
        {"resultType": "input_required", "requestState": "s"},
        -32602,
    ),
    ("input_required with nothing to ask", "2026-07-28", "tools/call", {"resultType": "input_required"}, -32602),
    (
        "cacheable result without ttlMs",
        "2026-07-28",
        "tools/list",
        {"resultType": "complete", "tools": [], "cacheScope": "public"},
        -32602,
    ),
    ("negative ttlMs", "2026-07-28", "tools/list", {"tools": [], "ttlMs": -1, "cacheScope": "public"}, -32602),
    ("bad cacheScope", "2026-07-28", "tools/list", {"tools": [], "ttlMs": 0, "cacheScope": "shared"}, -32602),
    ("legacy tools/list result", "2025-06-18", "tools/list", {"tools": [{"name": 1}]}, -32602),
    ("legacy bad ping result", "2024-11-05", "ping", {"_meta": 5}, -32602),
]


@pytest.mark.parametrize(("case", "version", "side", "wire", "code", "reply"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_rejected_with_its_code(
    case: str, version: str, side: str, wire: bytes, code: int, reply: bool
) -> None:
    from mcpgen._runtime.jsonrpc import Rejected

    decoded = codec(version, side).decode(wire)
    assert isinstance(decoded, Rejected), f"{case}: accepted as {decoded!r}"
    assert decoded.error.code == code, f"{case}: {decoded.error!r} {decoded.error.data}"
    assert decoded.needs_reply is reply
    response = decoded.reply()
    assert response["error"]["code"] == code and response["jsonrpc"] == "2.0"
    json.dumps(response)  # always serializable, data included


@pytest.mark.parametrize(
    ("case", "version", "method", "result", "code"), RESULT_CASES, ids=[c[0] for c in RESULT_CASES]
)
def test_bad_result_is_rejected(case: str, version: str, method: str, result: dict[str, Any], code: int) -> None:
    from mcpgen._runtime.jsonrpc import Rejected

    decoded = codec(version, "client").decode(j({"jsonrpc": "2.0", "id": "r", "result": result}), pending={"r": method})
    assert isinstance(decoded, Rejected) and decoded.error.code == code, decoded
    assert decoded.id == "r" and not decoded.needs_reply


def test_rejection_keeps_the_id_so_the_reply_reaches_the_caller() -> None:
    decoded = codec("2025-06-18", "server").decode(j({"jsonrpc": "2.0", "id": "abc", "method": "tools/call"}))
    assert decoded.reply()["id"] == "abc"
    decoded = codec("2025-06-18", "server").decode(b"{")
    assert decoded.reply()["id"] is None


def test_invalid_params_name_the_field() -> None:
    decoded = codec("2026-07-28", "server").decode(j({**LIST_TOOLS, "params": {"_meta": {}}}))
    locs = [e["loc"] for e in decoded.error.data["errors"]]
    assert ["params", "_meta", "io.modelcontextprotocol/protocolVersion"] in locs


def test_unsupported_version_lists_what_is_supported() -> None:
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    server = ModernCodec(REVISION, "server", supported_versions=["2026-07-28", "2027-01-01"])
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    decoded = server.decode(j({**LIST_TOOLS, "params": {"_meta": meta}}))
    assert decoded.reply()["error"]["data"] == {"supported": ["2026-07-28", "2027-01-01"], "requested": "2025-11-25"}


def test_a_batch_decodes_each_entry_on_its_own() -> None:
    from mcpgen._runtime.jsonrpc import Batch, Notification, Rejected, Request

    wire = j(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}},
            7,
        ]
    )
    decoded = codec("2025-03-26", "server").decode(wire)
    assert isinstance(decoded, Batch)
    ping, initialized, bad_call, junk = decoded.items
    assert isinstance(ping, Request) and ping.id == 1
    assert isinstance(initialized, Notification)
    assert isinstance(bad_call, Rejected) and bad_call.error.code == -32602 and bad_call.id == 2
    assert isinstance(junk, Rejected) and junk.error.code == -32600


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error", "_meta"])
METHODS = st.sampled_from(["tools/call", "tools/list", "ping", "initialize", "notifications/progress", "roots/list"])
MESSAGE_LIKE = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": st.integers() | st.text(max_size=4) | st.none(),
        "method": METHODS,
        "params": JSON_VALUES,
        "result": JSON_VALUES,
        "error": JSON_VALUES,
    },
) | st.dictionaries(KEYS, JSON_VALUES, max_size=5)


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from(VERSIONS), side=st.sampled_from(["client", "server"]), value=MESSAGE_LIKE | JSON_VALUES)
def test_decode_never_raises(version: str, side: str, value: object) -> None:
    from mcpgen._runtime.jsonrpc import Batch, Rejected

    decoded = codec(version, side).decode(j(value), pending={1: "tools/call", "a": "ping"})
    items = decoded.items if isinstance(decoded, Batch) else (decoded,)
    for item in items:
        if isinstance(item, Rejected):
            assert item.error.code != -32603, item.error.data  # an internal error means a codec bug
            json.dumps(item.reply())


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=40))
def test_decode_never_raises_on_bytes(data: bytes) -> None:
    from mcpgen._runtime.jsonrpc import Rejected

    decoded = codec("2026-07-28", "server").decode(data)
    assert not isinstance(decoded, Rejected) or decoded.error.code != -32603
