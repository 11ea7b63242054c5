"""What a 401 or 403 asks for: the ``WWW-Authenticate`` challenges (RFC 9110 §11.6.1, RFC 6750 §3).

A header holds one or more challenges (``Bearer realm="x", scope="a b", Basic realm="y"``),
and a response may repeat the header. Parameter names are case-insensitive; values are
tokens or quoted strings with backslash escapes (unquoted URLs, which some servers send, are
taken as they are). A malformed tail is ignored rather than guessed at: what parsed before
it stands.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import httpx

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"'
_LENIENT = r'[^\s,"=][^\s,"]*'  # a token, or an unquoted URL as some servers send
_PARAM = re.compile(rf"({_TOKEN})[ \t]*=[ \t]*({_QUOTED}|{_LENIENT})[ \t]*(?:,|$)")
_SCHEME = re.compile(rf"({_TOKEN})(?:[ \t]+|(?=,)|$)")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*[ \t]*(?:,|$)")
_ESCAPE = re.compile(r"\\(.)")


def parse_www_authenticate(values: Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """Every challenge in ``values`` (the header's field values): ``(scheme, params)``, the
    scheme and parameter names lower-cased; a repeated parameter keeps its first value.
    """
    challenges: list[tuple[str, dict[str, str]]] = []
    for value in values:
        rest = value
        while True:
            rest = rest.lstrip(" \t,")
            if not rest:
                break
            param = _PARAM.match(rest)
            if param and challenges:
                raw = param.group(2)
                text = _ESCAPE.sub(r"\1", raw[1:-1]) if raw.startswith('"') else raw
                challenges[-1][1].setdefault(param.group(1).lower(), text)
                rest = rest[param.end() :]
                continue
            scheme = _SCHEME.match(rest)
            if scheme is None:
                break  # malformed: keep what parsed so far
            challenges.append((scheme.group(1).lower(), {}))
            rest = rest[scheme.end() :]
            token68 = _TOKEN68.match(rest)
            if token68 and not _PARAM.match(rest):
                rest = rest[token68.end() :]
    return challenges


@dataclass(frozen=True)
class Challenge:
    """A challenge on a 401 (authorization needed) or a 403 ``insufficient_scope``: Bearer
    (RFC 6750) or DPoP (RFC 9449 §7.1), whose parameters are alike.
    """

    status: int
    params: Mapping[str, str]
    schemes: frozenset[str] = frozenset()
    """Every scheme the response's challenges offer, lower-cased (``bearer``, ``dpop``, ...)."""
    dpop_algs: tuple[str, ...] | None = None
    """The proof algorithms the ``DPoP`` challenge names (``algs``, RFC 9449 §7.1), if it does."""

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scope(self) -> str | None:
        """The scopes the server asks for (space-separated), when it says."""
        scope = self.params.get("scope")
        return scope if scope and scope.strip() else None

    @property
    def resource_metadata(self) -> str | None:
        """The Protected Resource Metadata URL (RFC 9728 §5.1), when given."""
        return self.params.get("resource_metadata") or None

    @property
    def insufficient_scope(self) -> bool:
        return self.status == 403 and self.error == "insufficient_scope"

    @property
    def dpop(self) -> bool:
        """The server accepts DPoP-bound tokens (it offers the ``DPoP`` scheme, RFC 9449 §7.1)."""
        return "dpop" in self.schemes

    @property
    def dpop_only(self) -> bool:
        """DPoP is the only scheme offered: a Bearer token will not do."""
        return self.schemes == {"dpop"}

    @classmethod
    def of(cls, response: httpx.Response, scheme: str = "bearer") -> Challenge | None:
        """The challenge a response poses, or None when it poses none we act on: any 401,
        and a 403 whose challenge says ``insufficient_scope``. The parameters are those of the
        ``scheme`` challenge (the kind of token sent), else Bearer's, else DPoP's, else the first's.
        """
        if response.status_code not in (401, 403):
            return None
        challenges = parse_www_authenticate(response.headers.get_list("www-authenticate"))
        offered = dict(reversed(challenges))  # the first challenge of each scheme
        params = next((offered[s] for s in (scheme, "bearer", "dpop") if s in offered), None)
        if params is None:
            params = challenges[0][1] if challenges else {}
        algs = offered.get("dpop", {}).get("algs", "").split()
        challenge = cls(response.status_code, params, frozenset(offered), tuple(algs) or None)
        if response.status_code == 403 and not challenge.insufficient_scope:
            return None
        return challenge
