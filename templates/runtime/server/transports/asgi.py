"""Streamable HTTP as an ASGI app: ``POST /mcp`` with JSON or SSE replies, legacy sessions.

Modern requests (2026-07-28, a body naming its revision in ``_meta``) are stateless: their
``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*`` headers must be
single, header-safe and match the body (400, -32020), and an ``Mcp-Session-Id`` they carry is
ignored, so any worker can answer any request and the app scales out behind a round-robin
balancer. An ``initialize`` POST opens a legacy session; its id comes back in
``Mcp-Session-Id`` once the handshake succeeded, and every later message of the session must
carry it (404 once the session expired or was deleted) and, if it names one, the session's
revision in ``MCP-Protocol-Version`` (400 otherwise). Its server->client requests travel on the
POST's SSE stream and their answers come back as POSTs; a GET opens its stream of unsolicited
notifications, which ends with the session. A reply is plain JSON unless the handler sends
something first (progress, log, input requests), which turns it into an SSE stream; closing
a modern request's stream cancels the request.

A legacy session's SSE streams are resumable: on revisions whose transport says so (2025-11-25,
the overlay's ``sse_priming``) each opens with a priming event (an id and empty data); every
event is kept in the services' event store before it is sent and carries its id, and a client
whose connection dropped (or that the handler asked to poll, ``Context.close_sse_stream``: a
``retry`` field, then the connection closes) sends a GET with ``Last-Event-ID`` to any worker
sharing the store: it gets the events it missed, in order, then the rest of the stream. Losing
the connection does not cancel a legacy request (its client cancels with
``notifications/cancelled``). When the shared store is out of reach, a
legacy session's request is answered 503; stateless requests are served as ever.

Host and Origin are checked against DNS rebinding; the server's ``Limits`` bound the headers
(431), the body (413) and the time to send it (408). The runner's uvicorn enforces the header
limit and timeout before the app sees a request (``runners.LimitedHttpToolsProtocol``); the
app checks the header size again for any other ASGI server.

With ``auth`` (a ``ResourceServer``) the app is an OAuth 2.1 protected resource: it serves the
Protected Resource Metadata (RFC 9728) at its well-known paths, and checks the bearer token of
every POST, GET and DELETE before anything else runs; the scopes a POST needs are read from its
parsed body (method, and tool name for ``tools/call``). A refused request gets 401/403 with the
``WWW-Authenticate`` challenge (or 503) and reaches no handler; an accepted one carries its
``Principal`` into the handler's ``Context``. A legacy session belongs to the principal that
sent its ``initialize``: its id presented with another principal's token is an unknown session.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import re
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from collections.abc import Set as AbstractSet
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic_core import from_json

from ...codec import PROTOCOL_VERSION_KEY
from ...codec_modern import unsupported_protocol_version
from ...jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
    dumps,
    error_envelope,
    holds_a_request,
    request_id,
)
from ...param_headers import ToolHeaders, value_at
from ...versions import VersionRegistry
from ..router import Connection, Reply, Router, is_legacy_initialize
from ..services import EventStore, SessionLimitReached, SharedStateUnavailable
from ..services.auth import Denial, Principal, ResourceServer
from ..services.event_store import MemoryEventStore, stream_kind
from ..services.session_store import MemorySessionStore
from ..sessions import is_modern

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
ASGISend = Callable[[Message], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
# modern error code -> HTTP status (2026-07-28 Streamable HTTP)
STATUS_OF = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}
JSON = b"application/json"
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
# headers that name one thing: sent twice, two components may each read a different one
SINGLE = frozenset(
    {
        "host",
        "origin",
        "authorization",
        "dpop",
        "content-length",
        "mcp-protocol-version",
        "mcp-session-id",
        "mcp-method",
        "mcp-name",
        "last-event-id",
    }
)
SESSION_ID = "mcp-session-id"
PROTOCOL_VERSION = "mcp-protocol-version"
HEADER_SAFE = re.compile(r"[\t\x20-\x7e]*")  # RFC 9110 field value characters MCP allows
NUMBER = re.compile(r"[+-]?[0-9]{1,32}(?:\.[0-9]{1,32})?(?:[eE][+-]?[0-9]{1,4})?")  # ASCII digits only
STREAM_BACKLOG = 1024  # notifications queued for a GET stream whose client does not read them
SHUTDOWN_RETRY_MS = 1000  # the retry a GET stream ends with when the server stops


class Headers:
    """A request's headers by lower-case name (the last value of each), with the names of the
    single-valued ones that came more than once and the total size in bytes. Values are decoded
    (latin-1) when they are read."""

    __slots__ = ("raw", "repeated", "size")
    raw: dict[bytes, bytes]
    repeated: AbstractSet[str]
    size: int

    def __init__(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        if type(pairs) is not list:
            pairs = list(pairs)
        raw = {key.lower(): value for key, value in pairs}
        self.raw = raw
        if len(raw) == len(pairs):  # no name twice (the usual case): nothing is repeated
            self.repeated = frozenset()
            self.size = sum(map(len, raw)) + sum(map(len, raw.values()))
            return
        repeated: set[str] = set()
        size = 0
        seen: set[bytes] = set()
        for key, value in pairs:
            name = key.lower()
            size += len(key) + len(value)
            if name in seen:
                text = name.decode("latin-1")
                if text in SINGLE or text.startswith("mcp-"):
                    repeated.add(text)
            seen.add(name)
            raw[name] = value  # the last value of a name is the one read
        self.repeated, self.size = repeated, size

    def get(self, name: str) -> str | None:
        value = self.raw.get(name.encode())
        return value.decode("latin-1") if value is not None else None


def header_value(raw: str) -> str:
    """An ``Mcp-Name``/``Mcp-Param-*`` value, ``=?base64?...?=`` decoded (-32020 when it is not base64 of UTF-8)."""
    if raw.startswith("=?base64?") and raw.endswith("?="):
        try:
            return base64.b64decode(raw[9:-2], validate=True).decode()
        except ValueError:
            raise ProtocolError(HEADER_MISMATCH, "malformed base64 header value") from None
    return raw


def safe_header(name: str, raw: str) -> str:
    """``raw`` trimmed, refused (-32020) when it holds a character a header value may not carry."""
    # printable ASCII is safe (the usual case, without the pattern); else the pattern decides (tab)
    if not (raw.isascii() and raw.isprintable()) and HEADER_SAFE.fullmatch(raw) is None:
        raise ProtocolError(HEADER_MISMATCH, f"the {name} header holds characters a header value may not carry")
    return raw.strip()


def same_number(text: str, value: int | float) -> bool:
    """A header's number equals the body's, compared as numbers (``42.0`` is ``42``), ASCII digits only."""
    if NUMBER.fullmatch(text) is None:
        return False
    try:
        return Decimal(text) == Decimal(repr(value))
    except (InvalidOperation, ValueError):
        return False


def header_matches(got: str, value: Any) -> bool:
    """A decoded header value equals a JSON argument as the header carries it."""
    if value is True or value is False:
        return got == ("true" if value else "false")
    if type(value) is int or type(value) is float:
        return same_number(got, value)
    return type(value) is str and got == value


def check_param_headers(args: dict[str, Any], annotated: ToolHeaders, headers: Headers) -> None:
    """The ``Mcp-Param-*`` header of each ``x-mcp-header`` argument present in ``args`` (at its
    path of object keys) must be present, header-safe and match the body; one whose argument is
    absent or null must be absent (streamable-http.mdx: header and body never disagree)."""
    for path, suffix in annotated:
        if not isinstance(suffix, str):
            continue
        value = value_at(args, path)
        name = "mcp-param-" + suffix.lower()
        raw = headers.get(name)
        where = "arguments." + ".".join(path)
        if value is None:  # no value (or null): no header, else the two sources of truth disagree
            if raw is not None:
                raise ProtocolError(HEADER_MISMATCH, f"Mcp-Param-{suffix} header is given but {where} is not")
            continue
        if raw is None:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Param-{suffix} header is missing ({where} is given)")
        if not header_matches(header_value(safe_header(f"Mcp-Param-{suffix}", raw)), value):
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Param-{suffix} header does not match {where}")


def check_headers(obj: Any, headers: Headers, modern: bool, registry: VersionRegistry) -> None:
    """The 2026-07-28 request headers must be single, present, header-safe and match the body
    (-32020); ``modern``: ``is_modern(obj)``. ``Mcp-Name`` matches the param the request's
    revision names for its method (``MethodSpec.target_param``), in a revision ``registry`` has."""
    for name in sorted(headers.repeated):
        if name.startswith("mcp-") and name != SESSION_ID:
            raise ProtocolError(HEADER_MISMATCH, f"the {name} header is repeated")
    if not modern or "method" not in obj:
        return  # not a modern message: the codec refuses it on its own terms
    params = obj["params"]
    version = headers.get(PROTOCOL_VERSION)
    if version is None:
        raise ProtocolError(HEADER_MISMATCH, "MCP-Protocol-Version header is missing (_meta names a protocolVersion)")
    if safe_header("MCP-Protocol-Version", version) != params["_meta"][PROTOCOL_VERSION_KEY]:
        raise ProtocolError(HEADER_MISMATCH, "MCP-Protocol-Version header does not match _meta protocolVersion")
    method = headers.get("mcp-method")
    if method is None:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method header is missing")
    if safe_header("Mcp-Method", method) != obj["method"]:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method header does not match the body's method")
    named = params["_meta"][PROTOCOL_VERSION_KEY]  # the header's, checked above
    spec = registry.revision(named).methods.request(obj["method"]) if named in registry else None
    key = spec.target_param if spec is not None else None
    if key is not None and key in params:
        target = headers.get("mcp-name")
        if target is None:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Name header is missing (params.{key} is given)")
        if header_value(safe_header("Mcp-Name", target)) != params[key]:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Name header does not match params.{key}")


class Soon:
    """Items each due ``delay`` seconds after it was added, ``act`` called on each that is still
    here when due, under one timer per event loop (a timer per request cost a modern request
    about 17,000 of its 270,000 instructions in process). Every due time is ``now + delay``, so
    items come due in the order they were added and the timer only ever waits for the oldest.
    Each event loop has its own queue: an app served from two loops (in two threads) at once
    keeps both loops' items."""

    def __init__(self, delay: float, act: Callable[[Any], object]) -> None:
        self.delay, self.act = delay, act
        self.queues: dict[asyncio.AbstractEventLoop, _Queue] = {}
        self.last: _Queue | None = None  # the queue used last: the only one, but for apps on two loops

    @property
    def due(self) -> Mapping[Any, float]:
        """The items still waiting, with their due times, each loop's oldest first."""
        return {item: at for queue in list(self.queues.values()) for item, at in queue.due.items()}

    def add(self, item: Any) -> None:
        loop = asyncio.get_running_loop()
        queue = self.last
        if queue is None or queue.loop is not loop:
            queue = self.queues.get(loop)
            if queue is None:
                for old in [old for old in self.queues if old.is_closed()]:  # a loop gone with items
                    del self.queues[old]
                queue = self.queues[loop] = _Queue(self, loop)
            self.last = queue
        at = loop.time() + self.delay
        queue.due[item] = at
        if queue.timer is None:
            queue.timer = loop.call_at(at, queue.fire)

    def discard(self, item: Any) -> None:
        # (no get_running_loop(): 300 ns; an item is looked for in the queue used last, then in all)
        last = self.last
        if last is not None and last.due.pop(item, None) is not None:
            return
        for queue in list(self.queues.values()):
            if queue is not last:
                queue.due.pop(item, None)


