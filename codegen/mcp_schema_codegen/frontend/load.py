"""Load one revision: verified bytes -> JSON -> asserting patches.

A patch file ``schema/patches/<version>.json`` is a list of JSON-pointer replacements for
known upstream defects. Each first asserts the value it replaces, so a patch fails loudly
(naming the definition and pointer) once upstream fixes the schema.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import Lock, LockedRevision

JSON = Any


@dataclass(frozen=True)
class Patch:
    pointer: str
    old: JSON
    new: JSON
    reason: str


@dataclass(frozen=True)
class LoadedSchema:
    """One revision after loading and patching."""

    version: str
    era: str
    sha256: str
    dialect: str
    container: str  # "$defs" or "definitions"
    document: dict[str, JSON]  # patched
    original: dict[str, JSON]  # as upstream published it
    patches: tuple[Patch, ...]

    @property
    def definitions(self) -> dict[str, JSON]:
        defs: dict[str, JSON] = self.document[self.container]
        return defs

    @property
    def ref_prefix(self) -> str:
        return f"#/{self.container}/"


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
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def load_patches(path: Path) -> tuple[Patch, ...]:
    if not path.exists():
        return ()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return tuple(Patch(p["pointer"], p["old"], p["new"], p["reason"]) for p in raw)
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise GeneratorError(f"patch file {path} is malformed: {exc}") from None


def apply_patches(document: dict[str, JSON], patches: tuple[Patch, ...], version: str) -> None:
    for patch in patches:
        parts = split_pointer(patch.pointer)
        where = {"version": version, "definition": definition_of(patch.pointer), "pointer": patch.pointer}
        try:
            parent = resolve(document, "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts[:-1]))
            key: Any = int(parts[-1]) if isinstance(parent, list) else parts[-1]
            current = parent[key]
        except (KeyError, IndexError, ValueError, TypeError):
            raise GeneratorError(
                "patch target does not exist (upstream changed this definition?)",
                hint="review or drop the patch in schema/patches",
                **where,
            ) from None
        if current != patch.old:
            raise GeneratorError(
                f"patch expected {json.dumps(patch.old)} but found {json.dumps(current)}",
                hint="upstream may have fixed this defect: review or drop the patch in schema/patches",
                **where,
            )
        parent[key] = copy.deepcopy(patch.new)


def parse_schema(data: bytes, rev: LockedRevision, patches: tuple[Patch, ...]) -> LoadedSchema:
    try:
        original = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GeneratorError(f"schema.json is not valid JSON: {exc}", version=rev.version) from None
    if not isinstance(original, dict):
        raise GeneratorError("schema.json must be a JSON object", version=rev.version)
    container = "$defs" if "$defs" in original else "definitions" if "definitions" in original else None
    if container is None or not isinstance(original[container], dict):
        raise GeneratorError("schema.json has neither $defs nor definitions", version=rev.version)
    for name, body in original[container].items():
        if not isinstance(body, dict):
            raise GeneratorError("definition body must be an object", version=rev.version, definition=name)
    document = copy.deepcopy(original)
    apply_patches(document, patches, rev.version)
    return LoadedSchema(
        version=rev.version,
        era=rev.era,
        sha256=rev.sha256,
        dialect=str(original.get("$schema", "")),
        container=container,
        document=document,
        original=original,
        patches=patches,
    )


def load(lock: Lock, version: str) -> LoadedSchema:
    data, rev = lock.read_schema(version)
    patches = load_patches(lock.schema_dir / "patches" / f"{version}.json")
    return parse_schema(data, rev, patches)
