"""Authors' files are fully typed: ``mypy --strict`` passes on them, decorators keep each function's
signature, and the ``Context`` methods return typed answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

AUTHOR = '''
from typing import Annotated

from mcpgen.v2026_07_28.server import App, Context, ToolError
from pydantic import BaseModel, Field

app = App("typed", instructions="typed", mask_errors=True)


class Name(BaseModel):
    name: str


@app.tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@app.tool(name="ask", title="Ask", annotations={"readOnlyHint": True})
async def ask(question: Annotated[str, Field(description="What to ask")], ctx: Context) -> str:
    answer = await ctx.elicit(question, Name)
    reveal_type(answer.data)
    sampled = await ctx.sample("hi", max_tokens=5, key="s")
    roots = await ctx.list_roots()
    reveal_type(sampled.text)
    reveal_type(roots[0].uri)
    await ctx.report_progress(1, 2)
    await ctx.log("info", "asked")
    if answer.data is None:
        raise ToolError("declined")
    return answer.data.name


@app.resource("notes://{id}")
def note(id: str) -> str:
    return id


@app.prompt
def greet(name: str) -> str:
    return f"hi {name}"


reveal_type(add)
total: int = add(1, 2)
add("x", 1)
'''


def test_mypy_strict_on_an_authors_file(tmp_path: Path, mypy_cache: list[str]) -> None:
    (tmp_path / "author.py").write_text(AUTHOR)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *mypy_cache, "author.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    lines = done.stdout.splitlines()
    errors = [line for line in lines if ": error:" in line]
    notes = [line.split("note: ", 1)[1] for line in lines if "note: Revealed type" in line]
    assert notes == [
        'Revealed type is "author.Name | None"',
        'Revealed type is "str"',
        'Revealed type is "str"',
        'Revealed type is "def (a: int, b: int) -> int"',
    ], done.stdout
    # the one error is the misuse: the decorated function kept its signature
    assert len(errors) == 1 and 'Argument 1 to "add" has incompatible type "str"; expected "int"' in errors[0], (
        done.stdout
    )


def test_mypy_strict_on_the_examples(mypy_cache: list[str]) -> None:
    files = ["examples/weather/weather.py", "examples/everything_server/everything.py"]
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", *mypy_cache, *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"MYPYPATH": f"{ROOT / 'examples' / 'everything_server'}", "PATH": ""},
    )
    assert done.returncode == 0, done.stdout[-3000:]
