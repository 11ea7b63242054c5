"""The protected-resource services (``mcpgen._runtime.server.auth``) against real tokens.

Tokens are signed by the test authorization server's RSA key and verified against its JWKS
served on loopback; the bad ones are made the way an attacker or a misconfiguration would:
another key, ``alg: none``, HMAC keyed with the published public key, another audience,
another issuer, expired, not yet valid. Introspection asks the same server (RFC 7662).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey
from mcpgen._runtime.client.auth import parse_www_authenticate
from mcpgen._runtime.server.auth import (
    Denial,
    IntrospectionVerifier,
    InvalidToken,
    JWTVerifier,
    Principal,
    ProtectedResource,
    ResourceServer,
    ScopePolicy,
    VerifierUnavailable,
    www_authenticate,
)
from mcpgen._runtime.tls import default_context

from tests.auth.authorization_server import RESOURCE_SERVER, Client, Code, TestAuthorizationServer, serving

RESOURCE = "https://mcp.example.com/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestAuthorizationServer]:
    yield from serving()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(header: dict[str, Any], claims: dict[str, Any], signature: bytes = b"") -> str:
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}.{b64(signature)}"


def verifier(server: TestAuthorizationServer, **options: Any) -> JWTVerifier:
    return JWTVerifier(issuer=server.issuer, audience=RESOURCE, jwks_uri=f"{server.issuer}/jwks", **options)


def verify(v: Any, token: str) -> Principal:
    result: Principal = asyncio.run(v.verify(token))
    return result


def test_a_valid_token_gives_its_principal(issuer: TestAuthorizationServer) -> None:
    token = issuer.mint({"aud": RESOURCE, "scope": "mcp:read mcp:write", "client_id": "app"})
    principal = verify(verifier(issuer), token)
    assert principal.subject == "user-1" and principal.client_id == "app"
    assert principal.scopes == {"mcp:read", "mcp:write"}
    assert principal.issuer == issuer.issuer and principal.audience == (RESOURCE,)
    assert "token" not in repr(principal).lower() or token not in repr(principal)


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"aud": RESOURCE, "exp": int(time.time()) - 120}, "expired"),
        ({"aud": RESOURCE, "nbf": int(time.time()) + 600}, "not valid yet"),
        ({"aud": "https://other.example.com/mcp"}, "not for this resource"),
        ({"aud": [RESOURCE + "/other", "https://api.example.com"]}, "not for this resource"),
        ({}, "not for this resource"),  # no audience at all
        ({"aud": RESOURCE, "exp": None}, "missing or malformed"),  # no expiry
    ],
    ids=["expired", "not-yet-valid", "wrong-audience", "another-resource", "no-audience", "no-exp"],
)
def test_claims_that_make_a_token_unacceptable(
    issuer: TestAuthorizationServer, claims: dict[str, Any], why: str
) -> None:
    with pytest.raises(InvalidToken, match=why):
        verify(verifier(issuer), issuer.mint(claims))


def test_leeway_absorbs_small_clock_skew(issuer: TestAuthorizationServer) -> None:
    token = issuer.mint({"aud": RESOURCE, "exp": int(time.time()) - 5, "nbf": int(time.time()) + 5})
    assert verify(verifier(issuer, leeway=30), token).subject == "user-1"
    with pytest.raises(InvalidToken):
        verify(verifier(issuer, leeway=0), token)


def test_a_token_from_another_issuer_is_refused(issuer: TestAuthorizationServer) -> None:
    with pytest.raises(InvalidToken, match="not issued by"):
        verify(verifier(issuer), issuer.mint({"aud": RESOURCE, "iss": "https://evil.example.com"}))


def test_a_signature_by_another_key_is_refused(issuer: TestAuthorizationServer) -> None:
    impostor = RSAKey.generate_key(2048, parameters={"kid": issuer.key.kid})  # same kid, other key
    claims = {"iss": issuer.issuer, "aud": RESOURCE, "exp": int(time.time()) + 60, "sub": "mallory"}
    token = jwt.encode({"alg": "RS256", "kid": issuer.key.kid}, claims, impostor)
    with pytest.raises(InvalidToken, match="signature"):
        verify(verifier(issuer), token)
    tampered = issuer.mint({"aud": RESOURCE}).split(".")
    tampered[1] = b64(json.dumps({**claims, "sub": "admin"}).encode())
    with pytest.raises(InvalidToken, match="signature"):
        verify(verifier(issuer), ".".join(tampered))


def test_alg_none_is_refused(issuer: TestAuthorizationServer) -> None:
    claims = {"iss": issuer.issuer, "aud": RESOURCE, "exp": int(time.time()) + 60}
    with pytest.raises(InvalidToken, match="'none'"):
        verify(verifier(issuer), unsigned({"alg": "none", "kid": issuer.key.kid}, claims))
    with pytest.raises(ValueError, match="no 'none'"):
        verifier(issuer, algorithms=("RS256", "none"))


def test_hmac_keyed_with_the_public_key_is_refused(issuer: TestAuthorizationServer) -> None:
    """Algorithm confusion: HS256 whose secret is the published public key."""
    public = issuer.key.as_pem(private=False)
    claims = {"iss": issuer.issuer, "aud": RESOURCE, "exp": int(time.time()) + 60}
    header = {"alg": "HS256", "kid": issuer.key.kid}
    signing_input = unsigned(header, claims).rsplit(".", 1)[0]
    signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
    with pytest.raises(InvalidToken, match="'HS256'"):
        verify(verifier(issuer), f"{signing_input}.{b64(signature)}")
    with pytest.raises(ValueError, match="no HMAC"):
        verifier(issuer, algorithms=("RS256", "HS256"))


def test_an_algorithm_that_does_not_fit_the_key_is_refused(issuer: TestAuthorizationServer) -> None:
    ec = ECKey.generate_key("P-256", parameters={"kid": issuer.key.kid})
    token = jwt.encode({"alg": "ES256", "kid": issuer.key.kid}, {"iss": issuer.issuer, "aud": RESOURCE}, ec)
    with pytest.raises(InvalidToken):
        verify(verifier(issuer), token)


def test_garbage_is_not_a_token(issuer: TestAuthorizationServer) -> None:
    for token in ("", "abc", "a.b", "a.b.c", "é.é.é", unsigned({"typ": "JWT"}, {})):
        with pytest.raises(InvalidToken):
            verify(verifier(issuer), token)


def test_unknown_kid_refetches_the_jwks_once(issuer: TestAuthorizationServer) -> None:
    """Key rotation: a token signed by a new key is accepted after one refetch; a kid that is
    still unknown is refused without hammering the JWKS endpoint.
    """

    async def go() -> tuple[int, int]:
        v = verifier(issuer, refetch_seconds=0.0)
        await v.verify(issuer.mint({"aud": RESOURCE}))
        before = len(issuer.seen("/jwks"))
        old = issuer.key
        issuer.key = RSAKey.generate_key(2048, parameters={"kid": "rotated", "alg": "RS256"})
        try:
            principal = await v.verify(issuer.mint({"aud": RESOURCE}))
            assert principal.subject == "user-1"
        finally:
            issuer.key = old
        slow = verifier(issuer, refetch_seconds=3600.0)
        await slow.verify(issuer.mint({"aud": RESOURCE}))
        fetched = len(issuer.seen("/jwks"))
        with pytest.raises(InvalidToken, match="does not publish"):
            await slow.verify(issuer.mint({"aud": RESOURCE}, {"kid": "never-published"}))
        return len(issuer.seen("/jwks")) - before, len(issuer.seen("/jwks")) - fetched

    refetched, hammered = asyncio.run(go())
    assert refetched == 2  # the rotation refetch, and the new verifier's first load
    assert hammered == 0


def test_an_unreachable_jwks_is_unavailable_not_invalid() -> None:
    v = JWTVerifier(issuer="http://127.0.0.1:9", audience=RESOURCE, jwks_uri="http://127.0.0.1:9/jwks")
    with pytest.raises(VerifierUnavailable):
        asyncio.run(v.verify(unsigned({"alg": "RS256", "kid": "k"}, {})))


def test_a_jwks_answer_is_read_in_bounded_memory() -> None:
    """Found by a review: the verifier read its JWKS (and an introspection answer) whole, with
    httpx inflating it at once: an 8 KiB gzip answer was 8 MiB in memory. Its own client refuses
    an answer past 1 MiB while it is read."""
    import gzip
    import tracemalloc

    from tests.auth.protected import served_in_thread

    bomb = gzip.compress(b" " * (8 << 20))

    async def jwks(scope: dict[str, Any], receive: Any, send: Any) -> None:
        head = [(b"content-type", b"application/json"), (b"content-encoding", b"gzip")]
        await send({"type": "http.response.start", "status": 200, "headers": head})
        await send({"type": "http.response.body", "body": bomb})

    with served_in_thread(jwks) as base:  # type: ignore[arg-type]
        v = JWTVerifier(issuer=base, audience=RESOURCE, jwks_uri=f"{base}/jwks")
        tracemalloc.start()
        try:
            with pytest.raises(VerifierUnavailable, match="larger than 1048576 bytes"):
                asyncio.run(v.verify(unsigned({"alg": "RS256", "kid": "k"}, {})))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 4 << 20, f"{peak >> 20} MiB at the peak"


def test_a_failed_jwks_fetch_is_remembered_and_a_stale_key_set_serves_on(issuer: TestAuthorizationServer) -> None:
    """Found by an OAuth review: with the JWKS host hanging, requests queued behind the fetch lock
    each ran a fetch of their own (the eighth answered after 80 s). A failed fetch is now
    remembered for a few seconds, and keys already held serve on meanwhile."""
    import socket
    import time as clock

    hanging = socket.socket()
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(16)  # accepts, never answers
    uri = f"http://127.0.0.1:{hanging.getsockname()[1]}/jwks"

    async def go() -> tuple[list[bool], float, str]:
        async with httpx.AsyncClient(timeout=0.5) as http:
            cold = JWTVerifier(issuer=issuer.issuer, audience=RESOURCE, jwks_uri=uri, http=http, remember=0)
            started = clock.monotonic()
            token = issuer.mint({"aud": RESOURCE})
            outcomes = await asyncio.gather(*(cold.verify(token) for _ in range(6)), return_exceptions=True)
            took = clock.monotonic() - started
            warm = JWTVerifier(
                issuer=issuer.issuer, audience=RESOURCE, jwks_uri=f"{issuer.issuer}/jwks", http=http, remember=0
            )
            await warm.verify(token)  # keys held
            warm.jwks_uri, warm.cache_seconds = uri, 0.0  # stale at once, and the issuer out of reach
            principal = await warm.verify(token)
        return [isinstance(o, VerifierUnavailable) for o in outcomes], took, principal.subject

    try:
        unavailable, took, subject = asyncio.run(go())
    finally:
        hanging.close()
    assert all(unavailable)
    assert took < 2.5, took  # one fetch's timeout (0.5 s), not six
    assert subject == "user-1"


def test_a_request_whose_key_is_held_does_not_wait_for_a_jwks_refetch(issuer: TestAuthorizationServer) -> None:
    """Found by an authorization review: every request took the JWKS lock, so while one request
    refetched a stale key set from a hanging issuer, every other request, its token signed by a
    key already held, waited for that fetch's timeout (10 s by default), again each time the
    failure was forgotten. They are now served by the keys held; a kid not held still waits."""
    import socket
    import time as clock

    hanging = socket.socket()
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(16)  # accepts, never answers
    uri = f"http://127.0.0.1:{hanging.getsockname()[1]}/jwks"

    async def go() -> tuple[float, float, str, str]:
        async with httpx.AsyncClient(timeout=1.5) as http:
            v = JWTVerifier(
                issuer=issuer.issuer, audience=RESOURCE, jwks_uri=f"{issuer.issuer}/jwks", http=http, remember=0
            )
            token = issuer.mint({"aud": RESOURCE})
            await v.verify(token)  # keys held
            v.jwks_uri, v.cache_seconds = uri, 0.0  # stale at once, and the issuer hanging
            fetching = asyncio.create_task(v.verify(token))
            await asyncio.sleep(0.2)  # the fetch is under way
            started = clock.monotonic()
            waited = await v.verify(issuer.mint({"aud": RESOURCE, "sub": "other"}))
            took = clock.monotonic() - started
            unknown = asyncio.create_task(v.verify(issuer.mint({"aud": RESOURCE}, {"kid": "not-held"})))
            first = await fetching
            with pytest.raises(InvalidToken, match="does not publish"):
                await unknown  # it waited for the fetch, then was judged by the keys held
            return took, clock.monotonic() - started, waited.subject or "", first.subject or ""

    try:
        took, total, waited, first = asyncio.run(go())
    finally:
        hanging.close()
    assert took < 0.5, took
    assert total > 1.0  # the fetch did hang its timeout
    assert (waited, first) == ("other", "user-1")


def test_a_static_jwks(issuer: TestAuthorizationServer) -> None:
    v = JWTVerifier(issuer=issuer.issuer, audience=[RESOURCE, "https://alias.example.com"], jwks=issuer.jwks())
    assert verify(v, issuer.mint({"aud": "https://alias.example.com"})).subject == "user-1"


def test_an_audience_naming_this_resource_with_another_case_of_scheme_or_host_is_accepted(
    issuer: TestAuthorizationServer,
) -> None:
    """Found by an authorization review: ``aud`` was compared as a string, so a token whose
    authorization server kept the ``resource`` a client sent as ``HTTPS://MCP.Example.com/mcp``
    was refused. The specification: implementations accept uppercase scheme and host components.
    Only scheme, host and default port are case- and form-insensitive; the path is not."""
    v = verifier(issuer)
    for same in (
        "HTTPS://MCP.EXAMPLE.COM/mcp",
        "https://mcp.example.com:443/mcp",
        ["x", "https://Mcp.Example.com/mcp"],
    ):
        assert verify(v, issuer.mint({"aud": same})).subject == "user-1", same
    for other in ("https://mcp.example.com/MCP", "https://mcp.example.com/mcp/", "https://mcp.example.com:8443/mcp"):
        with pytest.raises(InvalidToken, match="not for this resource"):
            verify(v, issuer.mint({"aud": other}))
    root = JWTVerifier(issuer=issuer.issuer, audience="https://mcp.example.com", jwks=issuer.jwks())
    assert verify(root, issuer.mint({"aud": "HTTPS://mcp.example.com/"})).subject == "user-1"  # the empty path is /
    assert verify(introspection(issuer), issue(issuer, "HTTPS://MCP.Example.com/mcp")).subject == "user-1"


def introspection(server: TestAuthorizationServer, audience: str = RESOURCE) -> IntrospectionVerifier:
    client_id, secret = RESOURCE_SERVER
    return IntrospectionVerifier(
        endpoint=f"{server.issuer}/introspect", audience=audience, client_id=client_id, client_secret=secret
    )


def issue(server: TestAuthorizationServer, resource: str, scope: str = "mcp:read") -> str:
    """An opaque-to-the-server access token, through a real authorization code grant."""
    import httpx
    from authlib.common.security import generate_token
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    client = server.add_client(Client(generate_token(8), None, ["http://127.0.0.1/cb"], ["authorization_code"], "none"))
    verifier_ = generate_token(48)
    server.codes["c-" + verifier_] = Code(
        "c-" + verifier_, client.client_id, "http://127.0.0.1/cb", scope, "user-1",
        create_s256_code_challenge(verifier_), "S256", resource,
    )  # fmt: skip
    answer = httpx.post(
        f"{server.issuer}/token",
        verify=default_context(),
        data={
            "grant_type": "authorization_code",
            "code": "c-" + verifier_,
            "redirect_uri": "http://127.0.0.1/cb",
            "code_verifier": verifier_,
            "client_id": client.client_id,
            "resource": resource,
        },
    ).json()
    return str(answer["access_token"])


def test_introspection_accepts_an_active_token_for_this_resource(issuer: TestAuthorizationServer) -> None:
    principal = verify(introspection(issuer), issue(issuer, RESOURCE, "mcp:read mcp:write"))
    assert principal.subject == "user-1" and principal.scopes == {"mcp:read", "mcp:write"}


def test_introspection_refuses_inactive_and_foreign_tokens(issuer: TestAuthorizationServer) -> None:
    with pytest.raises(InvalidToken, match="not for this resource"):
        verify(introspection(issuer), issue(issuer, "https://other.example.com/mcp"))
    token = issue(issuer, RESOURCE)
    issuer.revoke_access_tokens()
    with pytest.raises(InvalidToken, match="not active"):
        verify(introspection(issuer), token)
    with pytest.raises(InvalidToken, match="not active"):
        verify(introspection(issuer), "made-up")


def introspection_endpoint(answer: Callable[[str], dict[str, Any]], ports: list[int], tokens: list[str]) -> Any:
    """An ASGI introspection endpoint answering ``answer(token)``, recording each call's client
    port (its connection) and token; run under uvicorn (``served_in_thread``), which keeps
    connections (the test authorization server's werkzeug closes every one)."""

    from tests.auth.protected import request_body

    async def endpoint(scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "http"
        token = parse_qs((await request_body(receive)).decode())["token"][0]
        ports.append(scope["client"][1])
        tokens.append(token)
        data = json.dumps(answer(token)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return endpoint


def test_introspection_keeps_its_connection_within_an_event_loop() -> None:
    """Every request's token is introspected: one kept connection serves them all (a new client
    per token opened a connection, and on https made a TLS handshake, for each), and another event
    loop gets a client of its own (a client's connections belong to the loop that opened them)."""
    from tests.auth.protected import served_in_thread

    ports: list[int] = []
    active = {"active": True, "sub": "user-1", "aud": RESOURCE, "scope": "mcp:read"}
    with served_in_thread(introspection_endpoint(lambda token: active, ports, [])) as url:
        v = IntrospectionVerifier(endpoint=f"{url}/introspect", audience=RESOURCE)

        async def in_one_loop() -> list[Principal]:
            return [await v.verify(f"token-{n}") for n in range(4)]

        assert [p.subject for p in asyncio.run(in_one_loop())] == ["user-1"] * 4
        assert len(ports) == 4 and len(set(ports)) == 1, ports
        assert verify(v, "token-5").subject == "user-1"  # asyncio.run: a new loop, a new connection
        assert len(ports) == 5 and ports[4] != ports[0], ports

        async def then_closed() -> None:
            await v.verify("token-6")
            client = v._own[1]  # type: ignore[index]
            await v.aclose()
            assert client.is_closed and v._own is None

        asyncio.run(then_closed())
        verify(v, "token-7")
        kept = v._own
        asyncio.run(v.aclose())  # another loop's client: left as it is, not forgotten
        assert kept is not None and v._own is kept and not kept[1].is_closed


def test_a_kept_verdict_lasts_remember_seconds_by_the_monotonic_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wall clock set back (NTP, a VM resumed) must not lengthen how long a verdict is kept:
    ``remember_seconds`` bounds how late a withdrawn key or a revocation is noticed."""
    from types import SimpleNamespace

    from mcpgen._runtime.server.services import verifiers as module

    clock = {"wall": 1_000_000.0, "monotonic": 50.0}
    fake = SimpleNamespace(time=lambda: clock["wall"], monotonic=lambda: clock["monotonic"])
    monkeypatch.setattr(module, "time", fake)
    checked: list[str] = []

    async def check(token: str) -> Principal:
        checked.append(token)
        return Principal("user-1", None, frozenset(), expires_at=clock["wall"] + 3600)

    verdicts = module.Verdicts()

    async def kept(token: str) -> Principal:
        return await verdicts.verify(token, check, size=8, seconds=60.0, leeway=30)

    async def go() -> None:
        await kept("t")
        await kept("t")
        assert checked == ["t"]
        clock["wall"] -= 3600.0  # set back an hour
        clock["monotonic"] += 61.0  # while a minute passed
        await kept("t")
        assert checked == ["t", "t"]
        clock["wall"] += 7200.0  # now past the token's exp (plus leeway), the minute not over
        clock["monotonic"] += 1.0
        await kept("t")
        assert checked == ["t", "t", "t"]

    asyncio.run(go())


def test_introspection_remembers_a_verdict_only_when_asked_and_never_past_exp() -> None:
    """By default every request's token is introspected (a revoked token is refused on its next
    request); ``remember_seconds`` keeps an accepted verdict, never past the answer's ``exp``, and
    keeps no refusal and no answer without ``exp``."""
    from tests.auth.protected import served_in_thread

    asked: list[str] = []

    def answer(token: str) -> dict[str, Any]:
        found: dict[str, Any] = {"active": token != "revoked", "sub": "user-1", "aud": RESOURCE}
        if token == "soon":
            found["exp"] = time.time() + 1.0
        elif token != "no-exp":
            found["exp"] = time.time() + 3600
        return found

    with served_in_thread(introspection_endpoint(answer, [], asked)) as url:
        every = IntrospectionVerifier(endpoint=f"{url}/introspect", audience=RESOURCE)
        kept = IntrospectionVerifier(endpoint=f"{url}/introspect", audience=RESOURCE, remember_seconds=30, leeway=0)

        async def go() -> None:
            for _ in range(2):
                await every.verify("t")
            assert asked == ["t", "t"]
            del asked[:]
            for token in ("t", "t", "no-exp", "no-exp", "soon", "soon"):
                assert (await kept.verify(token)).subject == "user-1"
            for _ in range(2):
                with pytest.raises(InvalidToken, match="not active"):
                    await kept.verify("revoked")
            assert asked == ["t", "no-exp", "no-exp", "soon", "revoked", "revoked"]
            await asyncio.sleep(1.1)  # past the "soon" answer's exp: asked again; "t" still kept
            assert (await kept.verify("soon")).subject == (await kept.verify("t")).subject == "user-1"
            assert asked[6:] == ["soon"]
            await every.aclose()
            await kept.aclose()

        asyncio.run(go())


def test_introspection_without_the_right_credentials_is_unavailable(issuer: TestAuthorizationServer) -> None:
    v = IntrospectionVerifier(
        endpoint=f"{issuer.issuer}/introspect", audience=RESOURCE, client_id="resource-server", client_secret="wrong"
    )
    with pytest.raises(VerifierUnavailable, match="HTTP 401"):
        verify(v, "whatever")


def test_the_runtimes_http_clients_load_the_ca_bundle_once(
    issuer: TestAuthorizationServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every httpx client the runtimes make shares one TLS context (``_runtime/tls.py``): the CA
    bundle, about 20 ms of CPU to load, is read once per process, not once per introspected token,
    token request or transport; a ``verify`` the application passes is used as given."""
    import ssl

    from mcpgen._runtime import tls
    from mcpgen._runtime.client.auth import OAuth
    from mcpgen._runtime.client.http import HttpTransport

    tokens = [issue(issuer, RESOURCE) for _ in range(3)]  # (httpx.post here loads the bundle each time)
    loads: list[object] = []
    real = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(args or kwargs)
        real(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    tls.default_context.cache_clear()
    for token in tokens:  # a client per introspection
        assert verify(introspection(issuer), token).subject == "user-1"
    jwks = JWTVerifier(issuer=issuer.issuer, audience=RESOURCE, jwks_uri=f"{issuer.issuer}/jwks")
    assert verify(jwks, issuer.mint({"aud": RESOURCE})).subject == "user-1"

    async def clients() -> None:
        async with OAuth()._client(), OAuth(http_options={"verify": False})._client():
            transport = HttpTransport("https://mcp.example.com/mcp")
            await transport.client.aclose()
        assert len(loads) == 1, loads
        # TLS options of its own (a client certificate httpx would load into the context, or
        # trust_env): the OAuth client builds its own context and leaves the shared one alone
        async with OAuth(http_options={"trust_env": False})._client() as own:
            assert len(loads) == 2
            assert own._transport._pool._ssl_context is not tls.default_context()  # type: ignore[attr-defined]

    asyncio.run(clients())
    tls.default_context.cache_clear()


def test_protected_resource_metadata() -> None:
    resource = ProtectedResource(RESOURCE, ("https://auth.example.com",), scopes_supported=("mcp:read",))
    assert resource.metadata_path == "/.well-known/oauth-protected-resource/mcp"
    assert resource.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    assert resource.document() == {
        "resource": RESOURCE,
        "authorization_servers": ["https://auth.example.com"],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:read"],
    }
    root = ProtectedResource("https://mcp.example.com", ("https://auth.example.com",))
    assert root.metadata_path == "/.well-known/oauth-protected-resource"
    for bad in ("mcp.example.com", "https://mcp.example.com/mcp#frag", "ftp://x/mcp"):
        with pytest.raises(ValueError):
            ProtectedResource(bad, ("https://auth.example.com",))
    with pytest.raises(ValueError):
        ProtectedResource(RESOURCE, ())


def test_challenges_parse_back() -> None:
    value = www_authenticate(
        "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        scope={"files:write", "files:read"},
        error="insufficient_scope",
        description='needs "write"\n\\ now',
    )
    ((scheme, params),) = parse_www_authenticate([value])
    assert scheme == "bearer"
    assert params == {
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "scope": "files:read files:write",
        "error": "insufficient_scope",
        "error_description": "needs write now",  # characters RFC 6750 forbids are dropped
    }


def test_scope_policy_per_method_and_tool_with_implied_scopes() -> None:
    policy = ScopePolicy(
        default=frozenset({"mcp"}),
        methods={"resources/read": frozenset({"files:read"})},
        tools={"delete": frozenset({"files:admin"}), "write": frozenset({"files:write"})},
        implies={"files:admin": frozenset({"files:write"}), "files:write": frozenset({"files:read"})},
    )
    assert policy.required("tools/list") == {"mcp"}
    assert policy.required("tools/call", {"name": "write"}) == {"mcp", "files:write"}
    assert policy.required("tools/call", {"name": "other"}) == {"mcp"}
    assert policy.required("resources/read", {"uri": "file:///x"}) == {"mcp", "files:read"}
    assert policy.required(None) == {"mcp"}
    assert policy.effective({"files:admin"}) == {"files:admin", "files:write", "files:read"}
    assert not policy.missing({"mcp", "files:admin"}, "resources/read")  # admin implies read, transitively
    assert policy.missing({"mcp", "files:read"}, "tools/call", {"name": "write"}) == {"files:write"}


class Fixed:
    """A verifier with a fixed verdict, to test the guard's decisions alone."""

    def __init__(self, verdict: Principal | Exception) -> None:
        self.verdict = verdict
        self.seen: list[str] = []

    async def verify(self, token: str) -> Principal:
        self.seen.append(token)
        if isinstance(self.verdict, Exception):
            raise self.verdict
        return self.verdict


def decide(verdict: Principal | Exception, header: str | None, method: str, params: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    resource = ProtectedResource(RESOURCE, ("https://auth.example.com",))
    policy = ScopePolicy(default=frozenset({"mcp:read"}), tools={"write": frozenset({"mcp:write"})})
    fixed = Fixed(verdict)
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return asyncio.run(ResourceServer(fixed, resource, policy).check(header, message)), fixed


def challenge_of(denial: Denial) -> dict[str, str]:
    assert denial.www_authenticate is not None
    ((scheme, params),) = parse_www_authenticate([denial.www_authenticate])
    assert scheme == "bearer"
    return params


READER = Principal("user-1", "app", frozenset({"mcp:read"}))


def test_guard_without_a_token_challenges_with_metadata_and_scope() -> None:
    denial, fixed = decide(READER, None, "tools/call", {"name": "write"})
    assert isinstance(denial, Denial) and denial.status == 401 and not fixed.seen
    assert challenge_of(denial) == {
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "scope": "mcp:read mcp:write",
    }
    assert (b"www-authenticate", denial.www_authenticate.encode()) in denial.headers()  # type: ignore[union-attr]


@pytest.mark.parametrize("header", ["Bearer", "Bearer  a b", "bearer\ttoken", "BEARER a,b"])
def test_guard_refuses_headers_without_a_bearer_token(header: str) -> None:
    """A malformed credential of the Bearer scheme is a malformed request, 400 ``invalid_request``
    (RFC 6750 §3.1; MCP's authorization page: 400 for a malformed authorization request), not a
    401 that sends a client to get another token: its next one would be sent as malformed."""
    denial, fixed = decide(READER, header, "tools/list")
    assert isinstance(denial, Denial) and denial.status == 400 and denial.error == "invalid_request"
    assert challenge_of(denial)["error"] == "invalid_request"
    assert denial.body()["error"] == "invalid_request"
    assert not fixed.seen


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Token abc", "DPoP abc", "Negotiate", "", "  "])
def test_credentials_of_another_scheme_are_challenged_without_an_error(header: str) -> None:
    """Found by an authorization review: ``Authorization: Basic ...`` was answered
    ``error="invalid_token"``, as if a bearer token had been refused. RFC 6750 §3.1: a request
    that attempted an unsupported authentication method lacks authentication information, and
    the challenge then carries no error code or other error information (as with no header)."""
    denial, fixed = decide(READER, header, "tools/list")
    assert isinstance(denial, Denial) and denial.status == 401 and denial.error is None
    assert challenge_of(denial) == {
        "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
        "scope": "mcp:read",
    }
    assert denial.body()["error"] == "unauthorized"
    assert not fixed.seen


def test_guard_refuses_an_invalid_token_with_the_reason() -> None:
    denial, fixed = decide(InvalidToken("the token has expired"), "Bearer abc.def.ghi", "tools/list")
    assert isinstance(denial, Denial) and denial.status == 401
    assert challenge_of(denial)["error"] == "invalid_token"
    assert challenge_of(denial)["error_description"] == "the token has expired"
    assert denial.body() == {"error": "invalid_token", "error_description": "the token has expired"}
    assert fixed.seen == ["abc.def.ghi"]


def test_guard_asks_for_every_scope_the_request_needs() -> None:
    denial, _ = decide(READER, "bearer abc", "tools/call", {"name": "write"})
    assert isinstance(denial, Denial) and denial.status == 403 and denial.error == "insufficient_scope"
    assert challenge_of(denial)["scope"] == "mcp:read mcp:write"


def test_guard_lets_a_sufficient_token_through() -> None:
    principal, _ = decide(READER, "Bearer abc", "tools/call", {"name": "read"})
    assert principal is READER


def test_guard_answers_503_when_the_verifier_cannot_decide() -> None:
    denial, _ = decide(VerifierUnavailable("down"), "Bearer abc", "tools/list")
    assert isinstance(denial, Denial) and denial.status == 503 and denial.www_authenticate is None


def test_scopes_for_whole_messages() -> None:
    """What the HTTP app asks for: a batch needs every scope any of its requests does; a
    response, a body that is not JSON-RPC or params that are not an object need the default."""
    policy = ScopePolicy(
        default=frozenset({"mcp"}),
        methods={"prompts/get": frozenset({"prompts"})},
        tools={"write": frozenset({"files:write"})},
    )
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write"}}
    prompt = {"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": "write"}}
    assert policy.for_message(call) == {"mcp", "files:write"}
    assert policy.for_message(prompt) == {"mcp", "prompts"}  # a prompt named like a tool is not the tool
    assert policy.for_message([call, prompt]) == {"mcp", "files:write", "prompts"}
    assert policy.for_message({"jsonrpc": "2.0", "id": 1, "result": {}}) == {"mcp"}
    assert policy.for_message({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["write"]}) == {"mcp"}
    assert policy.for_message({"method": 7}) == {"mcp"}
    assert policy.for_message(None) == {"mcp"}
    assert policy.for_message("garbage") == {"mcp"}


def test_resource_server_metadata_paths_and_document() -> None:
    fixed = Fixed(READER)
    at_path = ResourceServer(
        fixed, ProtectedResource(RESOURCE, ("https://auth.example.com",)), ScopePolicy(default=frozenset({"b", "a"}))
    )
    assert at_path.metadata_paths == (
        "/.well-known/oauth-protected-resource/mcp",  # the specification's first choice
        "/.well-known/oauth-protected-resource",
    )
    assert at_path.document()["scopes_supported"] == ["a", "b"]  # the policy's default scopes
    at_root = ResourceServer(fixed, ProtectedResource("https://mcp.example.com/", ("https://a.example.com",)))
    assert at_root.metadata_paths == ("/.well-known/oauth-protected-resource",)
    assert "scopes_supported" not in at_root.document()
    explicit = ProtectedResource(RESOURCE, ("https://auth.example.com",), scopes_supported=("x",))
    assert ResourceServer(fixed, explicit, ScopePolicy(default=frozenset({"a"}))).document()["scopes_supported"] == [
        "x"
    ]


def test_request_state_sealed_for_a_principal_opens_only_for_it() -> None:
    from mcpgen._runtime.jsonrpc import ProtocolError
    from mcpgen._runtime.server.services.request_state import RequestStateSealer

    alice = Principal("alice", "app", frozenset(), issuer="https://auth.example.com").identity
    bob = Principal("bob", "app", frozenset(), issuer="https://auth.example.com").identity
    odd = "iss\x00sub\udc80\x00"  # identities come from token claims: any string
    worker_a, worker_b = RequestStateSealer(b"shared"), RequestStateSealer(b"shared")
    sealed = worker_a.seal("step-2", principal=alice)
    assert worker_b.open(sealed, principal=alice) == "step-2"  # any worker, same principal
    assert worker_b.open(worker_a.seal("s", principal=odd), principal=odd) == "s"
    refusals = [
        (sealed, bob),  # another principal
        (sealed, None),  # nobody authenticated
        (worker_a.seal("step-2"), alice),  # issued to nobody, presented by alice
        (worker_a.seal("step-2", principal=alice + "x"), alice),
        (RequestStateSealer(b"other").seal("step-2", principal=alice), alice),  # another key
    ]
    for state, who in refusals:
        with pytest.raises(ProtocolError) as caught:
            worker_b.open(state, principal=who)
        assert caught.value.code == -32602


def test_verified_tokens_are_remembered_briefly_and_never_past_their_expiry(issuer: TestAuthorizationServer) -> None:
    """A client sends one token with every request: the verdict is kept (by digest), so a key
    withdrawn from the JWKS stops a token only once ``remember_seconds`` have passed, and
    ``remember=0`` (or ``remember_seconds=0``) verifies every request afresh."""

    async def go() -> dict[str, Any]:
        token = issuer.mint({"aud": RESOURCE, "exp": int(time.time()) + 3600})
        tampered = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
        verifiers = {
            "remembering": verifier(issuer, cache_seconds=0.0),
            "fresh": verifier(issuer, cache_seconds=0.0, remember=0),
            "at once": verifier(issuer, cache_seconds=0.0, remember_seconds=0.0),
        }
        for v in verifiers.values():
            assert (await v.verify(token)).subject == "user-1"
            with pytest.raises(InvalidToken):
                await v.verify(tampered)  # a remembered token vouches for no other
        old = issuer.key
        issuer.key = RSAKey.generate_key(2048, parameters={"kid": "rotated", "alg": "RS256"})  # the old key withdrawn
        verdicts: dict[str, Any] = {}
        try:
            for name, v in verifiers.items():
                try:
                    verdicts[name] = (await v.verify(token)).subject
                except InvalidToken as exc:
                    verdicts[name] = str(exc)
        finally:
            issuer.key = old
        bounded = verifier(issuer, remember=2)
        for subject in ("a", "b", "c"):
            await bounded.verify(issuer.mint({"aud": RESOURCE, "sub": subject}))
        verdicts["bounded"] = len(bounded._verdicts._kept)
        soon = verifier(issuer, leeway=5)
        expiring = issuer.mint({"aud": RESOURCE, "exp": int(time.time()) + 2})
        await soon.verify(expiring)
        ((until, expires, _),) = soon._verdicts._kept.values()
        verdicts["until"] = expires <= int(time.time()) + 2 + 5 and until <= time.monotonic() + 60
        return verdicts

    verdicts = asyncio.run(go())
    assert verdicts["remembering"] == "user-1"
    assert verdicts["fresh"] == verdicts["at once"] == "the token is signed by a key the issuer does not publish"
    assert verdicts["bounded"] == 2 and verdicts["until"] is True


def test_a_lifespan_shutdown_closes_the_verifiers_client_and_the_services(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ASGI app under a host with lifespan (mounted in another app, a server with reload)
    released nothing at shutdown: the introspection verifier's client stayed open. Its lifespan
    shutdown closes the app's own (the router's services may serve other apps and stdio: left
    open); the runner, whose uvicorn runs without lifespan, closes both once uvicorn shuts down."""
    from mcpgen._runtime.server.transports.asgi import HttpApp

    from tests.server.servers import Demo

    verifier = IntrospectionVerifier(endpoint="http://127.0.0.1:9/introspect", audience=RESOURCE)
    resource = ProtectedResource(RESOURCE, ("https://a.example.com",))
    app = HttpApp(Demo().router, auth=ResourceServer(verifier, resource))
    closed: list[str] = []
    real = app.router.services.aclose

    async def services_closed() -> None:
        closed.append("services")
        await real()

    monkeypatch.setattr(app.router.services, "aclose", services_closed)

    async def lifespan() -> list[str]:
        client = verifier._client()
        inbox = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent: list[str] = []

        async def receive() -> dict[str, str]:
            return inbox.pop(0)

        async def send(message: dict[str, Any]) -> None:
            sent.append(message["type"])

        await app({"type": "lifespan"}, receive, send)
        assert client.is_closed and verifier._own is None
        return sent

    assert asyncio.run(lifespan()) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert closed == []

    from mcpgen._runtime.server.runners import uvicorn_config, uvicorn_server

    async def served_then_stopped() -> None:
        client = verifier._client()
        server = uvicorn_server(app.router, uvicorn_config(app, "127.0.0.1", 0))
        serving = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.01)
        server.should_exit = True
        await serving
        assert client.is_closed and verifier._own is None

    asyncio.run(served_then_stopped())
    assert closed == ["services"]
