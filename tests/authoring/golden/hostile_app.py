"""An app whose names, descriptions and URIs are hostile to code generation: its surface must stay data."""

from typing import Annotated, Literal

from mcpgen.v2026_07_28.server import App
from pydantic import BaseModel, Field

app = App("hostile")

NASTY = (
    "a \"\"\"triple\"\"\" and '''single''' quote, a \\ backslash, {{ jinja }} {% raw %}, \n a newline,\t天気, \x00\x7f"
)


class Result(BaseModel):
    """Output model; its field descriptions are hostile too."""

    value: Annotated[str, Field(description=NASTY)]
    kind: Literal['a"b', "c'd", "e\\f"] = 'a"b'


@app.tool(name="we\"ird'\n name", description=NASTY, annotations={"title": NASTY, "readOnlyHint": True})
def weird(text: Annotated[str, Field(description='"""; import os; os.system("touch PWNED"); """')] = '"""') -> Result:
    return Result(value=text)


@app.tool
def plain(x: int) -> int:
    """'''"""
    return x


@app.resource('note://{id}/"quoted"', name='n"ote', description=NASTY, mime_type="text/plain")
def note(id: str) -> str:
    return id


@app.prompt(name="p'rompt\\", description=NASTY)
def prompt(arg: Annotated[str, Field(description="}}{{")]) -> str:
    return arg
