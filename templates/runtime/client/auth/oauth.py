"""``OAuth``: an ``httpx.Auth`` that answers an MCP server's 401 and 403 with OAuth 2.1.

Every request carries the server's Bearer token when there is one (refreshed first when it
has expired). A 401 starts discovery: Protected Resource Metadata (which authorization
server, which resource), the authorization server's metadata, then the grant; the request
is sent again with the new token. A server that publishes no Protected Resource Metadata
(and names none in its challenge) is taken to follow the 2025-03-26 rules: the
authorization server's metadata at the MCP server's origin, else its default endpoints
there (``metadata.discover_legacy``); the resource named is then the server's canonical
URI. A 403 ``insufficient_scope`` re-authorizes with the union of the scopes asked before
and the challenge's (step-up). A request gives up, raising
``AuthorizationError``, rather than authorize the same scope set twice.

Scope selection: the challenge's ``scope``, else the resource metadata's
``scopes_supported`` (when there is any), else none; plus ``offline_access`` when the
grant wants refresh tokens and the authorization server lists it.

DPoP (RFC 9449, ``dpop``): by default the client binds its tokens to a key it holds when the
MCP server offers the ``DPoP`` scheme (in its challenge, or its resource metadata lists DPoP
algorithms or requires bound tokens) and the authorization server lists an algorithm this
client signs with, or when the MCP server offers nothing else. Bound tokens go out as
``Authorization: DPoP`` with a fresh proof per request; a ``use_dpop_nonce`` challenge is
answered with the server's nonce, at most twice per request (``dpop.DPoP``). ``dpop=True``
asks for bound tokens from every authorization server that may issue them, ``dpop=False``
never.

Authorization runs one at a time (a lock): requests that meet a 401 while another one is
authorizing wait for it and use its token. OAuth traffic (discovery, registration, the
token endpoint) goes through its own ``httpx.AsyncClient``, never with the MCP token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator, Generator, Mapping
from dataclasses import replace
from typing import Any

import httpx

from ...http_bodies import bounded
from ...tls import default_context
from ..errors import AuthorizationError, ResourceMetadataNotFound
from .challenge import Challenge
from .dpop import USE_DPOP_NONCE, DPoP, Prover
from .grants import Assertion, AuthorizationCode, ClientCredentials, Grant, JwtBearer, Registration, Target
from .metadata import (
    MAX_ANSWER,
    ResourceMetadata,
    ServerMetadata,
    _cut,
    canonical_resource,
    discover_legacy,
    discover_resource,
    discover_server,
)
from .redirect import Redirect
from .store import MemoryTokenStore, Tokens, TokenStore

log = logging.getLogger(__name__)

OFFLINE_ACCESS = "offline_access"
REFRESHED = frozenset({"\x00refreshed"})  # marks a request that already tried a refresh
MAX_GRANTS = 3  # authorizations one request may cause (a server that asks for another scope each time)


def union_scopes(*scopes: str | None) -> str | None:
    """Space-separated scopes, in first-seen order, without repeats; None when empty."""
    seen: dict[str, None] = {}
    for scope in scopes:
        for item in (scope or "").split():
            seen.setdefault(item, None)
    return " ".join(seen) or None


WITHOUT_RESOURCE_METADATA = frozenset({"2024-11-05", "2025-03-26"})
"""Revisions whose servers publish no Protected Resource Metadata (2025-03-26's discovery rules)."""


def protocol_version(request: httpx.Request) -> str | None:
    """The MCP protocol version ``request`` speaks: its ``MCP-Protocol-Version`` header, else
    the version an ``initialize`` request asks for (before the header exists), else None.
    """
    version: str | None = request.headers.get("mcp-protocol-version")
    if version:
        return version
    try:
        message = json.loads(request.content)
    except (httpx.RequestNotRead, ValueError):
        return None
    params = message.get("params") if isinstance(message, dict) and message.get("method") == "initialize" else None
    asked = params.get("protocolVersion") if isinstance(params, dict) else None
    return asked if isinstance(asked, str) else None


# http_options that configure TLS: with any of them the client builds its own context (httpx
# would load a client certificate into the shared one, for every client of the process to present)
TLS_OPTIONS = frozenset({"verify", "cert", "trust_env"})


class OAuth(httpx.Auth):
    """OAuth 2.1 for MCP over Streamable HTTP; pass it as ``connect(url, auth=...)``.

    By default the authorization code grant, with the user going through ``redirect``
    (a ``LoopbackRedirect``: the browser, and a listener on 127.0.0.1). The client identifies
    itself with ``registration`` (pre-registered), else ``client_metadata_url`` (a Client ID
    Metadata Document, when the server supports them), else dynamic registration as
    ``client_name``. ``OAuth.client_credentials(...)`` is for machine clients,
    ``OAuth.jwt_bearer(...)`` for clients holding an assertion from another identity provider.

    ``dpop``: None binds tokens to a key (RFC 9449) when the MCP server offers DPoP, True
    whenever the authorization server can, False never; ``dpop_key`` (a private key, PEM or
    JWK) is the key, for tokens that outlive the process in a ``FileTokenStore`` (default: a
    new ES256 key for this object's life).

    ``store`` keeps registrations and tokens (default: in memory). ``allow_http`` lets OAuth
    talk to non-loopback servers over plain HTTP (never do this in production).
    ``http_options`` configure the OAuth ``httpx.AsyncClient`` (``verify``, ``proxy``, ...).
    """

    requires_request_body = False
    requires_response_body = False

    def __init__(
        self,
        redirect: Redirect | None = None,
        *,
        client_name: str = "mcpgen client",
        client_metadata_url: str | None = None,
        client_metadata: Mapping[str, Any] | None = None,
        registration: Registration | None = None,
        store: TokenStore | None = None,
        allow_http: bool = False,
        timeout: float = 30.0,
        http_options: Mapping[str, Any] | None = None,
        grant: Grant | None = None,
        dpop: bool | None = None,
        dpop_key: str | Mapping[str, Any] | None = None,
    ) -> None:
        self.grant: Grant = grant or AuthorizationCode(
            redirect,
            client_name=client_name,
            client_metadata_url=client_metadata_url,
            client_metadata=client_metadata,
            registration=registration,
        )
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.allow_http = allow_http
        self.timeout = timeout
        self.http_options = dict(http_options or {})
        self._tokens: dict[str, Tokens | None] = {}
        self._metadata: dict[str, ServerMetadata] = {}
        self._lock: asyncio.Lock | None = None
        self._authorizing = 0  # authorizations under way (a user may be signing in)
        self.authorizations = 0  # authorizations begun, ever (a request's wait restarts when it changed)
        self.grants = 0  # new grants kept, ever (not refreshes): another authorization context
        self._settled: asyncio.Event | None = None  # set while none is
        self.dpop = dpop
        self._dpop = DPoP(dpop_key)

    @classmethod
    def client_credentials(
        cls,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: str | Mapping[str, Any] | None = None,
        issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        **options: Any,
    ) -> OAuth:
        """A machine client (the client credentials grant), authenticated with a secret
        (``client_secret_basic`` or ``_post``, as the server supports) or a private key
        (``private_key_jwt``: PEM or JWK).
        """
        registration = Registration(
            client_id,
            client_secret,
            issuer=issuer,
            token_endpoint_auth_method=token_endpoint_auth_method,
            private_key=private_key,
        )
        return cls(grant=ClientCredentials(registration), **options)

    @classmethod
    def jwt_bearer(
        cls,
        assertion: str | Assertion,
        client_id: str,
        client_secret: str | None = None,
        *,
        private_key: str | Mapping[str, Any] | None = None,
        issuer: str | None = None,
        token_endpoint_auth_method: str | None = None,
        **options: Any,
    ) -> OAuth:
        """A client holding an assertion from another identity provider (RFC 7523): a workload
        identity JWT, or an ``IdentityAssertion`` (an enterprise IdP's ID token exchanged for an
        ID-JAG per authorization).
        """
        registration = Registration(
            client_id,
            client_secret,
            issuer=issuer,
            token_endpoint_auth_method=token_endpoint_auth_method,
            private_key=private_key,
        )
        return cls(grant=JwtBearer(assertion, registration), **options)

    def __repr__(self) -> str:
        return f"OAuth({type(self.grant).__name__}, store={self.store!r})"

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("OAuth authorizes MCP requests made with httpx.AsyncClient, not httpx.Client")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        server = canonical_resource(str(request.url))
        tokens = await self._usable_tokens(server)
        asked: set[frozenset[str]] = set()
        nonces: set[str] = set()  # the nonces this request was retried with
        while True:
            prover = self._present(request, tokens)
            response = yield request
            nonce = prover.remember(request.url, response) if prover is not None else None
            challenge = Challenge.of(response, "dpop" if prover is not None else "bearer")
            if challenge is None:
                return
            if challenge.error == USE_DPOP_NONCE and prover is not None:
                if nonce is None or nonce in nonces or len(nonces) >= 2:
                    raise AuthorizationError(
                        f"{server} keeps refusing this client's DPoP nonces"
                        + (f" ({len(nonces)} tried)" if nonces else " and gives none")
                    )
                nonces.add(nonce)  # RFC 9449 §9: again, with the nonce the server just gave
                continue
            self._begin()
            try:
                tokens = await self._answer(challenge, request, server, tokens, asked)
            except AuthorizationError:
                raise
            except Exception as exc:  # the transport reports AuthorizationError per request
                raise AuthorizationError(f"authorizing {server} failed: {exc}") from exc
            finally:
                self._end()

    @property
    def authorizing(self) -> bool:
        """An authorization is under way (the user may be signing in): a request's time does not run
        meanwhile (``ClientSession.wait``), nor does ``connect``'s probe take its wait for a verdict."""
        return self._authorizing > 0

    async def authorized(self) -> None:
        """Return once no authorization is under way."""
        while self._authorizing:
            if self._settled is None:
                self._settled = asyncio.Event()
            await self._settled.wait()

    def _begin(self) -> None:
        self._authorizing += 1
        self.authorizations += 1
        if self._settled is not None:
            self._settled.clear()

    def _end(self) -> None:
        self._authorizing -= 1
        if not self._authorizing and self._settled is not None:
            self._settled.set()

    def _present(self, request: httpx.Request, tokens: Tokens | None) -> Prover | None:
        """Put ``tokens`` on ``request``: Bearer, or DPoP with a fresh proof (then its prover)."""
        request.headers.pop("dpop", None)
        if tokens is None:
            return None
        prover = self._prover_of(tokens)
        if prover is None:
            request.headers["authorization"] = f"Bearer {tokens.access_token}"
            return None
        request.headers["authorization"] = f"DPoP {tokens.access_token}"
        request.headers["dpop"] = prover.proof(request.method, request.url, tokens.access_token)
        return prover

    def _prover_of(self, tokens: Tokens) -> Prover | None:
        """The prover of a DPoP token's key (None for a Bearer token)."""
        return self._refresh_prover(tokens) if tokens.token_type == "DPoP" else None

    def _refresh_prover(self, tokens: Tokens) -> Prover | None:
        """The prover of the key the tokens were got with, when there was one and it is still held."""
        key = self._dpop.holding(tokens.dpop_jkt, tokens.dpop_alg)
        return Prover(self._dpop, key) if key is not None else None

    def _prover_for(
        self, challenge: Challenge, resource: str, resource_metadata: ResourceMetadata | None, metadata: ServerMetadata
    ) -> Prover | None:
        """The key to bind new tokens to, or None for Bearer tokens (see the module's docstring)."""
        if self.dpop is False:
            return None
        document = resource_metadata.document if resource_metadata is not None else {}
        required = challenge.dpop_only or document.get("dpop_bound_access_tokens_required") is True
        offered = required or challenge.dpop or bool(document.get("dpop_signing_alg_values_supported"))
        algs = metadata.dpop_signing_alg_values_supported
        if not (required or (algs and (offered or self.dpop))):
            return None
        # the MCP server's own list, from its metadata or its challenge's algs (RFC 9449 §7.1)
        listed = document.get("dpop_signing_alg_values_supported")
        accepted = tuple(listed) if isinstance(listed, list) and listed else challenge.dpop_algs
        key = self._dpop.key_for(algs, accepted)
        if key is None and required:
            raise AuthorizationError(
                f"{resource} requires DPoP-bound tokens, and no proof algorithm this client signs with is "
                f"accepted by both it ({', '.join(accepted or ('any',))}) and {metadata.issuer} "
                f"({', '.join(algs or ('any',))})"
            )
        return Prover(self._dpop, key) if key is not None else None

    def _client(self) -> httpx.AsyncClient:
        options = dict(self.http_options)
        if not TLS_OPTIONS & options.keys():  # the shared context, only where nothing would change it
            options["verify"] = default_context()
        hooks = dict(options.pop("event_hooks", None) or {})  # the caller's hooks, and ours: answers bounded
        hooks["response"] = [*hooks.get("response", ()), bounded(MAX_ANSWER, MAX_ANSWER)]
        return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, event_hooks=hooks, **options)

    def _guard(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _current(self, server: str) -> Tokens | None:
        if server not in self._tokens:
            tokens = await self.store.get_tokens(server)
            if tokens is not None and tokens.dpop_jkt is not None and self._refresh_prover(tokens) is None:
                log.info("the stored tokens for %s are bound to a DPoP key this client no longer holds", server)
                # a DPoP access token is of no use; a Bearer one is, but not its refresh token
                tokens = None if tokens.token_type == "DPoP" else replace(tokens, refresh_token=None)
            self._tokens[server] = tokens
        return self._tokens[server]

    async def _keep(self, server: str, tokens: Tokens, *, granted: bool = False) -> Tokens:
        """``tokens`` current for ``server``, then stored; ``granted``: a new grant (not a
        refresh), counted as it becomes current (a store that fails after that still leaves
        them in use)."""
        self._tokens[server] = tokens
        if granted:
            self.grants += 1
        await self.store.set_tokens(server, tokens)
        return tokens

    async def _server_metadata(self, http: httpx.AsyncClient, issuer: str) -> ServerMetadata:
        if issuer not in self._metadata:
            self._metadata[issuer] = await discover_server(http, issuer, self.allow_http)
        return self._metadata[issuer]

    async def _usable_tokens(self, server: str) -> Tokens | None:
        """The server's tokens, refreshed first when they have expired (and can be)."""
        tokens = await self._current(server)
        if tokens is None or not tokens.expired():
            return tokens
        async with self._guard():
            tokens = await self._current(server)
            if tokens is None or not tokens.expired() or tokens.refresh_token is None:
                return tokens
            async with self._client() as http:
                try:
                    metadata = await self._server_metadata(http, tokens.issuer)
                except AuthorizationError:
                    return tokens
                refreshed = await self.grant.refresh(http, tokens, metadata, self.store, self._refresh_prover(tokens))
            if refreshed is None:
                return tokens
            log.info("refreshed the access token for %s at %s", server, tokens.issuer)
            return await self._keep(server, refreshed)

    async def _locate(
        self, http: httpx.AsyncClient, request: httpx.Request, challenge: Challenge
    ) -> tuple[str, ResourceMetadata | None, ServerMetadata]:
        """The resource to authorize for, its metadata (None for a 2025-03-26 server without
        any), and its authorization server's metadata, fetched afresh (a challenge: look again).
        """
        url = str(request.url)
        try:
            resource = await discover_resource(http, url, challenge.resource_metadata, self.allow_http)
        except ResourceMetadataNotFound as missing:
            if challenge.resource_metadata is not None:
                # the server says it publishes one, which could not be read: no 2025-03-26 server
                # (nor, for connect's probe, a reason to fall back to legacy)
                raise AuthorizationError(str(missing)) from None
            spoken = request.headers.get("mcp-protocol-version")
            if spoken and spoken not in WITHOUT_RESOURCE_METADATA:
                # from 2025-06-18 on, clients MUST discover the authorization server through the
                # metadata (a modern connect's probe then falls back to a legacy initialize,
                # which carries no version header: a 2025-03-26 server is still authorized)
                raise ResourceMetadataNotFound(f"{missing}; MCP {spoken} requires it") from None
            metadata = await discover_legacy(http, url, self.allow_http, protocol_version(request))
            # refreshes find it here (a server without metadata has no document to find again)
            self._metadata[metadata.issuer] = metadata
            return canonical_resource(url), None, metadata
        issuer = resource.authorization_servers[0]
        self._metadata.pop(issuer, None)
        return resource.resource, resource, await self._server_metadata(http, issuer)

    async def _answer(
        self,
        challenge: Challenge,
        request: httpx.Request,
        server: str,
        sent: Tokens | None,
        asked: set[frozenset[str]],
    ) -> Tokens:
        """New tokens that may satisfy ``challenge``; raises when authorizing again is pointless."""
        url = str(request.url)
        async with self._guard():
            current = await self._current(server)
            if current is not None and (sent is None or current.access_token != sent.access_token):
                needed = set((challenge.scope or "").split())
                if not challenge.insufficient_scope or needed <= set(current.scopes()):
                    return current  # another request authorized meanwhile
            async with self._client() as http:
                resource, resource_metadata, metadata = await self._locate(http, request, challenge)
                scopes_supported = resource_metadata.scopes_supported if resource_metadata is not None else None
                issuer = metadata.issuer
                wanted = challenge.scope or (" ".join(scopes_supported) if scopes_supported else None)
                scope = union_scopes(sent.scope if sent is not None else None, wanted)
                if self.grant.wants_refresh_tokens and scope and OFFLINE_ACCESS in (metadata.scopes_supported or ()):
                    scope = union_scopes(scope, OFFLINE_ACCESS)
                if (
                    challenge.status == 401
                    and sent is not None
                    and sent.refresh_token is not None
                    and (sent.issuer, sent.resource) == (issuer, resource)
                    and set((scope or "").split()) <= set(sent.scopes())
                    and REFRESHED not in asked
                ):  # the token was refused, not its scope: a refresh may do (once per request)
                    asked.add(REFRESHED)
                    refreshed = await self.grant.refresh(http, sent, metadata, self.store, self._refresh_prover(sent))
                    if refreshed is not None:
                        log.info("refreshed the access token for %s at %s", server, issuer)
                        return await self._keep(server, refreshed)
                key = frozenset((scope or "").split())
                grants = len(asked - {REFRESHED})
                if key not in asked and grants >= MAX_GRANTS:  # authorization.mdx: retry "no more than a few times"
                    raise AuthorizationError(
                        f"{url} still answers {challenge.status} after {grants} authorizations of this request, "
                        f"each for more scope (now {_cut(scope or '')!r}): giving up"
                    )
                if key in asked:
                    raise AuthorizationError(
                        f"{url} still answers {challenge.status}"
                        + (f" ({challenge.error})" if challenge.error else "")
                        + f" after authorizing scope {scope!r} with {issuer}: giving up"
                    )
                asked.add(key)
                log.info("authorizing %s with %s (scope %s)", resource, issuer, scope)
                prover = self._prover_for(challenge, resource, resource_metadata, metadata)
                target = Target(server, resource, metadata, scope, prover)
                return await self._keep(server, await self.grant.obtain(http, target, self.store), granted=True)
