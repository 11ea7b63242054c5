"""What an author declares: tools, prompts, static resources and resource templates, each a typed function.

A declaration knows its wire identity (``key``), a cheap ``fingerprint`` of what it was
declared as (the function's name, signature text, docstring and the decorator's options), the
list entry it stands for (``entry``: built from its annotations, as the generator does) and,
built on first use, its ``binding``: the validators a call goes through.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, ClassVar, NamedTuple

import typing_extensions
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_json

from ...param_headers import header_problem
from .signatures import (
    Arguments,
    DeclarationError,
    Output,
    Parameters,
    RevisionTypes,
    UriTemplate,
    describe_function,
    module_name,
    prompt_arguments,
    type_hints,
)
from .specs import SpecArguments, SpecOutput, ToolSpec

JSON = Any
# 2: the types the annotations reach, and the function a decorator wraps; 3: the annotations resolved
# (``Annotated`` metadata, ``Literal`` values and aliases behind string annotations); 4: the
# signature's text by ``stable`` too (its defaults and annotations held addresses and set orders),
# and the types reached through type aliases; 5: every attribute of a field info (validation and
# serialization aliases, examples, title, json_schema_extra, default factory...), the docstrings of the
# models, dataclasses, typed dicts and enums reached, a model's computed fields, a dataclass's defaults
# by factory and a named tuple's fields; 6: a docstring's ``Args:`` section describes the parameters
# (the same docstring now gives another schema: every surface module is rewritten once)
FINGERPRINT_FORMAT = 6
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")  # in the repr of a function or object: differs each run
STABLE_DEPTH = 20  # how deep ``stable`` follows nested values
STABLE_BUDGET = 100_000  # values one ``stable`` writes a second time at most (a graph followed along every path)
STABLE_LONG = 1024  # characters of a value's text past which its digest stands for it


def docstring(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    return doc or None


def signature_text(fn: Callable[..., Any]) -> str:
    """The parameters, defaults and annotations of ``fn`` as text (cheaper than ``inspect.signature``);
    the same whether its module was imported or run as a script (``__main__``)."""
    fn = inspect.unwrap(fn)  # a decorated function: the one whose signature is served (inspect.signature's)
    code = getattr(fn, "__code__", None)
    if code is None:
        try:
            signature = inspect.signature(fn)
        except (TypeError, ValueError) as exc:
            raise DeclarationError(f"{describe_function(fn)} has no signature to serve: {exc}") from None
        parameters = [(p.name, p.kind.name, p.default, p.annotation) for p in signature.parameters.values()]
        text = stable((parameters, signature.return_annotation), home=_home(fn))
    else:
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        text = stable((names, fn.__defaults__, getattr(fn, "__kwdefaults__", None), fn.__annotations__), home=_home(fn))
    module = getattr(fn, "__module__", None)
    if module == "__main__":
        text = text.replace("__main__.", f"{module_name(module)}.")
    return text


def types_text(fn: Callable[..., Any]) -> str:
    """The annotations of ``fn`` resolved, and the models, dataclasses, typed dicts and enums they
    reach, as text: a field of one of them changed changes its schemas, not the function's
    signature; so does a name a string annotation stands for (``from __future__ import
    annotations``: ``Annotated[int, Field(le=MAX)]`` is the same text whatever ``MAX`` is)."""
    try:
        hints = typing.get_type_hints(inspect.unwrap(fn), include_extras=True)
    except Exception as exc:  # the declaration fails the same way when it is built
        return f"unresolved: {exc!r}"
    home = _home(inspect.unwrap(fn))
    resolved = stable(hints, home=home)
    seen: dict[Any, str] = {}
    aliases: set[int] = set()  # the type aliases followed (one may stand for itself: ``type T = list[T]``)

    def visit(tp: Any) -> None:
        for arg in typing.get_args(tp):
            visit(arg)
        for alias in (tp, typing.get_origin(tp)):  # a TypeAliasType, or one given arguments
            if _ALIASES and isinstance(alias, _ALIASES) and id(alias) not in aliases:
                aliases.add(id(alias))
                visit(typing.cast(Any, alias).__value__)
        if not isinstance(tp, type) or tp in seen:
            return
        doc = _ADDRESS.sub("", tp.__doc__) if isinstance(tp.__doc__, str) else None  # a schema's description
        if issubclass(tp, BaseModel):
            fields = tp.model_fields
            computed = tp.model_computed_fields  # in an output schema
            parts = [list(fields.items()), dict(tp.model_config), doc, sorted(computed.items())]
            seen[tp] = stable(parts, home=home)
            for f in fields.values():
                visit(f.annotation)
            for c in computed.values():
                visit(c.return_type)
        elif dataclasses.is_dataclass(tp):
            dc_fields = [
                (f.name, f.type, f.default, f.default_factory, f.init, f.kw_only) for f in dataclasses.fields(tp)
            ]
            seen[tp] = stable([dc_fields, doc, getattr(tp, "__pydantic_config__", None)], home=home)
            for hint in _hints(tp).values():
                visit(hint)
        elif typing_extensions.is_typeddict(tp):  # (typing's misses typing_extensions' before 3.12)
            hints_of = _hints(tp)
            required: Any = getattr(tp, "__required_keys__", frozenset())
            seen[tp] = stable([hints_of, required, doc, getattr(tp, "__pydantic_config__", None)], home=home)
            for hint in hints_of.values():
                visit(hint)
        elif issubclass(tp, enum.Enum):
            seen[tp] = stable([[(m.name, m.value) for m in tp], doc])
        elif issubclass(tp, tuple) and isinstance(named := getattr(tp, "_fields", None), tuple):  # a NamedTuple
            hints_of = _hints(tp)
            seen[tp] = stable([named, hints_of, getattr(tp, "_field_defaults", None)], home=home)
            for hint in hints_of.values():
                visit(hint)

    for hint in hints.values():
        visit(hint)
    text = resolved + repr(sorted(f"{describe_type(tp)}={text}" for tp, text in seen.items()))
    if getattr(fn, "__module__", None) == "__main__":  # run as a script: named as imported
        text = text.replace("__main__.", f"{module_name('__main__')}.")
    return text


def _home(fn: Callable[..., Any]) -> str | None:
    module = getattr(fn, "__module__", None)
    return _package(module) if isinstance(module, str) else None


def _package(module: str) -> str:
    """A module's top-level package (a script run as ``__main__``: as imported)."""
    return module_name(module).partition(".")[0]


