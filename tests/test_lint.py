"""Type-check and lint the generator and the generated package, as CI and pre-commit do."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "mypy", "--strict", "codegen/mcp_schema_codegen", "generated/mcpgen"],
        [sys.executable, "-m", "ruff", "check", "codegen", "generated", "tests"],
        [sys.executable, "-m", "ruff", "format", "--check", "codegen", "tests"],
    ],
    ids=["mypy-strict", "ruff-check", "ruff-format"],
)
def test_static_checks_pass(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
