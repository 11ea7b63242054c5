"""The client runtime's edge cases against a scripted stdio server (tests/client/fake_server.py)
and pure functions: header encoding, x-mcp-header validation, era fallback, MRTR, shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import mcpgen
import pytest
from mcpgen import connect
from mcpgen._runtime.client import (
    InputRequiredError,
    RequestTimeout,
    ServerError,
    StdioTransport,
    TransportError,
    encode_header_value,
)
from mcpgen._runtime.client.connect import Verdict, verdict_key
from mcpgen._runtime.client.http import StreamCursor, sse_data
from mcpgen._runtime.client.modern import param_headers
from mcpgen._runtime.client.session import ClientOptions
from mcpgen._runtime.jsonrpc import ProtocolError
from mcpgen._runtime.param_headers import tool_headers
from mcpgen.v2025_11_25 import client as legacy_client
from mcpgen.v2026_07_28 import client as modern_client

FAKE = [sys.executable, str(Path(__file__).parent / "fake_server.py")]


def every_revision(command: list[str]) -> str:
    """The cache key of a verdict on a stdio server, reached offering every revision ``mcpgen`` speaks."""
    return verdict_key("stdio:" + " ".join(command), list(mcpgen.REGISTRY))


def run(scenario: Callable[[], Awaitable[None]], deadline: float = 30.0) -> None:
    asyncio.run(asyncio.wait_for(scenario(), deadline))


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        (42, "42"),
        (True, "true"),
        (False, "false"),
    ],
)
def test_header_values_follow_the_spec_table(value: str | int | bool, header: str) -> None:
    assert encode_header_value(value) == header


def test_x_mcp_header_annotations() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"level": {"type": "integer", "x-mcp-header": "Level"}}},
            "query": {"type": "string"},
        },
    }
    annotated = tool_headers(schema)
    assert annotated == ((("region",), "Region"), (("nested", "level"), "Level"))
    arguments = {"region": "eu", "nested": {"level": 3}, "query": "q"}
    assert param_headers(annotated, arguments) == {"mcp-param-Region": "eu", "mcp-param-Level": "3"}
    assert param_headers(annotated, {"region": None}) == {}  # null or absent: no header
    # an integer written 3.0 is one (JSON Schema; the server compares numerically): it had no
    # header, and the server refused every such call with -32020 (a client review)
    assert param_headers(annotated, {"nested": {"level": 3.0}}) == {"mcp-param-Level": "3"}
    assert param_headers(annotated, {"nested": {"level": 1e20}}) == {"mcp-param-Level": str(10**20)}
    assert param_headers(annotated, {"nested": {"level": 3.5}}) == {}  # no integer: the server refuses it
    invalid = [
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},  # number is not allowed
        {"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}},  # not a token
        {"properties": {"a": {"type": "string", "x-mcp-header": "Region\n"}}},  # nor with a line break after it
        {"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}},
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},  # under items
        {"dependencies": {"a": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}},  # draft-07
        {"properties": {"a": {"type": "string", "contentSchema": {"type": "string", "x-mcp-header": "A"}}}},
    ]
    for bad in invalid:
        assert tool_headers(bad) is None, bad
    # data is no annotation: a property named x-mcp-header, the key inside a default or const
    harmless = [
        {"properties": {"x-mcp-header": {"type": "string"}}},
        {"properties": {"cfg": {"type": "object", "default": {"x-mcp-header": "A"}}}},
        {"properties": {"c": {"const": {"x-mcp-header": 1}}, "e": {"examples": [{"x-mcp-header": 2}]}}},
    ]
    for schema in harmless:
        assert tool_headers(schema) == (), schema


def test_sse_parser_records_ids_and_retry() -> None:
    async def lines() -> Any:
        for line in ["id: 7", "retry: 250", "data: {}", "", ": keep-alive", "event: other", "data: x", "", "event:"]:
            yield line.encode()
        for line in ["data: 1", "", "id: 8", "data: 2"]:  # an empty type is "message"; the stream ends in an event
            yield line.encode()

    async def scenario() -> None:
        cursor = StreamCursor()
        events = [e async for e in sse_data(lines(), cursor)]
        assert events == [b"{}", b"1"], "an event the stream ends inside is discarded (the format)"
        assert (cursor.last_id, cursor.retry_ms, cursor.events) == ("7", 250, 3), "its id is not taken"

    run(scenario)


def test_sse_fields_are_read_as_the_event_stream_format_has_them() -> None:
    """A ``retry`` of other digits than ASCII is ignored (``str.isdigit`` took "²" and ``int``
    raised, failing the request); an id that cannot go back as a header leaves the stream not
    resumable (sending it raised); data that is not UTF-8 is decoded with U+FFFD."""

    async def parse(*lines: bytes) -> tuple[list[bytes], StreamCursor]:
        async def source() -> Any:
            for line in lines:
                yield line

        cursor = StreamCursor()
        return [e async for e in sse_data(source(), cursor)], cursor

    events, cursor = asyncio.run(parse("retry: \u00b2".encode(), b"id: 1", b"data: \xff{}", b""))
    assert events == ["\ufffd{}".encode()] and (cursor.last_id, cursor.retry_ms) == ("1", 1000)
    _, cursor = asyncio.run(parse(b"id: 1", b"data: x", b"", "id: \u00e9".encode(), b"data: y", b""))
    assert cursor.last_id is None
    _, cursor = asyncio.run(parse(b"id: 1", b"data: x", b"", b"id: a\0b", b"data: y", b""))
    assert cursor.last_id == "1", "an id with NUL is ignored (the format)"
    _, cursor = asyncio.run(parse(b"id: 1", b"data: x", b"", b"id:", b"data: y", b""))
    assert cursor.last_id is None, "an empty id: no Last-Event-ID to send"
    _, cursor = asyncio.run(parse(b"id: 1", b"", b"retry: 60000", b"retry: " + b"9" * 5000, b""))
    assert (cursor.last_id, cursor.events) == ("1", 0), "an id-only event sets the id and dispatches nothing"
    assert cursor.retry_ms == 10**12, "a retry is respected, however long (5,000 digits raised in int())"


def test_a_legacy_server_answering_a_version_the_client_does_not_speak_is_refused() -> None:
    async def scenario() -> None:  # the fake server answers 2025-06-18 to anything it does not know
        with pytest.raises(ServerError) as refused:
            await connect([*FAKE, "legacy"], versions=["2024-11-05"], cache=None, timeout=10)
        assert refused.value.code == -32022
        assert refused.value.data == {"supported": ["2024-11-05"], "requested": "2025-06-18"}
        assert "chose protocol version '2025-06-18', not one this client offered (2024-11-05)" in str(refused.value)
        client = await connect([*FAKE, "legacy"], versions=["2025-06-18", "2024-11-05"], cache=None, timeout=10)
        async with client:  # asked for 2025-06-18, its newest
            assert client.version == "2025-06-18"

    run(scenario)


@pytest.mark.parametrize(
    "mode", ["legacy", "exit-on-probe", "silent-probe", "old-versions", "garbled-32022", "lists-legacy"]
)
def test_connect_falls_back_to_legacy(mode: str) -> None:
    cache: dict[str, Verdict] = {}

    async def scenario() -> None:
        probe = 1.0 if mode == "silent-probe" else 10.0
        client = await connect([*FAKE, mode], cache=cache, probe_timeout=probe, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            assert isinstance(client, legacy_client.Client)
            result = await client.call_tool(name="echo", arguments={"x": 1})
            assert result.content[0].text == '{"x": 1}'  # type: ignore[union-attr]
        assert list(cache.values()) == [("legacy", "2025-11-25")]
        started = time.monotonic()
        again = await connect([*FAKE, mode], cache=cache, probe_timeout=30, timeout=10, stderr=subprocess.DEVNULL)
        async with again:  # cached: no probe, so no wait on a silent server
            assert again.version == "2025-11-25"
        assert time.monotonic() - started < 10

    run(scenario)


def test_a_client_declares_a_capability_only_where_its_revision_has_the_request() -> None:
    """Elicitation declared to a 2024-11-05 or 2025-03-26 server (whose revisions have no
    ``elicitation/create``) told it the client would answer what the client then refused (-32601)."""

    async def answer(params: Any) -> dict[str, Any]:
        return {}

    handlers = {"elicitation/create": answer, "sampling/createMessage": answer, "roots/list": answer}

    async def declared(version: str) -> set[str]:
        client = await connect([*FAKE, "legacy"], versions=[version], handlers=handlers, cache=None, timeout=10)
        async with client:
            assert client.version == version and client.instructions is not None
            return set(json.loads(client.instructions.removeprefix("you declared ")))

    assert asyncio.run(declared("2025-03-26")) == {"sampling", "roots"}
    assert asyncio.run(declared("2025-06-18")) == {"elicitation", "sampling", "roots"}
    modern = mcpgen.REGISTRY.revision("2026-07-28").methods  # embedded in input_required results there
    assert set(ClientOptions(handlers=handlers).client_capabilities(modern)) == {"elicitation", "sampling", "roots"}


def test_a_capabilitys_members_are_declared_only_where_the_revision_has_them() -> None:
    """A review: ``elicitation: {"form": {}}`` went to 2025-06-18 servers, whose elicitation
    capability has no members (``form`` and ``url`` came with 2025-11-25)."""

    async def answer(params: Any) -> dict[str, Any]:
        return {}

    options = ClientOptions(handlers={"elicitation/create": answer, "roots/list": answer})

    def declared(version: str) -> Any:
        return options.client_capabilities(mcpgen.REGISTRY.revision(version).methods)

    assert declared("2025-06-18") == {"elicitation": {}, "roots": {"listChanged": False}}
    assert declared("2025-11-25") == {"elicitation": {"form": {}}, "roots": {"listChanged": False}}
    assert declared("2026-07-28")["elicitation"] == {"form": {}}


def test_a_legacy_listen_acknowledges_only_what_the_servers_capabilities_declare() -> None:
    """It acknowledged every flag asked for, where a 2026-07-28 server (the same server, in the
    other era) acknowledges only what its capabilities declare: the fake declares tools without
    listChanged, the weather example every list's."""
    weather = [sys.executable, str(Path(__file__).parents[2] / "examples" / "weather")]

    async def acknowledged(target: list[str]) -> Any:
        client = await connect(target, versions=["2025-11-25"], cache=None, timeout=10)
        async with client, client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
            return subscription.acknowledged

    flags = asyncio.run(acknowledged([*FAKE, "legacy"]))
    assert not flags["toolsListChanged"] and not flags["promptsListChanged"]
    flags = asyncio.run(acknowledged(weather))
    assert flags["toolsListChanged"] and flags["promptsListChanged"] and not flags["resourcesListChanged"]


