"""``python nap_server.py``: the everything server over stdio, with one tool more.

``nap`` sleeps the given number of seconds before it answers, so a test can keep a request in
flight past the stdio transport's shutdown grace period.
"""

from __future__ import annotations

import asyncio

from everything import app


@app.tool
async def nap(seconds: float) -> str:
    """Sleeps, then answers"""
    await asyncio.sleep(seconds)
    return f"slept {seconds:g} s"


if __name__ == "__main__":
    app.server.run_stdio()
