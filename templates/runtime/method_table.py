"""The method table type: one row per JSON-RPC method of a revision."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .lazy import ModelRef

Kind = Literal["request", "notification"]
Direction = Literal["client_to_server", "server_to_client", "both"]


@dataclass(frozen=True, slots=True)
class CapabilityMember:
    """A member of the client capability a server's request needs, needed when the request's
    ``param`` has ``value`` (any value, when None; absent too, when ``when_absent``); a capability
    declared with none of the request's members stands for those ``implied``
    (``elicitation: {}`` is form mode). The overlay's ``capabilities.client.<name>.members``;
    ``available``: the revision's ``ClientCapabilities`` has it (a request needing one it lacks,
    ``tools`` in a 2025-06-18 sampling request, is refused)."""

    name: str
    param: str
    value: str | None = None
    when_absent: bool = False
    implied: bool = False
    available: bool = True


class MethodSpec:
    """A method: its wire name, message, params and result types, direction and flags.

    ``message``, ``params``, ``result`` and ``task_result`` are model classes or type aliases
    (``EmptyResult``, ``ElicitRequestParams``; validate those through ``pydantic.TypeAdapter``).
    A generated table names them by ``ModelRef``, so a model is imported when first asked for:
    a server that only ever answers ``tools/call`` never builds the models of other methods.
    """

    __slots__ = (
        "_message",
        "_params",
        "_result",
        "_task_result",
        "cacheable",
        "client_capability",
        "client_capability_members",
        "deprecated",
        "direction",
        "embedded",
        "kind",
        "mrtr",
        "name",
        "params_required",
        "stub",
        "target_param",
    )

    def __init__(
        self,
        name: str,
        kind: Kind,
        direction: Direction,
        message: object,
        params: object | None,
        params_required: bool,
        result: object | None,
        stub: str,
        mrtr: bool = False,
        cacheable: bool = False,
        deprecated: bool = False,
        embedded: bool = False,
        task_result: object | None = None,
        client_capability: str | None = None,
        target_param: str | None = None,
        client_capability_members: tuple[CapabilityMember, ...] = (),
    ) -> None:
        self.name = name
        self.kind: Kind = kind
        self.direction: Direction = direction
        self._message = message
        self._params = params
        self.params_required = params_required
        self._result = result
        self.stub = stub
        self.mrtr = mrtr
        self.cacheable = cacheable
        self.deprecated = deprecated
        self.embedded = embedded
        self._task_result = task_result
        # a server's request: the client capability it needs declared (the overlay's ``capabilities.client``)
        self.client_capability = client_capability
        # and the members of it the request's params may need (``elicitation.url`` for url mode)
        self.client_capability_members = client_capability_members
        # a modern request: the param naming what it acts on (the Streamable HTTP ``Mcp-Name``
        # header, what a sealed ``requestState`` is bound to; the overlay's ``mcp_name``)
        self.target_param = target_param

    @property
    def message(self) -> Any:
        """The message definition (the whole JSON-RPC message where the revision defines one)."""
        value = self._message
        if type(value) is ModelRef:
            value = self._message = value.get()  # resolved once, then a plain slot read
        return value

    @property
    def params(self) -> Any:
        value = self._params
        if type(value) is ModelRef:
            value = self._params = value.get()
        return value

    @property
    def result(self) -> Any:
        value = self._result
        if type(value) is ModelRef:
            value = self._result = value.get()
        return value

    @property
    def task_result(self) -> Any:
        """2025-11-25: the result of the task-augmented form of the request, if it has one."""
        value = self._task_result
        if type(value) is ModelRef:
            value = self._task_result = value.get()
        return value

    @property
    def client_sends(self) -> bool:
        """The client may send this as a JSON-RPC message."""
        return self.direction != "server_to_client" and not self.embedded

    @property
    def server_sends(self) -> bool:
        """The server may send this as a JSON-RPC message."""
        return self.direction != "client_to_server" and not self.embedded

    def __repr__(self) -> str:
        return f"MethodSpec({self.name!r}, {self.kind!r}, {self.direction!r})"


class MethodTable:
    """The methods of one revision, looked up by wire name and kind."""

    __slots__ = ("_by_key", "methods")

    def __init__(self, methods: tuple[MethodSpec, ...]) -> None:
        self.methods = methods
        self._by_key = {(m.kind, m.name): m for m in methods}

    def __iter__(self) -> Iterator[MethodSpec]:
        return iter(self.methods)

    def __len__(self) -> int:
        return len(self.methods)

    def request(self, name: str) -> MethodSpec | None:
        return self._by_key.get(("request", name))

    def notification(self, name: str) -> MethodSpec | None:
        return self._by_key.get(("notification", name))

    def names(self) -> list[str]:
        return [m.name for m in self.methods]


def wire_names(model: Any, *path: str) -> frozenset[str] | None:
    """The wire names of the fields of the model reached from ``model`` through the fields
    ``path`` names (by wire name; ``M | MISSING`` and ``M | None`` followed); None where a step
    is no model: ``wire_names(InitializeResult, "capabilities")``, a revision's ``ServerCapabilities``."""
    for name in (*path, None):
        fields = getattr(model, "model_fields", None)
        if not isinstance(fields, dict):
            return None
        if name is None:
            return frozenset(info.alias or field for field, info in fields.items())
        info = next((f for field, f in fields.items() if (f.alias or field) == name), None)
        model = _model_in(info.annotation) if info is not None else None
    return None  # not reached: the loop ends on None


def _model_in(annotation: Any) -> Any:
    """The one model class an annotation holds (``M``, ``M | MISSING``, ``M | None``), else None."""
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return annotation
    found = [a for a in getattr(annotation, "__args__", ()) if isinstance(a, type) and hasattr(a, "model_fields")]
    return found[0] if len(found) == 1 else None


def required_wire_names(model: Any) -> frozenset[str]:
    """The wire names of the fields a model requires (none when it is no model)."""
    fields = getattr(model, "model_fields", None)
    if not isinstance(fields, dict):
        return frozenset()
    return frozenset(info.alias or name for name, info in fields.items() if info.is_required())
