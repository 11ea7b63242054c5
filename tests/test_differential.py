"""Differential test: every generated model against `jsonschema` on the original upstream schema.

For each revision and each definition of its *original* (unpatched) schema, a small seeded
generator builds instances from the schema itself, then mutates them (drop a required
property, wrong type, wrong const, ``1.0`` or ``1.5`` or ``true`` for an integer, unknown
extra property, ...). Each instance is judged twice, by the matching ``jsonschema`` validator
and by the generated model (``model_validate_json`` or ``TypeAdapter.validate_json``):

- the verdicts must agree;
- an instance both accept must dump back to exactly the input JSON (``1`` stays ``1``, a key
  is never renamed or added);
- except where a rule of ``differential_disagreements.json`` (the one list of deliberate
  disagreements, each with its reason) explains the difference; every rule must explain at
  least one disagreement in each revision it names (no stale rule).

Instances are deterministic (``random.Random(f"{version}/{definition}")``), so a failure
names an instance that reproduces.

jsonschema's verdicts are kept between runs in pytest's cache (``SchemaVerdicts``), keyed by
jsonschema's and referencing's versions, the digest of the schema document judged against and
the instance's exact JSON text: judging is about half the module's time, and a pure function
of those. The models are judged afresh every run. ``--cache-clear`` judges everything again.

Run ``python tests/test_differential.py`` for the summary figures.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import hashlib
import importlib
import inspect
import json
import math
import os
import random
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import version as distribution_version
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import pytest
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json
from typing_extensions import TypeAliasType

ROOT: Final = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "generated"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from mcpgen._runtime.serializer import dumps as fast_dumps  # noqa: E402

from mcp_schema_codegen.frontend.load import LoadedSchema, load  # noqa: E402
from mcp_schema_codegen.frontend.lock import load_lock  # noqa: E402
from mcp_schema_codegen.frontend.patches import apply_patches  # noqa: E402
from tests.conftest import kept_between_runs  # noqa: E402
from tests.revisions import VERSIONS as LOCKED_VERSIONS  # noqa: E402

JSON = Any
InstancePath = tuple[str | int, ...]

VERSIONS: Final = LOCKED_VERSIONS  # every revision schema/lock.json locks
RULES_FILE: Final = Path(__file__).with_name("differential_disagreements.json")

VALID_PER_DEFINITION: Final = 8
MUTATIONS_PER_DEFINITION: Final = 40
MAX_DEPTH: Final = 4
"""Below this depth optional properties, map entries and array items are no longer generated."""

# datamodel-code-generator renames a definition whose name the module already imports.
RENAMED_DEFINITIONS: Final = {"Annotated": "AnnotatedModel"}  # 2024-11-05 `Annotated` vs typing.Annotated

_DROP: Final = object()
"""Mutation value meaning "delete the key at this path"."""

_STRINGS: Final = ("", "hello", "ünïcødé ✓ 🚀", 'with "quotes" and \\ backslash', "line\nbreak", "1", "true")
_FORMAT_STRINGS: Final = {
    "uri": ("https://example.com/a?b=c", "file:///tmp/x.txt", "urn:isbn:0451450523"),
    "byte": ("", "aGVsbG8=", "AAEC/w=="),
    "uri-template": ("file:///{path}", "https://example.com/{id}"),
}
_INTEGERS: Final = (0, 1, 2, 7, 42, -1, -17, 65535, 2**40)
_FLOATS: Final = (0.5, 0.25, 3.75, -2.5, 0.001, 1e-7, 123.125)
_KEYS: Final = ("alpha", "beta", "x-custom", "io.example/key", "snake_case", "😀")


def _json_type(value: JSON) -> str:
    """The JSON Schema type name of a decoded JSON value (an integral float counts as number here)."""
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
    if isinstance(value, list):
        return "array"
    return "object"


def _allows(types: list[str], value: JSON) -> bool:
    kind = _json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _types(schema: dict[str, JSON]) -> list[str]:
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def _pointer(path: InstancePath) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def canonical(value: JSON) -> str:
    """JSON text that tells ``1`` from ``1.0`` and ``true`` from ``1``, with keys sorted."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# --------------------------------------------------------------------------- instance generation


@dataclass(frozen=True)
class Site:
    """A value the generator produced, with the effective schema it was produced from."""

    path: InstancePath
    schema: dict[str, JSON]  # $ref resolved, allOf merged, the chosen anyOf branch merged in


