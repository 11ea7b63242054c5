"""Newline-delimited input read in bounded memory: what both stdio transports, the server's and
the client's, read their peer with."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

READ_CHUNK = 64 * 1024  # bytes read at a time (and buffered before the pipe is paused)
HEAD = 4096  # bytes of a line too long to read that are kept: where its id is, if anywhere


class Overlong:
    """In place of a line longer than the limit: its first ``HEAD`` bytes (``head``), the rest dropped."""

    __slots__ = ("head",)

    def __init__(self, head: bytes) -> None:
        self.head = head


async def chunks(reader: asyncio.StreamReader, limit: int) -> AsyncIterator[list[bytes | Overlong]]:
    """The lines of ``reader`` (without the newline), a list per chunk read: the lines it completed;
    an ``Overlong`` in place of a line longer than ``limit``, whose bytes past its head are
    dropped as they arrive, up to its newline."""
    buffer = bytearray()
    skipping = False
    while chunk := await reader.read(READ_CHUNK):
        done: list[bytes | Overlong] = []
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
                head = bytes(buffer[:HEAD]) + bytes(piece[: max(0, HEAD - len(buffer))])
                buffer.clear()
                skipping = True
                done.append(Overlong(head))
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
