"""Server-provided names -> distinct, valid, ASCII Python identifiers.

Tool, argument, field, prompt and template names may be anything (``get-weather``,
``ns.tool``, ``class``, ``天気``); the wire name is always kept exactly, as a literal, and
the Python name is derived here: accents dropped, other non-ASCII characters spelled as
``uXXXX``, camelCase split, everything else an underscore; keywords get a trailing
underscore, a leading digit a prefix, and a name already taken a numeric suffix.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable

from mcp_schema_codegen.tools.pysource import Ident

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def words(name: str) -> list[str]:
    """The ASCII words of a name: ``getHTTPResponse-v2`` -> ``get HTTP Response v2``."""
    decomposed = unicodedata.normalize("NFKD", name)
    ascii_text = []
    for char in decomposed:
        if unicodedata.category(char) == "Mn":
            continue  # a combining accent: é -> e
        if char.isascii():
            ascii_text.append(char)
        else:
            ascii_text.append(f" u{ord(char):04x} ")
    text = _CAMEL.sub(" ", "".join(ascii_text))
    return [w for w in _NOT_WORD.split(text) if w]


def snake(name: str, fallback: str) -> str:
    """``getWeather`` -> ``get_weather``; ``class`` -> ``class_``; ``3d`` -> ``{fallback}_3d``."""
    text = "_".join(w.lower() for w in words(name)) or fallback
    if text[0].isdigit():
        text = f"{fallback}_{text}"
    if keyword.iskeyword(text):
        text += "_"
    return text


def pascal(name: str, fallback: str) -> str:
    """``get-weather`` -> ``GetWeather``; ``3d`` -> ``{fallback}3d``."""
    text = "".join(w[:1].upper() + w[1:] for w in words(name)) or fallback
    if text[0].isdigit():
        text = fallback + text
    return text


class Namer:
    """Hands out distinct identifiers within one scope, never a reserved one.

    A reserved name gets a trailing underscore (``json`` -> ``json_``), as Python code
    spells a name that would shadow; a name already handed out gets a number
    (``get_weather`` -> ``get_weather_2``).
    """

    def __init__(self, reserved: Iterable[str] = ()) -> None:
        self.reserved: set[str] = set(reserved)
        self.taken: set[str] = set()

    def free(self, name: str) -> bool:
        """``name`` may still be handed out as it is."""
        return name not in self.reserved and name not in self.taken and not keyword.iskeyword(name)

    def take(self, base: str) -> Ident:
        if (base in self.reserved or keyword.iskeyword(base)) and not base.endswith("_"):
            base += "_"
        candidate, n = base, 1
        while not self.free(candidate):
            n += 1
            candidate = f"{base}{n}" if base.endswith("_") else f"{base}_{n}"
        self.taken.add(candidate)
        return Ident(candidate)
