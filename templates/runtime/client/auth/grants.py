"""How a client gets its tokens from an authorization server: the grants, the client's
identity at that server, and the token endpoint.

- ``AuthorizationCode``: on behalf of a user, through a ``Redirect``: PKCE S256 (refused when
  the server does not list it), ``resource`` (RFC 8707) on the authorization and token
  requests, ``state`` and the RFC 9207 ``iss`` checked before the code is used. The client's
  identity comes, in the specification's order of preference, from a pre-registration, a
  Client ID Metadata Document URL (when the server supports them), or dynamic registration
  (RFC 7591), kept per issuer in the token store.
- ``ClientCredentials``: a machine client on its own behalf (the MCP client-credentials
  extension), authenticated with a secret or a private-key JWT (RFC 7523, audience: the
  issuer).
- ``JwtBearer``: an assertion from another identity provider traded for a token (RFC 7523
  §2.1): a workload identity token as is, or (``IdentityAssertion``) an enterprise IdP's ID
  token first exchanged at that IdP for an identity assertion grant (RFC 8693; the MCP
  enterprise-managed authorization extension). A refused assertion is reported, never retried.

The request building and client authentication are authlib's (framework-agnostic parts);
the HTTP goes through httpx.
"""

from __future__ import annotations

import abc
import hmac
import math
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.auth import ClientAuth
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7523 import PrivateKeyJWT
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc.jwk import import_key

from ..errors import AuthorizationError
from .dpop import USE_DPOP_NONCE, Prover
from .metadata import ServerMetadata, _cut, check_secure, exchange, is_loopback
from .redirect import AuthorizationResponse, LoopbackRedirect, Redirect
from .store import ClientInfo, Tokens, TokenStore

SECRET_METHODS = ("client_secret_basic", "client_secret_post")
"""Token endpoint authentication with a shared secret, in order of preference."""
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


@dataclass(frozen=True)
class Target:
    """What is being authorized: one MCP server, at one authorization server, for a scope."""

    server: str
    """The MCP server's canonical URI (where the tokens are kept)."""
    resource: str
    """The RFC 8707 ``resource`` value: the protected resource metadata's ``resource``."""
    metadata: ServerMetadata
    scope: str | None
    dpop: Prover | None = None
    """Bind the token to this key (RFC 9449): a proof goes with the token request."""


# what an access token must be to go in the Authorization header: visible ASCII (RFC 6750's
# b64token is narrower, but real servers issue others: Salesforce's hold a "!")
SENDABLE = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class Registration:
    """A client registered beforehand with an authorization server.

    ``issuer`` binds it to that server; left None it binds to the first server it is used
    with, and a later different server is refused rather than shown these credentials.
    ``token_endpoint_auth_method`` None picks one the server supports. ``private_key`` (PEM
    or a JWK dict) authenticates with ``private_key_jwt``, signed with the key type's
    algorithm (RS256, ES256, EdDSA) unless the server lists others.
    """

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    issuer: str | None = None
    token_endpoint_auth_method: str | None = None
    private_key: str | Mapping[str, Any] | None = field(default=None, repr=False)

    def method_for(self, metadata: ServerMetadata) -> str:
        if self.token_endpoint_auth_method is not None:
            return self.token_endpoint_auth_method
        if self.private_key is not None:
            return "private_key_jwt"
        if self.client_secret is None:
            return "none"
        supported = metadata.token_endpoint_auth_methods_supported
        return next((m for m in SECRET_METHODS if m in supported), SECRET_METHODS[0])


