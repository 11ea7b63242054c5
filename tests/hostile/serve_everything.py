"""``python serve_everything.py (--stdio | --port PORT) [--limits JSON]``: the everything server with other limits.

The hostile-input tests run ``examples/everything_server`` through this script so that a test
can shrink a limit (``Limits`` fields as a JSON object) instead of sending gigabytes.
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import signal

from everything import app


def main() -> None:
    parser = argparse.ArgumentParser(prog="serve_everything", description=__doc__)
    parser.add_argument("--port", type=int)
    parser.add_argument("--stdio", action="store_true")
    parser.add_argument("--limits", default="{}")
    args = parser.parse_args()
    faulthandler.register(signal.SIGUSR1)  # a stuck server's stacks on stderr, for the fuzzer's reports
    limits = json.loads(args.limits)
    server = app.server  # the App's handler (the everything server is written on the authoring layer)
    if limits:
        from mcpgen._runtime.server import Limits

        server.limits = Limits(**limits)
    if args.stdio:
        server.run_stdio()
    else:
        server.run_http("127.0.0.1", args.port)


if __name__ == "__main__":
    main()
