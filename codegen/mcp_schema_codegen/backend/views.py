"""IR -> template contexts: the only values templates see, safe by construction.

Every template (the revision modules, the package index, the scaffold) is rendered from a view
built here from the IR and the models' field table. A schema-derived string reaches generated
code in one of three forms only:

- ``Ident``: a checked Python identifier (definition, class, stub and field names);
- a Python literal, written by the ``py`` filter (``{{ method.name | py }}``): ``repr`` of a
  JSON-like value, so quotes, backslashes and newlines stay data;
- ``Doc``: text escaped for a docstring or comment (``{{ method.name | doc }}``).

``Word`` (letters, digits and ``._/-``: versions, eras, digests) and ``Code`` (fragments built
here from the above, such as ``m.CallToolResult | m.InputRequiredResult``) complete the set.
All are ``tools.pysource.Code``, the one type of safe source text (the typed client stubs
build on it too); the environment's ``finalize`` refuses anything else in ``{{ ... }}``, so a
template that places a raw string (``"{{ method.name }}"``) fails rendering instead of
generating code a schema could inject into.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from mcp_schema_codegen import __version__
from mcp_schema_codegen.backend.models import GeneratedModels
from mcp_schema_codegen.backend.split import module_name
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.ir.analyze import Overlay
from mcp_schema_codegen.ir.protocol import CapabilityMember, Method, Protocol, ServerCapability
from mcp_schema_codegen.tools import pysource
from mcp_schema_codegen.tools.pysource import Code

# requests the client runtime sends itself (connect, listen), so the typed client has no method for them
CLIENT_OWNED = frozenset({"initialize", "subscriptions/listen"})
CLIENT_OPTIONS = frozenset({"timeout", "on_progress", "input_required", "self"})
# requests the server runtime answers itself, so the handler base has no method for them
RUNTIME_ANSWERED = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "server/discover",
        "subscriptions/listen",
    }
)
SKIPPED_PARAMS = frozenset({"meta"})  # ``_meta``: the session stamps it (version, capabilities, progress token)
PLAIN_SCALARS = {"StrictStr": "str", "StrictInt": "int", "StrictBool": "bool", "StrictFloat": "float"}
UNQUALIFIED = frozenset({"Any", "Literal", "Union", "Optional", "dict", "list", "str", "int", "float", "bool", "None"})


class RenderError(GeneratorError):
    """A template used a value in a way that is not safe for generated code."""


class Ident(pysource.Ident):
    """A Python identifier that is not a keyword (``tools.pysource.Ident``, failing as a RenderError)."""

    __slots__ = ()

    def __new__(cls, value: str) -> Ident:
        try:
            return cast(Ident, super().__new__(cls, value))
        except ValueError:
            raise RenderError(f"{value!r} is not a valid Python identifier") from None


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]*\Z")


class Word(Code):
    """Letters, digits and ``._/-``: a version, era, digest or path; safe in code, strings and docs."""

    __slots__ = ()

    def __new__(cls, value: str) -> Word:
        if not _WORD.match(value):
            raise RenderError(f"{value!r} is not a plain word (letters, digits, '._/-')")
        return super().__new__(cls, value)


class Doc(Code):
    """Text escaped to sit inside a docstring or comment: no quotes, newlines or backslash sequences left raw."""

    __slots__ = ()

    def __new__(cls, value: str) -> Doc:
        escaped = value.encode("unicode_escape").decode("ascii").replace('"', '\\"').replace("'", "\\'")
        return super().__new__(cls, escaped)


def literal(value: object) -> Code:
    """The ``py`` filter: a JSON value as a Python literal (``tools.pysource.literal``)."""
    try:
        return pysource.literal(value)
    except ValueError as exc:
        raise RenderError(f"`| py`: {exc}") from None


def tuple_literal(values: Sequence[object]) -> Code:
    """A tuple of JSON values as a Python literal: ``("a", "b")``, ``("a",)``."""
    items = [literal(value) for value in values]
    return Code(f"({', '.join(items)}{',' if len(items) == 1 else ''})")


def finalize(value: object) -> object:
    """Jinja's ``finalize``: ``tools.pysource.finalize`` (only ``Code`` may be printed), failing as a RenderError."""
    try:
        return pysource.finalize(value)
    except TypeError as exc:
        raise RenderError(
            f"{exc} (print schema text through `| py` or `| doc`, or give the template a view from backend/views.py)"
        ) from None


