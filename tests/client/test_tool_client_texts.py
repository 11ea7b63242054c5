"""What a typed client's exceptions say is bounded, whatever the server sent (found by a review:
a 7 MiB error text went whole into ``ToolError``; 450 KB of bad items made an 11 MB
``ToolOutputError`` message, every pydantic error listed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mcpgen._runtime.client.tool_client import ToolError, _first_problem
from pydantic import BaseModel, ValidationError


def test_a_tool_errors_text_is_kept_to_16_kib_and_its_content_whole() -> None:
    text = "why " * (7 << 18)
    result = SimpleNamespace(content=[SimpleNamespace(type="text", text=text)])
    error = ToolError("t", result)
    assert len(str(error)) < 17 * 1024 and str(error).startswith("tool 't' failed: why why")
    assert error.content[0].text == text


def test_an_output_mismatch_names_its_first_error_and_counts_the_rest() -> None:
    class Out(BaseModel):
        items: list[int]

    with pytest.raises(ValidationError) as raised:
        Out.model_validate({"items": ["x"] * 50_000})
    said = _first_problem(raised.value)
    assert said == "items.0: Input should be a valid integer, unable to parse string as an integer (and 49999 more)"
