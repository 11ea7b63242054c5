"""Asserting JSON-pointer patches: fixes of known upstream schema defects.

A patch file ``schema/patches/<version>.json`` is a list of replacements. Each first asserts
the value it replaces, so a patch fails loudly (naming the definition and pointer) once
upstream fixes the schema. ``carry`` tries the patches of one revision on another (a new
revision of the same era usually keeps the same defects) and sorts them into the ones whose
assertion holds and the ones that no longer apply.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.jsondata import load_json

JSON = Any


@dataclass(frozen=True)
class Patch:
    pointer: str
    old: JSON
    new: JSON
    reason: str


def patch_file(schema_dir: Path, version: str) -> Path:
    return schema_dir / "patches" / f"{version}.json"


def split_pointer(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON pointer {pointer!r} must start with '/'")
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


def definition_of(pointer: str) -> str | None:
    parts = split_pointer(pointer)
    if len(parts) >= 2 and parts[0] in ("$defs", "definitions"):
        return parts[1]
    return None


def resolve(document: JSON, pointer: str) -> JSON:
    node = document
    for part in split_pointer(pointer):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def load_patches(path: Path) -> tuple[Patch, ...]:
    if not path.exists():
        return ()
    try:
        raw = load_json(path.read_text(encoding="utf-8"), f"patch file {path}")
        patches = tuple(Patch(p["pointer"], p["old"], p["new"], p["reason"]) for p in raw)
        for patch in patches:
            if not isinstance(patch.pointer, str) or not patch.pointer.startswith("/"):
                raise GeneratorError(f"patch file {path} is malformed: pointer {patch.pointer!r} is no JSON pointer")
        return patches
    except (OSError, UnicodeDecodeError) as exc:
        raise GeneratorError(f"cannot read patch file {path}: {exc}") from None
    except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError is a ValueError
        raise GeneratorError(f"patch file {path} is malformed: {exc}") from None


def dump_patches(patches: tuple[Patch, ...]) -> str:
    return json.dumps([asdict(p) for p in patches], indent=2, ensure_ascii=False) + "\n"


def _target(document: JSON, patch: Patch) -> tuple[JSON, JSON]:
    """(parent container, key) of the patched value; raises LookupError when it is absent."""
    parts = split_pointer(patch.pointer)
    if not parts:
        raise LookupError(patch.pointer)
    node = document
    try:
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: JSON = int(parts[-1]) if isinstance(node, list) else parts[-1]
        node[key]
    except (KeyError, IndexError, ValueError, TypeError):
        raise LookupError(patch.pointer) from None
    return node, key


def problem(document: JSON, patch: Patch) -> str | None:
    """Why ``patch`` does not apply to ``document`` (None when its assertion holds)."""
    try:
        parent, key = _target(document, patch)
    except LookupError:
        return "patch target does not exist (upstream changed this definition?)"
    current = parent[key]
    if current != patch.old:
        return f"patch expected {json.dumps(patch.old)} but found {json.dumps(current)}"
    return None


def apply_patches(document: dict[str, JSON], patches: tuple[Patch, ...], version: str) -> None:
    """Apply every patch in place; the first whose assertion fails raises, naming it."""
    for patch in patches:
        why = problem(document, patch)
        if why is not None:
            raise GeneratorError(
                why,
                hint="upstream may have fixed this defect: review or drop the patch in schema/patches",
                version=version,
                definition=definition_of(patch.pointer),
                pointer=patch.pointer,
            )
        parent, key = _target(document, patch)
        parent[key] = copy.deepcopy(patch.new)


@dataclass(frozen=True)
class Carried:
    """The outcome of trying one revision's patches on another."""

    source: str  # the revision the patches come from
    kept: tuple[Patch, ...]  # their assertions hold on the new revision
    dropped: tuple[tuple[Patch, str], ...]  # (patch, why it does not apply)


def carry(document: JSON, source: str, patches: tuple[Patch, ...]) -> Carried:
    """Try ``patches`` (of revision ``source``) on another revision's unpatched ``document``."""
    kept, dropped = [], []
    scratch = copy.deepcopy(document)
    for patch in patches:
        why = problem(scratch, patch)
        if why is None:
            parent, key = _target(scratch, patch)
            parent[key] = copy.deepcopy(patch.new)
            kept.append(patch)
        else:
            dropped.append((patch, why))
    return Carried(source, tuple(kept), tuple(dropped))
