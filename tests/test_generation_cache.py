"""The cache of datamodel-code-generator's output: same tree as without it, never an error."""

from __future__ import annotations

import importlib.metadata
import json
import os
from pathlib import Path
from typing import Any

import datamodel_code_generator
import pytest

from mcp_schema_codegen.backend import cache as cache_module
from mcp_schema_codegen.backend.cache import CACHE_DIR, NO_CACHE, ModelCache, RevisionCache
from mcp_schema_codegen.backend.models import generate_models
from mcp_schema_codegen.backend.render import Renderer
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.output import format as format_module
from mcp_schema_codegen.output.format import FormatCache, format_tree
from mcp_schema_codegen.pipeline import Options, generate
from tests.cli import run_cli
from tests.conftest import ROOT, SCHEMA_DIR

VERSION = "2025-06-18"


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _no_dmcg(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("datamodel-code-generator ran although its output was cached")

    monkeypatch.setattr(datamodel_code_generator, "generate", refuse)


def _counting_dmcg(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs: list[int] = []
    real = datamodel_code_generator.generate

    def counted(*args: object, **kwargs: object) -> object:
        runs.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(datamodel_code_generator, "generate", counted)
    return runs


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR, str(root))
    monkeypatch.delenv(NO_CACHE, raising=False)
    return root


def _ruff_runs(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The files each ruff run of ``format_tree`` was given (names relative to nothing: bare names)."""
    runs: list[list[str]] = []
    real = format_module._run_ruff

    def counted(steps: list[list[str]], files: list[Path], root: Path) -> None:
        runs.append(sorted(p.name for p in files))
        real(steps, files, root)

    monkeypatch.setattr(format_module, "_run_ruff", counted)
    return runs


def test_a_cached_run_writes_the_tree_an_uncached_run_writes(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "plain", versions=[VERSION], cache=False))
    assert not cache_dir.exists(), "cache=False must not write the cache"
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "filled", versions=[VERSION]))
    assert len(list(cache_dir.glob("*.json"))) == 1
    sources = [p for p in (tmp_path / "plain").rglob("*.py") if "__pycache__" not in p.parts]
    assert len(list((cache_dir / "format").rglob("*.py"))) == len(sources)  # one formatted entry per file
    assert len(list((cache_dir / "revisions").glob("*.json"))) == 1  # the revision's rendering
    _no_dmcg(monkeypatch)
    ruff = _ruff_runs(monkeypatch)
    renders = _counting_renders(monkeypatch)
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "hit", versions=[VERSION]))
    assert ruff == [], "ruff ran although every file's formatting was cached"
    assert renders == [], "the revision was rendered although its rendering was cached"
    plain = _tree(tmp_path / "plain")
    assert _tree(tmp_path / "filled") == plain
    assert _tree(tmp_path / "hit") == plain


def _counting_renders(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The revisions whose model modules were rendered (the step a cached rendering skips)."""
    renders: list[str] = []
    real = Renderer.model_modules

    def counted(self: Renderer, protocol: Any, *args: Any) -> Any:
        renders.append(protocol.version)
        return real(self, protocol, *args)

    monkeypatch.setattr(Renderer, "model_modules", counted)
    return renders


def test_a_rendering_is_reused_only_for_the_same_inputs_target_and_generator_source(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(out: str, **options: Any) -> dict[str, bytes]:
        generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / out, versions=[VERSION], **options))
        return _tree(tmp_path / out)

    first = run("first")
    renders = _counting_renders(monkeypatch)
    assert run("again") == first and renders == []
    other = run("other", package="othermcp")  # another target
    assert renders == [VERSION] and other != first
    templates = tmp_path / "templates"
    templates.mkdir()
    codec = (ROOT / "templates" / "codec_legacy.py.j2").read_text()
    (templates / "codec_legacy.py.j2").write_text(codec + "\n# customised\n")
    customised = run("customised", templates=templates)  # another template set
    assert renders == [VERSION, VERSION] and b"# customised" in customised["mcpgen/v2025_06_18/codec.py"]
    monkeypatch.setattr(cache_module, "source_digest", lambda: "an edited generator")
    assert run("edited") == first and renders == [VERSION] * 3
    assert run("edited-again") == first and renders == [VERSION] * 3
    real_version = cache_module._version
    monkeypatch.setattr(cache_module, "_version", lambda name: "99.0" if name == "jinja2" else real_version(name))
    assert run("another-jinja2") == first and renders == [VERSION] * 4  # the template engine renders the files


def test_a_damaged_rendering_is_a_miss_and_is_rewritten(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "first", versions=[VERSION]))
    (entry,) = (cache_dir / "revisions").glob("*.json")
    text = entry.read_text()
    good = json.loads(text)
    renders = _counting_renders(monkeypatch)
    damaged = {  # one run of datamodel-code-generator (cached after it) for the three kinds
        "truncated": text[:100],
        "other-key": json.dumps({**good, "key": "0" * 64}),
        "no-files": json.dumps({"key": good["key"], "files": {}}),
    }
    for n, damage in enumerate(damaged.values()):
        entry.write_text(damage)
        generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / f"again-{n}", versions=[VERSION]))
        assert json.loads(entry.read_text()) == good
        assert _tree(tmp_path / f"again-{n}") == _tree(tmp_path / "first")
    assert renders == [VERSION] * len(damaged)
    assert RevisionCache(cache_dir / "revisions").get(good["key"]) == good["files"]


