"""``mcp-codegen diff A B``: what changed between two schema revisions, semantically.

Both sides go through the same load -> prepass -> analyze steps as generation (without our
patches: the report is about upstream), so legacy inline params and later named params
compare by the same path-derived names. The
report covers the era, methods (added, removed, direction, params/result type, params
requiredness), definitions (added, removed, renamed, matched by structure; a kept one's own
enum values, union branches and other keywords), and fields (added, removed, type,
requiredness).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mcp_schema_codegen.backend.views import RUNTIME_ANSWERED
from mcp_schema_codegen.digest import sha256_hex
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import parse_schema
from mcp_schema_codegen.frontend.lock import Era, Lock, LockedRevision
from mcp_schema_codegen.ir.analyze import Overlay, analyze_schema
from mcp_schema_codegen.ir.protocol import Method, Protocol
from mcp_schema_codegen.jsondata import load_json

JSON = Any


@dataclass(frozen=True)
class Side:
    label: str
    protocol: Protocol
    defs: dict[str, JSON]
    ref_prefix: str  # "#/$defs/" or "#/definitions/"


@dataclass
class FieldChange:
    definition: str
    field: str
    change: str  # "added" | "removed" | "type" | "constraints" | "required"
    old: str | None = None
    new: str | None = None


@dataclass
class DefinitionChange:
    """A kept definition changed outside its fields: an enum value or a union branch added or
    removed, or any other keyword of its own (``shape``: the keywords as JSON)."""

    definition: str
    change: str  # "value added" | "value removed" | "branch added" | "branch removed" | "shape"
    old: str | None = None
    new: str | None = None


@dataclass
class MethodChange:
    method: str
    change: str  # "added" | "removed" | "direction" | "params" | "result" | "params_required" | "kind"
    old: str | bool | None = None  # as the protocol table holds it: JSON writes booleans and null as such
    new: str | bool | None = None


@dataclass
class SchemaDiff:
    old: str
    new: str
    era: tuple[str, str] | None = None
    methods: list[MethodChange] = field(default_factory=list)
    definitions_added: list[str] = field(default_factory=list)
    definitions_removed: list[str] = field(default_factory=list)
    definitions_renamed: list[tuple[str, str]] = field(default_factory=list)
    definitions_changed: list[DefinitionChange] = field(default_factory=list)
    fields: list[FieldChange] = field(default_factory=list)
    required_of_added: dict[str, list[str]] = field(default_factory=dict)
    # what a server whose handler is of ``new`` refuses of ``old``'s clients (``older_clients``)
    breaks_older_clients: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(
            self.era
            or self.methods
            or self.definitions_added
            or self.definitions_removed
            or self.definitions_renamed
            or self.definitions_changed
            or self.fields
        )

    def to_json(self) -> dict[str, JSON]:
        body = asdict(self)
        body["changed"] = self.changed
        return body


def _strip(node: JSON) -> JSON:
    """``node`` as compared: without descriptions and discriminators, and a ``$ref`` without its
    container (a revision that moved from ``definitions`` to ``$defs`` changed no reference)."""
    if isinstance(node, dict):
        return {
            k: _definition_ref(v) if k == "$ref" else _strip(v)
            for k, v in node.items()
            if k not in ("description", "discriminator")
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


UNORDERED = ("anyOf", "oneOf")  # branches whose order changes nothing that validates


def _canonical(node: JSON) -> JSON:
    """A stripped ``node`` with its union branches in one order, to decide whether it changed:
    reordering ``anyOf`` changes nothing that validates (a repeated branch stays: ``oneOf``
    counts it). The report still shows the schema's own order."""
    if isinstance(node, dict):
        return {
            k: sorted((_canonical(b) for b in v), key=lambda b: json.dumps(b, sort_keys=True))
            if k in UNORDERED and isinstance(v, list)
            else _canonical(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_canonical(v) for v in node]
    return node


def _definition_ref(ref: JSON) -> JSON:
    if isinstance(ref, str):
        for container in ("#/$defs/", "#/definitions/"):
            if ref.startswith(container):
                return "#/" + ref.removeprefix(container)
    return ref


def type_text(node: JSON) -> str:
    """A short human form of a property schema: `string`, `RequestId`, `array[ContentBlock]`."""
    if not isinstance(node, dict) or not node:
        return "any"
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    if "const" in node:
        return json.dumps(node["const"])
    if "enum" in node:
        return " | ".join(json.dumps(v) for v in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            return " | ".join(type_text(b) for b in node[key])
    if "allOf" in node:
        return " & ".join(type_text(b) for b in node["allOf"])
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds == ["array"]:
        return f"array[{type_text(node.get('items', {}))}]"
    if kinds == ["object"] and "properties" not in node:
        extra = node.get("additionalProperties")
        return f"map[{type_text(extra)}]" if isinstance(extra, dict) and extra else "object"
    return " | ".join(str(k) for k in kinds) or "any"


def side_from_revision(lock: Lock, version: str, overlay: Overlay) -> Side:
    data, rev = lock.read_schema(version)
    return side_from_bytes(version, data, rev, overlay)


def side_from_file(path: Path, overlay: Overlay) -> Side:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GeneratorError(f"cannot read {path}: {exc.strerror}") from None
    version = path.parent.name if path.name == "schema.json" else path.stem
    document = load_json(data, str(path))
    defs = document.get("$defs") or document.get("definitions") or {} if isinstance(document, dict) else {}
    era: Era = "legacy" if "InitializeRequest" in defs else "modern"
    rev = LockedRevision(version, era, sha256_hex(data), len(data), str(path))
    return side_from_bytes(str(path), data, rev, overlay)


def side_from_bytes(label: str, data: bytes, rev: LockedRevision, overlay: Overlay) -> Side:
    """A side from a schema's bytes, as ``rev`` describes them (no patches applied)."""
    schema = parse_schema(data, rev, ())
    analysed = analyze_schema(schema, overlay)
    return Side(label, analysed.protocol, analysed.document[schema.container], schema.ref_prefix)


def _method_key(m: Method) -> tuple[str, str]:
    return (m.kind, m.name)


def _method_changes(old: Protocol, new: Protocol) -> list[MethodChange]:
    a = {_method_key(m): m for m in old.methods}
    b = {_method_key(m): m for m in new.methods}
    changes = []
    for key in sorted(set(a) | set(b), key=lambda k: (k[0] != "request", k[1])):
        name = key[1]
        if key not in b:
            changes.append(MethodChange(name, "removed", a[key].direction))
        elif key not in a:
            changes.append(MethodChange(name, "added", None, b[key].direction))
        else:
            x, y = a[key], b[key]
            for attr, label in (
                ("direction", "direction"),
                ("params_type", "params"),
                ("result_type", "result"),
                ("params_required", "params_required"),
                ("embedded", "embedded"),
            ):
                if getattr(x, attr) != getattr(y, attr):
                    changes.append(MethodChange(name, label, getattr(x, attr), getattr(y, attr)))
    return changes


def _fields(body: JSON) -> tuple[dict[str, JSON], set[str]]:
    if not isinstance(body, dict):
        return {}, set()
    return dict(body.get("properties") or {}), set(body.get("required") or ())


def _field_changes(name_old: str, name_new: str, old: JSON, new: JSON) -> list[FieldChange]:
    (pa, ra), (pb, rb) = _fields(old), _fields(new)
    changes = []
    label = name_new if name_old == name_new else f"{name_old}->{name_new}"
    for prop in sorted(set(pa) | set(pb)):
        if prop not in pb:
            changes.append(FieldChange(label, prop, "removed", type_text(pa[prop])))
        elif prop not in pa:
            req = "required" if prop in rb else "optional"
            changes.append(FieldChange(label, prop, "added", None, f"{type_text(pb[prop])} ({req})"))
        else:
            if _canonical(_strip(pa[prop])) != _canonical(_strip(pb[prop])):
                old_text, new_text = type_text(pa[prop]), type_text(pb[prop])
                if old_text == new_text:  # same type, other keywords (maxItems, format, minimum...)
                    old_text = json.dumps(_strip(pa[prop]), sort_keys=True)
                    new_text = json.dumps(_strip(pb[prop]), sort_keys=True)
                    changes.append(FieldChange(label, prop, "constraints", old_text, new_text))
                else:
                    changes.append(FieldChange(label, prop, "type", old_text, new_text))
            if (prop in ra) != (prop in rb):
                changes.append(
                    FieldChange(
                        label,
                        prop,
                        "required",
                        "required" if prop in ra else "optional",
                        "required" if prop in rb else "optional",
                    )
                )
    return changes


FIELD_KEYWORDS = ("properties", "required", "title")  # compared field by field (a title is a label)


def _own(body: JSON) -> dict[str, JSON]:
    """A definition's keywords other than its fields, as compared; ``additionalProperties`` that
    allows anything (``true``, ``{}``) is JSON Schema's default, so it is no keyword here."""
    stripped = _strip(body)
    if not isinstance(stripped, dict):
        return {}
    own = {k: v for k, v in stripped.items() if k not in FIELD_KEYWORDS}
    if own.get("additionalProperties") in (True, {}):
        del own["additionalProperties"]
    return own


def _definition_changes(name_old: str, name_new: str, old: JSON, new: JSON) -> list[DefinitionChange]:
    """What changed in a kept definition besides its fields: enum values and union branches one by
    one (a client's exhaustive match breaks on either), anything else as the keywords' JSON."""
    a, b = _own(old), _own(new)
    if _canonical(a) == _canonical(b):
        return []
    label = name_new if name_old == name_new else f"{name_old}->{name_new}"
    changes = []
    for key, what, text in (
        ("enum", "value", json.dumps),
        ("anyOf", "branch", type_text),
        ("oneOf", "branch", type_text),
    ):
        if isinstance(a.get(key), list) and isinstance(b.get(key), list):
            old_members, new_members = a.pop(key), b.pop(key)
            before, after = [text(v) for v in old_members], [text(v) for v in new_members]
            changes += [DefinitionChange(label, f"{what} removed", v) for v in before if v not in after]
            changes += [DefinitionChange(label, f"{what} added", None, v) for v in after if v not in before]
            if changes:
                continue
            if key in UNORDERED:  # branches in another order are the same union; others changed inside
                old_set, new_set = _canonical({key: old_members})[key], _canonical({key: new_members})[key]
                if old_set != new_set:
                    changes.append(
                        DefinitionChange(
                            label, "shape", json.dumps(old_set, sort_keys=True), json.dumps(new_set, sort_keys=True)
                        )
                    )
            elif before != after:  # the same values in another order
                changes.append(DefinitionChange(label, "shape", json.dumps(before), json.dumps(after)))
    if _canonical(a) != _canonical(b):
        changes.append(DefinitionChange(label, "shape", json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True)))
    return changes


def reached(defs: dict[str, JSON], roots: set[str], prefix: str) -> set[str]:
    """Definitions reachable from ``roots`` through ``$ref``s."""
    seen: set[str] = set()
    todo = [r for r in roots if r in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        stack: list[object] = [defs[name]]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.startswith(prefix) and ref[len(prefix) :] in defs:
                    todo.append(ref[len(prefix) :])
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return seen


CONVERSION_SUPPLIES = frozenset({"_meta"})  # what the runtime adds to an older request's params itself


def older_clients(old: Side, new: Side, d: SchemaDiff) -> list[str]:
    """What a server whose handler is written against ``new`` refuses of the requests ``old``'s
    clients send, or cannot answer them in ``old``'s form: the runtime converts each request to
    ``new``'s params (a field ``new`` requires that ``old`` does not is missing: -32602; a method
    ``new`` lacks: -32601) and each result back (a value or union branch ``new`` added has no
    ``old`` form: -32603 when a result uses it). Derived from the diff, per method."""
    notes: list[str] = []
    if new.protocol.version <= old.protocol.version:  # a server of a newer revision, older clients only
        return notes
    after = {m.name: m for m in new.protocol.methods if m.kind == "request"}
    for m in old.protocol.methods:
        if m.kind != "request" or not m.client_sends or m.name in RUNTIME_ANSWERED:
            continue  # (what the runtime answers itself never reaches the handler)
        now = after.get(m.name)
        if now is None or not now.client_sends:
            notes.append(f"{m.name}: {new.label} has no such request: {old.label} clients get -32601")
            continue
        params = new.defs.get(now.params_type) if now.params_type else None
        beyond = set(params.get("required") or ()) - CONVERSION_SUPPLIES if isinstance(params, dict) else set()
        if now.params_required and not m.params_required and beyond:  # (params the conversion makes)
            notes.append(
                f"{m.name}: params are required in {new.label}; {old.label} requests without them are refused (-32602)"
            )
        if now.params_type != m.params_type and now.params_type in d.definitions_added:
            required = d.required_of_added.get(now.params_type)
            if required and set(required) - CONVERSION_SUPPLIES:
                notes.append(
                    f"{m.name}: its params are {now.params_type}, new in {new.label}, which requires "
                    f"{', '.join(required)}; {old.label} requests without them are refused (-32602)"
                )
        sent = reached(new.defs, {now.params_type} if now.params_type else set(), new.ref_prefix)
        for f in d.fields:
            name = f.definition.split("->")[-1]
            if name not in sent or f.field in CONVERSION_SUPPLIES:
                continue
            newly = (f.change == "added" and (f.new or "").endswith("(required)")) or (
                f.change == "required" and f.new == "required"
            )
            if newly:
                notes.append(
                    f"{m.name}: {name}.{f.field} is required in {new.label}; {old.label} requests without it are "
                    "refused (-32602)"
                )
        for c in d.definitions_changed:
            name = c.definition.split("->")[-1]
            if name in sent and c.change in ("value removed", "branch removed"):
                notes.append(
                    f"{m.name}: {name} no longer takes {c.old}; {old.label} requests with it are refused (-32602)"
                )
        answered = reached(new.defs, {now.result_type} if now.result_type else set(), new.ref_prefix)
        for c in d.definitions_changed:
            name = c.definition.split("->")[-1]
            if name in answered and c.change in ("value added", "branch added"):
                notes.append(
                    f"{m.name}: {name} takes {c.new} in {new.label} only; a result holding it has no "
                    f"{old.label} form (-32603 to {old.label} clients)"
                )
    return list(dict.fromkeys(notes))


def diff_sides(old: Side, new: Side) -> SchemaDiff:
    result = SchemaDiff(old.label, new.label)
    if old.protocol.era != new.protocol.era:
        result.era = (old.protocol.era, new.protocol.era)
    result.methods = _method_changes(old.protocol, new.protocol)
    removed = sorted(set(old.defs) - set(new.defs))
    added = sorted(set(new.defs) - set(old.defs))
    for name in list(removed):  # a rename keeps the structure
        shape = json.dumps(_canonical(_strip(old.defs[name])), sort_keys=True)
        twins = [n for n in added if json.dumps(_canonical(_strip(new.defs[n])), sort_keys=True) == shape]
        if len(twins) == 1:
            result.definitions_renamed.append((name, twins[0]))
            removed.remove(name)
            added.remove(twins[0])
    result.definitions_added, result.definitions_removed = added, removed
    for name in added:
        _, required = _fields(new.defs[name])
        if required:
            result.required_of_added[name] = sorted(required)
    pairs = [(n, n) for n in sorted(set(old.defs) & set(new.defs))] + result.definitions_renamed
    for a, b in pairs:
        result.definitions_changed += _definition_changes(a, b, old.defs[a], new.defs[b])
        result.fields += _field_changes(a, b, old.defs[a], new.defs[b])
    result.breaks_older_clients = older_clients(old, new, result)
    return result


def one_line(text: str) -> str:
    """``text`` with the characters that would break or fake a line of a report (line breaks,
    other controls, format characters such as bidirectional overrides) written as escapes: a
    schema's strings are data, and a method named ``'x\n  - tools/call'`` printed a line of its own."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii") for ch in text)


def definition_text(c: DefinitionChange) -> str:
    """What changed in a kept definition, after its name: ``value added "x"``, ``old -> new``."""
    if c.change == "shape":
        return f"{c.old} -> {c.new}"
    return f"{c.change} {c.new if c.old is None else c.old}"


def field_text(f: FieldChange, name: str) -> str:
    """A field change as a line of a report, the field called ``name``."""
    if f.change == "added":
        return f"+ {name}: {f.new}"
    if f.change == "removed":
        return f"- {name} (was {f.old})"
    if f.change == "required":  # "optional -> required", not "required optional -> required"
        return f"~ {name}: {f.old} -> {f.new}"
    return f"~ {name}: {f.change} {f.old} -> {f.new}"


def render_text(d: SchemaDiff) -> str:
    lines = [f"--- {d.old}", f"+++ {d.new}"]
    if d.era:
        lines.append(f"era: {d.era[0]} -> {d.era[1]}")
    if d.methods:
        lines.append("methods:")
        for m in d.methods:
            if m.change == "added":
                lines.append(f"  + {m.method} ({m.new})")
            elif m.change == "removed":
                lines.append(f"  - {m.method} (was {m.old})")
            elif m.change == "embedded" and m.new is True:
                lines.append(f"  - {m.method}: no longer a JSON-RPC request; embedded in InputRequiredResult (MRTR)")
            elif m.change == "embedded":
                lines.append(f"  + {m.method}: now a JSON-RPC request (was embedded)")
            else:
                lines.append(f"  ~ {m.method}: {m.change} {m.old} -> {m.new}")
    if d.definitions_added or d.definitions_removed or d.definitions_renamed or d.definitions_changed:
        lines.append("definitions:")
        for name in d.definitions_added:
            req = d.required_of_added.get(name)
            lines.append(f"  + {name}" + (f" (required: {', '.join(req)})" if req else ""))
        lines += [f"  - {name}" for name in d.definitions_removed]
        lines += [f"  ~ {a} renamed to {b}" for a, b in d.definitions_renamed]
        lines += [f"  ~ {c.definition}: {definition_text(c)}" for c in d.definitions_changed]
    if d.fields:
        lines.append("fields:")
        lines += [f"  {field_text(f, f'{f.definition}.{f.field}')}" for f in d.fields]
    if d.breaks_older_clients:
        lines.append(f"older clients (a server written against {d.new}, asked by {d.old} clients):")
        lines += [f"  ! {note}" for note in d.breaks_older_clients]
    if not d.changed:
        lines.append("no changes")
    return "\n".join(one_line(line) for line in lines)
