"""A scripted stdio MCP server for the client's edge cases: ``python fake_server.py MODE``.

Modes: ``legacy`` (answers initialize, tools; -32601 to server/discover), ``exit-on-probe``
(exits when probed with server/discover), ``silent-probe`` (never answers the probe),
``old-versions`` (-32022 to modern requests, listing 2025-11-25), ``lists-legacy`` (a
DiscoverResult whose supportedVersions lists 2025-11-25 only, then legacy), ``garbled-32022`` (legacy, but
-32022 without its data to the probe), ``mrtr`` (modern; tools/call
answers input_required, advancing requestState each round, complete after round 3; the
final text lists the states it was sent; ``subscriptions/listen`` is acknowledged, then torn
down with a ``notifications/cancelled`` naming it, as cancellation.mdx has a server do on
stdio), ``ignore-eof`` (legacy, but ignores stdin EOF), ``slow-initialize`` (legacy, never answers
``initialize``), ``deaf`` (as ``mrtr`` until it has answered the
probe, then it never reads stdin again).
In every mode ``tools/call`` of ``hang`` never answers, of ``then-exit`` answers its pid and
exits, of ``unreadable`` answers with an error whose id is null (``wordy-unreadable``: its
message 10 MB), of ``huge`` with 20 MiB of text,
of ``asks-then-cancels`` after a sampling request it cancels at once (``answered-after-cancel``
lists the ids of those the client answered all the same), of ``chatty`` after a notification no
revision has, of ``bad-id-request`` with what the client answered to a request whose id is an
object; ``longer-than-a-line`` writes 65 MiB on one line, then its answer, ``exit-leaving-a-child`` exits (code
5) leaving a process that holds its stdout, ``close-stdout`` closes stdout and runs on,
``start-a-child`` starts a process that sleeps 30 s and answers its pid (``start-a-stubborn-child``:
one that ignores SIGTERM). Every
message received is logged to stderr as ``got METHOD``.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

MODE = sys.argv[1]
MODERN_META = "io.modelcontextprotocol/protocolVersion"


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(rid: Any, value: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": value})


def error(rid: Any, code: int, message: str, data: Any = None) -> None:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    send({"jsonrpc": "2.0", "id": rid, "error": body})


def text(value: str, modern: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"content": [{"type": "text", "text": value}]}
    if modern:
        out["resultType"] = "complete"
    return out


CANCELLED_ASKS: list[str] = []  # sampling requests sent by asks-then-cancels, each cancelled at once
ANSWERED_AFTER_CANCEL: list[Any] = []  # the ids of those the client answered all the same
ANSWERS_TO_THE_SERVER: list[Any] = []  # what a modern client answered to a server's request (nothing)
ASKED_WITH_A_BAD_ID: list[Any] = []  # the tools/call waiting for the client's answer to such a request
MANY = 60  # asks-many: sampling requests sent at once
MANY_ANSWERED: list[Any] = []  # the ids of those answered
MANY_WAITING: list[Any] = []  # the tools/call answered once all are


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    rid = message.get("id")
    params = message.get("params") or {}
    print(f"got {method}", file=sys.stderr, flush=True)
    if method is None and rid == "srv-1":  # the client's answer to asks-the-client's request
        ANSWERS_TO_THE_SERVER.append(message)
        return
    if method is None and rid in CANCELLED_ASKS:  # an answer to a request this server cancelled
        ANSWERED_AFTER_CANCEL.append(rid)
        return
    if method is None and rid == "roots-1":  # asks-many-and-roots: the roots answered
        return
    if method is None and isinstance(rid, str) and rid.startswith("many-"):  # asks-many's answers
        MANY_ANSWERED.append(rid)
        if len(MANY_ANSWERED) == MANY and MANY_WAITING:
            result(MANY_WAITING.pop(), text(str(len(MANY_ANSWERED)), False))
        return
    if method is None and ASKED_WITH_A_BAD_ID:  # the client's answer: the tool call's text
        result(ASKED_WITH_A_BAD_ID.pop(), text(json.dumps(message, sort_keys=True), False))
        return
    if rid is None:
        return
    modern = MODERN_META in (params.get("_meta") or {})
    if method == "server/discover":
        if MODE == "exit-on-probe":
            sys.exit(3)
        if MODE == "silent-probe":
            return
        if MODE == "old-versions":
            error(rid, -32022, "unsupported", {"supported": ["2025-11-25"], "requested": "2026-07-28"})
            return
        if MODE == "garbled-32022":  # a legacy server using the code for something else
            error(rid, -32022, "something else", "garbage")
            return
        if MODE in ("mrtr", "deaf", "lists-legacy"):
            result(
                rid,
                {
                    "resultType": "complete",
                    "supportedVersions": ["2025-11-25"] if MODE == "lists-legacy" else ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "ttlMs": 0,
                    "cacheScope": "private",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}},
                },
            )
            return
        error(rid, -32601, "Method not found")
        return
    if method == "initialize":
        if MODE == "slow-initialize":
            return
        requested = params.get("protocolVersion")
        version = requested if requested in ("2025-03-26", "2025-06-18", "2025-11-25") else "2025-06-18"
        said = json.dumps(params.get("capabilities"), sort_keys=True)  # what the client declared, for tests
        declared: dict[str, Any] = {"tools": {}}
        if os.environ.get("FAKE_DECLARES_SUBSCRIBE"):  # declared, not implemented: a subscribe fails
            declared["resources"] = {"subscribe": True}
        answer = {
            "protocolVersion": version,
            "capabilities": declared,
            "serverInfo": {"name": "fake", "version": "1"},
        }
        result(rid, {**answer, "instructions": f"you declared {said}"})
        return
    if method == "tools/list":
        tool = {"name": "echo", "inputSchema": {"type": "object"}}
        listing: dict[str, Any] = {"tools": [tool]}
        if modern:
            listing.update({"resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
        result(rid, listing)
        return
    if method == "subscriptions/listen" and MODE == "mrtr":
        meta = {"io.modelcontextprotocol/subscriptionId": rid}
        acknowledged = {"notifications": {"toolsListChanged": True}, "_meta": meta}
        send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": acknowledged})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": meta}})
        # what the acknowledgement did not agree to: a client drops it (subscriptions.mdx)
        send({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {"_meta": meta}})
        updated = {"_meta": meta, "uri": "x://not-subscribed"}
        send({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": updated})
        send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}})
        return
    if method == "tools/call":
        if params.get("name") == "then-exit":  # answers with its pid, then the process is gone
            result(rid, text(str(os.getpid()), modern))
            os._exit(0)
        if params.get("name") == "ping-flood":  # 20,000 pings, its answer, then 2 s reading nothing
            sys.stdout.write("".join(f'{{"jsonrpc":"2.0","id":"p{i}","method":"ping"}}\n' for i in range(20000)))
            result(rid, text("flooded", modern))
            time.sleep(2)
            return
        if params.get("name") == "notify-flood":  # 12,000 list changes and 5,000 log messages, then the answer
            changed = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
            logged = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n'
            sys.stdout.write(changed * 12000 + logged * 5000)
            result(rid, text("notified", modern))
            return
        if params.get("name") in ("asks-many", "asks-many-and-roots"):  # MANY samplings; answered when all are
            MANY_WAITING.append(rid)
            prompt = {"role": "user", "content": {"type": "text", "text": "hi"}}
            for i in range(MANY):
                ask = {"messages": [prompt], "maxTokens": 5}
                send({"jsonrpc": "2.0", "id": f"many-{i}", "method": "sampling/createMessage", "params": ask})
            if params["name"] == "asks-many-and-roots":
                send({"jsonrpc": "2.0", "id": "roots-1", "method": "roots/list"})
            return
        if params.get("name") in ("loud", "loud-then-exit"):  # 1 MiB on stderr (a pipe holds 64 KiB)
            sys.stderr.write("noise\n" * (1 << 17))
            sys.stderr.flush()
            if params["name"] == "loud-then-exit":
                sys.stderr.write("fatal: out of cheese\n")
                sys.stderr.flush()
                os._exit(3)
            result(rid, text("said a lot", modern))
            return
        if params.get("name") == "wordy-error":  # a 10 MB error message
            error(rid, -32000, "why " * (10 << 18))
            return
        if params.get("name") == "invalid-result":  # content is a list in every revision
            result(rid, {"content": "not a list", **({"resultType": "complete"} if modern else {})})
            return
        if params.get("name") == "longer-than-a-line":  # 65 MiB on one line, past the transport's limit
            for _ in range(65):
                sys.stdout.write("x" * (1 << 20))
            sys.stdout.write("\n")
            result(rid, text("after the long line", modern))
            return
        if params.get("name") == "answer-longer-than-a-line":  # its answer, 65 MiB: past the transport's limit
            head = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": ""}]}})
            sys.stdout.write(head[: head.index('"text": "') + 9])
            for _ in range(65):
                sys.stdout.write("x" * (1 << 20))
            sys.stdout.write('"}]}}\n')
            sys.stdout.flush()
            return
        if params.get("name") == "exit-leaving-a-child":  # exits; a process it started keeps its stdout
            import subprocess

            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(10)"], stdout=sys.stdout)
            os._exit(5)
        if params.get("name") in ("start-a-child", "start-a-stubborn-child"):  # a process that outlives it; its pid
            import subprocess

            stubborn = "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); " * (
                params["name"] != "start-a-child"
            )
            child = subprocess.Popen(
                [sys.executable, "-c", stubborn + "import time; time.sleep(30)"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            result(rid, text(str(child.pid), modern))
            return
        if params.get("name") == "close-stdout":  # closes its output and runs on, answering nothing
            os.close(1)
            while True:
                time.sleep(60)
        if MODE == "mrtr" and params.get("name") == "resumed":  # a caller resuming at requestState S1
            if params.get("requestState") == "S1":  # the next round asks again, keeping no state
                form = {"type": "object", "properties": {"more": {"type": "string"}}}
                ask = {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": "More?", "requestedSchema": form},
                }
                result(rid, {"resultType": "input_required", "inputRequests": {"b": ask}})
                return
            seen = {"requestState": params.get("requestState"), "answers": sorted(params.get("inputResponses") or {})}
            result(rid, text(json.dumps(seen, sort_keys=True), True))
            return
        if MODE == "mrtr" and params.get("name") == "asks-the-client":  # what 2026-07-28 has no servers do
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
            result(rid, text("asked", True))
            return
        if MODE == "mrtr" and params.get("name") == "answers-to-the-server":
            result(rid, text(json.dumps(ANSWERS_TO_THE_SERVER), True))
            return
        if MODE == "mrtr":
            state = params.get("requestState")
            round_ = 0 if state is None else int(state.split("-")[1])
            answers = params.get("inputResponses") or {}
            if round_ >= 3:
                result(rid, text(f"states={state} answer={json.dumps(answers, sort_keys=True)}", True))
                return
            result(
                rid,
                {
                    "resultType": "input_required",
                    "requestState": f"state-{round_ + 1}",
                    "inputRequests": {
                        "who": {
                            "method": "elicitation/create",
                            "params": {
                                "mode": "form",
                                "message": "Who?",
                                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
                            },
                        }
                    },
                },
            )
            return
        if params.get("name") == "hang":
            return
        if params.get("name") == "unreadable":  # as a server that could not read the request's id
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
            return
        if params.get("name") == "wordy-unreadable":  # the same, in 10 MB
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "why " * (10 << 18)}})
            return
        if params.get("name") == "bad-id-request":  # a request whose id is no id; answered with the reply
            ASKED_WITH_A_BAD_ID.append(rid)
            send({"jsonrpc": "2.0", "id": {"not": "an id"}, "method": "ping"})
            return
        if params.get("name") == "asks-then-cancels":  # a sampling request, cancelled at once
            asked = f"ask-{len(CANCELLED_ASKS)}"
            CANCELLED_ASKS.append(asked)
            prompt = {"role": "user", "content": {"type": "text", "text": "hi"}}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": asked,
                    "method": "sampling/createMessage",
                    "params": {"messages": [prompt], "maxTokens": 5},
                }
            )
            send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": asked}})
            result(rid, text("asked", modern))
            return
        if params.get("name") == "answered-after-cancel":  # what the client answered to those
            result(rid, text(json.dumps(ANSWERED_AFTER_CANCEL), modern))
            return
        if params.get("name") == "chatty":  # a notification no revision has, then the answer
            send({"jsonrpc": "2.0", "method": "notifications/vendor/heartbeat", "params": {}})
            result(rid, text("ok", modern))
            return
        if params.get("name") == "nap":  # 2 s without reading its input, then its answer
            time.sleep(2)
            result(rid, text("rested", modern))
            return
        if params.get("name") == "huge":  # its answer, past the client codec's 16 MiB
            result(rid, text("x" * (20 << 20), modern))
            return
        result(rid, text(json.dumps(params.get("arguments", {})), modern))
        return
    error(rid, -32601, "Method not found")


def main() -> None:
    if MODE == "ignore-eof":
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for line in sys.stdin:
        if line.strip():
            message = json.loads(line)
            handle(message)
            if MODE == "deaf" and message.get("method") == "server/discover":
                while True:  # answers the probe, then never reads again: its stdin pipe fills up
                    time.sleep(60)
    if MODE == "ignore-eof":
        while True:
            time.sleep(60)  # a misbehaving server: the client must terminate it


if __name__ == "__main__":
    main()
