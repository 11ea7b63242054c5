"""Runners: serve a ``Router`` from this process, on stdin/stdout or with uvicorn.

On SIGTERM or SIGINT both end open ``subscriptions/listen`` streams (each answered with its
result), stop accepting input and let requests in flight finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from typing import Any

from .router import Router
from .transports.asgi import HttpApp
from .transports.stdio import LINE_LIMIT, serve


async def serve_stdio(router: Router) -> None:
    """Serve ``router`` on this process's stdin and stdout until EOF or a signal."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)

    def shut_down() -> None:  # SIGTERM/SIGINT: end listen streams, stop reading, let requests finish
        router.services.subscriptions.close()
        reader.feed_eof()

    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, shut_down)
    try:
        await serve(router, reader, transport.write)
    finally:
        transport.close()


def run_stdio(router: Router) -> None:
    """Serve ``router`` on stdin/stdout until EOF (blocking)."""
    try:
        asyncio.run(serve_stdio(router))
    except KeyboardInterrupt:
        pass


def run_http(router: Router, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
    """Serve Streamable HTTP with uvicorn at ``http://host:port/mcp`` (blocking); ``options`` go to ``HttpApp``."""
    import uvicorn  # imported here: a stdio server never pays for it

    subscriptions = router.services.subscriptions

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            subscriptions.close()  # open listen streams end, so shutdown need not wait for them
            super().handle_exit(sig, frame)

    config = uvicorn.Config(HttpApp(router, **options), host=host, port=port, log_level="warning", lifespan="off")
    Server(config).run()
