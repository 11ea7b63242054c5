"""Protocol versions: the registry a generated package hands the runtime, and the one negotiation rule.

A version is an ISO date (``2025-11-25``). This module is the only place that orders versions;
everywhere else they are compared for equality or looked up in a ``VersionRegistry``.

The runtime imports no generated package by name: each generated package builds a
``VersionRegistry`` from its own revisions (version, era, batching and the dotted name of the
revision package) and hands it in (a generated ``Server`` carries it, the package's ``connect``
passes it). A revision's package is imported the first time its ``Revision`` is asked for, so a
server loads the legacy revisions only when a legacy client initializes. A registry may chain to
another (``parent``) for the revisions it does not generate itself.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

if TYPE_CHECKING:  # for the annotations only: importing a generated package must not import pydantic
    from .codec import Revision

Era = Literal["legacy", "modern"]
ERAS: tuple[Era, ...] = ("legacy", "modern")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")


def version_key(version: str) -> tuple[int, int, int]:
    """The sort key of a version; ``ValueError`` unless it is a ``YYYY-MM-DD`` date."""
    match = _DATE.fullmatch(version) if isinstance(version, str) else None
    if match is None:
        raise ValueError(f"{version!r} is not an MCP protocol version (YYYY-MM-DD)")
    year, month, day = (int(part) for part in match.groups())
    if not (1 <= month <= 12 and 1 <= day <= 31):
        raise ValueError(f"{version!r} is not an MCP protocol version (YYYY-MM-DD)")
    return year, month, day


def is_version(value: object) -> bool:
    """``value`` is a well-formed protocol version."""
    try:
        version_key(cast(str, value))
    except ValueError:
        return False
    return True


def newest_first(versions: Iterable[str]) -> tuple[str, ...]:
    """``versions`` without duplicates, newest first; ``ValueError`` on one that is not a version."""
    return tuple(sorted(set(versions), key=version_key, reverse=True))


def negotiate(
    supported: Iterable[str], *, requested: object = None, offered: Iterable[object] | None = None
) -> str | None:
    """The version to speak: the one rule for servers and clients of either era.

    ``supported`` are the versions this side speaks; ``offered``, when given, the versions the
    peer said it speaks (a -32022 ``data.supported`` list, ``supportedVersions`` of
    ``server/discover``, or the one version an ``initialize`` result names); ``requested`` the
    version the peer asked for. The candidates are the supported versions the peer offered. The
    requested version is chosen when it is a candidate; otherwise the newest candidate (the
    lifecycle rule for a legacy ``initialize``: another version the server supports, its latest);
    None when there is no candidate. Whatever the peer sent that is not a version is ignored.
    """
    ours = newest_first(supported)
    if offered is not None:
        theirs = {value for value in offered if type(value) is str}
        ours = tuple(version for version in ours if version in theirs)
    if type(requested) is str and requested in ours:
        return requested
    return ours[0] if ours else None


class ServerCapability(NamedTuple):
    """A capability a server of a revision may declare (the overlay's ``capabilities.server``, as
    the revision has it): declared when a handler of one of its ``requests`` is implemented (none:
    always), each flag of ``flags`` with it whose message (flag -> method) is a notification the
    server sends or a request it implements."""

    requests: tuple[str, ...]
    flags: Mapping[str, str]


class FilterMember(NamedTuple):
    """A member of a revision's ``SubscriptionFilter`` (``subscriptions/listen``): the
    notification it opts in to, and whether it lists URIs (``resourceSubscriptions``) or is a flag
    (``toolsListChanged``). Read from the schema: the member's description links the notification."""

    method: str
    uris: bool

    def accepted(self, value: object) -> list[object] | bool:
        """What a filter's value for this member opts in to: its URIs (a non-empty list), or True
        for a flag set to ``true``; False when it opts in to nothing."""
        if self.uris:
            return value if isinstance(value, list) and value else False
        return value is True


@dataclass(frozen=True, slots=True)
class RevisionEntry:
    """One revision a generated package provides: version, era, the dotted name of its revision
    package (``mcpgen.v2025_11_25``), whether it has JSON-RPC batches, whether a legacy
    session's SSE streams open with a priming event (the overlay's ``sse_priming``), whether
    an HTTP request naming no revision is taken for this one (the overlay's ``headerless_http``),
    and its ``LoggingLevel`` values least severe first (the overlay's ``log_levels``): data, so a
    client checks a level before any revision package is imported."""

    version: str
    era: Era
    package: str
    batching: bool = False
    sse_priming: bool = False  # a legacy session's SSE streams open with a priming event (2025-11-25)
    headerless_http: bool = False  # an HTTP request without MCP-Protocol-Version is of this revision (2025-03-26)
    resource_not_found: int = -32602  # the error code of resources/read for an unknown URI (-32002 before 2026)
    log_levels: tuple[str, ...] = ()  # LoggingLevel's values, least severe first; () from older packages
    # the server capabilities a server of it may declare, by name (the overlay's
    # ``capabilities.server`` as the revision has them): data, so a server of one revision knows
    # the flags of every revision it serves without importing them
    server_capabilities: Mapping[str, ServerCapability] = field(default_factory=dict)
    # its SubscriptionFilter's members by wire name (2026-07-28 on; none before)
    subscription_filter: Mapping[str, FilterMember] = field(default_factory=dict)


