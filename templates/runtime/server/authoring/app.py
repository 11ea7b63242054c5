"""``App``: tools, resources and prompts declared as typed functions, served by a generated handler base.

::

    from mcpgen.v2026_07_28.server import App, Context

    app = App("weather")

    @app.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    app.run_stdio()   # or app.run_http(port=8000)

An ``App`` is bound to one revision's ``Server`` (the generated class each
``<package>.vYYYY_MM_DD.server`` module binds it to), so it serves that revision and every
older one of its registry, both eras, like a hand-written ``Server`` subclass. Its
``list_tools``/``call_tool``/... handlers are mixed into that class: pass ``server=`` a
subclass of it to answer other requests (``complete``) or set class options
(``handler_timeout``, ``ttl_ms``).

Behaviour: ``tools/list`` and the other lists come from the generated surface module (see
``surface``); a tool's arguments are validated before it runs (invalid ones: ``isError: true``
naming each field); an exception becomes ``isError: true`` with its message (``mask_errors``
hides messages but a ``ToolError``'s); a result that does not fit the return annotation is
never sent as success; sync functions run in a worker thread; declarations added or removed
while serving send ``list_changed`` notifications.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, TypeVar, overload

from pydantic import MISSING

from ...codec import shortened
from ...jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError, ResourceNotFoundError
from ..handler import HandlerBase
from ..kernel import stderr
from ..services import Context, InputRequired, cancelled_from_outside
from . import surface as surfaces
from .declarations import Declaration, Prompt, Resource, Tool, UnsafePath
from .signatures import (
    ArgumentsError,
    DeclarationError,
    OutputError,
    RevisionTypes,
    UriTemplate,
    check_shape,
    describe_function,
    prompt_messages,
)
from .signatures import resource_contents as contents_of
from .specs import ToolSpec

F = TypeVar("F", bound=Callable[..., Any])
JSON = Any

TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")  # tools.mdx, Tool names: SHOULD
NOTIFY = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


class ToolError(Exception):
    """Raise in a tool to fail it with this message, shown to the model even with ``mask_errors``."""


class FunctionExited(Exception):
    """An author's function called ``sys.exit`` (or raised ``KeyboardInterrupt`` in its thread):
    its call failed; the server serves on."""


class ResourceNotFound(LookupError):
    """Raise in a resource function: the client gets "Resource not found" with the URI (-32602;
    -32002 on a legacy session of a revision before 2026)."""


def _caller_module(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    name = frame.f_globals.get("__name__")
    return name if isinstance(name, str) else "__main__"


def _options(**given: Any) -> dict[str, JSON]:
    """Decorator options by wire name, unset ones left out."""
    return {k: _plain(v) for k, v in given.items() if v is not None}


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


class App:
    """Typed tools, resources and prompts over a generated handler base (``server_class``)."""

    server_class: ClassVar[type[HandlerBase] | None] = None

    def __init__(
        self,
        name: str,
        *,
        version: str = "0.1.0",
        title: str | None = None,
        instructions: str | None = None,
        mask_errors: bool = False,
        server: type[HandlerBase] | None = None,
        surface: str | None = None,
        max_threads: int = 40,
    ) -> None:
        base = server or type(self).server_class
        if base is None:
            raise TypeError("App needs a handler base: import App from a generated server module, or pass server=")
        if not (isinstance(base, type) and issubclass(base, HandlerBase)):
            raise TypeError(
                f"server= takes a class derived from a generated server module's Server, not {shortened(repr(base))}"
            )
        self.name, self.version, self.title, self.instructions = name, version, title, instructions
        self.mask_errors = mask_errors
        if max_threads < 1:
            raise ValueError("max_threads must be at least 1")
        self.max_threads = max_threads  # sync functions running at once; one that hangs keeps its thread
        self._threads: ThreadPoolExecutor | None = None
        self.base = base
        self.module = _caller_module()
        self.surface_module = surface or surfaces.default_module(self.module)
        self.types = RevisionTypes.of(base.revision)
        self.tools: dict[str, Tool] = {}
        self.prompts: dict[str, Prompt] = {}
        self.resources: dict[str, Resource] = {}  # static, by URI
        self.templates: dict[str, Resource] = {}  # by URI template
        self.stale: list[str] = []  # what differed from the surface module at start
        self._listings: dict[str, list[JSON]] | None = None
        self._entries: dict[str, JSON] = {}
        self._surface: surfaces.Surface | None = None
        self._server: HandlerBase | None = None
        self._notifications: set[asyncio.Task[None]] = set()
        self._loop: asyncio.AbstractEventLoop | None = None  # the serving loop, for changes made in worker threads

    # -- declaring ------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: ToolSpec[Any, Any], /) -> Callable[[F], F]: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured: bool | None = None,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        fn: F | ToolSpec[Any, Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        structured: bool | None = None,
    ) -> F | Callable[[F], F]:
        """Declare a tool: the function's parameters are its arguments, its docstring the description,
        its return annotation the output (``structured``: force structured or unstructured output).
        ``@app.tool(SPEC)`` declares a schema-first tool (see ``specs``): the function takes its
        generated arguments model."""
        spec = fn if isinstance(fn, ToolSpec) else None

        def declare(fn: F) -> F:
            if spec is not None:
                tool = Tool(spec.name, fn, {"definition": dict(spec.definition)}, spec=spec)
                self._add(self.tools, tool.name, tool, "tools")
                return fn
            options = _options(title=title, description=description, annotations=annotations, icons=icons, _meta=meta)
            self.add_tool(fn, name=name, structured=structured, **options)
            return fn

        if fn is None or isinstance(fn, ToolSpec):
            return declare
        return declare(fn)

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Callable[[F], F]: ...
    def prompt(
        self,
        fn: F | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> F | Callable[[F], F]:
        """Declare a prompt: its parameters are the prompt's arguments (strings on the wire, converted
        to the annotations); it returns text, a content block, or a list of messages."""

        def declare(fn: F) -> F:
            self.add_prompt(fn, name=name, **_options(title=title, description=description, icons=icons, _meta=meta))
            return fn

        return declare(fn) if fn is not None else declare

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        allow_paths: bool | Collection[str] = False,
    ) -> Callable[[F], F]:
        """Declare a resource (``uri``) or, when ``uri`` has ``{variables}``, a resource template whose
        variables are the function's parameters. It returns text, bytes, JSON data or contents.
        A URI whose variable holds a NUL, a ``..`` segment, an absolute path or (``{name}``, one
        segment) a ``/`` or ``\\`` is not found, the function not called; ``allow_paths`` (True,
        or variable names) passes those values as they are."""

        def declare(fn: F) -> F:
            options = _options(
                title=title,
                description=description,
                mimeType=mime_type,
                annotations=annotations,
                icons=icons,
                _meta=meta,
            )
            self.add_resource(fn, uri, name=name, allow_paths=allow_paths, **options)
            return fn

        return declare

    def add_tool(
        self, fn: Callable[..., Any], *, name: str | None = None, structured: bool | None = None, **options: Any
    ) -> None:
        """Declare a tool (what ``@app.tool`` does); while serving, clients are told the list changed.
        A name outside tools.mdx's advice (1-128 of ``A-Za-z0-9_-.``) is served, and said on stderr."""
        tool = Tool(name or _name_of(fn, "tool"), fn, dict(options), structured=structured)
        if TOOL_NAME.fullmatch(tool.name) is None:
            print(
                f"mcp: {self.name}: tool name {tool.name!r} is not 1-128 of A-Z a-z 0-9 _ - . "
                "(the spec's advice: clients may refuse it)",
                file=stderr(),
            )
        self._add(self.tools, tool.name, tool, "tools")

    def add_prompt(self, fn: Callable[..., Any], *, name: str | None = None, **options: Any) -> None:
        prompt = Prompt(name or _name_of(fn, "prompt"), fn, dict(options))
        self._add(self.prompts, prompt.name, prompt, "prompts")

    def add_resource(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        allow_paths: bool | Collection[str] = False,
        **options: Any,
    ) -> None:
        template = UriTemplate.parse(uri)
        variables = template.variables if template is not None else ()
        if isinstance(allow_paths, bool):
            allowed = frozenset(variables if allow_paths else ())
        else:
            allowed = frozenset([allow_paths] if isinstance(allow_paths, str) else allow_paths)
        if template is None and (allow_paths is True or allowed):
            raise DeclarationError(f"{describe_function(fn)}: allow_paths is for a resource template; {uri!r} is none")
        if not allowed <= set(variables):
            unknown = ", ".join(sorted(allowed - set(variables)))
            raise DeclarationError(f"{describe_function(fn)}: allow_paths names {unknown}, no variable of {uri!r}")
        resource = Resource(
            name or _name_of(fn, "resource"), fn, dict(options), uri=uri, template=template, allow_paths=allowed
        )
        self._add(self.templates if template is not None else self.resources, uri, resource, "resources")

    def remove_tool(self, name: str) -> None:
        self._remove(self.tools, name, "tools")

    def remove_prompt(self, name: str) -> None:
        self._remove(self.prompts, name, "prompts")

    def remove_resource(self, uri: str) -> None:
        self._remove(self.templates if uri in self.templates else self.resources, uri, "resources")

    def _add(self, table: dict[str, Any], key: str, declaration: Declaration, kind: str) -> None:
        if getattr(declaration, "spec", None) is None:  # (a schema-first tool's handler takes its model)
            check_shape(declaration.fn)  # here, at the decorator, not when the app is first described
        if key in table:
            raise DeclarationError(
                f"{declaration.kind} {key!r} is declared twice ({table[key].function}, {declaration.function})"
            )
        table[key] = declaration
        self._entries.pop(declaration.key, None)
        if self._listings is not None:  # serving: the entry is built now, and listeners told
            try:
                self._relist(kind)
            except BaseException:  # one that cannot be served is not kept: the app serves on as it was
                del table[key]
                self._entries.pop(declaration.key, None)
                raise

    def _remove(self, table: dict[str, Any], key: str, kind: str) -> None:
        declaration = table.pop(key, None)
        if declaration is None:
            raise KeyError(f"nothing declared as {key!r}")
        self._entries.pop(declaration.key, None)
        if self._listings is not None:
            self._relist(kind)

    def _relist(self, kind: str) -> None:
        self._listings = self._build_listings(self._surface, report=False)
        publish = self.server.router.services.subscriptions.publish
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a sync tool in its worker thread, or not serving yet
            if self._loop is not None and not self._loop.is_closed():
                asyncio.run_coroutine_threadsafe(publish(NOTIFY[kind]), self._loop)
            return
        task = loop.create_task(publish(NOTIFY[kind]))
        self._notifications.add(task)
        task.add_done_callback(self._notifications.discard)

    # -- the surface ----------------------------------------------------------------------

    def declarations(self) -> list[Declaration]:
        return [*self.tools.values(), *self.prompts.values(), *self.resources.values(), *self.templates.values()]

    def describe(self) -> dict[str, JSON]:
        """What the generator writes into the surface module: every entry built from the annotations."""
        listings: dict[str, list[JSON]] = {"tools": [], "prompts": [], "resources": [], "resourceTemplates": []}
        tables = (("tools", self.tools), ("prompts", self.prompts), ("resources", self.resources))
        for listing, table in (*tables, ("resourceTemplates", self.templates)):
            listings[listing] = [declaration.entry(self.types) for declaration in table.values()]
        return {
            "module": self.module,
            "surface": self.surface_module,
            "path": str(surfaces.module_path(self.surface_module, self.module) or ""),
            "declarations": {d.key: [d.function, d.fingerprint()] for d in self.declarations()},
            **listings,
        }

    def _build_listings(self, surface: surfaces.Surface | None, *, report: bool) -> dict[str, list[JSON]]:
        """The four lists, in declaration order: generated entries where they are current, else built
        from the functions (``report``: note those in ``stale``). Entries are kept by key."""
        out: dict[str, list[JSON]] = {"tools": [], "prompts": [], "resources": [], "resourceTemplates": []}
        tables = (("tools", self.tools), ("prompts", self.prompts), ("resources", self.resources))
        entries: dict[str, JSON] = {}
        for listing, table in (*tables, ("resourceTemplates", self.templates)):
            for declaration in table.values():
                key = declaration.key
                entry = self._entries.get(key)
                if entry is None and surface is not None:
                    entry = surface.entry(key, declaration.function, declaration.fingerprint())
                    if entry is None and report:
                        self.stale.append(f"{key!r} {'changed' if key in surface.declarations else 'is new'}")
                if entry is None:
                    entry = declaration.entry(self.types)
                entries[key] = entry
                out[listing].append(entry)
        if surface is not None and report:
            self.stale += [f"{key!r} is gone" for key in surface.declarations if key not in entries]
        self._entries = entries
        return out

    def freeze(self) -> None:
        """Read the generated surface (once, when the server is built) and report what is stale."""
        if self._listings is not None:
            return
        surface = self._surface = surfaces.load(self.surface_module)
        self.stale = []
        self._listings = self._build_listings(surface, report=True)
        if surface is None:
            if self.declarations():
                print(
                    f"mcp: {self.name}: no generated surface module {self.surface_module!r}; "
                    "the schemas were built at start-up (run `mcp-codegen regen` to generate them)",
                    file=stderr(),
                )
        elif self.stale:
            print(
                f"mcp: {self.name}: {surface.module} is stale ({'; '.join(self.stale)}); those schemas were built "
                "at start-up (run `mcp-codegen regen` to update it)",
                file=stderr(),
            )

    def surface_drift(self) -> list[str]:
        """What the generated surface module no longer says of the functions, one line each
        (``'add' changed``, ``'x' is new``, ``'y' is gone``, or the module missing while something
        is declared); empty when it is current. A scaffolded project's own test asserts it is
        empty, so a signature changed without ``mcp-codegen regen`` fails the project's tests too."""
        self.freeze()
        if self._surface is None:
            return [f"no generated surface module {self.surface_module!r}"] if self.declarations() else []
        return list(self.stale)

    def listing(self, kind: str) -> list[JSON]:
        if self._listings is None:
            self.freeze()
        assert self._listings is not None
        return self._listings[kind]

    # -- serving --------------------------------------------------------------------------

    @property
    def server(self) -> HandlerBase:
        """The handler (an instance of the bound ``Server`` with this app's handlers), built on first use."""
        if self._server is None:
            self.freeze()
            attributes: dict[str, Any] = {"app": self, "name": self.name, "version": self.version}
            if self.title is not None:
                attributes["title"] = self.title
            if self.instructions is not None:
                attributes["instructions"] = self.instructions
            cls = type(f"{self.base.__name__}App", (AppHandlers, self.base), attributes)
            self._server = cls()
        return self._server

    def run_stdio(self) -> None:
        """Serve newline-delimited JSON-RPC on stdin/stdout until EOF."""
        self.server_to_run().run_stdio()

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve Streamable HTTP with uvicorn at ``http://host:port/mcp``."""
        self.server_to_run().run_http(host, port, **options)

    def server_to_run(self) -> HandlerBase:
        """``server``, or the process's end with one line naming the declaration that cannot be
        served (where it is defined, and why; a traceback into the runtime said no more)."""
        try:
            return self.server
        except DeclarationError as exc:
            raise SystemExit(f"cannot serve the app {self.name!r}: {' '.join(str(exc).split())}") from None

    def asgi_app(self, **options: Any) -> Any:
        """Streamable HTTP as an ASGI app."""
        return self.server.asgi_app(**options)

    async def notify_resource_updated(self, uri: str) -> None:
        await self.server.notify_resource_updated(uri)

    # -- the handlers ---------------------------------------------------------------------

    async def invoke(self, fn: Callable[..., Any], asynchronous: bool, kwargs: dict[str, Any]) -> Any:
        """Call the author's function: an async one on the loop, a sync one in the app's threads
        (``max_threads``, as ``asyncio.to_thread`` with the context); an awaitable it returns is
        awaited. ``sys.exit`` in it (argparse, click) is its failure, not the server's end."""
        try:
            if asynchronous:
                value = await fn(**kwargs)
            else:
                self._loop = loop = asyncio.get_running_loop()
                if self._threads is None:
                    self._threads = ThreadPoolExecutor(self.max_threads, thread_name_prefix="mcp-app")
                call = functools.partial(contextvars.copy_context().run, fn, **kwargs)
                value = await loop.run_in_executor(self._threads, call)
            if inspect.isawaitable(value):  # a sync wrapper of an async function
                value = await value
        except SystemExit as exc:
            raise FunctionExited(f"{describe_function(fn)} exited (SystemExit: {exc.code!r})") from exc
        except KeyboardInterrupt as exc:
            # the function's own: asyncio.run turns the process's SIGINT into a cancellation of
            # its main task, never an exception inside a coroutine (an async tool's ended a stdio
            # server with status 0, unsaid, its requests in flight unanswered; an author review)
            raise FunctionExited(f"{describe_function(fn)} raised KeyboardInterrupt") from exc
        return value

    async def answering(self, what: str, fn: Callable[..., Any], asynchronous: bool, kwargs: dict[str, Any]) -> Any:
        """``invoke`` for a prompt or a resource: what the function raises is the request's -32603,
        with its message unless ``mask_errors`` (a tool's failure is its ``isError`` result instead)."""
        try:
            return await self.invoke(fn, asynchronous, kwargs)
        except (ProtocolError, InputRequired, ResourceNotFound):
            raise
        except Exception as exc:
            log(f"{what} raised")
            message = f"{what} failed" if self.mask_errors else f"{what} failed: {said(exc)}"
            raise ProtocolError(INTERNAL_ERROR, message) from None

    async def call_tool(self, params: Any, ctx: Context) -> Any:
        name = params.name
        tool = self.tools.get(name)
        if tool is None:
            raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}", {"name": name})
        binding = tool.binding(self.types)
        arguments = params.arguments if params.arguments is not MISSING and params.arguments is not None else {}
        try:
            kwargs = binding.arguments.validate(arguments)
        except ArgumentsError as exc:
            return failed(f"Invalid arguments for tool {name!r}:\n{exc.lines()}")
        except Exception as exc:  # the author's validator or default_factory raised: the tool's failure
            log(f"validating the arguments of the tool {name!r} raised")
            if self.mask_errors:
                return failed(f"tool {name!r} failed")
            return failed(f"Invalid arguments for tool {name!r}: {said(exc)}")
        if binding.params.context is not None:
            kwargs[binding.params.context] = ctx
        try:
            value = await self.invoke(tool.fn, binding.params.asynchronous, kwargs)
        except (ProtocolError, InputRequired):
            raise
        except ToolError as exc:  # the author's own message, as long as it is
            return failed(said(exc, limit=None, otherwise=f"tool {name!r} failed"))
        except (Exception, asyncio.CancelledError) as exc:
            if isinstance(exc, asyncio.CancelledError) and cancelled_from_outside():
                raise  # the call was cancelled: nothing to answer
            log(f"the tool {name!r} raised")
            if self.mask_errors:
                return failed(f"tool {name!r} failed")
            return failed(said(exc))
        try:
            return binding.output.result(value)
        except OutputError as exc:
            log(f"the tool {name!r} returned a result that does not fit its return annotation: {exc}", trace=False)
            if self.mask_errors:
                return failed(f"tool {name!r} failed")
            return failed(f"tool {name!r} returned a result that does not fit its return annotation: {exc}")

    async def get_prompt(self, params: Any, ctx: Context) -> Any:
        name = params.name
        prompt = self.prompts.get(name)
        if prompt is None:
            raise ProtocolError(INVALID_PARAMS, f"Unknown prompt: {name}", {"name": name})
        binding = prompt.binding()
        arguments = params.arguments if params.arguments is not MISSING and params.arguments is not None else {}
        try:
            kwargs = binding.arguments.validate(arguments)
        except ArgumentsError as exc:
            raise ProtocolError(
                INVALID_PARAMS, f"Invalid arguments for prompt {name!r}: {exc}", {"name": name}
            ) from None
        if binding.params.context is not None:
            kwargs[binding.params.context] = ctx
        value = await self.answering(f"the prompt {name!r}", prompt.fn, binding.params.asynchronous, kwargs)
        if self.types.passthrough(value, self.types.get_prompt_result):
            return value
        try:
            result: dict[str, JSON] = {"messages": prompt_messages(value, self.types)}
        except OutputError as exc:  # the function's value has no form as messages: the server's failure
            log(f"the prompt {name!r} returned a value with no form as messages: {exc}", trace=False)
            raise ProtocolError(INTERNAL_ERROR, f"the prompt {name!r}: {exc}") from None
        if prompt.description:
            result["description"] = prompt.description
        return result

    async def read_resource(self, params: Any, ctx: Context) -> Any:
        uri = params.uri
        found: tuple[Resource, dict[str, str]] | None = None
        if uri in self.resources:
            found = (self.resources[uri], {})
        else:
            for template in self.templates.values():
                try:
                    values = template.values(uri)
                except UnsafePath:  # not tried against a later template (the official SDK's answer too)
                    raise ResourceNotFoundError(uri) from None
                if values is not None:
                    found = (template, values)
                    break
        if found is None:
            raise ResourceNotFoundError(uri)
        resource, values = found
        binding = resource.binding()
        try:
            kwargs = binding.arguments.validate(values)
        except ArgumentsError as exc:
            raise ProtocolError(INVALID_PARAMS, f"Invalid resource URI: {exc}", {"uri": uri}) from None
        if binding.params.context is not None:
            kwargs[binding.params.context] = ctx
        try:
            value = await self.answering(f"the resource {uri!r}", resource.fn, binding.params.asynchronous, kwargs)
        except ResourceNotFound:
            raise ResourceNotFoundError(uri) from None
        if self.types.passthrough(value, self.types.read_resource_result):
            return value
        try:
            return {"contents": contents_of(value, uri, resource.mime_type, self.types)}
        except OutputError as exc:  # the function's value has no form as contents: the server's failure
            log(f"the resource {uri!r} returned a value that {exc}", trace=False)
            raise ProtocolError(INTERNAL_ERROR, f"the resource {uri!r} {exc}") from None


