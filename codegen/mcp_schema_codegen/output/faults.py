"""Fault injection for the atomicity tests: die at a named point of a generation run.

``MCP_CODEGEN_CRASH_AT=<point>`` makes the process SIGKILL itself when it reaches that
point, as a user's Ctrl-C, an OOM kill or a power cut would; nothing is cleaned up.
``MCP_CODEGEN_NO_EXCHANGE=1`` disables the atomic directory exchange, to test the
two-rename fallback used where the OS has no ``renameat2``.
"""

from __future__ import annotations

import os
import signal

CRASH_AT = "MCP_CODEGEN_CRASH_AT"
NO_EXCHANGE = "MCP_CODEGEN_NO_EXCHANGE"
POINTS = ("models", "staged", "formatted", "manifest", "exchange", "mid-swap")


def crash_point(name: str) -> None:
    if os.environ.get(CRASH_AT) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def exchange_disabled() -> bool:
    return os.environ.get(NO_EXCHANGE) == "1"
