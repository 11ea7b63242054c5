"""Schema -> schema transforms that make datamodel-code-generator's output exact.

Each transform is mechanical and keyword-aware (a property *named* ``type`` or ``items``
inside ``properties`` is data, not a keyword):

- ``widen_numbers``: ``number`` becomes ``integer | number`` so ``50`` stays ``50``.
- ``dedupe_direction_unions``: a one-member direction union that the TS renderer inlined
  (2026 ``ClientNotification``) becomes a ``$ref`` to the definition it copies.
- ``clean_links``: ``{@link TargetText}`` TSDoc residue in descriptions becomes `` `Text` ``.
- ``hoist_inline_objects``: inline object schemas become named definitions whose names
  come from their path (``CallToolRequest.params`` -> ``CallToolRequestParams``), so no
  class is ever numbered.
- ``add_discriminators``: a union whose branches all carry a required ``const`` on
  ``method`` or ``type`` gets a ``discriminator`` keyword.
"""

from __future__ import annotations

import builtins
import copy
import keyword
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import LoadedSchema
from mcp_schema_codegen.pointer import MISSING, lookup

JSON = Any
SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf")
DIRECTION_UNIONS = ("ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification")
DISCRIMINATOR_KEYS = ("method", "type")


def walk(schema: JSON, pointer: str) -> Iterator[tuple[dict[str, JSON], str]]:
    """Yield every subschema (dict) with its pointer, depth first, keyword-aware."""
    if not isinstance(schema, dict):
        return
    yield schema, pointer
    for name, sub in (schema.get("properties") or {}).items():
        yield from walk(sub, f"{pointer}/properties/{_escape(name)}")
    for key in ("additionalProperties", "items", "not"):
        sub = schema.get(key)
        if isinstance(sub, dict):
            yield from walk(sub, f"{pointer}/{key}")
        elif isinstance(sub, list):
            for i, item in enumerate(sub):
                yield from walk(item, f"{pointer}/{key}/{i}")
    for key in SUBSCHEMA_LISTS:
        for i, sub in enumerate(schema.get(key) or ()):
            yield from walk(sub, f"{pointer}/{key}/{i}")
    for key in ("$defs", "definitions"):  # nested in a definition: datamodel-code-generator reads them too
        nested = schema.get(key)
        if isinstance(nested, dict):
            for name, sub in nested.items():
                yield from walk(sub, f"{pointer}/{key}/{_escape(name)}")


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def pascal(name: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    text = "".join(p[0].upper() + p[1:] for p in parts)
    if not text or not text[0].isalpha():
        text = "X" + text
    return text


# Names the generated models module imports or relies on; a definition may not shadow them.
MODULE_NAMES = frozenset(
    {
        "Annotated",
        "Any",
        "Literal",
        "Union",
        "Optional",
        "Dict",
        "List",
        "TypeAliasType",
        "BaseModel",
        "ConfigDict",
        "Field",
        "MISSING",
        "RootModel",
        "StrictBool",
        "StrictFloat",
        "StrictInt",
        "StrictStr",
        "WireModel",
        "annotations",
    }
)
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
# the class names datamodel-code-generator writes as they are (``tool`` it writes ``Tool``,
# ``my_tool`` ``MyTool``: templates would name a class the module does not have)
_KEPT_AS_IS = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
CLASS_NAME_RULE = "an upper-case ASCII letter first, then ASCII letters and digits only"


def safe_definition_names(defs: dict[str, JSON], prefix: str, version: str | None = None) -> int:
    """Refuse names that cannot be a class; rename ones that would shadow the module's imports.

    A definition becomes a class (or type alias) of the same name, and templates refer to it
    by that name, so a name must be a plain identifier. One that would shadow a name the
    module uses (2024-11-05's ``Annotated``) or a builtin is renamed ``<Name>Model``, with
    every ``$ref`` to it.
    """
    for name in defs:
        if keyword.iskeyword(name) or keyword.issoftkeyword(name):  # ``None``, ``True``: the rule holds, the name not
            raise GeneratorError(
                "definition name is a Python keyword, which no class can be named", version=version, definition=name
            )
        if not _IDENTIFIER.match(name):
            raise GeneratorError(
                f"definition name is not a valid Python class name ({CLASS_NAME_RULE})",
                version=version,
                definition=name,
            )
        if not _KEPT_AS_IS.match(name):
            raise GeneratorError(
                f"definition name is not a class name datamodel-code-generator keeps: it would write {pascal(name)!r} "
                f"({CLASS_NAME_RULE})",
                version=version,
                definition=name,
            )
    renames = {
        name: name + "Model" for name in defs if name in MODULE_NAMES or hasattr(builtins, name) or name.startswith("_")
    }
    for old, new in renames.items():
        if new in defs:
            raise GeneratorError(f"would be renamed {new!r}, which is also defined", version=version, definition=old)
    if not renames:
        return 0
    refs = {prefix + old: prefix + new for old, new in renames.items()}

    def rewrite(node: JSON) -> JSON:
        if isinstance(node, dict):
            return {k: refs.get(v, v) if k == "$ref" and isinstance(v, str) else rewrite(v) for k, v in node.items()}
        if isinstance(node, list):
            return [rewrite(v) for v in node]
        return node

    renamed = {renames.get(name, name): rewrite(body) for name, body in defs.items()}
    defs.clear()
    defs.update(renamed)
    return len(renames)


def widen_numbers(defs: dict[str, JSON], container: str) -> int:
    changed = 0
    for name, body in defs.items():
        for node, _ in walk(body, f"/{container}/{_escape(name)}"):
            kind = node.get("type")
            if kind == "number":
                node["type"] = ["integer", "number"]
                changed += 1
            elif isinstance(kind, list) and "number" in kind and "integer" not in kind:
                node["type"] = ["integer", *kind]
                changed += 1
    return changed


def drop_defaults(defs: dict[str, JSON], container: str) -> int:
    """A ``default`` only annotates (JSON Schema neither fills it in nor refuses its absence);
    datamodel-code-generator made it a default the models fill in and write back, and a null they
    accept (``a: int | None = 5``). Without it the field is optional as the schema says."""
    changed = 0
    for name, body in defs.items():
        for node, _ in walk(body, f"/{container}/{_escape(name)}"):
            if "default" in node:
                del node["default"]
                changed += 1
    return changed


def _strip_descriptions(node: JSON) -> JSON:
    if isinstance(node, dict):
        return {k: _strip_descriptions(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [_strip_descriptions(v) for v in node]
    return node


def dedupe_direction_unions(defs: dict[str, JSON], prefix: str) -> int:
    changed = 0
    for union in DIRECTION_UNIONS:
        body = defs.get(union)
        if not body or "properties" not in body:
            continue
        shape = _strip_descriptions(body)
        twins = sorted(n for n, b in defs.items() if n != union and _strip_descriptions(b) == shape)
        if len(twins) != 1:
            raise GeneratorError(
                f"inline one-member union matches {len(twins)} definitions, expected exactly 1",
                definition=union,
            )
        defs[union] = {"$ref": prefix + twins[0]}
        changed += 1
    return changed


_LINK = re.compile(r"\{@link\s+([^}\s|]+)(?:\s*\|\s*([^}]*))?\}")


def clean_links(defs: dict[str, JSON], container: str) -> int:
    names = sorted(defs, key=len, reverse=True)
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        target, text = match.group(1), match.group(2)
        if text:
            return f"`{text.strip()}`"
        for name in names:  # the renderer glues "Target" and "text" together
            if target.startswith(name) and target != name:
                return f"`{target[len(name) :]}`"
        return f"`{target}`"

    for name, body in defs.items():
        for node, _ in walk(body, f"/{container}/{_escape(name)}"):
            text = node.get("description")
            if isinstance(text, str) and "{@link" in text:
                node["description"] = _LINK.sub(replace, text)
    return count


def _is_hoistable(node: JSON) -> bool:
    return isinstance(node, dict) and "$ref" not in node and ("properties" in node or "allOf" in node)


def hoist_inline_objects(defs: dict[str, JSON], container: str, prefix: str) -> int:
    """Name every inline object after its path; returns how many were hoisted."""
    hoisted: dict[str, JSON] = {}
    originals = set(defs)

    def place(name: str, node: dict[str, JSON], pointer: str) -> dict[str, JSON]:
        body = {k: v for k, v in node.items() if k != "description"}
        ref: dict[str, JSON] = {"$ref": prefix + name}
        if "description" in node:
            ref["description"] = node["description"]
        existing = defs.get(name, hoisted.get(name))
        if existing is not None and _strip_descriptions(existing) != _strip_descriptions(body):
            owner = name if name in originals else None
            raise GeneratorError(
                f"inline object at {pointer} would be named {name!r}, which is already a different definition",
                definition=owner or pointer.split("/")[2],
                pointer=pointer,
            )
        if existing is None:
            hoisted[name] = body
            visit(body, name, f"/{container}/{_escape(name)}")
        return ref

    def visit(node: dict[str, JSON], base: str, pointer: str) -> None:
        for prop, sub in list((node.get("properties") or {}).items()):
            here = f"{pointer}/properties/{_escape(prop)}"
            if _is_hoistable(sub):
                node["properties"][prop] = place(base + pascal(prop), sub, here)
            elif isinstance(sub, dict):
                visit_container(sub, base + pascal(prop), here)
        visit_container(node, base, pointer, own_properties_done=True)

    def visit_container(node: dict[str, JSON], base: str, pointer: str, own_properties_done: bool = False) -> None:
        if not own_properties_done and "properties" in node:
            visit(node, base, pointer)
            return
        for key, suffix in (("items", "Item"), ("additionalProperties", "Value")):
            sub = node.get(key)
            if isinstance(sub, dict) and _is_hoistable(sub):
                node[key] = place(base + suffix, sub, f"{pointer}/{key}")
            elif isinstance(sub, dict):
                visit_container(sub, base + suffix, f"{pointer}/{key}")
        for key in SUBSCHEMA_LISTS:
            branches = node.get(key) or []
            for i, sub in enumerate(branches):
                here = f"{pointer}/{key}/{i}"
                if key != "allOf" and _is_hoistable(sub):
                    branches[i] = place(f"{base}Variant{i + 1}", sub, here)
                elif isinstance(sub, dict):
                    visit_container(sub, base, here)

    for name in sorted(defs):
        visit_container(defs[name], name, f"/{container}/{_escape(name)}")
    defs.update(sorted(hoisted.items()))
    return len(hoisted)


def add_discriminators(defs: dict[str, JSON], container: str, prefix: str) -> int:
    count = 0

    def target(ref: JSON) -> tuple[str, dict[str, JSON]] | None:
        if not isinstance(ref, dict) or set(ref) - {"$ref", "description"} or "$ref" not in ref:
            return None
        name = str(ref["$ref"]).removeprefix(prefix)
        body = defs.get(name)
        while isinstance(body, dict) and set(body) <= {"$ref", "description"} and "$ref" in body:
            name = str(body["$ref"]).removeprefix(prefix)
            body = defs.get(name)
        return (name, body) if isinstance(body, dict) else None

    for name, body in defs.items():
        for node, _ in walk(body, f"/{container}/{_escape(name)}"):
            branches = node.get("anyOf")
            if not branches or len(branches) < 2 or "discriminator" in node:
                continue
            resolved = [target(b) for b in branches]
            if any(r is None for r in resolved):
                continue
            for key in DISCRIMINATOR_KEYS:
                mapping: dict[str, str] = {}
                for item in resolved:
                    assert item is not None
                    branch_name, branch = item
                    prop = (branch.get("properties") or {}).get(key)
                    if not isinstance(prop, dict) or "const" not in prop or key not in branch.get("required", ()):
                        break
                    if not isinstance(prop["const"], str) or prop["const"] in mapping:
                        break
                    mapping[prop["const"]] = prefix + branch_name
                else:
                    node["discriminator"] = {"propertyName": key, "mapping": mapping}
                    count += 1
                    break
    return count


Transform = Callable[[dict[str, JSON]], int]


DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})  # values, not schemas: a "$ref" there is data


# Keywords the models cannot enforce as the schema does: datamodel-code-generator drops them, or
# writes a union or a list that accepts what they refuse. None is in a locked MCP schema; a
# revision using one fails generation, naming where, instead of validating loosely.
INEXACT_KEYWORDS = frozenset(
    {
        "not", "if", "then", "else", "oneOf", "prefixItems", "additionalItems", "contains", "minContains",
        "maxContains", "uniqueItems", "patternProperties", "propertyNames", "dependentSchemas",
        "dependentRequired", "dependencies", "minProperties", "maxProperties", "unevaluatedProperties",
        "unevaluatedItems", "$dynamicRef", "$recursiveRef",
    }
)  # fmt: skip
# Keywords that are not JSON Schema's but datamodel-code-generator acts on: a schema using one
# would be generated as they mean (null allowed, a discriminated union refusing valid branches,
# a type or base class the schema names, an import), not as JSON Schema reads it (an annotation).
GENERATOR_KEYWORDS = frozenset(
    {
        "nullable", "discriminator", "customTypePath", "customBasePath", "x-enum-field-as-literal",
        "x-is-base-class", "x-is-classvar",
    }
)  # fmt: skip
GENERATOR_KEYWORD_PREFIX = "x-python-"  # x-python-type, x-python-import, ...
# What each type's keywords are: without a ``type``, datamodel-code-generator drops a string's or
# a number's (``{"minLength": 2}`` is Any) and forces an object's or an array's (``{"properties":
# ...}`` refuses a string, which JSON Schema accepts); with ``type`` a list naming ``object`` or
# ``array`` beside another type, it generates the model alone (null refused).
TYPE_KEYWORDS = {
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
    "array": ("items", "minItems", "maxItems"),
    "object": ("properties", "required", "additionalProperties"),
}
JSON_TYPES = {"string": str, "boolean": bool, "null": type(None), "object": dict, "array": list}
# Keywords that only annotate: beside a draft-07 ``$ref`` they are allowed (draft-07 ignores every
# sibling of ``$ref``, the models would apply a validating one)
ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "examples", "default", "deprecated", "readOnly", "writeOnly"}
)  # fmt: skip