def test_a_modern_client_starts_an_exited_stdio_server_again_and_a_legacy_one_does_not() -> None:
    """stdio.mdx (2026-07-28): if the server process exits unexpectedly, the client SHOULD restart
    it; the protocol is stateless, so the next request goes to a fresh process. A legacy session
    (its initialize went with the process) stays failed."""

    async def calls(mode: str) -> list[str]:
        got: list[str] = []
        client = await connect([*FAKE, mode], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            for _ in range(2):
                try:
                    result = await client.call_tool(name="then-exit", arguments={})
                    got.append(result.content[0].text)  # type: ignore[union-attr]
                except TransportError as exc:
                    got.append(f"failed: {exc}")
                for _ in range(200):  # until the client has seen the process go
                    if client.session.failure is not None:
                        break
                    await asyncio.sleep(0.01)
        return got

    first, second = asyncio.run(calls("mrtr"))
    assert first.isdigit() and second.isdigit() and first != second  # two processes
    first, second = asyncio.run(calls("legacy"))
    assert first.isdigit() and second.startswith("failed: the server process exited")


def test_a_request_the_server_cancels_is_not_answered_and_its_handler_stops() -> None:
    """cancellation.mdx: the receiver of a cancellation SHOULD stop processing the request and
    not answer it. The client ignored a server's ``notifications/cancelled`` for the server's own
    request: its handler ran to the end and its answer went."""
    ran: list[str] = []

    async def sample(params: Any) -> dict[str, Any]:
        ran.append("started")
        await asyncio.sleep(0.5)
        ran.append("finished")
        return {"role": "assistant", "content": {"type": "text", "text": "late"}, "model": "m"}

    answered: list[str] = []

    async def scenario() -> None:
        handlers = {"sampling/createMessage": sample}
        client = await connect([*FAKE, "legacy"], versions=["2025-11-25"], handlers=handlers, timeout=10)
        async with client:
            await client.call_tool(name="asks-then-cancels", arguments={})
            await asyncio.sleep(1.0)  # past the handler's own time
            report = await client.call_tool(name="answered-after-cancel", arguments={})
            answered.append(report.content[0].text)  # type: ignore[union-attr]

    run(scenario)
    assert answered == ["[]"]
    assert "finished" not in ran


def test_a_modern_client_answers_no_request_of_the_server() -> None:
    """stdio.mdx: the client MUST NOT write JSON-RPC responses (2026-07-28 servers send no
    requests). The client answered a server's ping with a -32601 error response."""
    answers: list[str] = []

    async def scenario() -> None:
        async with await connect([*FAKE, "mrtr"], timeout=10, stderr=subprocess.DEVNULL) as client:
            assert isinstance(client, modern_client.Client)
            await client.call_tool(name="asks-the-client", arguments={})
            await client.list_tools()  # the server has read whatever the client wrote meanwhile
            report = await client.call_tool(name="answers-to-the-server", arguments={})
            answers.append(report.content[0].text)  # type: ignore[union-attr]

    run(scenario)
    assert answers == ["[]"]


def test_a_retry_carries_only_the_state_the_last_input_required_result_gave() -> None:
    """mrtr.mdx: if the InputRequiredResult has no requestState, the retry MUST NOT carry one. A
    caller resuming with ``request_state`` had it sent again on the automatic retries."""
    seen: list[str] = []

    async def answer(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async def scenario() -> None:
        handlers = {"elicitation/create": answer}
        async with await connect([*FAKE, "mrtr"], handlers=handlers, timeout=10, stderr=subprocess.DEVNULL) as client:
            assert isinstance(client, modern_client.Client)
            result = await client.call_tool(
                name="resumed", arguments={}, request_state="S1", input_responses={"a": {"action": "accept"}}
            )
            seen.append(result.content[0].text)  # type: ignore[union-attr]

    run(scenario)
    assert json.loads(seen[0]) == {"requestState": None, "answers": ["b"]}


def test_a_verdict_reached_with_fewer_revisions_is_not_reused_with_more() -> None:
    """A ``connect`` limited to a legacy revision settles on it; the next ``connect`` to the same
    server offering every revision probes and reaches the modern one (it used to reuse the first
    one's legacy verdict, cached by server alone)."""
    cache: dict[str, Verdict] = {}

    async def scenario() -> None:
        async with await connect([*FAKE, "mrtr"], versions=["2025-11-25"], cache=cache, timeout=10) as limited:
            assert limited.version == "2025-11-25"
        async with await connect([*FAKE, "mrtr"], cache=cache, timeout=10) as full:
            assert full.version == "2026-07-28"
        async with await connect([*FAKE, "mrtr"], versions=["2025-11-25"], cache=cache, timeout=10) as again:
            assert again.version == "2025-11-25"

    run(scenario)
    assert sorted(cache.values()) == [("legacy", "2025-11-25"), ("modern", "2026-07-28")]


def test_a_cached_verdict_that_fails_is_dropped_and_the_server_probed_again() -> None:
    """versioning.mdx: cache the era, "re-probing if the cached assumption later fails" (a server
    rolled back, or over HTTP another endpoint of the origin): the connection failed for good."""
    command = [*FAKE, "legacy"]
    cache: dict[str, Verdict] = {every_revision(command): ("modern", "2026-07-28")}

    async def scenario() -> None:
        client = await connect(command, cache=cache, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            assert isinstance(client, legacy_client.Client)

    run(scenario)
    assert list(cache.values()) == [("legacy", "2025-11-25")]


def test_mrtr_echoes_request_state_and_fulfils_input_requests() -> None:
    asked: list[str] = []

    async def elicit(params: Any) -> dict[str, Any]:
        asked.append(params.message)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def scenario() -> None:
        client = await connect([*FAKE, "mrtr"], handlers={"elicitation/create": elicit}, cache=None, timeout=10)
        async with client:
            assert isinstance(client, modern_client.Client)
            result = await client.call_tool(name="echo", arguments={})
            text = result.content[0].text  # type: ignore[union-attr]
            assert text.startswith("states=state-3 ")
            assert '"who": {"action": "accept", "content": {"name": "Ada"}}' in text
            assert asked == ["Who?"] * 3
            raw = await client.call_tool(name="echo", input_required=True)
            assert raw.result_type == "input_required" and raw.request_state == "state-1"  # type: ignore[union-attr]
        handlers = {"elicitation/create": elicit}
        limited = await connect([*FAKE, "mrtr"], handlers=handlers, cache=None, max_input_rounds=2)
        async with limited:
            with pytest.raises(InputRequiredError):
                await limited.request("tools/call", {"name": "echo", "arguments": {}})
        unhandled = await connect([*FAKE, "mrtr"], cache=None)
        async with unhandled:
            with pytest.raises(InputRequiredError, match="no handler"):
                await unhandled.request("tools/call", {"name": "echo", "arguments": {}})

    run(scenario)


def test_a_bad_call_and_a_handlers_bad_answer_name_the_field_and_whose_fault() -> None:
    """A client review: the caller's own bad arguments and an elicitation handler's bad answer
    (modern era) both raised a bare "-32602 invalid params", naming neither the field nor the
    handler (the detail was only in ``data``)."""

    async def maybe(params: Any) -> dict[str, Any]:
        return {"action": "maybe"}

    async def scenario() -> None:
        client = await connect([*FAKE, "mrtr"], handlers={"elicitation/create": maybe}, cache=None, timeout=10)
        async with client:
            with pytest.raises(ProtocolError) as bad_call:
                await client.request("tools/call", {"name": "echo", "arguments": [1, 2]})
            assert (bad_call.value.code, bad_call.value.message) == (
                -32602,
                "invalid params: arguments: Input should be a valid dictionary",
            )
            with pytest.raises(ProtocolError) as bad_answer:
                await client.call_tool(name="echo", arguments={})
            assert bad_answer.value.code == -32603
            assert bad_answer.value.message.startswith("the elicitation/create handler's answer is invalid: action: ")

    run(scenario)


def test_timeout_sends_cancelled_and_the_session_survives(capfd: pytest.CaptureFixture[str]) -> None:
    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10)
        async with client:
            with pytest.raises(RequestTimeout):
                await client.request("tools/call", {"name": "hang", "arguments": {}}, timeout=0.2)
            result = await client.request("tools/call", {"name": "echo", "arguments": {"ok": True}})
            assert result.content[0].text == '{"ok": true}'

    run(scenario)
    assert "got notifications/cancelled" in capfd.readouterr().err


def test_an_initialize_that_times_out_is_not_cancelled(capfd: pytest.CaptureFixture[str]) -> None:
    """cancellation.mdx: "The initialize request MUST NOT be cancelled by clients"."""

    async def scenario() -> None:
        with pytest.raises(RequestTimeout):
            await connect([*FAKE, "slow-initialize"], versions=["2025-11-25"], cache=None, timeout=0.3)

    run(scenario)
    said = capfd.readouterr().err
    assert "got initialize" in said and "got notifications/cancelled" not in said, said


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("unreadable", "the server could not read a message of this client: -32700 Parse error"),
        ("wordy-unreadable", "the server could not read a message of this client: -32700 why why"),
    ],
)
def test_a_timeout_names_what_came_meanwhile_that_named_no_request(
    caplog: pytest.LogCaptureFixture, tool: str, said: str
) -> None:
    """Over stdio an error with a null id (the server could not read a message of ours), or an
    answer the codec refuses before it can read the id (past its 16 MiB), cannot be matched to a
    request: it is logged, and a request waiting meanwhile that times out says so (it timed out
    saying nothing but the time)."""

    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            with pytest.raises(RequestTimeout) as raised:
                await client.request("tools/call", {"name": tool, "arguments": {}}, timeout=2)
            assert f"(meanwhile {said}" in str(raised.value), str(raised.value)[:300]
            assert len(str(raised.value)) < 17 * 1024  # a 10 MB message is cut as ServerError's is
            result = await client.request("tools/call", {"name": "echo", "arguments": {"ok": True}})
            assert result.content[0].text == '{"ok": true}'

    run(scenario)
    assert said in caplog.text and len(caplog.text) < 20 * 1024


