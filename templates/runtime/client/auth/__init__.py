"""OAuth 2.1 authorization for MCP clients over Streamable HTTP (needs the ``auth`` extra).

```python
from mcpgen import connect
from mcpgen._runtime.client.auth import FileTokenStore, OAuth

auth = OAuth(client_name="my tool", store=FileTokenStore("~/.config/my-tool/oauth.json"))
async with await connect("https://mcp.example.com/mcp", auth=auth) as client:
    ...
```

``OAuth`` is an ``httpx.Auth``: the transport's requests go through it, and a 401 or 403
``insufficient_scope`` from the server runs discovery and the grant, then resends the
request. See ``oauth``, ``grants``, ``metadata`` and ``store`` for the pieces.
"""

try:  # one sentence naming the extra, not a traceback ending in a module's name
    import authlib  # noqa: F401
    import joserfc  # noqa: F401
except ModuleNotFoundError as _missing:
    # the runtime distribution's extra; a runtime vendored into a project has its own dependencies
    _FIX = "pip install 'mcpgen[auth]'" if __name__.startswith("mcpgen.") else f"pip install {_missing.name}"
    _NEEDS = f"OAuth for a client needs the runtime's auth extra: {_FIX}"
    raise ModuleNotFoundError(f"{_NEEDS} (missing: {_missing.name})", name=_missing.name) from None

from ..errors import ResourceMetadataNotFound
from .challenge import Challenge, parse_www_authenticate
from .grants import (
    Assertion,
    AuthorizationCode,
    ClientCredentials,
    Grant,
    IdentityAssertion,
    JwtBearer,
    Registration,
    Target,
)
from .metadata import (
    ResourceMetadata,
    ServerMetadata,
    canonical_resource,
    discover_legacy,
    discover_resource,
    discover_server,
)
from .oauth import OAuth, union_scopes
from .redirect import AuthorizationResponse, LoopbackRedirect, Redirect, open_in_browser
from .store import ClientInfo, FileTokenStore, MemoryTokenStore, Tokens, TokenStore

__all__ = [
    "Assertion",
    "AuthorizationCode",
    "AuthorizationResponse",
    "Challenge",
    "ClientCredentials",
    "ClientInfo",
    "FileTokenStore",
    "Grant",
    "IdentityAssertion",
    "JwtBearer",
    "LoopbackRedirect",
    "MemoryTokenStore",
    "OAuth",
    "Redirect",
    "Registration",
    "ResourceMetadata",
    "ResourceMetadataNotFound",
    "ServerMetadata",
    "Target",
    "TokenStore",
    "Tokens",
    "canonical_resource",
    "discover_legacy",
    "discover_resource",
    "discover_server",
    "open_in_browser",
    "parse_www_authenticate",
    "union_scopes",
]
