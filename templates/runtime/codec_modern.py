"""The modern-era codec (2026-07-28 and later): stateless, ``_meta`` on every request."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from pydantic import MISSING, BaseModel

from .codec import (
    CACHE_SCOPE,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    COMPLETE,
    DEFAULT_MAX_MESSAGE_SIZE,
    INPUT_REQUIRED,
    PROTOCOL_VERSION_KEY,
    RESULT_TYPE,
    SERVER_INFO_KEY,
    TTL_MS,
    Codec,
    JSONObject,
    Revision,
    Side,
    dump,
    shortened,
)
from .jsonrpc import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from .log_levels import nearest
from .method_table import MethodSpec

LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"  # a request's level of log messages wanted (logging.mdx)


class ModernCodec(Codec):
    """2026-07-28 and later: stateless. Every request carries the ``_meta`` envelope; results
    carry ``resultType`` (missing means ``complete``), cacheable ones ``ttlMs``/``cacheScope``;
    servers send no requests and clients no responses.

    The codec accepts requests of its own revision only; any other ``protocolVersion`` is
    refused with -32022, whose ``data.supported`` lists ``supported_versions`` (a server
    passes every revision it serves, of either era; default: this one).
    ``client_info``/``client_capabilities`` are stamped on requests a client sends,
    ``server_info`` on results a server sends, ``ttl_ms``/``cache_scope`` on cacheable
    results that lack them.
    """

    era = "modern"

    def __init__(
        self,
        revision: Revision,
        side: Side,
        *,
        supported_versions: Sequence[str] | None = None,
        client_info: Any = None,
        client_capabilities: Any = None,
        server_info: Any = None,
        ttl_ms: int = 0,
        cache_scope: Literal["public", "private"] = "private",
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        log_level: str | None = None,
    ) -> None:
        super().__init__(revision, side, max_message_size=max_message_size)
        # a client's: stamped on every request it sends (logging.mdx); a level this revision lacks
        # (one a newer revision adds) as the nearest it has
        self.log_level = nearest(log_level, revision.log_levels) if log_level is not None else None
        self.supported_versions = tuple(supported_versions or (revision.version,))
        self.client_info = dump(client_info)
        self.client_capabilities = dump(client_capabilities) if client_capabilities is not None else {}
        self.server_info = dump(server_info)
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope

    def receives_responses(self) -> bool:
        return self.side == "client"

    def check_params(self, spec: MethodSpec, raw: JSONObject) -> None:
        if spec.kind == "request":
            self.check_version(raw)

    def check_version(self, raw: JSONObject) -> None:
        meta = raw.get("_meta")
        requested = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
        if type(requested) is str and requested != self.version:
            raise unsupported_protocol_version(self.supported_versions, requested)

    def accepts(self, spec: MethodSpec, params: Any) -> bool:
        if spec.kind != "request":
            return True
        return getattr(getattr(params, "meta", None), "protocol_version", None) == self.version

    def result_type(self, spec: MethodSpec, raw: JSONObject) -> tuple[Any, JSONObject]:
        if RESULT_TYPE not in raw:  # a result from a legacy server: complete
            raw = {**raw, RESULT_TYPE: COMPLETE}
        kind = raw[RESULT_TYPE]  # read raw, before validation
        if kind == COMPLETE:
            if spec.cacheable and self.side == "client":
                raw = cache_hints_read(raw)
            return spec.result, raw
        if kind == INPUT_REQUIRED and spec.mrtr and self.revision.input_required is not None:
            if "inputRequests" not in raw and "requestState" not in raw:
                raise ProtocolError(INVALID_PARAMS, "input_required needs inputRequests or requestState")
            return self.revision.input_required_model(), raw
        raise ProtocolError(INVALID_PARAMS, f"resultType {kind!r} is not valid for {spec.name!r}")

    def _request_stamp(self, spec: MethodSpec, meta: Mapping[str, Any] | None) -> Callable[[JSONObject], None]:
        def stamp(params: JSONObject) -> None:
            params["_meta"] = request_meta(
                self.version, self.client_capabilities, self.client_info, params.get("_meta"), meta
            )
            if self.log_level is not None:  # (a level the caller's own _meta names wins)
                params["_meta"].setdefault(LOG_LEVEL_KEY, self.log_level)

        return stamp

    def adopt_params(self, params: JSONObject, *, capabilities: Any = None, client_info: Any = None) -> JSONObject:
        """Params of another revision with the ``_meta`` envelope this revision requires: keys the
        params carry win, the missing ones come from this revision, ``capabilities`` and ``client_info``
        (JSON data)."""
        caps = capabilities if capabilities is not None else {}
        return {**params, "_meta": request_meta(self.version, caps, client_info, params.get("_meta"))}

    def request_sent_as_is(self, params: BaseModel, meta: Mapping[str, Any] | None) -> bool:
        # a validated params model always holds the two required _meta keys
        given = getattr(params, "meta", MISSING)
        if meta is not None or given is MISSING or self.log_level is not None:
            return False
        return self.client_info is None or getattr(given, "client_info", MISSING) is not MISSING

    def result_members(self, spec: MethodSpec, result: BaseModel) -> JSONObject | None:
        """``stamp_result`` for a typed result, as the members to add: ``_meta`` with the server info
        when the result has no ``_meta`` (an author's ``_meta`` is merged by ``encode_result``), and
        the cache defaults a complete cacheable result leaves unset (the server's ``Result`` classes)."""
        kind = getattr(result, "result_type", MISSING)
        if type(kind) is not str:
            return None
        members: JSONObject = {}
        if self.server_info is not None:
            meta = getattr(result, "meta", MISSING)
            if meta is MISSING:
                members["_meta"] = {SERVER_INFO_KEY: self.server_info}
            elif getattr(meta, "server_info", MISSING) is MISSING:
                return None
        if spec.cacheable and kind == COMPLETE:
            if getattr(result, "ttl_ms", MISSING) is MISSING:
                members[TTL_MS] = self.ttl_ms
            if getattr(result, "cache_scope", MISSING) is MISSING:
                members[CACHE_SCOPE] = self.cache_scope
        return members

    def stamp_result(self, spec: MethodSpec, result: JSONObject, typed: Any) -> None:
        if self.revision.is_input_required(typed):
            result.setdefault(RESULT_TYPE, INPUT_REQUIRED)
        else:
            result.setdefault(RESULT_TYPE, COMPLETE)
        if self.server_info is not None:
            meta = result.setdefault("_meta", {})
            if isinstance(meta, dict):
                meta.setdefault(SERVER_INFO_KEY, self.server_info)
        if spec.cacheable and result[RESULT_TYPE] == COMPLETE:
            result.setdefault(TTL_MS, self.ttl_ms)
            result.setdefault(CACHE_SCOPE, self.cache_scope)


def request_meta(
    version: str, capabilities: Any, client_info: Any, given: Any = None, extra: Mapping[str, Any] | None = None
) -> JSONObject:
    """A request's ``_meta`` envelope: protocol version, client capabilities and info, then the keys
    ``given`` already carried, then ``extra`` (later ones win)."""
    envelope: JSONObject = {PROTOCOL_VERSION_KEY: version, CLIENT_CAPABILITIES_KEY: capabilities}
    if client_info is not None:
        envelope[CLIENT_INFO_KEY] = client_info
    if isinstance(given, dict):
        envelope.update(given)
    if extra is not None:
        envelope.update(dump(extra))
    return envelope


# -- the modern era's typed errors, as the runtime's one exception --------------------------


def unsupported_protocol_version(supported: Sequence[str], requested: str) -> ProtocolError:
    """-32022: the request's ``protocolVersion`` is not one the server speaks; ``data`` lists what it does."""
    return ProtocolError(
        UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
        {"supported": list(supported), "requested": shortened(requested)},  # an echo, cut short
    )


def missing_required_client_capability(
    required: Mapping[str, Any] | BaseModel, message: str = "Missing required client capability"
) -> ProtocolError:
    """-32021: the request needs client capabilities its ``_meta`` did not declare."""
    return ProtocolError(MISSING_REQUIRED_CLIENT_CAPABILITY, message, {"requiredCapabilities": dump(required)})


def header_mismatch(message: str = "Header mismatch") -> ProtocolError:
    """-32020 (Streamable HTTP): the ``MCP-*`` headers disagree with the body, or are missing or malformed."""
    return ProtocolError(HEADER_MISMATCH, message)


def cache_hints_read(raw: JSONObject) -> JSONObject:
    """A cacheable result as a client reads it (caching.mdx): an absent ``ttlMs`` is taken as 0 (a
    client SHOULD assume it), a negative one as 0 (it SHOULD ignore it), and an absent
    ``cacheScope`` as ``private``, the one that shares nothing. A server MUST send both, and
    older ones do not: a ``DiscoverResult`` without them made ``connect`` take a modern server
    for a legacy one."""
    ttl: Any = raw.get(TTL_MS)
    negative = type(ttl) in (int, float) and ttl < 0
    if (ttl is not None and not negative) and CACHE_SCOPE in raw:
        return raw
    read = dict(raw)
    if ttl is None or negative:
        read[TTL_MS] = 0
    read.setdefault(CACHE_SCOPE, "private")
    return read
