"""Wire codecs: bytes <-> typed messages, one codec class per era behind one interface.

``Codec`` handles what every revision shares (JSON, the JSON-RPC envelope, ids, method
lookup and direction, params validation, batches where the revision has them). The era
classes ``LegacyCodec`` (``codec_legacy.py``) and ``ModernCodec`` (``codec_modern.py``) add
their rules through a few hooks; a generated
``<package>.vYYYY_MM_DD.codec`` module binds one of them to its revision's method table.

Decoding returns a typed message or raises ``ProtocolError`` (and nothing else) with the
JSON-RPC code (-32700 parse, -32600 envelope or oversized input, -32601 not in this revision
or direction, -32602 invalid params or result, -32022 unsupported version), the message's id
when it could be read, and its kind. Encoding raises ``ProtocolError`` on caller mistakes
(unknown method, invalid params).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar, Literal, NamedTuple, get_args

from pydantic import MISSING, BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json

from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    JSONRPC,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Batch,
    Decoded,
    ErrorResponse,
    Message,
    MessageKind,
    Notification,
    ProtocolError,
    Request,
    RequestId,
    Response,
    dumps,
    dumps_model,
    error_envelope,
    is_error_code,
    is_request_id,
    notification_envelope,
    request_envelope,
    result_envelope,
    result_envelope_bytes,
    result_fields_bytes,
)
from .lazy import ModelRef, resolve
from .log_levels import rank
from .method_table import MethodSpec, MethodTable
from .serializer import fields_of

Side = Literal["client", "server"]
JSONObject = dict[str, Any]
Validator = Callable[[Any], Any]
DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024

PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
RESULT_TYPE = "resultType"
TTL_MS = "ttlMs"
CACHE_SCOPE = "cacheScope"
COMPLETE = "complete"
INPUT_REQUIRED = "input_required"


def validator_for(tp: Any) -> Validator:
    """Validate wire data as ``tp`` (a model class, or an alias through a ``TypeAdapter``).

    Wire names only: ``requestId``, never the Python name ``request_id``, whatever the model
    config allows for Python callers.
    """
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        validator = tp.__pydantic_validator__
    else:
        validator = TypeAdapter(tp).validator
    return partial(validator.validate_python, by_alias=True, by_name=False)


def dump(value: Any) -> Any:
    """A model (or a list or dict of them) as JSON-ready data, by wire names, unset fields omitted."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [dump(v) for v in value]
    return value


MAX_REPORTED_ERRORS = 10  # a refused message's validation errors named in the reply; the rest are counted
MAX_REPORTED_STEPS = 16  # of an error's location: the first and the last steps, the middle elided
MAX_REPORTED_TEXT = 200  # characters of a message or a location's key


def _batch_side(item: Message | ProtocolError) -> str | None:
    """Which of the schema's two batches ``item`` belongs in: requests and notifications, or
    responses; None for a refused item whose kind could not be read."""
    kind = item.kind if isinstance(item, ProtocolError) else None
    if isinstance(item, Request | Notification) or kind in ("request", "notification"):
        return "calls"
    if isinstance(item, Response | ErrorResponse) or kind == "response":
        return "answers"
    return None


def invalid(where: str, exc: ValidationError, *, code: int = INVALID_PARAMS, said: str | None = None) -> ProtocolError:
    """A pydantic failure as -32602 (or ``code``), with each error's location under ``where``;
    the message (``said``, else "invalid <where>") names the first (a review: "-32602 invalid
    params" told a caller nothing of the field it got wrong).

    The reply is bounded whatever the input: at most ``MAX_REPORTED_ERRORS`` errors (``omitted``
    counts the others), locations and texts shortened. A reply listing every error grew with the
    input's size and depth, to many times the request.
    """
    errors = [
        {"loc": _steps([where, *e["loc"]]), "msg": shortened(e["msg"]), "type": e["type"]}
        for e in exc.errors(include_url=False, include_input=False, include_context=False)[:MAX_REPORTED_ERRORS]
    ]
    data: dict[str, Any] = {"errors": errors}
    if exc.error_count() > len(errors):
        data["omitted"] = exc.error_count() - len(errors)
    message = said if said is not None else f"invalid {where}"
    if errors:
        first = errors[0]
        at = ".".join(str(step) for step in first["loc"][1:])
        message += f": {at}: {first['msg']}" if at else f": {first['msg']}"
        if exc.error_count() > 1:
            message += f" (and {exc.error_count() - 1} more)"
    return ProtocolError(code, message, data)


