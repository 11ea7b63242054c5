"""The MCP server runtime, in layers; each imports only the ones below it.

Below the server: the wire layer (``jsonrpc``), the era codecs and the version registry.

- ``services``: what sessions share per server: the request ``Context``, the subscription bus,
  ``requestState`` sealing, bearer-token verification (``ResourceServer``, the verifiers), the
  legacy session store, the server's ``Limits`` (later: event store)
- ``kernel``: run one handler: find it, call it within its timeout, turn exceptions into
  JSON-RPC errors, check and seal ``input_required`` results (later: argument validation)
- ``sessions``: ``ModernSession`` (stateless, per request ``_meta``) and ``LegacySession``
  (``initialize``), side by side, each decoding and encoding through its era's codec and
  converting to and from the handler's revision
- ``router``: picks the session for each message of a connection
- ``transports``: stdio and Streamable HTTP (ASGI, optionally an OAuth protected resource);
  ``runners``: this process's stdin/stdout, uvicorn
- ``handler``: authoring; ``HandlerBase``, the base of every generated ``Server``; ``auth``:
  what an author imports to protect a server (needs the ``auth`` extra)

Subclass a generated ``<package>.vYYYY_MM_DD.server.Server`` and call ``run_stdio()``,
``run_http()`` or ``asgi_app()`` on an instance.
"""

from typing import TYPE_CHECKING, Any

from .handler import HandlerBase, unimplemented
from .kernel import Application, Kernel, Reply
from .router import Connection, Router
from .services import Context, Limits, Principal, RequestStateSealer, Services

if TYPE_CHECKING:
    from .services.auth import ResourceServer

__all__ = [
    "Application",
    "Connection",
    "Context",
    "HandlerBase",
    "Kernel",
    "Limits",
    "Principal",
    "Reply",
    "RequestStateSealer",
    "ResourceServer",
    "Router",
    "Services",
    "unimplemented",
]


def __getattr__(name: str) -> Any:
    """``ResourceServer``, imported on first use: a server that is not protected never loads
    ``services.auth`` (its dataclasses and policies cost milliseconds at start)."""
    if name == "ResourceServer":
        from .services import auth

        return getattr(auth, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
