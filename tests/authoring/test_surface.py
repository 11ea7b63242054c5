"""The generated surface module: golden output, the ``check`` gate with its classification, and what the
server does at start with a current, stale or missing one."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_schema_codegen.commands.app_surface import check_surface, describe_app, read_lists, render, write_surface
from mcp_schema_codegen.commands.cli import main
from tests.conftest import ROOT

GOLDEN = Path(__file__).parent / "golden"
WEATHER = ROOT / "examples" / "weather"
EVERYTHING = ROOT / "examples" / "everything_server"


def test_golden_surface_of_a_hostile_app(request: pytest.FixtureRequest) -> None:
    """Quotes, triple quotes, backslashes, newlines, template syntax, control and non-ASCII characters in
    names, descriptions and URIs: the module is what the generator writes, byte for byte, and pure data."""
    if request.config.getoption("--update-goldens"):
        write_surface(GOLDEN, "hostile_app:app", force=True)
    described = describe_app(GOLDEN, "hostile_app:app")
    expected = (GOLDEN / "hostile_app_surface.py").read_text(encoding="utf-8")
    assert render(described, "hostile_app:app") == expected, "run pytest with --update-goldens and commit"
    tree = ast.parse(expected)
    for node in tree.body[1:]:  # after the docstring: an import and assignments of literals, nothing else
        assert isinstance(node, ast.ImportFrom | ast.AnnAssign), ast.dump(node)
        if isinstance(node, ast.AnnAssign):
            assert node.value is not None
            ast.literal_eval(node.value)
    lists = read_lists(expected)
    assert lists["tools"] == described["tools"] and lists["prompts"] == described["prompts"]
    assert lists["resourceTemplates"] == described["resourceTemplates"]
    weird = lists["tools"][0]
    assert weird["name"] == "we\"ird'\n name"
    assert weird["inputSchema"]["properties"]["text"]["description"] == '"""; import os; os.system("touch PWNED"); """'
    assert not (GOLDEN / "PWNED").exists()


@pytest.mark.parametrize("example", [WEATHER, EVERYTHING], ids=["weather", "everything_server"])
def test_the_examples_surfaces_are_what_the_generator_writes(example: Path) -> None:
    config = (example / "pyproject.toml").read_text()
    spec = config.split('app = "')[1].split('"')[0]
    report = check_surface(example, spec)
    assert report.clean, (report.reasons, [str(c) for c in report.changes])


@pytest.fixture
def weather(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/weather to edit, as the current directory."""
    copy = tmp_path / "weather"
    shutil.copytree(WEATHER, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_editing_a_signature_without_regenerating_fails_check_with_the_classified_change(
    weather: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check"]) == 0
    edit(weather / "weather.py", "def add(a: int, b: int) -> int:", "def add(a: int, b: int, c: int) -> int:")
    edit(weather / "weather.py", '    units: Literal["celsius"] = "celsius"\n', "")
    edit(
        weather / "weather.py",
        "days: Annotated[int, Field(ge=1, le=7)] = 3,",
        "days: Annotated[int, Field(ge=1, le=7)] = 3, hourly: bool = False,",
    )
    capsys.readouterr()
    assert main(["check"]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert "breaking: tool 'add': new required argument 'c'" in lines
    assert any(line.startswith("breaking: tool 'get_forecast': output") and "'units'" in line for line in lines), out
    assert any(line.startswith("compatible: tool 'get_forecast'") and "'hourly'" in line for line in lines), out
    assert "the surface of weather:app changed (2 breaking, 1 compatible)" in err
    # from elsewhere (a monorepo's root, a CI step): --project, and the fix names it too; --out
    # and --package checked a tree and skipped the surface, and from inside the project check
    # said to generate one (a fresh-user review)
    inside = weather / "pkg"
    inside.mkdir()
    for where, args in ((weather.parent, ["--project", "weather"]), (inside, ["--project", ".."])):
        os.chdir(where)
        assert main(["check", *args]) == 1
        again, err = capsys.readouterr()
        assert again == out and f"run `mcp-codegen regen --project {args[1]}` to update" in err, err
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert f"{inside} is inside the project {weather}, not at its root" in err and "--project" in err, err
    assert main(["check", "--project", "..", "--out", "x"]) == 2
    assert "--project reads out and package from the project" in capsys.readouterr().err
    assert main(["check", "--project", str(inside)]) == 2
    assert f"{inside} has no pyproject.toml (run `mcp-codegen check` in" in capsys.readouterr().err
    os.chdir(weather)
    assert main(["regen"]) == 0
    assert "breaking: tool 'add': new required argument 'c'" in capsys.readouterr().out
    assert main(["check"]) == 0


def serve(example: Path, *requests: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    import json

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": i, **r, "params": {**r.get("params", {}), "_meta": meta}}) + "\n"
        for i, r in enumerate(requests, 1)
    )
    done = subprocess.run(
        [sys.executable, str(example)], input=lines, capture_output=True, text=True, timeout=60, check=True
    )
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def test_a_stale_surface_is_reported_at_start_and_the_server_stays_truthful(weather: Path) -> None:
    edit(weather / "weather.py", "def add(a: int, b: int) -> int:", "def add(a: int, b: int, c: int = 0) -> int:")
    replies, err = serve(
        weather,
        {"method": "tools/list"},
        {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2, "c": 3}}},
    )
    assert "weather_surface is stale ('tool add' changed)" in err and "mcp-codegen regen" in err
    add = next(t for t in replies[0]["result"]["tools"] if t["name"] == "add")
    assert "c" in add["inputSchema"]["properties"]  # built from the declaration, not the stale entry
    assert replies[1]["result"]["structuredContent"] == {"result": 3}  # "c" validated and accepted
    (weather / "weather_surface.py").unlink()
    _, err = serve(weather, {"method": "tools/list"})
    assert "no generated surface module 'weather_surface'" in err


def test_a_current_surface_is_served_without_building_any_schema() -> None:
    """At start the app compares fingerprints only; building an entry would raise here."""
    probe = f"""
import sys
sys.path.insert(0, {str(WEATHER)!r})
from mcpgen._runtime.server.authoring import declarations
def boom(self, types):
    raise AssertionError("built " + self.key)
for cls in (declarations.Tool, declarations.Prompt, declarations.Resource):
    cls.entry = boom
import weather
weather.app.freeze()
print(weather.app.stale, [t["name"] for t in weather.app.listing("tools")])
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[] ['add', 'get_forecast', 'fail']"
    assert done.stderr == ""


def test_regen_refuses_a_hand_edited_surface_and_check_reports_it(
    weather: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    surface = weather / "weather_surface.py"
    surface.write_text(surface.read_text().replace("Add two integers.", "Add two numbers."))
    assert main(["check"]) == 1
    assert "weather_surface.py: edited by hand" in capsys.readouterr().err
    assert main(["regen"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "edited by hand" in err and "--force" in err
    assert main(["regen", "--force"]) == 0 and main(["check"]) == 0
    # a hand edit that changes nothing the server answers with: no "changed (0 breaking, 0 compatible)"
    surface.write_text(surface.read_text() + "# a note\n")
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert "the surface module of weather:app is not as generated; run `mcp-codegen regen --force`" in err, err
    assert "changed" not in err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("weather", "is not MODULE:ATTRIBUTE"),
        ("nowhere:app", "No module named 'nowhere'"),
        ("weather:nothing", "is not an App"),
    ],
)
def test_a_bad_app_is_a_one_line_error(
    weather: Path, spec: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(weather / "pyproject.toml", 'app = "weather:app"', f'app = "{spec}"')
    assert main(["regen"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_failed_describer_is_named_by_its_whole_exception_not_its_last_line() -> None:
    """A review's ``typing.TypedDict`` return on 3.11: regen said only "For further information
    visit https://errors.pydantic.dev/...", the last line, and not which declaration or why."""
    from mcp_schema_codegen.commands.app_surface import what_failed

    stderr = """Traceback (most recent call last):
  File "<string>", line 9, in <module>
    raise DeclarationError(...) from exc
mcpgen._runtime.server.authoring.signatures.DeclarationError: rg.server.stats: its return type has no JSON Schema: \
Please use `typing_extensions.TypedDict` instead of `typing.TypedDict` on Python < 3.12.

For further information visit https://errors.pydantic.dev/2.14/u/typed-dict-version
"""
    assert what_failed(stderr) == (
        "DeclarationError: rg.server.stats: its return type has no JSON Schema: Please use "
        "`typing_extensions.TypedDict` instead of `typing.TypedDict` on Python < 3.12. "
        "For further information visit https://errors.pydantic.dev/2.14/u/typed-dict-version"
    )
    assert what_failed("weather:nothing is not an App\n") == "weather:nothing is not an App"
    assert what_failed("") == ""


def test_the_surface_module_imports_as_the_runtime_reads_it() -> None:
    sys.path.insert(0, str(WEATHER))
    try:
        module = importlib.import_module("weather_surface")
        from mcpgen._runtime.server.authoring.surface import Surface

        surface = Surface.read(module)
        assert sorted(surface.declarations) == sorted(
            [
                "tool add",
                "tool get_forecast",
                "tool fail",
                "resource template weather://{city}/current",
                "prompt plan_trip",
            ]
        )
        assert surface.entries["tool add"]["inputSchema"]["required"] == ["a", "b"]
    finally:
        sys.path.remove(str(WEATHER))
        sys.modules.pop("weather_surface", None)


def test_a_fingerprint_changes_with_the_types_reached_and_a_wrapped_functions_signature() -> None:
    """Found by an authoring review: the fingerprint read the function's own signature text only,
    so a model field changed (``Day.high: float`` to ``str``) left a current-looking surface whose
    outputSchema no longer matched the results, and a decorated tool (``functools.wraps``) showed
    its wrapper's ``*args, **kwargs``, so a changed default went unseen."""
    import functools

    from mcpgen._runtime.server.authoring.declarations import Tool
    from pydantic import create_model

    def returning(field: type) -> Any:
        day = create_model("Day", high=(field, ...))

        def forecast() -> Any:
            return day(high=1)

        forecast.__annotations__ = {"return": list[day]}  # reached inside a list, as annotated
        return forecast

    assert Tool("t", returning(float)).fingerprint() != Tool("t", returning(str)).fingerprint()
    assert Tool("t", returning(float)).fingerprint() == Tool("t", returning(float)).fingerprint()

    def wrapped(default: int) -> Any:
        def count(n: int = default) -> int:
            return n

        @functools.wraps(count)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return count(*args, **kwargs)

        return wrapper

    assert Tool("t", wrapped(3)).fingerprint() != Tool("t", wrapped(5)).fingerprint()


def test_a_fingerprint_follows_what_string_annotations_stand_for() -> None:
    """Found by a typed-tools review: with ``from __future__ import annotations`` (the scaffold's
    server module has it) the annotations are text, and ``Annotated[int, Field(le=MAX)]`` or a
    ``Literal`` alias read the same whatever ``MAX`` or the alias held, so a server kept serving
    the generated ``maximum: 10`` while it validated against 20, and said nothing."""
    from mcpgen._runtime.server.authoring.declarations import Tool

    def declared(limit: int, modes: tuple[str, ...]) -> Any:
        namespace: dict[str, Any] = {}
        source = (
            "from __future__ import annotations\n"
            "from typing import Annotated, Literal\n"
            "from pydantic import Field\n"
            f"MAX = {limit}\n"
            f"Mode = Literal{list(modes)!r}\n"
            "def bounded(n: Annotated[int, Field(le=MAX, default_factory=lambda: 0)], mode: Mode) -> int:\n"
            "    return n\n"
        )
        exec(compile(source, "tools_module", "exec"), namespace)
        return namespace["bounded"]

    ten = Tool("bounded", declared(10, ("a", "b"))).fingerprint()
    assert Tool("bounded", declared(20, ("a", "b"))).fingerprint() != ten
    assert Tool("bounded", declared(10, ("a", "b", "c"))).fingerprint() != ten
    assert Tool("bounded", declared(10, ("a", "b"))).fingerprint() == ten  # a lambda's address is no change


def test_stable_text_of_odd_values_is_bounded_and_tells_them_apart() -> None:
    """Found by a review of format 4: a default holding itself three times over was written with
    3 to the 20th parts (two ways: 3.7 MB in 0.5 s); an object answering every attribute was
    taken for a type alias (``Settings(level=1)`` and ``level=2`` read the same), one raising
    from ``__getattr__`` or ``__repr__`` made the declaration fail."""
    from mcpgen._runtime.server.authoring.declarations import stable

    loop: list[Any] = []
    loop.extend([loop] * 3)
    assert stable(loop) == "[..., ..., ...]"
    shared = [1, 2]
    assert stable([shared] * 3) == "[[1, 2], [1, 2], [1, 2]]"

    class Settings:
        def __init__(self, level: int) -> None:
            self.level = level

        def __getattr__(self, name: str) -> Any:
            if name.startswith("__") and name != "__value__":
                raise AttributeError(name)
            return 42

        def __repr__(self) -> str:
            return f"Settings({self.level})"

    class Broken:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(name)

        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    assert stable(Settings(1)) != stable(Settings(2))
    assert stable(Broken()).endswith("Broken>")
    # and by the review of that fix: past a budget of values written, big defaults differing at
    # their end read the same; a value shared ten times over, eight levels deep, was 522 MB
    assert stable([(i,) for i in range(100_005)]) != stable([*((i,) for i in range(100_004)), (-1,)])
    shared: list[Any] = [0]
    for _ in range(8):
        shared = [shared] * 10
    assert len(stable(shared)) < 2048


def test_a_fingerprint_follows_the_source_of_the_apps_own_functions_an_annotation_holds(tmp_path: Path) -> None:
    """Found by a review of format 4: a function an annotation holds was written by its name, so
    a ``json_schema_extra`` (or a validator, a default factory) whose body changed the schema
    kept the fingerprint, and the server served the old schema without a word. The app's own
    functions are written with a digest of their source (not their bytecode, which differs
    between Python versions); installed code by its name."""
    from mcpgen._runtime.server.authoring.declarations import Tool

    def fingerprint(example: int, where: str) -> str:
        (tmp_path / where).mkdir()
        path = tmp_path / where / "ranked.py"  # one module, in another file each time
        path.write_text(
            "from typing import Annotated\n"
            "from pydantic import AfterValidator, Field\n"
            "def tidy(value: int) -> int:\n"
            "    return value\n"
            "def rank(n: Annotated[int, AfterValidator(tidy), "
            f"Field(json_schema_extra=lambda s: s.update(examples=[{example}]))]) -> int:\n"
            "    return n\n"
        )
        spec = importlib.util.spec_from_file_location("ranked", path)
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        return Tool("rank", loaded.rank).fingerprint()

    one = fingerprint(1, "one")
    assert fingerprint(1, "again") == one
    assert fingerprint(2, "edited") != one


def test_a_fingerprint_follows_a_model_reached_through_a_type_alias() -> None:
    """Noticed by the review of format 3: the types an annotation reaches were looked for in its
    arguments only, and a ``TypeAliasType`` has none (what it stands for is its ``__value__``): a
    field added to a model behind an alias changed no fingerprint, and the server served the old
    schema while it validated against the new model."""
    from mcpgen._runtime.server.authoring.declarations import Tool

    def declared(fields: str) -> Any:
        namespace: dict[str, Any] = {}
        source = (
            "from pydantic import BaseModel\n"
            "from typing_extensions import TypeAliasType\n"
            f"class Point(BaseModel):\n{fields}"
            "Where = TypeAliasType('Where', list[Point])\n"
            "def place(where: Where) -> int:\n"
            "    return 0\n"
        )
        exec(compile(source, "tools_module", "exec"), namespace)
        return namespace["place"]

    flat = Tool("place", declared("    x: int\n")).fingerprint()
    assert Tool("place", declared("    x: int\n")).fingerprint() == flat
    assert Tool("place", declared("    x: int\n    y: int = 0\n")).fingerprint() != flat


def test_a_fingerprint_is_the_same_in_every_process_and_follows_type_aliases(tmp_path: Path) -> None:
    """Found by a review of format 3: the resolved annotations' ``repr`` carried a set's order,
    which follows the hash seed, so a validator's set of allowed values gave another fingerprint
    in every process (the server rebuilt its schemas at each start, ``check`` failed at random);
    and a ``TypeAliasType``'s repr is its name, so its values changed unseen."""
    (tmp_path / "seeded_tools.py").write_text(
        "from __future__ import annotations\n"
        "import functools\n"
        "from typing import Annotated, Literal\n"
        "from pydantic import AfterValidator\n"
        "from typing_extensions import TypeAliasType\n"
        "def check(value: str, allowed: frozenset[str]) -> str:\n"
        "    return value\n"
        "ALLOWED = frozenset({'eu', 'us', 'ap', 'sa'})\n"
        "Region = Annotated[str, AfterValidator(functools.partial(check, allowed=ALLOWED))]\n"
        "Mode = TypeAliasType('Mode', Literal['a', 'b'])\n"
        "def pick(region: Region, mode: Mode) -> str:\n"
        "    return region\n"
    )
    # found by the next review: the signature's own text (annotations evaluated at definition,
    # without the future import; defaults) was still a repr, with a function's address in an
    # ``AfterValidator``, a set's order in a default, a model default's set in its repr
    (tmp_path / "eager_tools.py").write_text(
        "import functools\n"
        "from typing import Annotated\n"
        "from pydantic import AfterValidator, BaseModel\n"
        "def tidy(value: str) -> str:\n"
        "    return value.strip()\n"
        "def check(value: str, allowed: frozenset[str]) -> str:\n"
        "    return value\n"
        "class Inner(BaseModel):\n"
        "    tags: set[str] = set()\n"
        "def shout(text: Annotated[str, AfterValidator(tidy), AfterValidator(lambda s: s)]) -> str:\n"
        "    return text\n"
        "ALLOWED = functools.partial(check, allowed=frozenset({'eu', 'us', 'ap'}))\n"
        "def pick(region: Annotated[str, AfterValidator(ALLOWED)]) -> str:\n"
        "    return region\n"
        "def flags(chosen: frozenset[str] = frozenset({'a', 'b', 'c', 'd'})) -> str:\n"
        "    return ''\n"
        "def nested(inner: Inner = Inner(tags={'alpha', 'beta', 'gamma', 'delta'})) -> str:\n"
        "    return ''\n"
        # and the review of format 4's stable(): a value met at two depths of a set (which first
        # follows the hash seed), nodes of a set pointing at each other (their order: addresses)
        "import dataclasses\n"
        "DEEP = 0\n"
        "for _ in range(17):\n"
        "    DEEP = (DEEP,)\n"
        "TWO_DEPTHS = frozenset({('a', DEEP), ('b', ((((DEEP,),),),))})\n"
        "@dataclasses.dataclass(eq=False)\n"
        "class Node:\n"
        "    name: str\n"
        "    peer: 'Node | None' = None\n"
        "A, B = Node('a'), Node('b')\n"
        "A.peer, B.peer = B, A\n"
        "def graph(x: str = '', depths: frozenset = TWO_DEPTHS, ring: frozenset = frozenset({A, B})) -> str:\n"
        "    return x\n"
    )
    code = (
        "from mcpgen._runtime.server.authoring.declarations import Tool\n"
        "import eager_tools, seeded_tools\n"
        "print(Tool('pick', seeded_tools.pick).fingerprint())\n"
        "for name in ('shout', 'pick', 'flags', 'nested', 'graph'):\n"
        "    print(Tool(name, getattr(eager_tools, name)).fingerprint())\n"
    )
    prints = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'generated'}"}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        prints.add(done.stdout)
    assert len(prints) == 1, prints
    prints = {next(iter(prints)).splitlines()[0]}
    source = (tmp_path / "seeded_tools.py").read_text()
    (tmp_path / "seeded_tools.py").write_text(source.replace("Literal['a', 'b']", "Literal['a', 'b', 'c']"))
    env = {**os.environ, "PYTHONHASHSEED": "1", "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT / 'generated'}"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() not in prints  # the alias stands for another Literal now


def fingerprint_of(source: str) -> str:
    """The fingerprint of ``lookup`` declared by ``source``, run as the module ``variants``."""
    from mcpgen._runtime.server.authoring.declarations import Tool

    namespace: dict[str, Any] = {"__name__": "variants"}
    exec(compile(source, "variants", "exec", dont_inherit=True), namespace)
    return Tool("lookup", namespace["lookup"]).fingerprint()


def model_source(field: str, doc: str = "") -> str:
    return (
        "import dataclasses\n"
        "from pydantic import BaseModel, Field\n"
        f"class Query(BaseModel):\n    {doc}\n    kind: str = Field({field})\n"
        "def lookup(query: Query) -> str:\n"
        "    return query.kind\n"
    )


BASE_FIELD = '"a", validation_alias="k"'


@pytest.mark.parametrize(
    ("field", "doc"),
    [
        ('"a", validation_alias="kind_of"', ""),
        ('"a", validation_alias="k", serialization_alias="s"', ""),
        ('"a", validation_alias="k", examples=["b"]', ""),
        ('"a", validation_alias="k", json_schema_extra={"x-kind": 1}', ""),
        ('"a", validation_alias="k", title="Kind"', ""),
        ('validation_alias="k", default_factory=str', ""),
        ('"a", validation_alias="k", deprecated=True', ""),
        ('"a", validation_alias="k", exclude=True', ""),
        ('"a", validation_alias="k", frozen=True', ""),
        ('"a", validation_alias="k", validate_default=True', ""),
        ('"a", validation_alias="k", alias_priority=1', ""),
        (BASE_FIELD, '"""What to look up."""'),  # the model's description
    ],
)
def test_a_fingerprint_follows_every_attribute_of_a_field_and_a_models_docstring(field: str, doc: str) -> None:
    """Found by a typed-tools review: a model's field was written as (annotation, default, alias,
    metadata, description), so ``Field("a", validation_alias="k")`` changed to ``"kind_of"`` (or
    examples, a title, ``json_schema_extra``, a default factory..., or the model's docstring, its
    schema's description) kept the fingerprint, and the server served the stale schema."""
    base = fingerprint_of(model_source(BASE_FIELD))
    assert fingerprint_of(model_source(BASE_FIELD)) == base
    assert fingerprint_of(model_source(field, doc)) != base


def test_a_fingerprint_follows_two_default_factories_and_the_docstrings_of_what_is_reached() -> None:
    """Found with the review above: a default factory was written by its name only where pydantic
    writes it (``__repr_args__``), and not at all for a model's field; the docstrings of the
    enums, dataclasses and typed dicts reached (their schemas' descriptions) were left out, and
    ``typing.is_typeddict`` does not know typing_extensions' ``TypedDict`` before Python 3.12."""
    assert fingerprint_of(model_source("default_factory=str")) != fingerprint_of(model_source("default_factory=dict"))

    def reached(color: str = "", spot: str = "", options: str = "", count: str = "int") -> str:
        return fingerprint_of(
            "import dataclasses, enum\n"
            "from typing_extensions import TypedDict\n"
            f"class Color(enum.Enum):\n    {color}\n    RED = 'red'\n"
            f"@dataclasses.dataclass\nclass Spot:\n    {spot}\n    x: int\n"
            f"class Options(TypedDict):\n    {options}\n    n: {count}\n"
            "def lookup(color: Color, spot: Spot, options: Options) -> str:\n"
            "    return ''\n"
        )

    base = reached()
    assert reached() == base
    assert reached(color='"""A colour."""') != base
    assert reached(spot='"""A spot."""') != base
    assert reached(options='"""How."""') != base
    assert reached(count="str") != base  # typing_extensions' TypedDict (pydantic's before 3.12) is followed too

    def shaped(pair: str = "int", size: str = "int") -> str:  # a named tuple's fields, a computed field
        return fingerprint_of(
            "from typing import NamedTuple\n"
            "from pydantic import BaseModel, computed_field\n"
            f"class Pair(NamedTuple):\n    a: {pair}\n"
            f"class Out(BaseModel):\n    @computed_field\n    @property\n    def size(self) -> {size}:\n"
            "        return 0\n"
            "def lookup(pair: Pair) -> Out:\n"
            "    return Out()\n"
        )

    assert shaped() == shaped()
    assert shaped(pair="str") != shaped() and shaped(size="float") != shaped()


def test_a_field_changed_without_regenerating_is_reported_and_served_as_declared(weather: Path) -> None:
    """The promise of the surface module, for a validation alias: a declaration changed since
    generation is reported on stderr and its entry built from the function."""
    with (weather / "weather.py").open("a") as source:
        source.write(
            "\n\nclass Query(BaseModel):\n"
            '    kind: str = Field("a", validation_alias="k")\n\n\n'
            "@app.tool\n"
            "def lookup(query: Query) -> str:\n"
            "    return query.kind\n"
        )
    assert main(["regen"]) == 0
    edit(weather / "weather.py", 'validation_alias="k"', 'validation_alias="kind_of"')
    replies, err = serve(
        weather,
        {"method": "tools/list"},
        {"method": "tools/call", "params": {"name": "lookup", "arguments": {"query": {"kind_of": "b"}}}},
    )
    assert "weather_surface is stale ('tool lookup' changed)" in err
    lookup = next(t for t in replies[0]["result"]["tools"] if t["name"] == "lookup")
    assert list(lookup["inputSchema"]["$defs"]["Query"]["properties"]) == ["kind_of"]
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "b"}]


