"""A server's tool surface, taken live or read from a checked-in file.

A snapshot holds every page of ``tools/list``, ``prompts/list`` and
``resources/templates/list``, the protocol revision and server info it was taken with, and
the client capabilities it declared (servers may list some tools only to clients that can
answer elicitation or sampling). It is stored as pretty JSON with sorted keys, tools and
prompts sorted by name, templates by name and URI template, so the same surface always
gives the same bytes, whichever era or key order the server used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import subprocess
import sys
from collections.abc import Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_schema_codegen import __version__
from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.interrupts import commit_point
from mcp_schema_codegen.jsondata import load_json

JSON = Any
FORMAT = 1
FORMAT_KEY = "mcpCodegenSnapshot"

# What ``--capability NAME`` declares, as the runtime's client does for a registered handler.
CAPABILITIES: dict[str, JSON] = {
    "elicitation": {"form": {}},
    "sampling": {},
    "roots": {"listChanged": False},
}


@dataclass(frozen=True)
class Snapshot:
    protocol_version: str
    server_info: dict[str, JSON]
    client_capabilities: dict[str, JSON] = field(default_factory=dict)
    tools: tuple[dict[str, JSON], ...] = ()
    prompts: tuple[dict[str, JSON], ...] = ()
    resource_templates: tuple[dict[str, JSON], ...] = ()

    @classmethod
    def of(
        cls,
        protocol_version: str,
        server_info: Mapping[str, JSON],
        client_capabilities: Mapping[str, JSON],
        tools: Sequence[Mapping[str, JSON]],
        prompts: Sequence[Mapping[str, JSON]] = (),
        resource_templates: Sequence[Mapping[str, JSON]] = (),
    ) -> Snapshot:
        """A snapshot in canonical order (checks names: each tool and prompt once)."""
        snapshot = cls(
            protocol_version,
            dict(server_info),
            dict(client_capabilities),
            tuple(sorted((dict(t) for t in tools), key=lambda t: str(t.get("name")))),
            tuple(sorted((dict(p) for p in prompts), key=lambda p: str(p.get("name")))),
            tuple(
                sorted(
                    (dict(r) for r in resource_templates),
                    key=lambda r: (str(r.get("name")), str(r.get("uriTemplate"))),
                )
            ),
        )
        snapshot.check()
        return snapshot

    def check(self) -> None:
        for kind, items, required in (
            ("tool", self.tools, ("name", "inputSchema")),
            ("prompt", self.prompts, ("name",)),
            ("resource template", self.resource_templates, ("name", "uriTemplate")),
        ):
            seen: set[str] = set()
            for item in items:
                for key in required:
                    if key not in item:
                        raise GeneratorError(f"a {kind} without {key!r}: {json.dumps(item)[:120]}")
                name = item["name"]
                if not isinstance(name, str):
                    raise GeneratorError(f"a {kind} whose name is not a string: {name!r}")
                if kind != "resource template" and name in seen:
                    raise GeneratorError(f"{kind} {name!r} is listed twice")
                seen.add(name)
            for item in items:
                if kind == "tool" and not isinstance(item["inputSchema"], dict):
                    raise GeneratorError(f"tool {item['name']!r}: inputSchema is not an object")
                if kind == "resource template" and not isinstance(item["uriTemplate"], str):
                    raise GeneratorError(f"resource template {item['name']!r}: uriTemplate is not a string")
                if kind == "prompt" and not isinstance(item.get("arguments", []), list):
                    raise GeneratorError(f"prompt {item['name']!r}: arguments is not a list")

    def to_json(self) -> dict[str, JSON]:
        return {
            FORMAT_KEY: FORMAT,
            "protocolVersion": self.protocol_version,
            "serverInfo": self.server_info,
            "clientCapabilities": self.client_capabilities,
            "tools": list(self.tools),
            "prompts": list(self.prompts),
            "resourceTemplates": list(self.resource_templates),
        }

    def dumps(self) -> str:
        """The canonical text: sorted keys, two-space indent, ASCII (any string survives)."""
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=True) + "\n"

    @property
    def sha256(self) -> str:
        return sha256_hex(self.dumps().encode("ascii"))

    @property
    def server_name(self) -> str:
        name = self.server_info.get("name")
        return name if isinstance(name, str) else "(unnamed)"

    @classmethod
    def from_json(cls, data: JSON, source: str) -> Snapshot:
        if not isinstance(data, dict) or data.get(FORMAT_KEY) != FORMAT:
            raise GeneratorError(f"{source} is not an mcp-codegen snapshot (format {FORMAT})")
        try:
            protocol_version = data["protocolVersion"]
            lists = [data[key] for key in ("tools", "prompts", "resourceTemplates")]
        except KeyError as exc:
            raise GeneratorError(f"{source}: the snapshot has no {exc.args[0]!r}") from None
        if not isinstance(protocol_version, str):
            raise GeneratorError(f"{source}: protocolVersion is not a string")
        for key, value in zip(("tools", "prompts", "resourceTemplates"), lists, strict=True):
            if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
                raise GeneratorError(f"{source}: {key} is not a list of objects")
        info, caps = data.get("serverInfo", {}), data.get("clientCapabilities", {})
        if not isinstance(info, dict) or not isinstance(caps, dict):
            raise GeneratorError(f"{source}: serverInfo and clientCapabilities must be objects")
        try:
            return cls.of(protocol_version, info, caps, *lists)
        except GeneratorError as exc:
            raise GeneratorError(f"{source}: {exc.message}") from None


def load_snapshot(path: Path) -> Snapshot:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GeneratorError(f"snapshot {path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise GeneratorError(f"cannot read snapshot {path}: {exc}") from None
    data = load_json(text, str(path))
    return Snapshot.from_json(data, str(path))


def capabilities_for(names: Sequence[str]) -> dict[str, JSON]:
    unknown = [n for n in names if n not in CAPABILITIES]
    if unknown:
        raise GeneratorError(f"unknown client capability {unknown[0]!r}; choose from {', '.join(CAPABILITIES)}")
    return {name: CAPABILITIES[name] for name in sorted(set(names))}


def take_snapshot(
    target: str | Sequence[str],
    capabilities: Mapping[str, JSON],
    timeout: float = 60.0,
    versions: Sequence[str] | None = None,
) -> Snapshot:
    """Connect to a server (stdio command or http(s) URL, either era; ``versions`` limits the
    revisions offered) and snapshot its surface."""
    with _runtime_warnings() as warned:
        try:
            return _run(asyncio.wait_for(_take(target, capabilities, timeout, versions), timeout * 4))
        except GeneratorError:
            raise
        except TimeoutError as exc:  # one request's own timeout (it says which), or the whole snapshot's
            if str(exc):
                raise GeneratorError(f"the server {_describe(target)} timed out: {exc}{_before(warned)}") from None
            message = f"the server {_describe(target)} did not answer within {timeout * 4:.0f} s{_before(warned)}"
            raise GeneratorError(message) from None
        except FileNotFoundError as exc:
            message = f"cannot start the server {_describe(target)}: {exc.strerror}: {exc.filename}"
            raise GeneratorError(message) from None
        except Exception as exc:  # the runtime's TransportError, ServerError, ProtocolError, OSError
            # or the CLI's interrupt, raised inside a library that wrapped it (pydantic-core: the
            # SchemaError of the serializer it was building): the command is interrupted
            commit_point()
            message = f"cannot snapshot the server {_describe(target)}: {type(exc).__name__}: {exc}{_before(warned)}"
            raise GeneratorError(message.replace("\n", " ")) from None


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _runtime_warnings() -> Iterator[list[str]]:
    """What the client runtime warns about while a snapshot is taken (a line from the server it
    refused), kept for the command's one line instead of printed before it."""
    runtime = logging.getLogger("mcpgen")
    handler, propagate = _Warnings(), runtime.propagate
    runtime.addHandler(handler)
    runtime.propagate = False
    try:
        yield handler.messages
    finally:
        runtime.removeHandler(handler)
        runtime.propagate = propagate


