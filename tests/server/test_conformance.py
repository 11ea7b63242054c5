"""The official conformance suite against examples/everything_server over HTTP, at both spec versions."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.peers import CONFORMANCE, node_env, npm_bin, npm_install
from tests.server.servers import free_port, start_everything_http, stop

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

EXPECTED = Path(__file__).with_name("conformance-expected-failures.txt")
# every scenario the suite holds for the version (`--suite all`), so nothing is skipped unseen
MINIMUM = {"2025-11-25": 30, "2026-07-28": 37}
SUMMARY = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


def expected_failures() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {version: set() for version in MINIMUM}
    for line in EXPECTED.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            version, scenario = line.split()
            out[version].add(scenario)
    return out


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    proc = start_everything_http(port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


@pytest.mark.parametrize("version", sorted(MINIMUM))
def test_conformance_suite(url: str, version: str, tmp_path: Path) -> None:
    command = npm_bin(npm_install(CONFORMANCE), "conformance")
    done = subprocess.run(
        [*command, "server", "--url", url, "--spec-version", version, "--suite", "all", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=node_env(),
        check=False,
    )
    results = {name: mark == "✓" for mark, name, _, _ in SUMMARY.findall(done.stdout)}
    assert len(results) >= MINIMUM[version], done.stdout[-3000:] + done.stderr[-2000:]
    failed = {name for name, ok in results.items() if not ok}
    expected = expected_failures()[version]
    assert not expected - set(results), f"stale expected failures (no such scenario): {expected - set(results)}"
    assert failed == expected, (
        f"unexpected failures: {sorted(failed - expected)}; stale expected failures: {sorted(expected - failed)}\n"
        + done.stdout[-3000:]
    )


@pytest.mark.parametrize("store", ["memory", "redis"])
def test_sse_polling_resumes_from_the_event_store(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """``server-sse-polling`` (unscored by the suite: its checks warn rather than fail) passes
    every check: a priming event first, a ``retry`` field, and the result on the GET resumed
    with ``Last-Event-ID``, with the events kept in memory or in Redis."""
    env = {"MCP_REDIS_URL": request.getfixturevalue("redis_server").url} if store == "redis" else {}
    port = free_port()
    proc = start_everything_http(port, env)
    try:
        command = npm_bin(npm_install(CONFORMANCE), "conformance")
        url = f"http://127.0.0.1:{port}/mcp"
        scenario = ["--spec-version", "2025-11-25", "--scenario", "server-sse-polling", "-o", str(tmp_path)]
        done = subprocess.run(
            [*command, "server", "--url", url, *scenario],
            capture_output=True,
            text=True,
            timeout=120,
            env=node_env(),
            check=False,
        )
    finally:
        stop(proc)
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", done.stdout)
    assert summary is not None, done.stdout[-3000:] + done.stderr[-2000:]
    passed, total, failed, warnings = map(int, summary.groups())
    assert (passed, failed, warnings) == (total, 0, 0) and total >= 3, done.stdout[-3000:]
