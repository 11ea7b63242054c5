"""Server-pushed notifications: ``subscriptions/listen`` streams (2026-07-28) and legacy sessions.

``publish`` puts a ``Change`` on the server's bus; the bus hands every change, from whichever
worker raised it, to ``deliver``, which sends it to this worker's own open streams that asked
for it: a listener gets it tagged with its subscription id.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...jsonrpc import dumps, notification_envelope
from ...versions import FilterMember
from .bus import ENDED, Change, MemoryBus, SubscriptionBus

Send = Callable[[bytes], Awaitable[None]]

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"


LISTEN_BACKLOG = 1024  # notifications queued for a listen stream whose client does not read them


class Listener:
    """One open ``subscriptions/listen`` stream: its id, the honoured filter, what each member of
    its revision's ``SubscriptionFilter`` opts in to (``members``) and where to send.

    ``deliver`` only queues (``offer``); the stream's own writer (``write``) sends, so a client
    that stops reading holds up nothing but its own stream: past ``backlog`` queued
    notifications it is dropped, and its stream ends."""

    __slots__ = ("_queue", "_wake", "_wanted", "filter", "id", "overflow", "send")

    def __init__(
        self,
        id: str | int,
        filter: dict[str, Any],
        send: Send,
        members: Mapping[str, FilterMember],
        backlog: int = LISTEN_BACKLOG,
    ) -> None:
        self.id = id
        self.filter = filter
        self.send = send
        # notification -> the URIs it is wanted for (None: a flag, wanted for all)
        self._wanted: dict[str, frozenset[str] | None] = {}
        for name, member in members.items():
            got = member.accepted(filter.get(name))
            if got:
                self._wanted[member.method] = (
                    frozenset(u for u in got if isinstance(u, str)) if isinstance(got, list) else None
                )
        self._queue: collections.deque[bytes] = collections.deque(maxlen=backlog)
        self._wake = asyncio.Event()
        self.overflow = asyncio.Event()  # set when the backlog overflowed: the stream is to end

    @property
    def overflowed(self) -> bool:
        return self.overflow.is_set()

    def offer(self, data: bytes) -> bool:
        """Queue ``data`` for the writer; False (``overflow`` set) when the backlog is full."""
        if len(self._queue) == self._queue.maxlen:
            self.overflow.set()
        else:
            self._queue.append(data)
        self._wake.set()
        return not self.overflowed

    async def write(self) -> None:
        """Send what is queued, in order, until the backlog overflows or a send fails."""
        while not self.overflowed:
            await self._wake.wait()
            self._wake.clear()
            while self._queue and not self.overflowed:
                await self.send(self._queue.popleft())

    async def flush(self) -> None:
        """Send what is still queued (the stream is ending)."""
        while self._queue and not self.overflowed:
            await self.send(self._queue.popleft())

    def wants(self, method: str, uri: str | None) -> bool:
        if method not in self._wanted:
            return False
        uris = self._wanted[method]
        return uris is None or (uri is not None and uri in uris)


class Subscriber:
    """A legacy session that receives unsolicited notifications (list changes, subscribed URIs)."""

    subscribed: set[str]
    notify: Send | None

    def sends(self, method: str) -> bool:
        """Whether the session's revision has ``method`` for a server to send (else it is not sent)."""
        return True


Refresh = Callable[[Subscriber], Awaitable[None]]


class Subscriptions:
    """Every listener and legacy subscriber of one server process, and the bus between workers.

    ``refresh`` (set when legacy sessions are shared between workers) brings a streaming
    session's resource subscriptions up to date before a resource update is filtered.
    """

    def __init__(self, bus: SubscriptionBus | None = None) -> None:
        self.bus: SubscriptionBus = bus if bus is not None else MemoryBus()
        self.listeners: set[Listener] = set()
        self.sessions: set[Subscriber] = set()
        self.refresh: Refresh | None = None
        self.watchers: list[Callable[[Change], None]] = []  # told of every change first (the runtime's own caches)
        self.closed = False
        self._attached = False
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def until_closed(self) -> None:
        """Wait until the server shuts down (``close``): open listen streams then end gracefully."""
        if self._closing is None:
            self._closing, self._loop = asyncio.Event(), asyncio.get_running_loop()
        if self.closed:  # close() ran before the event existed
            return
        await self._closing.wait()

    def close(self) -> None:
        """End every listen stream (from any thread or a signal handler); safe to call twice."""
        self.closed = True  # set first: until_closed() checks it after creating the event
        if self._closing is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._closing.set)

    async def attach(self) -> None:
        """Receive the bus's changes in this process (once; before a stream starts listening)."""
        if not self._attached:
            await self.bus.attach(self.deliver)
            self._attached = True

    async def publish(self, method: str, uri: str | None = None) -> None:
        """Announce ``method`` (a list change, or ``uri`` updated) to every worker's subscribers."""
        change = Change(method, uri)
        await self.attach()
        await self.bus.publish(change)

    async def announce(self, change: Change) -> None:
        """Put a change that is no notification (``ended``) on the bus, for every worker's watchers."""
        await self.attach()
        await self.bus.publish(change)

    async def deliver(self, change: Change) -> None:
        """Send ``change`` to this worker's streams that asked for it; a failed stream is dropped."""
        for watch in self.watchers:
            watch(change)
        if change.method == ENDED:
            return  # for the watchers only
        method, uri = change.method, change.uri
        base: dict[str, Any] = {"uri": uri} if uri is not None else {}
        for listener in list(self.listeners):
            if listener.wants(method, uri):
                params = {**base, "_meta": {SUBSCRIPTION_ID_KEY: listener.id}}
                if not listener.offer(dumps(notification_envelope(method, params))):
                    self.listeners.discard(listener)  # its client stopped reading: its stream ends
        for session in list(self.sessions):
            if session.notify is None or not session.sends(method):
                continue
            if uri is not None:  # sent to the sessions subscribed to the URI (resources/subscribe)
                if self.refresh is not None:
                    try:
                        await self.refresh(session)
                    except Exception:
                        continue  # the shared store is out of reach: its subscriptions are unknown
                if uri not in session.subscribed:
                    continue
            try:
                await session.notify(dumps(notification_envelope(method, base or None)))
            except Exception:
                self.sessions.discard(session)
