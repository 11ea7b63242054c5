"""The generation pipeline: lock -> load -> patch -> prepass -> models + IR -> templates -> tree."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from mcp_schema_codegen.backend.models import generate_models
from mcp_schema_codegen.backend.render import Renderer, header
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import LoadedSchema, load
from mcp_schema_codegen.frontend.lock import Lock, load_lock
from mcp_schema_codegen.frontend.prepass import prepass
from mcp_schema_codegen.ir.analyze import Overlay, analyze, load_overlay
from mcp_schema_codegen.ir.protocol import Protocol
from mcp_schema_codegen.output.faults import crash_point
from mcp_schema_codegen.output.manifest import Inputs, read_manifest, write_manifest
from mcp_schema_codegen.output.tree import clean_stale, exclusive, format_tree, staging_dir, swap_in
from mcp_schema_codegen.paths import templates_dir

RUNTIME = "_runtime"


@dataclass
class Options:
    schema_dir: Path
    out: Path
    package: str = "mcpgen"
    versions: list[str] = field(default_factory=list)  # empty: every locked revision
    templates: Path | None = None  # user overrides, by file name
    # the import root of the runtime the generated code uses: None puts the runtime in the
    # package (``<package>._runtime``); another root (``mcpgen._runtime``) is imported from the
    # installed runtime distribution, whose registry the package then chains to
    runtime: str | None = None

    @property
    def runtime_root(self) -> str:
        return self.runtime or f"{self.package}.{RUNTIME}"

    @property
    def vendored(self) -> bool:
        """The runtime is written into the package."""
        return self.runtime_root == f"{self.package}.{RUNTIME}"


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


def check_runtime_root(runtime: str) -> None:
    parts = runtime.split(".")
    if len(parts) < 2 or parts[-1] != RUNTIME or not all(part.isidentifier() for part in parts):
        raise GeneratorError(f"runtime root {runtime!r} is not a dotted module name ending in .{RUNTIME}")


def analyze_revision(lock: Lock, version: str, overlay: Overlay) -> tuple[LoadedSchema, dict[str, object], Protocol]:
    schema = load(lock, version)
    document, _ = prepass(schema)
    return schema, document, analyze(schema, document, overlay)


def build_revision(
    lock: Lock, version: str, overlay: Overlay, renderer: Renderer, package: str, runtime: str
) -> Revision:
    schema, document, protocol = analyze_revision(lock, version, overlay)
    head = header(f"schema/{version}/schema.json", schema.sha256)
    models = generate_models(document, version=version, base_class=f"{runtime}.wire_model.WireModel")
    files = {
        "__init__.py": renderer.version_init(protocol),
        "models.py": head + "\n" + models,
        "protocol.py": renderer.protocol_module(protocol, package, runtime),
        "codec.py": renderer.codec_module(protocol, package, runtime),
        "server.py": renderer.server_module(protocol, package, runtime),
        "client.py": renderer.client_module(protocol, package, runtime, models),
    }
    return Revision(schema, protocol, files)


def batching_revisions(lock: Lock, overlay: Overlay, analysed: dict[str, Protocol], versions: list[str]) -> list[str]:
    """Which of ``versions`` define JSON-RPC batches (recorded in the package's version registry).

    Revisions not generated in this run (kept from the previous tree) are analysed too when
    their schema is synced; one that is not synced counts as without batches.
    """
    found = []
    for version in versions:
        protocol = analysed.get(version)
        if protocol is None:
            if not lock.schema_path(version).exists():
                continue
            protocol = analyze_revision(lock, version, overlay)[2]
        if protocol.batching:
            found.append(version)
    return found


def overlay_for(schema_dir: Path) -> Overlay:
    return load_overlay(schema_dir / "overlay.json")


def render_package(options: Options, dest: Path, keep_from: Path | None = None) -> list[Protocol]:
    """Write the formatted package, with its manifest, into the new directory ``dest``.

    Revisions not asked for are copied from ``keep_from`` (a previous tree) with their
    manifest entries, so a partial regeneration keeps the rest of the package.
    """
    check_package_name(options.package)
    check_runtime_root(options.runtime_root)
    lock = load_lock(options.schema_dir)
    overlay = overlay_for(options.schema_dir)
    versions = options.versions or list(lock.revisions)
    for version in versions:
        lock.revision(version)  # unknown versions fail before any work
    if options.templates is not None and not options.templates.is_dir():
        raise GeneratorError(f"template directory {options.templates} does not exist")
    renderer = Renderer(templates_dir(), options.templates)
    inputs = Inputs.current(options.schema_dir, templates_dir(), options.templates)
    runtime_root = options.runtime_root
    revisions = [build_revision(lock, v, overlay, renderer, options.package, runtime_root) for v in versions]
    crash_point("models")
    entries = {v: inputs.revision_entry(lock, v) for v in versions}

    dest.mkdir()
    previous = read_manifest(keep_from) if keep_from else None
    previous_entries = previous.get("revisions", {}) if previous else {}
    if keep_from is not None and isinstance(previous_entries, dict):
        for version in lock.revisions:
            name = package_dir_name(version)
            if version not in entries and (keep_from / name).is_dir() and version in previous_entries:
                shutil.copytree(keep_from / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
                entries[version] = previous_entries[version]
    for revision in revisions:
        vdir = dest / package_dir_name(revision.protocol.version)
        vdir.mkdir()
        for name, text in revision.files.items():
            (vdir / name).write_text(text, encoding="utf-8")
    if options.vendored:
        runtime = dest / RUNTIME
        runtime.mkdir()
        for rel, text in renderer.runtime_files().items():
            path = runtime / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    present = sorted(entries)
    batching = batching_revisions(lock, overlay, {r.protocol.version: r.protocol for r in revisions}, present)
    parent = None if options.vendored else runtime_root.rsplit(".", 1)[0]
    (dest / "__init__.py").write_text(
        renderer.package_init(
            options.package,
            runtime_root,
            parent,
            [(v, lock.revisions[v].era, v in batching) for v in present],
        ),
        encoding="utf-8",
    )
    (dest / "py.typed").write_text("", encoding="utf-8")
    crash_point("staged")
    format_tree(dest, options.package)
    crash_point("formatted")
    write_manifest(dest, options.package, entries)
    crash_point("manifest")
    return [r.protocol for r in revisions]


def generate(options: Options) -> list[Protocol]:
    """Generate the package for the chosen revisions and swap it in atomically."""
    out = options.out
    target = out / options.package
    with exclusive(out):
        clean_stale(out)
        stage_root = staging_dir(out)
        try:
            staged = stage_root / options.package
            protocols = render_package(options, staged, keep_from=target if target.is_dir() else None)
            swap_in(staged, target)
        finally:
            shutil.rmtree(stage_root, ignore_errors=True)
    return protocols
