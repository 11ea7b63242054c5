"""What a client must have declared before a server asks it for input, in either era: a
2026-07-28 ``input_required`` result's embedded requests (the kernel checks them, -32021) and a
legacy session's requests to its client (``Context`` checks them before sending). And what a
server's own capabilities say in the revision a session speaks (``as_spoken``).

``elicitation`` covers a mode only when declared: ``url`` mode needs ``elicitation.url``; form
mode (``mode`` "form" or absent) needs ``elicitation.form``, or an ``elicitation`` naming no mode
at all (``{}`` stands for form only). A sampling request that offers ``tools`` needs
``sampling.tools``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import MISSING

from ...codec import dump
from ...method_table import CLIENT_CAPABILITY_OF, wire_names

if TYPE_CHECKING:
    from ...method_table import MethodTable


def declared(capabilities: Any, name: str) -> Any:
    """The capability ``name`` a client declared (a dict or a model), None when it did not."""
    value = capabilities.get(name) if isinstance(capabilities, Mapping) else getattr(capabilities, name, None)
    return None if value is MISSING else value


def undeclared(method: str, params: Any, capabilities: Any) -> dict[str, Any] | None:
    """The capability (``{"elicitation": {"url": {}}}``...) a client must declare to be sent
    ``method`` with ``params`` and did not; None when it declared it (or ``method`` needs none)."""
    cap = CLIENT_CAPABILITY_OF.get(method)
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


LOG_MESSAGE = "notifications/message"
PROGRESS = "notifications/progress"

# a server capability -> the message a revision must have for it to mean anything there
# (kind, method); a flag of a capability -> the notification that flag promises
SERVER_CAPABILITY_OF: dict[str, tuple[str, str]] = {
    "logging": ("notification", LOG_MESSAGE),
    "completions": ("request", "completion/complete"),
    "prompts": ("request", "prompts/list"),
    "resources": ("request", "resources/list"),
    "tools": ("request", "tools/list"),
}
SERVER_FLAG_OF: dict[tuple[str, str], str] = {
    ("prompts", "listChanged"): "notifications/prompts/list_changed",
    ("resources", "listChanged"): "notifications/resources/list_changed",
    ("resources", "subscribe"): "notifications/resources/updated",
    ("tools", "listChanged"): "notifications/tools/list_changed",
}


def as_spoken(capabilities: Any, methods: MethodTable) -> dict[str, Any]:
    """A server's ``capabilities`` as the revision whose table is ``methods`` has them: without a
    capability whose messages the revision lacks (``logging`` without ``notifications/message``)
    or a flag whose notification it lacks (``subscribe`` without ``notifications/resources/
    updated``), so a client never subscribes to what the server cannot send it. A server of one
    revision serves older ones: each session is told what its own revision can carry. Capabilities
    not listed here (``experimental``, extensions) pass as they are; one listed here is also left
    out where the revision's ``ServerCapabilities`` has no such field. ``capabilities`` may be a
    model, or hold models, as an override of ``capabilities()`` may return them."""
    out: dict[str, Any] = {}
    fields = server_capability_fields(methods)
    for name, value in dump(capabilities).items():
        needs = SERVER_CAPABILITY_OF.get(name)
        if needs is not None and (not has_message(methods, *needs) or (fields is not None and name not in fields)):
            continue
        if isinstance(value, Mapping):
            value = {
                flag: setting
                for flag, setting in value.items()
                if (name, flag) not in SERVER_FLAG_OF
                or has_message(methods, "notification", SERVER_FLAG_OF[(name, flag)])
            }
        out[name] = value
    return out


@functools.cache
def server_capability_fields(methods: MethodTable) -> frozenset[str] | None:
    """The wire names of the revision's ``ServerCapabilities`` (read from the result of its
    ``server/discover`` or ``initialize``), None when the table names neither: 2024-11-05 has
    ``completion/complete`` but no ``completions`` capability, which came with 2025-03-26."""
    for method in ("server/discover", "initialize"):
        spec = methods.request(method)
        names = wire_names(spec.result, "capabilities") if spec is not None else None
        if names is not None:
            return names
    return None


def has_message(methods: MethodTable, kind: str, name: str) -> bool:
    """The revision has ``name``: a request a client sends, or a notification a server sends."""
    if kind == "request":
        spec = methods.request(name)
        return spec is not None and spec.client_sends
    spec = methods.notification(name)
    return spec is not None and spec.server_sends