class Grant(abc.ABC):
    """One way to obtain tokens; ``OAuth`` does the discovery and calls it."""

    wants_refresh_tokens = False
    registration: Registration | None = None

    def __init__(self) -> None:
        self._bound_issuer: str | None = None

    def pre_registered(self, metadata: ServerMetadata) -> ClientInfo | None:
        """The pre-registered identity at this server; refuses one bound to another server."""
        registration = self.registration
        if registration is None:
            return None
        bound = registration.issuer or self._bound_issuer
        if bound is None:
            self._bound_issuer = metadata.issuer
        elif bound != metadata.issuer:
            raise AuthorizationError(
                f"the pre-registered client {registration.client_id!r} belongs to the authorization server "
                f"{bound}, but the MCP server now names {metadata.issuer}: register with it"
            )
        return ClientInfo(
            registration.client_id,
            registration.client_secret,
            registration.method_for(metadata),
            origin="pre-registered",
        )

    async def client(
        self, http: httpx.AsyncClient, metadata: ServerMetadata, store: TokenStore, *, register: bool
    ) -> ClientInfo | None:
        """This client's identity at ``metadata.issuer``; None when it has none and ``register``
        is false (or cannot get one).
        """
        return self.pre_registered(metadata)

    @abc.abstractmethod
    async def obtain(self, http: httpx.AsyncClient, target: Target, store: TokenStore) -> Tokens: ...

    async def refresh(
        self,
        http: httpx.AsyncClient,
        tokens: Tokens,
        metadata: ServerMetadata,
        store: TokenStore,
        dpop: Prover | None = None,
    ) -> Tokens | None:
        """New tokens from ``tokens.refresh_token``, or None when there is none or the server
        refuses it (the caller then obtains tokens anew). ``dpop``: the key a DPoP-bound
        token's refresh proves (RFC 9449 §5).
        """
        if tokens.refresh_token is None:
            return None
        client = await self.client(http, metadata, store, register=False)
        if client is None:
            return None
        try:
            answer = await token_request(
                http,
                metadata,
                client,
                self.signing_key(),
                "refresh_token",
                refresh_token=tokens.refresh_token,
                resource=tokens.resource,
                dpop=dpop,
            )
        except AuthorizationError:
            return None
        return tokens_from(answer, metadata.issuer, tokens.resource, tokens.scope, previous=tokens, dpop=dpop)

    def signing_key(self) -> Any:
        """The key for ``private_key_jwt``, when this client authenticates with one."""
        registration = self.registration
        if registration is None or registration.private_key is None:
            return None
        key = registration.private_key
        return import_key(dict(key) if isinstance(key, Mapping) else key)


class AuthorizationCode(Grant):
    """The authorization code grant with PKCE, through ``redirect`` (the user's browser)."""

    wants_refresh_tokens = True

    def __init__(
        self,
        redirect: Redirect | None = None,
        *,
        client_name: str = "mcpgen client",
        client_metadata_url: str | None = None,
        client_metadata: Mapping[str, Any] | None = None,
        registration: Registration | None = None,
    ) -> None:
        super().__init__()
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError(f"a client metadata document URL must be https with a path: {client_metadata_url!r}")
        self.redirect: Redirect = redirect if redirect is not None else LoopbackRedirect()
        self.client_name = client_name
        self.client_metadata_url = client_metadata_url
        self.client_metadata = dict(client_metadata or {})
        self.registration = registration

    async def client(
        self, http: httpx.AsyncClient, metadata: ServerMetadata, store: TokenStore, *, register: bool
    ) -> ClientInfo | None:
        """Pre-registered, else registered earlier with this issuer, else a Client ID Metadata
        Document, else dynamic registration (RFC 7591).
        """
        client = self.pre_registered(metadata)
        if client is not None:
            return client
        redirect_uri = self.redirect.redirect_uri
        stored = await store.get_client(metadata.issuer)
        if stored is not None and redirect_allowed(redirect_uri, stored.redirect_uris):
            return stored
        if self.client_metadata_url is not None and metadata.client_id_metadata_document_supported:
            return ClientInfo(self.client_metadata_url, None, "none", (redirect_uri,), origin="metadata-document")
        if not register:
            return None
        if metadata.registration_endpoint is None:
            raise AuthorizationError(
                f"the authorization server {metadata.issuer} has no registration endpoint"
                + (" and does not accept client metadata documents" if self.client_metadata_url else "")
                + ": this client needs a pre-registration (Registration(client_id=...))"
            )
        client = await register_client(http, metadata, self.registration_request(redirect_uri, metadata))
        await store.set_client(metadata.issuer, client)
        return client

    def registration_request(self, redirect_uri: str, metadata: ServerMetadata) -> dict[str, Any]:
        supported = metadata.token_endpoint_auth_methods_supported
        method = next((m for m in ("none", *SECRET_METHODS) if m in supported), "none")
        return {
            "client_name": self.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "application_type": "native" if is_loopback(redirect_uri) else "web",
            **self.client_metadata,
        }

    async def obtain(self, http: httpx.AsyncClient, target: Target, store: TokenStore) -> Tokens:
        metadata = target.metadata
        if metadata.authorization_endpoint is None:
            raise AuthorizationError(f"the authorization server {metadata.issuer} has no authorization endpoint")
        if "S256" not in (metadata.code_challenge_methods_supported or ()):
            raise AuthorizationError(
                f"the authorization server {metadata.issuer} does not support PKCE with S256: refusing to authorize"
            )
        # security-considerations.mdx: every redirect URI MUST be localhost or https (checked
        # before registering it or sending the user anywhere)
        redirect_uri = check_secure(self.redirect.redirect_uri, "redirect URI", allow_http=False)
        client = await self.client(http, metadata, store, register=True)
        assert client is not None
        verifier = generate_token(64)
        state = generate_token(32)
        url = prepare_grant_uri(
            metadata.authorization_endpoint,
            client_id=client.client_id,
            response_type="code",
            redirect_uri=redirect_uri,
            scope=target.scope,
            state=state,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
            resource=target.resource,
        )
        response = await self.redirect(url)
        code = check_authorization_response(response, metadata, state)
        answer = await token_request(
            http,
            metadata,
            client,
            self.signing_key(),
            "authorization_code",
            code=code,
            redirect_uri=redirect_uri,
            code_verifier=verifier,
            resource=target.resource,
            dpop=target.dpop,
        )
        return tokens_from(answer, metadata.issuer, target.resource, target.scope, dpop=target.dpop)


