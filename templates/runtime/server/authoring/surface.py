"""The generated surface module: an app's list results, written at generation time, read at start.

``mcp-codegen regen`` (or ``generate`` in a project whose ``[tool.mcp-codegen]`` names the
app) imports the author's module, calls ``App.describe()`` and writes the result as Python
literals into a generator-owned module, by default ``<app module>_surface`` beside the module
that created the app. It holds:

- ``DECLARATIONS``: each declaration's key (``tool add``, ``resource template weather://{city}``)
  -> the function it was generated from and its fingerprint;
- ``TOOLS``, ``PROMPTS``, ``RESOURCES``, ``RESOURCE_TEMPLATES``: the ``tools/list``,
  ``prompts/list``, ``resources/list`` and ``resources/templates/list`` entries, schemas
  included (self-contained JSON Schema 2020-12).

At start the app imports it (no schema is built) and compares fingerprints, which costs a
signature read per declaration and a read of the types its annotations reach (their fields).
A declaration that is new, changed or gone since generation is reported on stderr and its
entry built from the function, so the server stays truthful; ``mcp-codegen check`` fails until
the module is regenerated.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

JSON = Any
LISTS = {  # module constant -> (the list result's key, what keys an entry)
    "TOOLS": ("tools", "tool", "name"),
    "PROMPTS": ("prompts", "prompt", "name"),
    "RESOURCES": ("resources", "resource", "uri"),
    "RESOURCE_TEMPLATES": ("resourceTemplates", "resource template", "uriTemplate"),
}


class Surface:
    """A generated surface module, read: declarations and entries, by key."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.declarations: dict[str, tuple[str, str]] = {}  # key -> (function, fingerprint)
        self.entries: dict[str, dict[str, JSON]] = {}  # key -> list entry

    @classmethod
    def read(cls, module: ModuleType) -> Surface:
        surface = cls(module.__name__)
        declarations = getattr(module, "DECLARATIONS", {})
        if isinstance(declarations, Mapping):
            for key, value in declarations.items():
                if isinstance(value, tuple | list) and len(value) == 2:
                    surface.declarations[str(key)] = (str(value[0]), str(value[1]))
        for constant, (_, kind, ident) in LISTS.items():
            for entry in getattr(module, constant, ()):
                if isinstance(entry, dict) and isinstance(entry.get(ident), str):
                    surface.entries[f"{kind} {entry[ident]}"] = entry
        return surface

    def entry(self, key: str, function: str, fingerprint: str) -> dict[str, JSON] | None:
        """The generated entry of a declaration, if it was generated from what is declared now."""
        if self.declarations.get(key) != (function, fingerprint):
            return None
        return self.entries.get(key)


def load(module: str) -> Surface | None:
    """The surface module ``module``, or None when there is none (never generated)."""
    try:
        found = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            return None
        raise
    return Surface.read(found)


def default_module(app_module: str) -> str:
    """``<module>_surface`` for the module that created the app (a script's file name for ``__main__``)."""
    if app_module == "__main__":
        main = sys.modules.get("__main__")
        path = getattr(main, "__file__", None)
        return f"{Path(path).stem}_surface" if path else "app_surface"
    return f"{app_module}_surface"  # a script's functions are named after its file too (signatures.module_name)


def module_path(module: str, app_module: str) -> Path | None:
    """Where the surface module ``module`` lives (or would): beside its package's modules."""
    spec = importlib.util.find_spec(module) if _importable_parent(module) else None
    if spec is not None and spec.origin:
        return Path(spec.origin)
    parent, _, leaf = module.rpartition(".")
    if parent:
        parent_spec = importlib.util.find_spec(parent)
        locations = parent_spec.submodule_search_locations if parent_spec is not None else None
        return Path(next(iter(locations))) / f"{leaf}.py" if locations else None
    source = sys.modules.get(app_module)
    path = getattr(source, "__file__", None)
    if not path:
        return None
    here = Path(path)
    return (here.parent.parent if here.name == "__init__.py" else here.parent) / f"{leaf}.py"


def _importable_parent(module: str) -> bool:
    parent = module.rpartition(".")[0]
    return not parent or importlib.util.find_spec(parent) is not None
