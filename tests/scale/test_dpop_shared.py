"""DPoP proofs across workers: a proof used at one worker is refused at every other.

Two ``DPoPProofs`` sharing one private Redis stand for two workers (each forked worker has its
own memory, so without Redis a replay to another worker would pass); the HTTP app of a server
with a ``redis_url`` moves its proofs there itself; a lost Redis refuses with 503, never lets a
proof through unchecked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from mcpgen._runtime.client.auth.dpop import DPoPKey
from mcpgen._runtime.server.auth import Denial, DPoPProofs, JWTVerifier, Principal, ProtectedResource, ResourceServer
from mcpgen._runtime.server.services.dpop import LocalProofMemory
from mcpgen._runtime.server.services.redis import RedisProofMemory, SharedRedis

from tests.auth.authorization_server import TestAuthorizationServer, serving
from tests.auth.protected import Notes
from tests.scale.redis_server import RedisServer

RESOURCE = "https://mcp.example.com/mcp"
MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestAuthorizationServer]:
    yield from serving()


def worker(issuer: TestAuthorizationServer, redis_url: str) -> ResourceServer:
    proofs = DPoPProofs(required=True)
    proofs.share(SharedRedis(redis_url, "test-dpop"))
    verifier = JWTVerifier(issuer=issuer.issuer, audience=RESOURCE, jwks_uri=f"{issuer.issuer}/jwks")
    return ResourceServer(verifier, ProtectedResource(RESOURCE, (issuer.issuer,)), dpop=proofs)


def decide(guard: ResourceServer, token: str, proof: str) -> Principal | Denial:
    async def go() -> Principal | Denial:
        try:
            return await guard.check(f"DPoP {token}", MESSAGE, method="POST", dpop=(proof,))
        finally:
            assert guard.dpop is not None
            memory: Any = guard.dpop.memory
            await memory.shared.close()  # each asyncio.run has its own loop: its own connection

    return asyncio.run(go())


def test_a_proof_used_at_one_worker_is_refused_at_another(
    issuer: TestAuthorizationServer, redis_server: RedisServer
) -> None:
    first, second = worker(issuer, redis_server.url), worker(issuer, redis_server.url)
    assert isinstance(first.dpop.memory, RedisProofMemory)  # type: ignore[union-attr]
    key = DPoPKey.generate("ES256")
    token = issuer.mint({"aud": RESOURCE, "cnf": {"jkt": key.thumbprint}})
    proof = key.proof("POST", RESOURCE, access_token=token)
    assert isinstance(decide(first, token, proof), Principal)
    replayed = decide(second, token, proof)
    assert isinstance(replayed, Denial) and replayed.error == "invalid_dpop_proof"
    assert "used before" in replayed.description
    assert isinstance(decide(second, token, key.proof("POST", RESOURCE, access_token=token)), Principal)


def test_without_redis_the_proof_is_refused_with_503(
    issuer: TestAuthorizationServer, redis_server: RedisServer
) -> None:
    from tests.scale.redis_server import free_port

    guard = worker(issuer, f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    key = DPoPKey.generate("ES256")
    token = issuer.mint({"aud": RESOURCE, "cnf": {"jkt": key.thumbprint}})
    refused = decide(guard, token, key.proof("POST", RESOURCE, access_token=token))
    assert isinstance(refused, Denial) and refused.status == 503


def test_the_http_app_of_a_server_with_redis_shares_its_proofs(
    issuer: TestAuthorizationServer, redis_server: RedisServer
) -> None:
    verifier = JWTVerifier(issuer=issuer.issuer, audience=RESOURCE, jwks_uri=f"{issuer.issuer}/jwks")
    resource = ProtectedResource(RESOURCE, (issuer.issuer,))
    shared, local = DPoPProofs(), DPoPProofs()
    notes = Notes()
    notes.redis_url = redis_server.url
    notes.asgi_app(auth=ResourceServer(verifier, resource, dpop=shared))
    assert isinstance(shared.memory, RedisProofMemory)
    Notes().asgi_app(auth=ResourceServer(verifier, resource, dpop=local))  # no redis_url: this process's memory
    assert isinstance(local.memory, LocalProofMemory)
