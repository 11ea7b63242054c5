"""Fixtures for the typed-client tests: the CLI in process, generated packages on the import
path, and the official-SDK tools server on Streamable HTTP (loopback, a free port)."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mcp_schema_codegen.commands.cli import main
from tests.client.conftest import free_port, serve

HERE = Path(__file__).parent
SDK_TOOLS_SERVER = [sys.executable, str(HERE / "sdk_tools_server.py")]
SDK_SNAPSHOT = HERE / "snapshots" / "sdk_tools.json"


def cli(*args: str) -> tuple[int, str, str]:
    """Run ``mcp-codegen`` in process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` (bytecode caches aside), by relative path."""
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@contextlib.contextmanager
def imported(directory: Path, package: str) -> Iterator[ModuleType]:
    """Import the generated ``package`` from ``directory``; forget it afterwards."""
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module(package)
    finally:
        sys.path.remove(str(directory))
        for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
            del sys.modules[name]


@pytest.fixture(scope="session")
def sdk_tools_url() -> Iterator[str]:
    """The official-SDK tools server on Streamable HTTP (dual-era)."""
    port = free_port()
    with serve([*SDK_TOOLS_SERVER, "http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="session")
def everything_command() -> list[str]:
    from tests.peers import SERVER_EVERYTHING, npm_bin, npm_install

    directory = npm_install(SERVER_EVERYTHING)  # a real peer is required: an install failure fails the test
    return [*npm_bin(directory, "mcp-server-everything"), "stdio"]