# The ``format``s generated as plain strings (a format is an annotation: it asserts nothing). Any
# other would become a datamodel-code-generator type (``date-time``: a datetime, written back in
# another form), so it fails generation until it is listed here.
STRING_FORMATS = ("byte", "uri", "uri-template")


NOT_EXACT = "is not generated exactly (the models would not take what the schema does)"


def check_supported(document: dict[str, JSON], container: str, version: str) -> None:
    """Every keyword of every definition is one the models enforce exactly (``INEXACT_KEYWORDS``,
    ``GENERATOR_KEYWORDS``, ``STRING_FORMATS``, ``inexact_use``); else a ``GeneratorError`` naming
    the definition and where."""
    draft07 = "draft-07" in str(document.get("$schema", ""))

    def resolve(ref: str) -> JSON:
        return _target(document, ref)

    for name, body in document[container].items():
        typed = typed_parts(body)
        for node, pointer in walk(body, f"/{container}/{_escape(name)}"):
            inexact = sorted(INEXACT_KEYWORDS & node.keys())
            if inexact:
                raise GeneratorError(
                    f"{inexact[0]!r} at {pointer} {NOT_EXACT}",
                    version=version,
                    definition=name,
                )
            foreign = sorted(k for k in node if k in GENERATOR_KEYWORDS or k.startswith(GENERATOR_KEYWORD_PREFIX))
            if foreign:
                raise GeneratorError(
                    f"{foreign[0]!r} at {pointer} is no JSON Schema keyword, but datamodel-code-generator acts on it "
                    "(the models would not be what the schema says)",
                    version=version,
                    definition=name,
                )
            context = Context(draft07, id(node) in typed, node is body, resolve)
            problem = inexact_use(node, context)
            if problem is not None:
                raise GeneratorError(
                    f"{problem} at {pointer} {NOT_EXACT}",
                    version=version,
                    definition=name,
                )
            for prop in node.get("properties") or ():
                if isinstance(prop, str) and unicodedata.normalize("NFKC", prop) != prop:
                    raise GeneratorError(
                        f"property {prop!r} at {pointer} is not in Unicode NFKC form: Python reads the field "
                        f"named after it as {unicodedata.normalize('NFKC', prop)!r}, so the model would take "
                        "another key than the schema's",
                        version=version,
                        definition=name,
                    )
            pattern = node.get("pattern")
            problem = regex_problem(pattern) if isinstance(pattern, str) else None
            if problem is not None:
                raise GeneratorError(
                    f"'pattern' {pattern!r} at {pointer} does not compile in the models' regex engine "
                    f"(pydantic-core's Rust regex: {problem}); the model would fail when first used",
                    version=version,
                    definition=name,
                )
            fmt = node.get("format")
            if fmt is not None and fmt not in STRING_FORMATS:
                raise GeneratorError(
                    f"format {fmt!r} at {pointer} is not one generated as a plain string ({', '.join(STRING_FORMATS)})",
                    version=version,
                    definition=name,
                )


