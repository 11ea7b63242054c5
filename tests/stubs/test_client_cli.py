"""``mcp-codegen client`` as a user meets it: exit status 0/1/2, one-line errors, the drift
gate between two snapshot files, and generated files edited by hand."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.stubs.conftest import SDK_SNAPSHOT, cli, imported


def snapshot_with(tmp_path: Path, name: str, change: str) -> Path:
    """The SDK snapshot with one change applied (a server that moved on)."""
    data = json.loads(SDK_SNAPSHOT.read_text(encoding="utf-8"))
    tools = {t["name"]: t for t in data["tools"]}
    if change == "new required argument":
        schema = tools["add"]["inputSchema"]
        schema["properties"]["c"] = {"type": "integer"}
        schema["required"].append("c")
    elif change == "description":
        tools["add"]["description"] = "Adds."
    elif change == "server version":
        data["serverInfo"]["version"] = "9.9.9"
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("change", "fail_on", "status", "lines"),
    [
        ("none", "any", 0, []),
        ("new required argument", "any", 1, ["breaking: tool 'add': new required argument 'c'"]),
        ("new required argument", "breaking", 1, ["breaking: tool 'add': new required argument 'c'"]),
        ("description", "any", 1, ["compatible: tool 'add': description changed"]),
        ("description", "breaking", 0, ["compatible: tool 'add': description changed"]),
        ("server version", "any", 1, ['compatible: server: version "0.3.0" -> "9.9.9"']),
    ],
)
def test_check_two_snapshot_files(tmp_path: Path, change: str, fail_on: str, status: int, lines: list[str]) -> None:
    new = snapshot_with(tmp_path, "new.json", change)
    done = cli("client", "--check", "--baseline", str(SDK_SNAPSHOT), "--from-snapshot", str(new), "--fail-on", fail_on)
    assert done[0] == status, done
    assert done[1].splitlines() == lines
    if status == 1:
        assert done[2].count("\n") == 1 and "change(s) against" in done[2]


def test_check_a_package_against_a_changed_snapshot_and_hand_edits(tmp_path: Path) -> None:
    assert cli("client", "sdk", "--from-snapshot", str(SDK_SNAPSHOT), "--out", str(tmp_path))[0] == 0
    package = tmp_path / "sdk"
    status, stdout, stderr = cli("client", "sdk", "--check", "--out", str(tmp_path))
    assert (status, stdout) == (0, "")
    # no source: it says the server was not compared (it passed silently, as if it had been)
    assert stderr == (
        f"mcp-codegen: no server compared, only the generated files against {package / 'snapshot.json'} "
        "(give --from-server TARGET or --from-snapshot FILE to compare the tools)\n"
    )
    new = snapshot_with(tmp_path, "new.json", "new required argument")
    status, stdout, stderr = cli("client", "sdk", "--check", "--from-snapshot", str(new), "--out", str(tmp_path))
    assert (status, stdout) == (1, "breaking: tool 'add': new required argument 'c'\n")
    assert "regenerate with `mcp-codegen client sdk --from-snapshot ...`" in stderr, stderr  # its name, not NAME
    assert "no server compared" not in stderr
    client = package / "client.py"
    client.write_text(client.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    status, stdout, stderr = cli("client", "sdk", "--check", "--out", str(tmp_path))
    assert status == 1 and stdout == f"stale: client.py does not match {package / 'snapshot.json'}\n"
    assert "1 stale file(s)" in stderr and "no server compared" in stderr
    # regenerating from its own snapshot repairs it
    assert cli("client", "sdk", "--from-snapshot", str(package / "snapshot.json"), "--out", str(tmp_path))[0] == 0
    assert cli("client", "sdk", "--check", "--out", str(tmp_path))[0] == 0


def test_the_summary_counts_in_the_singular_and_the_plural(tmp_path: Path) -> None:
    """It said "1 prompts" and "1 resource templates"."""
    status, stdout, _ = cli("client", "sdk", "--from-snapshot", str(SDK_SNAPSHOT), "--out", str(tmp_path))
    assert status == 0 and ": 16 tools, 1 prompt, 1 resource template (server " in stdout, stdout
    data = json.loads(SDK_SNAPSHOT.read_text(encoding="utf-8"))
    data["tools"], data["prompts"], data["resourceTemplates"] = data["tools"][:1], [], []
    one = tmp_path / "one.json"
    one.write_text(json.dumps(data), encoding="utf-8")
    status, stdout, _ = cli("client", "one", "--from-snapshot", str(one), "--out", str(tmp_path))
    assert status == 0 and ": 1 tool, 0 prompts, 0 resource templates (server " in stdout, stdout


def test_snapshot_text_is_canonical(tmp_path: Path) -> None:
    """Key order and list order do not matter: the same surface gives the same bytes."""
    data = json.loads(SDK_SNAPSHOT.read_text(encoding="utf-8"))
    data["tools"].reverse()
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(data, sort_keys=False, indent=None), encoding="utf-8")
    assert cli("client", "sdk", "--from-snapshot", str(shuffled), "--out", str(tmp_path))[0] == 0
    assert (tmp_path / "sdk" / "snapshot.json").read_bytes() == SDK_SNAPSHOT.read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["client", "--from-snapshot", "x.json"], "say the client's NAME"),
        (["client", "sdk"], "--from-server TARGET or --from-snapshot FILE"),
        (["client", "sdk", "--from-snapshot", "missing.json"], "snapshot missing.json not found"),
        (["client", "sdk", "--from-snapshot", "bad.json"], "bad.json is not valid JSON"),
        (["client", "sdk", "--from-snapshot", "other.json"], "other.json is not an mcp-codegen snapshot"),
        (["client", "sdk", "--from-snapshot", "dup.json"], "tool 'add' is listed twice"),
        (["client", "s-1!", "--from-snapshot", "SDK"], "does not make a Python package name"),
        (["client", "sdk", "--from-snapshot", "SDK", "--runtime", "no such"], "is not a Python package name"),
        (["client", "sdk", "--from-snapshot", "SDK", "--baseline", "SDK"], "--baseline goes with --check"),
        (
            ["client", "sdk", "--from-snapshot", "SDK", "--capability", "roots"],
            "--capability and --protocol-version go with",
        ),
        (
            ["client", "sdk", "--from-server", "x", "--protocol-version", "1999-01-01"],
            "unknown MCP revision '1999-01-01'",
        ),
        (["client", "--check"], "--check needs NAME"),
        (["client", "sdk", "--check"], "snapshot sdk/snapshot.json not found"),
        (["client", "taken", "--from-snapshot", "SDK"], "is not a client package generated by mcp-codegen"),
        (["client", "sdk", "--from-server", "/nonexistent/server --flag"], "cannot snapshot the server"),
        (  # a server that prints what is no JSON-RPC, then exits: the client's warnings join the line
            ["client", "sdk", "--from-server", "PRINTER"],
            "exited (code 0); before that, the server sent a message this client refused: -32600",
        ),
        (["client", "sdk", "--from-server", "x", "--from-snapshot", "y"], "exclude each other"),
        (["client", "sdk", "--from-server", "x", "--capability", "telepathy"], "'telepathy' is not one of"),
    ],
)
def test_user_errors_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    (tmp_path / "other.json").write_text("{}", encoding="utf-8")
    data = json.loads(SDK_SNAPSHOT.read_text(encoding="utf-8"))
    data["tools"].append(data["tools"][0])
    (tmp_path / "dup.json").write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.py").write_text("x = 1\n", encoding="utf-8")
    printer = f"{shlex.quote(sys.executable)} -c 'print(123)'"
    status, stdout, stderr = cli(*[{"SDK": str(SDK_SNAPSHOT), "PRINTER": printer}.get(a, a) for a in args])
    assert status == 2, (stdout, stderr)
    assert stderr.count("\n") == 1 and stderr.startswith("mcp-codegen: error: "), stderr
    assert message in stderr
    assert (tmp_path / "taken" / "mine.py").read_text(encoding="utf-8") == "x = 1\n"


def test_a_request_timeout_is_named_as_such_not_as_the_whole_snapshots(monkeypatch: pytest.MonkeyPatch) -> None:
    """The snapshot's own limit is 4 x the per-request timeout; a request that times out first
    says so (the message claimed 240 s after about 125)."""
    from mcpgen._runtime.client import RequestTimeout

    from mcp_schema_codegen.errors import GeneratorError
    from mcp_schema_codegen.tools import snapshot

    async def one_request_timed_out(*args: object) -> None:
        raise RequestTimeout("no answer to request 3 within 60.0 s")

    async def never(*args: object) -> None:
        await asyncio.sleep(10)

    monkeypatch.setattr(snapshot, "_take", one_request_timed_out)
    with pytest.raises(GeneratorError) as raised:
        snapshot.take_snapshot(["server"], {}, timeout=60.0)
    assert "timed out: no answer to request 3 within 60.0 s" in str(raised.value)
    monkeypatch.setattr(snapshot, "_take", never)
    with pytest.raises(GeneratorError) as raised:
        snapshot.take_snapshot(["server"], {}, timeout=0.01)
    assert "did not answer within 0 s" in str(raised.value)


def test_a_signal_while_snapshotting_ends_the_command_at_once(tmp_path: Path) -> None:
    """The snapshot runs an event loop: the CLI's interrupt leaves it as a KeyboardInterrupt does
    (asyncio kept any other exception on a task, so a signal waited for the timeout)."""
    import signal
    import subprocess
    import sys
    import time

    started = tmp_path / "started"
    hung = f"{sys.executable} -c 'import pathlib, time; pathlib.Path(\"{started}\").touch(); time.sleep(60)'"
    command = [sys.executable, "-m", "mcp_schema_codegen", "client", "demo", "--from-server", hung, "--timeout", "60"]
    child = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not started.exists():  # the CLI is snapshotting (its handlers are in) and the server never answers
            assert child.poll() is None and time.monotonic() < deadline, "the server never started"
            time.sleep(0.01)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=20)
    finally:
        child.kill()
    assert child.returncode == 143 and err == "mcp-codegen: interrupted\n", (child.returncode, err)


SWALLOWS = """
import sys, time
from pathlib import Path
from mcp_schema_codegen.commands import cli

