"""The runtime's fast JSON writer: ``orjson``, with each model written by a function of its own.

pydantic's serializer of a small result costs about seven times ``orjson.dumps`` of the same
data. Here ``orjson`` writes the message and calls back (its ``default`` hook) for each model it
meets; the model's writer, made once per class from its fields, hands back a dict of its
values by wire name (``MISSING`` fields left out, unknown keys of an open object after the
fields in their order), holding the nested models as they are, for ``orjson`` to call back on.
The bytes are pydantic's (``to_json`` with ``inf_nan_mode="null"``, the generated models'
setting): the differential tests compare them for every official example and the generated
instances of every definition of every revision.

Whatever this writer is not sure to write exactly as pydantic does makes ``dumps`` return None,
and the caller uses pydantic: a class with its own serialisation (serializers, computed or
excluded fields, a root model, annotations beyond plain JSON types and constraints, a bare
``float`` field, infinity not written as null, Python field names on the wire), a subclass of a
model class (pydantic writes a subclass in a field by the declared class), an unknown key that
repeats a field's wire name, and anything ``orjson`` refuses or would write differently
(integers beyond 64 bits, subclasses of ``str``/``int``/``dict``/``list``, dates, dataclasses,
keys that are not strings, strings that are not UTF-8).
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin

import orjson
from annotated_types import BaseMetadata
from pydantic import MISSING, BaseModel
from pydantic.fields import FieldInfo
from typing_extensions import TypeAliasType

Writer = Callable[[Any], dict[str, Any]]

# orjson writes str, int (64 bits), float, bool, None, dict, list and tuple as pydantic's
# inference does; the passthrough options send everything else to ``_default`` (which refuses
# what is not a model), instead of orjson's own formats for dates, dataclasses and subclasses
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
_LEAVES = (str, int, bool, type(None))


class Unsure(TypeError):
    """The writer cannot promise pydantic's bytes for this value (a ``TypeError``, as orjson's
    ``default`` hook is expected to raise)."""


# Lists of more models than this go to pydantic: each model costs this walk about 1.2-1.5 times
# what it costs pydantic's serializer (benchmarks/README.md, step 3); below it, and wherever
# long strings are, the walk wins (orjson writes strings several times faster).
LONG_LIST = 4
_WRITERS: dict[type, Writer | None] = {}  # per class: its writer, or None when pydantic must write it
_ROOTS: dict[type, Writer | None] = {}  # the same, for a class written as the root of a message


def dumps(data: Any) -> bytes | None:
    """``data`` (plain JSON data, models anywhere inside) as ``pydantic_core.to_json(data,
    inf_nan_mode="null")`` writes it, or None when this writer is not sure to match it."""
    try:
        return orjson.dumps(data, default=_default, option=_OPTIONS)
    except (TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return None


def fields_of(model: BaseModel) -> dict[str, Any] | None:
    """The members of ``model``'s JSON object, its nested models left as they are (``dumps``
    writes them), or None when pydantic must write the model. A new dict: add to it freely.

    ``model`` is the root of what is written (a result), which pydantic writes by its own class
    whatever the class extends: the server's result classes extend the generated ones."""
    cls = type(model)
    try:
        write = _ROOTS[cls]
    except KeyError:
        write = _ROOTS[cls] = _make_writer(cls)
    if write is None:
        return None
    try:
        return write(model)
    except Unsure:
        return None


def writer(cls: type) -> Writer | None:
    """The writer of ``cls`` where it sits inside a message (made on first use), or None when
    pydantic must write it there: also when it extends a model class, since pydantic writes a
    subclass in a field of its parent's class by the parent's fields."""
    try:
        return _WRITERS[cls]
    except KeyError:
        write = _WRITERS[cls] = _make_writer(cls) if _extends_no_model(cls) else None
        return write


def _default(value: Any) -> Any:
    """orjson's call back for a value it does not write itself: a model's members, by its writer."""
    write = _WRITERS.get(type(value), _unknown)
    if write is None:
        raise Unsure
    return write(value)


def _unknown(value: Any) -> dict[str, Any]:
    write = writer(type(value))
    if write is None:
        raise Unsure  # not a model, or one pydantic must write
    return write(value)


def _extends_no_model(cls: type) -> bool:
    """``cls`` extends no model class but the base of the generated models (``WireModel``, marked
    ``__wire_base__``) and pydantic's ``BaseModel``."""
    return all(
        not issubclass(base, BaseModel) or base is BaseModel or base.__dict__.get("__wire_base__", False)
        for base in cls.__mro__[1:]
    )


def _make_writer(cls: type) -> Writer | None:
    """The writer of ``cls``: its field table (name, wire name, optional, the check of a declared
    model's place), walked per model; None when pydantic must write the class."""
    if not _plain_model(cls):
        return None
    rows: list[tuple[str, str, bool, Check | None]] = []
    for name, info in cls.model_fields.items():  # type: ignore[attr-defined]
        if info.exclude or info.exclude_if is not None or not _plain_annotation(info.annotation):
            return None
        if not all(_harmless(m) for m in info.metadata):
            return None  # a functional serializer, or anything else pydantic may act on
        shapes = _shape(info.annotation)
        if shapes is None:
            return None
        wire = info.serialization_alias if info.serialization_alias is not None else name
        rows.append((name, wire, _admits_missing(info.annotation), _check(shapes)))
    table = tuple(rows)
    wires = frozenset(wire for _, wire, _, _ in table)

    def write(model: Any) -> dict[str, Any]:
        values = model.__dict__
        out = {}
        for name, wire, optional, check in table:
            value = values[name]
            if value is MISSING:
                if optional:
                    continue
                raise Unsure  # pydantic's bytes for a misplaced MISSING: not ours to guess
            if check is not None:
                check(value)
            out[wire] = value
        extra = model.__pydantic_extra__
        if extra:
            if not wires.isdisjoint(extra):
                raise Unsure  # pydantic would write the key twice
            out.update(extra)
        return out

    return write


