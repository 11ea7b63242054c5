"""A client that stops reading its ``subscriptions/listen`` stream holds up only that stream.

``deliver`` awaited each listener's send in turn: over HTTP a send waits on the connection's flow
control, so once a stalled client's buffers filled, every later change waited behind it and no
other listener (nor any legacy GET stream) got anything more (found by a server review: one
client with a small receive buffer stopped notifications for all, the publishers hanging).
"""

from __future__ import annotations

import asyncio

from mcpgen._runtime.server.services import Listener
from mcpgen._runtime.server.services.bus import Change
from mcpgen._runtime.server.services.subscriptions import Subscriptions
from mcpgen._runtime.versions import FilterMember

TOOLS = "notifications/tools/list_changed"
WANTS = {"toolsListChanged": True}
MEMBERS = {"toolsListChanged": FilterMember(TOOLS, False)}


def test_a_stalled_listener_holds_up_nobody_and_is_dropped_past_its_backlog() -> None:
    async def go() -> tuple[int, int, bool]:
        subscriptions = Subscriptions()
        never = asyncio.Event()
        got: list[bytes] = []

        async def stalled(data: bytes) -> None:
            await never.wait()  # a client that stopped reading: the send never completes

        async def reading(data: bytes) -> None:
            got.append(data)

        slow = Listener("slow", WANTS, stalled, MEMBERS, backlog=8)
        fast = Listener("fast", WANTS, reading, MEMBERS, backlog=8)
        subscriptions.listeners |= {slow, fast}
        writers = [asyncio.ensure_future(listener.write()) for listener in (slow, fast)]
        for _ in range(20):
            async with asyncio.timeout(5):  # each change is delivered at once, whoever is stalled
                await subscriptions.deliver(Change(TOOLS))
            await asyncio.sleep(0)  # the reading client's writer sends
        for writer in writers:
            writer.cancel()
        return len(got), len(subscriptions.listeners), slow.overflow.is_set()

    delivered, left, overflowed = asyncio.run(go())
    assert delivered == 20  # the reading listener got every change
    assert overflowed and left == 1  # the stalled one was dropped: its stream ends (listen returns)
