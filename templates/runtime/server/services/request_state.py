"""Integrity protection for MRTR ``requestState``: the client echoes it, so it must not be forged.

The server seals every ``requestState`` it sends with an HMAC and opens (verifies, then
strips) the one a retry carries before the handler sees it; a tampered state is -32602.
Workers that share a key (``MCP_REQUEST_STATE_KEY``) accept each other's states, so a
stateless server scales out behind a round-robin balancer.

On a protected server a state is bound to the principal it was issued to: it is signed under
a key derived from the principal's identity, so another principal's retry carrying it fails
the check (-32602) like a forged one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets

from ...jsonrpc import INVALID_PARAMS, ProtocolError

KEY_ENV = "MCP_REQUEST_STATE_KEY"
_SIG_LEN = 22  # 16 bytes of HMAC-SHA256, base64url without padding


class RequestStateSealer:
    """Seals and opens ``requestState`` strings with HMAC-SHA256 under one key."""

    __slots__ = ("_key",)

    def __init__(self, key: bytes | str | None = None) -> None:
        if key is None:
            key = os.environ.get(KEY_ENV) or secrets.token_bytes(32)
        self._key = key.encode() if isinstance(key, str) else key

    def _sign(self, state: str, principal: str | None = None) -> str:
        key = self._key if principal is None else self._principal_key(principal)
        digest = hmac.new(key, state.encode(), hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def _principal_key(self, principal: str) -> bytes:
        """The signing key of one principal's states (``Principal.identity``)."""
        label = b"principal\x00" + principal.encode("utf-8", "surrogatepass")
        return hmac.new(self._key, label, hashlib.sha256).digest()

    def seal(self, state: str, *, principal: str | None = None) -> str:
        """``state`` with its signature; ``principal``: who it is issued to (None: nobody authenticated)."""
        return f"{self._sign(state, principal)}.{state}"

    def open(self, sealed: str, *, principal: str | None = None) -> str:
        """The state a retry carries, verified (for ``principal``, when it was issued to one)."""
        sig, dot, state = sealed.partition(".")
        if not dot or len(sig) != _SIG_LEN or not hmac.compare_digest(sig, self._sign(state, principal)):
            raise ProtocolError(INVALID_PARAMS, "requestState failed its integrity check")
        return state
