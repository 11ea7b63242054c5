"""``mcp-codegen scaffold`` and ``regen``: a fresh project passes its own checks, interoperates, and
regeneration rewrites only generator-owned files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mcp_schema_codegen.commands.cli import main
from tests.peers import TS_CLIENT, node22, node_env, npm_install
from tests.server.servers import free_port, stop, wait_http
from tests.server.test_interop_ts import SCRIPT

NAME = "demo-server"
MODULE = "demo_server"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scaffold")
    assert main(["scaffold", NAME, "--dir", str(base)]) == 0
    return base / NAME


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_fresh_scaffold_passes_its_own_test_and_ruff_in_one_command(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout  # the server test and the ruff test both ran


def test_scaffold_layout_and_manifest(project: Path) -> None:
    manifest = json.loads((project / ".mcp-codegen.json").read_text())
    assert manifest["version"] == "2026-07-28" and manifest["package"] == f"{MODULE}_mcp"
    assert f"{MODULE}_mcp/v2026_07_28/server.py" in manifest["generated"]
    assert set(manifest["user"]) == {
        "pyproject.toml",
        "README.md",
        f"{MODULE}/__init__.py",
        f"{MODULE}/__main__.py",
        f"{MODULE}/server.py",
        "tests/test_server.py",
    }
    assert "call_tool" in manifest["signatures"]
    assert "from pydantic import MISSING" in (project / MODULE / "server.py").read_text()


def test_scaffold_refuses_a_non_empty_directory(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scaffold", NAME, "--dir", str(project.parent)]) == 2
    assert "not empty" in capsys.readouterr().err


def copy_project(project: Path, tmp_path: Path) -> Path:
    target = tmp_path / NAME
    subprocess.run(["cp", "-r", str(project), str(target)], check=True)
    return target


def test_regen_rewrites_generated_files_and_never_user_files(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_project(project, tmp_path)
    user_file = root / MODULE / "server.py"
    user_file.write_text(user_file.read_text() + "\n# mine\n")
    generated = root / f"{MODULE}_mcp" / "_runtime" / "jsonrpc.py"
    generated.unlink()  # a deleted generated file comes back
    assert main(["regen", "--project", str(root)]) == 0
    out = capsys.readouterr().out
    assert "file(s) written" in out and "handler" not in out
    assert generated.exists()
    assert user_file.read_text().endswith("# mine\n")


def test_regen_refuses_to_overwrite_a_hand_edited_generated_file(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_project(project, tmp_path)
    edited = root / f"{MODULE}_mcp" / "v2026_07_28" / "server.py"
    edited.write_text(edited.read_text() + "\n# hand edit\n")
    assert main(["regen", "--project", str(root)]) == 2
    err = capsys.readouterr().err
    assert "hand-edited" in err and "v2026_07_28/server.py" in err
    assert edited.read_text().endswith("# hand edit\n")  # untouched
    assert main(["regen", "--project", str(root), "--force"]) == 0
    assert not edited.read_text().endswith("# hand edit\n")


def test_regen_reports_changed_handler_signatures(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_project(project, tmp_path)
    assert main(["regen", "--project", str(root), "--version", "2025-11-25"]) == 0
    out = capsys.readouterr().out
    assert "handler changed: call_tool(" in out and "-> m.CallToolResult\n" in out + "\n"
    assert "handler added: get_task(" in out
    # every locked revision is generated (the server serves them all), so server.py's imports keep working
    assert (root / f"{MODULE}_mcp" / "v2026_07_28" / "server.py").exists()
    assert json.loads((root / ".mcp-codegen.json").read_text())["version"] == "2025-11-25"


def test_regen_outside_a_project_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regen", "--project", str(tmp_path)]) == 2
    assert ".mcp-codegen.json not found" in capsys.readouterr().err


# -- interop with real peer clients on the scaffolded server -------------------------------------


@pytest.fixture(scope="module")
def http_url(project: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", MODULE, "--http", "--port", str(port)],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(),
    )
    try:
        wait_http(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


async def add_with_python_sdk(target: object, mode: str) -> tuple[str, str]:
    async with asyncio.timeout(30):
        async with Client(target, mode=mode) as client:
            result = await client.call_tool("add", {"a": 2, "b": 3})
            return client.session.protocol_version, result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
def test_python_sdk_client_on_scaffolded_server(project: Path, http_url: str, mode: str, version: str) -> None:
    stdio = StdioServerParameters(command=sys.executable, args=["-m", MODULE], cwd=str(project), env=env())
    for target in (http_url, stdio):
        assert asyncio.run(add_with_python_sdk(target, mode)) == (version, "5")


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
def test_ts_client_on_scaffolded_server(project: Path, http_url: str, mode: str, version: str) -> None:
    script = npm_install(TS_CLIENT) / "ts_client.mjs"
    script.write_bytes(SCRIPT.read_bytes())
    for target in ([http_url], ["stdio", sys.executable, "-m", MODULE]):
        done = subprocess.run(
            [str(node22()), str(script), mode, *target],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=project,
            env={**node_env(), "MCP_INTEROP_PROFILE": "scaffold"},
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        seen = json.loads(done.stdout.strip().splitlines()[-1])
        assert (seen["version"], seen["tools"], seen["added"]) == (version, ["add"], "5")
