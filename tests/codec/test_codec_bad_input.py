"""Bad input never escapes the codec: each case raises ``ProtocolError`` with the right JSON-RPC code.

Read a row as: revision, the side that receives, the bytes on the wire, the code it must
answer, and whether the peer gets an error response (requests do; notifications and
responses do not).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
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


def refuse(codec: Any, wire: bytes, **kwargs: Any) -> Any:
    """The ``ProtocolError`` decoding ``wire`` raises (fails if it decodes)."""
    from mcpgen._runtime.jsonrpc import ProtocolError

    with pytest.raises(ProtocolError) as raised:
        decoded = codec.decode(wire, **kwargs)
        pytest.fail(f"accepted as {decoded!r}")
    return raised.value


CORPUS = Path(__file__).parent / "bad_input"
# What every era's corpus must hold (by case name), so a trimmed file fails loudly.
REQUIRED = [
    "malformed JSON",
    "jsonrpc missing",
    "jsonrpc 2 as a number",
    "id a boolean",
    "id a float",
    "id an object",
    "unknown method, id kept",
    "tools/call params missing",
    "tools/call arguments an array",
    "oversized (limit 256 bytes)",
]


def load_corpus() -> list[tuple[str, dict[str, Any]]]:
    """Every row of tests/codec/bad_input/<version>.jsonl, as (version, row)."""
    rows = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rows.append((path.stem, json.loads(line)))
    return rows


def wire_of(row: dict[str, Any]) -> bytes:
    """A row's input: ``message`` (JSON, as ``json.dumps`` writes it), ``raw`` text or ``hex`` bytes."""
    if "message" in row:
        return json.dumps(row["message"]).encode()
    if "raw" in row:
        return str(row["raw"]).encode()
    return bytes.fromhex(row["hex"])


ROWS = load_corpus()


def test_each_era_has_the_whole_corpus() -> None:
    cases = {version: {row["case"] for v, row in ROWS if v == version} for version in VERSIONS}
    for version in ("2025-11-25", "2026-07-28"):
        assert set(REQUIRED) <= cases[version], set(REQUIRED) - cases[version]
    assert "initialize is gone in 2026" in cases["2026-07-28"]
    assert "discover is new in 2026" in cases["2025-11-25"]
    assert {"2026 _meta without protocolVersion", "2026 _meta without clientCapabilities"} <= cases["2026-07-28"]
    for _, row in ROWS:
        assert set(row) <= {
            "case",
            "side",
            "message",
            "raw",
            "hex",
            "pending",
            "max_message_size",
            "code",
            "id",
            "reply",
        }


@pytest.mark.parametrize(("version", "row"), ROWS, ids=[f"{v}: {r['case']}" for v, r in ROWS])
def test_bad_input_is_refused_with_its_code_and_id(version: str, row: dict[str, Any]) -> None:
    receiver = codec(version, row["side"])
    if "max_message_size" in row:
        receiver = type(receiver)(receiver.revision, receiver.side, max_message_size=row["max_message_size"])
    pending = {(int(k) if k.isdigit() else k): m for k, m in row.get("pending", {}).items()} or None
    error = refuse(receiver, wire_of(row), pending=pending)
    assert (error.code, error.id) == (row["code"], row["id"]), f"{row['case']}: {error!r}"
    assert error.needs_reply is row["reply"]
    response = error.reply()
    assert response["error"]["code"] == row["code"] and response["jsonrpc"] == "2.0" and response.get("id") == row["id"]
    assert ("id" in response) is (row["id"] is not None)  # an unread id is left out (null where a revision says)
    json.dumps(response)  # always serializable, data included


def test_rejection_keeps_the_id_so_the_reply_reaches_the_caller() -> None:
    decoded = refuse(codec("2025-06-18", "server"), j({"jsonrpc": "2.0", "id": "abc", "method": "tools/call"}))
    assert decoded.reply()["id"] == "abc" and decoded.id == "abc" and decoded.kind == "request"
    decoded = refuse(codec("2025-06-18", "server"), b"{")
    assert "id" not in decoded.reply() and decoded.reply(null_id=True)["id"] is None


def test_invalid_params_name_the_field() -> None:
    decoded = refuse(codec("2026-07-28", "server"), j({**LIST_TOOLS, "params": {"_meta": {}}}))
    locs = [e["loc"] for e in decoded.data["errors"]]
    assert ["params", "_meta", "io.modelcontextprotocol/protocolVersion"] in locs


def test_unsupported_version_lists_what_is_supported() -> None:
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    server = ModernCodec(REVISION, "server", supported_versions=["2026-07-28", "2027-01-01"])
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}
    decoded = refuse(server, j({**LIST_TOOLS, "params": {"_meta": meta}}))
    assert decoded.reply()["error"]["data"] == {"supported": ["2026-07-28", "2027-01-01"], "requested": "2025-11-25"}


