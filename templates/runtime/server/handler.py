"""Authoring: the base of every generated handler class (``<package>.vYYYY_MM_DD.server.Server``).

A generated ``Server`` subclasses ``HandlerBase`` with one async method per request the
server answers, each marked ``@unimplemented``; an author overrides the ones to serve.
Unimplemented methods answer -32601, and the server's capabilities follow from which
methods are overridden. The generated class carries its revision and its package's version
registry; the server serves that revision and every older one in the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from ..codec import Revision
from ..method_table import required_wire_names
from ..versions import VersionRegistry
from .router import Router
from .runners import run_http, run_stdio
from .services import Limits
from .services.request_state import DEFAULT_TTL

if TYPE_CHECKING:
    from .services.auth import ResourceServer
    from .transports.asgi import HttpApp

F = TypeVar("F", bound=Callable[..., Any])

UNIMPLEMENTED = "__mcp_unimplemented__"


def unimplemented(fn: F) -> F:
    """Mark a generated handler stub: the server answers -32601 until it is overridden."""
    setattr(fn, UNIMPLEMENTED, True)
    return fn


class HandlerBase:
    """Server identity, cache defaults and capability derivation; the runners start here.

    Class attributes an author may override: ``name``/``version``/``title`` (the
    ``serverInfo``), ``instructions``, ``ttl_ms``/``cache_scope`` (defaults stamped on
    cacheable results that do not set them), ``request_state_key`` (HMAC key for MRTR
    ``requestState``; default: ``$MCP_REQUEST_STATE_KEY`` or a random per-process key),
    ``request_state_ttl`` (seconds a sealed ``requestState`` is accepted; default 600),
    ``handler_timeout`` (seconds a handler may take before the request is answered -32603;
    default: no limit), ``auth`` (a ``ResourceServer``: the HTTP app becomes an OAuth 2.1
    protected resource; see ``server.auth``; default: unprotected; stdio is never protected),
    ``limits`` (what one client may send or hold: sizes, timeouts, sessions, requests in
    flight; see ``Limits`` for each bound and its default), ``redis_url`` (Redis shared by the
    workers of a deployment: the subscription bus, the legacy session store and the SSE event
    store all move there, so any worker serves any request; default: ``$MCP_REDIS_URL``, else
    everything stays in this process; needs the ``redis`` extra).
    """

    revision: ClassVar[Revision]
    registry: ClassVar[VersionRegistry]  # the generated package's revisions: what the server may serve
    era: ClassVar[Literal["legacy", "modern"]]
    handlers: ClassVar[Mapping[str, str]]  # wire method -> handler method name

    name: ClassVar[str] = "mcp-server"
    version: ClassVar[str] = "0.1.0"
    title: ClassVar[str | None] = None
    instructions: ClassVar[str | None] = None
    ttl_ms: ClassVar[int] = 0
    cache_scope: ClassVar[Literal["public", "private"]] = "private"
    request_state_key: ClassVar[bytes | str | None] = None
    request_state_ttl: ClassVar[float] = DEFAULT_TTL
    handler_timeout: ClassVar[float | None] = None
    limits: ClassVar[Limits] = Limits()
    redis_url: str | None = None  # per class, or per instance (before the server runs)
    auth: ResourceServer | None = None  # per class, or per instance (set in __init__)

    _router: Router | None = None

    def implemented(self, method: str) -> bool:
        """The author overrode the handler of wire method ``method``."""
        stub = self.handlers.get(method)
        fn = getattr(type(self), stub, None) if stub is not None else None
        return fn is not None and not getattr(fn, UNIMPLEMENTED, False)

    def server_info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"name": self.name, "version": self.version}
        if self.title:
            info["title"] = self.title
        return info

    def capabilities(self) -> dict[str, Any]:
        """Server capabilities, derived from the implemented handlers (override to add more) by
        what the registry says each stands for (``VersionRegistry.server_capabilities``, the
        overlay's ``capabilities`` as data of the generated package): one whose requests have an
        implemented handler (``logging``, which has none: always), with each flag whose
        notification the runtime sends (``listChanged``, ``subscribe``) or whose request is
        implemented, in any revision the server serves. Each session is told what its own
        revision carries (``services.capabilities.as_spoken``)."""
        methods = self.revision.methods
        offered = self.registry.server_capabilities(self.revision.version)
        requests = {request for cap in offered.values() for request in cap.requests}  # of any served revision
        caps: dict[str, Any] = {}
        for name, cap in offered.items():
            if cap.requests and not any(self.implemented(method) for method in cap.requests):
                continue
            caps[name] = {
                flag: True
                for flag, message in cap.flags.items()
                if self.implemented(message) or (message not in requests and methods.request(message) is None)
            }
        return caps

    # -- runners -------------------------------------------------------------------------

    @property
    def router(self) -> Router:
        """The server's router (built on first use): what every transport hands messages to."""
        if self._router is None:
            self._router = Router(self)
        return self._router

    def run_stdio(self) -> None:
        """Serve newline-delimited JSON-RPC on stdin/stdout until EOF."""
        run_stdio(self.router)

    def asgi_app(self, **options: Any) -> HttpApp:
        """Streamable HTTP as an ASGI app (see ``HttpApp`` for the options; ``auth`` defaults
        to the server's; ``limits`` apply)."""
        options.setdefault("auth", self.auth)
        from .transports.asgi import HttpApp  # not on the stdio path

        return HttpApp(self.router, **options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1, **options: Any) -> None:
        """Serve Streamable HTTP with uvicorn at ``http://host:port/mcp`` (``auth`` defaults to the
        server's); ``workers`` > 1 forks that many worker processes sharing the port (they share
        state through ``redis_url``, which they need) and replaces any that dies (see
        ``runners.Supervisor``). ``ready=callback`` gets the URL once the port listens."""
        options.setdefault("auth", self.auth)
        run_http(self.router, host, port, workers=workers, **options)

    # -- notifications to subscribers -----------------------------------------------------

    async def notify(self, method: str, uri: str | None = None) -> None:
        """Send the notification ``method`` to its subscribers on every worker: one a flag of a
        capability promises in a revision the server serves, or a ``SubscriptionFilter`` member
        opts in to (``notifications/tools/list_changed``; ``notifications/resources/updated``
        with the ``uri`` updated: a notification whose params require a ``uri`` is sent with one,
        any other without). Each session gets it only when it asked for it and its revision has
        it. ``ValueError`` for any other method, or a ``uri`` missing or not wanted."""
        version = self.revision.version
        served = [self.registry.entry(v) for v in self.registry.up_to(version)]
        promised = {m for cap in self.registry.server_capabilities(version).values() for m in cap.flags.values()}
        listed = {member.method: member.uris for entry in served for member in entry.subscription_filter.values()}
        if method not in promised and method not in listed:
            raise ValueError(f"{method} is not a notification a subscriber can ask for")
        spec = self.revision.methods.notification(method)
        named = listed.get(method) or (spec is not None and "uri" in required_wire_names(spec.params))
        if named and uri is None:
            raise ValueError(f"{method} names the URI it is about")
        if not named and uri is not None:
            raise ValueError(f"{method} names no URI")
        await self.router.services.subscriptions.publish(method, uri)

    async def notify_tools_changed(self) -> None:
        await self.notify("notifications/tools/list_changed")

    async def notify_prompts_changed(self) -> None:
        await self.notify("notifications/prompts/list_changed")

    async def notify_resources_changed(self) -> None:
        await self.notify("notifications/resources/list_changed")

    async def notify_resource_updated(self, uri: str) -> None:
        await self.notify("notifications/resources/updated", uri)
