"""Schema + overlay -> protocol IR, mechanically.

The method inventory comes from the four direction unions (``ClientRequest``,
``ServerRequest``, ``ClientNotification``, ``ServerNotification``) and, in the modern era,
the embedded ``InputRequest`` union. Results come from ``<X>ResultResponse`` where the
schema states the pairing, else from the name rule ``<X>Request -> <X>Result``, else from
the overlay's ``empty_result`` list. Nothing here names a protocol version.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mcp_schema_codegen.errors import GeneratorError
from mcp_schema_codegen.frontend.load import LoadedSchema, check_json_schema, load
from mcp_schema_codegen.frontend.lock import Era, Lock
from mcp_schema_codegen.frontend.prepass import check_supported, prepass
from mcp_schema_codegen.ir.protocol import (
    CapabilityMember,
    Direction,
    Kind,
    Method,
    Protocol,
    ServerCapability,
    TypedError,
)
from mcp_schema_codegen.jsondata import load_json
from mcp_schema_codegen.paths import bundled_schema_dir, templates_dir

JSON = Any
UNIONS: tuple[tuple[str, Kind, Direction], ...] = (
    ("ClientRequest", "request", "client_to_server"),
    ("ServerRequest", "request", "server_to_client"),
    ("ClientNotification", "notification", "client_to_server"),
    ("ServerNotification", "notification", "server_to_client"),
)
EMBEDDED_UNION = "InputRequest"
EMBEDDED_RESPONSES = "InputResponse"
INPUT_REQUIRED = "InputRequiredResult"
RESULT_TYPE = "resultType"  # what the runtime stamps on every modern result, and its two values
COMPLETE, INPUT_REQUIRED_VALUE = "complete", "input_required"
HANDSHAKE = "initialize"


@dataclass(frozen=True)
class CapabilityRule:
    """One entry of the overlay's ``capabilities``: what a capability stands for."""

    requests: str | None = None  # the method prefix of the requests it covers ("tools/")
    notification: str | None = None  # a server capability without requests: the notification it promises
    flags: tuple[tuple[str, str], ...] = ()  # (flag, the message it promises), server capabilities only
    members: tuple[CapabilityMember, ...] = ()  # what of it a request's params need, client capabilities only


class EraMismatch(GeneratorError):
    """The schema's era (``initialize`` or not) is not the era the lock gives it."""


@dataclass(frozen=True)
class Overlay:
    empty_result_methods: frozenset[str]
    task_params_property: str
    task_result: str
    deprecated_methods: dict[str, frozenset[str]]
    deprecated_definitions: dict[str, frozenset[str]]
    deprecated_fields: dict[str, frozenset[str]]
    sse_priming: frozenset[str] = frozenset()  # legacy revisions whose SSE streams open with a priming event
    headerless_http: frozenset[str] = frozenset()  # the revision an HTTP request without MCP-Protocol-Version is
    resource_not_found: dict[str, int] = field(default_factory=dict)  # version -> code, where not -32602
    log_levels: tuple[str, ...] = ()  # LoggingLevel's values, least severe first (the runtime's LOG_LEVELS)
    server_capabilities: dict[str, CapabilityRule] = field(default_factory=dict)  # by capability name
    client_capabilities: dict[str, CapabilityRule] = field(default_factory=dict)
    target_params: dict[str, str] = field(default_factory=dict)  # method -> the param Mcp-Name carries


# RFC 5424's severities, least severe first: the order of an overlay written before it had
# ``log_levels`` (a project's own schema/overlay.json, copied at its first adoption)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def capability_rules(raw: dict[str, JSON], side: str) -> dict[str, CapabilityRule]:
    """The overlay's ``capabilities.<side>``, each rule checked for its shape: a server capability
    names its ``requests`` prefix or its ``notification``, and may have ``flags``; a client
    capability names its ``requests`` prefix only."""
    rules = {}
    for name, entry in raw[side].items():
        requests, notification, flags = entry.get("requests"), entry.get("notification"), entry.get("flags", {})
        given = [key for key, value in (("requests", requests), ("notification", notification)) if value is not None]
        allowed = ["requests"] if side == "client" else ["requests", "notification"]
        if len(given) != 1 or given[0] not in allowed or not isinstance(requests or notification, str):
            raise ValueError(f"capabilities.{side}.{name} needs one of {' or '.join(allowed)} (a string)")
        if (
            not isinstance(flags, dict)
            or not all(isinstance(v, str) for v in flags.values())
            or (flags and side == "client")
        ):
            raise ValueError(
                f"capabilities.{side}.{name}.flags: a server capability's flags map each to the message it promises"
            )
        # an overlay from before ``members`` (a project's own, copied at its first adoption) stands
        # on the generator's own; ``"members": {}`` says there are none
        members_raw = entry["members"] if "members" in entry else bundled_members(side, str(name))
        members = capability_members(members_raw, f"capabilities.{side}.{name}.members", side)
        rules[str(name)] = CapabilityRule(requests, notification, tuple((str(k), v) for k, v in flags.items()), members)
    return rules


