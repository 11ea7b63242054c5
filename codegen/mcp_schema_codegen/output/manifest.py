"""The manifest of a generated tree: what it was generated from, and every file's hash.

``_manifest.json`` records, per revision, a fingerprint of every input that shapes the
output (generator version, pinned toolchain, effective templates, overlay, patches, the
schema's sha256) and the sha256 of every generated file. ``mcp-codegen check`` compares
both against the present state without regenerating.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from mcp_schema_codegen import __version__
from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.frontend.lock import Lock

MANIFEST = "_manifest.json"
TOOLCHAIN = ("datamodel-code-generator", "ruff")  # both pinned exactly: their output is part of ours


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "missing"


def templates_digest(builtin: Path, overrides: Path | None) -> str:
    """sha256 over the effective template set (an override replaces a built-in by name)."""
    files: dict[str, bytes] = {}
    for root in (builtin, overrides):
        if root is None:
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return sha256_hex(
        b"".join(name.encode() + b"\0" + sha256_hex(files[name]).encode() + b"\n" for name in sorted(files))
    )


@dataclass(frozen=True)
class Inputs:
    """Everything besides the schema that shapes a revision's output."""

    generator: str
    toolchain: dict[str, str]
    templates: str
    overlay: str
    layout: str  # where the runtime comes from, and whether current-revision modules are written

    @classmethod
    def current(cls, schema_dir: Path, builtin_templates: Path, overrides: Path | None, layout: str) -> Inputs:
        overlay = schema_dir / "overlay.json"
        return cls(
            generator=__version__,
            toolchain={name: _distribution_version(name) for name in TOOLCHAIN},
            templates=templates_digest(builtin_templates, overrides),
            overlay=sha256_hex(overlay.read_bytes()) if overlay.exists() else "",
            layout=layout,
        )

    def revision_entry(self, lock: Lock, version: str) -> dict[str, str]:
        patches = lock.schema_dir / "patches" / f"{version}.json"
        entry = {
            "schema": lock.revisions[version].sha256,
            "patches": sha256_hex(patches.read_bytes()) if patches.exists() else "",
            "generator": self.generator,
            "toolchain": ",".join(f"{k}={v}" for k, v in sorted(self.toolchain.items())),
            "templates": self.templates,
            "overlay": self.overlay,
            "layout": self.layout,
        }
        return entry


def read_manifest(package_dir: Path) -> dict[str, object] | None:
    try:
        raw = json.loads((package_dir / MANIFEST).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, RecursionError):  # unreadable: as if there were none (generate repairs it)
        return None
    return raw if isinstance(raw, dict) else None


def file_hashes(root: Path) -> dict[str, str]:
    """Each file under ``root`` by its path, with the sha256 of its bytes; a symbolic link (the
    generator writes none: one put there would bring in files ``check`` never reads) as where
    it points."""
    hashes = {}
    for p in sorted(root.rglob("*")):
        if p == root / MANIFEST or "__pycache__" in p.relative_to(root).parts:
            continue
        if p.is_symlink():
            hashes[p.relative_to(root).as_posix()] = "symlink to " + os.readlink(p)
        elif p.is_file():
            hashes[p.relative_to(root).as_posix()] = sha256_hex(p.read_bytes())
    return hashes


MANIFEST_KEYS = frozenset({"package", "revisions", "files"})  # what write_manifest writes


def write_manifest(root: Path, package: str, revisions: dict[str, dict[str, str]]) -> None:
    body = {"package": package, "revisions": dict(sorted(revisions.items())), "files": file_hashes(root)}
    (root / MANIFEST).write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")
