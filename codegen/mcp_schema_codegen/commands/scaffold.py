"""``mcp-codegen scaffold`` and ``mcp-codegen regen``: a server project around a vendored runtime.

A scaffolded project holds two kinds of files. Generator-owned files (the vendored runtime
package ``<module>_mcp/``) are recorded with their sha256 in ``.mcp-codegen.json``; ``regen``
rewrites them, and refuses when one was edited by hand. User-owned files (the server module,
``__main__``, the test, pyproject, README) are written once by ``scaffold`` and never touched
again. ``regen`` also reports which handler signatures of the generated ``Server`` changed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mcp_schema_codegen import __version__
from mcp_schema_codegen.backend.render import Renderer
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import load_lock
from mcp_schema_codegen.paths import default_schema_dir, templates_dir
from mcp_schema_codegen.pipeline import Options, package_dir_name, render_package

MANIFEST = ".mcp-codegen.json"
SCAFFOLD = "scaffold"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def module_name(name: str) -> str:
    """The Python package of project ``name``: ``my-server`` -> ``my_server``."""
    module = re.sub(r"[^0-9a-zA-Z_]", "_", name).lower()
    if not module.isidentifier() or module.startswith("_"):
        raise GeneratorError(f"project name {name!r} does not make a Python package name")
    return module


@dataclass
class SignatureReport:
    """How the generated handler signatures changed: method name -> signature text."""

    added: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    changed: dict[str, tuple[str, str]] = field(default_factory=dict)

    def lines(self) -> list[str]:
        out = [f"handler added: {n}{s}" for n, s in sorted(self.added.items())]
        out += [f"handler removed: {n}{s}" for n, s in sorted(self.removed.items())]
        out += [f"handler changed: {n}{a} -> {n}{b}" for n, (a, b) in sorted(self.changed.items())]
        return out


def handler_signatures(server_py: Path) -> dict[str, str]:
    """``name -> (params) -> result`` of every async method of the generated ``Server`` class."""
    tree = ast.parse(server_py.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Server":
            return {
                item.name: f"({ast.unparse(item.args)}) -> {ast.unparse(item.returns) if item.returns else 'None'}"
                for item in node.body
                if isinstance(item, ast.AsyncFunctionDef)
            }
    return {}


def compare(old: dict[str, str], new: dict[str, str]) -> SignatureReport:
    report = SignatureReport()
    for name in new.keys() - old.keys():
        report.added[name] = new[name]
    for name in old.keys() - new.keys():
        report.removed[name] = old[name]
    for name in old.keys() & new.keys():
        if old[name] != new[name]:
            report.changed[name] = (old[name], new[name])
    return report


def render_runtime(version: str, package: str, schema_dir: Path) -> tuple[Path, dict[str, bytes]]:
    """The vendored runtime for ``version`` as package ``package``: (temp dir to remove, rel path -> bytes)."""
    tmp = Path(tempfile.mkdtemp(prefix="mcp-codegen-scaffold-"))
    try:
        # every locked revision: the server serves its own and every older one, legacy clients included
        render_package(Options(schema_dir=schema_dir, out=tmp, package=package), tmp / package)
        files = {
            f"{package}/{p.relative_to(tmp / package).as_posix()}": p.read_bytes()
            for p in sorted((tmp / package).rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp, files


def _write_manifest(root: Path, body: dict[str, object]) -> None:
    (root / MANIFEST).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _user_context(version: str, era: str, module: str, runtime: str, server_py: Path, name: str) -> dict[str, object]:
    signatures = handler_signatures(server_py)

    def split(stub: str) -> dict[str, str]:
        text = signatures[stub]  # "(self, params: X, ctx: Context) -> R"
        args, result = text.rsplit(" -> ", 1)
        params = args.split("params: ", 1)[1].split(",", 1)[0]
        return {"params": params, "result": result}

    handlers = []
    for stub in signatures:
        parts = split(stub)
        handlers.append({"stub_name": stub, "params": parts["params"], "result": parts["result"]})
    for needed in ("list_tools", "call_tool"):
        if needed not in signatures:
            raise GeneratorError(f"MCP {version} has no {needed} handler to scaffold")
    return {
        "project": name,
        "module": module,
        "runtime": runtime,
        "version": version,
        "era": era,
        "vpackage": package_dir_name(version),
        "generator": __version__,
        "handlers": handlers,
        "list_tools": split("list_tools"),
        "call_tool": split("call_tool"),
        "results": "s" if era == "modern" else "m",
    }


def _ruff(root: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", *args], capture_output=True, text=True, cwd=root, check=False)
    if done.returncode != 0:
        raise GeneratorError(f"ruff {' '.join(args)} failed on the scaffold: {done.stdout.strip()[-300:]}")


def scaffold(name: str, directory: Path, version: str | None = None, schema_dir: Path | None = None) -> Path:
    """Write a runnable server project ``name`` into ``directory / name``; returns the project root."""
    module = module_name(name)
    runtime = f"{module}_mcp"
    root = directory / name
    if root.exists() and any(root.iterdir()):
        raise GeneratorError(f"{root} exists and is not empty")
    schema_dir = schema_dir or default_schema_dir()
    lock = load_lock(schema_dir)
    version = version or max(lock.revisions)
    era = lock.revision(version).era
    tmp, files = render_runtime(version, runtime, schema_dir)
    try:
        root.mkdir(parents=True, exist_ok=True)
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        server_py = root / runtime / package_dir_name(version) / "server.py"
        context = _user_context(version, era, module, runtime, server_py, name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    renderer = Renderer(templates_dir())
    user = {
        "pyproject.toml": "pyproject.toml",
        "README.md": "README.md",
        f"{module}/__init__.py": "__init__.py",
        f"{module}/__main__.py": "__main__.py",
        f"{module}/server.py": "server.py",
        "tests/test_server.py": "test_server.py",
    }
    for rel, template in user.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(renderer.render(f"{SCAFFOLD}/{template}", **context), encoding="utf-8")
    _ruff(root, "format", "--quiet", ".")
    _ruff(root, "check", "--fix", "--quiet", ".")
    _ruff(root, "format", "--quiet", ".")
    _write_manifest(
        root,
        {
            "generator": __version__,
            "version": version,
            "package": runtime,
            "generated": {rel: _sha(data) for rel, data in files.items()},
            "user": sorted(user),
            "signatures": handler_signatures(server_py),
        },
    )
    return root


def _prune(root: Path, directories: set[Path]) -> None:
    """Remove directories left empty (but for bytecode caches) by removed generated files."""
    for directory in sorted(directories, key=lambda d: len(d.parts), reverse=True):
        while directory != root and directory.is_dir():
            shutil.rmtree(directory / "__pycache__", ignore_errors=True)
            if any(directory.iterdir()):
                break
            directory.rmdir()
            directory = directory.parent


@dataclass
class RegenResult:
    written: list[str]
    removed: list[str]
    signatures: SignatureReport


def read_project_manifest(root: Path) -> dict[str, object]:
    path = root / MANIFEST
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GeneratorError(f"{path} not found: run `mcp-codegen regen` in a scaffolded project") from None
    except json.JSONDecodeError as exc:
        raise GeneratorError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(body, dict) or not isinstance(body.get("generated"), dict):
        raise GeneratorError(f"{path} is not an mcp-codegen project manifest")
    return body


def regen(root: Path, version: str | None = None, schema_dir: Path | None = None, force: bool = False) -> RegenResult:
    """Rewrite the generator-owned files of the project at ``root``; user files are never touched."""
    body = read_project_manifest(root)
    generated: dict[str, str] = body["generated"]  # type: ignore[assignment]
    package = str(body["package"])
    old_version = str(body["version"])
    version = version or old_version
    edited = [
        rel
        for rel, digest in sorted(generated.items())
        if (root / rel).exists() and _sha((root / rel).read_bytes()) != digest
    ]
    if edited and not force:
        shown = ", ".join(edited[:5]) + (f" and {len(edited) - 5} more" if len(edited) > 5 else "")
        raise GeneratorError(
            f"refusing to overwrite hand-edited generator-owned file(s): {shown}",
            hint="move your changes into your own modules, or pass --force to discard them",
        )
    listed = body.get("user", [])
    user = {str(rel) for rel in listed} if isinstance(listed, list) else set()
    tmp, files = render_runtime(version, package, schema_dir or default_schema_dir())
    try:
        clash = sorted(user & files.keys())
        if clash:
            raise GeneratorError(f"generated files would overwrite user files: {', '.join(clash)}")
        written = [rel for rel, data in files.items() if not (root / rel).exists() or (root / rel).read_bytes() != data]
        for rel in written:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[rel])
        removed = sorted(set(generated) - files.keys())
        for rel in removed:
            (root / rel).unlink(missing_ok=True)
        _prune(root, {(root / rel).parent for rel in removed})
        server_py = root / package / package_dir_name(version) / "server.py"
        signatures = handler_signatures(server_py)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    old_signatures = body.get("signatures", {})
    report = compare(old_signatures if isinstance(old_signatures, dict) else {}, signatures)
    body.update(
        generator=__version__,
        version=version,
        generated={rel: _sha(data) for rel, data in files.items()},
        signatures=signatures,
    )
    _write_manifest(root, body)
    return RegenResult(sorted(written), removed, report)
