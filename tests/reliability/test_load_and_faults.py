"""A scaffolded server under bounded load and faults, over HTTP and stdio, on loopback.

Whatever one client does (disconnect mid-request, cancel, trigger a raising or hanging
handler, send an oversized body, trickle its headers), the server answers the others and
keeps serving; a handler's exception is -32603 with none of its text or traceback.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcpgen._runtime.tls import default_context

from tests.reliability.driver import (
    call,
    http_headers,
    http_load,
    scaffold,
    server_env,
    start_http,
    stdio_load,
)
from tests.server.servers import free_port, stop


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scaffold(tmp_path_factory.mktemp("reliability"))


@pytest.fixture(scope="module")
def server(project: Path) -> Iterator[str]:
    port = free_port()
    proc = start_http(project, port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop(proc)
    assert proc.returncode is not None


def post(url: str, message: dict[str, object], tool: str, **kwargs: object) -> httpx.Response:
    options = {"verify": default_context(), **kwargs}
    return httpx.post(url, json=message, headers=http_headers(tool), timeout=10, **options)  # type: ignore[arg-type]


def echo_works(url: str) -> bool:
    reply = post(url, call(99, "echo", text="still here"), "echo")
    return reply.status_code == 200 and reply.json()["result"]["content"][0]["text"] == "still here"


def test_http_load_is_served_without_errors(server: str) -> None:
    figures = asyncio.run(http_load(server, clients=8, per_client=60))
    assert (figures.served, figures.errors) == (480, 0)
    print("\n" + figures.row("HTTP, 8 clients x 60"))


def test_stdio_load_is_served_without_errors(project: Path) -> None:
    figures = asyncio.run(stdio_load(project, in_flight=32, total=600))
    assert (figures.served, figures.errors) == (600, 0)
    print("\n" + figures.row("stdio, 32 in flight x 600"))


def test_a_raising_handler_is_32603_without_leaking_and_the_server_serves_on(server: str) -> None:
    reply = post(server, call(1, "fail"), "fail")
    body = reply.json()
    assert body["error"] == {"code": -32603, "message": "Internal error"}
    assert "secret" not in reply.text and "Traceback" not in reply.text
    assert echo_works(server)


def test_a_hanging_handler_times_out_while_others_are_served(server: str) -> None:
    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(timeout=10) as client:
            hang = asyncio.create_task(client.post(server, json=call(2, "hang"), headers=http_headers("hang")))
            echo = await client.post(server, json=call(3, "echo", text="x"), headers=http_headers("echo"))
            assert not hang.done()  # the echo was answered while the hang was still pending
            return await hang, echo

    hang, echo = asyncio.run(go())
    assert echo.json()["result"]["content"][0]["text"] == "x"
    error = hang.json()["error"]
    assert error["code"] == -32603 and "within 1 s" in error["message"]


def test_a_client_that_disconnects_mid_request_does_not_hurt_others(server: str) -> None:
    host, port = server.split("//")[1].split("/")[0].split(":")
    body = json.dumps(call(4, "slow", ms=300)).encode()
    head = "".join(f"{k}: {v}\r\n" for k, v in http_headers("slow").items())
    for _ in range(20):
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(
                f"POST /mcp HTTP/1.1\r\nhost: {host}:{port}\r\n{head}content-length: {len(body)}\r\n\r\n".encode()
            )
            sock.sendall(body)
        # closed before the answer
    assert echo_works(server)


def test_an_oversized_body_is_413_and_the_server_serves_on(server: str) -> None:
    huge = call(5, "echo", text="x" * (5 * 1024 * 1024))
    reply = post(server, huge, "echo")
    assert reply.status_code == 413
    assert echo_works(server)


def test_a_slow_loris_client_does_not_block_others(server: str) -> None:
    host, port = server.split("//")[1].split("/")[0].split(":")
    lorises = [socket.create_connection((host, int(port)), timeout=5) for _ in range(16)]
    try:
        for sock in lorises:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-le")  # and nothing more, for now
        assert echo_works(server)
        for sock in lorises:
            sock.sendall(b"ngth: 100\r\n\r\n{")  # a body that never completes
        assert echo_works(server)
    finally:
        for sock in lorises:
            sock.close()
    assert echo_works(server)


def test_malformed_json_is_a_parse_error_and_the_server_serves_on(server: str) -> None:
    reply = httpx.post(server, content=b'{"jsonrpc": "2.0", "id": 1,', headers=http_headers("echo"), timeout=10)
    assert reply.json()["error"]["code"] == -32700
    assert echo_works(server)


def test_stdio_cancel_raise_and_hang_leave_the_server_serving(project: Path) -> None:
    lines = [
        call(1, "hang"),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        call(2, "fail"),
        b"{not json",
        call(3, "hang"),  # times out after one second
        call(4, "echo", text="last"),
    ]
    stdin = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
    done = subprocess.run(
        [sys.executable, "-m", "loadsrv"],
        input=stdin,
        capture_output=True,
        cwd=project,
        env=server_env(),
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {r.get("id"): r for r in replies}
    assert 1 not in by_id  # cancelled: nothing more is sent for it
    assert by_id[2]["error"] == {"code": -32603, "message": "Internal error"}
    assert by_id[None]["error"]["code"] == -32700
    assert by_id[3]["error"]["code"] == -32603
    assert by_id[4]["result"]["content"][0]["text"] == "last"
    assert b"secret internal detail" in done.stderr  # the traceback goes to the server's log
