"""``mcp-codegen scaffold`` and ``mcp-codegen regen``: a server project around a generated package.

A scaffolded project holds two kinds of files. The generated package ``<module>_mcp/`` is
generator-owned: the revision it serves (generated against the installed runtime,
``mcpgen._runtime``, or with its own copy of the runtime under ``--vendor-runtime``), its
manifest (``_manifest.json``, every file's sha256) and the current-revision modules
``<module>_mcp.models``/``.server``/``.client`` the user's code imports; so is the app's surface
module ``<module>/server_surface.py`` (the tools' schemas, built from the app's typed functions,
its own digest in its first line). Everything else (the server module, ``__main__``, the test,
pyproject, README) is the user's: ``scaffold`` writes it once, ``regen`` never touches it.

``regen`` is ``generate`` driven by the project's ``[tool.mcp-codegen]``: it refuses when a
generator-owned file was edited by hand, replaces the package atomically (so the user's
imports, which name no revision, keep working when ``--version`` moves the project to another
revision), records the new revision in ``[tool.mcp-codegen]`` and reports how the handlers
changed, computed from the two revisions' IR.
"""

from __future__ import annotations

import contextlib
import keyword
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tomlkit

from mcp_schema_codegen.backend import views
from mcp_schema_codegen.backend.render import Renderer
from mcp_schema_codegen.commands.app_surface import SurfaceReport, parse_app, write_surface
from mcp_schema_codegen.commands.check import file_reasons
from mcp_schema_codegen.commands.config import Config, load_config
from mcp_schema_codegen.commands.diff import (
    DefinitionChange,
    FieldChange,
    definition_text,
    diff_sides,
    field_text,
    reached,
    side_from_revision,
)
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import Lock, atomic_write, load_lock
from mcp_schema_codegen.interrupts import commit_point
from mcp_schema_codegen.ir.analyze import Overlay, analyze_revision, overlay_for
from mcp_schema_codegen.output.format import ruff_binary, ruff_failure
from mcp_schema_codegen.output.manifest import file_hashes, read_manifest
from mcp_schema_codegen.output.tree import exclusive, restored_on_failure, staged_directory
from mcp_schema_codegen.paths import bundled_schema_dir, default_schema_dir, templates_dir
from mcp_schema_codegen.pipeline import Options, generate, layout_of, render_package, shadows

SCAFFOLD = "scaffold"
REQUIRED_HANDLERS = ("list_tools", "call_tool")  # the scaffold's example tool needs both
# Import names a project's package must not take beyond what the generated code and Python import
# (``pipeline.shadows``): its tests' and its dev extra's (pytest, ruff, mypy) and its build backend's.
RESERVED_MODULES = frozenset({"tests", "test", "pytest", "_pytest", "pluggy", "mypy", "hatchling"})
# A distribution name (PEP 508): letters, digits and ._- , starting and ending with a letter or digit.
_PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\Z")
USER_FILES = {
    "pyproject.toml": "pyproject.toml",
    "README.md": "README.md",
    ".gitignore": "gitignore",
    "{module}/__init__.py": "__init__.py",
    "{module}/__main__.py": "__main__.py",
    "{module}/server.py": "server.py",
    "tests/test_server.py": "test_server.py",
}
# with --auth: the settings of the protected HTTP server, and its test
AUTH_FILES = {
    "{module}/auth.py": "auth.py",
    "tests/test_auth.py": "test_auth.py",
}


def module_name(name: str) -> str:
    """The import package of project ``name`` (``my-server`` -> ``my_server``); refuses names that cannot be one."""
    if not _PROJECT_NAME.match(name):
        suggestion = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._").lower() or "my-server"
        raise GeneratorError(
            f"project name {name!r} is not a valid distribution name (letters, digits, '.', '_', '-')",
            hint=f"for example {suggestion!r}",
        )
    module = re.sub(r"[-.]+", "_", name).lower()
    if not module.isidentifier() or module[0].isdigit():
        raise GeneratorError(f"project name {name!r} does not make a Python package name (it starts with a digit)")
    if keyword.iskeyword(module) or keyword.issoftkeyword(module):
        raise GeneratorError(f"project name {name!r} makes the package {module!r}, a Python keyword")
    for candidate in (module, f"{module}_mcp"):
        if shadows(candidate, runtime=True) or candidate in RESERVED_MODULES:
            raise GeneratorError(
                f"project name {name!r} makes the package {candidate!r}, which would shadow the module of that name",
                hint=f"for example {name + '-server'!r}",
            )
    return module


