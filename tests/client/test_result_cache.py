"""The modern client's result cache (caching.mdx): fresh results answer the same request, what a
notification says changed goes at once, and nothing is kept that the spec says must not be."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcpgen import connect
from mcpgen._runtime.client import ServerError, TransportError
from mcpgen._runtime.client.cache import MAX_TTL, ResultCache
from mcpgen._runtime.jsonrpc import Notification
from mcpgen.v2026_07_28 import client as modern_client
from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28.codec import REVISION

SERVER = [sys.executable, str(Path(__file__).parent / "cached_server.py")]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def tools(name: str, ttl_ms: int = 1000, **more: Any) -> m.ListToolsResult:
    listed = [m.Tool(name=name, input_schema={"type": "object"})]
    return m.ListToolsResult(tools=listed, result_type="complete", ttl_ms=ttl_ms, cache_scope="private", **more)


def read(text: str, uri: str) -> m.ReadResourceResult:
    contents = [m.TextResourceContents(uri=uri, text=text)]
    return m.ReadResourceResult(contents=contents, result_type="complete", ttl_ms=1000, cache_scope="private")


def names(result: Any) -> list[str]:
    return [tool.name for tool in result.tools]


def test_a_key_is_the_method_and_params_and_an_mrtr_retry_has_none() -> None:
    key = ResultCache.key
    # a caller's _meta may change the answer (caching.mdx: params that affect the result)
    assert key("tools/list", {"cursor": "a", "_meta": {"x": 1}}) != key("tools/list", {"cursor": "a"})
    assert key("resources/read", {"uri": "a", "z": 1}) == key("resources/read", {"z": 1, "uri": "a"})
    assert key("tools/list", {"cursor": "a"}) != key("tools/list", {"cursor": "b"}) != key("prompts/list", {})
    assert key("tools/list", None) == key("tools/list", {})
    assert key("resources/read", {"uri": "a", "requestState": "s"}) is None
    assert key("resources/read", {"uri": "a", "inputResponses": {}}) is None


def test_a_result_is_fresh_for_its_ttl_and_served_as_a_copy() -> None:
    clock = Clock()
    cache = ResultCache(clock=clock)
    key = cache.key("tools/list", {})
    assert key is not None
    cache.put(key, tools("a", ttl_ms=1500), cache.generation("tools/list"))
    served = cache.get(key)
    assert served is not None and names(served) == ["a"]
    served.tools.clear()  # the caller's to change
    clock.now += 1.499
    assert names(cache.get(key)) == ["a"]
    clock.now += 0.001  # now == received + ttl: stale
    assert cache.get(key) is None and len(cache) == 0


def test_what_must_not_be_kept_is_not_and_an_answer_supersedes_what_was() -> None:
    cache = ResultCache(clock=Clock())
    key = cache.key("tools/list", {})
    assert key is not None
    cache.put(key, tools("a"), cache.generation("tools/list"))
    cache.put(
        key, tools("b", ttl_ms=0), cache.generation("tools/list")
    )  # immediately stale: what was kept for the request goes too
    assert cache.get(key) is None
    required = m.InputRequiredResult(result_type="input_required", request_state="s")
    cache.put(key, required, cache.generation("tools/list"))
    assert cache.get(key) is None


def test_a_result_whose_entries_were_dropped_while_it_was_asked_is_not_kept() -> None:
    cache = ResultCache(clock=Clock())
    key = cache.key("tools/list", {})
    assert key is not None
    asked = cache.generation("tools/list")
    cache.drop("tools/list")  # a list_changed came while the request was in flight
    cache.put(key, tools("old"), asked)
    assert cache.get(key) is None
    cache.put(key, tools("new"), cache.generation("tools/list"))
    assert names(cache.get(key)) == ["new"]


def test_a_result_asked_before_a_clear_is_not_kept() -> None:
    """A review: ``clear()`` dropped what was kept, but an answer asked for before it (while
    nothing was kept) was written back after it."""
    cache = ResultCache(clock=Clock())
    key = cache.key("tools/list", {})
    assert key is not None
    asked = cache.generation("tools/list")
    cache.clear()
    cache.put(key, tools("before"), asked)
    assert cache.get(key) is None and len(cache) == 0


def test_the_least_recently_used_goes_past_the_bound_and_a_ttl_is_capped_at_a_day() -> None:
    clock = Clock()
    cache = ResultCache(2, clock=clock)
    keys = [cache.key("tools/list", {"cursor": str(i)}) for i in range(3)]
    assert None not in keys
    now = cache.generation("tools/list")
    cache.put(keys[0], tools("0", ttl_ms=10**12), now)  # type: ignore[arg-type]
    cache.put(keys[1], tools("1"), now)  # type: ignore[arg-type]
    assert cache.get(keys[0]) is not None  # type: ignore[arg-type]
    cache.put(keys[2], tools("2"), now)  # type: ignore[arg-type]
    assert cache.get(keys[1]) is None and len(cache) == 2  # type: ignore[arg-type]
    clock.now += MAX_TTL
    assert cache.get(keys[0]) is None  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least 1"):
        ResultCache(0)


def test_what_is_kept_is_bounded_in_bytes_too() -> None:
    """Found by a client review: the bound was a count alone, so 256 results of up to 16 MiB
    could stay a day (456 MB held in the review). The JSON kept is bounded too (``MAX_BYTES``),
    and a result past a quarter of it is not kept."""
    from mcpgen._runtime.client.cache import MAX_BYTES

    big = "x" * 3000
    one = len(m.ListToolsResult.__pydantic_serializer__.to_json(tools(big), by_alias=True))
    cache = ResultCache(clock=Clock(), max_bytes=4 * one)
    keys = [cache.key("tools/list", {"cursor": str(i)}) for i in range(6)]
    now = cache.generation("tools/list")
    for key in keys:
        cache.put(key, tools(big), now)  # type: ignore[arg-type]
    assert len(cache) == 4 and cache.bytes == 4 * one  # the two oldest went
    assert cache.get(keys[1]) is None and cache.get(keys[5]) is not None  # type: ignore[arg-type]
    cache.drop("tools/list")
    assert len(cache) == 0 and cache.bytes == 0
    huge = "x" * (len(big) + 1)  # past a quarter of the bound: not kept
    cache.put(keys[0], tools(huge), cache.generation("tools/list"))  # type: ignore[arg-type]
    assert len(cache) == 0 and cache.bytes == 0
    assert ResultCache().max_bytes == MAX_BYTES == 32 << 20


def test_a_notification_drops_what_it_says_changed_and_nothing_else() -> None:
    cache = ResultCache(clock=Clock())
    put = {
        ("tools/list", ""): tools("t"),
        ("tools/list", "2"): tools("t2"),
        ("prompts/list", ""): m.ListPromptsResult(
            prompts=[], result_type="complete", ttl_ms=1000, cache_scope="public"
        ),
        ("resources/list", ""): m.ListResourcesResult(
            resources=[], result_type="complete", ttl_ms=1000, cache_scope="public"
        ),
        ("resources/templates/list", ""): m.ListResourceTemplatesResult(
            resource_templates=[], result_type="complete", ttl_ms=1000, cache_scope="public"
        ),
        ("resources/read", "file:///a"): read("a", "file:///a"),
        ("resources/read", "file:///b"): read("b", "file:///b"),
    }

    def fill() -> dict[tuple[str, str], Any]:
        cache.clear()
        keys = {}
        for (method, arg), result in put.items():
            params = {"uri": arg} if method == "resources/read" else {"cursor": arg} if arg else {}
            keys[(method, arg)] = key = cache.key(method, params)
            cache.put(key, result, cache.generation(method))  # type: ignore[arg-type]
        return keys

    def kept(keys: dict[tuple[str, str], Any]) -> set[tuple[str, str]]:
        return {name for name, key in keys.items() if cache.get(key) is not None}

    def notified(method: str, params: Any = None) -> set[tuple[str, str]]:
        keys = fill()
        cache.notified(Notification(method, params), REVISION.methods)
        return set(put) - kept(keys)

    assert notified("notifications/tools/list_changed") == {("tools/list", ""), ("tools/list", "2")}
    assert notified("notifications/prompts/list_changed") == {("prompts/list", "")}
    assert notified("notifications/resources/list_changed") == {
        ("resources/list", ""),
        ("resources/templates/list", ""),
    }
    updated = m.ResourceUpdatedNotificationParams(uri="file:///a")
    assert notified("notifications/resources/updated", updated) == {("resources/read", "file:///a")}
    assert notified("notifications/message", m.LoggingMessageNotificationParams(level="info", data="x")) == set()


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 60))


async def modern(ttl_ms: int, **options: Any) -> modern_client.Client:
    client = await connect([*SERVER, str(ttl_ms)], cache=None, timeout=20, stderr=subprocess.DEVNULL, **options)
    assert isinstance(client, modern_client.Client)
    return client


def test_a_fresh_list_answers_the_same_request_and_a_list_changed_it_listened_for_drops_it() -> None:
    async def go() -> list[list[str]]:
        seen = []
        async with await modern(60_000) as client:
            seen.append(names(await client.list_tools()))
            seen.append(names(await client.list_tools()))  # fresh: no round trip
            seen.append(names(await client.list_tools(cursor="2")))  # a page is a request of its own
            seen.append(names(await client.list_tools(cursor="2")))
            await client.call_tool(name="change", arguments={})  # nobody listening: the cache cannot know
            seen.append(names(await client.list_tools()))
            async with client.listen(tools_list_changed=True) as changes:
                await client.call_tool(name="change", arguments={})
                note = await changes.next(timeout=20)
                assert note.method == "notifications/tools/list_changed"
            seen.append(names(await client.list_tools()))
            seen.append(names(await client.list_tools(cursor="2")))  # every page went
        return seen

    assert run(go()) == [
        ["listed-1"],
        ["listed-1"],
        ["listed-2"],
        ["listed-2"],
        ["listed-1"],
        ["listed-3"],
        ["listed-4"],
    ]


def test_a_resource_updated_drops_that_resources_read() -> None:
    async def go() -> list[str]:
        seen = []
        async with await modern(60_000) as client:
            for _ in range(2):
                seen.append((await client.read_resource(uri="file:///r")).contents[0].text)  # type: ignore[union-attr]
            async with client.listen(resource_subscriptions=["file:///r"]) as updates:
                await client.call_tool(name="touch", arguments={})
                assert (await updates.next(timeout=20)).method == "notifications/resources/updated"
            seen.append((await client.read_resource(uri="file:///r")).contents[0].text)  # type: ignore[union-attr]
        return seen

    assert run(go()) == ["read-1 of file:///r", "read-1 of file:///r", "read-2 of file:///r"]


def test_a_cursor_the_server_no_longer_knows_drops_every_page_of_its_method() -> None:
    async def go() -> list[str]:
        async with await modern(60_000) as client:
            first = names(await client.list_tools())
            await client.call_tool(name="forget", arguments={})
            with pytest.raises(ServerError) as refused:
                await client.list_tools(cursor="2")
            assert refused.value.code == -32602
            return first + names(await client.list_tools())

    assert run(go()) == ["listed-1", "listed-2"]


@pytest.mark.parametrize(("ttl_ms", "cached_results"), [(0, 256), (60_000, 0)])
def test_nothing_is_kept_at_a_ttl_of_0_or_when_the_client_keeps_none(ttl_ms: int, cached_results: int) -> None:
    async def go() -> list[str]:
        async with await modern(ttl_ms, cached_results=cached_results) as client:
            assert (client.results is None) == (cached_results == 0)
            return names(await client.list_tools()) + names(await client.list_tools())

    assert run(go()) == ["listed-1", "listed-2"]


def test_a_fresh_answer_still_gives_the_other_tasks_a_turn() -> None:
    """A review: a hit returned without awaiting anything, so a loop asking until the list changed
    held the event loop: the reader never took the list_changed that would drop the entry (116,877
    hits in the 5 s of its TTL, and the task making the change never ran)."""

    async def go() -> tuple[int, list[str]]:
        async with await modern(3_000) as client, client.listen(tools_list_changed=True):
            first = names(await client.list_tools())
            changing = asyncio.create_task(client.call_tool(name="change", arguments={}))
            asked = 0
            while (now := names(await client.list_tools())) == first:
                asked += 1
            await changing
            return asked, now

    asked, now = run(go())
    assert now == ["listed-2"] and asked < 10_000, asked


def test_a_closed_client_answers_nothing_from_its_cache() -> None:
    async def go() -> None:
        client = await modern(60_000)
        async with client:
            await client.list_tools()
        with pytest.raises(TransportError):
            await client.list_tools()

    run(go())


def test_a_new_authorization_empties_the_cache() -> None:
    """A client review (caching.mdx: caches MUST NOT be shared across authorization contexts): a
    result kept under one grant answered the same request after another sign-in. A new grant
    (the transport's grants counted) empties it; results are kept again from there."""

    async def go() -> list[list[str]]:
        seen = []
        async with await modern(60_000) as client:
            seen.append(names(await client.list_tools()))
            await client.call_tool(name="change", arguments={})  # the server's list changed, unseen
            seen.append(names(await client.list_tools()))  # kept: the same grant
            client.session.transport.grants = lambda: 1  # type: ignore[method-assign]
            seen.append(names(await client.list_tools()))  # another grant: asked again
            await client.call_tool(name="change", arguments={})
            seen.append(names(await client.list_tools()))  # kept again, under the new grant
        return seen

    assert run(go()) == [["listed-1"], ["listed-1"], ["listed-2"], ["listed-2"]]
