"""The protocol IR: what every template reads.

Built mechanically by ``mcp_schema_codegen.ir.analyze`` from one revision's schema plus the curated
overlay. Frozen and small on purpose: a template should never need the raw schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mcp_schema_codegen.frontend.lock import Era

__all__ = ["Direction", "Era", "Kind", "Method", "Protocol", "ServerCapability", "TypedError"]

Kind = Literal["request", "notification"]
Direction = Literal["client_to_server", "server_to_client", "both"]


@dataclass(frozen=True)
class CapabilityMember:
    """A member of a client capability that a request needs declared when its params say so (the
    overlay's ``capabilities.client.<name>.members``): ``elicitation.url`` for ``mode`` "url". A
    member the revision's ``ClientCapabilities`` lacks is kept, unavailable: params that need it
    (``tools`` in a 2025-06-18 sampling request) are refused, not sent as if agreed."""

    name: str  # "url"
    param: str  # the request's param that tells: "mode"
    value: str | None = None  # needed when the param has this value; None: whenever it is set
    when_absent: bool = False  # needed too when the param is absent (its default is ``value``)
    implied: bool = False  # a capability declared with none of the members stands for this one
    available: bool = True  # the revision's ClientCapabilities has it (else no client can declare it)


@dataclass(frozen=True)
class Method:
    """One JSON-RPC method of one revision."""

    name: str  # wire name, e.g. "tools/call"
    kind: Kind
    direction: Direction
    definition: str  # the message definition, e.g. "CallToolRequest"
    params_type: str | None  # the params definition, None when the message has no params
    params_required: bool
    result_type: str | None  # None for notifications
    stub_name: str  # "call_tool", from the definition name
    mrtr: bool = False  # may answer input_required (2026: tools/call, prompts/get, resources/read)
    cacheable: bool = False  # the complete result carries ttlMs/cacheScope
    deprecated: bool = False
    embedded: bool = False  # exists only inside InputRequiredResult.inputRequests (2026)
    task_result: str | None = None  # result when task-augmented (2025-11-25)
    client_capability: str | None = None  # a server's request: the client capability it needs (the overlay)
    client_capability_members: tuple[CapabilityMember, ...] = ()  # and the members its params may need
    target_param: str | None = None  # modern: the param Mcp-Name carries and a requestState is bound to (the overlay)

    @property
    def client_sends(self) -> bool:
        return self.direction in ("client_to_server", "both") and not self.embedded

    @property
    def server_sends(self) -> bool:
        return self.direction in ("server_to_client", "both") and not self.embedded


@dataclass(frozen=True)
class ServerCapability:
    """A capability a server of this revision may declare (the overlay's ``capabilities.server``,
    kept where the revision's ``ServerCapabilities`` has it and its table the messages)."""

    name: str  # "tools"
    requests: tuple[str, ...]  # implementing a handler of one declares it; () : always declared
    # (flag, the message it promises): ("listChanged", "notifications/tools/list_changed")
    flags: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class TypedError:
    """An error whose JSON-RPC ``error`` member the schema types (2026: -32020, -32021, -32022)."""

    code: int
    envelope: str  # the error response definition, e.g. "UnsupportedProtocolVersionError"
    error_type: str  # the definition of its ``error`` member, e.g. "UnsupportedProtocolVersionErrorError"


@dataclass(frozen=True)
class Protocol:
    """One revision: its identity, era and method table."""

    version: str
    era: Era
    dialect: str
    sha256: str
    methods: tuple[Method, ...]
    definitions: tuple[str, ...]  # every model name, after the prepass
    batching: bool  # the schema defines JSON-RPC batches (2025-03-26)
    envelope_in_message: bool  # request definitions carry jsonrpc/id themselves (>= 2025-11-25)
    typed_errors: tuple[TypedError, ...] = ()  # error responses the schema defines with a const code
    input_required: str | None = None  # the MRTR interim result definition (2026)
    error_id_required: bool = True  # its error response requires an id (before 2025-11-25): null when unread
    log_levels: tuple[str, ...] = ()  # LoggingLevel's values, least severe first (the overlay's log_levels)
    server_capabilities: tuple[ServerCapability, ...] = ()  # the overlay's capabilities.server this revision has
    # SubscriptionFilter (2026): (member, the notification it opts in to, whether it lists URIs)
    subscription_filter: tuple[tuple[str, str, bool], ...] = ()

    @property
    def package(self) -> str:
        return "v" + self.version.replace("-", "_")

    def method(self, name: str) -> Method:
        for method in self.methods:
            if method.name == name:
                return method
        raise KeyError(name)
