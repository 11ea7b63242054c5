"""The stdio runner: newline-delimited JSON-RPC on stdin/stdout, logs on stderr.

Requests run concurrently (``notifications/cancelled`` stops one); stdout carries only
responses and notifications on 2026-07-28, plus server->client requests once a legacy
client has sent ``initialize``. The server exits on EOF.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json, to_json

from ..jsonrpc import PARSE_ERROR, ProtocolError
from .dispatch import Connection, Dispatcher, is_legacy_initialize

if TYPE_CHECKING:
    from .handler import HandlerBase

LINE_LIMIT = 64 * 1024 * 1024  # the longest message accepted
SHUTDOWN_GRACE = 2.0  # seconds in-flight requests may finish after EOF


async def serve(dispatcher: Dispatcher, reader: asyncio.StreamReader, write: Callable[[bytes], None]) -> None:
    """Serve one connection: read lines from ``reader`` until EOF, ``write`` each outgoing line."""
    conn = Connection()
    tasks: set[asyncio.Task[None]] = set()

    async def send(data: bytes) -> None:
        write(data + b"\n")

    async def answer(obj: Any) -> None:
        reply = await dispatcher.run(obj, send, conn)
        if reply.body is not None:
            write(reply.body + b"\n")

    while True:
        try:
            line = await reader.readline()
        except (ValueError, asyncio.LimitOverrunError):
            error = ProtocolError(PARSE_ERROR, "message too long")
            write(to_json({"jsonrpc": "2.0", "id": None, "error": error.to_error_object()}) + b"\n")
            break
        if not line:
            break
        line = line.strip()
        if not line:
            continue
        try:
            obj = from_json(line, allow_inf_nan=False)
        except ValueError as exc:
            error = ProtocolError(PARSE_ERROR, data={"detail": str(exc)})
            write(to_json({"jsonrpc": "2.0", "id": None, "error": error.to_error_object()}) + b"\n")
            continue
        if isinstance(obj, dict) and "id" in obj and "method" in obj and not is_legacy_initialize(obj):
            task = asyncio.create_task(answer(obj))
            rid = obj["id"]
            if isinstance(rid, str | int):  # cancellable from now on, even before the task first runs
                conn.inflight[rid] = task
                task.add_done_callback(functools.partial(forget, conn, rid))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            continue
        reply = await dispatcher.handle(obj, send, conn)  # notifications, responses, initialize: in order
        if conn.legacy is not None and conn.legacy.notify is None:
            conn.legacy.notify = send
        if reply.body is not None:
            write(reply.body + b"\n")
    if tasks:
        _, pending = await asyncio.wait(tasks, timeout=SHUTDOWN_GRACE)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    if conn.legacy is not None:
        dispatcher.subscriptions.sessions.discard(conn.legacy)


def forget(conn: Connection, rid: str | int, task: asyncio.Task[None]) -> None:
    if conn.inflight.get(rid) is task:
        del conn.inflight[rid]


async def serve_stdio(handler: HandlerBase) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)

    def shut_down() -> None:  # SIGTERM/SIGINT: end listen streams, stop reading, let requests finish
        handler.dispatcher.subscriptions.close()
        reader.feed_eof()

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, shut_down)
    try:
        await serve(handler.dispatcher, reader, transport.write)
    finally:
        transport.close()


def run_stdio(handler: HandlerBase) -> None:
    """Serve ``handler`` on this process's stdin and stdout until EOF."""
    try:
        asyncio.run(serve_stdio(handler))
    except KeyboardInterrupt:
        pass
