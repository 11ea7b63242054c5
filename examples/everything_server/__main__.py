"""``python examples/everything_server --port PORT`` (Streamable HTTP) or ``--stdio``."""

from __future__ import annotations

import argparse

from everything import app


def main() -> None:
    parser = argparse.ArgumentParser(prog="everything_server", description=__doc__)
    parser.add_argument("--port", type=int, default=3000, help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--stdio", action="store_true", help="serve stdio instead")
    parser.add_argument("--redis", metavar="URL", help="share sessions, events and changes through Redis")
    parser.add_argument("--workers", type=int, default=1, help="HTTP worker processes (need --redis)")
    args = parser.parse_args()
    server = app.server  # the App's handler: runners and options (redis_url) are the server's
    if args.redis:
        server.redis_url = args.redis
    if args.stdio:
        server.run_stdio()
    else:
        server.run_http("127.0.0.1", args.port, workers=args.workers)


if __name__ == "__main__":
    main()
