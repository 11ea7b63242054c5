"""Apps the authoring tests serve in-process, and a driver for them (modern requests over in-process stdio)."""

import asyncio
import enum
import threading
from typing import Annotated, Any, Literal, Optional

from mcpgen.v2026_07_28 import models as m
from mcpgen.v2026_07_28.server import App, Context, ResourceNotFound, ToolError
from pydantic import BaseModel, Field

from tests.server.servers import Stdio, request


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(BaseModel):
    x: int
    y: int


class Shape(BaseModel):
    name: str
    points: list[Point]
    color: Color = Color.RED


class Tree(BaseModel):
    """A recursive model: its schema refers to itself."""

    value: int
    children: list["Tree"] = []


class Forecast(BaseModel):
    city: str
    highs: list[float]
    units: Literal["celsius", "fahrenheit"] = "celsius"


CALLS: list[str] = []
LOOP_THREADS: set[int] = set()


def make_app(**options: Any) -> App:
    """A fresh app with a tool of every shape (surface: none, so entries are built at start)."""
    app = App("tested", version="2.0.0", surface="tests.authoring.no_such_surface", **options)

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        CALLS.append("add")
        return a + b

    @app.tool
    def describe(
        shape: Shape,
        scale: Annotated[float, Field(gt=0, description="How much bigger")] = 1.0,
        label: Optional[str] = None,  # noqa: UP045 (an Optional spelled the old way on purpose)
        mode: Literal["fast", "exact"] = "fast",
    ) -> str:
        """Describe a shape."""
        CALLS.append("describe")
        return f"{shape.name} x{scale} {shape.color.value} {mode} {label}"

    @app.tool
    async def forecast(city: str, ctx: Context) -> Forecast:
        """A structured result."""
        await ctx.report_progress(1, 1)
        return Forecast(city=city, highs=[20.5, 21])

    @app.tool
    def broken_forecast(city: str) -> Forecast:
        """Returns something that is not a Forecast."""
        return {"city": city, "highs": "warm"}  # type: ignore[return-value]

    @app.tool
    def grow(tree: Tree) -> Tree:
        """Recursive models in and out."""
        return Tree(value=tree.value + 1, children=[tree])

    @app.tool
    def fail() -> str:
        """Raises."""
        raise RuntimeError("the secret database password is hunter2")

    @app.tool
    def refuse() -> str:
        """Raises a ToolError, shown even when messages are masked."""
        raise ToolError("you may not do that")

    @app.tool
    def picture() -> m.ImageContent:
        """Returns a content block."""
        return m.ImageContent(type="image", data="AAAA", mime_type="image/png")

    @app.tool
    def where() -> str:
        """Reports the thread it runs on."""
        return "loop" if threading.get_ident() in LOOP_THREADS else "worker"

    @app.tool(name="get-data", title="Get data", annotations={"readOnlyHint": True}, structured=False)
    def get_data() -> dict[str, int]:
        """Unstructured on request: JSON as text only."""
        return {"n": 1}

    @app.resource("memo://static", mime_type="text/markdown", description="A static memo")
    def memo() -> str:
        return "# memo"

    @app.resource("files://{+path}")
    def file(path: str) -> bytes:
        if path.startswith("missing"):
            raise ResourceNotFound(path)
        return path.encode()

    @app.resource("points://{x}/{y}")
    def point(x: int, y: int) -> Point:
        return Point(x=x, y=y)

    @app.prompt
    def greet(name: Annotated[str, Field(description="Who")], times: int = 1) -> str:
        """A greeting."""
        return " ".join([f"Hello {name}"] * times)

    @app.prompt
    def chat(topic: str) -> list[Any]:
        """Several messages."""
        return [f"Tell me about {topic}", {"role": "assistant", "content": {"type": "text", "text": "Sure."}}]

    return app


class Driver:
    """Modern requests to an app over in-process stdio."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.io = Stdio(app.server)
        self.next = 0

    async def __aenter__(self) -> "Driver":
        await self.io.__aenter__()
        LOOP_THREADS.add(threading.get_ident())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.io.__aexit__(*exc)

    async def send(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
        self.next += 1
        self.io.send(request(self.next, method, params, **meta))
        return await self.io.response(self.next)

    async def result(self, method: str, params: dict[str, Any] | None = None, **meta: Any) -> Any:
        reply = await self.send(method, params, **meta)
        assert "result" in reply, reply
        return reply["result"]

    async def call(self, name: str, arguments: dict[str, Any] | None = None, **meta: Any) -> Any:
        return await self.result("tools/call", {"name": name, "arguments": arguments or {}}, **meta)


def run(coro: Any) -> Any:
    return asyncio.run(coro)
