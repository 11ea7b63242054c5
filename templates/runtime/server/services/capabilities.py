"""What a client must have declared before a server asks it for input, in either era: a
2026-07-28 ``input_required`` result's embedded requests (the kernel checks them, -32021) and a
legacy session's requests to its client (the session checks them before sending). And what a
server's own capabilities say in the revision a session speaks (``as_spoken``). Which capability
stands for which messages is data of the generated package (the overlay's ``capabilities``: a
server capability in ``RevisionEntry.server_capabilities``, the client capability a request needs
in ``MethodSpec.client_capability``, and the members of it the request's params may need in
``MethodSpec.client_capability_members``: on 2025-11-25 and 2026-07-28 ``url`` mode needs
``elicitation.url``; form mode (``mode`` "form" or absent) needs ``elicitation.form``, or an
``elicitation`` naming no mode at all (``{}`` stands for form only); a sampling request that
offers ``tools`` needs ``sampling.tools``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import MISSING

from ...codec import dump
from ...jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError

if TYPE_CHECKING:
    from ...method_table import MethodTable
    from ...versions import VersionRegistry


def declared(capabilities: Any, name: str) -> Any:
    """The capability ``name`` a client declared (a dict or a model), None when it did not."""
    value = capabilities.get(name) if isinstance(capabilities, Mapping) else getattr(capabilities, name, None)
    return None if value is MISSING else value


def undeclared(method: str, params: Any, capabilities: Any, methods: MethodTable) -> dict[str, Any] | None:
    """The capability (``{"elicitation": {"url": {}}}``...) a client must declare to be sent
    ``method`` with ``params`` and did not; None when it declared it (or ``method`` needs none:
    ``MethodSpec.client_capability`` in the server's table ``methods``)."""
    spec = methods.request(method)
    if spec is None or spec.client_capability is None:
        return None
    cap = spec.client_capability
    have = declared(capabilities, cap)
    if have is None:
        return {cap: {}}
    # the members declared that the revision has (one it lacks, declared anyway, agrees to nothing)
    named = [m for m in spec.client_capability_members if m.available and declared(have, m.name) is not None]
    for member in spec.client_capability_members:
        value = _param(params, member.param)
        needed = (value is not None) if member.value is None else (value == member.value)
        if not (needed or (value is None and member.when_absent)):
            continue
        if member not in named and not (member.implied and not named):
            return {cap: {member.name: {}}}
    return None


def _param(params: Any, name: str) -> Any:
    """A request params field by wire name, from a dict or a model; None when it is not set."""
    if isinstance(params, Mapping):
        value = params.get(name)
    else:  # a model: the field whose wire name it is
        fields = getattr(type(params), "model_fields", {})
        attribute = next((f for f, info in fields.items() if (info.alias or f) == name), name)
        value = getattr(params, attribute, None)
    return None if value is MISSING else value


def describe(cap: str, parts: Mapping[str, Any]) -> str:
    """``elicitation`` or ``elicitation.url``...: what a -32021 message names."""
    return ", ".join(f"{cap}.{part}" for part in sorted(parts)) if parts else cap


def not_declared(missing: Mapping[str, Any]) -> ProtocolError:
    """The -32021 error for what a client did not declare (``undeclared``'s answers, merged)."""
    named = ", ".join(describe(cap, parts) for cap, parts in sorted(missing.items()))
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"the client did not declare {named}",
        {"requiredCapabilities": dict(missing)},
    )


LOG_MESSAGE = "notifications/message"
PROGRESS = "notifications/progress"


def as_spoken(capabilities: Any, registry: VersionRegistry, version: str) -> dict[str, Any]:
    """A server's ``capabilities`` as revision ``version`` of the server's ``registry`` has them:
    without a capability some revision of the registry has and ``version`` lacks (``completions``
    before 2025-03-26), or a flag some revision has and ``version`` lacks for it (``subscribe``
    where there is no ``notifications/resources/updated``), so a client never subscribes to what
    the server cannot send it. A server of one revision serves older ones: each session is told
    what its own revision can carry. Capabilities no revision has (``experimental``, extensions, a
    server's own) pass as they are. ``capabilities`` may be a model, or hold models, as an
    override of ``capabilities()`` may return them."""
    out: dict[str, Any] = {}
    known = registry.known_capabilities()
    have = registry.entry(version).server_capabilities
    for name, value in dump(capabilities).items():
        if name in known and name not in have:
            continue
        if name in known and isinstance(value, Mapping):
            lacking = known[name] - set(have[name].flags)
            value = {flag: setting for flag, setting in value.items() if flag not in lacking}
        out[name] = value
    return out


def has_message(methods: MethodTable, kind: str, name: str) -> bool:
    """The revision has ``name``: a request a client sends, or a notification a server sends."""
    if kind == "request":
        spec = methods.request(name)
        return spec is not None and spec.client_sends
    spec = methods.notification(name)
    return spec is not None and spec.server_sends