class InstanceGenerator:
    """Builds JSON instances that satisfy one schema, recording every generated value as a `Site`."""

    def __init__(self, definitions: dict[str, JSON], ref_prefix: str, rng: random.Random) -> None:
        self.definitions = definitions
        self.ref_prefix = ref_prefix
        self.rng = rng

    def generate(self, schema: dict[str, JSON]) -> tuple[JSON, list[Site]]:
        sites: list[Site] = []
        return self._value(schema, (), 0, sites), sites

    # Resolution -----------------------------------------------------------------------------

    def _target(self, ref: str) -> dict[str, JSON]:
        if not ref.startswith(self.ref_prefix):
            raise NotImplementedError(f"unsupported $ref {ref!r}")
        body: dict[str, JSON] = self.definitions[ref.removeprefix(self.ref_prefix)]
        return body

    def effective(self, schema: dict[str, JSON], depth: int) -> dict[str, JSON]:
        """Resolve ``$ref``, merge ``allOf`` and pick one ``anyOf`` branch until none is left."""
        while True:
            if "$ref" in schema:
                rest = {k: v for k, v in schema.items() if k not in ("$ref", "description")}
                target = self._target(schema["$ref"])
                schema = {"allOf": [target, rest]} if rest else target
            elif "allOf" in schema:
                rest = {k: v for k, v in schema.items() if k != "allOf"}
                merged = rest
                for branch in schema["allOf"]:
                    merged = _merge(merged, self.effective(branch, depth))
                schema = merged
            elif "anyOf" in schema:
                rest = {k: v for k, v in schema.items() if k != "anyOf"}
                schema = _merge(rest, self._choose_branch(schema["anyOf"], depth))
            else:
                return schema

    def _choose_branch(self, branches: list[dict[str, JSON]], depth: int) -> dict[str, JSON]:
        if depth >= MAX_DEPTH:  # stop recursion (JSONValue, nested content): prefer a scalar branch
            leaves = [b for b in branches if not {"object", "array"} & set(_types(self._shallow(b)))]
            leaves = [b for b in leaves if "properties" not in self._shallow(b)]
            if leaves:
                return self.rng.choice(leaves)
        return self.rng.choice(branches)

    def _shallow(self, schema: dict[str, JSON]) -> dict[str, JSON]:
        while "$ref" in schema:
            schema = self._target(schema["$ref"])
        return schema

    # Values --------------------------------------------------------------------------------

    def _value(self, schema: dict[str, JSON], path: InstancePath, depth: int, sites: list[Site]) -> JSON:
        eff = self.effective(schema, depth)
        if "const" in eff:
            sites.append(Site(path, eff))
            return copy.deepcopy(eff["const"])
        if "enum" in eff:
            sites.append(Site(path, eff))
            return copy.deepcopy(self.rng.choice(eff["enum"]))
        types = _types(eff)
        if not types:
            if "properties" in eff or "required" in eff:
                types = ["object"]
            elif "items" in eff:
                types = ["array"]
            else:
                return self.any_json(depth)
        sites.append(Site(path, eff))
        kind = self.rng.choice(types)
        if kind == "object":
            return self._object(eff, path, depth, sites)
        if kind == "array":
            return self._array(eff, path, depth, sites)
        if kind == "string":
            return self.rng.choice(_FORMAT_STRINGS.get(eff.get("format", ""), _STRINGS))
        if kind == "integer":
            return self._integer(eff)
        if kind == "number":
            return self._number(eff)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        raise NotImplementedError(f"type {kind!r}")

    def _object(self, eff: dict[str, JSON], path: InstancePath, depth: int, sites: list[Site]) -> dict[str, JSON]:
        properties: dict[str, JSON] = eff.get("properties", {})
        required: list[str] = eff.get("required", [])
        additional = eff.get("additionalProperties")
        out: dict[str, JSON] = {}
        for name, sub in properties.items():
            if name in required or (depth < MAX_DEPTH and self.rng.random() < 0.5):
                out[name] = self._value(sub, (*path, name), depth + 1, sites)
        for name in required:
            if name not in out:  # required but not described: anything the extra-key schema allows
                extra = additional if isinstance(additional, dict) else {}
                out[name] = self._value(extra, (*path, name), depth + 1, sites)
        if isinstance(additional, dict) and depth < MAX_DEPTH:
            for key in self.rng.sample(_KEYS, self.rng.randint(0, 2)):
                if key not in properties:
                    out[key] = self._value(additional, (*path, key), depth + 1, sites)
        return out

    def _array(self, eff: dict[str, JSON], path: InstancePath, depth: int, sites: list[Site]) -> list[JSON]:
        low = eff.get("minItems", 0)
        high = min(eff.get("maxItems", 3), 3) if depth < MAX_DEPTH else low
        items = eff.get("items", {})
        return [self._value(items, (*path, i), depth + 1, sites) for i in range(self.rng.randint(low, high))]

    def _integer(self, eff: dict[str, JSON]) -> int:
        low, high = eff.get("minimum", -math.inf), eff.get("maximum", math.inf)
        bounds = [math.ceil(b) for b in (low, high) if math.isfinite(b)]
        candidates: list[int] = [i for i in (*_INTEGERS, *bounds) if low <= i <= high]
        return self.rng.choice(candidates)

    def _number(self, eff: dict[str, JSON]) -> int | float:
        low, high = eff.get("minimum", -math.inf), eff.get("maximum", math.inf)
        bounds: list[int | float] = [b for b in (low, high) if math.isfinite(b)]
        candidates: list[int | float] = [n for n in (*_INTEGERS, *_FLOATS, *bounds) if low <= n <= high]
        return self.rng.choice(candidates)

    def any_json(self, depth: int) -> JSON:
        kinds = ["null", "boolean", "integer", "number", "string"]
        if depth < MAX_DEPTH:
            kinds += ["array", "object"]
        kind = self.rng.choice(kinds)
        if kind == "array":
            return [self.any_json(depth + 1) for _ in range(self.rng.randint(0, 2))]
        if kind == "object":
            return {key: self.any_json(depth + 1) for key in self.rng.sample(_KEYS, self.rng.randint(0, 2))}
        return {
            "null": None,
            "boolean": self.rng.random() < 0.5,
            "integer": self.rng.choice(_INTEGERS),
            "number": self.rng.choice(_FLOATS),
            "string": self.rng.choice(_STRINGS),
        }[kind]