def concat(parts: Iterable[str]) -> Code:
    """Jinja's ``concat`` for rendered fragments: template text and finalized values, joined."""
    return Code("".join(parts))


def doc(value: object) -> Doc:
    """The ``doc`` filter: any text, escaped for a docstring or comment."""
    if not isinstance(value, str):
        raise RenderError(f"`| doc` takes text, not {type(value).__name__}")
    return Doc(value)


def header(source: str, sha256: str | None = None) -> Code:
    """The provenance line every generated file starts with."""
    digest = f" (sha256 {Word(sha256[:12])})" if sha256 else ""
    return Code(f"# generated by mcp-codegen {Word(__version__)} from {Word(source)}{digest}; do not edit")


def revision_header(protocol: Protocol) -> Code:
    return header(f"schema/{protocol.version}/schema.json", protocol.sha256)


def dotted(name: str) -> Code:
    """A dotted module path, each part an identifier (``mcpgen._runtime``)."""
    return Code(".".join(Ident(part) for part in name.split(".")))


def model_ref(name: str | None) -> Code:
    """``m.Name`` for a generated model, ``None`` for no model."""
    return Code("None" if name is None else f"m.{Ident(name)}")


def union(*refs: Code) -> Code:
    return Code(" | ".join(refs))


# -- the revision modules ------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where the generated code goes: its package and the runtime it imports."""

    package: Ident  # the generated package, e.g. ``mcpgen`` or ``weather_mcp``
    runtime: Code  # dotted import root of the runtime, e.g. ``mcpgen._runtime``
    runtime_inside: bool  # the runtime is the package's own ``_runtime`` (mcpgen itself, or vendored)

    @property
    def parent(self) -> Code | None:
        """The package whose registry this one chains to: the runtime's distribution, when not this one."""
        return None if self.runtime_inside else Code(self.runtime.rsplit(".", 1)[0])

    @classmethod
    def of(cls, package: str, runtime: str) -> Target:
        return cls(Ident(package), dotted(runtime), runtime == f"{package}._runtime")


@dataclass(frozen=True)
class MethodView:
    name: str  # the wire name: printed only as ``| py`` or ``| doc``
    kind: str
    direction: str
    definition: Ident
    params_type: Ident | None
    params: Code  # ``m.X`` or ``None``
    params_required: bool
    result_type: Ident | None
    result: Code  # ``m.X`` or ``None``
    stub_name: Ident
    mrtr: bool
    cacheable: bool
    deprecated: bool
    embedded: bool
    task_result: Ident | None
    client_capability: str | None  # printed with ``| py``
    client_capability_members: Code | None  # a tuple of ``CapabilityMember(...)``; None: none
    target_param: str | None  # printed with ``| py``


@dataclass(frozen=True)
class TypedErrorView:
    code: int
    error_type: Ident


@dataclass(frozen=True)
class RevisionView:
    """``p`` in the revision templates."""

    version: Word
    era: Word
    sha256: Word
    package: Ident  # vYYYY_MM_DD
    batching: bool
    null_error_ids: bool  # the error response requires an id: an unread one is written null
    methods: tuple[MethodView, ...]
    typed_errors: tuple[TypedErrorView, ...]
    input_required: Ident | None
    input_required_ref: Code  # ``m.InputRequiredResult`` or ``None``
    client_base: Ident  # ``LegacyClient`` or ``ModernClient``
    log_levels: Code | None  # a list literal: LoggingLevel's values, least severe first (None: it has none)


def _optional_ident(name: str | None) -> Ident | None:
    return None if name is None else Ident(name)


def method_view(m: Method) -> MethodView:
    return MethodView(
        name=m.name,
        kind=m.kind,
        direction=m.direction,
        definition=Ident(m.definition),
        params_type=_optional_ident(m.params_type),
        params=model_ref(m.params_type),
        params_required=m.params_required,
        result_type=_optional_ident(m.result_type),
        result=model_ref(m.result_type),
        stub_name=Ident(m.stub_name),
        mrtr=m.mrtr,
        cacheable=m.cacheable,
        deprecated=m.deprecated,
        embedded=m.embedded,
        task_result=_optional_ident(m.task_result),
        client_capability=m.client_capability,
        client_capability_members=members_literal(m.client_capability_members) if m.client_capability_members else None,
        target_param=m.target_param,
    )