class _Queue:
    """One event loop's items of a ``Soon``, and its one timer; kept while its loop lives (a
    closed loop's goes when another loop makes one)."""

    __slots__ = ("due", "loop", "soon", "timer")

    def __init__(self, soon: Soon, loop: asyncio.AbstractEventLoop) -> None:
        self.soon, self.loop = soon, loop
        self.due: collections.OrderedDict[Any, float] = collections.OrderedDict()  # oldest first
        self.timer: asyncio.TimerHandle | None = None

    def fire(self) -> None:
        self.timer = None
        now = self.loop.time()
        while self.due:
            item, at = next(iter(self.due.items()))
            if at > now:
                if self.timer is None:  # (``act`` may have added an item, and its timer)
                    self.timer = self.loop.call_at(at, self.fire)
                return
            del self.due[item]
            self.soon.act(item)


class Deadlines:
    """The request tasks reading their body, each until ``timeout`` seconds after it started,
    under one timer per event loop (``Soon``; a timer per request cost a tenth of a request's
    CPU). A task past its deadline is cancelled, and ``expired`` tells its reader (as
    ``asyncio.timeout`` would: not when something else cancelled it as well)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.due = Soon(timeout, self._expire)
        self.cancelled: set[asyncio.Task[Any]] = set()

    @property
    def waiting(self) -> Mapping[asyncio.Task[Any], float]:
        """The tasks still reading, with their deadlines, oldest first."""
        return self.due.due

    def start(self) -> tuple[asyncio.Task[Any], int]:
        """The current task's deadline starts now: the task, and how many cancellations it had."""
        task = asyncio.current_task()
        if task is None:
            raise RuntimeError("an ASGI request runs in a task")
        self.due.add(task)
        return task, task.cancelling()

    def stop(self, task: asyncio.Task[Any]) -> None:
        self.due.discard(task)
        self.cancelled.discard(task)

    def expired(self, task: asyncio.Task[Any], cancelling: int) -> bool:
        """``task``, cancelled, was cancelled for its deadline (and by nothing else)."""
        if task not in self.cancelled:
            return False
        self.cancelled.discard(task)
        return task.uncancel() <= cancelling

    def _expire(self, task: asyncio.Task[Any]) -> None:
        self.cancelled.add(task)
        task.cancel()


