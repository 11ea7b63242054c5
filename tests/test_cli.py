"""The CLI: schema sync, generate into another tree, one-line errors, patches that assert."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import parse_schema
from mcp_schema_codegen.frontend.lock import load_lock
from mcp_schema_codegen.frontend.patches import Patch
from tests.conftest import ROOT, SCHEMA_DIR


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_schema_codegen", *args], capture_output=True, text=True, cwd=cwd, check=False
    )


def fresh_project(tmp_path: Path) -> Path:
    """A user project: the lock, overlay and patches, but no schemas yet."""
    schema = tmp_path / "schema"
    schema.mkdir()
    for name in ("lock.json", "overlay.json"):
        shutil.copy(SCHEMA_DIR / name, schema / name)
    shutil.copytree(SCHEMA_DIR / "patches", schema / "patches")
    return tmp_path


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-codegen: error: "), done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0]


def test_sync_then_generate_into_another_package(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    done = run("schema", "sync", "--from", str(SCHEMA_DIR), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "2026-07-28: installed" in done.stdout
    assert run("schema", "sync", "--from", str(SCHEMA_DIR), cwd=project).stdout.count("unchanged") == 5
    done = run("generate", "--version", "2025-03-26", "--out", "out", "--package", "mymcp", cwd=project)
    assert done.returncode == 0, done.stderr
    probe = (
        "import mymcp, json; m = mymcp.load('2025-03-26'); "
        "print(json.dumps([mymcp.VERSIONS, m.METHODS.request('ping').result.__name__, m.BATCHING]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=project / "out", check=True)
    assert json.loads(out.stdout) == [{"2025-03-26": "legacy"}, "EmptyResult", True]
    # a second revision is added next to the first, and the package index lists both
    assert run("generate", "--version", "2026-07-28", "--out", "out", "--package", "mymcp", cwd=project).returncode == 0
    index = (project / "out" / "mymcp" / "__init__.py").read_text()
    assert '"2025-03-26": "legacy"' in index and '"2026-07-28": "modern"' in index
    assert [p.name for p in (project / "out").glob(".mcpgen-*")] == [".mcpgen-lock"]


def test_sync_refuses_a_hash_mismatch_and_installs_nothing(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    source = tmp_path / "upstream"
    shutil.copytree(SCHEMA_DIR, source, ignore=shutil.ignore_patterns("examples"))
    (source / "2025-06-18" / "schema.json").write_bytes(b'{"definitions": {}}')
    done = run("schema", "sync", "--from", str(source), cwd=project)
    assert_one_line_error(done, "2025-06-18", "does not match the lock")
    assert not (project / "schema" / "2024-11-05" / "schema.json").exists()


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    assert_one_line_error(run("schema", "sync", "--from", str(tmp_path / "nowhere"), cwd=project), "does not exist")
    assert_one_line_error(
        run("schema", "sync", "--from", "http://127.0.0.1:9/mcp", cwd=project), "cannot download", "--from DIR"
    )
    assert_one_line_error(
        run("schema", "sync", "--version", "1999-01-01", cwd=project), "1999-01-01", "not in the lock"
    )
    assert_one_line_error(run("generate", "--version", "2026-07-28", cwd=project), "not synced", "schema sync")
    assert_one_line_error(run("generate", "--version", "2031-01-01", cwd=project), "not in the lock", "--update-lock")
    assert_one_line_error(run("generate", cwd=project), "--all")
    assert_one_line_error(run("frobnicate", cwd=project), "invalid choice")
    assert_one_line_error(
        run("--schema-dir", str(SCHEMA_DIR), "generate", "--all", "--package", "not-a-name", "--out", str(tmp_path)),
        "package",
    )


def test_a_failed_generation_leaves_the_previous_tree(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    assert run("schema", "sync", "--from", str(SCHEMA_DIR), cwd=project).returncode == 0
    assert run("generate", "--all", "--out", "out", cwd=project).returncode == 0
    before = {p: p.read_bytes() for p in (project / "out").rglob("*") if p.is_file()}
    patches = project / "schema" / "patches" / "2026-07-28.json"
    broken = json.loads(patches.read_text())
    broken[0]["old"] = ["string"]
    patches.write_text(json.dumps(broken))
    assert_one_line_error(run("generate", "--all", "--out", "out", cwd=project), "ElicitResult", "patch expected")
    after = {p: p.read_bytes() for p in (project / "out").rglob("*") if p.is_file()}
    assert after == before


def test_patches_assert_the_value_they_replace(lock) -> None:  # type: ignore[no-untyped-def]
    data, rev = lock.read_schema("2026-07-28")
    good = Patch("/$defs/JSONValue/anyOf/2/type", ["string", "integer", "boolean"], ["string"], "test")
    assert parse_schema(data, rev, (good,)).definitions["JSONValue"]["anyOf"][2]["type"] == ["string"]
    stale = Patch("/$defs/JSONValue/anyOf/2/type", ["string"], ["number"], "test")
    with pytest.raises(GeneratorError) as info:
        parse_schema(data, rev, (stale,))
    assert "definition 'JSONValue'" in str(info.value) and "/$defs/JSONValue/anyOf/2/type" in str(info.value)
    gone = Patch("/$defs/NoSuchDefinition/type", "object", "object", "test")
    with pytest.raises(GeneratorError, match="NoSuchDefinition"):
        parse_schema(data, rev, (gone,))


def test_a_bad_schema_names_the_definition(lock, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from mcp_schema_codegen.frontend.prepass import prepass
    from mcp_schema_codegen.ir.analyze import analyze, load_overlay

    data, rev = lock.read_schema("2025-11-25")
    document = json.loads(data)
    document["$defs"]["PingRequest"]["properties"]["method"] = {"type": "string"}
    schema = parse_schema(json.dumps(document).encode(), rev, ())
    with pytest.raises(GeneratorError, match=r"definition 'PingRequest'.*method"):
        analyze(schema, prepass(schema)[0], load_overlay(SCHEMA_DIR / "overlay.json"))


def test_lock_lists_five_revisions_pinned_upstream() -> None:
    lock = load_lock(SCHEMA_DIR)
    assert {v: r.era for v, r in lock.revisions.items()} == {
        "2024-11-05": "legacy",
        "2025-03-26": "legacy",
        "2025-06-18": "legacy",
        "2025-11-25": "legacy",
        "2026-07-28": "modern",
    }
    for version, rev in lock.revisions.items():
        assert rev.url.endswith(f"/b0f60ba5409db7a6582440a7b473cc0398890f15/schema/{version}/schema.json")
        assert rev.size == (SCHEMA_DIR / version / "schema.json").stat().st_size


def test_sync_downloads_from_a_url(tmp_path: Path) -> None:
    """The download path, served from loopback (the pinned upstream URLs work the same way)."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SCHEMA_DIR))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        project = fresh_project(tmp_path)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        done = run("schema", "sync", "--from", url, cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("installed") == 5
        for version in ("2024-11-05", "2026-07-28"):
            synced = project / "schema" / version / "schema.json"
            assert synced.read_bytes() == (SCHEMA_DIR / version / "schema.json").read_bytes()
        missing = run("schema", "sync", "--from", url + "/nowhere", cwd=project)
        assert_one_line_error(missing, "cannot download", "404")
    finally:
        server.shutdown()
        server.server_close()
