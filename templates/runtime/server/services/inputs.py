"""Input from the client during a request: elicitation, sampling and roots, in either era.

A handler asks with ``await ctx.elicit(...)``, ``ctx.sample(...)`` or ``ctx.list_roots()``.
How the question travels depends on the session:

- legacy sessions (``initialize``) send a real server->client request and wait for its answer
  (the session's ``direct`` channel);
- modern requests (2026-07-28, stateless) cannot wait: an unanswered question raises
  ``InputRequired``, the kernel answers the request with an ``input_required`` result listing
  every question asked so far (``inputRequests``), and the client retries the request with
  ``inputResponses``. The handler runs again from the start; this time the same question,
  asked in the same order, returns the client's answer (multi round-trip requests, MRTR).

Answers of earlier rounds ride in ``requestState`` (``ReplayState``), which the kernel seals
like every state (``request_state``: an HMAC bound to the request, the principal and an
expiry), so an answer never reaches another request, another principal or a late retry. A
question is keyed by what it asks (``elicit-1``, ``sample-1``, ... in the order the handler
asks them, or the ``key`` the handler gives), and the digest of each question is recorded, so
an answer is only ever returned for the question it answers. Several questions asked at once
(``asyncio.gather``) go out in one round.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Generic, Literal, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json, to_json

from ...codec import dump
from ...jsonrpc import INVALID_PARAMS, ProtocolError

T = TypeVar("T")

# A legacy session's channel: send ``method`` with ``params`` to the client, return its answer (JSON).
Direct = Callable[[str, dict[str, Any]], Awaitable[Any]]

REPLAY_PREFIX = "mcpgen-replay.2."
LABELS = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}


class InputRequired(BaseException):
    """Control flow of a modern request: the handler asked for input the client has not given yet.

    Raised by the ``Context`` and caught by the kernel, which answers ``input_required`` with
    every question in ``round.pending``. A ``BaseException``, as ``asyncio.CancelledError`` is, so
    that a handler's ``except Exception`` around ``ctx.elicit`` lets it pass: the question reaches
    the client instead of the handler's fallback running (a bare ``except:`` still swallows it).
    """

    def __init__(self, round: InputRound) -> None:
        super().__init__("the request needs input from the client")
        self.round = round


class InputError(ProtocolError, ValueError):
    """The client's answer does not fit the question (an elicitation form that fails its schema):
    the client's error, -32602 (mrtr.mdx: protocol errors in ``inputResponses`` get a JSON-RPC
    error), not the handler's (it was -32603, or a tool's ``isError``)."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_PARAMS, message)


# -- what the handler gets back ------------------------------------------------------------------


class Elicitation(NamedTuple, Generic[T]):
    """The user's answer to an elicitation: ``accept`` (with ``data``), ``decline`` or ``cancel``."""

    action: Literal["accept", "decline", "cancel"]
    data: T | None = None  # the accepted form, validated as the requested schema

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class Sampled(NamedTuple):
    """The client's LLM completion: ``role``, ``content`` (a content block, or a list of them, as JSON)."""

    role: str
    content: Any
    model: str | None = None
    stop_reason: str | None = None

    @property
    def text(self) -> str:
        """The text of the completion's text blocks, joined."""
        blocks = self.content if isinstance(self.content, list) else [self.content]
        return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


class Root(NamedTuple):
    """A root the client exposes: a ``file://`` URI and an optional name."""

    uri: str
    name: str | None = None


# -- the replay state ------------------------------------------------------------------------


def question_digest(request: Mapping[str, Any]) -> str:
    return hashlib.sha256(to_json(request)).hexdigest()[:16]


