"""HTTP answers read with bounded memory, whoever reads them: content codings undone in pieces.

httpx inflates each chunk it reads in one call, so 64 KiB of gzip from a hostile peer became
64 MiB in memory before a reader could count a byte (a 255 KiB answer took the client to 145 MiB
to refuse it at 16), and httpx reads some bodies whole on its own: the 401 an auth flow answers
with another request, a redirect it follows. Here the raw bytes are inflated at most ``PIECE``
bytes at a time:

- ``decoded_pieces(response)``: a streamed response's body in such pieces, for a reader that
  counts what it keeps (the client transport's answers and event streams, the OAuth exchanges);
- ``bounded(limit, other_limit)``: an httpx response hook for the runtime's own clients. It
  takes the content codings off a response before anything reads it (httpx then decodes
  nothing) and refuses its body past ``limit`` bytes (a 2xx answer; None: its reader bounds
  it) or ``other_limit`` (any other status, which httpx may read whole itself), while it is read.

Both runtimes ask for the codings undone here (``ACCEPT_ENCODING``: gzip and deflate, which
``zlib`` reads; httpx asks for br and zstd too when their packages are installed); an answer in
another, in more than ``MAX_CODINGS``, or corrupt, is an ``httpx.DecodingError``.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import httpx

ACCEPT_ENCODING = "gzip, deflate"
PIECE = 1 << 16  # bytes of decoded answer per step at most
MAX_CODINGS = 4  # content codings one answer may name (each is a decompressor, before a byte is read)


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
    async for piece in _decoded(response.aiter_raw(), _codings(response.headers), _request_of(response)):
        yield piece


def bounded(limit: int | None, other_limit: int | None) -> Callable[[httpx.Response], Awaitable[None]]:
    """An httpx response hook (``event_hooks={"response": [bounded(...)]}``): see the module."""

    async def hook(response: httpx.Response) -> None:
        codings = _codings(response.headers)
        most = limit if 200 <= response.status_code < 300 else other_limit
        if not codings and most is None:
            return
        if codings:  # httpx decodes by these headers, and they no longer describe the body
            del response.headers["content-encoding"]
            if "content-length" in response.headers:
                del response.headers["content-length"]
        response.stream = _Bounded(response.stream, codings, most, response)

    return hook


class _Bounded(httpx.AsyncByteStream):
    def __init__(
        self,
        raw: httpx.SyncByteStream | httpx.AsyncByteStream,
        codings: list[str],
        most: int | None,
        response: httpx.Response,
    ) -> None:
        self.raw, self.codings, self.most, self.response = raw, codings, most, response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self.raw, httpx.AsyncByteStream)
        size = 0
        async for piece in _decoded(aiter(self.raw), self.codings, _request_of(self.response)):
            size += len(piece)
            if self.most is not None and size > self.most:
                status = self.response.status_code
                raise httpx.ReadError(f"the answer (HTTP {status}) is larger than {self.most} bytes")
            yield piece

    async def aclose(self) -> None:
        if isinstance(self.raw, httpx.AsyncByteStream):
            await self.raw.aclose()


def _request_of(response: httpx.Response) -> httpx.Request | None:
    try:
        return response.request
    except RuntimeError:  # a response made without one
        return None


async def _decoded(
    raw: AsyncIterator[bytes], codings: list[str], request: httpx.Request | None
) -> AsyncIterator[bytes]:
    if len(codings) > MAX_CODINGS:
        raise httpx.DecodingError(
            f"the answer names {len(codings)} content codings; the client undoes {MAX_CODINGS} at most",
            request=request,
        )
    inflaters = [_inflater(name, request) for name in reversed(codings)]
    if not inflaters:
        async for chunk in raw:
            yield chunk
        return
    async for chunk in raw:
        for piece in _through(inflaters, chunk):
            yield piece
    for piece in _through(inflaters, None):
        yield piece


def _codings(headers: httpx.Headers) -> list[str]:
    """The content codings applied to the body, in the order they were applied (RFC 9110 8.4)."""
    names = [name.strip().lower() for value in headers.get_list("content-encoding") for name in value.split(",")]
    return [name for name in names if name and name != "identity"]


class _Inflater:
    """One gzip or deflate coding, undone in pieces of at most ``PIECE`` bytes."""

    def __init__(self, name: str) -> None:
        self.gzip = name in ("gzip", "x-gzip")
        self.z = self._new()
        self.ended = False  # the coded data has ended: what follows is dropped unread, as httpx drops it
        self.between: bytes | None = (
            None  # gzip, after a member: the next bytes, until they say whether another follows
        )
        # deflate is zlib-wrapped (RFC 9110 8.4.1.2), but some servers send it raw: the first
        # bytes are kept until the first inflation (of two bytes at least: the zlib header) says
        self.opening: bytes | None = None if self.gzip else b""

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.ended:
            return  # (fed to zlib, it would only pile up in unused_data, copied at every chunk)
        if self.between is not None:
            data, self.between = self.between + data, None
            if not self._next_member(data):
                return
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
                if not self._next_member(data):
                    return
            else:
                data = self.z.unconsumed_tail

    def _next_member(self, data: bytes) -> bool:
        """After the end of a member (gzip: RFC 1952 2.2, a series of members) or of the deflate
        data: whether ``data`` opens another member (the coding is then ready for it); else the
        coded data has ended, or it is too short to tell yet (kept for the next chunk)."""
        if self.gzip and len(data) < 2:
            self.between = data
            return False
        if self.gzip and data.startswith(b"\x1f\x8b"):
            self.z = self._new()
            return True
        self.ended = True
        return False

    def end(self) -> Iterator[bytes]:
        """What the coding still holds once the body has ended (bounded by its window)."""
        if self.opening:  # one byte of deflate in all: whatever zlib makes of it
            opening, self.opening = self.opening, None
            yield from self.feed(opening)
        if self.ended or self.between is not None:
            return
        while not self.z.eof:
            out = self.z.decompress(b"", PIECE)
            if not out:
                break
            yield out
        tail = self.z.flush()
        if tail:
            yield tail


def _inflater(name: str, request: httpx.Request | None) -> _Inflater:
    if name not in ("gzip", "x-gzip", "deflate"):
        raise httpx.DecodingError(
            f"the answer is encoded with {name[:40]!r}, which the client does not read (it asks for {ACCEPT_ENCODING})",
            request=request,
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
