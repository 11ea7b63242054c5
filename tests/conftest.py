"""Shared fixtures: the repository paths and the bundled schemas (schema/<version>/schema.json)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_schema_codegen.backend.cache import CACHE_DIR
from mcp_schema_codegen.frontend.lock import Lock, load_lock
from tests.scale.redis_server import RedisServer, start_redis

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
SCHEMA_DIR = ROOT / "schema"
EXAMPLES = SCHEMA_DIR / "2026-07-28" / "examples"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
pytest_plugins = ["tests.codec.goldens"]  # --update-goldens

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))


@pytest.fixture(scope="session")
def lock() -> Lock:
    return load_lock(SCHEMA_DIR)


@pytest.fixture(scope="session", autouse=True)
def generation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One datamodel-code-generator cache for the whole run, shared by the xdist workers.

    Never the user's own cache; processes the tests start inherit it. Tests of generation itself
    (the golden tree, determinism) turn it off.
    """
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "generation-cache"
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_DIR, str(root))
    yield root
    patch.undo()


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``--cache-dir`` arguments for every mypy run of this session (of this xdist worker).

    A cold mypy run re-analyses pydantic, httpx and the standard library (several seconds); with one
    cache per session only the first run pays. mypy checks each cached module against its file's
    path, size and hash and against the run's options, so runs on different projects stay exact.
    """
    return ["--cache-dir", str(tmp_path_factory.mktemp("mypy-cache"))]


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A private ``redis-server`` (free loopback port, empty data directory) for one test module."""
    server, directory = start_redis()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
