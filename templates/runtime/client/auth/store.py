"""Where OAuth credentials live between requests and between runs.

Two kinds of record, each keyed by what it is bound to:

- a client registration (``ClientInfo``) per authorization server, by its ``issuer``: a
  client id obtained from one server is never shown to another (MCP client registration,
  "Authorization Server Binding");
- tokens (``Tokens``) per MCP server, by its canonical URI; each records the issuer that
  minted them, so tokens from an authorization server a resource no longer names are not
  refreshed there.

``MemoryTokenStore`` (the default) forgets everything at exit; ``FileTokenStore`` keeps a
JSON file readable only by its owner. Secrets never appear in a ``repr``.
"""

from __future__ import annotations

import abc
import contextlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Tokens:
    """An access token (and refresh token) for one MCP server."""

    access_token: str = field(repr=False)
    issuer: str
    resource: str
    token_type: str = "Bearer"
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None
    """The scopes granted (as the token response says, else as requested)."""
    dpop_jkt: str | None = None
    """Tokens got with a DPoP proof: the thumbprint of its key (a ``DPoP`` access token is bound
    to it; the refresh token may be, whatever the access token's type)."""
    dpop_alg: str | None = None
    """The algorithm that key signed with."""

    def expired(self, leeway: float = 30.0) -> bool:
        return self.expires_at is not None and time.time() + leeway >= self.expires_at

    def scopes(self) -> list[str]:
        return (self.scope or "").split()


@dataclass
class ClientInfo:
    """This client's identity at one authorization server."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = ()
    origin: str = "registered"
    """How the identity was obtained: ``registered`` (RFC 7591), ``metadata-document`` (a
    Client ID Metadata Document URL) or ``pre-registered``."""


class TokenStore(abc.ABC):
    """Keeps client registrations per issuer and tokens per MCP server."""

    @abc.abstractmethod
    async def get_client(self, issuer: str) -> ClientInfo | None: ...

    @abc.abstractmethod
    async def set_client(self, issuer: str, client: ClientInfo) -> None: ...

    @abc.abstractmethod
    async def delete_client(self, issuer: str) -> None: ...

    @abc.abstractmethod
    async def get_tokens(self, server: str) -> Tokens | None: ...

    @abc.abstractmethod
    async def set_tokens(self, server: str, tokens: Tokens) -> None: ...

    @abc.abstractmethod
    async def delete_tokens(self, server: str) -> None: ...


class MemoryTokenStore(TokenStore):
    """Credentials for the life of the process."""

    def __init__(self) -> None:
        self.clients: dict[str, ClientInfo] = {}
        self.tokens: dict[str, Tokens] = {}

    def __repr__(self) -> str:
        return f"MemoryTokenStore(issuers={sorted(self.clients)}, servers={sorted(self.tokens)})"

    async def get_client(self, issuer: str) -> ClientInfo | None:
        return self.clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInfo) -> None:
        self.clients[issuer] = client

    async def delete_client(self, issuer: str) -> None:
        self.clients.pop(issuer, None)

    async def get_tokens(self, server: str) -> Tokens | None:
        return self.tokens.get(server)

    async def set_tokens(self, server: str, tokens: Tokens) -> None:
        self.tokens[server] = tokens

    async def delete_tokens(self, server: str) -> None:
        self.tokens.pop(server, None)


class FileTokenStore(TokenStore):
    """Credentials in one JSON file, mode 0600, replaced atomically on every change.

    The file is read on every lookup, so processes sharing it see each other's tokens; a
    file that is not ours to read (malformed, another layout) counts as empty and is
    overwritten on the next change.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.path)!r})"

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"clients": {}, "tokens": {}}
        if not isinstance(data, dict):
            return {"clients": {}, "tokens": {}}
        return {key: value if isinstance(value := data.get(key), dict) else {} for key in ("clients", "tokens")}

    def _save(self, data: dict[str, dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=2, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _change(self, kind: str, key: str, value: dict[str, Any] | None) -> None:
        data = self._load()
        if value is None:
            data[kind].pop(key, None)
        else:
            data[kind][key] = value
        self._save(data)

    async def get_client(self, issuer: str) -> ClientInfo | None:
        record = self._load()["clients"].get(issuer)
        try:
            return ClientInfo(**{**record, "redirect_uris": tuple(record.get("redirect_uris", ()))}) if record else None
        except TypeError:
            return None

    async def set_client(self, issuer: str, client: ClientInfo) -> None:
        self._change("clients", issuer, asdict(client))

    async def delete_client(self, issuer: str) -> None:
        self._change("clients", issuer, None)

    async def get_tokens(self, server: str) -> Tokens | None:
        record = self._load()["tokens"].get(server)
        try:
            return Tokens(**record) if record else None
        except TypeError:
            return None

    async def set_tokens(self, server: str, tokens: Tokens) -> None:
        self._change("tokens", server, asdict(tokens))

    async def delete_tokens(self, server: str) -> None:
        self._change("tokens", server, None)
