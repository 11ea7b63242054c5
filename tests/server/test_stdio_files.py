"""The stdio runner on whatever the host hands it as stdin and stdout (issue 10 item 9).

A host usually spawns a stdio server on pipes, but ``python -m server < requests.jsonl >
replies.jsonl``, ``/dev/null``, and a socket (inetd-style, or one end of a socket pair) are all
stdin/stdout too. Each combination below runs the everything server as a child process with one
conversation (legacy handshake, then many pings, then a tool call) and checks that every request
is answered once, in a file, pipe or socket, and that the process exits 0 at end of input.

Input from a file has no live client behind it: past ``max_inflight`` a request waits for a
place instead of being refused (unless a server->client request awaits an answer that only the
rest of the file can bring), and at the end of the file requests in flight are waited for
rather than cancelled after the grace period.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import pytest
from mcpgen._runtime.server.transports.stdio import SHUTDOWN_GRACE

from tests.hostile.probe import SERVE, env, initialize, modern
from tests.server.servers import stop

NAP = Path(__file__).with_name("nap_server.py")
SAMPLING = {"sampling": {}}

PINGS = 200  # under the server's max_inflight (256): past it a request on a pipe is refused, by design
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


def run(
    stdin: IO[bytes] | int, stdout: IO[bytes] | int | socket.socket, *args: str, script: Path = SERVE
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(script), "--stdio", *args], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, env=env()
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


def lines(*messages: Any) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def tool(rid: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def handshake(capabilities: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [initialize(0, "2025-11-25", capabilities), {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def replies_to(requests: bytes, tmp_path: Path, *args: str, script: Path = SERVE) -> dict[Any, Any]:
    """Serve ``requests`` from a file into a file (``server < requests > replies``); the replies by id."""
    infile, outfile = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    infile.write_bytes(requests)
    with infile.open("rb") as stdin, outfile.open("wb") as stdout:
        proc = run(stdin, stdout, *args, script=script)
        try:
            _, err = proc.communicate(timeout=60)  # a server stuck on the file fails here, not in minutes
        finally:
            stop(proc)
    assert proc.returncode == 0 and b"Traceback" not in err, err.decode(errors="replace")[-2000:]
    replies = [json.loads(line) for line in outfile.read_bytes().splitlines()]
    by_id = {r["id"]: r for r in replies}
    assert len(by_id) == len(replies), "an id answered twice"
    return by_id


def test_a_file_of_many_requests_gets_every_answer(tmp_path: Path) -> None:
    """Four times ``max_inflight`` tool calls in a file: all answered, none refused (a pipe
    refuses most of them: tests/hostile/test_stdio_bounded.py)."""
    calls = 1000
    by_id = replies_to(lines(*handshake(), *(tool(n, "test_simple_text") for n in range(1, calls + 1))), tmp_path)
    assert sorted(by_id) == list(range(calls + 1))
    refused = [r for r in by_id.values() if "error" in r]
    assert not refused, f"{len(refused)} refused: {refused[0]}"
    assert all(by_id[n]["result"]["content"][0]["type"] == "text" for n in range(1, calls + 1))


def test_a_request_in_flight_past_the_grace_period_is_answered_from_a_file(tmp_path: Path) -> None:
    """At the end of a file a request in flight is waited for; at the end of a pipe (the client
    left) it is cancelled once ``SHUTDOWN_GRACE`` is over, as before. Both run at once."""
    seconds = SHUTDOWN_GRACE + 0.5
    requests = lines(*handshake(), tool(1, "nap", seconds=seconds), {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    infile, outfile = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    infile.write_bytes(requests)
    with infile.open("rb") as stdin, outfile.open("wb") as stdout:
        from_file = run(stdin, stdout, script=NAP)
        over_pipe = run(subprocess.PIPE, subprocess.PIPE, script=NAP)
        assert over_pipe.stdin is not None and over_pipe.stdout is not None
        over_pipe.stdin.write(requests)
        over_pipe.stdin.close()
        piped = over_pipe.stdout.read()
        finish(over_pipe)
        finish(from_file)
    by_id = {r["id"]: r for r in map(json.loads, outfile.read_bytes().splitlines())}
    assert sorted(by_id) == [0, 1, 2]
    assert by_id[1]["result"]["content"][0]["text"] == f"slept {seconds:g} s"
    assert sorted(json.loads(line)["id"] for line in piped.splitlines()) == [0, 2]


def test_a_file_whose_requests_wait_on_the_client_is_read_on(tmp_path: Path) -> None:
    """Requests waiting for the client's answers hold every place: the next request is refused
    rather than waited for, since the answers come after it in the file."""
    limits = json.dumps({"max_inflight": 2})
    answer = {"role": "assistant", "content": {"type": "text", "text": "t"}, "model": "m"}
    requests = lines(
        *handshake(SAMPLING),
        tool(1, "test_sampling", prompt="p"),
        tool(2, "test_sampling", prompt="q"),
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        *({"jsonrpc": "2.0", "id": f"mcpgen-{k}", "result": answer} for k in (1, 2)),
    )
    by_id = replies_to(requests, tmp_path, "--limits", limits)
    asked = sorted(rid for rid, r in by_id.items() if r.get("method") == "sampling/createMessage")
    assert asked == ["mcpgen-1", "mcpgen-2"]
    assert by_id[1]["result"]["content"][0]["text"] == "LLM response: t"
    assert by_id[2]["result"]["content"][0]["text"] == "LLM response: t"
    assert by_id[3]["error"]["code"] == -32600 and "in flight" in by_id[3]["error"]["message"]


def test_a_question_the_file_never_answers_fails_at_its_end(tmp_path: Path) -> None:
    """A request waiting for the client at the end of the file is answered with an error at
    once, not after the server->client request's timeout (minutes)."""
    by_id = replies_to(lines(*handshake(SAMPLING), tool(1, "test_sampling", prompt="p")), tmp_path)
    assert by_id["mcpgen-1"]["method"] == "sampling/createMessage"
    assert by_id[1]["error"]["code"] == -32603
    assert "input ended" in by_id[1]["error"]["message"]


