"""The legacy session: what ``initialize`` fixes, and the codec of the negotiated revision."""

from __future__ import annotations

import pytest


def test_server_answers_the_requested_version_and_switches_codec() -> None:
    from mcpgen._runtime.jsonrpc import Request
    from mcpgen._runtime.session import LegacySession
    from mcpgen.v2025_06_18 import codec as c0618

    session = LegacySession("server")
    assert session.supported == ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
    assert session.codec.version == "2025-11-25" and not session.initialized
    init = c0618.CLIENT.dumps_request(
        0,
        "initialize",
        {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "c", "version": "1"}},
    )
    request = session.codec.decode(init)
    assert isinstance(request, Request)
    assert session.record_initialize_request(request.params) == "2025-06-18"
    assert session.protocol_version == "2025-06-18" and session.codec.version == "2025-06-18"
    assert session.codec.side == "server" and session.client_info.name == "c"
    assert session.client_capabilities.roots is not None
    result = c0618.SERVER.revision.validate(
        c0618.REVISION.methods.request("initialize").result,  # type: ignore[union-attr]
        {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "2"}},
    )
    session.record_initialize_result(result)
    assert session.initialized and session.instructions is None and session.server_info.name == "s"
    assert session.codec is session.codec  # one codec per revision


@pytest.mark.parametrize(
    ("requested", "chosen"),
    [
        ("2025-03-26", "2025-03-26"),
        ("2026-07-28", "2025-11-25"),
        ("2025-05-01", "2025-03-26"),
        ("2020-01-01", "2025-11-25"),
    ],
)
def test_the_server_picks_the_highest_version_both_speak(requested: str, chosen: str) -> None:
    from mcpgen._runtime.session import LegacySession

    assert LegacySession("server").choose_version(requested) == chosen


def test_client_records_the_result_and_refuses_a_version_it_does_not_speak() -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError, Response
    from mcpgen._runtime.session import LegacySession
    from mcpgen.v2025_03_26 import REVISION as R0326
    from mcpgen.v2025_03_26 import models

    session = LegacySession("client", [R0326])
    assert session.latest == "2025-03-26"
    wire = (
        b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{"logging":{}},'
        b'"serverInfo":{"name":"s","version":"1"},"instructions":"be nice"}}'
    )
    response = session.codec.decode(wire, pending={0: "initialize"})
    assert isinstance(response, Response) and isinstance(response.result, models.InitializeResult)
    session.record_initialize_result(response.result)
    assert session.protocol_version == "2025-03-26" and session.instructions == "be nice"
    assert session.codec.revision is R0326 and session.codec.side == "client"

    other = LegacySession("client", [R0326])
    newer = models.InitializeResult.model_validate(
        {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    )
    with pytest.raises(ProtocolError) as refused:
        other.record_initialize_result(newer)
    assert refused.value.code == -32602
    assert refused.value.data == {"supported": ["2025-03-26"], "requested": "2025-06-18"}
    assert other.protocol_version is None
