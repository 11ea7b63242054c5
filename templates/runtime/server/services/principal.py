"""Who a verified token speaks for: the ``Principal`` a handler sees in ``ctx.principal``.

Its own module so that what every server imports (the context, the sessions, the router) can
name it without loading the rest of ``auth`` (the resource server, its policies and challenges),
which only a protected HTTP server needs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
        """A stable key for this principal across its tokens (issuer, subject, client): what
        legacy sessions and MRTR ``requestState`` are bound to."""
        return f"{self.issuer or ''}\x00{self.subject or ''}\x00{self.client_id or ''}"
