"""The stdio transport: newline-delimited JSON-RPC on a reader and a writer.

Requests run concurrently (``notifications/cancelled`` stops one), each in its own task, and so
does a batch holding requests (2025-03-26): the reader never waits for a handler, so a handler
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
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from pydantic_core import from_json

from ...jsonrpc import INVALID_REQUEST, PARSE_ERROR, ProtocolError, dumps, error_envelope, request_id
from ..router import Router, is_legacy_initialize, too_busy

READ_CHUNK = 64 * 1024  # bytes read at a time (and buffered before the pipe is paused)
SHUTDOWN_GRACE = 2.0  # seconds in-flight requests may finish after EOF


async def chunks(reader: asyncio.StreamReader, limit: int) -> AsyncIterator[list[bytes | None]]:
    """The lines of ``reader`` (without the newline), a list per chunk read: the lines it completed;
    None in place of a line longer than ``limit``, whose bytes are dropped as they arrive, up to
    its newline."""
    buffer = bytearray()
    skipping = False
    while chunk := await reader.read(READ_CHUNK):
        done: list[bytes | None] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                piece = chunk[start:]
            elif not buffer and not skipping and end - start <= limit:  # a whole line in this chunk
                done.append(chunk[start:end])
                start = end + 1
                continue
            else:
                piece = chunk[start:end]
            if not skipping and len(buffer) + len(piece) > limit:
                buffer.clear()
                skipping = True
                done.append(None)
            elif not skipping:
                buffer += piece
            if end < 0:
                break
            if not skipping:
                done.append(bytes(buffer))
            buffer.clear()
            skipping = False
            start = end + 1
        if done:
            yield done
    if buffer and not skipping:
        yield [bytes(buffer)]


def needs_task(obj: Any) -> bool:
    """A request (other than ``initialize``), or a batch holding one: it may wait on the client."""
    if isinstance(obj, dict):
        return "id" in obj and "method" in obj and not is_legacy_initialize(obj)
    return isinstance(obj, list) and any(isinstance(item, dict) and "id" in item and "method" in item for item in obj)


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
    tasks: set[asyncio.Task[None]] = set()

    async def send(data: bytes) -> None:
        write(data + b"\n")

    async def answer(obj: Any) -> None:
        try:
            reply = await router.run(obj, send, conn)  # which forgets the request once answered
            if reply.body is not None:
                write(reply.body + b"\n")
        finally:
            tasks.discard(asyncio.current_task())

    def forget_unstarted() -> None:
        """Drop the tasks that ended without running (cancelled before their first step, so their
        ``finally`` never ran), and their requests."""
        for task in [task for task in tasks if task.done()]:
            tasks.discard(task)
        for rid, task in list(conn.inflight.items()):
            if task.done():
                del conn.inflight[rid]

    async def room() -> bool:
        """Whether a place is free for one more request in flight (called when none seemed
        free): at once on a live peer; from a file, after waiting for one, unless a
        server->client request awaits an answer only further input can bring."""
        while True:
            forget_unstarted()
            if len(tasks) < conn.max_inflight:
                return True
            asking = conn.legacy.asking if conn.legacy is not None else None
            if not from_file or (asking is not None and asking.is_set()):
                return False
            # a handler may ask the client while the reader waits: that ends the wait too
            asked = asyncio.ensure_future(asking.wait()) if asking is not None else None
            try:
                await asyncio.wait([*tasks, *([asked] if asked else [])], return_when=asyncio.FIRST_COMPLETED)
            finally:
                if asked is not None:
                    asked.cancel()

    async for batch in chunks(reader, limits.max_line_bytes):
        # once per chunk: its lines are handled without yielding to the loop anyway
        if drain is not None:
            await drain()
        for line in batch:
            if line is None:
                error = ProtocolError(INVALID_REQUEST, f"message longer than {limits.max_line_bytes} bytes")
                write(dumps(error_envelope(None, error)) + b"\n")
                continue
            line = line.strip()
            if not line:
                continue
            try:
                obj = from_json(line, allow_inf_nan=False)
            except ValueError as exc:
                error = ProtocolError(PARSE_ERROR, data={"detail": str(exc)})
                write(dumps(error_envelope(None, error)) + b"\n")
                continue
            if needs_task(obj):
                rid = request_id(obj)
                if len(tasks) >= conn.max_inflight and not await room():
                    write(refused(obj, conn.max_inflight) + b"\n")
                    continue
                task = asyncio.create_task(answer(obj))
                if rid is not None:  # cancellable from now on, even before the task first runs
                    conn.inflight[rid] = task
                # no done-callback: the task forgets itself (one loop callback less per request)
                tasks.add(task)
                continue
            # notifications, responses, initialize: in order
            reply = await router.handle(obj, send, conn)
            if conn.legacy is not None and conn.legacy.notify is None:
                conn.legacy.notify = send
            if reply.body is not None:
                write(reply.body + b"\n")
    if tasks and from_file:
        if conn.legacy is not None:  # what the handlers ask the client now fails: no answer can come
            conn.legacy.end_input()
        await asyncio.wait(tasks)  # each request in the file gets its answer
    elif tasks:
        _, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    router.close(conn)


def refused(obj: Any, limit: int) -> bytes:
    """The reply to a request, or a batch, past ``max_inflight``: -32600 for each request."""
    if isinstance(obj, dict):
        return too_busy(request_id(obj), limit).body or b""
    bodies = [too_busy(request_id(item), limit).body or b"" for item in obj if isinstance(item, dict) and "id" in item]
    return b"[" + b",".join(bodies) + b"]"
