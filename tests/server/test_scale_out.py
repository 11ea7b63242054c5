"""Stateless modern handling: two workers behind a round-robin balancer serve one client correctly."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server.servers import MODERN, free_port, meta, start_everything_http, stop

KEY = {"MCP_REQUEST_STATE_KEY": "shared-secret-of-the-deployment"}


@pytest.fixture(scope="module")
def workers() -> Iterator[list[str]]:
    procs, urls = [], []
    try:
        for _ in range(2):
            port = free_port()
            procs.append(start_everything_http(port, KEY))
            urls.append(f"http://127.0.0.1:{port}/mcp")
        yield urls
    finally:
        for proc in procs:
            stop(proc)


def post(client: httpx.Client, url: str, rid: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method, "accept": "application/json, text/event-stream"}
    if "name" in params:
        headers["mcp-name"] = params["name"]
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    reply = client.post(url, json=body, headers=headers)
    assert reply.status_code == 200, reply.text
    data: dict[str, Any] = reply.json()
    return data


def test_round_robin_across_two_workers(workers: list[str]) -> None:
    """Every request goes to the next worker; MRTR rounds land on different workers."""
    balancer = itertools.cycle(workers)
    caps = meta(**{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    with httpx.Client(timeout=10) as client:
        listed = post(client, next(balancer), 1, "tools/list", {"_meta": meta()})
        assert "test_input_required_result_multi_round" in {t["name"] for t in listed["result"]["tools"]}
        params: dict[str, Any] = {"name": "test_input_required_result_multi_round", "arguments": {}, "_meta": caps}
        answers = {"step1": {"name": "ada"}, "step2": {"color": "green"}}
        result = post(client, next(balancer), 2, "tools/call", params)["result"]
        rounds = 0
        while result["resultType"] == "input_required":
            rounds += 1
            (key,) = result["inputRequests"]
            retry = {**params, "requestState": result["requestState"]}
            retry["inputResponses"] = {key: {"action": "accept", "content": answers[key]}}
            result = post(client, next(balancer), 2 + rounds, "tools/call", retry)["result"]
        assert rounds == 2
        assert result["content"][0]["text"] == "Done: color=green"


def test_a_worker_with_another_key_rejects_the_state(workers: list[str]) -> None:
    port = free_port()
    other = start_everything_http(port, {"MCP_REQUEST_STATE_KEY": "another-key"})
    caps = meta(**{"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
    params: dict[str, Any] = {"name": "test_input_required_result_request_state", "arguments": {}, "_meta": caps}
    try:
        with httpx.Client(timeout=10) as client:
            first = post(client, workers[0], 1, "tools/call", params)["result"]
            retry = {**params, "requestState": first["requestState"]}
            retry["inputResponses"] = {"confirm": {"action": "accept", "content": {"ok": True}}}
            reply = client.post(
                f"http://127.0.0.1:{port}/mcp",
                json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": retry},
                headers={"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": params["name"]},
            )
            assert (reply.status_code, reply.json()["error"]["code"]) == (400, -32602)
            ok = post(client, workers[1], 3, "tools/call", retry)["result"]
            assert "state-ok" in ok["content"][0]["text"]
    finally:
        stop(other)
