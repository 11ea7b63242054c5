"""Load one revision: verified bytes -> JSON -> asserting patches (``frontend.patches``)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.lock import Era, Lock, LockedRevision
from mcp_schema_codegen.frontend.patches import Patch, apply_patches, load_patches, patch_file
from mcp_schema_codegen.jsondata import load_json

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
    original = load_json(data, "schema.json", version=version)
    if not isinstance(original, dict):
        raise GeneratorError("schema.json must be a JSON object", version=version)
    container = "$defs" if "$defs" in original else "definitions" if "definitions" in original else None
    if container is None or not isinstance(original[container], dict):
        raise GeneratorError("schema.json has neither $defs nor definitions", version=version)
    for name, body in original[container].items():
        if not isinstance(body, dict):
            raise GeneratorError("definition body must be an object", version=version, definition=name)
    return original, container


PASSED: set[str] = set()  # digests of the (dialect, document part) pairs this process found valid


def check_json_schema(document: dict[str, JSON], version: str) -> None:
    """Refuse a document that is no valid JSON Schema, naming the definition and where (its
    metaschema's verdict: about 0.2 s for 2026-07-28, so at adoption, when a schema fails the
    generator, and before datamodel-code-generator reads one whose models are not cached).

    The metaschema judges each definition on its own (``$defs`` and ``definitions`` apply the whole
    metaschema to every member, whatever the rest), so the verdict is kept per part: the document
    without its definitions, and each definition. A process checks a part it found valid before
    only once: a revision that changes a few definitions of another (an edit, the next revision,
    a patch) costs those few. Refusals are never kept, and one is always reported from the whole
    document, so the error named is the one the metaschema meets first, as without the memo."""
    import jsonschema

    dialect = document.get("$schema")
    if dialect is not None and not isinstance(dialect, str):
        raise GeneratorError(f"not a valid JSON Schema: $schema is {dialect!r}, not a URI", version=version)
    unchecked = [(key, part) for key, part in _parts(document, dialect) if key not in PASSED]
    if not unchecked:
        return
    try:
        validator_class = jsonschema.validators.validator_for(document)
        meta = _metaschema_validator(validator_class)
        for key, part in unchecked:
            if next(iter(meta.iter_errors(part)), None) is not None:
                validator_class.check_schema(document)  # the whole document's first error, raised
            PASSED.add(key)
    except jsonschema.SchemaError as exc:
        path = [str(p) for p in exc.absolute_path]
        where = "/".join(p.replace("~", "~0").replace("/", "~1") for p in path)
        definition = path[1] if len(path) > 1 and path[0] in ("$defs", "definitions") else None
        message = f"not a valid JSON Schema: {exc.message} (at /{where})"
        raise GeneratorError(message, version=version, definition=definition) from None
    except Exception as exc:  # the metaschema itself cannot be read or applied: no JSON Schema either
        raise GeneratorError(f"not a valid JSON Schema: {type(exc).__name__}: {exc}", version=version) from None


def _parts(document: dict[str, JSON], dialect: str | None) -> list[tuple[str, JSON]]:
    """The parts the metaschema judges apart, each with its key in ``PASSED``: the document with an
    empty definitions container, then each definition (the whole document, when it has no
    container of objects to split)."""
    import hashlib

    def keyed(part: JSON) -> tuple[str, JSON]:
        text = json.dumps([dialect, part], sort_keys=True, default=repr)
        return hashlib.sha256(text.encode()).hexdigest(), part

    container = "$defs" if "$defs" in document else "definitions" if "definitions" in document else None
    members = document.get(container) if container is not None else None
    if not isinstance(members, dict):
        return [keyed(document)]
    return [keyed({**document, container: {}}), *(keyed(body) for body in members.values())]


_METASCHEMA_VALIDATORS: dict[type, Any] = {}


def _metaschema_validator(validator_class: Any) -> Any:
    """The validator of ``validator_class``'s metaschema, as its ``check_schema`` builds it."""
    if validator_class not in _METASCHEMA_VALIDATORS:
        import jsonschema

        meta_class = jsonschema.validators.validator_for(validator_class.META_SCHEMA, default=validator_class)
        meta = meta_class(validator_class.META_SCHEMA, format_checker=meta_class.FORMAT_CHECKER)
        _METASCHEMA_VALIDATORS[validator_class] = meta
    return _METASCHEMA_VALIDATORS[validator_class]


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