def _merge(a: dict[str, JSON], b: dict[str, JSON]) -> dict[str, JSON]:
    """The conjunction of two resolved object-ish schemas (enough for the allOf uses in MCP)."""
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
        elif key == "properties":
            merged = dict(out[key])
            for name, sub in value.items():
                merged[name] = {"allOf": [merged[name], sub]} if name in merged else sub
            out[key] = merged
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type":
            common = [t for t in _types(out) if t in _types(b)]
            out[key] = common[0] if len(common) == 1 else common
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------------- mutations


@dataclass(frozen=True)
class Case:
    """One instance to judge; ``mutation`` is None for an instance generated from the schema."""

    instance: JSON
    mutation: str | None = None
    where: str = ""  # JSON pointer into the instance


@dataclass(frozen=True)
class Mutation:
    kind: str
    path: InstancePath
    value: JSON  # the replacement, or _DROP

    def apply(self, instance: JSON) -> Case:
        if not self.path:
            return Case(copy.deepcopy(self.value), self.kind, "")
        mutated = copy.deepcopy(instance)
        parent = mutated
        for part in self.path[:-1]:
            parent = parent[part]
        if self.value is _DROP:
            del parent[self.path[-1]]
        else:
            parent[self.path[-1]] = copy.deepcopy(self.value)
        return Case(mutated, self.kind, _pointer(self.path))


_WRONG_TYPE_VALUES: Final[tuple[JSON, ...]] = ("text", 7, 2.5, True, None, [], {"k": 1})
_WRONG_ROOT_VALUES: Final[tuple[JSON, ...]] = ([], "text", 7, {})


