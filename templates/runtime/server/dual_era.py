"""Legacy semantics for one stdio process or HTTP session, behind one modern handler.

``initialize`` fixes the revision (2024-11-05 .. 2025-11-25) and the client's capabilities
for the session. Requests are converted to the handler's types (the modern ``_meta``
envelope is synthesised from the session), results back to the legacy shape
(``resultType``, ``ttlMs``, ``cacheScope`` and ``serverInfo`` dropped), and an
``input_required`` result becomes real server->client requests (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) whose answers re-enter the handler as
``inputResponses``. Legacy-only requests (``ping``, ``logging/setLevel``,
``resources/subscribe``/``unsubscribe``) are answered here.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import MISSING, BaseModel, ValidationError
from pydantic_core import to_json

from ... import BATCHING_VERSIONS, KNOWN_VERSIONS
from ..codec import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    invalid,
    is_request_id,
)
from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, ProtocolError
from .context import LOG_LEVELS, Context, Send
from .dispatch import (
    NO_REPLY,
    RUNTIME_METHODS,
    Connection,
    Reply,
    error_reply,
    input_required_check,
    internal_error,
)
from .subscriptions import Subscriber

if TYPE_CHECKING:
    from .dispatch import Dispatcher

# The legacy revisions of the schema lock, newest first (a modern server negotiates them too).
LEGACY_VERSIONS = tuple(sorted((v for v, era in KNOWN_VERSIONS.items() if era == "legacy"), reverse=True))
MAX_ROUNDS = 10  # input_required rounds driven for one legacy request
INPUT_TIMEOUT = 300.0  # seconds a server->client request may take
MODERN_ONLY_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope")


def legacy_result(result: Any) -> dict[str, Any]:
    """A handler's result in the legacy shape."""
    data: dict[str, Any] = result.model_dump(mode="json") if isinstance(result, BaseModel) else dict(result)
    for key in MODERN_ONLY_RESULT_KEYS:
        data.pop(key, None)
    meta = data.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        meta = {k: v for k, v in meta.items() if k != SERVER_INFO_KEY}
        if meta:
            data["_meta"] = meta
        else:
            del data["_meta"]
    return data


