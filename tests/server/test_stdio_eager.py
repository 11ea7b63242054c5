"""stdio runs requests eagerly (no task per request unless it waits): each request must still
behave as if it had a task of its own."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28 import server as s

from tests.server.servers import Stdio, request, run

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="nobody")


class Tasks(s.Server):
    """Tools that look at what a task gives a request: its context, its own task, its cancellation."""

    name = "tasks"
    handler_timeout = 0.5

    def __init__(self) -> None:
        self.tasks: dict[str, asyncio.Task[Any] | None] = {}
        self.release = asyncio.Event()

    async def call_tool(self, params: m.CallToolRequestParams, ctx: s.Context) -> m.CallToolResult:
        text = ""
        if params.name == "mark":  # what an earlier request set must not be seen here
            text = SEEN.get()
            SEEN.set(str(ctx.request_id))
        elif params.name == "wait":  # waits for the release: holds its own task from then on
            await self.release.wait()
            self.tasks[str(ctx.request_id)] = asyncio.current_task()
            text = SEEN.get()
        elif params.name == "cancel-self":  # cancels the task it runs in, then answers
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
        elif params.name == "hang":
            await asyncio.sleep(30)
        elif params.name == "release":
            self.release.set()
        return s.CallToolResult(content=[m.TextContent(type="text", text=text)])


def call(rid: int, name: str) -> dict[str, Any]:
    return request(rid, "tools/call", {"name": name})


def text(response: dict[str, Any]) -> str:
    content: list[dict[str, Any]] = response["result"]["content"]
    return str(content[0]["text"])


def test_requests_in_one_read_do_not_share_context_variables() -> None:
    async def go() -> list[str]:
        async with Stdio(Tasks()) as conn:
            conn.send(*(call(i, "mark") for i in range(1, 6)))
            return [text(await conn.response(i)) for i in range(1, 6)]

    assert run(go()) == ["nobody"] * 5


def test_requests_that_wait_each_have_their_own_task_and_others_are_answered_meanwhile() -> None:
    server = Tasks()

    async def go() -> tuple[list[str], set[int], int | None]:
        async with Stdio(server) as conn:
            conn.send(call(1, "wait"), call(2, "mark"), call(3, "wait"), call(4, "mark"))
            early = [text(await conn.response(2)), text(await conn.response(4))]
            assert not server.tasks  # the waiting ones are still waiting
            conn.send(call(5, "release"))
            late = [text(await conn.response(1)), text(await conn.response(3))]
            tasks = {id(task) for task in server.tasks.values()}
            assert conn.task is not None
            return early + late, tasks, id(conn.task)

    texts, tasks, reader = run(go())
    assert texts == ["nobody"] * 4
    assert len(tasks) == 2 and reader not in tasks  # two tasks, neither the reader's


def test_a_request_cancelling_its_own_task_hurts_no_other_request() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Tasks()) as conn:
            conn.send(call(1, "cancel-self"), call(2, "wait"), call(3, "mark"))
            await conn.response(3)
            conn.send(call(4, "release"))
            await conn.response(2)  # it waited in a task of its own, not in the cancelled one
            return conn.out

    out = run(go())
    assert sorted(m["id"] for m in out if "result" in m) == [1, 2, 3, 4]


def test_a_waiting_request_times_out_alone_and_a_cancelled_one_is_not_answered() -> None:
    async def go() -> list[dict[str, Any]]:
        async with Stdio(Tasks()) as conn:
            conn.send(call(1, "hang"), call(2, "wait"), call(3, "mark"))
            await conn.response(3)
            conn.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
            timed_out = await conn.response(1)
            conn.send(call(4, "mark"))
            await conn.response(4)
            return [timed_out, *conn.out]

    timed_out, *out = run(go())
    assert timed_out["error"]["code"] == -32603 and "did not answer within" in timed_out["error"]["message"]
    assert sorted(m["id"] for m in out) == [1, 3, 4]  # 2 was cancelled while it waited: no response


def test_a_request_whose_routing_raises_gives_its_place_back_and_is_reported() -> None:
    """A bug below the transport (the router raising, which the sessions never do) must not keep
    a place among ``max_inflight`` or stop the requests behind it, waiting or not."""
    from mcpgen._runtime.server.services import Limits

    class One(Tasks):
        limits = Limits(max_inflight=1)

    server = One()
    router = server.router
    handle = router.handle
    reported: list[BaseException] = []

    async def buggy(obj: Any, *args: Any, **kwargs: Any) -> Any:
        name = obj.get("params", {}).get("name") if isinstance(obj, dict) else None
        if name == "boom-waiting":
            await asyncio.sleep(0)
            raise RuntimeError("bug after a wait")
        if name == "boom":
            raise RuntimeError("bug at once")
        return await handle(obj, *args, **kwargs)

    router.handle = buggy  # type: ignore[method-assign]

    async def go() -> list[dict[str, Any]]:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda _, context: reported.append(context["exception"]))
        async with Stdio(server) as conn:
            for rid, name in enumerate(("boom", "boom-waiting", "mark"), start=1):
                conn.send(call(rid, name))
                if name == "mark":
                    await conn.response(rid)
                else:  # the next one is sent once this one is reported
                    async with asyncio.timeout(5):
                        while len(reported) < rid:
                            await asyncio.sleep(0)
            return conn.out

    out = run(go())
    assert [m["id"] for m in out] == [3]  # not refused for lack of a place: answered
    assert [str(e) for e in reported] == ["bug at once", "bug after a wait"]
