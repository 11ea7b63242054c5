"""Issue 10's acceptance: the three jobs from a pip install, offline, in an empty directory.

Both distributions are built from this checkout and installed into a fresh virtual environment
(dependencies from the machine's package index, the two wheels from a local directory); then,
in an empty directory with no schema/ and no checkout beside it: generate, methods, diff,
scaffold, the scaffold's own tests, a call from the official ``mcp`` client in auto mode,
adoption of a revision made here (2026-07-28 plus one method and one field), ``regen`` inside
the project, the same call again, and ``check`` green.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT, SCHEMA_DIR

# real peers: npm packages, the official SDK, built wheels; the tests build on each other's project in
# order, which the suite's --dist loadscope keeps (one module, one worker)
pytestmark = pytest.mark.interop

NEW = "2026-09-30"  # the revision this test makes


@dataclass(frozen=True)
class Fresh:
    """A fresh virtual environment with both wheels installed, and an empty working directory."""

    venv: Path
    work: Path
    dist: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        return {**keep, "VIRTUAL_ENV": str(self.venv), "PATH": f"{self.venv / 'bin'}{os.pathsep}{keep['PATH']}"}

    def run(self, *args: str, cwd: Path | None = None, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            list(args), cwd=cwd or self.work, env=self.env(), capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode in ok, (
            f"{' '.join(args)} -> {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done

    def codegen(
        self, *args: str, cwd: Path | None = None, ok: tuple[int, ...] = (0,)
    ) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.venv / "bin" / "mcp-codegen"), *args, cwd=cwd, ok=ok)

    def pip(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "pip", "--python", str(self.python), "-q", *args, cwd=cwd)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fresh]:
    base = tmp_path_factory.mktemp("acceptance")
    dist, work = base / "dist", base / "work"
    work.mkdir()
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist)]
    subprocess.run([*build, str(ROOT), str(ROOT / "generated")], check=True, capture_output=True, cwd=base)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    env = Fresh(venv, work, dist)
    # the generator (its runtime from the local wheel, the rest from the index), and what the
    # scaffolded project's tests and editable install use
    env.pip("install", "--no-compile", "--find-links", str(dist), "mcp-schema-codegen", "pytest", "hatchling")
    yield env


def test_the_wheels_are_two_distributions_with_the_right_contents(fresh: Fresh) -> None:
    wheels = {p.name.split("-")[0]: p for p in fresh.dist.glob("*.whl")}
    assert sorted(wheels) == ["mcp_schema_codegen", "mcpgen"]
    with zipfile.ZipFile(wheels["mcpgen"]) as runtime:
        names = runtime.namelist()
        requires = runtime.read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert {n.split("/")[0] for n in names} == {"mcpgen", "mcpgen-0.2.0.dist-info"}
    for tool in ("datamodel-code-generator", "black", "isort", "ruff", "jinja2"):
        assert f"Requires-Dist: {tool}" not in requires
    with zipfile.ZipFile(wheels["mcp_schema_codegen"]) as generator:
        names = generator.namelist()
    assert {n.split("/")[0] for n in names} == {"mcp_schema_codegen", "mcp_schema_codegen-0.2.0.dist-info"}
    bundled = {n for n in names if n.endswith("schema.json")}
    assert len(bundled) == 5 and not any("/examples/" in n for n in names)
    assert "mcp_schema_codegen/_data/schema/LICENSE-upstream" in names


def make_revision(directory: Path) -> Path:
    """2026-07-28 plus one method (tools/validate) and one field (Tool.category)."""
    document = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text())
    defs = document["$defs"]
    defs["Tool"]["properties"]["category"] = {"type": "string", "description": "A grouping of tools."}
    request = json.loads(json.dumps(defs["ListToolsRequest"]))
    request["properties"]["method"]["const"] = "tools/validate"
    request["properties"]["params"] = {"$ref": "#/$defs/ValidateToolRequestParams"}
    defs["ValidateToolRequest"] = request
    defs["ValidateToolRequestParams"] = {
        "type": "object",
        "properties": {"_meta": {"$ref": "#/$defs/RequestMetaObject"}, "name": {"type": "string"}},
        "required": ["_meta", "name"],
    }
    result = json.loads(json.dumps(defs["CompleteResult"]))
    result["properties"] = {k: v for k, v in result["properties"].items() if k != "completion"}
    result["properties"]["valid"] = {"type": "boolean"}
    result["required"] = [r for r in result.get("required", []) if r != "completion"] + ["valid"]
    defs["ValidateToolResult"] = result
    defs["ClientRequest"]["anyOf"].append({"$ref": "#/$defs/ValidateToolRequest"})
    path = directory / NEW / "schema.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document, indent=2))
    return path


async def call_add(fresh: Fresh, project: Path) -> tuple[str, str]:
    """The official client, auto mode, over stdio, against the project run by the fresh venv's python."""
    # the official SDK, imported here: only the interop tests pay its second of import time
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=str(fresh.python), args=["-m", "weather"], cwd=str(project), env=fresh.env())
    async with asyncio.timeout(60):
        async with Client(server, mode="auto") as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            return client.session.protocol_version, result.content[0].text  # type: ignore[union-attr]


