"""Typed functions -> JSON Schemas, argument validators and result conversion.

One mapping, used twice: by the generator (through ``App.describe``) to write each tool's
``inputSchema``/``outputSchema`` into the generated surface module, and at run time, lazily on
a tool's first call, to build the validator of its arguments and of its result from the same
annotations (so the function receives the author's own types back).

- Arguments: every parameter but the ``Context`` one becomes a field of a pydantic model that
  forbids unknown keys; arguments are validated strictly in JSON mode (``"5"`` is not an
  integer, an enum takes its value), so what passes is what the schema advertises (but for
  ``5.0``, an integer to JSON Schema, refused for an ``int`` as by the protocol models).
- Results: ``str``, ``None``, content blocks (and lists of them) stay unstructured; any other
  annotation is structured output, its JSON Schema the ``outputSchema`` (wrapped as
  ``{"result": ...}`` when it is not an object: ``structuredContent`` is an object up to
  2025-11-25, and one app serves those sessions too). A returned value is validated against the
  annotation and sent as ``structuredContent`` plus its JSON as text; one that does not fit, or
  has no JSON form (NaN, a cycle), is never sent as success.
- Schemas are self-contained (``$defs`` at the root of each schema) and carry no titles
  pydantic made up (parameter names turned into ``"A"``, model names stay).
"""

from __future__ import annotations

import base64
import contextlib
import inspect
import math
import re
import sys
import types as pytypes
import typing
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, Field, PydanticUserError, TypeAdapter, ValidationError, create_model
from pydantic.json_schema import GenerateJsonSchema
from pydantic_core import PydanticSerializationError, from_json, to_json

from ...codec import MAX_REPORTED_ERRORS, shortened
from ...uri_template import EXPRESSION, OPERATORS, QUERY
from ..services import Context
from ..services.inputs import inlined
from .media import Media, block_kinds

JSON = Any


class DeclarationError(TypeError):
    """A function cannot be served as declared (a parameter without a name, an unresolvable annotation...)."""


class ArgumentsError(ValueError):
    """Arguments that do not fit the declaration: one ``(field, message)`` per problem."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))
        self.problems = problems

    def lines(self) -> str:
        return "\n".join(f"- {field}: {message}" for field, message in self.problems)


class OutputError(ValueError):
    """A function's result does not fit its declared return type (its ``outputSchema``)."""


class ToolSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without the titles it makes up from field names, and without
    ``uniqueItems`` for a set an argument takes (validation takes ``[1, 1]`` as ``{1}``: what
    passes is what the schema advertises)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def _common_set_schema(self, schema: Any) -> dict[str, JSON]:
        made: dict[str, JSON] = super()._common_set_schema(schema)
        if self.mode == "validation":
            made.pop("uniqueItems", None)
        return made


# -- the revision's types the conversion needs --------------------------------------------------


def members(tp: Any) -> list[Any]:
    """The classes a type stands for: aliases, ``Annotated`` and unions unwrapped."""
    value = getattr(tp, "__value__", None)  # a TypeAliasType
    if value is not None:
        return members(value)
    origin = get_origin(tp)
    if origin is Annotated:
        return members(get_args(tp)[0])
    if origin is Union or origin is pytypes.UnionType:
        return [m for arg in get_args(tp) for m in members(arg)]
    return [tp]


class RevisionTypes(NamedTuple):
    """What conversion needs of the handler's revision, read from its method table."""

    call_tool_result: type[BaseModel] | None
    read_resource_result: type[BaseModel] | None
    get_prompt_result: type[BaseModel] | None
    interim: Callable[[], type[BaseModel] | None]  # the MRTR interim result model, once imported (never imports it)
    content: tuple[type[BaseModel], ...]  # the content block classes
    structured: bool  # the revision's tools have an ``outputSchema`` (2025-06-18 and later)
    tool: type[BaseModel] | None = None  # the revision's ``Tool``: a declared entry is checked against it

    @classmethod
    def of(cls, revision: Any) -> RevisionTypes:
        methods = revision.methods

        def result(method: str) -> Any:
            spec = methods.request(method)
            return spec.result if spec is not None else None

        call = result("tools/call")
        content: list[Any] = []
        if call is not None and "content" in call.model_fields:
            for item in get_args(call.model_fields["content"].annotation):
                content.extend(m for m in members(item) if isinstance(m, type))
        listed = result("tools/list")
        tool = get_args(listed.model_fields["tools"].annotation) if listed is not None else ()
        model = tool[0] if tool else None
        structured = isinstance(model, type) and issubclass(model, BaseModel) and "output_schema" in model.model_fields
        return cls(
            call,
            result("resources/read"),
            result("prompts/get"),
            revision.loaded_input_required,  # importing it here cost an App ~70 ms of start-up
            tuple(content),
            structured,
            model if isinstance(model, type) and issubclass(model, BaseModel) else None,
        )

    def passthrough(self, value: Any, result: type[BaseModel] | None) -> bool:
        """A result the function built itself (the method's result model, or ``input_required``)."""
        if result is not None and isinstance(value, result):
            return True
        interim = self.interim()
        if interim is not None and isinstance(value, interim):
            return True
        return isinstance(value, dict) and value.get("resultType") == "input_required"


# -- functions ------------------------------------------------------------------------------


def module_name(module: str) -> str:
    """A module's import name; for ``__main__`` (a script), the script's file name, as importing it would give."""
    if module != "__main__":
        return module
    path = getattr(sys.modules.get("__main__"), "__file__", None)
    return Path(path).stem if path else module


