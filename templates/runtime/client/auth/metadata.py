"""Discovery: which authorization server guards an MCP server, and how to talk to it.

The rules, by the revision they come from:

- 2025-06-18 and later: Protected Resource Metadata (RFC 9728) comes from the challenge's
  ``resource_metadata`` URL, else from the well-known URIs (path-based, then root). Its
  ``resource`` must cover the MCP server the client asked (same origin, a path prefix), or
  nothing from it is used (RFC 8707: a token is minted for that resource). Authorization
  server metadata comes from the RFC 8414 and OpenID Connect well-known URIs of the issuer it
  names, in the specification's order (2025-11-25 added OpenID Connect).
- 2025-03-26, for servers that publish no Protected Resource Metadata (``discover_legacy``):
  the authorization base URL is the MCP server's URL without its path; its RFC 8414 metadata
  is at ``{base}/.well-known/oauth-authorization-server`` (fetched with
  ``MCP-Protocol-Version``), and only when that answers 404 the client uses the default
  endpoints ``{base}/authorize``, ``{base}/token`` and ``{base}/register``.
- Every revision: metadata's ``issuer`` must be the identifier the URI was built from (RFC 8414
  §3.3), compared as plain strings, and every URL an authorization server hands out must be
  ``https``, except on loopback hosts (development servers, test suites) or when the caller
  allows plain HTTP. PKCE S256 and ``state`` are the grant's (``grants``), whatever the revision.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ...http_bodies import ACCEPT_ENCODING, decoded_pieces
from ..errors import AuthorizationError, ResourceMetadataNotFound

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
DEFAULT_PORTS = {"http": 80, "https": 443}
DEFAULT_ENDPOINTS = {
    "authorization_endpoint": "/authorize",
    "token_endpoint": "/token",
    "registration_endpoint": "/register",
}
"""2025-03-26: the endpoints, relative to the authorization base URL, of a server without metadata."""


def canonical_resource(url: str) -> str:
    """The canonical URI of a server (RFC 8707 §2): scheme and host lower-cased, no query,
    no fragment, no lone trailing slash.
    """
    parts = urlsplit(url)
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def _cut(text: str, most: int = 500) -> str:
    """What a server sent, as a message quotes it: at most ``most`` characters."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme)


def resource_covers(resource: str, server_url: str) -> bool:
    """``resource`` names ``server_url``: the same origin, and its path a prefix of the
    server's at a segment boundary (``/mcp`` covers ``/mcp`` and ``/mcp/x``, not ``/mcpx``). A
    resource with a fragment names nothing (RFC 8707 2: it MUST NOT have one; authorization.mdx
    lists ``https://mcp.example.com#fragment`` among the invalid canonical URIs), and it would
    go to the authorization server as it is.
    """
    if "#" in resource or _origin(resource) != _origin(server_url):
        return False
    prefix = urlsplit(resource).path.rstrip("/") + "/"
    return (urlsplit(server_url).path.rstrip("/") + "/").startswith(prefix)


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_secure(url: str, what: str, allow_http: bool) -> str:
    """``url`` when it may carry OAuth traffic: https, or http on loopback (or when allowed)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme == "https" or (scheme == "http" and (allow_http or is_loopback(url))):
        return url
    raise AuthorizationError(f"the {what} {_cut(repr(url))} is not an https URL")


def authorization_base_url(server_url: str) -> str:
    """2025-03-26: the MCP server's URL with its path (and query, fragment) discarded."""
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), "", "", ""))


def resource_metadata_urls(server_url: str, hint: str | None) -> list[str]:
    """Where to look for Protected Resource Metadata, in order: the challenge's URL, then
    the path-based and the root well-known URIs (RFC 9728 §3.1).
    """
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    urls = [hint] if hint else []
    if parts.path not in ("", "/"):
        urls.append(origin + PRM_WELL_KNOWN + parts.path)
    urls.append(origin + PRM_WELL_KNOWN)
    return urls


def server_metadata_urls(issuer: str) -> list[str]:
    """Where to look for an authorization server's metadata, in the specification's order:
    RFC 8414 path insertion, OpenID Connect path insertion, OpenID Connect path appending.
    """
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [origin + OAUTH_WELL_KNOWN, origin + OIDC_WELL_KNOWN]
    return [origin + OAUTH_WELL_KNOWN + path, origin + OIDC_WELL_KNOWN + path, origin + path + OIDC_WELL_KNOWN]


def _string(doc: Mapping[str, Any], key: str) -> str | None:
    value = doc.get(key)
    return value if isinstance(value, str) and value else None


