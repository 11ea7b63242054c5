"""The legacy era (2024-11-05 to 2025-11-25) on the client: the ``initialize`` handshake,
``MCP-Protocol-Version`` after it, server->client requests answered through the handlers,
and ``resources/subscribe`` plus the pushed notification stream for listening.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from ..codec import dump
from ..jsonrpc import METHOD_NOT_FOUND, Notification
from ..log_levels import nearest
from .base import BaseClient, Subscription, _field
from .errors import ServerError, TransportError
from .session import ClientOptions, ClientSession, ProgressCallback
from .transport import JSONObject

LIST_CHANGED = {
    "tools": "notifications/tools/list_changed",
    "prompts": "notifications/prompts/list_changed",
    "resources": "notifications/resources/list_changed",
}


class LegacyClientSession(ClientSession):
    """A session whose version ``initialize`` fixed (``negotiated``); HTTP carries it in a header."""

    negotiated: str | None = None

    def headers_for(self, message: JSONObject) -> dict[str, str]:
        if self.negotiated is None:
            return {}
        return {"mcp-protocol-version": self.negotiated}


async def initialize(session: ClientSession, version: str, options: ClientOptions, timeout: float | None) -> Any:
    """Send ``initialize`` asking for ``version``; returns the typed ``InitializeResult``."""
    params = {
        "protocolVersion": version,
        "capabilities": options.client_capabilities(session.codec.methods),
        "clientInfo": dict(options.client_info),
    }
    return await session.request("initialize", params, timeout=timeout)


async def ask_log_level(session: ClientSession, result: Any, timeout: float | None) -> None:
    """``logging/setLevel`` to the options' ``log_level`` once initialized, when the server's
    ``initialize`` result declares ``logging`` (a new session, after the server lost the old one, too)."""
    level = session.options.log_level
    if level is not None and isinstance(dump(_field(result, "capabilities")).get("logging"), dict):
        level = nearest(level, session.codec.revision.log_levels)  # one this revision lacks: its nearest
        await session.request("logging/setLevel", {"level": level}, timeout=timeout)


def initialize_facts(result: Any) -> dict[str, Any]:
    return {
        "server_info": _field(result, "server_info"),
        "capabilities": _field(result, "capabilities"),
        "instructions": _field(result, "instructions"),
        "discovered": result,
    }


class LegacyClient(BaseClient):
    """The legacy era's behaviour, shared by every legacy revision's generated ``Client``."""

    era = "legacy"
    session: LegacyClientSession

    async def _call(
        self,
        method: str,
        params: JSONObject | None,
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        transport = self.session.transport
        renewal = self._renewal()
        if renewal.locked() and method != "initialize":  # a session being renewed: wait for the new one
            async with renewal:
                pass
        sent_with = transport.session_id
        try:
            return await super()._call(method, params, timeout=timeout, on_progress=on_progress)
        except TransportError as error:
            if error.status != 404 or method == "initialize" or sent_with is None:
                raise
        # HTTP 404 on a request carrying Mcp-Session-Id: the server ended the session, so the
        # client MUST start a new one with a fresh initialize, then the request is sent again.
        # Requests that met the same ending share one renewal (each started its own: a second
        # failed, a later one threw the new session away).
        async with renewal:
            if transport.session_id == sent_with and transport.forget_session():
                await self._reinitialize(timeout)
        return await super()._call(method, params, timeout=timeout, on_progress=on_progress)

    def _renewal(self) -> asyncio.Lock:
        lock: asyncio.Lock | None = self.__dict__.get("_renewing")
        if lock is None:
            lock = self.__dict__["_renewing"] = asyncio.Lock()
        return lock

    async def _reinitialize(self, timeout: float | None) -> None:
        result = await initialize(self.session, self.version, self.session.options, timeout)
        facts = initialize_facts(result)
        self.server_info, self.capabilities = facts["server_info"], facts["capabilities"]
        self.instructions, self.discovered = facts["instructions"], facts["discovered"]
        await self.session.notify("notifications/initialized")
        await self.session.transport.open_event_stream()
        await ask_log_level(self.session, result, timeout)
        await self._subscribe_again(timeout)

    def _open_subscriptions(self) -> dict[str, list[asyncio.Queue[Any]]]:
        """The URIs the open ``listen``s subscribed to, with their queues: a new session (the server
        ended the old one) has none of them until they are subscribed again."""
        found: dict[str, list[asyncio.Queue[Any]]] | None = self.__dict__.get("_subscriptions")
        if found is None:
            found = self.__dict__["_subscriptions"] = {}
        return found

    async def _subscribe_again(self, timeout: float | None) -> None:
        """``resources/subscribe`` again, in the new session, for each URI an open ``listen`` holds
        (a client review: after a server restart the listen stayed open and got nothing, without
        a word); one the new session refuses ends its listens with the error."""
        held = self._open_subscriptions()
        for uri, queues in list(held.items()):
            try:
                await self.session.request("resources/subscribe", {"uri": uri}, timeout=timeout)
            except Exception as exc:
                failure = TransportError(f"the server ended the session; subscribing to {uri!r} again failed: {exc}")
                for queue in queues:
                    queue.put_nowait(failure)
                held.pop(uri, None)  # those listens ended: not subscribed again

    def _declares(self, capability: str, flag: str) -> bool:
        """The server's ``initialize`` capabilities set ``capability.flag`` (a wire name) true."""
        declared = dump(self.capabilities)
        found = declared.get(capability) if isinstance(declared, dict) else None
        return isinstance(found, dict) and found.get(flag) is True

    def listen(
        self,
        *,
        tools_list_changed: bool = False,
        prompts_list_changed: bool = False,
        resources_list_changed: bool = False,
        resource_subscriptions: Sequence[str] = (),
        timeout: float | None = None,
    ) -> Subscription:
        """The server's pushed notifications, filtered like ``subscriptions/listen``:
        ``resources/subscribe`` for each URI on entry (``resources/unsubscribe`` on exit);
        over HTTP they arrive on the GET stream ``connect`` opened. ``acknowledged`` holds what
        the server's capabilities agree to (a list change only where it declared ``listChanged``),
        as a 2026-07-28 server's acknowledgement would; what was asked for is handed on all the
        same (a legacy session has no filter to agree on, and servers, the official SDK's among
        them, send list changes they did not declare).
        """
        methods = {
            method
            for flag, method in (
                (tools_list_changed, LIST_CHANGED["tools"]),
                (prompts_list_changed, LIST_CHANGED["prompts"]),
                (resources_list_changed, LIST_CHANGED["resources"]),
            )
            if flag
        }
        uris = set(resource_subscriptions)

        def accept(note: Notification) -> bool:
            if note.method == "notifications/resources/updated":
                return _field(note.params, "uri") in uris
            return note.method in methods

        held = self._open_subscriptions()

        def hold(queue: asyncio.Queue[Any], uri: str) -> None:
            held.setdefault(uri, []).append(queue)

        def release(queue: asyncio.Queue[Any]) -> None:
            for uri in list(held):
                held[uri] = [q for q in held[uri] if q is not queue]
                if not held[uri]:
                    del held[uri]

        async def open(sub: Subscription) -> None:
            if resource_subscriptions and not self._declares("resources", "subscribe"):
                # resources.mdx: subscribing is optional, and the capability says whether a server
                # takes it (asked anyway, the official SDK's server answered a bare -32601)
                raise ServerError(  # what the server would have answered (-32601), said before asking
                    METHOD_NOT_FOUND,
                    "the server does not declare resources.subscribe: it takes no resource subscriptions",
                )
            sub.queue = self.session.add_listener(accept)
            subscribed: list[str] = []
            try:
                for uri in resource_subscriptions:
                    subscribed.append(uri)  # before: a subscribe cut short may have reached the server
                    hold(sub.queue, uri)
                    await self.session.request("resources/subscribe", {"uri": uri}, timeout=timeout)
            except BaseException:  # no subscription: the listener goes, and what was subscribed is undone
                self.session.remove_listener(sub.queue)
                release(sub.queue)
                for uri in subscribed:
                    with contextlib.suppress(Exception):
                        await self.session.request("resources/unsubscribe", {"uri": uri}, timeout=timeout)
                raise
            sub.acknowledged = {
                "toolsListChanged": tools_list_changed and self._declares("tools", "listChanged"),
                "promptsListChanged": prompts_list_changed and self._declares("prompts", "listChanged"),
                "resourcesListChanged": resources_list_changed and self._declares("resources", "listChanged"),
                "resourceSubscriptions": list(resource_subscriptions),
            }

        async def close(sub: Subscription) -> None:
            self.session.remove_listener(sub.queue)
            release(sub.queue)
            for uri in resource_subscriptions:
                with contextlib.suppress(Exception):
                    await self.session.request("resources/unsubscribe", {"uri": uri}, timeout=timeout)

        return Subscription(open, close, accept)
