"""Streamable HTTP as an ASGI app: ``POST /mcp`` with JSON or SSE replies, legacy sessions.

Modern requests (2026-07-28) are stateless: each POST carries one request whose headers
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) must match its body (-32020), so
any worker can answer any request and the app scales out behind a round-robin balancer.
An ``initialize`` POST opens a legacy session (``Mcp-Session-Id``) kept in this worker;
its server->client requests travel on the POST's SSE stream and their answers come back
as POSTs. A reply is plain JSON unless the handler sends something first (progress, log,
input requests), which turns it into an SSE stream; closing that stream cancels the request.
Host and Origin are checked against DNS rebinding; bodies over ``max_body`` bytes get 413.

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
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from pydantic_core import from_json

from ...codec import PROTOCOL_VERSION_KEY
from ...jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
    dumps,
    error_envelope,
    request_id,
)
from ..router import Connection, Reply, Router, is_legacy_initialize
from ..services.auth import Denial, Principal, ResourceServer

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
ASGISend = Callable[[Message], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
NAMED_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
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


def header_value(raw: str) -> str:
    """An ``Mcp-Name``/``Mcp-Param-*`` value, ``=?base64?...?=`` decoded."""
    if raw.startswith("=?base64?") and raw.endswith("?="):
        try:
            return base64.b64decode(raw[9:-2], validate=True).decode()
        except ValueError:
            raise ProtocolError(HEADER_MISMATCH, "malformed base64 header value") from None
    return raw


def header_text(value: Any) -> str:
    """A JSON argument as the header carries it: booleans lower-case, numbers in decimal."""
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def check_param_headers(args: dict[str, Any], annotated: dict[str, str], headers: dict[str, str]) -> None:
    """``Mcp-Param-*`` headers of ``x-mcp-header`` arguments must be present and match the body."""
    for suffix, arg in annotated.items():
        value = args.get(arg)
        if value is None:
            continue
        raw = headers.get("mcp-param-" + suffix.lower())
        if raw is None:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Param-{suffix} header is missing")
        got = header_value(raw.strip())
        if type(value) is int:
            ok = got.lstrip("-").isdigit() and int(got) == value
        else:
            ok = got == header_text(value)
        if not ok:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Param-{suffix} header does not match arguments.{arg}")


def check_headers(obj: Any, headers: dict[str, str]) -> None:
    """The 2026-07-28 request headers must be present and match the body (-32020)."""
    if not isinstance(obj, dict) or "method" not in obj:
        return
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or PROTOCOL_VERSION_KEY not in meta:
        return  # not a modern request: the codec refuses it on its own terms
    version = headers.get("mcp-protocol-version")
    if version is None or version.strip() != meta[PROTOCOL_VERSION_KEY]:
        raise ProtocolError(HEADER_MISMATCH, "MCP-Protocol-Version header does not match _meta protocolVersion")
    method = headers.get("mcp-method")
    if method is None or method.strip() != obj["method"]:
        raise ProtocolError(HEADER_MISMATCH, "Mcp-Method header does not match the body's method")
    key = NAMED_PARAM.get(obj["method"])
    if key is not None and isinstance(params, dict) and key in params:
        name = headers.get("mcp-name")
        if name is None or header_value(name.strip()) != params[key]:
            raise ProtocolError(HEADER_MISMATCH, f"Mcp-Name header does not match params.{key}")


class HttpApp:
    """The ASGI application of one server (its ``Router``).

    ``path`` is the MCP endpoint; ``allowed_hosts``/``allowed_origins`` are host names (any
    port) accepted in ``Host`` and ``Origin`` (default: loopback only); ``max_body`` caps
    the request body in bytes; ``auth`` protects the endpoint (see the module docstring).
    """

    def __init__(
        self,
        router: Router,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = LOOPBACK_HOSTS,
        allowed_origins: Iterable[str] | None = None,
        max_body: int = 4 * 1024 * 1024,
        auth: ResourceServer | None = None,
    ) -> None:
        self.router = router
        self.auth = auth
        self.metadata_paths = frozenset(auth.metadata_paths) if auth is not None else frozenset()
        self.path = path
        self.allowed_hosts = frozenset(h.lower() for h in allowed_hosts)
        self.allowed_origins = frozenset(h.lower() for h in (allowed_origins or self.allowed_hosts))
        self.max_body = max_body
        self.sessions: dict[str, Connection] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: ASGISend) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if scope["path"] in self.metadata_paths:
            await self.metadata(scope, send)
            return
        if scope["path"].rstrip("/") != self.path.rstrip("/"):
            await plain(send, 404, b"not found")
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        if not self.host_allowed(headers.get("host")):
            await plain(send, 421, b"invalid Host header")
            return
        if not self.origin_allowed(headers.get("origin")):
            await plain(send, 403, b"invalid Origin header")
            return
        method = scope["method"]
        if method == "POST":
            await self.post(headers, receive, send)
        elif method == "GET":
            await self.get(headers, receive, send)
        elif method == "DELETE":
            decision = await self.authorize(headers, None)
            if isinstance(decision, Denial):
                await deny(send, decision)
                return
            sid = headers.get("mcp-session-id", "")
            session = self.sessions.get(sid)
            if session is not None and session.belongs_to(decision):
                del self.sessions[sid]
                self.router.close(session)
                await plain(send, 200, b"")
            else:
                await plain(send, 404, b"")
        else:
            await plain(send, 405, b"method not allowed", [(b"allow", b"POST")])

    # -- checks ------------------------------------------------------------------------------

    async def authorize(self, headers: dict[str, str], message: Any) -> Principal | Denial | None:
        """The request's ``Principal`` (None on an unprotected server), or the ``Denial`` to send."""
        if self.auth is None:
            return None
        return await self.auth.check(headers.get("authorization"), message)

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
        if host is None:
            return False
        return hostname(host) in self.allowed_hosts

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None:
            return True  # not a browser
        rest = origin.partition("://")[2]
        return bool(rest) and hostname(rest) in self.allowed_origins

    # -- POST ------------------------------------------------------------------------------

    async def read_body(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return b""
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def post(self, headers: dict[str, str], receive: Receive, send: ASGISend) -> None:
        body = await self.read_body(headers, receive)
        if body is None:
            await plain(send, 413, b"request body too large")
            return
        try:
            obj = from_json(body, allow_inf_nan=False)
        except ValueError as exc:
            unreadable: ValueError | None = exc
            obj = None
        else:
            unreadable = None
        principal = await self.authorize(headers, obj)  # before anything reads the message for a handler
        if isinstance(principal, Denial):
            await deny(send, principal)
            return
        if unreadable is not None:
            await error(send, 400, None, ProtocolError(PARSE_ERROR, data={"detail": str(unreadable)}))
            return
        sid = headers.get("mcp-session-id")
        extra: list[tuple[bytes, bytes]] = []
        if is_legacy_initialize(obj):
            sid = secrets.token_hex(16)
            conn: Connection | None = Connection(sid, principal)
            self.sessions[sid] = conn  # type: ignore[assignment]
            extra.append((b"mcp-session-id", sid.encode()))
        elif sid:
            conn = self.sessions.get(sid)
            if conn is None or not conn.belongs_to(principal):
                await error(send, 404, None, ProtocolError(INVALID_REQUEST, "unknown or expired session"))
                return
        else:
            conn = None
            try:
                check_headers(obj, headers)
                if isinstance(obj, dict) and obj.get("method") == "tools/call" and isinstance(obj.get("params"), dict):
                    params = obj["params"]
                    args = params.get("arguments")
                    if isinstance(args, dict) and type(params.get("name")) is str:
                        name, meta = params["name"], params.get("_meta")
                        annotated = await self.router.tool_param_headers(name, meta, principal)
                        check_param_headers(args, annotated, headers)
            except ProtocolError as exc:
                await error(send, 400, request_id(obj), exc)
                return
        is_request = isinstance(obj, dict) and "id" in obj and "method" in obj
        if not is_request and not isinstance(obj, list):
            reply = await self.router.handle(obj, none_send, conn, principal)
            if reply.body is None:
                await plain(send, 202, b"")
            else:
                await respond(send, self.status(reply, conn), reply.body, extra)
            return
        await self.answer(obj, conn, receive, send, extra, principal)

    def status(self, reply: Reply, conn: Connection | None) -> int:
        if reply.code is None or conn is not None:
            return 200
        return STATUS_OF.get(reply.code, 200)

    async def answer(
        self,
        obj: Any,
        conn: Connection | None,
        receive: Receive,
        send: ASGISend,
        extra: list[tuple[bytes, bytes]],
        principal: Principal | None = None,
    ) -> None:
        """Run the request inline; JSON if it finishes silently, else an SSE stream of what it sends.

        The first message the handler sends (progress, a log, a server->client request on a
        legacy session) starts the stream; from then on a watcher cancels the request when the
        client closes the stream, which is the 2026-07-28 cancellation.
        """
        current = asyncio.current_task()
        watcher: asyncio.Task[Any] | None = None

        async def push(data: bytes) -> None:
            nonlocal watcher
            if watcher is None:
                await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + extra})
                watcher = asyncio.create_task(cancel_on_disconnect(receive, current))
            await send({"type": "http.response.body", "body": event(data), "more_body": True})

        try:
            if conn is not None:
                reply = await self.router.run(obj, push, conn, principal)
            else:
                reply = await self.router.handle(obj, push, None, principal)
        except asyncio.CancelledError:
            if watcher is None or not watcher.done():
                raise
            return  # the client went away: nothing more to send
        finally:
            if watcher is not None:
                watcher.cancel()
        if watcher is not None:
            tail = event(reply.body) if reply.body is not None else b""
            await send({"type": "http.response.body", "body": tail, "more_body": False})
        elif reply.body is None:
            await plain(send, 202, b"", extra)
        else:
            await respond(send, self.status(reply, conn), reply.body, extra)

    # -- GET: a legacy session's stream of unsolicited notifications -----------------------

    async def get(self, headers: dict[str, str], receive: Receive, send: ASGISend) -> None:
        principal = await self.authorize(headers, None)
        if isinstance(principal, Denial):
            await deny(send, principal)
            return
        conn = self.sessions.get(headers.get("mcp-session-id", ""))
        if conn is None or conn.legacy is None or not conn.belongs_to(principal):
            await plain(send, 405, b"method not allowed", [(b"allow", b"POST")])
            return
        queue: asyncio.Queue[bytes] = asyncio.Queue()

        async def push(data: bytes) -> None:
            queue.put_nowait(data)

        conn.legacy.notify = push
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send({"type": "http.response.body", "body": b": stream open\n\n", "more_body": True})
        watcher = asyncio.create_task(disconnected(receive))
        try:
            while True:
                getter = asyncio.create_task(queue.get())
                done, _ = await asyncio.wait((getter, watcher), return_when=asyncio.FIRST_COMPLETED)
                if watcher in done:
                    getter.cancel()
                    return
                await send({"type": "http.response.body", "body": event(getter.result()), "more_body": True})
        finally:
            watcher.cancel()
            if conn.legacy.notify is push:
                conn.legacy.notify = None


async def none_send(data: bytes) -> None:
    """Where request-scoped messages of a notification would go: nowhere."""


async def cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` once the client disconnects."""
    await disconnected(receive)
    if task is not None:
        task.cancel()


async def disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def hostname(host: str) -> str:
    host = host.strip().lower()
    if host.startswith("["):
        return host[: host.find("]") + 1]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def event(data: bytes) -> bytes:
    return b"event: message\ndata: " + data + b"\n\n"


async def plain(send: ASGISend, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain"), *(headers or [])],
        }
    )
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


async def error(send: ASGISend, status: int, rid: Any, exc: ProtocolError) -> None:
    body = dumps(error_envelope(rid, exc))
    await respond(send, status, body, [])
