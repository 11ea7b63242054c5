"""How a server process ends: the runners skip the interpreter's last garbage collections
(``gc.freeze()`` from ``atexit``), and everything a program asks to happen at exit still happens.
The generator's CLI and its app describer end the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from mcp_schema_codegen.commands.app_surface import DESCRIBE
from tests.conftest import ROOT
from tests.server.servers import request

# Registered before the runtime is imported, so it runs after every handler the runtime
# registers (``atexit`` runs last-in first-out): it sees the heap as the interpreter's
# finalization will.
REPORT_AT_EXIT = """
import atexit, gc, sys
atexit.register(lambda: sys.stderr.write(f"frozen at exit: {gc.get_freeze_count() > 0}\\n"))
"""

SERVER = REPORT_AT_EXIT + textwrap.dedent(
    """
    import logging, logging.handlers, tempfile

    log = sys.argv[1]
    # buffered until logging's own atexit flush, after the runner's freeze
    buffered = logging.handlers.MemoryHandler(1000, flushLevel=logging.CRITICAL, target=logging.FileHandler(log))
    logging.getLogger("app").addHandler(buffered)
    logging.getLogger("app").warning("served and logged")
    scratch = tempfile.TemporaryDirectory()  # removed by weakref.finalize's atexit hook
    sys.stderr.write(f"scratch: {scratch.name}\\n")

    from mcpgen.v2026_07_28 import models as m, server as s

    class Tiny(s.Server):
        name = "tiny"
        version = "1.0.0"

        async def list_tools(self, params, ctx):
            return s.ListToolsResult(tools=[m.Tool(name="echo", input_schema={"type": "object"})])

    Tiny().run_stdio()
    """
)


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "generated")}


def test_a_stdio_server_ends_frozen_and_loses_nothing_it_asked_for_at_exit(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    done = subprocess.run(
        [sys.executable, "-c", SERVER, str(log)],
        input=json.dumps(request(1, "tools/list")) + "\n",
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["tools"][0]["name"] == "echo"
    assert "frozen at exit: True" in done.stderr.splitlines()
    assert log.read_text().splitlines() == ["served and logged"]
    scratch = next(line for line in done.stderr.splitlines() if line.startswith("scratch: "))
    assert not Path(scratch.removeprefix("scratch: ")).exists()


def test_the_cli_ends_frozen() -> None:
    program = REPORT_AT_EXIT + "from mcp_schema_codegen.commands.cli import main\nsys.exit(main(['--version']))\n"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "frozen at exit: True" in done.stderr.splitlines()


def test_the_app_describer_ends_frozen_and_still_describes(tmp_path: Path) -> None:
    out = tmp_path / "described.json"
    example = ROOT / "examples" / "weather"
    done = subprocess.run(
        [sys.executable, "-c", REPORT_AT_EXIT + DESCRIBE, str(example), "weather", "app", str(out)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=example,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [tool["name"] for tool in json.loads(out.read_text())["tools"]] == ["add", "get_forecast", "fail"]
    assert "frozen at exit: True" in done.stderr.splitlines()
