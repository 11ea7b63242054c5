"""DPoP proofs at the resource server (RFC 9449 §4.3, §7, §9; needs the ``auth`` extra).

A ``ResourceServer`` given ``dpop=DPoPProofs(...)`` accepts DPoP-bound access tokens: the
request says ``Authorization: DPoP <token>`` and carries one ``DPoP`` header, a proof JWT the
client signed with the key the token is bound to (its ``cnf.jkt``). ``DPoPProofs.check``
verifies the proof the way RFC 9449 §4.3 lists:

- one well-formed JWT, ``typ`` ``dpop+jwt``, signed with one of ``algorithms`` (asymmetric:
  never ``none``, never a MAC) by the public key in its ``jwk`` header (no private parts);
- ``htm`` the request's method, ``htu`` the request's URI: the ``ProtectedResource``'s
  ``resource``, or its scheme and host (this server's public address, never the ``Host`` a
  client sends) with the app's endpoint path, compared without query, fragment or trailing slash
  (on both sides: a proof whose ``htu`` carries a query names the same URI);
- ``iat`` within ``max_age`` seconds of now (``leeway`` ahead for clock skew), a ``jti`` not
  seen before in that window (``memory``: this process's, at most ``remember`` of them; a proof
  is never forgotten before its window ends, so when ``remember`` live ones are kept, which takes
  more than ``remember / (max_age + leeway)`` proofs a second, a new one is refused with 503
  until older ones expire: a flood of proofs cannot push a captured one out of memory to replay
  it; one key's proofs take at most half of ``remember``, so the flood of one token (a token is
  bound to one key) gets its own proofs refused with 503, not every DPoP client's, though a
  holder of tokens bound to two keys can still fill it; size ``remember`` for the traffic: the
  default takes 555 proofs a second of one key, 1,111 in all); on
  a server with a ``redis_url`` its HTTP app shares them through Redis, so a proof used at one
  worker is refused at every other, and an unreachable Redis is a 503, never a pass (there
  Redis's memory is the bound, with no share per key);
- ``ath`` the SHA-256 of the token presented, and the key's thumbprint the token's ``cnf.jkt``;
- with ``nonce=True``, a ``nonce`` this server issued within ``nonce_seconds`` (stateless: a
  timestamp and its HMAC under ``nonce_secret``; give every worker the same secret).

A refused proof is 401 ``invalid_dpop_proof``; a missing or stale nonce 401 ``use_dpop_nonce``
with a fresh ``DPoP-Nonce`` header, which every response to an accepted request carries too
(the HTTP app adds it), so a client that keeps calling meets the refusal once.
``required=True`` refuses Bearer tokens altogether; either way a DPoP-bound token presented as
Bearer is refused (RFC 9449 §7.2). The JOSE work is joserfc's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import struct
import time
from collections import Counter, OrderedDict
from collections.abc import Collection, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import import_key

from ...proof import origin, token_hash
from .auth import ProofError
from .session_store import SharedStateUnavailable

PROOF_ALGORITHMS = ("ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512")
"""The proof algorithms accepted by default: public-key signatures only."""
_PRIVATE = frozenset({"d", "p", "q", "dp", "dq", "qi", "oth", "k"})  # JWK members of a private or secret key
_KEY_TYPES = {
    "ES": ("EC", ("crv", "kty", "x", "y")),
    "PS": ("RSA", ("e", "kty", "n")),
    "RS": ("RSA", ("e", "kty", "n")),
}
"""Per algorithm family: the key type it signs with, and that type's RFC 7638 thumbprint members."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def normalized_uri(url: str) -> str:
    """``url`` as ``htu`` is compared (RFC 9449 §4.3, RFC 3986 §6.2): scheme and host
    lower-cased, the default port dropped, no query, fragment or trailing slash."""
    parts = urlsplit(url)
    return origin(parts) + parts.path.rstrip("/")


def same_uri(htu: str, uri: str) -> bool:
    """``htu`` names ``uri`` once both are normalized; an unparseable ``htu`` names nothing."""
    try:
        return normalized_uri(htu) == normalized_uri(uri)
    except ValueError:  # a port out of range, an unclosed IPv6 bracket
        return False


def thumbprint(jwk: dict[str, Any], alg: str) -> str | None:
    """The RFC 7638 SHA-256 thumbprint of ``jwk`` as a key of ``alg``'s type; None when it is not
    one (another ``kty``, a member missing or not a string)."""
    kty, members = _KEY_TYPES.get(alg[:2], ("", ()))
    if jwk.get("kty") != kty or not all(isinstance(jwk.get(name), str) for name in members):
        return None
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return _b64(hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).digest())


