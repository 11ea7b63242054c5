"""``python examples/everything_server --port PORT`` (Streamable HTTP) or ``--stdio``."""

from __future__ import annotations

import argparse

from everything import Everything


def main() -> None:
    parser = argparse.ArgumentParser(prog="everything_server", description=__doc__)
    parser.add_argument("--port", type=int, default=3000, help="serve Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--stdio", action="store_true", help="serve stdio instead")
    args = parser.parse_args()
    server = Everything()
    if args.stdio:
        server.run_stdio()
    else:
        server.run_http("127.0.0.1", args.port)


if __name__ == "__main__":
    main()