class HttpApp:
    """The ASGI application of one server (its ``Router``); the server's ``Limits`` apply.

    ``path`` is the MCP endpoint; ``allowed_hosts``/``allowed_origins`` are host names (any
    port) accepted in ``Host`` and ``Origin`` (default: loopback only); ``auth`` protects the
    endpoint (see the module docstring).
    """

    def __init__(
        self,
        router: Router,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        auth: ResourceServer | None = None,
    ) -> None:
        self.router = router
        self.limits = router.limits
        self.auth = auth
        if auth is not None and auth.dpop is not None and router.services.shared is not None:
            auth.dpop.share(router.services.shared)  # a proof used at one worker is used at all
        self.metadata_paths = frozenset(auth.metadata_paths) if auth is not None else frozenset()
        self.path = path
        self.endpoint = path.rstrip("/")
        self.deadlines = Deadlines(self.limits.body_timeout)
        self.watches = Soon(WATCH_AFTER, ResponseStream.begin_watching)
        # the legacy POST streams this worker is writing to their connection, by (session, stream):
        # a GET resuming one takes its delivery over (transports.mdx: no message on two streams)
        self.delivering: weakref.WeakValueDictionary[tuple[str, str], ResponseStream] = weakref.WeakValueDictionary()
        self.checked_hosts: dict[str | None, bool] = {}  # Host and Origin values seen, allowed or not
        self.checked_origins: dict[str | None, bool] = {}
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.allowed_origins = frozenset(h.lower() for h in (allowed_origins or self.allowed_hosts))
        # what the endpoint serves: GET (a session's stream) and DELETE only where sessions exist
        self.allow = [(b"allow", b"GET, POST, DELETE" if router.legacy_versions else b"POST")]

    async def aclose(self) -> None:
        """Release what this app holds open: its verifier's client (made again if the app serves
        on). A host's lifespan shutdown calls it, as does the runner once uvicorn stops. The
        router's services (Redis) are not the app's to close: a router may serve several apps and
        stdio; the runner closes them as the process ends (``services.aclose()`` otherwise)."""
        if self.auth is not None:
            await self.auth.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    try:
                        await self.aclose()
                    except Exception as exc:  # the host reports it; the shutdown goes on
                        await send({"type": "lifespan.shutdown.failed", "message": f"{exc!r}"})
                    else:
                        await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if scope["path"] in self.metadata_paths:
            await self.metadata(scope, send)
            return
        if scope["path"].rstrip("/") != self.endpoint:
            await plain(send, 404, b"not found")
            return
        headers = Headers(scope["headers"])
        if headers.size > self.limits.max_header_bytes:
            await plain(send, 431, b"request headers too large")
            return
        if headers.repeated & {"host", "origin", "authorization"}:
            await plain(send, 400, b"repeated Host, Origin or Authorization header")
            return
        if not self.host_allowed(headers.get("host")):
            await plain(send, 421, b"invalid Host header")
            return
        if not self.origin_allowed(headers.get("origin")):
            await plain(send, 403, b"invalid Origin header")
            return
        services = self.router.services
        if type(services.sessions) is MemorySessionStore and type(services.events) is MemoryEventStore:
            # this process's memory is never out of reach: no SharedStateUnavailable to answer
            if scope["method"] == "POST":
                await self.post(headers, receive, send)
            else:
                await self.route(scope["method"], headers, receive, send)
            return
        started: list[bool] = []

        async def tracked(message: Message) -> None:
            if message["type"] == "http.response.start":
                started.append(True)
            await send(message)

        try:
            await self.route(scope["method"], headers, receive, tracked)
        except SharedStateUnavailable as exc:
            if not started:  # else the stream just ends: the client resumes once the store is back
                await error(send, 503, None, ProtocolError(INTERNAL_ERROR, str(exc)), null_id=self.null_ids_of(headers))

    async def route(self, method: str, headers: Headers, receive: Receive, send: ASGISend) -> None:
        if method == "POST":
            await self.post(headers, receive, send)
            return
        session_id = headers.get(SESSION_ID)
        if method in ("GET", "DELETE") and self.router.legacy_versions and session_id is not None:
            principal = await self.authorize(method, headers, None)
            if isinstance(principal, Denial):
                await deny(send, principal)
                return
            send = self.with_nonce(principal, send)
            conn = await self.session(headers, None, principal, send)
            if conn is None:
                return
            last = headers.get("last-event-id")
            try:
                if method == "GET" and last is not None:
                    await self.resume(conn, last.strip(), receive, send)
                elif method == "GET":
                    await self.stream(conn, receive, send)
                else:
                    await self.router.end_session(session_id, principal)
                    await plain(send, 200, b"")
            finally:
                await self.router.release(conn)
        else:
            await plain(send, 405, b"method not allowed", self.allow)

    def null_ids_of(self, headers: Headers) -> bool:
        """Whether an error to a request with ``headers`` writes an id it could not read as null:
        as the legacy revision its ``MCP-Protocol-Version`` names does (its session's, before the
        session is found), else as the handler's revision (``Router.null_ids``)."""
        version = headers.get(PROTOCOL_VERSION)
        version = version.strip() if version is not None else None
        if version is not None and version in self.router.legacy_versions:
            return bool(self.router.app.registry.revision(version).null_error_ids)
        return self.router.null_ids

    def primes(self, conn: Connection | None) -> bool:
        """Whether ``conn``'s legacy session opens its SSE streams with a priming event: its
        revision's transport says so (``RevisionEntry.sse_priming``; older clients take every
        ``data`` for a message)."""
        legacy = conn.legacy if conn is not None else None
        version = legacy.version if legacy is not None else None
        return version is not None and legacy is not None and legacy.sse_priming

    # -- checks ------------------------------------------------------------------------------

    async def authorize(self, method: str, headers: Headers, message: Any) -> Principal | Denial | None:
        """The request's ``Principal`` (None on an unprotected server), or the ``Denial`` to send."""
        if self.auth is None:
            return None
        proof = headers.get("dpop")
        proofs = () if proof is None else (proof, proof) if "dpop" in headers.repeated else (proof,)
        return await self.auth.check(
            headers.get("authorization"), message, method=method, path=self.endpoint, dpop=proofs
        )

    def with_nonce(self, principal: Principal | None, send: ASGISend) -> ASGISend:
        """``send``, its response carrying a fresh ``DPoP-Nonce`` when the server demands nonces
        of DPoP proofs (RFC 9449 §9): a client that keeps calling never meets ``use_dpop_nonce``
        again once it has one."""
        dpop = self.auth.dpop if self.auth is not None and principal is not None else None
        if dpop is None or not dpop.nonce:
            return send
        header = (b"dpop-nonce", dpop.new_nonce().encode("ascii"))

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        return sending

    async def metadata(self, scope: Scope, send: ASGISend) -> None:
        """The Protected Resource Metadata: public, readable from any origin (browser clients)."""
        assert self.auth is not None
        cors = [(b"access-control-allow-origin", b"*")]
        if scope["method"] == "OPTIONS":
            allow = [(b"access-control-allow-methods", b"GET, OPTIONS"), (b"access-control-allow-headers", b"*")]
            await plain(send, 204, b"", cors + allow)
        elif scope["method"] == "GET":
            await respond(send, 200, dumps(self.auth.document()), cors)
        else:
            await plain(send, 405, b"method not allowed", [(b"allow", b"GET, OPTIONS")])

    def host_allowed(self, host: str | None) -> bool:
        known = self.checked_hosts.get(host)
        if known is None:
            known = host is not None and hostname(host) in self.allowed_hosts
            remember(self.checked_hosts, host, known)
        return known

    def origin_allowed(self, origin: str | None) -> bool:
        known = self.checked_origins.get(origin)
        if known is None:
            if origin is None:
                known = True  # not a browser
            else:
                rest = origin.partition("://")[2]
                known = bool(rest) and hostname(rest) in self.allowed_origins
            remember(self.checked_origins, origin, known)
        return known

    async def session(
        self, headers: Headers, rid: Any, principal: Principal | None, send: ASGISend, session_id: str | None = None
    ) -> Connection | None:
        """The legacy session a request names; None once it answered: 400 (repeated id, another
        revision in ``MCP-Protocol-Version``) or 404 (unknown, expired, deleted, another principal's)."""
        if SESSION_ID in headers.repeated or PROTOCOL_VERSION in headers.repeated:
            repeated = ProtocolError(INVALID_REQUEST, "repeated Mcp-Session-Id or MCP-Protocol-Version header")
            await error(send, 400, rid, repeated, null_id=self.null_ids_of(headers))
            return None
        if session_id is None:
            session_id = headers.get(SESSION_ID)
        assert session_id is not None  # the caller saw it
        conn = await self.router.session(session_id, principal)
        if conn is None or conn.legacy is None:
            await error(
                send,
                404,
                rid,
                ProtocolError(INVALID_REQUEST, "unknown or expired session"),
                null_id=self.null_ids_of(headers),
            )
            return None
        version = headers.get(PROTOCOL_VERSION)
        if version is not None and version.strip() != conn.legacy.version:
            message = f"MCP-Protocol-Version {version.strip()!r} is not this session's revision {conn.legacy.version}"
            await error(send, 400, rid, ProtocolError(INVALID_REQUEST, message), null_id=self.null_ids_of(headers))
            return None
        return conn

    # -- POST ------------------------------------------------------------------------------

    async def read_body(self, headers: Headers, receive: Receive) -> bytes | int:
        """The request body, or the status refusing it: 413 (over ``max_body_bytes``), 408 (too slow)."""
        limit = self.limits.max_body_bytes
        length = headers.get("content-length")
        if length is not None and length.isascii() and length.isdigit() and int(length) > limit:
            return 413
        chunks: list[bytes] = []
        size = 0
        task, cancelling = self.deadlines.start()
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return b""
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    return 413
                if not message.get("more_body", False):
                    return b"".join((*chunks, chunk)) if chunks else chunk
                chunks.append(chunk)
        except asyncio.CancelledError:
            if self.deadlines.expired(task, cancelling):
                return 408
            raise
        finally:
            self.deadlines.stop(task)

    async def post(self, headers: Headers, receive: Receive, send: ASGISend) -> None:
        body = await self.read_body(headers, receive)
        if isinstance(body, int):
            await plain(send, body, b"request body too large" if body == 413 else b"request body too slow")
            return
        try:
            obj = from_json(body, allow_inf_nan=False)
        except ValueError as exc:
            unreadable: ValueError | None = exc
            obj = None
        else:
            unreadable = None
        # before anything reads the message for a handler; no coroutine for an unprotected server
        principal = None if self.auth is None else await self.authorize("POST", headers, obj)
        if principal is not None:
            if isinstance(principal, Denial):
                await deny(send, principal)
                return
            send = self.with_nonce(principal, send)
        if unreadable is not None:
            await error(
                send,
                400,
                None,
                ProtocolError(PARSE_ERROR, data={"detail": str(unreadable)}),
                null_id=self.null_ids_of(headers),
            )
            return
        rid = request_id(obj)
        if isinstance(obj, dict) and "id" in obj and is_legacy_initialize(obj) and self.router.legacy_versions:
            await self.initialize(obj, principal, send)
            return
        conn: Connection | None = None
        modern = is_modern(obj)
        session_id = None if modern else headers.get(SESSION_ID)
        if not modern and session_id is None and self.legacy_without_session(obj, headers):
            # a legacy client's request outside any session gets the legacy answer (transports.mdx:
            # 400 for a message without the session id, other than initialize), not the modern era's
            message = "no Mcp-Session-Id header: a legacy session starts with initialize"
            await error(send, 400, rid, ProtocolError(INVALID_REQUEST, message), null_id=self.null_ids_of(headers))
            return
        if session_id is not None:  # a legacy session's message
            conn = await self.session(headers, rid, principal, send, session_id)
            if conn is None:
                return
        else:  # stateless; a session id on a modern request is ignored
            try:
                if not modern:  # a body without _meta: its header is the only version named
                    self.check_header_version(headers)
                elif "id" in obj:  # a request naming a revision not served, header and body alike: that
                    # is the answer, before its other headers and method are judged by a revision it did
                    # not ask for (versioning.mdx); header and body apart are -32020 (conformance: SEP-2575)
                    self.check_body_version(obj, headers)
                check_headers(obj, headers, modern, self.router.app.registry)
                if modern and obj.get("method") == "tools/call":
                    params = obj["params"]
                    args = params.get("arguments", {})
                    if isinstance(args, dict) and type(params.get("name")) is str:
                        name = params["name"]
                        annotated = self.router.known_param_headers(name)
                        if annotated is None:
                            annotated = await self.router.tool_param_headers(name, params["_meta"], principal)
                        if annotated:
                            check_param_headers(args, annotated, headers)
            except ProtocolError as exc:
                await error(send, 400, rid, exc)
                return
        # a message that passed the checks: a request (or batch) is answered; a notification or
        # response the server takes gets 202, one it refuses 400 with the error (no id)
        try:
            if holds_a_request(obj) or isinstance(obj, list):  # a batch is answered as one
                await self.answer(obj, conn, receive, send, principal)
                return
            reply = await self.router.handle(obj, none_send, conn, principal)
            if reply.code is not None and isinstance(obj, dict) and obj.get("method") == "notifications/cancelled":
                reply = Reply(None)  # cancellation.mdx: an invalid one SHOULD be ignored (as on stdio): 202
            await self.write_reply(send, reply, conn, answering=False)
        finally:
            if conn is not None:
                await self.router.release(conn)

    def check_body_version(self, obj: dict[str, Any], headers: Headers) -> None:
        """-32022 when a modern request's ``_meta`` and ``MCP-Protocol-Version`` name one revision,
        not served here."""
        version = obj["params"]["_meta"][PROTOCOL_VERSION_KEY]
        if type(version) is str and version not in self.router.served and headers.get(PROTOCOL_VERSION) == version:
            raise unsupported_protocol_version(self.router.served, version)

    def check_header_version(self, headers: Headers) -> None:
        """-32022 when ``MCP-Protocol-Version`` names a revision not served here (streamable-http.mdx:
        400 with the supported versions, whatever else the message lacks)."""
        version = headers.get(PROTOCOL_VERSION)
        if version is not None and version not in self.router.served:
            raise unsupported_protocol_version(self.router.served, version)

    def legacy_without_session(self, obj: Any, headers: Headers) -> bool:
        """A message of no modern shape, without a session, from a legacy client: its
        ``MCP-Protocol-Version`` names a legacy revision served here, or, a request, it has none,
        which transports.mdx has a server take for a revision (``RevisionEntry.headerless_http``:
        2025-03-26, whose clients send no such header) when it serves that one."""
        version = headers.get(PROTOCOL_VERSION)
        served = self.router.legacy_versions
        if version is None:  # and no header of 2026-07-28's (Mcp-Method): a modern client's mistake
            registry = self.router.app.registry
            assumed = any(registry.entry(v).headerless_http for v in served)
            return assumed and holds_a_request(obj) and headers.get("mcp-method") is None
        return version in served

    async def initialize(self, obj: dict[str, Any], principal: Principal | None, send: ASGISend) -> None:
        """A legacy ``initialize``: the session (``principal``'s) is kept, and its id sent, only
        once it succeeded."""
        conn = self.router.connect(principal)
        reply = await self.router.handle(obj, none_send, conn, principal)
        extra: list[tuple[bytes, bytes]] = []
        if conn.legacy is not None:
            try:
                extra.append((SESSION_ID.encode(), (await self.router.open_session(conn)).encode()))
            except SessionLimitReached as exc:
                conn.close()
                await error(
                    send, 503, request_id(obj), ProtocolError(INTERNAL_ERROR, str(exc)), null_id=self.router.null_ids
                )
                return
        assert reply.body is not None
        await respond(send, 200 if conn.legacy is not None else self.status(reply, None), reply.body, extra)

    def status(self, reply: Reply, conn: Connection | None) -> int:
        if reply.code is None or conn is not None:
            return 200
        return STATUS_OF.get(reply.code, 200)

    async def answer(
        self, obj: Any, conn: Connection | None, receive: Receive, send: ASGISend, principal: Principal | None = None
    ) -> None:
        """Run the request inline; JSON if it finishes silently, else an SSE stream of what it sends.

        The first message the handler sends (progress, a log, a server->client request on a
        legacy session) starts the stream. A modern request is cancelled when its client closes
        the stream (the 2026-07-28 cancellation); a legacy session's stream is resumable and its
        request runs on when the connection goes.
        """
        resumable = conn is not None and conn.session_id is not None
        stream = ResponseStream(
            send,
            receive,
            asyncio.current_task(),
            self.router.services.events if resumable else None,
            conn.session_id if conn is not None else None,
            resumable and self.primes(conn),
            self.delivering if resumable else None,
            self.limits.sse_ping,
        )
        # a request the client cancels by going (not a legacy session's) is watched from early on:
        # a handler that has sent nothing yet is cancelled too (cancellation.mdx); not at once,
        # so a quick request costs no task (and shares one timer)
        if not resumable:
            self.watches.add(stream)
        try:
            if conn is not None:
                reply = await self.router.run(obj, stream, conn, principal)
            else:
                reply = await self.router.handle(obj, stream, None, principal)
        except asyncio.CancelledError:
            if not stream.cancelled_by_client:
                raise
            return  # the client went away: nothing more to send
        finally:
            if not resumable:
                self.watches.discard(stream)
            stream.stop_watching()
            stream.stop_pinging()
        if stream.started:
            await stream.finish(reply.body)
            return
        if reply.body is None and holds_a_request(obj):  # cancelled (notifications/cancelled, a
            # legacy session): a request is answered by JSON or a stream, never 202; an empty
            # stream carries no response
            await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        else:
            await self.write_reply(send, reply, conn, answering=holds_a_request(obj))

    async def write_reply(self, send: ASGISend, reply: Reply, conn: Connection | None, *, answering: bool) -> None:
        """A reply as the HTTP answer: its body as JSON; none, for notifications and responses the
        server took, 202; for ones it refused, 400 with the error (without an id). ``answering``:
        the input held a request, whose error a legacy session answers with 200 (it is the
        request's response); input that held none, refused, gets its error status in a session
        too (transports.mdx: a server that cannot accept the input MUST return an HTTP error)."""
        if reply.body is not None:
            await respond(send, self.status(reply, conn if answering else None), reply.body, [])
        elif reply.code is not None:
            await error(
                send, 400, None, reply.refused or ProtocolError(reply.code), null_id=self.router.null_ids_for(conn)
            )
        else:
            await plain(send, 202, b"")

    # -- GET: a legacy session's stream of unsolicited notifications -----------------------

    async def stream(
        self, conn: Connection, receive: Receive, send: ASGISend, resumed: tuple[str, bool] | None = None
    ) -> None:
        """Until the client goes, the session ends, the server stops (the stream then ends with a
        ``retry``), or the client stops reading (a backlog of
        ``STREAM_BACKLOG`` notifications): then the stream ends and the client may open another,
        or resume this one with ``Last-Event-ID``. ``resumed``: the stored stream this GET
        continues, and whether its response has started already."""
        legacy = conn.legacy
        assert legacy is not None and conn.session_id is not None
        session_id = conn.session_id
        events = self.router.services.events
        queue: collections.deque[bytes] = collections.deque()
        wake = asyncio.Event()
        overflow = False

        async def push(data: bytes) -> None:
            nonlocal overflow
            if len(queue) >= STREAM_BACKLOG:
                overflow = True
            else:
                queue.append(data)
            wake.set()

        subscriptions = self.router.services.subscriptions
        await subscriptions.attach()
        legacy.notify = push
        conn.listeners.append(push)
        conn.streams += 1
        watcher = asyncio.create_task(disconnected(receive))
        closer = asyncio.create_task(conn.closed.wait())
        shutdown = asyncio.create_task(subscriptions.until_closed())  # the server stopping (a signal)
        for task in (watcher, closer, shutdown):
            task.add_done_callback(lambda _: wake.set())
        try:
            if resumed is None:
                stream, priming = await events.open(session_id, "get")
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
                opened = (prime(priming) if self.primes(conn) else b"") + b": stream open\n\n"
                await send({"type": "http.response.body", "body": opened, "more_body": True})
            else:
                stream = resumed[0]
                if not resumed[1]:
                    await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
            keep_alive = self.limits.session_idle_timeout / 3
            loop = asyncio.get_running_loop()
            refreshed = loop.time()
            while not (watcher.done() or closer.done() or shutdown.done() or overflow):
                try:
                    async with asyncio.timeout(min(self.limits.sse_ping, keep_alive)):
                        await wake.wait()
                except TimeoutError:  # silent for a while: a comment keeps the connection
                    await send({"type": "http.response.body", "body": PING, "more_body": True})
                    if loop.time() - refreshed >= keep_alive:  # an open stream keeps its session in
                        refreshed = loop.time()  # use, in a shared store too
                        with contextlib.suppress(SharedStateUnavailable):
                            await self.router.services.sessions.get(session_id)
                    continue
                wake.clear()
                while queue and not watcher.done():
                    data = queue.popleft()
                    event_id = await events.append(session_id, stream, data)
                    await send({"type": "http.response.body", "body": event(data, event_id), "more_body": True})
            if not watcher.done():  # stopping: the client is asked to come back (to the next server)
                tail = retry(SHUTDOWN_RETRY_MS) if shutdown.done() else b""
                await send({"type": "http.response.body", "body": tail, "more_body": False})
        finally:
            for task in (watcher, closer, shutdown):
                task.cancel()
            conn.streams -= 1
            conn.listeners.remove(push)
            if legacy.notify is push:  # the stream opened before it, still open, carries them on
                legacy.notify = conn.listeners[-1] if conn.listeners else None

    async def resume(self, conn: Connection, last_event_id: str, receive: Receive, send: ASGISend) -> None:
        """GET with ``Last-Event-ID``: the events of that stream after it, in order, then the rest
        of the stream: a POST's until its response (or, when nothing comes for ``resume_wait``
        seconds, a ``retry`` asking the client to poll again); a GET stream's live from here."""
        assert conn.session_id is not None
        events = self.router.services.events
        stream = await events.resume(conn.session_id, last_event_id)
        if stream is None:  # 400, not 404: the session lives on (a 404 tells the client it ended)
            await error(
                send,
                400,
                None,
                ProtocolError(INVALID_REQUEST, "unknown or expired event stream"),
                null_id=self.router.null_ids_for(conn),
            )
            return
        delivering = self.delivering.get((conn.session_id, stream))
        if delivering is not None:  # its first connection still open (half-open, or a second
            # reader): that connection ends, and the stream's events go to this one only
            await delivering.close_connection(0)
        live = stream_kind(stream) == "get"
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        watcher = asyncio.create_task(disconnected(receive))
        conn.streams += 1
        try:
            wait = 0.0 if live else self.limits.resume_wait
            async for event_id, data in events.read(conn.session_id, last_event_id, wait=wait):
                if watcher.done():
                    return
                await send({"type": "http.response.body", "body": event(data, event_id), "more_body": True})
        finally:
            watcher.cancel()
            conn.streams -= 1
        if live:
            await self.stream(conn, receive, send, resumed=(stream, True))
        else:
            await send({"type": "http.response.body", "body": retry(1000), "more_body": False})


