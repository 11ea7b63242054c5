"""``connect``: reach any MCP server, modern or legacy, over stdio or Streamable HTTP.

The revisions a client speaks come from the ``VersionRegistry`` a generated package hands in
(``<package>.connect`` passes its own). Era detection (spec-eras §3.15): probe with
``server/discover`` at the newest modern version. A ``DiscoverResult`` means modern; -32022
names what the server supports, and the client takes the highest mutual revision of either era
(``versions.negotiate``): a modern one is probed once more, a legacy one is initialized;
-32020/-32021 are modern errors and raise; any other error, an HTTP error without a modern
JSON-RPC body, a dead process or a timeout means legacy: ``initialize`` with the highest mutual
legacy revision, on a fresh process (the probe runs on a disposable one, so a server that exits
on it strands nothing). The verdict is cached per server command or HTTP origin (versioning.mdx)
and per set of revisions the client speaks (a verdict reached with fewer revisions says nothing of
what more would reach), and a connection the cached verdict fails to open probes again.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal, TypedDict

from ..codec import DEFAULT_MAX_MESSAGE_SIZE, Codec, shortened
from ..codec_legacy import LegacyCodec
from ..codec_modern import ModernCodec
from ..jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION, ProtocolError
from ..log_levels import RANKS, rank
from ..versions import VersionRegistry, negotiate
from .base import BaseClient, _field
from .errors import AuthorizationError, ResourceMetadataNotFound, ServerError, TransportError
from .legacy import LegacyClientSession, ask_log_level, initialize, initialize_facts
from .modern import ModernClientSession, discover_facts
from .session import ClientOptions, ClientSession, Handler, LogCallback, NotificationCallback
from .stdio import StdioTransport
from .transport import Transport

if TYPE_CHECKING:  # httpx loads with the HTTP transport, when a URL is given: a stdio client never needs it
    import httpx

logger = logging.getLogger(__name__)

MIN_MESSAGE_SIZE = 64 * 1024  # bytes: below this, a server's tools/list page would not fit
Verdict = tuple[Literal["legacy", "modern"], str]
VERDICTS: dict[str, Verdict] = {}
"""The era verdict per server (command line or HTTP origin) and revisions spoken, shared by every ``connect``."""


def verdict_key(server: str, wanted: Sequence[str]) -> str:
    """The cache key of a verdict: the server, and the revisions the client offered it."""
    return f"{server} [{' '.join(sorted(wanted))}]"


class ConnectOptions(TypedDict, total=False):
    """The keyword arguments of ``connect`` besides ``registry`` (a generated package's ``connect`` takes them)."""

    versions: Sequence[str] | None
    client_info: Mapping[str, Any] | None
    handlers: Mapping[str, Handler] | None
    capabilities: Mapping[str, Any] | None
    timeout: float | None
    probe_timeout: float
    max_input_rounds: int
    cached_results: int
    max_message_size: int
    on_log: LogCallback | None
    on_notification: NotificationCallback | None
    log_level: str | None
    env: Mapping[str, str] | None
    cwd: str | os.PathLike[str] | None
    stderr: IO[Any] | int | None
    headers: Mapping[str, str] | None
    http_client: httpx.AsyncClient | None
    auth: httpx.Auth | None
    cache: dict[str, Verdict] | None


class Revisions:
    """The revisions one ``connect`` may speak, from a registry: codecs and client classes."""

    def __init__(self, registry: VersionRegistry, options: ClientOptions) -> None:
        self.registry = registry
        self.options = options

    def codec(self, version: str) -> Codec:
        revision = self.registry.revision(version)
        if self.registry.era(version) == "modern":
            return ModernCodec(
                revision,
                "client",
                client_info=dict(self.options.client_info),
                client_capabilities=self.options.client_capabilities(revision.methods),
                max_message_size=self.options.max_message_size,
                log_level=self.options.log_level,
            )
        return LegacyCodec(revision, "client", max_message_size=self.options.max_message_size)

    def client_class(self, version: str) -> type[BaseClient]:
        cls: type[BaseClient] = self.registry.module(version, "client").Client
        return cls


async def connect(
    target: str | Sequence[str],
    *,
    registry: VersionRegistry,
    versions: Sequence[str] | None = None,
    client_info: Mapping[str, Any] | None = None,
    handlers: Mapping[str, Handler] | None = None,
    capabilities: Mapping[str, Any] | None = None,
    timeout: float | None = 60.0,
    probe_timeout: float = 10.0,
    max_input_rounds: int = 10,
    cached_results: int = 256,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    on_log: LogCallback | None = None,
    on_notification: NotificationCallback | None = None,
    log_level: str | None = None,
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
    split like a shell). ``registry`` holds the revisions this client speaks; ``versions``
    limits them. ``handlers`` map ``elicitation/create``, ``sampling/createMessage``,
    ``roots/list`` to callbacks. ``auth`` authorizes HTTP requests (``client.auth.OAuth``:
    OAuth 2.1 when the server answers 401). ``cached_results``: how many fresh results of
    cacheable requests a modern client keeps for their ``ttlMs`` (``client.results``; 0: none).
    ``max_message_size``: bytes of one message from the server the client takes at most (16 MiB
    by default); a larger answer fails its request (``TransportError``, or ``InvalidAnswer``
    naming the size) and the connection carries on.
    ``on_log`` receives the server's log messages (``notifications/message`` params), one at a
    time, in order; ``log_level`` asks for those at that level and above: on 2026-07-28 in every
    request's ``_meta`` (a server sends none without it), on a legacy session by
    ``logging/setLevel`` after ``initialize`` when the server declares ``logging``.
    ``on_notification`` receives every notification of the server as ``(method, params)``, one
    at a time, in order, after the client's own handling (progress, logs, list changes): also
    one a newer revision adds. A call returns once both callbacks have had what the server sent
    before its answer (within the call's time).
    Use the result as an async context manager. Narrow it with
    ``isinstance(client, <package>.v2026_07_28.client.Client)``.
    """
    if type(max_message_size) is not int or max_message_size < MIN_MESSAGE_SIZE:
        raise ValueError(
            f"max_message_size must be an int of at least {MIN_MESSAGE_SIZE} bytes, not {max_message_size!r}"
        )
    for order in registry.log_levels():  # revisions load lazily: a level one adds is ranked from its entry
        rank(order)
    if log_level is not None and log_level not in RANKS:
        raise ValueError(f"log_level must be one of {', '.join(RANKS)}, not {log_level!r}")
    wanted = list(versions) if versions is not None else list(registry)
    for version in wanted:
        registry.entry(version)  # KeyError naming the known revisions
    modern = [v for v in registry.of_era("modern") if v in wanted]
    legacy = [v for v in registry.of_era("legacy") if v in wanted]
    options = ClientOptions(
        client_info=dict(client_info) if client_info is not None else ClientOptions().client_info,
        handlers=dict(handlers or {}),
        capabilities=capabilities,
        timeout=timeout,
        max_input_rounds=max_input_rounds,
        cached_results=cached_results,
        max_message_size=max_message_size,
        on_log=on_log,
        on_notification=on_notification,
        log_level=log_level,
    )
    revisions = Revisions(registry, options)

    def transport() -> Transport:
        if isinstance(target, str) and target.startswith(("http://", "https://")):
            from .http import HttpTransport

            return HttpTransport(
                target, client=http_client, headers=headers, auth=auth, max_message_size=max_message_size
            )
        return StdioTransport(target, env=env, cwd=cwd, stderr=stderr, line_limit=4 * max_message_size)

    server = transport().describe()
    key = verdict_key(server, wanted)
    verdict = cache.get(key) if cache is not None else None

    def reprobe(failed: Exception) -> None:
        # the cached assumption failed: probe again (versioning.mdx); another endpoint of the
        # origin, or a server upgraded or rolled back meanwhile
        logger.debug(
            "the cached verdict %s for %s failed (%s): probing again", verdict, server, shortened(repr(failed))
        )
        if cache is not None:
            cache.pop(key, None)

    if verdict is not None and verdict[1] in wanted:
        era, version = verdict
        try:
            if era == "modern":
                return await open_modern(transport(), version, revisions, probe_timeout)
            return await open_legacy(transport(), [version, *legacy], revisions)
        except AuthorizationError:
            raise  # no answer without authorization: says nothing of the era
        except TransportError as failed:
            if failed.status is None and era == "legacy":
                raise  # initialize unanswered (a dead server): a probe would wait the same, for nothing
            reprobe(failed)  # a modern verdict's discover unanswered is what a legacy server does
        except (ServerError, ProtocolError) as failed:
            reprobe(failed)
    if modern:
        outcome = await probe(transport, modern, legacy, revisions, probe_timeout)
        if isinstance(outcome, BaseClient):
            if cache is not None:
                cache[key] = ("modern", outcome.version)
            return outcome
        if outcome is not None:  # the server listed what it supports, and no modern revision is mutual
            legacy = [v for v in legacy if v in outcome]
    if not legacy:
        raise TransportError(f"{server}: no mutual MCP revision among {', '.join(wanted)}")
    client = await open_legacy(transport(), legacy, revisions)
    if cache is not None:
        cache[key] = ("legacy", client.version)
    return client


async def probe(
    transport: Any, modern: list[str], legacy: list[str], revisions: Revisions, probe_timeout: float
) -> BaseClient | list[str] | None:
    """Try the modern era. A client when the server is modern and a modern revision is mutual;
    otherwise the versions the server listed (-32022), else None: fall back to legacy.
    """
    channel: Transport = transport()
    options = revisions.options
    session = ModernClientSession(revisions.codec(modern[0]), channel, options)
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
                listed = _field(error.data, "supported")
                if not isinstance(listed, list):
                    break  # a -32022 without the modern error's data (its versions): any other error, legacy
                supported = [v for v in listed if type(v) is str]
                chosen = negotiate([*modern, *legacy], offered=supported)
                if chosen not in modern or attempt == 1:
                    await session.close()
                    return supported
                version = chosen
                session.codec = revisions.codec(version)
                continue
            except ResourceMetadataNotFound:
                break  # a protected server without the metadata every later revision requires: 2025-03-26's
            except AuthorizationError:
                raise  # no answer without authorization: not an era verdict
            except TransportError:
                break  # timeout, exit, or a non-modern HTTP error: a legacy server
            except ProtocolError:
                break  # an answer that is no recognised modern one (an invalid DiscoverResult): "any
                # other error", so legacy (stdio.mdx, Backward Compatibility)
            listed = _field(result, "supported_versions")
            if isinstance(listed, list) and version not in listed and attempt == 0:
                # stdio.mdx: a DiscoverResult means modern: "select a mutually supported version
                # from supportedVersions and continue" (one that lists the probe's own is as probed)
                supported = [v for v in listed if type(v) is str]
                chosen = negotiate([*modern, *legacy], offered=supported)
                if chosen not in modern:
                    await session.close()
                    return supported  # legacy, or nothing mutual: the caller says which
                version = chosen
                session.codec = revisions.codec(version)
                continue
            return revisions.client_class(version)(session, **discover_facts(result))
    except BaseException:
        await session.close()
        raise
    await session.close()
    return None


async def open_modern(channel: Transport, version: str, revisions: Revisions, timeout: float) -> BaseClient:
    """A modern client at ``version``: ``server/discover`` on ``channel``."""
    session = ModernClientSession(revisions.codec(version), channel, revisions.options)
    try:
        await session.start()
        result = await session.request("server/discover", {}, timeout=timeout)
    except BaseException:
        await session.close()
        raise
    return revisions.client_class(version)(session, **discover_facts(result))


async def open_legacy(channel: Transport, versions: Sequence[str], revisions: Revisions) -> BaseClient:
    """A legacy client: ``initialize`` asking for ``versions[0]``, accepting any of ``versions``."""
    options = revisions.options
    session = LegacyClientSession(revisions.codec(versions[0]), channel, options)
    try:
        await session.start()
        result = await initialize(session, versions[0], options, options.timeout)
        answered = _field(result, "protocol_version")
        negotiated = negotiate(versions, offered=[answered])
        if negotiated is None:
            raise ServerError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"the server chose protocol version {shortened(repr(answered))}, not one this client "
                f"offered ({', '.join(versions)}): refused by the client, as a server refuses one",
                {"supported": list(versions), "requested": shortened(answered) if isinstance(answered, str) else None},
            )
        if negotiated != versions[0]:
            session.codec = revisions.codec(negotiated)
        session.negotiated = negotiated
        await session.notify("notifications/initialized")
        await channel.open_event_stream()  # legacy HTTP: the server's own requests and notifications
        await ask_log_level(session, result, options.timeout)
    except BaseException:
        with contextlib.suppress(Exception):
            await session.close()
        raise
    return revisions.client_class(negotiated)(session, **initialize_facts(result))


async def open_client(
    channel: Transport,
    version: str,
    options: ClientOptions | None = None,
    *,
    registry: VersionRegistry,
    timeout: float = 10.0,
) -> BaseClient:
    """A client pinned to one revision of ``registry`` on a transport you built (no probing, no cache)."""
    revisions = Revisions(registry, options or ClientOptions())
    if registry.era(version) == "modern":
        return await open_modern(channel, version, revisions, timeout)
    return await open_legacy(channel, [version], revisions)


__all__ = ["VERDICTS", "ClientSession", "ConnectOptions", "connect", "open_client"]