def describe_function(fn: Callable[..., Any]) -> str:
    return f"{module_name(getattr(fn, '__module__', '?'))}.{getattr(fn, '__qualname__', repr(fn))}"


def declared_at(fn: Callable[..., Any]) -> str:
    """``describe_function`` with where the function is defined (its file, relative to the working
    directory when under it, and the line of its ``def``), for the declaration errors raised when
    the app is first listed or served, far from the decorator."""
    named = describe_function(fn)
    try:
        code = inspect.unwrap(fn).__code__
    except (AttributeError, ValueError):
        return named
    path = Path(code.co_filename)
    with contextlib.suppress(ValueError, OSError):
        path = path.resolve().relative_to(Path.cwd().resolve())
    return f"{named} (at {path}, line {code.co_firstlineno})"


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # NameError for a name the module does not define, or a bad string
        raise DeclarationError(f"cannot read the annotations of {declared_at(fn)}: {exc}") from None


def is_context(annotation: Any) -> bool:
    return any(isinstance(m, type) and issubclass(m, Context) for m in members(annotation))


class Parameters(NamedTuple):
    """A function's parameters: the ``Context`` one, and the others with their annotations and defaults."""

    context: str | None
    fields: tuple[tuple[str, Any, Any], ...]  # (name, annotation, default or inspect.Parameter.empty)
    asynchronous: bool

    @classmethod
    def of(cls, fn: Callable[..., Any], hints: Mapping[str, Any]) -> Parameters:
        check_shape(fn)
        context = None
        fields = []
        for param in inspect.signature(fn).parameters.values():
            annotation = hints.get(param.name, Any)
            if is_context(annotation):
                if context is not None:
                    raise DeclarationError(
                        f"{describe_function(fn)}: parameters {context!r} and {param.name!r} both take the Context"
                    )
                context = param.name
                continue
            fields.append((param.name, annotation, param.default))
        return cls(context, tuple(fields), is_async(fn))


def check_shape(fn: Callable[..., Any]) -> None:
    """What can be refused of a function before its annotations are read (at its decorator, so
    the error points there): a generator, a parameter that cannot be passed by name."""
    inner = inspect.unwrap(fn)
    if inspect.isgeneratorfunction(inner) or inspect.isasyncgenfunction(inner):
        raise DeclarationError(
            f"{describe_function(fn)}: a generator cannot be served (it would be sent as the generator "
            "object): return the values"
        )
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): said when the app is described
        return
    for param in parameters:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            raise DeclarationError(f"{describe_function(fn)}: parameter {param.name!r} must be passable by name")


def is_async(fn: Callable[..., Any]) -> bool:
    """``fn`` returns an awaitable: an ``async def``, one behind a ``functools.wraps`` wrapper, or
    an object whose ``__call__`` is one."""
    return any(inspect.iscoroutinefunction(f) for f in (fn, inspect.unwrap(fn), type(fn).__call__))


def field_name(name: str, index: int, taken: Collection[str] = ()) -> tuple[str, str | None]:
    """A model field for parameter ``name`` and its alias when the name cannot be a field's (one
    no other parameter is ``taken`` as: ``_x`` beside ``field_0``)."""
    if name.startswith("_") or hasattr(BaseModel, name):
        field = f"field_{index}"
        while field in taken:
            field += "_"
        return field, name
    return name, None


def strip_title(schema: dict[str, JSON]) -> dict[str, JSON]:
    schema.pop("title", None)
    return schema


