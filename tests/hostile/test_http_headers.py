"""Issue 17 rows 2, 3, 7 and 10: the Streamable HTTP headers, against the everything server under uvicorn.

- 2026-07-28 requests: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``
  must be present (where required), single, header-safe and match the body (400, -32020),
  whatever ``Mcp-Session-Id`` comes with them; a session id on a modern request is ignored.
- Legacy sessions: an ``MCP-Protocol-Version`` that is not the session's revision is 400.
- ``Mcp-Param-*`` integers: ASCII JSON numbers compared numerically, anything else -32020.
- GET and DELETE: 405 (with ``Allow``) without a session, 404 for an unknown one; deleting a
  session ends its GET stream.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from tests.hostile.probe import (
    HttpServer,
    Response,
    modern,
    modern_headers,
    receive_until,
)


@pytest.fixture(scope="module")
def http() -> Iterator[HttpServer]:
    with HttpServer() as server:
        yield server


@pytest.fixture
def session(http: HttpServer) -> str:
    return http.legacy_session()


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def custom(priority: Any = 7, region: Any = "us-west1") -> dict[str, Any]:
    return modern(
        1, "tools/call", {"name": "test_custom_headers", "arguments": {"region": region, "priority": priority}}
    )


def header_list(body: dict[str, Any], **extra: str) -> list[tuple[str, str]]:
    return [*modern_headers(body).items(), *extra.items()]


def assert_mismatch(reply: Response, rid: Any = 1) -> None:
    assert reply.status == 400, reply
    body = reply.json()
    assert body["error"]["code"] == -32020 and body["id"] == rid, body


# -- row 2: a legacy session id does not switch the checks off ------------------------------


def test_modern_request_with_a_legacy_session_id_is_still_checked(http: HttpServer, session: str) -> None:
    body = modern(1, "tools/call", {"name": "test_simple_text"})
    sid = ("mcp-session-id", session)
    no_method = [(k, v) for k, v in header_list(body) if k != "mcp-method"]
    assert_mismatch(http.request(body, [*no_method, sid]))
    wrong = [(k, "tools/list" if k == "mcp-method" else v) for k, v in header_list(body)]
    assert_mismatch(http.request(body, [*wrong, sid]))
    no_name = [(k, v) for k, v in header_list(body) if k != "mcp-name"]
    assert_mismatch(http.request(body, [*no_name, sid]))
    ok = http.request(body, [*header_list(body), sid])
    assert ok.status == 200 and "result" in ok.json() and "mcp-session-id" not in ok.headers, ok


def test_a_stray_session_id_on_a_modern_request_is_ignored(http: HttpServer) -> None:
    body = modern(1, "tools/call", {"name": "test_simple_text"})
    for sid in ("no-such-session", "0" * 32, "x"):
        reply = http.request(body, [*header_list(body), ("mcp-session-id", sid)])
        assert reply.status == 200 and "result" in reply.json(), reply
        assert "mcp-session-id" not in reply.headers


@pytest.mark.parametrize(
    "name", ["mcp-method", "Mcp-Name", "MCP-PROTOCOL-VERSION", "mcp-param-region", "Mcp-Param-Priority"]
)
@pytest.mark.parametrize("same", [True, False], ids=["same-value", "other-value"])
def test_a_repeated_mcp_header_is_32020(http: HttpServer, name: str, same: bool) -> None:
    body = custom()
    headers = header_list(body, **{"mcp-param-region": "us-west1", "mcp-param-priority": "7"})
    value = next(v for k, v in headers if k == name.lower())
    first, second = (value, value) if same else ("decoy", value)
    headers = [(k, v) for k, v in headers if k != name.lower()]
    assert_mismatch(http.request(body, [(name, first), *headers, (name.upper(), second)]))
    http.alive()


def test_a_repeated_session_id_on_a_legacy_request_is_refused(http: HttpServer, session: str) -> None:
    other = http.legacy_session()
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for ids in ((session, other), (session, session)):
        reply = http.request(ping, [("mcp-session-id", ids[0]), ("Mcp-Session-Id", ids[1])])
        assert reply.status == 400, reply


@pytest.mark.parametrize(
    "header, value",
    [
        ("mcp-name", "test_simple_text\x7f"),
        ("mcp-name", "test_simple_t\xe9xt"),
        ("mcp-method", "tools/c\xe0ll"),
        ("mcp-protocol-version", "2026-07-28\xa0"),
        ("mcp-name", "test_simple_text\x01"),
    ],
)
def test_invalid_characters_in_mcp_headers_are_refused(http: HttpServer, header: str, value: str) -> None:
    body = modern(1, "tools/call", {"name": "test_simple_text"})
    headers = [(k, v) for k, v in header_list(body) if k != header] + [(header, value)]
    reply = http.request(body, headers)
    assert reply.status == 400, reply
    if reply.headers.get("content-type") == "application/json":
        assert reply.json()["error"]["code"] == -32020
    http.alive()


def test_optional_whitespace_around_a_header_value_is_not_part_of_it(http: HttpServer) -> None:
    body = modern(1, "tools/call", {"name": "test_simple_text"})
    padded = [(k, f" \t{v}\t ") for k, v in header_list(body)]
    reply = http.request(body, padded)
    assert reply.status == 200 and "result" in reply.json(), reply


def test_a_non_ascii_name_must_match_in_base64(http: HttpServer) -> None:
    body = modern(1, "prompts/get", {"name": "t\u00e9st"})
    raw = [(k, v) for k, v in header_list(body) if k != "mcp-name"]
    utf8_as_latin1 = "t\u00e9st".encode().decode("latin-1")
    assert_mismatch(http.request(body, [*raw, ("mcp-name", utf8_as_latin1)]))
    encoded = http.request(body, [*raw, ("mcp-name", b64("t\u00e9st"))])
    assert encoded.status == 400 and encoded.json()["error"]["code"] == -32602  # matched; the prompt is unknown


# -- row 3: legacy sessions check MCP-Protocol-Version -------------------------------------------


@pytest.mark.parametrize(
    "version", ["garbage", "2025-13-45", "", "2099-01-01", "2026-07-28", "2025-06-18", "2025-11-25 ", "2025-11-25,x"]
)
def test_a_legacy_session_refuses_another_protocol_version(http: HttpServer, session: str, version: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    reply = http.request(ping, {"mcp-session-id": session, "mcp-protocol-version": version})
    if version == "2025-11-25 ":  # optional whitespace around a field value is not part of it
        assert reply.status == 200 and reply.json()["result"] == {}, reply
        return
    assert reply.status == 400, reply
    error = reply.json()
    assert error["id"] == 2 and error["error"]["code"] == -32600, error


def test_a_legacy_session_takes_its_own_version_or_none(http: HttpServer) -> None:
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    for version in ("2025-11-25", "2025-06-18", "2025-03-26"):
        sid = http.legacy_session(version)
        assert http.request(ping, {"mcp-session-id": sid, "mcp-protocol-version": version}).json()["result"] == {}
        assert http.request(ping, {"mcp-session-id": sid}).json()["result"] == {}
        refused = http.request(ping, {"mcp-session-id": sid, "mcp-protocol-version": "2024-11-05"})
        assert refused.status == 400


# -- row 7: Mcp-Param-* values ----------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        "\u0661\u0662",  # Arabic-Indic digits, raw (latin-1 cannot carry them: sent as UTF-8 bytes)
        b64("\u0661\u0662"),
        b64("\u00b2"),
        b64("\uff17"),  # fullwidth 7
        "7.5",
        "0x7",
        "7abc",
        "NaN",
        "Infinity",
        b64("7\x00"),
        "=?base64?not base64?=",
        "",
        "1e999999999",
    ],
)
def test_a_bad_integer_param_header_is_32020(http: HttpServer, header: str) -> None:
    body = custom(priority=7)
    value = header.encode().decode("latin-1")
    reply = http.request(body, header_list(body, **{"mcp-param-region": "us-west1", "mcp-param-priority": value}))
    assert_mismatch(reply)
    http.alive()


@pytest.mark.parametrize("header", ["7", "7.0", "07", "7e0", "0.7e1", "+7", b64("7")])
def test_an_integer_param_header_is_compared_numerically(http: HttpServer, header: str) -> None:
    body = custom(priority=7)
    reply = http.request(body, header_list(body, **{"mcp-param-region": "us-west1", "mcp-param-priority": header}))
    assert reply.status == 200 and "result" in reply.json(), reply


def test_string_param_headers_are_ascii_or_base64(http: HttpServer) -> None:
    body = custom(region="caf\u00e9")
    raw = "caf\u00e9".encode().decode("latin-1")
    assert_mismatch(http.request(body, header_list(body, **{"mcp-param-region": raw, "mcp-param-priority": "7"})))
    latin = http.request(body, header_list(body, **{"mcp-param-region": "caf\u00e9", "mcp-param-priority": "7"}))
    assert_mismatch(latin)
    ok = http.request(body, header_list(body, **{"mcp-param-region": b64("caf\u00e9"), "mcp-param-priority": "7"}))
    assert ok.status == 200, ok
    missing = http.request(body, header_list(body, **{"mcp-param-priority": "7"}))
    assert_mismatch(missing)


# -- row 10: GET and DELETE ---------------------------------------------------------------------


def test_get_and_delete_without_a_session_are_405_with_allow(http: HttpServer) -> None:
    for method in ("GET", "DELETE", "PUT", "PATCH", "OPTIONS"):
        reply = http.request(method=method, headers={"accept": "text/event-stream"})
        assert reply.status == 405, (method, reply)
        allowed = {m.strip() for m in reply.headers["allow"].split(",")}
        assert allowed == {"GET", "POST", "DELETE"}, reply.headers


def test_get_and_delete_with_an_unknown_session_are_404(http: HttpServer) -> None:
    for method in ("GET", "DELETE"):
        reply = http.request(method=method, headers={"mcp-session-id": "no-such-session"})
        assert reply.status == 404, (method, reply)


def test_deleting_a_session_ends_its_get_stream(http: HttpServer, session: str) -> None:
    with http.connect() as sock:
        sock.sendall(
            f"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n"
            "mcp-protocol-version: 2025-11-25\r\n\r\n".encode()
        )
        opened = receive_until(sock, lambda data: b"stream open" in data)
        assert b" 200 " in opened.split(b"\r\n", 1)[0]
        assert http.request(method="DELETE", headers={"mcp-session-id": session}).status == 200
        ended = receive_until(sock, lambda data: data.endswith(b"0\r\n\r\n"), timeout=5)
        assert ended
    assert http.request(method="GET", headers={"mcp-session-id": session}).status == 404


def test_405_responses_are_complete_and_the_connection_kept(http: HttpServer) -> None:
    with http.connect() as sock:
        sock.sendall(b"DELETE /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\nGET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        both = receive_until(sock, lambda data: data.count(b"method not allowed") == 2)
        assert both.count(b"HTTP/1.1 405 ") == 2
