"""A short, seeded pass of the transport fuzzer in the default run (a few seconds); the long run is
``python -m tests.fuzz.fuzz_transports`` (see tests/fuzz/README.md)."""

from __future__ import annotations

from tests.fuzz.fuzz_transports import run


def test_seeded_http_and_stdio_pass_finds_nothing() -> None:
    figures = run(20261130, http_rounds=300, stdio_episodes=2, lines=150)
    assert figures.findings == [], figures.findings[:3]
    assert figures.tried >= 300 and figures.stdio_lines == 300
    # it reaches the handlers and every kind of refusal, not just the first check
    assert {200, 400, 404}.issubset(figures.statuses) and len(figures.statuses) >= 6, figures.summary()
    assert figures.stdio_replies > 100, figures.summary()
    for transport, before, after in figures.rss_kib:
        assert after - before < 32 * 1024, (transport, before, after)
