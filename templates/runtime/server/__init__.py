"""The MCP server runtime: dispatcher, context, dual-era sessions, stdio and ASGI runners.

Subclass a generated ``<package>.vYYYY_MM_DD.server.Server`` and call ``run_stdio()``,
``run_http()`` or ``asgi_app()`` on an instance.
"""

from .context import Context
from .dispatch import Connection, Dispatcher, Reply
from .handler import HandlerBase, unimplemented
from .request_state import RequestStateSealer

__all__ = ["Connection", "Context", "Dispatcher", "HandlerBase", "Reply", "RequestStateSealer", "unimplemented"]
