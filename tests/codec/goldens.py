"""Codec test plugin (loaded from tests/conftest.py): ``--update-goldens`` rewrites the conversation files."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite tests/codec/conversations/*/*.txt from what the codec re-encodes",
    )
