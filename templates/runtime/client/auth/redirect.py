"""The user-facing step of the authorization code flow: send the user to the authorization
URL, get back what the authorization server put on the redirect.

A ``Redirect`` is anything with a ``redirect_uri`` and an async ``__call__(url)`` returning
the ``AuthorizationResponse``. ``LoopbackRedirect`` is the one for desktop and command-line
clients (RFC 8252 §7.3): it listens on ``http://127.0.0.1:PORT/callback``, opens the browser
(or prints the URL), and answers the browser when the redirect arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import inspect
import socket
import sys
import threading
import webbrowser
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any, Protocol
from urllib.parse import parse_qsl, urlsplit

READ_TIMEOUT = 5.0  # seconds a connection to the redirect listener has to send its request
DONE_PAGE = (
    b"<!doctype html><html><head><meta charset='utf-8'><title>Authorization</title></head>"
    b"<body><p>Authorization received. You can close this window.</p></body></html>"
)


@dataclass(frozen=True)
class AuthorizationResponse:
    """The query parameters of the redirect back from the authorization endpoint."""

    params: Mapping[str, str]

    def __repr__(self) -> str:  # the code is a credential
        return f"AuthorizationResponse(keys={sorted(self.params)})"

    @classmethod
    def from_url(cls, url: str) -> AuthorizationResponse:
        return cls(dict(parse_qsl(urlsplit(url).query, keep_blank_values=True)))

    @property
    def code(self) -> str | None:
        return self.params.get("code")

    @property
    def state(self) -> str | None:
        return self.params.get("state")

    @property
    def iss(self) -> str | None:
        return self.params.get("iss")

    @property
    def error(self) -> str | None:
        return self.params.get("error")


class Redirect(Protocol):
    """Takes the user through the authorization endpoint and returns its answer."""

    @property
    def redirect_uri(self) -> str: ...

    async def __call__(self, authorization_url: str) -> AuthorizationResponse: ...


def open_in_browser(url: str, out: IO[str] | None = None) -> None:
    """Open ``url`` in the user's browser, and print it for when that is not possible."""
    print(f"Open this URL to authorize the MCP client:\n  {url}", file=out or sys.stderr, flush=True)
    with contextlib.suppress(Exception):
        webbrowser.open(url)


class LoopbackRedirect:
    """Receive the redirect on a loopback port (``port=0``: one chosen by the system, kept
    for the life of this object so that repeated authorizations reuse it).

    ``open_browser(url)`` shows the authorization URL to the user (default: the system
    browser, and the URL printed on stderr); it may be async. ``timeout`` bounds the wait.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        open_browser: Callable[[str], Any] | None = None,
        timeout: float = 300.0,
    ) -> None:
        self.host = host
        self.port = port
        self.path = path
        self.open_browser = open_browser or open_in_browser
        self.timeout = timeout
        self._listener: socket.socket | None = None

    def __repr__(self) -> str:
        return f"LoopbackRedirect({self.redirect_uri!r})"

    def _socket(self) -> socket.socket:
        if self._listener is None:
            family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.bind((self.host, self.port))
            listener.listen(8)
            self._listener = listener
        return self._listener

    @property
    def redirect_uri(self) -> str:
        port = self._socket().getsockname()[1]
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{port}{self.path}"

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    async def __call__(self, authorization_url: str) -> AuthorizationResponse:
        loop = asyncio.get_running_loop()
        arrived: asyncio.Future[AuthorizationResponse] = loop.create_future()

        def deliver(response: AuthorizationResponse) -> None:
            if not arrived.done():
                arrived.set_result(response)

        def from_thread(response: AuthorizationResponse) -> None:
            loop.call_soon_threadsafe(deliver, response)

        server = _CallbackServer(self._socket().dup(), self.path, from_thread)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            shown = self.open_browser(authorization_url)
            if inspect.isawaitable(shown):
                await shown
            try:
                return await asyncio.wait_for(arrived, self.timeout)
            except TimeoutError:
                uri, limit = self.redirect_uri, self.timeout
                raise TimeoutError(f"no authorization response on {uri} within {limit:g} s") from None
        finally:
            await asyncio.to_thread(server.shutdown)
            server.server_close()


class _CallbackServer(http.server.ThreadingHTTPServer):
    """Serves the redirect path on an already listening socket; everything else is 404. Each
    connection has a thread of its own and ``READ_TIMEOUT`` seconds to send its request: an idle
    one (a browser's speculative preconnect, any local process) held the only thread, so the
    redirect was never answered and shutting down waited on it for ever."""

    daemon_threads = True

    def __init__(self, listener: socket.socket, path: str, deliver: Callable[[AuthorizationResponse], None]) -> None:
        super().__init__(listener.getsockname()[:2], _CallbackHandler, bind_and_activate=False)
        self.socket.close()
        self.socket = listener
        self.callback_path = path
        self.deliver = deliver


class _CallbackHandler(http.server.BaseHTTPRequestHandler):
    server: _CallbackServer
    timeout = READ_TIMEOUT

    def do_GET(self) -> None:
        if urlsplit(self.path).path != self.server.callback_path:
            self.send_error(404)
            return
        self.server.deliver(AuthorizationResponse.from_url(self.path))
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(DONE_PAGE)))
        self.end_headers()
        self.wfile.write(DONE_PAGE)

    def log_message(self, format: str, *args: Any) -> None:  # the request line carries the code
        return None
