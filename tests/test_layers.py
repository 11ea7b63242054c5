"""The runtime's architecture, checked: import-linter contracts (``.importlinter``) and one envelope writer."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

RUNTIME = ROOT / "templates" / "runtime"


def test_runtime_layers_hold_and_no_generated_package_is_imported() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), str(ROOT / ".importlinter"), "--no-cache"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Contracts: 5 kept, 0 broken." in done.stdout


def test_only_the_wire_layer_writes_json_rpc_envelopes() -> None:
    envelope = re.compile(r"""["']jsonrpc["']\s*:""")
    writers = sorted(
        path.relative_to(RUNTIME).as_posix() for path in RUNTIME.rglob("*.py") if envelope.search(path.read_text())
    )
    assert writers == ["jsonrpc.py"]
