"""Typed calls to one server's tools, prompts and resource templates.

The base of the client packages ``mcp-codegen client NAME`` generates from a snapshot of a
server: a generated ``Client`` adds one method per tool (keyword arguments from the tool's
``inputSchema``, a model parsed from ``structuredContent`` when it has an ``outputSchema``)
and binds ``codec``, the client codec of the revision its snapshot was taken with. It wraps
whatever ``connect`` returned, so either era, stdio or HTTP, MRTR and elicitation handlers,
progress and timeouts all work as with the plain client. A result of another revision
than the snapshot's (the server moved on, or ``connect`` was limited to other versions) is
re-read through ``codec``, so the annotations hold on any session.

``isError: true`` raises ``ToolError`` carrying the result's content; a structured result
that does not match the tool's output model raises ``ToolOutputError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any, ClassVar, Self, TypeVar

from pydantic import MISSING, BaseModel, ConfigDict, ValidationError

from ..codec import MAX_REPORTED_STEPS, Codec, dump, shortened

# (re-exported: the typed stubs generated so far import them from here)
from ..uri_template import expand_uri_template as expand_uri_template
from ..uri_template import uri_template_variables as uri_template_variables
from .base import BaseClient
from .session import ProgressCallback, _bounded

Arguments = dict[str, object]
"""A tool's arguments by wire name; model values are sent by alias, unset fields omitted."""

Output = TypeVar("Output", bound=BaseModel)


class ToolModel(BaseModel):
    """The base of generated output and argument models: strict (no coercion), unknown keys
    kept, constructed with Python names, validated and dumped with wire names."""

    model_config = ConfigDict(
        strict=True,
        extra="allow",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        protected_namespaces=(),
    )


def is_none(value: object) -> bool:
    """A generated model's optional field that is not nullable leaves ``None`` out (its ``exclude_if``)."""
    return value is None


def structured_content(result: Any) -> Any:
    """A ``CallToolResult``'s ``structuredContent``, or ``MISSING``: its field, or, in a revision
    whose result has no such field (before 2025-06-18), the wire key among the unknown ones the
    model keeps, where a server speaking a later revision's habits puts it."""
    value = getattr(result, "structured_content", MISSING)
    if value is MISSING:
        extra = getattr(result, "model_extra", None)
        value = extra.get("structuredContent", MISSING) if isinstance(extra, dict) else MISSING
    return value


class ToolError(Exception):
    """A tool answered ``isError: true``: ``tool`` (wire name), ``content``, ``result``."""

    def __init__(self, tool: str, result: Any) -> None:
        self.tool = tool
        self.result = result
        self.content: list[Any] = list(getattr(result, "content", None) or [])
        structured = structured_content(result)
        self.structured_content: Any = None if structured is MISSING else structured
        text = " ".join(str(getattr(block, "text", "")) for block in self.content if getattr(block, "text", None))
        # (the text kept to 16 KiB, as a server's error message is: ``content`` has all of it)
        super().__init__(f"tool {tool!r} failed: {_bounded(text)}" if text else f"tool {tool!r} failed")


class ToolOutputError(Exception):
    """A tool's ``structuredContent`` is missing or does not match its output schema."""

    def __init__(self, tool: str, result: Any, problem: str) -> None:
        super().__init__(f"tool {tool!r}: {problem}")
        self.tool = tool
        self.result = result


def _first_problem(exc: ValidationError) -> str:
    """The first of a validation's errors, and how many more: bounded, where ``str(exc)`` listed
    every error (450 KB of bad items made an 11 MB message)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    first = errors[0]
    where = ".".join(shortened(str(step)) for step in first["loc"][:MAX_REPORTED_STEPS]) or "the value"
    return f"{where}: {shortened(first['msg'])}" + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")


class ToolClient:
    """A connected client, typed for one server. Use it as an async context manager to close it."""

    codec: ClassVar[Codec]
    """The client codec of the revision the generated methods are typed with."""

    def __init__(self, client: BaseClient) -> None:
        self.client = client

    def __repr__(self) -> str:
        return f"<{type(self).__name__} over {self.client!r}>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.client.aclose()

    # -- used by the generated methods -------------------------------------------------------

    async def _call_tool(
        self,
        name: str,
        arguments: Arguments,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """``tools/call`` -> the snapshot revision's ``CallToolResult``; ``isError`` raises ``ToolError``."""
        params = {"name": name, "arguments": plain(arguments)}
        result = self._as_revision(
            "tools/call", await self.client.request("tools/call", params, timeout=timeout, on_progress=on_progress)
        )
        if getattr(result, "is_error", False) is True:
            raise ToolError(name, result)
        return result

    async def _call_tool_for(
        self,
        name: str,
        arguments: Arguments,
        output: type[Output],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Output:
        """``tools/call`` -> ``structuredContent`` validated as ``output`` (by wire names)."""
        result = await self._call_tool(name, arguments, timeout=timeout, on_progress=on_progress)
        structured = structured_content(result)
        if structured is MISSING:
            raise ToolOutputError(
                name, result, "the result has no structuredContent, though the tool declares an output schema"
            )
        try:
            return output.model_validate(structured, by_alias=True, by_name=False)
        except ValidationError as exc:
            raise ToolOutputError(
                name, result, f"structuredContent does not match the output schema: {_first_problem(exc)}"
            ) from None

    async def _get_prompt(self, name: str, arguments: Mapping[str, object], *, timeout: float | None = None) -> Any:
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        return self._as_revision("prompts/get", await self.client.request("prompts/get", params, timeout=timeout))

    async def _read_resource(self, uri: str, *, timeout: float | None = None) -> Any:
        result = await self.client.request("resources/read", {"uri": uri}, timeout=timeout)
        return self._as_revision("resources/read", result)

    def _as_revision(self, method: str, result: Any) -> Any:
        """``result`` (of the session's revision) as the type ``codec``'s revision gives
        ``method``'s result: its wire form, completed with what that era puts on every result
        (as its codec stamps outgoing results: ``resultType``, cache hints), decoded again."""
        spec = self.codec.revision.methods.request(method)
        if spec is None or (isinstance(spec.result, type) and isinstance(result, spec.result)):
            return result
        raw = dump(result)
        self.codec.stamp_result(spec, raw, result)
        return self.codec.decode_result(spec, raw)


class ToolClientPart:
    """A group of typed helpers (prompts, resource templates) sharing one ``ToolClient``."""

    def __init__(self, owner: ToolClient) -> None:
        self._owner = owner


def plain(value: Any) -> Any:
    """Arguments as JSON-ready data: models by alias with unset fields left out."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
