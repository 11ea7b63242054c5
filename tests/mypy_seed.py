"""The test run's mypy cache seed: ``python -m tests.mypy_seed ROOT`` builds ``ROOT/mypy-seed`` once.

The seed holds the lint hook's mypy run over the repository (``.pre-commit-config.yaml``; what
tests/test_lint.py runs): the standard library, pydantic, httpx, mcpgen and the generator, the
part every mypy run of the suite shares. tests/conftest.py starts this in the background when a
selected test runs mypy, and runs it (or waits for it) when such a test needs the seed first.

Builders go through tests/shared.py's ``built_in``: a file lock, and the one that finds no seed
builds it in a directory of its own and renames that into place, so the seed is complete
whenever it exists. A builder stopped with SIGTERM (a run that ends early) stops its mypy first,
and the next builder starts over.
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from tests.shared import built_in

ROOT = Path(__file__).resolve().parents[1]


def lint_arguments() -> list[str]:
    """The arguments of the mypy hook of ``.pre-commit-config.yaml``."""
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (entry,) = [hook["entry"] for repo in config["repos"] for hook in repo["hooks"] if hook["id"] == "mypy"]
    command, *arguments = shlex.split(entry)
    assert command == "mypy", entry
    return arguments


def build(root: Path) -> Path:
    """``root/mypy-seed``, built unless it exists (run from the repository, like the hook)."""
    return built_in(root, "mypy-seed", run_mypy)


def run_mypy(cache: Path) -> None:
    """The lint hook's mypy run into the cache directory ``cache``; its findings are test_lint's."""
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *lint_arguments()]
    mypy = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        mypy.wait()
    finally:
        mypy.kill()  # when this builder is stopped
        mypy.wait()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    build(Path(sys.argv[1]))