def _name_of(fn: Callable[..., Any], kind: str) -> str:
    """The name a declaration takes from its function: a lambda has none (it would be listed as
    ``<lambda>``), nor has a callable object without ``__name__``."""
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str) or name == "<lambda>":
        raise DeclarationError(f"{describe_function(fn)}: a {kind} needs a name: pass name=")
    return name


MAX_ERROR_TEXT = 4000  # characters of an exception's message sent to the client


def said(exc: BaseException, *, limit: int | None = MAX_ERROR_TEXT, otherwise: str | None = None) -> str:
    """What ``exc`` says, for the client: its message (``otherwise``, else its class's name, when
    it has none or its ``__str__`` raises), cut to ``limit`` characters."""
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ fails is still the tool's failure, not ours
        text = ""
    text = text or otherwise or type(exc).__name__
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}... ({len(text) - limit} more characters)"
    return text


def failed(message: str) -> dict[str, JSON]:
    """A tool result with ``isError: true``: what the model reads to correct itself."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def log(what: str, trace: bool = True) -> None:
    detail = f":\n{traceback.format_exc()}" if trace else "\n"
    print(f"mcp server: {what}{detail}", file=stderr(), end="")


def one_page(params: Any) -> None:
    """An App lists everything on one page and gives out no cursor: any cursor sent is not one of
    its own, -32602 (pagination.mdx: invalid cursors SHOULD be)."""
    cursor = getattr(params, "cursor", None)
    if isinstance(cursor, str):
        raise ProtocolError(
            INVALID_PARAMS, "Invalid cursor: this server lists everything on one page", {"cursor": cursor}
        )


class AppHandlers:
    """The handlers an ``App`` mixes into its ``Server`` class (``app`` is set on the mixed class)."""

    app: ClassVar[App]

    async def list_tools(self, params: Any, ctx: Context) -> Any:
        self.advertised("tools", "tools/list", ctx)
        one_page(params)
        return {"tools": self.app.listing("tools")}

    async def call_tool(self, params: Any, ctx: Context) -> Any:
        self.advertised("tools", "tools/call", ctx)
        return await self.app.call_tool(params, ctx)

    async def list_prompts(self, params: Any, ctx: Context) -> Any:
        self.advertised("prompts", "prompts/list", ctx)
        one_page(params)
        return {"prompts": self.app.listing("prompts")}

    async def get_prompt(self, params: Any, ctx: Context) -> Any:
        self.advertised("prompts", "prompts/get", ctx)
        return await self.app.get_prompt(params, ctx)

    async def list_resources(self, params: Any, ctx: Context) -> Any:
        self.advertised("resources", "resources/list", ctx)
        one_page(params)
        return {"resources": self.app.listing("resources")}

    async def list_resource_templates(self, params: Any, ctx: Context) -> Any:
        self.advertised("resources", "resources/templates/list", ctx)
        one_page(params)
        return {"resourceTemplates": self.app.listing("resourceTemplates")}

    async def read_resource(self, params: Any, ctx: Context) -> Any:
        self.advertised("resources", "resources/read", ctx)
        return await self.app.read_resource(params, ctx)

    def advertised(self, capability: str, method: str, ctx: Context) -> None:
        """An App answers every list method, so one whose capability it does not advertise (no
        prompts declared: ``prompts/list``) is -32601 on 2026-07-28 (its schema's
        MethodNotFoundError); a legacy session keeps getting the empty list it always did."""
        if ctx.era != "modern":
            return
        app = self.app
        if not (app.resources or app.templates if capability == "resources" else getattr(app, capability)):
            raise ProtocolError(METHOD_NOT_FOUND, f"{method!r}: this server has no {capability}", {"method": method})

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = super().capabilities()  # type: ignore[misc]
        app = self.app
        for cap, present in (
            ("tools", app.tools),
            ("prompts", app.prompts),
            ("resources", app.resources or app.templates),
        ):
            if not present:
                caps.pop(cap, None)
        return caps
