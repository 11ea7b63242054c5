"""``python examples/weather`` serves MCP on stdio; ``--port N`` serves Streamable HTTP at 127.0.0.1:N/mcp."""

from __future__ import annotations

import argparse

from weather import app


def main() -> None:
    parser = argparse.ArgumentParser(prog="weather", description=__doc__)
    parser.add_argument("--port", type=int, help="serve Streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    args = parser.parse_args()
    if args.port is not None:
        app.run_http("127.0.0.1", args.port)
    else:
        app.run_stdio()


if __name__ == "__main__":
    main()
