"""The client's discovery for servers that follow the 2025-03-26 authorization rules (no
Protected Resource Metadata): which URLs it asks, in which order, and when it falls back to
the default endpoints. An in-process httpx ``MockTransport`` plays the MCP server and its
authorization server; the official conformance suite runs the same flows against its real
servers (``tests/client/test_conformance.py``, 2025-03-26).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from mcpgen._runtime.client import AuthorizationError
from mcpgen._runtime.client.auth import AuthorizationResponse, OAuth, ResourceMetadataNotFound, discover_legacy
from mcpgen._runtime.client.auth.metadata import authorization_base_url
from mcpgen._runtime.client.auth.oauth import protocol_version
from mcpgen._runtime.client.auth.store import MemoryTokenStore

BASE = "https://api.example.com"
SERVER = f"{BASE}/v1/mcp"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26"}}


@dataclass
class Site:
    """The MCP server's origin: an MCP endpoint behind a Bearer token, maybe RFC 8414 metadata
    at the root (``metadata``), maybe protected resource metadata (``prm``), an authorization
    server at ``/authorize``, ``/token``, ``/register`` under ``prefix``.
    """

    metadata: dict[str, Any] | None = None
    metadata_status: int = 404
    prm: dict[str, Any] | None = None
    challenge: str = 'Bearer realm="mcp"'
    prefix: str = ""
    lifetime: int = 3600
    seen: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        self.seen.append((request.method, url, dict(request.headers)))
        path = request.url.path
        if path == "/v1/mcp":
            if request.headers.get("authorization") == "Bearer minted":
                return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})
            return httpx.Response(401, headers={"www-authenticate": self.challenge})
        if path.startswith("/.well-known/oauth-protected-resource") and self.prm is not None:
            return httpx.Response(200, json=self.prm)
        if path == "/.well-known/oauth-authorization-server" and self.metadata is not None:
            return httpx.Response(200, json=self.metadata)
        if path == "/.well-known/oauth-authorization-server" and self.metadata_status != 404:
            return httpx.Response(self.metadata_status, text="broken")
        if path == f"{self.prefix}/register" and request.method == "POST":
            body = json.loads(request.content)
            return httpx.Response(201, json={"client_id": "c1", "client_secret": "s1", **body})
        if path == f"{self.prefix}/token" and request.method == "POST":
            form = parse_qs(request.content.decode())
            if form["grant_type"] == ["refresh_token"]:
                assert form["refresh_token"] == ["r1"], form
                return httpx.Response(200, json={"access_token": "minted", "token_type": "Bearer", "expires_in": 3600})
            assert form["code"] == ["the-code"] and form["code_verifier"], form
            tokens = {"access_token": "minted", "token_type": "Bearer", "expires_in": self.lifetime}
            return httpx.Response(200, json={**tokens, "refresh_token": "r1"})
        return httpx.Response(404, text="not found")

    def urls(self) -> list[str]:
        return [f"{method} {url}" for method, url, _ in self.seen]


class Browser:
    """The user approving at once: records the authorization URL, answers with a code."""

    redirect_uri = "http://127.0.0.1:9/callback"

    def __init__(self) -> None:
        self.visited: list[str] = []

    async def __call__(self, authorization_url: str) -> AuthorizationResponse:
        self.visited.append(authorization_url)
        state = parse_qs(urlsplit(authorization_url).query)["state"][0]
        return AuthorizationResponse.from_url(f"{self.redirect_uri}?{urlencode({'code': 'the-code', 'state': state})}")


async def call(site: Site, browser: Browser, headers: dict[str, str] | None = None) -> httpx.Response:
    transport = httpx.MockTransport(site)
    auth = OAuth(browser, client_name="legacy test", http_options={"transport": transport})
    async with httpx.AsyncClient(transport=transport, auth=auth) as client:
        return await client.post(SERVER, json=INITIALIZE, headers=headers)


def test_a_server_without_metadata_gets_the_default_endpoints_at_its_base_url() -> None:
    site, browser = Site(), Browser()
    assert asyncio.run(call(site, browser)).status_code == 200
    assert site.urls() == [
        f"POST {SERVER}",
        f"GET {BASE}/.well-known/oauth-protected-resource/v1/mcp",
        f"GET {BASE}/.well-known/oauth-protected-resource",
        f"GET {BASE}/.well-known/oauth-authorization-server",
        f"POST {BASE}/register",
        f"POST {BASE}/token",
        f"POST {SERVER}",
    ]
    assert site.seen[3][2]["mcp-protocol-version"] == "2025-03-26"  # the version initialize asks for
    (visited,) = browser.visited
    query = parse_qs(urlsplit(visited).query)
    assert visited.startswith(f"{BASE}/authorize?")
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"] and query["state"]
    assert query["client_id"] == ["c1"]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_a_later_revision_without_metadata_is_refused_not_given_the_default_endpoints(version: str) -> None:
    """An auth review: from 2025-06-18 on, clients MUST discover the authorization server through
    Protected Resource Metadata, and MUST see code_challenge_methods_supported before using PKCE;
    a request naming such a revision got the 2025-03-26 fallback (default endpoints, S256 assumed).
    It is refused; an initialize (no version header yet) and a 2025-03-26 request still fall back,
    and a modern connect's probe refused so falls back to a legacy initialize."""
    site, browser = Site(), Browser()
    with pytest.raises(AuthorizationError, match=f"no protected resource metadata .* MCP {version} requires it"):
        asyncio.run(call(site, browser, {"mcp-protocol-version": version}))
    assert browser.visited == [] and not any("/register" in url or "/token" in url for url in site.urls())
    assert asyncio.run(call(Site(), browser, {"mcp-protocol-version": "2025-03-26"})).status_code == 200


