"""DPoP (RFC 9449): access tokens bound to a key the client holds, proved on every request.

A ``DPoP`` holds the client's proof-of-possession keys and the nonces servers hand out. The
token request carries a proof (RFC 9449 §5); the authorization server then binds the token
to the key's thumbprint and says ``token_type: DPoP``. Every request to the MCP server sends
``Authorization: DPoP <token>`` and a fresh proof for that request: ``htm`` and ``htu`` (the
method and URL, without query or fragment), ``ath`` (the token's SHA-256) and a new ``jti``.
A server that wants a nonce answers ``use_dpop_nonce`` with a ``DPoP-Nonce`` header (400 from
the token endpoint, 401 from the MCP server); the request is sent again with it, and later
proofs to that endpoint carry the latest nonce a response gave (RFC 9449 §8, §9).

Keys are asymmetric only (never ``none`` or a MAC): the first of ES256, ES384, ES512, PS256,
RS256 that both servers accept (each list, when given). A key given to ``DPoP`` (PEM or JWK,
private) is used for every algorithm its type signs (only its ``alg``, when a JWK names one);
its tokens survive a restart of the client when the token store keeps them (with the algorithm:
an RSA key has one thumbprint for two). Without one, keys live as long as the ``DPoP`` object,
and tokens bound to a key it no longer holds are discarded, not presented. A proof's ``jwk``
carries the public key's members and nothing else.

Signing is joserfc's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, RSAKey

from ...proof import origin, token_hash

ALGORITHMS = ("ES256", "ES384", "ES512", "PS256", "RS256")
"""The proof algorithms this client signs with, in order of preference."""
_CURVES = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
USE_DPOP_NONCE = "use_dpop_nonce"
_PUBLIC = {"EC": ("kty", "crv", "x", "y"), "RSA": ("kty", "n", "e")}
"""The members a proof's ``jwk`` carries: the public key and nothing else (no ``key_ops``,
``alg`` or ``kid`` a verifier could trip on)."""


def htu(url: str | httpx.URL) -> str:
    """A proof's ``htu``: the request URL without query and fragment (RFC 9449 §4.2), nor user
    information, nor a default port (RFC 3986 §6.2.3)."""
    parts = urlsplit(str(url))
    return origin(parts) + (parts.path or "/")


def private_key(key: str | Mapping[str, Any]) -> Any:
    """An EC or RSA private key from PEM or a JWK; ``ValueError`` for anything else."""
    data: Any = dict(key) if isinstance(key, Mapping) else key
    kinds: tuple[type[ECKey] | type[RSAKey], ...] = (ECKey, RSAKey)
    if isinstance(data, dict):
        kinds = tuple(kind for kind in kinds if kind.key_type == data.get("kty"))
    for kind in kinds:
        try:
            imported = kind.import_key(data)
        except (JoseError, ValueError, TypeError):
            continue
        if imported.is_private:
            return imported
    raise ValueError("a DPoP key is an EC or RSA private key, as PEM or a JWK")


class DPoPKey:
    """One private key and the algorithm it signs proofs with."""

    def __init__(self, key: Any, alg: str) -> None:
        if alg not in ALGORITHMS:
            raise ValueError(f"DPoP proofs are signed with one of {', '.join(ALGORITHMS)}, not {alg!r}")
        if not key.is_private:
            raise ValueError("a DPoP key must be a private key")
        self.key = key
        if alg not in self.signs():
            raise ValueError(f"a {key.key_type} key does not sign {alg}")
        self.alg = alg
        public = key.as_dict(private=False)
        self.public_jwk: dict[str, Any] = {name: public[name] for name in _PUBLIC[key.key_type]}
        self.thumbprint: str = key.thumbprint()
        """``jkt``: the key's RFC 7638 SHA-256 thumbprint, which a bound token's ``cnf`` names."""

    def __repr__(self) -> str:
        return f"DPoPKey({self.alg}, jkt={self.thumbprint})"

    @classmethod
    def generate(cls, alg: str = "ES256") -> DPoPKey:
        if alg in _CURVES:
            return cls(ECKey.generate_key(_CURVES[alg]), alg)
        if alg in ALGORITHMS:
            return cls(RSAKey.generate_key(2048), alg)
        raise ValueError(f"DPoP proofs are signed with one of {', '.join(ALGORITHMS)}, not {alg!r}")

    def signs(self) -> tuple[str, ...]:
        """The algorithms of ``ALGORITHMS`` this key's type can sign with."""
        if isinstance(self.key, ECKey):
            curve = self.key.as_dict(private=False).get("crv")
            return tuple(alg for alg, name in _CURVES.items() if name == curve)
        if isinstance(self.key, RSAKey):
            return ("PS256", "RS256")
        return ()

    def proof(
        self, method: str, url: str | httpx.URL, *, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """A fresh proof JWT for one request (RFC 9449 §4.2)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.public_jwk}
        return jwt.encode(header, claims, self.key, algorithms=[self.alg])


class DPoP:
    """Proof-of-possession for one client: its keys, and the nonces servers gave it.

    ``key``: a private key (PEM or JWK) to bind tokens to; None generates one per algorithm
    on first use, kept for the life of this object.
    """

    def __init__(self, key: str | Mapping[str, Any] | None = None) -> None:
        self._keys: dict[str, DPoPKey] = {}
        self._given: Any = None
        self._given_alg: Any = None
        if key is not None:
            self._given = private_key(key)
            self._given_alg = key.get("alg") if isinstance(key, Mapping) else None  # a JWK may name its one alg
        self._nonces: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"DPoP(keys={sorted(self._keys.values(), key=repr)!r})"

    def key_for(self, *lists: tuple[str, ...] | None) -> DPoPKey | None:
        """The key to bind a new token with, signing with an algorithm every list names (the
        authorization server's, the MCP server's; None: that server does not say); None when
        this client signs none of them.
        """
        for alg in ALGORITHMS:
            if all(algs is None or alg in algs for algs in lists):
                key = self._key(alg)
                if key is not None:
                    return key
        return None

    def _key(self, alg: str) -> DPoPKey | None:
        if alg in self._keys:
            return self._keys[alg]
        if self._given is None:
            key = DPoPKey.generate(alg)
        elif self._given_alg is not None and self._given_alg != alg:
            return None
        else:
            try:
                key = DPoPKey(self._given, alg)
            except ValueError:  # the given key's type does not sign alg
                return None
        self._keys[alg] = key
        return key

    def holding(self, thumbprint: str | None, alg: str | None = None) -> DPoPKey | None:
        """The key with this thumbprint, signing with ``alg`` (None: any), when this client
        still holds it (an RSA key has one thumbprint for PS256 and RS256)."""
        if thumbprint is None:
            return None
        for name in ALGORITHMS if alg is None else (alg,):
            key = self._keys.get(name)
            if key is None and self._given is not None and name in ALGORITHMS:
                key = self._key(name)
            if key is not None and key.thumbprint == thumbprint:
                return key
        return None

    def nonce(self, url: str | httpx.URL) -> str | None:
        """The latest nonce the server at ``url`` gave, if any (kept per endpoint: an MCP server
        and its authorization server often share an origin, and each has its own nonces)."""
        return self._nonces.get(htu(url))

    def remember(self, url: str | httpx.URL, response: httpx.Response) -> str | None:
        """Keep the ``DPoP-Nonce`` a response carries; returns it (None when it carries none)."""
        nonce: str | None = response.headers.get("dpop-nonce")
        if nonce:
            self._nonces[htu(url)] = nonce
            return nonce
        return None

    def proof(self, key: DPoPKey, method: str, url: str | httpx.URL, access_token: str | None = None) -> str:
        """A fresh proof for a request to ``url``, with the nonce its server gave last."""
        return key.proof(method, url, access_token=access_token, nonce=self.nonce(url))


class Prover:
    """Proofs with one key of a ``DPoP``, and that client's nonces: what a token request or a
    request with a bound token needs.
    """

    def __init__(self, dpop: DPoP, key: DPoPKey) -> None:
        self.dpop = dpop
        self.key = key

    def __repr__(self) -> str:
        return f"Prover({self.key!r})"

    def proof(self, method: str, url: str | httpx.URL, access_token: str | None = None) -> str:
        return self.dpop.proof(self.key, method, url, access_token)

    def remember(self, url: str | httpx.URL, response: httpx.Response) -> str | None:
        return self.dpop.remember(url, response)
