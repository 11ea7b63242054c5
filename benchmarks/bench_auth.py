"""What protecting a server costs: ``tools/call`` through the ASGI app, protected and not.

One 2026-07-28 ``tools/call`` request is driven through the app in process (no sockets, so the
figure is the app's own cost per request): unprotected, protected by a ``ResourceServer`` with a
``JWTVerifier`` (RS256, a static JWKS) that remembers verified tokens (the default), and the same
verifying every request afresh (``remember=0``). The three variants run in the same process,
interleaved, best of ``--rounds`` loops of ``--calls`` requests; the figures that matter are the
ratios to the unprotected app of the same run.

Usage::

    python benchmarks/bench_auth.py [--calls 500] [--rounds 15] [--json OUT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "generated"))

from _peers import asgi_post  # noqa: E402
from joserfc import jwt  # noqa: E402
from joserfc.jwk import KeySet, RSAKey  # noqa: E402
from mcpgen._runtime.server.auth import JWTVerifier, ProtectedResource, ResourceServer, ScopePolicy  # noqa: E402
from mcpgen.v2026_07_28 import models as m  # noqa: E402
from mcpgen.v2026_07_28 import server as s  # noqa: E402

URL = "http://127.0.0.1/mcp"
ISSUER = "https://auth.example.com"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
BODY = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": META, "name": "add", "arguments": {}}}
).encode()
HEADERS = [
    (b"host", b"127.0.0.1"),
    (b"content-type", b"application/json"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"add"),
]


class Adder(s.Server):
    async def call_tool(
        self, params: m.CallToolRequestParams, ctx: s.Context
    ) -> m.CallToolResult | m.InputRequiredResult:
        return s.CallToolResult(content=[m.TextContent(type="text", text="5")])


async def request(app: Any, headers: list[tuple[bytes, bytes]]) -> None:
    sent = await asgi_post(app, headers, BODY)
    if sent[0]["status"] != 200:
        raise SystemExit(f"the app answered {sent[0]['status']}: {sent[1].get('body')!r}")


async def loop(app: Any, headers: list[tuple[bytes, bytes]], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        await request(app, headers)
    return (time.perf_counter() - start) / calls


async def measure(calls: int, rounds: int) -> dict[str, float]:
    key = RSAKey.generate_key(2048, parameters={"kid": "k1", "alg": "RS256"})
    claims = {"iss": ISSUER, "aud": URL, "sub": "bench", "scope": "mcp", "exp": int(time.time()) + 3600}
    token = jwt.encode({"alg": "RS256", "kid": "k1"}, claims, key)
    jwks = KeySet([key]).as_dict(private=False)
    policy = ScopePolicy(default=frozenset({"mcp"}))

    def protected(**options: Any) -> Any:
        verifier = JWTVerifier(issuer=ISSUER, audience=URL, jwks=jwks, **options)
        return Adder().asgi_app(auth=ResourceServer(verifier, ProtectedResource(URL, (ISSUER,)), policy))

    bearer = [*HEADERS, (b"authorization", f"Bearer {token}".encode())]
    variants = {
        "unprotected": (Adder().asgi_app(), HEADERS),
        "protected (verdicts remembered)": (protected(), bearer),
        "protected (remember=0: every token verified)": (protected(remember=0), bearer),
    }
    best = dict.fromkeys(variants, float("inf"))
    for _ in range(rounds):
        for name, (app, headers) in variants.items():
            best[name] = min(best[name], await loop(app, headers, calls))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    best = asyncio.run(measure(args.calls, args.rounds))
    base = best["unprotected"]
    print(f"tools/call through the ASGI app in process; best of {args.rounds} loops of {args.calls}, interleaved.\n")
    print("| variant | µs per request | requests/s | x unprotected |")
    print("|---|---:|---:|---:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e6:.1f} | {1 / seconds:,.0f} | {seconds / base:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({name: seconds for name, seconds in best.items()}, indent=2))


if __name__ == "__main__":
    main()
