"""What a handler sees besides its params: the request envelope and its side channels."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from pydantic import MISSING

from ...jsonrpc import dumps, notification_envelope
from .auth import Principal

Send = Callable[[bytes], Awaitable[None]]

LOG_LEVELS: dict[str, int] = {
    "debug": 0,
    "info": 1,
    "notice": 2,
    "warning": 3,
    "error": 4,
    "critical": 5,
    "alert": 6,
    "emergency": 7,
}


class Context:
    """One request's context: id, method, envelope, client capabilities, progress, logging.

    ``meta`` is the typed ``RequestMetaObject`` (modern requests, and legacy requests
    converted to the modern types), ``client_capabilities`` the capabilities as a plain dict
    (per request on 2026-07-28, from ``initialize`` on a legacy session), ``era`` says which
    semantics the request arrived with and ``protocol_version`` the exact revision.
    Progress reaches the client only when the request carried a ``progressToken``; log
    messages only when it carried a log level (2026-07-28) or, on a legacy session, at or
    above the ``logging/setLevel`` threshold. ``principal`` is who the request's bearer token
    speaks for on a protected HTTP server (``auth=``), None otherwise.
    """

    __slots__ = (
        "_send",
        "cancelled",
        "client_capabilities",
        "client_info",
        "era",
        "log_level",
        "meta",
        "method",
        "principal",
        "progress_token",
        "protocol_version",
        "request_id",
    )

    def __init__(
        self,
        request_id: str | int,
        method: str,
        *,
        send: Send,
        meta: Any = None,
        protocol_version: str,
        client_capabilities: Any,
        client_info: Mapping[str, Any] | None = None,
        era: Literal["legacy", "modern"] = "modern",
        progress_token: str | int | None = None,
        log_level: str | None = None,
        principal: Principal | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.era = era
        self.progress_token = progress_token
        self.log_level = log_level
        self.principal = principal
        self.cancelled = False
        self._send = send

    def supports(self, capability: str) -> bool:
        """The client declared ``capability`` (``elicitation``, ``sampling``, ``roots``, ...)."""
        caps = self.client_capabilities
        if isinstance(caps, Mapping):
            return caps.get(capability) is not None
        value = getattr(caps, capability, None)
        return value is not None and value is not MISSING

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a request-scoped notification (on HTTP: on this request's response stream)."""
        if not self.cancelled:
            await self._send(dumps(notification_envelope(method, params)))

    async def close_sse_stream(self, retry_ms: int = 1000) -> None:
        """Let go of the connection carrying this request's event stream, asking the client to
        poll: on a legacy HTTP session the server sends a ``retry`` of ``retry_ms`` and closes
        the connection; the request goes on, what it sends is kept in the event store, and the
        client gets it (and the response) by reconnecting with ``Last-Event-ID``, on any worker.
        Elsewhere (stdio, stateless requests, JSON replies) a no-op."""
        close = getattr(self._send, "close_connection", None)
        if close is not None and not self.cancelled:
            await close(retry_ms)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """``notifications/progress`` for this request; a no-op unless it carried a ``progressToken``."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify("notifications/progress", params)

    def logs(self, level: str) -> bool:
        """A message at ``level`` would reach the client."""
        if self.log_level is None:
            return False
        return LOG_LEVELS.get(level, 0) >= LOG_LEVELS.get(self.log_level, 0)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """``notifications/message`` at ``level``, sent only when the client opted in at or below it."""
        if not self.logs(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.notify("notifications/message", params)
