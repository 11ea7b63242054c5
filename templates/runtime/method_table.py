"""The method table type: one row per JSON-RPC method of a revision."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

Kind = Literal["request", "notification"]
Direction = Literal["client_to_server", "server_to_client", "both"]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """A method: its wire name, message, params and result types, direction and flags.

    ``params`` and ``result`` are model classes or type aliases (``EmptyResult``,
    ``ElicitRequestParams``); validate them through ``pydantic.TypeAdapter``.
    """

    name: str
    kind: Kind
    direction: Direction
    message: object
    params: object | None
    params_required: bool
    result: object | None
    stub: str
    mrtr: bool = False
    cacheable: bool = False
    deprecated: bool = False
    embedded: bool = False
    task_result: object | None = None

    @property
    def client_sends(self) -> bool:
        """The client may send this as a JSON-RPC message."""
        return self.direction != "server_to_client" and not self.embedded

    @property
    def server_sends(self) -> bool:
        """The server may send this as a JSON-RPC message."""
        return self.direction != "client_to_server" and not self.embedded


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