def members_literal(members: Sequence[CapabilityMember]) -> Code:
    """The members of a client capability a request may need, as ``MethodSpec`` takes them."""
    items = [
        f"CapabilityMember({literal(c.name)}, {literal(c.param)}, {literal(c.value)}, "
        f"when_absent={c.when_absent!r}, implied={c.implied!r}{'' if c.available else ', available=False'})"
        for c in members
    ]
    return Code("(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")")


def revision_view(protocol: Protocol) -> RevisionView:
    return RevisionView(
        version=Word(protocol.version),
        era=Word(protocol.era),
        sha256=Word(protocol.sha256),
        package=Ident(protocol.package),
        batching=protocol.batching,
        null_error_ids=protocol.error_id_required,
        methods=tuple(method_view(m) for m in protocol.methods),
        typed_errors=tuple(TypedErrorView(e.code, Ident(e.error_type)) for e in protocol.typed_errors),
        input_required=_optional_ident(protocol.input_required),
        input_required_ref=model_ref(protocol.input_required),
        client_base=Ident(protocol.era.capitalize() + "Client"),
        log_levels=literal(list(protocol.log_levels)) if protocol.log_levels else None,
    )


def module_context(protocol: Protocol, target: Target) -> dict[str, object]:
    """What every revision template receives."""
    return {
        "p": revision_view(protocol),
        "package": target.package,
        "runtime": target.runtime,
        "header": revision_header(protocol),
    }


# -- the models index (models.py) and its submodules ------------------------------------------


@dataclass(frozen=True)
class LazyName:
    """A name of a lazy index module and the submodule that defines it."""

    name: Ident
    module: Ident


def models_index_context(protocol: Protocol, target: Target, where: dict[str, str]) -> dict[str, object]:
    """``models.py``: every definition of the revision, each imported from its ``_models`` submodule on first use."""
    return {
        **module_context(protocol, target),
        "definitions": tuple(LazyName(Ident(name), Ident(module)) for name, module in sorted(where.items())),
    }


def submodule_header(protocol: Protocol, definitions: Sequence[str]) -> Code:
    """The first lines of a ``_models`` submodule: provenance and a docstring naming its definitions."""
    names = ", ".join(f"``{Ident(d)}``" for d in definitions)
    return Code(
        f'{revision_header(protocol)}\n"""MCP {Word(protocol.version)}: {names}. Import it from ``models``."""\n'
    )


# -- the handler base (server.py) and what a scaffold or an upgrade report reads of it -----------


@dataclass(frozen=True)
class HandlerView:
    """One request the server answers: an async method of the generated ``Server``."""

    name: str  # wire name: ``| py`` / ``| doc`` only
    stub_name: Ident
    mrtr: bool
    params_type: Ident | None
    result_types: tuple[Ident, ...]  # the complete result, then InputRequiredResult when MRTR
    params: Code  # ``m.X`` or ``None``
    result: Code  # ``m.X | m.InputRequiredResult``


@dataclass(frozen=True)
class ResultView:
    name: Ident
    result_type: str  # "complete" or "input_required": ``| py``
    cacheable: bool
    module: Ident  # its submodule of ``_results``


def served(protocol: Protocol) -> list[Method]:
    """The requests a server's handler base has a method for."""
    return [m for m in protocol.methods if m.kind == "request" and m.client_sends and m.name not in RUNTIME_ANSWERED]


def handler_views(protocol: Protocol) -> tuple[HandlerView, ...]:
    views = []
    for m in served(protocol):
        mrtr = m.mrtr and protocol.input_required is not None
        results = tuple(Ident(t) for t in (m.result_type, protocol.input_required if m.mrtr else None) if t)
        views.append(
            HandlerView(
                name=m.name,
                stub_name=Ident(m.stub_name),
                mrtr=mrtr,
                params_type=_optional_ident(m.params_type),
                result_types=results,
                params=model_ref(m.params_type),
                result=union(*(model_ref(t) for t in results)),
            )
        )
    return tuple(views)