def inline_root(schema: dict[str, JSON]) -> dict[str, JSON]:
    """A schema whose root is a bare ``$ref`` into ``$defs`` (a recursive model) with the definition
    copied onto the root; ``$defs`` stay, since nested references point into them."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        definition = schema.get("$defs", {}).get(ref[len("#/$defs/") :], {})
        return {**definition, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def validation_problems(
    exc: ValidationError, prefix: tuple[Any, ...] = (), whole: str = "(arguments)"
) -> list[tuple[str, str]]:
    """One ``(where, what)`` per error, at most ``MAX_REPORTED_ERRORS`` of them and a last one
    counting the rest (the text goes back to the client: it stays bounded whatever was sent);
    ``whole`` names an error of the validated value itself."""
    problems = []
    for error in exc.errors(include_url=False)[:MAX_REPORTED_ERRORS]:
        loc = shortened(".".join(str(p) for p in (*prefix, *error["loc"])) or whole)
        message = shortened(error["msg"])
        if error["type"] not in ("missing", "extra_forbidden") and "input" in error:
            message += f" (got {to_json(error['input'], fallback=repr).decode()[:60]})"
        elif error["type"] == "extra_forbidden":
            message = "unexpected argument"
        problems.append((loc, message))
    return with_the_rest_counted(problems, exc.error_count())


def with_the_rest_counted(problems: list[tuple[str, str]], total: int) -> list[tuple[str, str]]:
    """``problems`` (the first of ``total``) and a last one counting those left out."""
    if total > len(problems):
        problems.append(("...", f"{total - len(problems)} more"))
    return problems


# -- JSON kinds pydantic does not tell apart --------------------------------------------------
#
# pydantic's strict JSON mode compares a literal's or an int enum's values with ``==``: it takes
# ``true`` for ``Literal[1]`` or an ``IntEnum`` member 1, and ``1`` for ``Literal[True]``, which
# the advertised JSON Schema (``enum``, ``const``) refuses. A model's validator is the one it
# was built with (pydantic-core reuses it for every model node), so the kinds are checked here,
# over the JSON arguments, after pydantic accepted them, for a declaration whose schema has such
# a choice at all.

KindProblem = tuple[str, str]


def numeric_choices(core: Any) -> bool:
    """Whether the core schema ``core`` has a literal with a number or a boolean, or a numeric enum."""
    if isinstance(core, list):
        return any(numeric_choices(item) for item in core)
    if not isinstance(core, dict):
        return False
    kind = core.get("type")
    if kind == "literal" and any(type(e) in (bool, int, float) for e in core.get("expected", ())):
        return True
    if kind == "enum" and any(type(member.value) in (bool, int, float) for member in core.get("members", ())):
        return True
    return any(numeric_choices(value) for key, value in core.items() if key not in ("cls", "metadata"))


def _one_of(values: Sequence[Any]) -> str:
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _kind_of_choice(value: Any, expected: Sequence[Any], where: str) -> list[KindProblem]:
    if type(value) is bool:
        wrong = not any(type(e) is bool for e in expected)
    else:
        wrong = type(value) in (int, float) and not any(type(e) in (int, float) for e in expected)
    return [(where, f"Input should be {_one_of(expected)}")] if wrong else []


def kind_problems(value: Any, core: Any, refs: dict[str, Any], where: str = "") -> list[KindProblem]:
    """Where ``value`` (JSON data pydantic accepted for ``core``) is a boolean for a numeric choice
    or a number for a boolean one, by its place in the value (``a.0.b``). One pass over the value,
    none over a union's branches (which branch pydantic took is not known here, and walking each
    costs as much again at every level of a recursive union) nor under a validator of the
    author's that runs before pydantic's own (it may turn a boolean into the number it wants):
    those stay as pydantic judged them."""
    if not isinstance(core, dict):
        return []
    kind = core.get("type")
    at = where.lstrip(".")
    if kind == "definitions":
        for definition in core.get("definitions", ()):
            refs[definition["ref"]] = definition
        return kind_problems(value, core["schema"], refs, where)
    if kind == "definition-ref":
        return kind_problems(value, refs.get(core["schema_ref"]), refs, where)
    if kind == "literal":
        return _kind_of_choice(value, core.get("expected", ()), at)
    if kind == "enum":
        return _kind_of_choice(value, [member.value for member in core.get("members", ())], at)
    if (value is None and kind in ("nullable", "default")) or kind in ("function-before", "function-wrap"):
        return []
    if kind in ("model-fields", "typed-dict", "dataclass-args") and isinstance(value, dict):
        fields = core.get("fields", {})  # by name; a dataclass's, a list of fields with their names
        named = fields.items() if isinstance(fields, dict) else ((field.get("name"), field) for field in fields)
        found: list[KindProblem] = []
        for name, field in named:
            key = field.get("validation_alias", name)
            if isinstance(key, str) and key in value:
                found += kind_problems(value[key], field.get("schema"), refs, f"{where}.{key}")
        return found
    if kind in ("list", "set", "frozenset") and isinstance(value, list):
        items = core.get("items_schema")
        return [p for i, item in enumerate(value) for p in kind_problems(item, items, refs, f"{where}.{i}")]
    if kind == "tuple" and isinstance(value, list):
        schemas = core.get("items_schema", [])
        variadic = core.get("variadic_item_index")
        found = []
        for i, item in enumerate(value):
            index = i if variadic is None or i < variadic else variadic
            if index < len(schemas):
                found += kind_problems(item, schemas[index], refs, f"{where}.{i}")
        return found
    if kind == "dict" and isinstance(value, dict):
        values = core.get("values_schema")
        return [p for key, item in value.items() for p in kind_problems(item, values, refs, f"{where}.{key}")]
    inner = core.get("schema")
    return kind_problems(value, inner, refs, where) if isinstance(inner, dict) else []


# a docstring's sections of parameters: Google style (``Args:``, ``Keyword Args:``... then indented
# ``name: text`` or ``name (type): text`` entries) or NumPy style (``Parameters`` underlined by
# dashes, then ``name : type`` lines, ``x, y : float`` too, each followed by its indented text)
_GOOGLE_SECTION = re.compile(
    r"(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Kwargs|Other Parameters):\s*\Z"
)
_NUMPY_SECTIONS = frozenset({"Parameters", "Other Parameters"})
_GOOGLE_ENTRY = re.compile(r"\*{0,2}([A-Za-z_]\w*)(?:\s*\((?:[^()]|\([^()]*\))*\))?\s*:\s*(.*)\Z")
_NUMPY_ENTRY = re.compile(r"(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*)\s*(?::.*)?\Z")


def _underline(lines: list[str], i: int) -> bool:
    return i < len(lines) and bool(lines[i].strip()) and set(lines[i].strip()) == {"-"}


def parameter_docs(doc: str | None) -> dict[str, str]:
    """The description of each parameter a docstring's parameter sections (Google ``Args:``,
    ``Keyword Args:``...; NumPy ``Parameters``, ``Other Parameters``) give, paragraphs joined; {}
    when it has none. An entry line that reads as none is skipped (its text described nothing);
    a parameter described in its annotation (``Field(description=...)``) keeps that description."""
    if not doc:
        return {}
    lines = doc.expandtabs().splitlines()
    found: dict[str, list[str]] = {}
    i = 0
    while i < len(lines):
        header = lines[i].strip()
        google = bool(_GOOGLE_SECTION.match(header))
        numpy = header in _NUMPY_SECTIONS and _underline(lines, i + 1)
        if not (google or numpy):
            i += 1
            continue
        level = len(lines[i]) - len(lines[i].lstrip())
        j = i + (1 if google else 2)
        indent: int | None = None
        current: list[str] | None = None
        while j < len(lines):
            line = lines[j]
            if not line.strip():  # a blank line: the entry may go on in another paragraph
                j += 1
                continue
            depth = len(line) - len(line.lstrip())
            if depth < level or (google and depth == level) or (numpy and _underline(lines, j + 1)):
                break  # back at the section's level, or the next NumPy section's header
            entry_depth = indent = depth if indent is None else indent
            if depth <= entry_depth:
                match = (_GOOGLE_ENTRY if google else _NUMPY_ENTRY).match(line.strip())
                current = None
                if match is not None:
                    words: list[str] = [match.group(2)] if google and match.group(2) else []
                    for name in match.group(1).split(","):
                        found.setdefault(name.strip().lstrip("*"), words)
                    current = words
            elif current is not None:
                current.append(line.strip())
            j += 1
        i = j
    return {name: " ".join(words) for name, words in found.items() if words}


def described(annotation: Any) -> bool:
    """The annotation gives its own description (``Annotated[..., Field(description=...)]``)."""
    if get_origin(annotation) is not Annotated:
        return False
    return any(getattr(meta, "description", None) for meta in get_args(annotation)[1:])


class Arguments:
    """The validator of one function's arguments: a pydantic model of its parameters."""

    def __init__(self, fn: Callable[..., Any], params: Parameters, model_name: str, *, strict: bool) -> None:
        definitions: dict[str, Any] = {}
        self.names: list[tuple[str, str]] = []  # (field, parameter)
        taken = {name for name, _, _ in params.fields}
        docs = parameter_docs(inspect.getdoc(fn))
        for index, (name, annotation, default) in enumerate(params.fields):
            field, alias = field_name(name, index, taken)
            taken.add(field)
            options: dict[str, Any] = {} if alias is None else {"alias": alias}
            if name in docs and not described(annotation):  # the docstring's, where the annotation has none
                options["description"] = docs[name]
            info = Field(**options)
            annotated: Any = Annotated[annotation, info]  # a runtime annotation, built from the signature
            # no default in the signature: required, unless its ``Annotated[..., Field(default=...)]`` has one
            definitions[field] = annotated if default is inspect.Parameter.empty else (annotated, default)
            self.names.append((field, name))
        config = ConfigDict(  # allow_inf_nan: a JSON number too large for a float is not taken as inf
            extra="forbid",
            arbitrary_types_allowed=True,
            validate_by_alias=True,
            validate_by_name=False,
            allow_inf_nan=False,
        )
        try:
            self.model: type[BaseModel] = create_model(model_name, __config__=config, **definitions)
        except Exception as exc:
            raise DeclarationError(f"{declared_at(fn)}: its parameters cannot be validated: {exc}") from None
        self.strict = strict
        self._kinds: bool | None = None  # its schema has a numeric or boolean choice (found on first use)
        self.function = describe_function(fn)
        self.fn = fn  # (where it is defined is looked up only for an error: declared_at)

    def schema(self) -> dict[str, JSON]:
        try:
            return strip_title(self.model.model_json_schema(by_alias=True, schema_generator=ToolSchema))
        except PydanticUserError as exc:  # a parameter type with no JSON Schema (a connection, a lock)
            raise DeclarationError(f"{declared_at(self.fn)}: its parameters have no JSON Schema: {exc}") from None

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the function (sub-models stay models); raises ``ArgumentsError``."""
        try:
            if self.strict:  # JSON arguments, checked as the JSON Schema reads them
                instance = self.model.model_validate_json(to_json(arguments), strict=True)
                if self._kinds is None:
                    self._kinds = numeric_choices(self.model.__pydantic_core_schema__)
                if self._kinds:
                    problems = kind_problems(dict(arguments), self.model.__pydantic_core_schema__, {})
                    if problems:
                        raise ArgumentsError(with_the_rest_counted(problems[:MAX_REPORTED_ERRORS], len(problems)))
            else:  # strings from a URI or prompt arguments, converted to the annotations
                instance = self.from_strings(arguments)
        except ValidationError as exc:
            raise ArgumentsError(validation_problems(exc)) from None
        return {name: getattr(instance, field) for field, name in self.names}

    def from_strings(self, arguments: Mapping[str, Any]) -> BaseModel:
        """The model from string arguments (a prompt's, a URI template's), each converted to its
        annotation; a string its parameter refused (a list, a model, ``None``: no string is one)
        is read again as the JSON it holds, the only way a client can send such an argument. What
        a string already validates as stays the string; a string that is no JSON keeps its error."""
        try:
            return self.model.model_validate(arguments)
        except ValidationError as exc:
            retried = dict(arguments)
            refused = {error["loc"][0] for error in exc.errors(include_url=False) if error["loc"]}
            for name in refused:
                value = arguments.get(name) if isinstance(name, str) else None
                if isinstance(name, str) and isinstance(value, str):
                    with contextlib.suppress(ValueError):
                        retried[name] = from_json(value)
            if retried == dict(arguments):  # no refused string held JSON
                raise
            return self.model.model_validate(retried)


# -- tool results -------------------------------------------------------------------------------

UNSTRUCTURED, STRUCTURED, RESULT = "unstructured", "structured", "result"


def holds_raw_bytes(core: Any) -> bool:
    """``bytes`` in a pydantic core schema that JSON would write as UTF-8 text: with no serializer
    of its own above it (``Base64Bytes``, a ``PlainSerializer``) nor a config writing bytes as
    base64 or hex. Read from the core schema, not the JSON Schema: a ``str`` field an author
    documents as ``format: binary`` is text (a review of the diff)."""
    if isinstance(core, dict):
        if "serialization" in core:
            return False
        config = core.get("config")
        if isinstance(config, dict) and config.get("ser_json_bytes", "utf8") != "utf8":
            return False
        if core.get("type") == "bytes":
            return True
        return any(holds_raw_bytes(value) for key, value in core.items() if key != "metadata")
    if isinstance(core, list | tuple):
        return any(holds_raw_bytes(value) for value in core)
    return False


def holds_non_finite(value: Any) -> bool:
    """A NaN or an infinity anywhere in ``value`` (dicts, lists, tuples and sets of plain data)."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(holds_non_finite(item) for item in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(holds_non_finite(item) for item in value)
    return False