class DualEraSession(Subscriber):
    """The negotiated state of one legacy session and the requests it has in flight to the client."""

    def __init__(self, dispatcher: Dispatcher, notify: Send | None = None) -> None:
        self.dispatcher = dispatcher
        self.version: str | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: dict[str, Any] | None = None
        self.log_level = "debug"
        self.subscribed: set[str] = set()
        self.notify = notify
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._next = 0

    @property
    def supported(self) -> tuple[str, ...]:
        if self.dispatcher.modern:
            return LEGACY_VERSIONS
        return (self.dispatcher.revision.version,)

    async def handle(self, obj: Any, send: Send, conn: Connection) -> Reply:
        if isinstance(obj, list):  # a JSON-RPC batch (2025-03-26)
            if self.version not in BATCHING_VERSIONS or not obj:
                return error_reply(None, ProtocolError(INVALID_REQUEST, "batches are not accepted here"))
            bodies = [r.body for r in [await self.handle(item, send, conn) for item in obj] if r.body is not None]
            return Reply(b"[" + b",".join(bodies) + b"]") if bodies else NO_REPLY
        if not isinstance(obj, dict) or obj.get("jsonrpc") != "2.0":
            return error_reply(None, ProtocolError(INVALID_REQUEST, "not a JSON-RPC 2.0 message"))
        method = obj.get("method")
        if method is None:
            self.resolve(obj)
            return NO_REPLY
        if "id" not in obj:
            if method == "notifications/cancelled":
                conn.cancel(obj.get("params"))
            return NO_REPLY
        rid = obj["id"]
        if not is_request_id(rid) or type(method) is not str:
            return error_reply(None, ProtocolError(INVALID_REQUEST, "bad id or method"))
        params = obj.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error_reply(rid, ProtocolError(INVALID_PARAMS, "params must be an object"))
        try:
            if method == "initialize":
                return self.initialize(rid, params)
            if self.version is None:
                raise ProtocolError(INVALID_REQUEST, "send initialize first")
            if method == "ping":
                return self.ok(rid, {})
            if method == "logging/setLevel":
                level = params.get("level")
                if level not in LOG_LEVELS:
                    raise ProtocolError(INVALID_PARAMS, f"unknown log level {level!r}")
                self.log_level = level
                return self.ok(rid, {})
            if (
                method in ("resources/subscribe", "resources/unsubscribe")
                and "resources" in self.dispatcher.handler.capabilities()
            ):
                uri = params.get("uri")
                if type(uri) is not str:
                    raise ProtocolError(INVALID_PARAMS, "uri must be a string")
                if method == "resources/subscribe":
                    self.subscribed.add(uri)
                else:
                    self.subscribed.discard(uri)
                return self.ok(rid, {})
            return await self.call(rid, method, params, send)
        except ProtocolError as error:
            return error_reply(rid, error)
        except Exception:
            return error_reply(rid, internal_error(method))

    @staticmethod
    def ok(rid: Any, result: dict[str, Any]) -> Reply:
        return Reply(to_json({"jsonrpc": "2.0", "id": rid, "result": result}))

    def initialize(self, rid: Any, params: dict[str, Any]) -> Reply:
        requested = params.get("protocolVersion")
        version = requested if requested in self.supported else self.supported[0]
        caps = params.get("capabilities")
        self.version = version
        self.client_capabilities = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        self.client_info = info if isinstance(info, dict) else None
        handler = self.dispatcher.handler
        self.dispatcher.subscriptions.sessions.add(self)
        result: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": handler.capabilities(),
            "serverInfo": handler.server_info(),
        }
        if handler.instructions:
            result["instructions"] = handler.instructions
        return self.ok(rid, result)

    def typed_params(self, spec: Any, params: dict[str, Any]) -> Any:
        """Legacy params -> the handler's params type (modern: with a synthesised ``_meta``)."""
        if self.dispatcher.modern:
            meta: dict[str, Any] = {
                PROTOCOL_VERSION_KEY: self.dispatcher.revision.version,
                CLIENT_CAPABILITIES_KEY: self.client_capabilities,
            }
            if self.client_info is not None:
                meta[CLIENT_INFO_KEY] = self.client_info
            given = params.get("_meta")
            if isinstance(given, dict):
                meta.update(given)
            params = {**params, "_meta": meta}
        if spec.params is None:
            return params
        try:
            return self.dispatcher.revision.validate(spec.params, params)
        except ValidationError as exc:
            raise invalid("params", exc) from None

    async def call(self, rid: Any, method: str, raw: dict[str, Any], send: Send) -> Reply:
        dispatcher = self.dispatcher
        spec = dispatcher.methods.request(method)
        fn = dispatcher.function(method)
        if spec is None or fn is None or method in RUNTIME_METHODS:
            raise ProtocolError(METHOD_NOT_FOUND, f"{method!r} is not implemented", {"method": method})
        params = self.typed_params(spec, raw)
        given = raw.get("_meta")
        token = given.get("progressToken") if isinstance(given, dict) else None
        ctx = Context(
            rid,
            method,
            send=send,
            meta=getattr(params, "meta", None),
            protocol_version=self.version or "",
            client_capabilities=self.client_capabilities,
            client_info=self.client_info,
            era="legacy",
            progress_token=token,
            log_level=self.log_level,
        )
        for _ in range(MAX_ROUNDS):
            result = await dispatcher.run_handler(fn, params, ctx)
            if not dispatcher.is_input_required(result):
                return self.ok(rid, legacy_result(result))
            input_required_check(result, self.client_capabilities)
            responses = await self.ask(result, send)
            update: dict[str, Any] = {"input_responses": responses}
            state = (
                result.get("requestState") if isinstance(result, dict) else getattr(result, "request_state", MISSING)
            )
            update["request_state"] = state if isinstance(state, str) else MISSING
            params = params.model_copy(update=update)
        raise ProtocolError(INTERNAL_ERROR, f"no result after {MAX_ROUNDS} rounds of input")

    async def ask(self, result: Any, send: Send) -> dict[str, Any]:
        """Send each input request as a server->client request; their answers, by key."""
        requests = (
            result.get("inputRequests") if isinstance(result, dict) else getattr(result, "input_requests", MISSING)
        )
        if requests is MISSING or not requests:
            return {}
        futures: dict[str, asyncio.Future[Any]] = {}
        loop = asyncio.get_running_loop()
        for key, request in requests.items():
            data = request.model_dump(mode="json") if isinstance(request, BaseModel) else dict(request)
            self._next += 1
            rid = f"mcpgen-{self._next}"
            future: asyncio.Future[Any] = loop.create_future()
            self._pending[rid] = future
            futures[key] = future
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": data["method"]}
            if data.get("params") is not None:
                message["params"] = data["params"]
            await send(to_json(message))
        answers: dict[str, Any] = {}
        try:
            async with asyncio.timeout(INPUT_TIMEOUT):
                for key, future in futures.items():
                    answers[key] = await future
        finally:
            for rid in [r for r, f in self._pending.items() if f in futures.values()]:
                del self._pending[rid]
        methods = self.dispatcher.methods
        typed: dict[str, Any] = {}
        for key, answer in answers.items():
            request = requests[key]
            method = request["method"] if isinstance(request, dict) else request.method
            spec = methods.request(method)
            try:
                typed[key] = self.dispatcher.revision.validate(spec.result, answer) if spec and spec.result else answer
            except ValidationError as exc:
                raise invalid("input response", exc) from None
        return typed

    def resolve(self, obj: dict[str, Any]) -> None:
        """A client's response to one of our requests; unknown ids are ignored."""
        future = self._pending.get(obj.get("id"))  # type: ignore[arg-type]
        if future is None or future.done():
            return
        if "error" in obj:
            error = obj["error"] if isinstance(obj["error"], dict) else {}
            future.set_exception(
                ProtocolError(error.get("code", INTERNAL_ERROR), error.get("message"), error.get("data"))
            )
        else:
            future.set_result(obj.get("result"))
