"""The cache of datamodel-code-generator's output: same tree as without it, never an error."""

from __future__ import annotations

import importlib.metadata
import json
import os
from pathlib import Path

import datamodel_code_generator
import pytest

from mcp_schema_codegen.backend import cache as cache_module
from mcp_schema_codegen.backend.cache import CACHE_DIR, NO_CACHE, ModelCache
from mcp_schema_codegen.backend.models import generate_models
from mcp_schema_codegen.backend.render import Renderer
from mcp_schema_codegen.pipeline import Options, generate
from tests.cli import run_cli
from tests.conftest import SCHEMA_DIR

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


def test_a_cached_run_writes_the_tree_an_uncached_run_writes(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "plain", versions=[VERSION], cache=False))
    assert not cache_dir.exists(), "cache=False must not write the cache"
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "filled", versions=[VERSION]))
    assert len(list(cache_dir.glob("*.json"))) == 1
    _no_dmcg(monkeypatch)
    generate(Options(schema_dir=SCHEMA_DIR, out=tmp_path / "hit", versions=[VERSION]))
    plain = _tree(tmp_path / "plain")
    assert _tree(tmp_path / "filled") == plain
    assert _tree(tmp_path / "hit") == plain


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
    args = ("generate", "--version", VERSION, "--out", str(tmp_path / "b"))
    assert run_cli(*args, "--no-cache", cwd=tmp_path).returncode == 0
    assert run_cli("check", "--full", "--no-cache", "--out", str(tmp_path / "b"), cwd=tmp_path).returncode == 0
    monkeypatch.setenv(NO_CACHE, "1")
    assert run_cli("generate", "--version", VERSION, "--out", str(tmp_path / "c"), cwd=tmp_path).returncode == 0
    assert len(runs) == 3
    monkeypatch.delenv(NO_CACHE)
    assert run_cli("check", "--full", "--out", str(tmp_path / "c"), cwd=tmp_path).returncode == 0
    assert len(runs) == 3


def test_only_the_newest_entries_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ModelCache(tmp_path)
    for n in range(5):
        cache.put(f"{n:064x}", f"# {n}\n", {"models": []})
        os.utime(tmp_path / f"{n:064x}.json", (n, n))
    monkeypatch.setattr(cache_module, "KEEP", 3)
    cache.get(f"{0:064x}")  # a hit makes an entry new again
    cache.put(f"{9:064x}", "# 9\n", {"models": []})
    kept = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert kept == [f"{n:064x}" for n in (0, 4, 9)]
    assert not list(tmp_path.glob(".entry-*")), "no temporary file is left behind"


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