def stable(value: Any, depth: int = 0, home: str | None = None) -> str:
    """``value`` as text that is the same in every process for the same declaration: sets sorted
    (their order follows the hash seed), memory addresses left out, type aliases followed to what
    they stand for, typing forms and pydantic's field infos and metadata by their parts. A value
    met again inside itself is ``...``; one met twice is written once (a default holding itself,
    or one list many times, grew with 2 to the depth)."""
    return _Stable(home).text(value, depth)


_ALIASES: tuple[type, ...] = tuple(
    t for t in (getattr(typing, "TypeAliasType", None), getattr(typing_extensions, "TypeAliasType", None)) if t
)


class _Stable:
    """One ``stable`` call. A value's text is kept for when it is met again only when it is
    whole: one cut short (the depth reached, or a value met inside itself) depends on where it
    was met, and a set's first-met element follows the hash seed (kept, it made fingerprints
    differ between processes). A value written a second time (not kept: cut short in it) counts
    against ``STABLE_BUDGET``; past it, the rest is ``...`` (a graph followed along every path).
    A text longer than ``STABLE_LONG`` is its digest, so a value met many times adds little (a
    list holding itself ten times over, eight levels deep, was 522 MB of text)."""

    def __init__(self, home: str | None = None) -> None:
        self.home = home  # the declaring function's package: its functions are written with their source
        self.written: dict[int, tuple[str, int]] = {}  # a whole text, and how many levels it goes down
        self.open: set[int] = set()
        self.kept: list[Any] = []  # what ``written`` is keyed by stays alive (ids are not reused)
        self.seen: set[int] = set()  # every value written (kept alive by ``kept``)
        self.cuts = 0  # texts cut short so far
        self.deepest = 0  # the deepest level written so far
        self.budget = STABLE_BUDGET

    def text(self, value: Any, depth: int) -> str:
        if isinstance(value, str | int | float | bool | bytes | type(None)):
            return repr(value)
        key = id(value)
        kept = self.written.get(key)
        if kept is not None and depth + kept[1] <= STABLE_DEPTH:  # written whole here too
            self.deepest = max(self.deepest, depth + kept[1])
            return kept[0]
        again = key in self.seen
        if depth > STABLE_DEPTH or key in self.open or (again and self.budget <= 0):
            self.cuts += 1
            return "..."
        if again:
            self.budget -= 1
        else:
            self.seen.add(key)
            self.kept.append(value)
        cuts, outer, self.deepest = self.cuts, self.deepest, depth
        self.open.add(key)
        try:
            written = self._text(value, depth + 1)
        finally:
            self.open.discard(key)
            height = self.deepest - depth
            self.deepest = max(outer, self.deepest)
        if len(written) > STABLE_LONG:
            written = "#" + hashlib.sha256(written.encode()).hexdigest()[:32]
        if self.cuts == cuts:
            self.written[key] = (written, height)
        return written

    def _text(self, value: Any, inner: int) -> str:
        text = self.text
        if isinstance(value, set | frozenset):
            return "{" + ", ".join(sorted(text(v, inner) for v in value)) + "}"
        if isinstance(value, dict):
            return "{" + ", ".join(sorted(f"{text(k, inner)}: {text(v, inner)}" for k, v in value.items())) + "}"
        if isinstance(value, list | tuple):
            parts = ", ".join(text(v, inner) for v in value)
            return f"[{parts}]" if isinstance(value, list) else f"({parts})"
        if isinstance(value, functools.partial):
            return f"partial({text(value.func, inner)}, {text(value.args, inner)}, {text(value.keywords, inner)})"
        if _ALIASES and isinstance(value, _ALIASES):  # a TypeAliasType (``type X = ...``)
            alias: Any = value
            return f"{alias.__name__}={text(alias.__value__, inner)}"
        origin, args = typing.get_origin(value), typing.get_args(value)
        if origin is not None and args:  # generics, unions, Literal, Annotated (its type, then its metadata)
            return f"{text(origin, inner)}[{', '.join(text(a, inner) for a in args)}]"
        if isinstance(value, FieldInfo):
            return "FieldInfo(" + ", ".join(f"{k}={text(v, inner)}" for k, v in _field_parts(value)) + ")"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = ", ".join(f"{f.name}={text(getattr(value, f.name), inner)}" for f in dataclasses.fields(value))
            return f"{type(value).__qualname__}({fields})"
        if isinstance(value, BaseModel):  # a model as a default: its fields (a set among them) by their parts
            members = {**{name: getattr(value, name) for name in type(value).model_fields}, **(value.model_extra or {})}
            return f"{type(value).__qualname__}({text(members, inner)})"
        if isinstance(value, type) or inspect.isroutine(value):
            module = getattr(value, "__module__", None) or "?"
            named = f"{module}.{getattr(value, '__qualname__', '?')}"
            code = getattr(value, "__code__", None) if inspect.isfunction(value) else None
            if not isinstance(code, types.CodeType) or self.home is None or _package(module) != self.home:
                return named  # (another package's function, a class, a builtin: by name)
            source = _source_digest(code)
            return named if source is None else f"{named}#{source}"
        try:
            return _ADDRESS.sub("", repr(value))
        except Exception:  # a repr that fails: the type stands for it
            return f"<{type(value).__module__}.{type(value).__qualname__}>"


