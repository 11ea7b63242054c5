"""The modern era (2026-07-28 and later) on the client: stateless requests, HTTP routing
headers, MRTR driven through the caller's handlers, ``subscriptions/listen``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from ..codec import INPUT_REQUIRED, dump, invalid, shortened
from ..jsonrpc import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Notification,
    ProtocolError,
    RequestId,
)
from ..param_headers import TOKEN as TOKEN  # its home before param_headers.py
from ..param_headers import ToolHeaders, header_problem, tool_headers, value_at
from ..versions import FilterMember
from .base import BaseClient, Subscription, _field, _params, cursor_digest
from .cache import ResultCache
from .errors import InputRequiredError, RequestTimeout, ServerError
from .headers import encode_header_value
from .session import CLOSED, ClientSession, ProgressCallback
from .transport import JSONObject

logger = logging.getLogger(__name__)

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
MAX_REFRESH_PAGES = 1000  # of tools/list read again after a -32020 (a list that never ends)


class ModernClientSession(ClientSession):
    """Every request names its method (and target) in headers; pushed notifications carry a subscription id."""

    answers_refused_requests = False  # stdio.mdx, streamable-http.mdx: a client MUST NOT write responses
    restarts_an_exited_server = True  # stdio.mdx: the client SHOULD restart a server that exited

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tool_headers: dict[str, ToolHeaders] = {}
        wanted = self.options.cached_results
        self.results: ResultCache | None = ResultCache(wanted) if wanted > 0 else None
        self.cached_under = 0  # the transport's grants when the cache's results were fetched

    def results_for_now(self) -> ResultCache | None:
        """The cache, emptied first when the transport's authorization kept a new grant since its
        results came (another sign-in or a step-up: caching.mdx, caches MUST NOT be shared
        across authorization contexts; a refresh of the same grant keeps them)."""
        granted = self.transport.grants()
        if self.results is not None and granted != self.cached_under:
            self.results.clear()
        self.cached_under = granted
        return self.results

    def restarted(self) -> None:
        if self.results is not None:  # another process: its lists and resources may differ
            self.results.clear()

    def _notification(self, note: Notification) -> None:
        if self.results is not None:
            self.results.notified(note, self.codec.methods)
        super()._notification(note)

    def headers_for(self, message: JSONObject) -> dict[str, str]:
        method = message.get("method")
        if not isinstance(method, str):
            return {}
        headers = {"mcp-protocol-version": self.codec.version, "mcp-method": method}
        params = message.get("params")
        if not isinstance(params, dict):
            return headers
        spec = self.codec.methods.request(method)
        key = spec.target_param if spec is not None else None
        if key is not None and isinstance(params.get(key), str):
            headers["mcp-name"] = encode_header_value(params[key])
        if method == "tools/call":
            headers.update(param_headers(self.tool_headers.get(params.get("name", "")), params.get("arguments")))
        return headers

    def sends_cancelled(self) -> bool:
        return not self.transport.cancels_by_closing

    def route(self, notification: Notification) -> RequestId | None:
        meta = dump(notification.meta) if notification.meta is not None else None
        value = meta.get(SUBSCRIPTION_ID_KEY) if isinstance(meta, dict) else None
        return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def param_headers(annotated: ToolHeaders | None, arguments: Any) -> dict[str, str]:
    """``Mcp-Param-{Name}`` for each ``x-mcp-header`` argument present in ``arguments``."""
    headers: dict[str, str] = {}
    if not annotated or not isinstance(arguments, dict):
        return headers
    for path, name in annotated:
        value = value_at(arguments, path)
        if isinstance(value, float) and value.is_integer():  # 42.0 is an integer (JSON Schema): "42"
            value = int(value)
        if isinstance(value, str | int | bool):
            headers[f"mcp-param-{name}"] = encode_header_value(value)
    return headers


class ModernClient(BaseClient):
    """The modern era's behaviour, shared by every modern revision's generated ``Client``."""

    era = "modern"
    session: ModernClientSession

    @property
    def results(self) -> ResultCache | None:
        """The fresh results this client keeps (client/cache.py: ``clear()``, ``drop(method)``);
        None when ``cached_results`` is 0."""
        return self.session.results

    async def _call(
        self,
        method: str,
        params: JSONObject | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """One request; a cacheable one answered from the result cache while fresh (client/cache.py)."""
        session = self.session
        results = session.results_for_now() if not session.closed else None  # a closed client fails, cache or not
        spec = self.revision.methods.request(method)
        key = results.key(method, params) if results is not None and spec is not None and spec.cacheable else None
        if key is not None:
            assert results is not None
            kept = results.get(key)
            if kept is not None:
                # a turn for the other tasks, as a round trip gives them: a loop asking until the
                # answer changes would otherwise never let the reader take the list_changed in
                await asyncio.sleep(0)
                return kept
            generation = results.generation(method)
            granted = session.cached_under
        try:
            result = await super()._call(method, params, timeout=timeout, on_progress=on_progress)
        except ServerError as error:
            if results is not None and error.code == INVALID_PARAMS and "cursor" in (params or {}):
                results.drop(method)  # a cursor it no longer knows: every page goes (caching.mdx)
            if method != "tools/call" or error.code != HEADER_MISMATCH:
                raise
            # The tool's x-mcp-header annotations may have changed: re-list, then retry once.
            await self._refresh_tools(timeout)
            result = await super()._call(method, params, timeout=timeout, on_progress=on_progress)
        if method == "tools/list":
            result = self._check_tools(result)
        if key is not None:
            assert results is not None
            session.results_for_now()  # emptied if a new grant came meanwhile
            if session.cached_under == granted:  # (fetched under another grant than it began: not kept)
                results.put(key, result, generation)
        return result

    async def _refresh_tools(self, timeout: float | None) -> None:
        """Read every page of ``tools/list`` from the server (recording each tool's
        ``x-mcp-header`` arguments); what the cache kept of it goes."""
        if self.session.results is not None:
            self.session.results.drop("tools/list")
        cursor: Any = None
        seen: set[bytes] = set()
        for _ in range(MAX_REFRESH_PAGES):
            page = await self._call("tools/list", {} if cursor is None else {"cursor": cursor}, timeout=timeout)
            following = _field(page, "next_cursor")
            # an empty string is a cursor like any other (pagination.mdx); one seen before leads
            # round in a circle (a server meaning "the end" by it would loop for ever)
            if following is None:
                return
            digest = cursor_digest(following)
            if digest in seen:
                return
            seen.add(digest)
            cursor = following

    def _check_tools(self, result: Any) -> Any:
        """Record each tool's ``x-mcp-header`` arguments; drop tools whose annotations are invalid."""
        tools = _field(result, "tools")
        if not isinstance(tools, list):
            return result
        kept = []
        for tool in tools:
            schema = dump(_field(tool, "input_schema"))
            headers = tool_headers(schema)
            if headers is None:  # streamable-http.mdx: SHOULD log a warning naming the tool and the reason
                why = shortened(header_problem(schema) or "invalid x-mcp-header annotations")
                logger.warning("ignoring tool %s: %s", shortened(repr(tool.name)), why)
                continue
            self.session.tool_headers[tool.name] = headers
            kept.append(tool)
        if len(kept) == len(tools):
            return result
        return result.model_copy(update={"tools": kept})

    async def _mrtr(
        self,
        method: str,
        params: JSONObject | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        input_required: bool = False,
    ) -> Any:
        """Drive MRTR: fulfil ``inputRequests`` through the handlers and retry with the exact
        ``requestState``, at most ``max_input_rounds`` times. ``input_required=True`` returns
        the first ``InputRequiredResult`` instead.
        """
        # a retry is the request as first asked, with this round's answers and state only: a
        # requestState (or inputResponses) the caller passed belongs to the round it came from
        # (mrtr.mdx: a retry MUST NOT carry a requestState the InputRequiredResult did not)
        base = {k: v for k, v in (params or {}).items() if k not in ("requestState", "inputResponses")}
        rounds = self.session.options.max_input_rounds
        for _ in range(rounds + 1):
            result = await self._call(method, params, timeout=timeout, on_progress=on_progress)
            if _field(result, "result_type") != INPUT_REQUIRED or input_required:
                return result
            params = dict(base)
            requests = _field(result, "input_requests") or {}
            if requests:
                params["inputResponses"] = {key: dump(await self._fulfil(r, result)) for key, r in requests.items()}
            state = _field(result, "request_state")
            if state is not None:
                params["requestState"] = state
        raise InputRequiredError(f"{method}: still input_required after {rounds} rounds", result)

    async def _fulfil(self, request: Any, result: Any) -> Any:
        method = request.method
        handler = self.session.options.handlers.get(method)
        if handler is None:
            raise InputRequiredError(f"the server asks for {method!r} and no handler is registered", result)
        params = _field(request, "params")
        answer = await handler(params)
        codec = self.session.codec
        spec = codec.methods.request(method)
        if spec is not None and spec.result is not None:
            try:  # the caller's handler's fault, said as such (it was the retry's "invalid params")
                codec.revision.validate(spec.result, dump(answer))
            except ValidationError as exc:
                raise invalid(
                    "result", exc, code=INTERNAL_ERROR, said=f"the {method} handler's answer is invalid"
                ) from None
        return answer

    def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
        timeout: float | None = None,
        notifications: Mapping[str, Any] | None = None,
    ) -> Subscription:
        """``subscriptions/listen``: waits for the acknowledgement on entry, then yields the
        notifications tagged with this subscription's id; leaving cancels it. ``notifications``
        adds members of the revision's ``SubscriptionFilter`` by wire name (one a newer revision
        adds: ``{"greetingsListChanged": True}``); the keywords set the 2026-07-28 ones.
        """
        wanted: dict[str, Any] = dict(notifications or {})
        for name, value in (
            ("toolsListChanged", tools_list_changed or None),
            ("promptsListChanged", prompts_list_changed or None),
            ("resourcesListChanged", resources_list_changed or None),
            ("resourceSubscriptions", list(resource_subscriptions) or None),
        ):
            if value is not None:
                wanted[name] = value
        session = self.session
        wait = session.options.timeout if timeout is None else timeout

        async def open(sub: Subscription) -> None:
            rid = session.next_id()
            sub.id = rid
            sub.queue = session.add_route(rid)
            try:
                _, future = await session.begin("subscriptions/listen", {"notifications": _params(wanted)}, rid=rid)
            except BaseException:
                session.remove_route(rid)
                raise
            future.add_done_callback(lambda f: sub.queue.put_nowait(_ended(f)))
            sub.request = future
            try:
                try:
                    async with asyncio.timeout(wait):
                        first = await sub.queue.get()
                except TimeoutError:
                    raise RequestTimeout(f"subscriptions/listen was not acknowledged within {wait} s") from None
                if isinstance(first, BaseException):
                    raise first
                if not isinstance(first, Notification) or first.method != "notifications/subscriptions/acknowledged":
                    raise ProtocolError(METHOD_NOT_FOUND, f"expected the acknowledgement, got {first!r}")
            except BaseException:  # no subscription: the request is cancelled and forgotten, not left open
                session.remove_route(rid)
                if not future.done():
                    await asyncio.shield(session.cancel(rid, "no acknowledgement"))
                session.forget(rid)
                raise
            sub.acknowledged = first.params

        async def close(sub: Subscription) -> None:
            if sub.id is None:
                return
            session.remove_route(sub.id)
            future = sub.request
            if future is not None and not future.done():
                await session.cancel(sub.id, "the client stopped listening")
            session.forget(sub.id)

        members = self.registry.entry(self.revision.version).subscription_filter
        subscription = Subscription(open, close, accept=lambda note: agreed(members, subscription.acknowledged, note))
        return subscription


