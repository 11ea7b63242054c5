"""Keyword-argument signatures for the typed client, read from the generated models' source.

A client method takes its params model's fields as keyword arguments, with the same types
the model declares. Those types are what datamodel-code-generator wrote, so they are read
back from ``models.py`` with ``ast`` (never imported): each class's fields, walking its
bases, with ``Annotated[T, Field(alias=...)]`` giving the wire name, ``T | MISSING``
marking an optional field (the argument defaults to None, meaning omitted), the ``Strict*``
scalars shown as plain ``str``/``int``/``bool``/``float``, and model names qualified ``m.``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

PLAIN = {"StrictStr": "str", "StrictInt": "int", "StrictBool": "bool", "StrictFloat": "float"}
TYPING = {"Any", "Literal", "Union"}
BUILTIN = {"dict", "list", "str", "int", "float", "bool", "None", "tuple", "set"}
SKIPPED = {"meta"}  # ``_meta``: the session stamps it (version, capabilities, progress token)


@dataclass(frozen=True)
class Param:
    """One keyword argument of a client method."""

    name: str  # Python name, e.g. "input_responses"
    wire: str  # wire name, e.g. "inputResponses"
    annotation: str  # e.g. "m.InputResponses | None"
    required: bool


@dataclass(frozen=True)
class ModelFields:
    classes: dict[str, ast.ClassDef]

    @classmethod
    def parse(cls, source: str) -> ModelFields:
        tree = ast.parse(source)
        return cls({node.name: node for node in tree.body if isinstance(node, ast.ClassDef)})

    def has(self, name: str | None) -> bool:
        return name is not None and name in self.classes

    def field_names(self, name: str | None) -> set[str]:
        """The fields of class ``name`` (none when it is not a class of the module)."""
        if name is None or name not in self.classes:
            return set()
        return {target for target, _ in self._fields(name)}

    def params(self, name: str | None) -> tuple[Param, ...]:
        """The keyword arguments for params class ``name``: required first (none when it is not a class)."""
        if name is None or name not in self.classes:
            return ()
        params = []
        for field, node in self._fields(name):
            if field in SKIPPED or node.annotation is None:
                continue
            params.append(self._param(field, node))
        return tuple(sorted(params, key=lambda p: not p.required))  # required first, else schema order

    def _fields(self, name: str) -> list[tuple[str, ast.AnnAssign]]:
        cls = self.classes[name]
        fields: dict[str, ast.AnnAssign] = {}
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in self.classes:
                fields.update(dict(self._fields(base.id)))
        for node in cls.body:
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.target.id.startswith("_") or node.target.id == "model_config":
                    continue
                fields[node.target.id] = node
        return list(fields.items())

    def _param(self, field: str, node: ast.AnnAssign) -> Param:
        annotation = node.annotation
        wire = field
        if isinstance(annotation, ast.Subscript) and _is_name(annotation.value, "Annotated"):
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            annotation = parts[0]
            for extra in parts[1:]:
                if isinstance(extra, ast.Call) and _is_name(extra.func, "Field"):
                    for keyword in extra.keywords:
                        if keyword.arg == "alias" and isinstance(keyword.value, ast.Constant):
                            wire = str(keyword.value.value)
        members = _union(annotation)
        optional = node.value is not None or any(_is_name(m, "MISSING") for m in members)
        kept = [m for m in members if not _is_name(m, "MISSING")]
        text = " | ".join(ast.unparse(_Qualify().visit(m)) for m in kept)
        if optional:
            text += " | None"
        return Param(field, wire, text, not optional)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _union(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union(node.left) + _union(node.right)
    return [node]


class _Qualify(ast.NodeTransformer):
    """Model names -> ``m.Name``; strict scalars -> builtins; typing names kept."""

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in PLAIN:
            return ast.Name(PLAIN[node.id], ast.Load())
        if node.id in TYPING or node.id in BUILTIN:
            return node
        return ast.Attribute(ast.Name("m", ast.Load()), node.id, ast.Load())

    def visit_Constant(self, node: ast.Constant) -> ast.expr:
        return node  # strings inside Literal[...] stay strings
