"""Developer tasks: ``nox -s lint types fast`` before a commit; ``nox`` alone runs the default set.

Each session installs both distributions of this repository (the runtime from ``generated/``
and the generator) into its own reused virtualenv, so a session sees what a fresh checkout sees.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import nox
from packaging.requirements import Requirement

nox.options.sessions = ["lint", "types", "fast", "regenerate"]
nox.options.reuse_existing_virtualenvs = True

SOURCES = ["codegen", "generated", "templates/runtime", "tests", "benchmarks", "examples", "noxfile.py"]


def install(session: nox.Session) -> None:
    session.install("-e", "./generated", "-e", ".[test]")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over all source, the runtime's templates included."""
    install(session)
    session.run("ruff", "check", *SOURCES)
    session.run("ruff", "format", "--check", *[s for s in SOURCES if s != "generated"])
    session.run("lint-imports")


@nox.session
def types(session: nox.Session) -> None:
    """mypy --strict on the generator, the generated package and the benchmarks (the lint hook's run)."""
    install(session)
    session.run("mypy", "--strict", "codegen/mcp_schema_codegen", "generated/mcpgen", "benchmarks")


@nox.session
def fast(session: nox.Session) -> None:
    """The tests that need no real peer (no npm packages, no official SDK, no wheels)."""
    install(session)
    session.run("pytest", "-q", "-m", "not interop", *session.posargs)


@nox.session
def interop(session: nox.Session) -> None:
    """The tests against real peers: the official Python and TypeScript SDKs, the conformance suite."""
    install(session)
    session.run("pytest", "-q", "-m", "interop", *session.posargs)


@nox.session
def regenerate(session: nox.Session) -> None:
    """Regenerate generated/ from the templates and schemas and fail if anything changed."""
    install(session)
    session.run("mcp-codegen", "generate", "--all")
    session.run("git", "diff", "--exit-code", "--stat", "generated", external=True)
    # a file generated but never committed is no difference to `git diff`
    untracked = session.run(
        "git", "status", "--porcelain", "--untracked-files=all", "--", "generated", external=True, silent=True
    )
    if isinstance(untracked, str) and untracked.strip():
        session.error(f"generated/ holds files git does not track:\n{untracked}")


@nox.session
def minimum(session: nox.Session) -> None:
    """The fast tests against the lowest version of every dependency the two distributions
    declare with a lower bound (the runtime's, its ``auth`` and ``redis`` extras', the generator's),
    read from their ``pyproject.toml`` files: a bound raised or added there is tested here."""
    install(session)
    session.install(*floors())
    # the static checks (ruff, mypy, import-linter) judge the source with the pinned toolchain and
    # today's dependencies (the lint session); import-linter itself needs a newer click
    static = ["--ignore=tests/test_lint.py", "--ignore=tests/test_layers.py"]
    session.run("pytest", "-q", "-m", "not interop", *static, *session.posargs)


def floors() -> list[str]:
    """``name==X`` for each declared requirement with a ``>=X`` bound (markers kept)."""
    runtime = tomllib.loads(Path("generated/pyproject.toml").read_text(encoding="utf-8"))["project"]
    generator = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = runtime["optional-dependencies"]
    declared = [*runtime["dependencies"], *extras["auth"], *extras["redis"], *generator["dependencies"]]
    pins = []
    for text in declared:
        requirement = Requirement(text)
        lowest = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        if lowest:
            marker = f"; {requirement.marker}" if requirement.marker else ""
            pins.append(f"{requirement.name}=={lowest[0]}{marker}")
    return pins
