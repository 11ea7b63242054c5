"""The ``mcp-codegen`` command line (click).

Exit status: 0 success; 1 a check or diff found differences; 2 a user error (bad arguments, a
missing or mismatched schema, a bad schema, an unwritable output), printed as one line on
stderr, never a traceback.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import json
import math
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem, get_completion_class

from mcp_schema_codegen import __version__, interrupts
from mcp_schema_codegen.errors import GeneratorError

EXIT_OK, EXIT_DIFFERENT, EXIT_USER_ERROR = 0, 1, 2
PROG = "mcp-codegen"
COMPLETE_VAR = "_MCP_CODEGEN_COMPLETE"
F = TypeVar("F", bound=Callable[..., Any])


# -- shared options --------------------------------------------------------------------------


def _remember_schema_dir(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is not None:  # given after the subcommand: it wins over the one before it
        ctx.find_root().meta["schema_dir"] = value


def schema_dir_option(f: F) -> F:
    """``--schema-dir``, accepted before or after the subcommand."""
    option = click.option(
        "--schema-dir",
        type=click.Path(file_okay=False, path_type=Path),
        expose_value=False,
        is_eager=True,
        callback=_remember_schema_dir,
        help="Directory with lock.json and <version>/schema.json (default: ./schema, else the bundled schemas).",
    )
    return option(f)


def _complete_versions(ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Shell completion for revisions: those in the lock the command would use."""
    try:
        lock = _lock(ctx)
    except GeneratorError:
        return []
    return [CompletionItem(v, help=r.era) for v, r in lock.revisions.items() if v.startswith(incomplete)]


def version_option(*, multiple: bool, required: bool = False, help: str) -> Callable[[F], F]:
    return click.option(
        "--version",
        "versions" if multiple else "version",
        multiple=multiple,
        required=required,
        metavar="V",
        shell_complete=_complete_versions,
        help=help,
    )


def _schema_dir(ctx: click.Context | None = None, project: Path | None = None) -> Path:
    """--schema-dir, else the project's (``project``, else the working directory): its
    [tool.mcp-codegen] schema-dir, else its ./schema with a lock, else the bundled schemas."""
    from mcp_schema_codegen.commands.config import load_config
    from mcp_schema_codegen.paths import default_schema_dir

    given = (ctx or click.get_current_context()).find_root().meta.get("schema_dir")
    if given is not None:
        return Path(given)
    base = project if project is not None else Path.cwd()
    return load_config(base).schema_dir or default_schema_dir(base)


def _lock(ctx: click.Context | None = None) -> Any:
    from mcp_schema_codegen.frontend.lock import load_lock

    return load_lock(_schema_dir(ctx))


def _options(
    versions: Sequence[str],
    all_: bool,
    out: Path | None,
    package: str | None,
    templates: Path | None,
    vendor_runtime: bool | None,
    need_versions: bool,
    cache: bool = True,
    project: Path | None = None,
) -> Any:
    """CLI flags over [tool.mcp-codegen] (of ``project``, else the working directory) over defaults."""
    from mcp_schema_codegen.commands.config import load_config
    from mcp_schema_codegen.pipeline import Options, layout_of

    if all_ and versions:
        raise click.UsageError("--all and --version exclude each other")
    config = load_config(project if project is not None else Path.cwd())
    chosen: list[str] | None = [] if all_ else list(dict.fromkeys(versions)) or config.versions
    if chosen is None:
        if need_versions:
            raise click.UsageError(
                "say which revisions: --version V (repeatable), --all, or versions in [tool.mcp-codegen]"
            )
        chosen = []
    out = out or config.out or Path("generated")
    package = package or config.package or "mcpgen"
    # what neither the command line nor the file says, the tree's own layout does
    vendored, current_modules = layout_of(out / package) or (False, False)
    if vendor_runtime is None:
        vendor_runtime = config.vendor_runtime if config.vendor_runtime_set else vendored
    if config.current_modules_set:
        current_modules = config.current_modules
    if vendor_runtime and not versions and not all_ and config.package_configured:
        if out == config.out and package == config.package:  # the project's package: what it serves
            from mcp_schema_codegen.commands.scaffold import served_versions
            from mcp_schema_codegen.frontend.lock import load_lock

            chosen = served_versions(load_lock(_schema_dir(project=project)), chosen, config, vendor_runtime)
    return Options(
        schema_dir=_schema_dir(project=project),
        out=out,
        package=package,
        versions=chosen,
        templates=templates or config.templates,
        vendor_runtime=vendor_runtime,
        current_modules=current_modules,
        cache=cache,
    )


