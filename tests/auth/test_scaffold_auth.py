"""``mcp-codegen scaffold NAME --auth``: a server whose HTTP side is an OAuth 2.1 protected resource.

The project's own tests (``tests/test_auth.py``: a key and a JWKS of their own, the server over
HTTP with its settings in the environment; metadata, 401, refused tokens, 403, a good call, DPoP) pass
in both eras (a modern scaffold, and one regenerated to a legacy revision, whose tests follow
it), with the runtime from ``mcpgen`` and vendored; the project is ``mypy --strict``
clean; without its settings the HTTP server refuses to start, in one sentence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mcp_schema_codegen import __version__
from mcp_schema_codegen.commands.cli import main
from tests.server.test_scaffold import entry_point


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("MCP_AUTH_")}
    return {**base, **extra}


def run(root: Path, *command: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *command], cwd=root, capture_output=True, text=True, timeout=300, env=env(**extra), check=False
    )


def project_tests(root: Path) -> subprocess.CompletedProcess[str]:
    """``pytest`` in the project, with only the plugins it declares (none; see tests/server/test_scaffold.py)."""
    return run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("scaffold-auth")
    assert main(["scaffold", "notes", "--auth", "--dir", str(base)]) == 0
    return base / "notes"


def test_the_protected_scaffold_passes_its_own_tests(project: Path) -> None:
    done = project_tests(project)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "11 passed" in done.stdout  # 8 over HTTP with tokens (one with DPoP), stdio, the surface, ruff


def test_the_protected_scaffold_is_typed_strictly(project: Path, mypy_cache: list[str]) -> None:
    done = run(project, "-m", "mypy", *mypy_cache, ".")
    assert done.returncode == 0, done.stdout[-3000:]


def test_the_protected_scaffold_depends_on_token_verification(project: Path) -> None:
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    major, minor = __version__.split(".")[:2]
    assert pyproject["project"]["dependencies"] == [f"mcpgen[auth]>={__version__},<{major}.{int(minor) + 1}"]
    assert (project / "notes" / "auth.py").is_file() and (project / "tests" / "test_auth.py").is_file()
    readme = (project / "README.md").read_text()
    assert "## Authorization" in readme and "MCP_AUTH_JWKS_URL" in readme


def test_without_its_settings_the_http_server_does_not_start(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in [n for n in os.environ if n.startswith("MCP_AUTH_")]:
        monkeypatch.delenv(name)
    with entry_point(project, "notes") as serve, pytest.raises(SystemExit) as exited:
        serve(["--http", "--port", "1"])
    assert exited.value.code == 2
    (error,) = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert "set MCP_AUTH_ISSUER, MCP_AUTH_RESOURCE, MCP_AUTH_JWKS_URL" in error
    monkeypatch.setenv("MCP_AUTH_ISSUER", "https://a.example.com")
    monkeypatch.setenv("MCP_AUTH_JWKS_URL", "https://a.example.com/jwks")
    monkeypatch.setenv("MCP_AUTH_RESOURCE", "mcp.example.com/mcp")
    with entry_point(project, "notes") as serve, pytest.raises(SystemExit) as exited:
        serve(["--http", "--port", "1"])
    assert exited.value.code == 2 and "MCP_AUTH_RESOURCE is not an http(s) URL" in capsys.readouterr().err
    monkeypatch.setenv("MCP_AUTH_RESOURCE", "https://mcp.example.com/mcp")
    monkeypatch.setenv("MCP_AUTH_DPOP", "yes")
    with entry_point(project, "notes") as serve, pytest.raises(SystemExit) as exited:
        serve(["--http", "--port", "1"])
    assert (
        exited.value.code == 2
        and "MCP_AUTH_DPOP is one of off, offered, required, not 'yes'" in capsys.readouterr().err
    )


def test_a_protected_scaffold_regenerated_to_a_legacy_revision_with_a_vendored_runtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own tests follow the project to another era: they read the revision from the package."""
    assert main(["scaffold", "old-notes", "--auth", "--vendor-runtime", "--dir", str(tmp_path)]) == 0
    root = tmp_path / "old-notes"
    monkeypatch.chdir(root)
    assert main(["regen", "--version", "2025-11-25"]) == 0
    assert "from old_notes_mcp._runtime.server.auth import" in (root / "old_notes" / "auth.py").read_text()
    assert any(
        d.startswith("joserfc") for d in tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    )
    done = project_tests(root)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "11 passed" in done.stdout  # the legacy conversation: initialize with the token, then the call
    # its runtime is no mcpgen distribution: a missing dependency is named as such, not as mcpgen's extra
    code = "import sys; sys.modules['joserfc'] = None; import old_notes_mcp._runtime.server.auth"
    missing = run(root, "-c", code)
    assert missing.stderr.splitlines()[-1].endswith(
        "protecting a server needs the runtime's auth extra: pip install joserfc (missing: joserfc)"
    ), missing.stderr


# the project's entry point, run with the auth extra's joserfc missing (None in sys.modules: its import fails)
WITHOUT_JOSERFC = "; ".join(
    [
        "import runpy, sys",
        "sys.modules['joserfc'] = None",
        "sys.argv[0] = 'notes'",
        "runpy.run_module('notes', run_name='__main__')",
    ]
)


def test_without_the_auth_extra_stdio_serves_and_http_names_the_extra(project: Path) -> None:
    """stdio is not protected, so it runs without the auth extra (it imported the token verifier
    at start and died on ``joserfc``); over HTTP the missing extra is one sentence naming it."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
    }
    served = subprocess.run(
        [sys.executable, "-c", WITHOUT_JOSERFC],
        cwd=project,
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env(),
        check=False,
    )
    assert served.returncode == 0, served.stderr
    assert json.loads(served.stdout)["result"]["protocolVersion"] == "2025-11-25"
    refused = run(project, "-c", WITHOUT_JOSERFC, "--http", "--port", "1")
    assert refused.returncode == 2, refused.stderr  # argparse's usage, then the sentence
    assert refused.stderr.splitlines()[-1] == (
        "notes: error: protecting a server needs the runtime's auth extra: "
        "pip install 'mcpgen[auth]' (missing: joserfc)"
    )


@pytest.mark.parametrize(
    ("module", "missing", "what"),
    [
        ("mcpgen._runtime.server.auth", "joserfc", "protecting a server"),
        ("mcpgen._runtime.client.auth", "authlib", "OAuth for a client"),
        ("mcpgen._runtime.client.auth", "joserfc", "OAuth for a client"),
    ],
)
def test_importing_the_auth_pieces_without_the_extra_names_it(module: str, missing: str, what: str) -> None:
    code = f"import sys; sys.modules[{missing!r}] = None; import {module}"
    done = run(Path.cwd(), "-c", code, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "generated"))
    assert done.returncode == 1
    expected = (
        f"ModuleNotFoundError: {what} needs the runtime's auth extra: pip install 'mcpgen[auth]' (missing: {missing})"
    )
    assert done.stderr.splitlines()[-1] == expected
