"""The protected-resource side of MCP authorization (needs the ``auth`` extra).

An MCP server guarding its endpoint is an OAuth 2.1 resource server. This module holds the
pieces, each usable on its own, that the HTTP app puts in front of its handlers:

- ``ProtectedResource``: this server's identity and its RFC 9728 metadata document (which
  authorization servers, which scopes), with the well-known path it is served at;
- ``TokenVerifier``: turns a bearer token into a ``Principal`` or raises ``InvalidToken``.
  ``JWTVerifier`` checks a signed JWT against the issuer's JWKS (signature by an allowed
  asymmetric algorithm, ``exp``/``nbf``, issuer, audience = this resource);
  ``IntrospectionVerifier`` asks the authorization server (RFC 7662);
- ``ScopePolicy``: the scopes a request needs, per method and per tool, with broader scopes
  implying narrower ones;
- ``BearerGuard``: all of it for one request: a ``Principal``, or a ``Denial`` to send (401
  with a ``WWW-Authenticate`` challenge naming the metadata and the scopes, 403
  ``insufficient_scope``, 503 when the verifier cannot reach the authorization server).

The JOSE work is joserfc's; nothing here logs a token.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""JWS algorithms a resource server accepts by default: public-key signatures only, so a key
published in a JWKS can never double as an HMAC secret, and never ``none``."""

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_BEARER = re.compile(r"Bearer +([A-Za-z0-9\-._~+/]+=*) *", re.IGNORECASE)
_CHALLENGE_TEXT = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")  # RFC 6750 §3: what a quoted value may hold


@dataclass(frozen=True)
class Principal:
    """Who a verified token speaks for: the subject (a user, or the client itself for a
    machine client), the client, the scopes granted.
    """

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    issuer: str | None = None
    audience: tuple[str, ...] = ()
    expires_at: float | None = None
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def identity(self) -> str:
        """A stable key for this principal across tokens (issuer, then subject or client)."""
        return f"{self.issuer or ''}\x00{self.subject or ''}\x00{self.client_id or ''}"


class InvalidToken(Exception):
    """The token is not acceptable here (malformed, bad signature, expired, not for this
    resource); the message says why and goes into ``error_description``.
    """