class ClientCredentials(Grant):
    """The client credentials grant: a machine client acting on its own behalf."""

    def __init__(self, registration: Registration) -> None:
        super().__init__()
        self.registration = registration

    async def obtain(self, http: httpx.AsyncClient, target: Target, store: TokenStore) -> Tokens:
        client = self.pre_registered(target.metadata)
        assert client is not None
        answer = await token_request(
            http,
            target.metadata,
            client,
            self.signing_key(),
            "client_credentials",
            scope=target.scope,
            resource=target.resource,
            dpop=target.dpop,
        )
        return tokens_from(answer, target.metadata.issuer, target.resource, target.scope, dpop=target.dpop)


Assertion = Callable[[httpx.AsyncClient, Target], Awaitable[str]]
"""Produces a JWT-bearer assertion for one authorization (it may call other servers)."""


class JwtBearer(Grant):
    """The JWT bearer grant: ``assertion`` (a JWT, or an ``Assertion`` making one) for a token."""

    def __init__(self, assertion: str | Assertion, registration: Registration) -> None:
        super().__init__()
        self.assertion = assertion
        self.registration = registration

    def __repr__(self) -> str:
        return f"JwtBearer({self.registration!r})"

    async def obtain(self, http: httpx.AsyncClient, target: Target, store: TokenStore) -> Tokens:
        client = self.pre_registered(target.metadata)
        assert client is not None
        assertion = self.assertion if isinstance(self.assertion, str) else await self.assertion(http, target)
        answer = await token_request(
            http,
            target.metadata,
            client,
            self.signing_key(),
            JWT_BEARER,
            assertion=assertion,
            scope=target.scope,
            resource=target.resource,
            dpop=target.dpop,
        )
        return tokens_from(answer, target.metadata.issuer, target.resource, target.scope, dpop=target.dpop)


@dataclass(frozen=True)
class IdentityAssertion:
    """An ``Assertion`` from an enterprise identity provider: its ID token exchanged at its
    token endpoint (RFC 8693) for an identity assertion grant (ID-JAG) addressed to the MCP
    server's authorization server and naming the resource.
    """

    token_endpoint: str
    id_token: str = field(repr=False)
    client_id: str
    client_secret: str | None = field(default=None, repr=False)

    async def __call__(self, http: httpx.AsyncClient, target: Target) -> str:
        body = prepare_token_request(
            TOKEN_EXCHANGE,
            "",
            requested_token_type=ID_JAG,
            audience=target.metadata.issuer,
            resource=target.resource,
            scope=target.scope,
            subject_token=self.id_token,
            subject_token_type=ID_TOKEN,
        )
        headers = {"accept": "application/json", "content-type": "application/x-www-form-urlencoded"}
        method = "client_secret_basic" if self.client_secret else "none"
        url, headers, body = ClientAuth(self.client_id, self.client_secret, method).prepare(
            "POST", self.token_endpoint, headers, body
        )
        try:
            response = await exchange(http, "POST", url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"the token exchange at {url} failed: {exc!r}") from exc
        answer = _json_object(response)
        grant = answer.get("access_token")
        if response.status_code != 200 or not isinstance(grant, str):
            raise AuthorizationError(
                f"the identity provider {url} refused the token exchange: {_oauth_error(response, answer)}"
            )
        if answer.get("issued_token_type") != ID_JAG:
            raise AuthorizationError(
                f"the identity provider {url} issued a {_cut(repr(answer.get('issued_token_type')))}, not an ID-JAG"
            )
        return grant


