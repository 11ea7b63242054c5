"""The Streamable HTTP client transport, on httpx.

Every message is its own POST; the answer is ``application/json`` (one message) or
``text/event-stream`` (notifications related to the request, then its response). A
legacy server may mint an ``Mcp-Session-Id`` on the ``initialize`` answer: it is sent
back on every later request and ended with DELETE on close; legacy servers also push
unprompted messages on a GET stream. Error statuses whose body is a JSON-RPC error are
delivered as that error (2026 servers answer -32020/-32022 with 400, -32601 with 404);
other failures become ``TransportError`` for the request (``AuthorizationError`` for a 401
or 403). ``auth`` (an ``httpx.Auth``, such as ``client.auth.OAuth``) goes on every request.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import httpx
from pydantic_core import from_json, to_json

from ..codec import DEFAULT_MAX_MESSAGE_SIZE
from ..http_bodies import ACCEPT_ENCODING, bounded, decoded_pieces
from ..jsonrpc import ProtocolError, RequestId, error_envelope
from ..tls import default_context
from .errors import AuthorizationError, TransportError
from .headers import BASE64_PREFIX as BASE64_PREFIX  # their home before headers.py
from .headers import BASE64_SUFFIX as BASE64_SUFFIX
from .headers import encode_header_value as encode_header_value
from .transport import JSONObject, Receiver, Transport

logger = logging.getLogger(__name__)

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
ACCEPT = "application/json, text/event-stream"
DEFAULT_RETRY_MS = 1000
MAX_RETRY_MS = 10**12  # a retry of more digits than this is read as this (the server's delay is respected)
MAX_RESUMES = 5  # resumptions in a row that bring no event and no retry (or fail) before a stream is given up
MAX_ANSWER = DEFAULT_MAX_MESSAGE_SIZE  # bytes of one HTTP answer or SSE line the client reads at most
VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")
END_OF_LINE = re.compile(rb"\r\n|\r|\n")
BOM = b"\xef\xbb\xbf"
HEADER_VALUE = re.compile(rb"[\x20-\x7e\t]*")  # what an event id must be to go back as Last-Event-ID
LINGER = 1.0  # seconds a request's stream may stay open after its response before the client closes it
EVENT_STREAM_WAIT = 2.0  # seconds opening the GET stream waits for the server's answer at most


async def bounded_body(response: httpx.Response, limit: int = MAX_ANSWER) -> bytes:
    """The answer's body, refused (``TransportError``) past ``limit`` bytes, before it is all in
    memory (inflated too: ``http_bodies.decoded_pieces``)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in decoded_pieces(response):
        size += len(chunk)
        if size > limit:
            raise TransportError(f"the server's answer is larger than {limit} bytes", status=response.status_code)
        chunks.append(chunk)
    return b"".join(chunks)


async def bounded_lines(response: httpx.Response, limit: int = MAX_ANSWER) -> AsyncIterator[bytes]:
    """The lines of an event stream, as bytes (CR, LF or CRLF ends one; nothing else does, unlike
    ``bytes.splitlines``; bytes after the last line end are dropped, as is a UTF-8 byte order mark
    opening the stream), refused
    (``TransportError``) past ``limit`` bytes while they are read. An event stream is UTF-8
    whatever its charset says (html.spec.whatwg.org, server-sent events), and neither CR nor LF
    can occur inside a UTF-8 sequence: lines are cut before anything is decoded."""
    parts: list[bytes] = []  # of the line not ended yet
    size = 0
    after_cr = False  # the last chunk ended with a CR: a LF opening the next one is its CRLF's
    opening: bytes | None = b""  # the stream's first bytes, until they are known not to be (all of) a BOM
    async for chunk in decoded_pieces(response):
        if opening is not None:
            opening += chunk
            if len(opening) < len(BOM) and BOM.startswith(opening):
                continue
            chunk, opening = opening.removeprefix(BOM), None
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = False
        start = 0
        for match in END_OF_LINE.finditer(chunk):
            parts.append(chunk[start : match.start()])
            yield b"".join(parts)
            parts, size = [], 0
            start = match.end()
            after_cr = match.group() == b"\r" and start == len(chunk)
        if start < len(chunk):
            parts.append(chunk[start:])
            size += len(chunk) - start
            if size > limit:
                raise TransportError(f"an event stream line is longer than {limit} bytes")
    # what follows the last line end is not a line: the stream ended inside it (an event cut
    # there is incomplete, and the event-stream format discards it)


