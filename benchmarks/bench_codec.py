"""Wire codec throughput (bytes <-> typed messages, envelope included), per era, against mcp-types 2.3.0.

Four messages, each in the legacy era (2025-11-25) and the modern era (2026-07-28):

* tools/call request (the official example): a server decodes it, a client encodes it;
* tools/call result (the official example): a client decodes it against its pending request;
* tools/list result with 100 tools: a client decodes it, a server encodes it;
* tools/call result holding 1 MiB of text.

Per message and direction three figures from one run, interleaved: ``orjson.loads``/``dumps``
of the same bytes/dict (the floor: parsing without any typing), ours (the full codec path:
``SERVER.decode(raw)``/``CLIENT.decode(raw, pending=...)``, envelope checks, method and
direction lookup, typed params or result with the era's rules; on encode the era's stamping and
bytes), and mcp-types as an SDK uses it (``jsonrpc_message_adapter.validate_json``, then
``parse_client_request``/``parse_server_result``). A fourth decode figure, the "pydantic
bound", is one ``__pydantic_validator__.validate_json`` of the request's definition (the whole
message, envelope and ``_meta`` included) or of the bare result model (a response has no
per-method definition; its envelope is two scalars): what parsing and validation alone cost
with these models. A fourth encode figure is pydantic's own serializer writing the
params/result model to JSON (``__pydantic_serializer__.to_json``, wire names, unset fields left
out). Each round times one short loop per variant with the garbage collector off; µs figures
are the best loop, ratios the median over the rounds of the ratio within a round.
Targets (issue 15): decode within 3x of the orjson floor, encode within 5x, and at least 4x
faster than mcp-types.

Usage::

    python benchmarks/bench_codec.py [--rounds 15] [--loop-ms 30] [--json OUT]
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import orjson

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "schema" / "2026-07-28" / "examples"  # the official examples bundled with the schemas
if str(REPO / "generated") not in sys.path:
    sys.path.insert(0, str(REPO / "generated"))

ERAS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
MODERN_RESULT_KEYS = ("resultType", "ttlMs", "cacheScope", "_meta")


@dataclass
class Variant:
    message: str
    era: str
    kind: str  # decode | encode
    who: str  # floor | ours | mcp-types | pydantic
    call: Callable[[], object]
    per_loop: int = 1
    best: float = float("inf")
    samples: list[float] = field(default_factory=list)  # seconds per call, one per round


def example(definition: str) -> dict[str, Any]:
    (path,) = sorted((EXAMPLES / definition).glob("*.json"))
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


def tools_list_result(count: int = 100) -> dict[str, Any]:
    templates = [json.loads(p.read_bytes()) for p in sorted((EXAMPLES / "Tool").glob("*.json"))]
    tools = []
    for i in range(count):
        tool = copy.deepcopy(templates[i % len(templates)])
        tool["name"] = f"{tool['name']}_{i:03d}"
        tools.append(tool)
    return {"resultType": "complete", "tools": tools, "nextCursor": "next", "ttlMs": 300000, "cacheScope": "public"}


def messages(era: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(label, method, JSON-RPC message) of the four benchmark messages, as this era sends them."""
    request = example("CallToolRequest")
    call_result = example("CallToolResultResponse")
    big_text = "".join(f"line {i:07d}: the quick brown fox jumps over the lazy dog\n" for i in range(20000))[: 2**20]
    big: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"resultType": "complete", "content": [{"type": "text", "text": big_text}], "isError": False},
    }
    listed: dict[str, Any] = {"jsonrpc": "2.0", "id": 2, "result": tools_list_result()}
    if era == "legacy":
        del request["params"]["_meta"]
        for message in (call_result, big, listed):
            for key in MODERN_RESULT_KEYS:
                message["result"].pop(key, None)
        for tool in listed["result"]["tools"]:  # 2025-11-25 output schemas are objects
            if tool.get("outputSchema", {}).get("type", "object") != "object":
                del tool["outputSchema"]
    size = len(orjson.dumps(big))
    return [
        ("tools/call request", "tools/call", request),
        ("tools/call result", "tools/call", call_result),
        (f"tools/list result, 100 tools ({len(orjson.dumps(listed)) // 1024} KiB)", "tools/list", listed),
        (f"tools/call result, 1 MiB text ({size / 2**20:.2f} MiB)", "tools/call", big),
    ]


def same(label: str, raw: bytes, encoded: bytes | str) -> None:
    if orjson.loads(encoded) != orjson.loads(raw):
        raise SystemExit(f"{label}: does not reproduce the input")


def _sdk_decode_request(adapter: Any, parse: Any, raw: bytes, version: str) -> object:
    envelope = adapter.validate_json(raw)
    return parse(envelope.method, version, envelope.params)


def _sdk_decode_result(adapter: Any, parse: Any, raw: bytes, version: str, method: str) -> object:
    envelope = adapter.validate_json(raw)
    return parse(method, version, envelope.result)


def _sdk_encode_request(adapter: Any, data: dict[str, Any]) -> bytes:
    return bytes(adapter.dump_json(adapter.validate_python(data)))


def _sdk_encode_result(response: Any, serialize: Any, monolith: Any, method: str, version: str, rid: Any) -> str:
    dumped = monolith.model_dump(by_alias=True, mode="json", exclude_none=True)
    body = serialize(method, version, dumped)
    return str(response(jsonrpc="2.0", id=rid, result=body).model_dump_json(by_alias=True, exclude_none=True))