class Output:
    """How a tool's return value becomes a ``CallToolResult``."""

    def __init__(self, fn: Callable[..., Any], annotation: Any, types: RevisionTypes, structured: bool | None) -> None:
        self.types = types
        self.kind, self.annotation = self.classify(annotation, types)
        # text and content (``-> str``, ``-> list[str | Image]``): what a value must be, checked as
        # structured output is (None: no annotation, or one with data sent as JSON text)
        self.expects = annotation if self.kind == UNSTRUCTURED and self.annotation is None else None
        interim = types.interim()
        if self.expects is not None and not [
            m
            for m in members(self.expects)
            if m is not inspect.Parameter.empty
            and m is not type(None)
            and not (interim is not None and isinstance(m, type) and issubclass(m, interim))
        ]:  # none, or only the interim result: nothing to check
            self.expects = None
        if annotation is None or annotation is type(None):
            self.expects = type(None)  # ``-> None``: a value returned is the author's mistake
        lacking = [m for m in media_in(annotation) if m.kind not in block_kinds(types.content)]
        if lacking:
            raise DeclarationError(
                f"{declared_at(fn)}: returns {lacking[0].__name__}, but this revision has no {lacking[0].kind} content"
            )
        # data sent as text only (``structured=False``, a revision without structured output): the
        # value is checked and written as structured output would be, its JSON the text (``-> int``
        # returning "x" went out as the text "x"); a string goes out as it is
        self.text_only: TypeAdapter[Any] | None = None
        if structured is False or (self.kind == STRUCTURED and not types.structured):
            if self.kind == STRUCTURED:
                self.text_only = checker(self.annotation)
            self.kind = UNSTRUCTURED
        elif structured is True and self.kind != STRUCTURED:
            raise DeclarationError(f"{describe_function(fn)}: structured output needs a return annotation with data")
        self.adapter: TypeAdapter[Any] | None = None
        self.wrapped = False
        self._schema: dict[str, JSON] | None = None
        if self.kind == STRUCTURED:
            try:
                self.adapter = TypeAdapter(self.annotation)
                schema = inline_root(self.adapter.json_schema(mode="serialization", schema_generator=ToolSchema))
            except Exception as exc:
                raise DeclarationError(f"{declared_at(fn)}: its return type has no JSON Schema: {exc}") from None
            if holds_raw_bytes(self.adapter.core_schema):  # as UTF-8 text: other bytes failed every call
                raise DeclarationError(
                    f"{declared_at(fn)}: its return type holds bytes, which JSON carries only as text: "
                    "return str (base64 text, say), an Image, Audio or File"
                )
            if schema.get("type") != "object":
                self.wrapped = True
                wrapper = create_model("Output", result=(self.annotation, ...))
                self.adapter = TypeAdapter(wrapper)
                schema = strip_title(wrapper.model_json_schema(mode="serialization", schema_generator=ToolSchema))
            self._schema = schema

    @staticmethod
    def classify(annotation: Any, types: RevisionTypes) -> tuple[str, Any]:
        if annotation is inspect.Parameter.empty or annotation is None or annotation is type(None):
            return UNSTRUCTURED, None
        interim = types.interim()  # an annotation naming it (or a subclass) has imported it
        kept = [
            m
            for m in members(annotation)
            if not (interim is not None and isinstance(m, type) and issubclass(m, interim))
        ]
        if not kept:
            return UNSTRUCTURED, None
        if types.call_tool_result is not None and any(
            isinstance(m, type) and issubclass(m, types.call_tool_result) for m in kept
        ):
            return RESULT, None
        if all(is_content(m, types) or m is str or m is type(None) for m in kept):
            return UNSTRUCTURED, None
        if kept == members(annotation):  # as written: its ``Annotated`` constraints, discriminator, description
            return STRUCTURED, annotation
        narrowed = kept[0] if len(kept) == 1 else Union[tuple(kept)]  # noqa: UP007 (a runtime union of a tuple)
        return STRUCTURED, narrowed

    @property
    def schema(self) -> dict[str, JSON] | None:
        return self._schema

    def result(self, value: Any) -> Any:
        """The ``CallToolResult`` (as JSON, or the function's own result model) for ``value``."""
        if self.types.passthrough(value, self.types.call_tool_result):
            return value
        if self.kind != STRUCTURED or self.adapter is None:
            if self.expects is not None and not fits(value, self.expects):
                raise OutputError(misfit(value, self.expects))
            if self.text_only is not None:
                self.not_content(value)
                _, text = written(self.text_only, value, wrapped=False)  # None and strings checked too
                plain = value is None or isinstance(value, str)  # no content, or the text as it is
                return {"content": content_blocks(value, self.types) if plain else [text_block(text)]}
            try:
                return {"content": content_blocks(value, self.types)}
            except PydanticSerializationError as exc:  # a cycle, a key JSON has no form for
                raise OutputError(f"cannot be written as JSON: {exc}") from None
        self.not_content(value)
        data, text = written(self.adapter, value, self.wrapped)
        return {"content": [text_block(text)], "structuredContent": data}

    def not_content(self, value: Any) -> None:
        """An ``Image``, ``Audio`` or ``File`` (alone or in a list) where the annotation asks for
        data is the author's mistake, told with the annotation that would send it: pydantic would
        write its fields as JSON (its bytes, when not UTF-8, failed as such)."""
        media = value if isinstance(value, Media) else None
        if media is None and isinstance(value, list | tuple):
            media = next((v for v in value if isinstance(v, Media)), None)
        if media is not None:
            kind = type(media).__name__
            raise OutputError(
                f"{kind} is content, and the return annotation {annotation_text(self.annotation)} asks for "
                f"structured data: annotate the function -> {kind} (or a list of content: -> list[str | {kind}])"
            )


