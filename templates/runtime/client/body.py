"""A server's answer as the client reads it: decoded in bounded pieces as it arrives.

httpx inflates each chunk it reads in one call, so 64 KiB of gzip from a hostile server became
64 MiB in memory before a reader could count a byte (a 255 KiB answer took the client to 145 MiB
to refuse it at 16). Here the raw bytes are inflated at most ``PIECE`` bytes at a time, so a
reader that stops at its limit holds at most its limit and one piece. The client asks for the
encodings it inflates (``ACCEPT_ENCODING``: gzip and deflate, which ``zlib`` reads); an answer
in any other (``br`` or ``zstd``, which httpx would ask for when their packages are installed) is
an ``httpx.DecodingError``, as a corrupt one is.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

import httpx

ACCEPT_ENCODING = "gzip, deflate"
PIECE = 1 << 16  # bytes of decoded answer per step at most


async def decoded_pieces(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body of ``response`` (read as a stream), its content codings undone, in pieces of at
    most ``PIECE`` bytes (an identity body: as the network gave it, up to httpx's 64 KiB reads).
    A response read already (made in memory, or read by an ``httpx.Auth`` that asked for its body)
    is its content, as httpx decoded it."""
    if response.is_stream_consumed:
        content = response.content
        for start in range(0, len(content), PIECE):
            yield content[start : start + PIECE]
        return
    inflaters = [_inflater(name, response) for name in reversed(_codings(response))]
    if not inflaters:
        async for chunk in response.aiter_raw():
            yield chunk
        return
    async for chunk in response.aiter_raw():
        for piece in _through(inflaters, chunk):
            yield piece
    for piece in _through(inflaters, None):
        yield piece


def _codings(response: httpx.Response) -> list[str]:
    """The content codings applied to the body, in the order they were applied (RFC 9110 8.4)."""
    names = [
        name.strip().lower() for value in response.headers.get_list("content-encoding") for name in value.split(",")
    ]
    return [name for name in names if name and name != "identity"]


class _Inflater:
    """One gzip or deflate coding, undone in pieces of at most ``PIECE`` bytes."""

    def __init__(self, name: str) -> None:
        self.gzip = name in ("gzip", "x-gzip")
        self.z = self._new()
        # deflate is zlib-wrapped (RFC 9110 8.4.1.2), but some servers send it raw: the first
        # bytes are kept until the first inflation (of two bytes at least: the zlib header) says
        self.opening: bytes | None = None if self.gzip else b""

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.opening is not None:
            self.opening += data
            if len(self.opening) < 2:
                return
            data = self.opening
        while data:
            try:
                out = self.z.decompress(data, PIECE)
            except zlib.error as exc:
                if self.opening is not None:  # not zlib-wrapped: raw deflate, from its first byte
                    self.opening, self.z = None, zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                coding = "gzip" if self.gzip else "deflate"
                raise httpx.DecodingError(f"the answer's {coding} data is corrupt: {exc}") from None
            self.opening = None
            if out:
                yield out
            if self.z.eof:
                data = self.z.unused_data
                if not (data and self.gzip):  # after the last member (or deflate's end): ignored, as httpx does
                    return
                self.z = self._new()  # RFC 1952 2.2: a gzip file is a series of members
            else:
                data = self.z.unconsumed_tail

    def end(self) -> Iterator[bytes]:
        """What the coding still holds once the body has ended (bounded by its window)."""
        if self.opening:  # one byte of deflate in all: whatever zlib makes of it
            opening, self.opening = self.opening, None
            yield from self.feed(opening)
        while not self.z.eof:
            out = self.z.decompress(b"", PIECE)
            if not out:
                break
            yield out
        tail = self.z.flush()
        if tail:
            yield tail


def _inflater(name: str, response: httpx.Response) -> _Inflater:
    if name not in ("gzip", "x-gzip", "deflate"):
        raise httpx.DecodingError(
            f"the answer is encoded with {name!r}, which the client does not read (it asks for {ACCEPT_ENCODING})",
            request=response.request,
        )
    return _Inflater(name)


def _through(inflaters: list[_Inflater], chunk: bytes | None, at: int = 0) -> Iterator[bytes]:
    """``chunk`` through the codings from ``at`` on, in turn (None: the body has ended), piece by
    piece: each coding holds one piece of its input at a time."""
    if at == len(inflaters):
        if chunk:
            yield chunk
        return
    inflater = inflaters[at]
    if chunk is not None:
        for piece in inflater.feed(chunk):
            yield from _through(inflaters, piece, at + 1)
        return
    for piece in inflater.end():
        yield from _through(inflaters, piece, at + 1)
    yield from _through(inflaters, None, at + 1)
