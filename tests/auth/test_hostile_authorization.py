"""The OAuth client against an MCP server and authorization server that misbehave (a review
played both, on one httpx ``MockTransport``): a challenge naming another scope every time, an
access token that cannot go in a header, lifetimes that are negative, infinite, NaN or 400
digits long, error descriptions of a megabyte. Each ends in an ``AuthorizationError`` or is
survived, in a bounded number of requests, with messages of bounded size.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from mcpgen._runtime.client import AuthorizationError
from mcpgen._runtime.client.auth import AuthorizationResponse, OAuth
from mcpgen._runtime.client.auth.oauth import MAX_GRANTS

MCP = "https://mcp.example.com/mcp"
AS = "https://as.example.com"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
METADATA = {
    "issuer": AS,
    "authorization_endpoint": f"{AS}/authorize",
    "token_endpoint": f"{AS}/token",
    "code_challenge_methods_supported": ["S256"],
    "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
    "registration_endpoint": f"{AS}/register",
}


class Site:
    """The MCP server (``admitted``, by default ``Bearer good``; ``challenge(n)`` on the n-th refusal) and its
    authorization server (``token(form, n)`` answers the n-th token request)."""

    def __init__(self, token: Callable[[dict[str, list[str]], int], httpx.Response]) -> None:
        self.token = token
        self.challenge: Callable[[int], str] = lambda n: f'Bearer resource_metadata="{PRM}"'
        self.count: Counter[str] = Counter()
        self.registered: dict[str, Any] = {}  # what the registration endpoint changes in its answer
        self.admitted = "Bearer good"  # the Authorization header the MCP server takes

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        self.count[url] += 1
        if url == MCP:
            if request.headers.get("authorization") == self.admitted:
                return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})
            return httpx.Response(401, headers={"www-authenticate": self.challenge(self.count[url])})
        if url == PRM:
            return httpx.Response(200, json={"resource": MCP, "authorization_servers": [AS]})
        if url == f"{AS}/.well-known/oauth-authorization-server":
            return httpx.Response(200, json=METADATA)
        if url == f"{AS}/token":
            return self.token(parse_qs(request.content.decode()), self.count[url])
        if url == f"{AS}/register":
            return httpx.Response(201, json={**json.loads(request.content), "client_id": "c1", **self.registered})
        return httpx.Response(404)


def tokens(access: str = "good", **extra: Any) -> Callable[[dict[str, list[str]], int], httpx.Response]:
    def answer(form: dict[str, list[str]], n: int) -> httpx.Response:
        body = {"access_token": access, "token_type": "Bearer", "refresh_token": f"r{n}", **extra}
        return httpx.Response(200, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    return answer


def approving(redirect_uri: str) -> Any:
    """The user approving at once: the code comes back to ``redirect_uri``."""

    async def browser(url: str) -> AuthorizationResponse:
        state = parse_qs(urlsplit(url).query)["state"][0]
        return AuthorizationResponse.from_url(f"{redirect_uri}?code=c&state={state}")

    browser.redirect_uri = redirect_uri  # type: ignore[attr-defined]
    return browser


def posts(site: Site, n: int, auth: OAuth | None = None) -> list[int | str]:
    """``n`` POSTs to the MCP server through ``auth`` (a machine client by default): statuses, or errors."""
    auth = auth or OAuth.client_credentials("cid", "secret", http_options={"transport": httpx.MockTransport(site)})

    async def go() -> list[int | str]:
        out: list[int | str] = []
        async with httpx.AsyncClient(transport=httpx.MockTransport(site), auth=auth, max_redirects=500) as http:
            for _ in range(n):
                try:
                    out.append((await http.post(MCP, json=INITIALIZE)).status_code)
                except AuthorizationError as exc:
                    out.append(str(exc))
        return out

    return asyncio.run(go())


def test_a_server_asking_for_another_scope_every_time_is_given_up_on_after_a_few() -> None:
    """Found by a review: each step-up asked for the scopes before and the new one, so a server
    naming s1, s2, s3... never repeated a set: one request made 501 token requests (42, and 42
    consent prompts, under httpx's default redirect limit), then failed as a TransportError, which
    ``connect`` took for a legacy server and tried again. authorization.mdx: retry "no more than a
    few times"."""
    site = Site(tokens("not-good"))
    site.challenge = lambda n: f'Bearer resource_metadata="{PRM}", scope="s{n}"'
    (said,) = posts(site, 1)
    assert site.count[f"{AS}/token"] == MAX_GRANTS == 3
    assert f"after {MAX_GRANTS} authorizations of this request, each for more scope" in str(said)


def test_a_token_with_characters_beyond_b64token_but_sendable_is_taken() -> None:
    """Found by the review of that fix: refusing all but RFC 6750's b64token refused Salesforce's
    tokens (``00D...!AQ...``); what matters is that the header can carry it."""
    site = Site(tokens("00D5g000004Cq1Z!AQ0AQKh"))
    site.admitted = "Bearer 00D5g000004Cq1Z!AQ0AQKh"
    assert posts(site, 2) == [200, 200]


def test_a_registration_for_the_loopback_redirect_without_its_port_is_kept() -> None:
    """RFC 8252 7.3: a loopback redirect is registered without a port (any is taken at request
    time); the registration check of this fix refused it, though the redirect check allows it."""

    browser = approving("http://127.0.0.1:53682/callback")
    site = Site(tokens())
    site.registered = {"redirect_uris": ["http://127.0.0.1/callback"]}
    auth = OAuth(browser, http_options={"transport": httpx.MockTransport(site)})
    assert posts(site, 1, auth) == [200]


@pytest.mark.parametrize("access", ["caf\u00e9", "x\r\nX-Injected: 1", "two words"])
def test_an_access_token_that_cannot_go_in_a_header_is_refused_when_issued(access: str) -> None:
    """Found by a review: ``Bearer café`` failed every request with a bare ``UnicodeEncodeError``
    before it was sent, so no 401 ever came to replace the stored token: the server was blocked
    for good, across processes with a file store."""
    site = Site(tokens(access))
    said = posts(site, 2)
    assert all("issued an access token that cannot go in a header (not visible ASCII): refused" in str(s) for s in said)


@pytest.mark.parametrize("lifetime", [-5, "1e309", "NaN", 10**400])
def test_a_lifetime_that_is_no_number_of_seconds_is_taken_for_none(lifetime: Any) -> None:
    """Found by a review: a negative ``expires_in`` refreshed before every request, NaN or 1e309
    never expired, and 10**400 raised a bare ``OverflowError`` on the refresh path."""
    site = Site(tokens(expires_in=lifetime))
    auth = OAuth.client_credentials("cid", "secret", http_options={"transport": httpx.MockTransport(site)})
    assert posts(site, 5, auth) == [200] * 5
    assert site.count[f"{AS}/token"] == 1
    kept = asyncio.run(auth.store.get_tokens(MCP))
    assert kept is not None and kept.expires_at is None


def test_a_megabyte_of_error_description_is_quoted_cut() -> None:
    site = Site(
        lambda form, n: httpx.Response(400, json={"error": "invalid_client", "error_description": "x" * 1_000_000})
    )
    (said,) = posts(site, 1)
    assert "invalid_client (xxx" in str(said) and len(str(said)) < 1000


def test_a_registration_for_other_redirect_uris_is_refused() -> None:
    """Found by a review: the registration's answer was kept whatever redirect URIs it named; the
    client's own was never among them, so it registered again at every authorization."""

    browser = approving("http://127.0.0.1:9/callback")
    site = Site(tokens())
    site.registered = {"redirect_uris": ["https://evil.example/cb"]}
    auth = OAuth(browser, http_options={"transport": httpx.MockTransport(site)})
    (said,) = posts(site, 1, auth)
    assert "registered this client for the redirect URIs ['https://evil.example/cb'], not" in str(said)
    assert site.count[f"{AS}/token"] == 0
