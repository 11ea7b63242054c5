"""One TLS context per process for the HTTP clients the runtimes make (client and server both).

httpx builds a new ``ssl.SSLContext`` for every client made without one, and loading the CA
bundle into it costs about 20 ms of CPU, more than a whole request: the OAuth client makes a
client per token request, the JWKS fetch one per fetch, the introspection verifier one per
event loop. Every client the runtimes make themselves shares the context built here, the first
time one is needed, with httpx's own defaults (certifi's bundle; ``SSL_CERT_FILE`` and
``SSL_CERT_DIR``, read once). A client or ``verify`` option the application passes is used as
given.
"""

from __future__ import annotations

import functools
import ssl

import httpx


@functools.cache
def default_context() -> ssl.SSLContext:
    """httpx's default verifying context, built once."""
    return httpx.create_ssl_context()
