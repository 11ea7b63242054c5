"""What every generated client shares: the session, server facts, raw requests, pages, listening."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, ClassVar, Self

from pydantic import MISSING, BaseModel

from ..codec import Revision, dump, shortened
from ..jsonrpc import Notification
from ..versions import VersionRegistry
from .session import CLOSED, ClientSession, ProgressCallback
from .transport import JSONObject

logger = logging.getLogger(__name__)


class Subscription:
    """A stream of pushed notifications: an async context manager and async iterator.

    ``acknowledged`` is the filter the server agreed to (2026-07-28), ``id`` the
    subscription id (the ``subscriptions/listen`` request id). Iteration ends when the
    server closes the subscription gracefully; a transport failure raises.
    """

    def __init__(
        self,
        open: Callable[[Subscription], Awaitable[None]],
        close: Callable[[Subscription], Awaitable[None]],
        accept: Callable[[Notification], bool] | None = None,
    ) -> None:
        self._open = open
        self._close = close
        self._accept = accept
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.id: Any = None
        self.acknowledged: Any = None
        self.request: asyncio.Future[Any] | None = None  # the long-lived subscriptions/listen request

    async def __aenter__(self) -> Self:
        await self._open(self)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._close(self)

    def __aiter__(self) -> AsyncIterator[Notification]:
        return self

    async def __anext__(self) -> Notification:
        while True:
            item = await self.queue.get()
            if item is CLOSED:
                raise StopAsyncIteration
            if isinstance(item, BaseException):
                raise item
            if self._accept is None or self._accept(item):
                return item  # type: ignore[no-any-return]

    async def next(self, timeout: float | None = None) -> Notification:
        """The next notification, waiting at most ``timeout`` seconds (``TimeoutError``)."""
        return await asyncio.wait_for(self.__anext__(), timeout)


class BaseClient:
    """A connected client of one revision. Generated ``Client`` classes add one typed method per request."""

    revision: ClassVar[Revision]
    registry: ClassVar[VersionRegistry]  # the generated package's revisions (their data: filter members)
    era: ClassVar[str]

    def __init__(
        self,
        session: ClientSession,
        *,
        server_info: Any = None,
        capabilities: Any = None,
        instructions: str | None = None,
        discovered: Any = None,
    ) -> None:
        self.session = session
        self.server_info = server_info
        self.capabilities = capabilities
        self.instructions = instructions
        self.discovered = discovered  # the DiscoverResult (modern) or InitializeResult (legacy)

    @property
    def version(self) -> str:
        return self.revision.version

    def __repr__(self) -> str:
        name = _field(self.server_info, "name")
        return f"<{type(self).__name__} {self.version} server={name!r}>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.session.close()

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | BaseModel | None = None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send any request of this revision by wire name; returns the typed result (MRTR driven)."""
        data = dump(params) if params is not None else None
        spec = self.revision.methods.request(method)
        if spec is not None and spec.mrtr:
            return await self._mrtr(method, data, timeout=timeout, on_progress=on_progress)
        return await self._call(method, data, timeout=timeout, on_progress=on_progress)

    async def notify(self, method: str, params: Mapping[str, Any] | BaseModel | None = None) -> None:
        await self.session.notify(method, dump(params) if params is not None else None)

    async def cancel(self, request_id: int, reason: str | None = None) -> None:
        await self.session.cancel(request_id, reason)

    async def send_progress(
        self, progress_token: str | int, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (for a server request this client is working on)."""
        params = _params({"progressToken": progress_token, "progress": progress, "total": total, "message": message})
        await self.session.notify("notifications/progress", params)

    # -- used by the generated methods -------------------------------------------------------

    async def _call(
        self,
        method: str,
        params: JSONObject | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        return await self.session.request(method, params, timeout=timeout, on_progress=on_progress)

    async def _mrtr(
        self,
        method: str,
        params: JSONObject | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        input_required: bool = False,
    ) -> Any:
        """A request that may answer ``input_required`` (2026-07-28); legacy: a plain request."""
        return await self._call(method, params, timeout=timeout, on_progress=on_progress)

    async def _pages(self, method: str, params: JSONObject, *, timeout: float | None = None) -> AsyncIterator[Any]:
        """Every page, following ``nextCursor``. A cursor the server gave before ends the pages
        (with a warning): its pages go round, and following them never ended (a server answering
        ``"nextCursor": "same"`` was asked 15,000 times in 3 s)."""
        cursor: Any = params.get("cursor")
        seen: set[bytes] = set()  # of the cursors' digests (4 MiB cursors held 120 MiB after 30 pages)
        while True:
            page_params = dict(params)
            if cursor is not None:
                page_params["cursor"] = cursor
                seen.add(cursor_digest(cursor))
            page = await self._call(method, page_params, timeout=timeout)
            yield page
            cursor = _field(page, "next_cursor")
            if cursor is None:
                return
            if cursor_digest(cursor) in seen:
                logger.warning(
                    "%s: the server gave cursor %s again; its pages go round, so they end here",
                    method,
                    shortened(repr(cursor)),
                )
                return


def cursor_digest(cursor: Any) -> bytes:
    """What a pager keeps of a cursor it followed, to know it again: a digest, not the text."""
    return hashlib.blake2b(repr(cursor).encode(), digest_size=16).digest()


def _params(fields: Mapping[str, Any]) -> JSONObject:
    """Keyword arguments (by wire name) as params: None means omitted; models become data."""
    return {key: dump(value) for key, value in fields.items() if value is not None}


def _field(model: Any, name: str) -> Any:
    """A model field, None when unset (``MISSING``) or absent."""
    value = getattr(model, name, None)
    return None if value is MISSING else value
