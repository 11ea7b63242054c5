"""The stdio transport: newline-delimited JSON-RPC on a reader and a writer.

Requests run concurrently (``notifications/cancelled`` stops one); the output carries only
responses and notifications on modern requests, plus server->client requests once a legacy
client has sent ``initialize``. ``serve`` returns at EOF, after in-flight requests finish (or a
grace period ends). The process runner (``runners.run_stdio``) connects it to stdin/stdout.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from pydantic_core import from_json

from ...jsonrpc import PARSE_ERROR, ProtocolError, dumps, error_envelope, request_id
from ..router import Connection, Router, is_legacy_initialize

LINE_LIMIT = 64 * 1024 * 1024  # the longest message accepted
SHUTDOWN_GRACE = 2.0  # seconds in-flight requests may finish after EOF


async def serve(router: Router, reader: asyncio.StreamReader, write: Callable[[bytes], None]) -> None:
    """Serve one connection: read lines from ``reader`` until EOF, ``write`` each outgoing line."""
    conn = Connection()
    tasks: set[asyncio.Task[None]] = set()

    async def send(data: bytes) -> None:
        write(data + b"\n")

    async def answer(obj: Any) -> None:
        reply = await router.run(obj, send, conn)
        if reply.body is not None:
            write(reply.body + b"\n")

    while True:
        try:
            line = await reader.readline()
        except (ValueError, asyncio.LimitOverrunError):
            write(dumps(error_envelope(None, ProtocolError(PARSE_ERROR, "message too long"))) + b"\n")
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
            write(dumps(error_envelope(None, error)) + b"\n")
            continue
        if isinstance(obj, dict) and "id" in obj and "method" in obj and not is_legacy_initialize(obj):
            task = asyncio.create_task(answer(obj))
            rid = request_id(obj)
            if rid is not None:  # cancellable from now on, even before the task first runs
                conn.inflight[rid] = task
                task.add_done_callback(functools.partial(forget, conn, rid))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
            continue
        reply = await router.handle(obj, send, conn)  # notifications, responses, initialize: in order
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


def forget(conn: Connection, rid: str | int, task: asyncio.Task[None]) -> None:
    if conn.inflight.get(rid) is task:
        del conn.inflight[rid]
