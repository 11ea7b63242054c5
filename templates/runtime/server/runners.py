"""Runners: serve a ``Router`` from this process, on stdin/stdout or with uvicorn.

On SIGTERM or SIGINT both end open ``subscriptions/listen`` streams (each answered with its
result), stop accepting input and let requests in flight finish. Both apply the server's
``Limits``: the stdio transport bounds lines and requests in flight; uvicorn runs with
``LimitedHttpToolsProtocol`` (its httptools protocol, bounded: 431 for headers over
``max_header_bytes``, read with bounded memory, 408 for headers not complete within
``header_timeout``), ``limit_concurrency`` and ``timeout_keep_alive`` from the limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import TYPE_CHECKING, Any, ClassVar

from .router import Router
from .services import Limits
from .transports.asgi import HttpApp
from .transports.stdio import READ_CHUNK, serve

if TYPE_CHECKING:
    import uvicorn


async def serve_stdio(router: Router) -> None:
    """Serve ``router`` on this process's stdin and stdout until EOF or a signal."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_CHUNK)  # what is buffered before stdin is paused
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    # replies the client has not read are kept up to one maximal line before input is paused
    transport.set_write_buffer_limits(high=router.limits.max_line_bytes)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def drain() -> None:
        with contextlib.suppress(ConnectionError):  # stdout gone: what is written is dropped
            await writer.drain()

    def shut_down() -> None:  # SIGTERM/SIGINT: end listen streams, stop reading, let requests finish
        router.services.subscriptions.close()
        reader.feed_eof()

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, shut_down)
    try:
        await serve(router, reader, writer.write, drain)
    finally:
        transport.close()


def run_stdio(router: Router) -> None:
    """Serve ``router`` on stdin/stdout until EOF (blocking)."""
    try:
        asyncio.run(serve_stdio(router))
    except KeyboardInterrupt:
        pass


def uvicorn_config(app: HttpApp, host: str, port: int) -> uvicorn.Config:
    """The uvicorn configuration serving ``app`` within its server's ``Limits``."""
    import uvicorn  # imported here: a stdio server never pays for it

    limits = app.limits
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        http=limited_protocol(limits),
        limit_concurrency=limits.max_connections,
        timeout_keep_alive=int(limits.keep_alive_timeout) or 1,
    )


def run_http(router: Router, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
    """Serve Streamable HTTP with uvicorn at ``http://host:port/mcp`` (blocking); ``options`` go to ``HttpApp``."""
    import uvicorn

    subscriptions = router.services.subscriptions

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            subscriptions.close()  # open listen streams end, so shutdown need not wait for them
            super().handle_exit(sig, frame)

    Server(uvicorn_config(HttpApp(router, **options), host, port)).run()


def limited_protocol(limits: Limits) -> type[asyncio.Protocol]:
    """uvicorn's httptools protocol bounded by ``limits`` (a subclass per server)."""
    base = _limited_base()
    return type("LimitedHttpToolsProtocol", (base,), {"limits": limits})


def _limited_base() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class LimitedHttpToolsProtocol(HttpToolsProtocol):
        """Headers over ``max_header_bytes`` get 431 and are fed to the parser at most that many
        bytes at a time, so an oversized header costs bounded memory and time (httptools gathers
        a header in full before handing it over); a connection that has not sent its request
        line and headers within ``header_timeout`` gets 408 and is closed."""

        limits: ClassVar[Limits] = Limits()

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.head = 0  # bytes of the current request line and headers; -1 once they are in
            self.head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.start_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_head_timer()
            super().connection_lost(exc)

        def start_head(self) -> None:
            self.head = 0
            if self.head_timer is None:
                self.head_timer = self.loop.call_later(self.limits.header_timeout, self.head_timed_out)

        def stop_head_timer(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.start_head()

        def on_headers_complete(self) -> None:
            self.head = -1
            self.stop_head_timer()
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            limit = self.limits.max_header_bytes
            while data:
                if self.head < 0:  # a body: uvicorn's own flow control bounds it
                    super().data_received(data)
                    return
                room = limit - self.head
                if room <= 0:
                    self.refuse(431, b"Request Header Fields Too Large")
                    return
                piece, data = data[:room], data[room:]
                self.head += len(piece)
                super().data_received(piece)
                if self.transport.is_closing():
                    return

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.head >= 0:
                self.refuse(408, b"Request Timeout")

        def refuse(self, status: int, reason: bytes) -> None:
            """Answer ``status`` and close, unless a response is under way (then just close)."""
            self.stop_head_timer()
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete:
                head = b"HTTP/1.1 %d %s\r\ncontent-type: text/plain\r\ncontent-length: %d\r\nconnection: close\r\n\r\n"
                self.transport.write(head % (status, reason, len(reason)) + reason)
            self.transport.close()

    return LimitedHttpToolsProtocol
