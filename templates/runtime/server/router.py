"""The router: picks the session for each message of a connection.

A server serves its handler's revision and every older revision of its registry. A connection
(one stdio process or one HTTP session) that opens with a legacy ``initialize`` gets a
``LegacySession`` for the rest of its life; every other message is modern and goes to the
server's one ``ModernSession``. Transports call ``Router.handle`` (or ``Router.run`` for a
request that may be cancelled) with parsed JSON and a ``send`` for request-scoped messages
(progress, log, server->client requests on legacy sessions), and write the returned ``Reply``.
On a protected HTTP server they also pass the request's ``Principal``, which reaches the
handler's ``Context``; a legacy session belongs to the principal that opened it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..codec import Codec
from ..codec_legacy import LegacyCodec
from ..jsonrpc import INVALID_REQUEST, ProtocolError, is_request_id, request_id
from .kernel import NO_REPLY, Application, Kernel, Reply, error_reply
from .services import Principal, RequestStateSealer, Send, Services
from .sessions import LegacySession, ModernSession, is_legacy_initialize


class Connection:
    """One stdio process or one HTTP session: its legacy session once ``initialize`` ran, requests
    in flight, and on a protected server its ``owner`` (the identity of the principal that opened it).
    """

    __slots__ = ("inflight", "legacy", "owner", "session_id")

    def __init__(self, session_id: str | None = None, owner: Principal | None = None) -> None:
        self.legacy: LegacySession | None = None
        self.inflight: dict[Any, asyncio.Task[Any]] = {}
        self.session_id = session_id
        self.owner = owner.identity if owner is not None else None

    def belongs_to(self, principal: Principal | None) -> bool:
        """``principal`` may use this connection: the one that opened it (anyone, when nobody did)."""
        return self.owner == (principal.identity if principal is not None else None)

    def cancel(self, params: Any) -> None:
        """``notifications/cancelled``: stop the request it names; unknown ids are ignored."""
        rid = params.get("requestId") if isinstance(params, dict) else getattr(params, "request_id", None)
        task = self.inflight.get(rid) if is_request_id(rid) else None
        if task is not None:
            task.cancel()


class Router:
    """Routes the messages of one server (an ``Application``) for every transport."""

    def __init__(self, app: Application, services: Services | None = None) -> None:
        registry = app.registry
        version = app.revision.version
        if version not in registry:
            raise ValueError(f"the server's revision {version} is not in its registry ({registry!r})")
        self.app = app
        self.services = services or Services(request_state=RequestStateSealer(app.request_state_key))
        self.kernel = Kernel(app, self.services)
        self.served = registry.up_to(version)
        legacy = tuple(v for v in self.served if registry.era(v) == "legacy")
        modern = len(legacy) < len(self.served)
        self.modern: ModernSession | None = ModernSession(self.kernel, self.served) if modern else None
        self.legacy_versions = legacy
        self.target: Codec = self.modern.codec if self.modern is not None else LegacyCodec(app.revision, "server")

    async def handle(
        self, obj: Any, send: Send, conn: Connection | None = None, principal: Principal | None = None
    ) -> Reply:
        """One parsed JSON-RPC message (or batch) -> the reply to write; ``principal``: who the
        request's bearer token speaks for (protected HTTP servers)."""
        if conn is not None:
            if conn.legacy is not None:
                return await conn.legacy.handle(obj, send, conn.cancel, principal)
            if self.legacy_versions and is_legacy_initialize(obj):
                return await self.open_legacy(obj, conn)
        if self.modern is None:
            return error_reply(request_id(obj), ProtocolError(INVALID_REQUEST, "send initialize first"))
        return await self.modern.handle(obj, send, conn.cancel if conn is not None else None, principal)

    async def open_legacy(self, obj: Any, conn: Connection) -> Reply:
        """A legacy ``initialize``: the connection becomes a legacy session when it succeeds."""
        session = LegacySession(self.kernel, self.app.registry, self.legacy_versions, self.target)
        reply = await session.initialize(obj)
        if session.version is not None:
            conn.legacy = session
            self.services.subscriptions.sessions.add(session)
        return reply

    def close(self, conn: Connection) -> None:
        """The connection ended: its legacy session receives no more notifications."""
        if conn.legacy is not None:
            self.services.subscriptions.sessions.discard(conn.legacy)

    async def run(self, obj: Any, send: Send, conn: Connection, principal: Principal | None = None) -> Reply:
        """``handle`` a request as a cancellable in-flight request of ``conn``."""
        rid = request_id(obj)
        task = asyncio.current_task()
        if rid is None or task is None:
            return await self.handle(obj, send, conn, principal)
        conn.inflight[rid] = task
        try:
            return await self.handle(obj, send, conn, principal)
        except asyncio.CancelledError:
            return NO_REPLY  # a cancelled request gets no response
        finally:
            if conn.inflight.get(rid) is task:
                del conn.inflight[rid]

    async def tool_param_headers(self, tool: str, meta: Any, principal: Principal | None = None) -> dict[str, str]:
        """``x-mcp-header`` annotations of ``tool`` (modern HTTP requests); empty for a legacy-only server."""
        if self.modern is None:
            return {}
        return await self.modern.tool_param_headers(tool, meta, principal)


__all__ = ["Connection", "Reply", "Router", "is_legacy_initialize"]