def test_an_answer_past_the_limit_fails_its_request_at_once() -> None:
    """An answer the codec refuses unread (past its 16 MiB) whose first bytes name its request
    fails that request at once (a client review: it waited out its whole timeout, 60 s by default,
    as an answer naming no request does); requests after it are served."""

    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            started = time.monotonic()
            with pytest.raises(TransportError) as raised:
                await client.request("tools/call", {"name": "huge", "arguments": {}}, timeout=30)
            assert time.monotonic() - started < 10
            said = str(raised.value)
            assert "was refused: -32600 message of 20971" in said and "exceeds the limit" in said, said
            result = await client.request("tools/call", {"name": "echo", "arguments": {"ok": True}})
            assert result.content[0].text == '{"ok": true}'

    run(scenario)


def test_cancel_tells_the_server_only_of_a_request_in_flight() -> None:
    """A client review (cancellation.mdx: a cancellation MUST only reference a request the client
    issued and believes still in progress): ``cancel`` of a request answered already, or of an
    id never sent, sent ``notifications/cancelled`` all the same."""

    async def scenario() -> str:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.PIPE)
        async with client:
            await client.request("tools/call", {"name": "echo", "arguments": {}})
            for rid in (1, 2, 999):  # initialize and the call, answered; an id never sent
                await client.cancel(rid)
            await client.request("tools/call", {"name": "echo", "arguments": {"after": True}})
            return client.session.transport.stderr_tail.decode()  # type: ignore[attr-defined,no-any-return]

    said = asyncio.run(scenario())
    assert "got tools/call" in said and "got notifications/cancelled" not in said, said


def test_the_message_size_limit_is_the_callers() -> None:
    """``connect(max_message_size=...)``: a larger limit takes the 20 MiB answer the default
    refuses; a smaller one refuses a 2 MiB answer at once, naming the limit, and the connection
    carries on (the limit was 16 MiB, fixed)."""

    async def scenario() -> None:
        larger = await connect([*FAKE, "legacy"], max_message_size=32 << 20, cache=None, timeout=30)
        async with larger:
            result = await larger.request("tools/call", {"name": "huge", "arguments": {}}, timeout=30)
            assert len(result.content[0].text) == 20 << 20
        smaller = await connect([*FAKE, "legacy"], max_message_size=1 << 20, cache=None, timeout=10)
        async with smaller:
            started = time.monotonic()
            with pytest.raises(TransportError) as raised:
                await smaller.request("tools/call", {"name": "echo", "arguments": {"x": "y" * (2 << 20)}}, timeout=30)
            assert time.monotonic() - started < 10
            assert "exceeds the limit of 1048576" in str(raised.value), str(raised.value)
            result = await smaller.request("tools/call", {"name": "echo", "arguments": {"ok": True}})
            assert result.content[0].text == '{"ok": true}'

    run(scenario)


