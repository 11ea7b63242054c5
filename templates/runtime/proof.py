"""What both ends of a DPoP proof (RFC 9449) compute alike, client and server runtimes both.

``origin``: a URL's scheme and authority as ``htu`` compares them (RFC 3986 §6.2: scheme and
host lower-cased, no user information, the default port dropped, IPv6 bracketed); ``token_hash``:
``ath``, base64url of the access token's SHA-256, unpadded (RFC 9449 §4.2). Standard library only.
"""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import SplitResult

DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(parts: SplitResult) -> str:
    """``scheme://host[:port]`` of a split URL, normalized; ``ValueError`` for a port out of range."""
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    return f"{scheme}://{host}" if port is None or port == DEFAULT_PORTS.get(scheme) else f"{scheme}://{host}:{port}"


def token_hash(access_token: str) -> str:
    """``ath``: base64url of the token's SHA-256, unpadded (an access token is ASCII: RFC 6750 §2.1)."""
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