def checker(tp: Any) -> TypeAdapter[Any] | None:
    """A validator of ``tp`` for data sent as text only; None for a type pydantic cannot check (an
    arbitrary class, a model whose annotations name what is not defined): such a value is sent
    unchecked, as before the check existed."""
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(tp)
        adapter.rebuild(raise_errors=True)  # a forward reference left unresolved fails here, not per call
    except Exception:
        return None
    return adapter


def text_block(text: str) -> JSON:
    return {"type": "text", "text": text}


def written(adapter: TypeAdapter[Any], value: Any, wrapped: bool) -> tuple[Any, str]:
    """``value`` validated by ``adapter`` (under ``{"result": ...}`` when ``wrapped``) and written:
    its JSON data and the text of it; ``OutputError`` naming what does not fit or has no JSON form."""
    try:
        validated = adapter.validate_python({"result": value} if wrapped else value)
        # a model instance is taken as it is (pydantic does not validate it again): one changed
        # after it was built, a field of the wrong type, fails as it is written instead
        data = adapter.dump_python(validated, mode="json", by_alias=True, warnings="error")
    except ValidationError as exc:
        problems = validation_problems(exc, whole="(result)")
        raise OutputError("; ".join(f"{field}: {message}" for field, message in problems)) from None
    except (PydanticSerializationError, ValueError) as exc:  # bytes not UTF-8, a value with no JSON form
        raise OutputError(f"cannot be written as JSON: {exc}") from None
    shown = data["result"] if wrapped else data
    try:
        text = to_json(shown)  # NaN and infinities written as such: JSON has no form for them
    except PydanticSerializationError as exc:  # a lone surrogate in a string
        raise OutputError(f"cannot be written as JSON: {exc}") from None
    # where the type is ``Any`` (a bare ``dict``, a field typed ``Any``), pydantic writes NaN and
    # infinities as null, and the value would reach the client as null, not as the tool's error
    if ((b"NaN" in text or b"Infinity" in text) and not is_json(text)) or (
        b"null" in text and holds_non_finite(adapter.dump_python(validated, mode="python", warnings=False))
    ):
        raise OutputError("cannot be written as JSON: NaN and infinities have no JSON form")
    return data, text.decode()