Check = Callable[[Any], None]


def _check(shapes: frozenset[str]) -> Check | None:
    """Raise ``Unsure`` for a list (or dict) of more than ``LONG_LIST`` models, which pydantic
    writes faster than this walk; None when the field holds no list or dict of models."""
    kinds = tuple(kind for kind in (list, dict) if kind.__name__ in shapes)
    if not kinds:
        return None

    def check(value: Any) -> None:
        if type(value) in kinds and len(value) > LONG_LIST:
            raise Unsure

    return check


def _plain_model(cls: type) -> bool:
    """``cls`` is a model pydantic writes field by field with the defaults this writer follows."""
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls.__pydantic_root_model__:
        return False
    config = cls.model_config
    if config.get("ser_json_inf_nan", "null") != "null" or not config.get("serialize_by_alias", False):
        return False
    decorators = cls.__pydantic_decorators__
    return not (decorators.field_serializers or decorators.model_serializers or cls.model_computed_fields)


def _plain_annotation(annotation: Any, module: Any = None, seen: frozenset[int] = frozenset()) -> bool:
    """Every value ``annotation`` declares is written by pydantic as by inference: JSON scalars
    (a float only beside an int, as the generated models' numbers), ``Any``, literals, models,
    lists, string-keyed dicts and unions of them, with constraints only. ``module`` resolves the
    forward references of a recursive alias (``JSONValue``); an alias met again inside itself
    adds nothing new."""
    if isinstance(annotation, str | typing.ForwardRef):
        annotation = _resolve(annotation, module)
        if annotation is None:
            return False
    if isinstance(annotation, TypeAliasType):
        if id(annotation) in seen:
            return True
        module = sys.modules.get(str(annotation.__module__))
        return _plain_annotation(annotation.__value__, module, seen | {id(annotation)})
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is typing.Annotated:
        return all(_harmless(m) for m in args[1:]) and _plain_annotation(args[0], module, seen)
    if annotation is Any or annotation is MISSING or annotation in _LEAVES:
        return True
    if origin is Literal:
        return all(type(arg) in _LEAVES for arg in args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    if origin is list:
        return _plain_annotation(args[0], module, seen)
    if origin is dict:
        return args[0] is str and _plain_annotation(args[1], module, seen)
    if origin is Union or origin is types.UnionType:
        plain = [_unaliased(arg) for arg in args]
        if float in plain and int not in plain:
            return False
        return all(bare is float or _plain_annotation(arg, module, seen) for arg, bare in zip(args, plain, strict=True))
    return False


def _resolve(reference: str | typing.ForwardRef, module: Any) -> Any:
    """A forward reference of a type alias (``JSONValue``, ``list[JSONValue]``), looked up in the
    alias's module: a name, or ``list[...]``/``dict[str, ...]`` of one; None for anything else."""
    text = (reference.__forward_arg__ if isinstance(reference, typing.ForwardRef) else reference).strip()
    if module is None:
        return None
    for container in ("list", "dict"):
        if text.startswith(container + "[") and text.endswith("]"):
            inner = text[len(container) + 1 : -1]
            if container == "dict":
                key, _, inner = inner.partition(",")
                if key.strip() != "str":
                    return None
            item = _resolve(inner, module)
            if item is None:
                return None
            return list[item] if container == "list" else dict[str, item]  # type: ignore[valid-type]
    if not text.isidentifier():
        return None
    return vars(module).get(text)


def _harmless(metadata: Any) -> bool:
    """Metadata of an annotation that changes nothing pydantic writes: constraints (``Strict``,
    ``Ge``...), a ``Field`` that only names a union's discriminator or constrains, and a validator
    that says so (``wire_model.JSONValues``)."""
    if isinstance(metadata, BaseMetadata) or getattr(type(metadata), "__writes_as_is__", False):
        return True
    return (
        isinstance(metadata, FieldInfo)
        and metadata.exclude is None
        and metadata.exclude_if is None
        and all(_harmless(m) for m in metadata.metadata)
    )


def _unaliased(annotation: Any) -> Any:
    """``annotation`` without aliases and constraints (``StrictFloat`` -> ``float``)."""
    while True:
        if isinstance(annotation, TypeAliasType):
            annotation = annotation.__value__
        elif get_origin(annotation) is typing.Annotated:
            inner, *metadata = get_args(annotation)
            if not all(_harmless(m) for m in metadata):
                return annotation
            annotation = inner
        else:
            return annotation


def _shape(annotation: Any) -> frozenset[str] | None:
    """Where a value of ``annotation`` may hold models of declared classes: the value itself
    ("one"), the items of a list or the values of a dict ("list", "dict"); empty for none (only
    ``Any`` data, where pydantic writes any model by its own class); None for deeper."""
    annotation = _unaliased(annotation)
    args = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    shapes: set[str] = set()
    for arg in args:
        arg = _unaliased(arg)
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            shapes.add("one")
        elif get_origin(arg) in (list, dict):
            inner = _shape(get_args(arg)[-1])
            if inner is None or inner - {"one"}:
                return None
            if inner:
                shapes.add(get_origin(arg).__name__)
    return frozenset(shapes)


def _admits_missing(annotation: Any) -> bool:
    """``MISSING`` is one of the values ``annotation`` declares (an optional field)."""
    annotation = _unaliased(annotation)
    return annotation is MISSING or (
        get_origin(annotation) in (Union, types.UnionType) and any(a is MISSING for a in get_args(annotation))
    )
