"""``Limits``: every bound the server puts on what one client may send or hold, in one place.

A server class sets them once (``limits = Limits(max_sessions=100)``); the transports, the
runners and the session store read them from there. The defaults are safe for a server on the
open network: each bound keeps one client's memory and time finite without getting in the way
of ordinary traffic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Limits:
    """The server's limits and what a client sees when it goes past one.

    HTTP (the runner's uvicorn and the ASGI app):

    - ``max_header_bytes``: the request line and headers; past it, 431 before the rest is read.
    - ``header_timeout``: seconds a client has to send the request line and headers; then 408
      and the connection is closed (slow-loris).
    - ``max_body_bytes``: the request body; past it, 413.
    - ``body_timeout``: seconds a client has to send the body once the headers are in; then 408.
    - ``keep_alive_timeout``: seconds an idle keep-alive connection stays open between requests.
    - ``max_connections``: connections and requests served at once (uvicorn's
      ``limit_concurrency``); past it, 503 until some finish. None: no limit.
    - ``max_sessions``: legacy sessions (``Mcp-Session-Id``) kept; a new one evicts the session
      idle the longest, whose client then gets 404 and initializes again.
    - ``session_idle_timeout``: seconds a legacy session lives without a request or an open
      stream; then 404. A legacy SSE stream's stored events expire as long after its last one.
    - ``sse_events``: events kept per legacy SSE stream for ``Last-Event-ID`` resumption (the
      newest; a client that fell further behind misses the oldest).
    - ``resume_wait``: seconds a resumed SSE stream waits for a new event before it ends with
      a ``retry`` field, asking the client to poll again.
    - ``sse_ping``: seconds an open SSE stream (a legacy GET stream, a ``subscriptions/listen``,
      a request still running) may stay silent before the server writes a comment line
      (``: ping``), which clients ignore, so proxies and clients that drop idle connections keep it.
    - ``redis_timeout``: seconds one Redis command may take (with a ``redis_url``); a Redis that
      stops answering without closing the connection then gets the request that needed it a
      503, as a lost one does, instead of holding it for as long as Redis stalls.

    stdio:

    - ``max_line_bytes``: one message line; a longer line is answered -32600 (under the id its
      first 4 KiB hold, where clients write it, else without one) and
      skipped up to its newline, holding at most this much of it in memory.

    Both:

    - ``max_inflight``: requests in flight on one stdio connection or one legacy session;
      past it, a request is answered -32600 at once. A batch (2025-03-26) of more messages
      than this is refused whole, with one -32600, before any of it is decoded.
    """

    max_header_bytes: int = 64 * 1024
    header_timeout: float = 10.0
    max_body_bytes: int = 4 * 1024 * 1024
    body_timeout: float = 30.0
    keep_alive_timeout: float = 5.0
    max_connections: int | None = 2048
    max_sessions: int = 10_000
    session_idle_timeout: float = 1800.0
    sse_events: int = 1000
    resume_wait: float = 30.0
    sse_ping: float = 15.0
    redis_timeout: float = 5.0
    max_line_bytes: int = 16 * 1024 * 1024
    max_inflight: int = 256

    def __post_init__(self) -> None:
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is None and spec.name == "max_connections":
                continue
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not number or not (math.isfinite(value) and value > 0):
                raise ValueError(f"Limits.{spec.name} must be a positive number, not {value!r}")
