"""JSON read from the user's files: every way it can be unusable is one ``GeneratorError``.

``json.loads`` accepts two things the generator cannot carry on: an integer of more digits than
Python converts (``ValueError``, not ``JSONDecodeError``) and a lone UTF-16 surrogate written as
an escape (``"\\ud800"``: a ``str`` no UTF-8 file can hold, which failed later with a traceback).
Both are refused here, a surrogate with the JSON pointer of the string that holds it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mcp_schema_codegen.errors import GeneratorError

# a \u escape of a surrogate (a lone one stays in the parsed text; a pair is joined by json)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def load_json(data: bytes | str, what: str, *, version: str | None = None) -> Any:
    """The JSON value of ``data`` (the text of ``what``: a file, a schema)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise GeneratorError(f"{what} is not valid JSON: nested too deeply", version=version) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer of too many digits
        reason = "an integer of more digits than Python reads" if "integer string conversion" in str(exc) else exc
        raise GeneratorError(f"{what} is not valid JSON: {reason}", version=version) from None
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    if _SURROGATE_ESCAPE.search(text):
        where = _surrogate_at(value, ())
        if where is not None:
            pointer = "/" + "/".join(str(step).replace("~", "~0").replace("/", "~1") for step in where)
            definition = where[1] if len(where) > 1 and where[0] in ("$defs", "definitions") else None
            raise GeneratorError(
                f"{what} holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is no Unicode text",
                version=version,
                definition=str(definition) if definition is not None else None,
                pointer=pointer,
            )
    return value


def _surrogate_at(value: Any, path: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    """The path of the first string (key or value) holding a surrogate, None if none does."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return where
        elif isinstance(node, dict):
            for key, item in reversed(node.items()):
                if _SURROGATE.search(key):
                    return (*where, _printable(key))
                stack.append((item, (*where, key)))
        elif isinstance(node, list):
            stack.extend((item, (*where, i)) for i, item in reversed(list(enumerate(node))))
    return None


def _printable(key: str) -> str:
    return key.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