class ResponseStream:
    """The SSE answer to one POST, the ``send`` its request's messages go to.

    Started by the first message; with an event ``store`` (a legacy session's request) it opens
    with a priming event and every message is kept before it is sent, with its id. Without a
    store, the client closing the stream cancels the request; with one, the request runs on
    and its messages are only kept. ``close_connection`` (``Context.close_sse_stream``) ends the
    connection after a ``retry`` field, for the client to resume.
    """

    def __init__(
        self,
        send: ASGISend,
        receive: Receive,
        task: asyncio.Task[Any] | None,
        store: EventStore | None,
        session_id: str | None,
        priming: bool = False,
        delivering: weakref.WeakValueDictionary[tuple[str, str], ResponseStream] | None = None,
        ping: float | None = None,
    ) -> None:
        self.send, self.receive, self.task = send, receive, task
        self.store, self.session_id, self.priming = store, session_id, priming
        self.delivering = delivering  # the app's streams being written to their connection
        self.ping = ping  # seconds of silence before a comment line (``Limits.sse_ping``)
        self.pinger: asyncio.Task[None] | None = None
        self.written = 0.0  # the loop's time of the last write
        self.started = False
        self.connected = True  # the HTTP response is still open
        self.cancelled_by_client = False
        self.stream: str | None = None
        self.watcher: asyncio.Task[None] | None = None
        self.id_sent = False  # an event with an id went out: the client can resume the stream

    async def start(self) -> None:
        if self.started:
            return
        self.started = True
        priming = None
        if self.store is not None and self.session_id is not None:
            self.stream, priming = await self.store.open(self.session_id, "post")
            if self.delivering is not None:
                self.delivering[(self.session_id, self.stream)] = self
        await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        if priming is not None and self.priming:
            await self.send({"type": "http.response.body", "body": prime(priming), "more_body": True})
            self.id_sent = True
        self.begin_watching()
        if self.ping is not None:
            self.written = asyncio.get_running_loop().time()
            self.pinger = asyncio.create_task(self.keep_alive(self.ping))

    async def keep_alive(self, every: float) -> None:
        """While the connection is open: a comment line after ``every`` seconds without a write."""
        loop = asyncio.get_running_loop()
        while self.connected:
            quiet = loop.time() - self.written
            if quiet < every:
                await asyncio.sleep(every - quiet)
                continue
            self.written = loop.time()
            try:
                await self.send({"type": "http.response.body", "body": PING, "more_body": True})
            except Exception:  # the connection went meanwhile: the watcher says so
                return

    def stop_pinging(self) -> None:
        if self.pinger is not None:
            self.pinger.cancel()
            self.pinger = None

    def begin_watching(self) -> None:
        """Watch for the client going (once): from the stream's start, or, for a request the client
        cancels by going, from ``WATCH_AFTER`` into it although nothing was sent yet."""
        if self.watcher is None and self.connected:
            self.watcher = asyncio.create_task(self.watch())

    async def watch(self) -> None:
        await disconnected(self.receive)
        self.connected = False
        if self.stream is None and self.task is not None:
            self.cancelled_by_client = True
            self.task.cancel()

    async def keep(self, data: bytes, *, last: bool = False) -> str | None:
        if self.store is None or self.stream is None or self.session_id is None:
            return None
        return await self.store.append(self.session_id, self.stream, data, last=last)

    async def __call__(self, data: bytes) -> None:
        await self.start()
        event_id = await self.keep(data)
        if self.connected:
            if self.pinger is not None:
                self.written = asyncio.get_running_loop().time()
            await self.send({"type": "http.response.body", "body": event(data, event_id), "more_body": True})
            self.id_sent = self.id_sent or event_id is not None

    async def close_connection(self, retry_ms: int) -> None:
        """End the connection (not the stream) after a ``retry`` field, once an event with an id
        went out (2025-11-25 transports: a server may close the connection only then; without one
        the client has nothing to resume from, and the response would be lost: a revision whose
        streams are not primed, closed before its first event); a no-op otherwise, and without a
        store."""
        if self.store is None or self.session_id is None:
            return
        await self.start()
        if not self.id_sent:
            return
        if self.connected:
            self.connected = False
            self.stop_pinging()
            await self.send({"type": "http.response.body", "body": retry(retry_ms), "more_body": False})

    def stop_watching(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()

    async def finish(self, body: bytes | None) -> bool:
        """Write the reply as the stream's last event; False when no stream started (reply as JSON)."""
        if not self.started:
            return False
        if self.delivering is not None and self.session_id is not None and self.stream is not None:
            self.delivering.pop((self.session_id, self.stream), None)
        event_id = await self.keep(body, last=True) if body is not None else None
        self.stop_pinging()
        if self.connected:  # the client got every event: nothing to resume, the stream goes
            self.connected = False
            tail = event(body, event_id) if body is not None else b""
            await self.send({"type": "http.response.body", "body": tail, "more_body": False})
            if self.store is not None and self.stream is not None and self.session_id is not None:
                await self.store.forget(self.session_id, self.stream)
        return True


async def none_send(data: bytes) -> None:
    """Where request-scoped messages of a notification would go: nowhere."""


async def disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


PING = b": ping\n\n"  # an SSE comment: ignored by clients, seen by whatever drops idle connections
WATCH_AFTER = 0.02  # seconds into a request before its client's going is watched for (a disconnect waits)
CHECKED = 256  # Host and Origin values whose verdict an app remembers


def remember(verdicts: dict[str | None, bool], value: str | None, verdict: bool) -> None:
    """Keep the verdict on a header value, for the first ``CHECKED`` values an app sees."""
    if len(verdicts) < CHECKED:
        verdicts[value] = verdict


def hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def event(data: bytes, event_id: str | None = None) -> bytes:
    head = b"id: " + event_id.encode() + b"\n" if event_id is not None else b""
    return head + b"event: message\ndata: " + data + b"\n\n"


def prime(event_id: str) -> bytes:
    """The priming event of a resumable stream: its first id, no data."""
    return b"id: " + event_id.encode() + b"\ndata:\n\n"


def retry(retry_ms: int) -> bytes:
    """The ``retry`` field the client waits before resuming a stream whose connection ends."""
    return b"retry: " + str(max(0, int(retry_ms))).encode() + b"\n\n"


async def plain(send: ASGISend, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    head = [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def respond(send: ASGISend, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    head = [(b"content-type", JSON), (b"content-length", str(len(body)).encode()), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def deny(send: ASGISend, denial: Denial) -> None:
    """A refused request: its status, challenge and RFC 6750 error body."""
    body = dumps(denial.body())
    head = [*denial.headers(), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": denial.status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def error(send: ASGISend, status: int, rid: Any, exc: ProtocolError, *, null_id: bool = False) -> None:
    """``exc`` as an error response (``null_id``: an unread id written null, ``error_envelope``)."""
    await respond(send, status, dumps(error_envelope(rid, exc, null_id=null_id)), [])