def _strings(doc: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    value = doc.get(key)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None


@dataclass(frozen=True)
class ResourceMetadata:
    """An RFC 9728 document: the resource, its authorization servers, the scopes it knows."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    url: str
    document: Mapping[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def parse(cls, doc: Mapping[str, Any], url: str) -> ResourceMetadata:
        resource = _string(doc, "resource")
        servers = _strings(doc, "authorization_servers")
        if resource is None:
            raise AuthorizationError(f"the protected resource metadata at {url} has no 'resource'")
        if not servers:
            raise AuthorizationError(f"the protected resource metadata at {url} names no authorization server")
        return cls(resource, servers, _strings(doc, "scopes_supported"), url, doc)


@dataclass(frozen=True)
class ServerMetadata:
    """An authorization server's metadata (RFC 8414, or OpenID Connect Discovery)."""

    issuer: str
    token_endpoint: str
    authorization_endpoint: str | None
    registration_endpoint: str | None
    scopes_supported: tuple[str, ...] | None
    code_challenge_methods_supported: tuple[str, ...] | None
    token_endpoint_auth_methods_supported: tuple[str, ...]
    iss_parameter_supported: bool
    client_id_metadata_document_supported: bool
    url: str
    document: Mapping[str, Any] = field(repr=False, default_factory=dict)

    @classmethod
    def parse(cls, doc: Mapping[str, Any], url: str, issuer: str, allow_http: bool) -> ServerMetadata:
        stated = doc.get("issuer")
        if stated != issuer:
            raise AuthorizationError(
                f"the authorization server metadata at {url} names issuer {_cut(repr(stated))}, "
                f"not {issuer!r}: not used"
            )
        token_endpoint = _string(doc, "token_endpoint")
        if token_endpoint is None:
            raise AuthorizationError(f"the authorization server metadata at {url} has no token_endpoint")
        endpoints = {
            key: check_secure(value, key.replace("_", " "), allow_http)
            for key in ("token_endpoint", "authorization_endpoint", "registration_endpoint")
            if (value := _string(doc, key)) is not None
        }
        return cls(
            issuer=check_secure(issuer, "issuer", allow_http),
            token_endpoint=endpoints["token_endpoint"],
            authorization_endpoint=endpoints.get("authorization_endpoint"),
            registration_endpoint=endpoints.get("registration_endpoint"),
            scopes_supported=_strings(doc, "scopes_supported"),
            code_challenge_methods_supported=_strings(doc, "code_challenge_methods_supported"),
            # RFC 8414 §2: absent means client_secret_basic
            token_endpoint_auth_methods_supported=_strings(doc, "token_endpoint_auth_methods_supported")
            or ("client_secret_basic",),
            iss_parameter_supported=doc.get("authorization_response_iss_parameter_supported") is True,
            client_id_metadata_document_supported=doc.get("client_id_metadata_document_supported") is True,
            url=url,
            document=doc,
        )

    @classmethod
    def defaults(cls, base: str, allow_http: bool) -> ServerMetadata:
        """2025-03-26: the default endpoints of a server at ``base`` that publishes no metadata.

        The revision requires PKCE of every client and OAuth 2.1 of the server, so S256 is
        taken as supported; the token endpoint's authentication is RFC 8414's default.
        """
        issuer = check_secure(base, "authorization base URL", allow_http)
        endpoints = {key: issuer + path for key, path in DEFAULT_ENDPOINTS.items()}
        return cls(
            issuer=issuer,
            token_endpoint=endpoints["token_endpoint"],
            authorization_endpoint=endpoints["authorization_endpoint"],
            registration_endpoint=endpoints["registration_endpoint"],
            scopes_supported=None,
            code_challenge_methods_supported=("S256",),
            token_endpoint_auth_methods_supported=("client_secret_basic",),
            iss_parameter_supported=False,
            client_id_metadata_document_supported=False,
            url=issuer + OAUTH_WELL_KNOWN,
        )

    @property
    def dpop_signing_alg_values_supported(self) -> tuple[str, ...] | None:
        """The DPoP proof algorithms the server accepts (RFC 9449 §5.1); None when it does not say."""
        return _strings(self.document, "dpop_signing_alg_values_supported")


MAX_ANSWER = 1 << 20  # bytes of an OAuth answer (metadata, tokens, a registration) read at most


async def exchange(http: httpx.AsyncClient, method: str, url: str, **options: Any) -> httpx.Response:
    """One OAuth exchange, whole within the client's read timeout (which bounds each read, so a
    server sending a byte a read held it for ever) and its answer read up to ``MAX_ANSWER`` bytes
    (a 300 MB metadata document was read whole), inflated in bounded pieces; past either, an
    ``httpx`` error."""
    deadline = http.timeout.read or 30.0
    options["headers"] = {"accept-encoding": ACCEPT_ENCODING, **(options.get("headers") or {})}
    try:
        async with asyncio.timeout(deadline):
            async with http.stream(method, url, **options) as streamed:
                chunks: list[bytes] = []
                size = 0
                async for chunk in decoded_pieces(streamed):
                    size += len(chunk)
                    if size > MAX_ANSWER:
                        raise httpx.ReadError(f"the answer of {url} is larger than {MAX_ANSWER} bytes")
                    chunks.append(chunk)
    except TimeoutError:
        raise httpx.ReadTimeout(f"{url} did not answer within {deadline:g} s") from None
    headers = [(k, v) for k, v in streamed.headers.multi_items() if k not in ("content-encoding", "content-length")]
    return httpx.Response(streamed.status_code, headers=headers, content=b"".join(chunks), request=streamed.request)


async def _fetch_json(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str] | None = None
) -> tuple[Mapping[str, Any] | None, str, int | None]:
    """The JSON object at ``url``, or None and why not; and the HTTP status, if any."""
    try:
        response = await exchange(http, "GET", url, headers={"accept": "application/json", **(headers or {})})
    except httpx.HTTPError as exc:
        return None, f"{url}: {type(exc).__name__}", None
    status = response.status_code
    if status != 200:
        return None, f"{url}: HTTP {status}", status
    try:
        doc = response.json()
    except ValueError:
        return None, f"{url}: not JSON", status
    if not isinstance(doc, dict):
        return None, f"{url}: not a JSON object", status
    return doc, "", status


