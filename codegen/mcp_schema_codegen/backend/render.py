"""Views -> source text, through Jinja templates; plus the static runtime files.

Templates are looked up by file name, a user directory (``--templates``) first. They receive
only the views of ``backend.views``; the environment's ``finalize`` refuses a plain string in
``{{ ... }}``, so schema text reaches generated code only as a literal (``| py``), docstring
text (``| doc``) or a checked identifier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import jinja2

from mcp_schema_codegen.backend import views
from mcp_schema_codegen.backend.models import GeneratedModels
from mcp_schema_codegen.backend.split import split
from mcp_schema_codegen.backend.views import Target
from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.ir.analyze import Overlay
from mcp_schema_codegen.ir.protocol import Protocol, ServerCapability

TEMPLATE_SUFFIX = ".j2"


class CompiledTemplates(jinja2.BytecodeCache):
    """Every Renderer's compiled templates, kept for the life of the process.

    Jinja files each entry under the template's path and checks the checksum of its source on
    every load (a changed template is compiled again), so the next generation in this process
    (``check``, a library caller, a test suite) does not compile the same templates again. Only
    ``Renderer`` environments use it: they are all configured alike (compiled code depends on
    the environment's options, e.g. ``finalize``).
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        code = self.code.get(bucket.key)
        if code is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledTemplates()


class Renderer:
    """Renders templates by file name; a user directory overrides built-ins by name."""

    def __init__(self, builtin: Path, overrides: Path | None = None) -> None:
        search = [str(overrides)] if overrides else []
        search.append(str(builtin))
        self.builtin = builtin
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(search),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            autoescape=False,  # we render Python source, not HTML
            finalize=views.finalize,
            bytecode_cache=COMPILED,
        )
        # Rendered fragments (a macro's or a {% set %} block's output) are made of template text and
        # finalized values only, so they may be printed again.
        self.env.concat = views.concat  # type: ignore[method-assign]
        self.env.filters["py"] = views.literal
        self.env.filters["doc"] = views.doc
        self.env.filters["toml"] = views.toml_string

    def render(self, name: str, **context: object) -> str:
        try:
            return self.env.get_template(name + TEMPLATE_SUFFIX).render(**context)
        except views.RenderError as exc:
            raise views.RenderError(f"template {name}{TEMPLATE_SUFFIX}: {exc.message}") from None
        except jinja2.TemplateError as exc:
            raise GeneratorError(f"template {name}{TEMPLATE_SUFFIX}: {exc}") from None

    def runtime_files(self) -> dict[str, str]:
        """The static runtime modules, each with a provenance header prepended."""
        root = self.builtin / "runtime"
        files = {}
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            files[rel] = views.header(f"templates/runtime/{rel}") + "\n" + path.read_text(encoding="utf-8")
        return files

    def protocol_module(self, protocol: Protocol, target: Target) -> str:
        return self.render("protocol.py", **views.module_context(protocol, target))

    def codec_module(self, protocol: Protocol, target: Target) -> str:
        """The revision's wire codec: the era's template (``codec_legacy``/``codec_modern``) bound to its table."""
        return self.render(f"codec_{protocol.era}.py", **views.module_context(protocol, target))

    def server_module(self, protocol: Protocol, target: Target) -> str:
        """The revision's handler base: one async method per request a server answers."""
        return self.render("server.py", **views.server_context(protocol, target))

    def result_modules(self, protocol: Protocol, target: Target) -> dict[str, str]:
        """``_results/<name>.py``: each result class of the handler base (modern era), imported on first use."""
        context = views.server_context(protocol, target)
        results = cast(Sequence[views.ResultView], context["results"])
        if not results:
            return {}
        files = {"_results/__init__.py": self.render("package_docstring.py", **views.module_context(protocol, target))}
        for r in results:
            files[f"_results/{r.module}.py"] = self.render("result.py", **context, r=r)
        return files

    def model_modules(self, protocol: Protocol, target: Target, models: GeneratedModels) -> dict[str, str]:
        """``models.py``, the lazy index, and ``_models/<name>.py``: the definitions split by reference groups."""
        parts = split(models.source, protocol.version)
        files = {
            "models.py": self.render("models.py", **views.models_index_context(protocol, target, parts.where)),
            "_models/__init__.py": self.render("package_docstring.py", **views.module_context(protocol, target)),
        }
        for module in parts.modules:
            imports = "".join(
                f"from .{views.Ident(sub)} import {', '.join(views.Ident(n) for n in names)}\n"
                for sub, names in module.imports.items()
            )
            files[f"_models/{module.name}.py"] = (
                f"{views.submodule_header(protocol, module.definitions)}\n"
                f"from __future__ import annotations\n\n{parts.header}{imports}\n\n{module.body}"
            )
        return files

    def client_module(self, protocol: Protocol, target: Target, models: GeneratedModels) -> str:
        """The revision's typed client: one async method per request a client sends."""
        return self.render("client.py", **views.client_context(protocol, target, models))

    def version_init(self, protocol: Protocol, target: Target) -> str:
        return self.render("version_init.py", **views.module_context(protocol, target))

    def current_modules(self, protocol: Protocol, target: Target) -> dict[str, str]:
        """``models``/``server``/``client`` of the package, re-exporting ``protocol``'s."""
        return {
            module: self.render("current.py", **views.current_context(module, protocol, target))
            for module in views.CURRENT_MODULES
        }

    def surface_module(self, described: dict[str, object], module: str, attribute: str) -> str:
        """An app's surface module (before formatting and its header line)."""
        return self.render("surface.py", **views.surface_context(described, module, attribute))

    def package_init(
        self,
        eras: Mapping[str, str],
        batching: frozenset[str],
        overlay: Overlay,
        target: Target,
        log_levels: Mapping[str, Sequence[str]] | None = None,
        capabilities: Mapping[str, Sequence[ServerCapability]] | None = None,
        filters: Mapping[str, Sequence[tuple[str, str, bool]]] | None = None,
    ) -> str:
        context = views.package_context(eras, batching, overlay, target, log_levels, capabilities, filters)
        return self.render("package_init.py", **context)
