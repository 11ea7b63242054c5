"""The dispatcher: one decoded request -> the author's handler -> one encoded reply.

Modern requests (2026-07-28) are served statelessly through the revision's codec; an
``initialize`` turns the ``Connection`` (a stdio process or an HTTP session) into a legacy
session (``dual_era.DualEraSession``) that converts to and from the handler's types.
Transports call ``Dispatcher.handle`` with parsed JSON and a ``send`` for request-scoped
messages (progress, log, server->client requests on legacy sessions), and write the
returned ``Reply``.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import MISSING, BaseModel
from pydantic_core import to_json

from ..codec import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, is_request_id
from ..jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    Notification,
    ProtocolError,
    Request,
)
from .context import Context, Send
from .request_state import RequestStateSealer
from .subscriptions import SUBSCRIPTION_ID_KEY, Listener, Subscriptions

if TYPE_CHECKING:
    from .dual_era import DualEraSession
    from .handler import HandlerBase


# an embedded input request -> the client capability it needs
CAPABILITY_OF_INPUT: dict[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
RUNTIME_METHODS = ("server/discover", "subscriptions/listen")


def is_legacy_initialize(obj: Any) -> bool:
    """An ``initialize`` without the modern ``_meta`` envelope: a legacy client's handshake.

    One carrying ``_meta`` protocolVersion is a modern request for a removed method (-32601).
    """
    if not isinstance(obj, dict) or obj.get("method") != "initialize":
        return False
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return not (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta)


async def _discard(data: bytes) -> None:
    """A ``send`` for internal calls: nothing goes out."""


class Reply(NamedTuple):
    """What a transport writes back: ``body`` (None: nothing) and the error ``code`` if it is an error."""

    body: bytes | None
    code: int | None = None


NO_REPLY = Reply(None)


def error_reply(id: Any, error: ProtocolError) -> Reply:
    return Reply(to_json({"jsonrpc": "2.0", "id": id, "error": error.to_error_object()}), error.code)


def rejection_reply(rejected: Any) -> Reply:
    """The reply to a message the codec refused (a raised ``ProtocolError`` or a ``Rejected``)."""
    error = getattr(rejected, "error", rejected)
    if not getattr(rejected, "needs_reply", True):
        return Reply(None, error.code)
    reply = getattr(rejected, "reply", None)
    body = reply() if reply is not None else {"jsonrpc": "2.0", "id": None, "error": error.to_error_object()}
    return Reply(to_json(body), error.code)


class Connection:
    """One stdio process or one HTTP session: legacy state once ``initialize`` ran, in-flight requests."""

    __slots__ = ("inflight", "legacy", "session_id")

    def __init__(self, session_id: str | None = None) -> None:
        self.legacy: DualEraSession | None = None
        self.inflight: dict[Any, asyncio.Task[Any]] = {}
        self.session_id = session_id

    def cancel(self, params: Any) -> None:
        """``notifications/cancelled``: stop the request it names; unknown ids are ignored."""
        rid = params.get("requestId") if isinstance(params, dict) else getattr(params, "request_id", None)
        task = self.inflight.get(rid)
        if task is not None:
            task.cancel()


def input_required_check(result: Any, capabilities: Any) -> None:
    """Refuse (-32021) an input request the client did not declare a capability for."""
    requests = getattr(result, "input_requests", MISSING)
    if requests is MISSING or not requests:
        return
    missing: dict[str, Any] = {}
    for request in requests.values():
        cap = CAPABILITY_OF_INPUT.get(request.method)
        if cap is None:
            continue
        have = capabilities.get(cap) if isinstance(capabilities, dict) else getattr(capabilities, cap, MISSING)
        if have is None or have is MISSING:
            missing[cap] = {}
        elif cap == "elicitation" and getattr(request.params, "mode", None) == "url":
            url = have.get("url") if isinstance(have, dict) else getattr(have, "url", MISSING)
            if url is None or url is MISSING:
                missing[cap] = {"url": {}}
    if missing:
        raise ProtocolError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            f"the client did not declare {', '.join(sorted(missing))}",
            {"requiredCapabilities": missing},
        )


def internal_error(method: str) -> ProtocolError:
    """A handler raised: log the traceback to stderr, answer -32603 without any of it."""
    print(f"mcp server: the {method} handler raised:\n{traceback.format_exc()}", file=sys.stderr, end="")
    return ProtocolError(INTERNAL_ERROR, "Internal error")


class Dispatcher:
    """Routes requests of one server (a ``HandlerBase``) for every transport."""

    def __init__(self, handler: HandlerBase) -> None:
        self.handler = handler
        self.revision = handler.revision
        self.methods = handler.revision.methods
        self.modern = handler.era == "modern"
        self.sealer = RequestStateSealer(handler.request_state_key)
        self.subscriptions = Subscriptions()
        self.input_required = handler.revision.input_required
        self.codec: Any = None
        if self.modern:
            from ..codec_modern import ModernCodec

            self.codec = ModernCodec(
                handler.revision,
                "server",
                server_info=handler.server_info(),
                ttl_ms=handler.ttl_ms,
                cache_scope=handler.cache_scope,
            )
        self._implemented = {m: getattr(handler, s) for m, s in handler.handlers.items() if handler.implemented(m)}
        self._param_headers: dict[str, dict[str, str]] = {}

    def function(self, method: str) -> Any:
        """The author's handler of ``method``, or None when it is not implemented."""
        return self._implemented.get(method)

    # -- entry point ----------------------------------------------------------------------

    async def handle(self, obj: Any, send: Send, conn: Connection | None = None) -> Reply:
        """One parsed JSON-RPC message (or batch) -> the reply to write."""
        if conn is not None:
            if conn.legacy is not None:
                return await conn.legacy.handle(obj, send, conn)
            if is_legacy_initialize(obj):
                from .dual_era import DualEraSession

                conn.legacy = DualEraSession(self)
                return await conn.legacy.handle(obj, send, conn)
        if not self.modern:
            rid = obj.get("id") if isinstance(obj, dict) else None
            return error_reply(
                rid if is_request_id(rid) else None, ProtocolError(INVALID_REQUEST, "send initialize first")
            )
        return await self.handle_modern(obj, send, conn)

    async def run(self, obj: Any, send: Send, conn: Connection) -> Reply:
        """``handle`` a request as a cancellable in-flight request of ``conn``."""
        rid = obj.get("id") if isinstance(obj, dict) else None
        task = asyncio.current_task()
        if rid is None or task is None:
            return await self.handle(obj, send, conn)
        conn.inflight[rid] = task
        try:
            return await self.handle(obj, send, conn)
        except asyncio.CancelledError:
            return NO_REPLY  # a cancelled request gets no response
        finally:
            if conn.inflight.get(rid) is task:
                del conn.inflight[rid]

    # -- modern ---------------------------------------------------------------------------

    async def handle_modern(self, obj: Any, send: Send, conn: Connection | None) -> Reply:
        try:
            decoded = self.codec.decode_value(obj)
        except ProtocolError as exc:
            return rejection_reply(exc)
        if isinstance(decoded, Request):
            return await self.answer(decoded, send)
        if isinstance(decoded, Notification) and decoded.method == "notifications/cancelled" and conn is not None:
            conn.cancel(decoded.params)
        return NO_REPLY

    async def answer(self, request: Request, send: Send) -> Reply:
        method = request.method
        if method == "server/discover":
            return Reply(self.codec.dumps_result(request.id, method, self.discover_result()))
        if method == "subscriptions/listen":
            return await self.listen(request, send)
        fn = self._implemented.get(method)
        if fn is None:
            return error_reply(
                request.id, ProtocolError(METHOD_NOT_FOUND, f"{method!r} is not implemented", {"method": method})
            )
        meta = request.meta
        params = request.params
        try:
            state = getattr(params, "request_state", MISSING)
            if state is not MISSING:
                params = params.model_copy(update={"request_state": self.sealer.open(state)})
            level = meta.log_level
            token = meta.progress_token
            ctx = Context(
                request.id,
                method,
                send=send,
                meta=meta,
                protocol_version=meta.protocol_version,
                client_capabilities=meta.client_capabilities,
                era="modern",
                progress_token=None if token is MISSING else token,
                log_level=None if level is MISSING else level,
            )
            result = await self.run_handler(fn, params, ctx)
            if self.is_input_required(result):
                input_required_check(result, meta.client_capabilities)
                result = self.seal(result)
            return Reply(self.codec.dumps_result(request.id, method, result))
        except ProtocolError as error:
            return error_reply(request.id, error)
        except Exception:  # the author's bug: a -32603, never a crash
            return error_reply(request.id, internal_error(method))

    async def run_handler(self, fn: Any, params: Any, ctx: Any) -> Any:
        """Await an author's handler, within the server's ``handler_timeout`` when it has one."""
        limit = self.handler.handler_timeout
        if limit is None:
            return await fn(params, ctx)
        try:
            async with asyncio.timeout(limit):
                return await fn(params, ctx)
        except TimeoutError:
            raise ProtocolError(INTERNAL_ERROR, f"the handler did not answer within {limit:g} s") from None

    def is_input_required(self, result: Any) -> bool:
        if self.input_required is not None and isinstance(result, self.input_required):
            return True
        return isinstance(result, dict) and result.get("resultType") == "input_required"

    def seal(self, result: Any) -> Any:
        if isinstance(result, dict):
            state = result.get("requestState")
            return {**result, "requestState": self.sealer.seal(state)} if isinstance(state, str) else result
        state = getattr(result, "request_state", MISSING)
        if isinstance(state, str):
            return result.model_copy(update={"request_state": self.sealer.seal(state)})
        return result

    async def tool_param_headers(self, tool: str, meta: Any) -> dict[str, str]:
        """``x-mcp-header`` annotations of ``tool``'s top-level arguments: header suffix -> argument.

        Read from the author's ``list_tools`` (first page) when a tool is not known yet.
        """
        known = self._param_headers.get(tool)
        if known is not None:
            return known
        fn = self._implemented.get("tools/list")
        if fn is None:
            return {}
        spec = self.methods.request("tools/list")
        try:
            params = self.revision.validate(spec.params, {"_meta": meta}) if spec and spec.params else None
            ctx = Context(
                0,
                "tools/list",
                send=_discard,
                meta=getattr(params, "meta", None),
                protocol_version="",
                client_capabilities={},
            )
            listed = await fn(params, ctx)
        except Exception:
            return {}
        data = listed.model_dump(mode="json") if isinstance(listed, BaseModel) else dict(listed)
        for entry in data.get("tools", ()):
            properties = (entry.get("inputSchema") or {}).get("properties") or {}
            self._param_headers[entry.get("name")] = {
                p["x-mcp-header"]: arg for arg, p in properties.items() if isinstance(p, dict) and "x-mcp-header" in p
            }
        return self._param_headers.get(tool, {})

    def discover_result(self) -> dict[str, Any]:
        from .dual_era import LEGACY_VERSIONS

        result: dict[str, Any] = {
            "supportedVersions": [*self.codec.supported_versions, *LEGACY_VERSIONS],
            "capabilities": self.handler.capabilities(),
        }
        if self.handler.instructions:
            result["instructions"] = self.handler.instructions
        return result

    def honoured(self, wanted: Any) -> dict[str, Any]:
        """The part of a ``SubscriptionFilter`` this server can deliver."""
        caps = self.handler.capabilities()
        data = wanted.model_dump(mode="json") if isinstance(wanted, BaseModel) else dict(wanted)
        out: dict[str, Any] = {}
        for flag, cap in (
            ("toolsListChanged", "tools"),
            ("promptsListChanged", "prompts"),
            ("resourcesListChanged", "resources"),
        ):
            if data.get(flag) is True and cap in caps:
                out[flag] = True
        uris = data.get("resourceSubscriptions")
        if uris and "resources" in caps:
            out["resourceSubscriptions"] = list(uris)
        return out

    async def listen(self, request: Request, send: Send) -> Reply:
        """``subscriptions/listen``: acknowledge first, then deliver until the client cancels."""
        honoured = self.honoured(request.params.notifications)
        meta = {SUBSCRIPTION_ID_KEY: request.id}
        ack = {"notifications": honoured, "_meta": meta}
        await send(to_json({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": ack}))
        listener = Listener(request.id, honoured, send)
        self.subscriptions.listeners.add(listener)
        try:
            # until the client cancels (closes the stream, or notifications/cancelled on stdio)
            # or the server shuts down: then the request is answered, ending the stream gracefully
            await self.subscriptions.until_closed()
        finally:
            self.subscriptions.listeners.discard(listener)
        return Reply(self.codec.dumps_result(request.id, request.method, {"_meta": meta}))


__all__ = [
    "CLIENT_CAPABILITIES_KEY",
    "PROTOCOL_VERSION_KEY",
    "Connection",
    "Dispatcher",
    "Reply",
]
