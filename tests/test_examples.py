"""Every official 2026-07-28 example validates with the model of its type and dumps back exactly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from tests.conftest import EXAMPLES

EXAMPLE_FILES = sorted(EXAMPLES.glob("*/*.json"))


def test_all_129_examples_are_collected() -> None:
    assert len(EXAMPLE_FILES) == 129


def _round_trip(type_: Any, raw: bytes) -> tuple[object, Any]:
    if isinstance(type_, type) and issubclass(type_, BaseModel):
        value: object = type_.model_validate_json(raw)
        assert isinstance(value, BaseModel)
        return value, json.loads(value.model_dump_json())
    adapter: TypeAdapter[Any] = TypeAdapter(type_)
    value = adapter.validate_json(raw)
    return value, json.loads(adapter.dump_json(value, by_alias=True))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_example_round_trips(path: Path) -> None:
    from mcpgen.v2026_07_28 import models

    type_ = getattr(models, path.parent.name)
    raw = path.read_bytes()
    _, dumped = _round_trip(type_, raw)
    assert dumped == json.loads(raw)
    assert json.dumps(dumped, sort_keys=True) == json.dumps(json.loads(raw), sort_keys=True)  # 1 stays 1, not 1.0
