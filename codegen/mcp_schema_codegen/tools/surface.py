"""What changed between two tool surfaces, each change classified breaking or compatible.

One classifier for both sides of the wire: ``mcp-codegen client --check`` (a server's
surface against the snapshot a typed client was generated from) and the server-side
``check`` (declared tools against their checked-in schemas) call :func:`diff_tools`.

The rule is variance. Arguments flow to the server, so a schema that accepts less than
before breaks callers (tool removed, argument removed, new required argument, type
narrowed, enum value removed, a bound tightened); accepting more is compatible. Structured
output flows to the client, so the reverse: a field removed or made optional, a type
widened or an enum value added break the code that reads it. Descriptions, titles,
defaults and annotations are compatible changes. A change the classifier cannot reason
about (``not``, ``if``/``then``, a changed pattern) counts as breaking.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mcp_schema_codegen.pointer import MISSING, lookup

JSON = Any
Severity = Literal["breaking", "compatible"]
Position = Literal["input", "output"]
Relation = Literal["narrowed", "widened", "changed", "annotation"]

BREAKS: dict[Position, frozenset[Relation]] = {
    "input": frozenset({"narrowed", "changed"}),
    "output": frozenset({"widened", "changed"}),
}
ANNOTATIONS = ("description", "title", "default", "examples")
# keywords compared as they are: a change is reported ``changed`` (breaking), not classified
# (``prefixItems``, ``multipleOf``... changed and nothing was said: ``--check`` passed them)
UNCLASSIFIABLE = (
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "pattern",
    "patternProperties",
    "propertyNames",
    "prefixItems",
    "contains",
    "minContains",
    "maxContains",
    "multipleOf",
    "uniqueItems",
    "unevaluatedItems",
    "unevaluatedProperties",
)
MAX_DEPTH = 64


@dataclass(frozen=True, order=True)
class Change:
    """One difference: ``breaking: tool 'get-sum': new required argument 'c'``."""

    severity: Severity
    subject: str  # "tool 'x'", "prompt 'y'", "resource template 'z'", "server"
    message: str

    @property
    def breaking(self) -> bool:
        return self.severity == "breaking"

    def __str__(self) -> str:
        return f"{self.severity}: {self.subject}: {self.message}"


def show(value: JSON) -> str:
    """A JSON value for a message (one line, bounded)."""
    text = json.dumps(value, ensure_ascii=True, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def canonical(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def _refers(value: JSON) -> bool:
    """``value`` holds a ``$ref`` (whose target may differ between two schemas of equal text)."""
    if isinstance(value, dict):
        return isinstance(value.get("$ref"), str) or any(_refers(v) for v in value.values())
    if isinstance(value, list):
        return any(_refers(v) for v in value)
    return False


# -- tools ----------------------------------------------------------------------------------


def diff_tools(old: Sequence[Mapping[str, JSON]], new: Sequence[Mapping[str, JSON]]) -> list[Change]:
    """Every change between two ``tools/list`` results (the ``tools`` arrays), sorted."""
    before = {str(t.get("name")): t for t in old}
    after = {str(t.get("name")): t for t in new}
    changes: list[Change] = []
    for name in sorted(before.keys() - after.keys()):
        changes.append(Change("breaking", f"tool {name!r}", "removed"))
    for name in sorted(after.keys() - before.keys()):
        changes.append(Change("compatible", f"tool {name!r}", "added"))
    for name in sorted(before.keys() & after.keys()):
        changes.extend(diff_tool(before[name], after[name]))
    return sorted(changes)


def diff_tool(old: Mapping[str, JSON], new: Mapping[str, JSON]) -> list[Change]:
    subject = f"tool {str(old.get('name'))!r}"
    changes = [
        Change(_severity(rel, "input"), subject, msg)
        for rel, msg in compare(old.get("inputSchema", {}), new.get("inputSchema", {}), "input")
    ]
    old_out, new_out = old.get("outputSchema"), new.get("outputSchema")
    if old_out is not None and new_out is None:
        changes.append(Change("breaking", subject, "output schema removed (no more structured output)"))
    elif old_out is None and new_out is not None:
        changes.append(Change("compatible", subject, "output schema added"))
    elif old_out is not None:
        changes.extend(
            Change(_severity(rel, "output"), subject, msg) for rel, msg in compare(old_out, new_out, "output")
        )
    old_task = _task_support(old)
    new_task = _task_support(new)
    if old_task != new_task:
        severity: Severity = "breaking" if new_task == "required" else "compatible"
        changes.append(Change(severity, subject, f"task support {old_task} -> {new_task}"))
    for key in sorted((old.keys() | new.keys()) - {"name", "inputSchema", "outputSchema", "execution"}):
        if canonical(old.get(key)) != canonical(new.get(key)):
            changes.append(Change("compatible", subject, f"{key} changed"))
    if canonical(_without(old.get("execution"), "taskSupport")) != canonical(
        _without(new.get("execution"), "taskSupport")
    ):
        changes.append(Change("compatible", subject, "execution changed"))
    return changes


def _task_support(tool: Mapping[str, JSON]) -> str:
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) else "forbidden"


def _without(value: JSON, key: str) -> JSON:
    if value is None:
        return {}
    return {k: v for k, v in value.items() if k != key} if isinstance(value, dict) else value


def _severity(relation: Relation, position: Position) -> Severity:
    return "breaking" if relation in BREAKS[position] else "compatible"


# -- prompts and resource templates -----------------------------------------------------------


def diff_prompts(old: Sequence[Mapping[str, JSON]], new: Sequence[Mapping[str, JSON]]) -> list[Change]:
    before = {str(p.get("name")): p for p in old}
    after = {str(p.get("name")): p for p in new}
    changes: list[Change] = []
    for name in sorted(before.keys() - after.keys()):
        changes.append(Change("breaking", f"prompt {name!r}", "removed"))
    for name in sorted(after.keys() - before.keys()):
        changes.append(Change("compatible", f"prompt {name!r}", "added"))
    for name in sorted(before.keys() & after.keys()):
        subject = f"prompt {name!r}"
        args_before = _arguments(before[name])
        args_after = _arguments(after[name])
        for arg in sorted(args_before.keys() - args_after.keys()):
            changes.append(Change("breaking", subject, f"argument {arg!r} removed"))
        for arg in sorted(args_after.keys() - args_before.keys()):
            if _required_argument(args_after[arg]):
                changes.append(Change("breaking", subject, f"new required argument {arg!r}"))
            else:
                changes.append(Change("compatible", subject, f"new optional argument {arg!r}"))
        for arg in sorted(args_before.keys() & args_after.keys()):
            was, now = _required_argument(args_before[arg]), _required_argument(args_after[arg])
            if now and not was:
                changes.append(Change("breaking", subject, f"argument {arg!r} is now required"))
            elif was and not now:
                changes.append(Change("compatible", subject, f"argument {arg!r} is now optional"))
            if canonical(_without(args_before[arg], "required")) != canonical(_without(args_after[arg], "required")):
                changes.append(Change("compatible", subject, f"argument {arg!r} description changed"))
        for key in sorted((before[name].keys() | after[name].keys()) - {"name", "arguments"}):
            if canonical(before[name].get(key)) != canonical(after[name].get(key)):
                changes.append(Change("compatible", subject, f"{key} changed"))
    return sorted(changes)


def _arguments(prompt: Mapping[str, JSON]) -> dict[str, dict[str, JSON]]:
    args = prompt.get("arguments")
    if not isinstance(args, list):
        return {}
    return {str(a.get("name")): a for a in args if isinstance(a, dict)}


def _required_argument(argument: Mapping[str, JSON]) -> bool:
    return argument.get("required") is True


def diff_templates(old: Sequence[Mapping[str, JSON]], new: Sequence[Mapping[str, JSON]]) -> list[Change]:
    before, after = _template_keys(old), _template_keys(new)
    changes: list[Change] = []
    for key in sorted(before.keys() - after.keys()):
        changes.append(Change("breaking", f"resource template {key!r}", "removed"))
    for key in sorted(after.keys() - before.keys()):
        changes.append(Change("compatible", f"resource template {key!r}", "added"))
    for key in sorted(before.keys() & after.keys()):
        subject = f"resource template {key!r}"
        was, now = before[key], after[key]
        if was.get("uriTemplate") != now.get("uriTemplate"):
            changes += _template_change(subject, was.get("uriTemplate"), now.get("uriTemplate"))
        for field in sorted((was.keys() | now.keys()) - {"name", "uriTemplate"}):
            if canonical(was.get(field)) != canonical(now.get(field)):
                changes.append(Change("compatible", subject, f"{field} changed"))
    return sorted(changes)


EXPRESSION = re.compile(r"(\{[^{}]*\})")


def _template_change(subject: str, old: JSON, new: JSON) -> list[Change]:
    """A URI template changed: only optional query variables added (names appended to a query
    expression, ``{?units}`` -> ``{?units,lang}``, or query expressions appended at the end) is
    compatible: the old client leaves them out and builds the URIs it built. Anything else (an
    expression moved, another operator or modifier) changes the URIs it builds."""
    described = f"URI template {show(old)} -> {show(new)}"
    added = _query_variables_added(old, new) if isinstance(old, str) and isinstance(new, str) else None
    if added:
        return [Change("compatible", subject, f"{described} (optional {', '.join(added)} added)")]
    return [Change("breaking", subject, described)]


def _query_variables_added(old: str, new: str) -> list[str] | None:
    """The variables ``new`` adds to ``old`` in query expressions only, or None when it changes more."""
    was, now = EXPRESSION.split(old), EXPRESSION.split(new)
    # split: literal, expression, literal, ...; appended query expressions sit at the end of ``new``
    while len(now) > len(was) and now[-1] == "" and len(now) >= 3 and now[-2][1:2] in ("?", "&"):
        now = now[:-2]
    if len(now) != len(was):
        return None
    added: list[str] = []
    for index, (a, b) in enumerate(zip(was, now, strict=True)):
        if a == b:
            continue
        if index % 2 == 0 or a[1:2] not in ("?", "&") or a[1:2] != b[1:2]:
            return None  # a literal changed, or an expression that is no query one, or its operator
        names_was, names_now = a[2:-1].split(","), b[2:-1].split(",")
        if names_now[: len(names_was)] != names_was:
            return None  # a variable removed, renamed or given another modifier
        added += names_now[len(names_was) :]
    added += [name for expr in EXPRESSION.split(new)[len(now) :: 2] for name in expr[2:-1].split(",") if expr]
    return added or None


def _template_keys(templates: Sequence[Mapping[str, JSON]]) -> dict[str, Mapping[str, JSON]]:
    """Templates by name; a name used twice is told apart by its URI template."""
    names = [str(t.get("name")) for t in templates]
    keyed = {}
    for template, name in zip(templates, names, strict=True):
        key = name if names.count(name) == 1 else f"{name} {template.get('uriTemplate')}"
        keyed[key] = template
    return keyed


# -- schemas --------------------------------------------------------------------------------


def compare(old: JSON, new: JSON, position: Position) -> list[tuple[Relation, str]]:
    """How ``new`` differs from ``old``, as (relation, message) pairs."""
    return _Comparison(old, new, position).run()


class _Comparison:
    def __init__(self, old_root: JSON, new_root: JSON, position: Position) -> None:
        self.old_root = old_root
        self.new_root = new_root
        self.position = position
        self.found: list[tuple[Relation, str]] = []
        self.visiting: set[tuple[str, str]] = set()
        self.depth = 0
        # equal text is an equal schema only when every $ref in it means the same on both sides
        self.same_definitions = all(
            canonical(old_root.get(key)) == canonical(new_root.get(key))
            for key in ("$defs", "definitions")
            if isinstance(old_root, dict) and isinstance(new_root, dict)
        ) and isinstance(old_root, dict) == isinstance(new_root, dict)

    def run(self) -> list[tuple[Relation, str]]:
        self.schema(self.old_root, self.new_root, ())
        unique = list(dict.fromkeys(self.found))
        return unique

    # -- naming what changed ---------------------------------------------------------------

    def where(self, path: tuple[str, ...]) -> str:
        if not path:
            return "input" if self.position == "input" else "output"
        dotted = ".".join(path)
        return f"argument {dotted!r}" if self.position == "input" else f"output field {dotted!r}"

    def add(self, relation: Relation, path: tuple[str, ...], what: str) -> None:
        self.found.append((relation, f"{self.where(path)}: {what}"))

    def event(self, relation: Relation, message: str) -> None:
        self.found.append((relation, message))

    # -- the walk --------------------------------------------------------------------------

    def schema(self, old: JSON, new: JSON, path: tuple[str, ...]) -> None:
        if self.depth > MAX_DEPTH:
            return  # a recursive schema reached through anyOf: compared as far as this
        self.depth += 1
        try:
            self._deref_and_compare(old, new, path)
        finally:
            self.depth -= 1

    def _deref_and_compare(self, old: JSON, new: JSON, path: tuple[str, ...]) -> None:
        old, old_ref = self.deref(old, self.old_root)
        new, new_ref = self.deref(new, self.new_root)
        if old_ref or new_ref:
            key = (str(old_ref), str(new_ref))
            if key in self.visiting:
                return  # recursion: this pair is being compared further up
            self.visiting.add(key)
            try:
                self._schema(old, new, path)
            finally:
                self.visiting.discard(key)
            return
        self._schema(old, new, path)

    def _schema(self, old: JSON, new: JSON, path: tuple[str, ...]) -> None:
        if canonical(old) == canonical(new) and (self.same_definitions or not _refers(old)):
            return
        old, new = _merge_all_of(_as_schema(old)), _merge_all_of(_as_schema(new))
        for key in ANNOTATIONS:
            if canonical(old.get(key)) != canonical(new.get(key)):
                if key == "default":
                    self.add("annotation", path, f"default {_shown(old, key)} -> {_shown(new, key)}")
                else:
                    self.add("annotation", path, f"{key} changed")
        for key in UNCLASSIFIABLE:
            if canonical(old.get(key)) != canonical(new.get(key)):
                relation: Relation = "changed"
                if key == "pattern" and key not in new:
                    relation = "widened"
                elif key == "pattern" and key not in old:
                    relation = "narrowed"
                self.add(relation, path, f"{key!r} changed")
        self.alternatives(_alternatives(old, self.old_root), _alternatives(new, self.new_root), path)

    def alternatives(self, old: list[dict[str, JSON]], new: list[dict[str, JSON]], path: tuple[str, ...]) -> None:
        """Pair the alternatives (one JSON type each) of the two sides; compare each pair."""
        unmatched_new = list(new)
        pairs: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
        unmatched_old: list[dict[str, JSON]] = []
        remaining = []
        for alt in old:  # the same alternative on both sides first, wherever it moved (a reorder is no change)
            text = canonical(alt)
            same = next((n for n in unmatched_new if canonical(n) == text), None)
            if same is None:
                remaining.append(alt)
            else:
                unmatched_new.remove(same)
                pairs.append((alt, same))  # compared still: a $ref in it may name another definition
        for alt in remaining:
            match = next((n for n in unmatched_new if _type(n) == _type(alt)), None)
            if match is None:
                unmatched_old.append(alt)
            else:
                unmatched_new.remove(match)
                pairs.append((alt, match))
        for alt in list(unmatched_old):  # integer <-> number
            partner = {"integer": "number", "number": "integer"}.get(_type(alt) or "")
            if partner is None:  # (None would pair it with an untyped alternative: "narrowed" for a widening)
                continue
            match = next((n for n in unmatched_new if _type(n) == partner), None)
            if match is not None:
                unmatched_old.remove(alt)
                unmatched_new.remove(match)
                relation: Relation = "widened" if _type(alt) == "integer" else "narrowed"
                self.add(
                    relation,
                    path,
                    f"type {'widened' if relation == 'widened' else 'narrowed'}: {_type(alt)} -> {partner}",
                )
                pairs.append((alt, match))
        old_any = [a for a in unmatched_old if _type(a) is None]
        new_any = [a for a in unmatched_new if _type(a) is None]
        if old_any:  # "anything" became specific types
            self.add("narrowed", path, f"type narrowed: any -> {_types(new)}")
            unmatched_old, unmatched_new = [], []
        elif new_any:
            self.add("widened", path, f"type widened: {_types(old)} -> any")
            unmatched_old, unmatched_new = [], []
        if unmatched_old:
            self.add("narrowed", path, f"type narrowed: {_types(unmatched_old)} no longer accepted")
        if unmatched_new:
            self.add("widened", path, f"type widened: {_types(unmatched_new)} now accepted")
        for was, now in pairs:
            self.one_type(was, now, path)

    def one_type(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        self.values(old, new, path)
        self.bounds(old, new, path)
        if canonical(old.get("format")) != canonical(new.get("format")):
            if "format" not in new:
                self.add("widened", path, f"format {show(old.get('format'))} dropped")
            elif "format" not in old:
                self.add("narrowed", path, f"format {show(new.get('format'))} added")
            else:
                self.add("changed", path, f"format {show(old.get('format'))} -> {show(new.get('format'))}")
        kind = _type(old) or _type(new)
        if kind == "array" or "items" in old or "items" in new:
            self.schema(
                old.get("items", True), new.get("items", True), (*path[:-1], path[-1] + "[]") if path else ("[]",)
            )
        if kind == "object" or "properties" in old or "properties" in new:
            self.object(old, new, path)

    def values(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        was, now = _allowed_values(old), _allowed_values(new)
        if was == now:
            return
        if was is None and now is not None:
            self.add("narrowed", path, f"now limited to {show([json.loads(v) for v in sorted(now)])}")
            return
        if was is not None and now is None:
            self.add("widened", path, "no longer limited to an enum")
            return
        assert was is not None and now is not None
        for value in sorted(was - now):
            self.add("narrowed", path, f"enum value {value} removed")
        for value in sorted(now - was):
            self.add("widened", path, f"enum value {value} added")

    def bounds(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        for lower, upper in (
            ("minimum", "maximum"),
            ("exclusiveMinimum", "exclusiveMaximum"),
            ("minLength", "maxLength"),
            ("minItems", "maxItems"),
            ("minProperties", "maxProperties"),
        ):
            for key, tighter in ((lower, 1), (upper, -1)):
                was, now = _number(old.get(key)), _number(new.get(key))
                if was == now:
                    continue
                if was is None:
                    relation: Relation = "narrowed"
                elif now is None:
                    relation = "widened"
                else:
                    relation = "narrowed" if (now - was) * tighter > 0 else "widened"
                self.add(relation, path, f"{key} {show(old.get(key))} -> {show(new.get(key))}")

    def object(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        old_props, new_props = _properties(old), _properties(new)
        old_req, new_req = set(_required(old)), set(_required(new))
        old_closed = old.get("additionalProperties") is False
        inp = self.position == "input"
        for name in sorted(old_props.keys() - new_props.keys()):
            self.event("narrowed" if inp else "widened", f"{self.where((*path, name))} removed")
        for name in sorted(new_props.keys() - old_props.keys()):
            where = self.where((*path, name))
            if inp:
                if name in new_req:
                    self.event("narrowed", f"new required {where}")
                else:
                    self.event("widened", f"new optional {where}")
            elif old_closed:
                self.event("widened", f"{where} added where no other fields were allowed")
            else:
                self.event("narrowed", f"{where} added")
        for name in sorted(old_props.keys() & new_props.keys()):
            where = self.where((*path, name))
            was, now = name in old_req, name in new_req
            if now and not was:
                self.event("narrowed", f"{where} is now required" if inp else f"{where} is now always present")
            elif was and not now:
                self.event("widened", f"{where} is now optional" if inp else f"{where} made optional")
            self.schema(old_props[name], new_props[name], (*path, name))
        for name in sorted((new_req - old_req) - new_props.keys()):
            self.event("narrowed", f"{self.where((*path, name))} is now required")
        old_extra = old.get("additionalProperties", True)
        new_extra = new.get("additionalProperties", True)
        if canonical(old_extra) != canonical(new_extra):
            if new_extra is False:
                self.add("narrowed", path, "no longer accepts other fields")
            elif old_extra is False:
                self.add("widened", path, "now accepts other fields")
            else:
                self.schema(old_extra, new_extra, (*path, "*"))

    # -- $ref ------------------------------------------------------------------------------

    def deref(self, schema: JSON, root: JSON) -> tuple[JSON, str | None]:
        first: str | None = None
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if not ref.startswith("#") or ref in seen:
                return schema, first or ref
            seen.add(ref)
            first = first or ref
            target = lookup(root, ref[1:])
            if target is MISSING or target is None:
                return schema, first
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings} if isinstance(target, dict) and siblings else target
        return schema, first


def _as_schema(schema: JSON) -> dict[str, JSON]:
    if schema is True or schema is None:
        return {}
    if schema is False:
        return {"not": {}}
    return dict(schema) if isinstance(schema, dict) else {}


def _merge_all_of(schema: dict[str, JSON]) -> dict[str, JSON]:
    """Fold ``allOf`` members' properties and required lists into the schema (objects only)."""
    members = schema.get("allOf")
    if not isinstance(members, list):
        return schema
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for member in members:
        if not isinstance(member, dict):
            continue
        for key, value in member.items():
            if key == "properties" and isinstance(value, dict):
                merged["properties"] = {**(merged.get("properties") or {}), **value}
            elif key == "required" and isinstance(value, list):
                merged["required"] = sorted({*_required(merged), *value})
            else:
                merged.setdefault(key, value)
    return merged


