"""Our server protected by the runtime (``auth=ResourceServer(...)``), against real tokens.

The tokens come from the test authorization server (``authorization_server.py``): minted with
its key, or issued through a real authorization code grant; the bad ones are made the way an
attacker or a misconfiguration would. The server (``Vault``) records every handler call with the
principal its ``Context`` carried, so each refusal also proves that no handler ran. Requests are
plain HTTP, as a client sends them, in both eras (a 2026-07-28 request, a legacy session).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import RSAKey
from mcpgen._runtime.server.auth import (
    JWTVerifier,
    Principal,
    ProtectedResource,
    ResourceServer,
    ScopePolicy,
)
from mcpgen._runtime.tls import default_context
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s
from pydantic import MISSING

from tests.auth.authorization_server import Client, Code, TestAuthorizationServer, serving
from tests.auth.protected import Exchange, Observed, listening_socket, served_in_thread
from tests.server.servers import Stdio, request

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
POLICY = ScopePolicy(
    default=frozenset({"mcp:read"}),
    methods={"resources/read": frozenset({"files:read"})},
    tools={"write": frozenset({"mcp:write"})},
    implies={"mcp:admin": frozenset({"mcp:write", "files:read"})},
)


class Vault(s.Server):
    """Tools ``whoami``, ``write`` (needs ``mcp:write``), ``confirm`` (MRTR: a ``requestState``
    round), a resource (needs ``files:read``); every handler call is recorded."""

    name = "vault"

    def __init__(self) -> None:
        self.calls: list[tuple[str, Principal | None]] = []

    async def list_tools(self, params: m.PaginatedRequestParams, ctx: s.Context) -> m.ListToolsResult:
        self.calls.append(("tools/list", ctx.principal))
        names = ("whoami", "write", "confirm")
        return s.ListToolsResult(tools=[m.Tool(name=name, input_schema={"type": "object"}) for name in names])

    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        self.calls.append((params.name, ctx.principal))
        who = ctx.principal.subject if ctx.principal is not None else "nobody"
        if params.name == "confirm" and params.request_state is MISSING:
            return s.InputRequiredResult(request_state=f"issued-to-{who}")
        if params.name == "confirm":
            text = f"{params.request_state} confirmed by {who}"
        elif params.name == "whoami":
            scopes = " ".join(sorted(ctx.principal.scopes)) if ctx.principal is not None else ""
            text = f"{who} [{scopes}] {ctx.era}"
        else:
            text = f"written by {who}"
        return s.CallToolResult(content=[m.TextContent(type="text", text=text)])

    async def read_resource(
        self, params: m.ReadResourceRequestParams, ctx: s.Context
    ) -> m.ReadResourceResult | m.InputRequiredResult:
        self.calls.append(("resources/read", ctx.principal))
        return s.ReadResourceResult(contents=[{"uri": params.uri, "text": "secret"}])


class Endpoint:
    """The protected Vault on a loopback port, and the authorization server that issues its tokens."""

    def __init__(self, issuer: TestAuthorizationServer, base: str, vault: Vault, observed: Observed) -> None:
        self.issuer = issuer
        self.url = base + "/mcp"
        self.metadata_url = base + "/.well-known/oauth-protected-resource/mcp"
        self.vault = vault
        self.observed = observed
        self.http = httpx.Client(timeout=10.0, verify=default_context())

    def token(self, subject: str = "alice", scope: str = "mcp:read", **claims: Any) -> str:
        return self.issuer.mint({"sub": subject, "aud": self.url, "scope": scope, **claims})

    def post(
        self, body: Any, token: str | None = None, session: str | None = None, authorization: str | None = None
    ) -> httpx.Response:
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        params = body.get("params", {}) if isinstance(body, dict) else {}
        if isinstance(params, dict) and "_meta" in params:  # a 2026-07-28 request: its headers
            headers |= {"mcp-protocol-version": MODERN, "mcp-method": body["method"]}
            for key in ("name", "uri"):
                if key in params:
                    headers["mcp-name"] = params[key]
        if session is not None:
            headers["mcp-session-id"] = session
            headers["mcp-protocol-version"] = LEGACY
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        if authorization is not None:
            headers["authorization"] = authorization
        return self.http.post(self.url, content=json.dumps(body), headers=headers)

    def initialize(self, token: str) -> str:
        """Open a legacy session with ``token``; its id."""
        body = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        answer = self.post(body, token)
        assert answer.status_code == 200, answer.text
        assert answer.json()["result"]["protocolVersion"] == LEGACY
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, token, answer.headers["mcp-session-id"])
        return answer.headers["mcp-session-id"]

    def last(self) -> Exchange:
        return self.observed.exchanges[-1]

    def ran(self) -> list[tuple[str, str | None]]:
        """The handlers that ran and for whom; the runtime's own ``tools/list`` lookups (the
        2026-07-28 ``x-mcp-header`` check, once per tool) aside."""
        return [(name, p.subject if p else None) for name, p in self.vault.calls if name != "tools/list"]


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestAuthorizationServer]:
    yield from serving()


@pytest.fixture(scope="module")
def served(issuer: TestAuthorizationServer) -> Iterator[tuple[str, Vault, Observed]]:
    sock = listening_socket()  # the resource URL names the port
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    verifier = JWTVerifier(issuer=issuer.issuer, audience=base + "/mcp", jwks_uri=f"{issuer.issuer}/jwks")
    auth = ResourceServer(verifier, ProtectedResource(base + "/mcp", (issuer.issuer,)), POLICY)
    vault = Vault()
    observed = Observed(vault.asgi_app(auth=auth))
    with served_in_thread(observed, sock):
        yield base, vault, observed


@pytest.fixture
def ep(issuer: TestAuthorizationServer, served: tuple[str, Vault, Observed]) -> Iterator[Endpoint]:
    base, vault, observed = served
    vault.calls.clear()
    observed.exchanges.clear()
    endpoint = Endpoint(issuer, base, vault, observed)
    try:
        yield endpoint
    finally:
        endpoint.http.close()


def text(answer: httpx.Response) -> str:
    assert answer.status_code == 200, answer.text
    return str(answer.json()["result"]["content"][0]["text"])


def call(rid: int, tool: str, **params: Any) -> dict[str, Any]:
    return request(rid, "tools/call", {"name": tool, "arguments": {}, **params})


def legacy_call(rid: int, tool: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


# -- the metadata ---------------------------------------------------------------------------


def test_protected_resource_metadata_at_both_well_known_paths(ep: Endpoint) -> None:
    for url in (ep.metadata_url, ep.url.replace("/mcp", "/.well-known/oauth-protected-resource")):
        answer = ep.http.get(url, headers={"origin": "https://app.example.com"})
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == "*"
        assert answer.json() == {
            "resource": ep.url,
            "authorization_servers": [ep.issuer.issuer],
            "bearer_methods_supported": ["header"],
            "scopes_supported": ["mcp:read"],  # the policy's default: what every request needs
        }
    assert ep.http.options(ep.metadata_url).status_code == 204
    assert ep.http.post(ep.metadata_url).status_code == 405
    assert ep.http.get(ep.url.replace("/mcp", "/.well-known/oauth-protected-resource/other")).status_code == 404


def test_an_unprotected_server_serves_no_metadata() -> None:
    with served_in_thread(Vault().asgi_app()) as base:
        assert httpx.get(base + "/.well-known/oauth-protected-resource/mcp").status_code == 404
        answer = httpx.post(base + "/mcp", json=call(1, "whoami"), headers={"mcp-protocol-version": MODERN})
        assert answer.status_code != 401


# -- bad tokens: 401 with the challenge, and no handler runs ------------------------------


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}."


def issued_for(server: TestAuthorizationServer, resource: str) -> str:
    """An access token for ``resource`` through a real authorization code grant (PKCE)."""
    from authlib.common.security import generate_token
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    client = server.add_client(Client(generate_token(8), None, ["http://127.0.0.1/cb"], ["authorization_code"], "none"))
    verifier = generate_token(48)
    code = "c-" + verifier
    challenge = create_s256_code_challenge(verifier)
    server.codes[code] = Code(
        code, client.client_id, "http://127.0.0.1/cb", "mcp:read", "alice", challenge, "S256", resource
    )
    answer = httpx.post(
        f"{server.issuer}/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://127.0.0.1/cb",
            "code_verifier": verifier,
            "client_id": client.client_id,
            "resource": resource,
        },
    )
    return str(answer.json()["access_token"])


def bad_token(kind: str, ep: Endpoint) -> str | None:
    now = int(time.time())
    iss = ep.issuer.issuer
    if kind == "no token":
        return None
    if kind == "expired":
        return ep.token(exp=now - 120)
    if kind == "not yet valid":
        return ep.token(nbf=now + 600)
    if kind == "wrong audience":
        return ep.token(aud="https://elsewhere.example.com/mcp")
    if kind == "another resource":  # a real token, for another MCP server of the same authorization server
        return issued_for(ep.issuer, ep.url.replace("/mcp", "/other/mcp"))
    if kind == "wrong issuer":
        return ep.token(iss="https://evil.example.com")
    if kind == "bad signature":
        impostor = RSAKey.generate_key(2048, parameters={"kid": ep.issuer.key.kid})
        claims = {"iss": iss, "aud": ep.url, "exp": now + 60, "sub": "alice", "scope": "mcp:read"}
        return jwt.encode({"alg": "RS256", "kid": ep.issuer.key.kid}, claims, impostor)
    if kind == "alg none":
        claims = {"iss": iss, "aud": ep.url, "exp": now + 60, "sub": "alice", "scope": "mcp:read"}
        return unsigned({"alg": "none", "kid": ep.issuer.key.kid}, claims)
    if kind == "hmac with the public key":
        claims = {"iss": iss, "aud": ep.url, "exp": now + 60, "sub": "alice", "scope": "mcp:read"}
        signing_input = unsigned({"alg": "HS256", "kid": ep.issuer.key.kid}, claims)[:-1]
        mac = hmac.new(ep.issuer.key.as_pem(private=False), signing_input.encode(), hashlib.sha256).digest()
        return f"{signing_input}.{b64(mac)}"
    assert kind == "garbage"
    return "not-a-jwt"


BAD = {
    "no token": None,
    "expired": "the token has expired",
    "not yet valid": "the token is not valid yet",
    "wrong audience": "the token is not for this resource",
    "another resource": "the token is not for this resource",
    "wrong issuer": "the token was not issued by",
    "bad signature": "the token's signature does not verify",
    "alg none": "signed with 'none'",
    "hmac with the public key": "signed with 'HS256'",
    "garbage": "the token is not a signed JWT",
}


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_token_gets_401_with_the_challenge_and_runs_no_handler(ep: Endpoint, kind: str, era: str) -> None:
    token = bad_token(kind, ep)
    if era == "modern":
        answer = ep.post(call(1, "write"), token)
    else:  # the handshake itself is refused: no session opens
        answer = ep.post(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": LEGACY}}, token
        )
        assert "mcp-session-id" not in answer.headers
    assert answer.status_code == 401
    challenge = ep.last().challenge
    assert challenge["resource_metadata"] == ep.metadata_url
    if era == "modern":
        assert challenge["scope"] == "mcp:read mcp:write"  # everything this request needs
    else:
        assert challenge["scope"] == "mcp:read"
    why = BAD[kind]
    if why is None:  # no credentials at all: no error information (RFC 6750 §3.1)
        assert "error" not in challenge and answer.json()["error"] == "unauthorized"
    else:
        assert challenge["error"] == "invalid_token" and why in challenge["error_description"]
        assert answer.json() == {"error": "invalid_token", "error_description": challenge["error_description"]}
    assert answer.headers["cache-control"] == "no-store"
    assert ep.vault.calls == []


def test_an_authorization_header_without_a_bearer_token_is_refused(ep: Endpoint) -> None:
    for header in ("Bearer", f"Bearer {ep.token()} extra"):
        answer = ep.post(call(1, "whoami"), authorization=header)
        assert answer.status_code == 400 and ep.last().error == "invalid_request"  # RFC 6750 §3.1: malformed
    for header in ("Basic YWxpY2U6c2VjcmV0", f"Token {ep.token()}"):  # another scheme: no error (RFC 6750 §3.1)
        answer = ep.post(call(1, "whoami"), authorization=header)
        assert answer.status_code == 401 and ep.last().error is None
        assert ep.last().challenge["resource_metadata"] == ep.metadata_url
    assert ep.vault.calls == []


def test_an_unreadable_body_without_a_token_is_401_not_a_parse_error(ep: Endpoint) -> None:
    answer = ep.http.post(ep.url, content=b"{not json", headers={"content-type": "application/json"})
    assert answer.status_code == 401 and ep.last().challenge["scope"] == "mcp:read"
    answer = ep.http.post(
        ep.url,
        content=b"{not json",
        headers={"content-type": "application/json", "authorization": f"Bearer {ep.token()}"},
    )
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32700


# -- scopes: 403 insufficient_scope before the handler --------------------------------------


def test_a_tool_that_needs_more_scope_gets_403_naming_every_scope(ep: Endpoint) -> None:
    reader = ep.token(scope="mcp:read")
    assert text(ep.post(call(1, "whoami"), reader)) == f"alice [mcp:read] {'modern'}"
    answer = ep.post(call(2, "write"), reader)
    assert answer.status_code == 403
    assert ep.last().challenge == {
        "resource_metadata": ep.metadata_url,
        "scope": "mcp:read mcp:write",
        "error": "insufficient_scope",
        "error_description": "the token lacks scopes this request needs",
    }
    assert ep.ran() == [("whoami", "alice")]  # write never ran
    assert text(ep.post(call(3, "write"), ep.token(scope="mcp:read mcp:write"))) == "written by alice"


def test_a_method_that_needs_more_scope_and_implied_scopes(ep: Endpoint) -> None:
    read = request(1, "resources/read", {"uri": "file:///secret"})
    answer = ep.post(read, ep.token(scope="mcp:read"))
    assert answer.status_code == 403 and ep.last().challenge["scope"] == "files:read mcp:read"
    assert ep.vault.calls == []
    admin = ep.token(scope="mcp:read mcp:admin")  # admin implies write and files:read
    assert ep.post(read, admin).json()["result"]["contents"][0]["text"] == "secret"
    assert text(ep.post(call(2, "write"), admin)) == "written by alice"


def test_scopes_are_checked_per_request_inside_a_legacy_session(ep: Endpoint) -> None:
    session = ep.initialize(ep.token(scope="mcp:read"))
    assert text(ep.post(legacy_call(1, "whoami"), ep.token(scope="mcp:read"), session)) == "alice [mcp:read] legacy"
    answer = ep.post(legacy_call(2, "write"), ep.token(scope="mcp:read"), session)
    assert answer.status_code == 403 and ep.last().error == "insufficient_scope"
    batch = [legacy_call(3, "whoami"), legacy_call(4, "write")]  # a batch needs what each of its requests does
    assert ep.post(batch, ep.token(scope="mcp:read"), session).status_code == 403
    assert ep.ran() == [("whoami", "alice")]
    stepped_up = ep.token(scope="mcp:read mcp:write")  # a new token of the same principal: same session
    assert text(ep.post(legacy_call(5, "write"), stepped_up, session)) == "written by alice"


# -- the principal in the handler's context ------------------------------------------------


def test_the_principal_reaches_the_handler_in_both_eras(ep: Endpoint) -> None:
    assert text(ep.post(call(1, "whoami"), ep.token("bob", "mcp:read mcp:write"))) == "bob [mcp:read mcp:write] modern"
    session = ep.initialize(ep.token("carol"))
    assert text(ep.post(legacy_call(1, "whoami"), ep.token("carol"), session)) == "carol [mcp:read] legacy"
    principals = [p for _, p in ep.vault.calls]
    assert all(p is not None and p.issuer == ep.issuer.issuer and p.audience == (ep.url,) for p in principals)
    assert ep.ran() == [("whoami", "bob"), ("whoami", "carol")]


# -- a legacy session belongs to the principal that opened it -------------------------------


def test_a_session_id_with_another_principals_token_is_an_unknown_session(ep: Endpoint) -> None:
    session = ep.initialize(ep.token("alice"))
    mallory = ep.token("mallory", "mcp:read mcp:write")
    answer = ep.post(legacy_call(1, "write"), mallory, session)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == -32600
    get = ep.http.get(ep.url, headers={"mcp-session-id": session, "authorization": f"Bearer {mallory}"})
    unknown = ep.http.get(ep.url, headers={"mcp-session-id": "no-such-session", "authorization": f"Bearer {mallory}"})
    assert get.status_code == unknown.status_code == 404  # as for a session that does not exist: no stream of alice's
    delete = ep.http.delete(ep.url, headers={"mcp-session-id": session, "authorization": f"Bearer {mallory}"})
    assert delete.status_code == 404
    assert ep.vault.calls == []
    assert text(ep.post(legacy_call(2, "whoami"), ep.token("alice"), session)) == "alice [mcp:read] legacy"
    assert ep.http.delete(ep.url, headers={"mcp-session-id": session}).status_code == 401  # no token, no delete
    own = ep.http.delete(ep.url, headers={"mcp-session-id": session, "authorization": f"Bearer {ep.token('alice')}"})
    assert own.status_code == 200


def test_the_same_user_through_another_client_does_not_share_a_session(ep: Endpoint) -> None:
    session = ep.initialize(ep.token("alice", client_id="app-one"))
    answer = ep.post(legacy_call(1, "whoami"), ep.token("alice", client_id="app-two"), session)
    assert answer.status_code == 404 and ep.vault.calls == []


# -- MRTR requestState is bound to the principal --------------------------------------------


def test_a_request_state_issued_to_one_principal_is_refused_for_another(ep: Endpoint) -> None:
    first = ep.post(call(1, "confirm"), ep.token("alice"))
    assert first.status_code == 200
    result = first.json()["result"]
    assert result["resultType"] == "input_required"
    state = result["requestState"]
    replay = ep.post(call(2, "confirm", requestState=state), ep.token("mallory"))
    assert replay.json()["error"]["code"] == -32602
    assert replay.status_code == 400
    assert ep.ran() == [("confirm", "alice")]
    retry = ep.post(call(3, "confirm", requestState=state), ep.token("alice", scope="mcp:read mcp:write"))
    assert text(retry) == "issued-to-alice confirmed by alice"  # the same principal with a newer token


def test_a_request_state_round_on_a_legacy_session_keeps_its_principal(ep: Endpoint) -> None:
    """Legacy clients do not see requestState: the session drives the rounds for the same principal."""
    session = ep.initialize(ep.token("alice"))
    assert text(ep.post(legacy_call(1, "confirm"), ep.token("alice"), session)) == "issued-to-alice confirmed by alice"


# -- the verifier cannot decide; stdio is not protected --------------------------------------


def test_an_unreachable_authorization_server_is_503_and_runs_no_handler(issuer: TestAuthorizationServer) -> None:
    vault = Vault()
    url = "http://127.0.0.1/mcp"
    down = JWTVerifier(issuer=issuer.issuer, audience=url, jwks_uri="http://127.0.0.1:9/jwks")
    app = vault.asgi_app(auth=ResourceServer(down, ProtectedResource(url, (issuer.issuer,)), POLICY))
    with served_in_thread(app) as base:
        token = issuer.mint({"aud": url, "scope": "mcp:read"})
        answer = httpx.post(base + "/mcp", json=call(1, "whoami"), headers={"authorization": f"Bearer {token}"})
    assert answer.status_code == 503 and "www-authenticate" not in answer.headers
    assert answer.json()["error"] == "temporarily_unavailable"
    assert vault.calls == []


def test_auth_on_the_server_class_protects_http_and_leaves_stdio_alone(issuer: TestAuthorizationServer) -> None:
    url = "http://127.0.0.1/mcp"
    verifier = JWTVerifier(issuer=issuer.issuer, audience=url, jwks_uri=f"{issuer.issuer}/jwks")

    class Guarded(Vault):
        auth = ResourceServer(verifier, ProtectedResource(url, (issuer.issuer,)), POLICY)

    with served_in_thread(Guarded().asgi_app()) as base:
        assert httpx.post(base + "/mcp", json=call(1, "whoami")).status_code == 401

    async def over_stdio() -> dict[str, Any]:
        async with Stdio(Guarded()) as stdio:
            stdio.send(call(1, "whoami"))
            return await stdio.response(1)

    answer = asyncio.run(over_stdio())
    assert answer["result"]["content"][0]["text"] == "nobody [] modern"


# -- the official Python SDK's client, with its own OAuth, against our protected server -------


class SdkStorage:
    """The official client's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client_info: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


