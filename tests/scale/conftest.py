"""Fixtures of the scale-out tests: a private Redis per module."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.scale.redis_server import RedisServer, start_redis


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    server, directory = start_redis()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