def _alternatives(schema: dict[str, JSON], root: JSON) -> list[dict[str, JSON]]:
    """The schema as alternatives of one JSON type each (``anyOf``/``oneOf``/type lists expanded)."""
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            out: list[dict[str, JSON]] = []
            for member in members:
                resolved = member
                if isinstance(member, dict) and isinstance(member.get("$ref"), str) and member["$ref"].startswith("#"):
                    target = lookup(root, member["$ref"][1:])
                    resolved = target if isinstance(target, dict) else member
                merged = _merge_all_of({**base, **_as_schema(resolved)})
                out.extend(_alternatives(merged, root))
            return out
    types = schema.get("type")
    if isinstance(types, list):
        return [{**schema, "type": t} for t in types if isinstance(t, str)] or [schema]
    if isinstance(types, str):
        return [schema]
    inferred = _inferred_types(schema)
    if len(inferred) > 1:
        return [{**schema, "type": t} for t in sorted(inferred)]
    if inferred:
        return [{**schema, "type": next(iter(inferred))}]
    return [schema]


def _inferred_types(schema: Mapping[str, JSON]) -> set[str]:
    values = _allowed_values(schema)
    if values is not None:
        return {_json_type(json.loads(v)) for v in values}
    if "properties" in schema or "additionalProperties" in schema:
        return {"object"}
    if "items" in schema:
        return {"array"}
    return set()