def server_context(protocol: Protocol, target: Target) -> dict[str, object]:
    handlers = handler_views(protocol)
    results: dict[str, ResultView] = {}
    taken: set[str] = set()

    def snake(name: str) -> str:
        module = module_name(name, taken)
        taken.add(module.lower())
        return module

    if protocol.era == "modern":
        for m in served(protocol):
            if m.result_type:
                results[m.result_type] = ResultView(
                    Ident(m.result_type), "complete", m.cacheable, Ident(snake(m.result_type))
                )
        if protocol.input_required:
            name = protocol.input_required
            results[name] = ResultView(Ident(name), "input_required", False, Ident(snake(name)))
    ordered = sorted(results.values(), key=lambda r: r.name)
    return {
        **module_context(protocol, target),
        "handlers": handlers,
        "results": ordered,
        "exports": sorted(["Context", "Limits", "Server", *results]),
        "authoring": AUTHORING,
    }


# the names a revision's ``server`` module (and a project's stable ``server`` module) takes from
# the authoring layer, on first use
AUTHORING = tuple(Ident(name) for name in ("App", "Audio", "File", "Image", "ResourceNotFound", "ToolError"))


# -- the typed client (client.py) ---------------------------------------------------------------


@dataclass(frozen=True)
class ParamView:
    """One keyword argument of a client method."""

    name: Ident  # Python name, e.g. ``input_responses``
    wire: str  # wire name, e.g. ``inputResponses``: ``| py`` only
    annotation: Code  # e.g. ``m.InputResponses | None``
    required: bool


@dataclass(frozen=True)
class ClientMethodView:
    name: str  # wire name: ``| py`` / ``| doc`` only
    stub_name: Ident
    definition: Ident
    params: tuple[ParamView, ...]
    result: Code
    result_text: Code  # the result type as a string literal, for ``cast``
    mrtr_result_text: Code  # the same with InputRequiredResult
    mrtr: bool
    paginated: bool
    deprecated: bool


def annotation(type_hint: str, optional: bool) -> Code:
    """A field's type hint as a client argument's: models qualified ``m.``, strict scalars plain.

    The hint is datamodel-code-generator's (from its model metadata, not from the module text);
    it is parsed as an expression and rebuilt, so every name in it is checked and every
    constant (``Literal`` values) is written back as a literal.
    """
    try:
        tree = ast.parse(type_hint, mode="eval")
    except SyntaxError:
        raise RenderError(f"cannot read the type hint {type_hint!r}") from None
    members = [m for m in _union_members(tree.body) if not (isinstance(m, ast.Name) and m.id == "MISSING")]
    text = " | ".join(ast.unparse(_Qualify().visit(m)) for m in members)
    return Code(text + " | None" if optional else text)


def _union_members(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]