def _field_parts(info: FieldInfo) -> list[tuple[str, Any]]:
    """What a field info says, each attribute that is set: any of them may change a schema or
    validation (``validation_alias``, ``examples``, ``json_schema_extra``...). Its public slots,
    not ``__repr_args__``, which leaves out a validation alias equal to the alias and writes a
    default factory by its name (a factory of the app's own is written with its source here)."""
    parts: list[tuple[str, Any]] = [("required", info.is_required())]
    for name in getattr(type(info), "__slots__", ()):
        if name.startswith("_"):
            continue
        value = getattr(info, name, None)
        if value is not None and value is not PydanticUndefined:
            parts.append((name, value))
    return parts


@functools.lru_cache(maxsize=1024)
def _source_digest(code: types.CodeType) -> str | None:
    """A digest of the source of the app's own function (a validator, a ``json_schema_extra``, a
    default factory an annotation holds): what it does shapes the schema, and its name alone
    stayed the same while the schema changed. The source, not the bytecode, which differs
    between Python versions; None for code without source."""
    try:
        lines, _ = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:16]


def _hints(tp: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:
        return {}


def describe_type(tp: type) -> str:
    return f"{tp.__module__}.{tp.__qualname__}"


class ToolBinding(NamedTuple):
    params: Parameters
    arguments: Arguments | SpecArguments
    output: Output | SpecOutput


class PromptBinding(NamedTuple):
    params: Parameters
    arguments: Arguments


class Declaration:
    """One declared function and the decorator's options (wire names, JSON values)."""

    kind: ClassVar[str]

    def __init__(self, name: str, fn: Callable[..., Any], options: dict[str, JSON] | None = None) -> None:
        self.name = name
        self.fn = fn
        self.options: dict[str, JSON] = options if options is not None else {}
        self._binding: Any = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.function})"

    @property
    def key(self) -> str:
        return f"{self.kind} {self.name}"

    @property
    def function(self) -> str:
        return describe_function(self.fn)

    @property
    def description(self) -> str | None:
        given = self.options.get("description")
        return given if isinstance(given, str) else docstring(self.fn)

    def fingerprint(self) -> str:
        """A digest of the declaration as written: changes when its signature, docstring or options do."""
        text = to_json(
            [
                FINGERPRINT_FORMAT,
                self.key,
                self.function,
                signature_text(self.fn),
                types_text(self.fn),
                docstring(self.fn),
                self.options,
                *self.settings(),
            ],
            fallback=repr,
        )
        return hashlib.sha256(text).hexdigest()[:24]

    def settings(self) -> list[JSON]:
        """What the declaration was told beyond its options that changes its entry (none here)."""
        return []

    def entry(self, types: RevisionTypes) -> dict[str, JSON]:
        raise NotImplementedError

    def _common(self, entry: dict[str, JSON]) -> dict[str, JSON]:
        if "title" in self.options:
            entry["title"] = self.options["title"]
        description = self.description
        if description:
            entry["description"] = description
        return entry