def _ruff(root: Path, *args: str) -> None:
    command = [ruff_binary(), *args, "--no-cache"]  # the binary: no Python started to find it
    done = subprocess.run(command, capture_output=True, text=True, cwd=root, check=False)
    if done.returncode != 0:  # findings on stdout, a bad setting on stderr, a parse error hidden by --quiet
        files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
        raise GeneratorError(ruff_failure(f"ruff {' '.join(args)}", done, files, root, "the scaffold"))


STALE_STAGE_SECONDS = 3600.0  # a scaffold takes seconds: a staging directory this old was killed (SIGKILL)


def remove_stale_stages(directory: Path, name: str) -> None:
    """Remove what a scaffold of ``name`` killed outright left in ``directory``: its hidden
    staging directory (``.NAME-`` and ``mkdtemp``'s 8 characters), untouched for an hour. A
    younger one stays, as does anything else: another scaffold of the same name may be at work."""
    stale = re.compile(re.escape(f".{name}-") + r"[a-z0-9_]{8}\Z")
    now = time.time()
    for entry in directory.iterdir():
        if stale.match(entry.name) and entry.is_dir() and not entry.is_symlink():
            with contextlib.suppress(OSError):
                if now - entry.stat().st_mtime > STALE_STAGE_SECONDS:
                    shutil.rmtree(entry, ignore_errors=True)


def scaffold(
    name: str,
    directory: Path,
    version: str | None = None,
    schema_dir: Path | None = None,
    vendor_runtime: bool = False,
    auth: bool = False,
) -> Path:
    """Write a runnable server project ``name`` into ``directory / name``; returns the project root.

    With ``auth`` its HTTP server is an OAuth 2.1 protected resource: ``<module>/auth.py`` reads
    the settings (issuer, resource URL, JWKS URL, scopes) from the environment, and
    ``tests/test_auth.py`` checks tokens against a key of its own.

    The project is built in a staging directory beside it and renamed into place at the end,
    so a failure leaves nothing behind.
    """
    module = module_name(name)
    package = f"{module}_mcp"
    root = directory / name
    if root.is_file() or (root.is_dir() and any(root.iterdir())):
        raise GeneratorError(f"{root} exists and is not empty")
    schema_dir = schema_dir or default_schema_dir()
    lock = load_lock(schema_dir)
    version = version or max(lock.revisions)
    protocol = analyze_revision(lock, version, overlay_for(schema_dir)).protocol
    handlers = views.handler_views(protocol)
    missing = [h for h in REQUIRED_HANDLERS if h not in {str(v.stub_name) for v in handlers}]
    if missing:
        raise GeneratorError(f"MCP {version} has no {missing[0]} handler to scaffold")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        remove_stale_stages(directory, name)
        stage = staged_directory(f".{name}-", directory)
    except OSError as exc:
        raise GeneratorError(f"cannot create the project in {directory}: {exc.strerror or exc}") from None
    try:
        options = Options(
            schema_dir=schema_dir,
            out=stage,
            package=package,
            versions=project_versions(lock, version, vendor_runtime),
            vendor_runtime=vendor_runtime,
            current_modules=True,
        )
        render_package(options, stage / package)
        # recorded unless it is the generator's own: an implicit ./schema (a revision adopted there)
        # is one regen and check would not find from the project's directory
        bundled = schema_dir.resolve() == bundled_schema_dir().resolve()
        record_dir = None if bundled else os.path.relpath(schema_dir.resolve(), root.resolve())
        context = views.scaffold_context(
            project=name,
            module=module,
            package=package,
            protocol=protocol,
            handlers=handlers,
            vendor_runtime=vendor_runtime,
            schema_dir=record_dir,
            versions=project_versions(lock, version, vendor_runtime),
            auth=auth,
        )
        renderer = Renderer(templates_dir())
        for rel, template in (USER_FILES | AUTH_FILES if auth else USER_FILES).items():
            path = stage / rel.format(module=module)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(renderer.render(f"{SCAFFOLD}/{template}", **context), encoding="utf-8")
        _ruff(stage, "format", "--quiet", ".")
        _ruff(stage, "check", "--fix", "--quiet", ".")
        _ruff(stage, "format", "--quiet", ".")
        write_surface(stage, f"{module}.server:app")  # the example tool's schemas, as regen writes them
        commit_point()
        if root.is_dir():
            root.rmdir()  # empty: checked above
        stage.rename(root)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return root


