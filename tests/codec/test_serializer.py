"""The runtime's fast writer (``_runtime/serializer.py``, orjson) writes pydantic's bytes or none.

Every generated instance of every definition is compared in ``tests/test_differential.py``
(``test_the_fast_writer_writes_pydantics_bytes``); here: every official 2026-07-28 example, the
values a Python author may put where a model allows anything (unknown keys, ``Any`` fields),
and the cases the writer must hand to pydantic.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import to_json

from tests.conftest import EXAMPLES

EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))


def pydantic_bytes(value: Any) -> bytes:
    return to_json(value, inf_nan_mode="null")


def fast(value: Any) -> bytes | None:
    from mcpgen._runtime.serializer import dumps

    return dumps(value)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_official_example_is_written_as_pydantic_writes_it(path: Path) -> None:
    from mcpgen.v2026_07_28 import models

    target = getattr(models, path.parent.name)
    raw = path.read_bytes()
    if isinstance(target, type) and issubclass(target, BaseModel):
        value: Any = target.model_validate_json(raw, by_alias=True, by_name=False)
    else:
        try:
            value = TypeAdapter(target).validate_json(raw)
        except ValidationError:  # an alias whose example needs its envelope: nothing to write
            pytest.skip("not an instance of its alias alone")
    written = fast(value)
    if written is None:  # only a model holding one that extends another model class goes to pydantic
        assert _extends_a_model(value), "the fast writer handed an official example to pydantic"
        return
    assert written == pydantic_bytes(value)
    # and inside an envelope, as the codec writes results
    assert fast({"jsonrpc": "2.0", "id": 1, "result": value}) == pydantic_bytes(
        {"jsonrpc": "2.0", "id": 1, "result": value}
    )


def _extends_a_model(value: Any) -> bool:
    """``value`` is or holds a model whose class extends another model class (``Error`` ...)."""
    if isinstance(value, BaseModel):
        parents = [base for base in type(value).__mro__[1:] if issubclass(base, BaseModel)]
        if any(base.model_fields for base in parents):
            return True
        return any(_extends_a_model(v) for v in value.__dict__.values())
    if isinstance(value, list | tuple):
        return any(_extends_a_model(v) for v in value)
    if isinstance(value, dict):
        return any(_extends_a_model(v) for v in value.values())
    return False


class Colour(enum.Enum):
    RED = "red"


class Word(enum.StrEnum):
    HELLO = "hello"


class Number(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


class Count(int):
    pass


def text_content(text: str) -> Any:
    from mcpgen.v2026_07_28 import models

    return models.TextContent(type="text", text=text)


# Anything a Python author may put in an unknown key or an ``Any`` field.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.1, 1e16, 1e-7, 5e-324, 1.7976931348623157e308, -0.0, 100.0, 1e22, 123456789.125]),
    st.text(),
    st.sampled_from(["\x00\x1f\x7f", "\ud800", '"\\/', "\u2028\u2029", "é😀"]),
    st.binary(max_size=4),
    st.sampled_from(
        [
            datetime.datetime(2026, 7, 28, 12, 0, tzinfo=datetime.UTC),
            datetime.date(2026, 7, 28),
            datetime.time(12, 30),
            uuid.UUID(int=7),
            decimal.Decimal("1.5"),
            Colour.RED,
            Word.HELLO,
            Number.ONE,
            Text("sub"),
            Count(3),
            (1, 2),
            frozenset({1}),
        ]
    ),
    st.text(max_size=8).map(text_content),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.text(max_size=6), inner, max_size=4),
        st.dictionaries(st.integers(), inner, min_size=1, max_size=2),
    ),
    max_leaves=12,
)


GIVEN = {"content", "result_type", "structured_content"}  # passed by name below: not again as extras


@settings(max_examples=300, deadline=None)
@given(
    extra=st.dictionaries(st.text(max_size=8).filter(lambda k: k not in GIVEN), values, max_size=4), structured=values
)
def test_any_value_is_written_as_pydantic_writes_it_or_handed_to_pydantic(
    extra: dict[str, Any], structured: Any
) -> None:
    from mcpgen.v2026_07_28 import models

    try:  # an extra key may be a field's wire name, with a value the field refuses: no such result
        result = models.CallToolResult(
            content=[text_content("hi")], result_type="complete", structured_content=structured, **extra
        )
    except ValidationError:
        reject()
    try:
        expected = pydantic_bytes(result)
    except Exception:  # pydantic cannot write it: neither may the fast writer
        assert fast(result) is None
        return
    written = fast(result)
    assert written is None or written == expected
    if _plain_json(structured) and all(_plain_json(v) for v in extra.values()) and not set(extra) & WIRE_NAMES:
        assert written is not None, "plain JSON data handed to pydantic"


WIRE_NAMES = {"_meta", "content", "isError", "resultType", "structuredContent"}


def _plain_json(value: Any) -> bool:
    """JSON data orjson writes as pydantic does: what the fast writer must take."""
    if type(value) is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    if type(value) is list:
        return all(_plain_json(v) for v in value)
    if type(value) is int:
        return -(2**63) <= value < 2**64
    if type(value) is str:
        return not any("\ud800" <= c <= "\udfff" for c in value)
    if type(value) is float:
        return True
    if isinstance(value, BaseModel):
        return value.__pydantic_extra__ is not None and _plain_json(dict(value.__pydantic_extra__))
    return value is None or type(value) is bool


def test_what_the_writer_hands_to_pydantic() -> None:
    """A subclass of a model class in a field of that class (pydantic writes it by the field's
    class), an unknown key that repeats a field's wire name (pydantic writes both), a required
    field left MISSING, an integer beyond 64 bits: each is handed to pydantic (None), never
    written differently."""
    from mcpgen._runtime.serializer import fields_of
    from mcpgen.v2026_07_28 import models
    from pydantic import MISSING

    class Loud(models.TextContent):
        volume: int = 11

    loud = Loud(type="text", text="x")
    # as the root of a message (a result): by its own class, as pydantic writes it
    assert fields_of(loud) == {"text": "x", "type": "text", "volume": 11}
    # inside a message: pydantic writes it by a field's class where a field declares its parent
    in_field = models.CallToolResult(content=[text_content("y")], result_type="complete")
    in_field.content.append(loud)
    assert fast(in_field) is None
    in_any = models.CallToolResult(content=[], result_type="complete", structured_content={"x": loud})
    assert fast(in_any) is None

    twice = models.CallToolResult(content=[], result_type="complete")
    assert twice.__pydantic_extra__ is not None
    twice.__pydantic_extra__["resultType"] = "again"
    assert fast(twice) is None

    missing = text_content("x")
    missing.__dict__["text"] = MISSING
    assert fields_of(missing) is None

    big = models.CallToolResult(content=[], result_type="complete", structured_content=2**64)
    assert fast(big) is None
    assert json.loads(pydantic_bytes(big))["structuredContent"] == 2**64


def test_long_lists_of_models_go_to_pydantic_and_short_ones_do_not() -> None:
    from mcpgen._runtime.serializer import LONG_LIST, fields_of
    from mcpgen.v2026_07_28 import models

    short = models.CallToolResult(content=[text_content("a")] * LONG_LIST, result_type="complete")
    long = models.CallToolResult(content=[text_content("a")] * (LONG_LIST + 1), result_type="complete")
    assert fields_of(short) is not None
    assert fields_of(long) is None
    assert fast(short) == pydantic_bytes(short)


def test_infinity_and_nan_are_null_as_in_pydantic() -> None:
    from mcpgen.v2026_07_28 import models

    result = models.CallToolResult(
        content=[], result_type="complete", structured_content=[math.inf, -math.inf, math.nan, -0.0]
    )
    assert (
        fast(result)
        == pydantic_bytes(result)
        == (b'{"content":[],"resultType":"complete","structuredContent":[null,null,null,-0.0]}')
    )


@pytest.mark.parametrize("cacheable", [False, True])
@pytest.mark.parametrize("server_info", [None, {"name": "s", "version": "1"}])
def test_a_stamped_result_response_is_the_pydantic_paths_bytes(cacheable: bool, server_info: Any) -> None:
    """``dumps_result`` (the fast writer, the era's members added as data) against the bytes path
    it replaces (the result by its own class's serializer, members and envelope joined as bytes)."""
    from mcpgen._runtime.codec import Revision
    from mcpgen._runtime.codec_modern import ModernCodec
    from mcpgen._runtime.jsonrpc import dumps, dumps_model, result_envelope_bytes
    from mcpgen.v2026_07_28 import codec
    from mcpgen.v2026_07_28 import server as results

    server = ModernCodec(codec.REVISION, "server", server_info=server_info, ttl_ms=5, cache_scope="public")
    assert isinstance(server.revision, Revision)
    # the server's result classes (what handlers return): resultType, ttlMs, cacheScope defaulted
    result: Any = (
        results.ListToolsResult(tools=[]) if cacheable else results.CallToolResult(content=[text_content("é\n")])
    )
    method = "tools/list" if cacheable else "tools/call"
    from mcpgen._runtime.serializer import fields_of

    assert fields_of(result) is not None  # the fast path is taken, not the bytes path below
    spec = server._answered(method)
    assert spec is not None and spec.cacheable is cacheable
    members = server.result_members(spec, result)
    assert members is not None
    expected = result_envelope_bytes("r-1", dumps_model(result), dumps(members)[1:-1] if members else b"")
    assert server.dumps_result("r-1", method, result) == expected
    assert json.loads(expected)["result"] == json.loads(dumps(server.encode_result("r-1", method, result)))["result"]