MEMBER_KEYS = {"param": str, "value": str, "when_absent": bool, "implied": bool}


def bundled_members(side: str, name: str) -> Any:
    """The members the generator's own overlay gives a client capability ({} for none)."""
    entry = bundled_section("capabilities").get(side, {}).get(name, {}) if side == "client" else {}
    return entry.get("members", {}) if isinstance(entry, dict) else {}


def capability_members(raw: Any, where: str, side: str) -> tuple[CapabilityMember, ...]:
    """A client capability's ``members``: each member's name to when a request needs it, its
    ``param`` (the request's param that tells), ``value`` (needed when the param has it; without
    one, whenever the param is set), ``when_absent`` (needed too when the param is absent) and
    ``implied`` (a capability declared with none of the members stands for this one)."""
    keys = "{param, value?, when_absent?, implied?}"
    shape = f"{where}: each member maps to {keys}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: an object of members, each to {keys}")
    if raw and side != "client":
        raise ValueError(f"{where}: only a client capability has members")
    members = []
    for name, rule in raw.items():
        if not isinstance(rule, dict) or not isinstance(rule.get("param"), str):
            raise ValueError(f"{shape} ({name!r} names no param)")
        for key, value in rule.items():
            if key not in MEMBER_KEYS or not isinstance(value, MEMBER_KEYS[key]):
                raise ValueError(f"{shape} ({name!r}: {key!r} is {value!r})")
        members.append(CapabilityMember(str(name), **rule))  # its keys are the fields (MEMBER_KEYS)
    return tuple(members)


@functools.cache
def bundled_section(name: str) -> Any:
    """A section of the generator's own overlay: what an overlay written before the section
    existed (a project's own, copied at its first adoption) stands on."""
    path = bundled_schema_dir() / "overlay.json"
    return load_json(path.read_text(encoding="utf-8"), f"overlay {path}")[name]