def test_the_three_jobs_from_a_pip_install_in_an_empty_directory(fresh: Fresh) -> None:
    work = fresh.work
    # generate, methods, diff: the bundled schemas, no ./schema
    done = fresh.codegen("generate", "--version", "2026-07-28", "--out", "out", "--package", "acme_mcp")
    assert "2026-07-28 (modern): 21 methods" in done.stdout
    probe = "import acme_mcp.v2026_07_28.client as c; print(c.Client.revision.version)"
    assert fresh.run(str(fresh.python), "-c", probe, cwd=work / "out").stdout.strip() == "2026-07-28"
    assert fresh.codegen("methods", "--version", "2026-07-28").stdout.startswith("MCP 2026-07-28 (modern era), 21")
    assert "era: legacy -> modern" in fresh.codegen("diff", "2025-11-25", "2026-07-28", ok=(1,)).stdout
    assert not (work / "schema").exists()

    # scaffold, and the scaffold's own tests (the server over stdio, ruff)
    fresh.codegen("scaffold", "weather")
    project = work / "weather"
    fresh.pip("install", "--no-build-isolation", "--find-links", str(fresh.dist), str(project))
    tests = fresh.run(str(fresh.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert "3 passed" in tests.stdout

    # the official client, auto mode
    assert asyncio.run(call_add(fresh, project)) == ("2026-07-28", "5")

    # adopt a revision made here, move the project to it, check
    source = make_revision(work / "upstream")
    adopted = fresh.codegen("schema", "sync", "--from", str(source), "--version", NEW, "--update-lock", cwd=project)
    assert f"{NEW}: locked sha256" in adopted.stdout and "carried to" in adopted.stdout
    regen = fresh.codegen("regen", "--version", NEW, cwd=project).stdout
    assert f"upgrade 2026-07-28 -> {NEW}:" in regen
    assert "  handler added: validate_tool(params: m.ValidateToolRequestParams) -> m.ValidateToolResult" in regen
    assert "  method added: tools/validate" in regen
    lines = regen.splitlines()
    tool = next(i for i, line in enumerate(lines) if line.startswith("  fields of Tool ("))
    assert "list_tools" in lines[tool] and lines[tool + 1] == "    + category: string (optional)"
    assert f'versions = ["{NEW}"]' in (project / "pyproject.toml").read_text()
    fresh.codegen("check", cwd=project)
    fresh.codegen("check", "--full", cwd=project)
    probe = "import weather_mcp.models as m; print(m.Tool.model_fields['category'].alias or 'category')"
    assert fresh.run(str(fresh.python), "-c", probe, cwd=project).stdout.strip() == "category"


def test_the_same_call_after_moving_to_the_new_revision(fresh: Fresh) -> None:
    """A server on a newer modern revision still serves the official client in auto mode (item 5)."""
    project = fresh.work / "weather"
    assert f'versions = ["{NEW}"]' in (project / "pyproject.toml").read_text(), "run after the test above"
    version, text = asyncio.run(call_add(fresh, project))
    assert text == "5" and version in ("2026-07-28", NEW)
