"""``http_bodies``: an answer's content codings undone in bounded pieces.

Identity, gzip (one member or several), deflate (zlib-wrapped, or raw as some servers send it)
and both in a row read back the bytes that were encoded, however the network cut them; no piece
is over ``PIECE`` bytes, so a bomb costs what is read of it; a coding the client does not read, or
corrupt data, is an ``httpx.DecodingError``; what follows the coded data is dropped unread, in
bounded memory; ``bounded``, the runtime clients' response hook, does the same for whoever reads.
"""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
import zlib
from collections.abc import AsyncIterator

import httpx
import pytest
from mcpgen._runtime.http_bodies import ACCEPT_ENCODING, MAX_CODINGS, PIECE, bounded, decoded_pieces

TEXT = b'{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"' + b"hi " * 5000 + b'"}]}}'


class Chunks(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.sent = 0  # chunks handed out so far

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.sent += 1
            yield chunk


def response(body: bytes, coding: str | None, cut: int = 1 << 16) -> tuple[httpx.Response, Chunks]:
    stream = Chunks([body[i : i + cut] for i in range(0, len(body), cut)] or [b""])
    headers = {"content-encoding": coding} if coding is not None else {}
    return httpx.Response(200, headers=headers, stream=stream, request=httpx.Request("POST", "http://x")), stream


async def read(answer: httpx.Response) -> list[bytes]:
    return [piece async for piece in decoded_pieces(answer)]


def deflate(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(6, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


ENCODED = {
    "identity": (None, TEXT),
    "identity named": ("identity", TEXT),
    "gzip": ("gzip", gzip.compress(TEXT)),
    "x-gzip": ("x-gzip", gzip.compress(TEXT)),
    "gzip, three members": ("gzip", gzip.compress(TEXT[:10]) + gzip.compress(TEXT[10:20]) + gzip.compress(TEXT[20:])),
    "deflate (zlib)": ("deflate", deflate(TEXT, zlib.MAX_WBITS)),
    "deflate (raw)": ("Deflate", deflate(TEXT, -zlib.MAX_WBITS)),
    "gzip then deflate": ("gzip, deflate", deflate(gzip.compress(TEXT), zlib.MAX_WBITS)),
    "gzip, trailing garbage dropped": ("gzip", gzip.compress(TEXT) + b"\0\0 garbage"),
    "deflate, trailing garbage dropped": ("deflate", deflate(TEXT, zlib.MAX_WBITS) + b"garbage"),
}


@pytest.mark.parametrize("case", list(ENCODED))
@pytest.mark.parametrize("cut", [1, 7, 1 << 16])
def test_every_coding_reads_back_what_was_encoded_however_the_network_cut_it(case: str, cut: int) -> None:
    coding, body = ENCODED[case]
    pieces = asyncio.run(read(response(body, coding, cut)[0]))
    assert b"".join(pieces) == TEXT
    assert max(map(len, pieces)) <= max(PIECE, cut)


def test_a_bomb_is_inflated_a_piece_at_a_time() -> None:
    """8 MiB from 8 KiB: the reader that stops after four pieces has had four pieces, and the
    network's one chunk stays unread past what those needed."""
    bomb = gzip.compress(b" " * (8 << 20))
    answer, stream = response(bomb, "gzip", cut=len(bomb))

    async def first_pieces() -> list[int]:
        sizes = []
        async for piece in decoded_pieces(answer):
            sizes.append(len(piece))
            if len(sizes) == 4:
                break
        return sizes

    assert asyncio.run(first_pieces()) == [PIECE] * 4
    assert stream.sent == 1


@pytest.mark.parametrize(
    ("coding", "body", "said"),
    [
        ("br", b"\x1b", "encoded with 'br', which the client does not read (it asks for gzip, deflate)"),
        ("gzip, zstd", b"(\xb5/\xfd", "encoded with 'zstd'"),
        (", ".join(["gzip"] * (MAX_CODINGS + 1)), b"", f"names {MAX_CODINGS + 1} content codings; the client undoes 4"),
        ("gzip", b"\x1f\x8b not gzip after all", "the answer's gzip data is corrupt"),
        ("deflate", b"neither zlib nor raw deflate \xff\xff\xff", "the answer's deflate data is corrupt"),
    ],
)
def test_a_coding_the_client_does_not_read_or_corrupt_data_is_a_decoding_error(
    coding: str, body: bytes, said: str
) -> None:
    with pytest.raises(httpx.DecodingError, match=said.replace("(", r"\(").replace(")", r"\)")):
        asyncio.run(read(response(body, coding)[0]))


def test_the_client_asks_only_for_what_it_reads() -> None:
    assert ACCEPT_ENCODING == "gzip, deflate"


class Repeated(httpx.AsyncByteStream):
    """``head``, then ``chunk`` ``times`` times: a long body that is never in memory."""

    def __init__(self, head: bytes, chunk: bytes, times: int) -> None:
        self.head, self.chunk, self.times = head, chunk, times

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.head
        for _ in range(self.times):
            yield self.chunk


@pytest.mark.parametrize("coding", ["deflate", "gzip"])
def test_what_follows_the_coded_data_is_dropped_unread(coding: str) -> None:
    """Found by a review: after a deflate stream's end every later chunk went to zlib, which
    kept it (``unused_data``, copied at every chunk): 24 MiB after a tiny stream held 49 MiB and
    took 3.7 s of CPU, and no count of the decoded answer saw it."""
    body = deflate(TEXT, zlib.MAX_WBITS) if coding == "deflate" else gzip.compress(TEXT)
    answer = httpx.Response(
        200, headers={"content-encoding": coding}, stream=Repeated(body, b"junk" * (1 << 14), 512), request=REQUEST
    )
    tracemalloc.start()
    try:
        pieces = asyncio.run(read(answer))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert b"".join(pieces) == TEXT
    assert peak < 4 << 20, f"{peak >> 20} MiB at the peak for 32 MiB after the data"


REQUEST = httpx.Request("GET", "http://x")


@pytest.mark.parametrize(("status", "limit"), [(200, None), (401, 1 << 20)])
def test_the_hook_inflates_for_any_reader_and_bounds_what_is_read_whole(status: int, limit: int | None) -> None:
    """httpx reads some bodies whole itself (the 401 an auth flow answers with a retry, a redirect
    it follows): the runtime's clients take the codings off in their response hook, so httpx
    decodes nothing, and a body past the hook's limit fails while it is read."""
    bomb = gzip.compress(b" " * (8 << 20))

    async def go() -> bytes | str:
        answer = httpx.Response(status, headers={"content-encoding": "gzip"}, stream=Chunks([bomb]), request=REQUEST)
        await bounded(None, 1 << 20)(answer)
        assert "content-encoding" not in answer.headers
        try:
            return await answer.aread()
        except httpx.ReadError as exc:
            return str(exc)

    tracemalloc.start()
    try:
        got = asyncio.run(go())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    if limit is None:  # a 2xx answer's reader bounds it; read whole here, it is all there
        assert got == b" " * (8 << 20)
    else:
        assert got == f"the answer (HTTP {status}) is larger than {limit} bytes"
        assert peak < 4 << 20, f"{peak >> 20} MiB at the peak"
