"""A short, bounded fuzzing pass in the default run; the long run is `python -m tests.fuzz.fuzz_codec`."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz.fuzz_codec import Figures, Target, mutant, run, seeds, valid_reply

TARGET = Target()
CORPUS = seeds()


def test_seeded_pass_finds_nothing() -> None:
    figures = run(rounds=400, seconds=None, seed=20261130)
    assert figures.tried == 400 * 10
    assert figures.uncaught == [], figures.uncaught[:3]
    assert figures.bad_replies == [], figures.bad_replies[:3]
    assert figures.decoded > 0 and len(figures.refused) >= 4, figures.summary()  # it reaches deep and shallow paths


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(st.randoms(use_true_random=False), st.binary(max_size=300))
def test_hypothesis_mutants_and_raw_bytes(rng: object, raw: bytes) -> None:
    figures = Figures()
    TARGET.feed(mutant(rng, CORPUS), figures)  # type: ignore[arg-type]
    TARGET.feed(raw, figures)
    assert figures.uncaught == [] and figures.bad_replies == [], figures.uncaught + figures.bad_replies


def test_reply_checker_is_strict() -> None:
    assert valid_reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    assert valid_reply({"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}})
    assert not valid_reply({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}, "result": {}})
    assert not valid_reply({"jsonrpc": "2.0", "id": 1.5, "error": {"code": -32700, "message": "x"}})
    assert not valid_reply({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "x"}})
    assert not valid_reply({"jsonrpc": "2.0", "id": 1, "result": {}})
