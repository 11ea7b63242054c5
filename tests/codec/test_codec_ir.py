"""The IR facts the codecs read, derived from each schema (no version named in the analyzer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_schema_codegen.frontend.lock import Lock
from mcp_schema_codegen.ir.analyze import analyze_revision, overlay_for
from mcp_schema_codegen.ir.protocol import Protocol
from tests.conftest import SCHEMA_DIR, VERSIONS


def protocol(lock: Lock, version: str) -> Protocol:
    return analyze_revision(lock, version, overlay_for(Path(SCHEMA_DIR))).protocol


@pytest.mark.parametrize("version", VERSIONS)
def test_typed_errors_come_from_error_responses_with_a_const_code(lock: Lock, version: str) -> None:
    expected = {
        "2025-11-25": {-32042: "URLElicitationRequiredErrorError"},
        "2026-07-28": {
            -32020: "HeaderMismatchErrorError",
            -32021: "MissingRequiredClientCapabilityErrorError",
            -32022: "UnsupportedProtocolVersionErrorError",
        },
    }.get(version, {})
    p = protocol(lock, version)
    assert {e.code: e.error_type for e in p.typed_errors} == expected
    assert all(e.error_type in p.definitions and e.envelope in p.definitions for e in p.typed_errors)


@pytest.mark.parametrize("version", VERSIONS)
def test_input_required_only_where_methods_may_answer_it(lock: Lock, version: str) -> None:
    p = protocol(lock, version)
    assert (p.input_required == "InputRequiredResult") is (p.era == "modern")
    assert (p.input_required is not None) is any(m.mrtr for m in p.methods)
