"""The stdio transport: newline-delimited JSON-RPC on a reader and a writer.

Requests run concurrently (``notifications/cancelled`` stops one), each as if in its own task
(``Requests``: eagerly, in a runner task, until one waits; then it keeps that task), and so does
a batch holding requests (2025-03-26): the reader never waits for a handler, so a handler
waiting for the client's answer to a server->client request gets it. Notifications, responses
and ``initialize`` are handled in order as they are read. The output carries only responses and
notifications on modern requests, plus server->client requests once a legacy client has sent
``initialize``. The server's ``Limits`` apply: a line longer than ``max_line_bytes`` is answered
-32600 and skipped to its newline with bounded memory; a request past ``max_inflight`` is
answered -32600 at once; while the client leaves what was written unread, no more input is
read. ``serve`` returns at EOF, after in-flight requests finish (or a grace
period ends). The process runner (``runners.run_stdio``) connects it to stdin/stdout.

Input read from a file (``python -m server < requests.jsonl > replies.jsonl``; the runner says
so with ``serve(..., from_file=True)``) has no live client behind it, and every request in it
wants its answer: a request past ``max_inflight`` waits for a place (the reader stops reading,
so memory stays bounded) instead of being refused, except while a server->client request awaits
its answer, which can only come from further down the input: then the reader keeps reading and
refuses as on a pipe. At the end of the file every request in flight is waited for, with no
grace period; a server->client request still unanswered, or asked later, fails at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from pydantic_core import from_json

from ...jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ProtocolError,
    RequestId,
    dumps,
    error_envelope,
    holds_a_request,
    leading_id,
    request_id,
)
from ...lines import Overlong, chunks
from ..kernel import Reply
from ..router import Connection, Router, id_in_use, is_legacy_initialize, too_busy, too_long_a_batch
from ..services import Send

SHUTDOWN_GRACE = 2.0  # seconds in-flight requests may finish after EOF


def needs_task(obj: Any) -> bool:
    """A request (other than ``initialize``), or a batch holding one: it may wait on the client."""
    return holds_a_request(obj) and not is_legacy_initialize(obj)


class Pending:
    """A request read and not answered yet: queued for a runner, or running. ``cancel`` (what
    ``notifications/cancelled`` and the connection's end call) drops a queued one before it
    starts and cancels a running one's task."""

    __slots__ = ("cancelled", "obj", "rid", "task")

    def __init__(self, obj: Any, rid: RequestId | None) -> None:
        self.obj = obj
        self.rid = rid
        self.cancelled = False
        self.task: asyncio.Task[Any] | None = None  # the runner it waits in, once it waits

    def cancel(self) -> bool:
        self.cancelled = True  # whatever it answers now is not written: its id may be another's
        if self.task is not None:
            return self.task.cancel()
        return True


class Requests:
    """The requests in flight of one stdio connection, run eagerly.

    A task per request costs more than the rest of a small request's own Python (the task,
    its loop callback, the weak registry of tasks). Instead, the requests read are queued and
    one runner task takes them in order, each in its own copy of the context, as the task it
    would have had: a request that finishes without waiting (most do) costs no task at all;
    the first time one waits, the runner becomes that request's task for good (its
    cancellation, timeouts and ``current_task`` are the request's), and a new runner takes
    the rest of the queue. So requests still run concurrently: none waits for another.
    """

    def __init__(self, router: Router, conn: Connection, send: Send, write: Callable[[bytes], None]) -> None:
        self.router = router
        self.conn = conn
        self.send = send
        self.write = write
        self.queue: deque[Pending] = deque()
        self.active: set[Pending] = set()  # read, not answered (or dropped) yet
        self.runners: set[asyncio.Task[None]] = set()
        self.free: asyncio.Task[None] | None = None  # the runner taking the queue
        self.changed: asyncio.Future[None] | None = None  # set when a request ends, for whoever waits

    def __len__(self) -> int:
        return len(self.active)

    def add(self, obj: Any, rid: RequestId | None) -> None:
        """Queue a request; cancellable (``conn.inflight``) from now on, before it starts."""
        pending = Pending(obj, rid)
        if rid is not None:
            self.conn.inflight[rid] = pending
        self.active.add(pending)
        self.queue.append(pending)
        if self.free is None or self.free.done():
            self.spawn()

    def spawn(self) -> None:
        task = self.free = asyncio.get_running_loop().create_task(self.run())
        self.runners.add(task)
        task.add_done_callback(self.runners.discard)

    def done(self, pending: Pending, reply: Reply | None) -> None:
        if pending not in self.active:
            return
        self.active.discard(pending)
        rid = pending.rid
        if rid is not None and self.conn.inflight.get(rid) is pending:
            del self.conn.inflight[rid]
        if reply is not None and reply.body is not None and not pending.cancelled:
            self.write(reply.body + b"\n")
        changed = self.changed
        if changed is not None:
            self.changed = None
            if not changed.done():
                changed.set_result(None)

    async def wait(self, *others: asyncio.Future[Any]) -> None:
        """Until a request ends (or one of ``others`` is done)."""
        changed = self.changed
        if changed is None:
            changed = self.changed = asyncio.get_running_loop().create_future()
        await asyncio.wait([changed, *others], return_when=asyncio.FIRST_COMPLETED)

    async def run(self) -> None:
        """Run queued requests until the queue is empty or one waits (then go on with that one)."""
        me = asyncio.current_task()
        assert me is not None
        queue = self.queue
        try:
            while queue:
                pending = queue.popleft()
                if pending.cancelled:
                    self.done(pending, None)
                    continue
                coro = self.router.handle(pending.obj, self.send, self.conn)
                context = contextvars.copy_context()
                cancels = me.cancelling()
                try:
                    step = context.run(coro.send, None)
                except StopIteration as finished:
                    self.done(pending, finished.value)
                except asyncio.CancelledError:
                    self.done(pending, None)  # a cancelled request gets no response
                except Exception as exc:  # not ours to raise (the sessions answer every error): reported
                    self.done(pending, None)
                    self.report(exc)
                else:  # it waits: this runner is its task from now on, a new one takes the queue
                    self.free = None
                    if queue:
                        self.spawn()
                    pending.task = me
                    reply = None
                    try:
                        reply = await self.drive(coro, context, step)
                    except Exception as exc:  # as above: reported, and its place given back
                        self.report(exc)
                    finally:
                        self.done(pending, reply)
                    return
                if me.cancelling() != cancels:  # a request cancelled its own (this) task: leave it
                    break
        finally:
            if self.free is me:
                self.free = None
                if queue:
                    self.spawn()

    async def drive(self, coro: Coroutine[Any, Any, Reply], context: contextvars.Context, step: Any) -> Reply | None:
        """Go on with a request that waits, as its task would: what it waits on is awaited here
        (so cancelling this task cancels that), and what that raises is thrown into it."""
        while True:
            thrown: BaseException | None = None
            try:
                if step is None:  # a bare yield (``sleep(0)``): let the loop run once
                    await asyncio.sleep(0)
                elif getattr(step, "_asyncio_future_blocking", None) is None:
                    thrown = RuntimeError(f"Task got bad yield: {step!r}")
                elif not step._asyncio_future_blocking:
                    thrown = RuntimeError(f"yield was used instead of yield from in task {coro!r} with {step!r}")
                else:
                    step._asyncio_future_blocking = False
                    await step
            except GeneratorExit:  # this task is being closed: so is the request
                coro.close()
                raise
            except BaseException as exc:  # what the task would have thrown into the request
                thrown = exc
            try:
                step = context.run(coro.send, None) if thrown is None else context.run(coro.throw, thrown)
            except StopIteration as finished:
                reply: Reply = finished.value
                return reply
            except asyncio.CancelledError:
                return None  # a cancelled request gets no response

    def report(self, exc: Exception) -> None:
        asyncio.get_running_loop().call_exception_handler({"message": "an stdio request raised", "exception": exc})


async def serve(
    router: Router,
    reader: asyncio.StreamReader,
    write: Callable[[bytes], None],
    drain: Callable[[], Awaitable[None]] | None = None,
    *,
    from_file: bool = False,
) -> None:
    """Serve one connection: read lines from ``reader`` until EOF, ``write`` each outgoing line.

    ``drain`` (a ``StreamWriter.drain``) waits while the client has not read what was written:
    the next line is read only then, so a client that stops reading cannot make the server
    buffer replies without bound.

    On a live peer (a pipe, socket or terminal) a request read while ``max_inflight`` requests
    are in flight is refused at once: pausing the reader could leave a handler waiting forever
    for the client's answer to a server->client request, which arrives on the same input. At
    EOF (the client left) requests in flight get ``SHUTDOWN_GRACE`` seconds, then are cancelled.

    ``from_file``: the input is a file, read to its end whatever the server answers. A request
    past ``max_inflight`` then waits for a place (no more input is read meanwhile), unless a
    server->client request of the connection is outstanding: its answer can only be further
    down the input, so the reader goes on, refusing requests past the limit. At EOF every
    request in flight is waited for, and the server->client requests still unanswered, or asked
    after it, fail (``LegacySession.end_input``): their handlers answer with an error.
    """
    limits = router.limits
    conn = router.connect()

    async def send(data: bytes) -> None:
        write(data + b"\n")

    requests = Requests(router, conn, send, write)

    async def room() -> bool:
        """Whether a place is free for one more request in flight (called when none seemed
        free): at once on a live peer; from a file, after waiting for one, unless a
        server->client request awaits an answer only further input can bring."""
        while True:  # (a request cancelled before it started gives its place back when its runner drops it)
            if len(requests) < conn.max_inflight:
                return True
            asking = conn.legacy.asking if conn.legacy is not None else None
            if not from_file or (asking is not None and asking.is_set()):
                return False
            # a handler may ask the client while the reader waits: that ends the wait too
            asked = asyncio.ensure_future(asking.wait()) if asking is not None else None
            try:
                await requests.wait(*([asked] if asked else []))
            finally:
                if asked is not None:
                    asked.cancel()

    async for batch in chunks(reader, limits.max_line_bytes):
        # once per chunk: its lines are handled without yielding to the loop anyway
        if drain is not None:
            await drain()
        for line in batch:
            if isinstance(line, Overlong):  # answered under its id when its head holds one
                error = ProtocolError(INVALID_REQUEST, f"message longer than {limits.max_line_bytes} bytes")
                rid = leading_id(line.head)
                write(dumps(error_envelope(rid, error, null_id=router.null_ids_for(conn))) + b"\n")
                continue
            line = line.strip()
            if not line:
                continue
            try:
                obj = from_json(line, allow_inf_nan=False)
            except ValueError as exc:
                error = ProtocolError(PARSE_ERROR, data={"detail": str(exc)})
                write(dumps(error_envelope(None, error, null_id=router.null_ids_for(conn))) + b"\n")
                continue
            if needs_task(obj):
                rid = request_id(obj)
                if rid is not None and rid in conn.inflight:
                    write((id_in_use(rid).body or b"") + b"\n")
                    continue
                if len(requests) >= conn.max_inflight and not await room():
                    write(refused(obj, conn.max_inflight, router.null_ids_for(conn)) + b"\n")
                    continue
                requests.add(obj, rid)
                continue
            # notifications, responses, initialize: in order
            reply = await router.handle(obj, send, conn)
            if conn.legacy is not None and conn.legacy.notify is None:
                conn.legacy.notify = send
            if reply.body is not None:
                write(reply.body + b"\n")
    if requests and from_file:
        if conn.legacy is not None:  # what the handlers ask the client now fails: no answer can come
            conn.legacy.end_input()
        while requests:  # each request in the file gets its answer
            await requests.wait()
    elif requests:
        deadline = asyncio.get_running_loop().time() + SHUTDOWN_GRACE
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(deadline):
                while requests:
                    await requests.wait()
        for pending in list(requests.active):
            pending.cancel()
        while requests.runners:  # a cancelled request ends with its runner; one never started is dropped by one
            await asyncio.gather(*requests.runners, return_exceptions=True)
    router.close(conn)


def refused(obj: Any, limit: int, null_id: bool = False) -> bytes:
    """The reply to a request, or a batch, past ``max_inflight``: -32600 for each request
    (``null_id``: an id that could not be read written null, as the connection's revision does)."""
    if isinstance(obj, dict):
        return too_busy(request_id(obj), limit, null_id=null_id).body or b""
    if len(obj) > limit:  # one error, not one per request (the session refuses such a batch whole anyway)
        return dumps(error_envelope(None, too_long_a_batch(len(obj), limit), null_id=null_id))
    bodies = [  # each request of the batch (a response in it gets no error)
        too_busy(request_id(item), limit, null_id=null_id).body or b""
        for item in obj
        if isinstance(item, dict) and "id" in item and "method" in item
    ]
    return b"[" + b",".join(bodies) + b"]"
