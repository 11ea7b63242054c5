"""Wire codec throughput (bytes <-> typed messages, envelope included) against mcp-types 2.3.0.

Two messages of the 2026-07-28 revision, as ``bench_models.py`` builds them:

* (a) ``tools/call`` request, the official example: a server decodes it; a client encodes it.
* (b) ``tools/list`` response with 100 tools: a client decodes it; a server encodes it.

"ours, codec" is the full receive/send path of ``mcpgen.v2026_07_28.codec``: JSON parse, the
JSON-RPC envelope, method and direction lookup, params or result validation by method (with
``resultType`` read first), the ``_meta`` lift, and on encode the era's stamping and bytes.
"ours, model" is one ``model_validate_json``/``model_dump_json`` of the envelope model, to show
what the codec adds. The peer is mcp-types as an SDK uses it (``jsonrpc_message_adapter``, then
``parse_client_request``/``parse_server_result``), measured in the same run, interleaved; each
figure is the best of N short loops with the garbage collector off. Ratios matter, not msgs/s.

Usage::

    python benchmarks/bench_codec.py [--rounds 15] [--loop-ms 30] [--json OUT]
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
VERSION = "2026-07-28"
EXAMPLES = Path("/work/shared/mcp-schema") / VERSION / "examples"
if str(REPO / "generated") not in sys.path:
    sys.path.insert(0, str(REPO / "generated"))


@dataclass
class Variant:
    message: str
    kind: str  # decode | encode
    label: str
    call: Callable[[], object]
    per_loop: int = 1
    best: float = float("inf")


def tools_list_data(count: int = 100) -> dict[str, Any]:
    templates = [json.loads(p.read_bytes()) for p in sorted((EXAMPLES / "Tool").glob("*.json"))]
    tools = []
    for i in range(count):
        tool = json.loads(json.dumps(templates[i % len(templates)]))
        tool["name"] = f"{tool['name']}_{i:03d}"
        tools.append(tool)
    return {"resultType": "complete", "tools": tools, "nextCursor": "next", "ttlMs": 300000, "cacheScope": "public"}


def same(label: str, raw: bytes, encoded: bytes | str) -> None:
    if orjson.loads(encoded) != orjson.loads(raw):
        raise SystemExit(f"{label}: does not reproduce the input")


def variants() -> list[Variant]:
    from mcp_types.jsonrpc import JSONRPCResponse, jsonrpc_message_adapter
    from mcp_types.methods import parse_client_request, parse_server_result, serialize_server_result
    from mcpgen.v2026_07_28 import codec, models

    out: list[Variant] = []
    # (a) tools/call request
    (path,) = sorted((EXAMPLES / "CallToolRequest").glob("*.json"))
    request_data = json.loads(path.read_bytes())
    request_raw = orjson.dumps(request_data)
    decoded = codec.SERVER.decode(request_raw)
    assert type(decoded.params) is models.CallToolRequestParams  # type: ignore[union-attr]
    params, rid = decoded.params, decoded.id  # type: ignore[union-attr]
    same("ours codec request", request_raw, codec.CLIENT.dumps_request(rid, "tools/call", params))
    same(
        "ours codec request, dict path",
        request_raw,
        codec.CLIENT.to_bytes(codec.CLIENT.encode_request(rid, "tools/call", params)),
    )
    message_model = models.CallToolRequest.model_validate_json(request_raw)

    def sdk_request_decode() -> object:
        envelope = jsonrpc_message_adapter.validate_json(request_raw)
        return parse_client_request(envelope.method, VERSION, envelope.params)  # type: ignore[union-attr]

    def sdk_request_encode() -> bytes:
        return jsonrpc_message_adapter.dump_json(jsonrpc_message_adapter.validate_python(request_data))

    same("sdk request", request_raw, sdk_request_encode())
    a = "(a) tools/call request"
    out += [
        Variant(a, "decode", "orjson.loads (floor)", lambda: orjson.loads(request_raw)),
        Variant(a, "decode", "ours, codec: `SERVER.decode(raw)`", lambda: codec.SERVER.decode(request_raw)),
        Variant(
            a,
            "decode",
            "ours, model: `CallToolRequest.model_validate_json`",
            lambda: models.CallToolRequest.model_validate_json(request_raw),
        ),
        Variant(a, "decode", "mcp-types SDK path", sdk_request_decode),
        Variant(a, "encode", "orjson.dumps (floor)", lambda: orjson.dumps(request_data)),
        Variant(
            a,
            "encode",
            "ours, codec: `CLIENT.dumps_request(...)`",
            lambda: codec.CLIENT.dumps_request(rid, "tools/call", params),
        ),
        Variant(a, "encode", "ours, model: `CallToolRequest.model_dump_json()`", message_model.model_dump_json),
        Variant(a, "encode", "mcp-types SDK path (untyped JSONRPCRequest envelope)", sdk_request_encode),
    ]
    # (b) tools/list response, 100 tools
    result_data = tools_list_data()
    response_data = {"jsonrpc": "2.0", "id": 1, "result": result_data}
    response_raw = orjson.dumps(response_data)
    pending = {1: "tools/list"}
    result = codec.CLIENT.decode(response_raw, pending=pending).result  # type: ignore[union-attr]
    assert type(result) is models.ListToolsResult
    same("ours codec result", response_raw, codec.SERVER.dumps_result(1, "tools/list", result))
    same(
        "ours codec result, dict path",
        response_raw,
        codec.SERVER.to_bytes(codec.SERVER.encode_result(1, "tools/list", result)),
    )
    response_model = models.ListToolsResultResponse.model_validate_json(response_raw)

    def sdk_result_decode() -> object:
        envelope = jsonrpc_message_adapter.validate_json(response_raw)
        return parse_server_result("tools/list", VERSION, envelope.result)  # type: ignore[union-attr]

    monolith = sdk_result_decode()

    def sdk_result_encode() -> str:
        body = serialize_server_result(
            "tools/list", VERSION, monolith.model_dump(by_alias=True, mode="json", exclude_none=True)
        )  # type: ignore[attr-defined]
        return JSONRPCResponse(jsonrpc="2.0", id=1, result=body).model_dump_json(by_alias=True, exclude_none=True)

    b = f"(b) tools/list response, 100 tools ({len(response_raw):,} B)"
    out += [
        Variant(b, "decode", "orjson.loads (floor)", lambda: orjson.loads(response_raw)),
        Variant(
            b,
            "decode",
            "ours, codec: `CLIENT.decode(raw, pending=...)`",
            lambda: codec.CLIENT.decode(response_raw, pending=pending),
        ),
        Variant(
            b,
            "decode",
            "ours, model: `ListToolsResultResponse.model_validate_json`",
            lambda: models.ListToolsResultResponse.model_validate_json(response_raw),
        ),
        Variant(b, "decode", "mcp-types SDK path", sdk_result_decode),
        Variant(b, "encode", "orjson.dumps (floor)", lambda: orjson.dumps(response_data)),
        Variant(
            b,
            "encode",
            "ours, codec: `SERVER.dumps_result(...)`",
            lambda: codec.SERVER.dumps_result(1, "tools/list", result),
        ),
        Variant(
            b, "encode", "ours, model: `ListToolsResultResponse.model_dump_json()`", response_model.model_dump_json
        ),
        Variant(b, "encode", "mcp-types SDK path", sdk_result_encode),
    ]
    return out


def time_loop(variant: Variant) -> float:
    call, n = variant.call, variant.per_loop
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - start) / n
    finally:
        gc.enable()


def run(rounds: int, loop_ms: float) -> list[Variant]:
    all_variants = variants()
    for v in all_variants:  # calibrate: about loop_ms per loop
        v.per_loop = 1
        while time_loop(v) * v.per_loop < loop_ms / 1000 / 4:
            v.per_loop *= 2
        v.per_loop = max(1, int(v.per_loop * (loop_ms / 1000) / max(time_loop(v) * v.per_loop, 1e-9)))
    for _ in range(rounds):
        for v in all_variants:
            v.best = min(v.best, time_loop(v))
    return all_variants


def report(results: list[Variant], rounds: int, loop_ms: float) -> str:
    lines = [
        f"Python {platform.python_version()}; best of {rounds} loops of ~{loop_ms:g} ms per variant, interleaved.",
        "",
    ]
    for message in dict.fromkeys(v.message for v in results):
        lines += [f"### {message}", "", "| variant | msgs/s | x floor | x mcp-types |", "|---|---:|---:|---:|"]
        for kind in ("decode", "encode"):
            rows = [v for v in results if v.message == message and v.kind == kind]
            floor, peer = rows[0], rows[-1]
            lines.append(f"| **{kind}** | | | |")
            for v in rows:
                lines.append(
                    f"| {v.label} | {1 / v.best:,.0f} | {v.best / floor.best:.2f} | {v.best / peer.best:.2f} |"
                )
        lines.append("")
    lines.append("x mcp-types below 1: ours takes less time than the SDK path.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--loop-ms", type=float, default=30.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = run(args.rounds, args.loop_ms)
    print(report(results, args.rounds, args.loop_ms))
    if args.json:
        rows = [{"message": v.message, "kind": v.kind, "label": v.label, "seconds": v.best} for v in results]
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
