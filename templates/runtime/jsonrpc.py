"""The wire layer: JSON-RPC 2.0 for every MCP revision.

Error codes, the runtime's one exception, the decoded message types, the checks of what a
peer may put in an envelope (``request_id``, ``is_error_code``), the four envelope builders
(``request_envelope``, ``notification_envelope``, ``result_envelope`` and its bytes form
``result_envelope_bytes``, ``error_envelope``) and their serializers (``dumps``, ``dumps_model``): the only place
in the runtime that writes a JSON-RPC envelope. Nothing here
depends on a revision; the era codecs (``codec.py``) build on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from pydantic_core import from_json, to_json

from .serializer import dumps as fast_dumps

RequestId = str | int

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Modern era (2026-07-28 and later); -32020..-32099 are reserved for the specification.
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

ERROR_NAMES: dict[int, str] = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    HEADER_MISMATCH: "Header mismatch",
    MISSING_REQUIRED_CLIENT_CAPABILITY: "Missing required client capability",
    UNSUPPORTED_PROTOCOL_VERSION: "Unsupported protocol version",
}


MessageKind = Literal["request", "notification", "response"]
MAX_ERROR_CODE = 2**53 - 1  # error codes are integers every JSON peer can hold exactly


def is_error_code(value: object) -> TypeGuard[int]:
    """A JSON-RPC error code: an integer (never a boolean or a float) no peer has to round."""
    return type(value) is int and -MAX_ERROR_CODE <= value <= MAX_ERROR_CODE


class ProtocolError(Exception):
    """The runtime's one exception: a JSON-RPC error with its code, message and data.

    ``data`` is whatever the error carries; for the modern errors with a typed ``data``
    (-32021, -32022) a decoded error holds the typed model.

    Raised by decoding, ``id`` is the offending message's id when it could be read and
    ``kind`` what the message looked like (None: unreadable). A request, or a message too
    broken to tell, needs an error response (``needs_reply``, ``reply()``); a refused
    notification or response gets none.
    """

    def __init__(
        self,
        code: int,
        message: str | None = None,
        data: Any = None,
        *,
        id: RequestId | None = None,
        kind: MessageKind | None = None,
    ) -> None:
        self.code = code
        self.message = message if message is not None else ERROR_NAMES.get(code, "Error")
        self.data = data
        self.id = id
        self.kind = kind
        super().__init__(f"{self.code} {self.message}")

    @property
    def needs_reply(self) -> bool:
        """The peer expects an error response: the message was a request, or unreadable."""
        return self.kind in ("request", None)

    def reply(self, *, null_id: bool = False) -> dict[str, Any]:
        """The JSON-RPC error response to send back (``error_envelope``: an unreadable id left out,
        or null with ``null_id``)."""
        return error_envelope(self.id, self, null_id=null_id)

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC ``error`` member: ``{code, message, data?}``, valid whatever was put in.

        A code that is not a JSON-RPC error code (a float, a string, beyond 2**53) is written as
        -32603, a message that is not a string as its text; ``dumps`` keeps ``data`` plain JSON.
        """
        code = self.code if is_error_code(self.code) else INTERNAL_ERROR
        message = self.message if type(self.message) is str else str(self.message)
        error: dict[str, Any] = {"code": code, "message": message}
        if self.data is not None:
            dump = getattr(self.data, "model_dump", None)
            error["data"] = dump(mode="json") if dump is not None else self.data
        return error

    def __repr__(self) -> str:
        name = type(self).__name__  # a subclass's (ServerError, InvalidAnswer) by its own name
        return f"{name}({self.code}, {self.message!r}, data={self.data!r}, id={self.id!r}, kind={self.kind!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProtocolError):
            return NotImplemented
        return (self.code, self.message, self.data) == (other.code, other.message, other.data)

    __hash__ = Exception.__hash__


class ResourceNotFoundError(ProtocolError):
    """``resources/read`` of a URI the server does not have. Its code is the revision's: -32602
    (``INVALID_PARAMS``) on 2026-07-28, -32002 before (``RevisionEntry.resource_not_found``, from
    the overlay); a legacy session answers with its own revision's."""

    def __init__(self, uri: str, code: int = INVALID_PARAMS) -> None:
        super().__init__(code, "Resource not found", {"uri": uri})
        self.uri = uri


JSONRPC = "2.0"