def test_a_batch_decodes_each_entry_on_its_own() -> None:
    from mcpgen._runtime.jsonrpc import Batch, Notification, ProtocolError, Request

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
    assert isinstance(bad_call, ProtocolError) and bad_call.code == -32602 and bad_call.id == 2
    assert isinstance(junk, ProtocolError) and junk.code == -32600


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
    from mcpgen._runtime.jsonrpc import Batch, ProtocolError

    try:
        decoded = codec(version, side).decode(j(value), pending={1: "tools/call", "a": "ping"})
    except ProtocolError as error:
        items: tuple[object, ...] = (error,)
    else:
        items = decoded.items if isinstance(decoded, Batch) else (decoded,)
    for item in items:
        if isinstance(item, ProtocolError):
            assert item.code != -32603, item.data  # an internal error means a codec bug
            json.dumps(item.reply())


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=40))
def test_decode_never_raises_on_bytes(data: bytes) -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError

    try:
        codec("2026-07-28", "server").decode(data)
    except ProtocolError as error:
        assert error.code != -32603, error.data


@pytest.mark.parametrize("size", [64, 16 * 1024 * 1024])
def test_text_with_a_lone_surrogate_is_a_parse_error_short_or_long(size: int) -> None:
    """``decode`` takes ``str`` too, and raises ``ProtocolError`` and nothing else: a lone
    surrogate (no UTF-8 can carry it) was a ``TypeError`` from the parser, and in text long enough
    to be measured in bytes a ``UnicodeEncodeError``."""
    text = '{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "\ud800"}'
    text += " " * max(0, size // 4 + 1 - len(text))
    refused = refuse(codec("2026-07-28", "server"), text)
    assert refused.code == -32700 and refused.data == {"detail": "not UTF-8 text (a lone surrogate)"}


@pytest.mark.parametrize("as_text", [False, True])
def test_oversized_input_is_refused_before_parsing(as_text: bool) -> None:
    from mcpgen.v2026_07_28.codec import REVISION, ModernCodec

    server = ModernCodec(REVISION, "server", max_message_size=64)
    wire = j({**LIST_TOOLS, "params": {"_meta": MODERN_META, "cursor": "x" * 100}})
    refused = refuse(server, wire.decode() if as_text else wire)
    assert refused.code == -32600 and refused.data == {"size": len(wire), "limit": 64}
    assert refused.id is None and refused.needs_reply  # the id is not read
    assert codec("2026-07-28", "server").max_message_size == 16 * 1024 * 1024


def test_each_version_package_exports_its_codec() -> None:
    import importlib

    for version in VERSIONS:
        package = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}")
        module = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}.codec")
        assert (package.CLIENT, package.SERVER, package.REVISION) == (module.CLIENT, module.SERVER, module.REVISION)
        assert package.REVISION.methods is package.METHODS


def _golden_lines() -> list[tuple[str, str, bytes]]:
    """(version, receiving side, wire) of every line of the conversation goldens."""
    lines = []
    for path in sorted((Path(__file__).parent / "conversations").glob("*/*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            prefix, _, text = line.partition(" ")
            if prefix in ("C>", "S>", "C!>", "S!>"):
                lines.append((path.parent.name, "server" if prefix[0] == "C" else "client", text.encode()))
    return lines


GOLDEN_LINES = _golden_lines()


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """A real message with one thing broken: a value replaced or dropped somewhere, or its bytes cut."""
    version, side, wire = draw(st.sampled_from(GOLDEN_LINES))
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(wire)))
        flip = draw(st.integers(0, 255))
        return version, side, wire[:cut] + bytes([flip]) + wire[cut + 1 :]
    value = json.loads(wire)
    node = value
    for _ in range(draw(st.integers(0, 4))):
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = node[key]
        if not isinstance(child, dict | list) or not child or draw(st.booleans()):
            if isinstance(node, dict) and draw(st.booleans()):
                del node[key]
            else:
                node[key] = draw(JSON_VALUES)
            break
        node = child
    return version, side, j(value)


@settings(max_examples=300, deadline=None)
@given(case=mutated())
def test_mutated_messages_decode_or_raise_the_protocol_error(case: tuple[str, str, bytes]) -> None:
    from mcpgen._runtime.jsonrpc import Batch, ProtocolError

    version, side, wire = case
    receiver = codec(version, side)
    pending = {i: "tools/call" for i in range(12)} | {"discover-1": "server/discover"}
    try:
        decoded = receiver.decode(wire, pending=pending)
    except ProtocolError as error:
        assert error.code != -32603, error.data  # an internal error means a codec bug
        json.dumps(error.reply())
        return
    items = decoded.items if isinstance(decoded, Batch) else (decoded,)
    # the one-pass routes (requests, notifications, result responses) == the step-by-step path
    assert decoded == receiver._decode_parsed(json.loads(wire), pending)
    for item in items:
        if not isinstance(item, ProtocolError):
            receiver.to_bytes(receiver.encode_message(item))


