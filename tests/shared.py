"""Set-up built once per test run and shared by every xdist worker, read-only.

``built_once`` builds a directory under the run's shared temporary root (the parent of the
workers' own roots, where ``generation_cache`` lives too) under a file lock: the first worker
to ask builds it, the others wait for it and reuse it. A test that changes such a tree works on
its own copy (``copy_of``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def shared_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """``<shared root>/<name>``, made by ``build(directory)`` the first time any worker asks."""
    return built_in(shared_root(tmp_path_factory), name, build)


def built_in(root: Path, name: str, build: Callable[[Path], None]) -> Path:
    """``root/name``, made by ``build(directory)`` unless it exists, under a file lock.

    ``build`` fills an empty directory; it is renamed into place only when ``build`` returns,
    so a failed build leaves nothing that a later request would take for finished (it fails
    again, with the same error, in every test that needs it).
    """
    done = root / name
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_dir():
            scratch = root / f"{name}.building"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            build(scratch)
            scratch.rename(done)
    return done


def copy_of(tree: Path, dest: Path) -> Path:
    """A private, writable copy of a shared tree (no byte-code caches) at ``dest``."""
    shutil.copytree(tree, dest, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    return dest


def generated_project(directory: Path) -> None:
    """A user project: the bundled schemas synced into ./schema, then ``mcp-codegen generate --all``
    (its default output, ./generated/mcpgen); a builder for ``built_once``."""
    from tests.cli import run_cli
    from tests.conftest import SCHEMA_DIR, VERSIONS

    schema = directory / "schema"
    shutil.copytree(SCHEMA_DIR, schema, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    assert sorted(p.name for p in schema.iterdir() if p.is_dir()) == sorted([*VERSIONS, "patches"])
    done = run_cli("generate", "--all", cwd=directory)
    assert done.returncode == 0, done.stderr