def dumps(message: Any, *, fast: bool = True) -> bytes:
    """The one serializer of outgoing messages: compact UTF-8 JSON, dicts and models alike.

    A float JSON cannot carry (infinity, NaN: ``1e999`` parses to infinity) is written as
    null, so nothing a peer sends can make the runtime write a line that is not JSON. The bytes
    are pydantic's (``to_json``); the runtime's fast writer (``serializer``, orjson) writes them
    when it can promise them, pydantic otherwise. ``fast=False``: pydantic alone, for messages
    made mostly of small models (typed request params and their ``_meta``), which its
    serializer writes faster than the fast writer walks them (benchmarks/README.md, step 3).
    """
    written = fast_dumps(message) if fast else None
    return written if written is not None else to_json(message, inf_nan_mode="null")


def is_request_id(value: object) -> TypeGuard[RequestId]:
    """A JSON-RPC id in MCP: a string or an integer; never null, a float, a boolean, an object or an array."""
    return type(value) is str or type(value) is int


def request_id(message: object) -> RequestId | None:
    """The ``id`` of a parsed message when it is a valid id, else None (also for a non-object).

    Every id read from JSON that no codec has checked yet goes through here before it is used
    as a key or echoed back, so a hostile id (an object, an array, a float) is never either.
    """
    rid = message.get("id") if isinstance(message, dict) else None
    return rid if is_request_id(rid) else None


_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?=[ \t\r\n,}])")  # an integer, ended within what was read
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BLANK = re.compile(rb"[ \t\r\n]*")  # JSON's whitespace (not \f, \v)


def leading_id(head: bytes, kind: str = "request") -> RequestId | None:
    """The top-level ``id`` of a JSON object of which only ``head``, its first bytes, was read
    (a line too long to parse), when its members read also show it is a ``kind`` ("request": a
    ``method``; "response": a ``result`` or an ``error``): an id taken from the other kind would
    name another side's request. The members are skipped as JSON has them (strings with their
    escapes, nested values by their brackets); None when ``head`` ends before the id's value and
    the member telling the kind do, the value is no request id (a float, null), or a second
    top-level ``id`` follows (JSON keeps the last; past the head one goes unseen). Senders write
    both early (``jsonrpc``, ``id``, ``method``), so an oversized message is still matched to its
    request: a client that drops an error without an id waits for the answer for ever."""
    wanted = ("method",) if kind == "request" else ("result", "error")
    found: RequestId | None = None
    told = False
    for name, at in _members(head):
        if name == "id":
            token = _STRING.match(head, at) or _NUMBER.match(head, at)
            try:
                value = from_json(token.group()) if token is not None and found is None else None
            except ValueError:
                value = None
            if not is_request_id(value):  # none, or not a request id, or a second one
                return None
            found = value
        elif name in ("method", "result", "error"):
            if name not in wanted:  # the other kind: not one to answer under its id
                return None
            told = True
    return found if told else None


def _members(head: bytes) -> Iterator[tuple[str, int]]:
    """The top-level members of the JSON object ``head`` begins, as far as ``head`` reads them
    whole: each one's name and where its value starts (the value is skipped after it)."""
    at = _BLANK.match(head, 0).end()  # type: ignore[union-attr]
    if not head.startswith(b"{", at):
        return
    at += 1
    while True:
        key = _STRING.match(head, _BLANK.match(head, at).end())  # type: ignore[union-attr]
        if key is None:
            return
        at = _BLANK.match(head, key.end()).end()  # type: ignore[union-attr]
        if not head.startswith(b":", at):
            return
        try:
            name = from_json(key.group())
        except ValueError:
            return
        at = _BLANK.match(head, at + 1).end()  # type: ignore[union-attr]
        yield name, at
        at = _skip_value(head, at)
        if at < 0:
            return
        at = _BLANK.match(head, at).end()  # type: ignore[union-attr]
        if not head.startswith(b",", at):
            return
        at += 1


def _skip_value(head: bytes, at: int) -> int:
    """Where the JSON value at ``at`` ends (-1: not within ``head``)."""
    if head.startswith(b'"', at):
        string = _STRING.match(head, at)
        return string.end() if string is not None else -1
    if head[at : at + 1] not in (b"{", b"["):  # a number, true, false, null: up to a delimiter
        end = at
        while end < len(head) and head[end : end + 1] not in b" \t\r\n,}]":
            end += 1
        return end if end < len(head) and end > at else -1
    depth = 0
    while at < len(head):
        char = head[at : at + 1]
        if char == b'"':
            string = _STRING.match(head, at)
            if string is None:
                return -1
            at = string.end()
            continue
        if char in (b"{", b"["):
            depth += 1
        elif char in (b"}", b"]"):
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return -1


