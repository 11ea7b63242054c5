"""A server built on the official Python SDK (``mcp`` 2.3.0, ``MCPServer``), dual-era.

Run as ``python sdk_server.py stdio`` or ``python sdk_server.py http PORT``. It offers what
the interop tests exercise: tools (``add``, ``echo``, a slow one with progress, one that
elicits through MRTR or a real request, one that adds a tool and announces it), a resource,
a prompt and completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp_types import Completion, PromptReference
from pydantic import BaseModel

server = MCPServer("sdk-interop", version="1.2.3", instructions="interop test server")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress, then finish."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return "done"


@server.tool()
async def hang() -> str:
    """Never answers (for timeouts and cancellation)."""
    await asyncio.sleep(3600)
    return "unreachable"


@server.tool()
def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Elicit a name, then greet it."""
    return f"Hello, {name.name}!"


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new tool and announce the change."""
    server.add_tool(lambda: name, name=name, description="added at run time")
    await ctx.notify_tools_changed()
    with contextlib.suppress(Exception):
        await ctx.session.send_tool_list_changed()
    return "added"


@server.resource("test://greeting")
def greeting() -> str:
    """A static text resource."""
    return "hello from a resource"


@server.prompt()
def review(code: str) -> str:
    """Review some code."""
    return f"Please review:\n{code}"


@server.completion()
async def complete(ref: object, argument: object, context: object) -> Completion | None:
    if isinstance(ref, PromptReference) and getattr(argument, "name", None) == "code":
        prefix = getattr(argument, "value", "")
        return Completion(values=[v for v in ("print(1)", "pass", "print(2)") if v.startswith(prefix)])
    return None


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
