"""Shared fixtures: the repo paths and schemas synced from ../shared/mcp-schema."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mcp_schema_codegen.frontend.lock import Lock, load_lock, sync

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
SCHEMA_DIR = ROOT / "schema"
SCHEMA_SOURCE = Path(os.environ.get("MCP_SCHEMA_SOURCE", ROOT.parent / "shared" / "mcp-schema"))
EXAMPLES = SCHEMA_SOURCE / "2026-07-28" / "examples"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
pytest_plugins = ["tests.codec.goldens"]  # --update-goldens

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


def pytest_sessionstart(session: pytest.Session) -> None:
    """Tests and CI read the schemas synced from the shared reference copy."""
    sync(load_lock(SCHEMA_DIR), str(SCHEMA_SOURCE))


@pytest.fixture(scope="session")
def lock() -> Lock:
    return load_lock(SCHEMA_DIR)
