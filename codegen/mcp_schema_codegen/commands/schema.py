"""``mcp-codegen schema sync``: fetch the locked schemas, or adopt a revision into the lock.

A project without its own ``schema/`` starts from the generator's bundled one: it is copied
into a staging directory beside ``./schema``, the command works there, and the directory is
renamed into place only when the command succeeded, so a failure leaves nothing behind.

Adopting (``--update-lock``) reads one schema, checks that it is an MCP schema (valid JSON
Schema, the core definitions, a method table the analysis can read, the era it claims), tries
the patches of the previous revision of the same era on it, and only then writes the schema,
the carried patches and the lock entry (recording the exact source it came from).
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import check_json_schema, parse_document, parse_schema
from mcp_schema_codegen.frontend.lock import (
    ERAS,
    LOCK_NAME,
    Era,
    Lock,
    LockedRevision,
    atomic_write,
    check_version,
    fetch,
    load_lock,
    lock_text,
    source_location,
    sync,
)
from mcp_schema_codegen.frontend.patches import Carried, Patch, carry, dump_patches, load_patches, patch_file
from mcp_schema_codegen.frontend.prepass import check_references, check_supported
from mcp_schema_codegen.ir.analyze import (
    EraMismatch,
    Overlay,
    analyze_schema,
    check_log_levels,
    overlay_for,
    undescribed_capabilities,
)
from mcp_schema_codegen.ir.protocol import Protocol
from mcp_schema_codegen.output.tree import staged_directory
from mcp_schema_codegen.paths import bundled_schema_dir

# Definitions every MCP revision's schema has: a file without them is not an MCP schema.
CORE_DEFINITIONS = (
    "JSONRPCRequest",
    "JSONRPCNotification",
    "JSONRPCResponse",
    "RequestId",
    "Result",
    "ClientRequest",
    "ClientNotification",
    "ServerNotification",
)


@dataclass
class SchemaDir:
    """Where a schema command writes: ``path``; ``keep`` False drops a staged copy (nothing changed)."""

    path: Path
    keep: bool = True


@contextlib.contextmanager
def writable_schema_dir(schema_dir: Path, project: Path) -> Iterator[SchemaDir]:
    """The schema directory to write into.

    When ``schema_dir`` is the generator's bundled one (a project with no ``schema/`` of its
    own), a copy is staged beside ``project/schema`` and renamed into place on success only, and
    only if the command kept it (a sync that found every schema unchanged leaves no ./schema: one
    would override the bundled schemas from then on, through every upgrade of the tool).
    """
    local = project / "schema"
    if schema_dir.resolve() != bundled_schema_dir().resolve() or local.resolve() == schema_dir.resolve():
        yield SchemaDir(schema_dir)
        return
    if local.exists():
        raise GeneratorError(f"{local} exists but holds no {LOCK_NAME}", hint="remove it or pass --schema-dir")
    stage = staged_directory(".schema-", project)
    try:
        shutil.copytree(schema_dir, stage, dirs_exist_ok=True, ignore=shutil.ignore_patterns("examples", "__pycache__"))
        target = SchemaDir(stage)
        try:
            yield target
        except GeneratorError as exc:  # the staged copy goes: name what it copied, which stays
            raise GeneratorError(
                exc.message.replace(str(stage), str(schema_dir)),
                version=exc.version,
                definition=exc.definition,
                pointer=exc.pointer,
                hint=exc.hint.replace(str(stage), str(schema_dir)) if exc.hint else None,
            ) from None
        if target.keep:
            stage.rename(local)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def sync_schemas(schema_dir: Path, source: str | None, versions: list[str] | None) -> list[tuple[str, str]]:
    return sync(load_lock(schema_dir), source, versions)


@dataclass(frozen=True)
class Adoption:
    revision: LockedRevision
    methods: int
    carried: Carried | None  # patches tried from another revision (None: the revision keeps its own)
    own_patches_failing: tuple[tuple[Patch, str], ...]  # its own patch file's entries that no longer apply (removed)
    overlay_notes: tuple[str, ...] = ()  # the previous revision's overlay facts the new one is not listed in
    replaced: LockedRevision | None = None  # what the lock held for the version before
    changes: tuple[str, ...] = ()  # ``diff`` of the bytes replaced against the new ones (its lines)
    unread: tuple[str, ...] = ()  # what of the new schema the runtime will not act on (``unread_filter_members``)

    def lines(self) -> list[str]:
        rev = self.revision
        out = [
            f"{rev.version}: locked sha256 {rev.sha256[:12]} ({rev.size} bytes, {rev.era} era, "
            f"{self.methods} methods) from {rev.url}"
        ]
        old = self.replaced
        if old is not None and old.sha256 != rev.sha256:  # said: the revision's generated code is stale now
            out.append(f"  replaced sha256 {old.sha256[:12]} ({old.size} bytes) from {old.url}")
            out += [f"  {line}" for line in self.changes]
        elif old is not None:
            out.append("  the same bytes the lock held (only the source it records may have changed)")
        if self.carried is not None:
            kept, dropped = self.carried.kept, self.carried.dropped
            out.append(
                f"patches of {self.carried.source}: {len(kept)} carried to {rev.version}, {len(dropped)} not applicable"
            )
            out += [f"  carried {p.pointer}: {p.reason}" for p in kept]
            out += [f"  not carried {p.pointer}: {why}" for p, why in dropped]
        out += [f"  overlay: {note}" for note in self.overlay_notes]
        out += [f"  schema: {note}" for note in self.unread]
        for patch, why in self.own_patches_failing:
            out.append(
                f"  patch {patch.pointer} of {rev.version} no longer applies: {why}; "
                f"removed from patches/{rev.version}.json"
            )
        return out


def previous_of_era(lock: Lock, version: str, era: Era) -> str | None:
    """The revision whose patches a new one inherits: the latest earlier one of its era, else the latest."""
    same = sorted(v for v, r in lock.revisions.items() if r.era == era and v != version)
    earlier = [v for v in same if v < version]
    candidates = earlier or same
    return candidates[-1] if candidates else None


def analysed(lock: Lock, rev: LockedRevision, data: bytes, patches: tuple[Patch, ...]) -> Protocol:
    """Analyse the candidate as the lock would hold it; a schema with no methods is refused."""
    schema = parse_schema(data, rev, patches)
    overlay = overlay_for(lock.schema_dir)
    check_log_levels(schema.document, schema.container, rev.version, overlay)
    protocol = analyze_schema(schema, overlay).protocol
    if not protocol.methods:
        raise GeneratorError("the schema defines no MCP methods", version=rev.version)
    return protocol


def validate(data: bytes, version: str) -> tuple[dict[str, object], str]:
    """The document and its definitions container, when it is a valid JSON Schema with the MCP
    core definitions."""
    document, container = parse_document(data, version)
    check_json_schema(document, version)
    check_references(document, container, version)  # refused here, not at the first generation
    check_supported(document, container, version)
    missing = [name for name in CORE_DEFINITIONS if name not in document[container]]
    if missing:
        raise GeneratorError(
            f"not an MCP schema: it lacks the core definition(s) {', '.join(missing)}",
            version=version,
            hint="--from must hold an MCP revision's schema.json",
        )
    return document, container


def adopt(schema_dir: Path, source: str, version: str, era: Era | None) -> Adoption:
    """Adopt ``version`` from ``source`` into the lock in ``schema_dir`` (a new revision or new bytes)."""
    check_version(version)
    lock = load_lock(schema_dir)
    data, origin = fetch(source_location(source, version))
    document, container = validate(data, version)
    old = lock.revisions.get(version)
    candidates: tuple[Era, ...] = (era,) if era else (old.era,) if old else ERAS
    own = patch_file(schema_dir, version)
    carried: Carried | None = None
    failing: tuple[tuple[Patch, str], ...] = ()
    if own.exists():
        mine = load_patches(own)
        result = carry(document, version, mine)
        patches, failing = result.kept, result.dropped
    else:
        patches = ()
    for candidate in candidates:
        rev = LockedRevision(version, candidate, sha256_hex(data), len(data), origin)
        if not own.exists():
            inherit = previous_of_era(lock, version, candidate)
            carried = carry(document, inherit, load_patches(patch_file(schema_dir, inherit))) if inherit else None
            patches = carried.kept if carried else ()
        try:
            protocol = analysed(lock, rev, data, patches)
        except EraMismatch:
            if candidate == candidates[-1]:
                raise
            continue
        break
    if old is not None and old.era != rev.era:
        raise GeneratorError(f"the lock says era {old.era!r}, the new bytes are {rev.era!r}", version=version)
    changes = replaced_changes(lock, old, rev, data) if old is not None and old.sha256 != rev.sha256 else ()
    schema_path = lock.schema_path(version)
    atomic_write(schema_path, data)
    if carried is not None and carried.kept:
        atomic_write(patch_file(schema_dir, version), dump_patches(carried.kept).encode())
    if failing:  # its own patches that no longer apply go, as carried ones do: every generation refused them
        if patches:
            atomic_write(own, dump_patches(patches).encode())
        else:
            own.unlink()
    atomic_write(lock.path, lock_text(lock, {**lock.revisions, version: rev}))
    previous = previous_of_era(lock, version, rev.era)
    overlay = overlay_for(schema_dir)
    notes = overlay_notes(overlay, previous, version) if previous and old is None else ()
    if old is None:
        notes += tuple(undescribed_capabilities(document, container, overlay))
    unread = tuple(unread_filter_members(document, container, protocol)) if old is None else ()
    return Adoption(rev, len(protocol.methods), carried, failing, notes, old, changes, unread)


def replaced_changes(lock: Lock, old: LockedRevision, new: LockedRevision, data: bytes) -> tuple[str, ...]:
    """What ``mcp-codegen diff`` says of the bytes the lock held for a revision against the new
    ones (they are overwritten, so it is said now, or never); without the old bytes (not synced,
    or changed by hand), a line saying so."""
    from mcp_schema_codegen.commands.diff import diff_sides, render_text, side_from_bytes, side_from_revision

    overlay = overlay_for(lock.schema_dir)
    try:
        before = side_from_revision(lock, old.version, overlay)
    except GeneratorError as exc:
        return (f"(no diff: the bytes replaced could not be read: {exc.message})",)
    after = side_from_bytes(new.version, data, new, overlay)
    lines = render_text(diff_sides(before, after)).splitlines()[2:]  # past the ---/+++ labels
    return ("changes against the bytes replaced:", *(f"  {line}" for line in lines))


def unread_filter_members(document: dict[str, object], container: str, protocol: Protocol) -> list[str]:
    """The ``SubscriptionFilter`` members whose notification the schema does not name (by a
    ``{@link}`` or a quoted method in the member's description): no server honours them."""
    defs = document[container]
    node = defs.get("SubscriptionFilter") if isinstance(defs, dict) else None
    members = node.get("properties") if isinstance(node, dict) else None
    read = {name for name, _, _ in protocol.subscription_filter}
    return [
        f"SubscriptionFilter.{name} names no notification the server sends (or is no flag nor URI list): "
        "it is never honoured"
        for name in (members if isinstance(members, dict) else {})
        if name not in read
    ]


def overlay_notes(overlay: Overlay, previous: str, version: str) -> tuple[str, ...]:
    """The facts ``schema/overlay.json`` lists for ``previous`` and not for ``version`` (a new
    revision): said at adoption, since nothing carries them (a deprecation may have been lifted,
    a transport rule changed); each is a line to review in the overlay."""
    notes = []
    kinds = (
        ("methods", overlay.deprecated_methods),
        ("definitions", overlay.deprecated_definitions),
        ("fields", overlay.deprecated_fields),
    )
    for kind, by_version in kinds:
        if by_version.get(previous) and not by_version.get(version):
            names = sorted(by_version[previous])
            notes.append(f"deprecated {kind} of {previous} are not listed for {version}: {', '.join(names)}")
    for key, versions in (("sse_priming", overlay.sse_priming), ("headerless_http", overlay.headerless_http)):
        if previous in versions and version not in versions:
            notes.append(f"{key} lists {previous}, not {version}")
    if previous in overlay.resource_not_found and version not in overlay.resource_not_found:
        notes.append(
            f"resource_not_found gives {previous} {overlay.resource_not_found[previous]}, {version} the default -32602"
        )
    return tuple(notes)
