"""Run ``mcp-codegen`` in this process, for tests where the command's behaviour, not its process,
is under test: no interpreter start-up and no re-import of the generator per call."""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

from mcp_schema_codegen.commands.cli import main


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """What ``python -m mcp_schema_codegen ARGS`` in ``cwd`` returns: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return subprocess.CompletedProcess(["mcp-codegen", *args], status, out.getvalue(), err.getvalue())