def sequence_items(tp: Any) -> list[Any] | None:
    """The item types of a ``list``/``tuple``/``Sequence`` annotation (``tuple[X, ...]``'s
    ellipsis left out); None for any other annotation."""
    if get_origin(tp) not in (list, tuple, Sequence):
        return None
    return [arg for arg in get_args(tp) if arg is not Ellipsis]


def fits(value: Any, tp: Any) -> bool:
    """``value`` is one of the classes a text-or-content annotation names (in a sequence: each
    item is); what cannot be checked so (a ``TypeVar``, a ``Literal``) fits."""
    for m in members(tp):
        if m is type(None) or m is None:
            if value is None:
                return True
        elif isinstance(m, type):
            if isinstance(value, m):
                return True
        elif (items := sequence_items(m)) is not None:
            if isinstance(value, list | tuple) and all(any(fits(v, a) for a in items) for v in value):
                return True
        else:
            return True
    return False


def misfit(value: Any, tp: Any) -> str:
    """What of ``value`` does not fit ``tp`` (``fits`` said so): the first item of a sequence that
    fits none of the sequence's item types, else the whole."""
    where, found = "(result)", value
    if isinstance(value, list | tuple):
        sequences = [found for m in members(tp) if (found := sequence_items(m)) is not None]
        items = [a for sequence in sequences for a in sequence]
        bad = next((i for i, v in enumerate(value) if not any(fits(v, a) for a in items)), None)
        if sequences and bad is not None:
            where, found = f"(result)[{bad}]", value[bad]
    return f"{where}: {type(found).__name__} where the return annotation has {annotation_text(tp)}"


def annotation_text(tp: Any) -> str:
    """A return annotation as an author wrote it, without module paths: ``list[str | ImageContent]``."""
    if isinstance(tp, type):
        return "None" if tp is type(None) else tp.__name__
    if get_origin(tp) is Union or get_origin(tp) is pytypes.UnionType:
        return " | ".join(annotation_text(a) for a in get_args(tp))
    if get_origin(tp) is Annotated:
        return annotation_text(get_args(tp)[0])
    origin = get_origin(tp)
    if origin is not None:
        args = ", ".join("..." if a is Ellipsis else annotation_text(a) for a in get_args(tp))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return str(tp).replace("typing.", "")


def media_in(annotation: Any) -> list[type[Media]]:
    """The ``Image``/``Audio`` classes a return annotation names (in a union or a sequence)."""
    found: list[type[Media]] = []
    for m in members(annotation) if annotation is not inspect.Parameter.empty else ():
        if isinstance(m, type) and issubclass(m, Media):
            found.append(m)
        else:
            found.extend(x for arg in sequence_items(m) or () for x in media_in(arg))
    return found


