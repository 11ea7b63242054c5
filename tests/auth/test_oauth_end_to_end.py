"""Our OAuth client against our protected server and a real authorization server, on loopback.

The authorization server is authlib's (``authorization_server.py``); the MCP server is our
runtime's app protected by its own ``ResourceServer`` (``asgi_app(auth=...)``), verifying JWT
access tokens against the authorization server's JWKS, or asking its introspection endpoint. The user's
browser is an HTTP client that follows the authorization endpoint's redirect to the
client's loopback listener. Both eras: the modern probe and the legacy ``initialize``.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcpgen import connect
from mcpgen._runtime.client import AuthorizationError, BaseClient
from mcpgen._runtime.client.auth import FileTokenStore, LoopbackRedirect, OAuth, Registration
from mcpgen._runtime.server.auth import (
    DPoPProofs,
    IntrospectionVerifier,
    JWTVerifier,
    Principal,
    ProtectedResource,
    ResourceServer,
    ScopePolicy,
    TokenVerifier,
)
from mcpgen._runtime.tls import default_context

from tests.auth.authorization_server import RESOURCE_SERVER, Client, TestAuthorizationServer, serving
from tests.auth.protected import Exchange, Notes, Observed, listening_socket
from tests.auth.protected import serving as serve_app

ERAS = ["2026-07-28", "2025-11-25"]
POLICY = ScopePolicy(default=frozenset({"mcp:read"}), tools={"write_note": frozenset({"mcp:write"})})


@pytest.fixture
def authorization_server() -> Iterator[TestAuthorizationServer]:
    yield from serving()


async def browse(url: str) -> None:
    """The user's browser: the authorization server approves at once and redirects to the client."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=10.0, verify=default_context()) as browser:
        response = await browser.get(url)
    assert response.status_code == 200, response.text


async def no_browser(url: str) -> None:
    raise AssertionError(f"the client asked the user to authorize again: {url}")


@dataclass
class Endpoint:
    url: str
    observed: Observed
    notes: Notes

    def denials(self) -> list[Exchange]:
        return self.observed.refused()

    def principals(self) -> list[Principal]:
        return self.notes.principals()


@asynccontextmanager
async def endpoint(
    server: TestAuthorizationServer,
    *,
    introspect: bool = False,
    policy: ScopePolicy = POLICY,
    dpop: DPoPProofs | None = None,
) -> AsyncIterator[Endpoint]:
    """Our Notes server, protected, on a loopback port; tokens for its /mcp URL only."""
    sock = listening_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    resource = ProtectedResource(url, (server.issuer,), scopes_supported=("mcp:read",))
    verifier: TokenVerifier
    if introspect:
        client_id, secret = RESOURCE_SERVER
        verifier = IntrospectionVerifier(
            endpoint=f"{server.issuer}/introspect", audience=url, client_id=client_id, client_secret=secret
        )
    else:
        verifier = JWTVerifier(issuer=server.issuer, audience=url, jwks_uri=f"{server.issuer}/jwks")
    notes = Notes()
    observed = Observed(notes.asgi_app(auth=ResourceServer(verifier, resource, policy, dpop=dpop)))
    async with serve_app(observed, sock):
        yield Endpoint(url, observed, notes)


async def call(client: BaseClient, tool: str, **arguments: Any) -> str:
    result = await client.request("tools/call", {"name": tool, "arguments": arguments})
    return str(result.content[0].text)


@pytest.mark.parametrize("version", ERAS)
def test_discovery_registration_pkce_token_call_and_step_up(
    authorization_server: TestAuthorizationServer, version: str
) -> None:
    server = authorization_server

    async def go() -> Endpoint:
        async with endpoint(server) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=browse), client_name="e2e client")
            async with await connect(ep.url, versions=[version], auth=auth, cache=None) as client:
                assert client.version == version
                await client.request("tools/list", {})
                assert await call(client, "read_notes") == "(none)"
                assert await call(client, "write_note", text="hello") == "hello"  # needs mcp:write: step-up
            return ep

    ep = asyncio.run(go())
    registrations = server.seen("/register")
    assert len(registrations) == 1
    assert registrations[0]["application_type"] == "native"
    assert "refresh_token" in registrations[0]["grant_types"]

    first, second = server.seen("/authorize")
    assert first["resource"] == second["resource"] == ep.url
    assert first["code_challenge_method"] == second["code_challenge_method"] == "S256"
    assert first["redirect_uri"] == second["redirect_uri"]  # one loopback listener for both
    assert first["scope"].split() == ["mcp:read", "offline_access"]  # the challenge's scope, and refresh tokens
    assert set(second["scope"].split()) == {"mcp:read", "offline_access", "mcp:write"}  # union with the challenge

    exchanges = server.seen("/token")
    assert [t["grant_type"] for t in exchanges] == ["authorization_code", "authorization_code"]
    assert all(t["resource"] == ep.url and len(t["code_verifier"]) >= 43 for t in exchanges)

    denials = ep.denials()
    assert [d.status for d in denials] == [401, 403]
    assert denials[0].challenge["resource_metadata"] == ep.url.replace(
        "/mcp", "/.well-known/oauth-protected-resource/mcp"
    )
    assert denials[1].method == "tools/call" and denials[1].error == "insufficient_scope"
    principals = ep.principals()
    assert principals and all(p.subject == "user-1" and p.audience == (ep.url,) for p in principals)
    assert {"mcp:read", "mcp:write"} <= principals[-1].scopes
    assert ep.notes.notes == ["hello"]


