"""The MCP client runtime: transports, the session, era behaviour and ``connect``.

Each generated revision package has a ``client.py`` whose ``Client`` adds one typed async
method per request; ``connect`` returns the one of the revision it negotiated. OAuth lives
in ``client.auth`` (imported on demand: it needs the ``auth`` extra). ``HttpTransport`` (and
with it httpx) loads on first use: a client of stdio servers never imports it.
"""

from typing import TYPE_CHECKING, Any

from .base import BaseClient, Subscription
from .connect import VERDICTS, connect, open_client
from .errors import AuthorizationError, InputRequiredError, InvalidAnswer, RequestTimeout, ServerError, TransportError
from .headers import encode_header_value
from .legacy import LegacyClient, LegacyClientSession
from .modern import ModernClient, ModernClientSession
from .session import ClientOptions, ClientSession, Handler, ProgressCallback
from .stdio import StdioTransport
from .tool_client import ToolClient, ToolError, ToolOutputError
from .transport import Transport

if TYPE_CHECKING:
    from .http import HttpTransport


def __getattr__(name: str) -> Any:
    if name == "HttpTransport":
        from .http import HttpTransport

        return HttpTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "VERDICTS",
    "AuthorizationError",
    "BaseClient",
    "ClientOptions",
    "ClientSession",
    "Handler",
    "HttpTransport",
    "InputRequiredError",
    "InvalidAnswer",
    "LegacyClient",
    "LegacyClientSession",
    "ModernClient",
    "ModernClientSession",
    "ProgressCallback",
    "RequestTimeout",
    "ServerError",
    "StdioTransport",
    "Subscription",
    "ToolClient",
    "ToolError",
    "ToolOutputError",
    "Transport",
    "TransportError",
    "connect",
    "encode_header_value",
    "open_client",
]
