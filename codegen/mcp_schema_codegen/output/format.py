"""Formatting generated code with ruff (pinned exactly: its output is part of ours)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mcp_schema_codegen.errors import GeneratorError

LINE_LENGTH = "100"


def ruff_binary() -> str:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("ruff")
        if found is None:
            raise GeneratorError(
                "ruff is not installed", hint="pip install the generator with its dependencies"
            ) from None
        return found


def format_tree(root: Path, package: str) -> None:
    """Lint-fix (unused imports, import order) and format every file under ``root``."""
    ruff = ruff_binary()
    common = ["--isolated", "--line-length", LINE_LENGTH, "--target-version", "py311"]
    steps = [
        [
            ruff,
            "check",
            "--fix-only",
            "--exit-zero",
            "--quiet",
            *common,
            "--select",
            "F401,I,UP",
            "--config",
            f"lint.isort.known-first-party=['{package}']",
            str(root),
        ],
        [ruff, "format", "--quiet", *common, str(root)],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise GeneratorError(f"ruff failed on generated code: {done.stderr.strip().splitlines()[-1:]}")
