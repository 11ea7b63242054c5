"""Where the generator's own data lives: in a source checkout or inside the wheel."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent.parent  # codegen/mcp_schema_codegen -> the repository


def _first(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[-1]


def templates_dir() -> Path:
    """Built-in templates: ``mcp_schema_codegen/_data/templates`` in a wheel, ``templates/`` in a checkout."""
    return _first(_PACKAGE / "_data" / "templates", _CHECKOUT / "templates")


def bundled_schema_dir() -> Path:
    """The lock, overlay, patches and upstream schemas shipped with the generator."""
    return _first(_PACKAGE / "_data" / "schema", _CHECKOUT / "schema")


def default_schema_dir(cwd: Path | None = None) -> Path:
    """``./schema`` when it holds a lock, else the bundled lock."""
    local = (cwd or Path.cwd()) / "schema"
    return local if (local / "lock.json").exists() else bundled_schema_dir()
