"""Conversion between the revision a request was sent in and the revision the handler is written for.

Both session kinds use it: a legacy session converts every request of its negotiated revision,
a modern session the requests sent at another modern revision than the handler's. In between,
everything is JSON data: wire params are adopted by the handler's codec (the modern
``_meta`` envelope added for a legacy request) and validated as the handler's params type;
the handler's result is dumped, adopted by the wire codec (modern-only keys dropped for a legacy
client) and validated as the wire revision's result when it is encoded. A result that has no
form in the wire revision is the server's failure (-32603), named in the error.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ...codec import Codec, JSONObject, dump, invalid
from ...jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError, RequestId


class Conversion:
    """From ``wire`` (the codec a request was decoded with) to ``handler`` (the handler's codec) and back."""

    __slots__ = ("handler", "same", "wire")

    def __init__(self, wire: Codec, handler: Codec) -> None:
        self.wire = wire
        self.handler = handler
        self.same = wire.revision is handler.revision

    def params(self, method: str, raw: Any, *, capabilities: Any = None, client_info: Any = None) -> Any:
        """The wire params of ``method`` (JSON, as the codec accepted them) as the handler's params type."""
        spec = self.handler.methods.request(method)
        data = self.handler.adopt_params(
            dict(raw) if isinstance(raw, dict) else {}, capabilities=capabilities, client_info=client_info
        )
        if spec is None or spec.params is None:
            return data
        try:
            return self.handler.revision.validate(spec.params, data)
        except ValidationError as exc:
            raise invalid("params", exc) from None

    def answer(self, method: str, answer: Any) -> Any:
        """A client's answer to an input request (the wire revision's result) as the handler's type."""
        spec = self.handler.methods.request(method)
        if self.same or spec is None or spec.result is None:
            return answer
        try:
            return self.handler.revision.validate(spec.result, dump(answer))
        except ValidationError as exc:
            raise invalid("input response", exc) from None

    def encode_result(self, id: RequestId, method: str, result: Any) -> bytes:
        """The handler's result of ``method`` as the wire revision's response, ready to send."""
        if self.same:
            return self.wire.dumps_result(id, method, result)
        data: JSONObject = self.wire.adopt_result(dump(result))
        try:
            return self.wire.to_bytes(self.wire.encode_result_data(id, method, data))
        except ProtocolError as error:
            if not (isinstance(error.data, dict) and "errors" in error.data):  # not the revision's refusal
                raise
            message = f"the {method} result has no MCP {self.wire.version} form"
            raise ProtocolError(INTERNAL_ERROR, message, error.data) from None

    def encode_request(self, id: RequestId, method: str, params: Any) -> bytes:
        """An input request of the handler (an embedded request) as the wire revision's own request."""
        data = dump(params) if params is not None else None
        try:
            return self.wire.to_bytes(self.wire.encode_request(id, method, data))
        except ProtocolError as error:
            # the handler asked for what this session's revision cannot carry: the server's failure
            # (-32603), not the client's request's (a -32601 told it tools/call was not found)
            if error.code == METHOD_NOT_FOUND:
                message = f"MCP {self.wire.version} has no {method} request: its client cannot be asked it"
                raise ProtocolError(INTERNAL_ERROR, message) from None
            if error.code != INVALID_PARAMS:
                raise
            message = f"the {method} request has no MCP {self.wire.version} form"
            raise ProtocolError(INTERNAL_ERROR, message, error.data) from None