async def official_client(ep: Endpoint, mode: str, storage: SdkStorage, tools: list[str]) -> tuple[str, list[str]]:
    """Connect ``mcp`` 2.3.0's client with its ``OAuthClientProvider``, driven without a person:
    its redirect handler plays the browser (the authorization server approves at once; the
    redirect to the client's callback is read, not followed) and its callback handler returns
    the code, state and ``iss``. Calls ``tools``; the negotiated revision and their texts."""
    from urllib.parse import parse_qs, urlsplit

    import httpx2
    from mcp.client import Client
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata

    redirects: list[dict[str, str]] = []

    async def browser(authorization_url: str) -> None:
        async with httpx.AsyncClient(timeout=10.0) as http:
            answer = await http.get(authorization_url)
        assert answer.status_code == 302, answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        redirects.append({key: values[0] for key, values in query.items()})

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(**{k: v for k, v in redirects[-1].items() if k in ("code", "state", "iss")})

    metadata = OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="official client")  # type: ignore[list-item]
    provider = OAuthClientProvider(ep.url, metadata, storage, browser, callback)
    async with asyncio.timeout(60), httpx2.AsyncClient(auth=provider, timeout=10.0) as http:
        async with Client(streamable_http_client(ep.url, http_client=http), mode=mode) as client:
            texts = [(await client.call_tool(tool, {})).content[0].text for tool in tools]  # type: ignore[union-attr]
            return str(client.session.protocol_version), texts