def load_overlay(path: Path) -> Overlay:
    try:
        raw = load_json(path.read_text(encoding="utf-8"), f"overlay {path}")
        deprecated = {k: v for k, v in raw["deprecated"].items() if k != "reason"}
        capabilities = raw["capabilities"] if "capabilities" in raw else bundled_section("capabilities")
        mcp_name = raw["mcp_name"] if "mcp_name" in raw else bundled_section("mcp_name")
        return Overlay(
            empty_result_methods=frozenset(raw["empty_result"]["methods"]),
            task_params_property=raw["task_augmented"]["params_property"],
            task_result=raw["task_augmented"]["result"],
            deprecated_methods={v: frozenset(d.get("methods", ())) for v, d in deprecated.items()},
            deprecated_definitions={v: frozenset(d.get("definitions", ())) for v, d in deprecated.items()},
            deprecated_fields={v: frozenset(d.get("fields", ())) for v, d in deprecated.items()},
            sse_priming=frozenset(raw.get("sse_priming", {}).get("versions", ())),
            headerless_http=frozenset(raw.get("headerless_http", {}).get("versions", ())),
            resource_not_found={v: int(c) for v, c in raw.get("resource_not_found", {}).get("codes", {}).items()},
            log_levels=tuple(str(level) for level in raw["log_levels"]["order"]) if "log_levels" in raw else LOG_LEVELS,
            server_capabilities=capability_rules(capabilities, "server"),
            client_capabilities=capability_rules(capabilities, "client"),
            target_params={str(method): str(param) for method, param in mcp_name["params"].items()},
        )
    except FileNotFoundError:
        raise GeneratorError(f"no overlay at {path}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:  # JSONDecodeError is a ValueError
        raise GeneratorError(f"overlay {path} is malformed: {exc}") from None


# the members the generated ``Server`` and ``Client`` classes define besides handlers and stubs
GENERATED_MEMBERS = frozenset({"revision", "registry", "era", "handlers"})
# the runtime's classes those two extend (module under templates/runtime, class)
RUNTIME_BASES = (
    ("server/handler.py", "HandlerBase"),
    ("client/base.py", "BaseClient"),
    ("client/legacy.py", "LegacyClient"),
    ("client/modern.py", "ModernClient"),
)


@functools.cache
def reserved_members() -> frozenset[str]:
    """Names a handler or client stub may not take: what the generated classes and the runtime's
    bases define (read from the runtime's source), and ``object``'s; one of them would replace
    the member it is named like (a ``router`` handler broke ``run_stdio``)."""
    names = set(GENERATED_MEMBERS) | set(dir(object))
    for module, cls in RUNTIME_BASES:
        tree = ast.parse((templates_dir() / "runtime" / module).read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(item.name)
                        names.update(  # what its methods set on the instance (self.discovered = ...)
                            target.attr
                            for sub in ast.walk(item)
                            if isinstance(sub, ast.Assign | ast.AnnAssign)
                            for target in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
                            if isinstance(target, ast.Attribute)
                            and isinstance(target.value, ast.Name)
                            and target.value.id == "self"
                        )
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        names.add(item.target.id)
                    elif isinstance(item, ast.Assign):
                        names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return frozenset(names)


def member_name(definition: str) -> str:
    """``stub_name``, with ``_`` added while it is a name the classes it joins define already."""
    name = stub_name(definition)
    while name in reserved_members():
        name += "_"
    return name


def stub_name(definition: str) -> str:
    """``CallToolRequest`` -> ``call_tool``; a keyword gets a trailing underscore (``import_``)."""
    base = re.sub(r"(Request|Notification)$", "", definition) or definition
    name = re.sub(r"(?<!^)(?=[A-Z][a-z])|(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()
    return name + "_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


class _Analyzer:
    def __init__(self, schema: LoadedSchema, document: dict[str, JSON], overlay: Overlay) -> None:
        self.schema = schema
        self.defs: dict[str, JSON] = document[schema.container]
        self.prefix = schema.ref_prefix
        self.overlay = overlay
        self.reading: str | None = None  # the definition being read: named when it cannot be

    def fail(self, message: str, definition: str | None = None, pointer: str | None = None) -> GeneratorError:
        return GeneratorError(message, version=self.schema.version, definition=definition, pointer=pointer)

    def log_levels(self) -> tuple[str, ...]:
        """The revision's ``LoggingLevel`` values in the overlay's ranking, least severe first (each
        is ranked there: ``check_log_levels``); handed to the runtime by the package. Only its own:
        a level the overlay ranks for a newer revision changes no older package, and a client asks
        an older server for the nearest level it has (``log_levels.nearest``)."""
        levels = self.defs.get("LoggingLevel")
        values = levels.get("enum") if isinstance(levels, dict) else None
        if not isinstance(values, list) or not values:
            return ()
        return tuple(level for level in self.overlay.log_levels if level in values)

    def properties(self, node: JSON) -> dict[str, JSON]:
        """The properties of a schema node, through a ``$ref`` to a definition (refused when it
        resolves to none: ``ref_name``)."""
        self.ref_name(node)
        return properties(self.defs, node)

    def capabilities(
        self, methods: list[Method]
    ) -> tuple[tuple[ServerCapability, ...], dict[str, tuple[str, tuple[CapabilityMember, ...]]]]:
        """The overlay's ``capabilities`` as this revision has them: a server capability where
        ``ServerCapabilities`` has the property and the table a request it covers (or the
        notification it promises), each flag where the capability has the property and the table
        the message; a client capability where ``ClientCapabilities`` has it, for each request a
        server sends (or embeds) that it covers, with the members it has of those the overlay
        describes. Older revisions lack what newer ones add (``completions`` came with
        2025-03-26's property, ``elicitation`` with 2025-06-18, ``elicitation.url`` with
        2025-11-25)."""
        answered = [m.name for m in methods if m.kind == "request" and m.client_sends]
        promised = {m.name for m in methods if m.kind == "notification" and m.server_sends} | set(answered)
        asked = [m.name for m in methods if m.kind == "request" and m.direction != "client_to_server"]
        self.reading = "ServerCapabilities"
        offered = self.properties(self.defs.get("ServerCapabilities"))
        server = []
        for name, rule in self.overlay.server_capabilities.items():
            if name not in offered:
                continue
            requests = tuple(m for m in answered if rule.requests is not None and m.startswith(rule.requests))
            if not (requests if rule.requests is not None else rule.notification in promised):
                continue
            have = self.properties(offered[name])
            flags = tuple((flag, message) for flag, message in rule.flags if flag in have and message in promised)
            server.append(ServerCapability(name, requests, flags))
        self.reading = "ClientCapabilities"
        declared = self.properties(self.defs.get("ClientCapabilities"))
        client = {}
        for name, rule in self.overlay.client_capabilities.items():
            if name not in declared:
                continue
            has = self.properties(declared[name])
            members = tuple(replace(member, available=member.name in has) for member in rule.members)
            for method in asked:
                if rule.requests is not None and method.startswith(rule.requests):
                    client[method] = (name, members)
        self.reading = None
        return tuple(server), client

    def target_param(self, method: Method) -> str | None:
        """The param the overlay's ``mcp_name`` names for a request a client sends, where its
        params have that property (the Streamable HTTP ``Mcp-Name`` header's source)."""
        param = (
            self.overlay.target_params.get(method.name) if method.kind == "request" and method.client_sends else None
        )
        if param is None or method.params_type is None:
            return None
        return param if param in self.properties(self.defs.get(method.params_type)) else None

    def subscription_filter(self, methods: list[Method]) -> tuple[tuple[str, str, bool], ...]:
        """``SubscriptionFilter``'s members (2026-07-28: ``subscriptions/listen``), each with the
        notification it opts in to, read from the ``{@link}`` its description makes to the
        notification's definition, and whether it lists URIs (an array) or is a flag (a boolean).
        A member naming no notification the server sends is left out: no server honours it."""
        sent = {m.definition: m.name for m in methods if m.kind == "notification" and m.server_sends}
        self.reading = "SubscriptionFilter"
        members = []
        patched = self.schema.document[self.schema.container]  # before the prepass cleaned the links
        described = self.properties(patched.get("SubscriptionFilter"))
        for name, node in self.properties(self.defs.get("SubscriptionFilter")).items():
            method = linked_notification(described.get(name, node), sent)
            kind = node.get("type") if isinstance(node, dict) else None
            if method is not None and kind in ("boolean", "array"):
                members.append((name, method, kind == "array"))
        self.reading = None
        return tuple(members)

    def check_modern(self, methods: list[Method]) -> None:
        """What the runtime reads of every modern message, which the schema must still say (a
        revision that did not was adopted, and its server failed at run time: a review of the
        spec-change path): each request a client sends requires ``params`` with ``_meta`` (the
        protocol version and client capabilities ride there), each result's ``resultType``
        takes ``complete``, and the interim result's takes ``input_required``."""
        for m in methods:
            if m.kind != "request" or not m.client_sends:  # (what a server sends carries no _meta envelope)
                continue
            params = self.defs.get(m.params_type) if m.params_type else None
            required = params.get("required") if isinstance(params, dict) else None
            if not (m.params_required and isinstance(required, list) and "_meta" in required):
                raise self.fail(
                    f"{m.name} does not require params._meta: a modern request carries the protocol version "
                    "and the client's capabilities there, and the runtime reads them from every request",
                    definition=m.params_type or m.definition,
                )
        expected = [(m.result_type, COMPLETE) for m in methods if m.result_type and not m.embedded]
        if any(m.mrtr for m in methods):
            expected.append((INPUT_REQUIRED, INPUT_REQUIRED_VALUE))
        for result, value in expected:
            body = self.defs.get(result)
            kind = (body.get("properties") or {}).get(RESULT_TYPE) if isinstance(body, dict) else None
            if kind is not None and not self.admits(kind, value):
                raise self.fail(
                    f"{RESULT_TYPE} does not take {value!r}, which the runtime writes on every such result",
                    definition=result,
                    pointer=f"/properties/{RESULT_TYPE}",
                )

    def admits(self, schema: JSON, value: str, depth: int = 0) -> bool:
        """A string property's schema takes ``value`` (``$ref``, ``const``, ``enum``, ``type``,
        ``anyOf``/``oneOf``/``allOf`` read; anything else is taken as allowing it)."""
        if not isinstance(schema, dict) or depth > 16:
            return True
        name = self.ref_name(schema) if "$ref" in schema else None
        if name is not None and not self.admits(self.defs.get(name), value, depth + 1):
            return False
        if "const" in schema and schema["const"] != value:
            return False
        if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
            return False
        kinds = schema.get("type")
        if kinds is not None and "string" not in (kinds if isinstance(kinds, list) else [kinds]):
            return False
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and not any(self.admits(b, value, depth + 1) for b in schema[key]):
                return False
        return not (
            isinstance(schema.get("allOf"), list) and not all(self.admits(b, value, depth + 1) for b in schema["allOf"])
        )

    def check_member_names(self, methods: list[Method]) -> None:
        """Two methods whose definitions make one Python name (``GetURLRequest``, ``GetUrlRequest``),
        or one named as another's ``_pages`` helper, would leave one unreachable: refused."""
        owner: dict[str, str] = {}
        for m in methods:
            for name in (m.stub_name, m.stub_name + "_pages"):
                other = owner.get(name)
                if other is not None and other != m.definition:
                    raise self.fail(
                        f"definitions {other!r} and {m.definition!r} both make the Python name {name!r}",
                        definition=m.definition,
                    )
                owner[name] = m.definition

    def ref_name(self, node: JSON) -> str | None:
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref: str = node["$ref"]
            if not ref.startswith(self.prefix) or ref[len(self.prefix) :] not in self.defs:
                raise self.fail(f"unresolvable $ref {ref!r}")
            return ref[len(self.prefix) :]
        return None

    def members(self, union: str) -> list[str]:
        body = self.defs.get(union)
        if body is None:
            return []
        if "anyOf" in body:
            names = [self.ref_name(branch) for branch in body["anyOf"]]
            if any(n is None for n in names):
                raise self.fail("direction union has a branch that is not a $ref", definition=union)
            return [n for n in names if n]
        single = self.ref_name(body)
        if single is None:
            raise self.fail("direction union is neither an anyOf nor a $ref", definition=union)
        return [single]

    def method_of(self, definition: str) -> str:
        self.reading = definition
        method = ((self.defs[definition].get("properties") or {}).get("method") or {}).get("const")
        if not isinstance(method, str):
            raise self.fail(
                "message definition has no string const `method`",
                definition=definition,
                pointer=f"/{self.schema.container}/{definition}/properties/method",
            )
        return method

    def params_of(self, definition: str) -> tuple[str | None, bool]:
        body = self.defs[definition]
        params = (body.get("properties") or {}).get("params")
        if params is None:
            return None, False
        name = self.ref_name(params)
        if name is None:
            raise self.fail("params is an inline schema the prepass did not name", definition=definition)
        return name, "params" in body.get("required", ())

    def result_of(self, definition: str, method: str) -> tuple[str, bool]:
        """(result definition, may answer input_required)."""
        stem = definition.removesuffix("Request")
        response = self.defs.get(stem + "ResultResponse")
        if response is not None:
            result = (response.get("properties") or {}).get("result") or {}
            named = self.ref_name(result)
            if named:
                return named, False
            branches = [self.ref_name(b) for b in result.get("anyOf", ())]
            others = [b for b in branches if b and b != INPUT_REQUIRED]
            if len(others) == 1 and len(branches) == 2 and INPUT_REQUIRED in branches:
                return others[0], True
            raise self.fail("cannot read the result type from the response", definition=stem + "ResultResponse")
        if stem + "Result" in self.defs:
            return stem + "Result", False
        if method in self.overlay.empty_result_methods:
            if "EmptyResult" not in self.defs:
                raise self.fail(
                    "overlay pairs this method with EmptyResult, which is not defined", definition=definition
                )
            return "EmptyResult", False
        raise self.fail(
            f"no result for {method!r}: no {stem}Result and not in overlay empty_result", definition=definition
        )

    def cacheable(self, result: str) -> bool:
        body = self.defs[result]
        props, required = body.get("properties") or {}, set(body.get("required", ()))
        return {"ttlMs", "cacheScope"} <= set(props) and {"ttlMs", "cacheScope"} <= required

    def task_result(self, params: str | None) -> str | None:
        if params is None:
            return None
        props = self.defs[params].get("properties") or {}
        if self.overlay.task_params_property not in props:
            return None
        if self.overlay.task_result not in self.defs:
            raise self.fail(f"task-augmented params but no {self.overlay.task_result}", definition=params)
        return self.overlay.task_result

    def const_code(self, node: JSON) -> int | None:
        code = ((node.get("properties") or {}).get("code") or {}).get("const") if isinstance(node, dict) else None
        return code if type(code) is int else None

    def error_id_required(self) -> bool:
        """The JSON-RPC error response (``JSONRPCError``, ``JSONRPCErrorResponse`` from 2025-11-25)
        requires ``id``: an error whose request's id could not be read carries ``"id": null`` (JSON-RPC
        2.0's spelling), where a revision whose schema makes it optional leaves it out."""
        for name in ("JSONRPCErrorResponse", "JSONRPCError"):
            body = self.defs.get(name)
            if isinstance(body, dict):
                required = body.get("required")
                return isinstance(required, list) and "id" in required
        return True

    def typed_errors(self) -> tuple[TypedError, ...]:
        """Error responses whose ``error`` member pins its ``code`` (``allOf[Error, {code: const}]``)."""
        found = []
        for name, body in self.defs.items():
            error_type = self.ref_name((body.get("properties") or {}).get("error"))
            if error_type is None:
                continue
            codes = [c for b in self.defs[error_type].get("allOf", ()) if (c := self.const_code(b)) is not None]
            if len(codes) == 1:
                found.append(TypedError(code=codes[0], envelope=name, error_type=error_type))
        if len({e.code for e in found}) != len(found):
            raise self.fail("two error responses pin the same code")
        return tuple(sorted(found, key=lambda e: -e.code))

    def build(self) -> Protocol:
        seen: dict[tuple[Kind, str], list[Direction]] = {}  # (kind, method) -> directions
        definition_of: dict[tuple[Kind, str], str] = {}
        for union, kind, direction in UNIONS:
            for member in self.members(union):
                method = self.method_of(member)
                key = (kind, method)
                if key in definition_of and definition_of[key] != member:
                    raise self.fail(
                        f"{method!r} is defined by both {definition_of[key]} and {member}", definition=union
                    )
                definition_of[key] = member
                seen.setdefault(key, []).append(direction)
        embedded = {self.method_of(m): m for m in self.members(EMBEDDED_UNION)}
        for method, member in embedded.items():
            key = ("request", method)
            if key in definition_of:
                raise self.fail(f"{method!r} is both a JSON-RPC request and an embedded request", definition=member)
            definition_of[key] = member
            seen[key] = ["server_to_client"]
        version = self.schema.version
        methods = []
        for (kind, method), directions in seen.items():
            definition = definition_of[(kind, method)]
            self.reading = definition
            params, params_required = self.params_of(definition)
            direction = "both" if len(set(directions)) > 1 else directions[0]
            result, mrtr = self.result_of(definition, method) if kind == "request" else (None, False)
            methods.append(
                Method(
                    name=method,
                    kind=kind,
                    direction=direction,
                    definition=definition,
                    params_type=params,
                    params_required=params_required,
                    result_type=result,
                    stub_name=member_name(definition),
                    mrtr=mrtr,
                    cacheable=bool(result) and self.cacheable(result or ""),
                    deprecated=method in self.overlay.deprecated_methods.get(version, frozenset()),
                    embedded=method in embedded,
                    task_result=self.task_result(params) if kind == "request" else None,
                )
            )
        methods.sort(key=lambda m: (m.kind != "request", m.name))
        self.check_member_names(methods)
        era: Era = "legacy" if any(m.name == HANDSHAKE for m in methods) else "modern"
        if era != self.schema.era:
            raise EraMismatch(
                f"the lock says era {self.schema.era!r} but the schema is {era!r} "
                f"({'has' if era == 'legacy' else 'has no'} `{HANDSHAKE}`)",
                version=self.schema.version,
            )
        if era == "modern":
            self.check_modern(methods)
        server_capabilities, needs = self.capabilities(methods)
        for i, m in enumerate(methods):
            if m.name in needs:
                capability, members = needs[m.name]
                methods[i] = replace(m, client_capability=capability, client_capability_members=members)
        if era == "modern":
            methods = [replace(m, target_param=self.target_param(m)) for m in methods]
        return Protocol(
            version=version,
            era=era,
            dialect=self.schema.dialect,
            sha256=self.schema.sha256,
            methods=tuple(methods),
            definitions=tuple(sorted(self.defs)),
            batching="JSONRPCBatchRequest" in self.defs,
            envelope_in_message=all(
                "jsonrpc" in (self.defs[m.definition].get("properties") or {}) for m in methods if not m.embedded
            ),
            typed_errors=self.typed_errors(),
            input_required=INPUT_REQUIRED if any(m.mrtr for m in methods) else None,
            error_id_required=self.error_id_required(),
            log_levels=self.log_levels(),
            server_capabilities=server_capabilities,
            subscription_filter=self.subscription_filter(methods),
        )


def analyze(schema: LoadedSchema, document: dict[str, JSON], overlay: Overlay) -> Protocol:
    """Build the IR from the prepassed ``document`` of ``schema``."""
    analyzer = _Analyzer(schema, document, overlay)
    try:
        return analyzer.build()
    except UNREADABLE as exc:
        raise unreadable(schema.original, schema.version, exc, analyzer.reading) from None


@dataclass(frozen=True)
class AnalyzedRevision:
    """One revision through the front end and analysis: what every later stage starts from."""

    schema: LoadedSchema  # loaded and patched
    document: dict[str, JSON]  # after the prepass: what datamodel-code-generator reads
    protocol: Protocol  # the IR


# what a step raises on a document it cannot walk (a list where an object belongs...)
UNREADABLE = (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError)


def unreadable(
    document: dict[str, JSON], version: str, exc: Exception, definition: str | None = None
) -> GeneratorError:
    """The error for a document a step could not walk: the metaschema's verdict, naming where it
    is no JSON Schema (raised), else "cannot read the schema" with what the step met, and the
    definition it was reading when it knows it."""
    check_json_schema(document, version)
    return GeneratorError(
        f"cannot read the schema: {type(exc).__name__}: {exc}", version=version, definition=definition
    )


def analyze_schema(schema: LoadedSchema, overlay: Overlay) -> AnalyzedRevision:
    """Prepass and analyze ``schema``. A schema the steps cannot read (a hand-made lock or a file
    given to ``diff`` skip adoption's checks) is a ``GeneratorError`` naming where it is no JSON
    Schema, never a traceback."""
    try:
        document, _ = prepass(schema)
        return AnalyzedRevision(schema, document, analyze(schema, document, overlay))
    except UNREADABLE as exc:
        raise unreadable(schema.original, schema.version, exc) from None


def analyze_revision(lock: Lock, version: str, overlay: Overlay) -> AnalyzedRevision:
    """Load, patch, prepass and analyze one locked revision, to be generated: its keywords must be
    ones the models enforce (``check_supported``) and its log levels ranked (``check_log_levels``;
    ``diff`` reads any schema)."""
    schema = load(lock, version)
    try:
        check_supported(schema.document, schema.container, version)
        check_log_levels(schema.document, schema.container, version, overlay)
        return analyze_schema(schema, overlay)
    except GeneratorError:
        # what the steps made of a document that is no JSON Schema (``"properties": [...]``: its
        # required names undeclared) is no help: the metaschema's verdict names the fault
        check_json_schema(schema.document, version)
        raise
    except UNREADABLE as exc:
        raise unreadable(schema.document, version, exc) from None


def check_log_levels(document: dict[str, JSON], container: str, version: str, overlay: Overlay) -> None:
    """Every value of the revision's ``LoggingLevel`` has a rank in the overlay's ``log_levels``:
    the schema lists the levels but states no order, and a level the runtime cannot rank would
    reach clients that asked for less."""
    levels = document[container].get("LoggingLevel")
    values = levels.get("enum") if isinstance(levels, dict) else None
    for value in values if isinstance(values, list) else ():
        if value not in overlay.log_levels:
            raise GeneratorError(
                f"level {value!r} has no rank: add it to log_levels.order in schema/overlay.json "
                "(least severe first; the generated package hands the ranking to the runtime)",
                version=version,
                definition="LoggingLevel",
            )


def properties(defs: dict[str, JSON], node: JSON) -> dict[str, JSON]:
    """The properties of a schema node, through a ``$ref`` to one of ``defs`` (its last segment)."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    body = defs.get(ref.rsplit("/", 1)[-1]) if isinstance(ref, str) else node
    props = body.get("properties") if isinstance(body, dict) else None
    return props if isinstance(props, dict) else {}


LINK = re.compile(r"\{@link\s*([A-Za-z_][A-Za-z0-9_]*)")
QUOTED = re.compile(r"`([^`]+)`")


def linked_notification(node: JSON, sent: dict[str, str]) -> str | None:
    """The notification (of ``sent``: definition -> method) a schema node's description names:
    by a ``{@link}`` to its definition (``{@link ToolListChangedNotification ...}``, the link
    text run into the name as typedoc writes it: the longest definition the linked word starts
    with), else as a quoted method name (`` `notifications/tools/list_changed` ``); None when it
    names none."""
    description = node.get("description") if isinstance(node, dict) else None
    text = description if isinstance(description, str) else ""
    for word in LINK.findall(text):
        found = max((d for d in sent if word.startswith(d)), key=len, default=None)
        if found is not None:
            return sent[found]
    methods = set(sent.values())
    return next((quoted for quoted in QUOTED.findall(text) if quoted in methods), None)


# capability maps an author fills (non-standard capabilities, extensions): nothing to describe
OPEN_CAPABILITIES = frozenset({"experimental", "extensions"})


def undescribed_capabilities(document: dict[str, JSON], container: str, overlay: Overlay) -> list[str]:
    """The capabilities (and server capability flags) a schema defines that the overlay's
    ``capabilities`` does not say the meaning of: a server never declares such a capability on
    its own, nor a client. Said at adoption, as a line to add to the overlay."""
    defs = document[container]
    notes = []
    for side, definition, rules in (
        ("server", "ServerCapabilities", overlay.server_capabilities),
        ("client", "ClientCapabilities", overlay.client_capabilities),
    ):
        for name, node in properties(defs, defs.get(definition)).items():
            if name in OPEN_CAPABILITIES:
                continue
            if name not in rules:
                notes.append(f"{definition}.{name} is not in capabilities.{side}: it is never declared on its own")
            elif side == "server":
                described = dict(rules[name].flags)
                for flag in properties(defs, node):
                    if flag not in described:
                        notes.append(
                            f"{definition}.{name}.{flag} is not among capabilities.server.{name}.flags: "
                            "it is never declared on its own"
                        )
    return notes


def overlay_for(schema_dir: Path) -> Overlay:
    return load_overlay(schema_dir / "overlay.json")


def stale_overlay_entries(overlay: Overlay, schemas: list[tuple[LoadedSchema, Protocol]]) -> list[str]:
    """Overlay entries that no locked schema needs; each is a failure."""
    problems = []
    used_empty = {m.name for _, p in schemas for m in p.methods if m.result_type == "EmptyResult"}
    for method in sorted(overlay.empty_result_methods - used_empty):
        problems.append(f"empty_result: {method!r} is paired with EmptyResult in no locked schema")
    if not any(m.task_result for _, p in schemas for m in p.methods):
        problems.append(f"task_augmented: no locked schema has params with {overlay.task_params_property!r}")
    by_version = {s.version: (s, p) for s, p in schemas}
    for version in sorted(overlay.resource_not_found):
        if version not in by_version:
            problems.append(f"resource_not_found: {version} is not a locked revision")
    ranked = {v for s, _ in schemas for v in (s.document[s.container].get("LoggingLevel") or {}).get("enum", ())}
    for level in overlay.log_levels:
        if level not in ranked:
            problems.append(f"log_levels: {level!r} is a LoggingLevel value in no locked schema")
    offered: dict[str, set[str]] = {}
    for _, protocol in schemas:
        for cap in protocol.server_capabilities:
            offered.setdefault(cap.name, set()).update(flag for flag, _ in cap.flags)
    for name, rule in overlay.server_capabilities.items():
        if name not in offered:
            problems.append(
                f"capabilities.server: {name!r} is in no locked schema (ServerCapabilities, with its messages)"
            )
        for flag, message in rule.flags:
            if name in offered and flag not in offered[name]:
                problems.append(f"capabilities.server.{name}: flag {flag!r} with {message!r} is in no locked schema")
    named = {m.name for _, p in schemas for m in p.methods if m.target_param is not None}
    for method, param in overlay.target_params.items():
        if method not in named:
            problems.append(f"mcp_name: {method!r} has params with {param!r} in no locked modern schema")
    needed = {m.client_capability for _, p in schemas for m in p.methods}
    kept = {
        (m.client_capability, c.name)
        for _, p in schemas
        for m in p.methods
        for c in m.client_capability_members
        if c.available
    }
    for name, rule in overlay.client_capabilities.items():
        if name not in needed:
            problems.append(
                f"capabilities.client: {name!r} is in no locked schema (ClientCapabilities, with its requests)"
            )
        for member in rule.members:
            if name in needed and (name, member.name) not in kept:
                problems.append(
                    f"capabilities.client.{name}.members: {member.name!r} is in no locked schema "
                    f"(ClientCapabilities.{name}.{member.name})"
                )
    for key, versions in (("sse_priming", overlay.sse_priming), ("headerless_http", overlay.headerless_http)):
        for version in sorted(versions):
            if version not in by_version or by_version[version][1].era != "legacy":
                problems.append(f"{key}: {version} is not a locked legacy revision")
    for version in sorted(overlay.deprecated_methods):
        if version not in by_version:
            problems.append(f"deprecated: {version} is not a locked revision")
            continue
        schema, protocol = by_version[version]
        names = {m.name for m in protocol.methods}
        for method in sorted(overlay.deprecated_methods[version] - names):
            problems.append(f"deprecated[{version}]: method {method!r} does not exist")
        for definition in sorted(overlay.deprecated_definitions[version] - set(schema.definitions)):
            problems.append(f"deprecated[{version}]: definition {definition!r} does not exist")
        for dotted in sorted(overlay.deprecated_fields[version]):
            owner, _, prop = dotted.partition(".")
            if prop not in (schema.definitions.get(owner, {}).get("properties") or {}):
                problems.append(f"deprecated[{version}]: field {dotted!r} does not exist")
    return problems