def swallowing(argv):  # a command in which the interrupt is lost (a finalizer drops it)
    Path(sys.argv[1]).touch()
    while True:
        try:
            time.sleep(60)
        except KeyboardInterrupt:
            pass

cli.INTERRUPT_GRACE = 0.5
cli._main = swallowing
sys.argv = ["mcp-codegen", sys.argv[1]]
raise SystemExit(cli.main())
"""


def test_an_interrupt_the_command_loses_still_ends_it_after_a_grace() -> None:
    """Seen once under load: test_a_signal_while_snapshotting_ends_the_command_at_once's command
    outlived its SIGTERM by 20 s (the interrupt is raised in whatever code runs, and one raised in
    a finalizer is dropped). The process's own command ends ``INTERRUPT_GRACE`` s after the
    signal, with its one line and status, whatever the command does with the interrupt."""
    import signal
    import subprocess
    import sys
    import tempfile
    import time

    with tempfile.TemporaryDirectory() as scratch:
        started = Path(scratch) / "started"
        child = subprocess.Popen(
            [sys.executable, "-c", SWALLOWS, str(started)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + 60
            while not started.exists():
                assert child.poll() is None and time.monotonic() < deadline, child.communicate()
                time.sleep(0.01)
            child.send_signal(signal.SIGTERM)
            _, err = child.communicate(timeout=20)
        finally:
            child.kill()
    assert child.returncode == 143 and err == "mcp-codegen: interrupted\n", (child.returncode, err)


def test_an_interrupt_inside_the_snapshots_task_leaves_no_report_behind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The CLI's SIGINT/SIGTERM handler raises ``Interrupted`` in whatever code runs: inside a task,
    asyncio also keeps it as that task's exception, and reported it ("Task exception was never
    retrieved") on stderr when the task was collected, after the command's one line (seen under load
    in test_a_signal_while_snapshotting_ends_the_command_at_once). Here the handler is called from
    the snapshot's own coroutine, as the signal would land there."""
    import gc
    import signal

    from mcp_schema_codegen.commands.cli import Interrupted, _interrupted
    from mcp_schema_codegen.tools import snapshot

    async def interrupted_here(*_args: object) -> None:
        _interrupted(signal.SIGTERM, None)

    monkeypatch.setattr(snapshot, "_take", interrupted_here)
    with pytest.raises(Interrupted):
        snapshot.take_snapshot(["server"], {}, timeout=60.0)
    gc.collect()
    assert not [r for r in caplog.records if r.name == "asyncio"], [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize(
    "ruff_settings",
    [
        # a scaffolded project's own (templates/scaffold/pyproject.toml.j2)
        'line-length = 120\n\n[tool.ruff.lint]\nselect = ["E", "F", "W", "I", "UP", "B"]\n',
        'line-length = 79\n\n[tool.ruff.lint]\nselect = ["E", "W", "F", "I", "N", "D", "ANN", "UP", "B", "RUF"]\n',
    ],
    ids=["a scaffolded project's", "strict, at 79 columns"],
)
def test_a_client_package_in_a_project_passes_the_projects_ruff(tmp_path: Path, ruff_settings: str) -> None:
    """A typed client generated into a project is the generator's (``client --check`` gates its
    bytes): the project's linter and formatter leave it alone, whatever their settings (ruff's rule
    PGH004 aside, which refuses a blanket ``# ruff: noqa`` as such). It was formatted for 100
    columns and held longer lines (our text, the server's descriptions), so the scaffold's own
    ruff test failed once a client was generated beside its package."""
    import shutil
    import subprocess
    import sys

    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "mine"\nversion = "1"\n\n[tool.ruff]\n{ruff_settings}')
    assert cli("client", "sdk", "--from-snapshot", str(SDK_SNAPSHOT), "--out", str(tmp_path))[0] == 0
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    for args in (["check", "--no-cache", "."], ["format", "--no-cache", "--check", "."]):
        done = subprocess.run([ruff, *args], capture_output=True, text=True, cwd=tmp_path, check=False)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert cli("client", "sdk", "--check", "--out", str(tmp_path))[:2] == (0, "")


def test_a_client_typed_with_a_revision_before_structured_output_reads_it(tmp_path: Path) -> None:
    """``--protocol-version 2024-11-05``: that revision's ``CallToolResult`` has no
    ``structuredContent`` field, so the server's structured output came as an unknown key and
    every tool with an output schema raised ``ToolOutputError`` ("the result has no
    structuredContent") on a correct answer."""
    weather = ROOT / "examples" / "weather"
    server = shlex.join([sys.executable, str(weather)])
    args = ["--from-server", server, "--protocol-version", "2024-11-05", "--out", str(tmp_path)]
    status, _, err = cli("client", "old_weather", *args)
    assert status == 0, err
    with imported(tmp_path, "old_weather") as package:

        async def scenario() -> tuple[Any, Any]:
            async with await package.connect([sys.executable, str(weather)], cache=None) as client:
                return await client.add(a=2, b=3), await client.get_forecast(city="Oslo", days=2)

        added, forecast = asyncio.run(scenario())
    assert added.result == 5
    assert forecast.city == "Oslo" and len(forecast.days) == 2


NO_TEMPLATES = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    rid, method = msg.get("id"), msg.get("method")
    if rid is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "no-templates", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    else:  # resources/templates/list among them: declared, not implemented (a TS SDK low-level Server)
        print(json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}))
        sys.stdout.flush()
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}))
    sys.stdout.flush()
