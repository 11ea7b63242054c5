"""``[tool.mcp-codegen]`` in pyproject.toml: the same settings as the CLI flags.

Keys: ``versions`` (a list, or "all"), ``out``, ``package``, ``templates``, ``schema-dir``,
``vendor-runtime`` (true: copy the runtime into the package instead of importing ``mcpgen``'s),
``current-modules`` (true: ``<package>.models``/``.server``/``.client`` re-export the latest
revision's, as in a scaffolded project), ``app`` (``MODULE:ATTRIBUTE`` of an ``App``: its
surface module is generated and checked too; a project may name only an app).
Relative paths are relative to the pyproject's directory. CLI flags win over the file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from mcp_schema_codegen.errors import GeneratorError, read_user_text

KEYS = {"versions", "out", "package", "templates", "schema-dir", "vendor-runtime", "current-modules", "app"}


@dataclass(frozen=True)
class Config:
    versions: list[str] | None = None  # None: not set; [] : all
    out: Path | None = None
    package: str | None = None
    templates: Path | None = None
    schema_dir: Path | None = None
    vendor_runtime: bool = False
    current_modules: bool = False
    app: str | None = None  # "module:attribute" of the project's App
    root: Path | None = None  # the directory of the pyproject.toml (where the app is imported from)
    vendor_runtime_set: bool = False  # vendor-runtime is in the file (else a tree's own layout decides)
    current_modules_set: bool = False  # current-modules is in the file (likewise)

    @property
    def package_configured(self) -> bool:
        """The project has a generated package (not only an app's surface)."""
        return self.package is not None and self.out is not None and bool(self.versions)


def load_config(directory: Path) -> Config:
    path = directory / "pyproject.toml"
    if not path.exists():
        return Config()
    try:
        raw = tomllib.loads(read_user_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise GeneratorError(f"{path} is not valid TOML: {exc}") from None
    tool = raw.get("tool", {})
    if not isinstance(tool, dict):
        raise GeneratorError(f"{path}: [tool] must be a table")
    table = tool.get("mcp-codegen")
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise GeneratorError(f"{path}: [tool.mcp-codegen] must be a table")
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise GeneratorError(
            f"{path}: unknown [tool.mcp-codegen] key(s) {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})"
        )

    def path_of(key: str) -> Path | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise GeneratorError(f"{path}: [tool.mcp-codegen] {key} must be a string")
        return directory / value

    versions = table.get("versions")
    if versions == "all":
        versions = []
    elif versions is not None and not (isinstance(versions, list) and all(isinstance(v, str) for v in versions)):
        raise GeneratorError(f'{path}: [tool.mcp-codegen] versions must be a list of strings or "all"')
    package = table.get("package")
    if package is not None and not isinstance(package, str):
        raise GeneratorError(f"{path}: [tool.mcp-codegen] package must be a string")
    app = table.get("app")
    if app is not None and not isinstance(app, str):
        raise GeneratorError(f"{path}: [tool.mcp-codegen] app must be a string (MODULE:ATTRIBUTE)")
    flags = {}
    for key in ("vendor-runtime", "current-modules"):
        flags[key] = table.get(key, False)
        if not isinstance(flags[key], bool):
            raise GeneratorError(f"{path}: [tool.mcp-codegen] {key} must be true or false")
    return Config(
        versions,
        path_of("out"),
        package,
        path_of("templates"),
        path_of("schema-dir"),
        flags["vendor-runtime"],
        flags["current-modules"],
        app,
        directory,
        "vendor-runtime" in table,
        "current-modules" in table,
    )