def mutations_at(site: Site, value: JSON, generator: InstanceGenerator) -> Iterator[Mutation]:
    """Every mutation this generator knows for one generated value."""
    eff, path = site.schema, site.path
    types = _types(eff)
    if not path:
        yield Mutation("wrong_root_type", path, next(v for v in _WRONG_ROOT_VALUES if not _allows(types, v)))
    else:
        foreign = [v for v in _WRONG_TYPE_VALUES if types and not _allows(types, v)]
        if foreign:
            yield Mutation("wrong_type", path, generator.rng.choice(foreign))
        if "null" not in types and ("const" in eff or "enum" in eff or types):
            yield Mutation("null_value", path, None)
    if isinstance(eff.get("const"), str):
        yield Mutation("wrong_const", path, eff["const"] + "-wrong")
    elif isinstance(eff.get("const"), int) and not isinstance(eff.get("const"), bool):
        yield Mutation("wrong_const", path, eff["const"] + 1)
    if "enum" in eff:
        yield Mutation("wrong_enum", path, "not-in-enum")
    if isinstance(value, str) and eff.get("format") in _FORMAT_STRINGS:
        yield Mutation("bad_format", path, "not a " + eff["format"] + " %%")
    if isinstance(value, int) and not isinstance(value, bool):
        if "number" not in types:  # an integer-only place
            yield Mutation("integral_float", path, float(value))
            yield Mutation("fractional_float", path, value + 0.5)
        yield Mutation("bool_for_number", path, True)
        yield Mutation("string_for_number", path, str(value))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in eff:
            yield Mutation("below_minimum", path, eff["minimum"] - (1 if "number" not in types else 0.5))
        if "maximum" in eff:
            yield Mutation("above_maximum", path, eff["maximum"] + (1 if "number" not in types else 0.5))
    if isinstance(value, list) and value and "maxItems" in eff:
        yield Mutation("too_many_items", path, value + [value[0]] * (eff["maxItems"] + 1 - len(value)))
    if isinstance(value, dict):
        properties: dict[str, JSON] = eff.get("properties", {})
        for name in eff.get("required", []):
            if name in value:
                const = "const" in generator.effective(properties.get(name, {}), MAX_DEPTH)
                yield Mutation("drop_required_const" if const else "drop_required", (*path, name), _DROP)
        for name in value:
            python_name = _python_name(name)
            if name in properties and python_name != name and python_name not in value:
                yield Mutation("python_name", path, {python_name if k == name else k: v for k, v in value.items()})
                unrelated = {
                    python_name if k == name else k: ["unrelated"] if k == name else v for k, v in value.items()
                }
                yield Mutation("python_name_extra", path, unrelated)
        additional = eff.get("additionalProperties")
        extra = generator.any_json(MAX_DEPTH - 2) if additional is None else ["unexpected"]
        yield Mutation("extra_property", (*path, "xDifferentialExtra"), extra)


def _python_name(wire_name: str) -> str:
    """The Python field name of a wire name: ``_meta`` -> ``meta``, ``isError`` -> ``is_error``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", wire_name.lstrip("_")).lower()


def _value_at(instance: JSON, path: InstancePath) -> JSON:
    for part in path:
        instance = instance[part]
    return instance


def cases_for(schema: dict[str, JSON], generator: InstanceGenerator) -> list[Case]:
    """Generated instances, then mutations picked round-robin over mutation kinds."""
    cases: list[Case] = []
    by_kind: dict[str, list[tuple[JSON, Mutation]]] = {}
    for _ in range(VALID_PER_DEFINITION):
        instance, sites = generator.generate(schema)
        cases.append(Case(instance))
        for site in sites:
            for mutation in mutations_at(site, _value_at(instance, site.path), generator):
                by_kind.setdefault(mutation.kind, []).append((instance, mutation))
    queues = {kind: generator.rng.sample(found, len(found)) for kind, found in sorted(by_kind.items())}
    seen = {canonical(case.instance) for case in cases}
    picked: list[Case] = []
    while queues and len(picked) < MUTATIONS_PER_DEFINITION:
        for kind in list(queues):
            instance, mutation = queues[kind].pop()
            case = mutation.apply(instance)
            if canonical(case.instance) not in seen:
                seen.add(canonical(case.instance))
                picked.append(case)
            if not queues[kind]:
                del queues[kind]
    return cases + picked[:MUTATIONS_PER_DEFINITION]


# --------------------------------------------------------------------------- the two judges


@dataclass(frozen=True)
class ModelJudge:
    """The generated model (or type alias) for one definition."""

    validate: Callable[[bytes], object]
    dump: Callable[[object], JSON]

    @classmethod
    def of(cls, target: Any) -> ModelJudge:
        if isinstance(target, type) and issubclass(target, BaseModel):
            return cls(target.model_validate_json, _dump_model)
        adapter: TypeAdapter[Any] = TypeAdapter(target)
        return cls(adapter.validate_json, lambda value: adapter.dump_python(value, mode="json", by_alias=True))


def _dump_model(value: object) -> JSON:
    assert isinstance(value, BaseModel)
    return value.model_dump(mode="json", by_alias=True)


def _is_generated(target: object) -> bool:
    return isinstance(target, TypeAliasType) or (isinstance(target, type) and issubclass(target, BaseModel))


def model_target(models: ModuleType, definition: str) -> object:
    """The model class or type alias generated for a definition."""
    target = getattr(models, definition, None)
    if not _is_generated(target) and definition in RENAMED_DEFINITIONS:
        target = getattr(models, RENAMED_DEFINITIONS[definition], None)
    if not _is_generated(target):
        raise AssertionError(f"{models.__name__} has no model or type alias for {definition}: {target!r}")
    return target


def schema_validator(document: dict[str, JSON], container: str, definition: str) -> Validator:
    schema = {"$schema": document["$schema"], container: document[container], **document[container][definition]}
    validator: Validator = validator_for(schema)(schema)
    return validator


VERDICTS_DIR: Path | None = None
"""Where ``SchemaVerdicts`` keeps jsonschema's verdicts between runs (set from pytest's cache by the
``kept_verdicts`` fixture; None: judge everything, keep nothing)."""


class SchemaVerdicts:
    """jsonschema's verdicts for one revision, remembered between runs.

    A verdict is keyed by the digest of (the schema document's digest, the definition, the
    instance's JSON text) and kept in a file that names the jsonschema and referencing versions
    and the digest of ``schema_validator``'s source; another of any, or a damaged file, starts
    empty. A file holds only the verdicts its
    run asked for, so it never grows past one run's.
    """

    def __init__(self, revision: str, directory: Path | None) -> None:
        self.path = directory / f"{revision}.json" if directory is not None else None
        self.tools = {name: distribution_version(name) for name in ("jsonschema", "referencing")}
        # and how the validator is built (schema_validator's own text: format checking, the draft)
        self.tools["validator"] = hashlib.sha256(inspect.getsource(schema_validator).encode()).hexdigest()[:16]
        self.kept: dict[str, bool] = {}  # as read from the file
        self.asked: dict[str, bool] = {}  # this run's
        if self.path is not None and self.path.is_file():
            try:
                kept = json.loads(self.path.read_text(encoding="utf-8"))
                if kept["tools"] == self.tools:
                    self.kept = {key: bool(verdict) for key, verdict in kept["verdicts"].items()}
            except (ValueError, KeyError, TypeError, AttributeError):
                self.kept = {}

    def is_valid(self, validator: Validator, document_digest: str, definition: str, instance: JSON) -> bool:
        text = json.dumps(instance, ensure_ascii=False)
        key = hashlib.blake2b(f"{document_digest}\0{definition}\0{text}".encode(), digest_size=16).hexdigest()
        verdict = self.asked.get(key)
        if verdict is None:
            verdict = self.kept.get(key)
        if verdict is None:
            verdict = bool(validator.is_valid(instance))
        self.asked[key] = verdict
        return verdict

    def save(self) -> None:
        """Write this run's verdicts (atomically: concurrent runs each leave a whole file)."""
        if self.path is None or self.asked == self.kept:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, scratch = tempfile.mkstemp(prefix=".verdicts-", suffix=".tmp", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"tools": self.tools, "verdicts": {k: int(v) for k, v in self.asked.items()}}, out)
        os.replace(scratch, self.path)
        self.kept = dict(self.asked)