class Tool(Declaration):
    kind: ClassVar[str] = "tool"

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        options: dict[str, JSON] | None = None,
        *,
        structured: bool | None = None,  # None: from the return annotation
        spec: ToolSpec[Any, Any] | None = None,  # schema-first: the definition and its generated models
    ) -> None:
        super().__init__(name, fn, options)
        self.structured = structured
        self.spec = spec

    def settings(self) -> list[JSON]:
        """``structured`` given: it decides whether the entry has an ``outputSchema``."""
        return [] if self.structured is None else [{"structured": self.structured}]

    def binding(self, types: RevisionTypes) -> ToolBinding:
        if self._binding is None:
            hints = type_hints(self.fn)
            params = Parameters.of(self.fn, hints)
            if self.spec is not None:
                if len(params.fields) != 1:
                    raise DeclarationError(
                        f"{self.function}: a handler of {self.spec.name!r} takes its arguments model "
                        "(and optionally a Context), nothing else"
                    )
                spec_arguments = SpecArguments(self.spec, params.fields[0][0])
                self._binding = ToolBinding(params, spec_arguments, SpecOutput(self.spec, types))
            else:
                arguments = Arguments(self.fn, params, f"{self.fn.__name__}_arguments", strict=True)
                output = Output(self.fn, hints.get("return", inspect.Parameter.empty), types, self.structured)
                self._binding = ToolBinding(params, arguments, output)
        binding: ToolBinding = self._binding
        return binding

    def entry(self, types: RevisionTypes) -> dict[str, JSON]:
        entry = self._entry(types)
        problem = header_problem(entry.get("inputSchema"))  # (tools.mdx: a client drops such a tool)
        if problem is not None:
            raise DeclarationError(f"{self.function}: tool {self.name!r}: {problem}")
        return entry

    def _entry(self, types: RevisionTypes) -> dict[str, JSON]:
        if self.spec is not None:
            self.binding(types)  # checks the handler's parameters
            return dict(self.spec.definition)
        binding = self.binding(types)
        entry = self._common({"name": self.name})
        entry["inputSchema"] = binding.arguments.schema()
        if binding.output.schema is not None:
            entry["outputSchema"] = binding.output.schema
        for key in ("annotations", "icons", "execution", "_meta"):
            if key in self.options:
                entry[key] = self.options[key]
        if types.tool is not None:  # the entry as the revision's Tool has it (a field it requires, the options)
            schemas = {key: {"type": "object"} for key in ("inputSchema", "outputSchema") if key in entry}
            try:  # the schemas are built from the annotations, and checked as JSON Schemas elsewhere
                types.tool.model_validate({**entry, **schemas})
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(str(part) for part in error['loc']) or 'the entry'}: {error['msg']}"
                    for error in exc.errors(include_url=False)
                )
                raise DeclarationError(f"{self.function}: tool {self.name!r}: {problems}") from None
        return entry


