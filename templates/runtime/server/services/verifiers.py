"""The token verifiers the runtime ships (they need the ``auth`` extra: joserfc for JWTs).

- ``JWTVerifier`` checks a signed JWT access token (RFC 9068) against the issuer's JWKS:
  signature by an allowed asymmetric algorithm, ``exp``/``nbf``, issuer, audience = this resource;
- ``IntrospectionVerifier`` asks the authorization server about each token (RFC 7662).

Either hands a ``ResourceServer`` (``auth.py``) the ``Principal`` of a token or raises
``InvalidToken`` / ``VerifierUnavailable``. The JOSE work is joserfc's; nothing here logs a token.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

import httpx
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from ...http_bodies import ACCEPT_ENCODING, bounded
from ...tls import default_context
from .auth import InvalidToken, Principal, VerifierUnavailable, audiences_of, for_audience, principal_of

FAILED_FETCH_MEMORY = 5.0  # seconds a failed JWKS fetch is not tried again
log = logging.getLogger(__name__)

MAX_ANSWER = 1 << 20  # bytes of a JWKS or an introspection answer read at most


def own_client() -> httpx.AsyncClient:
    """A verifier's own HTTP client: answers inflated in bounded pieces and refused past
    ``MAX_ANSWER`` bytes while they are read (a JWKS or introspection endpoint's answer was read
    whole, a gzip bomb inflated at once)."""
    return httpx.AsyncClient(
        timeout=10.0,
        verify=default_context(),
        headers={"accept-encoding": ACCEPT_ENCODING},
        event_hooks={"response": [bounded(MAX_ANSWER, MAX_ANSWER)]},
    )


ASYMMETRIC_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""JWS algorithms a resource server accepts by default: public-key signatures only, so a key
published in a JWKS can never double as an HMAC secret, and never ``none``."""


class Verdicts:
    """The verdicts on the last ``size`` tokens a verifier accepted, by the token's SHA-256 (never
    the token), each kept for at most ``seconds`` (by the monotonic clock: a wall clock set back
    does not lengthen it) and never past the token's ``exp`` (plus ``leeway``); a token with no
    ``exp`` is not kept. A refusal is never kept. The verifier passes its own settings with each
    call, so changing them takes effect at once."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        # digest -> (until, by the monotonic clock; exp + leeway, by the wall clock; principal)
        self._kept: OrderedDict[bytes, tuple[float, float, Principal]] = OrderedDict()

    async def verify(
        self, token: str, check: Callable[[str], Awaitable[Principal]], *, size: int, seconds: float, leeway: float
    ) -> Principal:
        """The kept verdict on ``token``, or ``check(token)``'s (kept when it is a principal)."""
        if size <= 0 or seconds <= 0:
            return await check(token)
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        known = self._kept.get(digest)
        if known is not None:
            until, expires, principal = known
            if time.monotonic() < until and time.time() < expires:
                try:
                    self._kept.move_to_end(digest)
                except KeyError:  # forgotten meanwhile by a verify on another thread's loop
                    pass
                return principal
            self._kept.pop(digest, None)
        principal = await check(token)
        if principal.expires_at is not None and principal.expires_at + leeway > time.time():
            self._kept[digest] = (time.monotonic() + seconds, principal.expires_at + leeway, principal)
            while len(self._kept) > size:
                self._kept.popitem(last=False)
        return principal


