"""The generation pipeline: lock -> load -> patch -> prepass -> models + IR -> templates -> tree."""

from __future__ import annotations

import json
import keyword
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcp_schema_codegen.backend.cache import ModelCache, RevisionCache
from mcp_schema_codegen.backend.models import generate_models
from mcp_schema_codegen.backend.render import Renderer
from mcp_schema_codegen.backend.views import Target
from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import LoadedSchema
from mcp_schema_codegen.frontend.lock import Lock, load_lock
from mcp_schema_codegen.interrupts import commit_point
from mcp_schema_codegen.ir.analyze import Overlay, analyze_revision, overlay_for
from mcp_schema_codegen.ir.protocol import Protocol
from mcp_schema_codegen.output.faults import crash_point
from mcp_schema_codegen.output.format import FormatCache, format_tree
from mcp_schema_codegen.output.manifest import (
    MANIFEST,
    MANIFEST_KEYS,
    Inputs,
    file_hashes,
    read_manifest,
    write_manifest,
)
from mcp_schema_codegen.output.tree import (
    clean_stale,
    exclusive,
    remove_if_only_the_lock,
    signals_deferred,
    staging_dir,
    swap_in,
)
from mcp_schema_codegen.paths import templates_dir

RUNTIME = "_runtime"
RUNTIME_DISTRIBUTION = "mcpgen"  # the runtime's import package, which holds its own runtime


@dataclass
class Options:
    schema_dir: Path
    out: Path
    package: str = "mcpgen"
    versions: list[str] = field(default_factory=list)  # empty: every locked revision
    templates: Path | None = None  # user overrides, by file name
    vendor_runtime: bool = False  # copy the runtime into the package instead of importing mcpgen's
    current_modules: bool = False  # <package>/{models,server,client}.py re-export the latest revision's
    keep_others: bool = True  # revisions not asked for stay in the package (False: exactly `versions`)
    cache: bool = True  # reuse datamodel-code-generator's output for the same input (backend/cache.py)

    @property
    def runtime_in_output(self) -> bool:
        """The package carries its own ``_runtime`` (it is the runtime distribution, or asked to vendor)."""
        return self.vendor_runtime or self.package == RUNTIME_DISTRIBUTION

    @property
    def target(self) -> Target:
        root = self.package if self.runtime_in_output else RUNTIME_DISTRIBUTION
        return Target.of(self.package, f"{root}.{RUNTIME}")

    @property
    def layout(self) -> str:
        """The options that shape every file, as the manifest records them."""
        return f"runtime={self.target.runtime}" + (",current-modules" if self.current_modules else "")


@dataclass(frozen=True)
class Revision:
    schema: LoadedSchema
    protocol: Protocol
    files: dict[str, str]  # path inside the version package -> source


def recorded_layouts(package_dir: Path) -> dict[str, str]:
    """The layout (``Options.layout``) each revision of the package at ``package_dir`` was
    generated with, as its manifest records it; empty when there is none."""
    manifest = read_manifest(package_dir) if package_dir.is_dir() else None
    entries = manifest.get("revisions") if manifest else None
    if not isinstance(entries, dict):
        return {}
    return {v: e["layout"] for v, e in entries.items() if isinstance(e, dict) and isinstance(e.get("layout"), str)}


def layout_of(package_dir: Path) -> tuple[bool, bool] | None:
    """(runtime vendored, current-revision modules) of the package at ``package_dir``, read back
    from the layouts its manifest records; None when it records none."""
    parts = [layout.split(",") for layout in recorded_layouts(package_dir).values()]
    if not parts:
        return None
    own = f"runtime={package_dir.name}.{RUNTIME}"
    vendored = package_dir.name != RUNTIME_DISTRIBUTION and any(part[0] == own for part in parts)
    return vendored, any("current-modules" in part[1:] for part in parts)


