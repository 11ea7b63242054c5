"""Pieces of Python source that are safe by construction.

Generated modules are assembled only from three kinds of text: ``Code`` built by this module
from fixed text, ``Ident`` (a checked ASCII identifier) and literals (``literal``,
``docstring``). A template environment with :func:`finalize` refuses any plain ``str``, so
a string that came from a server can reach generated code only through one of them.
"""

from __future__ import annotations

import ast
import keyword
import math
from typing import Any


class Code(str):
    """Python source text built from fixed text, identifiers and literals."""

    __slots__ = ()


class Ident(Code):
    """A checked ASCII identifier that is not a keyword."""

    __slots__ = ()

    def __new__(cls, name: str) -> Ident:
        if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
            raise ValueError(f"not a safe identifier: {name!r}")
        return super().__new__(cls, name)


LiteralValue = str | int | float | bool | None


def is_literal_value(value: object) -> bool:
    """A JSON scalar that has an exact Python literal (no NaN or infinities)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, str | int | bool)


def literal(value: Any) -> Code:
    """A JSON value (scalars, lists, objects) as a Python literal expression."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"no Python literal for {value!r}")
    if isinstance(value, list):
        return Code("[" + ", ".join(literal(v) for v in value) + "]")
    if isinstance(value, dict):
        return Code("{" + ", ".join(f"{literal(str(k))}: {literal(v)}" for k, v in value.items()) + "}")
    if not is_literal_value(value):
        raise ValueError(f"no Python literal for a {type(value).__name__}")
    return Code(repr(value))  # repr escapes every non-printable character, newlines included


def docstring(text: str) -> Code:
    """A triple-quoted literal for ``text``: real newlines, everything else escaped.

    Documentation only: a lone surrogate (which a class docstring cannot hold, CPython
    encodes it as UTF-8) becomes U+FFFD.
    """
    text = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    body = []
    for i, char in enumerate(text):
        if char == "\\":
            body.append("\\\\")
        elif char == '"' and text[i + 1 : i + 2] in ('"', ""):  # could close the literal: escape
            body.append('\\"')
        elif char == "\n" or (char.isprintable() and char != "\r"):
            body.append(char)
        else:
            body.append(char.encode("unicode_escape").decode("ascii"))
    source = '"""' + "".join(body) + '"""'
    if ast.literal_eval(source) != text:  # the construction above is the guarantee; this checks it
        raise ValueError("docstring literal does not round-trip")
    return Code(source)


def comment(reason: str) -> Code:
    """A trailing comment from fixed text (never server text): one line, no quotes needed."""
    if not reason.isascii() or not reason.isprintable():
        raise ValueError(f"comment text must be plain ASCII: {reason!r}")
    return Code("  # " + reason)


def finalize(value: object) -> object:
    """Jinja ``finalize`` hook: only ``Code`` (and numbers and booleans) may be printed."""
    if isinstance(value, Code) or value is None or isinstance(value, bool | int):
        return "" if value is None else value
    if isinstance(value, str):
        raise TypeError(f"a plain string reached a template: {value[:60]!r}; wrap it as a literal or identifier")
    raise TypeError(f"a {type(value).__name__} reached a template")
