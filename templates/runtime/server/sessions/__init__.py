"""The two session kinds, side by side, each through its era's codec.

``ModernSession`` serves stateless modern requests (one per server); ``LegacySession`` holds
what a legacy ``initialize`` fixed for one connection. Both convert between the revision a
request was sent in and the handler's revision with ``Conversion``.
"""

from .convert import Conversion
from .legacy import LegacySession, is_legacy_initialize, is_legacy_ping, too_long_a_batch
from .modern import ModernSession, is_modern, requested_version

__all__ = [
    "Conversion",
    "LegacySession",
    "ModernSession",
    "is_legacy_initialize",
    "is_legacy_ping",
    "is_modern",
    "requested_version",
    "too_long_a_batch",
]
