"""Static checks: every hook of ``.pre-commit-config.yaml`` passes, so CI and pre-commit agree."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT


def hooks() -> list[dict[str, Any]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def test_hooks_cover_every_source_folder() -> None:
    entries = " ".join(hook["entry"] for hook in hooks())
    for folder in ("codegen", "generated", "templates/runtime", "tests", "benchmarks", "examples"):
        assert folder in entries, f"no pre-commit hook checks {folder}"


@pytest.mark.parametrize("hook", hooks(), ids=lambda hook: hook["id"])
def test_static_checks_pass(hook: dict[str, Any], request: pytest.FixtureRequest) -> None:
    command = shlex.split(hook["entry"])
    environment = dict(os.environ)
    if command[0] == "mypy":  # the session's mypy cache (tests/conftest.py), not the checkout's
        environment["MYPY_CACHE_DIR"] = request.getfixturevalue("mypy_cache")[1]
    binary = Path(sys.executable).parent / command[0]  # the tools of this environment
    command[0] = str(binary) if binary.exists() else command[0]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=environment, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