def test_a_notification_of_no_use_is_ignored_quietly(caplog: pytest.LogCaptureFixture) -> None:
    """JSON-RPC: an unknown notification is ignored. It names no request, but it is no sign of a
    request gone astray: no warning, and no request's timeout names it."""

    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            result = await client.request("tools/call", {"name": "chatty", "arguments": {}})
            assert result.content[0].text == "ok"
            with pytest.raises(RequestTimeout) as raised:
                await client.request("tools/call", {"name": "hang", "arguments": {}}, timeout=0.3)
            assert "meanwhile" not in str(raised.value)

    with caplog.at_level("DEBUG", logger="mcpgen"):
        run(scenario)
    assert "notifications/vendor/heartbeat" in caplog.text  # at debug level
    assert not [r for r in caplog.records if r.levelname == "WARNING"], caplog.text


def test_a_server_request_whose_id_cannot_be_read_gets_an_error_without_its_id() -> None:
    """An error in detecting a request's id is answered without one: a null id (JSON-RPC 2.0) in
    the revisions whose schema requires the member, none from 2025-11-25 on (optional there, never
    null); the client said nothing before, and the server waited on an answer that never came."""

    async def scenario(version: str) -> dict[str, Any]:
        client = await connect([*FAKE, "legacy"], versions=[version], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            result = await client.request("tools/call", {"name": "bad-id-request", "arguments": {}})
            answer: dict[str, Any] = json.loads(result.content[0].text)
            assert answer["error"]["code"] == -32600, answer
            return answer

    answers: dict[str, dict[str, Any]] = {}

    async def both() -> None:
        for version in ("2025-11-25", "2025-06-18"):
            answers[version] = await scenario(version)

    run(both)
    assert "id" not in answers["2025-11-25"] and answers["2025-06-18"]["id"] is None


def test_server_exit_fails_pending_requests() -> None:
    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            transport = client.session.transport
            assert isinstance(transport, StdioTransport) and transport.process is not None
            transport.process.kill()
            with pytest.raises(TransportError):
                await client.request("tools/call", {"name": "hang", "arguments": {}})

    run(scenario)


def test_close_terminates_a_server_that_ignores_eof() -> None:
    async def scenario() -> None:
        client = await connect([*FAKE, "ignore-eof"], cache=None, timeout=10, stderr=subprocess.DEVNULL)
        transport = client.session.transport
        assert isinstance(transport, StdioTransport)
        transport.shutdown_timeout = 0.3
        started = time.monotonic()
        await client.aclose()
        assert transport.process is not None and transport.process.returncode is not None
        assert time.monotonic() - started < 5

    run(scenario)


def test_a_subscription_the_server_cancels_ends_like_a_graceful_close() -> None:
    """cancellation.mdx: a server tears a subscription down on stdio with notifications/cancelled
    naming the subscriptions/listen request; the client's iteration ends (it hung before). And
    subscriptions.mdx: what the acknowledged filter did not agree to (a prompts list_changed, an
    update of a resource not subscribed) is dropped, not handed on."""

    async def scenario() -> list[str]:
        client = await connect([*FAKE, "mrtr"], cache=None, timeout=10)
        async with client:
            assert isinstance(client, modern_client.Client)
            async with client.listen(tools_list_changed=True) as subscription:
                return [note.method async for note in subscription]

    assert asyncio.run(asyncio.wait_for(scenario(), 20)) == ["notifications/tools/list_changed"]


def test_a_request_to_a_server_that_stopped_reading_times_out_while_it_is_sent() -> None:
    """The timeout covers sending: a server that no longer reads its stdin fills the pipe, and the
    write waited for ever before the timeout even started. And it is on time: the cancellation
    behind it went out before the timeout was raised, which the full pipe held 1.5 s more (up to
    5 s for a longer timeout)."""

    async def scenario() -> float:
        client = await connect([*FAKE, "deaf"], cache=None, timeout=10)
        async with client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool(name="echo", arguments={"blob": "x" * (4 << 20)}, timeout=1.5)
            return time.monotonic() - started

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) < 2.6  # 3 s before


@pytest.mark.parametrize("by", ["timeout", "caller"])
def test_a_request_given_up_while_it_was_sent_is_cancelled_behind_its_bytes(by: str, tmp_path: Path) -> None:
    """Reviews of the diff: once cancel told the server only of requests in flight, a request
    given up while it was written (its bookkeeping gone, its bytes in the pipe), by its timeout or
    by its caller, was no longer cancelled, and the server, reading again, ran it."""
    log = tmp_path / "stderr"
    big = {"name": "echo", "arguments": {"x": "y" * (4 << 20)}}

    async def scenario() -> None:
        with log.open("w") as stderr:
            async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=stderr) as client:
                napping = asyncio.ensure_future(client.request("tools/call", {"name": "nap", "arguments": {}}))
                await asyncio.sleep(0.3)  # the server sleeps without reading: the pipe fills
                if by == "timeout":
                    with pytest.raises(RequestTimeout, match="it was still being sent"):
                        await client.request("tools/call", big, timeout=0.5)
                else:
                    writing = asyncio.ensure_future(client.request("tools/call", big))
                    await asyncio.sleep(0.5)
                    writing.cancel()
                    with pytest.raises(asyncio.CancelledError):
                        await writing
                await napping
                await client.request("tools/call", {"name": "echo", "arguments": {}})  # after what went before

    asyncio.run(asyncio.wait_for(scenario(), 30))
    said = log.read_text().splitlines()
    assert said.count("got tools/call") == 3 and "got notifications/cancelled" in said, said


@pytest.mark.parametrize("then", ["another request", "close"])
def test_a_timed_out_requests_cancellation_goes_out_before_what_the_caller_does_next(then: str, tmp_path: Path) -> None:
    """Found by the review of the change that stopped a timeout waiting up to 5 s for its
    cancellation: sent in the background, the caller's next request overtook it (both ran on the
    server), and a close right after dropped it (a stateless HTTP server is told only so). The
    caller waits for it a quarter of a second at most, and so does close."""
    log = tmp_path / "stderr"

    async def scenario() -> None:
        with log.open("w") as stderr:
            async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=stderr) as client:
                with pytest.raises(RequestTimeout):
                    await client.request("tools/call", {"name": "hang", "arguments": {}}, timeout=0.3)
                if then == "another request":
                    await client.request("tools/call", {"name": "echo", "arguments": {}})

    run(scenario)
    got = [line for line in log.read_text().splitlines() if line.startswith("got ")]
    got = got[got.index("got tools/call") :]  # (the probe and initialize before it)
    assert got[:2] == ["got tools/call", "got notifications/cancelled"], got
    assert got[2:] == (["got tools/call"] if then == "another request" else []), got


def test_a_legacy_listen_whose_subscribe_fails_leaves_no_listener() -> None:
    async def scenario(declared: bool) -> int:
        env = {"FAKE_DECLARES_SUBSCRIBE": "1"} if declared else None
        client = await connect([*FAKE, "legacy"], cache=None, timeout=10, env=env)
        async with client:
            if declared:
                with pytest.raises(ServerError):  # the fake server implements no resources/subscribe
                    async with client.listen(resource_subscriptions=["x://a"]):
                        pass
            else:  # a client review: asked all the same, the official SDK's server answered a bare -32601
                with pytest.raises(ServerError, match=r"does not declare resources\.subscribe"):
                    async with client.listen(resource_subscriptions=["x://a"]):
                        pass
            return len(client.session._listeners)

    assert asyncio.run(asyncio.wait_for(scenario(True), 30)) == 0
    assert asyncio.run(asyncio.wait_for(scenario(False), 30)) == 0


class Chunks(httpx.AsyncByteStream):
    """A response's bytes as the network gives them, in the chunks given."""

    def __init__(self, *chunks: str | bytes) -> None:
        self.chunks = [c.encode() if isinstance(c, str) else c for c in chunks]

    async def __aiter__(self) -> Any:
        for chunk in self.chunks:
            yield chunk