def redirect_allowed(redirect_uri: str, registered: tuple[str, ...]) -> bool:
    """``redirect_uri`` is registered, the port aside for loopback addresses (RFC 8252 §7.3)."""
    if redirect_uri in registered:
        return True
    if not is_loopback(redirect_uri):
        return False
    mine = urlsplit(redirect_uri)
    return any(
        (theirs.scheme, theirs.hostname, theirs.path) == (mine.scheme, mine.hostname, mine.path)
        for theirs in map(urlsplit, registered)
    )


def check_authorization_response(response: AuthorizationResponse, metadata: ServerMetadata, state: str) -> str:
    """The code, once the response is known to come from ``metadata.issuer`` (RFC 9207: a
    present ``iss`` must equal it exactly; an absent one is refused when the server
    advertises it) and to answer this request (``state``). Nothing in a response that fails
    the issuer check is acted on or shown, its ``error`` included.
    """
    if response.iss is not None:
        if response.iss != metadata.issuer:
            raise AuthorizationError(
                f"the authorization response names issuer {response.iss!r}, not {metadata.issuer!r}: rejected"
            )
    elif metadata.iss_parameter_supported:
        raise AuthorizationError(
            f"the authorization response lacks the 'iss' parameter {metadata.issuer} advertises: rejected"
        )
    if not hmac.compare_digest((response.state or "").encode(), state.encode()):
        raise AuthorizationError("the authorization response does not carry this request's state: rejected")
    if response.error is not None:
        description = response.params.get("error_description")
        raise AuthorizationError(
            f"authorization refused: {response.error}" + (f" ({description})" if description else "")
        )
    if not response.code:
        raise AuthorizationError("the authorization response carries no code")
    return response.code


async def register_client(http: httpx.AsyncClient, metadata: ServerMetadata, request: dict[str, Any]) -> ClientInfo:
    """Dynamic client registration (RFC 7591) at ``metadata.registration_endpoint``."""
    assert metadata.registration_endpoint is not None
    try:
        response = await exchange(
            http, "POST", metadata.registration_endpoint, json=request, headers={"accept": "application/json"}
        )
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"client registration at {metadata.registration_endpoint} failed: {exc!r}") from exc
    answer = _json_object(response)
    if response.status_code not in (200, 201) or not isinstance(answer.get("client_id"), str):
        raise AuthorizationError(
            f"client registration at {metadata.registration_endpoint} failed: {_oauth_error(response, answer)}"
        )
    secret = answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None
    method = answer.get("token_endpoint_auth_method") or request["token_endpoint_auth_method"]
    if method in SECRET_METHODS and secret is None:
        raise AuthorizationError(
            f"the authorization server {metadata.issuer} registered this client for {method} but issued no secret"
        )
    uris = answer.get("redirect_uris")
    asked = request.get("redirect_uris") or ()
    registered = tuple(u for u in uris if isinstance(u, str)) if isinstance(uris, list) else None
    if registered is not None and not all(redirect_allowed(u, registered) for u in asked):
        # RFC 7591 3.2.1: the server may replace what was asked; a redirect it will not accept is
        # of no use (kept, it made the client register again at every authorization)
        raise AuthorizationError(
            f"the authorization server {metadata.issuer} registered this client for the redirect URIs "
            f"{_cut(repr(uris))}, not {request['redirect_uris']!r}: not used"
        )
    return ClientInfo(
        client_id=answer["client_id"],
        client_secret=secret,
        token_endpoint_auth_method=str(method),
        redirect_uris=tuple(uris) if isinstance(uris, list) else tuple(request["redirect_uris"]),
        origin="registered",
    )


