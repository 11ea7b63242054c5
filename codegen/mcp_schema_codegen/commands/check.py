"""``mcp-codegen check``: is a generated tree what the generator would write now?

The fast path needs no generation: it compares the manifest's recorded inputs with the
present lock, patches, overlay, templates and toolchain, and every file's sha256 with the
disk. Only when something differs (or with ``--full``) does it regenerate into a temporary
directory, to show a unified diff of what ``generate`` would change.
"""

from __future__ import annotations

import difflib
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import load_lock
from mcp_schema_codegen.output.manifest import MANIFEST_KEYS, Inputs, file_hashes, read_manifest
from mcp_schema_codegen.paths import templates_dir
from mcp_schema_codegen.pipeline import Options, package_dir_name, render_package


@dataclass
class CheckReport:
    reasons: list[str] = field(default_factory=list)  # why the tree is stale, one line each
    diff: list[str] = field(default_factory=list)  # unified diff lines, generated/ -> fresh
    regenerable: bool = True  # False: a schema does not match the lock, so generation would refuse too

    @property
    def clean(self) -> bool:
        return not self.reasons and not self.diff


def recorded_versions(package_dir: Path) -> list[str]:
    manifest = read_manifest(package_dir)
    revisions = manifest.get("revisions") if manifest else None
    return sorted(revisions) if isinstance(revisions, dict) else []


def input_reasons(options: Options, manifest: dict[str, object]) -> list[str]:
    """Inputs of generation (lock, schema bytes, patches, overlay, templates, toolchain, layout)
    that differ from those the manifest recorded."""
    lock = load_lock(options.schema_dir)
    inputs = Inputs.current(options.schema_dir, templates_dir(), options.templates, options.layout)
    recorded = manifest.get("revisions")
    recorded = recorded if isinstance(recorded, dict) else {}
    if manifest.get("package") != options.package:  # a copy of another package, or an edited manifest
        reasons_of_manifest = [f"the manifest is of package {manifest.get('package')!r}, not {options.package!r}"]
    else:
        reasons_of_manifest = []
    foreign = sorted(set(manifest) - MANIFEST_KEYS)
    if foreign:
        reasons_of_manifest.append(f"the manifest holds {foreign[0]!r}, which the generator does not write")
    # the schema bytes (bundled or synced) are still the locked ones
    reasons = reasons_of_manifest + lock.mismatches(
        [v for v in options.versions or sorted(recorded) if v in lock.revisions]
    )
    for version in options.versions or sorted(recorded):
        if version not in recorded:
            reasons.append(f"{version}: not generated in this tree")
            continue
        if version not in lock.revisions:
            reasons.append(f"{version}: generated, but no longer in the lock")
            continue
        entry = recorded[version]
        if not isinstance(entry, dict):
            reasons.append(f"{version}: the manifest's record of it is malformed")
            continue
        now = inputs.revision_entry(lock, version)
        for key, value in sorted(now.items()):
            if entry.get(key) != value:
                reasons.append(f"{version}: {key} changed since generation")
    return reasons


def differing_files(package_dir: Path) -> dict[str, str]:
    """Files of the tree that differ from its manifest, each with how: missing, foreign or edited by hand."""
    manifest = read_manifest(package_dir)
    files = manifest.get("files") if manifest else None
    files = files if isinstance(files, dict) else {}
    on_disk = file_hashes(package_dir) if package_dir.is_dir() else {}
    differing = {}
    for name in sorted(set(files) | set(on_disk)):
        if name not in on_disk:
            differing[name] = "missing"
        elif name not in files:
            differing[name] = "not written by the generator"
        elif files[name] != on_disk[name]:
            differing[name] = "edited by hand"
    return differing


def file_reasons(package_dir: Path, package: str) -> list[str]:
    """Files of the tree that differ from its manifest: missing, foreign or edited by hand."""
    return described(differing_files(package_dir), package)


def described(differing: dict[str, str], package: str) -> list[str]:
    return [f"{package}/{name}: {how}" for name, how in differing.items()]


def tree_diff(old_root: Path, new_root: Path, label: str) -> list[str]:
    def texts(root: Path) -> dict[str, list[str]]:
        return {
            p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace").splitlines()
            for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts
        }

    old, new = texts(old_root) if old_root.is_dir() else {}, texts(new_root)
    lines: list[str] = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name, []), new.get(name, [])
        if a != b:
            lines += difflib.unified_diff(a, b, f"{label}/{name}", f"{label}/{name} (regenerated)", lineterm="")
    return lines


def check(options: Options, full: bool = False) -> CheckReport:
    package_dir = options.out / options.package
    if not package_dir.exists():  # a user error (wrong directory, nothing generated yet), not a diff of every file
        raise GeneratorError(
            f"{package_dir} does not exist: nothing to check"
            " (run `mcp-codegen generate` first, or pass --out/--package)"
        )
    manifest = read_manifest(package_dir)
    if manifest is None:  # nothing to compare the files with
        inputs, differing = [f"{package_dir}: no readable manifest (not generated by mcp-codegen?)"], {}
    else:
        inputs, differing = input_reasons(options, manifest), differing_files(package_dir)
    report = CheckReport(reasons=inputs + described(differing, options.package))
    if report.clean and not full:
        return report
    versions = options.versions or recorded_versions(package_dir)
    lock = load_lock(options.schema_dir)
    if lock.mismatches([v for v in versions if v in lock.revisions]):
        report.regenerable = False  # generation would refuse these bytes: the reasons say why, no diff to show
        return report
    only, keep_from = None, None
    if not full and not inputs and not options.versions:
        # Only files differ, and every input is the one recorded: a revision whose files all have
        # their recorded hashes is what generation writes now (the premise of the hash check), so
        # only the revisions with a differing file are regenerated; the others are taken as they are.
        touched = {name.split("/", 1)[0] for name in differing}
        only, keep_from = [v for v in versions if package_dir_name(v) in touched], package_dir
    scratch = Path(tempfile.mkdtemp(prefix="mcp-codegen-check-"))
    try:
        fresh = scratch / options.package
        options = replace(options, out=scratch, versions=versions, keep_others=True)
        render_package(options, fresh, keep_from=keep_from, only=only)
        report.diff = tree_diff(package_dir, fresh, str(package_dir))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if full and report.diff and not report.reasons:
        report.reasons.append("regenerated output differs")
    return report