def test_event_stream_lines_end_at_cr_lf_or_crlf_only_and_are_bounded() -> None:
    from mcpgen._runtime.client.http import bounded_lines

    async def lines(*chunks: str | bytes, limit: int = 100) -> list[bytes]:
        return [line async for line in bounded_lines(httpx.Response(200, stream=Chunks(*chunks)), limit)]

    # CRLF cut between two chunks is one line end; U+2028 inside data ends nothing; what follows
    # the last line end is no line (the stream ended inside it)
    assert asyncio.run(lines("data: a\r", "\ndata: b\u2028c\n\n", "data: d\rid: 1")) == [
        b"data: a",
        "data: b\u2028c".encode(),
        b"",
        b"data: d",
    ]
    with pytest.raises(TransportError, match="longer than 100"):
        asyncio.run(lines("data: " + "x" * 60, "x" * 60))
    # bounded in bytes (in characters, a line of U+10000 held four times the limit in memory)
    with pytest.raises(TransportError, match="longer than 100 bytes"):
        asyncio.run(lines("data: " + "\U00010000" * 30))
    # a byte order mark opening the stream is dropped, even cut across chunks; elsewhere it is data
    assert asyncio.run(lines(b"\xef", b"\xbb\xbfdata: a\n\xef\xbb\xbf\n")) == [b"data: a", b"\xef\xbb\xbf"]
    assert asyncio.run(lines(b"\xef\xbb", b"\n")) == [b"\xef\xbb"], "less than a BOM is kept"

    async def events(*lines_: str) -> list[bytes]:
        async def source() -> Any:
            for line in lines_:
                yield line.encode()

        return [e async for e in sse_data(source())]

    with pytest.raises(TransportError, match="event's data is longer"):
        asyncio.run(events(*(["data: " + "x" * (1 << 20)] * 17), ""))  # 17 MiB of data lines: past the 16


def test_a_sign_in_that_ends_just_before_the_timeout_gives_the_request_its_whole_time() -> None:
    """Found by a review: the pause only held when an authorization was still under way as the
    time ran out; one that ended just before left the request what remained (a faster user
    failed where a slower one passed)."""
    from mcpgen._runtime.client.session import ClientSession
    from mcpgen._runtime.client.transport import Transport
    from mcpgen.v2025_11_25 import codec

    class SigningIn(Transport):
        kind = "fake"

        def __init__(self) -> None:
            self.begun = 0
            self.active = False
            self.receiver: Any = None

        async def start(self, receiver: Any) -> None:
            self.receiver = receiver

        async def send(self, message: Any, *, headers: Any = None) -> None:
            if "id" in message:
                asyncio.get_running_loop().create_task(self.answer(message["id"]))

        async def answer(self, rid: Any) -> None:
            self.begun, self.active = self.begun + 1, True
            await asyncio.sleep(0.45)  # the user signs in: done just before the request's 0.5 s
            self.active = False
            await asyncio.sleep(0.1)  # then the server answers
            await self.receiver.receive(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode())

        def authorizing(self) -> bool:
            return self.active

        async def authorized(self) -> None:
            while self.active:
                await asyncio.sleep(0.01)

        def authorizations(self) -> int:
            return self.begun

        async def close(self) -> None:
            pass

    async def scenario() -> None:
        session = ClientSession(codec.CLIENT, SigningIn())
        await session.start()
        await session.request("ping", {}, timeout=0.5)

    run(scenario)


def test_a_cached_verdict_that_times_out_is_kept_and_not_probed_again(capfd: pytest.CaptureFixture[str]) -> None:
    """A timeout says nothing of the era: the cached verdict stays and no second probe and open
    follow (a dead server took three timeouts to report, and lost the verdict)."""
    command = [*FAKE, "slow-initialize"]
    cache: dict[str, Verdict] = {every_revision(command): ("legacy", "2025-11-25")}

    async def scenario() -> float:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            await connect(command, cache=cache, timeout=0.5, probe_timeout=0.5)
        return time.monotonic() - started

    took = asyncio.run(scenario())
    assert list(cache.values()) == [("legacy", "2025-11-25")]
    assert took < 1.4, took
    assert capfd.readouterr().err.count("got initialize") == 1


@pytest.mark.parametrize("mode", ["silent-probe", "exit-on-probe"])
def test_a_cached_modern_verdict_meeting_a_legacy_server_is_probed_again(mode: str) -> None:
    """A server rolled back to a legacy release that ignores ``server/discover`` (or exits on it):
    the cached modern verdict fails as a legacy server's probe does, so the server is probed again
    (found by a review: after the rule "a timeout keeps the verdict" it failed for ever)."""
    command = [*FAKE, mode]
    cache: dict[str, Verdict] = {every_revision(command): ("modern", "2026-07-28")}

    async def scenario() -> None:
        client = await connect(command, cache=cache, timeout=10, probe_timeout=0.5, stderr=subprocess.DEVNULL)
        async with client:
            assert client.version == "2025-11-25"

    run(scenario)
    assert list(cache.values()) == [("legacy", "2025-11-25")]


STEPPING_SERVER = """
from mcpgen.v2026_07_28.server import App, Context
app = App("stepping", surface="no_such_surface")
@app.tool
async def steps(n: int, ctx: Context) -> str:
    for i in range(1, n + 1):
        await ctx.report_progress(i, n)
    return "done"
app.run_stdio()
"""


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_progress_callbacks_run_one_at_a_time_in_the_order_sent_and_before_the_call_returns(
    versions: list[str] | None,
) -> None:
    """Found by a client review: a task per notification ran the callbacks of a request all at
    once (1,324 of 20,000 together) and out of order, progress going backwards. A later review:
    an awaiting callback got the progress after the call had returned (20 calls in 20)."""
    seen: list[float] = []
    running = peak = 0

    async def on_progress(params: Any) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.002 * (int(params.progress) % 3))  # uneven work per notification
        seen.append(params.progress)
        running -= 1

    async def scenario() -> None:
        command = [sys.executable, "-c", STEPPING_SERVER]
        async with await connect(
            command, cache=None, timeout=20, versions=versions, stderr=subprocess.DEVNULL
        ) as client:
            await client.request("tools/call", {"name": "steps", "arguments": {"n": 200}}, on_progress=on_progress)
            assert len(seen) == 200  # what was sent before the answer was delivered before it

    run(scenario)
    assert seen == list(range(1, 201)) and peak == 1, (seen[:20], peak)


def test_an_answer_past_the_transports_line_limit_fails_its_request_at_once() -> None:
    """A review of the diff: an answer past the codec's 16 MiB failed its request at once, one
    past the stdio transport's 64 MiB line limit still waited out the whole timeout."""

    async def scenario() -> None:
        async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            started = time.monotonic()
            with pytest.raises(TransportError, match="the answer to request"):
                await client.call_tool(name="answer-longer-than-a-line", arguments={}, timeout=60)
            assert time.monotonic() - started < 30
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]

    run(scenario)


