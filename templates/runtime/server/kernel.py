"""The kernel: run one handler of the author's server, whatever session the request came through.

``Kernel.call`` finds the handler of a method (-32601 when the author did not implement it),
opens a sealed ``requestState`` (bound to its request, ``request_binding``, and on a protected
server to the request's principal; the runtime's own replay state, carrying the answers of
earlier rounds, is taken off the params and handed to the ``Context``), awaits the handler
within ``handler_timeout``, turns an unanswered ``ctx.elicit``/``sample``/``list_roots``
(``InputRequired``) into an ``input_required`` result and any other exception into a
``ProtocolError`` (an author's bug becomes -32603 with the traceback only in the server's log),
checks that an ``input_required`` result asks only for what the client declared (-32021) and
seals its ``requestState``. Params arrive, and results leave, in the handler's own types; the
sessions convert to and from the revision a request was sent in. Typed tools (argument
validation, tool errors) are the authoring layer's, above the handler base.

``Reply`` is what every session hands back to a transport: the bytes to write, if any, and the
error code when it is an error.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar, Literal, NamedTuple, Protocol

from pydantic import MISSING

from ..codec import INPUT_REQUIRED, RESULT_TYPE, Revision, dump
from ..jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ProtocolError,
    RequestId,
    dumps,
    error_envelope,
)
from ..method_table import MethodTable
from ..versions import VersionRegistry
from .services import Context, InputRequired, Limits, ReplayState, Services, cancelled_from_outside
from .services.capabilities import not_declared, undeclared
from .services.inputs import is_replay_state

Handler = Callable[[Any, Context], Awaitable[Any]]


class Application(Protocol):
    """What the runtime needs from an author's server (a generated ``Server`` subclass)."""

    revision: ClassVar[Revision]
    registry: ClassVar[VersionRegistry]
    handlers: ClassVar[Mapping[str, str]]
    instructions: ClassVar[str | None]
    ttl_ms: ClassVar[int]
    cache_scope: ClassVar[Literal["public", "private"]]
    request_state_key: ClassVar[bytes | str | None]
    request_state_ttl: ClassVar[float]
    handler_timeout: ClassVar[float | None]
    limits: ClassVar[Limits]

    def implemented(self, method: str) -> bool: ...
    def server_info(self) -> dict[str, Any]: ...
    def capabilities(self) -> dict[str, Any]: ...


class Reply(NamedTuple):
    """What a transport writes back: ``body`` (None: nothing) and the error ``code`` if it is an
    error; ``refused``: the error of a notification or response refused without a reply (a
    transport that answers every message, HTTP, still tells it)."""

    body: bytes | None
    code: int | None = None
    refused: ProtocolError | None = None


NO_REPLY = Reply(None)


def error_reply(id: RequestId | None, error: ProtocolError, *, null_id: bool = False) -> Reply:
    return Reply(dumps(error_envelope(id, error, null_id=null_id)), error.code)


def first_leaf(group: BaseExceptionGroup[Any]) -> Any:
    """The first exception in ``group`` that is not itself a group."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def rejection_reply(error: ProtocolError, *, null_id: bool = False) -> Reply:
    """The reply to a message a codec refused: an error response when the peer expects one
    (``null_id``: its revision writes an unreadable id as null)."""
    if not error.needs_reply:
        return Reply(None, error.code, error)
    return Reply(dumps(error.reply(null_id=null_id)), error.code)


class _Nowhere:
    """A text file that drops what is written to it."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def stderr() -> Any:
    """Where the runtime's diagnostics go: ``sys.stderr``, or nowhere when the process was started
    without one (``print(file=None)`` writes to stdout: a stdio server's protocol stream)."""
    return sys.stderr if sys.stderr is not None else _Nowhere()


def internal_error(method: str) -> ProtocolError:
    """A handler raised: log the traceback to stderr, answer -32603 without any of it."""
    print(f"mcp server: the {method} handler raised:\n{traceback.format_exc()}", file=stderr(), end="")
    return ProtocolError(INTERNAL_ERROR, "Internal error")


def check_input_capabilities(result: Any, capabilities: Any, methods: MethodTable) -> None:
    """Refuse (-32021) an ``input_required`` result asking for what the client did not declare
    (``services.capabilities``: a capability, an elicitation mode, sampling with tools), the
    capability each request needs read from the server's table ``methods``."""
    requests = result.get("inputRequests") if isinstance(result, dict) else getattr(result, "input_requests", MISSING)
    if requests is MISSING or not requests:
        return
    missing: dict[str, Any] = {}
    for request in requests.values():
        method = request.get("method") if isinstance(request, dict) else request.method
        params = request.get("params") if isinstance(request, dict) else request.params
        lacking = undeclared(method, params, capabilities, methods) if isinstance(method, str) else None
        for cap, parts in (lacking or {}).items():
            missing[cap] = {**missing.get(cap, {}), **parts}
    if missing:
        raise not_declared(missing)


