"""Per-server services the kernel and the sessions share, bundled in ``Services``.

Each is a small object with an in-memory implementation: the request ``Context`` handlers see
(``context``), input from the client in either era (``inputs``: elicitation, sampling, roots),
the subscription bus (``subscriptions``), MRTR ``requestState`` signing (``request_state``),
bearer-token verification for protected HTTP servers (``auth``: the ``ResourceServer`` and its
``Principal``; ``verifiers``, imported only when used, needs the ``auth`` extra), the store of
legacy HTTP sessions (``session_store``), the store of legacy SSE events for ``Last-Event-ID``
resumption (``event_store``). ``Limits`` (``limits``) are the bounds every layer enforces.

Three of them are what workers behind a balancer must share: the subscription bus
(``bus``), the session store and the event store. Each is an interface with an in-memory
default; ``Services.build`` with a ``redis_url`` switches all three to Redis (``redis``,
imported only then: it needs the ``redis`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .bus import Change, MemoryBus, SubscriptionBus
from .context import LOG_LEVELS, Context, Send, cancelled_from_outside
from .event_store import EventStore, MemoryEventStore
from .inputs import Elicitation, InputError, InputRequired, InputRound, ReplayState, Root, Sampled
from .limits import Limits
from .principal import Principal
from .request_state import RequestStateSealer
from .session_store import MemorySessionStore, Session, SessionLimitReached, SessionStore, SharedStateUnavailable
from .subscriptions import Listener, Subscriber, Subscriptions

if TYPE_CHECKING:
    from .auth import ResourceServer


@dataclass
class Services:
    """What one server's sessions share: the ``requestState`` sealer, the subscription bus, the
    legacy session store and the legacy SSE event store; ``shared``: the Redis connection behind
    them, when there is one."""

    request_state: RequestStateSealer = field(default_factory=RequestStateSealer)
    subscriptions: Subscriptions = field(default_factory=Subscriptions)
    sessions: SessionStore[Any] = field(default_factory=MemorySessionStore)
    events: EventStore = field(default_factory=MemoryEventStore)
    shared: Any = None

    @classmethod
    def for_limits(cls, limits: Limits, request_state: RequestStateSealer) -> Services:
        """The in-memory services of a server with these ``limits``."""
        return cls.build(limits, request_state)

    @classmethod
    def build(
        cls,
        limits: Limits,
        request_state: RequestStateSealer,
        *,
        redis_url: str | None = None,
        namespace: str = "mcpgen",
        blank: Callable[[], Session] | None = None,
    ) -> Services:
        """The services of a server with these ``limits``: in memory, or with ``redis_url`` in
        Redis under ``namespace`` (``blank`` makes the empty session a stored one is restored into)."""
        if redis_url is None:
            store: MemorySessionStore[Any] = MemorySessionStore(
                max_sessions=limits.max_sessions, idle_timeout=limits.session_idle_timeout
            )
            events = MemoryEventStore(
                max_events=limits.sse_events, max_streams=limits.max_sessions, ttl=limits.session_idle_timeout
            )
            return cls(request_state=request_state, sessions=store, events=events)
        if blank is None:
            raise ValueError("a shared session store needs blank= to restore sessions into")
        try:
            from .redis import RedisBus, RedisEventStore, RedisSessionStore, SharedRedis
        except ImportError as exc:
            fix = "pip install 'mcpgen[redis]'" if __name__.startswith("mcpgen.") else "pip install redis"
            raise ImportError(f"redis_url needs the runtime's redis extra ({fix}): {exc}") from None

        shared = SharedRedis(redis_url, namespace, timeout=limits.redis_timeout)
        return cls(
            request_state=request_state,
            subscriptions=Subscriptions(RedisBus(shared)),
            sessions=RedisSessionStore(
                shared, blank, max_sessions=limits.max_sessions, idle_timeout=limits.session_idle_timeout
            ),
            events=RedisEventStore(shared, max_events=limits.sse_events, ttl=limits.session_idle_timeout),
            shared=shared,
        )

    async def aclose(self) -> None:
        """Release the shared backends (the Redis connection) of this process: each is closed even
        when one before it fails (the first failure is raised after)."""
        closers = [self.subscriptions.bus.close, self.sessions.close, self.events.close]
        if self.shared is not None:
            closers.append(self.shared.close)
        failure: BaseException | None = None
        for close in closers:
            try:
                await close()
            except Exception as exc:
                failure = failure or exc
        if failure is not None:
            raise failure


__all__ = [
    "LOG_LEVELS",
    "Change",
    "Context",
    "Elicitation",
    "EventStore",
    "InputError",
    "InputRequired",
    "InputRound",
    "Limits",
    "Listener",
    "MemoryBus",
    "MemoryEventStore",
    "MemorySessionStore",
    "Principal",
    "ReplayState",
    "RequestStateSealer",
    "ResourceServer",
    "Root",
    "Sampled",
    "Send",
    "Services",
    "Session",
    "SessionLimitReached",
    "SessionStore",
    "SharedStateUnavailable",
    "Subscriber",
    "SubscriptionBus",
    "Subscriptions",
    "cancelled_from_outside",
]


def __getattr__(name: str) -> Any:
    """``ResourceServer``, imported on first use: a server that is not protected never loads
    ``services.auth`` (its dataclasses and policies cost milliseconds at start)."""
    if name == "ResourceServer":
        from . import auth

        return getattr(auth, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
