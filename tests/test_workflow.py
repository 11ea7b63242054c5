"""The spec-update workflow: check, diff, [tool.mcp-codegen], template overrides, lock updates."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.conftest import ROOT, SCHEMA_DIR, VERSIONS
from tests.shared import built_once, copy_of, generated_project


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user project with synced schemas and nothing generated yet."""
    schema = tmp_path / "schema"
    shutil.copytree(SCHEMA_DIR, schema, ignore=shutil.ignore_patterns("__pycache__", "examples"))
    assert sorted(p.name for p in schema.iterdir() if p.is_dir()) == sorted([*VERSIONS, "patches"])
    return tmp_path


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project after ``generate --all``, built once for the run (tests change copies of it)."""
    return built_once(tmp_path_factory, "generated-project", generated_project)


def test_diff_2025_11_25_to_2026_07_28_reports_the_era_change() -> None:
    done = run("diff", "2025-11-25", "2026-07-28")
    assert done.returncode == 1, done.stderr
    text = done.stdout
    assert "era: legacy -> modern" in text
    for removed in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        assert f"  - {removed} (was " in text
    for embedded in ("sampling/createMessage", "roots/list", "elicitation/create"):
        assert f"  - {embedded}: no longer a JSON-RPC request" in text
    assert "  + server/discover (client_to_server)" in text
    assert "  + subscriptions/listen (client_to_server)" in text
    for result in ("CallToolResult", "ListToolsResult", "ReadResourceResult", "CompleteResult"):
        assert f"  + {result}.resultType: string (required)" in text
    assert "  ~ CallToolRequestParams._meta: optional -> required" in text
    assert "  ~ CallToolRequestParams._meta: type CallToolRequestParamsMeta -> RequestMetaObject" in text
    assert (
        "  + RequestMetaObject (required: io.modelcontextprotocol/clientCapabilities, "
        "io.modelcontextprotocol/protocolVersion)" in text
    )

    as_json = json.loads(run("diff", "2025-11-25", "2026-07-28", "--json").stdout)
    assert as_json["changed"] is True and as_json["era"] == ["legacy", "modern"]
    removed = {m["method"] for m in as_json["methods"] if m["change"] == "removed"}
    assert {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} <= removed
    # the protocol table's values as JSON: booleans and null, not Python's text of them
    required = {m["method"]: (m["old"], m["new"]) for m in as_json["methods"] if m["change"] == "params_required"}
    assert required["prompts/list"] == (False, True), required
    # older clients: what the legacy session answers itself (initialize, ping, ...) is no refusal
    # (a review of the diff: the first version listed them as -32601); the tasks requests are
    assert as_json["breaks_older_clients"] == [
        f"tasks/{name}: 2026-07-28 has no such request: 2025-11-25 clients get -32601"
        for name in ("cancel", "get", "list", "result")
    ]
    backwards = json.loads(run("diff", "2026-07-28", "2025-11-25", "--json").stdout)
    assert backwards["breaks_older_clients"] == []  # a server of the older revision: no older clients


def test_diff_finds_renames_by_structure_and_reports_no_change() -> None:
    assert "  ~ AnnotatedModelAnnotations renamed to Annotations" in run("diff", "2024-11-05", "2025-03-26").stdout
    # 2025-11-25 moved its definitions from `definitions` to `$defs`: no reference changed (53
    # `constraints` lines said one had, found by a CLI review)
    across = run("diff", "2025-06-18", "2025-11-25").stdout
    assert "#/definitions/" not in across and "  ~ CallToolRequest.params" not in across, across
    same = run("diff", "2026-07-28", "2026-07-28")
    assert same.returncode == 0 and same.stdout.strip().endswith("no changes")


def test_check_names_a_hand_edited_file_and_generate_restores_it(generated: Path, tmp_path: Path) -> None:
    project = copy_of(generated, tmp_path / "project")  # generate --all succeeded there
    assert run("check", cwd=project).returncode == 0
    assert run("check", "--full", cwd=project).returncode == 0
    edited = project / "generated" / "mcpgen" / "v2025_06_18" / "protocol.py"
    edited.write_text(edited.read_text().replace('stub="call_tool"', 'stub="call_tool_by_hand"'))
    done = run("check", cwd=project)
    assert done.returncode == 1
    assert "mcpgen/v2025_06_18/protocol.py: edited by hand" in done.stderr
    assert '-            stub="call_tool_by_hand",' in done.stdout and '+            stub="call_tool",' in done.stdout
    # check rebuilt only the edited revision (the others' files have their recorded hashes) and
    # the package's own files: the diff names the edited file and nothing else
    headers = [line for line in done.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert len(headers) == 2 and all("mcpgen/v2025_06_18/protocol.py" in line for line in headers), headers
    assert run("generate", "--version", "2025-06-18", cwd=project).returncode == 0
    assert run("check", cwd=project).returncode == 0
    notes = project / "generated" / "mcpgen" / "v2026_07_28" / "notes.py"
    notes.write_text("x = 1\n")
    assert "notes.py: not written by the generator" in run("check", cwd=project).stderr
    # generating another revision writes an edited one anew too, never records the edit as the
    # generator's (check passed after it, the file still there)
    assert run("generate", "--version", "2025-06-18", cwd=project).returncode == 0
    assert run("check", cwd=project).returncode == 0 and not notes.exists()
    # a kept revision the user made read-only is copied by its bytes, not its modes: the staged
    # copy stays writable (and removable when a run fails), and the result is as before
    kept = project / "generated" / "mcpgen" / "v2026_07_28"
    for path in [*kept.rglob("*"), kept]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    assert run("generate", "--version", "2025-06-18", cwd=project).returncode == 0
    assert all(p.stat().st_mode & 0o200 for p in [*kept.rglob("*"), kept])
    assert run("check", cwd=project).returncode == 0
    # a recorded revision deleted by hand is written anew too, not dropped from the package
    shutil.rmtree(project / "generated" / "mcpgen" / "v2025_03_26")
    assert run("generate", "--version", "2025-06-18", cwd=project).returncode == 0
    assert (project / "generated" / "mcpgen" / "v2025_03_26" / "models.py").is_file()
    assert run("check", cwd=project).returncode == 0


def test_check_reads_the_manifest_itself_and_sees_a_linked_directory(generated: Path, tmp_path: Path) -> None:
    """The manifest is the generator's too: another package's (a copied tree checked as another
    --package) or one with a key added is stale; a symbolic link in the package (the generator
    writes none) brings in files check never read: it is reported."""
    project = copy_of(generated, tmp_path / "project")
    package = project / "generated" / "mcpgen"
    manifest = package / "_manifest.json"
    original = manifest.read_text()
    manifest.write_text(original.replace('"package": "mcpgen"', '"package": "acme_mcp"'))
    assert "the manifest is of package 'acme_mcp', not 'mcpgen'" in run("check", cwd=project).stderr
    manifest.write_text(original.replace('"package": "mcpgen"', '"note": "x", "package": "mcpgen"'))
    assert "the manifest holds 'note'" in run("check", cwd=project).stderr
    manifest.write_text(original)
    assert run("check", cwd=project).returncode == 0
    nested = package / "v2026_07_28" / "_manifest.json"
    nested.write_text("{}")  # only the package's own is the manifest
    assert "mcpgen/v2026_07_28/_manifest.json: not written by the generator" in run("check", cwd=project).stderr
    # a run for another revision writes this one anew (it was copied, the file recorded as ours)
    assert run("generate", "--version", "2025-06-18", cwd=project).returncode == 0
    assert not nested.exists() and run("check", cwd=project).returncode == 0
    (tmp_path / "elsewhere").mkdir()
    (package / "v2026_07_28" / "extra").symlink_to(tmp_path / "elsewhere")
    assert "mcpgen/v2026_07_28/extra: not written by the generator" in run("check", cwd=project).stderr


def test_a_new_optional_field_flows_from_schema_to_check_diff_and_model(project: Path, tmp_path: Path) -> None:
    assert run("generate", "--version", "2026-07-28", cwd=project).returncode == 0
    upstream = tmp_path / "upstream"
    (upstream / "2026-07-28").mkdir(parents=True)
    original = project / "schema" / "2026-07-28" / "schema.json"
    document = json.loads(original.read_text())
    document["$defs"]["Tool"]["properties"]["category"] = {"type": "string", "description": "A grouping."}
    changed = upstream / "2026-07-28" / "schema.json"
    changed.write_text(json.dumps(document, indent=4))
    pristine = tmp_path / "pristine.json"
    shutil.copy(original, pristine)

    synced = run("schema", "sync", "--from", str(upstream), "--version", "2026-07-28", cwd=project)
    assert synced.returncode == 2 and "does not match the lock" in synced.stderr
    adopted = run("schema", "sync", "--from", str(upstream), "--version", "2026-07-28", "--update-lock", cwd=project)
    assert adopted.returncode == 0, adopted.stderr

    stale = run("check", cwd=project)
    assert stale.returncode == 1 and "2026-07-28: schema changed since generation" in stale.stderr
    assert "+    category: StrictStr | MISSING = MISSING" in stale.stdout

    diff = run("diff", str(pristine), "2026-07-28", "--json", cwd=project)
    assert diff.returncode == 1
    report = json.loads(diff.stdout)
    assert report["fields"] == [
        {"definition": "Tool", "field": "category", "change": "added", "old": None, "new": "string (optional)"}
    ]
    assert report["methods"] == [] and report["definitions_added"] == [] and report["definitions_removed"] == []

    assert run("generate", "--version", "2026-07-28", cwd=project).returncode == 0
    assert run("check", cwd=project).returncode == 0
    probe = (
        "from mcpgen.v2026_07_28.models import Tool; "
        "print(Tool(name='t', input_schema={'type': 'object'}, category='c').model_dump_json())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=project / "generated", check=True
    )
    assert json.loads(out.stdout)["category"] == "c"


def test_pyproject_settings_apply_and_cli_flags_win(project: Path) -> None:
    overrides = project / "my-templates"
    overrides.mkdir()
    builtin = (ROOT / "templates" / "version_init.py.j2").read_text()
    (overrides / "version_init.py.j2").write_text(builtin + "\nCUSTOMISED = True\n")
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.mcp-codegen]\nversions = ["2025-03-26"]\nout = "src"\n'
        'package = "acme_mcp"\ntemplates = "my-templates"\n'
    )
    assert run("generate", cwd=project).returncode == 0
    package = project / "src" / "acme_mcp"
    assert sorted(p.name for p in package.iterdir() if p.name.startswith("v")) == ["v2025_03_26"]
    assert "CUSTOMISED = True" in (package / "v2025_03_26" / "__init__.py").read_text()
    assert run("check", cwd=project).returncode == 0
    (overrides / "version_init.py.j2").write_text(builtin)  # a template change makes the tree stale
    stale = run("check", cwd=project)
    assert stale.returncode == 1 and "templates changed since generation" in stale.stderr
    assert run("generate", "--package", "other", "--version", "2024-11-05", cwd=project).returncode == 0
    assert (project / "src" / "other" / "v2024_11_05" / "models.py").exists()
    (project / "pyproject.toml").write_text("[tool.mcp-codegen]\nbogus = 1\n")
    bad = run("generate", cwd=project)
    assert bad.returncode == 2 and "unknown [tool.mcp-codegen] key(s) bogus" in bad.stderr


def test_shipped_ci_integration_files_run_check(tmp_path: Path) -> None:
    """The hook and the workflow's mcp-codegen steps, run as written, pass on a fresh project."""
    import yaml

    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    workflow = yaml.safe_load((ROOT / "examples" / "ci" / "mcp-codegen-check.yml").read_text())
    steps = [step["run"] for step in workflow["jobs"]["check"]["steps"] if "run" in step]
    commands = [hooks[0]["entry"]] + [s for s in steps if s.startswith("mcp-codegen ")]
    assert commands == ["mcp-codegen check", "mcp-codegen check --full"]
    # a filter on paths skipped the hook in a scaffolded project, where an edit to the app or to
    # <name>_mcp/ is what makes the package stale (pre-commit: "(no files to check) Skipped")
    assert "files" not in hooks[0] and hooks[0]["always_run"] is True
    assert any("pip install" in s for s in steps)
    # in this process: the command's outcome is under test, not its interpreter (check imports the
    # project's app in a child process of its own either way)
    assert run("scaffold", "demo", cwd=tmp_path).returncode == 0
    project = tmp_path / "demo"
    for command in commands:
        done = run(*command.split()[1:], cwd=project)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    (project / "demo_mcp" / "models.py").write_text("# edited\n")
    for command in commands:
        assert run(*command.split()[1:], cwd=project).returncode == 1


def test_check_verifies_the_schema_bytes_against_the_lock(project: Path) -> None:
    assert run("generate", "--version", "2025-03-26", cwd=project).returncode == 0
    assert run("check", cwd=project).returncode == 0
    schema = project / "schema" / "2025-03-26" / "schema.json"
    schema.write_bytes(schema.read_bytes().replace(b"{", b"{ ", 1))  # same JSON, other bytes
    stale = run("check", cwd=project)
    assert stale.returncode == 1 and "the lock expects" in stale.stderr and "2025-03-26" in stale.stderr
    # not "run mcp-codegen generate ...": that would refuse the same bytes; the schema is what to fix
    assert "mcp-codegen generate" not in stale.stderr and "a schema does not match the lock" in stale.stderr