def request_binding(method: str, params: Any, methods: MethodTable) -> str:
    """What a ``requestState`` is bound to: the method, the tool, prompt or resource it names
    (its ``target_param`` in the table ``methods``), and a digest of its arguments (canonical
    JSON: key order does not matter)."""
    spec = methods.request(method)
    key = spec.target_param if spec is not None else None
    target = _field(params, key) if key is not None else None
    arguments = _field(params, "arguments") or {}  # none sent and none at all are the same request
    text = json.dumps(dump(arguments), sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{method}\x00{target if isinstance(target, str) else ''}\x00{digest}"


def _field(params: Any, name: str) -> Any:
    """A params field by wire name, from a model or a plain dict; None when it is not set."""
    if isinstance(params, Mapping):
        return params.get(name)
    fields = getattr(type(params), "model_fields", {})
    for attribute, info in fields.items():
        if (info.alias or attribute) == name:
            value = getattr(params, attribute, None)
            return None if value is MISSING else value
    return None


class Kernel:
    """Runs the author's handlers of one server (an ``Application``) with its ``Services``."""

    def __init__(self, app: Application, services: Services | None = None) -> None:
        self.app = app
        self.services = services if services is not None else Services()
        self.revision = app.revision
        self._handlers: dict[str, Handler] = {
            method: getattr(app, stub) for method, stub in app.handlers.items() if app.implemented(method)
        }
        # result classes that are never an ``input_required`` result (checked once per class)
        self._complete: set[type] = set()

    def handler(self, method: str) -> Handler | None:
        """The author's handler of ``method``, or None when it is not implemented."""
        return self._handlers.get(method)

    async def call(self, method: str, params: Any, ctx: Context, capabilities: Any) -> Any:
        """Run the handler of ``method`` on ``params`` (the handler's types); raises only ``ProtocolError``.

        ``capabilities`` are the client's (the request's ``_meta``, or a legacy ``initialize``).
        """
        handler = self._handlers.get(method)
        if handler is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"{method!r} is not implemented", {"method": method})
        try:
            replay = None
            state = getattr(params, "request_state", MISSING)
            if isinstance(state, str):
                owner = ctx.principal.identity if ctx.principal is not None else None
                opened = self.services.request_state.open(
                    state, principal=owner, request=request_binding(method, params, self.app.revision.methods)
                )
                if is_replay_state(opened):  # ours: the answers of earlier rounds, not the handler's
                    replay = ReplayState.decode(opened)
                    params = params.model_copy(update={"request_state": MISSING})
                else:
                    params = params.model_copy(update={"request_state": opened})
            ctx.bind(params, replay)
            try:
                if self.app.handler_timeout is None:
                    result = await handler(params, ctx)
                else:
                    result = await self.run(handler, params, ctx)
            except InputRequired as asked:
                self.check_may_ask(method)
                result = asked.round.result()
            except BaseExceptionGroup as group:  # questions asked in an asyncio.TaskGroup's tasks
                asked_all, rest = group.split(InputRequired)
                if asked_all is None:
                    raise  # (an ExceptionGroup is the author's bug below; any other, the process's)
                if rest is not None:  # questions beside a failure: the failure, the author's bug
                    raise internal_error(method) from None
                self.check_may_ask(method)
                result = first_leaf(asked_all).round.result()  # one round: every question of the request
            finally:  # answered, failed or cancelled: what a task it left running sends is dropped
                ctx.finished = True
            if type(result) not in self._complete and self.is_input_required(result):
                self.check_may_ask(method)
                check_input_capabilities(result, capabilities, self.app.revision.methods)
                owner = ctx.principal.identity if ctx.principal is not None else None
                result = self.seal(result, owner, request_binding(method, params, self.app.revision.methods))
            return result
        except ProtocolError:
            raise
        except asyncio.CancelledError:
            if cancelled_from_outside():  # no answer: the request was cancelled, or the server stops
                raise
            raise internal_error(method) from None  # raised by the handler itself: an answer is owed
        except Exception:  # the author's bug: a -32603, never a crash
            raise internal_error(method) from None

    async def run(self, handler: Handler, params: Any, ctx: Context) -> Any:
        """Await a handler, within the server's ``handler_timeout`` when it has one."""
        limit = self.app.handler_timeout
        if limit is None:
            return await handler(params, ctx)
        try:
            async with asyncio.timeout(limit):
                return await handler(params, ctx)
        except TimeoutError:
            raise ProtocolError(INTERNAL_ERROR, f"the handler did not answer within {limit:g} s") from None

    def check_may_ask(self, method: str) -> None:
        """A handler asked the client for input (or returned an ``input_required`` result): an
        author's bug, -32603, unless ``method`` is one whose result may be that (tools/call,
        prompts/get, resources/read; none in a legacy revision)."""
        spec = self.revision.methods.request(method)
        if self.revision.input_required is None or spec is None or not spec.mrtr:
            raise ProtocolError(
                INTERNAL_ERROR, f"the {method} handler asked the client for input, which {method} cannot"
            )

    def is_input_required(self, result: Any) -> bool:
        """``result`` is an ``input_required`` result (the interim model, or a dict saying so)."""
        cls = type(result)
        if cls in self._complete:
            return False
        if self.revision.is_input_required(result):
            return True
        if isinstance(result, dict):
            return result.get(RESULT_TYPE) == INPUT_REQUIRED
        # Not the interim model's, now or ever: a class is an instance of it only by subclassing
        # it, and a class that subclasses it was built after it was imported.
        self._complete.add(cls)
        return False

    def seal(self, result: Any, owner: str | None = None, request: str = "") -> Any:
        """The result with its ``requestState`` sealed for ``owner`` (the identity of the request's
        principal) and ``request`` (``request_binding``), so a forged one, or one presented by
        someone else, on another request or late, is refused."""
        sealer = self.services.request_state

        def sealed(state: str) -> str:
            return sealer.seal(state, principal=owner, request=request)

        if isinstance(result, dict):
            state = result.get("requestState")
            return {**result, "requestState": sealed(state)} if isinstance(state, str) else result
        state = getattr(result, "request_state", MISSING)
        if isinstance(state, str):
            return result.model_copy(update={"request_state": sealed(state)})
        return result
