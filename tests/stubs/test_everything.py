"""Acceptance: a typed client generated from ``@modelcontextprotocol/server-everything`` (npm,
legacy era, stdio).

The snapshot is taken declaring elicitation, sampling and roots, so the server lists the
tools that need them; every listed tool is then called through its typed method with real
handlers answering the server's requests, the one structured tool is parsed into its model,
progress arrives, prompts and resource templates work, and the snapshot round trip and the
drift gate hold against the live server.
"""

from __future__ import annotations

import asyncio
import inspect
import shlex
import subprocess
from pathlib import Path
from typing import Any

import mcpgen
import pytest
from mcpgen._runtime.client import ServerError

from tests.stubs.conftest import cli, imported, tree

pytestmark = pytest.mark.interop  # real peers: npm packages, the official SDK, built wheels

CAPABILITIES = ["--capability", "elicitation", "--capability", "sampling", "--capability", "roots"]


async def elicit(params: Any) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada", "check": True}}


async def sample(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "sampled!"}, "model": "test-model"}


async def roots(params: Any) -> dict[str, Any]:
    return {"roots": [{"uri": "file:///tmp/stub-roots", "name": "stub-roots"}]}


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@pytest.fixture(scope="module")
def generated(everything_command: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("everything-live")
    target = shlex.join(everything_command)
    status, _, stderr = cli("client", "everything_client", "--from-server", target, "--out", str(out), *CAPABILITIES)
    assert status == 0, stderr
    return out


def test_live_and_snapshot_give_identical_packages(generated: Path, tmp_path: Path) -> None:
    snapshot = generated / "everything_client" / "snapshot.json"
    status, _, stderr = cli("client", "everything_client", "--from-snapshot", str(snapshot), "--out", str(tmp_path))
    assert status == 0, stderr
    assert tree(generated / "everything_client") == tree(tmp_path / "everything_client")


def test_no_drift_against_the_live_server(generated: Path, everything_command: list[str]) -> None:
    """--check re-snapshots with the capabilities recorded in the snapshot."""
    status, stdout, stderr = cli(
        "client",
        "everything_client",
        "--check",
        "--from-server",
        shlex.join(everything_command),
        "--out",
        str(generated),
    )
    assert (status, stdout) == (0, ""), stderr


def test_every_tool_through_its_typed_method(generated: Path, everything_command: list[str]) -> None:
    with imported(generated, "everything_client") as stubs:
        calls: dict[str, Any] = {
            "echo": {"message": "hello"},
            "get_annotated_message": {"message_type": "error", "include_image": True},
            "get_env": {},
            "get_resource_links": {"count": 2},
            "get_resource_reference": {"resource_type": "Text", "resource_id": 2},
            "get_roots_list": {},
            "get_structured_content": {"location": "Chicago"},
            "get_sum": {"a": 1, "b": 2.5},
            "get_tiny_image": {},
            "gzip_file_as_resource": {
                "name": "hello.gz",
                "data": "data:text/plain;base64,aGVsbG8=",  # no network: a data URI
                "output_type": "resource",
            },
            "toggle_simulated_logging": {},
            "toggle_subscriber_updates": {},
            "trigger_elicitation_request": {},
            "trigger_long_running_operation": {"duration": 0.3, "steps": 3},
            "trigger_sampling_request": {"prompt": "hello", "max_tokens": 10},
        }
        results: dict[str, Any] = {}
        progress: list[float] = []

        async def scenario() -> None:
            raw = await mcpgen.connect(
                everything_command,
                handlers={"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots},
                cache=None,
                timeout=30,
                probe_timeout=20,
                stderr=subprocess.DEVNULL,
            )
            async with stubs.Client(raw) as client:
                for method, arguments in calls.items():
                    if method == "trigger_long_running_operation":
                        arguments = {**arguments, "on_progress": lambda p: progress.append(p.progress)}
                    results[method] = await getattr(client, method)(**arguments)
                # a tool that only runs as a task: the server's refusal arrives as a typed error
                with pytest.raises((stubs.ToolError, ServerError), match="task"):
                    await client.simulate_research_query(topic="x")
                prompt = await client.prompts.args_prompt(city="Paris")
                assert "Paris" in prompt.messages[0].content.text
                read = await client.resources.dynamic_text_resource(resource_id="3")
                assert read.contents[0].uri == "demo://resource/dynamic/text/3"

        asyncio.run(asyncio.wait_for(scenario(), 120))
        methods = {n for n, _ in inspect.getmembers(stubs.Client, inspect.iscoroutinefunction) if not n.startswith("_")}
        assert methods - {"aclose"} == {*calls, "simulate_research_query"}
        structured = results["get_structured_content"]
        assert isinstance(structured, stubs.models.GetStructuredContentOutput)
        assert type(structured.temperature) in (int, float)  # a number: an integer stays one (36, not 36.0)
        assert isinstance(structured.conditions, str)
        assert text(results["echo"]) == "Echo: hello"
        assert text(results["get_sum"]) == "The sum of 1 and 2.5 is 3.5."
        assert "stub-roots" in text(results["get_roots_list"])
        assert "Ada" in text(results["trigger_elicitation_request"])
        assert "sampled!" in text(results["trigger_sampling_request"])
        assert progress == [1, 2, 3]
        assert results["gzip_file_as_resource"].content[0].resource.uri.endswith("hello.gz")
