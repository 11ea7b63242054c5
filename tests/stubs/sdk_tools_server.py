"""An official-SDK server (``mcp`` 2.3.0, ``MCPServer``) whose tools use structured output.

Run as ``python sdk_tools_server.py http PORT`` (Streamable HTTP, dual-era) or
``python sdk_tools_server.py stdio``. The typed-client tests generate a client package from
it and call every tool: models, lists and scalars as output (MCPServer wraps the last two in
``{"result": ...}``), nested model and ``Literal`` arguments (``$defs``/``$ref``), defaults,
a recursive output model, non-identifier, colliding and hostile tool names, a tool without output schema, one that
fails, one that reports progress, one that elicits (MRTR on 2026-07-28, a real request on
legacy sessions), a resource template and a prompt.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from pydantic import BaseModel, Field

server = MCPServer("stub-tools", version="0.3.0", instructions="typed client test server")


class Day(BaseModel):
    day: int
    high: float
    conditions: Literal["sunny", "cloudy", "rain"]


class Forecast(BaseModel):
    city: str
    units: Literal["metric", "imperial"]
    days: list[Day]
    note: str | None = None


class Trip(BaseModel):
    city: str = Field(description="Where to")
    nights: int = Field(ge=1, le=30)
    travellers: list[str] = []


class Booking(BaseModel):
    reference: str
    trip: Trip
    total: float


class Node(BaseModel):
    name: str
    children: list[Node] = []


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def get_forecast(
    city: Annotated[str, Field(description="City name")],
    days: Annotated[int, Field(description="How many days", ge=1, le=7)] = 3,
    units: Literal["metric", "imperial"] = "metric",
) -> Forecast:
    """A forecast for a city."""
    return Forecast(
        city=city,
        units=units,
        days=[Day(day=i + 1, high=20.5 + i, conditions="sunny" if i % 2 == 0 else "rain") for i in range(days)],
    )


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def list_cities(prefix: str | None = None) -> list[str]:
    """Cities we know, optionally by prefix."""
    return [c for c in ("Paris", "Lyon", "Lille", "Porto") if prefix is None or c.startswith(prefix)]


@server.tool()
def book(trip: Trip, insurance: bool = False) -> Booking:
    """Book a trip (a nested model argument)."""
    total = 100.0 * trip.nights * max(1, len(trip.travellers)) + (25.0 if insurance else 0.0)
    return Booking(reference=f"BK-{trip.city}-{trip.nights}", trip=trip, total=total)


@server.tool()
def tree(depth: int = 2) -> Node:
    """A recursive structure."""

    def build(level: int) -> Node:
        return Node(name=f"level-{level}", children=[build(level + 1)] if level < depth else [])

    return build(0)


@server.tool(name="ns.echo")
def ns_echo(text: str) -> str:
    """A tool whose name is not an identifier."""
    return text


@server.tool(name="class")
def klass(of: str = "x") -> str:
    """A tool named like a keyword."""
    return f"class {of}"


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """Unstructured: only text content."""
    return text.upper()


@server.tool()
def fail(reason: str = "this tool always fails") -> str:
    """Always fails."""
    raise ValueError(reason)


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Report progress, then finish."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    return "done"


@server.tool()
def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    """Elicit a name, then greet it."""
    return f"Hello, {name.name}!"


# Names that are not identifiers, two that map to one identifier, and hostile ones: each tool
# answers with its own wire name, so a test sees which tool a typed method reached.
ODD_NAMES = ("get-weather", "get_weather", "\u5929\u6c17", 'say"""hi\\', "x'); import os; os.system('echo pwned') #")


def _answer_with(wire: str) -> None:
    def tool() -> str:
        return wire

    server.tool(name=wire, description=f"Answers {wire!r}")(tool)


for _wire in ODD_NAMES:
    _answer_with(_wire)


@server.resource("weather://{city}/current", name="current_weather", mime_type="text/plain")
def current_weather(city: str) -> str:
    """Current weather for a city."""
    return f"{city}: 21 C, sunny"


@server.prompt()
def plan_trip(city: str, days: str = "3") -> str:
    """Plan a trip."""
    return f"Plan {days} days in {city}."


if __name__ == "__main__":
    if sys.argv[1] == "stdio":
        server.run()
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