@pytest.mark.parametrize(
    "error",
    [
        {"code": -32022, "message": "x"},  # its own definition requires data
        {"code": -32022, "message": "x", "data": {"supported": "2026-07-28"}},
        {"code": -32021, "message": "x", "data": 5},
    ],
)
def test_an_error_that_is_not_its_codes_own_definition_is_still_an_error_response(error: dict[str, Any]) -> None:
    """2026-07-28 defines -32021 and -32022 with required data; an error response lacking it is
    still a valid ``JSONRPCErrorResponse`` (any code, any data), so the pending request gets the
    error as it came, not -32602 "invalid error"."""
    from mcpgen._runtime.jsonrpc import ErrorResponse

    wire = {"jsonrpc": "2.0", "id": 1, "error": error}
    decoded = codec("2026-07-28", "client").decode(j(wire), pending={1: "tools/list"})
    assert isinstance(decoded, ErrorResponse)
    assert (decoded.error.code, decoded.error.message, decoded.error.data) == (error["code"], "x", error.get("data"))


def test_a_legacy_result_with_a_task_key_is_the_methods_own_result_when_it_is_one() -> None:
    """2025-11-25: ``{"content": [], "task": "x"}`` is a ``CallToolResult`` (every object is
    open); it was taken for the task-augmented answer, ``CreateTaskResult``, and refused."""
    from mcpgen.v2025_11_25 import models

    from tests.codec.test_codec_encode import TASK

    client = codec("2025-11-25", "client")
    plain = client.decode(
        j({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "task": "x"}}), pending={1: "tools/call"}
    )
    assert isinstance(plain.result, models.CallToolResult) and plain.result.model_extra == {"task": "x"}
    augmented = client.decode(j({"jsonrpc": "2.0", "id": 2, "result": {"task": TASK}}), pending={2: "tools/call"})
    assert isinstance(augmented.result, models.CreateTaskResult)


@pytest.mark.parametrize(
    ("members", "read"),
    [
        ({}, {"ttlMs": 0, "cacheScope": "private"}),
        ({"ttlMs": -5, "cacheScope": "public"}, {"ttlMs": 0, "cacheScope": "public"}),
        ({"ttlMs": 5000}, {"ttlMs": 5000, "cacheScope": "private"}),
        ({"ttlMs": 5000, "cacheScope": "public"}, {"ttlMs": 5000, "cacheScope": "public"}),
    ],
)
def test_a_client_reads_absent_or_negative_cache_hints_as_caching_says(
    members: dict[str, Any], read: dict[str, Any]
) -> None:
    """caching.mdx: an absent ttlMs SHOULD be taken as 0, a negative one ignored and taken as 0;
    an absent cacheScope is read as private (nothing shared). A server MUST send both; older ones
    do not, and their results (a DiscoverResult among them) were refused."""
    wire = {"jsonrpc": "2.0", "id": "r", "result": {"resultType": "complete", "tools": [], **members}}
    decoded = codec("2026-07-28", "client").decode(j(wire), pending={"r": "tools/list"})
    assert {"ttlMs": decoded.result.ttl_ms, "cacheScope": decoded.result.cache_scope} == read
    bad = {**wire, "result": {**wire["result"], "ttlMs": "soon"}}
    assert refuse(codec("2026-07-28", "client"), j(bad), pending={"r": "tools/list"}).code == -32602


def test_what_a_refusal_echoes_is_cut_short() -> None:
    """An unknown method name and a 2026-07-28 protocolVersion are echoed in the error: a 1 MiB
    one made a 2 MiB reply (fuzzing, issue 15's hostile-input rule: replies stay small)."""
    from mcpgen._runtime.codec import MAX_REPORTED_TEXT
    from mcpgen._runtime.jsonrpc import dumps

    method = refuse(codec("2025-11-25", "server"), j({"jsonrpc": "2.0", "id": 1, "method": "x" * (1 << 20)}))
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "v" * (1 << 20)}
    version = refuse(codec("2026-07-28", "server"), j({**LIST_TOOLS, "params": {"_meta": meta}}))
    assert (method.code, version.code) == (-32601, -32022)
    assert len(method.data["method"]) == len(version.data["requested"]) == MAX_REPORTED_TEXT
    assert len(dumps(method.reply())) < 3 * MAX_REPORTED_TEXT and len(dumps(version.reply())) < 3 * MAX_REPORTED_TEXT
