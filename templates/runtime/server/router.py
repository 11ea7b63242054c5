"""The router: picks the session for each message of a connection.

A server serves its handler's revision and every older revision of its registry. A connection
(one stdio process or one HTTP session) that opens with a legacy ``initialize`` gets a
``LegacySession`` for the rest of its life; every other message is modern and goes to the
server's one ``ModernSession``. Transports call ``Router.handle`` (or ``Router.run`` for a
request that may be cancelled) with parsed JSON and a ``send`` for request-scoped messages
(progress, log, server->client requests on legacy sessions), and write the returned ``Reply``.
On a protected HTTP server they also pass the request's ``Principal``, which reaches the
handler's ``Context``; a legacy session belongs to the principal that opened it. Legacy HTTP
sessions are kept in the services' session store (``open_session``, ``session``,
``end_session``), which expires and caps them; ending one closes its ``Connection``.

With a ``redis_url`` (the server class's, or ``$MCP_REDIS_URL``) the services are shared
between workers: a session opened on one worker is restored on another from its stored state
(``Connection.state``/``restore``), and what a request changes in it (log level,
subscriptions) is saved before the reply is written.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..codec import Codec
from ..codec_legacy import LegacyCodec
from ..jsonrpc import INVALID_REQUEST, ProtocolError, RequestId, dumps, is_request_id, request_id, result_envelope
from ..param_headers import ToolHeaders
from .kernel import NO_REPLY, Application, Kernel, Reply, error_reply
from .services import Limits, RequestStateSealer, Send, Services, Subscriber
from .services.bus import ENDED, Change
from .services.principal import Principal
from .sessions import LegacySession, ModernSession, is_legacy_initialize, is_legacy_ping, is_modern, too_long_a_batch


class InFlight(Protocol):
    """A request in flight as a connection holds it: an ``asyncio.Task``, or what a transport
    runs its requests in (stdio's ``Pending``)."""

    def cancel(self) -> bool: ...


class Connection:
    """One stdio process or one HTTP session: its legacy session once ``initialize`` ran, its
    requests in flight (at most ``max_inflight``) and open streams, on a protected server its
    ``owner`` (the identity of the principal that opened it); ``closed`` once it ended."""

    __slots__ = (
        "_on_close",
        "closed",
        "inflight",
        "legacy",
        "listeners",
        "max_inflight",
        "owner",
        "session_id",
        "streams",
    )

    def __init__(
        self,
        max_inflight: int = 256,
        on_close: Callable[[Connection], None] | None = None,
        owner: Principal | None = None,
    ) -> None:
        self.legacy: LegacySession | None = None
        self.inflight: dict[RequestId, InFlight] = {}
        self.max_inflight = max_inflight
        self.streams = 0
        # the writers of the session's open GET streams, oldest first: the newest carries what the
        # server sends unprompted; when it closes, the one before it does (never two at once)
        self.listeners: list[Send] = []
        self.closed = asyncio.Event()
        self._on_close = on_close
        self.owner = owner.identity if owner is not None else None
        self.session_id: str | None = None

    def state(self) -> dict[str, Any] | None:
        """What a shared store keeps of the session: its legacy state and owner (None before ``initialize``)."""
        state = self.legacy.state() if self.legacy is not None else None
        return None if state is None else {**state, "owner": self.owner}

    def subscription_changes(self) -> dict[str, bool]:
        """The legacy session's subscriptions made or ended since the last save (a shared store's)."""
        return self.legacy.subscription_changes() if self.legacy is not None else {}

    def unsaved_subscriptions(self, changes: dict[str, bool]) -> None:
        if self.legacy is not None:
            self.legacy.unsaved_subscriptions(changes)

    def restore(self, state: dict[str, Any]) -> bool:
        """Take on a stored ``state`` (the connection holds a blank legacy session); False when it
        cannot be served here."""
        owner = state.get("owner")
        if self.legacy is None or not (owner is None or isinstance(owner, str)):
            return False
        self.owner = owner
        return self.legacy.restore(state)

    def belongs_to(self, principal: Principal | None) -> bool:
        """``principal`` may use this connection: the one that opened it (anyone, when nobody did)."""
        return self.owner == (principal.identity if principal is not None else None)

    @property
    def busy(self) -> bool:
        """A request is in flight or a stream is open."""
        return bool(self.inflight) or self.streams > 0

    @property
    def full(self) -> bool:
        """As many requests are in flight as the connection may have."""
        return len(self.inflight) >= self.max_inflight

    def cancel(self, params: Any) -> None:
        """``notifications/cancelled``: stop the request it names; unknown ids are ignored."""
        rid = params.get("requestId") if isinstance(params, dict) else getattr(params, "request_id", None)
        if not is_request_id(rid):
            return
        task = self.inflight.get(rid)
        if task is not None:
            task.cancel()
            # its id is free at once: the client gets no answer under it, and may send a new
            # request with it in the same write (the old one ends, or is dropped, on its own)
            del self.inflight[rid]

    def close(self) -> None:
        """The connection ended: its streams end, its requests in flight are cancelled."""
        if self.closed.is_set():
            return
        self.closed.set()
        for task in list(self.inflight.values()):
            task.cancel()
        if self._on_close is not None:
            self._on_close(self)


def id_in_use(rid: RequestId) -> Reply:
    """The reply to a request whose id names a request of the connection still in flight (a
    client must not reuse one: it would slip past ``max_inflight`` and hide the first from
    cancellation)."""
    return error_reply(rid, ProtocolError(INVALID_REQUEST, f"request id {rid!r} is already in flight"))


def too_busy(rid: RequestId | None, limit: int, *, null_id: bool = False) -> Reply:
    """The reply to a request past ``Limits.max_inflight`` (``null_id``: an unread id written null)."""
    error = ProtocolError(INVALID_REQUEST, f"too many requests in flight (the limit is {limit})", {"limit": limit})
    return error_reply(rid, error, null_id=null_id)


class Router:
    """Routes the messages of one server (an ``Application``) for every transport."""

    def __init__(self, app: Application, services: Services | None = None) -> None:
        registry = app.registry
        version = app.revision.version
        if version not in registry:
            raise ValueError(f"the server's revision {version} is not in its registry ({registry!r})")
        self.app = app
        self.limits: Limits = app.limits
        self.redis_url: str | None = getattr(app, "redis_url", None) or os.environ.get("MCP_REDIS_URL") or None
        sealer = RequestStateSealer(app.request_state_key, ttl=app.request_state_ttl)
        self.services = services or Services.build(
            self.limits,
            sealer,
            redis_url=self.redis_url,
            namespace=f"mcpgen:{app.server_info().get('name', 'server')}",
            blank=self.blank,
        )
        if self.services.shared is not None:
            self.services.subscriptions.refresh = self.refresh
            self.services.subscriptions.watchers.append(self._ended)
            bus = self.services.subscriptions.bus
            if hasattr(bus, "on_answer"):
                bus.on_answer = self._answered_elsewhere
        self.kernel = Kernel(app, self.services)
        self.served = registry.up_to(version)
        # an error to a message whose id could not be read, before its era is known: as the
        # handler's revision, the newest served, writes it (``Revision.null_error_ids``)
        self.null_ids = app.revision.null_error_ids
        legacy = tuple(v for v in self.served if registry.era(v) == "legacy")
        modern = len(legacy) < len(self.served)
        self.modern: ModernSession | None = ModernSession(self.kernel, self.served) if modern else None
        self.legacy_versions = legacy
        self.target: Codec = self.modern.codec if self.modern is not None else LegacyCodec(app.revision, "server")

    def null_ids_for(self, conn: Connection | None) -> bool:
        """Whether an error to ``conn`` writes an unread request id as null: its legacy session's
        revision decides, else the handler's (``null_ids``)."""
        legacy = conn.legacy if conn is not None else None
        return legacy.null_ids if legacy is not None and legacy.version is not None else self.null_ids

    def connect(self, owner: Principal | None = None) -> Connection:
        """A new connection (a stdio process, or an HTTP session about to initialize, ``owner``'s)."""
        return Connection(self.limits.max_inflight, self._closed, owner)

    async def handle(
        self, obj: Any, send: Send, conn: Connection | None = None, principal: Principal | None = None
    ) -> Reply:
        """One parsed JSON-RPC message (or batch) -> the reply to write; ``principal``: who the
        request's bearer token speaks for (protected HTTP servers)."""
        if conn is not None:
            # a legacy session's own messages; a modern request on its connection (stdio) is
            # served statelessly, as on a connection that never initialized (an HTTP session's
            # connection gets none: its transport routes them apart)
            legacy = conn.legacy
            if legacy is not None and (conn.session_id is not None or self.modern is None or not is_modern(obj)):
                track = functools.partial(self.track, conn) if isinstance(obj, list) else None  # a batch's
                reply = await legacy.handle(obj, send, conn.cancel, principal, track)
                if legacy.changed and conn.session_id is not None:
                    legacy.changed = False
                    await self.services.sessions.save(conn.session_id, conn)
                return reply
            if self.legacy_versions and is_legacy_initialize(obj):
                return await self.open_legacy(obj, conn)
            if self.legacy_versions and is_legacy_ping(obj):  # before initialize: answered, era unset
                return Reply(dumps(result_envelope(obj["id"], {})))
        if self.modern is None:
            error = ProtocolError(INVALID_REQUEST, "send initialize first")
            return error_reply(request_id(obj), error, null_id=self.null_ids)
        return await self.modern.handle(obj, send, conn.cancel if conn is not None else None, principal)

    async def open_legacy(self, obj: Any, conn: Connection) -> Reply:
        """A legacy ``initialize``: the connection becomes a legacy session when it succeeds."""
        session = self._shared(LegacySession(self.kernel, self.app.registry, self.legacy_versions, self.target))
        reply = await session.initialize(obj)
        if session.version is not None:
            conn.legacy = session
            self.services.subscriptions.sessions.add(session)
        return reply

    def blank(self) -> Connection:
        """An HTTP session about to be restored from a shared store: a legacy session not yet
        initialized, already receiving notifications."""
        conn = self.connect()
        conn.legacy = self._shared(LegacySession(self.kernel, self.app.registry, self.legacy_versions, self.target))
        self.services.subscriptions.sessions.add(conn.legacy)
        return conn

    async def refresh(self, session: Subscriber) -> None:
        """Bring a legacy session's state (its subscriptions) up to date from the shared store."""
        session_id = getattr(session, "session_id", None)
        if session_id is not None:
            await self.services.sessions.get(session_id)

    def _shared(self, session: LegacySession) -> LegacySession:
        """A legacy session of a shared deployment: answers to another copy's requests go on the bus."""
        forward = getattr(self.services.subscriptions.bus, "forward_answer", None)
        if self.services.shared is not None and forward is not None:

            async def forwarded(raw: Any) -> None:
                if session.session_id is not None:
                    await forward(session.session_id, dumps(raw))

            session.forward = forwarded
        return session

    async def _answered_elsewhere(self, session_id: str, data: bytes) -> None:
        """A client's answer another worker got: this worker's copy takes it if it asked."""
        peek = getattr(self.services.sessions, "peek", None)
        conn = peek(session_id) if peek is not None else None
        if conn is None or conn.legacy is None:
            return

        async def nowhere(data: bytes) -> None:  # an answer brings no message to send back
            pass

        try:
            answer = json.loads(data)
        except ValueError:
            return
        # only the copy that asked takes it (handled by another, it was forwarded again: a loop)
        if isinstance(answer, dict) and conn.legacy.awaits(answer.get("id")):
            await conn.legacy.handle(answer, nowhere)

    def _ended(self, change: Change) -> None:
        """A legacy session ended on another worker (DELETE there): this worker's copy ends too."""
        discard = getattr(self.services.sessions, "discard", None)
        if change.method == ENDED and change.uri is not None and discard is not None:
            discard(change.uri)

    def _closed(self, conn: Connection) -> None:
        if conn.legacy is not None:
            self.services.subscriptions.sessions.discard(conn.legacy)

    def close(self, conn: Connection) -> None:
        """The connection ended: its legacy session receives no more notifications."""
        conn.close()

    async def run(self, obj: Any, send: Send, conn: Connection, principal: Principal | None = None) -> Reply:
        """``handle`` a request as a cancellable in-flight request of ``conn`` (within ``max_inflight``)."""
        rid = request_id(obj)
        task = asyncio.current_task()
        if rid is None or task is None:
            return await self.handle(obj, send, conn, principal)
        if conn.inflight.get(rid) is not task:  # not registered by the transport already
            if rid in conn.inflight:
                return id_in_use(rid)
            if conn.full:
                return too_busy(rid, conn.max_inflight)
            conn.inflight[rid] = task
        try:
            reply = await self.handle(obj, send, conn, principal)
        except asyncio.CancelledError:
            return NO_REPLY  # a cancelled request gets no response
        else:  # cancelled (its id freed for a new request) and it answered all the same: dropped
            return reply if conn.inflight.get(rid) is task else NO_REPLY
        finally:
            if conn.inflight.get(rid) is task:
                del conn.inflight[rid]

    async def track(self, conn: Connection, rid: RequestId, work: Callable[[], Awaitable[Reply]]) -> Reply:
        """Run one request of a batch as an in-flight request of ``conn``: within ``max_inflight``,
        its id unique, cancellable on its own (``notifications/cancelled``: no response). A batch
        is one message, but each request in it counts (a batch slipped past every one of these)."""
        if rid in conn.inflight:
            return id_in_use(rid)
        if conn.full:
            return too_busy(rid, conn.max_inflight)
        task = asyncio.ensure_future(work())
        conn.inflight[rid] = task
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:  # the whole batch is cancelled (the client went)
            task.cancel()
            if conn.inflight.get(rid) is task:
                del conn.inflight[rid]
            raise
        cancelled = conn.inflight.get(rid) is not task  # (its id freed by the cancellation)
        if not cancelled:
            del conn.inflight[rid]
        return NO_REPLY if cancelled or task.cancelled() else task.result()

    # -- legacy HTTP sessions ------------------------------------------------------------------

    async def open_session(self, conn: Connection) -> str:
        """Keep an initialized connection as a session; its new id (``SessionLimitReached``: none free)."""
        session_id: str = await self.services.sessions.add(conn)
        conn.session_id = session_id
        if conn.legacy is not None:
            conn.legacy.session_id = session_id
            conn.legacy.changed = False
        return session_id

    async def session(self, session_id: str, principal: Principal | None = None) -> Connection | None:
        """The open session ``session_id`` of ``principal`` (None: unknown, expired, evicted, or
        another principal's)."""
        conn: Connection | None = await self.services.sessions.get(session_id)
        if conn is not None and conn.session_id is None:  # restored from the shared store
            conn.session_id = session_id
            if conn.legacy is not None:
                conn.legacy.session_id = session_id
        return conn if conn is not None and conn.belongs_to(principal) else None

    async def release(self, conn: Connection) -> None:
        """The request that looked ``conn`` up is over: a shared store no longer counts it busy
        for that request (it stays busy while another request or a stream holds it)."""
        if conn.session_id is not None and not conn.busy:
            await self.services.sessions.release(conn.session_id)

    async def end_session(self, session_id: str, principal: Principal | None = None) -> bool:
        """DELETE: close ``principal``'s session; False when it was not open (or not theirs)."""
        if await self.session(session_id, principal) is None:
            return False
        conn: Connection | None = await self.services.sessions.remove(session_id)
        if conn is None:
            return False
        conn.close()
        # every other worker's copy ends too (its GET stream served on until its keep-alive)
        await self.services.subscriptions.announce(Change(ENDED, session_id))
        return True

    def known_param_headers(self, tool: str) -> ToolHeaders | None:
        """``tool_param_headers`` of a tool already read (empty for a legacy-only server); None
        when it must be read from the handler."""
        return self.modern.known_param_headers(tool) if self.modern is not None else ()

    async def tool_param_headers(self, tool: str, meta: Any, principal: Principal | None = None) -> ToolHeaders:
        """``x-mcp-header`` annotations of ``tool`` (modern HTTP requests); empty for a legacy-only server."""
        if self.modern is None:
            return ()
        return await self.modern.tool_param_headers(tool, meta, principal)


__all__ = ["Connection", "Reply", "Router", "is_legacy_initialize", "too_long_a_batch"]
