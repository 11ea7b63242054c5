"""Shared fixtures: the repository paths and the bundled schemas (schema/<version>/schema.json)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

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


def run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory every xdist worker of this run shares (the basetemp root), for set-up done once."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session", autouse=True)
def generation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One datamodel-code-generator cache for the whole run, shared by the xdist workers.

    Never the user's own cache; processes the tests start inherit it. Tests of generation itself
    (the golden tree, determinism) turn it off.
    """
    root = run_root(tmp_path_factory) / "generation-cache"
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_DIR, str(root))
    yield root
    patch.undo()


def mypy_hook() -> list[str]:
    """The arguments of the mypy hook of ``.pre-commit-config.yaml`` (what tests/test_lint.py runs)."""
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (entry,) = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"] if hook["id"] == "mypy"]
    command, *arguments = shlex.split(entry)
    assert command == "mypy", entry
    return arguments


def mypy_seed(root: Path) -> Path:
    """A mypy cache holding the lint hook's run over the repository (the standard library, pydantic,
    httpx, mcpgen, the generator), built once per test run by whichever xdist worker needs it first.

    Only ever read after it is complete (built under a file lock, then renamed into place), and every
    mypy run gets a copy of it, never the seed itself. mypy checks each cached module against its
    file's path, size and hash and against the run's options, so a copy is as exact as a cold cache:
    a module whose file or options differ is analysed again.
    """
    seed = root / "mypy-seed"
    with FileLock(root / "mypy-seed.lock"):
        if not seed.is_dir():
            building = root / "mypy-seed.building"
            shutil.rmtree(building, ignore_errors=True)
            command = [sys.executable, "-m", "mypy", "--cache-dir", str(building), *mypy_hook()]
            subprocess.run(command, cwd=ROOT, capture_output=True, check=False)  # test_lint asserts its result
            building.mkdir(exist_ok=True)
            building.rename(seed)
    return seed


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``--cache-dir`` arguments for every mypy run of this session (of this xdist worker).

    A cold mypy run re-analyses pydantic, httpx and the standard library (several seconds): each
    worker starts from its own copy of the run's seed (``mypy_seed``), and its runs, one at a time,
    add to that copy. mypy checks each cached module against its file's path, size and hash and
    against the run's options, so runs on different projects stay exact.
    """
    cache = tmp_path_factory.mktemp("mypy-cache")
    shutil.copytree(mypy_seed(run_root(tmp_path_factory)), cache, dirs_exist_ok=True)
    return ["--cache-dir", str(cache)]


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    """A private ``redis-server`` (free loopback port, empty data directory) for one test module."""
    server, directory = start_redis()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