def edited_by_hand(reasons: list[str]) -> bool:
    """A check's reasons name a file edited by hand, or a manifest it cannot read (which regen
    then refuses without --force)."""
    from mcp_schema_codegen.commands.check import NO_MANIFEST

    return any(reason.endswith((": edited by hand", NO_MANIFEST)) for reason in reasons)


def _regen_command(config: Any, force: bool) -> str:
    """``mcp-codegen regen`` for the project of ``config``, from the working directory."""
    elsewhere = config.root is not None and config.root.resolve() != Path.cwd().resolve()
    where = f" --project {shlex.quote(str(config.root))}" if elsewhere else ""
    return f"mcp-codegen regen{where}{' --force' if force else ''}"


def _regenerate(config: Any, options: Any, reasons: list[str]) -> str:
    """The command that brings a stale tree up to date: ``regen`` in a project (``--force`` when a
    file was edited by hand: regen refuses otherwise), else ``generate`` with what ``check`` was
    told (the revisions the tree holds, where it is, the templates and schemas it was given)."""
    from mcp_schema_codegen.output.manifest import read_manifest

    force = edited_by_hand(reasons)
    in_project = config.package_configured and options.package == config.package
    if in_project and options.out.resolve() == config.out.resolve():
        return f"`{_regen_command(config, force)}` to update it"
    manifest = read_manifest(options.out / options.package) if (options.out / options.package).is_dir() else None
    held = manifest.get("revisions") if manifest else None
    versions = options.versions or (sorted(held) if isinstance(held, dict) else [])
    given = click.get_current_context().find_root().meta.get("schema_dir")
    words = ["mcp-codegen", *(["--schema-dir", str(given)] if given else []), "generate"]
    words += [w for v in versions for w in ("--version", v)]
    words += ["--out", str(options.out), "--package", options.package]
    if options.templates is not None and options.templates != config.templates:
        words += ["--templates", str(options.templates)]
    if options.vendor_runtime:
        words.append("--vendor-runtime")
    return f"`{' '.join(shlex.quote(w) for w in words)}` to update it"


OUT = click.option(
    "--out", type=click.Path(path_type=Path), help="Output directory (default: generated, or [tool.mcp-codegen] out)."
)
PACKAGE = click.option("--package", metavar="NAME", help="Name of the generated package (default: mcpgen).")
TEMPLATES = click.option(
    "--templates",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Directory of templates overriding the built-ins by file name.",
)
NO_CACHE = click.option(
    "--no-cache",
    is_flag=True,
    help="Run datamodel-code-generator even if its output for this input is cached (or MCP_CODEGEN_NO_CACHE=1).",
)
VENDOR = click.option(
    "--vendor-runtime/--no-vendor-runtime",
    default=None,
    help="Copy the runtime into the package instead of importing it from the installed mcpgen.",
)


