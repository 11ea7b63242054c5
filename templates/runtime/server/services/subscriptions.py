"""Server-pushed notifications: ``subscriptions/listen`` streams (2026-07-28) and legacy sessions."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ...jsonrpc import dumps, notification_envelope

Send = Callable[[bytes], Awaitable[None]]

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
# notification method -> the SubscriptionFilter flag that opts in to it
FILTER_FLAG: dict[str, str] = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
RESOURCE_UPDATED = "notifications/resources/updated"


class Listener:
    """One open ``subscriptions/listen`` stream: its id, the honoured filter and where to send."""

    __slots__ = ("filter", "id", "send")

    def __init__(self, id: str | int, filter: dict[str, Any], send: Send) -> None:
        self.id = id
        self.filter = filter
        self.send = send

    def wants(self, method: str, uri: str | None) -> bool:
        if method == RESOURCE_UPDATED:
            return uri is not None and uri in self.filter.get("resourceSubscriptions", ())
        flag = FILTER_FLAG.get(method)
        return flag is not None and self.filter.get(flag) is True


class Subscriber:
    """A legacy session that receives unsolicited notifications (list changes, subscribed URIs)."""

    subscribed: set[str]
    notify: Send | None


class Subscriptions:
    """Every listener and legacy subscriber of one server process."""

    def __init__(self) -> None:
        self.listeners: set[Listener] = set()
        self.sessions: set[Subscriber] = set()
        self.closed = False
        self._closing: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def until_closed(self) -> None:
        """Wait until the server shuts down (``close``): open listen streams then end gracefully."""
        if self._closing is None:
            self._closing, self._loop = asyncio.Event(), asyncio.get_running_loop()
        if self.closed:  # close() ran before the event existed
            return
        await self._closing.wait()

    def close(self) -> None:
        """End every listen stream (from any thread or a signal handler); safe to call twice."""
        self.closed = True  # set first: until_closed() checks it after creating the event
        if self._closing is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._closing.set)

    async def publish(self, method: str, uri: str | None = None) -> None:
        """Deliver ``method`` to everyone who asked for it; a failed stream is dropped."""
        base: dict[str, Any] = {"uri": uri} if uri is not None else {}
        for listener in list(self.listeners):
            if listener.wants(method, uri):
                params = {**base, "_meta": {SUBSCRIPTION_ID_KEY: listener.id}}
                try:
                    await listener.send(dumps(notification_envelope(method, params)))
                except Exception:
                    self.listeners.discard(listener)
        for session in list(self.sessions):
            if session.notify is None or (method == RESOURCE_UPDATED and uri not in session.subscribed):
                continue
            try:
                await session.notify(dumps(notification_envelope(method, base or None)))
            except Exception:
                self.sessions.discard(session)
