"""The one hashing helper: every sha256 the generator records or checks is computed here."""

from __future__ import annotations

import hashlib


def sha256_hex(data: bytes) -> str:
    """The hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
