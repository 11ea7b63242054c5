"""The event store of legacy SSE streams: what a client resuming with ``Last-Event-ID`` missed.

Every SSE stream of a legacy HTTP session (the stream answering a POST, the session's GET
stream) is opened here, and each event is appended before it is sent; the id the client sees
names the stream and the event's place in it (``<stream>.<position>``). A client whose
connection dropped (or that the server closed to make it poll) sends a GET with the last id it
saw; the worker that receives it, whichever it is, reads the same stream from there: first the
events it missed, in order, then new ones as they are appended, until the stream ends (the
request's response was appended) or nothing came for a while (the client then polls again).
A stream belongs to one session: an id presented in another session names no stream.

Streams are bounded (the newest ``max_events`` are kept) and expire ``ttl`` seconds after
their last event. ``MemoryEventStore`` (the default) serves the workers of one process;
``RedisEventStore`` (``services.redis``, the ``redis`` extra) keeps each stream as a Redis
Stream, so any worker can resume it and a worker that dies loses none of the events it stored.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from typing import Literal, Protocol

StreamKind = Literal["post", "get"]
KIND_PREFIX: dict[str, StreamKind] = {"p": "post", "g": "get"}


def new_stream(kind: StreamKind) -> str:
    """A fresh stream id; its first letter says whether it answers a POST or is a session's GET stream."""
    return kind[0] + secrets.token_hex(8)


def split_event_id(event_id: str) -> tuple[str, str] | None:
    """``(stream, position)`` of an event id, or None when it is not one of ours."""
    stream, dot, position = event_id.partition(".")
    if not dot or len(stream) != 17 or stream[0] not in KIND_PREFIX or not position or len(event_id) > 64:
        return None
    if not all(c in "0123456789abcdef" for c in stream[1:]) or not all(c in "0123456789-" for c in position):
        return None
    return stream, position


def stream_kind(stream: str) -> StreamKind:
    return KIND_PREFIX[stream[0]]


class EventStore(Protocol):
    """Where the events of legacy SSE streams are kept for resumption."""

    async def open(self, session_id: str, kind: StreamKind) -> tuple[str, str]:
        """A new stream of the session: ``(stream, priming event id)``; reading after the priming
        id yields every event of the stream."""
        ...

    async def append(self, session_id: str, stream: str, data: bytes, *, last: bool = False) -> str:
        """Keep ``data`` as the next event of ``stream``; its event id. ``last``: the stream ends with it."""
        ...

    async def resume(self, session_id: str, event_id: str) -> str | None:
        """The stream ``event_id`` (sent to this session) belongs to, or None when it names no
        stream of the session (unknown, expired, another session's, malformed)."""
        ...

    def read(self, session_id: str, event_id: str, *, wait: float) -> AsyncIterator[tuple[str, bytes]]:
        """The events of ``event_id``'s stream after it, in order, then new ones as they come;
        ends with the stream's last event, or when none came for ``wait`` seconds."""
        ...

    async def forget(self, session_id: str, stream: str) -> None:
        """Drop a stream whose every event reached its client (nothing is left to resume)."""
        ...

    async def close(self) -> None:
        """Release what the store holds."""
        ...


class _Stream:
    __slots__ = ("ended", "events", "last", "touched", "wake")

    def __init__(self, max_events: int, now: float) -> None:
        self.events: deque[tuple[int, bytes]] = deque(maxlen=max_events)
        self.last = 0  # the position of the newest event (0: the priming event)
        self.ended = False
        self.touched = now
        self.wake = asyncio.Event()


class MemoryEventStore:
    """The event streams of this process, least recently used first; at most ``max_streams``, and
    at most ``max_session_streams`` of one session (its oldest go first: a session opening stream
    after stream evicts its own, not the others').

    Positions are counted for the whole store, so a stream evicted while its request still ran
    and kept again from its next event never hands out an event id twice (2025-11-25: ids MUST be
    unique across a session's streams), and a client resuming from before the eviction gets what
    followed that was kept."""

    def __init__(
        self,
        *,
        max_events: int = 1000,
        ttl: float = 300.0,
        max_streams: int = 10_000,
        max_session_streams: int = 128,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_events = max_events
        self.ttl = ttl
        self.max_streams = max_streams
        self.max_session_streams = max_session_streams
        self.clock = clock
        self._streams: OrderedDict[tuple[str, str], _Stream] = OrderedDict()
        self._of_session: dict[str, OrderedDict[str, None]] = {}  # a session's streams, oldest first
        self._positions = itertools.count(1)

    def __len__(self) -> int:
        return len(self._streams)

    def _sweep(self, now: float) -> None:
        while self._streams:
            key, stream = next(iter(self._streams.items()))
            if now - stream.touched < self.ttl and len(self._streams) < self.max_streams:
                return
            self._drop(key)

    def _drop(self, key: tuple[str, str]) -> None:
        stream = self._streams.pop(key, None)
        streams = self._of_session.get(key[0])
        if streams is not None:
            streams.pop(key[1], None)
            if not streams:
                del self._of_session[key[0]]
        if stream is not None:
            stream.ended = True
            stream.wake.set()

    def _keep(self, session_id: str, stream: str, now: float) -> _Stream:
        streams = self._of_session.setdefault(session_id, OrderedDict())
        while len(streams) >= self.max_session_streams:
            self._drop((session_id, next(iter(streams))))
            streams = self._of_session.setdefault(session_id, OrderedDict())
        streams[stream] = None
        entry = self._streams[(session_id, stream)] = _Stream(self.max_events, now)
        return entry

    async def open(self, session_id: str, kind: StreamKind) -> tuple[str, str]:
        now = self.clock()
        self._sweep(now)
        stream = new_stream(kind)
        self._keep(session_id, stream, now)
        return stream, f"{stream}.0"

    async def append(self, session_id: str, stream: str, data: bytes, *, last: bool = False) -> str:
        entry = self._streams.get((session_id, stream))
        if entry is None:  # expired or evicted while its request ran: kept again from here
            entry = self._keep(session_id, stream, self.clock())
        position = next(self._positions)
        entry.last = position
        entry.events.append((position, data))
        entry.ended = entry.ended or last
        entry.touched = self.clock()
        self._streams.move_to_end((session_id, stream))
        entry.wake.set()
        entry.wake = asyncio.Event()
        return f"{stream}.{position}"

    async def resume(self, session_id: str, event_id: str) -> str | None:
        parts = split_event_id(event_id)
        if parts is None or not parts[1].isdigit():
            return None
        self._sweep(self.clock())
        return parts[0] if (session_id, parts[0]) in self._streams else None

    async def read(self, session_id: str, event_id: str, *, wait: float) -> AsyncIterator[tuple[str, bytes]]:
        parts = split_event_id(event_id)
        if parts is None or not parts[1].isdigit():
            return
        stream, after = parts[0], int(parts[1])
        while True:
            entry = self._streams.get((session_id, stream))
            if entry is None:
                return
            wake = entry.wake
            for position, data in list(entry.events):
                if position > after:
                    after = position
                    yield f"{stream}.{position}", data
            if entry.ended and after >= entry.last:
                return
            try:
                async with asyncio.timeout(wait):
                    await wake.wait()
            except TimeoutError:
                return

    async def forget(self, session_id: str, stream: str) -> None:
        self._drop((session_id, stream))

    async def close(self) -> None:
        for entry in self._streams.values():
            entry.ended = True
            entry.wake.set()
        self._streams.clear()
        self._of_session.clear()
