"""The subscription bus: how a change raised in one worker reaches the streams open in every worker.

A bus carries small typed ``Change`` events (a list changed, a resource was updated), never
JSON-RPC: each worker turns an event into the notifications of its own open streams
(``subscriptions/listen`` on 2026-07-28, a legacy session's GET stream), filtered by what
each asked for. ``MemoryBus`` (the default) delivers in this process only; ``RedisBus``
(``services.redis``, the ``redis`` extra) publishes on a Redis channel every worker reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Protocol

ENDED: Final = "ended"  # no notification: a legacy session ended (its id in ``uri``)


@dataclass(frozen=True, slots=True)
class Change:
    """One change: the notification ``method`` a server raised for its subscribers (a list
    changed; with ``uri``, that resource was updated), or ``ended``: the legacy session ``uri``
    names ended (a DELETE on one worker, which every other worker's copy of the session hears
    of; no notification). Which notifications a server may raise is the registry's to say
    (``HandlerBase.notify``); the bus carries any."""

    method: str
    uri: str | None = None

    def __post_init__(self) -> None:
        method = self.method
        if not isinstance(method, str) or "\n" in method or ("/" not in method and method != ENDED):
            raise ValueError(f"a change is a notification method (notifications/...), not {method!r}")
        if self.uri is not None and not isinstance(self.uri, str):
            raise ValueError(f"a change names a uri (a string), not {self.uri!r}")
        if self.method == ENDED and self.uri is None:
            raise ValueError("an ended session names its id")

    def encode(self) -> bytes:
        """The wire form on a shared bus: the method, then the URI after a newline."""
        return self.method.encode() + (b"\n" + self.uri.encode() if self.uri is not None else b"")

    @classmethod
    def decode(cls, data: bytes) -> Change | None:
        """The change ``encode`` wrote; None for anything else (never raises)."""
        try:
            method, newline, uri = data.decode().partition("\n")
            return cls(method, uri if newline else None)
        except (UnicodeDecodeError, ValueError):
            return None


Deliver = Callable[[Change], Awaitable[None]]


class SubscriptionBus(Protocol):
    """Carries changes between the workers of one deployment."""

    async def publish(self, change: Change) -> None:
        """Send ``change`` to every worker (this one included); never raises for a lost backend."""
        ...

    async def attach(self, deliver: Deliver) -> None:
        """From now on, hand every change published anywhere to ``deliver`` (idempotent); returns
        once delivery is established, so nothing published after it is missed."""
        ...

    async def close(self) -> None:
        """Stop delivering and release what the bus holds."""
        ...


class MemoryBus:
    """The bus of a single process: ``publish`` delivers at once."""

    def __init__(self) -> None:
        self._deliver: Deliver | None = None

    async def publish(self, change: Change) -> None:
        if self._deliver is not None:
            await self._deliver(change)

    async def attach(self, deliver: Deliver) -> None:
        self._deliver = deliver

    async def close(self) -> None:
        self._deliver = None