def test_tokens_persist_in_a_file_and_are_refreshed_when_expired(
    authorization_server: TestAuthorizationServer, tmp_path: Path
) -> None:
    server = authorization_server
    path = tmp_path / "oauth.json"

    async def go() -> None:
        async with endpoint(server) as ep:
            first = OAuth(LoopbackRedirect(open_browser=browse), store=FileTokenStore(path))
            async with await connect(ep.url, auth=first, cache=None) as client:
                await call(client, "read_notes")
            saved = json.loads(path.read_text())
            (record,) = saved["tokens"].values()
            record["expires_at"] = time.time() - 60  # an hour later
            path.write_text(json.dumps(saved))
            later = OAuth(LoopbackRedirect(open_browser=no_browser), store=FileTokenStore(path))
            async with await connect(ep.url, auth=later, cache=None) as client:
                await call(client, "read_notes")
            assert [d.status for d in ep.denials()] == [401]  # only the very first request

    asyncio.run(go())
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert len(server.seen("/authorize")) == 1
    grants = [t["grant_type"] for t in server.seen("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    refreshed = server.seen("/token")[1]
    assert refreshed["resource"].endswith("/mcp")
    rotated = [t for t in server.tokens.values() if t.revoked]
    assert rotated, "the authorization server rotated the refresh token"


def test_a_revoked_access_token_is_refreshed_after_the_401(authorization_server: TestAuthorizationServer) -> None:
    server = authorization_server

    async def go() -> Endpoint:
        async with endpoint(server, introspect=True) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(ep.url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
                server.revoke_access_tokens()
                await call(client, "read_notes")  # 401 invalid_token: the refresh token still works
                assert await call(client, "write_note", text="after") == "after"  # 403: a new authorization
            return ep

    ep = asyncio.run(go())
    grants = [t["grant_type"] for t in server.seen("/token")]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]
    assert len(server.seen("/authorize")) == 2
    assert [(d.status, d.error) for d in ep.denials()] == [
        (401, None),
        (401, "invalid_token"),
        (403, "insufficient_scope"),
    ]
    assert ep.notes.notes == ["after"]


def test_client_credentials(authorization_server: TestAuthorizationServer) -> None:
    server = authorization_server
    server.add_client(Client("machine", "machine-secret", [], ["client_credentials"], "client_secret_basic"))

    async def go() -> Endpoint:
        async with endpoint(server) as ep:
            auth = OAuth.client_credentials("machine", "machine-secret")
            async with await connect(ep.url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
            return ep

    ep = asyncio.run(go())
    (exchange,) = server.seen("/token")
    assert exchange["grant_type"] == "client_credentials"
    assert exchange["authorization"] == "basic"
    assert exchange["resource"] == ep.url and exchange["scope"] == "mcp:read"
    assert {p.subject for p in ep.principals()} == {"machine"}
    assert not server.seen("/authorize") and not server.seen("/register")


def test_a_pre_registered_client_needs_no_registration() -> None:
    server = TestAuthorizationServer(registration=False)
    with server:
        server.add_client(
            Client(
                "desktop", "desktop-secret", ["http://127.0.0.1/callback"], ["authorization_code"], "client_secret_post"
            )
        )

        async def go() -> None:
            async with endpoint(server) as ep:
                registration = Registration(
                    "desktop", "desktop-secret", token_endpoint_auth_method="client_secret_post"
                )
                auth = OAuth(LoopbackRedirect(open_browser=browse), registration=registration)
                async with await connect(ep.url, auth=auth, cache=None) as client:
                    await call(client, "read_notes")

        asyncio.run(go())
        assert not server.seen("/register")
        (exchange,) = server.seen("/token")
        assert exchange["client_id"] == "desktop" and exchange["client_secret"] == "desktop-secret"


def test_a_scope_the_server_never_grants_ends_in_one_step_up(authorization_server: TestAuthorizationServer) -> None:
    policy = ScopePolicy(default=frozenset({"mcp:read"}), tools={"write_note": frozenset({"mcp:admin"})})

    async def go() -> str:
        async with endpoint(authorization_server, policy=policy) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(ep.url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
                with pytest.raises(AuthorizationError) as caught:
                    await call(client, "write_note", text="x")
                await call(client, "read_notes")  # the client still works for what it may do
            return str(caught.value)

    message = asyncio.run(go())
    assert "403" in message and "insufficient_scope" in message and "giving up" in message
    assert len(authorization_server.seen("/authorize")) == 2


def test_without_auth_a_401_is_an_authorization_error_not_a_legacy_fallback(
    authorization_server: TestAuthorizationServer,
) -> None:
    async def go() -> tuple[str, Endpoint]:
        async with endpoint(authorization_server) as ep:
            with pytest.raises(AuthorizationError) as caught:
                await connect(ep.url, cache=None)
            return str(caught.value), ep

    message, ep = asyncio.run(go())
    assert "HTTP 401" in message and "resource_metadata=" in message and "auth=OAuth" in message
    assert [e.method for e in ep.observed.exchanges] == ["server/discover"]
    assert not ep.notes.calls


def test_an_authorization_server_without_pkce_s256_is_refused(authorization_server: TestAuthorizationServer) -> None:
    server = authorization_server
    advertised = server.metadata()
    del advertised["code_challenge_methods_supported"]
    server.metadata = lambda: advertised  # type: ignore[method-assign]

    async def go() -> str:
        async with endpoint(server) as ep:
            with pytest.raises(AuthorizationError) as caught:
                await connect(ep.url, auth=OAuth(LoopbackRedirect(open_browser=no_browser)), cache=None)
            return str(caught.value)

    assert "does not support PKCE" in asyncio.run(go())
    assert not server.seen("/authorize") and not server.seen("/token")


def test_a_client_with_no_way_to_register_says_so() -> None:
    with TestAuthorizationServer(registration=False) as server:

        async def go() -> str:
            async with endpoint(server) as ep:
                with pytest.raises(AuthorizationError) as caught:
                    await connect(ep.url, auth=OAuth(LoopbackRedirect(open_browser=no_browser)), cache=None)
                return str(caught.value)

        message = asyncio.run(go())
    assert "no registration endpoint" in message and "pre-registration" in message


def test_pre_registered_credentials_are_not_shown_to_another_authorization_server(
    authorization_server: TestAuthorizationServer,
) -> None:
    registration = Registration("desktop", "secret", issuer="https://auth.elsewhere.example.com")

    async def go() -> str:
        async with endpoint(authorization_server) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=no_browser), registration=registration)
            with pytest.raises(AuthorizationError) as caught:
                await connect(ep.url, auth=auth, cache=None)
            return str(caught.value)

    assert "belongs to the authorization server https://auth.elsewhere.example.com" in asyncio.run(go())
    assert not authorization_server.seen("/authorize") and not authorization_server.seen("/token")


def test_concurrent_requests_share_one_step_up(authorization_server: TestAuthorizationServer) -> None:
    async def go() -> list[str]:
        async with endpoint(authorization_server) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(ep.url, auth=auth, cache=None) as client:
                return await asyncio.gather(*(call(client, "write_note", text=str(i)) for i in range(5)))

    results = asyncio.run(go())
    assert len(results) == 5
    assert len(authorization_server.seen("/authorize")) == 2  # the first 401, then one step-up for all five


@pytest.mark.parametrize("version", ERAS)
def test_the_time_a_user_takes_to_sign_in_is_not_the_requests(
    authorization_server: TestAuthorizationServer, version: str
) -> None:
    """Found by an OAuth review: the sign-in ran inside connect's probe, whose 10 s ran out while
    the user was still at it: the timeout was taken for a legacy server, a second authorization
    started, and the first one's answer was refused (or a modern server was connected as legacy);
    on a legacy server a sign-in longer than the request timeout failed the request. Here the
    user takes 3 s, against a probe and requests of 1.5 s (0.5 s was once too short for the
    discover after the sign-in, under a loaded CI)."""
    opened: list[str] = []

    async def slow_user(url: str) -> None:
        opened.append(url)
        await asyncio.sleep(3.0)
        await browse(url)

    async def go() -> str:
        async with endpoint(authorization_server) as ep:
            auth = OAuth(LoopbackRedirect(open_browser=slow_user))
            client = await connect(ep.url, versions=[version], auth=auth, cache=None, probe_timeout=1.5, timeout=1.5)
            async with client:
                assert await call(client, "read_notes") == "(none)"
                return client.version

    assert asyncio.run(go()) == version
    assert len(opened) == 1  # one sign-in
