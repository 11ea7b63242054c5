"""The transport interface the client session drives: send messages, deliver what arrives.

A transport moves JSON-RPC objects; it knows nothing of MCP methods. What arrives is handed
to a ``Receiver`` as raw bytes (the session decodes them with the revision's codec); a
failure is reported per request (HTTP: one POST failed) or for the whole channel
(``request_id`` None: the process exited, the connection dropped).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, Protocol

from ..jsonrpc import RequestId
from .errors import TransportError

JSONObject = dict[str, Any]


class Receiver(Protocol):
    async def receive(
        self, data: bytes, answer_to: RequestId | None = None, stream_of: RequestId | None = None
    ) -> None:
        """One JSON-RPC message (or batch) as it arrived; ``answer_to``: the request whose whole
        answer it is, when the transport knows (an HTTP POST's JSON body); ``stream_of``: the
        request whose answer stream it came on (an event of an HTTP POST's event stream)."""

    def awaiting(self, request_id: RequestId) -> bool:
        """The request still waits for its response."""

    def transport_failed(self, request_id: RequestId | None, error: TransportError) -> None:
        """A request's exchange failed (``request_id``) or the whole channel did (None)."""

    def unreadable(self, what: str) -> None:
        """Something the server sent was dropped before it could be read (a line too long)."""


class Transport(abc.ABC):
    """One connection to a server. ``start`` before ``send``; ``close`` always."""

    # Closing a request's response stream cancels it (2026 Streamable HTTP); else the
    # session sends ``notifications/cancelled``.
    cancels_by_closing: ClassVar[bool] = False
    kind: ClassVar[str]
    session_id: str | None = None  # the session the server minted (legacy HTTP's Mcp-Session-Id)

    @abc.abstractmethod
    async def start(self, receiver: Receiver) -> None: ...

    @abc.abstractmethod
    async def send(self, message: JSONObject, *, headers: Mapping[str, str] | None = None) -> None:
        """Send one message; a request's answer (and what relates to it) arrives via the receiver."""

    async def abort(self, request_id: RequestId) -> None:
        """Stop receiving for one request (HTTP: close its response stream)."""
        return None

    async def open_event_stream(self) -> None:
        """Open the channel for messages the server sends unprompted (legacy HTTP: GET), returning
        once the server has answered it."""
        return None

    def authorizing(self) -> bool:
        """An authorization of this channel is under way (a user signing in): requests wait for it
        without their time running."""
        return False

    async def authorized(self) -> None:
        """Return once no authorization of this channel is under way."""
        return None

    def authorizations(self) -> int:
        """How many authorizations of this channel have begun, ever."""
        return 0

    def grants(self) -> int:
        """How many new grants (another sign-in, a step-up; not a refresh) this channel's
        authorization has kept, ever: each begins another authorization context."""
        return 0

    def forget_session(self) -> bool:
        """Drop a session the server no longer knows (legacy HTTP 404); False when there is none."""
        return False

    def restartable(self) -> bool:
        """The server is gone in a way a fresh one can replace (a stdio process that exited)."""
        return False

    async def restart(self, receiver: Receiver) -> None:
        """Start a fresh server in place of the one gone (``restartable``)."""
        raise NotImplementedError

    @abc.abstractmethod
    async def close(self) -> None: ...

    def describe(self) -> str:
        """A stable key for caching the era verdict: the command line or the origin."""
        return repr(self)
