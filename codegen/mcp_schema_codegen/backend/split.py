"""One models module -> a lazy index and one submodule per group of definitions that refer to each other.

datamodel-code-generator writes every definition of a revision into one module, and importing
it builds all of them (150 pydantic classes for 2026-07-28: most of a server's start-up). Split,
a server builds only the models its messages touch: the package's ``models`` module becomes an
index whose attributes import their submodule on first access (PEP 562), and each submodule
imports the submodules it refers to. Definitions that refer to each other, directly or through
others (``JSONValue`` and ``JSONObject``), stay together: the strongly connected components of
the reference graph, in the order datamodel-code-generator wrote them.

The split works on the syntax tree of the generated source and moves statements verbatim; it
never executes the module. datamodel-code-generator's closing ``X.model_rebuild()`` calls are
dropped: the models defer building to their first use (``WireModel``), when every name a
group refers to is defined, and a rebuild at import would build them all again.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from mcp_schema_codegen.errors import GeneratorError

PACKAGE = "_models"  # the submodules' package, beside the index module ``models``


@dataclass
class Definition:
    """A top-level name of the generated module: a class or an assignment (type alias), with its statements."""

    name: str
    statements: list[ast.stmt]
    refers_to: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Submodule:
    name: str  # the module's name inside ``_models``
    definitions: tuple[str, ...]  # in source order
    imports: dict[str, tuple[str, ...]]  # submodule -> names taken from it
    body: str  # the definitions' source


@dataclass(frozen=True)
class SplitModels:
    header: str  # the import block every submodule starts from (unused names are pruned by ruff)
    modules: tuple[Submodule, ...]  # in dependency order: every module after those it imports
    where: dict[str, str]  # definition -> its submodule, in source order


def split(source: str, version: str) -> SplitModels:
    """Split a generated models module into submodules; raises ``GeneratorError`` on a statement it cannot place."""
    tree = ast.parse(source)
    lines = source_lines(source)
    header: list[str] = []
    definitions: dict[str, Definition] = {}
    last: Definition | None = None
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            header.append(segment(lines, node))
            continue
        name = defined_name(node)
        if name is not None:
            if name in definitions:
                raise GeneratorError(f"the generated models define {name} twice", version=version)
            last = definitions[name] = Definition(name, [node])
            continue
        rebuilt = rebuilt_name(node)
        if rebuilt is not None and rebuilt in definitions:
            continue
        if last is not None and is_docstring(node):  # an attribute docstring after an alias
            last.statements.append(node)
            continue
        raise GeneratorError(
            f"cannot place a statement of the generated models (line {node.lineno}): {ast.dump(node)[:80]}",
            version=version,
        )
    for definition in definitions.values():
        definition.refers_to = {n for s in definition.statements for n in referenced(s)} & definitions.keys()
        definition.refers_to.discard(definition.name)
    groups = strongly_connected(definitions)
    module_of: dict[str, str] = {}
    taken: set[str] = set()
    for group in groups:
        name = module_name(group[0], taken)
        taken.add(name.lower())
        for member in group:
            module_of[member] = name
    modules = []
    for group in groups:
        here = module_of[group[0]]
        imports: dict[str, set[str]] = {}
        for member in group:
            for other in definitions[member].refers_to:
                if module_of[other] != here:
                    imports.setdefault(module_of[other], set()).add(other)
        parts = ["".join(segment(lines, s) + "\n" for s in definitions[m].statements) for m in group]
        body = "\n\n".join(parts)
        modules.append(Submodule(here, tuple(group), {k: tuple(sorted(v)) for k, v in sorted(imports.items())}, body))
    where = {name: module_of[name] for name in definitions}
    return SplitModels("".join(h + "\n" for h in header), tuple(modules), where)


LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def source_lines(source: str) -> list[str]:
    """The source's lines with their ends, split as the parser splits them (only at ``\\r``, ``\\n``
    and ``\\r\\n``, so a form feed or ``\u2028`` inside a string literal does not shift them)."""
    return LINE.findall(source)


def segment(lines: list[str], node: ast.stmt | ast.expr) -> str:
    """The exact source text of a top-level statement (or an expression), cut from lines split once (what
    ``ast.get_source_segment`` does, without splitting the whole module again for every statement:
    that made splitting quadratic, 20 s a revision)."""
    if getattr(node, "decorator_list", None):
        raise GeneratorError(f"cannot place a decorated definition of the generated models (line {node.lineno})")
    end_line, end_col = node.end_lineno, node.end_col_offset
    if end_line is None or end_col is None or end_line > len(lines):
        raise GeneratorError(f"no source for a statement of the generated models (line {node.lineno})")
    first, last = node.lineno - 1, end_line - 1
    if first == last:
        return lines[first].encode()[node.col_offset : end_col].decode()
    head = lines[first].encode()[node.col_offset :].decode()
    tail = lines[last].encode()[:end_col].decode()
    return head + "".join(lines[first + 1 : last]) + tail


def defined_name(node: ast.stmt) -> str | None:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def rebuilt_name(node: ast.stmt) -> str | None:
    """``X`` of a ``X.model_rebuild()`` statement."""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if isinstance(func, ast.Attribute) and func.attr == "model_rebuild" and isinstance(func.value, ast.Name):
        return func.value.id
    return None


def is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def referenced(node: ast.AST) -> Iterator[str]:
    """Every name a statement refers to, forward references in strings (``"JSONValue"``) included.

    Docstrings are skipped; any other string that parses as an expression counts, so a
    ``Literal`` value that happens to be a definition's name adds a harmless extra import.
    """
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            yield child.id
        elif isinstance(child, ast.Expr) and is_docstring(child):
            continue
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            try:
                parsed = ast.parse(child.value, mode="eval")
            except SyntaxError:
                continue
            yield from (n.id for n in ast.walk(parsed) if isinstance(n, ast.Name))


def strongly_connected(definitions: dict[str, Definition]) -> list[list[str]]:
    """Tarjan's algorithm, iterative: the groups, each after every group it refers to; members in source order."""
    order = {name: i for i, name in enumerate(definitions)}

    def refs(name: str) -> Iterator[str]:
        return iter(sorted(definitions[name].refers_to, key=order.__getitem__))

    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in definitions:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [
            (root, iter(sorted(definitions[root].refers_to, key=order.__getitem__)))
        ]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, refs(target)))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group, key=order.__getitem__))
    return groups


def module_name(definition: str, taken: set[str]) -> str:
    """A submodule name for a group: its first definition in snake case, distinct ignoring case
    (two names that differ only in case must not share a file on a case-insensitive disk)."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", definition).lower().strip("_") or "model"
    if keyword.iskeyword(name) or not name.isidentifier() or name.startswith("__"):
        name = f"{name}_model"
    candidate, n = name, 2
    while candidate.lower() in taken:
        candidate, n = f"{name}_{n}", n + 1
    return candidate
