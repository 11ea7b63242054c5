"""JSON Pointers (RFC 6901) inside one document, as a local ``$ref`` names them after its ``#``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

JSON = Any


class _Missing:
    """What a pointer to nothing resolves to (JSON ``null`` is a value)."""


MISSING: Any = _Missing()


def lookup(document: JSON, fragment: str) -> JSON:
    """The node ``fragment`` names in ``document`` (``/$defs/Tool``; a URI fragment, so
    %-escapes come off first, RFC 6901 §6), or ``MISSING``."""
    node = document
    for raw in fragment.split("/")[1:] if fragment else []:
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return MISSING
    return node