def test_tokens_from_the_default_endpoints_are_refreshed_there() -> None:
    site, browser = Site(lifetime=10), Browser()  # expired at once (within the 30 s leeway)

    async def twice() -> list[int]:
        transport = httpx.MockTransport(site)
        auth = OAuth(browser, http_options={"transport": transport})
        async with httpx.AsyncClient(transport=transport, auth=auth) as client:
            first = await client.post(SERVER, json=INITIALIZE)
            del site.seen[:]
            second = await client.post(SERVER, json=INITIALIZE)
            return [first.status_code, second.status_code, auth.grants]

    assert asyncio.run(twice()) == [200, 200, 1]  # a refresh is no new grant (a client's cache stays)
    assert site.urls() == [f"POST {BASE}/token", f"POST {SERVER}"]  # no discovery again, one login
    assert len(browser.visited) == 1


def test_metadata_at_the_authorization_base_url_names_the_endpoints() -> None:
    doc = {
        "issuer": BASE,
        "authorization_endpoint": f"{BASE}/oauth/authorize",
        "token_endpoint": f"{BASE}/oauth/token",
        "registration_endpoint": f"{BASE}/oauth/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
    site, browser = Site(metadata=doc, prefix="/oauth"), Browser()
    response = asyncio.run(call(site, browser, headers={"mcp-protocol-version": "2024-11-05"}))
    assert response.status_code == 200
    assert site.urls()[3:] == [
        f"GET {BASE}/.well-known/oauth-authorization-server",
        f"POST {BASE}/oauth/register",
        f"POST {BASE}/oauth/token",
        f"POST {SERVER}",
    ]
    assert site.seen[3][2]["mcp-protocol-version"] == "2024-11-05"  # the request's own header wins
    assert browser.visited[0].startswith(f"{BASE}/oauth/authorize?")


def test_published_resource_metadata_keeps_the_newer_rules() -> None:
    issuer = "https://auth.example.com"
    doc = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "registration_endpoint": f"{issuer}/register",
        "code_challenge_methods_supported": ["S256"],
    }

    site = Site(prm={"resource": SERVER, "authorization_servers": [issuer]}, metadata=doc)  # any host answers
    assert asyncio.run(call(site, Browser())).status_code == 200
    assert site.urls()[1:4] == [
        f"GET {BASE}/.well-known/oauth-protected-resource/v1/mcp",
        f"GET {issuer}/.well-known/oauth-authorization-server",
        f"POST {issuer}/register",
    ]
    assert f"GET {BASE}/.well-known/oauth-authorization-server" not in site.urls()


