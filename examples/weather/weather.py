"""A weather MCP server: tools, a resource template and a prompt, written as typed functions."""

import hashlib
from typing import Annotated, Literal

from mcpgen.v2026_07_28.server import App, Context
from pydantic import BaseModel, Field

app = App("weather", version="1.0.0")


class Day(BaseModel):
    high: float
    low: float
    conditions: Literal["sunny", "cloudy", "rainy", "windy"]


class Forecast(BaseModel):
    city: str
    units: Literal["celsius"] = "celsius"
    days: list[Day]


def weather(city: str, day: int) -> Day:  # made up: the same for the same city and day
    high = 10 + hashlib.sha256(f"{city.lower()}/{day}".encode()).digest()[0] % 20
    return Day(high=high, low=high - 8, conditions=("sunny", "cloudy", "rainy", "windy")[high % 4])


@app.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool
async def get_forecast(city: str, days: Annotated[int, Field(ge=1, le=7)] = 3, *, ctx: Context) -> Forecast:
    """The forecast for a city, day by day."""
    await ctx.log("info", f"forecasting {days} days for {city}")  # reaches clients that asked for logs
    return Forecast(city=city, days=[weather(city, day) for day in range(days)])


@app.tool
def fail() -> str:
    """Always fails, to show how a tool error reaches the model."""
    raise RuntimeError("the weather service is unavailable")


@app.resource("weather://{city}/current", mime_type="text/plain")
def current(city: str) -> str:
    """Current conditions in a city."""
    return f"{city}: {weather(city, 0).conditions}, {weather(city, 0).high} degrees Celsius"


@app.prompt
def plan_trip(city: Annotated[str, Field(description="Where to go")]) -> str:
    """Plan a trip around the weather."""
    return f"Plan a three-day trip to {city}; call get_forecast first and put outdoor plans on the best day."
