"""A snapshot -> the source of a typed client package for that server.

Views first (tools, prompts, resource templates, model classes: every schema string a
literal or a checked identifier, see ``tools.pysource``), then the ``templates/stubs/``
templates, rendered in an environment whose ``finalize`` refuses any plain string. The
package is ``__init__.py``, ``models.py`` (output models and object arguments),
``client.py`` (the typed ``Client``) and ``snapshot.json`` (the snapshot it was generated
from, canonical bytes), formatted with ruff by the caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from mcp_schema_codegen.backend.views import header
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.tools.names import Namer, pascal, snake
from mcp_schema_codegen.tools.pysource import Code, Ident, docstring, finalize, literal
from mcp_schema_codegen.tools.schema_types import ModelClass, Parameter, TypeBuilder
from mcp_schema_codegen.tools.snapshot import Snapshot

SNAPSHOT_FILE = "snapshot.json"
TEMPLATES = "stubs"
# Attributes of the runtime's ToolClient that a tool method must not shadow
# (tests/stubs checks this list against the class).
CLIENT_RESERVED = frozenset({"aclose", "client", "codec", "prompts", "resources"})
# Builtins the generated classes' annotations use: a method of that name, a class attribute,
# would be what ``timeout: float`` means below it (mypy: "not valid as a type").
BUILTINS_USED = frozenset(
    {"bool", "bytes", "dict", "float", "int", "list", "object", "property", "set", "str", "tuple", "type"}
)
# Keyword arguments every generated method has.
METHOD_RESERVED = frozenset({"self", "timeout", "on_progress"})
# Names the models module defines or imports, and those of the client module, which imports
# the model classes by name.
MODELS_RESERVED = frozenset(
    {"Annotated", "Any", "ConfigDict", "Field", "Literal", "RootModel", "ToolModel", "annotations"}
    | {"Client", "Prompts", "ResourceTemplates", "ToolClient", "ToolClientPart", "ProgressCallback", "Sequence"}
    | {"connect", "models"}
)


@dataclass(frozen=True)
class ParamView:
    name: Ident
    wire: Code
    annotation: Code
    default: Code  # " = <literal>", " = None" or ""
    comment: Code  # "  # Any: ..." or ""
    required: bool
    always_sent: bool  # required, or with a default in the signature (else sent only when not `unset`)
    unset: Code  # what leaving it out is: None, or MISSING where None is sent as null


@dataclass(frozen=True)
class ToolView:
    method: Ident
    wire: Code
    doc: Code
    params: tuple[ParamView, ...]
    output: Ident | None  # the model class of its structured output
    free_form: bool  # the input schema's arguments are no keyword parameters: one `arguments` mapping
    free_form_comment: Code


@dataclass(frozen=True)
class PromptView:
    method: Ident
    wire: Code
    doc: Code
    params: tuple[ParamView, ...]


@dataclass(frozen=True)
class TemplateView:
    method: Ident
    template: Code
    doc: Code
    params: tuple[ParamView, ...]


@dataclass(frozen=True)
class FieldView:
    name: Ident
    annotation: Code
    assign: Code  # "", " = None", " = Field(...)"
    comment: Code
    doc: Code | None


@dataclass(frozen=True)
class ClassView:
    name: Ident
    doc: Code | None
    root: Code | None  # RootModel[...] type
    forbid_extra: bool  # additionalProperties: false
    fields: tuple[FieldView, ...]


@dataclass
class PackageViews:
    runtime: Ident
    revision_package: Ident
    header: Code
    package_doc: Code
    client_doc: Code
    tools: list[ToolView] = field(default_factory=list)
    prompts: list[PromptView] = field(default_factory=list)
    templates: list[TemplateView] = field(default_factory=list)
    classes: list[ClassView] = field(default_factory=list)

    @property
    def class_names(self) -> list[Ident]:
        return sorted(c.name for c in self.classes)


def revision_package(version: str) -> Ident:
    return Ident("v" + version.replace("-", "_"))


def build_views(snapshot: Snapshot, runtime: str) -> PackageViews:
    """Everything the templates print, derived from the snapshot."""
    try:
        runtime_ident = Ident(runtime)
    except ValueError:
        raise GeneratorError(f"--runtime {runtime!r} is not a Python package name") from None
    server = snapshot.server_name
    version = snapshot.server_info.get("version")
    described = f"{server!r}" + (f" {version}" if isinstance(version, str) else "")
    views = PackageViews(
        runtime=runtime_ident,
        revision_package=revision_package(snapshot.protocol_version),
        header=Code(header(SNAPSHOT_FILE, snapshot.sha256)),
        package_doc=_doc(
            f"Typed client of the MCP server {described}, generated from {SNAPSHOT_FILE}.\n\n"
            f"Tools: {len(snapshot.tools)}, prompts: {len(snapshot.prompts)}, "
            f"resource templates: {len(snapshot.resource_templates)}; typed with the models of\n"
            f"MCP {snapshot.protocol_version}, working on a session of any revision. Use\n"
            "``Client(await connect(...))`` or ``await connect(target)``; regenerate with\n"
            "``mcp-codegen client``, check for drift with ``mcp-codegen client --check``."
        ),
        client_doc=_doc(
            f"The tools of {described}, one typed method each.\n\n"
            "``prompts`` and ``resources`` hold the typed prompt and resource-template helpers.\n"
            "Wraps the client ``connect`` returned (any era, stdio or HTTP; handlers, progress\n"
            "and timeouts work as usual)."
        ),
    )
    builder = TypeBuilder(reserved=MODELS_RESERVED)
    methods = Namer(CLIENT_RESERVED | BUILTINS_USED)
    for tool in snapshot.tools:
        views.tools.append(_tool_view(tool, builder, methods))
    prompt_names = Namer(BUILTINS_USED)
    for prompt in snapshot.prompts:
        views.prompts.append(_prompt_view(prompt, prompt_names))
    template_names = Namer(BUILTINS_USED)
    for template in snapshot.resource_templates:
        views.templates.append(_template_view(template, template_names))
    views.classes = [_class_view(c, none_left_out=True) for c in builder.classes]
    return views


def _tool_view(tool: dict[str, object], builder: TypeBuilder, methods: Namer) -> ToolView:
    wire = str(tool["name"])
    hint = pascal(wire, "Tool")
    params, why = builder.parameters(tool["inputSchema"], hint, METHOD_RESERVED)
    output_schema = tool.get("outputSchema")
    output = builder.output_model(output_schema, hint + "Output") if output_schema is not None else None
    lines = [_text(tool.get("title")), _text(tool.get("description"))]
    body = "\n\n".join(line for line in lines if line) or f"The tool {wire!r}."
    doc = [body, "", f"Calls the tool {wire!r}."]
    if params:
        doc += ["", "Args:"]
        doc += [_arg_line(p) for p in params]
    if why:
        doc += ["", "Args:", f"    arguments: the tool's arguments ({why})."]
    doc += [
        "",
        f"Returns the structured output as ``{output}``." if output else "Returns the ``CallToolResult``.",
        "Raises ``ToolError`` when the tool answers ``isError: true``"
        + (", ``ToolOutputError`` when the output does not match." if output else "."),
    ]
    return ToolView(
        method=methods.take(snake(wire, "tool")),
        wire=literal(wire),
        doc=_doc("\n".join(doc)),
        params=tuple(_param_view(p) for p in params),
        output=output,
        free_form=why is not None,
        free_form_comment=Code(f"  # Any: {why}") if why else Code(""),  # a fixed text of schema_types
    )


def _arg_line(param: Parameter) -> str:
    text = f"    {param.name}: {_one_line(param.description) or '(no description)'}"
    if param.default_note is not None:
        text += f" (default {param.default_note})"
    if param.sends_null:
        text += " Omitted when MISSING (the default); None sends null."
    elif not param.required and param.default is None:
        text += " Omitted when None."
    return text


def _param_view(param: Parameter) -> ParamView:
    if param.required:
        default = Code("")
    elif param.default is not None:
        default = Code(f" = {param.default}")
    elif param.sends_null:
        default = Code(" = _MISSING")
    else:
        default = Code(" = None")
    return ParamView(
        name=param.name,
        wire=param.wire,
        annotation=param.annotation,
        default=default,
        comment=param.comment or Code(""),
        required=param.required,
        always_sent=param.required or param.default is not None,
        unset=Code("_MISSING") if param.sends_null else Code("None"),
    )


def _string_param(wire: str, required: bool, names: Namer) -> ParamView:
    return ParamView(
        name=names.take(snake(wire, "arg")),
        wire=literal(wire),
        annotation=Code("str") if required else Code("str | None"),
        default=Code("") if required else Code(" = None"),
        comment=Code(""),
        required=required,
        always_sent=required,
        unset=Code("None"),
    )


def _prompt_view(prompt: dict[str, object], methods: Namer) -> PromptView:
    wire = str(prompt["name"])
    names = Namer(METHOD_RESERVED)
    arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]  # type: ignore[attr-defined]
    arguments.sort(key=lambda a: (a.get("required") is not True, a["name"]))
    params = tuple(_string_param(a["name"], a.get("required") is True, names) for a in arguments)
    body = "\n\n".join(t for t in (_text(prompt.get("title")), _text(prompt.get("description"))) if t)
    doc = [body or f"The prompt {wire!r}.", "", f"Gets the prompt {wire!r}."]
    if params:
        doc += ["", "Args:"]
        doc += [
            f"    {p.name}: {_one_line(_text(a.get('description'))) or '(no description)'}"
            + ("" if p.required else " Omitted when None.")
            for p, a in zip(params, arguments, strict=True)
        ]
    return PromptView(methods.take(snake(wire, "prompt")), literal(wire), _doc("\n".join(doc)), params)


def _template_view(template: dict[str, object], methods: Namer) -> TemplateView:
    from mcpgen._runtime.uri_template import uri_template_variables

    uri = str(template["uriTemplate"])
    names = Namer(METHOD_RESERVED)
    variables = sorted(uri_template_variables(uri), key=lambda v: (v[1], v[0]))
    params = tuple(_string_param(name, not optional, names) for name, optional in variables)
    body = "\n\n".join(t for t in (_text(template.get("title")), _text(template.get("description"))) if t)
    doc = [body or "A resource template.", "", f"Reads the resource {uri!r}."]
    mime = template.get("mimeType")
    if isinstance(mime, str):
        doc.append(f"MIME type: {mime!r}.")
    return TemplateView(
        method=methods.take(snake(str(template["name"]), "resource")),
        template=literal(uri),
        doc=_doc("\n".join(doc)),
        params=params,
    )


def _class_view(model: ModelClass, *, none_left_out: bool = False) -> ClassView:
    """``none_left_out``: a client's argument models, where ``None`` of an optional field that is
    not nullable means "leave it out" (``exclude_if``); the server's declared models read arguments."""
    fields = []
    for f in model.fields:
        alias = f", validation_alias={f.wire}, serialization_alias={f.wire}" if f.aliased else ""
        if f.required:
            assign = Code(f" = Field({alias[2:]})") if alias else Code("")
        elif none_left_out and not f.type.nullable and f.default is None:
            # None stands for "left out": never sent as null, which the schema refuses (imported as
            # _is_none: a field may be named is_none, none can start with an underscore)
            assign = Code(f" = Field(default=None{alias}, exclude_if=_is_none)")
        else:
            default = f.default if f.default is not None else Code("None")
            assign = Code(f" = Field({default}{alias})") if alias else Code(f" = {default}")
        fields.append(
            FieldView(
                name=f.name,
                annotation=f.annotation,
                assign=assign,
                comment=f.type.comment or Code(""),
                doc=_doc(f.description) if f.description else None,
            )
        )
    return ClassView(
        name=model.name,
        doc=_doc(model.description) if model.description else None,
        root=model.root.code if model.root is not None else None,
        forbid_extra=model.extra == "forbid",
        fields=tuple(fields),
    )


def _doc(text: str) -> Code:
    """A docstring; a multi-line one ends with a newline, so its closing quotes stand alone."""
    return docstring(text + "\n" if "\n" in text else text)


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


class StubRenderer:
    """Renders ``templates/stubs/*.j2``; only ``Code`` may reach the output."""

    def __init__(self, templates: Path) -> None:
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(templates / TEMPLATES)),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # Python source, not HTML
            finalize=finalize,
            trim_blocks=True,
            lstrip_blocks=True,
        )

    def render(self, views: PackageViews) -> dict[str, str]:
        """Relative path -> unformatted source (and the snapshot itself)."""
        return {
            "__init__.py": self.env.get_template("package_init.py.j2").render(v=views),
            "models.py": self.env.get_template("models.py.j2").render(v=views),
            "client.py": self.env.get_template("client.py.j2").render(v=views),
            "py.typed": "",
        }


def render_stubs(snapshot: Snapshot, runtime: str, templates: Path) -> dict[str, str]:
    files = StubRenderer(templates).render(build_views(snapshot, runtime))
    files[SNAPSHOT_FILE] = snapshot.dumps()
    json.loads(files[SNAPSHOT_FILE])  # canonical text parses back
    return files