class Prompt(Declaration):
    kind: ClassVar[str] = "prompt"

    def binding(self) -> PromptBinding:
        if self._binding is None:
            params = Parameters.of(self.fn, type_hints(self.fn))
            self._binding = PromptBinding(
                params, Arguments(self.fn, params, f"{self.fn.__name__}_arguments", strict=False)
            )
        binding: PromptBinding = self._binding
        return binding

    def entry(self, types: RevisionTypes) -> dict[str, JSON]:
        entry = self._common({"name": self.name})
        arguments = prompt_arguments(self.binding().arguments)
        if arguments:
            entry["arguments"] = arguments
        for key in ("icons", "_meta"):
            if key in self.options:
                entry[key] = self.options[key]
        return entry


class UnsafePath(ValueError):
    """A URI matches a resource template but a variable's value is no safe piece of a path."""

    def __init__(self, template: str, variable: str) -> None:
        super().__init__(f"{{{variable}}} of {template!r} is not a safe path (allow_paths= to take it)")
        self.template, self.variable = template, variable


class Resource(Declaration):
    """A static resource (its URI has no variables) or a resource template (``template`` set)."""

    kind: ClassVar[str] = "resource"

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        options: dict[str, JSON] | None = None,
        *,
        uri: str,
        template: UriTemplate | None = None,
        allow_paths: frozenset[str] = frozenset(),  # the variables whose values are not checked as paths
    ) -> None:
        super().__init__(name, fn, options)
        self.uri = uri
        self.template = template
        self.allow_paths = allow_paths

    def values(self, uri: str) -> dict[str, str] | None:
        """The template's variables read from ``uri``, None when it does not match; raises
        ``UnsafePath`` when one holds what could reach outside a directory (``UriTemplate.unsafe``)
        but for ``allow_paths``."""
        if self.template is None:
            return None
        values = self.template.match(uri)
        if values is not None:
            name = self.template.unsafe(values, self.allow_paths)
            if name is not None:
                raise UnsafePath(self.uri, name)
        return values

    @property
    def key(self) -> str:
        return f"resource template {self.uri}" if self.template is not None else f"resource {self.uri}"

    def binding(self) -> PromptBinding:
        if self._binding is None:
            params = Parameters.of(self.fn, type_hints(self.fn))
            names = {name for name, _, _ in params.fields}
            wanted = set(self.template.variables) if self.template is not None else set()
            if names != wanted:
                raise DeclarationError(
                    f"{self.function}: its parameters ({', '.join(sorted(names)) or 'none'}) must be the variables "
                    f"of {self.uri!r} ({', '.join(sorted(wanted)) or 'none'}), besides a Context"
                )
            self._binding = PromptBinding(params, Arguments(self.fn, params, f"{self.fn.__name__}_uri", strict=False))
        binding: PromptBinding = self._binding
        return binding

    @property
    def mime_type(self) -> str | None:
        value = self.options.get("mimeType")
        return value if isinstance(value, str) else None

    def entry(self, types: RevisionTypes) -> dict[str, JSON]:
        self.binding()  # checks the parameters against the template
        uri_key = "uriTemplate" if self.template is not None else "uri"
        entry = self._common({uri_key: self.uri, "name": self.name})
        for key in ("mimeType", "annotations", "size", "icons", "_meta"):
            if key in self.options:
                entry[key] = self.options[key]
        return entry
