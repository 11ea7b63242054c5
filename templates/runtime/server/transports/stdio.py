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
) -> None:
    """Serve one connection: read lines from ``reader`` until EOF, ``write`` each outgoing line.

    ``drain`` (a ``StreamWriter.drain``) waits while the client has not read what was written:
    the next line is read only then, so a client that stops reading cannot make the server
    buffer replies without bound.
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
                if len(tasks) >= conn.max_inflight:
                    forget_unstarted()
                    if len(tasks) >= conn.max_inflight:
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
    if tasks:
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
