"""The base class of every generated model."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, NoReturn

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema


class WireModel(BaseModel):
    """A model whose dumps use wire names (``_meta``, ``inputSchema``) by default.

    Unknown keys are kept (every MCP object is open) and unset optional fields are omitted
    from dumps. Validation (``model_validate_json`` and friends) accepts wire names only,
    so a key spelled like a Python field name (``is_error``) stays an unknown key, as on
    the wire; constructing a model in Python accepts both spellings.

    Numbers are finite: a JSON number too large for a float (``1e400``) is refused, not read as
    infinity (which JSON cannot write back).

    Validators and serializers are built on first use (``defer_build``): a model that only
    appears inside another is never built on its own, and a program pays only for the
    models it validates or dumps.
    """

    model_config = ConfigDict(
        serialize_by_alias=True, validate_by_name=False, validate_by_alias=True, defer_build=True, allow_inf_nan=False
    )
    # the base of the generated models, without fields of its own: the runtime's fast writer
    # (``serializer``) writes a model that extends only this class wherever it sits
    __wire_base__: ClassVar[bool] = True

    def __init__(self, /, **data: Any) -> None:
        self.__pydantic_validator__.validate_python(data, self_instance=self, by_alias=True, by_name=True)

    # Marks this as pydantic's own initialiser, so validation from JSON or dicts does not
    # route through it (that path must stay alias-only).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


SCALAR_TYPES = ("string", "integer", "number", "boolean", "null")


def json_values(*scalars: str) -> JSONValues:
    """The validator of a schema definition whose instances are the JSON values made of objects,
    arrays and the given scalar types (2026-07-28's ``JSONValue``: its ``anyOf`` of an object of
    itself, an array of itself, strings, numbers, booleans and null), for ``Annotated``.

    It walks the value without recursion and reports one error, where pydantic's union of the
    alternatives, recursing through the definition, reported every alternative it tried at every
    level (a value nested 130 objects deep made 636 errors, each with a path 260 steps long: 64 such
    values in a 58 KiB message took 4.8 s and 814 MiB to refuse) and refused values nested more than
    127 levels deep, which the schema allows. The value is kept as given (a dict or a list, not a
    copy), unless it holds tuples (then a copy with lists); the JSON Schema is the union's when
    validating and, when serializing, what ``JSONValues`` says.
    """
    unknown = set(scalars) - set(SCALAR_TYPES)  # objects and arrays are always there: not scalars
    if unknown:
        raise ValueError(f"not JSON scalar types: {sorted(unknown)}")
    return JSONValues(frozenset(scalars) | ({"integer"} if "number" in scalars else set()))  # JSON Schema's number


@dataclass(frozen=True)
class JSONValues:
    allowed: frozenset[str]
    # it only validates: pydantic writes the value as it is, which the runtime's fast writer
    # (``serializer``, below this module) does the same
    __writes_as_is__: ClassVar[bool] = True

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_plain_validator_function(  # written back by type, as Any is
            partial(_check_json, allowed=self.allowed), json_schema_input_schema=handler(source)
        )

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """Validation: the definition's own schema. Serialization (a tool's ``outputSchema``): what
        is written is a JSON value of the allowed types, any of them at any depth when every type
        is allowed (2026-07-28's), so ``{}``, exactly; else the allowed types at the top."""
        if handler.mode == "validation":
            return handler(schema)
        if self.allowed >= set(SCALAR_TYPES):
            return {}
        kinds = ["object", "array", *(t for t in SCALAR_TYPES if t in self.allowed)]
        return {"type": kinds}


def _listed(value: Any) -> Any:
    """``value`` with its tuples made lists (a value built in Python; JSON has none)."""
    if isinstance(value, dict):
        return {key: _listed(member) for key, member in value.items()}
    if isinstance(value, list | tuple):
        return [_listed(member) for member in value]
    return value


_LEAVE = object()  # on the walk's stack: the container below it is done with


def _check_json(value: Any, allowed: frozenset[str]) -> Any:
    """``value`` when it is a JSON value of the ``allowed`` scalars (tuples taken as arrays: then a
    copy with lists), else the ``json_value`` error naming where; a container holding itself is
    refused (a value built in Python: no JSON has one), one shared by several places is not."""
    pending: list[Any] = [value]
    inside: set[int] = set()  # the containers on the path to the item at hand
    tuples = False
    while pending:
        item = pending.pop()
        if item is _LEAVE:
            inside.discard(pending.pop())
        elif isinstance(item, dict | list | tuple):
            if id(item) in inside:
                _refuse(value, allowed)
            if isinstance(item, dict) and not all(isinstance(key, str) for key in item):
                _refuse(value, allowed)
            inside.add(id(item))
            pending += (id(item), _LEAVE)
            pending.extend(item.values() if isinstance(item, dict) else item)
            tuples = tuples or isinstance(item, tuple)
        elif _scalar_type(item) not in allowed:
            _refuse(value, allowed)
    return _listed(value) if tuples else value


def _scalar_type(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    return None


def _refuse(value: Any, allowed: frozenset[str]) -> None:
    """Raise the error for the first part of ``value`` that is not allowed, named by its path
    (walked again, with paths, only on this rare path)."""
    pending: list[tuple[Any, tuple[str | int, ...], tuple[int, ...]]] = [(value, (), ())]
    while pending:
        item, path, above = pending.pop()
        if isinstance(item, dict | list | tuple):
            if id(item) in above:
                _raise(path, "a container holding itself, which no JSON can")
            if isinstance(item, dict):
                for key in item:
                    if not isinstance(key, str):
                        _raise(path, f"an object key must be a string, not {type(key).__name__}")
            members = item.items() if isinstance(item, dict) else enumerate(item)
            pending.extend((member, (*path, step), (*above, id(item))) for step, member in members)
        else:
            kind = _scalar_type(item)
            if kind is None:
                what = (
                    "an infinite or NaN number"
                    if isinstance(item, float)
                    else f"a {type(item).__name__}, not a JSON value"
                )
                _raise(path, what)
            if kind not in allowed:
                _raise(path, f"a JSON {kind}, not allowed here ({', '.join(sorted(allowed | {'object', 'array'}))})")


def _raise(path: Sequence[str | int], problem: str) -> NoReturn:
    steps = [f"[{step!r}]" if isinstance(step, int) or len(step) <= 40 else f"[{step[:37]!r}...]" for step in path]
    if len(steps) > 10:
        steps = [*steps[:4], "...", *steps[-5:]]
    where = f" at {''.join(steps)}" if steps else ""
    raise PydanticCustomError("json_value", "{problem}{where}", {"problem": problem, "where": where})