def is_json(text: bytes) -> bool:
    """Whether ``text`` parses as JSON proper (no ``NaN``, ``Infinity``)."""
    try:
        from_json(text, allow_inf_nan=False)
    except ValueError:
        return False
    return True


def is_content(tp: Any, types: RevisionTypes) -> bool:
    """A content block, or a sequence of them, strings among them (each a text block, as
    ``content_blocks`` writes it; a sequence of strings alone is structured output)."""
    if isinstance(tp, type):
        return issubclass(tp, Media) or any(issubclass(tp, c) for c in types.content)
    args = sequence_items(tp)
    if args is not None:
        items = [m for arg in args for m in members(arg)]
        blocks = [m for m in items if m is not str]
        return bool(blocks) and all(is_content(m, types) for m in blocks)
    return False


def content_blocks(value: Any, types: RevisionTypes) -> list[JSON]:
    """Unstructured output: text for a string, blocks for content blocks and ``Image``/``Audio``,
    JSON text for anything else."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, types.content):
        return [value.model_dump(mode="json")]
    if isinstance(value, Media):
        if value.kind not in block_kinds(types.content):
            raise OutputError(f"{type(value).__name__}: this revision has no {value.kind} content")
        return [value.block()]
    if isinstance(value, list | tuple) and all(isinstance(v, (str, Media, *types.content)) for v in value):
        return [block for item in value for block in content_blocks(item, types)]
    return [{"type": "text", "text": to_json(value, fallback=str).decode()}]


# -- prompts --------------------------------------------------------------------------------


JSON_HINT = "given as JSON"  # what a prompt argument no string can be is described with
JSON_HINT_SCHEMA = 200  # characters of its JSON Schema the description quotes, at most


def prompt_arguments(arguments: Arguments) -> list[dict[str, JSON]]:
    """A prompt's ``arguments`` as its validator reads them: required and described as each field
    is (a default of ``Field(description=...)`` is required, and described). An argument no
    string can be (a list, an object: read as the JSON its string holds, ``from_strings``) says so
    in its description, with its schema when short and self-contained: prompt arguments are
    strings, and the listing has no other place for a type."""
    try:
        whole = arguments.schema()
    except DeclarationError:  # a type with no JSON Schema: nothing to say of it
        whole = {}
    properties: dict[str, Any] = whole.get("properties", {})
    definitions: dict[str, Any] = whole.get("$defs", {})
    out = []
    for field, name in arguments.names:
        info = arguments.model.model_fields[field]
        argument: dict[str, JSON] = {"name": name}
        description = info.description or ""
        schema = properties.get(name)
        if isinstance(schema, dict) and takes_json(schema, definitions):
            shown = to_json({k: v for k, v in schema.items() if k not in ("description", "default")}).decode()
            hint = f"{JSON_HINT}: {shown}" if len(shown) <= JSON_HINT_SCHEMA and "$ref" not in shown else JSON_HINT
            description = f"{description} ({hint})" if description else f"{hint[0].upper()}{hint[1:]}"
        if description:
            argument["description"] = description
        argument["required"] = info.is_required()
        out.append(argument)
    return out


def takes_json(schema: dict[str, Any], definitions: dict[str, Any], depth: int = 0) -> bool:
    """Whether a value of ``schema`` may be an array or an object (one of its branches, or the
    definition it refers to), which a prompt's string argument gives as JSON."""
    if depth > 8:
        return False
    if "$ref" in schema:
        target = inlined(schema, definitions)
        return target is not schema and takes_json(target, definitions, depth + 1)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "array" in kinds or "object" in kinds:
        return True
    return any(
        isinstance(branch, dict) and takes_json(branch, definitions, depth + 1)
        for key in ("anyOf", "oneOf", "allOf")
        for branch in schema.get(key, ()) or ()
    )


def prompt_messages(value: Any, types: RevisionTypes) -> list[JSON]:
    """A prompt's return value as ``messages``: a string is one user message, a list one message per item."""
    items = value if isinstance(value, list | tuple) else [value]
    messages = []
    for item in items:
        if isinstance(item, str):
            messages.append({"role": "user", "content": {"type": "text", "text": item}})
        elif isinstance(item, types.content):
            messages.append({"role": "user", "content": item.model_dump(mode="json")})
        elif isinstance(item, Media):
            messages.append({"role": "user", "content": content_blocks(item, types)[0]})
        elif isinstance(item, BaseModel):
            messages.append(item.model_dump(mode="json", by_alias=True))
        elif isinstance(item, dict):
            messages.append(item)
        else:
            raise OutputError(
                "a prompt message must be text, a content block, an Image, Audio or File or a message, "
                f"not {type(item).__name__}"
            )
    return messages


