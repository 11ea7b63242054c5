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
about (``not``, ``if``/``then``, a changed pattern, draft-07's tuple ``items`` and
``dependencies``, a ``$ref`` it does not follow while the definitions changed, what lies deeper
than ``MAX_DEPTH``) counts as breaking; any other keyword that differs is reported as an
annotation, so ``--fail-on any`` sees every difference. ``allOf`` members are folded into one
schema (a ``$ref`` member resolved, bounds met at the tighter; what cannot be folded is compared
as it is), ``$ref`` siblings apply with their target, and ``oneOf`` against ``anyOf`` is a
narrowing (exactly one alternative may match).
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
    # draft-07 (zod-to-json-schema's default, so TypeScript servers'), and resolution keywords
    "dependencies",
    "additionalItems",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
)
# keywords the walk reads itself; any other that differs is reported as an annotation (JSON
# Schema ignores unknown keywords, and ``deprecated``, ``readOnly``... do not validate), so
# ``--fail-on any`` sees it
WALKED = frozenset(
    {
        *ANNOTATIONS,
        *UNCLASSIFIABLE,
        "type",
        "enum",
        "const",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "items",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
    }
)
# allOf members' bounds meet at the tighter one
TIGHTER = {
    **dict.fromkeys(("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties"), min),
    **dict.fromkeys(("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties"), max),
}
REF = "\x00ref"  # on an alternative resolved from a $ref member: the reference, for the recursion guard
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
        self.compared: set[tuple[str, str]] = set()  # pairs of nodes with a $ref compared whole already
        self.depth = 0
        # equal text is an equal schema only when every $ref in it means the same on both sides
        self.same_definitions = all(
            canonical(old_root.get(key)) == canonical(new_root.get(key))
            for key in ("$defs", "definitions")
            if isinstance(old_root, dict) and isinstance(new_root, dict)
        ) and isinstance(old_root, dict) == isinstance(new_root, dict)

    def run(self) -> list[tuple[Relation, str]]:
        _FOLDED.clear()
        try:
            self.schema(self.old_root, self.new_root, ())
        finally:
            _FOLDED.clear()
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
        if self.depth > MAX_DEPTH:  # compared as a whole below this (a change past it went unseen)
            if canonical(old) != canonical(new) or not (self.same_definitions or not _refers(old)):
                self.add("changed", path, f"changed, nested deeper than {MAX_DEPTH} levels")
            return
        self.depth += 1
        try:
            self._deref_and_compare(old, new, path)
        finally:
            self.depth -= 1

    def _deref_and_compare(self, old: JSON, new: JSON, path: tuple[str, ...]) -> None:
        whole = (canonical(old), canonical(new))  # the nodes as written here, siblings and all
        if whole in self.compared:
            return  # compared whole at another path (a change in a shared definition: reported there)
        old, old_ref = self.deref(old, self.old_root)
        new, new_ref = self.deref(new, self.new_root)
        unresolved = [s["$ref"] for s, root in ((old, self.old_root), (new, self.new_root)) if _unfollowable(s, root)]
        if unresolved and not self.same_definitions:  # what it names may have changed unseen
            self.add("changed", path, f"$ref {show(unresolved[0])} not followed, and the definitions changed")
        key: tuple[str, str] | None = None
        if old_ref or new_ref:
            key = (str(old_ref), str(new_ref))
        elif (
            isinstance(old, dict) and isinstance(new, dict) and (_refers(old.get("allOf")) or _refers(new.get("allOf")))
        ):
            # allOf members that are $refs are folded in: guarded as a $ref is
            key = ("allOf " + canonical(old.get("allOf")), "allOf " + canonical(new.get("allOf")))
        if key is None:
            self._schema(old, new, path)
            return
        if key in self.visiting:
            return  # recursion: this pair is being compared further up
        self.visiting.add(key)
        try:
            self._schema(old, new, path)
        finally:
            self.visiting.discard(key)
        self.compared.add(whole)

    def _schema(self, old: JSON, new: JSON, path: tuple[str, ...]) -> None:
        if canonical(old) == canonical(new) and (self.same_definitions or not _refers(old)):
            return
        if old is False or new is False:  # the schema that accepts nothing
            if old is not False:
                self.add("narrowed", path, "accepts no value any more")
            elif new is not False:
                self.add("widened", path, "accepts values now (it accepted none)")
            return
        old, new = _merge_all_of(_as_schema(old), self.old_root), _merge_all_of(_as_schema(new), self.new_root)
        if ("oneOf" in old) != ("oneOf" in new) and not (  # oneOf: exactly one alternative may match
            _disjoint(_alternatives(old, self.old_root)) and _disjoint(_alternatives(new, self.new_root))
        ):  # (alternatives told apart by a const, as a discriminated union's: the same values either way)
            exclusive = "oneOf" in new
            self.add(
                "narrowed" if exclusive else "widened",
                path,
                "alternatives now exclusive (oneOf)" if exclusive else "alternatives no longer exclusive (anyOf)",
            )
        self.keywords(old, new, path)
        self.alternatives(_alternatives(old, self.old_root), _alternatives(new, self.new_root), path)

    def keywords(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        """What the walk does not split: annotations, keywords compared as they are, others. Of a
        schema, and of each alternative (a pattern inside Optional[...] is an alternative's)."""
        for key in sorted((old.keys() | new.keys()) - WALKED - {REF}):
            if canonical(old.get(key)) != canonical(new.get(key)):
                self.add("annotation", path, f"{key!r} changed")
        tuples = isinstance(old.get("items"), list) or isinstance(new.get("items"), list)
        if tuples and canonical(old.get("items")) != canonical(new.get("items")):  # draft-07 tuples
            self.add("changed", path, "'items' changed")
        if _members(old.get("allOf")) != _members(new.get("allOf")):  # members that could not be folded
            self.add("changed", path, "'allOf' changed")
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

    def alternatives(self, old: list[dict[str, JSON]], new: list[dict[str, JSON]], path: tuple[str, ...]) -> None:
        """Pair the alternatives (one JSON type each) of the two sides; compare each pair."""
        unmatched_new = list(new)
        pairs: list[tuple[dict[str, JSON], dict[str, JSON]]] = []
        unmatched_old: list[dict[str, JSON]] = []
        remaining = []
        texts: dict[str, list[dict[str, JSON]]] = {}  # the new side's alternatives by their text (once each)
        for alt in new:
            texts.setdefault(canonical(alt), []).append(alt)
        for alt in old:  # the same alternative on both sides first, wherever it moved (a reorder is no change)
            same_text = texts.get(canonical(alt))
            if not same_text:
                remaining.append(alt)
            else:
                same = same_text.pop(0)
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
        if old_any:  # "anything" became specific types; what else the untyped side said is compared too
            self.add("narrowed", path, f"type narrowed: any -> {_types(new)}")
            pairs.extend((old_any[0], n) for n in unmatched_new if n is not old_any[0])
            unmatched_old, unmatched_new = [], []
        elif new_any:  # ({"type": "string", "maxLength": 10} -> {"maxLength": 5} narrows strings)
            self.add("widened", path, f"type widened: {_types(old)} -> any")
            pairs.extend((o, new_any[0]) for o in unmatched_old)
            unmatched_old, unmatched_new = [], []
        if unmatched_old:
            self.add("narrowed", path, f"type narrowed: {_types(unmatched_old)} no longer accepted")
        if unmatched_new:
            self.add("widened", path, f"type widened: {_types(unmatched_new)} now accepted")
        for was, now in pairs:
            key = (str(was.get(REF)), str(now.get(REF)))
            if key == ("None", "None"):
                self.one_type(was, now, path)
            elif key not in self.visiting:  # alternatives resolved from $ref members: recursion guarded
                self.visiting.add(key)
                try:
                    self.one_type(was, now, path)
                finally:
                    self.visiting.discard(key)

    def one_type(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        if _type(old) is None and _type(new) is not None and not _structure(old):
            new = {k: v for k, v in new.items() if k not in STRUCTURE}  # "any" (no structure) took these
        elif _type(new) is None and _type(old) is not None and not _structure(new):
            old = {k: v for k, v in old.items() if k not in STRUCTURE}  # (Any, JsonValue: widened, no more)
        self.keywords(old, new, path)
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
        for side, tighter in (("min", 1), ("max", -1)):  # a number's bound: inclusive or exclusive, as one
            was, now = _limit(old, side), _limit(new, side)
            if was == now:
                continue
            if was is None:
                relation: Relation = "narrowed"
            elif now is None:
                relation = "widened"
            elif was[0] != now[0]:
                relation = "narrowed" if (now[0] > was[0]) == (tighter > 0) else "widened"
            else:  # the same value, now exclusive or no longer
                relation = "narrowed" if now[1] else "widened"
            self.add(relation, path, f"{side}imum {_shown_limit(was)} -> {_shown_limit(now)}")
        for lower, upper in (
            ("minLength", "maxLength"),
            ("minItems", "maxItems"),
            ("minProperties", "maxProperties"),
        ):
            for key, tighter in ((lower, 1), (upper, -1)):
                before, after = _number(old.get(key)), _number(new.get(key))
                if before == after:
                    continue
                if before is None:
                    relation = "narrowed"
                elif after is None:
                    relation = "widened"
                else:
                    relation = "narrowed" if (after > before) == (tighter > 0) else "widened"
                self.add(relation, path, f"{key} {show(old.get(key))} -> {show(new.get(key))}")

    def object(self, old: dict[str, JSON], new: dict[str, JSON], path: tuple[str, ...]) -> None:
        old_props, new_props = _properties(old), _properties(new)
        old_req, new_req = set(_required(old)), set(_required(new))
        old_closed = old.get("additionalProperties") is False
        inp = self.position == "input"
        for name in sorted(old_props.keys() - new_props.keys()):
            self.event("narrowed" if inp else "widened", f"{self.where((*path, name))} removed")
        old_extra_schema = old.get("additionalProperties")
        for name in sorted(new_props.keys() - old_props.keys()):
            where = self.where((*path, name))
            if isinstance(old_extra_schema, dict):  # the field was one of the "other fields" before
                if inp and name in new_req:
                    self.event("narrowed", f"new required {where}")
                self.schema(old_extra_schema, new_props[name], (*path, name))
            elif inp:
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
        schema = _single_ref(schema)
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if not (ref == "#" or ref.startswith("#/")) or ref in seen:  # (an $anchor, a URL: not followed)
                return schema, first or ref
            seen.add(ref)
            first = first or ref
            target = lookup(root, ref[1:])
            if target is MISSING or target is None:
                return schema, first
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if isinstance(target, dict) and siblings:  # 2020-12: they apply together (annotations: the siblings')
                schema = _merge_all_of({"allOf": [target, siblings]}, root)
            else:
                schema = _single_ref(target)
        return schema, first


def _as_schema(schema: JSON) -> dict[str, JSON]:
    if schema is True or schema is None:
        return {}
    if schema is False:
        return {"not": {}}
    return dict(schema) if isinstance(schema, dict) else {}


def _unfollowable(schema: JSON, root: JSON) -> bool:
    """``schema`` is a ``$ref`` the walk does not follow: an ``$anchor``, a URL, a missing target."""
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if not isinstance(ref, str):
        return False
    return not (ref == "#" or ref.startswith("#/")) or lookup(root, ref[1:]) is MISSING


def _single_ref(schema: JSON) -> JSON:
    """``{"allOf": [{"$ref": X}], ...}`` (pydantic's field with a description) as ``{"$ref": X, ...}``."""
    if isinstance(schema, dict) and "$ref" not in schema:
        members = schema.get("allOf")
        if isinstance(members, list) and all(isinstance(m, dict) for m in members):
            refs = [m for m in members if set(m) == {"$ref"}]
            notes = [m for m in members if m not in refs and set(m) <= set(ANNOTATIONS)]
            if len(refs) == 1 and len(refs) + len(notes) == len(members):  # (a description as a member)
                folded = {k: v for k, v in schema.items() if k != "allOf"}
                for note in notes:
                    folded.update(note)
                return {**folded, "$ref": refs[0]["$ref"]}
    return schema


_FOLDED: dict[tuple[int, str], dict[str, JSON]] = {}  # definitions folded, for one comparison (_Comparison.run)


def _merge_all_of(schema: dict[str, JSON], root: JSON = None, seen: frozenset[str] = frozenset()) -> dict[str, JSON]:
    """Fold ``allOf`` members into the schema: properties and required lists joined, bounds met at
    the tighter one, integer and number at integer, a member that is a ``$ref`` resolved (once
    along a path), annotations the later member's; what cannot be folded (two enums, other types,
    two different values of a keyword) stays in ``allOf``, compared as it is."""
    members = schema.get("allOf")
    if not isinstance(members, list):
        return schema
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    rest: list[JSON] = []
    conflicts: dict[str, list[JSON]] = {}
    for member in members:
        if isinstance(member, dict) and isinstance(member.get("$ref"), str) and root is not None:
            ref = member["$ref"]
            target = lookup(root, ref[1:]) if ref.startswith("#") and ref not in seen else MISSING
            if not isinstance(target, dict):
                rest.append(member)
                continue
            siblings = {k: v for k, v in member.items() if k != "$ref"}
            if siblings:
                member = _merge_all_of({"allOf": [target, siblings]}, root, seen | {ref})
            else:  # a definition folded once per comparison (a chain of shared ones doubled per level)
                key = (id(root), ref)
                if key not in _FOLDED:
                    _FOLDED[key] = _merge_all_of(target, root, seen | {ref})
                member = _FOLDED[key]
        elif isinstance(member, dict) and "allOf" in member:
            member = _merge_all_of(member, root, seen)
        if not isinstance(member, dict):
            if member is not True:
                rest.append(member)
            continue
        kept: dict[str, JSON] = {}
        for key, value in member.items():
            here = merged.get(key, MISSING)
            if key in conflicts:
                conflicts[key].append(value)
            elif here is MISSING or canonical(here) == canonical(value) or key in ANNOTATIONS:
                merged[key] = value
            elif key == "properties" and isinstance(value, dict) and isinstance(here, dict):
                joined = dict(here)
                for name, sub in value.items():
                    joined[name] = sub if name not in joined else {"allOf": [joined[name], sub]}
                merged[key] = joined
            elif key == "required" and isinstance(value, list):
                merged[key] = sorted({*_required(merged), *(r for r in value if isinstance(r, str))})
            elif key in TIGHTER and _number(here) is not None and _number(value) is not None:
                merged[key] = TIGHTER[key](here, value)
            elif key == "type" and {here, value} == {"integer", "number"}:
                merged[key] = "integer"
            else:  # not folded, whichever member came first: the residual is the same in any order
                conflicts[key] = [merged.pop(key), value]
        if kept:
            rest.append(kept)
    for name, values in conflicts.items():
        rest.extend({name: value} for value in values)
    if rest:
        merged["allOf"] = rest
    return merged


STRUCTURE = ("properties", "required", "additionalProperties", "items", "minProperties", "maxProperties")


def _structure(schema: Mapping[str, JSON]) -> bool:
    """The schema says something about an object's or array's members."""
    return any(key in schema for key in STRUCTURE)


def _members(value: JSON) -> list[str] | None:
    """A residual ``allOf`` as the texts of its members, in no order (all of them apply)."""
    return sorted(canonical(m) for m in value) if isinstance(value, list) else None


def _disjoint(alternatives: list[dict[str, JSON]]) -> bool:
    """No value can match two of the alternatives: objects that all require one property whose
    ``const`` differs in each (a discriminated union); one alternative is disjoint too."""
    if len(alternatives) < 2:
        return True
    if any(_type(a) != "object" for a in alternatives):
        return False
    common = set.intersection(*(set(_required(a)) for a in alternatives))
    for name in sorted(common):
        tags = [_properties(a).get(name) for a in alternatives]
        values = [canonical(_by_value(t["const"])) for t in tags if isinstance(t, dict) and "const" in t]
        if len(values) == len(alternatives) and len(set(values)) == len(values):
            return True
    return False


def _limit(schema: Mapping[str, JSON], side: str) -> tuple[int | float, bool] | None:
    """A number's lower (``min``) or upper (``max``) bound: its value and whether it is exclusive;
    ``minimum`` and ``exclusiveMinimum`` together meet at the tighter."""
    inclusive, exclusive = _number(schema.get(f"{side}imum")), _number(schema.get(f"exclusive{side.title()}imum"))
    if inclusive is None or exclusive is None:
        return (inclusive, False) if inclusive is not None else ((exclusive, True) if exclusive is not None else None)
    if inclusive == exclusive:
        return exclusive, True
    beyond = exclusive > inclusive if side == "min" else exclusive < inclusive
    return (exclusive, True) if beyond else (inclusive, False)


def _shown_limit(limit: tuple[int | float, bool] | None) -> str:
    if limit is None:
        return "null"
    return f"{show(limit[0])}{' (exclusive)' if limit[1] else ''}"


def _alternatives(schema: dict[str, JSON], root: JSON) -> list[dict[str, JSON]]:
    """The schema as alternatives of one JSON type each (``anyOf``/``oneOf``/type lists expanded)."""
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            base = {k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}
            out: list[dict[str, JSON]] = []
            for member in members:
                resolved = _single_ref(member)
                ref = resolved.get("$ref") if isinstance(resolved, dict) else None
                if isinstance(ref, str) and ref.startswith("#"):
                    target = lookup(root, ref[1:])
                    siblings = {k: v for k, v in resolved.items() if k != "$ref"}
                    if isinstance(target, dict):  # marked: a pair of them is compared once along a path
                        resolved = {**_merge_all_of({"allOf": [target, siblings]}, root), REF: ref}
                merged = _merge_all_of({**base, **_as_schema(resolved)}, root)
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
        return {canonical(_by_value(schema["const"]))}
    values = schema.get("enum")
    if isinstance(values, list):
        return {canonical(_by_value(v)) for v in values}
    return None


def _by_value(value: JSON) -> JSON:
    """1.0 as 1: JSON Schema compares numbers by value (Validation 6.1.2)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _number(value: JSON) -> int | float | None:
    """A bound as a number (an int as it is: 10**400 is no float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


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