@pytest.mark.parametrize("mode", ["mrtr", "legacy"])
def test_a_stdout_line_past_the_limit_is_skipped_and_the_session_goes_on(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by a client review: a line past the transport's 64 MiB limit ended the session,
    every later request failing with asyncio's "Separator is not found". It is skipped in bounded
    memory, as the server side does, and what follows is read."""

    async def scenario() -> None:
        async with await connect([*FAKE, mode], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            after = await client.call_tool(name="longer-than-a-line", arguments={})
            assert after.content[0].text == "after the long line"  # type: ignore[union-attr]
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]

    with caplog.at_level("WARNING"):
        run(scenario)
    assert any("line longer than 67108864 bytes: skipped" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    ("tool", "first"),
    [
        ("exit-leaving-a-child", "the server process exited (code 5)"),
        ("close-stdout", "the server closed its output while running; it was stopped"),
    ],
)
@pytest.mark.parametrize("mode", ["mrtr", "legacy"])
def test_a_stdio_server_that_breaks_its_output_is_told_truthfully_and_a_modern_one_replaced(
    mode: str, tool: str, first: str
) -> None:
    """Found by a client review. A server that exited while a process it started held its stdout
    was never seen to exit: the request waited out its timeout. One that closed stdout and ran
    on was said to have exited "(code None)" and, alive, was never replaced. Each now fails what
    it must, says what happened, and a modern client starts a new server on the next request."""

    async def scenario() -> None:
        client = await connect([*FAKE, mode], cache=None, timeout=5, stderr=subprocess.DEVNULL)
        async with client:
            started = time.monotonic()
            with pytest.raises(TransportError) as failed:
                await client.call_tool(name=tool, arguments={})
            assert first in str(failed.value), failed.value
            assert time.monotonic() - started < 5.5
            if mode == "mrtr":  # a new server
                assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
            else:  # legacy: its initialize went with the process
                with pytest.raises(TransportError, match=r"exited|closed its output"):
                    await client.list_tools()

    run(scenario, 60)


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("child", ["start-a-child", "start-a-stubborn-child"])
def test_what_a_stdio_server_started_and_left_running_ends_with_it(child: str) -> None:
    """Noticed by a hostile-server review: a process the server started outlived the client's
    close (a server's helper, a launcher's child). The server now leads its own process group,
    ended once the server has. Found by the review of that change: one ignoring SIGTERM
    survived, close having cut the ending short before its SIGKILL."""
    pids: list[int] = []

    async def scenario() -> None:
        async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            started = await client.call_tool(name=child, arguments={})
            pids.append(int(started.content[0].text))  # type: ignore[union-attr]
            assert running(pids[0])

    run(scenario)
    deadline = time.monotonic() + 5
    while running(pids[0]) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not running(pids[0]), "the server's child outlived the client"


NEXT_PID = Path("/proc/sys/kernel/ns_last_pid")


@pytest.mark.skipif(not os.access(NEXT_PID, os.W_OK), reason="needs to choose the next pid (Linux, root)")
def test_a_servers_group_is_ended_when_it_exits_not_at_close_when_its_pid_may_lead_another() -> None:
    """Found by the review of that change: the group was ended at ``close``, hours later for an
    idle client whose server had died, when the pid could lead another program's group: its
    processes were terminated. It is ended as soon as the exit is seen; ``close`` leaves it."""
    found: dict[str, int] = {}

    async def scenario() -> None:
        async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            said = await client.call_tool(name="then-exit", arguments={})
            pid = int(said.content[0].text)  # type: ignore[union-attr]
            await asyncio.sleep(2)  # the exit is seen (polled every 0.25 s), its group ended
            NEXT_PID.write_text(str(pid - 1))
            other = subprocess.Popen(
                ["sh", "-c", "sleep 30 & echo $!"], start_new_session=True, stdout=subprocess.PIPE, text=True
            )
            assert other.stdout is not None
            found["worker"] = int(other.stdout.readline())
            other.wait()
            found["reused"] = int(other.pid == pid)

    run(scenario)
    try:
        if not found["reused"]:
            pytest.skip("another process took the pid meanwhile")
        assert running(found["worker"]), "close ended another program's process group"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(found["worker"], signal.SIGKILL)


@pytest.mark.parametrize(("mode", "version"), [("mrtr", "2026-07-28"), ("legacy", "2025-11-25")])
def test_an_answer_that_is_no_valid_result_is_the_servers_fault_named_by_its_field(mode: str, version: str) -> None:
    """Found by a client review: a result that failed validation raised a bare ``ProtocolError``
    "-32602 invalid result", which reads as the server's "Invalid params", the field only in
    ``data``. It is now an ``InvalidAnswer`` (still a ``ProtocolError``) naming the method, the
    revision and the first field."""

    async def scenario() -> None:
        async with await connect([*FAKE, mode], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            with pytest.raises(mcpgen.InvalidAnswer) as raised:
                await client.call_tool(name="invalid-result", arguments={})
            message = str(raised.value)
            assert f"the answer to tools/call is not valid MCP {version}: content: " in message, message
            assert isinstance(raised.value, mcpgen.ProtocolError) and not isinstance(raised.value, ServerError)
            assert raised.value.data["errors"][0]["loc"][:2] == ["result", "content"]
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]  # the session goes on

    run(scenario)


@pytest.mark.parametrize("mode", ["mrtr", "legacy"])
def test_a_piped_stderr_is_read_and_its_end_told_when_the_server_exits(mode: str) -> None:
    """Found by a client review: ``stderr=subprocess.PIPE`` was accepted and never read: asyncio
    buffered it (about 128 MiB), then the server stopped and every request timed out, nothing
    pointing at the cause. It is read now, its last 64 KiB kept and quoted when the server exits
    (here after 1 MiB of noise; the 128 MiB case is too slow for the suite)."""

    async def scenario() -> None:
        command = [*FAKE, mode]
        async with await connect(command, cache=None, timeout=10, stderr=subprocess.PIPE) as client:
            said = await client.call_tool(name="loud", arguments={})
            assert said.content[0].text == "said a lot"  # type: ignore[union-attr]
            with pytest.raises(TransportError) as exited:
                await client.call_tool(name="loud-then-exit", arguments={})
            assert "the server process exited (code 3); its stderr ended: " in str(exited.value), exited.value
            assert str(exited.value).endswith("fatal: out of cheese")

    run(scenario)


def test_the_servers_requests_run_at_most_sixteen_handlers_at_once() -> None:
    """Found by a client review: 2,000 sampling requests sent at once ran the caller's handler
    (an LLM call, say) 2,000 times at once. Sixteen run at a time; every one is answered."""
    from mcpgen._runtime.client.session import HANDLERS_AT_ONCE

    running = peak = 0

    async def sample(params: Any) -> dict[str, Any]:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    async def scenario() -> None:
        handlers = {"sampling/createMessage": sample}
        client = await connect([*FAKE, "legacy"], handlers=handlers, cache=None, timeout=20, stderr=subprocess.DEVNULL)
        async with client:
            done = await client.call_tool(name="asks-many", arguments={})
            assert done.content[0].text == "60"  # type: ignore[union-attr]

    run(scenario)
    assert peak == HANDLERS_AT_ONCE == 16, peak


def test_a_server_asking_faster_than_it_reads_answers_is_refused_past_a_backlog(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Found by a client review: 200,000 pings from a server that stopped reading made 200,000
    tasks (815 MB) waiting to send their answers. Past 1,024 requests being answered the client
    drops the server's next ones, saying so, and its own call is answered as usual."""

    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=20, stderr=subprocess.DEVNULL)
        async with client:
            done = await client.call_tool(name="ping-flood", arguments={})
            assert done.content[0].text == "flooded"  # type: ignore[union-attr]
            assert client.session._answers_in_flight <= 1024

    with caplog.at_level("WARNING"):
        run(scenario)
    assert any("1024 of its requests are being answered already" in r.getMessage() for r in caplog.records)


def test_a_listener_queues_only_what_it_listens_for_and_at_most_its_backlog(caplog: pytest.LogCaptureFixture) -> None:
    """Found by a client review: a legacy ``listen`` queued every notification (log messages
    too) to drop them when read, and a listener that did not keep up grew without bound (189 MB
    legacy, 297 MB modern). It queues what it asked for, its oldest dropped past 10,000."""
    from mcpgen._runtime.client.session import LISTEN_BACKLOG

    async def scenario() -> None:
        client = await connect([*FAKE, "legacy"], cache=None, timeout=20, stderr=subprocess.DEVNULL)
        async with client, client.listen(tools_list_changed=True) as changes:
            done = await client.call_tool(name="notify-flood", arguments={})
            assert done.content[0].text == "notified"  # type: ignore[union-attr]
            queued = [changes.queue.get_nowait() for _ in range(changes.queue.qsize())]
            assert len(queued) == LISTEN_BACKLOG == 10000
            assert {note.method for note in queued} == {"notifications/tools/list_changed"}

    with caplog.at_level("WARNING"):
        run(scenario)
    assert any("a listener is 10000 behind" in r.getMessage() for r in caplog.records)