def project_versions(lock: Lock, version: str, vendored: bool) -> list[str]:
    """The revisions a project generates to serve ``version``.

    With the runtime from ``mcpgen``, only ``version``: the package's registry chains to
    ``mcpgen.REGISTRY`` for the others. A vendored runtime has no registry to chain to, so the
    project generates every locked revision up to ``version`` (legacy clients included).
    """
    return [v for v in sorted(lock.revisions) if v <= version] if vendored else [version]


def served_versions(lock: Lock, versions: Sequence[str], config: Config, vendored: bool) -> list[str]:
    """The revisions a project's package holds: ``versions`` as [tool.mcp-codegen] lists them,
    and, when its runtime is vendored (by a flag or its manifest) though the file does not say so,
    every locked revision up to its latest as well, as a vendored scaffold has (no registry to chain
    to: a 2025-11-25 ``initialize`` got -32601)."""
    if not vendored or config.vendor_runtime or not versions:
        return list(versions)
    return sorted(set(versions) | set(project_versions(lock, max(versions), True)))


# -- regen ----------------------------------------------------------------------------------------


@dataclass
class HandlerChange:
    stub: str
    what: str  # "added" | "removed" | "changed"
    old: str | None = None  # signature text, e.g. "(params: m.X) -> m.Y"
    new: str | None = None


@dataclass
class ModelChange:
    """Changes of one model that a handler's params or result reach: its fields, and its own
    keywords (an enum value or a union branch added or removed, which an exhaustive match on it
    must follow; any other keyword as JSON)."""

    definition: str
    handlers: list[str]  # the handlers whose params or result use it, directly or nested
    fields: list[FieldChange]
    changes: list[DefinitionChange] = field(default_factory=list)


@dataclass
class UpgradeReport:
    """How the handlers a server overrides changed between two revisions (from their IR)."""

    old: str
    new: str
    handlers: list[HandlerChange]
    models: list[ModelChange]
    methods_removed: list[str]  # wire methods of the old revision that the new one lacks
    methods_added: list[str]
    older_clients: list[str] = field(default_factory=list)  # what the server now refuses of old's clients

    def lines(self) -> list[str]:
        if self.old == self.new:
            return []
        # revisions are ISO dates: in order as strings (the lock checks their form)
        out = [f"{'downgrade' if self.new < self.old else 'upgrade'} {self.old} -> {self.new}:"]
        for change in self.handlers:
            if change.what == "added":
                out.append(f"  handler added: {change.stub}{change.new}")
            elif change.what == "removed":
                out.append(f"  handler removed: {change.stub}{change.old} (your override is no longer called)")
            else:
                out.append(f"  handler changed: {change.stub}{change.old} -> {change.stub}{change.new}")
        # a field change many models share (every result's _meta between eras) is one line
        said = {model.definition: [f"    {field_text(f, f.field)}" for f in model.fields] for model in self.models}
        sharing: dict[str, list[str]] = {}
        for model in self.models:
            for text in said[model.definition]:
                sharing.setdefault(text, []).append(model.definition)
        shared = {text: names for text, names in sharing.items() if len(names) >= SHARED_AT}
        for text, names in shared.items():
            out.append(f"  {text.strip()}, in {len(names)} models: {', '.join(names)}")
        for model in self.models:
            out += [f"  {model.definition} ({', '.join(model.handlers)}): {definition_text(c)}" for c in model.changes]
            own = [text for text in said[model.definition] if text not in shared]
            if own:
                out.append(f"  fields of {model.definition} ({', '.join(model.handlers)}):")
                out += own
        out += [f"  method removed: {m}" for m in self.methods_removed]
        out += [f"  method added: {m}" for m in self.methods_added]
        out += [f"  older clients: {note}" for note in self.older_clients]
        if len(out) == 1:
            out.append("  no changes to the handlers or the models they use")
        return out


SHARED_AT = 3  # models with the same field change, from which it is said once


def _signature(handler: views.HandlerView) -> str:
    return f"(params: {handler.params}) -> {handler.result}"