def document_digest(document: dict[str, JSON]) -> str:
    return hashlib.sha256(canonical(document).encode()).hexdigest()


@dataclass(frozen=True)
class SchemaJudge:
    """jsonschema's validator for one definition of one schema document, its verdicts remembered."""

    validator: Validator
    digest: str
    definition: str
    verdicts: SchemaVerdicts

    def is_valid(self, instance: JSON) -> bool:
        return self.verdicts.is_valid(self.validator, self.digest, self.definition, instance)


# --------------------------------------------------------------------------- deliberate disagreements


@dataclass(frozen=True)
class Outcome:
    version: str
    definition: str
    case: Case
    schema_accepts: bool
    model_accepts: bool
    dumped: JSON = None  # the model's JSON dump when it accepted
    written: tuple[bytes | None, bytes] | None = None  # accepted: the runtime's fast writer's bytes, pydantic's

    @property
    def agrees(self) -> bool:
        """Same verdict, and an accepted instance dumps back exactly."""
        if self.schema_accepts != self.model_accepts:
            return False
        return not self.model_accepts or canonical(self.dumped) == canonical(self.case.instance)

    def describe(self) -> str:
        mutation = f"{self.case.mutation} at {self.case.where or '/'}" if self.case.mutation else "generated"
        return (
            f"{self.version} {self.definition} [{mutation}] jsonschema={'accept' if self.schema_accepts else 'reject'}"
            f" model={'accept' if self.model_accepts else 'reject'}: {canonical(self.case.instance)[:400]}"
            + (f"\n    model dump: {canonical(self.dumped)[:400]}" if self.model_accepts else "")
        )