def test_a_method_at_its_limit_of_handlers_does_not_hold_up_another() -> None:
    """Found by a review of the limit: one limit for every method let sixteen samplings waiting
    on something hold up a ``roots/list`` (here: the samplings wait for it; one limit deadlocked)."""
    rooted = asyncio.Event()

    async def sample(params: Any) -> dict[str, Any]:
        await rooted.wait()
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    async def roots(params: Any) -> dict[str, Any]:
        rooted.set()
        return {"roots": []}

    async def scenario() -> None:
        handlers = {"sampling/createMessage": sample, "roots/list": roots}
        client = await connect([*FAKE, "legacy"], handlers=handlers, cache=None, timeout=10, stderr=subprocess.DEVNULL)
        async with client:
            done = await client.call_tool(name="asks-many-and-roots", arguments={})
            assert done.content[0].text == "60"  # type: ignore[union-attr]

    run(scenario, 20)


def test_a_servers_error_message_is_kept_to_16_kib() -> None:
    """Found by a client review: a 10 MB error message went whole into the exception, and so
    into every traceback and log line that showed it."""

    async def scenario() -> None:
        async with await connect([*FAKE, "legacy"], cache=None, timeout=10, stderr=subprocess.DEVNULL) as client:
            with pytest.raises(ServerError) as raised:
                await client.call_tool(name="wordy-error", arguments={})
            assert raised.value.code == -32000 and len(raised.value.message) < 17 * 1024
            assert raised.value.message.startswith("why why ")
            assert raised.value.message.endswith(f"... ({4 * (10 << 18) - 16 * 1024} more characters)")

    run(scenario)


def test_a_request_does_not_time_out_while_the_client_answers_the_server() -> None:
    """Found by a client review: on a legacy session a call whose server asked the client (an
    elicitation a user takes a minute to fill in, a slow sampling call) timed out and was
    cancelled while the server was waiting on the client; the modern era (MRTR) did not. The
    time does not run out while this client answers: the call gets its whole time again after."""
    answering: list[int] = []

    async def sample(params: Any) -> dict[str, Any]:
        answering.append(1)
        await asyncio.sleep(0.6)  # 60 of them, 16 at a time: about 2.4 s, past the call's 1 s
        return {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"}

    async def scenario() -> None:
        handlers = {"sampling/createMessage": sample}
        client = await connect([*FAKE, "legacy"], versions=["2025-11-25"], handlers=handlers, timeout=10)
        async with client:
            started = time.monotonic()
            result = await client.call_tool(name="asks-many", arguments={}, timeout=1.0)
            assert time.monotonic() - started > 1.0  # it outlived its timeout, answering
            assert result.content  # answered, not cancelled

    run(scenario)
    assert len(answering) == 60


PINGER = r"""
import json, sys, threading, time
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
def pings():
    n = 0
    while True:
        time.sleep(0.2)
        n += 1
        send({"jsonrpc": "2.0", "id": f"ping-{n}", "method": "ping"})
for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if method == "initialize":
        info = {"name": "pinger", "version": "1"}
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    elif method == "tools/call":
        threading.Thread(target=pings, daemon=True).start()  # and never answers
    elif rid is not None and method is not None:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
"""


def test_a_server_pinging_meanwhile_does_not_keep_a_request_from_timing_out(tmp_path: Path) -> None:
    """A review of the change above: counting any request of the server, a server pinging every
    few seconds kept a request it never answered waiting for ever. A ping runs no handler of the
    caller's: it gives no time back."""
    script = tmp_path / "pinger.py"
    script.write_text(PINGER)

    async def scenario() -> float:
        client = await connect([sys.executable, str(script)], versions=["2025-11-25"], cache=None, timeout=10)
        async with client:
            started = time.monotonic()
            with pytest.raises(RequestTimeout):
                await client.call_tool(name="never", arguments={}, timeout=1.0)
            return time.monotonic() - started

    assert asyncio.run(asyncio.wait_for(scenario(), 30)) < 5


def test_an_exit_told_while_the_stderr_reader_is_cancelled_raises_no_cancellation() -> None:
    """A second diff review: the exit's error waited for the stderr reader through a shield, and a
    close (or a modern session's restart) cancelling the reader meanwhile raised CancelledError in
    the task that sent, which nobody had cancelled."""
    from mcpgen._runtime.client.stdio import StdioTransport

    async def go() -> str:
        transport = StdioTransport([sys.executable, "-c", "pass"])
        reader = asyncio.ensure_future(asyncio.sleep(10))
        transport._stderr_reader = reader
        waiting = asyncio.ensure_future(transport._exit_said(1))
        await asyncio.sleep(0.05)
        reader.cancel()
        return await waiting

    assert asyncio.run(go()) == "the server process exited (code 1)"


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_a_call_after_close_says_the_client_is_closed(versions: list[str] | None) -> None:
    """A client review: a call after ``aclose()`` said the server process had exited (code 0)
    over stdio and gave httpx's own words over HTTP."""

    async def scenario() -> None:
        client = await connect([sys.executable, "-c", STEPPING_SERVER], cache=None, timeout=20, versions=versions)
        await client.aclose()
        with pytest.raises(TransportError, match=r"^tools/call: the client is closed$"):
            await client.call_tool(name="steps", arguments={"n": 1})

    run(scenario)


SLOW_SERVER = """
import asyncio
from mcpgen.v2026_07_28.server import App, Context
app = App("slow", surface="no_such_surface")
@app.tool
async def slow() -> str:
    await asyncio.sleep(30)
    return "done"
app.run_stdio()
"""


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_a_call_cancelled_just_before_close_is_still_told_to_the_server(versions: list[str] | None) -> None:
    """A review of the diff: with notify refusing a closed client, the cancellation close waits
    for (set closed first) was refused: a stop button's cancel-then-close never told the server."""
    sent: list[Any] = []

    async def scenario() -> None:
        client = await connect(
            [sys.executable, "-c", SLOW_SERVER], cache=None, timeout=20, versions=versions, stderr=subprocess.DEVNULL
        )
        session = client.session
        send = session.transport.send

        async def recorded(message: Any, *args: Any, **kwargs: Any) -> None:
            sent.append(message.get("method"))
            await send(message, *args, **kwargs)

        session.transport.send = recorded  # type: ignore[method-assign]
        call = asyncio.create_task(session.request("tools/call", {"name": "slow", "arguments": {}}))
        await asyncio.sleep(0.3)
        call.cancel()
        await asyncio.sleep(0)  # the call takes its cancellation: the telling is begun
        await client.aclose()

    run(scenario)
    assert sent == ["tools/call", "notifications/cancelled"], sent


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_a_progress_callback_that_never_ends_holds_the_call_no_longer_than_its_timeout(
    versions: list[str] | None,
) -> None:
    """A review of the diff: the call waited for its progress callback without a bound."""

    async def stuck(params: Any) -> None:
        await asyncio.Event().wait()

    async def scenario() -> None:
        command = [sys.executable, "-c", STEPPING_SERVER]
        async with await connect(
            command, cache=None, timeout=20, versions=versions, stderr=subprocess.DEVNULL
        ) as client:
            started = time.monotonic()
            result = await client.request(
                "tools/call", {"name": "steps", "arguments": {"n": 2}}, timeout=2, on_progress=stuck
            )
            took = time.monotonic() - started
            assert result.content[0].text == "done" and took < 10, took

    run(scenario)


LOGGING_SERVER = """
from mcpgen.v2026_07_28.server import App, Context
app = App("logging", surface="no_such_surface")
@app.tool
async def chatty(ctx: Context) -> str:
    await ctx.log("debug", "too fine")
    await ctx.log("warning", "disk almost full", logger="disk")
    return "ok"
app.run_stdio()
"""


async def call_chatty(
    versions: list[str] | None, then: Callable[[], Awaitable[None]] | None = None, **options: Any
) -> None:
    """``chatty`` of ``LOGGING_SERVER`` called once over stdio with ``options`` for ``connect``;
    ``then`` runs once it returned, before the client closes."""
    command = [sys.executable, "-c", LOGGING_SERVER]
    async with await connect(
        command, cache=None, timeout=20, versions=versions, stderr=subprocess.DEVNULL, **options
    ) as client:
        await client.call_tool(name="chatty", arguments={})
        if then is not None:
            await then()


def test_a_log_level_a_revision_adds_is_taken_before_its_codec_is_built() -> None:
    """A spec-change review: a level a new revision added through the overlay ("trace") was
    refused by ``connect(log_level=)`` until some codec of that revision had been built (only a
    ``Revision`` ranked its levels, and revisions load lazily, after the check). The registry
    entry carries the levels as data: here a revision whose package cannot even be imported."""
    from mcpgen._runtime.client.connect import connect as connect_with
    from mcpgen._runtime.log_levels import RANKS
    from mcpgen._runtime.versions import RevisionEntry, VersionRegistry

    assert "trace" not in RANKS
    order = ("trace", *sorted(RANKS, key=RANKS.__getitem__))
    registry = VersionRegistry([RevisionEntry("2099-01-01", "modern", "nowhere.v2099_01_01", log_levels=order)])
    assert registry.log_levels() == (order,)
    assert mcpgen.REGISTRY.log_levels()  # the generated entries carry the overlay's ranking
    command = [sys.executable, "-c", "pass"]
    kept = dict(RANKS)

    async def scenario() -> None:
        # past the level check: the first thing after it that needs the revision is its import
        with pytest.raises(ModuleNotFoundError, match="nowhere"):
            await connect_with(command, registry=registry, log_level="trace", cache=None, timeout=5)
        assert RANKS["trace"] < RANKS["debug"] < RANKS["emergency"]
        with pytest.raises(ValueError) as refused:
            await connect_with(command, registry=registry, log_level="loud", cache=None, timeout=5)
        assert str(refused.value) == f"log_level must be one of {', '.join(order)}, not 'loud'"

    try:
        run(scenario)
    finally:
        RANKS.clear()
        RANKS.update(kept)
    assert "nowhere" not in sys.modules


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_a_log_level_the_server_revision_lacks_asks_for_the_nearest_it_has(versions: list[str] | None) -> None:
    """A spec-change review: with a level a newer revision adds ("trace", ranked below "debug"),
    ``connect(log_level="trace")`` to a server of a revision without it failed every request
    with a local -32602 (2026-07-28 stamps the level on each) or was refused by the server
    (``logging/setLevel``). The client asks for the level of the server's revision nearest to
    it, never less verbose: here "debug"."""
    from mcpgen._runtime.log_levels import RANKS, nearest

    kept = dict(RANKS)
    order = ("trace", *sorted(RANKS, key=RANKS.__getitem__))
    seen: list[tuple[str, Any]] = []

    def on_log(params: Any) -> None:
        seen.append((params.level, params.data))

    async def scenario() -> None:
        await call_chatty(versions, on_log=on_log, log_level="trace")

    def rank_all(levels: tuple[str, ...]) -> None:
        RANKS.clear()
        RANKS.update({level: index for index, level in enumerate(levels)})

    try:
        rank_all(order)  # as a package of the newer revision, imported, does
        levels = ("debug", "info", "warning", "error")
        assert [nearest(level, levels) for level in ("trace", "debug", "notice", "emergency")] == [
            "debug",
            "debug",
            "info",
            "error",
        ]
        run(scenario)
    finally:
        RANKS.clear()
        RANKS.update(kept)
    assert seen == [("debug", "too fine"), ("warning", "disk almost full")], seen


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_log_messages_reach_on_log_at_the_level_asked(versions: list[str] | None) -> None:
    """A client review: a server's notifications/message had no public way in (``handlers`` are
    for the server's requests, ``listen`` takes list changes), and a modern client sent no
    logLevel, so a 2026-07-28 server logged nothing to it."""
    seen: list[tuple[str, Any, Any]] = []

    def on_log(params: Any) -> None:
        seen.append((params.level, params.logger, params.data))

    async def until_seen() -> None:
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.02)

    async def scenario() -> None:
        await call_chatty(versions, until_seen, on_log=on_log, log_level="info")
        with pytest.raises(ValueError, match="log_level must be one of debug, info"):
            await connect([sys.executable, "-c", LOGGING_SERVER], log_level="loud")

    run(scenario)
    assert seen == [("warning", "disk", "disk almost full")], seen


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_log_messages_sent_before_an_answer_reach_on_log_before_the_call_returns(versions: list[str] | None) -> None:
    """The server logs during a call, then answers: a slow ``on_log`` had its messages after the
    call returned (the answer resolved the call at once; noted at the last stop). The official
    SDK hands them over first; so does this client, within the call's time."""
    seen: list[str] = []
    when_returned: list[str] = []

    async def on_log(params: Any) -> None:
        await asyncio.sleep(0.2)
        seen.append(params.data)

    async def returned() -> None:
        when_returned.extend(seen)

    async def scenario() -> None:
        await call_chatty(versions, returned, on_log=on_log, log_level="debug")

    run(scenario)
    assert when_returned == ["too fine", "disk almost full"]