def test_a_second_signal_ends_a_server_waiting_on_a_file(tmp_path: Path) -> None:
    """The first SIGTERM stops the reading and waits for the requests in flight (a listen stream
    ends with its result); the second ends the process instead of waiting for a long tool."""
    listen = modern("sub-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    infile = tmp_path / "requests.jsonl"
    infile.write_bytes(lines(listen, modern(1, "tools/call", {"name": "nap", "arguments": {"seconds": 60}})))
    with infile.open("rb") as stdin:
        proc = run(stdin, subprocess.PIPE, script=NAP)
        assert proc.stdout is not None
        try:
            ack = json.loads(proc.stdout.readline())
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            proc.send_signal(signal.SIGTERM)
            torn_down = json.loads(proc.stdout.readline())  # the first signal is handled: listen ends
            assert torn_down["method"] == "notifications/cancelled" and torn_down["params"]["requestId"] == "sub-1"
            ended = json.loads(proc.stdout.readline())
            assert ended["id"] == "sub-1" and ended["result"]["resultType"] == "complete"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(10) == -signal.SIGTERM
            assert proc.stdout.read() == b""  # the nap was never answered
        finally:
            stop(proc)


@pytest.mark.parametrize("sink", ["pipe", "socket"])
def test_a_closed_stdout_ends_the_server_without_a_line_per_reply(sink: str) -> None:
    """Found by a hostile-input review: a client that closed the server's stdout (its input
    still open) left the server serving, with asyncio's "pipe closed by peer" on stderr for every
    reply it could not write, until its input ended. Nothing can be answered then: the server
    stops as on SIGTERM, and says nothing per reply."""
    ours, theirs = socket.socketpair() if sink == "socket" else (None, None)
    proc = run(subprocess.PIPE, subprocess.PIPE if theirs is None else theirs)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        proc.stdin.write(lines(*handshake({"elicitation": {"form": {}}})))
        proc.stdin.flush()
        if ours is None:
            assert proc.stdout is not None
            assert json.loads(proc.stdout.readline())["id"] == 0
            # a request in flight (it waits on the client's answer), so the server takes its grace
            # period to end while the client goes on writing (each chunk read past the input's
            # end was a traceback: a review of the diff)
            proc.stdin.write(lines(tool("held", "test_elicitation", message="m")))
            proc.stdin.flush()
            assert b"elicitation/create" in proc.stdout.readline()
            proc.stdout.close()  # the read end, ours: the server's writes now fail
        else:
            assert theirs is not None
            theirs.close()
            ours.settimeout(30)
            assert b'"id":0' in ours.recv(65536)
            ours.close()
        for n in range(1, 51):
            try:
                proc.stdin.write(lines({"jsonrpc": "2.0", "id": n, "method": "ping"}))
                proc.stdin.flush()
            except BrokenPipeError:  # the server has gone already
                break
            time.sleep(0.05)
        proc.wait(timeout=30)  # its input is still open: only the lost output ends it
        err = proc.stderr.read().decode(errors="replace")
    finally:
        stop(proc)
    assert proc.returncode == 0, err[-2000:]
    assert err.count("pipe closed by peer") + err.count("socket.send() raised exception") <= 1, err[-2000:]
    assert "Traceback" not in err, err[-2000:]