"""


def test_a_list_the_server_declares_but_does_not_implement_is_empty_and_said(tmp_path: Path) -> None:
    """Found by a client review: a server declaring ``resources`` without a templates handler
    (-32601) made the whole snapshot fail, "ServerError: -32601 Method not found", naming no
    method; and a server that failed at start said only its exit code, its stderr dropped."""
    script = tmp_path / "no_templates.py"
    script.write_text(NO_TEMPLATES)
    server = shlex.join([sys.executable, str(script)])
    status, _, err = cli(
        "client", "no_templates_client", "--from-server", server, "--out", str(tmp_path / "out"), "--timeout", "20"
    )
    assert status == 0, err
    assert "resources/templates/list: the server answered -32601" in err and "taken as empty" in err
    snapshot = json.loads(next((tmp_path / "out").rglob("*.json")).read_text())
    assert [t["name"] for t in snapshot["tools"]] == ["echo"]
    failing = tmp_path / "failing.py"
    failing.write_text("import sys\nprint('config error: API_KEY is not set', file=sys.stderr)\nsys.exit(1)\n")
    status, _, err = cli("client", "bad_client", "--from-server", shlex.join([sys.executable, str(failing)]))
    assert status == 2 and "config error: API_KEY is not set" in err, err


def test_an_interrupt_a_library_wrapped_is_still_the_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen in CI: SIGTERM landed while pydantic-core built a serializer for the client; it raised
    the CLI's interrupt inside that build, which pydantic-core wrapped in a ``SchemaError``, and
    the snapshot said "cannot snapshot the server: SchemaError ... Interrupted: 15" with status 2.
    A failure with a signal received is the interrupt (143 and "interrupted", as the CLI says)."""
    from mcp_schema_codegen import interrupts
    from mcp_schema_codegen.tools import snapshot

    async def wrapped(*args: Any) -> Any:
        interrupts.SIGNALLED.append(15)  # what the CLI's handler records before it raises
        raise RuntimeError("Error building `literal` serializer: Interrupted: 15")

    monkeypatch.setattr(snapshot, "_take", wrapped)
    monkeypatch.setattr(interrupts, "SIGNALLED", [])
    with pytest.raises(interrupts.Signalled) as caught:
        snapshot.take_snapshot("unused", {}, timeout=1)
    assert caught.value.signum == 15

    async def failed(*args: Any) -> Any:
        raise RuntimeError("the server's own failure")

    interrupts.SIGNALLED.clear()  # a failure with no signal received stays the server's
    monkeypatch.setattr(snapshot, "_take", failed)
    with pytest.raises(snapshot.GeneratorError, match="cannot snapshot the server"):
        snapshot.take_snapshot("unused", {}, timeout=1)