def upgrade_report(lock: Lock, overlay: Overlay, old: str, new: str) -> UpgradeReport:
    before = {str(h.stub_name): h for h in views.handler_views(analyze_revision(lock, old, overlay).protocol)}
    after = {str(h.stub_name): h for h in views.handler_views(analyze_revision(lock, new, overlay).protocol)}
    a, b = side_from_revision(lock, old, overlay), side_from_revision(lock, new, overlay)
    difference = diff_sides(a, b)
    changes = []
    for stub in sorted(set(before) | set(after)):
        if stub not in before:
            changes.append(HandlerChange(stub, "added", new=_signature(after[stub])))
        elif stub not in after:
            changes.append(HandlerChange(stub, "removed", old=_signature(before[stub])))
        elif _signature(before[stub]) != _signature(after[stub]):
            changes.append(HandlerChange(stub, "changed", _signature(before[stub]), _signature(after[stub])))
    users: dict[str, set[str]] = {}  # definition -> handlers reaching it (in either revision)
    for handlers, side in ((before, a), (after, b)):
        for stub, handler in handlers.items():
            roots = {str(t) for t in (handler.params_type, *handler.result_types) if t}
            for name in reached(side.defs, roots, side.ref_prefix):
                users.setdefault(name, set()).add(stub)
    grouped: dict[str, list[FieldChange]] = {}
    for change in difference.fields:
        grouped.setdefault(change.definition.split("->")[-1], []).append(change)
    own: dict[str, list[DefinitionChange]] = {}
    for kept in difference.definitions_changed:
        own.setdefault(kept.definition.split("->")[-1], []).append(kept)
    models = [
        ModelChange(name, sorted(users[name]), grouped.get(name, []), own.get(name, []))
        for name in sorted(set(grouped) | set(own))
        if name in users
    ]
    methods_old = {m.name for m in a.protocol.methods}
    methods_new = {m.name for m in b.protocol.methods}
    return UpgradeReport(
        old,
        new,
        changes,
        models,
        sorted(methods_old - methods_new),
        sorted(methods_new - methods_old),
        difference.breaks_older_clients,  # (none for a downgrade: older_clients)
    )


@dataclass
class RegenResult:
    written: list[str]
    removed: list[str]
    report: UpgradeReport | None
    version: str
    surface: SurfaceReport | None = None

    def lines(self) -> list[str]:
        out = []
        if self.version:
            out.append(
                f"regenerated for MCP {self.version}: {len(self.written)} file(s) written, {len(self.removed)} removed"
            )
        if self.surface is not None:  # what an App's author acts on, before the handlers' report
            what = "written" if self.surface.written else "up to date"
            out.append(f"surface {self.surface.path}: {what}")
            out += [f"  {change}" for change in self.surface.changes]
            out += [f"  note: {note}" for note in self.surface.notes]
        out += self.report.lines() if self.report else []
        return out


def project_config(root: Path, command: str = "regen", *, look_above: bool = False) -> Config:
    """The [tool.mcp-codegen] of the project in ``root``, which must have one (``command``: the
    command the hints name); ``look_above``: a ``root`` inside a project's package says so."""
    if not (root / "pyproject.toml").is_file():
        if look_above and (inside := not_at_root(root, command)):
            raise inside
        raise GeneratorError(
            f"{root} has no pyproject.toml",
            hint=f"run `mcp-codegen {command}` in the project's directory, or pass --project",
        )
    config = load_config(root)
    if not config.package_configured and config.app is None:
        if look_above and (inside := not_at_root(root, command)):
            raise inside
        raise GeneratorError(
            f"{root / 'pyproject.toml'} has no [tool.mcp-codegen] with versions, out and package, or an app",
            hint=f"run `mcp-codegen {command}` in a project made by `mcp-codegen scaffold`",
        )
    return config


def not_at_root(directory: Path, command: str) -> GeneratorError | None:
    """The error for ``command`` run in ``directory`` inside a project instead of at its root
    (None when no project encloses it)."""
    above = enclosing_project(directory)
    if above is None:
        return None
    return GeneratorError(
        f"{directory.absolute()} is inside the project {above}, not at its root",
        hint=f"run `mcp-codegen {command}` in {above}, or pass --project {shlex.quote(str(above))}",
    )


def enclosing_project(directory: Path) -> Path | None:
    """The nearest directory above ``directory`` whose pyproject.toml has a [tool.mcp-codegen]
    (a command run inside a project's package instead of at its root)."""
    for parent in directory.resolve().parents:
        if (parent / "pyproject.toml").is_file():
            try:
                config = load_config(parent)
            except GeneratorError:
                return None
            return parent if config.package_configured or config.app is not None else None
    return None


