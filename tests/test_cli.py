"""The CLI: schema sync and adoption, generate into another tree, one-line errors, click niceties."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcp_schema_codegen import __version__
from mcp_schema_codegen.commands.cli import main
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import parse_schema
from mcp_schema_codegen.frontend.lock import load_lock
from mcp_schema_codegen.frontend.patches import Patch
from tests.cli import run_cli
from tests.conftest import ROOT, SCHEMA_DIR, VERSIONS
from tests.shared import built_once, copy_of, generated_project


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def run_process(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A run in its own process: shell completion reads its request from the environment."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_schema_codegen", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=False,
    )


def fresh_project(tmp_path: Path) -> Path:
    """A user project: the lock, overlay and patches, but no schemas yet."""
    schema = tmp_path / "schema"
    schema.mkdir(parents=True)
    for name in ("lock.json", "overlay.json"):
        shutil.copy(SCHEMA_DIR / name, schema / name)
    shutil.copytree(SCHEMA_DIR / "patches", schema / "patches")
    return tmp_path


def upstream_copy(tmp_path: Path) -> Path:
    """A directory laid out like the upstream repository's schema/ folder."""
    source = tmp_path / "upstream"
    for version in VERSIONS:
        (source / version).mkdir(parents=True)
        shutil.copy(SCHEMA_DIR / version / "schema.json", source / version / "schema.json")
    return source