def check_kept_layout(options: Options, target: Path, lock: Lock) -> None:
    """Refuse to keep revisions made with another layout (runtime vendored or not, current-revision
    modules) beside the ones this run writes: the package would import a runtime it lacks."""
    if not options.keep_others:
        return
    asked = set(options.versions or lock.revisions)
    for version, layout in sorted(recorded_layouts(target).items()):
        if version in asked or version not in lock.revisions or not (target / package_dir_name(version)).is_dir():
            continue
        if layout != options.layout:
            raise GeneratorError(
                f"{target} holds MCP {version} generated with {layout}, not {options.layout} as this run asks",
                hint="the layout asked for comes from --vendor-runtime/--no-vendor-runtime or "
                "[tool.mcp-codegen] vendor-runtime and current-modules: make them match the tree, "
                "or regenerate every revision it holds to change it",
            )


def check_replaceable(target: Path) -> None:
    """Refuse to replace, at the package's place, what the generator did not write there: a file,
    a symbolic link (its target would stay as it was, the link replaced by a directory), or a
    directory holding files but no manifest."""
    hint = "move it away, or choose another --out or --package"
    if target.is_symlink():
        raise GeneratorError(f"{target} is a symbolic link, not a generated package", hint=hint)
    if target.exists() and not target.is_dir():
        raise GeneratorError(f"{target} is a file, not a generated package", hint=hint)
    if target.is_dir() and any(target.iterdir()) and not written_by_the_generator(target):
        raise GeneratorError(f"{target} holds files the generator did not write (no manifest of it)", hint=hint)


def written_by_the_generator(target: Path) -> bool:
    """``target`` holds a package the generator wrote: its manifest names it, or, the manifest
    damaged past reading (``generate`` repairs it), it has the generator's layout (``py.typed``
    and a revision package). A file named ``_manifest.json`` of the user's or another tool's
    (``{}``, commented JSON) makes nothing replaceable."""
    try:
        value = json.loads((target / MANIFEST).read_bytes())
    except OSError:
        return False
    except (ValueError, RecursionError):
        value = None
    if (
        isinstance(value, dict)
        and set(value) == MANIFEST_KEYS
        and value["package"] == target.name
        and isinstance(value["files"], dict)
        and isinstance(value["revisions"], dict)
    ):
        return True
    return (target / "py.typed").is_file() and any(
        (child / "protocol.py").is_file()
        for child in target.iterdir()
        if re.fullmatch(r"v\d{4}_\d{2}_\d{2}", child.name)
    )


def package_dir_name(version: str) -> str:
    return "v" + version.replace("-", "_")


# what a generated package, its runtime or the generator import (the two distributions' direct
# dependencies, their extras' and what those import first): one of that name would hide it
SHADOWED = frozenset(
    {
        "pydantic",
        "pydantic_core",
        "typing_extensions",
        "orjson",
        "httpx",
        "httpcore",
        "h11",
        "anyio",
        "uvicorn",
        "httptools",
        "uvloop",
        "authlib",
        "joserfc",
        "redis",
        "mcp",
        "mcp_schema_codegen",
        "datamodel_code_generator",
        "jinja2",
        "click",
        "jsonschema",
        "tomlkit",
        "ruff",
    }
)


def shadows(name: str, *, runtime: bool = False) -> bool:
    """A module named ``name`` (dotted: its top level) would hide one the generated code or Python
    needs: the standard library's, a dependency's, and with ``runtime`` the runtime distribution's."""
    top = name.split(".")[0]
    return top in sys.stdlib_module_names or top in SHADOWED or (runtime and top == "mcpgen")


def check_package_name(package: str) -> None:
    if not package.isidentifier() or package.startswith("_") or keyword.iskeyword(package):
        raise GeneratorError(f"--package {package!r} is not a valid Python package name")
    if shadows(package):
        raise GeneratorError(
            f"--package {package!r} would shadow the module of that name", hint="name it for your project: acme_mcp"
        )


