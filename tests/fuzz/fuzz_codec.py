"""Fuzzing the wire codecs of every revision, both sides.

Seeds are real messages: the wire-shaped official 2026-07-28 examples and the conversation
goldens of tests/codec/conversations. Each round takes a seed and applies a few random
mutations, at the JSON level (replace, drop or duplicate values; wrong types; deep nesting;
huge numbers and strings; batches) and at the byte level (flips, truncation, insertions,
invalid UTF-8), or feeds plain random bytes. Every input goes through ``decode`` of the
client and the server codec of every revision, with the pending-request map a peer would
have. The only acceptable outcomes are a decoded message or a ``ProtocolError``; when the
error needs a reply, the reply must be a valid JSON-RPC error response.

Long run (figures in tests/fuzz/README.md):

    .venv/bin/python -m tests.fuzz.fuzz_codec --seconds 600 --seed 1
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "generated") not in sys.path:
    sys.path.insert(0, str(ROOT / "generated"))

from tests.revisions import VERSIONS  # noqa: E402  (every revision schema/lock.json locks)

EXAMPLES = ROOT / "schema" / "2026-07-28" / "examples"
CONVERSATIONS = ROOT / "tests" / "codec" / "conversations"
WIRE_SUFFIXES = ("Request", "Notification", "ResultResponse", "Error")
NASTY_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1.0,
    1.5,
    -0.0,
    2**63,
    -(2**64),
    10**400,
    1e308,
    "",
    "x" * 10_000,
    "\u0000",
    "\ud800",
    "2.0",
    [],
    {},
    [[[[[]]]]],
    {"a": {"b": {"c": {}}}},
    "tools/call",
    "initialize",
    "2026-07-28",
    {"_meta": None},
]


DEEP = "\u0001deep\u0001"


def nasty(rng: random.Random) -> Any:
    return copy.deepcopy(rng.choice(NASTY_VALUES))  # a fresh object: shared ones would make cycles


def seeds() -> list[bytes]:
    """Real messages to start from."""
    found: list[bytes] = []
    if EXAMPLES.is_dir():
        for path in sorted(EXAMPLES.glob("*/*.json")):
            if path.parent.name.endswith(WIRE_SUFFIXES):
                found.append(json.dumps(json.loads(path.read_bytes())).encode())
    if CONVERSATIONS.is_dir():
        for path in sorted(CONVERSATIONS.rglob("*.txt")):
            for line in path.read_text(encoding="utf-8").splitlines():
                line = line.strip()
                if line[:2] in ("C>", "S>"):
                    found.append(line[2:].strip().encode())
    if not found:
        raise RuntimeError("no seed messages found")
    return found


def _paths(value: Any, max_depth: int = 40) -> Iterator[tuple[Any, ...]]:
    """Paths to every node, breadth first, not deeper than ``max_depth``."""
    queue: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while queue:
        prefix, node = queue.pop(0)
        yield prefix
        if len(prefix) >= max_depth:
            continue
        if isinstance(node, dict):
            queue += [((*prefix, key), sub) for key, sub in node.items()]
        elif isinstance(node, list):
            queue += [((*prefix, i), sub) for i, sub in enumerate(node)]


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = new
    return value


def mutate_json(rng: random.Random, value: Any) -> Any:
    paths = list(_paths(value))
    path = rng.choice(paths)
    op = rng.randrange(7)
    if op == 0:  # replace with a nasty value
        return _set(value, path, nasty(rng))
    if op == 1 and path:  # drop the key or item
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        del parent[path[-1]]
        return value
    if op == 2:  # copy another subtree here
        other = value
        for key in rng.choice(paths):
            other = other[key]
        return _set(value, path, json.loads(json.dumps(other)))
    if op == 3:  # add an unknown key
        target = value
        for key in path:
            target = target[key]
        if isinstance(target, dict):
            key = rng.choice(["_meta", "x-extra", "params", "id", "result", "error", "resultType"])
            target[key] = nasty(rng)
        return value
    if op == 4:  # bury in nesting: spliced into the text after dumping (see DEEP)
        return _set(value, path, DEEP)
    if op == 5:  # a batch
        return [value, json.loads(json.dumps(value))][: rng.randrange(0, 3)]
    return _set(value, path, str(rng.random()))  # a string where something else was


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(5)
        if op == 0 and buf:
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 1 and buf:
            del buf[rng.randrange(len(buf)) :]
        elif op == 2:
            at = rng.randrange(len(buf) + 1)
            buf[at:at] = rng.choice(
                [b"\xff\xfe", b"\x00", b'"', b"}", b"]", b",", b"NaN", b"1e999", b"\\u", b"\xed\xa0\x80"]
            )
        elif op == 3 and buf:
            at = rng.randrange(len(buf))
            buf[at:at] = buf[at : at + rng.randrange(1, 64)]
        else:
            buf = bytearray(rng.randbytes(rng.randrange(0, 64)))
    return bytes(buf)


def mutant(rng: random.Random, corpus: list[bytes]) -> bytes:
    seed = rng.choice(corpus)
    roll = rng.random()
    if roll < 0.6:
        value = json.loads(seed)
        for _ in range(rng.randrange(1, 4)):
            value = mutate_json(rng, value)
        text = json.dumps(value)
        depth = rng.choice([2, 60, 5000])
        return text.replace(json.dumps(DEEP), "[" * depth + "1" + "]" * depth, 1).encode()
    if roll < 0.95:
        return mutate_bytes(rng, seed)
    return rng.randbytes(rng.randrange(0, 256))


INTERNAL_ERROR = -32603
MAX_REPLY_OVER_INPUT = 8192  # bytes an error reply may add to its input (a 1 MiB method name made 2 MiB)


@dataclass
class Figures:
    tried: int = 0
    decoded: int = 0
    refused: Counter[int] = field(default_factory=Counter)
    uncaught: list[str] = field(default_factory=list)
    bad_replies: list[str] = field(default_factory=list)

    def summary(self) -> str:
        codes = ", ".join(f"{code}: {n}" for code, n in sorted(self.refused.items()))
        return (
            f"decodes tried: {self.tried}; decoded: {self.decoded}; refused by code: {codes}; "
            f"uncaught exceptions: {len(self.uncaught)}; invalid, internal or oversized error replies: "
            f"{len(self.bad_replies)}"
        )


def valid_reply(reply: Any) -> bool:
    """A JSON-RPC error response: exactly jsonrpc, id (string, integer or null; left out when it
    could not be read, as the schemas from 2025-11-25 have it) and error{code, message, data?}."""
    if not isinstance(reply, dict) or set(reply) - {"id"} != {"jsonrpc", "error"} or reply["jsonrpc"] != "2.0":
        return False
    rid, error = reply.get("id"), reply["error"]
    if not (rid is None or type(rid) in (str, int)):
        return False
    if not isinstance(error, dict) or not {"code", "message"} <= set(error) <= {"code", "message", "data"}:
        return False
    if type(error["code"]) is not int or not isinstance(error["message"], str):
        return False
    json.dumps(reply, allow_nan=False)  # serialisable as strict JSON
    return True


class Target:
    """The codecs of every revision, both sides."""

    def __init__(self) -> None:
        from mcpgen._runtime.jsonrpc import ProtocolError

        self.error_type = ProtocolError
        self.codecs = []
        for version in VERSIONS:
            module = importlib.import_module(f"mcpgen.v{version.replace('-', '_')}.codec")
            self.codecs += [(version, "client", module.CLIENT), (version, "server", module.SERVER)]

    def feed(self, data: bytes, figures: Figures) -> None:
        pending = {1: "tools/call", "1": "tools/list", 0: "initialize", 2: "resources/read", "abc": "prompts/get"}
        for version, side, codec in self.codecs:
            figures.tried += 1
            try:
                codec.decode(data, pending=pending if side == "client" else None)
                figures.decoded += 1
            except self.error_type as error:
                figures.refused[error.code] += 1
                if error.code == INTERNAL_ERROR:  # the codec's own boundary caught a bug below it
                    figures.bad_replies.append(f"{version} {side}: {data[:200]!r} -> internal error {error!r}")
                if error.needs_reply:
                    try:
                        reply = error.reply()
                        ok = valid_reply(reply)
                        # what a reply echoes is bounded (the id, as JSON-RPC has it, is at most the input)
                        small = len(json.dumps(reply)) <= len(data) + MAX_REPLY_OVER_INPUT
                    except Exception as exc:
                        ok, small = False, True
                        error = exc  # type: ignore[assignment]
                    if not ok:
                        figures.bad_replies.append(f"{version} {side}: {data[:200]!r} -> {error!r}")
                    elif not small:
                        figures.bad_replies.append(f"{version} {side}: {data[:200]!r} -> a reply past its bound")
            except Exception:
                figures.uncaught.append(f"{version} {side}: {data[:200]!r}\n{traceback.format_exc(limit=4)}")


def run(rounds: int | None, seconds: float | None, seed: int) -> Figures:
    rng = random.Random(seed)
    corpus = seeds()
    target = Target()
    figures = Figures()
    deadline = time.monotonic() + seconds if seconds else None
    done = 0
    while (rounds is None or done < rounds) and (deadline is None or time.monotonic() < deadline):
        target.feed(mutant(rng, corpus), figures)
        done += 1
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="Fuzz every revision's wire codecs (both sides).")
    parser.add_argument("--seconds", type=float, default=60.0, help="time budget (default 60)")
    parser.add_argument("--rounds", type=int, default=None, help="stop after this many inputs")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.setrecursionlimit(10_000)
    started = time.monotonic()
    figures = run(args.rounds, args.seconds, args.seed)
    print(f"{figures.summary()}; {time.monotonic() - started:.0f} s, seed {args.seed}")
    for finding in (figures.uncaught + figures.bad_replies)[:20]:
        print(finding)
    return 1 if figures.uncaught or figures.bad_replies else 0


if __name__ == "__main__":
    raise SystemExit(main())
