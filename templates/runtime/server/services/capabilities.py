"""What a client must have declared before a server asks it for input, in either era: a
2026-07-28 ``input_required`` result's embedded requests (the kernel checks them, -32021) and a
legacy session's requests to its client (``Context`` checks them before sending).

``elicitation`` covers a mode only when declared: ``url`` mode needs ``elicitation.url``; form
mode (``mode`` "form" or absent) needs ``elicitation.form``, or an ``elicitation`` naming no mode
at all (``{}`` stands for form only). A sampling request that offers ``tools`` needs
``sampling.tools``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import MISSING

# a request to the client -> the client capability it needs
CAPABILITY_OF_INPUT: dict[str, str] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def declared(capabilities: Any, name: str) -> Any:
    """The capability ``name`` a client declared (a dict or a model), None when it did not."""
    value = capabilities.get(name) if isinstance(capabilities, Mapping) else getattr(capabilities, name, None)
    return None if value is MISSING else value


def undeclared(method: str, params: Any, capabilities: Any) -> dict[str, Any] | None:
    """The capability (``{"elicitation": {"url": {}}}``...) a client must declare to be sent
    ``method`` with ``params`` and did not; None when it declared it (or ``method`` needs none)."""
    cap = CAPABILITY_OF_INPUT.get(method)
    if cap is None:
        return None
    have = declared(capabilities, cap)
    if have is None:
        return {cap: {}}
    if cap == "elicitation":
        if _param(params, "mode") == "url":
            return None if declared(have, "url") is not None else {cap: {"url": {}}}
        form = declared(have, "form") is not None or declared(have, "url") is None
        return None if form else {cap: {"form": {}}}
    if cap == "sampling" and _param(params, "tools") is not None and declared(have, "tools") is None:
        return {cap: {"tools": {}}}
    return None


def _param(params: Any, name: str) -> Any:
    """A request params field by wire name, from a dict or a model; None when it is not set."""
    value = params.get(name) if isinstance(params, Mapping) else getattr(params, name, None)
    return None if value is MISSING else value


def describe(cap: str, parts: Mapping[str, Any]) -> str:
    """``elicitation`` or ``elicitation.url``...: what a -32021 message names."""
    return ", ".join(f"{cap}.{part}" for part in sorted(parts)) if parts else cap
