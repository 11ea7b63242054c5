"""Client-side typing: ``mypy --strict`` accepts a program using the generated client and
rejects one that passes a wrong argument type or uses a result field that does not exist.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import GENERATED, ROOT

SAMPLE = Path(__file__).parent / "typed_sample.py"
BAD = """
from mcpgen.v2026_07_28 import client as modern


async def wrong(client: modern.Client) -> None:
    await client.call_tool(name=42)
    result = await client.list_tools()
    print(result.no_such_field)
"""


def mypy(cache: list[str], *paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *cache, *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"MYPYPATH": str(GENERATED), "PATH": ""},
        check=False,
    )


def test_sample_program_type_checks(mypy_cache: list[str]) -> None:
    done = mypy(mypy_cache, SAMPLE)
    assert done.returncode == 0, done.stdout[-4000:]


def test_wrong_arguments_are_caught(tmp_path: Path, mypy_cache: list[str]) -> None:
    bad = tmp_path / "bad_client_use.py"
    bad.write_text(BAD, encoding="utf-8")
    done = mypy(mypy_cache, bad)
    assert done.returncode == 1
    assert 'bad_client_use.py:6: error: No overload variant of "call_tool" of "Client" matches' in done.stdout
    assert '"ListToolsResult" has no attribute "no_such_field"' in done.stdout
