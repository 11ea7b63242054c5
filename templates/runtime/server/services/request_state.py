"""Integrity protection for MRTR ``requestState``: the client echoes it, so it must not be forged or replayed.

The server seals every ``requestState`` it sends with an HMAC and opens (verifies, then
strips) the one a retry carries before the handler sees it. The seal covers the state, its
expiry (``ttl`` seconds after sealing) and the request it was issued for (``request``: the
kernel passes the method, the tool, prompt or resource it names and a digest of its
arguments), so a state that was tampered with, is presented on another request, or has
expired is -32602. Workers that share a key (``MCP_REQUEST_STATE_KEY``) accept each other's
states, so a stateless server scales out behind a round-robin balancer.

On a protected server a state is also bound to the principal it was issued to: it is signed
under a key derived from the principal's identity, so another principal's retry carrying it
fails the check (-32602) like a forged one.

Sealed form: ``<signature>.<expiry, Unix seconds>.<state>``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable

from ...jsonrpc import INVALID_PARAMS, ProtocolError

KEY_ENV = "MCP_REQUEST_STATE_KEY"
DEFAULT_TTL = 600.0  # seconds a sealed state stays valid
_SIG_LEN = 22  # 16 bytes of HMAC-SHA256, base64url without padding


def _utf8(text: str) -> bytes:
    """Text as bytes for the MAC; a lone surrogate (JSON can carry one) is kept, never an error."""
    return text.encode("utf-8", "surrogatepass")


class RequestStateSealer:
    """Seals and opens ``requestState`` strings with HMAC-SHA256 under one key.

    ``ttl`` is how long a sealed state is accepted; ``clock`` (Unix seconds) is injectable for tests.
    """

    __slots__ = ("_key", "clock", "ttl")

    def __init__(
        self, key: bytes | str | None = None, *, ttl: float = DEFAULT_TTL, clock: Callable[[], float] = time.time
    ) -> None:
        if key is None:
            key = os.environ.get(KEY_ENV) or secrets.token_bytes(32)
        self._key = key.encode() if isinstance(key, str) else key
        self.ttl = ttl
        self.clock = clock

    def _sign(self, payload: str, principal: str | None, request: str) -> str:
        key = self._key if principal is None else self._principal_key(principal)
        mac = hmac.new(key, _utf8(request), hashlib.sha256)
        mac.update(b"\x00")
        mac.update(_utf8(payload))
        return base64.urlsafe_b64encode(mac.digest()[:16]).decode().rstrip("=")

    def _principal_key(self, principal: str) -> bytes:
        """The signing key of one principal's states (``Principal.identity``)."""
        label = b"principal\x00" + _utf8(principal)
        return hmac.new(self._key, label, hashlib.sha256).digest()

    def seal(self, state: str, *, principal: str | None = None, request: str = "") -> str:
        """``state`` sealed for ``principal`` (who it is issued to; None: nobody authenticated)
        and the request ``request`` identifies, valid for ``ttl`` seconds."""
        payload = f"{int(self.clock() + self.ttl)}.{state}"
        return f"{self._sign(payload, principal, request)}.{payload}"

    def open(self, sealed: str, *, principal: str | None = None, request: str = "") -> str:
        """The state a retry of ``request`` by ``principal`` carried; -32602 when it was tampered
        with, issued to someone else or for another request, or expired."""
        sig, dot, payload = sealed.partition(".")
        expected = self._sign(payload, principal, request)
        if not dot or len(sig) != _SIG_LEN or not hmac.compare_digest(_utf8(sig), _utf8(expected)):
            raise ProtocolError(INVALID_PARAMS, "requestState failed its integrity check or belongs to another request")
        expiry, _, state = payload.partition(".")
        if not (expiry.isascii() and expiry.isdigit()) or int(expiry) < self.clock():
            raise ProtocolError(INVALID_PARAMS, "requestState has expired")
        return state