class JWTVerifier:
    """Verifies JWT access tokens (RFC 9068) signed by ``issuer``.

    Keys come from ``jwks`` (a JWKS document) or are fetched from ``jwks_uri`` and cached for
    ``cache_seconds``; a token naming an unknown ``kid`` refetches them, at most once every
    ``refetch_seconds``. The token must be signed with one of ``algorithms`` by a key of the
    matching type, carry ``exp`` (and ``nbf``, when present, must have passed), name
    ``issuer`` as ``iss`` and one of ``audience`` (this resource) in ``aud`` (scheme and host
    in any case); ``leeway`` seconds absorb clock skew.

    A client sends the same token with every request until it expires, so the verdict on the
    last ``remember`` tokens is kept (by the token's SHA-256, never the token) for at most
    ``remember_seconds`` and never past the token's ``exp``: a key withdrawn from the JWKS stops
    a token it signed within that time. ``remember=0`` verifies every request afresh.
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
        remember: int = 1024,
        remember_seconds: float = 60.0,
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
        self.remember = remember
        self.remember_seconds = remember_seconds
        self.http = http
        self._keys: KeySet | None = KeySet.import_key_set(dict(jwks)) if jwks is not None else None  # type: ignore[arg-type]
        self._fetched_at = float("-inf")
        self._failed: tuple[float, str] | None = None  # when the last fetch failed, and why
        self._lock = asyncio.Lock()
        self._verdicts = Verdicts()

    def __repr__(self) -> str:
        return f"JWTVerifier(issuer={self.issuer!r}, audience={self.audience!r})"

    async def _fetch(self) -> KeySet:
        assert self.jwks_uri is not None
        try:
            if self.http is not None:
                response = await self.http.get(self.jwks_uri, headers={"accept": "application/json"})
            else:
                async with own_client() as http:
                    response = await http.get(self.jwks_uri, headers={"accept": "application/json"})
            response.raise_for_status()
            keys = KeySet.import_key_set(response.json())
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            raise VerifierUnavailable(f"cannot load the JWKS at {self.jwks_uri}: {exc}") from exc
        self._keys, self._fetched_at = keys, time.monotonic()
        return keys

    async def key_set(self, kid: str | None = None) -> KeySet:
        """The issuer's keys: cached, or fetched when stale or when ``kid`` is not among them.

        A fetch that failed is not tried again for ``FAILED_FETCH_MEMORY`` seconds: requests
        waiting meanwhile get the keys held (a stale set serves on while the issuer's JWKS is out
        of reach) or, with none, ``VerifierUnavailable`` at once (each waited its own fetch's
        timeout in turn, the eighth 80 s). While one request fetches, a request whose ``kid`` is
        among the keys held (or that names none) is served by them at once instead of waiting
        for the fetch (with the issuer hanging, every request waited its timeout)."""
        if self.jwks_uri is None:
            assert self._keys is not None
            return self._keys
        held = self._keys
        if held is not None and self._lock.locked() and (kid is None or any(key.kid == kid for key in held)):
            return held
        async with self._lock:
            now = time.monotonic()
            age = now - self._fetched_at
            keys = self._keys
            unknown = kid is not None and keys is not None and not any(key.kid == kid for key in keys)
            if keys is not None and age <= self.cache_seconds and not (unknown and age > self.refetch_seconds):
                return keys
            if self._failed is not None and now - self._failed[0] < FAILED_FETCH_MEMORY:
                if keys is not None:
                    return keys
                raise VerifierUnavailable(self._failed[1])
            try:
                fetched = await self._fetch()
            except VerifierUnavailable as exc:
                self._failed = (time.monotonic(), str(exc))
                if keys is not None:
                    log.warning("%s; serving on with the keys fetched %.0f s ago", exc, age)
                    return keys
                raise
            self._failed = None
            return fetched

    async def verify(self, token: str) -> Principal:
        return await self._verdicts.verify(
            token, self.check, size=self.remember, seconds=self.remember_seconds, leeway=self.leeway
        )

    async def check(self, token: str) -> Principal:
        """Verify ``token`` (signature, algorithm, key, claims), remembering nothing."""
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
            exp={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise InvalidToken(_claim_problem(exc, self.issuer)) from exc
        if not for_audience(audiences_of(claims), self.audience):
            raise InvalidToken("the token is not for this resource")
        return principal_of(claims)


def _claim_problem(exc: JoseError, issuer: str) -> str:
    """What is wrong with a token's claims, for ``error_description``."""
    claim = getattr(exc, "claim", None)
    if exc.error == "expired_token":
        return "the token has expired"
    if claim == "nbf" or exc.error == "invalid_token":  # older joserfc: nbf or iat ahead, the claim unnamed
        return "the token is not valid yet"
    if claim == "iss":
        return f"the token was not issued by {issuer}"
    return f"the token's {claim or 'claims'} claim is missing or malformed"


class IntrospectionVerifier:
    """Asks the authorization server about each token (RFC 7662), authenticating as
    ``client_id``/``client_secret`` (HTTP Basic). The answer must be ``active``, for one of
    ``audience`` (this resource), from ``issuer`` when given, and within ``exp``/``nbf``.

    By default every request's token is asked about, so a token revoked at the authorization
    server is refused on its next request. ``remember_seconds`` > 0 keeps an accepted verdict
    (as ``JWTVerifier`` does, for the last ``remember`` tokens, never past the answer's ``exp``
    plus ``leeway``, which ``verify`` allows too; an answer without ``exp`` is not kept), trading
    that much revocation delay for a round trip per request (RFC 7662 §4).
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
        remember: int = 1024,
        remember_seconds: float = 0.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.audience = (audience,) if isinstance(audience, str) else tuple(audience)
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.leeway = leeway
        self.remember = remember
        self.remember_seconds = remember_seconds
        self.http = http
        self._own: tuple[asyncio.AbstractEventLoop, httpx.AsyncClient] | None = None
        self._verdicts = Verdicts()

    def __repr__(self) -> str:
        return f"IntrospectionVerifier({self.endpoint!r}, audience={self.audience!r})"

    def _client(self) -> httpx.AsyncClient:
        """``http``, or the verifier's own client for the running event loop: every request is
        introspected, and kept connections spare each a new TCP (and TLS) handshake. A client's
        connections belong to the loop that opened them: on another loop, another client (the
        last one's connections are left to the garbage collector; an application that runs loop
        after loop passes ``http`` or calls ``aclose`` before each loop ends)."""
        if self.http is not None:
            return self.http
        loop = asyncio.get_running_loop()
        own = self._own
        if own is None or own[0] is not loop:
            own = self._own = (loop, own_client())
        return own[1]

    async def aclose(self) -> None:
        """Close the verifier's own client (not an ``http`` given to it) when it is the running
        loop's; another loop's is left as it is (its connections can only be closed on its loop)."""
        own = self._own
        if own is not None and own[0] is asyncio.get_running_loop():
            self._own = None
            await own[1].aclose()

    async def _introspect(self, token: str) -> httpx.Response:
        auth: Any = httpx.BasicAuth(self.client_id, self.client_secret or "") if self.client_id else None
        data = {"token": token, "token_type_hint": "access_token"}
        return await self._client().post(self.endpoint, data=data, auth=auth, headers={"accept": "application/json"})

    async def verify(self, token: str) -> Principal:
        return await self._verdicts.verify(
            token, self.check, size=self.remember, seconds=self.remember_seconds, leeway=self.leeway
        )

    async def check(self, token: str) -> Principal:
        """Introspect ``token`` and judge the answer, remembering nothing."""
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
        if not for_audience(audiences_of(answer), self.audience):
            raise InvalidToken("the token is not for this resource")
        return principal_of(answer)
