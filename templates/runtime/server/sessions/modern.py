"""Modern requests (2026-07-28 and later): stateless, each one decoded on its own.

Every request names its revision in ``_meta``; the session decodes it with that revision's
codec when the server serves it (the handler's own, or another modern revision of the registry,
loaded on first use and converted to and from the handler's types), and otherwise lets the
handler's codec refuse it with -32022, whose ``data.supported`` lists every revision the server
serves, the same list ``server/discover`` answers. ``server/discover`` and
``subscriptions/listen`` are answered here; every other request goes to the kernel.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from pydantic import MISSING, BaseModel

from ...codec import PROTOCOL_VERSION_KEY, Revision, dump
from ...codec_modern import ModernCodec
from ...jsonrpc import Notification, ProtocolError, Request, dumps
from ...param_headers import ToolHeaders, reachable
from ...versions import negotiate
from ..kernel import NO_REPLY, Kernel, Reply, error_reply, internal_error, rejection_reply
from ..services import Context, Listener, Send
from ..services.bus import Change
from ..services.capabilities import LOG_MESSAGE, PROGRESS, as_spoken, declared, has_message
from ..services.principal import Principal
from ..services.subscriptions import SUBSCRIPTION_ID_KEY
from .convert import Conversion

CANCELLED = "notifications/cancelled"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
TOOLS_CHANGED = "notifications/tools/list_changed"  # forgets the tools' x-mcp-header annotations read
MAX_TOOL_PAGES = 100  # of the author's tools/list read for x-mcp-header annotations (a cursor that never ends)
RUNTIME_METHODS = frozenset({"server/discover", "subscriptions/listen"})  # answered here, not by a handler


def requested_version(obj: Any) -> str | None:
    """The ``protocolVersion`` a modern message names in ``params._meta``, None when it names none."""
    params = obj.get("params") if isinstance(obj, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    return version if type(version) is str else None


def is_modern(obj: Any) -> bool:
    """A message naming its revision in ``params._meta``: a modern request (or notification),
    served statelessly whatever came before it on its connection (versioning.mdx: a legacy
    ``initialize`` selects legacy semantics only for the requests without that ``_meta``)."""
    params = obj.get("params") if isinstance(obj, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


async def _discard(data: bytes) -> None:
    """A ``send`` for internal calls: nothing goes out."""


class ModernSession:
    """The modern requests of one server; ``served`` are all the revisions it serves, newest first."""

    def __init__(self, kernel: Kernel, served: Sequence[str]) -> None:
        app = kernel.app
        self.kernel = kernel
        self.registry = app.registry
        self.served = tuple(served)
        self.modern = tuple(v for v in self.served if self.registry.era(v) == "modern")
        self.codec = self._codec(app.revision)
        self._codecs: dict[str, ModernCodec] = {self.codec.version: self.codec}
        self._conversions: dict[str, Conversion] = {}
        self._param_headers: dict[str, ToolHeaders] = {}  # x-mcp-header annotations read, by tool
        self._listed_for: set[str | None] = set()  # callers whose whole list_tools was read since the last change
        self._tools_generation = 0  # tool list changes seen

    def _codec(self, revision: Revision) -> ModernCodec:
        app = self.kernel.app
        return ModernCodec(
            revision,
            "server",
            supported_versions=self.served,
            server_info=app.server_info(),
            ttl_ms=app.ttl_ms,
            cache_scope=app.cache_scope,
        )

    def codec_for(self, version: str | None) -> ModernCodec:
        """The codec of the revision a request names when the server serves it; else the
        handler's, which refuses the request (-32022, or what is missing from ``_meta``)."""
        codec = self._codecs.get(version) if version is not None else None
        if codec is not None:
            return codec
        if version is None or negotiate(self.modern, requested=version) != version:
            return self.codec
        codec = self._codecs[version] = self._codec(self.registry.revision(version))
        return codec

    def conversion(self, codec: ModernCodec) -> Conversion:
        conversion = self._conversions.get(codec.version)
        if conversion is None:
            conversion = self._conversions[codec.version] = Conversion(codec, self.codec)
        return conversion

    # -- entry point ----------------------------------------------------------------------

    async def handle(self, obj: Any, send: Send, cancel: Any = None, principal: Principal | None = None) -> Reply:
        """One parsed message -> the reply; ``cancel`` is called with ``notifications/cancelled`` params;
        ``principal``: who the request's token speaks for, on a protected server."""
        codec = self.codec_for(requested_version(obj))
        try:
            request = codec.decode_value(obj)
        except ProtocolError as error:
            return rejection_reply(error)
        if not isinstance(request, Request):
            if isinstance(request, Notification) and request.method == CANCELLED and cancel is not None:
                cancel(request.params)
            return NO_REPLY
        method = request.method
        if method in RUNTIME_METHODS:
            return await self.answer(request, codec, send, cancel is not None)
        # a request for the author's handler (inline: one coroutine less per call)
        meta = request.meta
        conversion = self.conversion(codec)
        try:
            params = request.params if conversion.same else conversion.params(method, obj.get("params"))
            # absent from a revision's meta (one without logging or progress): not asked for
            level, token = getattr(meta, "log_level", MISSING), getattr(meta, "progress_token", MISSING)
            if level is not MISSING and not has_message(codec.methods, "notification", LOG_MESSAGE):
                level = MISSING
            if token is not MISSING and not has_message(codec.methods, "notification", PROGRESS):
                token = MISSING
            ctx = Context(  # positional: Context's order
                request.id,
                method,
                send,
                meta.protocol_version,
                meta.client_capabilities,
                getattr(params, "meta", meta),
                None,
                "modern",
                None if token is MISSING else token,
                None if level is MISSING else level,
                principal,
            )
            result = await self.kernel.call(method, params, ctx, meta.client_capabilities)
            return Reply(conversion.encode_result(request.id, method, result))
        except ProtocolError as error:
            return error_reply(request.id, error)
        except Exception:  # a bug of ours must not leave the client waiting (as the legacy session)
            return error_reply(request.id, internal_error(method))

    async def answer(self, request: Request, codec: ModernCodec, send: Send, by_notification: bool = False) -> Reply:
        """A request the runtime answers itself (``RUNTIME_METHODS``); ``by_notification``: the
        transport cancels with ``notifications/cancelled`` (stdio), not by closing a stream."""
        if request.method == "server/discover":
            return Reply(codec.dumps_result(request.id, request.method, self.discover_result(codec)))
        return await self.listen(request, codec, send, by_notification)

    # -- answered by the runtime ----------------------------------------------------------

    def discover_result(self, codec: ModernCodec) -> dict[str, Any]:
        """The ``server/discover`` result, capabilities as the request's revision has them."""
        app = self.kernel.app
        capabilities = as_spoken(app.capabilities(), app.registry, codec.revision.version)
        result: dict[str, Any] = {"supportedVersions": list(self.served), "capabilities": capabilities}
        if app.instructions:
            result["instructions"] = app.instructions
        return result

    def honoured(self, wanted: Any, codec: ModernCodec) -> dict[str, Any]:
        """The part of a ``SubscriptionFilter`` this server can deliver: each member of the
        request's revision's filter (``RevisionEntry.subscription_filter``, read from the schema)
        whose notification a flag the server declares in that revision promises (``listChanged``
        of tools, prompts, resources; ``subscribe`` of resources), as the client asked for it (a
        flag set, a list of URIs)."""
        app = self.kernel.app
        version = codec.revision.version
        caps = as_spoken(app.capabilities(), app.registry, version)
        promised = {
            message
            for name, cap in app.registry.server_capabilities(version).items()
            if (found := declared(caps, name)) is not None
            for flag, message in cap.flags.items()
            if declared(found, flag) is True
        }
        data = dump(wanted) if isinstance(wanted, BaseModel) else dict(wanted)
        out: dict[str, Any] = {}
        for name, member in app.registry.entry(version).subscription_filter.items():
            got = member.accepted(data.get(name))
            if member.method in promised and got:
                out[name] = list(got) if isinstance(got, list) else True
        return out

    async def listen(self, request: Request, codec: ModernCodec, send: Send, by_notification: bool = False) -> Reply:
        """``subscriptions/listen``: acknowledge first, then deliver until the client cancels.

        When the server ends it (shutting down), the request is answered (subscriptions.mdx,
        graceful closure); on stdio a ``notifications/cancelled`` naming it comes first
        (cancellation.mdx: a server tears a subscription down that way, and for nothing else).
        Not over HTTP: cancellation.mdx's MUST names no transport, but the schema's
        ``CancelledNotification`` has the server send it on stdio only, and streamable-http.mdx
        uses the notification on stdio only (closing the stream is the signal there)."""
        honoured = self.honoured(request.params.notifications, codec)
        meta = {SUBSCRIPTION_ID_KEY: request.id}
        subscriptions = self.kernel.services.subscriptions
        await subscriptions.attach()  # changes raised on any worker reach this one from here on
        ack = codec.encode_notification(ACKNOWLEDGED, {"notifications": honoured, "_meta": meta})
        await send(dumps(ack))
        members = self.kernel.app.registry.entry(codec.revision.version).subscription_filter
        listener = Listener(request.id, honoured, send, members)
        subscriptions.listeners.add(listener)
        writer = asyncio.ensure_future(listener.write())  # this stream's sends: nobody else waits on them
        closing = asyncio.ensure_future(subscriptions.until_closed())
        overflow = asyncio.ensure_future(listener.overflow.wait())
        try:
            # until the client cancels (closes the stream, or notifications/cancelled on stdio),
            # stops reading (its backlog overflows) or the server shuts down: then the request is
            # answered, ending the stream gracefully
            await asyncio.wait((writer, closing, overflow), return_when=asyncio.FIRST_COMPLETED)
            if writer.done() and not writer.cancelled():
                writer.exception()  # a send failed: the stream is gone
            elif closing.done() and not overflow.done():
                writer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await writer
                await listener.flush()  # what was queued before the shutdown goes first
        finally:
            subscriptions.listeners.discard(listener)
            for task in (writer, closing, overflow):
                task.cancel()
        if by_notification:
            params = {"requestId": request.id, "reason": "the server is shutting down", "_meta": meta}
            await send(dumps(codec.encode_notification(CANCELLED, params)))
        return Reply(codec.dumps_result(request.id, request.method, {"_meta": meta}))

    def known_param_headers(self, tool: str) -> ToolHeaders | None:
        """``tool_param_headers`` of a tool already read from ``list_tools``; None otherwise."""
        return self._param_headers.get(tool)

    async def tool_param_headers(self, tool: str, meta: Any, principal: Principal | None = None) -> ToolHeaders:
        """The ``x-mcp-header`` annotations of ``tool`` (``param_headers.reachable``: path and name),
        read from the author's ``list_tools``, page after page until the tool is found.

        What is read is kept until the tool list changes (a ``notifications/tools/list_changed``
        published on any worker: ``Subscriptions.watchers``), a read that a change overtook is
        not kept, and once every page was read for a caller (by principal: a list may differ by
        caller) a tool not listed to it is known to have none."""
        known = self._param_headers.get(tool)
        if known is not None:
            return known
        who = principal.identity if principal is not None else None
        if who in self._listed_for:  # a list may differ by caller: complete for this one
            return ()
        handler = self.kernel.handler("tools/list")
        if handler is None:
            return ()
        spec = self.codec.methods.request("tools/list")
        revision = self.codec.revision
        read: dict[str, ToolHeaders] = {}
        cursor: Any = None
        complete = True  # every page read (or MAX_TOOL_PAGES of them: a tool past those is not checked)
        keep = True
        subscriptions = self.kernel.services.subscriptions
        if self._forget_param_headers not in subscriptions.watchers:
            try:
                await subscriptions.attach()  # changes raised on other workers reach this one too
                subscriptions.watchers.append(self._forget_param_headers)
            except Exception:
                keep = False  # changes could go unseen: read, check, keep nothing
        try:
            generation = self._tools_generation
            for _ in range(MAX_TOOL_PAGES):
                data: dict[str, Any] = {"_meta": meta} if cursor is None else {"_meta": meta, "cursor": cursor}
                params = revision.validate(spec.params, data) if spec and spec.params else None
                ctx = Context(
                    0,
                    "tools/list",
                    send=_discard,
                    meta=getattr(params, "meta", None),
                    protocol_version="",
                    client_capabilities={},
                    principal=principal,
                )
                listed = await handler(params, ctx)
                page = dump(listed) if isinstance(listed, BaseModel) else dict(listed)
                for entry in page.get("tools", ()):
                    if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                        read[entry["name"]] = reachable(entry.get("inputSchema"))
                following = page.get("nextCursor")
                if not isinstance(following, str) or following == cursor:  # the end (or a cursor going nowhere)
                    break
                if tool in read:
                    complete = False  # found before the end: other tools may still be unread
                    break
                cursor = following
        except Exception:
            return ()
        if keep and generation == self._tools_generation:  # no change overtook the read
            self._param_headers.update(read)
            if complete:
                self._listed_for.add(who)
        return read.get(tool, ())

    def _forget_param_headers(self, change: Change) -> None:
        if change.method == TOOLS_CHANGED:
            self._param_headers.clear()
            self._listed_for.clear()
            self._tools_generation += 1
