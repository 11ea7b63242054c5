"""The ``mcp-codegen`` command line.

Exit status: 0 success; 1 a check found differences; 2 a user error (bad arguments, a
missing or mismatched schema, a bad schema), printed as one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from mcp_schema_codegen import __version__
from mcp_schema_codegen.commands.check import check
from mcp_schema_codegen.commands.config import Config, load_config
from mcp_schema_codegen.commands.diff import diff_sides, render_text, side_from_file, side_from_revision
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import load_lock, sync, update
from mcp_schema_codegen.paths import bundled_schema_dir, default_schema_dir
from mcp_schema_codegen.pipeline import Options, analyze_revision, generate, overlay_for

EXIT_OK, EXIT_DIFFERENT, EXIT_USER_ERROR = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise GeneratorError(f"{message} (see `{self.prog} --help`)")


def _config() -> Config:
    return load_config(Path.cwd())


def _schema_dir(args: argparse.Namespace) -> Path:
    if args.schema_dir:
        return Path(args.schema_dir)
    return _config().schema_dir or default_schema_dir()


def _options(args: argparse.Namespace, need_versions: bool) -> Options:
    """CLI flags over [tool.mcp-codegen] over defaults."""
    config = _config()
    if getattr(args, "all", False):
        versions: list[str] | None = []
    elif args.version:
        versions = list(dict.fromkeys(args.version))
    else:
        versions = config.versions
    if versions is None:
        if need_versions:
            raise GeneratorError(
                "say which revisions: --version V (repeatable), --all, or versions in [tool.mcp-codegen]"
            )
        versions = []
    templates = Path(args.templates) if args.templates else config.templates
    return Options(
        schema_dir=_schema_dir(args),
        out=Path(args.out) if args.out else config.out or Path("generated"),
        package=args.package or config.package or "mcpgen",
        versions=versions,
        templates=templates,
    )


def cmd_generate(args: argparse.Namespace) -> int:
    options = _options(args, need_versions=True)
    protocols = generate(options)
    for p in protocols:
        print(f"{p.version} ({p.era}): {len(p.methods)} methods -> {options.out / options.package / p.package}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    options = _options(args, need_versions=False)
    report = check(options, full=args.full)
    if report.clean:
        return EXIT_OK
    for line in report.diff:
        print(line)
    for reason in report.reasons:
        print(f"stale: {reason}", file=sys.stderr)
    print(
        f"mcp-codegen: {options.out / options.package} is stale; run `mcp-codegen generate` to update it",
        file=sys.stderr,
    )
    return EXIT_DIFFERENT


def cmd_diff(args: argparse.Namespace) -> int:
    schema_dir = _schema_dir(args)
    overlay = overlay_for(schema_dir)
    lock = load_lock(schema_dir)

    def side(spec: str):  # type: ignore[no-untyped-def]
        if spec in lock.revisions:
            return side_from_revision(lock, spec, overlay)
        path = Path(spec)
        if path.exists():
            return side_from_file(path, overlay)
        raise GeneratorError(f"{spec!r} is neither a locked revision ({', '.join(lock.revisions)}) nor a file")

    result = diff_sides(side(args.old), side(args.new))
    print(json.dumps(result.to_json(), indent=2) if args.json else render_text(result))
    return EXIT_DIFFERENT if result.changed else EXIT_OK


def cmd_methods(args: argparse.Namespace) -> int:
    schema_dir = _schema_dir(args)
    lock = load_lock(schema_dir)
    _, _, protocol = analyze_revision(lock, args.version, overlay_for(schema_dir))
    if args.json:
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
        print(json.dumps({"version": protocol.version, "era": protocol.era, "methods": rows}, indent=2))
        return EXIT_OK
    arrows = {"client_to_server": "C->S", "server_to_client": "S->C", "both": "C<->S"}
    print(f"MCP {protocol.version} ({protocol.era} era), {len(protocol.methods)} methods")
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
        print(
            f"  {m.name:<42} {m.kind:<12} {arrows[m.direction]:<6} {params}{result}"
            + (f"  [{', '.join(flags)}]" if flags else "")
        )
    return EXIT_OK


def cmd_scaffold(args: argparse.Namespace) -> int:
    from mcp_schema_codegen.commands.scaffold import scaffold

    schema_dir = Path(args.schema_dir) if args.schema_dir else None
    root = scaffold(args.name, Path(args.dir), args.version, schema_dir)
    print(f"scaffolded {root}: see {root / 'README.md'}")
    return EXIT_OK


def cmd_regen(args: argparse.Namespace) -> int:
    from mcp_schema_codegen.commands.scaffold import regen

    schema_dir = Path(args.schema_dir) if args.schema_dir else None
    result = regen(Path(args.project), args.version, schema_dir, force=args.force)
    print(f"regenerated: {len(result.written)} file(s) written, {len(result.removed)} removed")
    for line in result.signatures.lines():
        print(line)
    return EXIT_OK


def cmd_client(args: argparse.Namespace) -> int:
    from mcp_schema_codegen.commands.client_stubs import client_command

    return client_command(
        name=args.name,
        from_server=args.from_server,
        from_snapshot=Path(args.from_snapshot) if args.from_snapshot else None,
        out=Path(args.out),
        runtime=args.runtime,
        capabilities=args.capability,
        timeout=args.timeout,
        versions=args.protocol_version,
        check=args.check,
        baseline=Path(args.baseline) if args.baseline else None,
        fail_on=args.fail_on,
    )


def cmd_schema_sync(args: argparse.Namespace) -> int:
    schema_dir = _schema_dir(args)
    if not (schema_dir / "lock.json").exists() or (schema_dir == bundled_schema_dir() and not args.schema_dir):
        local = Path.cwd() / "schema"
        if schema_dir != local:  # first sync in a new project: start from the bundled lock
            shutil.copytree(
                bundled_schema_dir(),
                local,
                dirs_exist_ok=True,
                ignore=lambda d, names: [n for n in names if (Path(d) / n / "schema.json").exists()],
            )
            schema_dir = local
    lock = load_lock(schema_dir)
    if args.update_lock:
        if not args.source or not args.version or len(args.version) != 1:
            raise GeneratorError("--update-lock needs --from DIR|URL and exactly one --version")
        rev = update(lock, args.source, args.version[0], args.era)
        print(f"{rev.version}: locked sha256 {rev.sha256[:12]} ({rev.size} bytes, {rev.era})")
        return EXIT_OK
    for version, status in sync(lock, args.source, args.version or None):
        print(f"{version}: {status}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-codegen",
        description="Generate typed Python models and protocol tables from the MCP JSON Schemas.",
        epilog="exit status: 0 ok, 1 differences found, 2 user error (one line on stderr)",
    )
    parser.add_argument("--version-info", action="version", version=f"mcp-codegen {__version__}")
    parser.add_argument("--schema-dir", help="directory with lock.json and <version>/schema.json (default ./schema)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    gen = sub.add_parser("generate", help="generate the package for one or more revisions")
    gen.add_argument("--version", action="append", metavar="V", help="a revision from the lock (repeatable)")
    gen.add_argument("--all", action="store_true", help="every revision in the lock")
    gen.add_argument("--out", help="output directory (default: generated)")
    gen.add_argument("--package", help="name of the generated package (default: mcpgen)")
    gen.add_argument("--templates", help="directory of templates overriding the built-ins by file name")
    gen.set_defaults(func=cmd_generate)

    chk = sub.add_parser(
        "check",
        help="exit 1 with a diff if the generated tree is stale or hand-edited",
        description="Exit 0 silently when the tree is what `generate` would write; else exit 1 with a unified diff.",
    )
    chk.add_argument(
        "--version", action="append", metavar="V", help="only these revisions (default: those in the tree)"
    )
    chk.add_argument("--out", help="output directory (default: generated)")
    chk.add_argument("--package", help="name of the generated package (default: mcpgen)")
    chk.add_argument("--templates", help="directory of templates overriding the built-ins by file name")
    chk.add_argument("--full", action="store_true", help="regenerate and compare instead of comparing hashes")
    chk.set_defaults(func=cmd_check)

    dif = sub.add_parser(
        "diff",
        help="semantic differences between two revisions or schema files (exit 1 if any)",
        description="Methods, definitions (renames found by structure), fields and era; exit 1 if anything changed.",
    )
    dif.add_argument("old", help="a locked revision or a schema.json path")
    dif.add_argument("new", help="a locked revision or a schema.json path")
    dif.add_argument("--json", action="store_true", help="machine-readable output")
    dif.set_defaults(func=cmd_diff)

    methods = sub.add_parser("methods", help="print the method table of a revision")
    methods.add_argument("--version", required=True, metavar="V")
    methods.add_argument("--json", action="store_true", help="machine-readable output")
    methods.set_defaults(func=cmd_methods)

    scaf = sub.add_parser(
        "scaffold",
        help="write a runnable MCP server project",
        description="Write NAME/: pyproject, a vendored generated runtime (generator-owned, hashed in "
        ".mcp-codegen.json), a server module with typed handlers to fill in, a test and a README.",
    )
    scaf.add_argument("name", help="project name (its package name is derived from it)")
    scaf.add_argument("--version", metavar="V", help="protocol revision (default: the latest in the lock)")
    scaf.add_argument("--dir", default=".", help="where to create the project (default: .)")
    scaf.set_defaults(func=cmd_scaffold)

    reg = sub.add_parser(
        "regen",
        help="regenerate the generator-owned files of a scaffolded project",
        description="Rewrite only generator-owned files; refuse if one was edited by hand; never touch "
        "user files; report changed handler signatures.",
    )
    reg.add_argument("--version", metavar="V", help="move to another protocol revision")
    reg.add_argument("--project", default=".", help="the project directory (default: .)")
    reg.add_argument("--force", action="store_true", help="overwrite hand-edited generator-owned files")
    reg.set_defaults(func=cmd_regen)

    cli = sub.add_parser(
        "client",
        help="generate a typed client package for one server's tools, or check it for drift",
        description="Snapshot a server (tools/list, prompts/list, resources/templates/list) and generate OUT/NAME/, "
        "a typed client with one method per tool; with --check, exit 1 when the server (or another snapshot) "
        "differs from NAME's snapshot, printing each change as breaking or compatible.",
    )
    cli.add_argument("name", nargs="?", help="the client package name (my-server becomes my_server)")
    source = cli.add_mutually_exclusive_group()
    source.add_argument(
        "--from-server", metavar="TARGET", help="an http(s):// URL or a server command (quoted), either era"
    )
    source.add_argument("--from-snapshot", metavar="FILE", help="a saved snapshot (no server needed)")
    cli.add_argument("--out", default=".", help="where the package goes (default: .)")
    cli.add_argument("--runtime", default="mcpgen", help="the runtime package the client imports (default: mcpgen)")
    cli.add_argument(
        "--capability",
        action="append",
        choices=["elicitation", "roots", "sampling"],
        help="declare this client capability while snapshotting (repeatable; some servers list more tools)",
    )
    cli.add_argument(
        "--protocol-version",
        action="append",
        metavar="V",
        help="offer only this MCP revision while snapshotting (repeatable; default: all the runtime speaks)",
    )
    cli.add_argument("--timeout", type=float, default=60.0, help="seconds per request to the server (default: 60)")
    cli.add_argument("--check", action="store_true", help="compare instead of generating; exit 1 on a difference")
    cli.add_argument("--baseline", metavar="FILE", help="with --check: the snapshot to compare against")
    cli.add_argument(
        "--fail-on",
        choices=["any", "breaking"],
        default="any",
        help="with --check: exit 1 on any change (default) or only on breaking ones",
    )
    cli.set_defaults(func=cmd_client)

    schema = sub.add_parser("schema", help="manage the schema lock")
    schema_sub = schema.add_subparsers(dest="schema_command", required=True, parser_class=_Parser)
    sync_p = schema_sub.add_parser("sync", help="copy or download the locked schemas and verify their sha256")
    sync_p.add_argument(
        "--from",
        dest="source",
        metavar="DIR|URL",
        help="a directory holding <version>/schema.json, or a base URL (default: the locked URLs)",
    )
    sync_p.add_argument("--version", action="append", metavar="V", help="only these revisions")
    sync_p.add_argument("--update-lock", action="store_true", help="adopt the source's bytes into the lock")
    sync_p.add_argument("--era", choices=["legacy", "modern"], help="era of a revision new to the lock")
    sync_p.set_defaults(func=cmd_schema_sync)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        result: int = args.func(args)
        return result
    except GeneratorError as exc:
        print(f"mcp-codegen: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # `mcp-codegen methods ... | head`
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print("mcp-codegen: interrupted", file=sys.stderr)
        return 130
