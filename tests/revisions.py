"""The revisions the tests enumerate: every one ``schema/lock.json`` locks, read from it.

A new revision is data, never code (CONTRIBUTING): adopting one into ``schema/`` and the lock adds
it to every test that means "every revision", with no list here to extend. Tests that check facts
of one particular revision name it themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mcp_schema_codegen.frontend.lock import load_lock

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schema"


def _date(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-"))


def oldest_first(versions: Iterable[str]) -> tuple[str, ...]:
    """``versions`` without duplicates, ordered by date, oldest first."""
    return tuple(sorted(set(versions), key=_date))


def newest_first(versions: Iterable[str]) -> tuple[str, ...]:
    """``versions`` without duplicates, ordered by date, newest first (as a registry lists them)."""
    return oldest_first(versions)[::-1]


def locked_eras(schema_dir: Path = SCHEMA_DIR) -> dict[str, str]:
    """Every locked revision and its era, oldest first."""
    revisions = load_lock(schema_dir).revisions
    return {version: revisions[version].era for version in oldest_first(revisions)}


ERAS = locked_eras()
VERSIONS: tuple[str, ...] = tuple(ERAS)
"""Every locked revision, oldest first."""


def of_era(era: str) -> tuple[str, ...]:
    """The locked revisions of one era, newest first."""
    return newest_first(version for version, its in ERAS.items() if its == era)
