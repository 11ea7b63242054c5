"""The legacy era's session: what ``initialize`` fixes for the rest of a connection.

From 2024-11-05 to 2025-11-25 the messages carry no protocol version and no capabilities; the
``initialize`` request and its result fix both for the session. ``LegacySession`` records
them, chooses the revision (the highest legacy version both sides support) and hands out the
``LegacyCodec`` of that revision. The modern era has no session: every request carries its
own ``_meta`` envelope.

Server side::

    session = LegacySession("server")
    request = session.codec.decode(line)             # before initialize: the latest revision
    version = session.record_initialize_request(request.params)
    ...                                              # answer with protocolVersion=version
    session.record_initialize_result(result)         # optional: what the server sent
    session.codec.decode(next_line)                  # the negotiated revision from now on

Client side::

    session = LegacySession("client")
    params = {"protocolVersion": session.latest, "capabilities": {...}, "clientInfo": {...}}
    session.codec.encode_request(0, "initialize", params)
    ...
    session.record_initialize_request(typed_params)  # optional: what the client sent
    session.record_initialize_result(response.result)  # raises when the version is not ours
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from pydantic import MISSING

from .codec import DEFAULT_MAX_MESSAGE_SIZE, Revision, Side
from .codec_legacy import LegacyCodec
from .jsonrpc import INVALID_PARAMS, ProtocolError


class InitializeParams(Protocol):
    """What the session reads from any legacy revision's ``InitializeRequestParams``."""

    @property
    def protocol_version(self) -> str: ...
    @property
    def capabilities(self) -> Any: ...
    @property
    def client_info(self) -> Any: ...


class InitializeResult(Protocol):
    """What the session reads from any legacy revision's ``InitializeResult``."""

    @property
    def protocol_version(self) -> str: ...
    @property
    def capabilities(self) -> Any: ...
    @property
    def server_info(self) -> Any: ...
    @property
    def instructions(self) -> Any: ...


def legacy_revisions() -> list[Revision]:
    """The ``Revision`` of every legacy version generated into this package."""
    from .. import VERSIONS, load

    return [load(version).REVISION for version, era in VERSIONS.items() if era == "legacy"]


class LegacySession:
    """One connection's negotiated legacy state, on the client or the server side.

    ``revisions`` are the legacy revisions this side speaks (default: every one generated).
    Until ``initialize`` completes, ``protocol_version`` is None and ``codec`` is the codec of
    the latest of them (enough to exchange ``initialize`` itself).
    """

    def __init__(
        self,
        side: Side,
        revisions: Iterable[Revision] | None = None,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    ) -> None:
        self.side = side
        self.max_message_size = max_message_size
        self._revisions = {r.version: r for r in (legacy_revisions() if revisions is None else revisions)}
        if not self._revisions:
            raise ValueError("a legacy session needs at least one legacy revision")
        self._codecs: dict[str, LegacyCodec] = {}
        self.protocol_version: str | None = None
        self.client_capabilities: Any = None
        self.client_info: Any = None
        self.server_capabilities: Any = None
        self.server_info: Any = None
        self.instructions: str | None = None

    def __repr__(self) -> str:
        return f"LegacySession({self.side!r}, protocol_version={self.protocol_version!r})"

    @property
    def supported(self) -> tuple[str, ...]:
        """The versions this side speaks, oldest first."""
        return tuple(sorted(self._revisions))

    @property
    def latest(self) -> str:
        """The version a client requests in ``initialize``."""
        return self.supported[-1]

    @property
    def initialized(self) -> bool:
        """``initialize`` has completed: the version and both sides' capabilities are known."""
        return self.protocol_version is not None and self.server_capabilities is not None

    @property
    def codec(self) -> LegacyCodec:
        """The codec of the negotiated revision (before negotiation: of the latest one)."""
        return self.codec_for(self.protocol_version or self.latest)

    def codec_for(self, version: str) -> LegacyCodec:
        codec = self._codecs.get(version)
        if codec is None:
            revision = self._revisions[version]
            codec = self._codecs[version] = LegacyCodec(revision, self.side, max_message_size=self.max_message_size)
        return codec

    def choose_version(self, requested: str) -> str:
        """The version to answer a client that requested ``requested``.

        The requested version when this side speaks it; otherwise the newest one older than
        it (a client may speak older versions too); otherwise the latest this side speaks.
        """
        if requested in self._revisions:
            return requested
        older = [v for v in self.supported if v < requested]  # ISO dates order as strings
        return older[-1] if older else self.latest

    def record_initialize_request(self, params: InitializeParams) -> str:
        """Record the client's ``initialize`` params; return the version the server answers with.

        On the server, this also fixes the session's version and so its codec.
        """
        self.client_capabilities = params.capabilities
        self.client_info = params.client_info
        version = self.choose_version(params.protocol_version)
        if self.side == "server":
            self.protocol_version = version
        return version

    def record_initialize_result(self, result: InitializeResult) -> None:
        """Record the server's ``initialize`` result, fixing the session's version.

        A version this side does not speak raises ``ProtocolError`` (-32602, with ``data``
        ``{"supported", "requested"}``): the client must then disconnect.
        """
        version = result.protocol_version
        if version not in self._revisions:
            raise ProtocolError(
                INVALID_PARAMS,
                f"unsupported protocol version {version!r}",
                {"supported": list(self.supported), "requested": version},
            )
        self.protocol_version = version
        self.server_capabilities = result.capabilities
        self.server_info = result.server_info
        instructions = result.instructions
        self.instructions = None if instructions is MISSING else instructions