# -- the commands ------------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM while a command runs: a KeyboardInterrupt, so it unwinds everything
    (every ``finally`` and ``except BaseException`` cleans up: staging directories, the restored
    package) and leaves an event loop as one does (asyncio keeps any other exception on a task)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Stopped(BaseException):
    """An ``Interrupted`` on its way out of click, which would print a blank line for a
    KeyboardInterrupt before its own Abort: reported in one line by ``main``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class Commands(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise Stopped(getattr(exc, "signum", signal.SIGINT)) from None  # (Interrupted, tree.Signalled)


@click.group(
    cls=Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog="Exit status: 0 ok, 1 differences found (check, diff), 2 user error (one line on stderr).",
)
@click.version_option(__version__, "--version", prog_name=PROG, message="%(prog)s %(version)s")
@schema_dir_option
def cli() -> None:
    """Generate typed Python for the Model Context Protocol from its JSON Schemas.

    The schemas of every locked revision ship with the tool; `schema sync --update-lock`
    adopts a new one.
    """


@cli.command()
@version_option(multiple=True, help="A revision from the lock (repeatable).")
@click.option("--all", "all_", is_flag=True, help="Every revision in the lock.")
@OUT
@PACKAGE
@TEMPLATES
@VENDOR
@NO_CACHE
@schema_dir_option
def generate(
    versions: tuple[str, ...],
    all_: bool,
    out: Path | None,
    package: str | None,
    templates: Path | None,
    vendor_runtime: bool | None,
    no_cache: bool,
) -> int:
    """Generate the package for one or more revisions, atomically.

    Each revision becomes a subpackage (models, method table, codec, typed client, server
    handler base); revisions not named are kept. A package other than mcpgen imports its
    runtime from the installed mcpgen unless --vendor-runtime. When [tool.mcp-codegen] names
    an app (app = "MODULE:ATTRIBUTE"), its surface module is generated too (a project may name
    only an app).

    \b
    Examples:
      mcp-codegen generate --all
      mcp-codegen generate --version 2026-07-28 --out src --package acme_mcp
    """
    from mcp_schema_codegen.commands.app_surface import parse_app, write_surface
    from mcp_schema_codegen.commands.config import load_config
    from mcp_schema_codegen.output.tree import restored_on_failure
    from mcp_schema_codegen.pipeline import generate as run

    config = load_config(Path.cwd())
    app = config.app if config.root is not None else None
    if app is not None:
        parse_app(app)  # a malformed app fails before anything is touched
    only_app = app is not None and not config.package_configured and not (versions or all_ or package or out)
    lines: list[str] = []
    with contextlib.ExitStack() as undo:
        if not only_app:
            options = _options(
                versions, all_, out, package, templates, vendor_runtime, need_versions=True, cache=not no_cache
            )
            restore = undo.enter_context(restored_on_failure(options.out / options.package)) if app else None
            # the app is described with the new package in place: if that fails, it goes back
            for p in run(options, swapped=restore.mark if restore is not None else None):
                lines.append(
                    f"{p.version} ({p.era}): {len(p.methods)} methods -> {options.out / options.package / p.package}"
                )
        if app is not None:
            assert config.root is not None  # an app is only read from a project's file
            report = write_surface(config.root, app)
            lines.append(f"surface {report.path}: {'written' if report.written else 'up to date'}")
            lines += [f"  {change}" for change in report.changes]
            lines += [f"  note: {note}" for note in report.notes]
    for line in lines:
        click.echo(line)
    return EXIT_OK


@cli.command()
@version_option(multiple=True, help="Only these revisions (default: those in the tree).")
@OUT
@PACKAGE
@TEMPLATES
@VENDOR
@click.option("--full", is_flag=True, help="Regenerate and compare instead of comparing hashes.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A project's directory (its [tool.mcp-codegen]; default: the working directory).",
)
@NO_CACHE
@schema_dir_option
def check(
    versions: tuple[str, ...],
    out: Path | None,
    package: str | None,
    templates: Path | None,
    vendor_runtime: bool | None,
    full: bool,
    project: Path | None,
    no_cache: bool,
) -> int:
    """Exit 1 with a diff if the generated tree is stale or hand-edited (2 if there is none).

    Compares the manifest with the present lock, schema bytes, patches, overlay, templates and
    toolchain, and every file's hash; when something differs (or with --full) it regenerates
    into a temporary directory and prints the unified diff. When [tool.mcp-codegen] names an
    app, its surface module is compared with the app's declarations too, and every change is
    printed classified breaking or compatible.

    \b
    Examples:
      mcp-codegen check
      mcp-codegen check --project services/weather
      mcp-codegen check --full --out src --package acme_mcp
    """
    from mcp_schema_codegen.commands.app_surface import check_surface
    from mcp_schema_codegen.commands.check import check as run
    from mcp_schema_codegen.commands.config import load_config
    from mcp_schema_codegen.commands.scaffold import not_at_root, project_config

    if project is not None:
        if out is not None or package is not None:
            raise click.UsageError("--project reads out and package from the project: give either, not both")
        config = project_config(project, "check")
    else:
        config = load_config(Path.cwd())
        if not (config.package_configured or config.app or out or package or Path("generated", "mcpgen").exists()):
            # nothing here to check: inside a project's package, the project is what was meant
            # (--out/--package there would check the tree and skip the app's surface)
            inside = not_at_root(Path.cwd(), "check")
            if inside is not None:
                raise inside
    status = EXIT_OK
    if config.app is None or config.package_configured or versions or out or package:
        options = _options(
            versions,
            False,
            out,
            package,
            templates,
            vendor_runtime,
            need_versions=False,
            cache=not no_cache,
            project=project,
        )
        report = run(options, full=full)
        if not report.clean:
            for line in report.diff:
                click.echo(line)
            for reason in report.reasons:
                click.echo(f"stale: {reason}", err=True)
            if report.regenerable:
                fix = _regenerate(config, options, report.reasons)
                click.echo(f"{PROG}: {options.out / options.package} is stale; run {fix}", err=True)
            else:  # generating would refuse the same schema bytes: the stale line above says what to do
                click.echo(
                    f"{PROG}: {options.out / options.package} cannot be checked: a schema does not match the lock",
                    err=True,
                )
            status = EXIT_DIFFERENT
    if config.app is not None and config.root is not None:
        surface = check_surface(config.root, config.app)
        for change in surface.changes:
            click.echo(str(change))
        for reason in surface.reasons:
            click.echo(f"stale: {reason}", err=True)
        if not surface.clean:
            breaking = sum(1 for c in surface.changes if c.breaking)
            fix = _regen_command(config, edited_by_hand(surface.reasons))
            if surface.changes:
                what = (
                    f"the surface of {config.app} changed ({breaking} breaking, "
                    f"{len(surface.changes) - breaking} compatible)"
                )
            else:  # the declarations match the module; the module's text is not what regen wrote
                what = f"the surface module of {config.app} is not as generated"
            click.echo(f"{PROG}: {what}; run `{fix}` to update {surface.path}", err=True)
            status = EXIT_DIFFERENT
    return status


@cli.command()
@click.argument("old", shell_complete=_complete_versions)
@click.argument("new", shell_complete=_complete_versions)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@schema_dir_option
def diff(old: str, new: str, as_json: bool) -> int:
    """Semantic differences between two revisions or schema files (exit 1 if any).

    Methods (added, removed, direction, params/result type), definitions (added, removed,
    renamed: found by structure) and fields (added, removed, type, constraints, required).

    \b
    Examples:
      mcp-codegen diff 2025-11-25 2026-07-28
      mcp-codegen diff 2026-07-28 path/to/new/schema.json --json
    """
    from mcp_schema_codegen.commands.diff import diff_sides, render_text, side_from_file, side_from_revision
    from mcp_schema_codegen.ir.analyze import overlay_for

    schema_dir = _schema_dir()
    overlay = overlay_for(schema_dir)
    lock = _lock()

    def side(spec: str) -> Any:
        if spec in lock.revisions:
            return side_from_revision(lock, spec, overlay)
        path = Path(spec)
        if path.exists():
            return side_from_file(path, overlay)
        raise GeneratorError(f"{spec!r} is neither a locked revision ({', '.join(lock.revisions)}) nor a file")

    result = diff_sides(side(old), side(new))
    click.echo(json.dumps(result.to_json(), indent=2) if as_json else render_text(result))
    return EXIT_DIFFERENT if result.changed else EXIT_OK


@cli.command()
@version_option(multiple=False, required=True, help="A revision from the lock.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@schema_dir_option
def methods(version: str, as_json: bool) -> int:
    """Print the method table of a revision.

    \b
    Examples:
      mcp-codegen methods --version 2026-07-28
      mcp-codegen methods --version 2025-11-25 --json
    """
    from mcp_schema_codegen.commands.diff import one_line
    from mcp_schema_codegen.ir.analyze import analyze_revision, overlay_for

    protocol = analyze_revision(_lock(), version, overlay_for(_schema_dir())).protocol
    if as_json:
        rows = [
            {
                "method": m.name,
                "kind": m.kind,
                "direction": m.direction,
                "definition": m.definition,
                "params": m.params_type,
                "params_required": m.params_required,
                "result": m.result_type,
                "stub": m.stub_name,
                "mrtr": m.mrtr,
                "cacheable": m.cacheable,
                "deprecated": m.deprecated,
                "embedded": m.embedded,
                "task_result": m.task_result,
            }
            for m in protocol.methods
        ]
        click.echo(json.dumps({"version": protocol.version, "era": protocol.era, "methods": rows}, indent=2))
        return EXIT_OK
    arrows = {"client_to_server": "C->S", "server_to_client": "S->C", "both": "C<->S"}
    click.echo(f"MCP {protocol.version} ({protocol.era} era), {len(protocol.methods)} methods")
    for m in protocol.methods:
        flags = [
            f
            for f, on in (
                ("mrtr", m.mrtr),
                ("cacheable", m.cacheable),
                ("deprecated", m.deprecated),
                ("embedded", m.embedded),
            )
            if on
        ]
        result = f" -> {m.result_type}" if m.result_type else ""
        params = m.params_type or "-"
        if m.params_type and not m.params_required:
            params += "?"
        click.echo(
            one_line(f"  {m.name:<42} {m.kind:<12} {arrows[m.direction]:<6} {params}{result}")
            + (f"  [{', '.join(flags)}]" if flags else "")
        )
    return EXIT_OK


@cli.command()
@click.argument("name")
@version_option(multiple=False, help="Protocol revision (default: the latest in the lock).")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where to create the project.",
)
@click.option("--vendor-runtime", is_flag=True, help="Copy the runtime into the project (no dependency on mcpgen).")
@click.option(
    "--auth",
    is_flag=True,
    help="Protect the HTTP server with OAuth 2.1: JWT access tokens checked against the issuer's JWKS "
    "(settings from the environment).",
)
@schema_dir_option
def scaffold(name: str, version: str | None, directory: Path, vendor_runtime: bool, auth: bool) -> int:
    """Write a runnable MCP server project NAME.

    NAME/ gets a pyproject (depending on the runtime distribution mcpgen), the generated
    package NAME_mcp/ (generator-owned), a server module with typed handlers to fill in, a test
    and a README. With --auth, its auth.py makes the HTTP server an OAuth 2.1 protected
    resource, configured by MCP_AUTH_ISSUER, MCP_AUTH_RESOURCE, MCP_AUTH_JWKS_URL and
    MCP_AUTH_SCOPES (and MCP_AUTH_DPOP: off, offered or required), with a test of its own.

    \b
    Examples:
      mcp-codegen scaffold weather && cd weather && python -m pytest -q
      mcp-codegen scaffold weather --version 2025-11-25 --vendor-runtime
      mcp-codegen scaffold weather --auth
    """
    from mcp_schema_codegen.commands.scaffold import scaffold as run

    given = click.get_current_context().find_root().meta.get("schema_dir")
    root = run(name, directory, version, Path(given) if given else None, vendor_runtime=vendor_runtime, auth=auth)
    click.echo(f"scaffolded {root}: see {root / 'README.md'}")
    return EXIT_OK


@cli.command()
@version_option(multiple=False, help="Move the project to another protocol revision.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The project directory.",
)
@click.option("--force", is_flag=True, help="Overwrite hand-edited generator-owned files.")
@schema_dir_option
def regen(version: str | None, project: Path, force: bool) -> int:
    """Regenerate the generator-owned package of a scaffolded project.

    Rewrites only generator-owned files (refusing when one was edited by hand), never the
    user's; with --version it moves the project to that revision, updates [tool.mcp-codegen]
    and prints an upgrade report of the handler signatures.

    \b
    Examples:
      mcp-codegen regen
      mcp-codegen regen --version 2026-07-28
    """
    from mcp_schema_codegen.commands.scaffold import regen as run

    given = click.get_current_context().find_root().meta.get("schema_dir")
    result = run(project, version, Path(given) if given else None, force=force)
    for line in result.lines():
        click.echo(line)
    return EXIT_OK


@cli.command()
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--module", "module", required=True, metavar="DOTTED", help="Import name of the generated module.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Directory of the generated module (and of its handlers module).",
)
@click.option(
    "--runtime",
    help="Dotted import root of the runtime (default: the project's vendored PACKAGE._runtime, else mcpgen._runtime).",
)
@click.option("--force", is_flag=True, help="Overwrite a hand-edited generated module.")
def tools(source: Path, module: str, out: Path, runtime: str | None, force: bool) -> int:
    """Schema-first tools: typed models and handler stubs from SOURCE, a tools/list result.

    Writes OUT/NAME.py (generator-owned: each tool's definition, arguments model, output model
    and ToolSpec) and, once, OUT/NAME_handlers.py (yours: one typed stub per tool and a
    register(app)). A tool declared this way is listed exactly as SOURCE defines it.

    \b
    Examples:
      mcp-codegen tools tools.json --module weather.declared --out weather
    """
    from mcp_schema_codegen.commands.config import load_config
    from mcp_schema_codegen.commands.tool_specs import generate_specs

    if runtime is None:  # a project that vendors its runtime imports its own
        config = load_config(Path.cwd())
        vendored = config.vendor_runtime and config.package is not None
        runtime = f"{config.package}._runtime" if vendored else "mcpgen._runtime"
    for line in generate_specs(source, module, out, runtime, force).lines():
        click.echo(line)
    return EXIT_OK


@cli.command()
@click.argument("name", required=False)
@click.option("--from-server", metavar="TARGET", help="An http(s):// URL or a server command (quoted), either era.")
@click.option(
    "--from-snapshot", type=click.Path(dir_okay=False, path_type=Path), help="A saved snapshot (no server needed)."
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="Where the package goes.",
)
@click.option("--runtime", default="mcpgen", show_default=True, help="The runtime package the client imports.")
@click.option(
    "--capability",
    "capabilities",
    multiple=True,
    type=click.Choice(["elicitation", "roots", "sampling"]),
    help="Declare this client capability while snapshotting (repeatable; some servers list more tools).",
)
@click.option(
    "--protocol-version",
    "protocol_versions",
    multiple=True,
    metavar="V",
    help="Offer only this MCP revision while snapshotting (repeatable; default: all the runtime speaks).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True, max=10**9),
    callback=lambda ctx, param, value: _a_number(param, value),
    default=60.0,
    show_default=True,
    help="Seconds per request to the server.",
)
@click.option("--check", is_flag=True, help="Compare instead of generating; exit 1 on a difference.")
@click.option(
    "--baseline", type=click.Path(dir_okay=False, path_type=Path), help="With --check: the snapshot to compare against."
)
@click.option(
    "--fail-on",
    type=click.Choice(["any", "breaking"]),
    default="any",
    show_default=True,
    help="With --check: exit 1 on any change or only on breaking ones.",
)
def client(
    name: str | None,
    from_server: str | None,
    from_snapshot: Path | None,
    out: Path,
    runtime: str,
    capabilities: tuple[str, ...],
    protocol_versions: tuple[str, ...],
    timeout: float,
    check: bool,
    baseline: Path | None,
    fail_on: str,
) -> int:
    """Generate a typed client package for one server's tools, or check it for drift.

    Snapshot a server (tools/list, prompts/list, resources/templates/list) and generate
    OUT/NAME/, a typed client with one method per tool; with --check, exit 1 when the server (or
    another snapshot) differs from NAME's snapshot, printing each change as breaking or
    compatible.

    \b
    Examples:
      mcp-codegen client everything --from-server "npx @modelcontextprotocol/server-everything"
      mcp-codegen client weather --from-server http://127.0.0.1:8000/mcp --check --fail-on breaking
    """
    if from_server is not None and from_snapshot is not None:
        raise click.UsageError("--from-server and --from-snapshot exclude each other")
    from mcp_schema_codegen.commands.client_stubs import client_command

    return client_command(
        name=name,
        from_server=from_server,
        from_snapshot=from_snapshot,
        out=out,
        runtime=runtime,
        capabilities=list(capabilities) or None,
        timeout=timeout,
        versions=list(protocol_versions) or None,
        check=check,
        baseline=baseline,
        fail_on=fail_on,
    )


@cli.group()
def schema() -> None:
    """Manage the schema lock.

    \b
    Examples:
      mcp-codegen schema sync
      mcp-codegen schema sync --from ../spec/schema --version 2026-11-30 --update-lock
      mcp-codegen schema sync --help
    """


@schema.command()
@click.option(
    "--from",
    "source",
    metavar="DIR|URL|FILE",
    help="A directory or base URL holding <version>/schema.json, a URL with {version}, or one schema file "
    "(default: the sources the lock records).",
)
@version_option(multiple=True, help="Only these revisions (repeatable).")
@click.option("--update-lock", is_flag=True, help="Adopt the source's bytes into the lock (one --version).")
@click.option(
    "--era", type=click.Choice(["legacy", "modern"]), help="The era a new revision must have (default: detected)."
)
@schema_dir_option
def sync(source: str | None, versions: tuple[str, ...], update_lock: bool, era: str | None) -> int:
    """Fetch the locked schemas, verifying their sha256; or adopt a revision.

    Without ./schema the bundled lock is the starting point: a ./schema is created only when the
    command succeeds and changed something (an adoption, a schema installed).

    \b
    Examples:
      mcp-codegen schema sync
      mcp-codegen schema sync --from ../spec/schema --version 2026-11-30 --update-lock
    """
    from mcp_schema_codegen.commands.schema import adopt, sync_schemas, writable_schema_dir

    if update_lock and (not source or len(versions) != 1):
        raise click.UsageError("--update-lock needs --from DIR|URL|FILE and exactly one --version")
    # printed once the schema directory is committed: output to a closed pipe (`| head`) threw
    # the adoption away with the rest of the block
    with writable_schema_dir(_schema_dir(), Path.cwd()) as target:
        if update_lock:
            lines = adopt(target.path, source or "", versions[0], era).lines()  # type: ignore[arg-type]
        else:
            statuses = sync_schemas(target.path, source, list(versions) or None)
            target.keep = any(status != "unchanged" for _, status in statuses)
            lines = [f"{v}: {status}" for v, status in statuses]
    for line in lines:
        click.echo(line)
    return EXIT_OK


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> int:
    """Print the shell completion script for SHELL.

    \b
    Examples:
      eval "$(mcp-codegen completion bash)"
      mcp-codegen completion fish > ~/.config/fish/completions/mcp-codegen.fish
    """
    completer = get_completion_class(shell)
    assert completer is not None  # the choice admits only shells click supports
    click.echo(completer(cli, {}, PROG, COMPLETE_VAR).source())
    return EXIT_OK


# -- the entry point -------------------------------------------------------------------------


def _a_number(param: click.Parameter, value: float) -> float:
    """NaN passes every range check (every comparison with it is false)."""
    if math.isnan(value):
        raise click.BadParameter("nan is not a number of seconds", param=param)
    return value


def _one_line(text: str) -> str:
    return " ".join(text.split())


# s an interrupted command has to unwind and end; then the process ends outright. An interrupt
# raised where Python drops exceptions (a finalizer run by the garbage collector: "Exception
# ignored in ...") is lost, and a command waiting on a server that never answers waited for its
# whole timeout (a snapshot: seen once under load)
INTERRUPT_GRACE = 10.0
_ending = threading.Event()  # an interrupt's end has begun: the watchdog is set
_said = threading.Event()  # the command's one line is written
_armed = False  # main() runs the process's own command line (argv None), not a caller's list


def _interrupted(signum: int, _frame: object) -> None:
    interrupts.SIGNALLED.append(signum)  # found at the next commit point if the raise below is lost
    if _armed and not _ending.is_set():
        _ending.set()
        timer = threading.Timer(INTERRUPT_GRACE, _end_outright, (signum,))
        timer.daemon = True
        timer.start()
    raise Interrupted(signum)


def _end_outright(signum: int) -> None:
    if not _said.is_set():
        sys.stderr.write(f"{PROG}: interrupted\n")
        sys.stderr.flush()
    os._exit(128 + signum)


def interrupted(status: int) -> int:
    """An interrupted command's end: what it staged removed, one line, ``status``."""
    from mcp_schema_codegen.output.tree import remove_staged

    remove_staged()
    click.echo(f"{PROG}: interrupted", err=True)
    _said.set()
    return status