def test_a_fingerprint_follows_structured() -> None:
    """Found with the review above: ``structured=`` (whether the entry has an ``outputSchema``)
    was outside the fingerprint, so flipping it without regenerating served the stale entry."""
    from mcpgen._runtime.server.authoring.declarations import Tool

    def numbers() -> list[int]:
        return [1]

    given = [Tool("numbers", numbers, structured=s).fingerprint() for s in (None, True, False)]
    assert len(set(given)) == 3


def test_a_failed_describer_names_where_in_the_project_it_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a fresh-user review: a syntax error in the app was "cannot describe the app
    weather.server:app: SyntaxError: invalid syntax", with no file or line."""
    from mcp_schema_codegen.commands.app_surface import what_failed

    server = tmp_path / "weather" / "server.py"
    stderr = f"""Traceback (most recent call last):
  File "<string>", line 5, in <module>
  File "/usr/lib/python3.11/importlib/__init__.py", line 126, in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
  File "{server}", line 12
    def broken(:
               ^
SyntaxError: invalid syntax
"""
    assert what_failed(stderr, tmp_path) == "SyntaxError: invalid syntax (at weather/server.py, line 12)"
    elsewhere = stderr.replace(str(server), "/usr/lib/python3.11/site-packages/x.py")
    assert what_failed(elsewhere, tmp_path) == "SyntaxError: invalid syntax"  # not the project's: not named
    deeper = f"""Traceback (most recent call last):
  File "{server}", line 3, in <module>
    from weather.tools import app
  File "{tmp_path / "weather" / "tools.py"}", line 40, in <module>
    raise RuntimeError("no key")
  File "/usr/lib/python3.11/site-packages/pydantic/main.py", line 9, in x
    pass
RuntimeError: no key
"""
    assert what_failed(deeper, tmp_path) == "RuntimeError: no key (at weather/tools.py, line 40)"
    # raised in installed code inside the project (a review of the diff): the author's frame named
    for inside in (".venv/lib/python3.11/site-packages/x.py", "weather_mcp/_runtime/server/authoring/signatures.py"):
        installed = deeper.replace("/usr/lib/python3.11/site-packages/pydantic/main.py", str(tmp_path / inside))
        assert what_failed(installed, tmp_path) == "RuntimeError: no key (at weather/tools.py, line 40)", inside
    # raised where no frame is the author's, under the describer's own code (``<string>``, which
    # resolved to a path in the project): it said "(at <string>, line 10)" (a fresh-user review)
    lazy = f"""Traceback (most recent call last):
  File "<string>", line 10, in <module>
  File "{tmp_path / ".venv/lib/python3.11/site-packages/mcpgen/_runtime/x.py"}", line 3, in describe
    raise DeclarationError("weather.bad (at weather/server.py, line 7): its parameters have no JSON Schema")
DeclarationError: weather.bad (at weather/server.py, line 7): its parameters have no JSON Schema
"""
    said = "DeclarationError: weather.bad (at weather/server.py, line 7): its parameters have no JSON Schema"
    monkeypatch.chdir(tmp_path)  # the describer runs in the project
    assert what_failed(lazy, tmp_path) == said


def test_regen_notes_the_arguments_that_take_any_json_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fresh-user review: a tool whose parameter has no annotation was accepted silently, its
    schema ``{}`` taking any JSON value (the function then failed on what it got)."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "n"\nversion = "0"\n[tool.mcp-codegen]\napp = "hints:app"\n'
    )
    (tmp_path / "hints.py").write_text(
        "from mcpgen.v2026_07_28.server import App\n"
        "app = App('hints')\n"
        "@app.tool\n"
        "def add(a, b: int) -> int:\n"
        '    """Add."""\n'
        "    return a + b\n"
    )
    assert main(["regen", "--project", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "  note: tool 'add': argument 'a' takes any JSON value (no annotation, or Any)" in out.splitlines(), out
    assert "argument 'b'" not in out