def _json_type(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _type(alternative: Mapping[str, JSON]) -> str | None:
    kind = alternative.get("type")
    return kind if isinstance(kind, str) else None


def _types(alternatives: Iterable[Mapping[str, JSON]]) -> str:
    return ", ".join(sorted({_type(a) or "any" for a in alternatives}))


def _allowed_values(schema: Mapping[str, JSON]) -> set[str] | None:
    """The enum (or const) as canonical JSON texts, or None when not limited."""
    if "const" in schema:
        return {canonical(schema["const"])}
    values = schema.get("enum")
    if isinstance(values, list):
        return {canonical(v) for v in values}
    return None


def _number(value: JSON) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _properties(schema: Mapping[str, JSON]) -> dict[str, JSON]:
    properties = schema.get("properties")
    return properties if isinstance(properties, dict) else {}


def _required(schema: Mapping[str, JSON]) -> list[str]:
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _shown(schema: Mapping[str, JSON], key: str) -> str:
    return show(schema[key]) if key in schema else "(none)"


# -- whole snapshots ------------------------------------------------------------------------


def diff_surface(old: Mapping[str, JSON], new: Mapping[str, JSON]) -> list[Change]:
    """Two snapshots (their JSON form): tools, prompts, templates, and what they were taken with."""
    changes = [
        *diff_tools(old.get("tools") or [], new.get("tools") or []),
        *diff_prompts(old.get("prompts") or [], new.get("prompts") or []),
        *diff_templates(old.get("resourceTemplates") or [], new.get("resourceTemplates") or []),
    ]
    if old.get("protocolVersion") != new.get("protocolVersion"):
        changes.append(
            Change(
                "compatible",
                "server",
                f"protocol revision {show(old.get('protocolVersion'))} -> {show(new.get('protocolVersion'))}",
            )
        )
    old_info, new_info = old.get("serverInfo") or {}, new.get("serverInfo") or {}
    for key in sorted(old_info.keys() | new_info.keys()):
        if canonical(old_info.get(key)) != canonical(new_info.get(key)):
            changes.append(
                Change("compatible", "server", f"{key} {show(old_info.get(key))} -> {show(new_info.get(key))}")
            )
    if canonical(old.get("clientCapabilities")) != canonical(new.get("clientCapabilities")):
        changes.append(Change("compatible", "server", "snapshot taken with other client capabilities"))
    return sorted(changes)
