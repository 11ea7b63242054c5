"""A private ``redis-server`` for the scale-out tests: a free loopback port, its own empty data
directory, no persistence; stopped (and restartable on the same port) by the test."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """One ``redis-server`` process on ``127.0.0.1:port`` with data in ``directory``."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("redis-server is not installed (.ci/run installs Debian's redis-server)")
        self.binary = binary
        self.directory = directory
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--save", "",
                "--appendonly", "no",
                "--protected-mode", "yes",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode() if self.proc.stdout else ""
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {out[-2000:]}")
            if self.ping():
                return self
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"redis-server did not answer on port {self.port}")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc = None


def start_redis() -> tuple[RedisServer, str]:
    """A started private Redis and the temporary directory to remove after it."""
    directory = tempfile.mkdtemp(prefix="mcpgen-redis-")
    return RedisServer(Path(directory)).start(), directory