REDIRECT = "http://127.0.0.1:1/callback"


@pytest.mark.parametrize(("mode", "version"), [("auto", MODERN), ("legacy", LEGACY)])
@pytest.mark.interop
def test_the_official_python_sdk_client_registers_and_authorizes_itself(ep: Endpoint, mode: str, version: str) -> None:
    """Dynamic registration, PKCE, the token, the call: the SDK's own flow against our server."""
    negotiated, texts = asyncio.run(official_client(ep, mode, SdkStorage(), ["whoami"]))
    era = "modern" if version == MODERN else "legacy"
    assert negotiated == version
    assert texts == [f"{ep.issuer.subject} [mcp:read offline_access] {era}"]
    (authorization,) = ep.issuer.seen("/authorize")[-1:]
    assert authorization["resource"] == ep.url and authorization["code_challenge_method"] == "S256"
    assert [(e.status, e.error) for e in ep.observed.refused()] == [(401, None)]
    assert ep.ran() == [("whoami", ep.issuer.subject)]


@pytest.mark.parametrize(("mode", "version"), [("auto", MODERN), ("legacy", LEGACY)])
@pytest.mark.interop
def test_the_official_python_sdk_client_steps_up_on_403(ep: Endpoint, mode: str, version: str) -> None:
    """A pre-registered client (the SDK registers dynamically with the scope it first asked
    for, which this authorization server then holds it to, so its step-up needs a registration
    that does not limit its scopes): 403 ``insufficient_scope``, a new authorization with the
    union of the scopes, the retried call."""
    from authlib.common.security import generate_token
    from mcp.shared.auth import OAuthClientInformationFull

    client_id = "official-" + generate_token(6)
    ep.issuer.add_client(Client(client_id, None, [REDIRECT], ["authorization_code", "refresh_token"], "none"))
    storage = SdkStorage()
    storage.client_info = OAuthClientInformationFull(
        client_id=client_id,
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
    )
    before = len(ep.issuer.seen("/authorize"))
    negotiated, texts = asyncio.run(official_client(ep, mode, storage, ["whoami", "write"]))
    assert negotiated == version
    assert texts[1] == f"written by {ep.issuer.subject}"
    first, second = ep.issuer.seen("/authorize")[before:]
    assert "mcp:write" not in first["scope"].split() and "mcp:write" in second["scope"].split()
    assert second["resource"] == ep.url
    refused = [(e.status, e.error) for e in ep.observed.refused()]
    assert refused == [(401, None), (403, "insufficient_scope")]
    assert ep.ran() == [("whoami", ep.issuer.subject), ("write", ep.issuer.subject)]
