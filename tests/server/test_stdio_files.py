"""The stdio runner on whatever the host hands it as stdin and stdout (issue 10 item 9).

A host usually spawns a stdio server on pipes, but ``python -m server < requests.jsonl >
replies.jsonl``, ``/dev/null``, and a socket (inetd-style, or one end of a socket pair) are all
stdin/stdout too. Each combination below runs the everything server as a child process with one
conversation (legacy handshake, then many pings, then a tool call) and checks that every request
is answered once, in a file, pipe or socket, and that the process exits 0 at end of input.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

import pytest

from tests.hostile.probe import SERVE, env, initialize

PINGS = 200  # under the server's max_inflight (256): past it a request is refused, by design
PAD = {"_meta": {"pad": "x" * 2000}}  # 400 KB of input: the file reader pauses and resumes


def conversation() -> bytes:
    messages: list[Any] = [initialize(0, "2025-11-25"), {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [{"jsonrpc": "2.0", "id": n, "method": "ping", "params": PAD} for n in range(1, PINGS + 1)]
    messages.append({"jsonrpc": "2.0", "id": "last", "method": "tools/list"})
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def assert_answered(output: bytes) -> None:
    replies = [json.loads(line) for line in output.splitlines() if line.strip()]
    ids = [r.get("id") for r in replies]
    assert sorted(map(str, ids)) == sorted(map(str, [0, *range(1, PINGS + 1), "last"])), ids[-5:]
    by_id = {r["id"]: r for r in replies}
    assert by_id[0]["result"]["protocolVersion"] == "2025-11-25"
    assert all(by_id[n] == {"jsonrpc": "2.0", "id": n, "result": {}} for n in range(1, PINGS + 1))
    assert any(t["name"] == "test_simple_text" for t in by_id["last"]["result"]["tools"])


def run(stdin: IO[bytes] | int, stdout: IO[bytes] | int | socket.socket) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(SERVE), "--stdio"], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env()
    )


def finish(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stderr is not None
    err = proc.stderr.read()  # until the process ends (stdin may be owned by a feeding thread)
    proc.wait(timeout=120)
    assert proc.returncode == 0, err.decode(errors="replace")[-2000:]
    assert b"Traceback" not in err, err.decode(errors="replace")[-2000:]


@pytest.mark.parametrize("source", ["file", "pipe"])
@pytest.mark.parametrize("sink", ["file", "pipe"])
def test_files_and_pipes(tmp_path: Path, source: str, sink: str) -> None:
    requests, answers = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    requests.write_bytes(conversation())
    with requests.open("rb") as infile, answers.open("wb") as outfile:
        proc = run(infile if source == "file" else subprocess.PIPE, outfile if sink == "file" else subprocess.PIPE)
        if source == "pipe":
            assert proc.stdin is not None
            threading.Thread(target=feed, args=(proc.stdin, requests.read_bytes()), daemon=True).start()
        output = proc.stdout.read() if proc.stdout is not None else b""
        finish(proc)
    assert_answered(output if sink == "pipe" else answers.read_bytes())


def feed(pipe: IO[bytes], data: bytes) -> None:
    with pipe:
        pipe.write(data)


def test_dev_null_in_ends_at_once(tmp_path: Path) -> None:
    answers = tmp_path / "replies.jsonl"
    with open("/dev/null", "rb") as devnull, answers.open("wb") as outfile:
        finish(run(devnull, outfile))
    assert answers.read_bytes() == b""


def test_a_pipe_in_and_a_socket_out(tmp_path: Path) -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = run(subprocess.PIPE, theirs)
        theirs.close()
        assert proc.stdin is not None
        threading.Thread(target=feed, args=(proc.stdin, conversation()), daemon=True).start()
        received = b""
        ours.settimeout(120)
        while chunk := ours.recv(65536):
            received += chunk
        finish(proc)
    assert_answered(received)


def test_a_socket_half_closed_gets_every_reply(tmp_path: Path) -> None:
    """The peer sends everything and shuts its side for writing before reading a byte."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        proc = run(theirs.fileno(), theirs)
        theirs.close()
        ours.settimeout(120)
        sender = threading.Thread(target=ours.sendall, args=(conversation(),), daemon=True)
        sender.start()
        sender.join(timeout=120)
        ours.shutdown(socket.SHUT_WR)
        received = b""
        while chunk := ours.recv(65536):
            received += chunk
        finish(proc)
    assert_answered(received)
