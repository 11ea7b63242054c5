"""Per-server services the kernel and the sessions share, bundled in ``Services``.

Each is a small object with an in-memory implementation: the request ``Context`` handlers see
(``context``), the subscription bus (``subscriptions``), MRTR ``requestState`` signing
(``request_state``), bearer-token verification for protected HTTP servers (``auth``: the
``ResourceServer`` and its ``Principal``; ``verifiers``, imported only when used, needs the
``auth`` extra). A session store and an event store plug in here, as further fields of
``Services``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .auth import Principal, ResourceServer
from .context import LOG_LEVELS, Context, Send
from .request_state import RequestStateSealer
from .subscriptions import Listener, Subscriber, Subscriptions


@dataclass
class Services:
    """What one server's sessions share: the ``requestState`` sealer and the subscription bus."""

    request_state: RequestStateSealer = field(default_factory=RequestStateSealer)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)


__all__ = [
    "LOG_LEVELS",
    "Context",
    "Listener",
    "Principal",
    "RequestStateSealer",
    "ResourceServer",
    "Send",
    "Services",
    "Subscriber",
    "Subscriptions",
]
