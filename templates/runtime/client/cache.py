"""The modern client's result cache (caching.mdx, 2026-07-28).

A complete result of a cacheable request (the revision's method table says which: its result
carries ``ttlMs`` and ``cacheScope``) is kept for its ``ttlMs`` and answers the same request
(method and params; the ``_meta`` a caller adds counts, what the codec stamps on every request
does not) while fresh, without a round trip. A cursor's page is a
request of its own. Not kept: ``ttlMs`` 0 (immediately stale: it also drops what was kept for the
request), an ``input_required`` result, and whatever answers a retry carrying ``inputResponses``
or ``requestState`` (its inputs are not in the key). A TTL is capped at a day.

What a notification says changed is dropped at once: ``notifications/X/list_changed`` every page
of the ``X/...list`` requests (resources: ``resources/list`` and ``resources/templates/list``),
``notifications/resources/updated`` the ``resources/read`` of its URI. A request in flight when
its entries are dropped does not write its answer back. A page refused as invalid params (a
cursor the server no longer knows) drops every page of its method, as the spec asks.

One cache belongs to one client, which has one authorization context, so ``cacheScope`` does
not decide anything here: ``private`` results are shared with nobody. A client whose principal
changes should be a new client, or ``clear`` its cache. Served results are deep copies: the
caller may change what it gets.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from ..codec import COMPLETE
from ..jsonrpc import Notification

MAX_TTL = 24 * 60 * 60.0  # seconds: a longer ttlMs is taken as a day
NOT_IN_THE_KEY = ("inputResponses", "requestState")  # an MRTR retry: its inputs decide the result

Key = tuple[str, bytes]


MAX_BYTES = 32 * 1024 * 1024  # the results kept, as JSON, at most; one past a quarter of it is not kept


@dataclass(frozen=True, slots=True)
class _Entry:
    result: Any
    fresh_until: float
    uri: Any
    size: int  # bytes, as JSON


class ResultCache:
    """Fresh results of one client's cacheable requests, the least recently used dropped past
    ``max_entries`` or ``max_bytes`` (their JSON; a count alone let 256 results of 16 MiB stay a
    day); ``clock`` (seconds, monotonic) can be replaced in tests."""

    def __init__(
        self, max_entries: int = 256, *, max_bytes: int = MAX_BYTES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, not {max_entries}")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.bytes = 0  # what is kept, as JSON
        self._clock = clock
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._generations: dict[str, int] = {}  # per method: bumped when its entries are dropped
        self._epoch = 0  # bumped when everything is dropped

    def __len__(self) -> int:
        return len(self._entries)

    @staticmethod
    def key(method: str, params: Mapping[str, Any] | None) -> Key | None:
        """The request's key: its method and params as the caller gave them (the codec stamps the
        revision and capabilities, the same on every request, later); None for an MRTR retry."""
        material = params or {}
        if any(name in material for name in NOT_IN_THE_KEY):
            return None
        try:
            return method, orjson.dumps(material, option=orjson.OPT_SORT_KEYS)
        except TypeError:  # not JSON (a caller's own object): such a request is not kept
            return None

    def get(self, key: Key) -> Any | None:
        """A copy of the fresh result kept for ``key``, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.fresh_until <= self._clock():
            self._remove(key)
            return None
        self._entries.move_to_end(key)
        return entry.result.model_copy(deep=True)

    def generation(self, method: str) -> tuple[int, int]:
        """Taken before a request is sent, handed to ``put`` with its answer."""
        return self._epoch, self._generations.get(method, 0)

    def put(self, key: Key, result: Any, generation: tuple[int, int]) -> None:
        """Keep ``result`` for its ``ttlMs``, unless it is not to be kept (see the module) or the
        method's entries (or all) were dropped since ``generation`` was taken."""
        method = key[0]
        if self.generation(method) != generation:
            return
        ttl = getattr(result, "ttl_ms", None)
        if getattr(result, "result_type", None) != COMPLETE:
            return
        self._remove(key)  # this answer supersedes what was kept
        if not isinstance(ttl, int | float) or isinstance(ttl, bool) or ttl <= 0:
            return
        size = len(type(result).__pydantic_serializer__.to_json(result, by_alias=True))
        if size > self.max_bytes // 4:
            return
        params = orjson.loads(key[1])
        uri = params.get("uri") if isinstance(params, dict) else None
        fresh_until = self._clock() + min(ttl / 1000, MAX_TTL)
        self._entries[key] = _Entry(result.model_copy(deep=True), fresh_until, uri, size)
        self.bytes += size
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            _, oldest = self._entries.popitem(last=False)
            self.bytes -= oldest.size

    def _remove(self, key: Key) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry.size

    def drop(self, method: str, *, uri: str | None = None) -> None:
        """Drop what is kept for ``method`` (every page; with ``uri``, that URI's only); a request
        of ``method`` in flight will not keep its answer."""
        self._generations[method] = self._generations.get(method, 0) + 1
        for key in [k for k, e in self._entries.items() if k[0] == method and (uri is None or e.uri == uri)]:
            self._remove(key)

    def clear(self) -> None:
        """Drop everything (a restarted server, another principal); a request in flight will
        not keep its answer."""
        self._epoch += 1
        self._entries.clear()
        self.bytes = 0

    def notified(self, note: Notification, methods: Any) -> None:
        """Drop what ``note`` says changed; ``methods`` is the revision's method table (which
        ``X/...list`` requests a ``notifications/X/list_changed`` covers)."""
        name = note.method
        if name == "notifications/resources/updated":
            uri = getattr(note.params, "uri", None)
            if isinstance(uri, str):
                self.drop("resources/read", uri=uri)
            return
        parts = name.split("/")
        if len(parts) != 3 or parts[0] != "notifications" or parts[2] != "list_changed":
            return
        for spec in methods:
            if spec.kind == "request" and spec.cacheable and spec.name.startswith(f"{parts[1]}/"):
                if spec.name.endswith("list"):
                    self.drop(spec.name)
