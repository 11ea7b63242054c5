"""The client session: request ids, pending requests, timeouts, cancellation, progress, routing.

Era-independent: it encodes and decodes through the revision's codec and leaves the era's
rules (HTTP headers, how a request is cancelled, where pushed notifications go) to the
hooks that ``ModernClientSession`` and ``LegacyClientSession`` (``modern.py``, ``legacy.py``) fill in.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..codec import DEFAULT_MAX_MESSAGE_SIZE, Codec, dump, shortened
from ..jsonrpc import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    Batch,
    ErrorResponse,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    leading_id,
)
from ..lines import HEAD
from ..method_table import wire_names
from .errors import InvalidAnswer, RequestTimeout, ServerError, TransportError
from .transport import JSONObject, Transport

if TYPE_CHECKING:
    from ..method_table import MethodTable

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[Any], Awaitable[None] | None]
"""Called with each ``notifications/progress`` params (typed) for the request, in order, one at a time."""
PROGRESS_BACKLOG = 1024  # notifications a slow progress callback may fall behind; the oldest go first
HANDLERS_AT_ONCE = 16  # the caller's handlers of one method of the server's requests (sampling...) running at once
ANSWERING_BACKLOG = 1024  # the server's requests waiting or being answered; past it, one is dropped, logged
LISTEN_BACKLOG = 10000  # notifications a listener may fall behind; past it, its oldest is dropped, logged
ERROR_MESSAGE_LIMIT = 16 * 1024  # characters of a server's error message a ServerError keeps
CANCEL_GRACE = 0.25  # s a timed-out or cancelled request waits for its notifications/cancelled to go out
Handler = Callable[[Any], Awaitable[Any]]
"""Answers a server's request: typed params in, a result (model or dict) out."""
LogCallback = Callable[[Any], Awaitable[None] | None]
"""Called with each ``notifications/message`` params (typed: ``level``, ``logger``, ``data``)."""
LOG_TURN = "\x00log"  # the log callback's turn key beside the progress tokens (never a token of ours)
NOTE_TURN = "\x00note"  # the notification callback's
# the turns of the session's callbacks (not a request's), by the name the caller gave each: their
# notifications are counted (``_turns_through``)
SHARED_TURNS = {LOG_TURN: "on_log", NOTE_TURN: "on_notification"}
NotificationCallback = Callable[[str, Any], Awaitable[None] | None]

CLOSED = object()


# what a client declares of the capability a handler of a server's request implies (its
# ``MethodSpec.client_capability``; one not here: ``{}``), before the revision leaves out members
# it lacks; and the members a request without the param that tells needs (the revision's
# ``client_capability_members`` ``when_absent``: ``elicitation.form``)
DECLARED: dict[str, JSONObject] = {"roots": {"listChanged": False}}


@dataclass
class ClientOptions:
    """What the client says about itself and how it answers the server.

    ``handlers`` map a server->client method (``elicitation/create``,
    ``sampling/createMessage``, ``roots/list``) to a callback; the client advertises the
    matching capabilities. In 2026-07-28 they fulfil MRTR input requests; on legacy
    sessions they answer the server's own requests.
    """

    client_info: Mapping[str, Any] = field(default_factory=lambda: {"name": "mcpgen-client", "version": "0.1.0"})
    handlers: Mapping[str, Handler] = field(default_factory=dict)
    capabilities: Mapping[str, Any] | None = None  # overrides what the handlers imply
    timeout: float | None = 60.0  # default per-request timeout (seconds); None waits forever
    max_input_rounds: int = 10  # MRTR rounds before giving up
    cached_results: int = 256  # fresh results a modern client keeps (client/cache.py); 0: none
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE  # bytes of one message the client takes at most
    on_log: LogCallback | None = None  # the server's notifications/message, one at a time, in order
    # every notification of the server (method, params), one at a time, in order, after the
    # session's own handling: one a newer revision adds, request-scoped or not, too
    on_notification: NotificationCallback | None = None
    log_level: str | None = None  # the least severe level wanted (2026-07-28: every request's _meta)

    def client_capabilities(self, methods: MethodTable) -> JSONObject:
        """The capabilities this client declares: ``capabilities`` as given, else one per handler
        of a server's request, in ``methods`` (the revision spoken) only where that revision has
        the request: elicitation declared to a 2024-11-05 server, which has no
        ``elicitation/create``, told it to ask for what the client then refused (-32601)."""
        if self.capabilities is not None:
            return dict(self.capabilities)
        caps: JSONObject = {}
        initialize = methods.request("initialize")
        for spec in methods:
            name = spec.client_capability
            if name is not None and spec.name in self.handlers:
                # the members the revision's ClientCapabilities has (elicitation.form came with
                # 2025-11-25); a modern revision has no initialize: nothing is left out there
                parts = wire_names(initialize.params, "capabilities", name) if initialize is not None else None
                default: JSONObject = {
                    m.name: {} for m in spec.client_capability_members if m.when_absent and m.available
                }
                declared = {**default, **DECLARED.get(name, {})}
                caps[name] = {k: v for k, v in declared.items() if parts is None or k in parts}
        return caps