def regen(root: Path, version: str | None = None, schema_dir: Path | None = None, force: bool = False) -> RegenResult:
    """Regenerate the project's generated package (at ``version``, or the one it has), then the
    surface module of its app when it names one."""
    config = project_config(root, look_above=True)
    if config.app is not None:
        parse_app(config.app)  # a malformed app fails before anything is touched
    if not config.package_configured:
        if version is not None:
            raise GeneratorError(f"{root / 'pyproject.toml'} names no generated package to move to MCP {version}")
        assert config.app is not None
        return RegenResult([], [], None, "", write_surface(root, config.app, force=force))
    assert config.out is not None and config.package is not None
    # The output directory's lock is held throughout, and the project read again under it: another
    # regen can neither swap its package in while this one describes the app (that failed, naming
    # a revision module not found) nor have its versions overwritten by this one's older reading
    with exclusive(config.out):
        config = project_config(root)
        if not config.package_configured or config.out is None or config.package is None:
            raise GeneratorError(f"{root / 'pyproject.toml'} changed while regen waited for {config.out}")
        # the package and pyproject.toml's versions move together: a failure or an interrupt after
        # the swap puts both back; so does an app that cannot be described with its new package in place
        with restored_on_failure(config.out / config.package, (root / "pyproject.toml",)) as undo:
            result = regen_package(root, config, version, schema_dir, force, swapped=undo.mark)
            if config.app is not None:
                result.surface = write_surface(root, config.app, force=force)
    return result


def regen_package(
    root: Path,
    config: Config,
    version: str | None,
    schema_dir: Path | None,
    force: bool,
    swapped: Callable[[], None] | None = None,
) -> RegenResult:
    assert config.package is not None and config.out is not None and config.versions
    schema_dir = schema_dir or config.schema_dir or default_schema_dir(root)
    lock = load_lock(schema_dir)
    overlay = overlay_for(schema_dir)
    old_versions = list(config.versions)
    # what the file does not say about the layout, the package's manifest does (as for generate)
    vendored, current_modules = layout_of(config.out / config.package) or (False, False)
    if config.vendor_runtime_set:
        vendored = config.vendor_runtime
    if config.current_modules_set:
        current_modules = config.current_modules
    if version:
        versions = project_versions(lock, version, vendored)
    else:
        versions = served_versions(lock, old_versions, config, vendored)
    for v in versions:
        lock.revision(v)  # an unknown revision fails before anything is touched
    options = Options(
        schema_dir=schema_dir,
        out=config.out,
        package=config.package,
        versions=versions,
        templates=config.templates,
        vendor_runtime=vendored,
        current_modules=current_modules,
        keep_others=False,
    )
    package_dir = options.out / options.package
    edited = [r for r in file_reasons(package_dir, options.package) if not r.endswith(": missing")]
    if edited and not force:
        shown = "; ".join(edited[:3]) + (f"; and {len(edited) - 3} more" if len(edited) > 3 else "")
        raise GeneratorError(
            f"refusing to regenerate: {shown}",
            hint="move your changes into your own modules, or pass --force to discard them",
        )
    old_files = file_hashes(package_dir) if package_dir.is_dir() else {}
    report = None
    old_current = max(old_versions)
    if version and old_current in lock.revisions:
        report = upgrade_report(lock, overlay, old_current, version)

    def committed() -> None:  # right after the swap, signals held: the package and its versions as one step
        if swapped is not None:  # the new package is in: from here on a failure puts the old one back
            swapped()
        if versions != old_versions:
            set_versions(root / "pyproject.toml", versions)
            if swapped is not None:
                swapped()  # and pyproject.toml as written

    generate(options, swapped=committed)
    new_manifest = read_manifest(package_dir) or {}
    new_files = new_manifest.get("files") if isinstance(new_manifest.get("files"), dict) else {}
    assert isinstance(new_files, dict)
    written = sorted(n for n, digest in new_files.items() if old_files.get(n) != digest)
    removed = sorted(set(old_files) - set(new_files))
    return RegenResult(written, removed, report, ", ".join(versions))


def set_versions(pyproject: Path, versions: list[str]) -> None:
    """Record ``versions`` in ``[tool.mcp-codegen]``, keeping the rest of the file as it is."""
    document = tomlkit.parse(pyproject.read_text(encoding="utf-8"))
    table = document["tool"]["mcp-codegen"]
    table["versions"] = versions
    atomic_write(pyproject, tomlkit.dumps(document).encode())
