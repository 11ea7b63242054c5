"""The client's OAuth pieces on their own: challenges, discovery URLs and validation, the
authorization response checks (RFC 9207), scope union, token stores, the loopback redirect.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import httpx
import pytest
from mcpgen._runtime.client import AuthorizationError
from mcpgen._runtime.client.auth import (
    AuthorizationResponse,
    Challenge,
    ClientInfo,
    FileTokenStore,
    LoopbackRedirect,
    MemoryTokenStore,
    Registration,
    ServerMetadata,
    Tokens,
    canonical_resource,
    parse_www_authenticate,
    union_scopes,
)
from mcpgen._runtime.client.auth.grants import check_authorization_response, redirect_allowed
from mcpgen._runtime.client.auth.metadata import (
    _fetch_json,
    check_secure,
    discover_resource,
    exchange,
    resource_covers,
    resource_metadata_urls,
    server_metadata_urls,
)

ISSUER = "https://auth.example.com"


def test_www_authenticate_parsing() -> None:
    header = 'Bearer realm="mcp", scope="a b", error="insufficient_scope", Basic realm="x\\"y", Negotiate abc=='
    assert parse_www_authenticate([header]) == [
        ("bearer", {"realm": "mcp", "scope": "a b", "error": "insufficient_scope"}),
        ("basic", {"realm": 'x"y'}),
        ("negotiate", {}),
    ]
    assert parse_www_authenticate(["BEARER Resource_Metadata=https://x/y, Scope=z", "DPoP algs=ES256"]) == [
        ("bearer", {"resource_metadata": "https://x/y", "scope": "z"}),
        ("dpop", {"algs": "ES256"}),
    ]
    assert parse_www_authenticate(['Bearer scope="a", scope="b"']) == [("bearer", {"scope": "a"})]
    assert parse_www_authenticate(["Bearer", ""]) == [("bearer", {})]
    assert parse_www_authenticate(['Bearer scope="a", ="broken" tail']) == [("bearer", {"scope": "a"})]


def response(status: int, *challenges: str) -> httpx.Response:
    return httpx.Response(status, headers=[("www-authenticate", c) for c in challenges])


def test_which_responses_are_challenges() -> None:
    assert Challenge.of(response(200)) is None
    assert Challenge.of(response(404, 'Bearer error="invalid_token"')) is None
    assert Challenge.of(response(403)) is None  # forbidden for other reasons: not ours to fix
    assert Challenge.of(response(403, 'Bearer error="invalid_token"')) is None
    bare = Challenge.of(response(401))
    assert bare is not None and bare.scope is None and bare.resource_metadata is None
    step_up = Challenge.of(response(403, 'Basic realm="x"', 'Bearer error="insufficient_scope", scope="w"'))
    assert step_up is not None and step_up.insufficient_scope and step_up.scope == "w"
    blank = Challenge.of(response(401, 'Bearer scope=" ", resource_metadata="https://m/x"'))
    assert blank is not None and blank.scope is None and blank.resource_metadata == "https://m/x"


def test_resource_metadata_urls_in_the_specifications_order() -> None:
    assert resource_metadata_urls("https://example.com/public/mcp", None) == [
        "https://example.com/.well-known/oauth-protected-resource/public/mcp",
        "https://example.com/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://example.com/", "https://example.com/custom.json") == [
        "https://example.com/custom.json",
        "https://example.com/.well-known/oauth-protected-resource",
    ]


def test_server_metadata_urls_in_the_specifications_order() -> None:
    assert server_metadata_urls("https://auth.example.com/tenant1/") == [
        "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://auth.example.com/.well-known/openid-configuration/tenant1",
        "https://auth.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://auth.example.com") == [
        "https://auth.example.com/.well-known/oauth-authorization-server",
        "https://auth.example.com/.well-known/openid-configuration",
    ]


def test_canonical_resource_and_coverage() -> None:
    assert canonical_resource("HTTPS://MCP.Example.com/mcp?x=1#f") == "https://mcp.example.com/mcp"
    assert canonical_resource("https://mcp.example.com/") == "https://mcp.example.com"
    assert resource_covers("https://mcp.example.com", "https://mcp.example.com/mcp")
    assert resource_covers("https://MCP.example.com:443/mcp/", "https://mcp.example.com/mcp")
    assert resource_covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp/sub")
    assert not resource_covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcpx")
    assert not resource_covers("https://mcp.example.com/mcp/sub", "https://mcp.example.com/mcp")
    assert not resource_covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not resource_covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert not resource_covers("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp")
    # found by a review: a fragment was taken, and sent on as the token's resource
    assert not resource_covers("https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp")
    assert not resource_covers("https://mcp.example.com#", "https://mcp.example.com/mcp")


def test_oauth_traffic_needs_https_except_on_loopback() -> None:
    for url in ("https://auth.example.com", "http://127.0.0.1:8000", "http://localhost/x", "http://[::1]:9"):
        assert check_secure(url, "issuer", allow_http=False) == url
    with pytest.raises(AuthorizationError, match="not an https URL"):
        check_secure("http://auth.example.com", "issuer", allow_http=False)
    assert check_secure("http://auth.example.com", "issuer", allow_http=True)
    with pytest.raises(AuthorizationError):
        check_secure("ftp://auth.example.com", "issuer", allow_http=True)


def metadata(**overrides: object) -> ServerMetadata:
    doc = {
        "issuer": ISSUER,
        "authorization_endpoint": f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "code_challenge_methods_supported": ["S256"],
        **overrides,
    }
    return ServerMetadata.parse(doc, f"{ISSUER}/.well-known/oauth-authorization-server", ISSUER, allow_http=False)


def test_server_metadata_must_name_the_issuer_it_was_fetched_for() -> None:
    assert metadata().token_endpoint_auth_methods_supported == ("client_secret_basic",)  # RFC 8414 default
    for stated in ("https://honest.example.com", f"{ISSUER}/", "HTTPS://auth.example.com", None):
        with pytest.raises(AuthorizationError, match="names issuer"):
            metadata(issuer=stated)
    with pytest.raises(AuthorizationError, match="not an https URL"):
        metadata(token_endpoint="http://auth.example.com/token")
    with pytest.raises(AuthorizationError, match="no token_endpoint"):
        metadata(token_endpoint=None)


def answer(**params: str) -> AuthorizationResponse:
    return AuthorizationResponse(params)


@pytest.mark.parametrize("advertised", [True, False])
def test_rfc9207_a_present_iss_must_equal_the_issuer_exactly(advertised: bool) -> None:
    meta = metadata(authorization_response_iss_parameter_supported=advertised)
    assert check_authorization_response(answer(code="c", state="s", iss=ISSUER), meta, "s") == "c"
    for wrong in ("https://evil.example.com", f"{ISSUER}/", "HTTPS://auth.example.com", "https://auth.example.com:443"):
        with pytest.raises(AuthorizationError, match="names issuer") as caught:
            check_authorization_response(answer(code="c", state="s", iss=wrong, error="access_denied"), meta, "s")
        assert "access_denied" not in str(caught.value)  # nothing from a mismatched response is shown


def test_rfc9207_an_absent_iss_is_refused_only_when_advertised() -> None:
    assert check_authorization_response(answer(code="c", state="s"), metadata(), "s") == "c"
    with pytest.raises(AuthorizationError, match="lacks the 'iss'"):
        check_authorization_response(
            answer(code="c", state="s"), metadata(authorization_response_iss_parameter_supported=True), "s"
        )


def test_state_and_errors_of_the_authorization_response() -> None:
    with pytest.raises(AuthorizationError, match="state"):
        check_authorization_response(answer(code="c", state="other"), metadata(), "s")
    with pytest.raises(AuthorizationError, match="state"):
        check_authorization_response(answer(code="c"), metadata(), "s")
    with pytest.raises(AuthorizationError, match=r"refused: access_denied \(the user said no\)"):
        check_authorization_response(
            answer(error="access_denied", error_description="the user said no", state="s", iss=ISSUER), metadata(), "s"
        )
    with pytest.raises(AuthorizationError, match="no code"):
        check_authorization_response(answer(state="s"), metadata(), "s")


def test_union_of_scopes() -> None:
    assert union_scopes("a b", "b c", None, "") == "a b c"
    assert union_scopes(None, None) is None
    assert union_scopes("  ", "x") == "x"


def test_loopback_redirects_may_change_port() -> None:
    registered = ("http://127.0.0.1:5000/callback",)
    assert redirect_allowed("http://127.0.0.1:6000/callback", registered)
    assert not redirect_allowed("http://127.0.0.1:6000/other", registered)
    assert not redirect_allowed("https://app.example.com/callback", ("https://app.example.com:8443/callback",))


def test_secrets_stay_out_of_reprs() -> None:
    tokens = Tokens("access-SECRET", ISSUER, "https://mcp/x", refresh_token="refresh-SECRET")
    client = ClientInfo("id", "client-SECRET")
    registration = Registration("id", "reg-SECRET", private_key="-----BEGIN PRIVATE KEY----- key-SECRET")
    response = AuthorizationResponse({"code": "code-SECRET", "state": "s"})
    for thing in (tokens, client, registration, response):
        assert "SECRET" not in repr(thing)


def test_file_token_store_round_trip_and_permissions(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "oauth.json"
    store = FileTokenStore(path)
    tokens = Tokens("at", ISSUER, "https://mcp/x", refresh_token="rt", expires_at=123.0, scope="a b")
    client = ClientInfo("id", "secret", "client_secret_basic", ("http://127.0.0.1:1/cb",))

    async def go() -> tuple[Tokens | None, ClientInfo | None, Tokens | None]:
        await store.set_tokens("https://mcp/x", tokens)
        await store.set_client(ISSUER, client)
        again = FileTokenStore(path)
        found = await again.get_tokens("https://mcp/x"), await again.get_client(ISSUER)
        await again.delete_tokens("https://mcp/x")
        return *found, await store.get_tokens("https://mcp/x")

    found_tokens, found_client, deleted = asyncio.run(go())
    assert found_tokens == tokens and found_client == client and deleted is None
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["oauth.json"]  # no temporary left behind


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"tokens": {"https://mcp/x": {"unknown": 1}}}'])
def test_a_file_token_store_ignores_what_it_cannot_read(tmp_path: Path, content: str) -> None:
    path = tmp_path / "oauth.json"
    path.write_text(content)

    async def go() -> Tokens | None:
        store = FileTokenStore(path)
        assert await store.get_tokens("https://mcp/x") is None
        await store.set_tokens("https://mcp/y", Tokens("at", ISSUER, "https://mcp/y"))
        return await store.get_tokens("https://mcp/y")

    assert asyncio.run(go()) is not None
    assert set(json.loads(path.read_text())) == {"clients", "tokens"}


def test_memory_token_store() -> None:
    async def go() -> None:
        store = MemoryTokenStore()
        await store.set_client(ISSUER, ClientInfo("id"))
        assert (await store.get_client(ISSUER)) == ClientInfo("id")
        await store.delete_client(ISSUER)
        assert await store.get_client(ISSUER) is None

    asyncio.run(go())


def test_the_loopback_redirect_receives_the_authorization_response() -> None:
    async def go() -> tuple[AuthorizationResponse, list[int], str, str]:
        statuses: list[int] = []

        async def browser(url: str) -> None:
            async with httpx.AsyncClient() as http:
                statuses.append(
                    (await http.get(redirect.redirect_uri.replace("/callback", "/favicon.ico"))).status_code
                )
                statuses.append((await http.get(f"{redirect.redirect_uri}?code=abc&state=xyz&iss=x")).status_code)

        redirect = LoopbackRedirect(open_browser=browser)
        first = redirect.redirect_uri
        got = await redirect("https://auth.example.com/authorize?x=1")
        again = redirect.redirect_uri  # the same listener for the next authorization
        redirect.close()
        return got, statuses, first, again

    got, statuses, first, again = asyncio.run(go())
    assert (got.code, got.state, got.iss) == ("abc", "xyz", "x")
    assert statuses == [404, 200]
    assert first == again and first.startswith("http://127.0.0.1:") and first.endswith("/callback")


def test_an_idle_connection_to_the_loopback_redirect_holds_up_nothing() -> None:
    """Found by an OAuth review: one connection that sends nothing (a browser's speculative
    preconnect) held the listener's only thread: the redirect went unanswered and the call never
    returned, even past its own timeout."""
    import socket

    async def go() -> AuthorizationResponse:
        async def browser(url: str) -> None:
            port = int(redirect.redirect_uri.split(":")[2].split("/")[0])
            idle.append(socket.create_connection(("127.0.0.1", port)))  # sends nothing
            async with httpx.AsyncClient(timeout=5) as http:
                await http.get(f"{redirect.redirect_uri}?code=c&state=s")

        idle: list[socket.socket] = []
        redirect = LoopbackRedirect(open_browser=browser, timeout=10)
        try:
            async with asyncio.timeout(15):
                return await redirect("https://auth.example.com/authorize")
        finally:
            redirect.close()
            for sock in idle:
                sock.close()

    got = asyncio.run(go())
    assert (got.code, got.state) == ("c", "s")


def test_a_resource_metadata_url_read_in_clear_is_refused() -> None:
    """The challenge's resource metadata names the authorization servers the user is sent to: one
    at a plain http URL (not loopback) is refused before it is fetched."""
    fetched: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        fetched.append(str(request.url))
        return httpx.Response(404)

    async def go() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            with pytest.raises(
                AuthorizationError, match=r"resource metadata URL 'http://10\.0\.0\.7/prm' is not an https"
            ):
                await discover_resource(http, "https://mcp.example.com/mcp", "http://10.0.0.7/prm")

    asyncio.run(go())
    assert fetched == []


def test_an_oauth_exchange_is_bounded_in_time_and_size() -> None:
    """Found by an OAuth review: the client's timeout bounds each read, so metadata sent a byte a
    read held discovery for ever, and a 300 MB document was read whole (1.2 GB of memory)."""
    import socket
    import threading
    import time

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    stop = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n")
            while not stop.is_set():
                try:
                    conn.sendall(b" ")
                except OSError:
                    return
                time.sleep(0.1)

    threading.Thread(target=drip, daemon=True).start()

    def huge(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b" " * (2 << 20))

    async def go() -> tuple[float, str, str]:
        async with httpx.AsyncClient(timeout=0.5) as http:
            started = time.monotonic()
            slow_doc, slow, _ = await _fetch_json(http, f"http://127.0.0.1:{listener.getsockname()[1]}/meta")
            took = time.monotonic() - started
        assert slow_doc is None
        async with httpx.AsyncClient(transport=httpx.MockTransport(huge)) as http:
            big_doc, big, _ = await _fetch_json(http, "https://as.example.com/meta")
            assert big_doc is None
            with pytest.raises(httpx.ReadError, match="larger than 1048576 bytes"):
                await exchange(http, "GET", "https://as.example.com/meta")
        return took, slow, big

    try:
        took, slow, big = asyncio.run(go())
    finally:
        stop.set()
        listener.close()
    assert took < 3 and "ReadTimeout" in slow, (took, slow)
    assert "ReadError" in big


def test_the_loopback_redirect_gives_up_after_its_timeout() -> None:
    redirect = LoopbackRedirect(open_browser=lambda url: None, timeout=0.2)
    with pytest.raises(TimeoutError, match="no authorization response"):
        asyncio.run(redirect("https://auth.example.com/authorize"))
    redirect.close()