@dataclass
class _Pending:
    method: str
    future: asyncio.Future[Any]
    progress_token: str | None = None
    meanwhile: str | None = None  # what the server sent that no request could be told from (_unmatched)
    # per shared turn, the notifications for it received before the answer (``_settle``)
    turns_before: dict[str, int] | None = None


class ClientSession:
    """Requests over one transport with one codec. ``start`` it, then ``request``/``notify``."""

    # the era's rule: a server's request this client refuses gets an error response (legacy), or
    # none (2026-07-28, where servers send no requests and a client MUST NOT write responses)
    answers_refused_requests: ClassVar[bool] = True
    # the era's rule: a stdio server that exited is started again on the next request (2026-07-28,
    # stateless: stdio.mdx, a client SHOULD restart it), or the session is over (legacy: its
    # initialize and everything after it went with the process)
    restarts_an_exited_server: ClassVar[bool] = False

    def __init__(self, codec: Codec, transport: Transport, options: ClientOptions | None = None) -> None:
        self.codec = codec
        self.transport = transport
        self.options = options or ClientOptions()
        self._ids = itertools.count(1)
        self._pending: dict[RequestId, _Pending] = {}
        self._progress: dict[str, ProgressCallback] = {}
        self._progressing: dict[str, collections.deque[Any]] = {}  # token -> params its callback has yet to see
        self._progress_runs: dict[str, asyncio.Task[None]] = {}  # token -> the task handing them over
        # per shared turn (``on_log``, ``on_notification``), notifications received and handed to
        # the callback (or dropped behind a slow one) so far; a call waits for those received
        # before its answer (``_turns_through``)
        self._received: dict[str, int] = dict.fromkeys(SHARED_TURNS, 0)
        self._handed: dict[str, int] = dict.fromkeys(SHARED_TURNS, 0)
        self._turn_waiters: list[tuple[str, int, asyncio.Future[None]]] = []
        on_notification = self.options.on_notification
        self._on_note: ProgressCallback | None = (
            None if on_notification is None else lambda note: on_notification(note.method, note.params)
        )
        self._routes: dict[RequestId, asyncio.Queue[Any]] = {}  # subscription id -> its queue
        # unrouted notifications, each listener with what it takes (None: everything)
        self._listeners: dict[asyncio.Queue[Any], Callable[[Any], bool] | None] = {}
        self._behind = 0  # notifications dropped for listeners LISTEN_BACKLOG behind
        self._tasks: set[asyncio.Task[None]] = set()
        self._telling: set[asyncio.Task[None]] = set()  # cancellations being told to the server (_cancel_soon)
        self._answering: dict[RequestId, asyncio.Task[None]] = {}  # the server's requests being answered
        self._answers_in_flight = 0  # those, counted (a server may reuse an id)
        self._handling = 0  # the server's requests whose handler (the caller's callback) runs now
        self._handled_for = 0.0  # seconds some handler ran, summed up to the last time none ran
        self._handling_since = 0.0  # when the current run of handlers began (while _handling)
        self._no_handlers = asyncio.Event()  # set while no handler runs
        self._no_handlers.set()
        self._dropped = 0  # the server's requests dropped past ANSWERING_BACKLOG
        self._handlers_at_once: dict[str, asyncio.Semaphore] = {}  # per method of the server's requests
        self.failure: TransportError | None = None
        self._closed = False
        self._restarting = asyncio.Lock()

    # -- era hooks ---------------------------------------------------------------------------

    def headers_for(self, message: JSONObject) -> dict[str, str]:
        """HTTP headers the era puts on a message (ignored by stdio)."""
        return {}

    def sends_cancelled(self) -> bool:
        """Cancel with ``notifications/cancelled`` (else closing the request's stream cancels it)."""
        return True

    def route(self, notification: Notification) -> RequestId | None:
        """The subscription a pushed notification belongs to, if the era tags them."""
        return None

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        await self.transport.start(self)

    @property
    def closed(self) -> bool:
        """``close`` was called: every request fails from now on (none is answered from a cache)."""
        return self._closed

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            if self._telling:  # a cancellation just made: sent before the channel goes (a stateless
                # HTTP server is told only so), within the grace a timed-out request gives it
                await asyncio.wait(set(self._telling), timeout=CANCEL_GRACE)
        finally:  # (close cancelled meanwhile: the channel is closed all the same)
            for task in list(self._tasks):
                task.cancel()
            try:
                await self.transport.close()
            finally:  # requests waiting are failed, whatever closing the transport met
                self._fail_all(TransportError("the session is closed"))

    # -- sending -----------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    async def begin(
        self,
        method: str,
        params: JSONObject | None,
        *,
        on_progress: ProgressCallback | None = None,
        rid: RequestId | None = None,
    ) -> tuple[RequestId, asyncio.Future[Any]]:
        """Send a request without waiting; its future resolves with the typed result."""
        if self._closed:  # (it said the server process had exited, or httpx's own words)
            raise TransportError(f"{method}: the client is closed")
        if self.failure is not None:
            await self._restart_or_raise(self.failure)
        rid = self.next_id() if rid is None else rid
        token = None
        if on_progress is not None:
            token = f"progress-{rid}"
            params = dict(params or {})
            meta = dict(params.get("_meta") or {})
            meta["progressToken"] = token
            params["_meta"] = meta
            self._progress[token] = on_progress
        message = self.codec.encode_request(rid, method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[rid] = _Pending(method, future, token)
        try:
            await self.transport.send(message, headers=self.headers_for(message))
        except BaseException as exc:
            self.forget(rid)
            if future.done() and not future.cancelled():  # failed meanwhile too (the reader saw the exit):
                future.exception()  # this raise tells it, so asyncio does not log it as never retrieved
            if isinstance(exc, asyncio.CancelledError):
                # given up (a timeout, the caller) while it was written: its bytes may reach the
                # server (a pipe's buffer took them), so it is cancelled behind them, whichever
                # caller began it (request, a listen)
                await self._cancel_soon(rid, "given up while it was sent", being_sent=method)
            raise
        return rid, future

    async def wait(
        self, rid: RequestId, future: asyncio.Future[Any], timeout: float | None, limit: float | None = None
    ) -> Any:
        """Await a begun request, then the progress callback's turns for what the server sent
        before its answer: the caller never sees the answer before the progress that preceded it
        (a client review: an awaiting callback got 1, 2, 3 after the call had returned)."""
        pending = self._pending.get(rid)
        token = pending.progress_token if pending is not None else None
        loop = asyncio.get_running_loop()
        started = loop.time()

        def left() -> float | None:
            return None if timeout is None else max(0.0, timeout - (loop.time() - started))

        result = await self._awaited(rid, future, timeout, limit)
        run = self._progress_runs.get(token) if token is not None else None
        if run is not None:  # within what is left of the request's time (a callback that never
            # ends, or waits on the caller, would hold the call for ever: a review of the diff);
            # past it, or when the caller gives up, the callback goes on, not cut short
            await asyncio.wait({run}, timeout=left())
        if pending is not None and pending.turns_before:  # the same for ``on_log``, ``on_notification``
            for turn, count in pending.turns_before.items():
                if self._handed[turn] < count:
                    await self._turns_through(turn, count, left())
        return result

    async def _turns_through(self, turn: str, count: int, timeout: float | None) -> None:
        """Wait (``timeout`` s at most) until the callback of ``turn`` has had the first ``count``
        notifications of its kind: those a call's answer came after are seen before it returns,
        as progress is (the answer resolved the call at once, and a slow ``on_log`` had them
        after). Those dropped behind a slow callback count as had."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (turn, count, waiter)
        self._turn_waiters.append(entry)
        try:
            await asyncio.wait({waiter}, timeout=timeout)
        finally:
            if not waiter.done():
                waiter.cancel()
                self._turn_waiters.remove(entry)

    def _handed_over(self, turn: str, count: int) -> None:
        """``count`` more notifications had by the callback of ``turn`` (or dropped): the calls
        waiting for them go on."""
        self._handed[turn] += count
        still = []
        for entry in self._turn_waiters:
            waited, target, waiter = entry
            if waited == turn and target <= self._handed[turn]:
                if not waiter.done():
                    waiter.set_result(None)
            else:
                still.append(entry)
        self._turn_waiters[:] = still

    async def _awaited(
        self, rid: RequestId, future: asyncio.Future[Any], timeout: float | None, limit: float | None = None
    ) -> Any:
        """Await a begun request; on timeout or caller cancellation the request is cancelled.
        ``limit``: the whole request's timeout, when part of it went on sending (the message).
        While the transport authorizes (a user signing in, as long as that takes) the time does
        not run out: the request gets its whole time again once the authorization is done. While
        the caller's handlers answer requests of the server (a user filling in an elicitation
        form, a slow sampling call: legacy sessions) the clock stops: the time they ran is added
        (a client review: a legacy call was cancelled while its user answered; a ``ping`` runs no
        handler, so a server pinging meanwhile adds nothing)."""
        first = timeout
        try:
            while True:
                begun = self.transport.authorizations()
                handled = self.handled_time()
                scope = asyncio.timeout(timeout)  # not wait_for: on 3.11 it can lose a caller's cancellation
                try:
                    async with scope:
                        return await asyncio.shield(future)
                except TimeoutError:
                    if not scope.expired():
                        raise  # the request's own failure (a transport's timeout), not this wait's
                    # an authorization under way, or one that took part of this time and ended
                    authorized = self.transport.authorizing() or self.transport.authorizations() != begun
                    if not future.done() and authorized:
                        await self.transport.authorized()
                        continue
                    if not future.done():
                        await self._no_handlers.wait()  # the server waits on this client meanwhile
                        paused = self.handled_time() - handled
                        if paused > 0:
                            timeout = paused  # the time the handlers took, given back
                            continue
                if future.done() and not future.cancelled():
                    return future.result()  # it came as the time ran out: the answer stands
                pending = self._pending.get(rid)
                meanwhile = f" (meanwhile {pending.meanwhile})" if pending is not None and pending.meanwhile else ""
                await self._cancel_soon(rid, "timeout")
                shown = first if limit is None else limit
                raise RequestTimeout(f"no answer to request {rid!r} within {shown} s{meanwhile}") from None
        except asyncio.CancelledError:
            await self._cancel_soon(rid, "cancelled by the caller")
            raise
        finally:
            self.forget(rid)

    async def request(
        self,
        method: str,
        params: JSONObject | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send a request and await its typed result; a JSON-RPC error raises ``ServerError``.
        The timeout covers sending too (a server that stops reading cannot hold it)."""
        limit = self.options.timeout if timeout is None else timeout
        loop = asyncio.get_running_loop()
        started = loop.time()
        rid: RequestId = self.next_id()
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                rid, future = await self.begin(method, params, on_progress=on_progress, rid=rid)
        except TimeoutError:
            if not scope.expired():
                raise
            # (begin told the server, behind the bytes that may be on their way)
            raise RequestTimeout(f"no answer to request {rid!r} within {limit} s (it was still being sent)") from None
        left = None if limit is None else max(0.0, limit - (loop.time() - started))
        return await self.wait(rid, future, left, limit)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification, within the session's timeout (a server that never takes it
        cannot hold the caller: ``RequestTimeout``)."""
        if self._closed:
            raise TransportError(f"{method}: the client is closed")
        await self._notify(method, params)

    async def _notify(self, method: str, params: JSONObject | None) -> None:
        """``notify`` on a closing session too: the cancellations ``close`` waits for go out."""
        message = self.codec.encode_notification(method, params)
        limit = self.options.timeout
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                await self.transport.send(message, headers=self.headers_for(message))
        except TimeoutError:
            if not scope.expired():
                raise
            raise RequestTimeout(f"{method} could not be sent within {limit} s") from None

    async def cancel(self, rid: RequestId, reason: str | None = None, within: float = 5.0) -> None:
        """Cancel an in-flight request: ``notifications/cancelled`` (sent within ``within`` s,
        else given up; never for ``initialize``, which clients MUST NOT cancel: cancellation.mdx)
        and/or close its stream."""
        await self._tell_cancelled(rid, self._stop_waiting(rid), reason, within)

    async def _cancel_soon(self, rid: RequestId, reason: str, being_sent: str | None = None) -> None:
        """``cancel``, waiting for the server to be told ``CANCEL_GRACE`` s at most, then going on
        in the background: a server that stopped reading held the caller up to 5 s more (the
        notification's bytes are in the transport's buffer once written; the rest was the
        transport's flow control). Told in time, it goes out before the caller's next request."""
        telling = self._spawn(self._tell_cancelled(rid, self._stop_waiting(rid, being_sent), reason, 5.0))
        self._telling.add(telling)
        telling.add_done_callback(self._telling.discard)
        await asyncio.wait({telling}, timeout=CANCEL_GRACE)  # (a caller cancelled meanwhile: the telling goes on)

    def _stop_waiting(self, rid: RequestId, being_sent: str | None = None) -> bool:
        """The request's future cancelled; whether the server is to be told: only of a request in
        flight (cancellation.mdx: one the client issued and believes still in progress; not one
        never sent, answered already, or told already, as a caller cancelling during a timeout's
        grace; ``being_sent``: the method of one given up while it was written, whose bytes may
        reach the server), and never of ``initialize``."""
        pending = self._pending.get(rid)
        if pending is None and being_sent is not None:
            method = being_sent
        elif pending is None or pending.future.done():
            return False
        else:
            pending.future.cancel()
            method = pending.method
        return self.sends_cancelled() and self.failure is None and method != "initialize"

    async def _tell_cancelled(self, rid: RequestId, tell: bool, reason: str | None, within: float) -> None:
        if tell:
            params: JSONObject = {"requestId": rid}
            if reason:
                params["reason"] = reason
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._notify("notifications/cancelled", params), within)
        with contextlib.suppress(Exception):
            await self.transport.abort(rid)

    def forget(self, rid: RequestId) -> None:
        """Drop a request's bookkeeping (its answer, if it comes, is ignored)."""
        pending = self._pending.pop(rid, None)
        if pending is not None and pending.progress_token is not None:
            self._progress.pop(pending.progress_token, None)

    # -- notifications for listeners ----------------------------------------------------------

    def add_route(self, rid: RequestId) -> asyncio.Queue[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._routes[rid] = queue
        return queue

    def remove_route(self, rid: RequestId) -> None:
        self._routes.pop(rid, None)

    def add_listener(self, accept: Callable[[Any], bool] | None = None) -> asyncio.Queue[Any]:
        """A queue of the unrouted notifications ``accept`` takes (all, without it): a legacy
        ``listen`` queued every notification, log messages included, to drop them when read."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._listeners[queue] = accept
        return queue

    def remove_listener(self, queue: asyncio.Queue[Any]) -> None:
        self._listeners.pop(queue, None)

    def _offer(self, queue: asyncio.Queue[Any], note: Notification) -> None:
        """Queue ``note`` for a listener; one ``LISTEN_BACKLOG`` behind loses its oldest (a server
        sending faster than a listener reads grew its queue without bound: 300 MB)."""
        if queue.qsize() >= LISTEN_BACKLOG:
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()
            self._behind += 1
            if _now_and_then(self._behind):
                logger.warning("dropped %d notification(s): a listener is %d behind", self._behind, LISTEN_BACKLOG)
        queue.put_nowait(note)

    # -- receiving (the transport's Receiver) -------------------------------------------------

    async def receive(
        self, data: bytes, answer_to: RequestId | None = None, stream_of: RequestId | None = None
    ) -> None:
        pending = {rid: p.method for rid, p in self._pending.items()}
        owner = answer_to if answer_to is not None else stream_of  # the POST whose answer this is
        try:
            decoded = self.codec.decode(data, pending=pending)
        except ProtocolError as error:
            if error.kind is None and answer_to is None:  # unread (too large, no JSON): whose answer, if any?
                rid = leading_id(data[:HEAD], "response")
                if rid is not None and rid in self._pending and stream_of in (None, rid):  # (a stream's: its own)
                    answer_to = rid  # (a review: it waited out its whole timeout)
            if not self._foreign(error, owner):
                self._refused(error, answer_to, stream_of, data)
            return
        items = decoded.items if isinstance(decoded, Batch) else (decoded,)
        for item in items:
            if self._foreign(item, owner):
                continue
            if isinstance(item, ProtocolError):
                self._refused(item, answer_to, stream_of)
            else:
                self._dispatch(item)

    def _foreign(self, item: Any, owner: RequestId | None) -> bool:
        """A response (or a refused one) to another request than ``owner``, the request whose
        POST it came in the answer to: dropped and noted. A POST's answer or stream carries that
        request's response and no other (transports.mdx); another id is the server's mistake, and
        that other request's answer it is not."""
        if owner is None:
            return False
        answers = (
            item.id
            if isinstance(item, Response | ErrorResponse)
            or (isinstance(item, ProtocolError) and item.kind == "response")
            else None
        )
        if answers is None or answers == owner:
            return False
        self._unmatched(f"the answer to request {owner!r} carried a response to {answers!r}: dropped", owner)
        return True

    def _refused(
        self,
        error: ProtocolError,
        answer_to: RequestId | None = None,
        stream_of: RequestId | None = None,
        data: bytes = b"",
    ) -> None:
        if error.kind == "response" and error.id is not None:  # a result that fails validation...
            pending = self._pending.get(error.id)
            method = pending.method if pending is not None else None
            self._settle(error.id, exception=InvalidAnswer.of(error, method, self.codec.version))
        elif error.kind == "request" and not self.answers_refused_requests:
            logger.warning("ignored a request from the server: %s %s", error.code, error.message)
        elif error.kind == "request":  # its error; an unread id left out, or null (the revision's way)
            self._spawn(self._reply(error.reply(null_id=self.codec.revision.null_error_ids)))
        elif error.kind in (None, "response") and answer_to is not None:  # the whole answer to that request
            refused = TransportError(f"the answer to request {answer_to!r} was refused: {_why(error)}")
            self._settle(answer_to, exception=refused)
        elif error.kind in (None, "response"):  # not even its id could be read
            began = f" (it began {data[:SHOWN]!r})" if data else ""
            self._unmatched(f"the server sent a message this client refused: {_why(error)}{began}", stream_of)
        else:  # a notification of no use here (unknown, another revision's): ignored, as JSON-RPC has it
            logger.debug("ignored a message the codec refused: %r", error)

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Response):
            self._settle(message.id, result=message.result)
        elif isinstance(message, ErrorResponse):
            e = message.error
            if message.id is not None:
                self._settle(message.id, exception=ServerError(e.code, _bounded(e.message), e.data))
            else:  # JSON-RPC's answer to a message whose id the server could not tell
                self._unmatched(f"the server could not read a message of this client: {e.code} {e.message}")
        elif isinstance(message, Notification):
            self._notification(message)
        else:
            rid = message.id
            if self._answers_in_flight >= ANSWERING_BACKLOG:  # a server asking faster than it reads
                self._dropped += 1
                if _now_and_then(self._dropped):
                    logger.warning(
                        "dropped %d request(s) of the server: %d of its requests are being answered already",
                        self._dropped,
                        ANSWERING_BACKLOG,
                    )
                return
            self._answers_in_flight += 1
            task = self._spawn(self._answer(message))
            task.add_done_callback(self._answered)
            self._answering[rid] = task
            task.add_done_callback(
                lambda done: self._answering.pop(rid, None) if self._answering.get(rid) is done else None
            )

    def _unmatched(self, what: str, stream_of: RequestId | None = None) -> None:
        """Something the server sent that names no request (an error with a null id, a message the
        codec refused before it could read an id: a line past its size limit, not JSON) may concern
        any request waiting now: it is logged, and a request waiting now that times out names it.
        Over HTTP an error with a null id in a POST's answer is that request's already (the
        transport makes it so), a POST's JSON answer refused whole fails that request at once
        (``receive``'s ``answer_to``), and a refused event of a POST's stream is noted on that
        POST's request only (``stream_of``: what a request's stream carries is about it). It is
        kept to what a ``ServerError``'s message is (``_bounded``)."""
        what = _bounded(what)
        logger.warning("%s", what)
        only = self._pending.get(stream_of) if stream_of is not None else None
        for pending in (only,) if only is not None else self._pending.values():
            pending.meanwhile = what

    def _settle(self, rid: RequestId, *, result: Any = None, exception: BaseException | None = None) -> None:
        pending = self._pending.get(rid)
        if pending is None:
            route = self._routes.get(rid)  # a subscription's graceful end
            if route is not None:
                route.put_nowait(CLOSED if exception is None else exception)
            return
        if pending.future.done():
            return
        if self.options.on_log is not None or self._on_note is not None:
            pending.turns_before = dict(self._received)
        if exception is not None:
            pending.future.set_exception(exception)
        else:
            pending.future.set_result(result)

    def _notification(self, note: Notification) -> None:
        if self._on_note is not None:
            self._received[NOTE_TURN] += 1
            self._progressed(NOTE_TURN, self._on_note, note)
        if note.method == "notifications/message" and self.options.on_log is not None:
            self._received[LOG_TURN] += 1
            self._progressed(LOG_TURN, self.options.on_log, note.params)  # (and to listeners, as before)
        if note.method == "notifications/progress":
            token = getattr(note.params, "progress_token", None)
            callback = self._progress.get(token) if isinstance(token, str) else None
            if callback is not None and isinstance(token, str):
                self._progressed(token, callback, note.params)
            return
        if note.method == "notifications/cancelled":
            # a server ends a subscription of ours this way on stdio (cancellation.mdx), or cancels
            # a request of its own that this client is answering (legacy sessions): its handler
            # stops and no response goes (cancellation.mdx: the receiver SHOULD not send one). It
            # may cancel nothing else, so any other request it names is left alone.
            rid = getattr(note.params, "request_id", None)
            pending = self._pending.get(rid) if rid in self._routes else None
            if pending is not None and not pending.future.done():
                pending.future.cancel()  # the subscription's iteration ends, as on a graceful close
            elif rid in self._answering:
                self._answering.pop(rid).cancel()
            return
        subscription = self.route(note)
        if subscription is not None:
            queue = self._routes.get(subscription)
            if queue is not None:
                self._offer(queue, note)
            return
        for listener, accept in list(self._listeners.items()):
            if accept is None or accept(note):
                self._offer(listener, note)

    def _answered(self, task: asyncio.Task[None]) -> None:
        self._answers_in_flight -= 1

    def handled_time(self) -> float:
        """Seconds the caller's handlers of the server's requests have run (any of them), so far."""
        if self._handling:
            return self._handled_for + asyncio.get_running_loop().time() - self._handling_since
        return self._handled_for

    @contextlib.asynccontextmanager
    async def _handler_runs(self) -> AsyncIterator[None]:
        if not self._handling:
            self._handling_since = asyncio.get_running_loop().time()
            self._no_handlers.clear()
        self._handling += 1
        try:
            yield
        finally:
            self._handling -= 1
            if not self._handling:
                self._handled_for += asyncio.get_running_loop().time() - self._handling_since
                self._no_handlers.set()

    async def _answer(self, request: Request) -> None:
        """A server's own request (legacy sessions): answer through the registered handler, at most
        ``HANDLERS_AT_ONCE`` of one method running at once (a server asking for 2,000 samplings at
        once had the caller's handler, an LLM call, run 2,000 times at once)."""
        try:
            if request.method == "ping":
                result: Any = {}
            else:
                handler = self.options.handlers.get(request.method)
                if handler is None:
                    raise ProtocolError(METHOD_NOT_FOUND, f"this client does not handle {request.method!r}")
                limit = self._handlers_at_once.get(request.method)
                if limit is None:
                    limit = self._handlers_at_once[request.method] = asyncio.Semaphore(HANDLERS_AT_ONCE)
                async with limit, self._handler_runs():  # per method: 16 samplings never hold up roots/list
                    result = await handler(request.params)
            reply = self.codec.encode_result(request.id, request.method, result)
        except ProtocolError as error:
            reply = self.codec.encode_error(request.id, error)
        except Exception as exc:
            logger.exception("handler for %s failed", request.method)
            reply = self.codec.encode_error(request.id, ProtocolError(INTERNAL_ERROR, str(exc)))
        await self._reply(reply)

    async def _reply(self, message: JSONObject) -> None:
        with contextlib.suppress(TransportError, TimeoutError):
            async with asyncio.timeout(self.options.timeout):  # a server that never takes it holds nothing
                await self.transport.send(message, headers=self.headers_for(message))

    async def _restart_or_raise(self, failure: TransportError) -> None:
        """Start the server again where the era and the transport allow it (the requests that
        were in flight failed with the process; a listen must be opened again), else raise."""
        if self._closed or not self.restarts_an_exited_server or not self.transport.restartable():
            raise failure
        async with self._restarting:
            if self.failure is failure:  # not restarted meanwhile by another request
                logger.warning("%s: starting the server again (%s)", self.transport.describe(), failure)
                await self.transport.restart(self)
                self.failure = None
                self.restarted()

    def restarted(self) -> None:
        """The server was started again (``_restart_or_raise``): what the era keeps of the old one goes."""

    def awaiting(self, request_id: RequestId) -> bool:
        pending = self._pending.get(request_id)
        return pending is not None and not pending.future.done()

    def unreadable(self, what: str) -> None:
        self._unmatched(what)

    def transport_failed(self, request_id: RequestId | None, error: TransportError) -> None:
        if request_id is not None:
            self._settle(request_id, exception=error)
            return
        self.failure = error
        self._fail_all(error)

    def _fail_all(self, error: TransportError) -> None:
        for pending in self._pending.values():
            if not pending.future.done():
                pending.future.set_exception(error)
        for queue in [*self._routes.values(), *self._listeners]:
            queue.put_nowait(error)

    def _progressed(self, token: str, callback: ProgressCallback, params: Any) -> None:
        """Hand ``params`` to the request's callback after those before it, one at a time: a task
        per notification ran them at once and out of order (progress went backwards), as many as
        a server sent. A callback slower than the server sees the latest ``PROGRESS_BACKLOG``."""
        shared = token in SHARED_TURNS
        backlog = self._progressing.get(token)
        if backlog is not None:
            if shared and len(backlog) == backlog.maxlen:  # the oldest goes: counted as had
                self._handed_over(token, 1)
            backlog.append(params)
            return
        backlog = self._progressing[token] = collections.deque([params], maxlen=PROGRESS_BACKLOG)

        async def run() -> None:
            try:
                while backlog:
                    try:
                        await _call(callback, backlog.popleft(), SHARED_TURNS.get(token, "on_progress"))
                    finally:
                        if shared:
                            self._handed_over(token, 1)
            finally:
                self._progressing.pop(token, None)
                self._progress_runs.pop(token, None)
                if shared and backlog:  # cancelled (the session closed): nobody waits for the rest
                    self._handed_over(token, len(backlog))
                    backlog.clear()

        self._progress_runs[token] = self._spawn(run())

    def _spawn(self, coro: Awaitable[None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


SHOWN = 80  # characters of a refused message quoted in the warning (a banner, a debug line)


def _bounded(message: str) -> str:
    """A server's error message as the exception keeps it: at most ``ERROR_MESSAGE_LIMIT``
    characters (a 10 MB message went whole into every traceback and log line)."""
    if len(message) <= ERROR_MESSAGE_LIMIT:
        return message
    return f"{message[:ERROR_MESSAGE_LIMIT]}... ({len(message) - ERROR_MESSAGE_LIMIT} more characters)"


def _now_and_then(count: int) -> bool:
    """Whether the ``count``-th of something dropped is logged: the 1st, 10th, 100th... (a flood
    says so without a line per message)."""
    return count > 0 and str(count).rstrip("0") == "1"


def _why(error: ProtocolError) -> str:
    """The codec's refusal with its reason (a parse error's is in ``data``: bad UTF-8, too deep)."""
    detail = error.data.get("detail") if isinstance(error.data, dict) else None
    return f"{error.code} {error.message}" + (f" ({shortened(str(detail))})" if detail else "")


async def _call(callback: ProgressCallback, params: Any, name: str) -> None:
    try:
        outcome = callback(params)
        if outcome is not None:
            await outcome
    except Exception:
        logger.exception("the %s callback failed", name)


def plain(value: Any) -> Any:
    """Models to JSON-ready data (by wire name) for building params."""
    return dump(value)