@pytest.mark.parametrize("versions", [None, ["2025-11-25"]], ids=["modern", "legacy"])
def test_on_notification_has_every_notification_of_the_server_in_order_before_the_call_returns(
    versions: list[str] | None, caplog: pytest.LogCaptureFixture
) -> None:
    """A spec-change review: a client had no public way to receive a notification it has no
    dedicated callback for (only ``on_log``, ``on_progress``), such as one a newer revision adds.
    ``on_notification`` has each as ``(method, params)``, in order, one at a time, beside
    ``on_log``, and a call returns once it has had those sent before the answer."""
    seen: list[tuple[str, Any]] = []
    logged: list[Any] = []
    when_returned: list[tuple[str, Any]] = []

    def on_log(params: Any) -> None:
        logged.append(params.data)

    async def on_notification(method: str, params: Any) -> None:
        await asyncio.sleep(0.1)
        seen.append((method, params.data))
        if params.data == "too fine":
            raise RuntimeError("a callback's own failure")  # logged by its name; the next still comes

    async def returned() -> None:
        when_returned.extend(seen)

    async def scenario() -> None:
        await call_chatty(versions, returned, on_log=on_log, on_notification=on_notification, log_level="debug")

    run(scenario)
    assert when_returned == [("notifications/message", "too fine"), ("notifications/message", "disk almost full")]
    assert logged == ["too fine", "disk almost full"]
    assert [r.getMessage() for r in caplog.records if r.exc_info] == ["the on_notification callback failed"]


def test_a_write_to_a_server_that_has_exited_says_it_exited() -> None:
    """Seen in CI under load: a server that printed a line and exited was told, at the client's
    first write, as "the server process closed its input: ConnectionResetError(...)" (the write
    came before asyncio had reaped it); it is told as the reader tells an exit, with its code."""
    from mcpgen._runtime.client.stdio import StdioTransport

    class Quiet:
        async def receive(self, data: bytes, answer_to: Any = None, stream_of: Any = None) -> None:
            pass

        def awaiting(self, request_id: Any) -> bool:
            return False

        def transport_failed(self, request_id: Any, error: Any) -> None:
            pass

        def unreadable(self, what: str) -> None:
            pass

    async def go() -> str:
        transport = StdioTransport([sys.executable, "-c", "import sys; sys.stdin.close()"])
        await transport.start(Quiet())
        time.sleep(1.5)  # the loop blocked: the process exits and is not reaped yet
        message = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {}}
        try:
            for _ in range(50):  # a pipe's buffer may take the first writes
                await transport.send(message)
        except TransportError as exc:
            return str(exc)
        finally:
            await transport.close()
        return "every write was taken"

    assert asyncio.run(go()) == "the server process exited (code 0)"
