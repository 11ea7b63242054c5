"""A stdio server's stdout carries MCP messages only (stdio.mdx: a server MUST NOT write anything
else to it): what a tool prints, writes to descriptor 1 or lets a child process write there goes
to stderr while the runner serves, and stdout is the program's again when it returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import ROOT
from tests.server.servers import request

SERVER = textwrap.dedent(
    """
    import os, subprocess, sys
    from mcpgen.v2026_07_28.server import App

    app = App("printer", surface=None)

    @app.tool()
    def noisy() -> str:
        \"\"\"Write to stdout three ways.\"\"\"
        print("printed by the tool")
        os.write(1, b"written to descriptor 1\\n")
        subprocess.run([sys.executable, "-c", "print('printed by a child')"], check=True)
        return "done"

    app.run_stdio()
    print("after serving")  # the program's stdout again
    """
)


@pytest.mark.parametrize("stdout", ["pipe", "file"])
def test_what_a_tool_prints_goes_to_stderr_and_stdout_carries_only_messages(stdout: str, tmp_path: object) -> None:
    call = request(1, "tools/call", {"name": "noisy"})
    env = {**os.environ, "PYTHONPATH": str(ROOT / "generated")}
    env.pop("PYTHONUNBUFFERED", None)  # a pipe's stdout is block-buffered, as under a host
    out_path = os.path.join(str(tmp_path), "out.jsonl")
    with open(out_path, "wb") as out_file:
        done = subprocess.run(
            [sys.executable, "-c", SERVER],
            input=(json.dumps(call) + "\n").encode(),
            stdout=subprocess.PIPE if stdout == "pipe" else out_file,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
            check=True,
        )
    written = (done.stdout if stdout == "pipe" else open(out_path, "rb").read()).decode().splitlines()
    *messages, last = written
    assert [json.loads(line)["result"]["content"][0]["text"] for line in messages] == ["done"]
    assert last == "after serving"
    err = done.stderr.decode()
    for text in ("printed by the tool", "written to descriptor 1", "printed by a child"):
        assert text in err


CLOSED_STDERR = textwrap.dedent(
    """
    import sys
    data = open(sys.argv[1], "w")  # takes descriptor 2: the process was started without stderr
    from mcpgen.v2026_07_28.server import App

    app = App("printer")  # no surface module: its warning has no stderr to go to either

    @app.tool()
    def noisy() -> str:
        \"\"\"Print.\"\"\"
        print("printed by the tool")
        return "done"

    app.run_stdio()
    """
)


def test_without_stderr_what_a_tool_prints_goes_nowhere_not_into_a_file_or_the_stream(tmp_path: object) -> None:
    """A process started with stderr closed: descriptor 2 is the next file it opens, not stderr;
    printing is dropped (it went into that file), and the runtime's warnings do not fall back to
    stdout (``print(file=None)`` writes there)."""
    data = os.path.join(str(tmp_path), "data.txt")
    done = subprocess.run(
        [sys.executable, "-c", CLOSED_STDERR, data],
        input=(json.dumps(request(1, "tools/call", {"name": "noisy"})) + "\n").encode(),
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "generated")},
        preexec_fn=lambda: os.close(2),
        timeout=60,
        check=True,
    )
    (line,) = done.stdout.decode().splitlines()
    assert json.loads(line)["result"]["content"][0]["text"] == "done"
    assert open(data).read() == ""
