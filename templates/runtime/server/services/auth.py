"""Token verification for an MCP server acting as an OAuth 2.1 resource server.

What the HTTP transport puts in front of every handler when a server is protected:

- ``ProtectedResource``: this server's identity and its RFC 9728 metadata document (which
  authorization servers, which scopes), with the well-known paths it is served at;
- ``TokenVerifier``: turns a bearer token into a ``Principal`` or raises ``InvalidToken``
  (``verifiers.JWTVerifier`` and ``verifiers.IntrospectionVerifier``, which need the ``auth``
  extra, are the two the runtime ships);
- ``ScopePolicy``: the scopes a message needs, per method and per tool, with broader scopes
  implying narrower ones;
- ``ResourceServer``: all of it for one request: the ``Principal`` the handler sees in its
  ``Context``, or the ``Denial`` to send instead (401 with a ``WWW-Authenticate`` challenge
  naming the metadata and the scopes, 403 ``insufficient_scope``, 503 when the verifier cannot
  reach the authorization server). With ``dpop`` (``dpop.DPoPProofs``) it also takes
  DPoP-bound tokens (RFC 9449) and offers the ``DPoP`` scheme beside ``Bearer`` (or alone).

Nothing here logs or keeps a token. Authorization applies to HTTP only: a stdio server takes
its credentials from its environment (the specification's rule), so the stdio transport has
no ``ResourceServer``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ...proof import origin
from .principal import Principal as Principal  # re-exported: where it always was
from .session_store import SharedStateUnavailable

if TYPE_CHECKING:  # dpop.py needs joserfc (the auth extra)
    from .dpop import DPoPProofs

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")  # RFC 6750 §2.1: what a Bearer credential may be
_CHALLENGE_TEXT = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")  # RFC 6750 §3: what a quoted value may hold


class InvalidToken(Exception):
    """The token is not acceptable here (malformed, bad signature, expired, not for this
    resource); the message says why and goes into ``error_description``.
    """


class VerifierUnavailable(Exception):
    """The verifier could not decide (the JWKS or introspection endpoint is unreachable)."""


class ProofError(Exception):
    """A DPoP proof this server does not accept: ``error`` is ``invalid_dpop_proof`` or
    ``use_dpop_nonce``; the message goes into ``error_description``."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error


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


def canonical_resource(uri: str) -> str:
    """``uri`` as audiences compare (RFC 3986 §6.2.2.1, §6.2.3): an http(s) URI's scheme and host
    lower-cased, its default port dropped and an empty path ``/``; the rest (path, query) as it
    is. Anything else (a URN, a client id, a URI with user information or a bad port) is itself."""
    try:
        parts = urlsplit(uri)
        if parts.scheme.lower() not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
            return uri
        authority = f"{parts.scheme}://{parts.netloc}"
        if uri[: len(authority)].lower() != authority.lower():
            return uri
        rest = uri[len(authority) :]
        return origin(parts) + (rest if rest.startswith("/") else "/" + rest)
    except ValueError:  # a port out of range, an unclosed IPv6 bracket
        return uri


def for_audience(audiences: Iterable[str], accepted: Iterable[str]) -> bool:
    """Whether one of a token's ``audiences`` names one of the ``accepted`` resources, scheme and
    host in any case (the specification: implementations accept uppercase scheme and host)."""
    mine = {canonical_resource(a) for a in accepted}
    return any(canonical_resource(a) in mine for a in audiences)


def principal_of(claims: Mapping[str, Any]) -> Principal:
    """The ``Principal`` of verified claims (a JWT's, or an introspection answer's)."""

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


