"""The client's exceptions: what a caller can catch and act on.

- ``ServerError``: the server answered with a JSON-RPC error (``code``, ``message``, ``data``).
- ``TransportError``: the channel failed (process exited, connection refused, an HTTP status
  without a JSON-RPC body, a stream that ended early).
- ``RequestTimeout``: no answer within the timeout; the request was cancelled.
- ``AuthorizationError``: the server wants authorization the client could not obtain (no
  ``auth`` configured, or OAuth failed: discovery, a refused grant, a mismatched issuer).
- ``InputRequiredError``: MRTR could not finish (no handler for an input request, or too many rounds).
"""

from __future__ import annotations

from typing import Any

from ..jsonrpc import ProtocolError


class ServerError(ProtocolError):
    """The server answered a request with a JSON-RPC error."""


class TransportError(Exception):
    """The transport failed; ``status`` and ``body`` are set for an HTTP failure."""

    def __init__(self, message: str, *, status: int | None = None, body: bytes | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class RequestTimeout(TransportError, TimeoutError):
    """A request got no answer within its timeout (it has been cancelled)."""


class AuthorizationError(TransportError):
    """The server answered 401/403 and the client could not authorize (the message says why)."""


class InputRequiredError(Exception):
    """An ``input_required`` result the client could not complete; ``result`` is the last one."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result
