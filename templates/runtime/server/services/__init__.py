"""Per-server services the kernel and the sessions share, bundled in ``Services``.

Each is a small object with an in-memory implementation: the request ``Context`` handlers see
(``context``), the subscription bus (``subscriptions``), MRTR ``requestState`` signing
(``request_state``), bearer-token verification for protected HTTP servers (``auth``: the
``ResourceServer`` and its ``Principal``; ``verifiers``, imported only when used, needs the
``auth`` extra), the store of legacy HTTP sessions (``session_store``). ``Limits``
(``limits``) are the bounds every layer enforces. An event store plugs in here, as a further
field of ``Services``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .auth import Principal, ResourceServer
from .context import LOG_LEVELS, Context, Send
from .limits import Limits
from .request_state import RequestStateSealer
from .session_store import MemorySessionStore, Session, SessionLimitReached, SessionStore
from .subscriptions import Listener, Subscriber, Subscriptions


@dataclass
class Services:
    """What one server's sessions share: the ``requestState`` sealer, the subscription bus and
    the legacy session store."""

    request_state: RequestStateSealer = field(default_factory=RequestStateSealer)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)
    sessions: SessionStore[Any] = field(default_factory=MemorySessionStore)

    @classmethod
    def for_limits(cls, limits: Limits, request_state: RequestStateSealer) -> Services:
        """The in-memory services of a server with these ``limits``."""
        store: MemorySessionStore[Any] = MemorySessionStore(
            max_sessions=limits.max_sessions, idle_timeout=limits.session_idle_timeout
        )
        return cls(request_state=request_state, sessions=store)


__all__ = [
    "LOG_LEVELS",
    "Context",
    "Limits",
    "Listener",
    "MemorySessionStore",
    "Principal",
    "RequestStateSealer",
    "ResourceServer",
    "Send",
    "Services",
    "Session",
    "SessionLimitReached",
    "SessionStore",
    "Subscriber",
    "Subscriptions",
]