def regex_problem(pattern: str) -> str | None:
    """Why pydantic-core's default regex engine (Rust's ``regex``) cannot compile ``pattern``, which
    a model's ``Field(pattern=...)`` hands it; None if it can. The metaschema's ``regex`` format
    asks Python's ``re``, which also takes look-arounds and back-references."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except SchemaError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        said = [line.removeprefix("error: ") for line in lines if line.startswith("error:")]
        return (said or lines or ["it does not compile"])[-1]
    return None


@dataclass(frozen=True)
class Context:
    """Where a node is, for ``inexact_use``: the document's dialect, whether the node is a part
    of a combination whose parent gives it a type (``allOf: [{"$ref": ...}, {"properties": ...}]``),
    whether it is a definition itself (validated on its own, not through a field), and how to
    find what a ``$ref`` names."""

    draft07: bool = False
    typed_by_parent: bool = False
    definition: bool = False
    resolve: Callable[[str], JSON] = lambda ref: None


def typed_parts(body: JSON) -> set[int]:
    """The ids of the ``anyOf``/``allOf``/``oneOf`` parts in ``body`` whose parent has a ``type``
    or a ``$ref``, or an ``allOf`` with a typed or referenced part: their type comes from there."""
    found: set[int] = set()
    for node, _ in walk(body, ""):
        parts = [p for key in SUBSCHEMA_LISTS for p in node.get(key) or () if isinstance(p, dict)]
        all_of = [p for p in node.get("allOf") or () if isinstance(p, dict)]
        if "type" in node or "$ref" in node or any("type" in p or "$ref" in p for p in all_of):
            found.update(id(p) for p in parts)
    return found


def _target(document: dict[str, JSON], ref: str) -> JSON:
    """What a ``$ref`` names in ``document`` (a JSON Pointer after ``#``); None for nothing."""
    found = lookup(document, ref[1:]) if ref[:2] in ("#", "#/") else MISSING
    return None if found is MISSING else found


def _types(value: JSON) -> set[str]:
    """A ``type`` keyword's names, as a set."""
    if isinstance(value, str):
        return {value}
    return {t for t in value if isinstance(t, str)} if isinstance(value, list) else set()


def inexact_use(node: dict[str, JSON], context: Context | None = None) -> str | None:
    """A keyword the models accept but would loosen (or tighten) in this use, named; None if there
    is none. ``additionalProperties: false`` (objects keep unknown keys); a ``const`` or ``enum``
    value that is an object or array (generated as its type), a number with a fraction or an
    exponent (generated as any number), a boolean or the integers 0 and 1 (a ``Literal`` takes
    ``1`` for ``true`` and ``false`` for ``0``), or one its ``type`` refuses; an empty ``enum`` and
    a ``false`` property (generated as ``Any``); a ``required`` name the ``properties`` do not
    declare (no field, so nothing requires it); a type's keywords without a ``type`` (its own, or
    one a combination gives the part: ``TYPE_KEYWORDS``); ``object`` in a ``type`` list with typed
    extra properties, or on a definition itself; ``$ref`` beside a ``type`` its target does not
    share (both apply, the models take one) or, in draft-07, beside any validating keyword
    (ignored there, applied by the models); ``items`` as a list (a tuple,
    generated as a list of the union); ``allOf`` parts that declare one property twice or extra
    properties of a type (generated by inheritance: the last part wins, nothing intersects); and
    a ``pattern`` whose meaning differs between ECMA-262 and the models' Rust regex."""
    if node.get("additionalProperties") is False:
        return "'additionalProperties': false"
    values = [("const", node["const"])] if "const" in node else []
    if "enum" in node:
        if node["enum"] == []:
            return "an empty 'enum'"
        values += [("enum", value) for value in node["enum"]] if isinstance(node["enum"], list) else []
    for keyword_, value in values:
        problem = _literal_problem(value, node.get("type"))
        if problem is not None:
            return f"{'an' if keyword_ == 'enum' else 'a'} {keyword_!r} value {value!r}, {problem},"
    declared = node.get("properties")
    if isinstance(declared, dict):
        false = [n for n, sub in declared.items() if sub is False]
        if false:
            return f"property {false[0]!r} as 'false' (generated as Any)"
    required = node.get("required")
    if isinstance(required, list):
        undeclared = [n for n in required if not isinstance(declared, dict) or n not in declared]
        if undeclared:
            return f"'required' naming {undeclared[0]!r}, which its 'properties' do not declare,"
    context = context or Context()
    types = node.get("type")
    combined = ("$ref", "allOf", "anyOf", "oneOf", "enum", "const")
    if types is None and not context.typed_by_parent and not any(k in node for k in combined):
        typeless = [k for keywords in TYPE_KEYWORDS.values() for k in keywords if k in node]
        if typeless:
            return f"{typeless[0]!r} without a 'type'"
    if isinstance(types, list) and len(types) > 1 and "object" in types:
        if isinstance(node.get("additionalProperties"), dict):
            return "a 'type' list naming 'object' beside another type, with extra properties of a type,"
        if context.definition and any(k in node for k in TYPE_KEYWORDS["object"]):
            return "a definition whose 'type' list names 'object' beside another type (its class is the object only)"
    if "$ref" in node:
        target = context.resolve(node["$ref"]) if isinstance(node["$ref"], str) else None
        theirs = _types(target.get("type")) if isinstance(target, dict) else set()
        ours = _types(types)
        # both apply and the models take one of them: exact only where they say the same (or the
        # sibling narrows a number to an integer)
        narrows = ours == {"integer"} and bool(theirs) and theirs <= {"integer", "number"}
        if "type" in node and ours != theirs and not narrows:
            named = "/".join(sorted(theirs)) or "schema without a 'type'"
            article = "an" if named[0] in "aeiou" else "a"
            return f"'$ref' to {article} {named} beside 'type' {types!r} (both apply; the models take one)"
        validating = sorted(k for k in node if k not in ANNOTATIONS and k != "$ref" and not k.startswith("x-"))
        if context.draft07 and validating:
            return f"'$ref' beside {validating[0]!r} (draft-07 ignores it, the models would apply it)"
    if isinstance(node.get("items"), list):
        return "'items' as a list (a tuple)"
    problem = _all_of_problem(node)
    if problem is not None:
        return problem
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        problem = pattern_dialect_problem(pattern)
        if problem is not None:
            return f"'pattern' {pattern!r} uses {problem}, which ECMA-262 and the models' Rust regex read differently,"
    return None


def _literal_problem(value: JSON, types: JSON) -> str | None:
    if isinstance(value, (dict, list)):
        return f"an {'object' if isinstance(value, dict) else 'array'} (generated as its type, not its value)"
    if isinstance(value, bool):
        return "a boolean (its Literal takes 1 and 0 too)"
    if isinstance(value, float):
        return "a number with a fraction or an exponent (generated as any number)"
    if isinstance(value, int) and value in (0, 1):
        return "the integer 0 or 1 (its Literal takes false and true too)"
    allowed = [types] if isinstance(types, str) else types if isinstance(types, list) else None
    if allowed is not None and not any(_of_type(value, t) for t in allowed):
        return f"which its 'type' {types!r} refuses (the models would accept it)"
    return None


def _of_type(value: JSON, name: str) -> bool:
    if name in ("integer", "number"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = JSON_TYPES.get(name)
    return (
        expected is not None and isinstance(value, expected) and not (expected is not bool and isinstance(value, bool))
    )


def _all_of_problem(node: dict[str, JSON]) -> str | None:
    parts = [p for p in node.get("allOf") or () if isinstance(p, dict)]
    if not parts:
        return None
    seen: set[str] = set()
    for part in [node, *parts]:
        if isinstance(part.get("additionalProperties"), dict):
            return "'allOf' with extra properties of a type in a part (generated by inheritance: not for the others)"
        names = part.get("properties")
        for name in names if isinstance(names, dict) else ():
            if name in seen:
                return f"'allOf' declaring property {name!r} twice (generated by inheritance: one wins, none intersect)"
            seen.add(name)
    return None


def pattern_dialect_problem(pattern: str) -> str | None:
    r"""What in ``pattern`` ECMA-262 (JSON Schema's regex dialect) and Rust's ``regex`` (the models')
    read differently, named; None if nothing: ``.`` (ECMA leaves out ``\r`` and the line
    separators), the classes ``\w \d \s \b`` and their negations (ASCII in ECMA but ``\s``, whose
    whitespace is another set than Rust's Unicode one),
    a POSIX class ``[[:alpha:]]`` (a set of characters in ECMA), ``[]``, look-arounds (Rust has
    none), named groups and inline flags ``(?i)``."""
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            if pattern[i + 1] in "wWdDsSbB":
                return f"'\\{pattern[i + 1]}'"
            i += 2
            continue
        if in_class:
            if char == "[" and pattern.startswith("[:", i):
                return "a POSIX class '[:'"
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if pattern.startswith("[]", i) or pattern.startswith("[^]", i):
                return "'[]' (an empty class in ECMA-262, a ']' in Rust)"
        elif char == ".":
            return "'.'"
        elif char == "(" and pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
            around = any(pattern.startswith(a, i) for a in ("(?=", "(?!", "(?<=", "(?<!"))
            return "a look-around" if around else "a named group or an inline flag '(?'"
        i += 1
    return None


def check_references(document: dict[str, JSON], container: str, version: str) -> None:
    """Every ``$ref`` of every definition resolves within the document (a JSON Pointer after
    ``#``): a reference to nothing was generated as ``Any``, accepting whatever came. The
    generator reads no schema but this one (it works offline), so a reference elsewhere fails too."""
    for name, body in document[container].items():
        for ref, pointer in _references(body, f"/{container}/{_escape(name)}"):
            if _target(document, ref) is None:
                raise GeneratorError(
                    f"$ref {ref!r} at {pointer} names nothing in the schema", version=version, definition=name
                )


def _references(node: JSON, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        if isinstance(node.get("$ref"), str):
            yield node["$ref"], pointer
        for key, value in node.items():
            if key not in DATA_KEYWORDS:
                yield from _references(value, f"{pointer}/{_escape(str(key))}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _references(item, f"{pointer}/{i}")


def prepass(schema: LoadedSchema) -> tuple[dict[str, JSON], dict[str, int]]:
    """Return the transformed document and how many places each transform changed."""
    document = copy.deepcopy(schema.document)
    check_references(document, schema.container, schema.version)
    defs: dict[str, JSON] = document[schema.container]
    c, p = schema.container, schema.ref_prefix
    stats = {
        "renamed": safe_definition_names(defs, p, schema.version),
        "numbers": widen_numbers(defs, c),
        "defaults": drop_defaults(defs, c),
        "direction_unions": dedupe_direction_unions(defs, p),
        "links": clean_links(defs, c),
        "hoisted": hoist_inline_objects(defs, c, p),
        "discriminators": add_discriminators(defs, c, p),
    }
    return document, stats
