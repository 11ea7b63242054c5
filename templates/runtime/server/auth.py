"""Protecting a server: what an author imports (needs the ``auth`` extra).

A server becomes an OAuth 2.1 protected resource by handing a ``ResourceServer`` to its HTTP
app: set ``auth`` on the server class, or pass ``auth=`` to ``asgi_app()`` / ``run_http()``::

    from mcpgen._runtime.server.auth import JWTVerifier, ProtectedResource, ResourceServer, ScopePolicy

    resource = "https://mcp.example.com/mcp"
    auth = ResourceServer(
        JWTVerifier(issuer="https://auth.example.com", audience=resource, jwks_uri="https://auth.example.com/jwks"),
        ProtectedResource(resource, ("https://auth.example.com",)),
        ScopePolicy(default=frozenset({"notes:read"}), tools={"write_note": frozenset({"notes:write"})}),
    )
    MyServer().run_http(auth=auth)

The app then serves the Protected Resource Metadata, verifies the bearer token of every request
before any handler runs, answers 401/403 with the ``WWW-Authenticate`` challenge, and gives the
handler the ``Principal`` in ``ctx.principal``; legacy sessions and MRTR ``requestState`` are
bound to the principal. ``ResourceServer(..., dpop=DPoPProofs())`` also takes DPoP-bound
tokens (RFC 9449), each request with its proof; ``DPoPProofs(required=True)`` takes nothing
else, ``nonce=True`` makes clients prove recency with a server nonce. The pieces live in the
services layer (``services/auth.py``, ``services/verifiers.py``, ``services/dpop.py``).
"""

try:  # one sentence naming the extra, not a traceback ending in a module's name
    import joserfc  # noqa: F401
except ModuleNotFoundError as _missing:
    # the runtime distribution's extra; a runtime vendored into a project has its own dependencies
    _FIX = "pip install 'mcpgen[auth]'" if __name__.startswith("mcpgen.") else f"pip install {_missing.name}"
    _NEEDS = f"protecting a server needs the runtime's auth extra: {_FIX}"
    raise ModuleNotFoundError(f"{_NEEDS} (missing: {_missing.name})", name=_missing.name) from None

from .services.auth import (
    PRM_WELL_KNOWN,
    Denial,
    InvalidToken,
    Principal,
    ProofError,
    ProtectedResource,
    ResourceServer,
    ScopePolicy,
    TokenVerifier,
    VerifierUnavailable,
    audiences_of,
    bound_key,
    principal_of,
    scopes_of,
    www_authenticate,
)
from .services.dpop import PROOF_ALGORITHMS, DPoPProofs
from .services.verifiers import ASYMMETRIC_ALGORITHMS, IntrospectionVerifier, JWTVerifier

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "PRM_WELL_KNOWN",
    "PROOF_ALGORITHMS",
    "DPoPProofs",
    "Denial",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "Principal",
    "ProofError",
    "ProtectedResource",
    "ResourceServer",
    "ScopePolicy",
    "TokenVerifier",
    "VerifierUnavailable",
    "audiences_of",
    "bound_key",
    "principal_of",
    "scopes_of",
    "www_authenticate",
]