def bearer_token(authorization: str) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header value (the scheme in any case)."""
    scheme, token = credentials(authorization)
    return token if scheme == "bearer" else None


def credentials(authorization: str) -> tuple[str | None, str | None]:
    """The scheme (``bearer`` or ``dpop``) and token of an ``Authorization`` header value;
    ``(None, None)`` for any other scheme or a malformed token."""
    scheme, _, rest = authorization.partition(" ")
    scheme = scheme.lower()
    token = rest.strip(" ")
    if scheme not in ("bearer", "dpop") or _TOKEN68.fullmatch(token) is None:
        return None, None
    return scheme, token


def bound_key(claims: Mapping[str, Any]) -> str | None:
    """The ``cnf.jkt`` of a token's claims (a JWT's, or an introspection answer's): the
    thumbprint of the DPoP key the token is bound to, if any."""
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, Mapping) else None
    return jkt if isinstance(jkt, str) and jkt else None


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
    scheme: str = "Bearer",
    algs: Iterable[str] | None = None,
) -> str:
    """A ``WWW-Authenticate`` challenge (RFC 6750 §3, RFC 9728 §5.1): Bearer, or DPoP with
    the proof algorithms accepted (RFC 9449 §7.1)."""
    params = [("resource_metadata", resource_metadata)]
    if algs is not None:
        params.append(("algs", " ".join(algs)))
    scopes = sorted(set(scope or ()))
    if scopes:
        params.append(("scope", " ".join(scopes)))
    if error is not None:
        params.append(("error", error))
    if description:
        params.append(("error_description", description))
    return f"{scheme} " + ", ".join(f'{name}="{_CHALLENGE_TEXT.sub("", value)}"' for name, value in params)


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

    def required(self, method: str | None, params: Any = None) -> frozenset[str]:
        need = set(self.default)
        if method is not None:
            need |= self.methods.get(method, frozenset())
            name = params.get("name") if isinstance(params, Mapping) else None
            if method == "tools/call" and isinstance(name, str):
                need |= self.tools.get(name, frozenset())
        return frozenset(need)

    def for_message(self, message: Any) -> frozenset[str]:
        """What a parsed JSON-RPC message needs: its method's (and tool's) scopes; a batch
        needs every scope any of its messages does; a response or anything unreadable, the default."""
        if isinstance(message, list):
            need = set(self.default)
            for item in message:
                need |= self.for_message(item)
            return frozenset(need)
        if isinstance(message, Mapping):
            method = message.get("method")
            return self.required(method if isinstance(method, str) else None, message.get("params"))
        return frozenset(self.default)

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

    def missing(self, granted: Iterable[str], method: str | None, params: Any = None) -> frozenset[str]:
        return self.required(method, params) - self.effective(granted)


@dataclass(frozen=True)
class Denial:
    """An HTTP answer refusing the request: status, challenge, and an RFC 6750 error body."""

    status: int
    www_authenticate: str | None
    error: str | None
    description: str
    more: tuple[tuple[bytes, bytes], ...] = ()
    """Further headers: a second challenge (DPoP beside Bearer), a ``DPoP-Nonce``."""

    def headers(self) -> list[tuple[bytes, bytes]]:
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
        if self.www_authenticate is not None:
            headers.append((b"www-authenticate", self.www_authenticate.encode("latin-1")))
        headers.extend(self.more)
        return headers

    def body(self) -> dict[str, str]:
        return {"error": self.error or "unauthorized", "error_description": self.description}


class ResourceServer:
    """A protected MCP endpoint: ``verifier`` checks the bearer token of every HTTP request,
    ``metadata`` is the RFC 9728 document (served by the app at ``metadata_paths``), ``scopes``
    says what each request needs.

    ``check`` decides one request. No token (or only credentials of another scheme, such as
    ``Basic``): 401 with the challenge (metadata URL, the scopes this request needs) and no
    error code. A malformed credential of a scheme it takes (``Bearer a b``, ``Bearer`` alone):
    400 ``invalid_request``. A token the verifier refuses: 401 ``invalid_token`` with the reason.
    A valid token without the scopes: 403 ``insufficient_scope`` naming every scope the request
    needs. A verifier that cannot decide: 503. Otherwise the ``Principal``.

    When ``metadata`` sets no ``scopes_supported``, the document lists the policy's default
    scopes (what any request needs), if any.

    ``dpop`` (a ``dpop.DPoPProofs``) takes DPoP-bound tokens too, each request with its proof
    (the document then lists the proof algorithms, and says when bound tokens are required).
    A DPoP-bound token (``cnf.jkt``) presented as Bearer is refused, with or without ``dpop``.
    Challenges offer ``Bearer`` and ``DPoP``, or ``DPoP`` alone when it is required; the error
    goes on the scheme the request used.
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        metadata: ProtectedResource,
        scopes: ScopePolicy | None = None,
        *,
        dpop: DPoPProofs | None = None,
    ) -> None:
        self.verifier = verifier
        self.metadata = metadata
        self.scopes = scopes or ScopePolicy()
        self.dpop = dpop

    def __repr__(self) -> str:
        return f"ResourceServer({self.verifier!r}, {self.metadata.resource!r})"

    async def aclose(self) -> None:
        """Close what the verifier holds open (an ``IntrospectionVerifier``'s client), if it can."""
        close = getattr(self.verifier, "aclose", None)
        if close is not None:
            await close()

    @property
    def metadata_paths(self) -> tuple[str, ...]:
        """Where clients look for the metadata (the specification's order): the well-known
        prefix before the endpoint's path, then the root well-known URI."""
        path = self.metadata.metadata_path
        return (path,) if path == PRM_WELL_KNOWN else (path, PRM_WELL_KNOWN)

    def document(self) -> dict[str, Any]:
        doc = self.metadata.document()
        if "scopes_supported" not in doc and self.scopes.default:
            doc["scopes_supported"] = sorted(self.scopes.default)
        if self.dpop is not None:
            doc["dpop_signing_alg_values_supported"] = list(self.dpop.algorithms)
            if self.dpop.required:
                doc["dpop_bound_access_tokens_required"] = True
        return doc

    def request_uris(self, path: str | None) -> tuple[str, ...]:
        """The names of the URI a request to ``path`` was sent to: the resource, and its scheme
        and host (this server's public address; never the ``Host`` header) with ``path`` (a
        resource may name the server rather than its endpoint; an app mounted under a prefix
        sees a shorter path than the resource's)."""
        resource = self.metadata.resource
        if path is None:
            return (resource,)
        parts = urlsplit(resource)
        return (resource, f"{parts.scheme}://{parts.netloc}{path}")

    def deny(
        self,
        status: int,
        error: str | None,
        description: str,
        scope: Iterable[str] | None = None,
        *,
        scheme: str = "bearer",
        nonce: bool = False,
    ) -> Denial:
        """A refusal with its challenges; the error (with its description) goes on ``scheme``'s,
        and one without an error code (no credentials at all) carries no error information in
        the challenge (RFC 6750 §3.1). ``nonce``: a fresh ``DPoP-Nonce`` goes along.
        """
        said = description if error is not None else None
        url = self.metadata.metadata_url
        dpop = self.dpop
        challenges = []
        if dpop is None or not dpop.required:
            mine = scheme == "bearer"
            challenges.append(
                www_authenticate(url, scope=scope, error=error if mine else None, description=said if mine else None)
            )
        if dpop is not None:
            mine = scheme == "dpop" or dpop.required
            challenges.append(
                www_authenticate(
                    url,
                    scope=scope,
                    error=error if mine else None,
                    description=said if mine else None,
                    scheme="DPoP",
                    algs=dpop.algorithms,
                )
            )
        more = [(b"www-authenticate", challenge.encode("latin-1")) for challenge in challenges[1:]]
        if nonce and dpop is not None:
            more.append((b"dpop-nonce", dpop.new_nonce().encode("ascii")))
        return Denial(status, challenges[0], error, description, tuple(more))

    async def check(
        self,
        authorization: str | None,
        message: Any = None,
        *,
        method: str = "POST",
        path: str | None = None,
        dpop: Sequence[str] = (),
    ) -> Principal | Denial:
        """``authorization``: the request's ``Authorization`` header (None when absent);
        ``message``: its parsed JSON-RPC body (None for a GET or DELETE, or an unreadable body);
        ``method`` and ``path``: the HTTP method and the path the request was sent to (None: the
        resource's own); ``dpop``: the values of its ``DPoP`` headers."""
        required = self.scopes.for_message(message)
        if authorization is None:
            return self.deny(401, None, "authorization required", required)
        scheme, token = credentials(authorization)
        proofs = self.dpop
        offered = ("bearer",) if proofs is None else ("bearer", "dpop")
        named = authorization.split(maxsplit=1)
        if not named or named[0].lower() not in offered:
            # another scheme (Basic) or none: no credentials this server takes, so no error
            # information in the challenge (RFC 6750 §3.1), just as without the header
            return self.deny(401, None, "authorization required", required)
        if token is None or scheme is None:  # the scheme is ours, its credential is malformed
            # RFC 6750 §3.1 invalid_request ("otherwise malformed"): 400, as MCP's authorization
            # page lists for a malformed authorization request; a new token would not fix it
            said = "no Bearer token" if proofs is None else "no Bearer or DPoP token"
            malformed = "dpop" if named[0].lower() == "dpop" else "bearer"
            return self.deny(
                400, "invalid_request", f"the Authorization header holds {said}", required, scheme=malformed
            )
        if scheme == "bearer" and proofs is not None and proofs.required:
            return self.deny(401, "invalid_token", "this server takes DPoP-bound tokens only", required, scheme="dpop")
        try:
            principal = await self.verifier.verify(token)
        except InvalidToken as exc:
            return self.deny(401, "invalid_token", str(exc), required, scheme=scheme)
        except VerifierUnavailable:
            return Denial(503, None, "temporarily_unavailable", "the token cannot be verified right now")
        jkt = bound_key(principal.claims)
        if scheme == "bearer" and jkt is not None:  # RFC 9449 §7.2; without DPoP too: it would undo the binding
            return self.deny(401, "invalid_token", "a DPoP-bound token presented as a Bearer token", required)
        if scheme == "dpop":
            assert proofs is not None
            if jkt is None:
                return self.deny(401, "invalid_token", "the token is not bound to a DPoP key", required, scheme=scheme)
            try:
                await proofs.check(dpop, method=method, uri=self.request_uris(path), access_token=token, jkt=jkt)
            except SharedStateUnavailable:
                return Denial(503, None, "temporarily_unavailable", "the proof cannot be checked right now")
            except ProofError as exc:
                nonce = exc.error == "use_dpop_nonce"
                return self.deny(401, exc.error, str(exc), required, scheme=scheme, nonce=nonce)
        if required - self.scopes.effective(principal.scopes):
            return self.deny(
                403, "insufficient_scope", "the token lacks scopes this request needs", required, scheme=scheme
            )
        return principal