class _Qualify(ast.NodeTransformer):
    """Model names -> ``m.Name``; strict scalars -> builtins; only names, subscripts, unions, constants."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        allowed = ast.Subscript | ast.Tuple | ast.List | ast.BinOp | ast.BitOr | ast.UnaryOp | ast.USub | ast.Load
        if not isinstance(node, allowed):
            raise RenderError(f"unexpected {type(node).__name__} in a type hint")
        return super().generic_visit(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in PLAIN_SCALARS:
            return ast.Name(PLAIN_SCALARS[node.id], ast.Load())
        if node.id in UNQUALIFIED:
            return node
        return ast.Attribute(ast.Name("m", ast.Load()), Ident(node.id), ast.Load())

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        if not isinstance(node.value, str | int | bool) and node.value is not None:
            raise RenderError(f"unexpected constant {node.value!r} in a type hint")
        return node  # strings inside Literal[...] stay literals


def client_params(models: GeneratedModels, params_type: str | None) -> tuple[ParamView, ...]:
    """The keyword arguments for a params model: its fields, required first, else in order."""
    params = []
    for field in models.fields(params_type):
        if field.name in SKIPPED_PARAMS:
            continue
        optional = not field.required
        params.append(ParamView(Ident(field.name), field.alias, annotation(field.type_hint, optional), not optional))
    return tuple(sorted(params, key=lambda p: not p.required))


def client_methods(protocol: Protocol, models: GeneratedModels) -> tuple[ClientMethodView, ...]:
    views = []
    input_required = model_ref(protocol.input_required)
    for m in protocol.methods:
        if m.kind != "request" or not m.client_sends or m.name in CLIENT_OWNED or not m.result_type:
            continue
        params = client_params(models, m.params_type)
        clash = {p.name for p in params} & CLIENT_OPTIONS
        if clash:
            raise GeneratorError(f"{m.params_type}: field {sorted(clash)[0]!r} clashes with a client option")
        result = model_ref(m.result_type)
        result_fields = {f.name for f in models.fields(m.result_type)}
        views.append(
            ClientMethodView(
                name=m.name,
                stub_name=Ident(m.stub_name),
                definition=Ident(m.definition),
                params=params,
                result=result,
                result_text=literal(str(result)),
                mrtr_result_text=literal(f"{result} | {input_required}"),
                mrtr=m.mrtr and protocol.input_required is not None,
                paginated=any(p.name == "cursor" for p in params) and "next_cursor" in result_fields,
                deprecated=m.deprecated,
            )
        )
    return tuple(views)


def client_context(protocol: Protocol, target: Target, models: GeneratedModels) -> dict[str, object]:
    return {
        **module_context(protocol, target),
        "methods": client_methods(protocol, models),
        "input_required": model_ref(protocol.input_required) if protocol.input_required else None,
    }


# -- the package index -------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionRow:
    version: Word
    era: Word
    batching: bool
    sse_priming: bool
    headerless_http: bool
    resource_not_found: int | None  # the code of resources/read for an unknown URI, None: -32602
    package: str  # dotted name of the revision package: printed with `| py`
    log_levels: Code | None = None  # LoggingLevel's values ranked (the overlay's order), a tuple literal; None: none
    # {capability: ServerCapability(requests, flags)} as source; None: none
    server_capabilities: Code | None = None
    # {SubscriptionFilter member: FilterMember(notification, lists URIs)} as source; None: none
    subscription_filter: Code | None = None


def package_context(
    eras: Mapping[str, str],
    batching: frozenset[str],
    overlay: Overlay,
    target: Target,
    log_levels: Mapping[str, Sequence[str]] | None = None,
    capabilities: Mapping[str, Sequence[ServerCapability]] | None = None,
    filters: Mapping[str, Sequence[tuple[str, str, bool]]] | None = None,
) -> dict[str, object]:
    """The package index: the revisions generated here (``eras``: version -> era) as the runtime's
    version registry (chained to the runtime distribution's registry when the runtime is not in the
    package), with each revision's facts from the schema (``batching``; ``log_levels``: its
    LoggingLevel values in the overlay's order, so a client checks a level without importing the
    revision; ``capabilities``: the server capabilities it has, so a server knows the flags of
    every revision it serves; ``filters``: its ``SubscriptionFilter`` members) and the overlay,
    and the generator version the runtime is checked against at import."""
    levels = log_levels or {}
    offered = capabilities or {}
    members = filters or {}
    rows = [
        VersionRow(
            Word(v),
            Word(eras[v]),
            batching=v in batching,
            sse_priming=v in overlay.sse_priming,
            headerless_http=v in overlay.headerless_http,
            resource_not_found=overlay.resource_not_found.get(v),
            package=f"{target.package}.v{v.replace('-', '_')}",
            log_levels=tuple_literal(levels[v]) if levels.get(v) else None,
            server_capabilities=capability_literal(offered[v]) if offered.get(v) else None,
            subscription_filter=filter_literal(members[v]) if members.get(v) else None,
        )
        for v in sorted(eras)
    ]
    return {
        "versions": rows,
        "latest": str(rows[-1].version) if rows else "",  # printed with `| py`
        "package": target.package,
        "runtime": target.runtime,
        "parent": target.parent,
        "generator_version": __version__,
        "header": header("schema/lock.json"),
    }


def capability_literal(capabilities: Sequence[ServerCapability]) -> Code:
    """The server capabilities of a revision as ``RevisionEntry`` takes them: a dict of
    ``ServerCapability(requests, flags)`` by name."""
    items = [
        f"{literal(c.name)}: ServerCapability({tuple_literal(c.requests)}, {literal(dict(c.flags))})"
        for c in capabilities
    ]
    return Code("{" + ", ".join(items) + "}")


def filter_literal(members: Sequence[tuple[str, str, bool]]) -> Code:
    """A revision's ``SubscriptionFilter`` members as ``RevisionEntry`` takes them: a dict of
    ``FilterMember(notification, uris)`` by member name."""
    items = [f"{literal(name)}: FilterMember({literal(method)}, {uris!r})" for name, method, uris in members]
    return Code("{" + ", ".join(items) + "}")


# -- the current revision's modules (a project's stable import names) ---------------------------

CURRENT_MODULES = ("models", "server", "client")


def current_context(module: str, protocol: Protocol, target: Target) -> dict[str, object]:
    """``<package>/<module>.py`` re-exporting the module of the revision the package is generated for."""
    return {
        "module": Ident(module),
        "p": revision_view(protocol),
        "package": target.package,
        "runtime": target.runtime,
        "header": revision_header(protocol),
        "authoring": AUTHORING,
    }


# -- the scaffold (a project's user-owned files) ------------------------------------------------


def toml_string(value: object) -> Code:
    """The ``toml`` filter: text as a TOML basic string (JSON's escaping is TOML's)."""
    if not isinstance(value, str):
        raise RenderError(f"`| toml` takes text, not {type(value).__name__}")
    return Code(json.dumps(value))


def scaffold_context(
    *,
    project: str,
    module: str,
    package: str,
    protocol: Protocol,
    handlers: Sequence[HandlerView],
    vendor_runtime: bool,
    schema_dir: str | None,
    versions: Sequence[str],
    auth: bool = False,
) -> dict[str, object]:
    """The scaffold templates' context: the project's names and the revision's handlers; with
    ``auth``, the HTTP server is an OAuth 2.1 protected resource (``runtime``: where its
    ``server.auth`` is imported from)."""
    return {
        "project": Word(project),
        "module": Ident(module),
        "package": Ident(package),
        "version": Word(protocol.version),
        "era": Word(protocol.era),
        "generator": Word(__version__),
        "handlers": tuple(handlers),
        "vendor_runtime": vendor_runtime,
        "schema_dir": schema_dir,
        "versions": [Word(v) for v in versions],
        "runtime_requirement": runtime_requirement(extras=("auth",) if auth else ()),
        "auth": auth,
        "runtime": dotted(f"{package}._runtime" if vendor_runtime else "mcpgen._runtime"),
    }


def runtime_requirement(extras: Sequence[str] = ()) -> Code:
    """The runtime a generated project needs: this generator's release line (same major.minor),
    with ``extras`` (``auth``: token verification)."""
    major, minor, *_ = Word(__version__).split(".")
    wanted = f"[{','.join(Ident(extra) for extra in extras)}]" if extras else ""
    return Code(f"mcpgen{wanted}>={Word(__version__)},<{int(major)}.{int(minor) + 1}")


# -- an app's surface module (tools, prompts, resources of a project's App) ----------------------


@dataclass(frozen=True)
class DeclarationRow:
    key: str  # ``tool add``: ``| py`` only
    function: str  # ``weather.add``: ``| py`` only
    fingerprint: Word


def app_spec(module: str, attribute: str) -> Code:
    """``weather.server:app``: a dotted module and an attribute, each part a checked identifier."""
    return Code(f"{dotted(module)}:{Ident(attribute)}")


def surface_context(described: dict[str, object], module: str, attribute: str) -> dict[str, object]:
    """The surface module's context: what ``App.describe()`` returned, every string a literal."""
    declarations = described.get("declarations")
    if not isinstance(declarations, dict):
        raise RenderError("the app's description has no declarations")
    rows = []
    for key, value in declarations.items():
        if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
            raise RenderError(f"the app's description of {key!r} is not [function, fingerprint]")
        rows.append(DeclarationRow(str(key), value[0], Word(value[1])))
    lists = {}
    for constant, key in (
        ("tools", "tools"),
        ("prompts", "prompts"),
        ("resources", "resources"),
        ("resource_templates", "resourceTemplates"),
    ):
        entries = described.get(key, [])
        if not isinstance(entries, list):
            raise RenderError(f"the app's description has no list of {key}")
        lists[constant] = entries
    return {"app": app_spec(module, attribute), "declarations": rows, **lists}