def _steps(loc: list[Any]) -> list[Any]:
    if len(loc) > MAX_REPORTED_STEPS:
        half = MAX_REPORTED_STEPS // 2
        loc = [*loc[:half], "...", *loc[-(half - 1) :]]
    return [shortened(step) if isinstance(step, str) else step for step in loc]


def shortened(text: str) -> str:
    """``text``, cut to ``MAX_REPORTED_TEXT`` characters."""
    return text if len(text) <= MAX_REPORTED_TEXT else text[: MAX_REPORTED_TEXT - 3] + "..."


@dataclass
class Revision:
    """What a codec needs from one generated revision: its table and a few era-specific models.

    ``error_data`` maps an error code to the typed ``error`` model of the revision's error
    envelopes (2026: -32021, -32022); ``input_required`` is the MRTR interim result model.
    """

    version: str
    methods: MethodTable
    batching: bool = False
    # the schema's error response requires an id: one that could not be read is written null
    # (JSON-RPC 2.0's spelling; before 2025-11-25), else it is left out (``error_envelope``)
    null_error_ids: bool = False
    error_types: Mapping[int, Any] = field(default_factory=dict)  # models or ``ModelRef``s
    input_required: Any = None  # a model or a ``ModelRef``
    log_levels: Sequence[str] = ()  # LoggingLevel's values, least severe first (the overlay's ranking)
    _validators: dict[int, Validator] = field(default_factory=dict, init=False, repr=False)
    _inbound: dict[str, Inbound] = field(default_factory=dict, init=False, repr=False)
    _interim: Any = field(default=None, init=False, repr=False)  # the interim result model, once loaded

    def __post_init__(self) -> None:
        if self.log_levels:
            rank(self.log_levels)  # a level this revision adds is ranked, with no change to the runtime

    def validate(self, tp: Any, value: Any) -> Any:
        key = id(tp)
        check = self._validators.get(key)
        if check is None:
            check = self._validators[key] = validator_for(resolve(tp))
        return check(value)

    def error_type(self, code: int) -> Any:
        """The typed ``error`` model of the revision's envelope for ``code``, None when it has none."""
        return resolve(self.error_types.get(code))

    def input_required_model(self) -> Any:
        """The MRTR interim result model (None before 2026-07-28), imported if needed."""
        return resolve(self.input_required)

    def loaded_input_required(self) -> Any:
        """The MRTR interim result model if it has been imported already, else None (nothing is
        imported): a model never imported has no instances and no subclasses."""
        model = self._interim
        if model is None:
            model = self.input_required
            if isinstance(model, ModelRef):
                model = model.loaded()
            if model is None:
                return None
            self._interim = model
        return model

    def is_input_required(self, value: Any) -> bool:
        """``value`` is an instance of the interim result model, answered without importing it."""
        model = self.loaded_input_required()
        return model is not None and isinstance(value, model)


def _carries_envelope(spec: MethodSpec) -> bool:
    """The message definition of ``spec`` holds the whole JSON-RPC envelope, params typed as the table says."""
    message = spec.message
    if not (isinstance(message, type) and issubclass(message, BaseModel)):
        return False
    fields = message.model_fields
    needed = ("jsonrpc", "method", "params", "id") if spec.kind == "request" else ("jsonrpc", "method")
    if any(name not in fields for name in needed):
        return False
    if "params" not in fields:
        return spec.params is None
    annotation = fields["params"].annotation
    return annotation is spec.params or (spec.params is not None and spec.params in get_args(annotation))


