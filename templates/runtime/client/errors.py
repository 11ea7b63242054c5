"""The client's exceptions: what a caller can catch and act on.

- ``ServerError``: the server answered with a JSON-RPC error (``code``, ``message``, ``data``).
- ``InvalidAnswer``: the server answered with what is no response of the revision (a result
  that does not fit its type, both a result and an error, a malformed error): its fault, not an
  error it sent; the message names the first field that failed, ``data["errors"]`` every one.
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


class InvalidAnswer(ProtocolError):
    """The server's answer to a request is no valid response of the session's revision."""

    @classmethod
    def of(cls, error: ProtocolError, method: str | None, version: str) -> InvalidAnswer:
        """The codec's refusal of a response (``code``, ``data`` and ``id`` kept), told as the server's."""
        what = f"the answer to {method}" if method else "an answer"
        errors = error.data.get("errors") if isinstance(error.data, dict) else None
        detail = error.message
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            first = errors[0]
            where = ".".join(str(step) for step in first.get("loc", ())[1:]) or "the result"
            more = len(errors) - 1 + (error.data.get("omitted", 0) if isinstance(error.data, dict) else 0)
            detail = f"{where}: {first.get('msg')}" + (f" (and {more} more)" if more else "")
        return cls(error.code, f"{what} is not valid MCP {version}: {detail}", error.data, id=error.id, kind=error.kind)


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


class ResourceMetadataNotFound(AuthorizationError):
    """No Protected Resource Metadata at any of the places it may be (none was found, not a bad one)."""


class InputRequiredError(Exception):
    """An ``input_required`` result the client could not complete; ``result`` is the last one."""

    def __init__(self, message: str, result: Any = None) -> None:
        super().__init__(message)
        self.result = result
