"""``mcp-codegen scaffold`` and ``regen``: a fresh project passes its own checks, interoperates, and
regeneration rewrites only generator-owned files."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from mcp_schema_codegen import __version__
from mcp_schema_codegen.commands.cli import main
from tests.conftest import ROOT, VERSIONS
from tests.peers import TS_CLIENT, node22, node_env, npm_install
from tests.server.servers import free_port, request, stop, wait_http
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


def test_scaffold_layout_dependencies_and_manifest(project: Path) -> None:
    package = project / f"{MODULE}_mcp"
    manifest = json.loads((package / "_manifest.json").read_text())
    assert manifest["package"] == f"{MODULE}_mcp" and sorted(manifest["revisions"]) == ["2026-07-28"]
    assert {"v2026_07_28/server.py", "models.py", "server.py", "client.py"} <= set(manifest["files"])
    assert not (package / "_runtime").exists()  # the runtime comes from the mcpgen distribution
    assert not (project / ".mcp-codegen.json").exists()  # one manifest format
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    major, minor = __version__.split(".")[:2]
    assert pyproject["project"]["dependencies"] == [f"mcpgen>={__version__},<{major}.{int(minor) + 1}"]
    assert pyproject["tool"]["mcp-codegen"] == {
        "versions": ["2026-07-28"],
        "out": ".",
        "package": f"{MODULE}_mcp",
        "current-modules": True,
    }
    user = (project / MODULE / "server.py").read_text()
    assert f"from {MODULE}_mcp import models as m" in user and "v2026_07_28" not in user.split('"""')[2]
    leftovers = [p.name for p in project.parent.iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no staging directory left beside the project


def test_fresh_scaffold_passes_mypy_strict(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "."],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env=env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "strict = true" in (project / "pyproject.toml").read_text()


def test_vendored_scaffold_carries_the_runtime_and_its_dependencies(tmp_path: Path) -> None:
    assert main(["scaffold", NAME, "--dir", str(tmp_path), "--vendor-runtime"]) == 0
    root = tmp_path / NAME
    assert (root / f"{MODULE}_mcp" / "_runtime" / "jsonrpc.py").is_file()
    runtime = tomllib.loads((ROOT / "generated" / "pyproject.toml").read_text())["project"]["dependencies"]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert pyproject["project"]["dependencies"] == runtime  # httpx among them: its own connect works
    assert pyproject["tool"]["mcp-codegen"]["vendor-runtime"] is True
    # no registry to chain to: every revision up to the project's is generated (legacy clients served)
    assert pyproject["tool"]["mcp-codegen"]["versions"] == list(VERSIONS)
    assert sorted(p.name for p in (root / f"{MODULE}_mcp").glob("v20*")) == [
        f"v{v.replace('-', '_')}" for v in VERSIONS
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    check = subprocess.run(
        [sys.executable, "-m", "mcp_schema_codegen", "check", "--full"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]


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
    generated = root / f"{MODULE}_mcp" / "v2026_07_28" / "codec.py"
    generated.unlink()  # a deleted generated file comes back
    assert main(["regen", "--project", str(root)]) == 0
    out = capsys.readouterr().out
    assert "regenerated for MCP 2026-07-28: 1 file(s) written, 0 removed" in out and "handler" not in out
    assert generated.exists()
    assert user_file.read_text().endswith("# mine\n")


def test_regen_refuses_to_overwrite_a_hand_edited_generated_file(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_project(project, tmp_path)
    edited = root / f"{MODULE}_mcp" / "v2026_07_28" / "server.py"
    edited.write_text(edited.read_text() + "\n# hand edit\n")
    (root / f"{MODULE}_mcp" / "notes.py").write_text("x = 1\n")
    assert main(["regen", "--project", str(root)]) == 2
    err = capsys.readouterr().err
    assert "edited by hand" in err and "v2026_07_28/server.py" in err and "notes.py: not written" in err
    assert edited.read_text().endswith("# hand edit\n")  # untouched
    assert main(["regen", "--project", str(root), "--force"]) == 0
    assert not edited.read_text().endswith("# hand edit\n")


def test_regen_inside_the_project_moves_the_revision_and_keeps_imports_working(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_project(project, tmp_path)
    monkeypatch.chdir(root)
    assert main(["regen", "--version", "2025-11-25"]) == 0
    out = capsys.readouterr().out
    assert "upgrade 2026-07-28 -> 2025-11-25:" in out
    assert (
        "  handler changed: call_tool(params: m.CallToolRequestParams) -> m.CallToolResult | m.InputRequiredResult"
        " -> call_tool(params: m.CallToolRequestParams) -> m.CallToolResult" in out
    )
    assert "  handler added: get_task(params: m.GetTaskRequestParams) -> m.GetTaskResult" in out
    assert "  method removed: server/discover" in out and "  method added: initialize" in out
    lines = out.splitlines()
    params = lines.index("  fields of CallToolRequestParams (call_tool):")
    assert "    - requestState (was string)" in lines[params + 1 : params + 8]
    package = root / f"{MODULE}_mcp"
    assert sorted(p.name for p in package.iterdir() if p.name.startswith("v")) == ["v2025_11_25"]
    assert tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mcp-codegen"]["versions"] == ["2025-11-25"]
    assert main(["check"]) == 0 and main(["check", "--full"]) == 0
    probe = f"import {MODULE}.server as user; print(user.m.CallToolResult.__module__)"
    done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, env=env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().startswith(f"{MODULE}_mcp.v2025_11_25._models.")


def test_regen_outside_a_project_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["regen", "--project", str(tmp_path)]) == 2
    assert "[tool.mcp-codegen]" in capsys.readouterr().err


# -- the runners ----------------------------------------------------------------------------------


CONVERSATION = b"".join(
    json.dumps(m).encode() + b"\n"
    for m in (
        request(1, "tools/list"),
        request(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}),
    )
)


def replies(raw: bytes) -> dict[object, dict[str, object]]:
    return {r["id"]: r for r in map(json.loads, raw.decode().splitlines()) if "id" in r}


def assert_added(found: dict[object, dict[str, object]]) -> None:
    assert found[2]["result"]["content"] == [{"type": "text", "text": "5"}]  # type: ignore[index]


def test_stdio_runner_serves_pipes(project: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", MODULE], input=CONVERSATION, capture_output=True, cwd=project, env=env(), timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_added(replies(done.stdout))


def test_stdio_runner_serves_regular_files(project: Path, tmp_path: Path) -> None:
    """``python -m server < requests.jsonl > replies.jsonl``."""
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    requests.write_bytes(CONVERSATION)
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", MODULE],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=project,
            env=env(),
            timeout=60,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert_added(replies(answers.read_bytes()))


def serve_socket(project: Path, half_close_first: bool) -> tuple[int, bytes, bytes]:
    """Run the server on one end of a socket pair; returns (exit status, what it sent, its stderr)."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = subprocess.Popen(
            [sys.executable, "-m", MODULE], stdin=theirs, stdout=theirs, stderr=subprocess.PIPE, cwd=project, env=env()
        )
        theirs.close()
        ours.settimeout(60)
        ours.sendall(CONVERSATION)
        received = b""
        if half_close_first:
            ours.shutdown(socket.SHUT_WR)  # EOF first, then read what comes back
        while received.count(b"\n") < 2 and (chunk := ours.recv(65536)):
            received += chunk
        if not half_close_first:
            ours.shutdown(socket.SHUT_WR)
        _, err = proc.communicate(timeout=60)
    return proc.returncode, received, err


def test_stdio_runner_serves_a_socket(project: Path) -> None:
    status, received, err = serve_socket(project, half_close_first=False)
    assert status == 0, err[-2000:]
    assert_added(replies(received))


def test_stdio_runner_answers_a_socket_closed_for_writing(project: Path) -> None:
    status, received, err = serve_socket(project, half_close_first=True)
    assert status == 0, err[-2000:]
    assert_added(replies(received))


@pytest.mark.parametrize("port", ["80000", "0", "-1", "http"])
def test_http_runner_rejects_invalid_ports(project: Path, port: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", MODULE, "--http", "--port", port],
        capture_output=True,
        text=True,
        cwd=project,
        env=env(),
        timeout=60,
    )
    assert done.returncode == 2 and "--port" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--workers", "2"], "--workers needs --http"),
        (["--http", "--workers", "0"], "--workers"),
        (["--http", "--workers", "2"], "2 workers need a shared store"),
        (["--http", "--redis", "redis://127.0.0.1:{port}/0"], "cannot reach Redis at redis://127.0.0.1:{port}/0: "),
        (["--http", "--workers", "2", "--redis", "redis://127.0.0.1:{port}/0"], "cannot reach Redis at"),
    ],
)
def test_http_runner_scale_out_options_refuse_in_one_line(project: Path, args: list[str], says: str) -> None:
    nowhere = str(free_port())
    done = subprocess.run(
        [sys.executable, "-m", MODULE, *(a.format(port=nowhere) for a in args), "--port", str(free_port())],
        capture_output=True,
        text=True,
        cwd=project,
        env={k: v for k, v in env().items() if k != "MCP_REDIS_URL"},
        timeout=60,
    )
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 2 and says.format(port=nowhere) in last and "Traceback" not in done.stderr


def test_http_runner_prints_its_url(project: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", MODULE, "--http", "--port", str(port)],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env(),
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline().decode()
        assert line.strip() == f"{NAME}: serving MCP at http://127.0.0.1:{port}/mcp"
        wait_http(port, proc)
    finally:
        stop(proc)


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
@pytest.mark.interop
def test_python_sdk_client_on_scaffolded_server(project: Path, http_url: str, mode: str, version: str) -> None:
    stdio = StdioServerParameters(command=sys.executable, args=["-m", MODULE], cwd=str(project), env=env())
    for target in (http_url, stdio):
        assert asyncio.run(add_with_python_sdk(target, mode)) == (version, "5")


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")])
@pytest.mark.interop
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
