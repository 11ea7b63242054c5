"""Load one revision: verified bytes -> JSON -> asserting patches (``frontend.patches``)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import Era, Lock, LockedRevision
from mcp_schema_codegen.frontend.patches import Patch, apply_patches, load_patches, patch_file

JSON = Any


@dataclass(frozen=True)
class LoadedSchema:
    """One revision after loading and patching."""

    version: str
    era: Era
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


def parse_document(data: bytes, version: str) -> tuple[dict[str, JSON], str]:
    """The schema document and its definitions container; a clear error when it is no JSON Schema."""
    try:
        original = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise GeneratorError(f"schema.json is not valid JSON: {exc}", version=version) from None
    if not isinstance(original, dict):
        raise GeneratorError("schema.json must be a JSON object", version=version)
    container = "$defs" if "$defs" in original else "definitions" if "definitions" in original else None
    if container is None or not isinstance(original[container], dict):
        raise GeneratorError("schema.json has neither $defs nor definitions", version=version)
    for name, body in original[container].items():
        if not isinstance(body, dict):
            raise GeneratorError("definition body must be an object", version=version, definition=name)
    return original, container


PASSED: set[str] = set()  # digests of the documents this process found valid (each check is ~0.2 s)


def check_json_schema(document: dict[str, JSON], version: str) -> None:
    """Refuse a document that is no valid JSON Schema, naming the definition and where (its
    metaschema's verdict: about 0.2 s for 2026-07-28, so at adoption, when a schema fails the
    generator, and before datamodel-code-generator reads one whose models are not cached; a
    document this process found valid before is not checked again)."""
    import hashlib

    import jsonschema

    digest = hashlib.sha256(json.dumps(document, sort_keys=True, default=repr).encode()).hexdigest()
    if digest in PASSED:
        return

    dialect = document.get("$schema")
    if dialect is not None and not isinstance(dialect, str):
        raise GeneratorError(f"not a valid JSON Schema: $schema is {dialect!r}, not a URI", version=version)
    try:
        jsonschema.validators.validator_for(document).check_schema(document)
    except jsonschema.SchemaError as exc:
        path = [str(p) for p in exc.absolute_path]
        where = "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)
        definition = path[1] if len(path) > 1 and path[0] in ("$defs", "definitions") else None
        message = f"not a valid JSON Schema: {exc.message} (at /{where})"
        raise GeneratorError(message, version=version, definition=definition) from None
    except Exception as exc:  # the metaschema itself cannot be read or applied: no JSON Schema either
        raise GeneratorError(f"not a valid JSON Schema: {type(exc).__name__}: {exc}", version=version) from None
    PASSED.add(digest)


def parse_schema(data: bytes, rev: LockedRevision, patches: tuple[Patch, ...]) -> LoadedSchema:
    original, container = parse_document(data, rev.version)
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
    return parse_schema(data, rev, load_patches(patch_file(lock.schema_dir, version)))
