"""Time to generate all MCP schema revisions: mcp-codegen against bare datamodel-code-generator.

Measured in one run, interleaved, so both sides see the same machine load:

* ``ours (CLI)``: ``mcp-codegen --schema-dir schema generate --all --out TMP`` as one subprocess
  (wall clock: interpreter start, pre-pass, five datamodel-codegen calls, templates, ruff).
* ``bare (CLI)``: ``datamodel-codegen`` on each raw ``schema/<version>/schema.json`` with a plain
  option set, one subprocess per revision; the figure is the sum of the five.
* ``ours (in-process)`` / ``bare (in-process)``: the same work called as Python functions in this
  (warm) interpreter, so interpreter start and imports are excluded.

Usage::

    python benchmarks/bench_generate.py [--reps 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

# A plain, reasonable datamodel-codegen invocation: what a user would type without a pre-pass.
BARE_ARGS = [
    "--input-file-type",
    "jsonschema",
    "--output-model-type",
    "pydantic_v2.BaseModel",
    "--disable-timestamp",
]


@dataclass
class Variant:
    name: str
    run: Callable[[Path], None]  # argument: a fresh, empty scratch directory
    seconds: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def locked_versions(schema_dir: Path) -> list[str]:
    lock = json.loads((schema_dir / "lock.json").read_text(encoding="utf-8"))
    return sorted(lock["versions"])


def run_checked(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")


def ours_cli(schema_dir: Path) -> Callable[[Path], None]:
    exe = str(BIN / "mcp-codegen")

    def run(scratch: Path) -> None:
        run_checked([exe, "--schema-dir", str(schema_dir), "generate", "--all", "--out", str(scratch)])

    return run


def bare_cli(schema_dir: Path, versions: list[str]) -> Callable[[Path], None]:
    exe = str(BIN / "datamodel-codegen")

    def run(scratch: Path) -> None:
        for version in versions:
            source = schema_dir / version / "schema.json"
            run_checked([exe, "--input", str(source), *BARE_ARGS, "--output", str(scratch / f"{version}.py")])

    return run


def ours_in_process(schema_dir: Path) -> Callable[[Path], None]:
    from mcp_schema_codegen.pipeline import Options, generate

    def run(scratch: Path) -> None:
        generate(Options(schema_dir=schema_dir, out=scratch))

    return run


def bare_in_process(schema_dir: Path, versions: list[str]) -> Callable[[Path], None]:
    from datamodel_code_generator import generate
    from datamodel_code_generator.enums import DataModelType, InputFileType

    def run(scratch: Path) -> None:
        for version in versions:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                generate(
                    schema_dir / version / "schema.json",
                    input_file_type=InputFileType.JsonSchema,
                    output_model_type=DataModelType.PydanticV2BaseModel,
                    disable_timestamp=True,
                    output=scratch / f"{version}.py",
                )

    return run


def measure(variants: list[Variant], reps: int, warmup: bool) -> None:
    """Run every variant ``reps`` times, interleaved, each in a fresh scratch directory."""
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as tmp:
        root = Path(tmp)
        counter = 0

        def once(variant: Variant) -> float:
            nonlocal counter
            counter += 1
            scratch = root / f"run{counter}"
            scratch.mkdir()
            start = time.perf_counter()
            variant.run(scratch)
            elapsed = time.perf_counter() - start
            shutil.rmtree(scratch)
            return elapsed

        if warmup:  # first in-process call pays imports and caches; also warms the OS file cache
            for variant in variants:
                once(variant)
        for rep in range(reps):
            for variant in variants:
                variant.seconds.append(once(variant))
            print(
                f"rep {rep + 1}/{reps}: " + ", ".join(f"{v.name} {v.seconds[-1]:.2f}s" for v in variants),
                file=sys.stderr,
            )


def markdown(variants: list[Variant], pairs: list[tuple[str, str]]) -> str:
    by_name = {v.name: v for v in variants}
    lines = [
        "| variant | median s | min s | max s |",
        "|---|---:|---:|---:|",
    ]
    for v in variants:
        lines.append(f"| {v.name} | {v.median:.2f} | {min(v.seconds):.2f} | {max(v.seconds):.2f} |")
    lines += ["", "| ratio | median ours / median bare |", "|---|---:|"]
    for ours, bare in pairs:
        if ours in by_name and bare in by_name:
            lines.append(f"| {ours} / {bare} | {by_name[ours].median / by_name[bare].median:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5, help="repetitions of every variant (default 5)")
    parser.add_argument("--schema-dir", type=Path, default=REPO / "schema", help="lock.json + <version>/schema.json")
    parser.add_argument("--no-in-process", action="store_true", help="only the subprocess (CLI) variants")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the raw timings as JSON")
    args = parser.parse_args(argv)

    schema_dir: Path = args.schema_dir.resolve()
    versions = locked_versions(schema_dir)
    variants = [
        Variant("ours (CLI, 1 process)", ours_cli(schema_dir)),
        Variant(f"bare (CLI, {len(versions)} processes)", bare_cli(schema_dir, versions)),
    ]
    pairs = [(variants[0].name, variants[1].name)]
    if not args.no_in_process:
        variants += [
            Variant("ours (in-process)", ours_in_process(schema_dir)),
            Variant("bare (in-process)", bare_in_process(schema_dir, versions)),
        ]
        pairs.append((variants[2].name, variants[3].name))

    measure(variants, args.reps, warmup=True)

    print(
        f"Generating {len(versions)} revisions ({', '.join(versions)}); {args.reps} reps, interleaved, "
        f"after 1 warm-up rep.\n"
    )
    print(markdown(variants, pairs))

    if args.json:
        by_name = {v.name: v for v in variants}
        report = {
            "benchmark": "generate",
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "versions": versions,
            "bare_args": BARE_ARGS,
            "reps": args.reps,
            "variants": {v.name: {"seconds": v.seconds, "median": v.median} for v in variants},
            "ratios": {f"{o} / {b}": by_name[o].median / by_name[b].median for o, b in pairs},
        }
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