async def discover_resource(
    http: httpx.AsyncClient, server_url: str, hint: str | None, allow_http: bool = False
) -> ResourceMetadata:
    """The Protected Resource Metadata of ``server_url`` (``hint``: the challenge's URL, which must
    be https, or http on loopback: the document names the authorization servers the user is sent
    to, so one read in clear lets whoever is on the path choose them)."""
    if hint:
        check_secure(hint, "resource metadata URL", allow_http)
    misses = []
    for url in resource_metadata_urls(server_url, hint):
        doc, why, _ = await _fetch_json(http, url)
        if doc is None:
            misses.append(why)
            continue
        metadata = ResourceMetadata.parse(doc, url)
        if not resource_covers(metadata.resource, server_url):
            raise AuthorizationError(
                f"the protected resource metadata at {url} is for {metadata.resource!r}, "
                f"not {canonical_resource(server_url)!r}: not used"
            )
        return metadata
    raise ResourceMetadataNotFound(f"no protected resource metadata for {server_url} ({'; '.join(misses)})")


async def discover_server(http: httpx.AsyncClient, issuer: str, allow_http: bool = False) -> ServerMetadata:
    """The metadata of the authorization server ``issuer``, validated against it."""
    check_secure(issuer, "authorization server", allow_http)
    misses = []
    for url in server_metadata_urls(issuer):
        doc, why, _ = await _fetch_json(http, url)
        if doc is None:
            misses.append(why)
            continue
        return ServerMetadata.parse(doc, url, issuer, allow_http)
    raise AuthorizationError(f"no metadata for the authorization server {issuer} ({'; '.join(misses)})")


async def discover_legacy(
    http: httpx.AsyncClient, server_url: str, allow_http: bool = False, protocol_version: str | None = None
) -> ServerMetadata:
    """2025-03-26: the authorization server of ``server_url``, which publishes no Protected
    Resource Metadata: RFC 8414 metadata at the authorization base URL, else (on 404 only) the
    default endpoints there. ``protocol_version`` goes along as ``MCP-Protocol-Version``.

    The metadata's ``issuer`` must be the base URL; with a lone trailing slash it names the
    same well-known URI (RFC 8414 §3), so that spelling is accepted and kept as stated.
    """
    base = check_secure(authorization_base_url(server_url), "authorization base URL", allow_http)
    url = base + OAUTH_WELL_KNOWN
    headers = {"mcp-protocol-version": protocol_version} if protocol_version else None
    doc, why, status = await _fetch_json(http, url, headers)
    if doc is not None:
        stated = doc.get("issuer")
        return ServerMetadata.parse(doc, url, stated if stated == base + "/" else base, allow_http)
    if status == 404:
        return ServerMetadata.defaults(base, allow_http)
    raise AuthorizationError(f"no authorization server metadata for {server_url} ({why})")
