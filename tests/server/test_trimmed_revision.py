"""A server of a revision that removed things serves without them, and tells each session what its
own revision carries.

The revision exists only here: 2026-07-28's schema without logging (``notifications/message``,
``LoggingLevel``, the ``logLevel`` of a request's ``_meta``, ``ServerCapabilities.logging``) and
without ``notifications/resources/updated`` (and ``SubscriptionFilter.resourceSubscriptions``),
adopted into a temporary lock and generated into the package ``trimmcp`` against the installed
runtime. No runtime code was written for it: what a session declares, acknowledges and sends
follows the method table of the revision it speaks.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from tests.server.revisions import made_up_revision
from tests.server.servers import Stdio, run

NEW = "2027-03-01"
BASE = "2026-07-28"
REMOVED = ("LoggingMessageNotification", "LoggingMessageNotificationParams", "LoggingLevel")
REMOVED += ("ResourceUpdatedNotification", "ResourceUpdatedNotificationParams")


def trimmed(document: dict[str, Any]) -> dict[str, Any]:
    defs = document["$defs"]
    for name in REMOVED:
        del defs[name]

    def unlink(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("anyOf", "oneOf"):
                if isinstance(node.get(key), list):
                    node[key] = [b for b in node[key] if str(b.get("$ref", "")).rsplit("/", 1)[-1] not in REMOVED]
            for value in node.values():
                unlink(value)
        elif isinstance(node, list):
            for value in node:
                unlink(value)

    unlink(defs)
    del defs["RequestMetaObject"]["properties"]["io.modelcontextprotocol/logLevel"]
    del defs["ServerCapabilities"]["properties"]["logging"]
    del defs["SubscriptionFilter"]["properties"]["resourceSubscriptions"]
    assert not any(f'/{name}"' in json.dumps(document) for name in REMOVED)
    return document


@pytest.fixture(scope="module")
def trimmcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    with made_up_revision(tmp_path_factory.mktemp("trimmed"), NEW, trimmed, "trimmcp"):
        yield importlib.import_module("trimmcp")


def server(trimmcp: ModuleType) -> Any:
    s = importlib.import_module(f"trimmcp.v{NEW.replace('-', '_')}.server")
    m = importlib.import_module(f"trimmcp.v{NEW.replace('-', '_')}.models")

    class Trimmed(s.Server):  # type: ignore[misc,name-defined]
        name = "trimmed"

        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            await ctx.log("info", "not sent: the revision has no logging")
            await ctx.report_progress(1, 2)
            return s.CallToolResult(content=[m.TextContent(type="text", text="done")])

        async def list_resources(self, params: Any, ctx: Any) -> Any:
            return s.ListResourcesResult(resources=[])

    return Trimmed()


def meta(version: str = NEW, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": {},
        **extra,
    }


def test_a_trimmed_revision_serves_and_declares_only_what_it_has(trimmcp: ModuleType) -> None:
    """A request's ``_meta`` model without ``logLevel`` made every handler request an
    AttributeError (stdio never answered; HTTP a 500); ``logging`` and ``resources.subscribe``
    were declared though the revision has neither's notifications."""

    async def go() -> list[dict[str, Any]]:
        async with Stdio(server(trimmcp)) as conn:
            conn.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}})
            call = {"name": "echo", "arguments": {}, "_meta": meta(progressToken="p")}
            conn.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
            conn.send({"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta(BASE)}})
            await conn.until(lambda msg: msg.get("id") == 3)
            return conn.out

    out = run(go())
    by_id = {msg["id"]: msg for msg in out if "id" in msg}
    spoken = by_id[1]["result"]["capabilities"]
    assert "logging" not in spoken and spoken["resources"] == {"listChanged": True}
    assert spoken["tools"] == {"listChanged": True}
    assert by_id[2]["result"]["content"] == [{"type": "text", "text": "done"}]
    assert [msg["method"] for msg in out if "method" in msg] == ["notifications/progress"]
    older = by_id[3]["result"]["capabilities"]  # a 2026-07-28 request: what 2026-07-28 carries
    assert "logging" in older and older["resources"] == {"listChanged": True, "subscribe": True}


def test_a_legacy_session_of_a_trimmed_revisions_server_is_told_what_its_revision_carries(
    trimmcp: ModuleType,
) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }

    async def go() -> dict[str, Any]:
        async with Stdio(server(trimmcp)) as conn:
            conn.send(initialize)
            return await conn.until(lambda msg: msg.get("id") == 1)

    caps = run(go())["result"]["capabilities"]
    assert "logging" in caps and caps["resources"] == {"listChanged": True, "subscribe": True}
