"""Fixtures for the client tests: the SDK interop server over stdio and over HTTP on loopback."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent
SDK_SERVER = [sys.executable, str(HERE / "sdk_server.py")]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)  # polling a port, not waiting on a result
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@contextlib.contextmanager
def serve(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="session")
def sdk_http_url() -> Iterator[str]:
    """The SDK server on Streamable HTTP (dual-era, stateful sessions for legacy clients)."""
    port = free_port()
    with serve([*SDK_SERVER, "http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"
