"""Laziness for generated packages: models imported on first use, never all at start-up.

A revision's ``models`` module is an index (PEP 562): ``lazy_attributes`` gives it the
``__getattr__`` that imports a definition's submodule on first access and keeps the result as
a plain attribute, so later accesses cost nothing. The method table and the codec name models
through ``Models``, which hands out ``ModelRef``s: a reference imports its model only when the
runtime first needs it (a message of that method arrives), and ``loaded`` tells whether it has
been imported without importing it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

Getattr = Callable[[str], Any]
Dir = Callable[[], list[str]]

_INDEXES: dict[str, tuple[str, Mapping[str, str]]] = {}  # index module -> (package, name -> submodule)


def lazy_attributes(module: str, package: str, where: Mapping[str, str]) -> tuple[Getattr, Dir]:
    """``__getattr__`` and ``__dir__`` for ``module``: ``name`` comes from ``package.<where[name]>``."""
    _INDEXES[module] = (package, where)

    def __getattr__(name: str) -> Any:
        submodule = where.get(name)
        if submodule is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(sys.modules[module], name, value)  # from now on a plain module attribute
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module]), *where})

    return __getattr__, __dir__


def reexport(module: str, target: str) -> tuple[Getattr, Dir]:
    """``__getattr__`` and ``__dir__`` for ``module``: every public name of ``target``, looked up on use."""

    def __getattr__(name: str) -> Any:
        value = getattr(importlib.import_module(target), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        found = importlib.import_module(target)
        return sorted({*vars(sys.modules[module]), *getattr(found, "__all__", dir(found))})

    return __getattr__, __dir__


class ModelRef:
    """A model (class or type alias) of a generated ``models`` module, by name; imported on first ``get``."""

    __slots__ = ("_value", "_where", "module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._value: Any = None
        self._where: str | None = None  # the module that defines it, once known

    def get(self) -> Any:
        """The model, importing it if needed."""
        value = self._value
        if value is None:
            value = self._value = getattr(importlib.import_module(self.module), self.name)
        return value

    def loaded(self) -> Any:
        """The model if it has been imported already, else None (nothing is imported).

        A model never imported has no instances, so ``isinstance(x, ref.loaded() or ())`` answers
        without importing anything. Its defining submodule is looked up, not the index: a model
        imported by another submodule (a field's type) counts.
        """
        value = self._value
        if value is None:
            if self._where is None:
                package, where = _INDEXES.get(self.module, (None, {}))
                submodule = where.get(self.name)
                self._where = self.module if package is None or submodule is None else f"{package}.{submodule}"
            found = sys.modules.get(self._where)
            if found is not None:
                value = self._value = vars(found).get(self.name)
        return value

    def __repr__(self) -> str:
        return f"ModelRef({self.module}.{self.name})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ModelRef):
            return NotImplemented
        return (self.module, self.name) == (other.module, other.name)

    def __hash__(self) -> int:
        return hash((self.module, self.name))


class Models:
    """``Models("pkg.v2026_07_28.models").CallToolRequest`` is a ``ModelRef``: nothing is imported."""

    __slots__ = ("_module", "_refs")

    def __init__(self, module: str) -> None:
        self._module = module
        self._refs: dict[str, ModelRef] = {}

    def __getattr__(self, name: str) -> ModelRef:
        if name.startswith("__"):
            raise AttributeError(name)
        ref = self._refs.get(name)
        if ref is None:
            ref = self._refs[name] = ModelRef(self._module, name)
        return ref


def resolve(value: Any) -> Any:
    """A ``ModelRef``'s model (imported if needed); anything else as it is."""
    return value.get() if isinstance(value, ModelRef) else value