def test_a_challenge_naming_resource_metadata_never_falls_back() -> None:
    site = Site(challenge=f'Bearer resource_metadata="{BASE}/prm.json"')
    with pytest.raises(AuthorizationError, match="no protected resource metadata"):
        asyncio.run(call(site, Browser()))
    assert f"GET {BASE}/.well-known/oauth-authorization-server" not in site.urls()


@pytest.mark.parametrize("status", [500, 401])
def test_only_a_404_means_no_metadata(status: int) -> None:
    site = Site(metadata_status=status)
    with pytest.raises(AuthorizationError, match=f"HTTP {status}"):
        asyncio.run(call(site, Browser()))
    assert site.urls()[-1] == f"GET {BASE}/.well-known/oauth-authorization-server"  # no default endpoints tried


def legacy(doc: dict[str, Any] | None, server: str = SERVER, allow_http: bool = False) -> Any:
    site = Site(metadata=doc)

    async def run() -> Any:
        async with httpx.AsyncClient(transport=httpx.MockTransport(site)) as http:
            return await discover_legacy(http, server, allow_http)

    return asyncio.run(run())


def test_legacy_metadata_keeps_the_issuer_and_https_checks() -> None:
    doc = {"issuer": BASE, "token_endpoint": f"{BASE}/t", "authorization_endpoint": f"{BASE}/a"}
    assert legacy(doc).token_endpoint == f"{BASE}/t"
    assert legacy({**doc, "issuer": f"{BASE}/"}).issuer == f"{BASE}/"  # the same well-known URI
    for stated in ("https://evil.example.com", f"{BASE}/v1", None):
        with pytest.raises(AuthorizationError, match="names issuer"):
            legacy({**doc, "issuer": stated})
    with pytest.raises(AuthorizationError, match="not an https URL"):
        legacy({**doc, "token_endpoint": "http://api.example.com/t"})
    with pytest.raises(AuthorizationError, match="not an https URL"):
        legacy(None, "http://api.example.com/v1/mcp")  # no defaults over plain HTTP either
    defaults = legacy(None, "http://127.0.0.1:8123/v1/mcp?x=1")  # loopback: a development server
    assert (
        defaults.issuer,
        defaults.authorization_endpoint,
        defaults.token_endpoint,
        defaults.registration_endpoint,
    ) == (
        "http://127.0.0.1:8123",
        "http://127.0.0.1:8123/authorize",
        "http://127.0.0.1:8123/token",
        "http://127.0.0.1:8123/register",
    )


def test_authorization_base_url_discards_the_path() -> None:
    assert authorization_base_url("https://API.example.com:8443/v1/mcp?q=1#f") == "https://api.example.com:8443"
    assert authorization_base_url("https://api.example.com") == "https://api.example.com"


def test_protocol_version_of_a_request() -> None:
    assert (
        protocol_version(httpx.Request("POST", SERVER, headers={"mcp-protocol-version": "2025-06-18"})) == "2025-06-18"
    )
    assert protocol_version(httpx.Request("POST", SERVER, json=INITIALIZE)) == "2025-03-26"
    assert protocol_version(httpx.Request("POST", SERVER, json={**INITIALIZE, "method": "ping"})) is None
    assert protocol_version(httpx.Request("POST", SERVER, content=b"\xff not json")) is None
    assert protocol_version(httpx.Request("GET", SERVER)) is None


