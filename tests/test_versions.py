"""The version registry and the one negotiation rule (``mcpgen._runtime.versions``)."""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import mcpgen
import pytest
from mcpgen._runtime.versions import RevisionEntry, VersionRegistry, negotiate, newest_first, version_key

from tests.conftest import ROOT
from tests.revisions import VERSIONS, of_era
from tests.revisions import newest_first as by_date_newest_first

LEGACY = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
ALL = ["2026-07-28", *LEGACY]


@pytest.mark.parametrize(
    ("requested", "chosen"),
    [
        # every revision the server speaks is answered with itself
        *[(version, version) for version in LEGACY],
        # otherwise another the server supports, its latest (lifecycle: SHOULD be the latest)
        ("2025-05-01", "2025-11-25"),  # a date between revisions
        ("2024-12-31", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),  # a modern version asked in a legacy initialize
        ("2099-01-01", "2025-11-25"),  # the future
        ("2020-01-01", "2025-11-25"),  # the past
        ("DRAFT-2026-v1", "2025-11-25"),  # garbage
        ("", "2025-11-25"),
        ("2025-11-25 ", "2025-11-25"),
        (None, "2025-11-25"),
        (20251125, "2025-11-25"),
        (["2025-06-18"], "2025-11-25"),
    ],
)
def test_a_server_answers_the_requested_version_or_its_latest(requested: Any, chosen: str) -> None:
    assert negotiate(LEGACY, requested=requested) == chosen
    assert negotiate(reversed(LEGACY), requested=requested) == chosen  # order of the input is irrelevant


@pytest.mark.parametrize(
    ("ours", "offered", "chosen"),
    [
        (ALL, ALL, "2026-07-28"),
        (ALL, ["2025-11-25", "2026-07-28"], "2026-07-28"),
        (ALL, ["2027-03-01", "2026-07-28", "2025-11-25"], "2026-07-28"),  # a newer server: highest mutual
        (["2027-03-01", *ALL], ["2026-07-28", *LEGACY], "2026-07-28"),  # a newer client
        (ALL, ["2027-03-01"], None),  # nothing mutual
        (ALL, ["2027-03-01", "2025-06-18"], "2025-06-18"),  # the highest mutual, of either era
        (ALL, ["2025-05-01", "2025-03-26", "2024-11-05"], "2025-03-26"),
        (LEGACY, ["2026-07-28"], None),
        (ALL, [], None),  # empty lists
        ([], ALL, None),
        ([], [], None),
        (ALL, ["garbage", 7, None, {"v": 1}, "2025-06-18"], "2025-06-18"),  # what is not a version is ignored
        (ALL, ["garbage"], None),
    ],
)
def test_a_client_takes_the_highest_mutual_version(ours: list[str], offered: list[Any], chosen: str | None) -> None:
    assert negotiate(ours, offered=offered) == chosen


def test_requested_and_offered_together_and_nothing_supported() -> None:
    assert negotiate(ALL, requested="2025-06-18", offered=["2025-06-18", "2026-07-28"]) == "2025-06-18"
    assert negotiate(ALL, requested="2025-03-26", offered=["2025-06-18"]) == "2025-06-18"
    assert negotiate([], requested="2025-06-18") is None


@pytest.mark.parametrize("bad", ["2025-13-01", "2025-00-10", "2025-1-1", "25-11-25", "2025-11-25x", "", "latest"])
def test_only_iso_dates_are_versions(bad: str) -> None:
    with pytest.raises(ValueError, match="is not an MCP protocol version"):
        version_key(bad)
    with pytest.raises(ValueError):
        negotiate([*LEGACY, bad], requested="2025-06-18")


def test_versions_order_as_dates_not_as_text() -> None:
    assert newest_first(["2025-03-26", "2026-07-28", "2024-11-05", "2025-03-26"]) == (
        "2026-07-28",
        "2025-03-26",
        "2024-11-05",
    )
    assert version_key("2025-11-25") > version_key("2025-06-18")


def entry(version: str, era: str = "modern") -> RevisionEntry:
    return RevisionEntry(version, era, f"somewhere.v{version.replace('-', '_')}")  # type: ignore[arg-type]


def test_registry_holds_every_revision_newest_first_and_chains_to_a_parent() -> None:
    locked = by_date_newest_first(VERSIONS)  # every revision schema/lock.json locks
    assert mcpgen.REGISTRY.versions == locked
    assert mcpgen.REGISTRY.of_era("legacy") == of_era("legacy")
    assert mcpgen.REGISTRY.of_era("modern") == of_era("modern")
    assert mcpgen.REGISTRY.entry("2025-03-26").batching and not mcpgen.REGISTRY.entry("2025-06-18").batching
    assert mcpgen.REGISTRY.up_to("2025-06-18") == ("2025-06-18", "2025-03-26", "2024-11-05")
    project = VersionRegistry([entry("2027-03-01"), entry("2026-07-28")], parent=mcpgen.REGISTRY)
    assert project.versions == by_date_newest_first(["2027-03-01", *locked])
    assert project.entry("2026-07-28").package == "somewhere.v2026_07_28"  # its own entry wins
    assert project.entry("2025-11-25").package == "mcpgen.v2025_11_25"  # the rest from the parent


def test_registry_refuses_bad_entries_and_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="not an MCP protocol version"):
        VersionRegistry([entry("next")])
    with pytest.raises(ValueError, match="unknown era"):
        VersionRegistry([entry("2026-07-28", "future")])
    with pytest.raises(ValueError, match="listed twice"):
        VersionRegistry([entry("2026-07-28"), entry("2026-07-28")])
    known = re.escape(", ".join(by_date_newest_first(VERSIONS)))
    with pytest.raises(KeyError, match=f"unknown MCP revision '2025-05-01'; known: {known}"):
        mcpgen.REGISTRY.era("2025-05-01")


def test_registry_loads_a_revision_on_first_use_and_checks_it() -> None:
    revision = mcpgen.REGISTRY.revision("2025-06-18")
    assert revision.version == "2025-06-18" and mcpgen.REGISTRY.revision("2025-06-18") is revision
    wrong = VersionRegistry([RevisionEntry("2025-03-26", "legacy", "mcpgen.v2025_06_18")])
    with pytest.raises(ValueError, match="holds revision 2025-06-18, not 2025-03-26"):
        wrong.revision("2025-03-26")


def test_importing_the_package_loads_no_revision() -> None:
    probe = "import sys, mcpgen; print(sorted(m for m in sys.modules if m.startswith('mcpgen.v')))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT / "generated"
    )
    assert done.stdout.strip() == "[]"