def _before(warned: list[str]) -> str:
    if not warned:
        return ""
    more = f" (and {len(warned) - 1} more)" if len(warned) > 1 else ""
    return f"; before that, {warned[-1]}{more}"


def _run(main: Coroutine[Any, Any, Snapshot]) -> Snapshot:
    """``asyncio.run(main)``, quiet about an interrupt. The CLI's SIGINT/SIGTERM handler raises a
    KeyboardInterrupt in whatever code runs; when that is a task, asyncio also keeps it as the task's
    exception and reported it on stderr ("Task exception was never retrieved") when the task was
    collected, after the command's one line. The interrupt itself propagates as before."""

    def report(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if not isinstance(context.get("exception"), KeyboardInterrupt):
            loop.default_exception_handler(context)

    with asyncio.Runner() as runner:
        runner.get_loop().set_exception_handler(report)
        return runner.run(main)


def _describe(target: str | Sequence[str]) -> str:
    return repr(target if isinstance(target, str) else " ".join(target))


async def _take(
    target: str | Sequence[str], capabilities: Mapping[str, JSON], timeout: float, versions: Sequence[str] | None
) -> Snapshot:
    import mcpgen
    from mcpgen._runtime.client import ServerError

    client = await mcpgen.connect(
        target,
        versions=versions,
        client_info={"name": "mcp-codegen", "version": __version__},
        capabilities=dict(capabilities),
        timeout=timeout,
        probe_timeout=timeout,
        stderr=subprocess.PIPE,  # read by the runtime; its end is told when the server exits
        cache=None,
    )

    async def listed(method: str, key: str, optional: bool = True) -> list[dict[str, JSON]]:
        """Every page of a list; one the server declares but does not implement (-32601, a TS SDK
        server declaring ``resources`` without a templates handler) is empty, and said so."""
        try:
            return await _every_page(client, method, key)
        except ServerError as exc:
            if optional and exc.code == METHOD_NOT_FOUND:
                print(f"mcp-codegen: {method}: the server answered -32601 ({exc}); taken as empty", file=sys.stderr)
                return []
            raise GeneratorError(f"the server {_describe(target)} refused {method}: {exc}") from None

    async with client:
        offered = client.capabilities
        tools = await listed("tools/list", "tools", optional=False)
        prompts = await listed("prompts/list", "prompts") if _offers(offered, "prompts") else []
        templates = (
            await listed("resources/templates/list", "resourceTemplates") if _offers(offered, "resources") else []
        )
        info = _data(client.server_info) or {}
        return Snapshot.of(client.version, info, capabilities, tools, prompts, templates)


METHOD_NOT_FOUND = -32601


def _offers(capabilities: Any, name: str) -> bool:
    data = _data(capabilities)
    return isinstance(data, dict) and isinstance(data.get(name), dict)


def _data(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return value


async def _every_page(client: Any, method: str, key: str, max_pages: int = 1000) -> list[dict[str, JSON]]:
    items: list[dict[str, JSON]] = []
    cursor: str | None = None
    for _ in range(max_pages):
        page = _data(await client.request(method, {"cursor": cursor} if cursor is not None else {}))
        items.extend(page.get(key) or [])
        cursor = page.get("nextCursor")
        if cursor is None:
            return items
    raise GeneratorError(f"{method}: more than {max_pages} pages")
