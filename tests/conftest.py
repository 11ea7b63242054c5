"""Shared fixtures: the repository paths and the bundled schemas (schema/<version>/schema.json)."""

from __future__ import annotations

import atexit
import gc
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from mcp_schema_codegen.backend.cache import CACHE_DIR
from mcp_schema_codegen.frontend.lock import Lock, load_lock
from tests.revisions import VERSIONS as LOCKED_VERSIONS
from tests.scale.redis_server import RedisServer, start_redis
from tests.shared import shared_root

ROOT = Path(__file__).resolve().parents[1]
GENERATED = ROOT / "generated"
SCHEMA_DIR = ROOT / "schema"
EXAMPLES = SCHEMA_DIR / "2026-07-28" / "examples"
VERSIONS = LOCKED_VERSIONS  # every revision schema/lock.json locks, oldest first
pytest_plugins = ["tests.codec.goldens"]  # --update-goldens

if str(GENERATED) not in sys.path:
    sys.path.insert(0, str(GENERATED))

MEMORY_TMP = Path("/dev/shm")
MEMORY_TMP_FREE = 4 << 30  # bytes free there, at least, to use it


def temporary_files_in_memory() -> None:
    """Put the run's temporary files (pytest's ``tmp_path`` roots, and every ``tempfile`` of the
    processes the tests start) in memory when the machine has a tmpfs with room and no ``TMPDIR``
    is set. The suite writes some 40,000 files a run (generated packages of 900 files, scaffolds,
    copies of them) and removes them again; on the disk-backed /tmp of these machines creating one
    took 250-700 us against 15 us on /dev/shm, and the fast tests 3-5 s longer."""
    if os.environ.get("TMPDIR") or not MEMORY_TMP.is_dir() or not os.access(MEMORY_TMP, os.W_OK):
        return
    space = os.statvfs(MEMORY_TMP)
    # noexec: the acceptance test runs the console scripts of a venv it makes there
    if space.f_bavail * space.f_frsize >= MEMORY_TMP_FREE and not space.f_flag & os.ST_NOEXEC:
        os.environ["TMPDIR"] = str(MEMORY_TMP)
        tempfile.tempdir = None  # tempfile read TMPDIR once already; it reads it again


temporary_files_in_memory()