@pytest.mark.parametrize("uri", ["http://client.example.net/callback", "com.example.app:/oauth2redirect"])
def test_a_redirect_uri_neither_loopback_nor_https_is_refused_before_registering(uri: str) -> None:
    """An auth review (security-considerations.mdx: all redirect URIs MUST be localhost or https):
    a custom redirect's URI was registered and sent to the authorization server as it was."""
    site, browser = Site(), Browser()
    browser.redirect_uri = uri
    with pytest.raises(AuthorizationError, match=r"the redirect URI .* is not an https URL"):
        asyncio.run(call(site, browser))
    assert browser.visited == [] and not any("/register" in url for url in site.urls())
    browser.redirect_uri = "https://client.example.net/callback"
    assert asyncio.run(call(Site(), browser)).status_code == 200


class LegacyServer(Site):
    """A 2025-03-26 server behind the default endpoints: it answers initialize, the initialized
    notification and tools/list once authorized (a 401 to anything unauthorized, the modern probe
    included, with no Protected Resource Metadata anywhere)."""

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path != "/v1/mcp" or request.headers.get("authorization") != "Bearer minted":
            return super().__call__(request)
        self.seen.append((request.method, str(request.url), dict(request.headers)))
        message = json.loads(request.content)
        if "id" not in message:
            return httpx.Response(202)
        result: dict[str, Any] = {"tools": []}
        if message["method"] == "initialize":
            info = {"name": "old", "version": "1"}
            result = {"protocolVersion": "2025-03-26", "capabilities": {"tools": {}}, "serverInfo": info}
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": message["id"], "result": result})


def test_connect_authorizes_a_2025_03_26_server_after_its_modern_probe_is_refused() -> None:
    """The probe (server/discover, naming 2026-07-28) meets a 401 and no metadata: refused, as
    that revision requires the metadata; connect then initializes, whose request names no version
    yet, and the 2025-03-26 discovery authorizes it."""
    import mcpgen

    site, browser = LegacyServer(), Browser()

    async def go() -> tuple[str, list[Any]]:
        transport = httpx.MockTransport(site)
        auth = OAuth(browser, client_name="legacy test", http_options={"transport": transport})
        async with httpx.AsyncClient(transport=transport) as http:
            client = await mcpgen.connect(SERVER, http_client=http, auth=auth, cache=None, timeout=10)
            async with client:
                return client.version, (await client.list_tools()).tools  # type: ignore[attr-defined]

    version, tools = asyncio.run(go())
    assert (version, tools) == ("2025-03-26", [])
    assert len(browser.visited) == 1
    probes = [headers for method, url, headers in site.seen if url == SERVER and headers.get("mcp-method")]
    assert probes and all(h.get("mcp-method") == "server/discover" for h in probes)


def test_advertised_metadata_that_cannot_be_read_is_no_reason_to_fall_back() -> None:
    """A second diff review: a challenge naming its resource_metadata, which failed to load, was
    raised as ResourceMetadataNotFound, which connect's probe takes for a 2025-03-26 server (and
    caches a legacy verdict for a modern one). It is a plain AuthorizationError."""
    site = Site(challenge=f'Bearer resource_metadata="{BASE}/broken-metadata"')
    with pytest.raises(AuthorizationError) as raised:
        asyncio.run(call(site, Browser(), {"mcp-protocol-version": "2026-07-28"}))
    assert not isinstance(raised.value, ResourceMetadataNotFound), raised.value


class FailingStore(MemoryTokenStore):
    async def set_tokens(self, server: str, tokens: Any) -> None:
        raise OSError("disk full")


def test_a_grant_is_counted_once_its_tokens_are_in_use_even_if_storing_them_fails() -> None:
    """A second diff review: grants (which empty a client's result cache) were counted after the
    store's write, so a failing store left new tokens in use and the old context's cache kept."""
    site, browser = Site(), Browser()

    async def go() -> int:
        transport = httpx.MockTransport(site)
        auth = OAuth(browser, store=FailingStore(), http_options={"transport": transport})
        async with httpx.AsyncClient(transport=transport, auth=auth) as client:
            with pytest.raises(Exception, match="disk full"):
                await client.post(SERVER, json=INITIALIZE)
        return auth.grants

    assert asyncio.run(go()) == 1
