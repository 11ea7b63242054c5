"""Where legacy HTTP sessions (``Mcp-Session-Id``) live between requests: minted, found, expired, capped.

``SessionStore`` is the seam; ``MemorySessionStore`` keeps the sessions of this process in
least-recently-used order. A session idle (no request in flight, no open stream) longer than
``idle_timeout`` seconds is closed and forgotten, and when ``max_sessions`` are open a new
one evicts the session idle the longest; either way its client's next request gets 404 and it
initializes again, as the transports page says a client must. Expiry is swept on every use,
so abandoned sessions cost nothing once traffic moves on, without a background task.

Behind a balancer the sessions must outlive the worker that opened them: ``RedisSessionStore``
(``services.redis``, the ``redis`` extra) keeps what a session is (``Session.state``: the
negotiated revision, the client's capabilities and info, the log level, the resource
subscriptions, the principal it belongs to) in Redis with the same idle expiry and cap, and
rebuilds it (``Session.restore``) on whichever worker the client reaches next. The live
connection objects stay in a per-worker ``MemorySessionStore`` under the same limits.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar


class Session(Protocol):
    """What a store needs of a session: whether it is in use, and how to end it."""

    @property
    def busy(self) -> bool:
        """A request is in flight or a stream is open: the session is not idle."""
        ...

    def close(self) -> None:
        """End the session: its streams end, its requests in flight are cancelled."""
        ...

    def state(self) -> dict[str, Any] | None:
        """What a shared store keeps of the session (JSON-ready); None before it is initialized."""
        ...

    def restore(self, state: dict[str, Any]) -> bool:
        """Take on ``state`` (as ``state`` returned it, maybe on another worker); False when it
        cannot be served here (a revision this server does not serve)."""
        ...


S = TypeVar("S", bound=Session)


class SharedStateUnavailable(Exception):
    """The shared store (Redis) where workers keep sessions and events cannot be reached."""


class SessionLimitReached(Exception):
    """Every one of ``max_sessions`` sessions is busy: no session can be opened now."""


class SessionStore(Protocol[S]):
    """Open sessions by id. Another implementation (a shared store) plugs in through ``Services``."""

    async def add(self, session: S) -> str:
        """Keep ``session`` under a new id (visible ASCII, unguessable); may evict an idle one."""
        ...

    async def get(self, session_id: str) -> S | None:
        """The open session ``session_id``, now marked used; None when unknown, expired or evicted."""
        ...

    async def save(self, session_id: str, session: S) -> None:
        """The session's state changed (log level, subscriptions): keep it where other workers see it."""
        ...

    async def release(self, session_id: str) -> None:
        """The request that looked ``session_id`` up is over (a shared store gives up its claim
        that the session is busy, unless it still is)."""
        ...

    async def remove(self, session_id: str) -> S | None:
        """Forget ``session_id`` (the caller closes it); the session, or None when it was not open."""
        ...

    async def close(self) -> None:
        """Release what the store holds (connections to a shared backend)."""
        ...

    def __len__(self) -> int: ...


class MemorySessionStore(Generic[S]):
    """The sessions of this process, least recently used first; ``clock`` is injectable for tests."""

    def __init__(
        self,
        *,
        max_sessions: int = 10_000,
        idle_timeout: float = 1800.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.clock = clock
        self._sessions: OrderedDict[str, tuple[S, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    async def add(self, session: S) -> str:
        now = self.clock()
        self._sweep(now)
        if len(self._sessions) >= self.max_sessions:
            self._evict_one()
        session_id = secrets.token_hex(16)
        self._sessions[session_id] = (session, now)
        return session_id

    def put(self, session_id: str, session: S) -> None:
        """Keep ``session`` under a known id (a session another worker opened); may evict an idle one."""
        now = self.clock()
        self._sweep(now)
        if session_id not in self._sessions and len(self._sessions) >= self.max_sessions:
            # every one busy here: kept anyway (a shared store's cap is the one that counts; this
            # refused a valid session with a 500 while stale copies filled the place)
            with contextlib.suppress(SessionLimitReached):
                self._evict_one()
        self._sessions[session_id] = (session, now)
        self._sessions.move_to_end(session_id)

    def peek(self, session_id: str) -> S | None:
        """The open session ``session_id`` as it is, not marked used."""
        entry = self._sessions.get(session_id)
        return entry[0] if entry is not None else None

    async def release(self, session_id: str) -> None:
        """Nothing to do: a session here is busy exactly while it is."""

    async def save(self, session_id: str, session: S) -> None:
        """Nothing to keep: the session object is the state (what changed is forgotten)."""
        take = getattr(session, "subscription_changes", None)
        if take is not None:
            take()

    async def close(self) -> None:
        """Nothing to release."""

    async def get(self, session_id: str) -> S | None:
        now = self.clock()
        self._sweep(now)
        entry = self._sessions.get(session_id)
        if entry is None:
            return None
        self._sessions[session_id] = (entry[0], now)
        self._sessions.move_to_end(session_id)
        return entry[0]

    async def remove(self, session_id: str) -> S | None:
        entry = self._sessions.pop(session_id, None)
        return entry[0] if entry is not None else None

    def discard(self, session_id: str) -> None:
        """Close ``session_id`` if it is kept here (it ended on another worker)."""
        entry = self._sessions.pop(session_id, None)
        if entry is not None:
            entry[0].close()

    def _sweep(self, now: float) -> None:
        """Close sessions idle past the timeout (oldest first); a busy one counts as used now."""
        for _ in range(len(self._sessions)):
            session_id, (session, used) = next(iter(self._sessions.items()))
            if now - used < self.idle_timeout:
                return
            if session.busy:
                self._sessions[session_id] = (session, now)
                self._sessions.move_to_end(session_id)
                continue
            del self._sessions[session_id]
            session.close()

    def _evict_one(self) -> None:
        """Close the least recently used session that is not busy."""
        for session_id, (session, _) in self._sessions.items():
            if not session.busy:
                del self._sessions[session_id]
                session.close()
                return
        raise SessionLimitReached(f"all {self.max_sessions} sessions are in use")
