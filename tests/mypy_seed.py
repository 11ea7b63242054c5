"""The test run's mypy cache seed: ``python -m tests.mypy_seed ROOT`` builds ``ROOT/mypy-seed`` once.

The seed holds the lint hook's mypy run over the repository (``.pre-commit-config.yaml``; what
tests/test_lint.py runs): the standard library, pydantic, httpx, mcpgen and the generator, the
part every mypy run of the suite shares. tests/conftest.py starts this in the background when a
selected test runs mypy, and runs it (or waits for it) when such a test needs the seed first.

Builders go through tests/shared.py's ``built_in``: a file lock, and the one that finds no seed
builds it in a directory of its own and renames that into place, so the seed is complete
whenever it exists. A builder stopped with SIGTERM (a run that ends early) stops its mypy first,
and the next builder starts over.

``python -m tests.mypy_seed ROOT KEPT`` also keeps the seed between runs in ``KEPT`` (a directory
in pytest's cache, ``.pytest_cache/d/``): the next run's mypy starts from it and re-analyses only
what changed since (about 1 s instead of 20 s of CPU when nothing did). mypy checks every cached
module against its file's size and hash and the run's options, so a kept cache is as exact as a
cold one; only a run in which mypy finished (exit 0, or 1 for findings) replaces it.
"""

from __future__ import annotations

import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import yaml
from filelock import FileLock

from tests.shared import built_in, copy_of

ROOT = Path(__file__).resolve().parents[1]


def lint_arguments() -> list[str]:
    """The arguments of the mypy hook of ``.pre-commit-config.yaml``."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (entry,) = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"] if hook["id"] == "mypy"]
    command, *arguments = shlex.split(entry)
    assert command == "mypy", entry
    return arguments


def build(root: Path, kept: Path | None = None) -> Path:
    """``root/mypy-seed``, built unless it exists (run from the repository, like the hook)."""
    return built_in(root, "mypy-seed", lambda cache: run_mypy(cache, kept))


def run_mypy(cache: Path, kept: Path | None = None) -> None:
    """The lint hook's mypy run into the cache directory ``cache``, started from the seed kept in
    ``kept`` by an earlier run, if any, and kept there again when mypy finished."""
    if kept is not None:
        with FileLock(f"{kept}.lock"):
            if kept.is_dir():
                copy_of(kept, cache)
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *lint_arguments()]
    mypy = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        finished = mypy.wait() in (0, 1)  # 1: findings (test_lint reports them); 2: mypy failed
    finally:
        mypy.kill()  # when this builder is stopped
        mypy.wait()
    if kept is not None and finished:
        keep(cache, kept)


def keep(cache: Path, kept: Path) -> None:
    """Replace ``kept`` with a copy of ``cache``: whole or not at all, one run at a time."""
    with FileLock(f"{kept}.lock"):
        fresh, old = kept.with_name(f"{kept.name}.new"), kept.with_name(f"{kept.name}.old")
        for scratch in (fresh, old):
            shutil.rmtree(scratch, ignore_errors=True)
        shutil.copytree(cache, fresh)
        if kept.is_dir():
            kept.rename(old)
        fresh.rename(kept)
        shutil.rmtree(old, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    build(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