def build_revision(
    lock: Lock,
    version: str,
    overlay: Overlay,
    renderer: Renderer,
    target: Target,
    cache: ModelCache | None = None,
    rendered: tuple[RevisionCache, dict[str, str]] | None = None,
) -> Revision:
    """One revision's files. With ``rendered`` (the cache and the revision's manifest entry), a
    rendering cached for the same inputs (the entry, the schema's bytes, the target) is taken
    instead of rendering again."""
    analysed = analyze_revision(lock, version, overlay)
    protocol = analysed.protocol
    key = ""
    if rendered is not None:
        revisions, entry = rendered
        key = RevisionCache.key(
            {
                **entry,
                "version": version,
                "locked": repr(lock.revisions[version]),
                "schema bytes": sha256_hex(lock.schema_path(version).read_bytes()),
                "target": repr(target),
            }
        )
        files = revisions.get(key)
        if files is not None:
            return Revision(analysed.schema, protocol, files)
    base_class = f"{target.runtime}.wire_model.WireModel"
    models = generate_models(
        analysed.document, version=version, base_class=base_class, cache=cache, schema=analysed.schema.document
    )
    files = {
        "__init__.py": renderer.version_init(protocol, target),
        **renderer.model_modules(protocol, target, models),
        **renderer.result_modules(protocol, target),
        "protocol.py": renderer.protocol_module(protocol, target),
        "codec.py": renderer.codec_module(protocol, target),
        "server.py": renderer.server_module(protocol, target),
        "client.py": renderer.client_module(protocol, target, models),
    }
    if rendered is not None:
        rendered[0].put(key, files)
    return Revision(analysed.schema, protocol, files)


def registry_protocols(
    lock: Lock, overlay: Overlay, analysed: dict[str, Protocol], versions: list[str]
) -> dict[str, Protocol]:
    """The protocols of ``versions`` whose facts the package's version registry records (batches,
    log levels).

    Revisions not generated in this run (kept from the previous tree) are analysed too when
    their schema is synced; one that is not synced is left out (no batches, no log levels).
    """
    found = {}
    for version in versions:
        protocol = analysed.get(version)
        if protocol is None:
            if not lock.schema_path(version).exists():
                continue
            protocol = analyze_revision(lock, version, overlay).protocol
        found[version] = protocol
    return found


def validate(options: Options) -> Lock:
    """Check what can be checked before any work: the package name, the revisions, the templates."""
    check_package_name(options.package)
    lock = load_lock(options.schema_dir)
    for version in options.versions:
        lock.revision(version)
    if options.templates is not None and not options.templates.is_dir():
        raise GeneratorError(
            f"template directory {options.templates} does not exist (--templates or [tool.mcp-codegen] templates)"
        )
    return lock


def render_package(
    options: Options, dest: Path, keep_from: Path | None = None, only: list[str] | None = None
) -> list[Protocol]:
    """Write the formatted package, with its manifest, into the new directory ``dest``.

    Revisions not asked for are copied from ``keep_from`` (a previous tree) with their
    manifest entries, so a partial regeneration keeps the rest of the package. ``only``
    overrides the revisions asked for, and may name none (``check`` rebuilds just the
    revisions whose files differ; the package's own files are always rendered).
    """
    lock = validate(options)
    overlay = overlay_for(options.schema_dir)
    versions = (options.versions or list(lock.revisions)) if only is None else only
    previous = read_manifest(keep_from) if keep_from else None
    previous_entries = previous.get("revisions", {}) if previous else {}
    kept: list[str] = []
    if keep_from is not None and options.keep_others and isinstance(previous_entries, dict):
        recorded = previous.get("files") if previous else None
        on_disk = file_hashes(keep_from)  # the package's: a file named _manifest.json in a revision counts
        for version in lock.revisions:
            if version in versions or version not in previous_entries:
                continue
            if (keep_from / package_dir_name(version)).is_dir() and as_generated(
                on_disk, package_dir_name(version), recorded
            ):
                kept.append(version)
            else:  # edited or deleted by hand since: written anew, as an asked revision is
                versions = [*versions, version]
    renderer = Renderer(templates_dir(), options.templates)
    inputs = Inputs.current(options.schema_dir, templates_dir(), options.templates, options.layout)
    target = options.target
    cache = ModelCache.default() if options.cache else None
    revision_cache = RevisionCache.default() if options.cache else None
    entries = {v: inputs.revision_entry(lock, v) for v in versions}
    revisions = [
        build_revision(
            lock, v, overlay, renderer, target, cache, (revision_cache, entries[v]) if revision_cache else None
        )
        for v in versions
    ]
    crash_point("models")

    dest.mkdir()
    for version in kept:
        assert keep_from is not None and isinstance(previous_entries, dict)
        name = package_dir_name(version)
        copy_contents(keep_from / name, dest / name)
        entries[version] = previous_entries[version]
    for revision in revisions:
        vdir = dest / package_dir_name(revision.protocol.version)
        vdir.mkdir()
        for name, text in revision.files.items():
            (vdir / name).parent.mkdir(exist_ok=True)
            (vdir / name).write_text(text, encoding="utf-8")
    if options.runtime_in_output:
        for rel, text in renderer.runtime_files().items():
            path = dest / RUNTIME / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    present = sorted(entries)
    facts = registry_protocols(lock, overlay, {r.protocol.version: r.protocol for r in revisions}, present)
    (dest / "__init__.py").write_text(
        renderer.package_init(
            {v: lock.revisions[v].era for v in present},
            frozenset(v for v, protocol in facts.items() if protocol.batching),
            overlay,
            target,
            log_levels={v: protocol.log_levels for v, protocol in facts.items()},
            capabilities={v: protocol.server_capabilities for v, protocol in facts.items()},
            filters={v: protocol.subscription_filter for v, protocol in facts.items()},
        ),
        encoding="utf-8",
    )
    if options.current_modules:
        latest = present[-1]
        built = {r.protocol.version: r.protocol for r in revisions}
        protocol = built.get(latest) or analyze_revision(lock, latest, overlay).protocol
        for module, text in renderer.current_modules(protocol, target).items():
            (dest / f"{module}.py").write_text(text, encoding="utf-8")
    (dest / "py.typed").write_text("", encoding="utf-8")
    crash_point("staged")
    format_tree(dest, options.package, FormatCache.default() if options.cache else None)
    crash_point("formatted")
    write_manifest(dest, options.package, entries)
    crash_point("manifest")
    return [r.protocol for r in revisions]


