"""Header values of the modern era's HTTP requests (``Mcp-Name``, ``Mcp-Param-*``), apart from
the HTTP transport so that a client that never speaks HTTP never imports httpx."""

from __future__ import annotations

import base64

BASE64_PREFIX = "=?base64?"
BASE64_SUFFIX = "?="


def encode_header_value(value: str | int | bool) -> str:
    """A value for ``Mcp-Name`` / ``Mcp-Param-*``: as-is when header-safe, else ``=?base64?...?=``.

    Integers in decimal, booleans as ``true``/``false``. Non-ASCII, control characters,
    leading or trailing whitespace, or a value that looks like the sentinel are encoded.
    """
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    else:
        text = value
    safe = (
        all(0x20 <= ord(c) <= 0x7E for c in text)
        and text == text.strip(" \t")
        and not (text.startswith(BASE64_PREFIX) and text.endswith(BASE64_SUFFIX))
    )
    if safe:
        return text
    return BASE64_PREFIX + base64.b64encode(text.encode("utf-8")).decode("ascii") + BASE64_SUFFIX