# Hypothesis times its own data generation and each example: on 2 cores shared by 4 workers and
# the servers, compilers and type checkers they start, a draw took 1.2 s once (too_slow failed a
# CI run, not the property). What the properties check is unchanged; how long it takes is not
# theirs to judge here.
settings.register_profile("suite", suppress_health_check=[HealthCheck.too_slow], deadline=None)
settings.load_profile("suite")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: twice as many workers as there are cores, at most four more than the cores. A
    third of a worker's time goes to waiting (on the servers, generators and type checkers it
    starts, on sockets, on timeouts it tests), and the extra workers fill it: on 2 cores the fast
    tests took 89 s with 2 workers, 58-59 s with 3, 53-57 s with 4 and 54-64 s with 5. Each worker
    collects the whole suite (about 2 s of CPU) and starts its own servers, hence the bound on
    larger machines (measured on 2 cores only). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` and ``-n
    logical`` are xdist's, as usual."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS") or config.getoption("numprocesses", None) == "logical":
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(2 * cores, cores + 4)


def pytest_configure(config: pytest.Config) -> None:
    keep_bytecode_apart(config)
    end_workers_without_a_last_collection()


def end_workers_without_a_last_collection() -> None:
    """An xdist worker's heap at exit (every revision's models, the generator, hypothesis, the
    servers' apps) took its interpreter's last garbage collections 1.3-2 s, after its last test and
    with the run waiting on it. ``gc.freeze()`` at exit takes every object out of the collector's
    view, and a worker then ends in 0.1-0.3 s; nothing else of the shutdown changes. Registered at
    configure: the exit handlers pytest registers later (its temporary directories') run first."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        atexit.register(gc.freeze)


def keep_bytecode_apart(config: pytest.Config) -> None:
    """With ``PYTHONDONTWRITEBYTECODE`` set (it is on these machines), every Python process the
    suite starts (some 200 a fast run: servers, the scaffolds' own tests, mypy, the CLI) compiled
    the project's sources again, and every xdist worker rewrote every test module's asserts: about
    a fifth of a run's CPU. The run writes its bytecode instead, apart from the tree
    (``PYTHONPYCACHEPREFIX``: pytest's cache, ``.pytest_cache/d/bytecode``, or a prefix the user
    set), so the tree stays as clean as the setting asks; the workers and every process started
    inherit it. A run without pytest's cache (``-p no:cacheprovider``, ``--cache-clear``) keeps to
    the setting, unless the prefix is the user's. What earlier runs compiled of their temporary
    files is removed first."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or "PYTEST_XDIST_WORKER" in os.environ:
        return
    own = os.environ.get("PYTHONPYCACHEPREFIX")
    prefix = Path(own).resolve() if own else kept_between_runs(config, "bytecode")
    if prefix is None:
        return
    for temporary in {Path(tempfile.gettempdir()), Path(tempfile.gettempdir()).resolve()}:
        mirror = prefix / temporary.relative_to(temporary.anchor)
        for old in [*mirror.glob("pytest-of-*"), *mirror.glob("tmp*")]:
            shutil.rmtree(old, ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = str(prefix)
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    sys.dont_write_bytecode = False


@pytest.fixture(scope="session")
def lock() -> Lock:
    return load_lock(SCHEMA_DIR)


def kept_between_runs(config: pytest.Config, name: str) -> Path | None:
    """A directory of pytest's cache (``.pytest_cache/d/NAME``) that the next run finds again; None
    when the run has no cache (``-p no:cacheprovider``) or clears it (``--cache-clear``, which every
    xdist worker repeats as it starts)."""
    cache = getattr(config, "cache", None)
    if cache is None or config.getoption("cacheclear", False):
        return None
    return Path(cache.mkdir(name))


@pytest.fixture(scope="session", autouse=True)
def generation_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One datamodel-code-generator cache shared by the xdist workers, kept between runs in pytest's
    cache (its entries are keyed by everything the output depends on: ``backend/cache.py``).

    Never the user's own cache; processes the tests start inherit it. Tests of generation itself
    (the golden tree, determinism) turn it off.
    """
    kept = kept_between_runs(request.config, "mcp-codegen-generation")
    root = kept if kept is not None else shared_root(tmp_path_factory) / "generation-cache"
    patch = pytest.MonkeyPatch()
    patch.setenv(CACHE_DIR, str(root))
    yield root
    patch.undo()


def build_mypy_seed(root: Path, config: pytest.Config) -> list[str]:
    """The command that builds (or waits for) the run's mypy seed, ``root/mypy-seed``, from the one
    the last run kept in pytest's cache (tests/mypy_seed.py)."""
    kept = kept_between_runs(config, "mcp-codegen-mypy")
    return [sys.executable, "-m", "tests.mypy_seed", str(root), *([str(kept / "seed")] if kept else [])]


@pytest.fixture(scope="session", autouse=True)
def mypy_seed_started(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Start building the run's mypy seed in the background when the first worker starts, if a
    selected test runs mypy: the worker whose test needs it first then waits less, or not at all."""
    root = shared_root(tmp_path_factory)
    if not any("mypy_cache" in item.fixturenames for item in request.session.items):
        yield
        return
    try:
        os.close(os.open(root / "mypy-seed.started", os.O_CREAT | os.O_EXCL))  # one builder per run
    except FileExistsError:
        yield
        return
    builder = subprocess.Popen(
        build_mypy_seed(root, request.config), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        yield
    finally:
        builder.terminate()  # done long since in a full run; a run that stops early stops it too
        builder.wait()


@pytest.fixture(scope="session")
def mypy_cache(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``--cache-dir`` arguments for every mypy run of this session (of this xdist worker).

    A cold mypy run re-analyses pydantic, httpx and the standard library (several seconds): each
    worker starts from its own copy of the run's seed (tests/mypy_seed.py: the lint hook's run,
    built once), and its runs, one at a time, add to that copy. mypy checks each cached module
    against its file's path, size and hash and against the run's options, so a copy is as exact as
    a cold cache and runs on different projects stay exact.
    """
    root = shared_root(tmp_path_factory)
    seed = root / "mypy-seed"
    if not seed.is_dir():  # complete whenever it exists; else build it here, or wait for its builder
        subprocess.run(build_mypy_seed(root, request.config), cwd=ROOT, check=True)
    cache = tmp_path_factory.mktemp("mypy-cache")
    shutil.copytree(seed, cache, dirs_exist_ok=True)
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