def copy_contents(src: Path, dst: Path) -> None:
    """The files of ``src`` (no ``__pycache__``) under ``dst``, their bytes only: the modes of a
    tree the user made read-only made the staged copy unwritable, and a failed run's staging
    directory one nothing could remove (one more left behind by each run)."""
    dst.mkdir()
    for path in sorted(src.rglob("*")):
        if "__pycache__" in path.parts or path.is_symlink():
            continue
        target = dst / path.relative_to(src)
        if path.is_dir():
            target.mkdir(exist_ok=True)
        elif path.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def as_generated(on_disk: dict[str, str], name: str, recorded: object) -> bool:
    """The package's files under ``name/`` (``on_disk``: ``file_hashes`` of the package) are exactly
    those the manifest ``recorded`` for it (none edited, added or removed since it was written)."""
    if not isinstance(recorded, dict):
        return False
    prefix = name + "/"
    wanted = {path: digest for path, digest in recorded.items() if isinstance(path, str) and path.startswith(prefix)}
    found = {path: digest for path, digest in on_disk.items() if path.startswith(prefix)}
    return bool(wanted) and found == wanted


def generate(options: Options, swapped: Callable[[], None] | None = None) -> list[Protocol]:
    """Generate the package for the chosen revisions and swap it in atomically; ``swapped`` runs
    right after the swap, with signals held until it returns (a caller that undoes the swap on a
    later failure marks it there: ``restored_on_failure``), and a failure in it fails the run."""
    lock = validate(options)  # a user error leaves the disk as it was
    out = options.out
    target = out / options.package
    check_replaceable(target)
    check_kept_layout(options, target, lock)
    created = not out.exists()
    with exclusive(out):
        try:
            clean_stale(out)
            stage_root = staging_dir(out)
            try:
                staged = stage_root / options.package
                protocols = render_package(options, staged, keep_from=target if target.is_dir() else None)
                commit_point()  # an interrupt whose raise was lost stops it here (interrupts.py)
                with signals_deferred():
                    swap_in(staged, target)
                    if swapped is not None:
                        swapped()
            finally:
                shutil.rmtree(stage_root, ignore_errors=True)
        except BaseException:
            if created:  # this run made it: removed while locked (a run waiting locks anew: exclusive)
                remove_if_only_the_lock(out)
            raise
    return protocols