@dataclass(frozen=True)
class Rule:
    """One deliberate disagreement from differential_disagreements.json.

    Predicates are checked on the disagreeing instance itself, never on how it was made:

    - ``patched``: the upstream schema with the patches whose pointer matches ``pointer`` (an
      fnmatch pattern) applied gives the model's verdict;
    - ``const_default_filled``: the model's dump is the input plus keys with string or integer
      values (the defaults of single-valued consts) and the upstream schema accepts that dump;
    - ``integral_float``: the input holds a float with an integral value, and with every such
      float written as an integer the model accepts it (or, when the model accepted the input,
      its dump is exactly that).
    """

    id: str
    versions: tuple[str, ...]
    definitions: tuple[str, ...]  # fnmatch patterns
    schema_accepts: bool
    model_accepts: bool
    predicate: dict[str, str]
    reason: str

    @classmethod
    def parse(cls, raw: dict[str, JSON]) -> Rule:
        return cls(
            id=raw["id"],
            versions=tuple(raw["versions"]),
            definitions=tuple(raw.get("definitions", ["*"])),
            schema_accepts=raw["jsonschema"] == "accept",
            model_accepts=raw["model"] == "accept",
            predicate=raw["predicate"],
            reason=raw["reason"],
        )

    def explains(self, outcome: Outcome, revision: Revision) -> bool:
        if (outcome.schema_accepts, outcome.model_accepts) != (self.schema_accepts, self.model_accepts):
            return False
        if outcome.version not in self.versions:
            return False
        if not any(fnmatch.fnmatchcase(outcome.definition, pattern) for pattern in self.definitions):
            return False
        instance, kind = outcome.case.instance, self.predicate["kind"]
        if kind == "patched":
            validator = revision.patched_validator(outcome.definition, self.predicate["pointer"])
            return bool(validator.is_valid(instance)) == outcome.model_accepts
        if kind == "const_default_filled":
            added = _added_values(instance, outcome.dumped)
            if not added or not all(_json_type(value) in ("string", "integer") for value in added):
                return False
            return bool(revision.validators[outcome.definition].is_valid(outcome.dumped))
        if kind == "integral_float":
            as_integers = _integral_floats_as_ints(instance)
            if canonical(as_integers) == canonical(instance):
                return False
            if outcome.model_accepts:  # a round-trip rule: the dump writes those floats as integers
                return canonical(outcome.dumped) == canonical(as_integers)
            try:
                revision.judges[outcome.definition].validate(json.dumps(as_integers).encode())
            except ValidationError:
                return False
            return True
        raise ValueError(f"rule {self.id}: unknown predicate kind {kind!r}")


def _added_values(before: JSON, after: JSON) -> list[JSON] | None:
    """The values of keys ``after`` adds to ``before``, or None if they differ in any other way."""
    if isinstance(before, dict) and isinstance(after, dict):
        if not before.keys() <= after.keys():
            return None
        added = [after[key] for key in after.keys() - before.keys()]
        for key in before:
            inner = _added_values(before[key], after[key])
            if inner is None:
                return None
            added += inner
        return added
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        added = []
        for b, a in zip(before, after, strict=True):
            inner = _added_values(b, a)
            if inner is None:
                return None
            added += inner
        return added
    return [] if canonical(before) == canonical(after) else None


def _integral_floats_as_ints(value: JSON) -> JSON:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _integral_floats_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(item) for item in value]
    return value


def load_rules() -> tuple[Rule, ...]:
    raw = json.loads(RULES_FILE.read_text(encoding="utf-8"))
    return tuple(Rule.parse(entry) for entry in raw["disagreements"])


# --------------------------------------------------------------------------- one revision


