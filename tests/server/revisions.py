"""A made-up revision for a test: 2026-07-28's schema changed, adopted into a copy of the lock and
generated against the installed runtime, as a maintainer would take a new one in."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mcp_schema_codegen.commands.schema import adopt
from mcp_schema_codegen.pipeline import Options, generate
from tests.conftest import SCHEMA_DIR

BASE = "2026-07-28"


@contextlib.contextmanager
def made_up_revision(
    base: Path,
    version: str,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    package: str,
    overlay: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[Path]:
    """``change`` applied to 2026-07-28's schema, adopted as ``version`` (its patches carried) into
    a copy of the lock under ``base`` (its overlay changed by ``overlay``, as a maintainer adds the
    facts a new revision's schema does not carry) and generated into ``package`` in ``base/out``,
    which is on ``sys.path`` meanwhile; the package's modules are forgotten afterwards."""
    schema_dir = base / "schema"
    shutil.copytree(SCHEMA_DIR, schema_dir, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    if overlay is not None:
        raw = json.loads((schema_dir / "overlay.json").read_text())
        overlay(raw)
        (schema_dir / "overlay.json").write_text(json.dumps(raw, indent=2))
    upstream = base / "upstream" / version
    upstream.mkdir(parents=True)
    document = json.loads((SCHEMA_DIR / BASE / "schema.json").read_text())
    (upstream / "schema.json").write_text(json.dumps(change(document), indent=2))
    adopt(schema_dir, str(base / "upstream"), version, "modern")
    out = base / "out"
    generate(Options(schema_dir=schema_dir, out=out, package=package, versions=[version]))  # runtime: mcpgen._runtime
    sys.path.insert(0, str(out))
    try:
        yield out
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