@functools.cache
def end_without_a_last_collection() -> None:
    """At exit, ``gc.freeze()`` before the interpreter's last garbage collections, which would
    walk every object a command left alive (the lock, the schemas, datamodel-code-generator's
    parse): a full collection after ``check`` took 6-18 ms here, paid more than once at exit.
    Registered once; what ``atexit`` runs after it runs as before."""
    atexit.register(gc.freeze)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every user error is one line on stderr and exit status 2; SIGINT and SIGTERM
    end it in one line too (130, 143), after the command has cleaned up."""
    end_without_a_last_collection()
    previous: dict[signal.Signals, Any] = {}
    global _armed
    _armed = argv is None  # (a caller passing its own list keeps its process)
    interrupts.SIGNALLED.clear()  # a signal before this command (a caller's) is not this command's
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            current = signal.getsignal(sig)
            # a background job ignores SIGINT: so does this; a handler not set from Python (None)
            # could not be put back, so it stays
            if current is not signal.SIG_IGN and current is not None:
                previous[sig] = signal.signal(sig, _interrupted)
    try:
        return _main(argv)
    except (Interrupted, Stopped) as exc:  # raised outside _main's own handlers (while it returned)
        return interrupted(128 + exc.signum)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        interrupts.SIGNALLED.clear()  # this command's: a next one in the process starts with none


def _main(argv: list[str] | None) -> int:
    try:
        result = cli.main(args=argv, prog_name=PROG, standalone_mode=False, complete_var=COMPLETE_VAR)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else PROG
        click.echo(f"{PROG}: error: {_one_line(exc.format_message())} (see `{where} --help`)", err=True)
        return EXIT_USER_ERROR
    except click.ClickException as exc:
        click.echo(f"{PROG}: error: {_one_line(exc.format_message())}", err=True)
        return EXIT_USER_ERROR
    except GeneratorError as exc:
        click.echo(f"{PROG}: error: {exc.one_line()}", err=True)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # `mcp-codegen methods ... | head`
        sys.stderr.close()
        return EXIT_OK
    except (Interrupted, Stopped) as exc:
        return interrupted(128 + exc.signum)
    except (KeyboardInterrupt, click.Abort) as exc:  # click's own Abort: a signal while it parsed arguments
        cause = exc.__context__ if isinstance(exc, click.Abort) else exc
        return interrupted(128 + cause.signum if isinstance(cause, Interrupted) else 130)
    except OSError as exc:  # a file problem no check anticipated: still one line, never a traceback
        where = f": {exc.filename}" if exc.filename else ""
        click.echo(f"{PROG}: error: {exc.strerror or exc}{where}", err=True)
        return EXIT_USER_ERROR
    except UnicodeDecodeError as exc:  # a file read as text that no check anticipated
        click.echo(f"{PROG}: error: a file it read is not UTF-8 text (byte {exc.start}: {exc.reason})", err=True)
        return EXIT_USER_ERROR
    except RecursionError:  # a document nested deeper than any reader here goes
        click.echo(f"{PROG}: error: an input is nested too deeply to read", err=True)
        return EXIT_USER_ERROR
    return result if isinstance(result, int) else EXIT_OK