class Route(NamedTuple):
    """How a codec validates a parsed message of one method in one pass: the message definition's
    validator (called by wire names only), the method's spec, and the two flags read per message."""

    validate: Callable[..., Any]
    spec: MethodSpec
    request: bool
    has_params: bool


class Inbound:
    """One pass from parsed JSON to a typed message: where a revision's message definitions carry
    the whole envelope (2025-11-25 on), the definition of a message's ``method`` validates it
    entirely. Routes are built per method on first use (a server that answers only ``tools/call``
    builds only that request's models), shared per revision and side.
    """

    __slots__ = ("_by_name", "_routes")

    def __init__(self, specs: Sequence[MethodSpec]) -> None:
        names = Counter(spec.name for spec in specs)  # a name both a request and a notification: no shortcut
        self._by_name = {spec.name: spec for spec in specs if names[spec.name] == 1}
        self._routes: dict[str, Route | None] = {}

    def route(self, method: str) -> Route | None:
        """How a parsed message of ``method`` is validated in one pass; None when the method is not
        one this side receives, or its definition lacks the envelope (the step-by-step path decides)."""
        try:
            return self._routes[method]
        except KeyError:
            pass
        spec = self._by_name.get(method)
        route = None
        if spec is not None and _carries_envelope(spec):
            # (reading the validator builds a deferred model's)
            validate = spec.message.__pydantic_validator__.validate_python
            route = Route(validate, spec, spec.kind == "request", spec.params is not None)
        self._routes[method] = route
        return route


