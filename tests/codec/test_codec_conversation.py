"""Readable wire conversations, top to bottom: what each side encodes and what the other decodes."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

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


# -- conversation goldens ------------------------------------------------------------------
#
# tests/codec/conversations/<version>/*.txt: one exchange per file, read top to bottom.
# ``C> json`` is a line the client sends (the server's codec decodes it), ``S> json`` one the
# server sends; ``C!>``/``S!>`` is a line the receiver refuses, and the next line must be the
# receiver's error reply. ``#`` starts a comment. Responses decode against the sender's pending
# requests (id correlation). Every accepted line must re-encode to exactly its own bytes;
# ``pytest --update-goldens`` rewrites the files from re-encoding instead.

CONVERSATIONS = Path(__file__).parent / "conversations"
GOLDENS = sorted(CONVERSATIONS.glob("*/*.txt"))


def test_goldens_cover_both_eras_and_a_batch() -> None:
    names = {f"{p.parent.name}/{p.stem}" for p in GOLDENS}
    assert {p.parent.name for p in GOLDENS} >= {"2026-07-28", "2025-11-25", "2025-03-26"}
    assert any("mrtr" in n for n in names) and any("batch" in n for n in names), names


@pytest.mark.parametrize("path", GOLDENS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_conversation_golden(path: Path, request: pytest.FixtureRequest) -> None:
    from mcpgen._runtime.jsonrpc import Batch, ErrorResponse, ProtocolError, Request, Response

    update = bool(request.config.getoption("--update-goldens"))
    module = importlib.import_module(f"mcpgen.v{path.parent.name.replace('-', '_')}")
    lines = path.read_text(encoding="utf-8").splitlines()
    pending: dict[str, dict[Any, str]] = {"C": {}, "S": {}}  # what each side asked, by id
    states: set[str] = set()  # requestState values handed out by input_required results
    expected_reply: bytes | None = None
    out: list[str] = []
    for number, line in enumerate(lines, 1):
        where = f"{path.name}:{number}"
        if not line.strip() or line.startswith("#"):
            out.append(line)
            continue
        prefix, _, text = line.partition(" ")
        sender, refused = prefix[0], prefix.endswith("!>")
        assert prefix in ("C>", "S>", "C!>", "S!>"), f"{where}: unknown prefix {prefix!r}"
        receiver = module.SERVER if sender == "C" else module.CLIENT
        other = "S" if sender == "C" else "C"
        wire = text.encode()
        if expected_reply is not None:
            if update:
                wire = expected_reply
            assert json.loads(wire) == json.loads(expected_reply), (
                f"{where}: not the refusal's reply\n  {expected_reply!r}"
            )
            expected_reply = None
        if refused:
            with pytest.raises(ProtocolError) as raised:
                receiver.decode(wire, pending=pending[other])
            error = raised.value
            if error.kind == "request" and error.id is not None:
                pending[sender][error.id] = json.loads(wire)["method"]
            assert error.needs_reply, f"{where}: refused, but nothing to reply to"
            expected_reply = receiver.to_bytes(error.reply())
            out.append(line)
            continue
        try:
            decoded = receiver.decode(wire, pending=pending[other])
        except ProtocolError as error:
            raise AssertionError(f"{where}: refused: {error!r}") from None
        step_by_step = receiver._decode_parsed(json.loads(wire), pending[other])
        assert step_by_step == decoded, f"{where}: the one-pass and step-by-step decoders disagree"
        items = decoded.items if isinstance(decoded, Batch) else (decoded,)
        for item in items:
            assert not isinstance(item, ProtocolError), f"{where}: batch entry refused: {item!r}"
            if isinstance(item, Request):
                pending[sender][item.id] = item.method
                state = getattr(item.params, "request_state", None)
                if isinstance(state, str):
                    assert state in states, f"{where}: requestState {state!r} was never handed out"
            elif isinstance(item, Response | ErrorResponse):
                method = pending[other].pop(item.id, None) if item.id is not None else None
                if isinstance(item, Response):
                    assert method is not None and item.method == method, f"{where}: answers no pending request"
                    assert not isinstance(item.result, dict), f"{where}: result left untyped"
                    state = getattr(item.result, "request_state", None)
                    if isinstance(state, str):
                        states.add(state)
        again = receiver.to_bytes(
            [receiver.encode_message(i) for i in items]
            if isinstance(decoded, Batch)
            else receiver.encode_message(decoded)
        )
        if update:
            out.append(f"{prefix} {again.decode()}")
        else:
            assert again == wire, f"{where}: re-encodes differently\n  {again.decode()}"
    assert expected_reply is None, f"{path.name}: ends with a refusal but no reply"
    assert not pending["C"], f"{path.name}: client requests left unanswered: {pending['C']}"
    if update:
        path.write_text("\n".join(out) + "\n", encoding="utf-8")