@dataclass
class Revision:
    schema: LoadedSchema
    models: ModuleType
    verdicts: SchemaVerdicts
    outcomes: list[Outcome] = field(default_factory=list)
    validators: dict[str, SchemaJudge] = field(default_factory=dict)
    judges: dict[str, ModelJudge] = field(default_factory=dict)
    _patched: dict[tuple[str, str], SchemaJudge] = field(default_factory=dict)
    _patched_documents: dict[str, tuple[dict[str, JSON], str]] = field(default_factory=dict)

    @property
    def version(self) -> str:
        return self.schema.version

    def patched_validator(self, definition: str, pointer: str) -> SchemaJudge:
        """A validator for the upstream schema with the patches whose pointer matches applied."""
        key = (definition, pointer)
        if key not in self._patched:
            document, digest = self._patched_document(pointer)
            validator = schema_validator(document, self.schema.container, definition)
            self._patched[key] = SchemaJudge(validator, digest, definition, self.verdicts)
        return self._patched[key]

    def _patched_document(self, pointer: str) -> tuple[dict[str, JSON], str]:
        """The upstream schema with the patches whose pointer matches applied, and its digest, made
        once per pointer (the validators only read it)."""
        if pointer not in self._patched_documents:
            patches = tuple(p for p in self.schema.patches if fnmatch.fnmatchcase(p.pointer, pointer))
            if not patches:
                raise ValueError(f"{self.version}: no patch matches {pointer}")
            document = copy.deepcopy(self.schema.original)
            apply_patches(document, patches, self.version)
            self._patched_documents[pointer] = (document, document_digest(document))
        return self._patched_documents[pointer]

    def run(self) -> None:
        original, container = self.schema.original, self.schema.container
        definitions: dict[str, JSON] = original[container]
        digest = document_digest(original)
        for definition, body in definitions.items():
            validator = SchemaJudge(
                schema_validator(original, container, definition), digest, definition, self.verdicts
            )
            self.validators[definition] = validator
            judge = self.judges[definition] = ModelJudge.of(model_target(self.models, definition))
            rng = random.Random(f"{self.version}/{definition}")
            generator = InstanceGenerator(definitions, f"#/{container}/", rng)
            for case in cases_for(body, generator):
                self.outcomes.append(self._judge(definition, case, validator, judge))

    def _judge(self, definition: str, case: Case, validator: SchemaJudge, judge: ModelJudge) -> Outcome:
        raw = json.dumps(case.instance, ensure_ascii=False).encode()
        schema_accepts = validator.is_valid(json.loads(raw))
        try:
            value = judge.validate(raw)
        except ValidationError:
            return Outcome(self.version, definition, case, schema_accepts, False)
        written = (fast_dumps(value), to_json(value, inf_nan_mode="null"))
        return Outcome(self.version, definition, case, schema_accepts, True, judge.dump(value), written)


@functools.cache
def revision(version: str) -> Revision:
    schema = load(load_lock(ROOT / "schema"), version)
    models = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}.models")
    result = Revision(schema, models, SchemaVerdicts(version, VERDICTS_DIR))
    result.run()
    return result


@functools.cache
def classified(version: str) -> tuple[dict[str, list[Outcome]], list[Outcome]]:
    """Disagreements of one revision grouped by the rule that explains them, and the unexplained.

    A disagreement is either different verdicts or an instance both accept that the model dumps
    differently; a rule with ``"jsonschema": "accept", "model": "accept"`` explains the latter.
    """
    rev, rules = revision(version), load_rules()
    explained: dict[str, list[Outcome]] = {rule.id: [] for rule in rules}
    unexplained: list[Outcome] = []
    for outcome in rev.outcomes:
        if outcome.agrees:
            continue
        rule = next((r for r in rules if r.explains(outcome, rev)), None)
        (explained[rule.id] if rule else unexplained).append(outcome)
    rev.verdicts.save()  # every verdict of the revision has been asked for by now
    return explained, unexplained


# --------------------------------------------------------------------------- tests


@pytest.fixture(scope="module", autouse=True)
def kept_verdicts(request: pytest.FixtureRequest) -> Iterator[None]:
    """jsonschema's verdicts from pytest's cache (``SchemaVerdicts``), when the run keeps one."""
    global VERDICTS_DIR
    VERDICTS_DIR = kept_between_runs(request.config, "differential-verdicts")
    yield
    VERDICTS_DIR = None


@pytest.mark.parametrize("version", VERSIONS)
def test_generated_instances_satisfy_the_schema(version: str) -> None:
    """A generated instance the upstream schema rejects would be a bug in this file's generator."""
    bad = [o for o in revision(version).outcomes if o.case.mutation is None and not o.schema_accepts]
    assert not bad, "\n".join(o.describe() for o in bad[:20])