# -- resources ------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class UriTemplate(NamedTuple):
    """An RFC 6570 template, level 3: simple (``{name}``: one segment), reserved (``{+path}``),
    fragment (``{#f}``), label (``{.ext}``), path segments (``{/a,b}``), path parameters
    (``{;p}``) and form-style query (``{?q,limit}``, ``{&page}``: last, any order, each may be
    absent). Prefix (``{x:3}``) and explode (``{x*}``) modifiers are refused."""

    template: str
    pattern: re.Pattern[str]
    variables: tuple[str, ...]
    reserved: frozenset[str] = frozenset()  # variables whose values may be paths: ``{+p}``, ``{#p}``, query
    query: tuple[str, ...] = ()  # the form-style query's variables

    @classmethod
    def parse(cls, template: str) -> UriTemplate | None:
        """None for a plain URI (no variables); refuses expressions it does not support."""
        if "{" not in template and "}" not in template:
            return None
        regex, at = "", 0
        names: list[str] = []
        paths: set[str] = set()  # variables whose values may be paths
        query: list[str] = []
        for match in EXPRESSION.finditer(template):
            literal = template[at : match.start()]
            if "{" in literal or "}" in literal:
                raise DeclarationError(f"URI template {template!r}: an unbalanced brace")
            if query and literal:
                raise DeclarationError(f"URI template {template!r}: a query expression ({{?...}}) comes last")
            body = match.group(1)
            op = body[:1] if body[:1] in OPERATORS and body[:1] else ""
            listed = body[len(op) :].split(",")
            for name in listed:
                if _NAME.match(name) is None:
                    raise DeclarationError(
                        f"URI template {template!r}: {{{body}}} is not supported (RFC 6570 level 3: a name "
                        "or names after one of + # . / ; ? &, without the :prefix and * modifiers)"
                    )
                if name in names:
                    raise DeclarationError(f"URI template {template!r} names {{{name}}} twice")
                names.append(name)
            first, separator, named, _, reserved = OPERATORS[op]
            if op in QUERY:
                if "?" in template[: match.start()] and not query:
                    raise DeclarationError(f"URI template {template!r}: a literal '?' before a query expression")
                regex += re.escape(literal)
                query.extend(listed)
                paths.update(listed)
            else:
                if reserved:  # {+p}, {#p}: a path, several segments
                    paths.update(listed)
                    one = "."
                elif len(listed) == 1 and separator == ",":
                    one = "[^/?#]"  # one value alone: a ',' is part of it
                else:  # no '/', '?', '#', nor the expression's separator
                    one = f"[^/?#{re.escape(separator)}]"
                parts = [
                    f"{re.escape(name)}(?:=(?P<{name}>{one}*?))?" if named else f"(?P<{name}>{one}+?)"
                    for name in listed
                ]
                regex += re.escape(literal) + re.escape(first) + re.escape(separator).join(parts)
            at = match.end()
        rest = template[at:]
        if "{" in rest or "}" in rest:
            raise DeclarationError(f"URI template {template!r}: an unbalanced brace")
        if query and rest:
            raise DeclarationError(f"URI template {template!r}: a query expression ({{?...}}) comes last")
        pattern = re.compile(regex + re.escape(rest) + r"\Z")
        return cls(template, pattern, tuple(names), frozenset(paths), tuple(query))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' decoded values, None when ``uri`` does not match. A query variable the
        URI does not give is left out (its parameter's default applies); others are ignored."""
        base, mark, rest = uri.partition("?") if self.query else (uri, "", "")
        found = self.pattern.match(base)
        if found is None:
            return None
        values = {k: unquote(v or "") for k, v in found.groupdict().items()}  # (;name alone: empty)
        if mark:  # (percent-decoded as RFC 6570 encodes: a '+' is a plus, not a space)
            for pair in rest.partition("#")[0].split("&"):
                key, _, value = pair.partition("=")
                key = unquote(key)
                if key in self.query and key not in values:
                    values[key] = unquote(value)
        return values

    def unsafe(self, values: Mapping[str, str], allowed: Collection[str] = ()) -> str | None:
        """The first variable (but those ``allowed``) whose decoded value is no safe piece of a path
        (resources.mdx: servers MUST sanitize file paths against directory traversal), or None."""
        for name, value in values.items():
            if name not in allowed and unsafe_path(value, segment=name not in self.reserved):
                return name
        return None


_DRIVE = re.compile(r"[A-Za-z]:")


def unsafe_path(value: str, *, segment: bool) -> bool:
    """Whether a value taken from a URI could reach outside the directory a function joins it onto:
    a NUL, a ``..`` segment (``/`` and ``\\`` both separate), an absolute path (POSIX, a Windows
    drive or root: ``/etc``, ``C:x``, ``\\\\host``) or, for a ``segment`` (a ``{name}``: one
    segment, RFC 6570), a separator at all (``%2F`` decoded). The official SDK refuses the first
    three by default (a ``..`` only where it climbs above the start: ``a/../b`` passes there)."""
    if "\0" in value:
        return True
    if segment and ("/" in value or "\\" in value):
        return True
    if value.startswith(("/", "\\")) or _DRIVE.match(value):
        return True
    return ".." in value.replace("\\", "/").split("/")


def resource_contents(value: Any, uri: str, mime_type: str | None, types: RevisionTypes) -> list[JSON]:
    """A resource function's return value as ``contents``."""
    if isinstance(value, str):
        return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": value}]
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode()
        return [{"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}]
    if isinstance(value, Media):  # its bytes (a File's text as text) of its MIME type, unless the resource names one
        declared = mime_type or value.mime_type  # text or blob as the type written says
        return [{"uri": uri, "mimeType": declared, **value.contents(declared)}]
    if isinstance(value, list) and value and all(_is_contents(v) for v in value):
        return [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    if _is_contents(value):
        return [value.model_dump(mode="json") if isinstance(value, BaseModel) else value]
    try:
        written = to_json(value, fallback=str)
    except PydanticSerializationError as exc:  # a cycle, a key JSON has no form for
        raise OutputError(f"cannot be written as JSON: {exc}") from None
    if (b"NaN" in written or b"Infinity" in written) and not is_json(written):  # served as application/json
        raise OutputError("cannot be written as JSON: NaN and infinities have no JSON form")
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": written.decode()}]


def _is_contents(value: Any) -> bool:
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        return "uri" in fields and ("text" in fields or "blob" in fields)
    return isinstance(value, dict) and isinstance(value.get("uri"), str) and ("text" in value or "blob" in value)
