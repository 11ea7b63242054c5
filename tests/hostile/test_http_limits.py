"""Issue 17 row 4 and the HTTP limits: headers, bodies and slow clients, against uvicorn on loopback.

- Headers past ``max_header_bytes`` (one huge header, many small ones, a huge request line, a
  huge ``Mcp-*`` value) get 431 at once, read with bounded memory, while other clients are served.
- A client that does not finish its headers within ``header_timeout``, or its body within
  ``body_timeout``, gets 408 and its connection is closed; an idle keep-alive connection is closed.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.hostile.probe import HttpServer, Response, modern, modern_headers, read_response

START = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"


@pytest.fixture(scope="module")
def http() -> Iterator[HttpServer]:
    limits = {"header_timeout": 1.0, "body_timeout": 1.0, "keep_alive_timeout": 1.0, "max_header_bytes": 16384}
    with HttpServer(limits) as server:
        yield server


@pytest.fixture(scope="module")
def default() -> Iterator[HttpServer]:
    with HttpServer() as server:
        yield server


def send_head(server: HttpServer, head: bytes, total: int) -> tuple[Response | None, float]:
    """Stream ``head`` (repeated to ``total`` bytes) as a request's headers; the response and the seconds it took."""
    started = time.monotonic()
    with server.connect() as sock:
        sent = 0
        try:
            sock.sendall(START)
            while sent < total:
                sock.sendall(head)
                sent += len(head)
            sock.sendall(b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before we were done
        try:
            return read_response(sock), time.monotonic() - started
        except (ConnectionError, OSError):
            return None, time.monotonic() - started


def test_a_64_mib_header_is_431_at_once_with_bounded_memory(default: HttpServer) -> None:
    before = default.rss_kib()
    served: list[float] = []

    def others() -> None:  # another client keeps being served meanwhile
        for _ in range(20):
            started = time.monotonic()
            default.alive()
            served.append(time.monotonic() - started)

    thread = threading.Thread(target=others)
    thread.start()
    reply, seconds = send_head(default, b"x-big: " + b"a" * (1 << 20), 64 << 20)
    thread.join(30)
    assert reply is not None and reply.status == 431, reply
    assert seconds < 5
    assert default.rss_kib() - before < 16 * 1024
    assert len(served) == 20 and max(served) < 2, served
    default.alive()


@pytest.mark.parametrize(
    "head",
    [
        b"x-a: " + b"b" * 100 + b"\r\n",  # many small headers
        b"mcp-name: " + b"n" * 100_000,  # one huge Mcp-* value
        b"mcp-param-region: " + b"r" * 100_000,
        b"Mcp-Session-Id: " + b"s" * 100_000,
    ],
    ids=["many-headers", "mcp-name", "mcp-param", "session-id"],
)
def test_oversized_headers_of_every_kind_are_431(http: HttpServer, head: bytes) -> None:
    reply, _ = send_head(http, head, 200_000)
    assert reply is not None and reply.status == 431, reply
    http.alive()


def test_a_huge_request_line_is_431(http: HttpServer) -> None:
    with http.connect() as sock:
        try:
            sock.sendall(b"POST /" + b"m" * 200_000 + b" HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert read_response(sock).status == 431
    http.alive()


def test_headers_just_under_the_limit_are_served(http: HttpServer) -> None:
    body = modern(1, "server/discover")
    padding = "p" * (16384 - 600)
    reply = http.request(body, {**modern_headers(body), "x-padding": padding})
    assert reply.status == 200, reply


def wait_closed(sock: socket.socket, timeout: float) -> bytes:
    """Everything the server sends until it closes the connection (bounded)."""
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


@pytest.mark.parametrize(
    "sent",
    [b"", b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-le", b"POST /mcp HTTP/1.1\r\nhost: 127.0"],
    ids=["nothing", "half-a-header", "half-a-host"],
)
def test_a_stalled_head_is_408_and_closed(http: HttpServer, sent: bytes) -> None:
    started = time.monotonic()
    with http.connect() as sock:
        sock.sendall(sent)
        answer = wait_closed(sock, 10)
    assert time.monotonic() - started < 5
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    http.alive()


def test_a_trickled_head_is_cut_off_at_the_timeout(http: HttpServer) -> None:
    started = time.monotonic()
    with http.connect() as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\n")
        try:
            for n in range(40):  # a header line every 0.1 s: never idle, never done
                sock.sendall(f"x-{n}: y\r\n".encode())
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = wait_closed(sock, 10)
    assert time.monotonic() - started < 4.5
    assert answer.startswith(b"HTTP/1.1 408 "), answer


def test_a_stalled_body_is_408(http: HttpServer) -> None:
    with http.connect() as sock:
        sock.sendall(START + b"content-length: 100\r\n\r\n{")
        reply = read_response(sock)
    assert reply.status == 408, reply
    http.alive()


def serve_one_request(sock: socket.socket) -> None:
    """A modern ``server/discover`` on ``sock``, answered 200: the connection is kept alive."""
    body = modern(1, "server/discover")
    head = "".join(f"{k}: {v}\r\n" for k, v in modern_headers(body).items()).encode()
    data = json.dumps(body).encode()
    sock.sendall(START + head + f"content-length: {len(data)}\r\n\r\n".encode() + data)
    assert read_response(sock).status == 200


def test_an_idle_keep_alive_connection_is_closed(http: HttpServer) -> None:
    with http.connect() as sock:
        serve_one_request(sock)
        started = time.monotonic()
        assert wait_closed(sock, 10) == b""
        assert time.monotonic() - started < 5


def test_a_head_stalled_after_a_served_request_gets_its_full_timeout(http: HttpServer) -> None:
    """The connection's head timer, armed when it opened and left running across keep-alive
    requests, gives a later request's head its full ``header_timeout`` from when it began."""
    with http.connect() as sock:
        serve_one_request(sock)
        time.sleep(0.5)  # half the timer's wait spent (idle: below keep_alive_timeout)
        started = time.monotonic()
        sock.sendall(b"POST /mcp HTTP/1.1\r\nhost: 127.0")
        answer = wait_closed(sock, 10)
    elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert 0.9 <= elapsed < 4.5, elapsed
    http.alive()
