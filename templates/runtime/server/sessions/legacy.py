"""Legacy sessions (2024-11-05 .. 2025-11-25): what ``initialize`` fixes for one stdio process or HTTP session.

``initialize`` negotiates the revision (the one the client requests when the server serves it,
otherwise the newest legacy revision it serves) and so the ``LegacyCodec`` that decodes every
later message of the session and encodes every reply; that revision's package is loaded then,
through the registry. Requests are converted to the handler's types (a modern handler's params
get the ``_meta`` envelope built from what ``initialize`` declared), results back to the
negotiated revision's shape, and an ``input_required`` result becomes real server->client
requests whose answers re-enter the handler as ``inputResponses``; ``ctx.elicit``/``sample``/
``list_roots`` send theirs at once (the ``Context``'s ``direct`` channel) and wait for the answer. ``ping``,
``logging/setLevel`` and ``resources/subscribe``/``unsubscribe`` are answered here.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import MISSING

from ...codec import PROTOCOL_VERSION_KEY, Codec, dump
from ...codec_legacy import LegacyCodec
from ...jsonrpc import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    Batch,
    ErrorResponse,
    Message,
    ProtocolError,
    Request,
    RequestId,
    ResourceNotFoundError,
    Response,
    dumps,
    is_request_id,
    notification_envelope,
    request_id,
)
from ...versions import VersionRegistry, negotiate
from ..kernel import NO_REPLY, Kernel, Reply, error_reply, internal_error, rejection_reply
from ..services import Context, Send, Subscriber
from ..services.capabilities import LOG_MESSAGE, PROGRESS, as_spoken, has_message, not_declared, undeclared
from ..services.principal import Principal
from .convert import Conversion

INITIALIZE = "initialize"
PING = "ping"
CANCELLED = "notifications/cancelled"
SUBSCRIBE = ("resources/subscribe", "resources/unsubscribe")
MAX_ROUNDS = 10  # input_required rounds driven for one request
INPUT_TIMEOUT = 300.0  # seconds a server->client request may take
CANCEL_WITHIN = 1.0  # seconds to send the cancellations of the requests no longer waited for

Cancel = Callable[[Any], None]
# runs one request of a batch as an in-flight request of the connection (``Router.track``)
Track = Callable[[Any, Callable[[], Awaitable[Reply]]], Awaitable[Reply]]


def is_legacy_initialize(obj: Any) -> bool:
    """An ``initialize`` request without the modern ``_meta`` envelope: a legacy client's handshake.

    One carrying ``_meta`` protocolVersion is a modern request for a removed method (-32601).
    """
    # (the method first, inline: every request of a session asks this)
    return type(obj) is dict and obj.get("method") == INITIALIZE and _legacy_request(obj, INITIALIZE)


def is_legacy_ping(obj: Any) -> bool:
    """A well-formed ``ping`` request without the modern ``_meta`` envelope: the one request a
    legacy client may send before its ``initialize`` is answered (lifecycle.mdx), answered with
    an empty result before any session exists."""
    return _legacy_request(obj, PING) and obj.get("jsonrpc") == "2.0" and request_id(obj) is not None


def _legacy_request(obj: Any, method: str) -> bool:
    if not isinstance(obj, dict) or obj.get("method") != method:
        return False
    params = obj.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return not (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta)


def too_long_a_batch(length: int, limit: int) -> ProtocolError:
    """The one error answering a batch of more messages than ``Limits.max_inflight``: as many
    requests as that are all in flight at once."""
    return ProtocolError(INVALID_REQUEST, f"a batch of {length} messages: this server takes at most {limit} in one")


def unanswerable(method: str) -> ProtocolError:
    """The error of a server->client request the client can no longer answer."""
    return ProtocolError(INTERNAL_ERROR, f"the client's input ended: {method} cannot be answered")


def progress_token(raw: Any) -> str | int | None:
    """The ``progressToken`` a legacy request's ``_meta`` carries (revisions before 2025-11-25 do
    not type ``_meta``, so it is read from the message)."""
    params = raw.get("params") if isinstance(raw, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if type(token) is str or type(token) is int else None


class LegacySession(Subscriber):
    """One stdio process or HTTP session after ``initialize``, and its requests in flight to the client.

    ``served`` are the legacy revisions the server serves; ``target`` is the codec of the
    handler's revision, which requests are converted to.
    """

    def sends(self, method: str) -> bool:
        """A notification the negotiated revision has, for a server to send."""
        return self.codec is not None and has_message(self.codec.methods, "notification", method)

    def __init__(self, kernel: Kernel, registry: VersionRegistry, served: Sequence[str], target: Codec) -> None:
        self.kernel = kernel
        self.registry = registry
        self.served = tuple(served)
        self.target = target
        self.version: str | None = None
        self.codec: LegacyCodec | None = None
        self.null_ids = False  # the revision writes an unreadable request id as null (Revision.null_error_ids)
        self.progress = self.logs = False  # the revision has notifications/progress, notifications/message
        self.sse_priming = False  # its HTTP SSE streams open with a priming event (RevisionEntry)
        self.conversion: Conversion | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        self.log_level = "debug"
        self.subscribed: set[str] = set()
        self._subscription_changes: dict[str, bool] = {}  # since the last save: uri -> subscribed
        self.notify: Send | None = None
        self.session_id: str | None = None  # the HTTP session's id, once it is kept in the store
        self.changed = False  # the state a shared store keeps changed since it was saved
        self._pending: dict[RequestId, tuple[str, asyncio.Future[Any]]] = {}
        self.asking = asyncio.Event()  # set while a server->client request awaits the client's answer
        self.input_over = False  # the client's input ended: it can answer nothing more
        self._next = 0
        # a session shared between workers: answers to requests another worker's copy sent go there
        # (``Router``), and this copy's request ids are its own (``mcpgen-<tag>-<n>``)
        self.forward: Callable[[Any], Awaitable[None]] | None = None
        self._tag = secrets.token_hex(4)

    def _negotiated(self, version: str, codec: LegacyCodec) -> None:
        """The revision ``initialize`` (or a restored state) fixed, and what follows from it."""
        self.version, self.codec, self.conversion = version, codec, Conversion(codec, self.target)
        self.null_ids = codec.revision.null_error_ids
        self.progress = self.sends(PROGRESS)  # looked up once, not per request
        self.logs = self.sends(LOG_MESSAGE)
        self.sse_priming = self.registry.entry(version).sse_priming

    def __repr__(self) -> str:
        return f"LegacySession(version={self.version!r})"

    # -- initialize -----------------------------------------------------------------------

    async def initialize(self, obj: Any) -> Reply:
        """The handshake (again, when a client re-initializes): negotiate, decode, answer.

        On a refused ``initialize`` nothing of the session changes.
        """
        params = obj.get("params") if isinstance(obj, dict) else None
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        version = negotiate(self.served, requested=requested)
        if version is None:  # the router opens no session without a legacy revision to serve
            raise ValueError("a legacy session needs a legacy revision to serve")
        codec = LegacyCodec(self.registry.revision(version), "server")
        try:
            request = codec.decode_value(obj)
        except ProtocolError as error:
            return rejection_reply(error, null_id=codec.revision.null_error_ids)
        if not isinstance(request, Request):
            return NO_REPLY
        self._negotiated(version, codec)
        self.client_capabilities = dump(request.params.capabilities) or {}
        info = dump(request.params.client_info)
        self.client_info = info if isinstance(info, dict) else None
        self.changed = True
        app = self.kernel.app
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": as_spoken(app.capabilities(), app.registry, version),
            "serverInfo": app.server_info(),
        }
        if app.instructions:
            result["instructions"] = app.instructions
        try:
            return Reply(codec.dumps_result(request.id, INITIALIZE, result))
        except ProtocolError as error:
            return error_reply(request.id, error)

    # -- what a shared session store keeps ----------------------------------------------

    def state(self) -> dict[str, Any] | None:
        """What ``initialize`` and later requests fixed, JSON-ready; None before ``initialize``."""
        if self.version is None:
            return None
        return {
            "version": self.version,
            "capabilities": self.client_capabilities,
            "client_info": self.client_info,
            "log_level": self.log_level,
            "subscribed": sorted(self.subscribed),
        }

    def restore(self, state: dict[str, Any]) -> bool:
        """Take on a stored ``state`` (from this worker or another); False when its revision is
        not one this server serves or the state is malformed."""
        version = state.get("version")
        if not isinstance(version, str) or version not in self.served:
            return False
        if version != self.version:
            codec = LegacyCodec(self.registry.revision(version), "server")
            self._negotiated(version, codec)
        capabilities, info = state.get("capabilities"), state.get("client_info")
        self.client_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.client_info = info if isinstance(info, dict) else None
        level = state.get("log_level")
        self.log_level = level if isinstance(level, str) else "debug"
        subscribed = state.get("subscribed")
        self.subscribed = {uri for uri in subscribed if isinstance(uri, str)} if isinstance(subscribed, list) else set()
        for uri, on in self._subscription_changes.items():  # this worker's, not saved yet
            if on:
                self.subscribed.add(uri)
            else:
                self.subscribed.discard(uri)
        return True

    def subscription_changes(self) -> dict[str, bool]:
        """The subscriptions made (True) and ended (False) since this was last asked (a shared store
        saves them as a set of their own, so concurrent requests each keep theirs)."""
        changes, self._subscription_changes = self._subscription_changes, {}
        return changes

    def unsaved_subscriptions(self, changes: dict[str, bool]) -> None:
        """``changes`` were not saved: kept for the next save (newer changes of a URI win)."""
        self._subscription_changes = {**changes, **self._subscription_changes}

    # -- every later message --------------------------------------------------------------

    async def handle(
        self,
        obj: Any,
        send: Send,
        cancel: Cancel | None = None,
        principal: Principal | None = None,
        track: Track | None = None,
    ) -> Reply:
        """One parsed message (or batch) of the session -> the reply to write; ``principal``:
        who the request's token speaks for, on a protected server; ``track`` runs each request of
        a batch as an in-flight request of the connection (counted, its id unique, cancellable)."""
        if is_legacy_initialize(obj) or self.codec is None:
            return await self.initialize(obj)
        if type(obj) is list and self.codec.revision.batching:
            limit = self.kernel.app.limits.max_inflight
            if len(obj) > limit:  # refused before any item is decoded (one takes about 100 times its bytes)
                return rejection_reply(too_long_a_batch(len(obj), limit), null_id=self.null_ids)
        pending = {rid: method for rid, (method, _) in self._pending.items()} if self._pending else None
        try:
            decoded = self.codec.decode_value(obj, pending=pending)
        except ProtocolError as error:
            self.refused(error)
            return rejection_reply(error, null_id=self.null_ids)
        if isinstance(decoded, Request):  # (not through dispatch: one coroutine less per call)
            return await self.answer(decoded, obj, send, principal)
        if not isinstance(decoded, Batch):
            return await self.dispatch(decoded, obj, send, cancel, principal)
        bodies = []
        for raw, item in zip(obj, decoded.items, strict=True):
            if isinstance(item, Request) and item.method == INITIALIZE:  # 2025-03-26 lifecycle: never batched
                reply = error_reply(item.id, ProtocolError(INVALID_REQUEST, "initialize must not be part of a batch"))
            elif isinstance(item, ProtocolError):
                self.refused(item)
                reply = rejection_reply(item, null_id=self.null_ids)
            elif isinstance(item, Request) and track is not None:
                reply = await track(item.id, functools.partial(self.answer, item, raw, send, principal))
            else:
                reply = await self.dispatch(item, raw, send, cancel, principal)
            if reply.body is not None:
                bodies.append(reply.body)
        return Reply(b"[" + b",".join(bodies) + b"]") if bodies else NO_REPLY

    async def dispatch(
        self, message: Message, raw: Any, send: Send, cancel: Cancel | None, principal: Principal | None = None
    ) -> Reply:
        if isinstance(message, Request):
            return await self.answer(message, raw, send, principal)
        if isinstance(message, Response | ErrorResponse) and self.forward is not None:
            if message.id is not None and message.id not in self._pending:  # another worker's copy asked
                await self.forward(raw)
                return NO_REPLY
        if isinstance(message, Response):
            self.resolve(message.id, message.result)
        elif isinstance(message, ErrorResponse):
            if message.id is not None:
                self.resolve(message.id, error=message.error)
        elif message.method == CANCELLED and cancel is not None:
            cancel(message.params)
        return NO_REPLY

    async def answer(self, request: Request, raw: Any, send: Send, principal: Principal | None = None) -> Reply:
        method = request.method
        try:
            if method == "ping":
                return self.ok(request, {})
            if method == "logging/setLevel":
                self.log_level = request.params.level
                self.changed = True
                return self.ok(request, {})
            if method in SUBSCRIBE and "resources" in self.kernel.app.capabilities():
                uri = request.params.uri
                if method == SUBSCRIBE[0]:
                    self.subscribed.add(uri)
                else:
                    self.subscribed.discard(uri)
                if self.session_id is not None:  # an HTTP session's store saves them (stdio keeps none)
                    self._subscription_changes[uri] = method == SUBSCRIBE[0]
                self.changed = True
                return self.ok(request, {})
            return await self.call(request, raw, send, principal)
        except ResourceNotFoundError as error:  # the code is the session's revision's
            code = self.registry.entry(self.version).resource_not_found if self.version else error.code
            return error_reply(request.id, ResourceNotFoundError(error.uri, code))
        except ProtocolError as error:
            return error_reply(request.id, error)
        except Exception:  # a bug of ours must not leave the client waiting
            return error_reply(request.id, internal_error(method))

    def ok(self, request: Request, result: dict[str, Any]) -> Reply:
        assert self.codec is not None
        return Reply(self.codec.dumps_result(request.id, request.method, result))

    async def call(self, request: Request, raw: Any, send: Send, principal: Principal | None = None) -> Reply:
        """A request for the author's handler, converted; ``input_required`` rounds driven here."""
        conversion = self.conversion
        assert conversion is not None and self.version is not None
        method = request.method
        if conversion.same:
            params = request.params
        else:
            params = conversion.params(
                method, raw.get("params"), capabilities=self.client_capabilities, client_info=self.client_info
            )
        ctx = Context(  # positional: Context's order
            request.id,
            method,
            send,
            self.version,
            self.client_capabilities,
            getattr(params, "meta", None),
            self.client_info,
            "legacy",
            progress_token(raw) if self.progress else None,  # a revision without it: never sent
            self.log_level if self.logs else None,
            principal,
            lambda method, params: self.request(method, params, send),
        )
        for _ in range(MAX_ROUNDS):
            result = await self.kernel.call(method, params, ctx, self.client_capabilities)
            if not self.kernel.is_input_required(result):
                return Reply(conversion.encode_result(request.id, method, result))
            responses = await self.ask(result, send)
            state = (
                result.get("requestState") if isinstance(result, dict) else getattr(result, "request_state", MISSING)
            )
            update = {"input_responses": responses, "request_state": state if isinstance(state, str) else MISSING}
            params = params.model_copy(update=update)
        raise ProtocolError(INTERNAL_ERROR, f"no result after {MAX_ROUNDS} rounds of input")

    # -- server->client requests ----------------------------------------------------------

    async def ask(self, result: Any, send: Send) -> dict[str, Any]:
        """Send each input request as a server->client request; their answers, by key, in the handler's types."""
        conversion = self.conversion
        assert conversion is not None
        requests = (
            result.get("inputRequests") if isinstance(result, dict) else getattr(result, "input_requests", MISSING)
        )
        if requests is MISSING or not requests:
            return {}
        loop = asyncio.get_running_loop()
        asked: dict[str, tuple[str, asyncio.Future[Any]]] = {}
        sent: dict[RequestId, asyncio.Future[Any]] = {}
        if self.forward is not None:  # the answer may come to another worker, which forwards it here
            await self.kernel.services.subscriptions.attach()
        try:
            for key, request in requests.items():
                method = request["method"] if isinstance(request, dict) else request.method
                if self.input_over:
                    raise unanswerable(method)
                params = request.get("params") if isinstance(request, dict) else getattr(request, "params", None)
                self._next += 1
                rid = f"mcpgen-{self._next}" if self.forward is None else f"mcpgen-{self._tag}-{self._next}"
                future: asyncio.Future[Any] = loop.create_future()
                self._pending[rid] = (method, future)
                self.asking.set()
                asked[key] = (method, future)
                await send(conversion.encode_request(rid, method, None if params is MISSING else params))
                sent[rid] = future
            async with asyncio.timeout(INPUT_TIMEOUT):
                answers = {key: (method, await future) for key, (method, future) in asked.items()}
        except BaseException as exc:  # timed out, or the request asking was cancelled, or failed
            # lifecycle.mdx (Timeouts): the sender SHOULD issue a cancellation notification for a
            # request it stops waiting for; best effort, the answer is not waited for any more
            # (a future awaited when the wait ended is cancelled with it: not answered either)
            unanswered = [sent_id for sent_id, future in sent.items() if future.cancelled() or not future.done()]
            if unanswered:
                reason = "timed out" if isinstance(exc, TimeoutError) else "no longer needed"
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(CANCEL_WITHIN):
                        for sent_id in unanswered:
                            cancel = {"requestId": sent_id, "reason": reason}
                            await send(dumps(notification_envelope(CANCELLED, cancel)))
            raise
        finally:
            futures = {future for _, future in asked.values()}
            for done in [rid for rid, (_, future) in self._pending.items() if future in futures]:
                del self._pending[done]
            if not self._pending:
                self.asking.clear()
        return {key: conversion.answer(method, answer) for key, (method, answer) in answers.items()}

    async def request(self, method: str, params: dict[str, Any], send: Send) -> Any:
        """One server->client request (``method`` with ``params``, the handler's types as JSON); its answer."""
        missing = undeclared(method, params, self.client_capabilities, self.kernel.app.revision.methods)
        if missing:
            raise not_declared(missing)
        answers = await self.ask({"inputRequests": {"input": {"method": method, "params": params}}}, send)
        return answers["input"]

    def end_input(self) -> None:
        """The client's input ended for good (a file read to its end): the requests awaiting its
        answer fail now, and later ones at once, instead of each waiting ``INPUT_TIMEOUT``."""
        self.input_over = True
        for method, future in self._pending.values():
            if not future.done():
                future.set_exception(unanswerable(method))

    def awaits(self, rid: Any) -> bool:
        """``rid`` names a request of this copy still waiting for the client's answer."""
        entry = self._pending.get(rid) if is_request_id(rid) else None
        return entry is not None and not entry[1].done()

    def resolve(self, rid: RequestId, result: Any = None, *, error: ProtocolError | None = None) -> None:
        """The client's answer to one of our requests; unknown ids are ignored."""
        entry = self._pending.get(rid)
        if entry is None or entry[1].done():
            return
        if error is not None:
            entry[1].set_exception(error)
        else:
            entry[1].set_result(result)

    def refused(self, error: ProtocolError) -> None:
        """A refused answer to one of our requests (its result failed validation) fails that request."""
        if error.kind == "response" and error.id is not None:
            self.resolve(error.id, error=error)
