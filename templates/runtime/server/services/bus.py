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
from typing import Final, Literal, Protocol

Kind = Literal["tools", "prompts", "resources", "resource", "ended"]

ENDED: Final = "ended"  # a legacy session ended (its id in ``uri``)
NAMED = ("resource", ENDED)  # the kinds that name something in ``uri``
# event kind -> the notification it becomes
METHOD_OF: dict[str, str] = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
    "resource": "notifications/resources/updated",
}
KIND_OF: dict[str, Kind] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
    "notifications/resources/updated": "resource",
}


@dataclass(frozen=True, slots=True)
class Change:
    """One change: a list changed (``tools``, ``prompts``, ``resources``), the resource ``uri``
    was updated (``resource``), or the legacy session ``uri`` names ended (``ended``: a DELETE on
    one worker, which every other worker's copy of the session hears of; no notification)."""

    kind: Kind
    uri: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in METHOD_OF and self.kind != ENDED:
            raise ValueError(f"unknown change kind {self.kind!r}")
        if (self.kind in NAMED) != isinstance(self.uri, str):
            raise ValueError("a resource update or an ended session names its uri, and only they do")

    @property
    def method(self) -> str:
        """The notification method this change becomes."""
        return METHOD_OF[self.kind]

    @classmethod
    def of(cls, method: str, uri: str | None = None) -> Change:
        """The change a notification method stands for (ValueError for any other method)."""
        kind = KIND_OF.get(method)
        if kind is None:
            raise ValueError(f"{method} is not a change a subscriber can ask for")
        return cls(kind, uri if kind == "resource" else None)

    def encode(self) -> bytes:
        """The wire form on a shared bus: the kind, then the URI after a newline."""
        return self.kind.encode() + (b"\n" + self.uri.encode() if self.uri is not None else b"")

    @classmethod
    def decode(cls, data: bytes) -> Change | None:
        """The change ``encode`` wrote; None for anything else (never raises)."""
        try:
            kind, newline, uri = data.decode().partition("\n")
            if bool(newline) != (kind in NAMED):
                return None
            return cls(kind, uri if newline else None)  # type: ignore[arg-type]
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
