"""Instructions per ``tools/call`` over Streamable HTTP with 8 keep-alive connections, server side.

The server of ``bench_serve.py`` (ours, or the floor: a bare ASGI app under the same uvicorn
settings) runs under valgrind's callgrind with instrumentation off; after a warm-up of 2 s over
the 8 connections, instrumentation is switched on, exactly ``N`` calls are made (``N / 8`` per
connection, one outstanding on each), and switched off again. Instructions are what the server
executed for those calls (its event loop, uvicorn, the app), divided by ``N``: a figure this
shared machine's speed does not move, unlike the CPU times of ``bench_serve.py`` (3 rounds there
moved the HTTP ratio between 2.8x and 3.8x).

Usage::

    python benchmarks/callgrind_http.py [--calls 800] [--servers ours floor] [--eras legacy modern]

Needs ``valgrind`` (``callgrind_control`` comes with it); each server takes a minute or two.
"""

from __future__ import annotations

import argparse
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _peers import free_port
from bench_serve import FLOOR, OURS, HttpConn, child_env, http_load

CONNECTIONS = 8
TOTALS = re.compile(r"^([\d,]+) .*PROGRAM TOTALS", re.MULTILINE)


def instructions_per_call(source: str, era: str, calls: int) -> float:
    """Start ``source`` (``bench_serve``'s server script) under callgrind and count ``calls`` calls."""
    work = Path(tempfile.mkdtemp(prefix="callgrind-http-"))
    try:
        (work / "server.py").write_text(source)
        out = work / "callgrind.out"
        port = free_port()
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        proc = subprocess.Popen(
            [*command, sys.executable, str(work / "server.py"), "http", str(port)],
            cwd=work,
            env=child_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 300
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port)).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise RuntimeError("the server did not start under valgrind") from None
                    time.sleep(0.2)
            conns = [HttpConn(port, era) for _ in range(CONNECTIONS)]
            http_load(proc.pid, conns, 2, 3.0)  # warm-up: every model built, caches filled
            control = ["callgrind_control", "-i"]
            subprocess.run([*control, "on", str(proc.pid)], check=True, capture_output=True)
            made = drive(conns, calls)
            subprocess.run([*control, "off", str(proc.pid)], check=True, capture_output=True)
            subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        finally:
            proc.terminate()
            proc.wait()
        dumps = sorted(work.glob("callgrind.out.*"))  # the dump asked for (the exit's comes after it)
        text = subprocess.run(["callgrind_annotate", str(dumps[0])], check=True, capture_output=True, text=True).stdout
        match = TOTALS.search(text)
        if match is None:
            raise RuntimeError("callgrind_annotate printed no totals")
        return int(match.group(1).replace(",", "")) / made
    finally:
        shutil.rmtree(work, ignore_errors=True)


def drive(conns: list[HttpConn], calls: int) -> int:
    """Exactly ``calls`` calls, spread evenly, one outstanding per connection; the number made."""
    selector = selectors.DefaultSelector()
    for conn in conns:
        selector.register(conn.sock, selectors.EVENT_READ, conn)
    left = {conn: calls // len(conns) for conn in conns}
    rid, outstanding, done = 1_000_000, 0, 0
    for conn in conns:
        conn.send(rid)
        rid, outstanding, left[conn] = rid + 1, outstanding + 1, left[conn] - 1
    while outstanding:
        for key, _ in selector.select():
            conn = key.data
            conn.receive()
            while conn.response() is not None:
                done, outstanding = done + 1, outstanding - 1
                if left[conn] > 0:
                    conn.send(rid)
                    rid, outstanding, left[conn] = rid + 1, outstanding + 1, left[conn] - 1
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=800)
    parser.add_argument("--servers", nargs="+", default=["floor", "ours"], choices=["floor", "ours"])
    parser.add_argument("--eras", nargs="+", default=["legacy", "modern"], choices=["legacy", "modern"])
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        parser.error("valgrind is not installed")
    figures: dict[tuple[str, str], float] = {}
    for era in args.eras:
        for server in args.servers:
            figures[(server, era)] = instructions_per_call({"floor": FLOOR, "ours": OURS}[server], era, args.calls)
    print("| era | server | instructions per call | x floor |")
    print("|---|---|---:|---:|")
    for (server, era), count in figures.items():
        floor = figures.get(("floor", era))
        ratio = f"{count / floor:.2f}" if floor else "-"
        print(f"| {era} | {server} | {count:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