class ProofMemory(Protocol):
    async def first_use(self, key: str, now: float, ttl: float) -> bool:
        """Record ``key`` for ``ttl`` seconds; False when it was recorded already (a replay).
        May raise ``SharedStateUnavailable`` (the request is then refused with 503)."""
        ...


class ProofMemoryFull(SharedStateUnavailable):
    """Every place of a ``LocalProofMemory`` holds a proof still within its window: a new proof
    cannot be checked for replay now (503), and none is forgotten early to make room."""


class LocalProofMemory:
    """The proofs this process has seen within their window, at most ``capacity`` of them, and at
    most ``per_holder`` (default half the capacity) signed by any one key (``first_use``'s
    ``holder``, which ``DPoPProofs`` gives; none given, none counted); past either a new proof
    raises ``ProofMemoryFull`` (forgetting a live one would let it be replayed). The share keeps
    one token holder's flood of proofs (a token is bound to one key) from filling the memory and
    getting every other DPoP client 503s: the flood's own proofs are refused first. ``DPoPProofs``
    gives ``holder`` to this class only; a subclass is called as any other memory (no holder, so
    no share per key, whatever its ``per_holder``), so a wrapper overrides ``first_use`` with it."""

    def __init__(self, capacity: int = 100_000, per_holder: int | None = None) -> None:
        if capacity < 1:
            raise ValueError("a DPoP proof memory holds at least one proof")
        self.capacity = capacity
        self.per_holder = max(1, capacity // 2) if per_holder is None else per_holder
        if self.per_holder < 1:
            raise ValueError("a DPoP proof memory holds at least one proof of each key")
        self._seen: OrderedDict[str, tuple[float, str]] = OrderedDict()  # key -> (when it may be forgotten, holder)
        self._held: Counter[str] = Counter()  # holder -> its proofs in _seen
        self._swept = float("-inf")  # when (monotonic) the whole memory was last searched for expired proofs

    async def first_use(self, key: str, now: float, ttl: float, holder: str = "") -> bool:
        """As ``ProofMemory.first_use``; ``holder``: the thumbprint of the key that signed the proof."""
        seen = self._seen
        while seen and next(iter(seen.values()))[0] < now:  # in order of expiry, as a rule
            self._forget(seen.popitem(last=False)[1][1])
        if key in seen:
            return False
        full = len(seen) >= self.capacity or (bool(holder) and self._held[holder] >= self.per_holder)
        if full and time.monotonic() - self._swept >= 1.0:
            # the exceptions to the order (a clock set back, windows of other lengths): at most
            # once a second (by the monotonic clock), so a full memory under a flood does not
            # search itself per proof
            self._swept = time.monotonic()
            for expired in [k for k, (until, _) in seen.items() if until < now]:
                self._forget(seen.pop(expired)[1])
        if len(seen) >= self.capacity:
            raise ProofMemoryFull(f"{len(seen)} DPoP proofs are within their window")
        if holder and self._held[holder] >= self.per_holder:
            raise ProofMemoryFull(f"{self._held[holder]} DPoP proofs of this key are within their window")
        seen[key] = (now + ttl, holder)
        if holder:
            self._held[holder] += 1
        return True

    def _forget(self, holder: str) -> None:
        if holder:
            self._held[holder] -= 1
            if not self._held[holder]:
                del self._held[holder]


class DPoPProofs:
    """The DPoP policy and proof checker of one resource server (see the module's docstring)."""

    def __init__(
        self,
        *,
        required: bool = False,
        algorithms: Collection[str] = PROOF_ALGORITHMS,
        max_age: int = 60,
        leeway: int = 30,
        remember: int = 100_000,
        nonce: bool = False,
        nonce_seconds: int = 300,
        nonce_secret: bytes | None = None,
        memory: ProofMemory | None = None,
    ) -> None:
        self._own_memory = memory is not None
        if "none" in algorithms or any(alg.startswith("HS") for alg in algorithms):
            raise ValueError("DPoP proofs are public-key signatures: no 'none', no HMAC")
        self.required = required
        self.algorithms = tuple(algorithms)
        self.max_age = max_age
        self.leeway = leeway
        self.nonce = nonce
        self.nonce_seconds = nonce_seconds
        self._secret = nonce_secret if nonce_secret is not None else secrets.token_bytes(32)
        self.memory: ProofMemory = memory if memory is not None else LocalProofMemory(remember)

    def __repr__(self) -> str:
        return f"DPoPProofs(required={self.required}, nonce={self.nonce})"

    # -- nonces ------------------------------------------------------------------------

    def new_nonce(self) -> str:
        """A nonce for ``DPoP-Nonce``: the time, and its HMAC under this server's secret."""
        stamp = struct.pack(">Q", int(time.time()))
        return _b64(stamp + hmac.new(self._secret, stamp, hashlib.sha256).digest()[:16])

    def _nonce_ok(self, nonce: Any) -> bool:
        if not isinstance(nonce, str) or len(nonce) > 64:
            return False
        try:
            raw = _unb64(nonce)
        except ValueError:
            return False
        if len(raw) != 24:
            return False
        stamp, mac = raw[:8], raw[8:]
        if not hmac.compare_digest(mac, hmac.new(self._secret, stamp, hashlib.sha256).digest()[:16]):
            return False
        age = time.time() - float(struct.unpack(">Q", stamp)[0])
        return -self.leeway <= age <= self.nonce_seconds

    # -- proofs ------------------------------------------------------------------------

    def share(self, shared: Any) -> None:
        """Keep the proofs seen in the deployment's Redis (``services.redis.SharedRedis``), unless
        this object was given a ``memory`` of its own."""
        if not self._own_memory:
            from .redis import RedisProofMemory

            self.memory = RedisProofMemory(shared)

    async def check(
        self, proofs: Sequence[str], *, method: str, uri: str | Collection[str], access_token: str, jkt: str | None
    ) -> None:
        """Accept the request's ``DPoP`` header values ``proofs`` for ``access_token`` (bound to
        ``jkt``) sent as ``method`` to ``uri`` (or any of several names of it), or raise ``ProofError``."""
        if len(proofs) != 1 or "," in proofs[0]:
            raise ProofError("invalid_dpop_proof", "a request carries exactly one DPoP proof")
        proof = proofs[0]
        try:
            header = jws.extract_compact(proof.encode("ascii")).headers()
        except (JoseError, ValueError, UnicodeError) as exc:
            raise ProofError("invalid_dpop_proof", "the DPoP proof is not a signed JWT") from exc
        typ = header.get("typ")
        if not isinstance(typ, str) or typ.lower().removeprefix("application/") != "dpop+jwt":  # RFC 7515 §4.1.9
            raise ProofError("invalid_dpop_proof", "the DPoP proof's typ is not dpop+jwt")
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise ProofError(
                "invalid_dpop_proof", f"the DPoP proof is signed with {alg!r}, which this server does not accept"
            )
        jwk = header.get("jwk")
        if not isinstance(jwk, dict) or _PRIVATE & jwk.keys():
            raise ProofError("invalid_dpop_proof", "the DPoP proof's jwk is not a public key")
        # first what ties the proof to the token: only the token's own key is ever imported
        if jkt is None or not hmac.compare_digest(thumbprint(jwk, str(alg)) or "", jkt):
            raise ProofError("invalid_dpop_proof", "the DPoP proof is not signed by the key the token is bound to")
        try:
            key = import_key(jwk)
            claims = jwt.decode(proof, key, algorithms=[alg]).claims
        except (JoseError, ValueError, TypeError, KeyError) as exc:
            raise ProofError("invalid_dpop_proof", "the DPoP proof's signature does not verify") from exc
        if claims.get("ath") != token_hash(access_token):
            raise ProofError("invalid_dpop_proof", "the DPoP proof's ath does not match the access token")
        if claims.get("htm") != method:
            raise ProofError("invalid_dpop_proof", "the DPoP proof's htm is not this request's method")
        htu = claims.get("htu")
        uris = (uri,) if isinstance(uri, str) else uri
        # RFC 9449 §4.3 (9): compared "ignoring any query and fragment parts", a proof's included
        if not isinstance(htu, str) or not any(same_uri(htu, u) for u in uris):
            raise ProofError("invalid_dpop_proof", "the DPoP proof's htu is not this request's URI")
        iat = claims.get("iat")
        now = time.time()
        try:
            recent = (
                isinstance(iat, (int, float))
                and not isinstance(iat, bool)
                and -self.leeway <= now - iat <= self.max_age
            )
        except OverflowError:  # an integer no float holds
            recent = False
        if not recent:
            raise ProofError("invalid_dpop_proof", "the DPoP proof's iat is missing or not recent")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti or len(jti) > 256:
            raise ProofError("invalid_dpop_proof", "the DPoP proof has no jti")
        if self.nonce and not self._nonce_ok(claims.get("nonce")):
            raise ProofError("use_dpop_nonce", "this server requires a DPoP nonce it issued recently")
        seen = hashlib.sha256(f"{jkt}\x00{jti}".encode("utf-8", "surrogatepass")).hexdigest()  # its jti, its key
        memory, window = self.memory, self.max_age + self.leeway
        fresh = (
            await memory.first_use(seen, now, window, holder=jkt)
            if type(memory) is LocalProofMemory  # the one that keeps a share per key (a subclass: as any other)
            else await memory.first_use(seen, now, window)
        )
        if not fresh:
            raise ProofError("invalid_dpop_proof", "the DPoP proof was used before")
