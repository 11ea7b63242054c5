"""``connect``: reach any MCP server, modern or legacy, over stdio or Streamable HTTP.

Era detection (spec-eras §3.15): probe with ``server/discover`` at the newest modern
version. A ``DiscoverResult`` means modern; -32022 retries once with a mutual version
(modern if there is one, else legacy); -32020/-32021 are modern errors and raise; any other
error, an HTTP error without a modern JSON-RPC body, a dead process or a timeout means
legacy: ``initialize`` with the highest mutual legacy revision, on a fresh process (the probe
runs on a disposable one, so a server that exits on it strands nothing). The verdict is
cached per server command or HTTP origin.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import IO, Any, Literal

import httpx

from ..codec import Codec
from ..codec_legacy import LegacyCodec
from ..codec_modern import ModernCodec
from ..jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION
from .base import BaseClient, _field
from .errors import AuthorizationError, ServerError, TransportError
from .http import HttpTransport
from .legacy import LegacyClientSession, initialize, initialize_facts
from .modern import ModernClientSession, discover_facts
from .session import ClientOptions, ClientSession, Handler
from .stdio import StdioTransport
from .transport import Transport

PACKAGE = __name__.rsplit("._runtime", 1)[0]
Verdict = tuple[Literal["legacy", "modern"], str]
VERDICTS: dict[str, Verdict] = {}
"""The era verdict per server (command line or HTTP origin), shared by every ``connect``."""


def known_versions() -> dict[str, str]:
    root = importlib.import_module(PACKAGE)
    versions: dict[str, str] = root.VERSIONS
    return versions


def revision_module(version: str, name: str) -> ModuleType:
    return importlib.import_module(f"{PACKAGE}.v{version.replace('-', '_')}.{name}")


def client_codec(version: str, options: ClientOptions) -> Codec:
    revision = revision_module(version, "codec").REVISION
    if known_versions()[version] == "modern":
        return ModernCodec(
            revision,
            "client",
            client_info=dict(options.client_info),
            client_capabilities=options.client_capabilities(),
        )
    return LegacyCodec(revision, "client")


def client_class(version: str) -> type[BaseClient]:
    cls: type[BaseClient] = revision_module(version, "client").Client
    return cls


async def connect(
    target: str | Sequence[str],
    *,
    versions: Sequence[str] | None = None,
    client_info: Mapping[str, Any] | None = None,
    handlers: Mapping[str, Handler] | None = None,
    capabilities: Mapping[str, Any] | None = None,
    timeout: float | None = 60.0,
    probe_timeout: float = 10.0,
    max_input_rounds: int = 10,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stderr: IO[Any] | int | None = None,
    headers: Mapping[str, str] | None = None,
    http_client: httpx.AsyncClient | None = None,
    auth: httpx.Auth | None = None,
    cache: dict[str, Verdict] | None = VERDICTS,
) -> BaseClient:
    """Connect to a server and return the typed client of the negotiated revision.

    ``target`` is an ``http(s)://`` URL or a server command (argument list, or a string
    split like a shell). ``versions`` limits the revisions this client speaks (default:
    all generated). ``handlers`` map ``elicitation/create``, ``sampling/createMessage``,
    ``roots/list`` to callbacks. ``auth`` authorizes HTTP requests (``client.auth.OAuth``:
    OAuth 2.1 when the server answers 401). Use the result as an async context manager.
    Narrow it with ``isinstance(client, <package>.v2026_07_28.client.Client)``.
    """
    known = known_versions()
    wanted = list(versions) if versions is not None else list(known)
    for version in wanted:
        if version not in known:
            raise ValueError(f"unknown MCP revision {version!r}; known: {', '.join(known)}")
    modern = sorted((v for v in wanted if known[v] == "modern"), reverse=True)
    legacy = sorted((v for v in wanted if known[v] == "legacy"), reverse=True)
    options = ClientOptions(
        client_info=dict(client_info) if client_info is not None else ClientOptions().client_info,
        handlers=dict(handlers or {}),
        capabilities=capabilities,
        timeout=timeout,
        max_input_rounds=max_input_rounds,
    )

    def transport() -> Transport:
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            return HttpTransport(target, client=http_client, headers=headers, auth=auth)
        return StdioTransport(target, env=env, cwd=cwd, stderr=stderr)

    key = transport().describe()
    verdict = cache.get(key) if cache is not None else None
    if verdict is not None and verdict[1] in wanted:
        era, version = verdict
        if era == "modern":
            return await open_modern(transport(), version, options, probe_timeout)
        return await open_legacy(transport(), [version, *legacy], options)
    if modern:
        outcome = await probe(transport, modern, options, probe_timeout)
        if isinstance(outcome, BaseClient):
            if cache is not None:
                cache[key] = ("modern", outcome.version)
            return outcome
        legacy = [v for v in legacy if v in outcome] if outcome else legacy
    if not legacy:
        raise TransportError(f"{key}: no mutual MCP revision among {', '.join(wanted)}")
    client = await open_legacy(transport(), legacy, options)
    if cache is not None:
        cache[key] = ("legacy", client.version)
    return client


async def probe(
    transport: Any, modern: list[str], options: ClientOptions, probe_timeout: float
) -> BaseClient | list[str] | None:
    """Try the modern era. A client when the server is modern; otherwise the server's
    supported versions when it listed them (-32022), else None: fall back to legacy.
    """
    channel: Transport = transport()
    session = ModernClientSession(client_codec(modern[0], options), channel, options)
    try:
        await session.start()
        version = modern[0]
        for attempt in range(2):
            try:
                result = await session.request("server/discover", {}, timeout=probe_timeout)
            except ServerError as error:
                if error.code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY):
                    raise
                if error.code != UNSUPPORTED_PROTOCOL_VERSION:
                    break  # not a modern error: a legacy server
                supported = [str(v) for v in (_field(error.data, "supported") or [])]
                mutual = [v for v in modern if v in supported]
                if not mutual or attempt == 1:
                    await session.close()
                    return supported
                version = mutual[0]
                session.codec = client_codec(version, options)
                continue
            except AuthorizationError:
                raise  # no answer without authorization: not an era verdict
            except TransportError:
                break  # timeout, exit, or a non-modern HTTP error: a legacy server
            client_cls = client_class(version)
            return client_cls(session, **discover_facts(result))
    except BaseException:
        await session.close()
        raise
    await session.close()
    return None


async def open_modern(channel: Transport, version: str, options: ClientOptions, timeout: float) -> BaseClient:
    """A modern client at ``version``: ``server/discover`` on ``channel``."""
    session = ModernClientSession(client_codec(version, options), channel, options)
    try:
        await session.start()
        result = await session.request("server/discover", {}, timeout=timeout)
    except BaseException:
        await session.close()
        raise
    return client_class(version)(session, **discover_facts(result))


async def open_legacy(channel: Transport, versions: Sequence[str], options: ClientOptions) -> BaseClient:
    """A legacy client: ``initialize`` asking for ``versions[0]``, accepting any of ``versions``."""
    session = LegacyClientSession(client_codec(versions[0], options), channel, options)
    try:
        await session.start()
        result = await initialize(session, versions[0], options, options.timeout)
        negotiated = str(_field(result, "protocol_version"))
        if negotiated not in versions:
            raise ServerError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"the server chose protocol version {negotiated!r}, which this client does not speak",
                {"supported": list(versions), "requested": negotiated},
            )
        if negotiated != versions[0]:
            session.codec = client_codec(negotiated, options)
        session.negotiated = negotiated
        await session.notify("notifications/initialized")
        await channel.open_event_stream()  # legacy HTTP: the server's own requests and notifications
    except BaseException:
        with contextlib.suppress(Exception):
            await session.close()
        raise
    return client_class(negotiated)(session, **initialize_facts(result))


async def open_client(
    channel: Transport, version: str, options: ClientOptions | None = None, *, timeout: float = 10.0
) -> BaseClient:
    """A client pinned to one revision on a transport you built (no probing, no cache)."""
    options = options or ClientOptions()
    if known_versions()[version] == "modern":
        return await open_modern(channel, version, options, timeout)
    return await open_legacy(channel, [version], options)


__all__ = ["VERDICTS", "ClientSession", "connect", "open_client"]