class ReplayState(NamedTuple):
    """The answers of earlier rounds and the digest of every question asked (the sealed state is
    bound to its request and expires: the kernel's ``request_state`` does both)."""

    asked: dict[str, str]  # key -> question digest
    answers: dict[str, Any]  # key -> JSON answer

    def encode(self) -> str:
        payload = {"q": self.asked, "a": self.answers}
        return REPLAY_PREFIX + base64.urlsafe_b64encode(to_json(payload)).decode().rstrip("=")

    @classmethod
    def decode(cls, state: str) -> ReplayState:
        """A state the kernel has opened (its HMAC, request and expiry verified); -32602 when it
        does not parse."""
        body = state[len(REPLAY_PREFIX) :]
        try:
            data = from_json(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            asked, answers = data["q"], data["a"]
        except (ValueError, KeyError, TypeError):
            raise ProtocolError(INVALID_PARAMS, "requestState is malformed") from None
        if not isinstance(asked, dict) or not isinstance(answers, dict):
            raise ProtocolError(INVALID_PARAMS, "requestState is malformed")
        return cls(asked, answers)


def is_replay_state(state: str) -> bool:
    return state.startswith(REPLAY_PREFIX)


# -- one request's round -----------------------------------------------------------------------


class InputRound:
    """The questions a handler asks during one request and the answers it has.

    ``answers``: this round's ``inputResponses`` over the earlier rounds' (from the replay
    state), as JSON; ``asked``: question digests recorded in the state; ``direct``: a legacy
    session's channel (questions go out at once and nothing is replayed).
    """

    def __init__(
        self,
        *,
        replay: ReplayState | None = None,
        responses: Mapping[str, Any] | None = None,
        direct: Direct | None = None,
    ) -> None:
        self.direct = direct
        self.answers: dict[str, Any] = dict(replay.answers) if replay is not None else {}
        if responses:
            self.answers.update({k: dump(v) for k, v in responses.items()})
        self.asked: dict[str, str] = dict(replay.asked) if replay is not None else {}
        self.pending: dict[str, dict[str, Any]] = {}
        self._counts: dict[str, int] = {}

    def key_for(self, method: str, key: str | None) -> str:
        if key is not None:
            return key
        label = LABELS.get(method, "input")
        self._counts[label] = self._counts.get(label, 0) + 1
        return f"{label}-{self._counts[label]}"

    async def ask(self, method: str, params: dict[str, Any], key: str | None = None) -> Any:
        """The client's answer (JSON) to ``method`` with ``params``; on a modern request without
        one, raises ``InputRequired`` (after letting questions asked alongside register too)."""
        key = self.key_for(method, key)
        request = {"method": method, "params": params}
        digest = question_digest(request)
        if self.direct is not None:
            return dump(await self.direct(method, params))
        if key in self.answers and self.asked.get(key, digest) == digest:
            self.asked[key] = digest
            return self.answers[key]
        self.asked[key] = digest
        self.pending[key] = request
        await asyncio.sleep(0)  # questions asked concurrently (gather) join this round
        raise InputRequired(self)

    def state(self) -> ReplayState:
        """What the next round needs: the answers so far (only to questions still asked) and the digests."""
        kept = {k: v for k, v in self.answers.items() if k in self.asked and k not in self.pending}
        return ReplayState(dict(self.asked), kept)

    def result(self) -> dict[str, Any]:
        """The ``input_required`` result of this round (its ``requestState`` not sealed yet)."""
        return {
            "resultType": "input_required",
            "inputRequests": dict(self.pending),
            "requestState": self.state().encode(),
        }


# -- building questions and reading answers -------------------------------------------------------

M = TypeVar("M", bound=BaseModel)


def form_schema(schema: type[BaseModel] | Mapping[str, Any]) -> dict[str, Any]:
    """An elicitation's ``requestedSchema``: a flat object of primitive properties. An optional
    field (``nickname: str | None = None``) is a property the form may leave out: pydantic's
    ``anyOf`` with ``null`` and its ``default: null`` are no primitive schema of any revision (the
    request could not be written, and the tool call failed)."""
    if isinstance(schema, Mapping):
        return dict(schema)
    full = schema.model_json_schema()
    defs = full.get("$defs", {})
    properties: dict[str, Any] = {}
    for name, prop in full.get("properties", {}).items():
        branches = prop.get("anyOf") if isinstance(prop, dict) else None
        if isinstance(branches, list):
            given = [b for b in branches if b != {"type": "null"}]
            if len(given) == 1 and len(given) < len(branches):
                prop = {**given[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
                if "default" in prop and prop["default"] is None:
                    del prop["default"]
        prop = inlined(prop, defs)  # an enum class
        items = prop.get("items") if isinstance(prop, dict) else None
        if isinstance(items, dict):  # a list of an enum class's values
            prop = {**prop, "items": inlined(items, defs)}
        if not is_form_field(prop):
            raise TypeError(
                f"{schema.__name__}.{name} cannot be asked in an elicitation form: its fields are strings, "
                "numbers, integers, booleans, enums or lists of enum values (a form is flat)"
            )
        properties[name] = prop
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if full.get("required"):
        out["required"] = list(full["required"])
    return out


def inlined(prop: Any, defs: Mapping[str, Any]) -> Any:
    """``prop`` with a ``$ref`` to one of ``defs`` replaced by the definition, its own keys kept."""
    ref = prop.get("$ref") if isinstance(prop, dict) else None
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return {**defs.get(ref[len("#/$defs/") :], {}), **{k: v for k, v in prop.items() if k != "$ref"}}
    return prop


PRIMITIVE_TYPES = ("string", "number", "integer", "boolean")


def is_form_field(prop: Any) -> bool:
    """A property every revision's elicitation form can carry: a primitive (an enum among them),
    or (2025-11-25 on) a list of enum values; an object or a list of anything else is not one
    (the request had no form in the revision, and the call failed as the server's fault)."""
    if not isinstance(prop, dict) or "properties" in prop or "$ref" in prop:
        return False
    if prop.get("type") in PRIMITIVE_TYPES:
        return "items" not in prop
    items = prop.get("items")
    return prop.get("type") == "array" and isinstance(items, dict) and ("enum" in items or "anyOf" in items)


def elicitation(answer: Any, schema: type[BaseModel] | Mapping[str, Any]) -> Elicitation[Any]:
    if not isinstance(answer, dict) or answer.get("action") not in ("accept", "decline", "cancel"):
        raise InputError("the client's elicitation answer has no valid action")
    action = answer["action"]
    if action != "accept":
        return Elicitation(action)
    content = answer.get("content") or {}
    if isinstance(schema, Mapping):
        problem = form_problem(content, schema)
        if problem is not None:
            raise InputError(f"the answer to the elicitation does not fit its form: {problem}")
        return Elicitation("accept", content)
    try:
        return Elicitation("accept", schema.model_validate(content))
    except ValidationError as exc:
        fields = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(form)'}: {e['msg']}" for e in exc.errors())
        raise InputError(f"the answer to the elicitation does not fit its form: {fields}") from None


def form_problem(content: Any, schema: Mapping[str, Any]) -> str | None:
    """What keeps ``content`` (an accepted elicitation's answer) from fitting the form ``schema``
    (elicitation.mdx: a flat object of primitive properties; servers SHOULD validate the answer
    against it), None when it fits. A property's keywords the form language has are checked
    (type, enum, titled ``oneOf``/``anyOf`` constants, lengths, bounds, item counts, formats);
    properties the form does not declare are left as they came."""
    if not isinstance(content, dict):
        return "(form): not an object"
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    for name in required if isinstance(required, list) else ():
        if name not in content:
            return f"{name}: a required field is missing"
    for name, value in content.items():
        prop = properties.get(name)
        problem = _value_problem(value, prop) if isinstance(prop, Mapping) else None
        if problem is not None:
            return f"{name}: {problem}"
    return None


def _value_problem(value: Any, prop: Mapping[str, Any]) -> str | None:
    kind = prop.get("type")
    if kind == "string":
        if not isinstance(value, str):
            return "not a string"
        if isinstance(prop.get("minLength"), int) and len(value) < prop["minLength"]:
            return f"shorter than {prop['minLength']} characters"
        if isinstance(prop.get("maxLength"), int) and len(value) > prop["maxLength"]:
            return f"longer than {prop['maxLength']} characters"
        return _choice_problem(value, prop) or _format_problem(value, prop.get("format"))
    if kind in ("number", "integer"):
        integral = type(value) is int or (type(value) is float and value.is_integer())
        if type(value) not in (int, float) or (kind == "integer" and not integral):
            return f"not {'an integer' if kind == 'integer' else 'a number'}"
        low, high = prop.get("minimum"), prop.get("maximum")
        if type(low) in (int, float) and value < low:
            return f"below the minimum {low}"
        if type(high) in (int, float) and value > high:
            return f"above the maximum {high}"
        return None
    if kind == "boolean":
        return None if isinstance(value, bool) else "not a boolean"
    if kind == "array":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return "not a list of strings"
        if isinstance(prop.get("minItems"), int) and len(value) < prop["minItems"]:
            return f"fewer than {prop['minItems']} items"
        if isinstance(prop.get("maxItems"), int) and len(value) > prop["maxItems"]:
            return f"more than {prop['maxItems']} items"
        items = prop.get("items")
        for item in value:
            problem = _choice_problem(item, items) if isinstance(items, Mapping) else None
            if problem is not None:
                return problem
    return None


def _choice_problem(value: str, prop: Mapping[str, Any]) -> str | None:
    """A value outside the property's ``enum`` or titled constants (``oneOf``/``anyOf`` of ``const``)."""
    allowed: list[Any] | None = list(prop["enum"]) if isinstance(prop.get("enum"), list) else None
    for key in ("oneOf", "anyOf"):
        branches = prop.get(key)
        if isinstance(branches, list):
            allowed = [b.get("const") for b in branches if isinstance(b, Mapping) and "const" in b]
    if allowed is not None and value not in allowed:
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"{shown!r} is not one of the choices"
    return None


# RFC 3339 (JSON Schema's ``date`` and ``date-time``): T and Z in either case, a leap second, an offset
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])")


def _format_problem(value: str, form: Any) -> str | None:
    """The string formats a form may name: ``email``, ``uri``, ``date``, ``date-time`` (RFC 3339)."""
    if form == "email" and not re.fullmatch(r"[^@\s]+@[^@\s]+", value):
        return "not an email address"
    if form == "uri" and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value):
        return "not a URI"
    if form in ("date", "date-time"):
        date, _, time = value.partition("T") if "T" in value else value.partition("t")
        if form == "date" and (time or value != date):
            return "not a date"
        if not (_full_date(date) and (form == "date" or _TIME.fullmatch(time))):
            return f"not a {form}"
    return None


def _full_date(text: str) -> bool:
    match = _DATE.fullmatch(text)
    if match is None:
        return False
    try:
        datetime.date(*(int(part) for part in match.groups()))
    except ValueError:
        return False
    return True


def sampled(answer: Any) -> Sampled:
    if not isinstance(answer, dict) or "role" not in answer or "content" not in answer:
        raise InputError("the client's sampling answer has no role or content")
    return Sampled(answer["role"], answer["content"], answer.get("model"), answer.get("stopReason"))


def roots(answer: Any) -> list[Root]:
    items = answer.get("roots") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise InputError("the client's roots/list answer has no roots")
    return [Root(r["uri"], r.get("name")) for r in items if isinstance(r, dict) and isinstance(r.get("uri"), str)]


def sampling_params(
    messages: str | Sequence[Mapping[str, Any]], max_tokens: int, extra: Mapping[str, Any]
) -> dict[str, Any]:
    if isinstance(messages, str):
        listed: list[Any] = [{"role": "user", "content": {"type": "text", "text": messages}}]
    else:
        listed = [dump(m) for m in messages]
    return {"messages": listed, "maxTokens": max_tokens, **extra}
