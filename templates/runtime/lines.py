"""Newline-delimited input read in bounded memory: what both stdio transports, the server's and
the client's, read their peer with."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

READ_CHUNK = 64 * 1024  # bytes read at a time (and buffered before the pipe is paused)


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
