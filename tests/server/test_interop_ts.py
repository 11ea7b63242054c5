"""Interop with the TypeScript SDK v2 client (npm @modelcontextprotocol/client 2.4.0), legacy and 2026-07-28."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers import TS_CLIENT, node22, node_env, npm_install
from tests.server.servers import EVERYTHING, free_port, start_everything_http, stop

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

SCRIPT = Path(__file__).parent / "peers" / "ts_client.mjs"


@pytest.fixture(scope="module")
def script() -> Path:
    """The driver script, placed beside the installed package so Node resolves it."""
    target = npm_install(TS_CLIENT) / "ts_client.mjs"
    shutil.copyfile(SCRIPT, target)
    return target


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    port = free_port()
    proc = start_everything_http(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def drive(script: Path, mode: str, *target: str) -> dict[str, object]:
    done = subprocess.run(
        [str(node22()), str(script), mode, *target],
        capture_output=True,
        text=True,
        timeout=60,
        env=node_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def check(seen: dict[str, object], version: str) -> None:
    assert seen["version"] == version
    assert "test_elicitation" in seen["tools"]  # type: ignore[operator]
    assert seen["simple"] == "This is a simple text response for testing."
    assert str(seen["elicited"]).startswith("User response: action=accept")
    assert seen["resource"] == "This is the content of the static text resource."
    assert seen["prompt"] == "Prompt with arguments: arg1='a', arg2='b'"


MODES = [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")]


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_ts_client_over_http(script: Path, http_url: str, mode: str, version: str) -> None:
    check(drive(script, mode, http_url), version)


@pytest.mark.parametrize(("mode", "version"), MODES)
def test_ts_client_over_stdio(script: Path, mode: str, version: str) -> None:
    check(drive(script, mode, "stdio", sys.executable, str(EVERYTHING), "--stdio"), version)