def holds_a_request(message: object) -> bool:
    """A parsed message that is a request (a method and an id, read or not), or a batch holding one."""
    if isinstance(message, dict):  # (no generator for the usual case: a few thousand instructions a call)
        return "id" in message and "method" in message
    return isinstance(message, list) and any(
        isinstance(item, dict) and "id" in item and "method" in item for item in message
    )


def request_envelope(id: RequestId, method: str, params: Any = None) -> dict[str, Any]:
    """A request object; ``params`` (a dict or a model) is left out when None."""
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification_envelope(method: str, params: Any = None) -> dict[str, Any]:
    """A notification object; ``params`` (a dict or a model) is left out when None."""
    message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def result_envelope(id: RequestId, result: Any) -> dict[str, Any]:
    """A result response object; ``result`` is a dict or a model."""
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def dumps_model(model: Any) -> bytes:
    """``dumps`` of one pydantic model, through its own serializer (no type inference on the way).

    The model's config decides how it writes infinity and NaN; only a class that writes them as
    null (pydantic's default, and every generated model's) takes this path, any other goes
    through ``dumps``. The choice is made once per class.
    """
    write = _MODEL_WRITERS.get(type(model))
    if write is None:
        write = _MODEL_WRITERS[type(model)] = _writer(type(model))
    return write(model)


def _writer(cls: Any) -> Callable[[Any], bytes]:
    if cls.model_config.get("ser_json_inf_nan", "null") != "null":
        return dumps
    # (reading the serializer builds a deferred model's)
    write: Callable[[Any], bytes] = cls.__pydantic_serializer__.to_json
    return write


_MODEL_WRITERS: dict[type, Callable[[Any], bytes]] = {}


def result_envelope_bytes(id: RequestId, result: bytes, members: bytes = b"") -> bytes:
    """``result_envelope`` around a result serialised already (a JSON object's bytes): the
    response's bytes, in one copy. ``members`` (``"k":v,...``, keys the result lacks) are added
    to the result object."""
    rid = str(id).encode() if type(id) is int else dumps(id)
    head = b'{"jsonrpc":"2.0","id":' + rid + b',"result":'
    if not members:
        return b"".join((head, result, b"}"))
    body = memoryview(result)[:-1]  # the result object without its closing brace, not copied
    return b"".join((head, body, b"," if len(result) > 2 else b"", members, b"}}"))


def result_fields_bytes(id: RequestId, fields: dict[str, Any]) -> bytes | None:
    """``dumps(result_envelope(id, fields))`` for a result given as its members (models inside
    as they are) by the fast writer alone; None when it cannot promise pydantic's bytes."""
    return fast_dumps(result_envelope(id, fields))


def error_envelope(id: RequestId | None, error: ProtocolError, *, null_id: bool = False) -> dict[str, Any]:
    """An error response object. ``id`` None: the request's id could not be read; the member is
    then left out, as the schemas from 2025-11-25 on allow, or written ``null`` (JSON-RPC 2.0's
    spelling) with ``null_id``, for a revision whose schema requires it (``RevisionEntry.null_error_ids``)."""
    if id is None and not null_id:
        return {"jsonrpc": JSONRPC, "error": error.to_error_object()}
    return {"jsonrpc": JSONRPC, "id": id, "error": error.to_error_object()}


@dataclass(frozen=True, slots=True)
class Request:
    """A request: ``params`` is the typed params model (or None when the method has none).

    ``meta`` is the request's ``_meta`` lifted out for handlers: in the modern era the typed
    ``RequestMetaObject`` (protocol version, client capabilities, client info, ...; unknown
    keys such as ``traceparent`` survive as extras); in the legacy era the optional
    ``_meta`` (progress token) when sent.
    """

    id: RequestId
    method: str
    params: Any
    meta: Any = None


@dataclass(frozen=True, slots=True)
class Notification:
    method: str
    params: Any
    meta: Any = None


@dataclass(frozen=True, slots=True)
class Response:
    """A result response. ``result`` is typed when the codec knew the request's method, else a dict.

    ``method`` is the method of the request it answers, when known.
    """

    id: RequestId
    result: Any
    method: str | None = None


@dataclass(frozen=True, slots=True)
class ErrorResponse:
    """An error response; ``id`` is None only when the peer could not read the request's id."""

    id: RequestId | None
    error: ProtocolError


Message = Request | Notification | Response | ErrorResponse


@dataclass(frozen=True, slots=True)
class Batch:
    """A JSON-RPC batch (2025-03-26 only): each entry decoded on its own; a refused entry is its error."""

    items: tuple[Message | ProtocolError, ...] = field(default_factory=tuple)


Decoded = Message | Batch