@pytest.mark.parametrize("version", VERSIONS)
def test_models_agree_with_jsonschema(version: str) -> None:
    unexplained = [o for o in classified(version)[1] if o.schema_accepts != o.model_accepts]
    if unexplained:
        pytest.fail(failure_report("unexplained disagreements", unexplained), pytrace=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_accepted_instances_round_trip_exactly(version: str) -> None:
    changed = [o for o in classified(version)[1] if o.schema_accepts and o.model_accepts]
    if changed:
        pytest.fail(failure_report("accepted instances that change on a round trip", changed), pytrace=False)


@pytest.mark.parametrize("version", VERSIONS)
def test_the_fast_writer_writes_pydantics_bytes(version: str) -> None:
    """Every accepted instance of every definition (mutations included: unknown keys, odd numbers),
    written by the runtime's fast writer (``serializer.dumps``, orjson), is pydantic's bytes
    exactly; and the writer takes (does not hand to pydantic) nearly all of them."""
    written = [(o, o.written) for o in revision(version).outcomes if o.written is not None]
    assert len(written) > 500, "too few accepted instances to judge the writer"
    differ = [
        f"{o.describe()}\n    fast: {w[0]!r}\n    pydantic: {w[1]!r}" for o, w in written if w[0] not in (None, w[1])
    ]
    assert not differ, "\n".join(differ[:5])
    handed = [o for o, w in written if w[0] is None]
    assert len(handed) <= len(written) // 20, failure_report("instances the fast writer handed to pydantic", handed)


def test_every_deliberate_disagreement_occurs() -> None:
    """A rule that explains nothing in a revision it names is stale."""
    stale = [
        f"{rule.id} in {version}"
        for rule in load_rules()
        for version in rule.versions
        if not classified(version)[0][rule.id]
    ]
    print(summary())
    assert not stale, f"stale entries in {RULES_FILE.name}: {stale}"


def test_kept_verdicts_are_used_only_for_the_same_tools_document_definition_and_text(tmp_path: Path) -> None:
    validator = schema_validator(
        {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"N": {"type": "integer"}}},
        "definitions",
        "N",
    )
    calls: list[JSON] = []
    real = validator.is_valid

    class Counted:
        def is_valid(self, instance: JSON) -> bool:
            calls.append(instance)
            return bool(real(instance))

    counted: Any = Counted()

    judged = SchemaVerdicts("v", tmp_path)
    assert judged.is_valid(counted, "d1", "N", 1) and not judged.is_valid(counted, "d1", "N", 1.5)
    judged.save()
    assert calls == [1, 1.5]
    kept = json.loads((tmp_path / "v.json").read_text())
    kept["verdicts"] = {key: 1 - verdict for key, verdict in kept["verdicts"].items()}  # every verdict flipped
    (tmp_path / "v.json").write_text(json.dumps(kept))
    again = SchemaVerdicts("v", tmp_path)
    assert not again.is_valid(counted, "d1", "N", 1) and again.is_valid(counted, "d1", "N", 1.5)
    assert calls == [1, 1.5], "a kept verdict was judged again"
    for document, definition, instance in (("d2", "N", 1), ("d1", "M", 1), ("d1", "N", 1.0), ("d1", "N", True)):
        again.is_valid(counted, document, definition, instance)
    assert calls == [1, 1.5, 1, 1, 1.0, True], "another document, definition or JSON text shares a kept verdict"
    (tmp_path / "v.json").write_text(json.dumps({**kept, "tools": {**kept["tools"], "jsonschema": "0.1"}}))
    assert SchemaVerdicts("v", tmp_path).kept == {}
    (tmp_path / "v.json").write_text(json.dumps(kept)[:40])
    assert SchemaVerdicts("v", tmp_path).kept == {}


def failure_report(title: str, outcomes: list[Outcome], shown: int = 3) -> str:
    """Counts per (mutation, definition) and a few examples of each mutation kind."""
    kinds = Counter(o.case.mutation or "generated" for o in outcomes)
    lines = [f"{len(outcomes)} {title}; by mutation: {dict(kinds.most_common())}"]
    for kind in kinds:
        examples = [o for o in outcomes if (o.case.mutation or "generated") == kind][:shown]
        lines += [f"  {o.describe()}" for o in examples]
    return "\n".join(lines)


def summary() -> str:
    """Instances judged, agreements and disagreements by rule, per revision."""
    lines = ["version     definitions  instances  mutated  agree  disagree  by rule"]
    for version in VERSIONS:
        rev = revision(version)
        explained, unexplained = classified(version)
        outcomes = rev.outcomes
        agree = sum(o.agrees for o in outcomes)
        mutated = sum(o.case.mutation is not None for o in outcomes)
        by_rule = {rule: len(found) for rule, found in explained.items() if found}
        if unexplained:
            by_rule["UNEXPLAINED"] = len(unexplained)
        definitions = len(rev.schema.original[rev.schema.container])
        lines.append(
            f"{version}  {definitions:>11}  {len(outcomes):>9}  {mutated:>7}  {agree:>5}"
            f"  {len(outcomes) - agree:>8}  {by_rule}"
        )
    mutations = Counter(o.case.mutation for v in VERSIONS for o in revision(v).outcomes if o.case.mutation)
    lines.append(f"mutations: {dict(sorted(mutations.items()))}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary())