def agreed(members: Mapping[str, FilterMember], acknowledged: Any, note: Notification) -> bool:
    """``note`` is one the acknowledged filter covers (subscriptions.mdx: the client SHOULD check
    the acknowledged filter and handle what it did not agree to gracefully: such a notification is
    dropped, not handed on). ``members`` are the revision's ``SubscriptionFilter`` members
    (``RevisionEntry.subscription_filter``); notifications no member names pass."""
    member = next(((name, m) for name, m in members.items() if m.method == note.method), None)
    if member is None:
        return True
    name, found = member
    ack = dump(getattr(acknowledged, "notifications", None))
    got = found.accepted(ack.get(name) if isinstance(ack, dict) else None)
    keep = bool(got) and (not isinstance(got, list) or getattr(note.params, "uri", None) in got)
    if not keep:
        logger.debug("dropped %s: not in the acknowledged filter", note.method)
    return keep


def _ended(future: Any) -> Any:
    if future.cancelled():
        return CLOSED
    error = future.exception()
    return CLOSED if error is None else error


def discover_facts(result: Any) -> dict[str, Any]:
    """Server info, capabilities and instructions from a ``DiscoverResult``."""
    return {
        "server_info": _field(_field(result, "meta"), "server_info"),
        "capabilities": _field(result, "capabilities"),
        "instructions": _field(result, "instructions"),
        "discovered": result,
    }