class Codec:
    """The era-independent part of a wire codec. Subclasses set ``era`` and override the hooks."""

    era: ClassVar[str]

    def __init__(self, revision: Revision, side: Side, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if side not in ("client", "server"):
            raise ValueError(f"side must be 'client' or 'server', not {side!r}")
        self.revision = revision
        self.max_message_size = max_message_size
        self._inbound: Inbound | None = None  # built on first use
        self._answers: dict[str, MethodSpec | None] = {}  # the requests this side answers, by method
        self._asked: dict[str, MethodSpec | None] = {}  # the requests this side sends, by method
        self.side = side
        self.version = revision.version
        self.methods = revision.methods

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.version!r}, side={self.side!r})"

    # -- direction ---------------------------------------------------------------------------

    def receives(self, spec: MethodSpec) -> bool:
        """This side may receive ``spec`` as a JSON-RPC message."""
        return spec.client_sends if self.side == "server" else spec.server_sends

    def sends(self, spec: MethodSpec) -> bool:
        return spec.server_sends if self.side == "server" else spec.client_sends

    def receives_responses(self) -> bool:
        return True

    # -- decode ------------------------------------------------------------------------------

    def decode(self, data: bytes | bytearray | str, *, pending: Mapping[RequestId, str] | None = None) -> Decoded:
        """Bytes off the wire -> a typed message or a ``Batch`` (2025-03-26); else ``ProtocolError``.

        ``pending`` maps the ids of this side's in-flight requests to their methods, so a
        response's result is validated as that method's result; without it the result stays a dict.
        Input longer than ``max_message_size`` bytes is refused (-32600) before it is parsed.

        The bytes are parsed (strict JSON: no ``NaN``, no ``Infinity``), then decoded as by
        ``decode_value``: where the revision's message definitions carry the whole envelope
        (2025-11-25 on), a request or notification is validated by its method's definition in
        one pass; anything that pass refuses, and responses, go through the step-by-step path,
        which names the error. (Parsing first and validating the parsed message costs less than
        validating the bytes through a union of every message, whose scan for ``NaN`` alone is a
        tenth of a small request's decode, and builds only the definitions of methods received.)
        """
        size = len(data)
        if size > self.max_message_size // 4 and isinstance(data, str):
            size = len(data.encode(errors="surrogatepass"))  # a lone surrogate is refused below, as unparsable
        if size > self.max_message_size:
            raise ProtocolError(
                INVALID_REQUEST,
                f"message of {size} bytes exceeds the limit of {self.max_message_size}",
                {"size": size, "limit": self.max_message_size},
            )
        try:
            value = from_json(data, allow_inf_nan=False)
        except ValueError as exc:
            raise ProtocolError(PARSE_ERROR, data={"detail": str(exc)}) from None
        except TypeError:  # a str holding a lone surrogate, which no UTF-8 can carry
            raise ProtocolError(PARSE_ERROR, data={"detail": "not UTF-8 text (a lone surrogate)"}) from None
        return self.decode_value(value, pending=pending)

    def _inbound_of(self) -> Inbound:
        """The one-pass validators of what this side receives, shared per revision and side."""
        inbound = self._inbound
        if inbound is None:
            cache = self.revision._inbound
            inbound = cache.get(self.side)
            if inbound is None:
                inbound = cache[self.side] = Inbound([spec for spec in self.methods if self.receives(spec)])
            self._inbound = inbound
        return inbound

    def _typed(self, typed: Any, spec: MethodSpec, request: bool, has_params: bool) -> Message | None:
        """A message validated in one pass, or None to let the step-by-step path decide."""
        if "jsonrpc" not in typed.__pydantic_fields_set__:  # the models default it; the wire must say it
            return None
        params = typed.params if has_params else None
        if params is MISSING:
            params = None
        if not self.accepts(spec, params):
            return None
        meta = meta_of(params)
        if request:
            return Request(typed.id, spec.name, params, meta)
        extra = typed.__pydantic_extra__
        if extra and "id" in extra:  # a notification's method sent as a request
            return None
        return Notification(spec.name, params, meta)

    def decode_value(self, value: Any, *, pending: Mapping[RequestId, str] | None = None) -> Decoded:
        """Like ``decode`` for already-parsed JSON: one pass too, where the revision allows."""
        if pending and type(value) is dict and "result" in value:
            response = self._result_response(value, pending)
            if response is not None:
                return response
        elif not pending and type(value) is dict:
            method = value.get("method")
            if type(method) is str:
                route = self._inbound_of().route(method)
                if route is not None:
                    validate, spec, request, has_params = route
                    try:
                        message = self._typed(validate(value, by_alias=True, by_name=False), spec, request, has_params)
                    except Exception:  # refused (or a bug): the step-by-step path decides and names the error
                        message = None
                    if message is not None:
                        return message
        return self._decode_parsed(value, pending)

    def _result_response(self, value: JSONObject, pending: Mapping[RequestId, str]) -> Response | None:
        """A well-formed result response to one of this side's pending requests, its result typed in
        one validation; None to let the step-by-step path decide (and name any error)."""
        rid = value.get("id")
        if not is_request_id(rid) or "method" in value or "error" in value or value.get("jsonrpc") != JSONRPC:
            return None
        method = pending.get(rid)
        raw = value["result"]
        if method is None or type(raw) is not dict:
            return None
        spec = self._asked.get(method, MISSING)
        if spec is MISSING:
            spec = self._asked[method] = self._asked_spec(method)
        if spec is None:
            return None
        try:
            return Response(rid, self.decode_result(spec, raw), method)
        except Exception:  # refused: the step-by-step path raises the error with the message's id
            return None

    def _asked_spec(self, method: str) -> MethodSpec | None:
        """The spec of a request this side sends and may be answered, else None."""
        spec = self.methods.request(method)
        return spec if spec is not None and self.sends(spec) and self.receives_responses() else None

    def _decode_parsed(self, value: Any, pending: Mapping[RequestId, str] | None) -> Decoded:
        if isinstance(value, list):
            if not self.revision.batching:
                raise ProtocolError(INVALID_REQUEST, f"MCP {self.version} has no JSON-RPC batches")
            if not value:
                raise ProtocolError(INVALID_REQUEST, "empty batch")
            items = tuple(self._decode_item(item, pending) for item in value)
            if len({side for side in map(_batch_side, items) if side is not None}) > 1:
                # the schema's batches: JSONRPCBatchRequest (requests, notifications) or
                # JSONRPCBatchResponse (responses, errors); a response in a request's batch was
                # taken and silently consumed
                raise ProtocolError(INVALID_REQUEST, "a batch holds requests and notifications, or responses, not both")
            return Batch(items)
        return self._decode_message(value, pending)

    def _decode_item(self, obj: Any, pending: Mapping[RequestId, str] | None) -> Message | ProtocolError:
        try:
            return self._decode_message(obj, pending)
        except ProtocolError as error:
            return error

    def _decode_message(self, obj: Any, pending: Mapping[RequestId, str] | None) -> Message:
        if not isinstance(obj, dict):
            raise ProtocolError(INVALID_REQUEST, "a JSON-RPC message is an object")
        rid = obj.get("id")
        readable = rid if is_request_id(rid) else None
        if "method" in obj:
            kind: MessageKind | None = "request" if "id" in obj else "notification"
            if kind == "notification" and (type(obj["method"]) is not str or obj.get("jsonrpc") != JSONRPC):
                kind = None  # not a notification but an invalid request: answered, id null (JSON-RPC 2.0 §7)
        elif "result" in obj or "error" in obj:
            kind = "response"
        else:
            kind = None
        try:
            if obj.get("jsonrpc") != JSONRPC:
                raise ProtocolError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
            if kind == "request":
                if readable is None:
                    raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
                return self._decode_request(readable, obj)
            if kind == "notification":
                return self._decode_notification(obj)
            if kind == "response":
                return self._decode_response(obj, pending)
            if "method" in obj:
                raise ProtocolError(INVALID_REQUEST, "method must be a string")
            raise ProtocolError(INVALID_REQUEST, "not a request, notification or response")
        except ProtocolError as error:
            error.id, error.kind = readable, kind
            raise
        except Exception as exc:  # the boundary: a bug below must not escape as a crash
            raise ProtocolError(INTERNAL_ERROR, data={"detail": repr(exc)}, id=readable, kind=kind) from exc

    def _lookup(self, method: str, kind: Literal["request", "notification"]) -> MethodSpec:
        spec = self.methods.request(method) if kind == "request" else self.methods.notification(method)
        if spec is None:  # the name echoed cut short: a reply stays small whatever was sent
            named = shortened(method)
            raise ProtocolError(METHOD_NOT_FOUND, f"{named!r} is not a {kind} of MCP {self.version}", {"method": named})
        return spec

    def _method(self, obj: JSONObject, kind: Literal["request", "notification"]) -> MethodSpec:
        method = obj["method"]
        if type(method) is not str:
            raise ProtocolError(INVALID_REQUEST, "method must be a string")
        spec = self._lookup(method, kind)
        if not self.receives(spec):
            raise ProtocolError(METHOD_NOT_FOUND, f"a {self.side} does not receive {method!r}", {"method": method})
        return spec

    def _params(self, spec: MethodSpec, obj: JSONObject) -> Any:
        if "params" not in obj:
            if spec.params_required:
                raise ProtocolError(INVALID_PARAMS, f"{spec.name!r} requires params")
            return None
        raw = obj["params"]
        if not isinstance(raw, dict):
            raise ProtocolError(INVALID_PARAMS, "params must be an object")
        if spec.params is None:
            return raw
        self.check_params(spec, raw)
        try:
            return self.revision.validate(spec.params, raw)
        except ValidationError as exc:
            raise invalid("params", exc) from None

    def _decode_request(self, rid: RequestId, obj: JSONObject) -> Request:
        try:
            spec = self._method(obj, "request")
        except ProtocolError as exc:
            raw = obj.get("params")
            if exc.code == METHOD_NOT_FOUND and isinstance(raw, dict):
                # a revision not implemented is the answer, not its methods judged by this one
                # (versioning.mdx: the client learns the versions it may downgrade to)
                self.check_version(raw)
            raise
        params = self._params(spec, obj)
        return Request(rid, spec.name, params, meta_of(params))

    def _decode_notification(self, obj: JSONObject) -> Notification:
        spec = self._method(obj, "notification")
        params = self._params(spec, obj)
        return Notification(spec.name, params, meta_of(params))

    def _decode_response(self, obj: JSONObject, pending: Mapping[RequestId, str] | None) -> Message:
        if not self.receives_responses():
            raise ProtocolError(INVALID_REQUEST, f"a {self.side} of MCP {self.version} receives no responses")
        if "result" in obj and "error" in obj:
            raise ProtocolError(INVALID_REQUEST, "a response has either result or error, not both")
        rid = obj.get("id")
        if "error" in obj:
            if rid is not None and not is_request_id(rid):
                raise ProtocolError(INVALID_REQUEST, "id must be a string, an integer or null")
            return ErrorResponse(rid, self._decode_error(obj["error"]))
        if not is_request_id(rid):
            raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
        raw = obj["result"]
        if not isinstance(raw, dict):
            raise ProtocolError(INVALID_PARAMS, "result must be an object")
        method = pending.get(rid) if pending is not None else None
        if method is None:
            return Response(rid, raw)
        spec = self._lookup(method, "request")
        if not self.sends(spec):  # answers only what this side asked
            raise ProtocolError(METHOD_NOT_FOUND, f"a {self.side} does not send {method!r}", {"method": method})
        return Response(rid, self.decode_result(spec, raw), method)

    def _decode_error(self, raw: Any) -> ProtocolError:
        if not isinstance(raw, dict):
            raise ProtocolError(INVALID_REQUEST, "error must be an object")
        code, message = raw.get("code"), raw.get("message")
        if not is_error_code(code) or type(message) is not str:
            raise ProtocolError(INVALID_REQUEST, "error needs an integer code (within 2**53) and a string message")
        typed = self.revision.error_type(code)
        if typed is None:
            return ProtocolError(code, message, raw.get("data"))
        try:
            data = self.revision.validate(typed, raw).data
        except ValidationError:
            # not the code's own definition (2026-07-28's -32022 without its required data): still
            # a valid error response, as every JSON-RPC error is, so the error as it came
            return ProtocolError(code, message, raw.get("data"))
        return ProtocolError(code, message, None if data is MISSING else data)

    def decode_result(self, spec: MethodSpec, raw: JSONObject) -> Any:
        """A raw result of ``spec`` -> its typed result (era rules apply)."""
        tp, raw = self.result_type(spec, raw)
        try:
            return self.revision.validate(tp, raw)
        except ValidationError as exc:
            raise invalid("result", exc) from None

    # -- era hooks ---------------------------------------------------------------------------

    def check_params(self, spec: MethodSpec, raw: JSONObject) -> None:
        """Checks on raw params before validation; raise ``ProtocolError`` to refuse."""

    def check_version(self, raw: JSONObject) -> None:
        """A request's raw params naming a revision this codec does not speak: raise (-32022)."""

    def accepts(self, spec: MethodSpec, params: Any) -> bool:
        """Typed params pass this era's checks (the typed twin of ``check_params``)."""
        return True

    def result_type(self, spec: MethodSpec, raw: JSONObject) -> tuple[Any, JSONObject]:
        """The type that validates ``raw`` as a result of ``spec``, and the result to validate."""
        return spec.result, raw

    def stamp_request_params(self, spec: MethodSpec, params: JSONObject, meta: Mapping[str, Any] | None) -> None:
        """Add what this era requires on every outgoing request's params (in place)."""

    def stamp_result(self, spec: MethodSpec, result: JSONObject, typed: Any) -> None:
        """Add what this era requires on every outgoing result (in place)."""

    # -- conversion hooks: data written for another revision, made fit for this one -----------

    def adopt_params(self, params: JSONObject, *, capabilities: Any = None, client_info: Any = None) -> JSONObject:
        """Request params sent in another revision, with what this era requires of params added.

        ``capabilities`` and ``client_info`` are what the client declared elsewhere (a legacy
        ``initialize``), as JSON data; returns a new dict, ``params`` is left as it was.
        """
        return params

    def adopt_result(self, result: JSONObject) -> JSONObject:
        """A result written for another revision, without what only another era carries (a new dict)."""
        return result

    # -- encode ------------------------------------------------------------------------------

    def _outgoing(self, method: str, kind: Literal["request", "notification"]) -> MethodSpec:
        spec = self._lookup(method, kind)
        if not self.sends(spec):
            raise ProtocolError(METHOD_NOT_FOUND, f"a {self.side} does not send {method!r}", {"method": method})
        return spec

    def _encode_params(
        self, spec: MethodSpec, params: Any, stamp: Callable[[JSONObject], None] | None = None
    ) -> JSONObject | None:
        if params is None and stamp is None:
            if spec.params_required:
                raise ProtocolError(INVALID_PARAMS, f"{spec.name!r} requires params")
            return None
        if isinstance(params, BaseModel):
            data: JSONObject = params.model_dump(mode="json")
            if stamp is not None:
                stamp(data)
            return data
        data = dict(dump(params or {}))
        if stamp is not None:
            stamp(data)
        if spec.params is not None:  # a plain dict: check it as the receiver will
            try:
                self.revision.validate(spec.params, data)
            except ValidationError as exc:
                raise invalid("params", exc) from None
        return data

    def encode_request(
        self, id: RequestId, method: str, params: Any = None, *, meta: Mapping[str, Any] | None = None
    ) -> JSONObject:
        """A request as a JSON-RPC object. ``params`` is a model or a dict (a dict is validated)."""
        if not is_request_id(id):
            raise ProtocolError(INVALID_REQUEST, "id must be a string or an integer")
        spec = self._outgoing(method, "request")
        stamp = self._request_stamp(spec, meta)
        return request_envelope(id, method, self._encode_params(spec, params, stamp))

    def _request_stamp(self, spec: MethodSpec, meta: Mapping[str, Any] | None) -> Callable[[JSONObject], None] | None:
        return None

    def encode_notification(self, method: str, params: Any = None) -> JSONObject:
        spec = self._outgoing(method, "notification")
        return notification_envelope(method, self._encode_params(spec, params))

    def encode_result(self, id: RequestId, method: str, result: Any) -> JSONObject:
        """The result of ``method`` as a response object; the era stamps what it requires."""
        spec = self._result_spec(method)
        if isinstance(result, BaseModel):
            data: JSONObject = result.model_dump(mode="json")
            self.stamp_result(spec, data, result)
            return result_envelope(id, data)
        return self._checked_result(spec, id, dict(dump(result or {})))

    def encode_result_data(self, id: RequestId, method: str, data: JSONObject) -> JSONObject:
        """``encode_result`` for a result that is JSON data already (no models inside): stamped
        in place and checked as the receiver will (``ProtocolError`` -32603 when it is not valid:
        the fault is the answering side's)."""
        return self._checked_result(self._result_spec(method), id, data)

    def _result_spec(self, method: str) -> MethodSpec:
        spec = self.methods.request(method)
        if spec is None or spec.result is None:
            raise ProtocolError(METHOD_NOT_FOUND, f"{method!r} is not a request of MCP {self.version}")
        return spec

    def _checked_result(self, spec: MethodSpec, id: RequestId, data: JSONObject) -> JSONObject:
        self.stamp_result(spec, data, None)
        try:
            self.decode_result(spec, data)  # a plain dict: check it as the receiver will
        except ProtocolError as exc:  # the answering side's own fault, not the asker's: -32603
            detail = exc.message.partition(": ")[2]  # (invalid's first error)
            message = f"the {spec.name} result is invalid" + (f": {detail}" if detail else "")
            raise ProtocolError(INTERNAL_ERROR, message, exc.data) from None
        return result_envelope(id, data)

    def dumps_request(
        self, id: RequestId, method: str, params: Any = None, *, meta: Mapping[str, Any] | None = None
    ) -> bytes:
        """``encode_request`` straight to bytes; typed params the era need not stamp go out in one pass."""
        if isinstance(params, BaseModel) and is_request_id(id) and self.request_sent_as_is(params, meta):
            self._outgoing(method, "request")
            return dumps(request_envelope(id, method, params), fast=False)
        return dumps(self.encode_request(id, method, params, meta=meta))

    def dumps_result(self, id: RequestId, method: str, result: Any) -> bytes:
        """``encode_result`` straight to bytes. A typed result's members (``serializer.fields_of``),
        with what the era stamps on it (``result_members``) added, are written with the envelope
        in one call of the runtime's fast writer (pydantic's bytes); where that writer is not
        sure to match pydantic, the result is serialised once by its own class's serializer and
        the members and the envelope are joined around it as bytes."""
        try:
            if isinstance(result, BaseModel) and is_request_id(id):
                spec = self._answers.get(method, MISSING)
                if spec is MISSING:
                    spec = self._answers[method] = self._answered(method)
                if spec is not None:
                    members = self.result_members(spec, result)
                    if members is not None:
                        fields = fields_of(result)
                        if fields is not None:
                            if members:
                                fields.update(members)
                            written = result_fields_bytes(id, fields)
                            if written is not None:
                                return written
                        return result_envelope_bytes(id, dumps_model(result), dumps(members)[1:-1] if members else b"")
            return dumps(self.encode_result(id, method, result))
        except (ValueError, TypeError) as exc:  # a lone surrogate in a string: no JSON form, no UTF-8
            raise ProtocolError(INTERNAL_ERROR, f"the {method} result cannot be written as JSON: {exc}") from None

    def _answered(self, method: str) -> MethodSpec | None:
        """The spec of ``method`` when it is a request with a result, else None."""
        spec = self.methods.request(method)
        return spec if spec is not None and spec.result is not None else None

    def request_sent_as_is(self, params: BaseModel, meta: Mapping[str, Any] | None) -> bool:
        """Typed params need nothing stamped by this era."""
        return meta is None

    def result_members(self, spec: MethodSpec, result: BaseModel) -> JSONObject | None:
        """The members this era stamps on the typed ``result`` of ``spec`` (JSON data, keys the
        result lacks; empty: none), or None when stamping needs the result as data (``encode_result``)."""
        return {}

    def encode_error(self, id: RequestId | None, error: ProtocolError) -> JSONObject:
        return error_envelope(id, error)

    def encode_message(self, message: Message) -> JSONObject:
        """A decoded message back to its JSON-RPC object (the round trip of ``decode``)."""
        if isinstance(message, Request):
            return request_envelope(message.id, message.method, dump(message.params))
        if isinstance(message, Notification):
            return notification_envelope(message.method, dump(message.params))
        if isinstance(message, Response):
            return result_envelope(message.id, dump(message.result))
        return self.encode_error(message.id, message.error)

    def encode_batch(self, messages: Sequence[JSONObject]) -> list[JSONObject]:
        """Encoded messages as one JSON-RPC batch (2025-03-26 only; ``to_bytes`` writes it)."""
        if not self.revision.batching:
            raise ProtocolError(INVALID_REQUEST, f"MCP {self.version} has no JSON-RPC batches")
        if not messages:
            raise ProtocolError(INVALID_REQUEST, "empty batch")
        return list(messages)

    @staticmethod
    def to_bytes(message: JSONObject | Sequence[JSONObject]) -> bytes:
        """Compact UTF-8 JSON, one line (stdio framing adds the newline); -32603 for a message
        with no JSON form (a lone surrogate in a string)."""
        try:
            return dumps(message)
        except (ValueError, TypeError) as exc:
            raise ProtocolError(INTERNAL_ERROR, f"the message cannot be written as JSON: {exc}") from None


def meta_of(params: Any) -> Any:
    meta = getattr(params, "meta", None)
    return None if meta is MISSING else meta