def assert_one_line_error(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mcp-codegen: error: "), done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if "__pycache__" not in p.parts)


@contextlib.contextmanager
def http_directory(directory: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``directory`` on a free loopback port; yields the base URL and the paths requested."""
    requested: list[str] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            requested.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requested
    finally:
        server.shutdown()
        server.server_close()


# -- schemas: bundled, synced, adopted ----------------------------------------------------------


def test_bundled_schemas_are_the_locked_upstream_bytes() -> None:
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
        data, _ = lock.read_schema(version)  # raises on a sha256 mismatch
        assert len(data) == rev.size
    assert lock.mismatches(list(VERSIONS)) == []
    assert "MIT License" in (SCHEMA_DIR / "LICENSE-upstream").read_text()


def test_generate_methods_and_diff_work_in_an_empty_directory(tmp_path: Path) -> None:
    """No ./schema, no sync: the bundled schemas serve every command that reads them."""
    assert run("methods", "--version", "2026-07-28", cwd=tmp_path).stdout.startswith("MCP 2026-07-28 (modern era)")
    assert "era: legacy -> modern" in run("diff", "2025-11-25", "2026-07-28", cwd=tmp_path).stdout
    done = run("generate", "--version", "2025-03-26", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert listing(tmp_path) == listing(tmp_path) and not (tmp_path / "schema").exists()


def test_sync_then_generate_into_another_package(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    source = upstream_copy(tmp_path)
    done = run("schema", "sync", "--from", str(source), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "2026-07-28: installed" in done.stdout
    assert run("schema", "sync", "--from", str(source), cwd=project).stdout.count("unchanged") == 5
    done = run("generate", "--version", "2025-03-26", "--out", "out", "--package", "mymcp", cwd=project)
    assert done.returncode == 0, done.stderr
    assert not (project / "out" / "mymcp" / "_runtime").exists()  # it imports the installed mcpgen's
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


def test_sync_without_from_fetches_exactly_the_locked_urls(tmp_path: Path) -> None:
    """Item 1: the lock's url is the file itself; nothing is appended to it."""
    with http_directory(upstream_copy(tmp_path)) as (base, requested):
        project = fresh_project(tmp_path / "project")
        lock_path = project / "schema" / "lock.json"
        lock = json.loads(lock_path.read_text())
        for version, entry in lock["versions"].items():
            entry["url"] = f"{base}/{version}/schema.json"
        lock_path.write_text(json.dumps(lock))
        done = run("schema", "sync", cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("installed") == 5
        assert sorted(requested) == sorted(f"/{v}/schema.json" for v in VERSIONS)
        assert run("schema", "sync", cwd=project).stdout.count("unchanged") == 5  # present: nothing fetched
        assert len(requested) == 5


def test_sync_downloads_from_a_base_url(tmp_path: Path) -> None:
    with http_directory(upstream_copy(tmp_path)) as (base, _):
        project = fresh_project(tmp_path / "project")
        done = run("schema", "sync", "--from", base, cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stdout.count("installed") == 5
        for version in ("2024-11-05", "2026-07-28"):
            synced = project / "schema" / version / "schema.json"
            assert synced.read_bytes() == (SCHEMA_DIR / version / "schema.json").read_bytes()
        assert_one_line_error(run("schema", "sync", "--from", base + "/nowhere", cwd=project), "cannot download", "404")


def test_sync_refuses_a_hash_mismatch_and_installs_nothing(tmp_path: Path) -> None:
    project = fresh_project(tmp_path)
    source = upstream_copy(tmp_path)
    (source / "2025-06-18" / "schema.json").write_bytes(b'{"definitions": {}}')
    done = run("schema", "sync", "--from", str(source), cwd=project)
    assert_one_line_error(done, "2025-06-18", "does not match the lock")
    assert not (project / "schema" / "2024-11-05" / "schema.json").exists()


def new_revision(tmp_path: Path, version: str, change: Callable[[dict[str, object]], None] | None = None) -> Path:
    """A schema file for a revision made here: 2026-07-28 plus whatever ``change`` does."""
    document = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text())
    if change is not None:
        change(document)
    path = tmp_path / "new" / version / "schema.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(document, indent=2))
    return path


def test_an_adoption_printed_into_a_closed_pipe_is_kept(tmp_path: Path) -> None:
    """`schema sync --update-lock ... | head -1`: the output went while ./schema was being made,
    and the broken pipe threw the adoption away (with exit status 0)."""

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30")
    args = ["schema", "sync", "--from", str(path.parents[1]), "--version", "2026-09-30", "--update-lock"]
    with contextlib.chdir(project), contextlib.redirect_stdout(ClosedPipe()), contextlib.redirect_stderr(io.StringIO()):
        with contextlib.suppress(SystemExit):  # click ends a command whose output pipe closed (status 1)
            main(args)
    assert "2026-09-30" in json.loads((project / "schema" / "lock.json").read_text())["versions"]


def test_adopting_a_revision_names_the_capabilities_the_overlay_does_not_describe(tmp_path: Path) -> None:
    """Which messages a capability stands for is the overlay's (``capabilities``): a capability or
    flag a new revision adds is never declared until it is described there, so adoption says so."""

    def change(document: dict[str, Any]) -> None:
        defs = document["$defs"]
        defs["ServerCapabilities"]["properties"]["greetings"] = {"type": "object"}
        defs["ServerCapabilities"]["properties"]["tools"]["properties"]["validate"] = {"type": "boolean"}
        defs["ClientCapabilities"]["properties"]["notes"] = {"type": "object"}
        defs["SubscriptionFilter"]["properties"]["notesChanged"] = {"description": "Notes changed.", "type": "boolean"}

    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30", change)
    args = ("schema", "sync", "--from", str(path.parents[1]), "--version", "2026-09-30", "--update-lock")
    done = run_cli(*args, cwd=project)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if "never declared" in line] == [
        "  overlay: ServerCapabilities.tools.validate is not among capabilities.server.tools.flags: "
        "it is never declared on its own",
        "  overlay: ServerCapabilities.greetings is not in capabilities.server: it is never declared on its own",
        "  overlay: ClientCapabilities.notes is not in capabilities.client: it is never declared on its own",
    ]
    assert (
        "  schema: SubscriptionFilter.notesChanged names no notification the server sends "
        "(or is no flag nor URI list): it is never honoured"
    ) in done.stdout.splitlines()


def test_adopting_a_revision_from_a_directory_records_the_real_source_and_carries_patches(tmp_path: Path) -> None:
    """Items 6 and 7: the lock names the exact file; 2026-07-28's patches are tried on the new revision."""
    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30")
    done = run(
        "schema", "sync", "--from", str(path.parents[1]), "--version", "2026-09-30", "--update-lock", cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert "2026-09-30: locked sha256" in done.stdout and "modern era" in done.stdout
    patches = json.loads((SCHEMA_DIR / "patches" / "2026-07-28.json").read_text())
    assert f"patches of 2026-07-28: {len(patches)} carried to 2026-09-30, 0 not applicable" in done.stdout
    # the overlay's facts are not carried (a deprecation may be lifted): said, to review
    assert (
        "  overlay: deprecated methods of 2026-07-28 are not listed for 2026-09-30: "
        "notifications/message, roots/list, sampling/createMessage"
    ) in done.stdout.splitlines()
    assert "never declared" not in done.stdout  # the overlay describes every capability 2026-07-28 has
    assert "never honoured" not in done.stdout  # each of its filter members names its notification
    lock = json.loads((project / "schema" / "lock.json").read_text())
    assert lock["versions"]["2026-09-30"]["url"] == path.resolve().as_uri()
    assert json.loads((project / "schema" / "patches" / "2026-09-30.json").read_text()) == patches
    assert set(lock["versions"]) == {*VERSIONS, "2026-09-30"}  # started from the bundled lock
    # the carried JSONValue patch holds: numbers and null are JSON values again
    assert run("generate", "--version", "2026-09-30", "--out", "out", cwd=project).returncode == 0
    probe = (
        "from pydantic import TypeAdapter; from mcpgen.v2026_09_30.models import JSONObject; "
        "print(TypeAdapter(JSONObject).validate_python({'n': 1, 'z': None}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=project / "out", check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert run("schema", "sync", cwd=project).stdout.count("unchanged") == 6  # its file:// source works too


def test_a_patch_whose_assertion_fails_on_the_new_revision_is_reported_not_carried(tmp_path: Path) -> None:
    first, second = json.loads((SCHEMA_DIR / "patches" / "2026-07-28.json").read_text())

    def fix_upstream(*patches: dict[str, Any]) -> Callable[[dict[str, object]], None]:
        def change(document: dict[str, object]) -> None:  # upstream fixed these defects
            for patch in patches:
                node: Any = document
                parts = patch["pointer"].strip("/").split("/")
                for part in parts[:-1]:
                    node = node[int(part)] if isinstance(node, list) else node[part]
                node[int(parts[-1]) if isinstance(node, list) else parts[-1]] = patch["new"]

        return change

    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30", fix_upstream(first))
    done = run("schema", "sync", "--from", str(path), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"  not carried {first['pointer']}: patch expected" in done.stdout
    own = project / "schema" / "patches" / "2026-09-30.json"
    assert [p["pointer"] for p in json.loads(own.read_text())] == [second["pointer"]]
    # new bytes for the same revision, the second defect fixed too: its own patch no longer
    # applies, and is removed (kept, it made every generation fail on an adoption that said 0)
    again = new_revision(tmp_path / "again", "2026-09-30", fix_upstream(first, second))
    done = run("schema", "sync", "--from", str(again), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"  patch {second['pointer']} of 2026-09-30 no longer applies: patch expected" in done.stdout
    assert "removed from patches/2026-09-30.json" in done.stdout and not own.exists()
    # the bytes it replaced are said (a fresh-user review: the lock was re-pinned without a word)
    before = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    assert f"  replaced sha256 {before} ({path.stat().st_size} bytes) from file:" in done.stdout, done.stdout
    # and what changed, as `diff` says it: the old bytes are gone after this, so `diff` cannot
    changed = done.stdout.split("  changes against the bytes replaced:\n")[1]
    assert changed.startswith(
        "    definitions:\n"
        "      ~ JSONValue: branch removed string | integer | boolean\n"
        "      ~ JSONValue: branch added string | integer | number | boolean | null\n"
    ), done.stdout
    done = run("schema", "sync", "--from", str(again), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert "  the same bytes the lock held" in done.stdout and "replaced sha256" not in done.stdout
    assert run("generate", "--version", "2026-09-30", "--out", "out", cwd=project).returncode == 0


@pytest.mark.parametrize(
    "version",
    [
        "2026-11-3",
        "next",
        "2027-13-01",
        "2026-12-32",
        "2026-02-31",
        "\uff12\uff10\uff12\uff16-\uff10\uff18-\uff10\uff11",
    ],  # full-width digits
)
def test_adopting_a_revision_under_a_name_that_is_no_protocol_version_is_refused(tmp_path: Path, version: str) -> None:
    """The runtime orders revisions by their YYYY-MM-DD names and refuses any other name: a
    package generated under one did not import."""
    project = tmp_path / "project"
    project.mkdir()
    source = SCHEMA_DIR / "2026-07-28" / "schema.json"
    done = run("schema", "sync", "--from", str(source), "--version", version, "--update-lock", cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"revision {version!r} is not an MCP protocol version (YYYY-MM-DD)" in done.stderr
    assert not (project / "schema").exists()


def test_adopting_a_file_that_is_not_an_mcp_schema_writes_nothing(tmp_path: Path) -> None:
    project = fresh_project(tmp_path / "project")
    before = {p: p.read_bytes() for p in (project / "schema").rglob("*") if p.is_file()}
    for name, body in {
        "empty-defs": b'{"$defs": {}}',
        "not-json": b"<html>",
        "bad-json-schema": b'{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 7, "$defs": {}}',
    }.items():
        path = tmp_path / name / "schema.json"
        path.parent.mkdir()
        path.write_bytes(body)
        done = run("schema", "sync", "--from", str(path), "--version", "2031-01-01", "--update-lock", cwd=project)
        assert_one_line_error(done, "2031-01-01")
        assert any(word in done.stderr for word in ("not an MCP schema", "not valid JSON", "not a valid JSON Schema"))
    after = {p: p.read_bytes() for p in (project / "schema").rglob("*") if p.is_file()}
    assert after == before


def _no_meta(document: dict[str, Any]) -> None:
    document["$defs"]["CallToolRequestParams"]["required"].remove("_meta")  # type: ignore[index]


def _result_types(document: dict[str, Any]) -> None:
    for body in document["$defs"].values():  # type: ignore[attr-defined]
        if "resultType" in body.get("properties", {}):
            body["properties"]["resultType"]["enum"] = ["complete", "needs_input"]


def _complete_only(document: dict[str, Any]) -> None:
    document["$defs"]["CallToolResult"]["properties"]["resultType"]["const"] = "done"  # type: ignore[index]


@pytest.mark.parametrize(
    ("change", "definition", "said"),
    [
        (_no_meta, "CallToolRequestParams", "tools/call does not require params._meta"),
        (_result_types, "InputRequiredResult", "resultType does not take 'input_required'"),
        (_complete_only, "CallToolResult", "resultType does not take 'complete'"),
    ],
)
def test_a_modern_revision_the_runtime_cannot_serve_is_refused_at_adoption(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], definition: str, said: str
) -> None:
    """Found by a review of the spec-change path: a revision whose requests no longer required
    ``_meta``, or whose ``resultType`` no longer took ``input_required`` (or ``complete``), was
    adopted and generated; its server then failed every such request at run time (a traceback
    and -32603). What the runtime writes and reads of every modern message is checked when the
    revision is adopted, naming the definition; nothing is written."""
    project = fresh_project(tmp_path / "project")
    before = {p: p.read_bytes() for p in (project / "schema").rglob("*") if p.is_file()}
    path = new_revision(tmp_path, "2026-12-15", change)
    done = run("schema", "sync", "--from", str(path), "--version", "2026-12-15", "--update-lock", cwd=project)
    assert_one_line_error(done, "2026-12-15")
    assert said in done.stderr and definition in done.stderr, done.stderr
    assert {p: p.read_bytes() for p in (project / "schema").rglob("*") if p.is_file()} == before


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


def test_a_bad_schema_names_the_definition(lock) -> None:  # type: ignore[no-untyped-def]
    from mcp_schema_codegen.frontend.prepass import prepass
    from mcp_schema_codegen.ir.analyze import analyze, load_overlay

    data, rev = lock.read_schema("2025-11-25")
    document = json.loads(data)
    document["$defs"]["PingRequest"]["properties"]["method"] = {"type": "string"}
    schema = parse_schema(json.dumps(document).encode(), rev, ())
    with pytest.raises(GeneratorError, match=r"definition 'PingRequest'.*method"):
        analyze(schema, prepass(schema)[0], load_overlay(SCHEMA_DIR / "overlay.json"))


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project after ``generate --all``, built once for the run (tests change copies of it)."""
    return built_once(tmp_path_factory, "generated-project", generated_project)


def test_a_failed_generation_leaves_the_previous_tree(generated: Path, tmp_path: Path) -> None:
    project = copy_of(generated, tmp_path / "project")  # synced schemas, and a tree from generate --all
    out = project / "generated"
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert out / "mcpgen" / "_manifest.json" in before
    patches = project / "schema" / "patches" / "2026-07-28.json"
    broken = json.loads(patches.read_text())
    broken[0]["old"] = ["string"]
    patches.write_text(json.dumps(broken))
    assert_one_line_error(run("generate", "--all", cwd=project), "ElicitResult", "patch expected")
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before


# -- every user error is one line, exit 2, and leaves nothing behind ---------------------------------


@dataclass(frozen=True)
class UserError:
    args: tuple[str, ...]
    needles: tuple[str, ...]
    setup: Callable[[Path], None] = lambda project: None


def _file(name: str, text: str | bytes = "x") -> Callable[[Path], None]:
    data = text.encode() if isinstance(text, str) else text
    return lambda project: (project / name).write_bytes(data)


def _schema_dir_edit(rel: str, mutate: Callable[[Any], object]) -> Callable[[Path], None]:
    """A project with its own schema/ whose JSON file ``rel`` was edited by hand (``mutate``)."""

    def setup(project: Path) -> None:
        shutil.copytree(SCHEMA_DIR, project / "schema", ignore=shutil.ignore_patterns("examples"))
        path = project / "schema" / rel
        document = json.loads(path.read_text())
        mutate(document)
        path.write_text(json.dumps(document))

    return setup


def _schema_json(target: Path, mutate: Callable[[Any], object]) -> None:
    """2026-07-28's schema.json, edited as data by ``mutate``, written to ``target``."""
    document = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text())
    mutate(document)
    target.write_text(json.dumps(document))


def _foreign(manifest: str) -> Callable[[Path], None]:
    """A user's file at the package's place, beside a ``_manifest.json`` the generator did not write."""

    def setup(project: Path) -> None:
        _file_in("out/mcpgen", "app.py")(project)
        (project / "out" / "mcpgen" / "_manifest.json").write_text(manifest)

    return setup


def _edited_schema(target: Path, old: str, new: str) -> None:
    """2026-07-28's schema.json with the first ``old`` made ``new`` (as text: JSON nothing parses)."""
    text = (SCHEMA_DIR / "2026-07-28" / "schema.json").read_text()
    assert old in text
    target.write_text(text.replace(old, new, 1))


def _file_in(directory: str, name: str) -> Callable[[Path], None]:
    def setup(project: Path) -> None:
        (project / directory).mkdir(parents=True)
        (project / directory / name).write_text("the user's\n")

    return setup


def _link_in(directory: str) -> Callable[[Path], None]:
    def setup(project: Path) -> None:
        (project / "elsewhere").mkdir()
        (project / directory).mkdir()
        (project / directory / "mcpgen").symlink_to(project / "elsewhere")

    return setup


def _schema_file(make: Callable[[Path], None]) -> Callable[[Path], None]:
    """A project with its own schema/ whose 2026-07-28 schema.json is replaced by ``make``."""

    def setup(project: Path) -> None:
        shutil.copytree(SCHEMA_DIR, project / "schema", ignore=shutil.ignore_patterns("examples"))
        target = project / "schema" / "2026-07-28" / "schema.json"
        target.unlink()
        make(target)

    return setup


def _unreadable(target: Path) -> None:
    target.symlink_to("/proc/self/mem")  # reading it fails with EIO, even as root


def _directory(target: Path) -> None:
    target.mkdir()


USER_ERRORS = {
    "out-unwritable": UserError(("generate", "--version", "2026-07-28", "--out", "/proc/nope"), ("/proc/nope",)),
    "out-is-a-file": UserError(
        ("generate", "--version", "2026-07-28", "--out", "afile"), ("afile", "not a directory"), _file("afile")
    ),
    # found by a hostile-input review: each was replaced (a file deleted, a link made a directory)
    "package-place-is-a-file": UserError(
        ("generate", "--version", "2026-07-28", "--out", "out"), ("out/mcpgen", "is a file"), _file_in("out", "mcpgen")
    ),
    "package-place-is-a-link": UserError(
        ("generate", "--version", "2026-07-28", "--out", "out"), ("out/mcpgen", "symbolic link"), _link_in("out")
    ),
    **{
        f"package-place-holds-{kind}": UserError(
            ("generate", "--version", "2026-07-28", "--out", "out"), ("out/mcpgen", "did not write"), _foreign(manifest)
        )
        for kind, manifest in (
            ("a-manifest-not-ours", "{}"),
            ("a-commented-manifest", '// my tool\n{"files": ["app.py"]}'),
            ("another-tools-manifest", '{"files": {}}'),
        )
    },
    "patch-with-a-lone-surrogate": UserError(
        ("generate", "--version", "2025-11-25"),
        ("2025-11-25.json", "lone UTF-16 surrogate"),
        _schema_dir_edit("patches/2025-11-25.json", lambda d: d[0].update(new="\ud800")),
    ),
    "package-place-holds-other-files": UserError(
        ("generate", "--version", "2026-07-28", "--out", "out"),
        ("out/mcpgen", "did not write"),
        _file_in("out/mcpgen", "notes.txt"),
    ),
    "schema-with-a-lone-surrogate": UserError(
        ("diff", "2026-07-28", "odd.json"),
        ("definition 'Tool'", "/$defs/Tool/description", "lone UTF-16 surrogate"),
        lambda p: _edited_schema(p / "odd.json", '"Definition for a tool', '"\\ud800 Definition for a tool'),
    ),
    "schema-unreadable-where-it-is-valid": UserError(  # a boolean schema where the analysis reads an object
        ("diff", "2026-07-28", "odd.json"),
        ("definition 'CallToolRequest'", "cannot read the schema"),
        lambda p: _schema_json(
            p / "odd.json", lambda d: d["$defs"]["CallToolRequest"]["properties"].update(method=True)
        ),
    ),
    "schema-with-a-huge-integer": UserError(
        ("diff", "2026-07-28", "odd.json"),
        ("odd.json is not valid JSON", "more digits"),
        lambda p: _edited_schema(p / "odd.json", '"type": "object"', '"maximum": ' + "9" * 5000 + ', "type": "object"'),
    ),
    "lock-sha256-not-text": UserError(
        ("methods", "--version", "2026-07-28"),
        ("lock.json", "sha256 12345"),
        _schema_dir_edit("lock.json", lambda d: d["versions"]["2026-07-28"].update(sha256=12345)),
    ),
    # a fresh-user review: these said "missing or bad 'list' object has no attribute 'items'"
    "lock-versions-a-list": UserError(
        ("methods", "--version", "2026-07-28"),
        ('lock.json is malformed: "versions" is a list, not an object',),
        _schema_dir_edit("lock.json", lambda d: d.update(versions=[])),
    ),
    "lock-revision-null": UserError(
        ("methods", "--version", "2026-07-28"),
        ("lock.json is malformed: revision '2026-07-28' lacks 'era', 'sha256', 'size', 'url'",),
        _schema_dir_edit("lock.json", lambda d: d["versions"].update({"2026-07-28": None})),
    ),
    "lock-size-text": UserError(
        ("methods", "--version", "2026-07-28"),
        ("revision 2026-07-28 has size 'big', not a byte count",),
        _schema_dir_edit("lock.json", lambda d: d["versions"]["2026-07-28"].update(size="big")),
    ),
    "lock-no-upstream": UserError(
        ("methods", "--version", "2026-07-28"),
        ('lock.json is malformed: "upstream" needs a "url_template" string',),
        _schema_dir_edit("lock.json", lambda d: d.pop("upstream")),
    ),
    "patch-pointer-not-a-pointer": UserError(
        ("generate", "--version", "2025-11-25"),
        ("2025-11-25.json is malformed", "'definitions/Tool'"),
        _schema_dir_edit("patches/2025-11-25.json", lambda d: d[0].update(pointer="definitions/Tool")),
    ),
    "overlay-code-not-a-number": UserError(
        ("methods", "--version", "2025-11-25"),
        ("overlay", "malformed", "'x'"),
        _schema_dir_edit("overlay.json", lambda d: d.update(resource_not_found={"codes": {"2025-11-25": "x"}})),
    ),
    "client-named-like-the-runtime": UserError(
        ("client", "mcpgen", "--from-snapshot", "nope.json"), ("client name 'mcpgen' would shadow",)
    ),
    "tools-module-named-like-stdlib": UserError(
        ("tools", "nope.json", "--module", "json"), ("--module 'json' would shadow",)
    ),
    "schema-unreadable": UserError(
        ("generate", "--version", "2026-07-28"), ("cannot read", "schema.json"), _schema_file(_unreadable)
    ),
    "schema-is-a-directory": UserError(
        ("generate", "--version", "2026-07-28"), ("is a directory",), _schema_file(_directory)
    ),
    "templates-missing": UserError(("generate", "--all", "--templates", "/nonexistent"), ("/nonexistent",)),
    "templates-missing-in-config": UserError(
        ("generate", "--all"),
        ("template directory", "nope"),
        _file("pyproject.toml", '[tool.mcp-codegen]\ntemplates = "nope"\n'),
    ),
    "package-not-a-name": UserError(("generate", "--all", "--package", "not-a-name"), ("package",)),
    "package-named-like-a-dependency": UserError(("generate", "--all", "--package", "orjson"), ("would shadow",)),
    "no-versions": UserError(("generate",), ("--all",)),
    "unknown-revision": UserError(("generate", "--version", "2031-01-01"), ("not in the lock", "--update-lock")),
    "unknown-command": UserError(("frobnicate",), ("frobnicate",)),
    "unknown-option": UserError(("methods", "--frob"), ("--frob",)),
    "methods-needs-version": UserError(("methods",), ("--version",)),
    "diff-no-such-side": UserError(("diff", "2025-11-25", "nope.json"), ("nope.json",)),
    "diff-unreadable-file": UserError(
        ("diff", "2025-11-25", "bad.json"), ("cannot read", "bad.json"), lambda p: _unreadable(p / "bad.json")
    ),
    "update-lock-needs-from": UserError(("schema", "sync", "--update-lock", "--version", "2031-01-01"), ("--from",)),
    "sync-from-nowhere": UserError(("schema", "sync", "--from", "nowhere"), ("does not exist",)),
    "sync-unknown-revision": UserError(
        ("schema", "sync", "--version", "1999-01-01"), ("1999-01-01", "not in the lock")
    ),
    "sync-bad-url": UserError(
        ("schema", "sync", "--from", "http://127.0.0.1:9/mcp"), ("cannot download", "--from DIR")
    ),
    "scaffold-with-a-space": UserError(("scaffold", "My Server"), ("My Server", "my-server")),
    "scaffold-keyword": UserError(("scaffold", "class"), ("keyword",)),
    "scaffold-stdlib": UserError(("scaffold", "json"), ("shadow", "json")),
    "scaffold-stdlib-runtime-name": UserError(("scaffold", "mcpgen"), ("shadow",)),
    # a fresh-user review: these were taken, then failed late (python -m pytest ran the server;
    # orjson's import named a temporary directory)
    "scaffold-test-runner-name": UserError(("scaffold", "pytest"), ("shadow", "pytest")),
    "scaffold-dependency-name": UserError(("scaffold", "orjson"), ("shadow", "orjson")),
    "scaffold-dependency-of-a-dependency": UserError(("scaffold", "typing-extensions"), ("shadow",)),
    "scaffold-not-empty": UserError(("scaffold", "demo"), ("not empty",), _file("demo", "")),
    "scaffold-unknown-revision": UserError(("scaffold", "demo", "--version", "2031-01-01"), ("not in the lock",)),
    "regen-outside-a-project": UserError(("regen",), ("has no pyproject.toml", "--project")),
    "check-with-nothing-generated": UserError(("check",), ("generated/mcpgen does not exist", "mcp-codegen generate")),
    "bad-config-key": UserError(
        ("generate", "--all"), ("bogus",), _file("pyproject.toml", "[tool.mcp-codegen]\nbogus = 1\n")
    ),
    # found by a CLI review: each raised a traceback
    "pyproject-not-utf8": UserError(
        ("methods", "--version", "2026-07-28"), ("pyproject.toml is not UTF-8",), _file("pyproject.toml", b"\xff")
    ),
    "pyproject-tool-not-a-table": UserError(
        ("check",), ("[tool] must be a table",), _file("pyproject.toml", 'tool = "x"\n')
    ),
    "diff-nested-too-deeply": UserError(
        ("diff", "2025-11-25", "deep.json"), ("deep.json is not valid JSON",), _file("deep.json", "[" * 100_000)
    ),
    "all-and-version": UserError(("generate", "--all", "--version", "2026-07-28"), ("--all", "--version")),
    "package-shadows-a-module": UserError(("generate", "--all", "--package", "pydantic"), ("shadow", "pydantic")),
    "package-stdlib": UserError(("generate", "--all", "--package", "json"), ("shadow", "json")),
    "client-name-keyword": UserError(("client", "def", "--from-snapshot", "nope.json"), ("'def'", "package name")),
    "client-timeout-negative": UserError(
        ("client", "x", "--from-snapshot", "nope.json", "--timeout", "-1"), ("--timeout",)
    ),
    "client-timeout-nan": UserError(
        ("client", "x", "--from-snapshot", "nope.json", "--timeout", "nan"), ("--timeout", "nan")
    ),
    "surface-not-utf8": UserError(
        ("check",),
        ("srv_surface.py is not UTF-8",),
        lambda p: (
            _file("pyproject.toml", '[tool.mcp-codegen]\napp = "srv:app"\n')(p),
            _file("srv.py", "from mcpgen.v2026_07_28.server import App\napp = App('s')\n")(p),
            _file("srv_surface.py", b"\xff")(p),
        ),
    ),
}


@pytest.mark.parametrize("case", USER_ERRORS.values(), ids=USER_ERRORS.keys())
def test_user_errors_are_one_line_and_leave_nothing_behind(
    case: UserError, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (an uncaught exception fails the test as a traceback would fail the user)."""
    project = tmp_path / "project"
    project.mkdir()
    case.setup(project)
    before = listing(project)
    monkeypatch.chdir(project)
    status = main(list(case.args))
    captured = capsys.readouterr()
    assert_one_line_error(subprocess.CompletedProcess(case.args, status, captured.out, captured.err), *case.needles)
    assert listing(project) == before


def test_a_failed_first_sync_leaves_no_schema_directory(tmp_path: Path) -> None:
    """The ./schema a first sync creates appears only when the sync succeeds."""
    source = upstream_copy(tmp_path)
    (source / "2025-06-18" / "schema.json").write_bytes(b"{}")
    project = tmp_path / "project"
    project.mkdir()
    assert_one_line_error(run("schema", "sync", "--from", str(source), cwd=project), "does not match the lock")
    assert listing(project) == []
    (source / "2025-06-18" / "schema.json").write_bytes((SCHEMA_DIR / "2025-06-18" / "schema.json").read_bytes())
    assert run("schema", "sync", "--from", str(source), cwd=project).returncode == 0
    assert listing(project) == []  # it succeeded and found every schema as locked: nothing to keep


# -- click: options after the subcommand, --version, help, completion ------------------------------


def test_schema_dir_is_accepted_before_and_after_the_subcommand(tmp_path: Path) -> None:
    only = tmp_path / "only"
    shutil.copytree(SCHEMA_DIR, only, ignore=shutil.ignore_patterns("examples", "2026-07-28", "2025-*"))
    lock = json.loads((only / "lock.json").read_text())
    lock["versions"] = {"2024-11-05": lock["versions"]["2024-11-05"]}
    (only / "lock.json").write_text(json.dumps(lock))
    for args in (
        ("--schema-dir", str(only), "methods", "--version", "2026-07-28"),
        ("methods", "--version", "2026-07-28", "--schema-dir", str(only)),
    ):
        assert_one_line_error(run(*args, cwd=tmp_path), "not in the lock", "known: 2024-11-05")
    done = run("methods", "--schema-dir", str(only), "--version", "2024-11-05", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("MCP 2024-11-05")


@pytest.mark.parametrize("version", ["foo", "2026-02-30", "26-07-28"])
def test_a_version_that_is_no_date_is_named_so_without_suggesting_an_adoption(version: str, tmp_path: Path) -> None:
    """Found by a fresh-user review: ``--version foo`` suggested ``schema sync ... --version foo``,
    which then refused ``foo`` as no MCP protocol version."""
    done = run("methods", "--version", version, cwd=tmp_path)
    assert_one_line_error(done, f"revision {version!r} is not an MCP protocol version", "known: 2024-11-05")
    assert "schema sync" not in done.stderr


def test_version_prints_the_tool_version_of_both_distributions() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"mcp-codegen {__version__}"
    generator = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = tomllib.loads((ROOT / "generated" / "pyproject.toml").read_text())["project"]
    assert generator["version"] == runtime["version"] == __version__
    assert f"mcpgen=={__version__}" in generator["dependencies"]


def _commands(group: Any, prefix: str = "") -> list[str]:
    """Every command and group below the CLI's top level, by its words (``schema sync``)."""
    import click

    found = []
    for name, command in sorted(group.commands.items()):
        found.append(f"{prefix}{name}")
        if isinstance(command, click.Group):
            found.extend(_commands(command, f"{prefix}{name} "))
    return found


def _cli_group() -> Any:
    from mcp_schema_codegen.commands.cli import cli

    return cli


@pytest.mark.parametrize("command", _commands(_cli_group()))
def test_every_subcommand_has_help_with_examples(command: str) -> None:
    done = run(*command.split(), "--help")
    assert done.returncode == 0, done.stderr
    assert "Examples:" in done.stdout and f"mcp-codegen {command}" in done.stdout


def test_shell_completion_offers_the_locked_revisions() -> None:
    script = run("completion", "bash")
    assert script.returncode == 0 and "_MCP_CODEGEN_COMPLETE" in script.stdout
    env = {**os.environ, "_MCP_CODEGEN_COMPLETE": "bash_complete", "COMP_WORDS": "mcp-codegen methods --version 2025"}
    done = run_process(env={**env, "COMP_CWORD": "3"})
    offered = [line.split(",", 1)[1] for line in done.stdout.splitlines()]
    assert offered == ["2025-03-26", "2025-06-18", "2025-11-25"]
    env["COMP_WORDS"] = "mcp-codegen sch"
    assert run_process(env={**env, "COMP_CWORD": "1"}).stdout.splitlines() == ["plain,schema"]


def test_a_vendored_package_keeps_its_layout_unless_told_and_check_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --vendor-runtime/--no-vendor-runtime (or the pyproject's setting), a command takes
    the layout the package's manifest records: `generate --version` of one more revision keeps
    the runtime vendored, `check` finds the tree fresh. Asking for the other layout while keeping
    revisions made with this one is a one-line error, with the tree untouched."""
    monkeypatch.chdir(tmp_path)
    package = tmp_path / "out" / "vend_mcp"
    common = ["--out", "out", "--package", "vend_mcp"]
    assert main(["generate", "--version", "2025-11-25", *common, "--vendor-runtime"]) == 0
    assert main(["generate", "--version", "2026-07-28", *common]) == 0
    assert (package / "_runtime").is_dir() and (package / "v2025_11_25").is_dir()
    assert main(["check", *common]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in package.iterdir())
    assert main(["generate", "--version", "2024-11-05", *common, "--no-vendor-runtime"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "generated with runtime=vend_mcp._runtime" in err, err
    assert sorted(p.name for p in package.iterdir()) == before
    probe = "import vend_mcp.v2025_11_25.server, vend_mcp.v2026_07_28.server"
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path / "out", capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("manifest", [b"\xff", b"[" * 100_000, b'{"revisions": {"2024-11-05": 5}, "files": {}}'])
def test_a_damaged_manifest_is_reported_stale_and_generate_repairs_it(
    manifest: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A manifest that is not UTF-8, nested past any reader, or whose records are not objects: a
    traceback from ``check`` and ``generate`` (found by a CLI review), so the tree could not be
    repaired by regenerating it."""
    args = ["--schema-dir", str(SCHEMA_DIR), "generate", "--version", "2024-11-05", "--out", str(tmp_path)]
    assert main(args) == 0
    (tmp_path / "mcpgen" / "_manifest.json").write_bytes(manifest)
    capsys.readouterr()
    assert main(["--schema-dir", str(SCHEMA_DIR), "check", "--out", str(tmp_path)]) == 1
    said = capsys.readouterr().err
    assert "stale" in said and "Traceback" not in said, said
    assert main(args) == 0
    assert main(["--schema-dir", str(SCHEMA_DIR), "check", "--out", str(tmp_path)]) == 0


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"A": {"type": "object", "properties": ["x"]}}, "['x'] is not of type 'object' (at /$defs/A/properties)"),
        ({"A": {"anyOf": 5}}, "5 is not of type 'array' (at /$defs/A/anyOf)"),
        ({"A": {"anyOf": 5}, "$schema": 5}, "$schema is 5, not a URI"),
    ],
)
def test_diff_against_a_file_that_is_no_json_schema_is_one_line_naming_where(
    tmp_path: Path, body: dict[str, object], where: str
) -> None:
    """``diff`` reads a file adoption never checked: a schema the prepass cannot walk was a
    traceback and exit 1 ("differences found"); it is a user error naming the place."""
    path = tmp_path / "odd.json"
    dialect = {"$schema": body.pop("$schema")} if "$schema" in body else {}
    path.write_text(json.dumps({**dialect, "$defs": body}))
    done = run("diff", "2026-07-28", str(path), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.endswith(f"not a valid JSON Schema: {where}\n")


@pytest.mark.parametrize(
    ("addition", "message"),
    [
        (
            {"Negated": {"not": {"type": "string"}}},
            "definition 'Negated': 'not' at /$defs/Negated is not generated exactly",
        ),
        (
            {"Pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False}},
            "definition 'Pair': 'prefixItems' at /$defs/Pair is not generated exactly",
        ),
        (
            {"Stamp": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}},
            "definition 'Stamp': format 'date-time' at /$defs/Stamp/properties/at is not one generated as a plain",
        ),
        (
            {"Closed": {"type": "object", "properties": {"k": {"type": "string"}}, "additionalProperties": False}},
            "definition 'Closed': 'additionalProperties': false at /$defs/Closed is not generated exactly",
        ),
        (
            {"Fixed": {"type": "object", "properties": {"v": {"const": {"x": 1}}}}},
            "definition 'Fixed': a 'const' value {'x': 1}, an object (generated as its type, not its value), at "
            "/$defs/Fixed/properties/v is not generated exactly",
        ),
        (
            {"Needy": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}},
            "definition 'Needy': 'required' naming 'b', which its 'properties' do not declare, at /$defs/Needy is not",
        ),
        (  # Python's re takes it (the metaschema's ``regex`` format); pydantic-core's Rust regex does not
            {"Named": {"type": "object", "properties": {"n": {"type": "string", "pattern": "^(a)\\1$"}}}},
            "definition 'Named': 'pattern' '^(a)\\\\1$' at /$defs/Named/properties/n does not compile in the "
            "models' regex engine (pydantic-core's Rust regex: backreferences are not supported); the model would "
            "fail when first used",
        ),
    ],
)
def test_a_schema_using_what_the_models_cannot_enforce_is_refused_naming_the_definition(
    tmp_path: Path, addition: dict[str, object], message: str
) -> None:
    """A keyword datamodel-code-generator drops or loosens (``not``, ``prefixItems``, ``if``...,
    ``additionalProperties: false``, a ``const`` object, ``required`` naming an undeclared
    property) or a format it turns into another type made models that accepted what the schema refuses,
    silently. Adoption refuses it, writing nothing; so does generation from a lock made by hand."""
    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30", lambda document: document["$defs"].update(addition))  # type: ignore[attr-defined]
    done = run("schema", "sync", "--from", str(path), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr and not (project / "schema").exists()
    schema_dir = tmp_path / "by-hand"
    shutil.copytree(SCHEMA_DIR, schema_dir, ignore=shutil.ignore_patterns("examples"))
    shutil.copy(path, schema_dir / "2026-07-28" / "schema.json")
    lock = json.loads((schema_dir / "lock.json").read_text())
    entry = lock["versions"]["2026-07-28"]
    entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    entry["size"] = path.stat().st_size
    (schema_dir / "lock.json").write_text(json.dumps(lock))
    done = run(
        "--schema-dir",
        str(schema_dir),
        "generate",
        "--version",
        "2026-07-28",
        "--out",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("title", "where"),
    [
        # datamodel-code-generator fails on it: its own error (a pydantic dump of its parser,
        # several lines long in one) was what the user got
        (
            {"type": "string", "minLength": "x"},
            "'x' is not of type 'integer' (at /$defs/Tool/properties/title/minLength)",
        ),
        # it takes these without a word: a length of 3, and ``Any``
        (
            {"type": "string", "minLength": "3"},
            "'3' is not of type 'integer' (at /$defs/Tool/properties/title/minLength)",
        ),
        (
            {"type": "strin"},
            "'strin' is not valid under any of the given schemas (at /$defs/Tool/properties/title/type)",
        ),
        ({"type": "string", "pattern": "(["}, "'([' is not a 'regex' (at /$defs/Tool/properties/title/pattern)"),
        # the prepass read it as properties that leave Tool's required names undeclared
        ({"properties": [1]}, "[1] is not of type 'object' (at /$defs/Tool/properties)"),
    ],
)
def test_generating_from_a_lock_made_by_hand_names_where_the_schema_is_no_json_schema(
    tmp_path: Path, title: dict[str, Any], where: str
) -> None:
    """Adoption checks the metaschema; a lock made by hand skips it. What datamodel-code-generator
    failed on got its error; what it read anyway was generated loosely: ``"type": "strin"`` as
    ``Any``, ``"minLength": "3"`` as a length of 3. The metaschema is now asked before it reads a
    schema whose models are not cached."""

    def bad(document: dict[str, Any]) -> None:
        if "properties" in title:
            document["$defs"]["Tool"].update(title)
        else:
            document["$defs"]["Tool"]["properties"]["title"] = title

    path = new_revision(tmp_path, "2026-07-28", bad)
    schema_dir = tmp_path / "by-hand"
    shutil.copytree(SCHEMA_DIR, schema_dir, ignore=shutil.ignore_patterns("examples"))
    shutil.copy(path, schema_dir / "2026-07-28" / "schema.json")
    lock = json.loads((schema_dir / "lock.json").read_text())
    entry = lock["versions"]["2026-07-28"]
    entry["sha256"], entry["size"] = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_size
    (schema_dir / "lock.json").write_text(json.dumps(lock))
    out = tmp_path / "out"
    # through the cache (a miss: checked before datamodel-code-generator) and, once, without it
    for cache in ((), ("--no-cache",)) if "'x'" in where else ((),):
        args = ("--schema-dir", str(schema_dir), "generate", "--version", "2026-07-28", *cache, "--out", str(out))
        done = run(*args, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.endswith(f"schema 2026-07-28, definition 'Tool': not a valid JSON Schema: {where}\n"), (
            done.stderr
        )
        assert not out.exists()


def test_diff_reads_a_schema_the_generator_would_refuse(tmp_path: Path) -> None:
    """``diff`` looks at a new revision before it is adopted: a definition the models could not
    enforce (``oneOf``) is shown as added, not refused (only adoption and generation refuse it)."""
    path = new_revision(
        tmp_path, "2026-09-30", lambda d: d["$defs"].update({"Either": {"oneOf": [{"type": "string"}]}})
    )  # type: ignore[attr-defined]
    done = run("diff", "2026-07-28", str(path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Either" in done.stdout


def test_diff_reports_a_kept_definitions_own_changes(tmp_path: Path) -> None:
    """An enum value or a union branch added or removed changed no field and no definition's name,
    so ``diff`` said "no changes" (exit 0) to a CI gating on it, where an exhaustive client
    breaks. An ``additionalProperties: true`` spelled out is JSON Schema's default: no change."""

    def change(document: dict[str, Any]) -> None:
        defs = document["$defs"]
        defs["LoggingLevel"]["enum"].append("trace")
        defs["ContentBlock"]["anyOf"] = [b for b in defs["ContentBlock"]["anyOf"] if "EmbeddedResource" not in str(b)]
        defs["Icon"]["minProperties"] = 1
        defs["Annotations"]["additionalProperties"] = True

    path = new_revision(tmp_path, "2026-09-30", change)
    done = run("diff", "2026-07-28", str(path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2:6] == [
        "definitions:",
        "  ~ ContentBlock: branch removed EmbeddedResource",
        '  ~ Icon: {"type": "object"} -> {"minProperties": 1, "type": "object"}',
        '  ~ LoggingLevel: value added "trace"',
    ], done.stdout
    # a sampling result in an MRTR request's inputResponses holds content blocks: requests of
    # 2026-07-28 clients with the removed branch are refused by a server of the new revision
    assert lines[6] == f"older clients (a server written against {path}, asked by 2026-07-28 clients):"
    assert lines[7:] == [
        f"  ! {method}: ContentBlock no longer takes EmbeddedResource; 2026-07-28 requests with it are refused (-32602)"
        for method in ("prompts/get", "resources/read", "tools/call")
    ], done.stdout
    as_json = json.loads(run("diff", "2026-07-28", str(path), "--json", cwd=tmp_path).stdout)
    assert as_json["changed"] is True
    assert {"definition": "LoggingLevel", "change": "value added", "old": None, "new": '"trace"'} in as_json[
        "definitions_changed"
    ]


def test_diff_takes_union_branches_in_another_order_as_no_change(tmp_path: Path) -> None:
    """Reordering ``anyOf`` changes nothing that validates, yet ``diff`` (and ``regen``'s report)
    listed ``~ ContentBlock: [...] -> [...]`` and a field's union as a type change (exit 1)."""

    def reorder(document: dict[str, Any]) -> None:
        defs = document["$defs"]
        defs["ContentBlock"]["anyOf"].reverse()
        defs["CompleteRequestParams"]["properties"]["ref"]["anyOf"].reverse()

    path = new_revision(tmp_path, "2026-09-30", reorder)
    done = run("diff", "2026-07-28", str(path), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    assert json.loads(done.stdout)["changed"] is False
    # a branch really removed is still one, whatever the order of the rest

    def reorder_and_remove(document: dict[str, Any]) -> None:
        reorder(document)
        blocks = document["$defs"]["ContentBlock"]["anyOf"]
        document["$defs"]["ContentBlock"]["anyOf"] = [b for b in blocks if "EmbeddedResource" not in str(b)]

    path = new_revision(tmp_path / "2", "2026-09-30", reorder_and_remove)
    done = run("diff", "2026-07-28", str(path), cwd=tmp_path)
    assert done.returncode == 1 and "  ~ ContentBlock: branch removed EmbeddedResource" in done.stdout.splitlines()
    assert "CompleteRequestParams" not in done.stdout, done.stdout


def test_diff_and_regen_say_what_a_server_of_the_new_revision_refuses_of_older_clients(tmp_path: Path) -> None:
    """Found by a review of the spec-change path: a field a revision newly requires in a request's
    params made a server regenerated to it refuse every request of older clients (-32602), and
    ``diff`` and ``regen`` listed it like any added field. Both now say it per method, with a
    method removed (-32601) and a union branch only the new revision has in a result (-32603)."""

    def change(document: dict[str, Any]) -> None:
        defs = document["$defs"]
        params = defs["CallToolRequestParams"]
        params["properties"]["mode"] = {"type": "string"}
        params["required"].append("mode")
        defs["VideoContent"] = {
            "type": "object",
            "properties": {"type": {"const": "video", "type": "string"}, "data": {"type": "string"}},
            "required": ["type", "data"],
        }
        defs["ContentBlock"]["anyOf"].append({"$ref": "#/$defs/VideoContent"})
        defs["Role"]["enum"].append("system")
        del defs["CompleteRequest"], defs["CompleteResultResponse"]
        defs["ClientRequest"]["anyOf"] = [b for b in defs["ClientRequest"]["anyOf"] if "CompleteRequest" not in str(b)]
        # a request's params moved to a new definition that requires a field (a review of the diff)
        listing = json.loads(json.dumps(defs["PaginatedRequestParams"]))
        listing["properties"]["filter"] = {"type": "string"}
        listing["required"] = [*listing.get("required", []), "filter"]
        defs["ListToolsRequestParams"] = listing
        defs["ListToolsRequest"]["properties"]["params"] = {"$ref": "#/$defs/ListToolsRequestParams"}

    path = new_revision(tmp_path, "2026-09-30", change)
    done = run("diff", "2026-07-28", str(path), "--json", cwd=tmp_path)
    notes = json.loads(done.stdout)["breaks_older_clients"]
    assert "completion/complete: " + str(path) + " has no such request: 2026-07-28 clients get -32601" in notes
    assert (
        f"tools/call: CallToolRequestParams.mode is required in {path}; 2026-07-28 requests without it are "
        "refused (-32602)"
    ) in notes
    assert (
        f"tools/call: ContentBlock takes VideoContent in {path} only; a result holding it has no 2026-07-28 form "
        "(-32603 to 2026-07-28 clients)"
    ) in notes
    assert (
        f"tools/list: its params are ListToolsRequestParams, new in {path}, which requires _meta, filter; "
        "2026-07-28 requests without them are refused (-32602)"
    ) in notes
    assert not any("prompts/list" in note for note in notes)  # untouched methods are not named
    project = tmp_path / "project"  # its ./schema: the bundled one, with the revision adopted
    project.mkdir()
    adopted = run("schema", "sync", "--from", str(path), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert adopted.returncode == 0, adopted.stderr
    assert run("scaffold", "demo", "--version", "2026-07-28", "--schema-dir", "schema", cwd=project).returncode == 0
    regen = run("regen", "--version", "2026-09-30", "--schema-dir", "../schema", cwd=project / "demo")
    assert "  older clients: tools/call: CallToolRequestParams.mode is required in 2026-09-30" in regen.stdout, (
        regen.stdout + regen.stderr
    )
    # a union branch and an enum value the handlers reach, which an exhaustive match must follow
    # (the report listed only fields; diff had them)
    said = regen.stdout.splitlines()
    assert any(
        line.startswith("  ContentBlock (call_tool, ") and line.endswith("): branch added VideoContent")
        for line in said
    ), regen.stdout
    assert any(
        line.startswith("  Role (") and "get_prompt" in line and line.endswith('): value added "system"')
        for line in said
    ), regen.stdout


def test_adopting_a_revision_with_an_unranked_log_level_is_refused(tmp_path: Path) -> None:
    """The overlay orders LoggingLevel's values (the schema does not): a new one has no rank until
    it is given one there, and the runtime would have ranked it as debug."""
    project = tmp_path / "project"
    project.mkdir()
    path = new_revision(tmp_path, "2026-09-30", lambda d: d["$defs"]["LoggingLevel"]["enum"].insert(0, "trace"))  # type: ignore[index]
    done = run("schema", "sync", "--from", str(path), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "definition 'LoggingLevel': level 'trace' has no rank: add it to log_levels.order" in done.stderr
    assert not (project / "schema").exists()


def test_a_sync_that_changes_nothing_leaves_no_schema_directory(tmp_path: Path) -> None:
    """Without ./schema, ``schema sync`` starts from the bundled lock; finding every schema as
    locked, it made ./schema all the same, a copy that overrode the bundled schemas from then on
    (through every upgrade of the tool)."""
    done = run("schema", "sync", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{v}: unchanged" for v in VERSIONS]
    assert list(tmp_path.iterdir()) == []


def test_diff_prints_a_schema_string_on_a_line_of_its_own(tmp_path: Path) -> None:
    """A method named with a line break and a bidirectional override: written as escapes, so
    the report has no line the schema wrote (it printed a fake removal of tools/call)."""
    document = json.loads((SCHEMA_DIR / "2026-07-28" / "schema.json").read_text())
    forged = "x/y\n  - tools/call (was client_to_server)\u202e"
    document["$defs"]["DiscoverRequest"]["properties"]["method"]["const"] = forged
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(document))
    done = run("diff", "2026-07-28", str(path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "  + x/y\\n  - tools/call (was client_to_server)\\u202e (client_to_server)" in done.stdout
    assert not [line for line in done.stdout.splitlines() if line.startswith("  - tools/call")]


def test_a_client_runtime_is_a_package_none_of_pythons_or_a_dependencys() -> None:
    from mcp_schema_codegen.commands.client_stubs import check_runtime

    for good in ("mcpgen", "weather_mcp", "acme.vendored"):
        check_runtime(good)
    for bad in ("os", "pydantic", "json.tool"):
        with pytest.raises(GeneratorError, match="is not a runtime package"):
            check_runtime(bad)


def test_an_error_in_a_staged_schema_directory_names_the_lock_it_copied(tmp_path: Path) -> None:
    """A fresh-user review: without ./schema, `schema sync --version 2099-01-01` named the lock of
    the staging copy (`./.schema-72valzqp/lock.json`), gone by the time the user reads it."""
    done = run("schema", "sync", "--version", "2099-01-01", cwd=tmp_path)
    assert done.returncode == 2 and ".schema-" not in done.stderr, done.stderr
    assert "revision '2099-01-01' is not in the lock " in done.stderr and "lock.json" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_check_of_another_project_reads_that_projects_schemas(tmp_path: Path) -> None:
    """A review of the diff: `check --project P` took the schemas of the working directory (the
    bundled ones), so a project that had adopted a revision into its own ./schema failed from
    outside ("not in the lock") while `check` in it passed."""
    assert run("scaffold", "weather", cwd=tmp_path).returncode == 0
    project = tmp_path / "weather"
    path = new_revision(tmp_path, "2026-09-30")
    adopted = run("schema", "sync", "--from", str(path), "--version", "2026-09-30", "--update-lock", cwd=project)
    assert adopted.returncode == 0, adopted.stderr
    moved = run("regen", "--version", "2026-09-30", cwd=project)
    assert moved.returncode == 0, moved.stderr
    assert run("check", cwd=project).returncode == 0
    done = run("check", "--project", "weather", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