class VerifierUnavailable(Exception):
    """The verifier could not decide (the JWKS or introspection endpoint is unreachable)."""


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> Principal:
        """The principal ``token`` stands for; raises ``InvalidToken`` or ``VerifierUnavailable``."""
        ...


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """Granted scopes: ``scope`` (a space-separated string, RFC 9068/7662) or ``scp`` (a list)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    scp = claims.get("scp")
    if isinstance(scp, list) and all(isinstance(s, str) for s in scp):
        return frozenset(scp)
    if isinstance(scp, str):
        return frozenset(scp.split())
    return frozenset()


def audiences_of(claims: Mapping[str, Any]) -> tuple[str, ...]:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list):
        return tuple(a for a in aud if isinstance(a, str))
    return ()


def _principal(claims: Mapping[str, Any]) -> Principal:
    def text(key: str) -> str | None:
        value = claims.get(key)
        return value if isinstance(value, str) else None

    exp = claims.get("exp")
    return Principal(
        subject=text("sub"),
        client_id=text("client_id") or text("azp"),
        scopes=scopes_of(claims),
        issuer=text("iss"),
        audience=audiences_of(claims),
        expires_at=float(exp) if isinstance(exp, (int, float)) and not isinstance(exp, bool) else None,
        claims=dict(claims),
    )


class JWTVerifier:
    """Verifies JWT access tokens (RFC 9068) signed by ``issuer``.

    Keys come from ``jwks`` (a JWKS document) or are fetched from ``jwks_uri`` and cached for
    ``cache_seconds``; a token naming an unknown ``kid`` refetches them, at most once every
    ``refetch_seconds``. The token must be signed with one of ``algorithms`` by a key of the
    matching type, carry ``exp`` (and ``nbf``, when present, must have passed), name
    ``issuer`` as ``iss`` and one of ``audience`` (this resource) in ``aud``; ``leeway``
    seconds absorb clock skew.
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Sequence[str],
        jwks_uri: str | None = None,
        jwks: Mapping[str, Any] | None = None,
        algorithms: Collection[str] = ASYMMETRIC_ALGORITHMS,
        leeway: int = 30,
        cache_seconds: float = 300.0,
        refetch_seconds: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        if (jwks_uri is None) == (jwks is None):
            raise ValueError("give exactly one of jwks_uri and jwks")
        if "none" in algorithms or any(alg.startswith("HS") for alg in algorithms):
            raise ValueError("a resource server verifies public-key signatures only: no 'none', no HMAC")
        self.issuer = issuer
        self.audience = (audience,) if isinstance(audience, str) else tuple(audience)
        self.jwks_uri = jwks_uri
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.cache_seconds = cache_seconds
        self.refetch_seconds = refetch_seconds
        self.http = http
        self._keys: KeySet | None = KeySet.import_key_set(dict(jwks)) if jwks is not None else None  # type: ignore[arg-type]
        self._fetched_at = float("-inf")
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"JWTVerifier(issuer={self.issuer!r}, audience={self.audience!r})"

    async def _fetch(self) -> KeySet:
        assert self.jwks_uri is not None
        try:
            if self.http is not None:
                response = await self.http.get(self.jwks_uri, headers={"accept": "application/json"})
            else:
                async with httpx.AsyncClient(timeout=10.0) as http:
                    response = await http.get(self.jwks_uri, headers={"accept": "application/json"})
            response.raise_for_status()
            keys = KeySet.import_key_set(response.json())
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            raise VerifierUnavailable(f"cannot load the JWKS at {self.jwks_uri}: {exc}") from exc
        self._keys, self._fetched_at = keys, time.monotonic()
        return keys

    async def key_set(self, kid: str | None = None) -> KeySet:
        """The issuer's keys: cached, or fetched when stale or when ``kid`` is not among them."""
        if self.jwks_uri is None:
            assert self._keys is not None
            return self._keys
        async with self._lock:
            age = time.monotonic() - self._fetched_at
            keys = self._keys
            if keys is None or age > self.cache_seconds:
                return await self._fetch()
            if kid is not None and not any(key.kid == kid for key in keys) and age > self.refetch_seconds:
                return await self._fetch()
            return keys

    async def verify(self, token: str) -> Principal:
        try:
            header = jws.extract_compact(token.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as exc:
            raise InvalidToken("the token is not a signed JWT") from exc
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken(f"the token is signed with {alg!r}, which this server does not accept")
        kid = header.get("kid")
        keys = await self.key_set(kid if isinstance(kid, str) else None)
        if isinstance(kid, str) and not any(key.kid == kid for key in keys):
            raise InvalidToken("the token is signed by a key the issuer does not publish")
        try:
            claims = jwt.decode(token, keys, algorithms=list(self.algorithms)).claims
        except (JoseError, ValueError) as exc:
            raise InvalidToken("the token's signature does not verify") from exc
        registry = jwt.JWTClaimsRegistry(
            leeway=self.leeway,
            iss={"essential": True, "value": self.issuer},
            aud={"essential": True, "values": list(self.audience)},
            exp={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise InvalidToken(_claim_problem(exc, self.issuer)) from exc
        return _principal(claims)


def _claim_problem(exc: JoseError, issuer: str) -> str:
    """What is wrong with a token's claims, for ``error_description``."""
    claim = getattr(exc, "claim", None)
    if exc.error == "expired_token":
        return "the token has expired"
    if claim == "nbf":
        return "the token is not valid yet"
    if claim == "aud":
        return "the token is not for this resource"
    if claim == "iss":
        return f"the token was not issued by {issuer}"
    return f"the token's {claim or 'claims'} claim is missing or malformed"


class IntrospectionVerifier:
    """Asks the authorization server about each token (RFC 7662), authenticating as
    ``client_id``/``client_secret`` (HTTP Basic). The answer must be ``active``, for one of
    ``audience`` (this resource), from ``issuer`` when given, and within ``exp``/``nbf``.
    """

    def __init__(
        self,
        *,
        endpoint: str,
        audience: str | Sequence[str],
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        leeway: int = 30,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.audience = (audience,) if isinstance(audience, str) else tuple(audience)
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.leeway = leeway
        self.http = http

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.endpoint!r}, audience={self.audience!r})"

    async def _introspect(self, token: str) -> httpx.Response:
        auth: Any = httpx.BasicAuth(self.client_id, self.client_secret or "") if self.client_id else None
        data = {"token": token, "token_type_hint": "access_token"}
        http = self.http or httpx.AsyncClient(timeout=10.0)
        try:
            return await http.post(self.endpoint, data=data, auth=auth, headers={"accept": "application/json"})
        finally:
            if self.http is None:
                await http.aclose()

    async def verify(self, token: str) -> Principal:
        try:
            response = await self._introspect(token)
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"the introspection endpoint {self.endpoint} is unreachable: {exc!r}") from exc
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if response.status_code != 200 or not isinstance(answer, dict):
            raise VerifierUnavailable(
                f"the introspection endpoint {self.endpoint} answered HTTP {response.status_code}"
            )
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active")
        now = time.time()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if isinstance(exp, (int, float)) and now - self.leeway >= exp:
            raise InvalidToken("the token has expired")
        if isinstance(nbf, (int, float)) and now + self.leeway < nbf:
            raise InvalidToken("the token is not valid yet")
        if self.issuer is not None and answer.get("iss") != self.issuer:
            raise InvalidToken(f"the token was not issued by {self.issuer}")
        if not set(audiences_of(answer)) & set(self.audience):
            raise InvalidToken("the token is not for this resource")
        return _principal(answer)


@dataclass(frozen=True)
class ProtectedResource:
    """This MCP server as an OAuth protected resource (RFC 9728).

    ``resource`` is the canonical URI of the MCP endpoint (``https://mcp.example.com/mcp``):
    the audience tokens must name, and the ``resource`` clients send (RFC 8707).
    """

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None = None
    resource_name: str | None = None
    resource_documentation: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            raise ValueError(f"a resource identifier is an absolute http(s) URI without fragment: {self.resource!r}")
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")

    @property
    def metadata_path(self) -> str:
        """Where the metadata is served: the well-known prefix, then the resource's path."""
        path = urlsplit(self.resource).path
        return PRM_WELL_KNOWN + ("" if path in ("", "/") else path)

    @property
    def metadata_url(self) -> str:
        parts = urlsplit(self.resource)
        return f"{parts.scheme}://{parts.netloc}{self.metadata_path}"

    def document(self) -> dict[str, Any]:
        """The metadata document, as JSON-ready data."""
        doc: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(self.authorization_servers),
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported is not None:
            doc["scopes_supported"] = list(self.scopes_supported)
        if self.resource_name is not None:
            doc["resource_name"] = self.resource_name
        if self.resource_documentation is not None:
            doc["resource_documentation"] = self.resource_documentation
        return doc


def www_authenticate(
    resource_metadata: str,
    *,
    scope: Iterable[str] | None = None,
    error: str | None = None,
    description: str | None = None,
) -> str:
    """A ``WWW-Authenticate`` Bearer challenge (RFC 6750 §3, RFC 9728 §5.1)."""
    params = [("resource_metadata", resource_metadata)]
    scopes = sorted(set(scope or ()))
    if scopes:
        params.append(("scope", " ".join(scopes)))
    if error is not None:
        params.append(("error", error))
    if description:
        params.append(("error_description", description))
    return "Bearer " + ", ".join(f'{name}="{_CHALLENGE_TEXT.sub("", value)}"' for name, value in params)


@dataclass(frozen=True)
class ScopePolicy:
    """The scopes a request needs: ``default`` for every request, plus ``methods[method]``,
    plus ``tools[name]`` for ``tools/call``. ``implies`` maps a broader scope to the narrower
    ones it includes (``{"files:write": {"files:read"}}``), followed transitively.
    """

    default: frozenset[str] = frozenset()
    methods: Mapping[str, frozenset[str]] = field(default_factory=dict)
    tools: Mapping[str, frozenset[str]] = field(default_factory=dict)
    implies: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def required(self, method: str | None, params: Mapping[str, Any] | None = None) -> frozenset[str]:
        need = set(self.default)
        if method is not None:
            need |= self.methods.get(method, frozenset())
            name = (params or {}).get("name")
            if method == "tools/call" and isinstance(name, str):
                need |= self.tools.get(name, frozenset())
        return frozenset(need)

    def effective(self, granted: Iterable[str]) -> frozenset[str]:
        """``granted`` and every scope they imply."""
        have = set(granted)
        todo = list(have)
        while todo:
            for narrower in self.implies.get(todo.pop(), frozenset()):
                if narrower not in have:
                    have.add(narrower)
                    todo.append(narrower)
        return frozenset(have)

    def missing(
        self, granted: Iterable[str], method: str | None, params: Mapping[str, Any] | None = None
    ) -> frozenset[str]:
        return self.required(method, params) - self.effective(granted)


@dataclass(frozen=True)
class Denial:
    """An HTTP answer refusing the request: status, challenge, and an RFC 6750 error body."""

    status: int
    www_authenticate: str | None
    error: str | None
    description: str

    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        if self.www_authenticate is not None:
            headers.append((b"www-authenticate", self.www_authenticate.encode("latin-1")))
        return headers

    def body(self) -> dict[str, str]:
        return {"error": self.error or "unauthorized", "error_description": self.description}


class BearerGuard:
    """Decides one request: the ``Principal``, or the ``Denial`` to send instead.

    No token: 401 with the challenge (metadata URL, the scopes this request needs). A token
    the verifier refuses: 401 ``invalid_token``. A valid token without the scopes: 403
    ``insufficient_scope`` naming every scope the request needs. A verifier that cannot
    decide: 503.
    """

    def __init__(self, verifier: TokenVerifier, resource: ProtectedResource, policy: ScopePolicy | None = None) -> None:
        self.verifier = verifier
        self.resource = resource
        self.policy = policy or ScopePolicy()

    def __repr__(self) -> str:
        return f"BearerGuard({self.verifier!r}, {self.resource.resource!r})"

    def deny(self, status: int, error: str | None, description: str, scope: Iterable[str] | None = None) -> Denial:
        """A refusal with its challenge; one without an error code (no credentials at all)
        carries no error information in the challenge (RFC 6750 §3.1).
        """
        said = description if error is not None else None
        challenge = www_authenticate(self.resource.metadata_url, scope=scope, error=error, description=said)
        return Denial(status, challenge, error, description)

    async def check(
        self, authorization: str | None, method: str | None = None, params: Mapping[str, Any] | None = None
    ) -> Principal | Denial:
        """``authorization``: the request's ``Authorization`` header (None when absent)."""
        required = self.policy.required(method, params)
        if authorization is None:
            return self.deny(401, None, "authorization required", required)
        match = _BEARER.fullmatch(authorization)
        if match is None:
            return self.deny(401, "invalid_token", "the Authorization header holds no Bearer token", required)
        try:
            principal = await self.verifier.verify(match.group(1))
        except InvalidToken as exc:
            return self.deny(401, "invalid_token", str(exc), required)
        except VerifierUnavailable:
            return Denial(503, None, "temporarily_unavailable", "the token cannot be verified right now")
        if self.policy.missing(principal.scopes, method, params):
            return self.deny(403, "insufficient_scope", "the token lacks scopes this request needs", required)
        return principal
