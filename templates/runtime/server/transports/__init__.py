"""Transports: stdio (newline-delimited JSON-RPC) and Streamable HTTP (an ASGI app), over a ``Router``."""
