"""What a handler sees besides its params: the request envelope and its side channels."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, overload

from pydantic import MISSING, BaseModel

from ...jsonrpc import dumps, notification_envelope
from ...log_levels import RANKS
from .capabilities import LOG_MESSAGE, PROGRESS
from .inputs import (
    Direct,
    Elicitation,
    InputRound,
    ReplayState,
    Root,
    Sampled,
    elicitation,
    form_schema,
    roots,
    sampled,
    sampling_params,
)
from .principal import Principal

M = TypeVar("M", bound=BaseModel)

Send = Callable[[bytes], Awaitable[None]]
logger = logging.getLogger(__name__)

# LoggingLevel's values, least severe first: schema/overlay.json's log_levels, as the revision
# packages imported rank them (log_levels.py; tests/test_protocol_table.py holds the two together)
LOG_LEVELS = RANKS


def cancelled_from_outside() -> bool:
    """Whether the ``CancelledError`` being handled cancels the running task (the client's
    ``notifications/cancelled``, a timeout, the server stopping), rather than one a handler
    raised itself, which nothing cancelled: a failure like any other, to be answered."""
    task = asyncio.current_task()
    return task is None or task.cancelling() > 0


class Context:
    """One request's context: id, method, envelope, client capabilities, progress, logging.

    ``meta`` is the typed ``RequestMetaObject`` (modern requests, and legacy requests
    converted to the modern types), ``client_capabilities`` the capabilities as a plain dict
    (per request on 2026-07-28, from ``initialize`` on a legacy session), ``era`` says which
    semantics the request arrived with and ``protocol_version`` the exact revision.
    Progress reaches the client only when the request carried a ``progressToken``; log
    messages only when it carried a log level (2026-07-28) or, on a legacy session, at or
    above the ``logging/setLevel`` threshold. ``principal`` is who the request's bearer token
    speaks for on a protected HTTP server (``auth=``), None otherwise.

    ``elicit``, ``sample`` and ``list_roots`` ask the client for input: a real server->client
    request on a legacy session, a multi round-trip (the request is answered ``input_required``
    and the handler runs again on the client's retry) on a modern one; see ``services.inputs``.
    """

    __slots__ = (
        "_inputs",
        "_params",
        "_progressed",
        "_replay",
        "_send",
        "client_capabilities",
        "client_info",
        "direct",
        "era",
        "finished",
        "log_level",
        "meta",
        "method",
        "principal",
        "progress_token",
        "protocol_version",
        "request_id",
    )

    def __init__(  # positional in this order from the sessions (half the cost of keywords, per request)
        self,
        request_id: str | int,
        method: str,
        send: Send,
        protocol_version: str,
        client_capabilities: Any,
        meta: Any = None,
        client_info: Mapping[str, Any] | None = None,
        era: Literal["legacy", "modern"] = "modern",
        progress_token: str | int | None = None,
        log_level: str | None = None,
        principal: Principal | None = None,
        direct: Direct | None = None,
    ) -> None:
        self.request_id = request_id
        self.method = method
        self.meta = meta
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.era = era
        self.progress_token = progress_token
        self.log_level = log_level
        self.principal = principal
        self.finished = False  # answered, cancelled or failed: what it would send now is dropped
        self.direct = direct
        self._send = send
        self._params: Any = None
        self._replay: ReplayState | None = None
        self._inputs: InputRound | None = None
        self._progressed: float | None = None

    def bind(self, params: Any, replay: ReplayState | None = None) -> None:
        """The kernel hands over the request's params (and the opened replay state) before the handler runs."""
        self._params = params
        self._replay = replay
        self._inputs = None

    @property
    def inputs(self) -> InputRound:
        """This request's questions and answers (built on first use)."""
        if self._inputs is None:
            responses = getattr(self._params, "input_responses", None)
            self._inputs = InputRound(
                replay=self._replay,
                responses=None if responses is MISSING or responses is None else responses,
                direct=self.direct,
            )
        return self._inputs

    def supports(self, capability: str) -> bool:
        """The client declared ``capability`` (``elicitation``, ``sampling``, ``roots``, ...)."""
        caps = self.client_capabilities
        if isinstance(caps, Mapping):
            return caps.get(capability) is not None
        value = getattr(caps, capability, None)
        return value is not None and value is not MISSING

    async def notify(self, method: str, params: Mapping[str, Any]) -> None:
        """Send a request-scoped notification (on HTTP: on this request's response stream);
        dropped once the request is ``finished`` (progress.mdx: progress notifications MUST stop
        after completion; a task the handler left running may still hold its context)."""
        if self.finished:
            logger.warning("%s dropped: request %r of %s is finished", method, self.request_id, self.method)
            return
        await self._send(dumps(notification_envelope(method, params)))

    async def close_sse_stream(self, retry_ms: int = 1000) -> None:
        """Let go of the connection carrying this request's event stream, asking the client to
        poll: on a legacy HTTP session the server sends a ``retry`` of ``retry_ms`` and closes
        the connection; the request goes on, what it sends is kept in the event store, and the
        client gets it (and the response) by reconnecting with ``Last-Event-ID``, on any worker.
        Only once an event with an id went out (a 2025-11-25 stream's priming event; on older
        revisions, whose streams are not primed, the first event sent): before that the client
        would have nothing to resume from, and the connection stays. Elsewhere (stdio,
        stateless requests, JSON replies) a no-op."""
        close = getattr(self._send, "close_connection", None)
        if close is not None and not self.finished:
            await close(retry_ms)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """``notifications/progress`` for this request; a no-op unless it carried a ``progressToken``.
        ``progress`` must increase from one report to the next (progress.mdx: MUST); one that does
        not is dropped, with a warning in the server's log."""
        if self.progress_token is None:
            return
        if self._progressed is not None and not progress > self._progressed:
            logger.warning("progress %r dropped: not above the last reported, %r", progress, self._progressed)
            return
        self._progressed = progress
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.notify(PROGRESS, params)

    def logs(self, level: str) -> bool:
        """A message at ``level`` would reach the client; a level with no rank is a ``ValueError``
        (it was ranked as debug: a message the client may not have asked for)."""
        rank = LOG_LEVELS.get(level)
        if rank is None:
            raise ValueError(f"unknown log level {level!r} (one of {', '.join(LOG_LEVELS)})")
        return self.log_level is not None and rank >= LOG_LEVELS.get(self.log_level, 0)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """``notifications/message`` at ``level``, sent only when the client opted in at or below it."""
        if not self.logs(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.notify(LOG_MESSAGE, params)

    # -- input from the client ------------------------------------------------------------

    @overload
    async def elicit(self, message: str, schema: type[M], *, key: str | None = None) -> Elicitation[M]: ...
    @overload
    async def elicit(
        self, message: str, schema: Mapping[str, Any], *, key: str | None = None
    ) -> Elicitation[dict[str, Any]]: ...
    async def elicit(
        self, message: str, schema: type[BaseModel] | Mapping[str, Any], *, key: str | None = None
    ) -> Elicitation[Any]:
        """Ask the user to fill in a form: ``schema`` is a model of primitive fields (or a
        ``requestedSchema`` as JSON); the accepted answer comes back validated as ``data``."""
        params = {"message": message, "requestedSchema": form_schema(schema)}
        return elicitation(await self._ask("elicitation/create", params, key), schema)

    async def elicit_url(
        self, message: str, url: str, elicitation_id: str | None = None, *, key: str | None = None
    ) -> Elicitation[None]:
        """Ask the user to visit ``url`` (URL-mode elicitation); the answer says whether they agreed.

        ``elicitation_id`` goes to a legacy session's client only (2025-11-25 requires one: a new
        one when not given; pass your own to announce the interaction's end later with
        ``notifications/elicitation/complete``); 2026-07-28 has none, a server correlating an
        out-of-band interaction across retries keeps its own identifier in ``requestState``."""
        params = {"mode": "url", "message": message, "url": url}
        if self.direct is not None:  # a legacy session's own request
            params["elicitationId"] = elicitation_id if elicitation_id is not None else uuid.uuid4().hex
        answer = elicitation(await self._ask("elicitation/create", params, key), {})
        return Elicitation(answer.action)

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        key: str | None = None,
        **options: Any,
    ) -> Sampled:
        """Ask the client's LLM for a completion (``options``: ``systemPrompt``, ``temperature``, ... by wire name)."""
        params = sampling_params(messages, max_tokens, options)
        return sampled(await self._ask("sampling/createMessage", params, key))

    async def list_roots(self, *, key: str | None = None) -> list[Root]:
        """The roots the client exposes."""
        return roots(await self._ask("roots/list", {}, key))

    async def _ask(self, method: str, params: dict[str, Any], key: str | None) -> Any:
        # what the client must have declared is checked by the legacy session before it sends
        # (``direct``), and by the kernel for a modern request's input
        return await self.inputs.ask(method, params, key)