async def token_request(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientInfo,
    signing_key: Any,
    grant_type: str,
    dpop: Prover | None = None,
    **params: Any,
) -> dict[str, Any]:
    """POST a grant to the token endpoint, authenticated as ``client``; the token response.

    ``private_key_jwt`` signs an assertion whose audience is the issuer (RFC 7523bis).
    ``dpop``: the request carries a proof of that key, and a DPoP token is accepted; a
    ``use_dpop_nonce`` answer is retried once with the server's nonce (RFC 9449 §8).
    """
    method: Any = client.token_endpoint_auth_method
    secret: Any = client.client_secret
    if method == "private_key_jwt":
        if signing_key is None:
            raise AuthorizationError(f"the client {client.client_id!r} uses private_key_jwt but has no private key")
        key_type = getattr(signing_key, "key_type", "RSA")
        default_alg = {"EC": "ES256", "OKP": "EdDSA"}.get(key_type, "RS256")
        method = PrivateKeyJWT(token_endpoint=metadata.issuer, alg=_signing_alg(metadata, default_alg))
        secret = signing_key
    elif method not in ("none", *SECRET_METHODS):
        raise AuthorizationError(f"unsupported token endpoint authentication method {method!r}")
    for attempt in (1, 2):
        body = prepare_token_request(grant_type, "", **params)  # afresh: a client assertion is single-use
        headers = {"accept": "application/json", "content-type": "application/x-www-form-urlencoded"}
        url, headers, body = ClientAuth(client.client_id, secret, method).prepare(
            "POST", metadata.token_endpoint, headers, body
        )
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", url)
        try:
            response = await exchange(http, "POST", url, content=body, headers=headers)
        except httpx.HTTPError as exc:
            raise AuthorizationError(f"the token request to {url} failed: {exc!r}") from exc
        answer = _json_object(response)
        nonce = dpop.remember(url, response) if dpop is not None else None
        if not (attempt == 1 and nonce and response.status_code == 400 and answer.get("error") == USE_DPOP_NONCE):
            break
    if response.status_code != 200 or not isinstance(answer.get("access_token"), str):
        why = _oauth_error(response, answer)
        raise AuthorizationError(f"the token endpoint {url} refused the {grant_type} grant: {why}")
    token_type = answer.get("token_type")
    kinds = ("bearer", "dpop") if dpop is not None else ("bearer",)
    if not isinstance(token_type, str) or token_type.lower() not in kinds:
        uses = "Bearer or DPoP" if dpop is not None else "Bearer"
        raise AuthorizationError(
            f"the token endpoint {url} issued a {_cut(repr(token_type))} token; this client uses {uses}"
        )
    if not SENDABLE.fullmatch(answer["access_token"]):  # it goes in the Authorization header as it is
        raise AuthorizationError(
            f"the token endpoint {url} issued an access token that cannot go in a header (not visible ASCII): refused"
        )
    return answer


def _signing_alg(metadata: ServerMetadata, default: str) -> str:
    supported = metadata.document.get("token_endpoint_auth_signing_alg_values_supported")
    if isinstance(supported, list) and supported and default not in supported:
        return str(supported[0])
    return default


def tokens_from(
    answer: Mapping[str, Any],
    issuer: str,
    resource: str,
    requested: str | None,
    previous: Tokens | None = None,
    dpop: Prover | None = None,
) -> Tokens:
    """A token response as ``Tokens``: a refresh token or scope the response leaves out is
    carried over from ``previous`` (the server did not rotate it) or the request. Tokens got
    with a proof (``dpop``) record its key: a DPoP access token is bound to it, and a public
    client's refresh token may be even when the server issues a Bearer access token (RFC 9449 §5).
    """
    try:
        lifetime: float | None = float(answer["expires_in"])
    except (KeyError, TypeError, ValueError, OverflowError):  # (an int of 400 digits overflows)
        lifetime = None
    if lifetime is not None and not (math.isfinite(lifetime) and lifetime >= 0):
        lifetime = None  # negative, NaN or infinite: no lifetime said (refreshed on a 401, not before each request)
    scope = answer.get("scope")
    refresh = answer.get("refresh_token")
    bound = dpop is not None and str(answer.get("token_type")).lower() == "dpop"
    return Tokens(
        access_token=answer["access_token"],
        issuer=issuer,
        resource=resource,
        token_type="DPoP" if bound else "Bearer",
        dpop_jkt=dpop.key.thumbprint if dpop is not None else None,
        dpop_alg=dpop.key.alg if dpop is not None else None,
        refresh_token=refresh if isinstance(refresh, str) else (previous.refresh_token if previous else None),
        expires_at=time.time() + lifetime if lifetime is not None else None,
        scope=scope if isinstance(scope, str) else requested,
    )


def _json_object(response: httpx.Response) -> dict[str, Any]:
    try:
        value = response.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _oauth_error(response: httpx.Response, answer: Mapping[str, Any]) -> str:
    """The server's error and its description, as a message quotes them (``_cut``)."""
    error = answer.get("error")
    if isinstance(error, str):
        description = answer.get("error_description")
        said = error + (f" ({description})" if isinstance(description, str) and description else "")
        return _cut(said)
    return f"HTTP {response.status_code}"