UNFORMATTED = {
    "a.py": "import os\nfrom demo import x\nfrom pydantic import BaseModel\nimport sys\nprint( os,x,BaseModel )\n",
    "__init__.py": "from demo.a import x\nimport json\n",
    "b.py": "def f( ):\n  return {'k':1}\n",
}


def _scratch(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_only_files_not_formatted_before_reach_ruff_and_all_come_out_as_without_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _scratch(tmp_path / "plain", UNFORMATTED)
    format_tree(plain, "demo")
    expected = _tree(plain)
    assert "import sys" not in expected["a.py"].decode() and "import json" in expected["__init__.py"].decode()
    cache = FormatCache(tmp_path / "cache")
    ruff = _ruff_runs(monkeypatch)
    format_tree(_scratch(tmp_path / "first", UNFORMATTED), "demo", cache)
    assert ruff == [["__init__.py", "a.py", "b.py"]]
    second = _scratch(tmp_path / "second", {**UNFORMATTED, "b.py": "def g( ):\n  return 2\n"})
    format_tree(second, "demo", cache)
    assert ruff[1:] == [["b.py"]]
    assert _tree(tmp_path / "first") == expected
    assert {**_tree(second), "b.py": b""} == {**expected, "b.py": b""}
    assert _tree(second)["b.py"] == b"def g():\n    return 2\n"
    # the same text under another name, or for another package, is another entry
    format_tree(_scratch(tmp_path / "renamed", {"c.py": UNFORMATTED["b.py"]}), "demo", cache)
    format_tree(_scratch(tmp_path / "other", {"a.py": UNFORMATTED["a.py"]}), "other", cache)
    assert ruff[2:] == [["c.py"], ["a.py"]]
    assert (tmp_path / "other" / "a.py").read_bytes() != expected["a.py"]  # demo is third-party there
    # a file that does not name the package formats alike for every package: one entry for all
    format_tree(_scratch(tmp_path / "shared", {"b.py": UNFORMATTED["b.py"]}), "other", cache)
    assert ruff[4:] == [] and (tmp_path / "shared" / "b.py").read_bytes() == expected["b.py"]


def test_formatting_does_not_depend_on_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ruff's isort would count any directory in the working directory as a first-party package
    (``src = ["."]``): the generator pins ``src`` empty, so a project holding a ``pydantic/``
    directory gets the tree every other project gets (and the cache may key on the text alone)."""
    elsewhere = _scratch(tmp_path / "elsewhere", UNFORMATTED)
    format_tree(elsewhere, "demo")
    project = tmp_path / "project"
    (project / "pydantic").mkdir(parents=True)
    (project / "pydantic" / "__init__.py").write_text("")
    monkeypatch.chdir(project)
    here = _scratch(project / "out", UNFORMATTED)
    format_tree(here, "demo")
    assert _tree(here) == _tree(elsewhere)
    assert not (project / ".ruff_cache").exists(), "ruff left its cache in the working directory"
    # nor on the packages above the tree (isort's detect-same-package would take the tree for
    # part of the package ``pydantic`` here)
    inside = _scratch(project / "pydantic" / "out", UNFORMATTED)
    format_tree(inside, "demo")
    assert _tree(inside) == _tree(elsewhere)


def test_generated_code_that_is_no_python_is_named_with_its_line(tmp_path: Path) -> None:
    """A template or the generator writing invalid Python: ruff's ``--quiet`` hid its parse
    error, and the one-line error read "ruff failed on generated code: []"."""
    root = _scratch(tmp_path / "out", {"good.py": "x = 1\n", "bad.py": "x = 1\ndef f(:\n    pass\n"})
    with pytest.raises(GeneratorError) as failed:
        format_tree(root, "demo")
    said = str(failed.value)
    assert said.startswith("generated code is not valid Python: bad.py, line 2: "), said


@pytest.mark.parametrize("damage", ["truncated", "cut-short", "other-key", "empty"])
def test_a_damaged_formatted_entry_is_a_miss_and_is_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    cache = FormatCache(tmp_path / "cache")
    files = {"b.py": UNFORMATTED["b.py"]}
    format_tree(_scratch(tmp_path / "first", files), "demo", cache)
    (entry,) = (tmp_path / "cache").rglob("*.py")
    good = entry.read_bytes()
    entry.write_bytes(
        {"truncated": good[:30], "cut-short": good[:-5], "other-key": b"0" * 64 + good[64:], "empty": b""}[damage]
    )
    ruff = _ruff_runs(monkeypatch)
    again = _scratch(tmp_path / "again", files)
    format_tree(again, "demo", cache)
    assert ruff == [["b.py"]]
    assert entry.read_bytes() == good and _tree(again) == _tree(tmp_path / "first")


def test_only_the_formatted_files_used_last_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = FormatCache(tmp_path)
    keys = [f"{n:02x}" + "0" * 62 for n in range(5)]
    for n, key in enumerate(keys):
        assert cache.put(key, f"# {n}\n".encode())
        os.utime(tmp_path / key[:2] / f"{key}.py", (n, n))
    monkeypatch.setattr(format_module, "KEEP_FILES", 3)
    assert cache.get(keys[0]) == b"# 0\n"  # a hit makes an entry new again
    assert not list(tmp_path.rglob(".entry-*")), "no temporary file is left behind"
    killed, writing = tmp_path / "00" / ".entry-killed.tmp", tmp_path / "01" / ".entry-writing.tmp"
    killed.write_bytes(b"#")
    os.utime(killed, (0, 0))  # a writer killed long ago
    writing.write_bytes(b"#")  # a writer at work now
    cache.prune()
    assert sorted(p.stem for p in tmp_path.rglob("*.py")) == [keys[0], keys[3], keys[4]]
    assert [p.name for p in tmp_path.rglob(".entry-*")] == [writing.name]


def test_the_key_covers_the_document_the_options_and_the_tool_versions(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document = {"$defs": {"Thing": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    runs = _counting_dmcg(monkeypatch)
    cache = ModelCache.default()
    assert cache is not None and cache.root == cache_dir

    first = generate_models(document, version="x", base_class="pkg.Base", cache=cache)
    generate_models(document, version="x", base_class="pkg.Base", cache=cache)
    assert len(runs) == 1
    other_base = generate_models(document, version="x", base_class="other.Base", cache=cache)
    assert len(runs) == 2
    assert "from other import Base" in other_base.source and "from pkg import Base" in first.source
    changed = {"$defs": {"Thing": {"type": "object", "properties": {"b": {"type": "string"}}}}}
    assert "b: StrictStr" in generate_models(changed, version="x", base_class="pkg.Base", cache=cache).source
    assert len(runs) == 3
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "99.0")  # another toolchain
    generate_models(document, version="x", base_class="pkg.Base", cache=cache)
    assert len(runs) == 4


BASES = ("mcpgen._runtime.wire_model.WireModel", "demo_mcp._runtime.wire_model.WireModel")


def test_packages_share_entries_and_each_gets_what_an_uncached_run_writes(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a description holding the very import line stays as written: only the import is rebased
    line = "from mcpgen._runtime.wire_model import WireModel"
    document = {
        "$defs": {
            "Thing": {"type": "object", "description": f"x\n{line}\n", "properties": {"a": {"type": "string"}}},
            "Other": {"type": "object", "properties": {"thing": {"$ref": "#/$defs/Thing"}}},
        }
    }
    own = {base: generate_models(document, version="x", base_class=base) for base in BASES}
    runs = _counting_dmcg(monkeypatch)
    cache = ModelCache(cache_dir)
    for base in (*BASES, *BASES):
        assert generate_models(document, version="x", base_class=base, cache=cache) == own[base]
    assert len(runs) == 1 and len(list(cache_dir.glob("*.json"))) == 1
    assert "from demo_mcp._runtime.wire_model import WireModel\n" in own[BASES[1]].source
    assert own[BASES[1]].source.count(line) == 1  # the description's copy


@pytest.mark.parametrize("damage", ["truncated", "other-key", "not-json"])
def test_a_damaged_entry_is_a_miss_and_is_rewritten(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    document = {"$defs": {"Thing": {"type": "object", "properties": {"a": {"type": "integer"}}}}}
    cache = ModelCache(cache_dir)
    good = generate_models(document, version="x", base_class="pkg.Base", cache=cache)
    (entry,) = cache_dir.glob("*.json")
    text = entry.read_text()
    entry.write_text(
        {
            "truncated": text[: len(text) // 2],
            "other-key": json.dumps({**json.loads(text), "key": "0" * 64}),
            "not-json": "\0\1",
        }[damage]
    )
    runs = _counting_dmcg(monkeypatch)
    assert generate_models(document, version="x", base_class="pkg.Base", cache=cache) == good
    assert len(runs) == 1
    assert json.loads(entry.read_text())["source"] == json.loads(text)["source"]


def test_an_unwritable_cache_is_skipped_without_a_word(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR, str(blocker / "cache"))
    done = run_cli("generate", "--version", VERSION, "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert (tmp_path / "out" / "mcpgen" / "v2025_06_18" / "protocol.py").is_file()


def test_no_cache_by_flag_or_environment_runs_the_generator(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli("generate", "--version", VERSION, "--out", str(tmp_path / "a"), cwd=tmp_path).returncode == 0
    runs = _counting_dmcg(monkeypatch)
    ruff = _ruff_runs(monkeypatch)
    args = ("generate", "--version", VERSION, "--out", str(tmp_path / "b"))
    assert run_cli(*args, "--no-cache", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--full", "--no-cache", "--out", str(tmp_path / "b"), cwd=tmp_path).returncode == 0
    monkeypatch.setenv(NO_CACHE, "1")
    assert run_cli("generate", "--version", VERSION, "--out", str(tmp_path / "c"), cwd=tmp_path).returncode == 0
    assert len(runs) == 3
    assert len(ruff) == 3 and all(len(files) > 100 for files in ruff), "the flag and the variable turn off ruff's cache"
    monkeypatch.delenv(NO_CACHE)
    assert run_cli("check", "--full", "--out", str(tmp_path / "c"), cwd=tmp_path).returncode == 0
    assert len(runs) == 3 and len(ruff) == 3


def test_only_the_newest_entries_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ModelCache(tmp_path)
    for n in range(5):
        cache.put(f"{n:064x}", f"# {n}\n", {"models": []})
        os.utime(tmp_path / f"{n:064x}.json", (n, n))
    monkeypatch.setattr(cache_module, "KEEP", 3)
    cache.get(f"{0:064x}")  # a hit makes an entry new again
    killed, writing = tmp_path / ".entry-killed.tmp", tmp_path / ".entry-writing.tmp"
    killed.write_text("{")
    os.utime(killed, (0, 0))  # a writer killed long ago
    writing.write_text("{")  # a writer at work now
    cache.put(f"{9:064x}", "# 9\n", {"models": []})
    kept = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert kept == [f"{n:064x}" for n in (0, 4, 9)]
    assert sorted(p.name for p in tmp_path.glob(".entry-*")) == [writing.name], "only the live writer's file stays"


def test_a_template_changed_within_one_process_is_compiled_again(tmp_path: Path) -> None:
    """Renderers share compiled templates (backend/render.py: COMPILED) by path and source checksum:
    a template rewritten in place, even with its old size and mtime, renders its new text."""
    template = tmp_path / "note.py.j2"
    template.write_text("A = {{ 1 | py }}\n")
    stamp = template.stat().st_mtime_ns
    assert Renderer(tmp_path).render("note.py") == "A = 1\n"
    template.write_text("B = {{ 2 | py }}\n")
    os.utime(template, ns=(stamp, stamp))
    assert Renderer(tmp_path).render("note.py") == "B = 2\n"
    assert Renderer(tmp_path).render("note.py") == "B = 2\n"