def _pydantic_bound(body: bytes, bound: Any) -> object:
    return bound.__pydantic_validator__.validate_json(body, by_alias=True, by_name=False)


def _pydantic_encode_bound(model: Any) -> bytes:
    return bytes(type(model).__pydantic_serializer__.to_json(model, by_alias=True, exclude_unset=True))


def variants() -> list[Variant]:
    import importlib

    from mcp_types.jsonrpc import JSONRPCResponse
    from mcp_types.jsonrpc import jsonrpc_message_adapter as adapter
    from mcp_types.methods import parse_client_request, parse_server_result, serialize_server_result

    out: list[Variant] = []
    for era, version in ERAS.items():
        package = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}")
        client, server = package.CLIENT, package.SERVER
        for label, method, data in messages(era):
            raw = orjson.dumps(data)
            spec = package.METHODS.request(method)
            tag = f"{label} [{era}]"
            ours_decode: Callable[[], object]
            sdk_decode: Callable[[], object]
            ours_encode: Callable[[], object]
            sdk_encode: Callable[[], bytes | str]
            if "method" in data:  # a request: the server decodes, the client encodes
                decoded = server.decode(raw)
                params, rid = decoded.params, decoded.id
                assert type(params) is spec.params, decoded
                same(tag, raw, client.dumps_request(rid, method, params))
                body, bound, typed = raw, spec.message, params  # the request's definition: envelope included
                ours_decode = partial(server.decode, raw)
                sdk_decode = partial(_sdk_decode_request, adapter, parse_client_request, raw, version)
                ours_encode = partial(client.dumps_request, rid, method, params)
                sdk_encode = partial(_sdk_encode_request, adapter, data)
            else:  # a result: the client decodes against its pending request, the server encodes
                pending = {data["id"]: method}
                decoded = client.decode(raw, pending=pending)
                result, rid = decoded.result, decoded.id
                assert type(result) is spec.result, decoded
                same(tag, raw, server.dumps_result(rid, method, result))
                body, bound, typed = orjson.dumps(data["result"]), spec.result, result
                ours_decode = partial(client.decode, raw, pending=pending)
                sdk_decode = partial(_sdk_decode_result, adapter, parse_server_result, raw, version, method)
                ours_encode = partial(server.dumps_result, rid, method, result)
                sdk_encode = partial(
                    _sdk_encode_result, JSONRPCResponse, serialize_server_result, sdk_decode(), method, version, rid
                )

            same(f"{tag} mcp-types", raw, sdk_encode())
            out += [
                Variant(tag, era, "decode", "floor", partial(orjson.loads, raw)),
                Variant(tag, era, "decode", "ours", ours_decode),
                Variant(tag, era, "decode", "mcp-types", sdk_decode),
                Variant(tag, era, "decode", "pydantic", partial(_pydantic_bound, body, bound)),
                Variant(tag, era, "encode", "floor", partial(orjson.dumps, data)),
                Variant(tag, era, "encode", "ours", ours_encode),
                Variant(tag, era, "encode", "mcp-types", sdk_encode),
                Variant(tag, era, "encode", "pydantic", partial(_pydantic_encode_bound, typed)),
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
            v.samples.append(time_loop(v))
            v.best = min(v.best, v.samples[-1])
    return all_variants


def median_ratio(num: Variant, den: Variant) -> float:
    """The median over the rounds of ``num``'s time / ``den``'s time in the same round."""
    return statistics.median(a / b for a, b in zip(num.samples, den.samples, strict=True))


def report(results: list[Variant], rounds: int, loop_ms: float) -> str:
    found = {(v.message, v.kind, v.who): v for v in results}
    lines = [
        f"Python {platform.python_version()}; {rounds} rounds of one ~{loop_ms:g} ms loop per variant, interleaved.",
        "µs: best loop. Ratios: median over the rounds of the ratio within a round.",
        "x floor: ours / orjson (targets: decode <= 3, encode <= 5); vs mcp-types: mcp-types / ours (target >= 4).",
        "pydantic: one validate_json of the request's definition (the whole message) or the bare result",
        "model, x floor; ceiling: mcp-types / that,",
        "the most any decoder validating with these models could gain over mcp-types. Encode's pydantic:",
        "pydantic's own serializer writing the bare params/result model to JSON, x floor.",
        "",
        "| message [era] | decode µs | x floor | vs mcp-types | pydantic x floor | ceiling "
        "| encode µs | x floor | vs mcp-types | pydantic x floor |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for message in dict.fromkeys(v.message for v in results):
        d = {who: found[(message, "decode", who)] for who in ("floor", "ours", "mcp-types", "pydantic")}
        e = {who: found[(message, "encode", who)] for who in ("floor", "ours", "mcp-types", "pydantic")}
        lines.append(
            f"| {message} | {d['ours'].best * 1e6:,.1f} | {median_ratio(d['ours'], d['floor']):.2f} "
            f"| {median_ratio(d['mcp-types'], d['ours']):.1f}x "
            f"| {median_ratio(d['pydantic'], d['floor']):.2f} | {median_ratio(d['mcp-types'], d['pydantic']):.1f}x "
            f"| {e['ours'].best * 1e6:,.1f} | {median_ratio(e['ours'], e['floor']):.2f} "
            f"| {median_ratio(e['mcp-types'], e['ours']):.1f}x | {median_ratio(e['pydantic'], e['floor']):.2f} |"
        )
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
        rows = [
            {"message": v.message, "era": v.era, "kind": v.kind, "who": v.who, "best": v.best, "rounds": v.samples}
            for v in results
        ]
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