async def _deliver(
    rid: RequestId | None, response: httpx.Response, cursor: StreamCursor, receiver: Receiver, limit: int = MAX_ANSWER
) -> bool:
    """Hand an event stream's messages to ``receiver``; True once request ``rid``'s response came
    (the rest of the stream is then read briefly and dropped: ``_to_the_end``). ``limit``: bytes
    of one line and of one event's data at most."""
    events = sse_data(bounded_lines(response, limit), cursor, limit)
    async for data in events:
        await receiver.receive(data if rid is None else _as_answer_to(data, rid), stream_of=rid)
        if rid is not None and not receiver.awaiting(rid):
            await _to_the_end(events)
            return True
    return False


async def _to_the_end(events: AsyncIterator[bytes]) -> None:
    """After a request's response: read its stream to the end, briefly, so the connection goes back
    to the pool; a stream the server keeps open past ``LINGER`` s is closed instead (it would hold
    a pooled connection for ever). Messages after the response are dropped (none may come)."""
    with contextlib.suppress(TimeoutError, TransportError, httpx.HTTPError):
        async with asyncio.timeout(LINGER):
            async for _ in events:
                pass


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class HttpTransport(Transport):
    """POST each message to ``url``; read JSON or SSE answers.

    ``client`` lets a caller bring a configured ``httpx.AsyncClient`` (proxies, TLS);
    ``headers`` go on every request; ``timeout`` bounds connecting and each read; ``auth``
    authorizes every request (it overrides the client's own).
    """

    kind = "http"
    cancels_by_closing = True

    def __init__(
        self,
        url: str,
        *,
        client: httpx.AsyncClient | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30.0,
        auth: httpx.Auth | None = None,
        max_message_size: int = MAX_ANSWER,
    ) -> None:
        self.url = url
        self.max_answer = max_message_size  # bytes of one answer, SSE line or event's data read at most
        self.auth = auth
        self._auth: Any = auth if auth is not None else httpx.USE_CLIENT_DEFAULT
        self._own_client = client is None
        self.client = (
            client
            if client is not None
            else httpx.AsyncClient(
                timeout=httpx.Timeout(timeout, read=None),
                verify=default_context(),
                # inflated in bounded pieces; an error's body (which httpx reads itself when the
                # auth flow answers it) refused past the codec's limit
                event_hooks={"response": [bounded(None, max_message_size)]},
            )
        )
        self.headers = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None  # the last MCP-Protocol-Version a message carried
        self._receiver: Receiver | None = None
        self._inflight: dict[RequestId, asyncio.Task[None]] = {}
        self._others: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"HttpTransport({self.url!r})"

    def describe(self) -> str:
        return origin_of(self.url)

    async def start(self, receiver: Receiver) -> None:
        self._receiver = receiver

    def _headers(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        """A request's headers: the session's (``Mcp-Session-Id``, and the ``MCP-Protocol-Version``
        the messages carry, which the spec asks of every request after initialization, GET and
        DELETE too), then ``extra`` (a message's own)."""
        headers = {
            "accept": ACCEPT,
            "accept-encoding": ACCEPT_ENCODING,
            "content-type": "application/json",
            **self.headers,
        }
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version is not None:
            headers[VERSION_HEADER] = self.protocol_version
        if extra:
            headers.update(extra)
        return headers

    async def send(self, message: JSONObject, *, headers: Mapping[str, str] | None = None) -> None:
        if self._receiver is None:
            raise TransportError("the transport is not started")
        body = to_json(message)
        if headers and VERSION_HEADER in headers:
            self.protocol_version = headers[VERSION_HEADER]
        if "method" in message and "id" in message:  # a request: its answer streams back in a task
            rid: RequestId = message["id"]
            task = asyncio.create_task(self._exchange(rid, body, self._headers(headers)))
            self._inflight[rid] = task
            task.add_done_callback(functools.partial(self._done, rid))
            return
        try:  # a notification or a response: 202 Accepted (any body of a success is not read)
            async with self.client.stream(
                "POST", self.url, content=body, headers=self._headers(headers), auth=self._auth
            ) as response:
                if response.status_code >= 400:
                    content = await bounded_body(response, self.max_answer)
                    raise http_error(f"POST {self.url}", response, content, self.auth)
                if 300 <= response.status_code < 400:
                    raise redirected(f"POST {self.url}", response)
        except httpx.HTTPError as exc:
            raise TransportError(f"POST {self.url} failed: {exc!r}") from exc

    def _done(self, rid: RequestId, task: asyncio.Task[None]) -> None:
        if self._inflight.get(rid) is task:
            del self._inflight[rid]

    async def _exchange(self, rid: RequestId, body: bytes, headers: dict[str, str]) -> None:
        receiver = self._receiver
        assert receiver is not None
        try:
            async with self.client.stream("POST", self.url, content=body, headers=headers, auth=self._auth) as response:
                # a legacy session's id; 2026-07-28 has no sessions (streamable-http.mdx: none of
                # the earlier revisions' session mechanisms are part of it), so a modern request's
                # answer (it names its method) sets none, and no DELETE follows on close
                session = response.headers.get(SESSION_HEADER) if "mcp-method" not in headers else None
                if session:
                    if VISIBLE_ASCII.fullmatch(session) is None:  # 2025-11-25: visible ASCII only
                        raise TransportError(f"POST {self.url}: the server's Mcp-Session-Id is not visible ASCII")
                    self.session_id = session
                await self._answer(rid, response, receiver)
        except asyncio.CancelledError:
            raise
        except httpx.HTTPError as exc:
            receiver.transport_failed(rid, TransportError(f"POST {self.url} failed: {exc!r}"))
        except TransportError as exc:
            receiver.transport_failed(rid, exc)
        except Exception as exc:  # whatever else a server's answer provokes fails its request, not the task
            receiver.transport_failed(rid, TransportError(f"POST {self.url} failed: {exc!r}"))

    async def _answer(self, rid: RequestId, response: httpx.Response, receiver: Receiver) -> None:
        status = response.status_code
        ctype = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if status >= 400:
            content = await bounded_body(response, self.max_answer)
            error = _jsonrpc_error(content, rid)
            if status == 404 and SESSION_HEADER in response.request.headers:
                error = None  # the session expired, whatever the body says: the client starts a new one
            if error is None:
                raise http_error(f"POST {self.url}", response, content, self.auth)
            await receiver.receive(error)
            return
        if status == 202:
            raise TransportError(f"POST {self.url}: 202 Accepted for a request", status=status)
        if 300 <= status < 400:
            raise redirected(f"POST {self.url}", response)
        if ctype == "text/event-stream":
            await self._read_stream(rid, response, receiver)
            return
        content = await bounded_body(response, self.max_answer)
        await receiver.receive(_as_answer_to(content, rid), answer_to=rid)
        if receiver.awaiting(rid):
            raise TransportError(f"no response for request {rid!r} in the HTTP answer")

    async def _read_stream(self, rid: RequestId | None, response: httpx.Response, receiver: Receiver) -> None:
        """Deliver an SSE stream's messages. A legacy stream that ends before the request's
        response, having sent an event id, whether the server closed it or the connection broke,
        is resumed with GET and ``Last-Event-ID`` after the server's ``retry`` delay (2025-11-25:
        a server may close streams to be polled), for as long as resumptions bring events or a
        ``retry`` (the server asking to be polled again; at most ``MAX_RESUMES`` in a row that
        bring neither, or fail); without an id, or for a 2026-07-28 request (whose streams are
        not resumable), it is not.
        """
        cursor = StreamCursor()
        resumable = "mcp-method" not in response.request.headers  # a 2026-07-28 request names its method
        try:
            if await _deliver(rid, response, cursor, receiver, self.max_answer):
                return
        except httpx.TransportError:
            if not resumable or cursor.last_id is None:
                raise
        idle = 0  # resumptions in a row that brought nothing
        while resumable and idle < MAX_RESUMES:
            if cursor.last_id is None or (rid is not None and not receiver.awaiting(rid)):
                break
            await asyncio.sleep(cursor.retry_ms / 1000)
            before = (cursor.events, cursor.last_id, cursor.retries)
            headers = self._headers(None)
            headers["accept"] = "text/event-stream"
            headers.pop("content-type", None)
            headers["last-event-id"] = cursor.last_id
            try:
                async with self.client.stream("GET", self.url, headers=headers, auth=self._auth) as resumed:
                    if resumed.status_code != 200:
                        break
                    if await _deliver(rid, resumed, cursor, receiver, self.max_answer):
                        return
            except httpx.TransportError as exc:  # a connection refused or broken: tried again
                logger.debug("resuming the event stream at %s: %r", self.url, exc)
            idle = 0 if (cursor.events, cursor.last_id, cursor.retries) != before else idle + 1
        if rid is not None and receiver.awaiting(rid):
            raise TransportError(f"the event stream for request {rid!r} ended without its response")

    async def abort(self, request_id: RequestId) -> None:
        task = self._inflight.pop(request_id, None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def authorizing(self) -> bool:
        return bool(getattr(self.auth, "authorizing", False))

    async def authorized(self) -> None:
        settle = getattr(self.auth, "authorized", None)
        if settle is not None:
            await settle()

    def authorizations(self) -> int:
        return self._auth_count("authorizations")

    def grants(self) -> int:
        return self._auth_count("grants")

    def _auth_count(self, name: str) -> int:
        """A counter the auth keeps (``OAuth``'s), else 0 (an ``httpx.Auth`` without it)."""
        count = getattr(self.auth, name, 0)
        return count if isinstance(count, int) else 0

    def forget_session(self) -> bool:
        if self.session_id is None:
            return False
        self.session_id = self.protocol_version = None
        return True

    async def open_event_stream(self) -> None:
        """Open the GET stream and return once the server has answered it (the stream is open, or
        refused with 405), at most ``EVENT_STREAM_WAIT`` seconds: what the server pushes after
        ``connect`` returns has a stream to go to (a server drops what it has no stream for), and
        the GET reaches the server before the client's next request. An in-process
        ``httpx.ASGITransport`` answers only when the app returns, so over it the wait is skipped.
        """
        answered = asyncio.Event()
        task = asyncio.create_task(self._listen(answered))
        self._others.add(task)
        task.add_done_callback(self._others.discard)
        if isinstance(getattr(self.client, "_transport", None), httpx.ASGITransport):
            return
        try:
            await asyncio.wait_for(answered.wait(), EVENT_STREAM_WAIT)
        except TimeoutError:
            logger.debug("the server has not answered the event stream at %s in %s s", self.url, EVENT_STREAM_WAIT)

    async def _listen(self, answered: asyncio.Event) -> None:
        receiver = self._receiver
        assert receiver is not None
        headers = self._headers(None)
        headers["accept"] = "text/event-stream"
        headers.pop("content-type", None)
        try:
            async with self.client.stream("GET", self.url, headers=headers, auth=self._auth) as response:
                answered.set()
                if response.status_code != 200:
                    return  # 405: the server pushes nothing unprompted
                await self._read_stream(None, response, receiver)
        except httpx.HTTPError:
            return  # the stream is gone, as when the server ends it
        except TransportError as exc:  # a line or event past the limit: the stream ends, said once
            logger.warning("the server's event stream at %s ended: %s", self.url, exc)
        finally:
            answered.set()

    async def close(self) -> None:
        tasks = [*self._inflight.values(), *self._others]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        try:
            if self.session_id is not None:  # whatever the DELETE meets (an authorization that fails too)
                try:  # its answer is not read (a non-streamed request reads the body whole)
                    async with self.client.stream(
                        "DELETE", self.url, headers=self._headers(None), timeout=5.0, auth=self._auth
                    ):
                        pass
                except Exception as exc:
                    logger.debug("ending the session at %s: %r", self.url, exc)
                self.session_id = None
        finally:
            if self._own_client:
                await self.client.aclose()


def redirected(what: str, response: httpx.Response) -> TransportError:
    """A redirect, not followed by the transport's own client: a message's arguments and headers
    would go where the server says (a client passed in follows its own settings)."""
    where = response.headers.get("location", "nowhere")
    return TransportError(
        f"{what}: HTTP {response.status_code}, a redirect to {where} (not followed: connect to that URL)",
        status=response.status_code,
    )


def http_error(what: str, response: httpx.Response, content: bytes, auth: httpx.Auth | None) -> TransportError:
    """The error for an HTTP error status without a JSON-RPC body; 401 and 403 say what the
    server's challenge asks for.
    """
    status = response.status_code
    if status in (401, 403):
        challenge = ", ".join(response.headers.get_list("www-authenticate"))
        return AuthorizationError(
            f"{what}: HTTP {status}: the server requires authorization"
            + (f" ({challenge})" if challenge else "")
            + ("; connect with auth=OAuth(...)" if status == 401 and auth is None else ""),
            status=status,
            body=content,
        )
    return TransportError(f"{what}: HTTP {status}", status=status, body=content)


def _as_answer_to(content: bytes, rid: RequestId) -> bytes:
    """A message in the answer to the POST of request ``rid``; an error without an id (null, as
    JSON-RPC 2.0 writes the answer to a message whose id the server could not read, or left out,
    as the schemas from 2025-11-25 have it) is about what that POST carried, so it becomes
    ``rid``'s error. Anything else is left as it is."""
    if b'"error"' not in content:  # nearly every message: not parsed twice
        return content
    try:
        value: Any = from_json(content)
    except ValueError:
        return content
    if (
        isinstance(value, dict)
        and value.get("jsonrpc") == "2.0"
        and value.get("id") is None
        and "error" in value
        and "result" not in value
        and "method" not in value
    ):
        return _error_for(value, rid) or content
    return content


def _jsonrpc_error(content: bytes, rid: RequestId) -> bytes | None:
    """An error status's body as a JSON-RPC error response for ``rid``, or None when it is not one."""
    try:
        value: Any = from_json(content)
    except ValueError:
        return None
    return _error_for(value, rid)


def _error_for(value: Any, rid: RequestId) -> bytes | None:
    """A parsed JSON-RPC error (any id) as the error response for ``rid``, or None when it is not one."""
    if not isinstance(value, dict) or not isinstance(value.get("error"), dict):
        return None
    error = value["error"]
    if type(error.get("code")) is not int or not isinstance(error.get("message"), str):
        return None
    return to_json(error_envelope(rid, ProtocolError(error["code"], error["message"], error.get("data"))))


class StreamCursor:
    """Where an SSE stream got to: the last event id, the server's ``retry`` delay and how many
    events it dispatched (priming events included) and ``retry`` fields it read."""

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms = DEFAULT_RETRY_MS
        self.events = 0
        self.retries = 0  # retry fields read: each is the server asking the client to come back


async def sse_data(
    lines: AsyncIterator[bytes], cursor: StreamCursor | None = None, limit: int = MAX_ANSWER
) -> AsyncIterator[bytes]:
    """The ``data`` of each server-sent event, as UTF-8 (what is not UTF-8 becomes U+FFFD), read
    as the event-stream format has it (html.spec.whatwg.org, server-sent events): comments, events
    of another type than ``message`` (an empty type is ``message``) and events without data are
    skipped; an event the stream ends inside is discarded; ``cursor`` takes the last event id when
    an event is dispatched (an empty id, or one that cannot go back as a ``Last-Event-ID`` header,
    leaves the stream not resumable; one with NUL is ignored) and ``retry`` (ASCII digits only).
    An event's data longer than ``limit`` bytes is refused (``TransportError``).
    """
    cursor = cursor if cursor is not None else StreamCursor()
    last_id = cursor.last_id  # the format's "last event ID buffer": it outlives each event
    data: list[bytes] = []
    size = 0
    event = b""
    async for line in lines:
        if line == b"":
            cursor.last_id = last_id
            if data:  # dispatched (a priming event, an id and empty data, carries nothing)
                cursor.events += 1
                if any(data) and event in (b"", b"message"):
                    yield _utf8(b"\n".join(data))
            data, size, event = [], 0, b""
            continue
        if line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        value = value.removeprefix(b" ")
        if name == b"data":
            size += len(value) + 1
            if size > limit:
                raise TransportError(f"an event's data is longer than {limit} bytes")
            data.append(value)
        elif name == b"event":
            event = value
        elif name == b"id" and b"\0" not in value:  # sent back as Last-Event-ID: a header value, or none
            last_id = value.decode() if value and HEADER_VALUE.fullmatch(value) else None
        elif name == b"retry" and value.isdigit():
            cursor.retry_ms = int(value) if len(value) <= 12 else MAX_RETRY_MS
            cursor.retries += 1


def _utf8(data: bytes) -> bytes:
    """``data`` with every byte that is not UTF-8 replaced by U+FFFD (ASCII is left as it is)."""
    return data if data.isascii() else data.decode("utf-8", "replace").encode("utf-8")