class VersionRegistry:
    """The revisions a generated package provides, newest first; ``parent`` supplies the rest.

    Lookups of a version the registry does not hold raise ``KeyError`` naming the known ones.
    """

    __slots__ = ("_capabilities", "_entries", "_known", "_revisions")

    def __init__(self, entries: Iterable[RevisionEntry], *, parent: VersionRegistry | None = None) -> None:
        own: dict[str, RevisionEntry] = {}
        for entry in entries:
            version_key(entry.version)
            if entry.era not in ERAS:
                raise ValueError(f"revision {entry.version}: unknown era {entry.era!r}")
            if entry.version in own:
                raise ValueError(f"revision {entry.version} is listed twice")
            own[entry.version] = entry
        merged = dict(parent._entries) if parent is not None else {}
        merged.update(own)
        self._entries: dict[str, RevisionEntry] = {version: merged[version] for version in newest_first(merged)}
        self._revisions: dict[str, Revision] = {}
        self._capabilities: dict[str, Mapping[str, ServerCapability]] = {}
        self._known: Mapping[str, frozenset[str]] | None = None

    def __repr__(self) -> str:
        return f"VersionRegistry({', '.join(self._entries)})"

    def __contains__(self, version: object) -> bool:
        return version in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def versions(self) -> tuple[str, ...]:
        """Every version, newest first."""
        return tuple(self._entries)

    def entry(self, version: str) -> RevisionEntry:
        try:
            return self._entries[version]
        except KeyError:
            known = ", ".join(self._entries) or "none"
            raise KeyError(f"unknown MCP revision {version!r}; known: {known}") from None

    def era(self, version: str) -> Era:
        return self.entry(version).era

    def of_era(self, era: Era) -> tuple[str, ...]:
        """The versions of one era, newest first."""
        return tuple(v for v, entry in self._entries.items() if entry.era == era)

    def up_to(self, version: str) -> tuple[str, ...]:
        """``version`` and every older version, newest first: what a handler of ``version`` serves."""
        key = version_key(self.entry(version).version)
        return tuple(v for v in self._entries if version_key(v) <= key)

    def log_levels(self) -> tuple[tuple[str, ...], ...]:
        """The log level rankings the revisions declare (``RevisionEntry.log_levels``), newest first;
        read from the entries, so no revision package is imported."""
        return tuple(entry.log_levels for entry in self._entries.values() if entry.log_levels)

    def server_capabilities(self, version: str) -> Mapping[str, ServerCapability]:
        """What a server of ``version`` may declare: the capabilities of every revision it serves
        (``up_to``), each with the requests and flags any of them has, its own revision's first. A
        capability or flag its own revision lacks (a newer revision that dropped logging) is
        still declared to a session whose revision has it; ``as_spoken`` tells each session only
        what its own revision has. Read from the entries: no revision package is imported."""
        merged = self._capabilities.get(version)
        if merged is None:
            found: dict[str, ServerCapability] = {}
            for served in self.up_to(version):  # newest first
                for name, cap in self.entry(served).server_capabilities.items():
                    have = found.get(name)
                    found[name] = (
                        cap
                        if have is None
                        else ServerCapability(
                            tuple(dict.fromkeys((*have.requests, *cap.requests))), {**cap.flags, **have.flags}
                        )
                    )
            merged = self._capabilities[version] = MappingProxyType(found)
        return merged

    def known_capabilities(self) -> Mapping[str, frozenset[str]]:
        """Every server capability any revision of the registry has, with every flag any has of it."""
        if self._known is None:
            known: dict[str, set[str]] = {}
            for entry in self._entries.values():
                for name, cap in entry.server_capabilities.items():
                    known.setdefault(name, set()).update(cap.flags)
            self._known = MappingProxyType({name: frozenset(flags) for name, flags in known.items()})
        return self._known

    def module(self, version: str, name: str) -> ModuleType:
        """A module of a revision's package (``codec``, ``client``, ``server``), imported on first use."""
        return importlib.import_module(f"{self.entry(version).package}.{name}")

    def revision(self, version: str) -> Revision:
        """The ``Revision`` (method table and era models) of ``version``, imported on first use."""
        revision = self._revisions.get(version)
        if revision is None:
            revision = self._revisions[version] = self.module(version, "codec").REVISION
            if revision.version != version:
                raise ValueError(f"{self.entry(version).package} holds revision {revision.version}, not {version}")
        return revision
