"""The generation pipeline: lock -> load -> patch -> prepass -> models + IR -> templates -> tree."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from codegen import __version__
from codegen.analyze import Overlay, analyze, load_overlay
from codegen.errors import GeneratorError
from codegen.ir import Protocol
from codegen.load import LoadedSchema, load
from codegen.lock import Lock, load_lock
from codegen.models import generate_models
from codegen.paths import templates_dir
from codegen.prepass import prepass
from codegen.render import Renderer, header
from codegen.tree import clean_stale, format_tree, staging_dir, swap_in, write_manifest

RUNTIME = "_runtime"


@dataclass
class Options:
    schema_dir: Path
    out: Path
    package: str = "mcpgen"
    versions: list[str] = field(default_factory=list)  # empty: every locked revision
    templates: Path | None = None  # user overrides, by file name


@dataclass(frozen=True)
class Revision:
    schema: LoadedSchema
    protocol: Protocol
    files: dict[str, str]  # path inside the version package -> source


def package_dir_name(version: str) -> str:
    return "v" + version.replace("-", "_")


def check_package_name(package: str) -> None:
    if not package.isidentifier() or package.startswith("_"):
        raise GeneratorError(f"--package {package!r} is not a valid Python package name")


def analyze_revision(lock: Lock, version: str, overlay: Overlay) -> tuple[LoadedSchema, dict[str, object], Protocol]:
    schema = load(lock, version)
    document, _ = prepass(schema)
    return schema, document, analyze(schema, document, overlay)


def build_revision(lock: Lock, version: str, overlay: Overlay, renderer: Renderer, package: str) -> Revision:
    schema, document, protocol = analyze_revision(lock, version, overlay)
    head = header(f"schema/{version}/schema.json", schema.sha256)
    models = generate_models(document, version=version, base_class=f"{package}.{RUNTIME}.wire_model.WireModel")
    files = {
        "__init__.py": renderer.version_init(protocol),
        "models.py": head + "\n" + models,
        "protocol.py": renderer.protocol_module(protocol, package),
    }
    return Revision(schema, protocol, files)


def overlay_for(schema_dir: Path) -> Overlay:
    return load_overlay(schema_dir / "overlay.json")


def generate(options: Options) -> list[Protocol]:
    """Generate the package for the chosen revisions; returns their IR."""
    check_package_name(options.package)
    lock = load_lock(options.schema_dir)
    overlay = overlay_for(options.schema_dir)
    versions = options.versions or list(lock.revisions)
    for version in versions:
        lock.revision(version)  # unknown versions fail before any work
    if options.templates is not None and not options.templates.is_dir():
        raise GeneratorError(f"template directory {options.templates} does not exist")
    renderer = Renderer(templates_dir(), options.templates)
    revisions = [build_revision(lock, v, overlay, renderer, options.package) for v in versions]

    out = options.out
    clean_stale(out)
    target = out / options.package
    stage_root = staging_dir(out)
    try:
        staged = stage_root / options.package
        staged.mkdir()
        kept: list[str] = []
        if target.is_dir():  # keep other revisions of a partial regeneration
            regenerated = {package_dir_name(v) for v in versions}
            for version in lock.revisions:
                name = package_dir_name(version)
                if name not in regenerated and (target / name).is_dir():
                    shutil.copytree(target / name, staged / name, ignore=shutil.ignore_patterns("__pycache__"))
                    kept.append(version)
        for revision in revisions:
            vdir = staged / package_dir_name(revision.protocol.version)
            vdir.mkdir()
            for name, text in revision.files.items():
                (vdir / name).write_text(text, encoding="utf-8")
        runtime = staged / RUNTIME
        runtime.mkdir()
        for rel, text in renderer.runtime_files().items():
            path = runtime / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        present = sorted(set(versions) | set(kept))
        (staged / "__init__.py").write_text(
            renderer.package_init([(v, lock.revisions[v].era) for v in present]), encoding="utf-8"
        )
        (staged / "py.typed").write_text("", encoding="utf-8")
        format_tree(staged, options.package)
        write_manifest(
            staged,
            {
                "generator": __version__,
                "package": options.package,
                "revisions": {v: lock.revisions[v].sha256 for v in present},
            },
        )
        swap_in(staged, target)
    finally:
        shutil.rmtree(stage_root, ignore_errors=True)
    return [r.protocol for r in revisions]
