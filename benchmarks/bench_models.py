"""Decode/encode throughput of the generated models against mcp-types 2.3.0 and an orjson floor.

Two messages of the 2026-07-28 revision:

* (a) ``tools/call`` request: the schema's own example ``examples/CallToolRequest/*.json``.
* (b) ``tools/list`` result with 100 tools, built deterministically from ``examples/Tool/*.json``.

Decode is bytes -> validated typed object; encode is typed object -> bytes. Every variant of a
message is timed in the same run, interleaved round-robin: each round times one short loop per
variant, and a variant's figure is its best loop over all rounds (best-of-N; the machine is
noisy, the minimum is the least disturbed). "x floor" divides a variant's time per message by
``orjson.loads`` (decode) or ``orjson.dumps`` (encode) of the same message in the same run.

Usage::

    python benchmarks/bench_models.py [--rounds 20] [--loop-ms 40] [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version as dist_version
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import TypeAdapter

REPO = Path(__file__).resolve().parent.parent
VERSION = "2026-07-28"
DEFAULT_EXAMPLES = REPO / "schema" / VERSION / "examples"
TOOL_COUNT = 100

Kind = Literal["decode", "encode"]
Side = Literal["floor", "ours", "mcp-types"]


@dataclass
class Variant:
    label: str
    kind: Kind
    side: Side
    call: Callable[[], object]
    per_loop: int = 0  # calls per timed loop, set by calibration
    best: float = float("inf")  # best seconds per call
    samples: list[float] = field(default_factory=list)  # seconds per call, one per round

    @property
    def per_second(self) -> float:
        return 1.0 / self.best


@dataclass
class Message:
    key: str
    title: str
    raw: bytes
    variants: list[Variant]
    # (caption, ours label, mcp-types label): rows compared in the "ours vs mcp-types" table
    pairs: list[tuple[str, str, str]]
    notes: list[str] = field(default_factory=list)

    def floor(self, kind: Kind) -> Variant:
        return next(v for v in self.variants if v.kind == kind and v.side == "floor")

    def variant(self, label: str) -> Variant:
        return next(v for v in self.variants if v.label == label)


# --- payloads -----------------------------------------------------------------------------


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def call_tool_request(examples: Path) -> bytes:
    (path,) = sorted((examples / "CallToolRequest").glob("*.json"))
    return orjson.dumps(load_json(path))


def tools_list_result(examples: Path, count: int = TOOL_COUNT) -> dict[str, Any]:
    """``count`` tools cycling over the official Tool examples, each renamed to be unique."""
    templates = [load_json(p) for p in sorted((examples / "Tool").glob("*.json"))]
    tools = []
    for i in range(count):
        tool = json.loads(json.dumps(templates[i % len(templates)]))  # deep copy
        tool["name"] = f"{tool['name']}_{i:03d}"
        tools.append(tool)
    return {
        "resultType": "complete",
        "tools": tools,
        "nextCursor": "next-page-cursor",
        "ttlMs": 300000,
        "cacheScope": "public",
    }


# --- the variants -------------------------------------------------------------------------


def check_round_trip(label: str, raw: bytes, encoded: bytes | str) -> None:
    """Fail loudly if a variant does not reproduce the message (a fast wrong answer is no answer)."""
    if orjson.loads(encoded) != orjson.loads(raw):
        raise SystemExit(f"{label}: decode -> encode does not reproduce the input")


def tools_call_message(examples: Path) -> Message:
    from mcp_types import CallToolRequest as MonolithCallToolRequest
    from mcp_types.jsonrpc import jsonrpc_message_adapter
    from mcp_types.methods import parse_client_request
    from mcpgen.v2026_07_28.models import CallToolRequest, ClientRequest

    raw = call_tool_request(examples)
    data = orjson.loads(raw)
    client_request: TypeAdapter[Any] = TypeAdapter(ClientRequest)
    ours = CallToolRequest.model_validate_json(raw)
    monolith = MonolithCallToolRequest.model_validate_json(raw)

    def sdk_decode() -> object:
        envelope = jsonrpc_message_adapter.validate_json(raw)
        return parse_client_request(envelope.method, VERSION, envelope.params)  # type: ignore[union-attr]

    check_round_trip("ours", raw, ours.model_dump_json())
    check_round_trip("ours via ClientRequest", raw, client_request.dump_json(client_request.validate_json(raw)))
    assert isinstance(sdk_decode(), MonolithCallToolRequest)

    variants = [
        Variant("orjson.loads / orjson.dumps (floor)", "decode", "floor", lambda: orjson.loads(raw)),
        Variant(
            "ours `CallToolRequest.model_validate_json`",
            "decode",
            "ours",
            lambda: CallToolRequest.model_validate_json(raw),
        ),
        Variant(
            "ours `TypeAdapter(ClientRequest).validate_json` (discriminated on method)",
            "decode",
            "ours",
            lambda: client_request.validate_json(raw),
        ),
        Variant(
            "mcp-types monolith `CallToolRequest.model_validate_json` (no envelope)",
            "decode",
            "mcp-types",
            lambda: MonolithCallToolRequest.model_validate_json(raw),
        ),
        Variant(
            "mcp-types SDK path (`jsonrpc_message_adapter` + `parse_client_request`)", "decode", "mcp-types", sdk_decode
        ),
        Variant("orjson.loads / orjson.dumps (floor)", "encode", "floor", lambda: orjson.dumps(data)),
        Variant("ours `model_dump_json()`", "encode", "ours", ours.model_dump_json),
        Variant(
            "mcp-types monolith `model_dump_json(by_alias, exclude_none)` (no envelope)",
            "encode",
            "mcp-types",
            lambda: monolith.model_dump_json(by_alias=True, exclude_none=True),
        ),
    ]
    pairs = [
        ("decode, model class: ours vs monolith", variants[1].label, variants[3].label),
        ("decode, server receive path: ours `ClientRequest` vs SDK path", variants[2].label, variants[4].label),
        ("encode, model class: ours vs monolith", variants[6].label, variants[7].label),
    ]
    return Message("tools_call", f"(a) tools/call request (official example, {len(raw)} B)", raw, variants, pairs)


def tools_list_message(examples: Path) -> Message:
    from mcp_types import ListToolsResult as MonolithListToolsResult
    from mcp_types.jsonrpc import JSONRPCResponse, jsonrpc_message_adapter
    from mcp_types.methods import parse_server_result, serialize_server_result
    from mcpgen.v2026_07_28.models import ListToolsResult, ListToolsResultResponse

    data = tools_list_result(examples)
    raw = orjson.dumps(data)
    envelope_raw = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": data})
    ours = ListToolsResult.model_validate_json(raw)
    monolith = MonolithListToolsResult.model_validate_json(raw)

    def sdk_decode() -> object:
        envelope = jsonrpc_message_adapter.validate_json(envelope_raw)
        return parse_server_result("tools/list", VERSION, envelope.result)  # type: ignore[union-attr]

    def sdk_encode() -> str:
        body = serialize_server_result(
            "tools/list", VERSION, monolith.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        return JSONRPCResponse(jsonrpc="2.0", id=1, result=body).model_dump_json(by_alias=True, exclude_none=True)

    def ours_envelope_encode() -> str:
        return ListToolsResultResponse(id=1, result=ours).model_dump_json()

    check_round_trip("ours", raw, ours.model_dump_json())
    check_round_trip(
        "ours envelope", envelope_raw, ListToolsResultResponse.model_validate_json(envelope_raw).model_dump_json()
    )
    check_round_trip("ours envelope encode", envelope_raw, ours_envelope_encode())
    check_round_trip("mcp-types SDK encode", envelope_raw, sdk_encode())
    assert isinstance(sdk_decode(), MonolithListToolsResult)

    variants = [
        Variant("orjson.loads / orjson.dumps (floor)", "decode", "floor", lambda: orjson.loads(raw)),
        Variant(
            "ours `ListToolsResult.model_validate_json`",
            "decode",
            "ours",
            lambda: ListToolsResult.model_validate_json(raw),
        ),
        Variant(
            "ours `ListToolsResult.model_validate(orjson.loads(...))`",
            "decode",
            "ours",
            lambda: ListToolsResult.model_validate(orjson.loads(raw)),
        ),
        Variant(
            "ours `ListToolsResultResponse.model_validate_json` (with envelope)",
            "decode",
            "ours",
            lambda: ListToolsResultResponse.model_validate_json(envelope_raw),
        ),
        Variant(
            "mcp-types monolith `ListToolsResult.model_validate_json`",
            "decode",
            "mcp-types",
            lambda: MonolithListToolsResult.model_validate_json(raw),
        ),
        Variant(
            "mcp-types SDK path (`jsonrpc_message_adapter` + `parse_server_result`, with envelope)",
            "decode",
            "mcp-types",
            sdk_decode,
        ),
        Variant("orjson.loads / orjson.dumps (floor)", "encode", "floor", lambda: orjson.dumps(data)),
        Variant("ours `model_dump_json()`", "encode", "ours", ours.model_dump_json),
        Variant(
            "ours `ListToolsResultResponse(id=1, result=...).model_dump_json()` (with envelope)",
            "encode",
            "ours",
            ours_envelope_encode,
        ),
        Variant(
            "mcp-types monolith `model_dump_json(by_alias, exclude_none)`",
            "encode",
            "mcp-types",
            lambda: monolith.model_dump_json(by_alias=True, exclude_none=True),
        ),
        Variant(
            "mcp-types SDK path (`serialize_server_result` + `JSONRPCResponse`, with envelope)",
            "encode",
            "mcp-types",
            sdk_encode,
        ),
    ]
    pairs = [
        ("decode, model class: ours vs monolith", variants[1].label, variants[4].label),
        ("decode, with envelope: ours `ListToolsResultResponse` vs SDK path", variants[3].label, variants[5].label),
        ("encode, model class: ours vs monolith", variants[7].label, variants[9].label),
        ("encode, with envelope: ours `ListToolsResultResponse` vs SDK path", variants[8].label, variants[10].label),
    ]
    notes = [
        f'Envelope rows read/write `{{"jsonrpc":"2.0","id":1,"result":...}}` '
        f"({len(envelope_raw)} B, +{len(envelope_raw) - len(raw)} B); their x floor uses the bare floor."
    ]
    title = f"(b) tools/list result, {TOOL_COUNT} tools ({len(raw):,} B)"
    return Message("tools_list", title, raw, variants, pairs, notes)


# --- timing -------------------------------------------------------------------------------


def time_loop(call: Callable[[], object], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        call()
    return time.perf_counter() - start


def calibrate(variant: Variant, loop_seconds: float) -> None:
    """Pick the calls per loop so that one loop lasts about ``loop_seconds``."""
    n = 1
    while True:
        elapsed = time_loop(variant.call, n)
        if elapsed >= loop_seconds / 4 or n >= 1 << 24:
            variant.per_loop = max(1, round(n * loop_seconds / max(elapsed, 1e-9)))
            return
        n *= 4


def measure(messages: list[Message], rounds: int, loop_seconds: float) -> None:
    variants = [v for m in messages for v in m.variants]
    gc_was_enabled = gc.isenabled()
    gc.disable()  # as timeit does: collector pauses are noise, not the cost of a message
    try:
        for v in variants:
            calibrate(v, loop_seconds)
        for _ in range(rounds):
            for v in variants:
                per_call = time_loop(v.call, v.per_loop) / v.per_loop
                v.samples.append(per_call)
                v.best = min(v.best, per_call)
            gc.collect()
    finally:
        if gc_was_enabled:
            gc.enable()


# --- report -------------------------------------------------------------------------------


def markdown(message: Message) -> str:
    lines = [f"### {message.title}", "", "| variant | msgs/s | x floor |", "|---|---:|---:|"]
    for kind in ("decode", "encode"):
        floor = message.floor(kind)
        lines.append(f"| **{kind}** | | |")
        for v in (v for v in message.variants if v.kind == kind):
            label = f"**{v.label}**" if v.side == "floor" else v.label
            lines.append(f"| {label} | {v.per_second:,.0f} | {v.best / floor.best:.2f} |")
    lines += ["", "| ours vs mcp-types | ours speed-up (mcp-types time / ours time) |", "|---|---:|"]
    for caption, ours_label, theirs_label in message.pairs:
        ours, theirs = message.variant(ours_label), message.variant(theirs_label)
        lines.append(f"| {caption} | {theirs.best / ours.best:.2f} |")
    lines += [f"\n{note}" for note in message.notes]
    return "\n".join(lines)


def report_json(messages: list[Message], args: argparse.Namespace) -> dict[str, Any]:
    return {
        "benchmark": "models",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {name: dist_version(name) for name in ("pydantic", "pydantic-core", "orjson", "mcp-types")},
        "rounds": args.rounds,
        "loop_ms": args.loop_ms,
        "messages": {
            m.key: {
                "title": m.title,
                "bytes": len(m.raw),
                "variants": [
                    {
                        "label": v.label,
                        "kind": v.kind,
                        "side": v.side,
                        "per_loop": v.per_loop,
                        "best_seconds": v.best,
                        "msgs_per_second": v.per_second,
                        "x_floor": v.best / m.floor(v.kind).best,
                        "samples_seconds": v.samples,
                    }
                    for v in m.variants
                ],
                "ours_vs_mcp_types": [
                    {"pair": c, "ours": o, "mcp_types": t, "speedup": m.variant(t).best / m.variant(o).best}
                    for c, o, t in m.pairs
                ],
            }
            for m in messages
        },
    }


def ensure_generated_importable() -> None:
    """In a source checkout the editable install exposes ``codegen`` but not ``generated/mcpgen``."""
    try:
        import mcpgen  # noqa: F401
    except ModuleNotFoundError:
        sys.path.insert(0, str(REPO / "generated"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20, help="N in best-of-N: timed loops per variant (default 20)")
    parser.add_argument("--loop-ms", type=float, default=40.0, help="length of one timed loop (default 40 ms)")
    parser.add_argument("--examples", type=Path, default=DEFAULT_EXAMPLES, help=f"the {VERSION} examples folder")
    parser.add_argument("--json", metavar="OUT", type=Path, help="write the raw numbers as JSON")
    args = parser.parse_args(argv)

    ensure_generated_importable()
    started = time.perf_counter()
    messages = [tools_call_message(args.examples), tools_list_message(args.examples)]
    measure(messages, args.rounds, args.loop_ms / 1000)
    elapsed = time.perf_counter() - started

    print(
        f"Python {platform.python_version()}, pydantic {dist_version('pydantic')}, "
        f"mcp-types {dist_version('mcp-types')}, orjson {dist_version('orjson')}; "
        f"best of {args.rounds} loops of ~{args.loop_ms:g} ms per variant, interleaved; {elapsed:.0f} s total.\n"
    )
    print("\n\n".join(markdown(m) for m in messages))
    if args.json:
        args.json.write_text(json.dumps(report_json(messages, args), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
