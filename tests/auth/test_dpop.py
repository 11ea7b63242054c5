"""DPoP (RFC 9449): tokens bound to the client's key, proved on every request.

End to end: our OAuth client, our protected server (``ResourceServer(dpop=DPoPProofs(...))``)
and the test authorization server binding tokens to the proof's key (checked there with
joserfc, independently of the runtime), in both eras, with and without server nonces. The
conformance suite's ``auth/dpop`` and ``auth/dpop-nonce`` scenarios check the client against
another implementation (``tests/client/test_conformance.py``).

Then the resource server's checks one by one: every way a proof can be wrong gets 401 with the
right error on the ``DPoP`` challenge and runs nothing, and the client's proofs and key choice.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import struct
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, RSAKey
from mcpgen import connect
from mcpgen._runtime.client import AuthorizationError
from mcpgen._runtime.client.auth import FileTokenStore, LoopbackRedirect, OAuth, parse_www_authenticate
from mcpgen._runtime.client.auth.dpop import DPoP, DPoPKey, htu, token_hash
from mcpgen._runtime.server.auth import (
    Denial,
    DPoPProofs,
    JWTVerifier,
    Principal,
    ProtectedResource,
    ResourceServer,
    bound_key,
)

from tests.auth.authorization_server import TestAuthorizationServer, serving
from tests.auth.protected import Notes, Observed, listening_socket
from tests.auth.test_oauth_end_to_end import POLICY, browse, call, no_browser
from tests.auth.test_oauth_end_to_end import endpoint as protected
from tests.auth.test_server_auth import b64

ERAS = ["2026-07-28", "2025-11-25"]


@asynccontextmanager
async def endpoint(
    server: TestAuthorizationServer, dpop: DPoPProofs | None, *, introspect: bool = False
) -> AsyncIterator[tuple[str, Observed, Notes]]:
    """test_oauth_end_to_end's protected Notes server, with ``dpop``."""
    async with protected(server, introspect=introspect, dpop=dpop) as at:
        yield at.url, at.observed, at.notes


def schemes(header: str | None) -> list[str]:
    return [scheme for scheme, _ in parse_www_authenticate([header or ""])]


# -- end to end ---------------------------------------------------------------------------


@pytest.mark.parametrize("nonce", [False, True], ids=["no-nonce", "nonces"])
@pytest.mark.parametrize("version", ERAS)
def test_bound_tokens_end_to_end(version: str, nonce: bool) -> None:
    """Discovery sees DPoP offered, the token request carries a proof (and meets the
    authorization server's nonce), every MCP request a fresh proof (and meets the server's),
    the step-up to ``mcp:write`` goes through the DPoP challenge."""

    async def go(server: TestAuthorizationServer) -> tuple[Observed, Notes]:
        async with endpoint(server, DPoPProofs(required=True, nonce=nonce)) as (url, observed, notes):
            auth = OAuth(LoopbackRedirect(open_browser=browse), client_name="dpop client")
            async with await connect(url, versions=[version], auth=auth, cache=None) as client:
                assert await call(client, "read_notes") == "(none)"
                assert await call(client, "write_note", text="bound") == "bound"  # step-up
            return observed, notes

    for server in serving(dpop=True, dpop_nonce=nonce):
        observed, notes = asyncio.run(go(server))
        tokens = server.seen("/token")
        assert [t["grant_type"] for t in tokens] == ["authorization_code"] * (3 if nonce else 2)
        assert all("dpop" in t for t in tokens)
        keys = {t.jkt for t in server.tokens.values()}
        assert len(keys) == 1 and None not in keys  # one key for both grants
    (jkt,) = keys
    principals = notes.principals()
    assert principals and all(bound_key(p.claims) == jkt for p in principals)
    refused = observed.refused()
    assert all(schemes(r.www_authenticate) == ["dpop"] for r in refused)  # required: DPoP alone
    errors = [parse_www_authenticate([r.www_authenticate or ""])[0][1].get("error") for r in refused]
    assert "insufficient_scope" in errors
    if nonce:
        assert errors.count("use_dpop_nonce") == 1  # the nonce then serves every request
    else:
        assert "use_dpop_nonce" not in errors


def test_bound_tokens_through_introspection() -> None:
    """The binding comes from the introspection answer's ``cnf`` as well as from a JWT's."""

    async def go(server: TestAuthorizationServer) -> list[Principal]:
        async with endpoint(server, DPoPProofs(required=True), introspect=True) as (url, _, notes):
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(url, auth=auth, cache=None) as client:
                assert await call(client, "read_notes") == "(none)"
            return notes.principals()

    for server in serving(dpop=True):
        principals = asyncio.run(go(server))
        (jkt,) = {t.jkt for t in server.tokens.values()}
    assert principals and all(bound_key(p.claims) == jkt for p in principals)


def test_a_bound_token_is_refreshed_with_the_same_key(tmp_path: Any) -> None:
    """A stored DPoP token whose key the client holds (``dpop_key``) survives a restart and
    is refreshed with a proof of that key; without the key it is dropped, not presented."""
    key = ECKey.generate_key("P-256").as_pem(private=True).decode()
    path = tmp_path / "oauth.json"

    async def go(server: TestAuthorizationServer) -> None:
        async with endpoint(server, DPoPProofs()) as (url, observed, _):
            first = OAuth(LoopbackRedirect(open_browser=browse), store=FileTokenStore(path), dpop_key=key)
            async with await connect(url, auth=first, cache=None) as client:
                await call(client, "read_notes")
            saved = json.loads(path.read_text())
            (record,) = saved["tokens"].values()
            assert record["token_type"] == "DPoP" and record["dpop_jkt"]
            record["expires_at"] = time.time() - 60
            path.write_text(json.dumps(saved))
            later = OAuth(LoopbackRedirect(open_browser=no_browser), store=FileTokenStore(path), dpop_key=key)
            async with await connect(url, auth=later, cache=None) as client:
                await call(client, "read_notes")
            assert [r.status for r in observed.refused()] == [401]  # only the very first request
            other = OAuth(LoopbackRedirect(open_browser=browse), store=FileTokenStore(path))  # a new key
            async with await connect(url, auth=other, cache=None) as client:
                await call(client, "read_notes")

    for server in serving(dpop=True):
        asyncio.run(go(server))
        grants = [t["grant_type"] for t in server.seen("/token")]
        assert grants == ["authorization_code", "refresh_token", "authorization_code"]
        assert all("dpop" in t for t in server.seen("/token"))
        keys = [t.jkt for t in server.tokens.values()]
        assert len(set(keys)) == 2  # the given key (code, then refresh), then the new one


def test_a_bearer_token_whose_refresh_token_is_bound_refreshes_with_the_key() -> None:
    """RFC 9449 §5: a server may issue a Bearer access token to a public client and still bind
    its refresh token to the proof's key; the refresh then proves that key."""

    async def go(server: TestAuthorizationServer) -> list[Principal]:
        async with endpoint(server, DPoPProofs()) as (url, _, notes):
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
                (tokens,) = [t for t in auth._tokens.values() if t is not None]
                assert tokens.token_type == "Bearer" and tokens.dpop_jkt is not None
                tokens.expires_at = time.time() - 60  # an hour later
                await call(client, "read_notes")
            return notes.principals()

    for server in serving(dpop=True, dpop_bearer=True):
        principals = asyncio.run(go(server))
        grants = [t["grant_type"] for t in server.seen("/token")]
        assert grants == ["authorization_code", "refresh_token"]
        assert all("dpop" in t for t in server.seen("/token"))  # the AS refuses a refresh without the key
    assert len(principals) >= 2 and all(bound_key(p.claims) is None for p in principals)


def test_a_server_that_never_takes_a_nonce_ends_in_an_error_not_a_loop() -> None:
    """Every nonce refused (a misconfigured fleet: workers that do not share the nonce secret)."""

    async def go(server: TestAuthorizationServer) -> Observed:
        async with endpoint(server, DPoPProofs(required=True, nonce=True, nonce_seconds=-3600)) as (url, observed, _):
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            with pytest.raises(AuthorizationError, match="keeps refusing this client's DPoP nonces"):
                async with await connect(url, auth=auth, cache=None) as client:
                    await call(client, "read_notes")
            return observed

    for server in serving(dpop=True):
        observed = asyncio.run(go(server))
    nonce_refusals = [r for r in observed.refused() if "use_dpop_nonce" in (r.www_authenticate or "")]
    # the first try, then at most two retries with a nonce: two refusals when the server hands out
    # the same nonce again (its nonces change once a second), three when a second ticked over
    assert 1 <= len(nonce_refusals) <= 3


def test_bearer_tokens_where_the_resource_server_offers_no_dpop() -> None:
    """An authorization server able to bind is not enough: the MCP server must offer DPoP."""

    async def go(server: TestAuthorizationServer) -> list[Principal]:
        async with endpoint(server, None) as (url, observed, notes):
            auth = OAuth(LoopbackRedirect(open_browser=browse))
            async with await connect(url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
            assert all(schemes(r.www_authenticate) == ["bearer"] for r in observed.refused())
            return notes.principals()

    for server in serving(dpop=True):
        principals = asyncio.run(go(server))
        assert all("dpop" not in t for t in server.seen("/token"))
    assert principals and all(bound_key(p.claims) is None for p in principals)


def test_offered_beside_bearer_dpop_is_preferred_and_can_be_declined() -> None:
    async def go(server: TestAuthorizationServer, dpop: bool | None) -> list[Principal]:
        async with endpoint(server, DPoPProofs()) as (url, observed, notes):
            auth = OAuth(LoopbackRedirect(open_browser=browse), dpop=dpop)
            async with await connect(url, auth=auth, cache=None) as client:
                await call(client, "read_notes")
            assert all(schemes(r.www_authenticate) == ["bearer", "dpop"] for r in observed.refused())
            return notes.principals()

    for server in serving(dpop=True):
        bound = asyncio.run(go(server, None))
        bearer = asyncio.run(go(server, False))
    assert bound and all(bound_key(p.claims) is not None for p in bound)
    assert bearer and all(bound_key(p.claims) is None for p in bearer)


def test_a_client_that_declines_dpop_gives_up_where_it_is_required() -> None:
    async def go(server: TestAuthorizationServer) -> None:
        async with endpoint(server, DPoPProofs(required=True)) as (url, _, _):
            auth = OAuth(LoopbackRedirect(open_browser=browse), dpop=False)
            with pytest.raises(AuthorizationError):
                async with await connect(url, auth=auth, cache=None) as client:
                    await call(client, "read_notes")

    for server in serving(dpop=True):
        asyncio.run(go(server))
        assert len(server.seen("/authorize")) == 1  # one try, then the loop guard


# -- the resource server's checks ---------------------------------------------------------

RESOURCE = "https://mcp.example.com/mcp"


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestAuthorizationServer]:
    yield from serving()


class Setup:
    """A resource server with DPoP, a client key, and a token bound to it."""

    def __init__(self, server: TestAuthorizationServer, **options: Any) -> None:
        self.proofs = DPoPProofs(**options)
        verifier = JWTVerifier(issuer=server.issuer, audience=RESOURCE, jwks_uri=f"{server.issuer}/jwks")
        self.guard = ResourceServer(verifier, ProtectedResource(RESOURCE, (server.issuer,)), POLICY, dpop=self.proofs)
        self.key = DPoPKey.generate("ES256")
        self.server = server
        self.token = self.mint(self.key.thumbprint)

    def mint(self, jkt: str | None) -> str:
        claims = {"aud": RESOURCE, "scope": "mcp:read", **({"cnf": {"jkt": jkt}} if jkt else {})}
        return self.server.mint(claims)

    def claims(self, **changes: Any) -> dict[str, Any]:
        claims = {
            "jti": base64.b64encode(hashlib.sha256(str(time.perf_counter_ns()).encode()).digest()).decode(),
            "htm": "POST",
            "htu": RESOURCE,
            "iat": int(time.time()),
            "ath": token_hash(self.token),
        }
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def sign(self, claims: dict[str, Any], header: dict[str, Any] | None = None, key: Any = None) -> str:
        head = {"typ": "dpop+jwt", "alg": "ES256", "jwk": self.key.public_jwk, **(header or {})}
        return jwt.encode(head, claims, key or self.key.key, algorithms=[head["alg"]])

    def decide(self, proofs: tuple[str, ...], *, token: str | None = None, scheme: str = "DPoP") -> Principal | Denial:
        authorization = f"{scheme} {token or self.token}"
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        return asyncio.run(self.guard.check(authorization, message, method="POST", dpop=proofs))


def refused(result: Principal | Denial, error: str, description: str) -> Denial:
    assert isinstance(result, Denial), result
    assert result.status == 401 and result.error == error, result
    assert description in result.description, result.description
    challenges = parse_www_authenticate([v.decode() for k, v in result.headers() if k == b"www-authenticate"])
    dpop = dict(challenges)["dpop"]
    assert dpop["error"] == error and dpop["algs"].split()[0] == "ES256"
    return result


def test_a_good_proof_is_accepted(issuer: TestAuthorizationServer) -> None:
    setup = Setup(issuer)
    principal = setup.decide((setup.key.proof("POST", RESOURCE + "/", access_token=setup.token),))
    assert isinstance(principal, Principal) and bound_key(principal.claims) == setup.key.thumbprint
    again = setup.decide((setup.key.proof("POST", RESOURCE, access_token=setup.token),))
    assert isinstance(again, Principal)  # a fresh proof for the same token
    spelled = setup.sign(setup.claims(), {"typ": "application/DPoP+JWT"})  # RFC 7515 §4.1.9
    assert isinstance(setup.decide((spelled,)), Principal)
    port = setup.sign(setup.claims(htu="HTTPS://MCP.example.com:443/mcp"))  # the default port, any case
    assert isinstance(setup.decide((port,)), Principal)
    # RFC 9449 §4.3 (9): the match ignores any query and fragment parts, a proof's as the request's
    for spelled_uri in (RESOURCE + "?a=b", RESOURCE + "#part", RESOURCE + "/?a=b#part"):
        assert isinstance(setup.decide((setup.sign(setup.claims(htu=spelled_uri)),)), Principal), spelled_uri
    assert isinstance(setup.decide((setup.sign(setup.claims(htu="https://mcp.example.com/other?a=b")),)), Denial)


def test_htu_is_the_endpoint_even_where_the_resource_names_the_server(issuer: TestAuthorizationServer) -> None:
    """A resource may be less specific than the endpoint (``https://host`` for ``/mcp``): the
    proof names the URL the request went to, which is the resource's host and the app's path."""
    proofs = DPoPProofs()
    verifier = JWTVerifier(issuer=issuer.issuer, audience="https://mcp.example.com", jwks_uri=f"{issuer.issuer}/jwks")
    guard = ResourceServer(verifier, ProtectedResource("https://mcp.example.com", (issuer.issuer,)), dpop=proofs)
    key = DPoPKey.generate("ES256")
    token = issuer.mint({"aud": "https://mcp.example.com", "cnf": {"jkt": key.thumbprint}})

    def decide(url: str, path: str | None = "/mcp") -> Principal | Denial:
        proof = key.proof("POST", url, access_token=token)
        return asyncio.run(guard.check(f"DPoP {token}", None, method="POST", path=path, dpop=(proof,)))

    assert isinstance(decide("https://mcp.example.com/mcp"), Principal)
    assert isinstance(decide("https://mcp.example.com"), Principal)  # the resource itself
    assert isinstance(decide("https://evil.example.com/mcp"), Denial)  # never the Host a client names
    assert isinstance(decide("https://mcp.example.com/other"), Denial)


def bad_proofs(setup: Setup) -> list[tuple[str, tuple[str, ...], str]]:
    other = ECKey.generate_key("P-256")
    secret = OctKey.generate_key(256)
    good = setup.sign(setup.claims())
    private = dict(setup.key.key.as_dict(private=True))
    return [
        ("no proof", (), "exactly one DPoP proof"),
        ("two proofs", (good, setup.sign(setup.claims())), "exactly one DPoP proof"),
        ("joined by a proxy", (f"{good}, {good}",), "exactly one DPoP proof"),
        ("not a JWT", ("not-a-jwt",), "not a signed JWT"),
        ("typ JWT", (setup.sign(setup.claims(), {"typ": "JWT"}),), "typ is not dpop+jwt"),
        (
            "alg none",
            (
                f"{b64(json.dumps({'typ': 'dpop+jwt', 'alg': 'none', 'jwk': setup.key.public_jwk}).encode())}."
                f"{b64(json.dumps(setup.claims()).encode())}.",
            ),
            "does not accept",
        ),
        (
            "HMAC",
            (jwt.encode({"typ": "dpop+jwt", "alg": "HS256", "jwk": {"kty": "oct"}}, setup.claims(), secret),),
            "does not accept",
        ),
        ("private key in jwk", (setup.sign(setup.claims(), {"jwk": private}),), "not a public key"),
        ("signed by another key", (setup.sign(setup.claims(), key=other),), "signature does not verify"),
        ("htm", (setup.sign(setup.claims(htm="GET")),), "htm"),
        ("htu another path", (setup.sign(setup.claims(htu="https://mcp.example.com/other")),), "htu"),
        ("htu another host", (setup.sign(setup.claims(htu="https://evil.example.com/mcp")),), "htu"),
        ("iat old", (setup.sign(setup.claims(iat=int(time.time()) - 600)),), "iat"),
        ("iat ahead", (setup.sign(setup.claims(iat=int(time.time()) + 120)),), "iat"),
        ("iat missing", (setup.sign(setup.claims(iat=None)),), "iat"),
        ("ath missing", (setup.sign(setup.claims(ath=None)),), "ath"),
        ("ath of another token", (setup.sign(setup.claims(ath=token_hash("another"))),), "ath"),
        ("jti missing", (setup.sign(setup.claims(jti=None)),), "jti"),
        ("htu port out of range", (setup.sign(setup.claims(htu="https://mcp.example.com:99999/mcp")),), "htu"),
        ("htu unclosed IPv6 bracket", (setup.sign(setup.claims(htu="https://[::1/mcp")),), "htu"),
        ("iat beyond any float", (setup.sign(setup.claims(iat=10**400)),), "iat"),
        (
            "jwk of another type than alg",
            (
                f"{b64(json.dumps({'typ': 'dpop+jwt', 'alg': 'PS256', 'jwk': setup.key.public_jwk}).encode())}."
                f"{b64(json.dumps(setup.claims()).encode())}.{b64(b'x' * 256)}",
            ),
            "bound to",
        ),
    ]


BAD = [
    "no proof",
    "two proofs",
    "joined by a proxy",
    "not a JWT",
    "typ JWT",
    "alg none",
    "HMAC",
    "private key in jwk",
    "signed by another key",
    "htm",
    "htu another path",
    "htu another host",
    "iat old",
    "iat ahead",
    "iat missing",
    "ath missing",
    "ath of another token",
    "jti missing",
    "htu port out of range",
    "htu unclosed IPv6 bracket",
    "iat beyond any float",
    "jwk of another type than alg",
]


@pytest.mark.parametrize("case", BAD)
def test_every_bad_proof_is_refused(issuer: TestAuthorizationServer, case: str) -> None:
    setup = Setup(issuer)
    cases = {name: (proofs, description) for name, proofs, description in bad_proofs(setup)}
    assert sorted(cases) == sorted(BAD)
    proofs, description = cases[case]
    refused(setup.decide(proofs), "invalid_dpop_proof", description)


def test_odd_keys_and_jtis_are_refused_or_taken_never_a_crash(issuer: TestAuthorizationServer) -> None:
    """A token bound to a key on a curve nobody knows (its thumbprint computed by the attacker's
    authorization server, say): the key cannot be imported, and that is a refusal; a ``jti``
    holding a lone surrogate is a string like any other."""
    from mcpgen._runtime.server.services.dpop import thumbprint

    setup = Setup(issuer)
    odd = {**setup.key.public_jwk, "crv": "P-999"}
    token = setup.mint(thumbprint(odd, "ES256"))
    claims = setup.claims(ath=token_hash(token))
    refused(setup.decide((setup.sign(claims, {"jwk": odd}),), token=token), "invalid_dpop_proof", "signature")
    from joserfc import jws

    header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": setup.key.public_jwk}
    payload = json.dumps(setup.claims(jti="\ud800")).encode()  # "\ud800" escaped: valid JSON, no valid UTF-8
    surrogate = jws.serialize_compact(header, payload, setup.key.key)
    assert isinstance(setup.decide((surrogate,)), Principal)
    refused(setup.decide((surrogate,)), "invalid_dpop_proof", "used before")


def test_a_full_proof_memory_refuses_new_proofs_and_never_forgets_a_live_one(issuer: TestAuthorizationServer) -> None:
    """Forgetting the oldest proof to make room would let a flood of proofs (anyone's own token
    and key will do) push a captured proof out of memory and replay it within its window: a full
    memory answers 503 instead, and takes proofs again as older ones reach the end of theirs."""
    from mcpgen._runtime.server.services.dpop import LocalProofMemory, ProofMemoryFull

    memory = LocalProofMemory(3)
    assert all(asyncio.run(memory.first_use(key, 100.0, 90.0)) for key in "abc")
    with pytest.raises(ProofMemoryFull):
        asyncio.run(memory.first_use("d", 150.0, 90.0))
    assert asyncio.run(memory.first_use("a", 150.0, 90.0)) is False  # still known: a replay
    assert asyncio.run(memory.first_use("d", 190.5, 90.0))  # a, b and c ended at 190
    assert asyncio.run(memory.first_use("a", 190.5, 90.0))
    # out of order (a clock set back, a window of another length): still found once full
    assert asyncio.run(memory.first_use("e", 100.0, 10.0))  # ends at 110, behind d and a (280.5)
    memory._swept -= 1.0  # (a second after the sweep at d's refusal, by the monotonic clock)
    assert asyncio.run(memory.first_use("f", 200.0, 90.0))  # e had ended
    with pytest.raises(ValueError, match="at least one"):
        DPoPProofs(remember=0)
    # a clock set back after a sweep: the next sweep is due by the monotonic clock, not the wall's
    back = LocalProofMemory(2)
    assert asyncio.run(back.first_use("x", 1000.0, 90.0)) and asyncio.run(back.first_use("y", 1000.0, 90.0))
    with pytest.raises(ProofMemoryFull):
        asyncio.run(back.first_use("z", 1000.5, 90.0))  # swept (nothing expired)
    back._swept -= 1.0  # (a second later, by the monotonic clock)
    assert asyncio.run(back.first_use("z", 1095.0, 10.0))  # x, y expired: z ends at 1105
    assert asyncio.run(back.first_use("w", 500.0, 90.0))  # the wall clock set back: w ends at 590
    back._swept -= 1.0
    assert asyncio.run(back.first_use("v", 600.0, 90.0))  # w, behind z, had ended: found

    setup = Setup(issuer, memory=LocalProofMemory(2, per_holder=2))  # one key may fill it (see below)
    captured = setup.key.proof("POST", RESOURCE, access_token=setup.token)
    assert isinstance(setup.decide((captured,)), Principal)
    assert isinstance(setup.decide((setup.key.proof("POST", RESOURCE, access_token=setup.token),)), Principal)
    flood = setup.decide((setup.key.proof("POST", RESOURCE, access_token=setup.token),))
    assert isinstance(flood, Denial) and flood.status == 503 and flood.error == "temporarily_unavailable", flood
    refused(setup.decide((captured,)), "invalid_dpop_proof", "used before")


def test_one_keys_flood_of_proofs_takes_its_share_of_the_memory_not_every_clients(
    issuer: TestAuthorizationServer,
) -> None:
    """A token is bound to one key: a holder flooding proofs (valid ones, of its own token and key)
    filled the whole memory, and every DPoP client of the process got 503s until the flood's
    proofs expired. One key's live proofs take at most ``per_holder`` places (half by default):
    the flood's own proofs are refused, other keys' still accepted."""
    from mcpgen._runtime.server.services.dpop import LocalProofMemory, ProofMemoryFull

    memory = LocalProofMemory(4, per_holder=2)
    assert asyncio.run(memory.first_use("a1", 100.0, 90.0, holder="A"))
    assert asyncio.run(memory.first_use("a2", 100.0, 90.0, holder="A"))
    with pytest.raises(ProofMemoryFull, match="of this key"):
        asyncio.run(memory.first_use("a3", 100.0, 90.0, holder="A"))
    assert asyncio.run(memory.first_use("a1", 100.0, 90.0, holder="A")) is False  # a replay, still
    assert asyncio.run(memory.first_use("b1", 100.0, 90.0, holder="B"))
    assert asyncio.run(memory.first_use("b2", 150.0, 90.0, holder="B"))
    with pytest.raises(ProofMemoryFull, match="DPoP proofs are within"):  # the memory is full: anyone's
        asyncio.run(memory.first_use("c1", 150.0, 90.0, holder="C"))
    assert asyncio.run(memory.first_use("a3", 190.5, 90.0, holder="A"))  # a1, a2 and b1 ended at 190
    assert asyncio.run(memory.first_use("c1", 190.5, 90.0, holder="C"))
    assert LocalProofMemory(10).per_holder == 5
    with pytest.raises(ValueError, match="of each key"):
        LocalProofMemory(10, per_holder=0)

    setup = Setup(issuer, remember=4)  # two proofs of a key within their window
    for _ in range(2):
        assert isinstance(setup.decide((setup.key.proof("POST", RESOURCE, access_token=setup.token),)), Principal)
    flood = setup.decide((setup.key.proof("POST", RESOURCE, access_token=setup.token),))
    assert isinstance(flood, Denial) and flood.status == 503, flood
    other = DPoPKey.generate("ES256")
    token = setup.mint(other.thumbprint)
    for _ in range(2):
        decided = setup.decide((other.proof("POST", RESOURCE, access_token=token),), token=token)
        assert isinstance(decided, Principal), decided


def test_a_given_memory_is_kept_where_redis_is_shared() -> None:
    from mcpgen._runtime.server.services.dpop import LocalProofMemory

    mine = LocalProofMemory(10)
    proofs = DPoPProofs(memory=mine)
    proofs.share(object())  # a server's Redis: not for a memory the author chose
    assert proofs.memory is mine


def test_the_dpop_challenge_names_its_algorithms() -> None:
    from mcpgen._runtime.client.auth import Challenge

    response = httpx.Response(
        401,
        headers=[("www-authenticate", 'Bearer resource_metadata="m"'), ("www-authenticate", 'DPoP algs="RS256 PS256"')],
    )
    challenge = Challenge.of(response)
    assert challenge is not None and challenge.params == {"resource_metadata": "m"}  # Bearer's, as sent
    assert challenge.dpop and challenge.dpop_algs == ("RS256", "PS256")
    assert DPoP().key_for(None, challenge.dpop_algs).alg == "PS256"  # type: ignore[union-attr]


def test_a_stored_bearer_token_keeps_its_access_but_not_a_refresh_bound_to_a_lost_key() -> None:
    from mcpgen._runtime.client.auth import MemoryTokenStore, Tokens

    store = MemoryTokenStore()
    kept = Tokens("access", "https://as", RESOURCE, "Bearer", "refresh", None, None, "lost-jkt", "ES256")
    asyncio.run(store.set_tokens(RESOURCE, kept))
    bound = Tokens("access2", "https://as", RESOURCE + "2", "DPoP", "refresh2", None, None, "lost-jkt", "ES256")
    asyncio.run(store.set_tokens(RESOURCE + "2", bound))
    auth = OAuth(store=store)
    loaded = asyncio.run(auth._current(RESOURCE))
    assert loaded is not None and loaded.access_token == "access" and loaded.refresh_token is None
    assert asyncio.run(auth._current(RESOURCE + "2")) is None


def test_a_proof_is_good_once(issuer: TestAuthorizationServer) -> None:
    setup = Setup(issuer)
    proof = setup.sign(setup.claims())
    assert isinstance(setup.decide((proof,)), Principal)
    refused(setup.decide((proof,)), "invalid_dpop_proof", "used before")


def test_the_proof_key_must_be_the_one_the_token_is_bound_to(issuer: TestAuthorizationServer) -> None:
    setup = Setup(issuer)
    stranger = DPoPKey.generate("ES256")
    proof = stranger.proof("POST", RESOURCE, access_token=setup.token)  # a stolen token, the thief's key
    refused(setup.decide((proof,)), "invalid_dpop_proof", "bound to")


def test_a_bound_token_as_bearer_is_refused_even_where_dpop_is_off(issuer: TestAuthorizationServer) -> None:
    setup = Setup(issuer)
    plain = ResourceServer(setup.guard.verifier, setup.guard.metadata, POLICY)  # no dpop=
    refused = asyncio.run(plain.check(f"Bearer {setup.token}", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert isinstance(refused, Denial) and refused.error == "invalid_token"
    assert "presented as a Bearer token" in refused.description
    assert isinstance(asyncio.run(plain.check(f"Bearer {setup.mint(None)}", None)), Principal)


def test_bearer_and_dpop_tokens_stay_in_their_schemes(issuer: TestAuthorizationServer) -> None:
    setup = Setup(issuer)
    bound_as_bearer = setup.decide((), scheme="Bearer")  # RFC 9449 §7.2: a stolen bound token as Bearer
    assert isinstance(bound_as_bearer, Denial) and bound_as_bearer.error == "invalid_token"
    assert "presented as a Bearer token" in bound_as_bearer.description
    plain = setup.mint(None)
    assert isinstance(setup.decide((), token=plain, scheme="Bearer"), Principal)  # DPoP offered, not required
    proof = setup.key.proof("POST", RESOURCE, access_token=plain)
    unbound = setup.decide((proof,), token=plain)
    assert isinstance(unbound, Denial) and "not bound to a DPoP key" in unbound.description
    required = Setup(issuer, required=True)
    denial = required.decide((), token=required.mint(None), scheme="Bearer")
    assert isinstance(denial, Denial) and "DPoP-bound tokens only" in denial.description
    assert schemes(denial.www_authenticate) == ["dpop"] and len(denial.more) == 0


def test_nonces(issuer: TestAuthorizationServer) -> None:
    secret = b"s" * 32
    setup = Setup(issuer, nonce=True, nonce_secret=secret)
    denial = refused(setup.decide((setup.sign(setup.claims()),)), "use_dpop_nonce", "nonce")
    (nonce,) = [v.decode() for k, v in denial.headers() if k == b"dpop-nonce"]
    assert isinstance(setup.decide((setup.sign(setup.claims(nonce=nonce)),)), Principal)
    forged = b64(base64.urlsafe_b64decode(nonce + "==")[:8] + b"\x00" * 16)
    refused(setup.decide((setup.sign(setup.claims(nonce=forged)),)), "use_dpop_nonce", "nonce")
    stamp = struct.pack(">Q", int(time.time()) - 3600)
    stale = b64(stamp + hmac.new(secret, stamp, hashlib.sha256).digest()[:16])
    refused(setup.decide((setup.sign(setup.claims(nonce=stale)),)), "use_dpop_nonce", "nonce")
    other_worker = Setup(issuer, nonce=True, nonce_secret=secret)  # the same secret: its nonces are good here
    assert isinstance(setup.decide((setup.sign(setup.claims(nonce=other_worker.proofs.new_nonce())),)), Principal)


def test_the_metadata_and_challenges_advertise_dpop(issuer: TestAuthorizationServer) -> None:
    offered = Setup(issuer).guard
    assert offered.document()["dpop_signing_alg_values_supported"][0] == "ES256"
    assert "dpop_bound_access_tokens_required" not in offered.document()
    assert Setup(issuer, required=True).guard.document()["dpop_bound_access_tokens_required"] is True
    denial = asyncio.run(offered.check(None, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert isinstance(denial, Denial)
    values = [v.decode() for k, v in denial.headers() if k == b"www-authenticate"]
    assert [scheme for scheme, _ in parse_www_authenticate(values)] == ["bearer", "dpop"]
    assert all("error" not in params for _, params in parse_www_authenticate(values))
    with pytest.raises(ValueError, match="no 'none', no HMAC"):
        DPoPProofs(algorithms=("ES256", "HS256"))


def test_proofs_over_http_for_each_method(issuer: TestAuthorizationServer) -> None:
    """Through the transport: the method and the repeated-header rule come from the request."""
    from tests.auth.protected import served_in_thread

    proofs = DPoPProofs()
    sock = listening_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    verifier = JWTVerifier(issuer=issuer.issuer, audience=url, jwks_uri=f"{issuer.issuer}/jwks")
    app = Notes().asgi_app(auth=ResourceServer(verifier, ProtectedResource(url, (issuer.issuer,)), POLICY, dpop=proofs))
    key = DPoPKey.generate("ES256")
    token = issuer.mint({"aud": url, "scope": "mcp:read", "cnf": {"jkt": key.thumbprint}})
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    modern = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
        "accept": "application/json, text/event-stream",
    }
    with served_in_thread(app, sock), httpx.Client(timeout=10) as http:
        auth = {"authorization": f"DPoP {token}"}
        ok = http.post(url, json=body, headers={**modern, **auth, "dpop": key.proof("POST", url, access_token=token)})
        assert ok.status_code == 200, ok.text
        wrong_method = http.post(
            url, json=body, headers={**modern, **auth, "dpop": key.proof("GET", url, access_token=token)}
        )
        assert wrong_method.status_code == 401 and "htm" in wrong_method.json()["error_description"]
        twice = [("dpop", key.proof("POST", url, access_token=token)) for _ in range(2)]
        repeated = http.post(url, json=body, headers=[*modern.items(), *auth.items(), *twice])
        assert repeated.status_code == 401 and "exactly one" in repeated.json()["error_description"]
        metadata = http.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")).json()
        assert metadata["dpop_signing_alg_values_supported"][0] == "ES256"
        assert "dpop-nonce" not in ok.headers  # no nonces asked for, none given


# -- the client's proofs --------------------------------------------------------------------


def test_every_accepted_request_gets_a_fresh_nonce(issuer: TestAuthorizationServer) -> None:
    """RFC 9449 §9: the nonce comes with every answer, so a busy client never falls behind."""
    from tests.auth.protected import served_in_thread

    sock = listening_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    verifier = JWTVerifier(issuer=issuer.issuer, audience=url, jwks_uri=f"{issuer.issuer}/jwks")
    guard = ResourceServer(verifier, ProtectedResource(url, (issuer.issuer,)), POLICY, dpop=DPoPProofs(nonce=True))
    key = DPoPKey.generate("ES256")
    token = issuer.mint({"aud": url, "scope": "mcp:read", "cnf": {"jkt": key.thumbprint}})
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    head = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
        "accept": "application/json, text/event-stream",
    }
    with served_in_thread(Notes().asgi_app(auth=guard), sock), httpx.Client(timeout=10) as http:

        def post(nonce: str | None) -> httpx.Response:
            proof = key.proof("POST", url, access_token=token, nonce=nonce)
            return http.post(url, json=body, headers={**head, "authorization": f"DPoP {token}", "dpop": proof})

        first = post(None)
        assert first.status_code == 401 and first.headers["dpop-nonce"]
        second = post(first.headers["dpop-nonce"])
        assert second.status_code == 200 and second.headers["dpop-nonce"]
        assert post(second.headers["dpop-nonce"]).status_code == 200


def test_a_client_proof_has_what_rfc_9449_asks() -> None:
    key = DPoPKey.generate("ES256")
    proof = key.proof("post", "https://MCP.example.com/mcp?x=1#frag", access_token="tok", nonce="n-1")
    decoded = jwt.decode(proof, key.key, algorithms=["ES256"])
    assert decoded.header["typ"] == "dpop+jwt" and decoded.header["alg"] == "ES256"
    assert "d" not in decoded.header["jwk"] and decoded.header["jwk"]["kty"] == "EC"
    claims = decoded.claims
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp"
    assert claims["ath"] == token_hash("tok") and claims["nonce"] == "n-1"
    assert abs(claims["iat"] - time.time()) < 5 and len(claims["jti"]) >= 22
    assert key.proof("POST", "https://x/mcp") != key.proof("POST", "https://x/mcp")  # a new jti each time
    assert htu("https://x") == "https://x/"
    assert htu("https://user:secret@Host.example:443/mcp?q") == "https://host.example/mcp"  # no password in proofs
    assert htu("http://[::1]:8080/mcp") == "http://[::1]:8080/mcp"


def test_the_client_picks_an_algorithm_the_server_lists() -> None:
    dpop = DPoP()
    assert dpop.key_for(None).alg == "ES256"  # type: ignore[union-attr]
    assert dpop.key_for(("RS512", "PS256")).alg == "PS256"  # type: ignore[union-attr]
    assert dpop.key_for(("none", "HS256")) is None
    assert dpop.key_for(()) is None
    assert dpop.key_for(("ES256", "ES384"), ("ES384",)).alg == "ES384"  # type: ignore[union-attr]  # both servers'
    assert dpop.key_for(None, ("ES512",)).alg == "ES512"  # type: ignore[union-attr]
    pem = RSAKey.generate_key(2048).as_pem(private=True).decode()
    rsa = DPoP(pem)
    bound = rsa.key_for(("ES256", "RS256"))
    assert bound is not None and bound.alg == "RS256"
    assert rsa.key_for(("ES256",)) is None
    restarted = DPoP(pem)  # PS256 and RS256 share the key's thumbprint: the token records which
    assert restarted.holding(bound.thumbprint, "RS256").alg == "RS256"  # type: ignore[union-attr]
    assert restarted.holding(bound.thumbprint, "ES256") is None
    assert DPoP().holding(bound.thumbprint) is None


def test_a_given_jwk_proves_with_its_public_members_only(issuer: TestAuthorizationServer) -> None:
    """A private JWK with ``key_ops``, ``kid`` and ``alg``: the proof's ``jwk`` carries only the
    public key (a verifier honouring ``key_ops: [sign]`` would refuse it), and ``alg`` is obeyed."""
    jwk = {**ECKey.generate_key("P-256").as_dict(private=True), "key_ops": ["sign"], "kid": "k1", "alg": "ES256"}
    dpop = DPoP(jwk)
    key = dpop.key_for(("ES256", "PS256"))
    assert key is not None and sorted(key.public_jwk) == ["crv", "kty", "x", "y"]
    setup = Setup(issuer)
    token = setup.mint(key.thumbprint)
    assert isinstance(setup.decide((key.proof("POST", RESOURCE, access_token=token),), token=token), Principal)
    rsa = {**RSAKey.generate_key(2048).as_dict(private=True), "alg": "RS256"}
    assert DPoP(rsa).key_for(("PS256", "RS256")).alg == "RS256"  # type: ignore[union-attr]
    assert DPoP(rsa).key_for(("PS256",)) is None
    for wrong in (ECKey.generate_key("P-256").as_dict(private=False), "not a key", OctKey.generate_key(256).as_dict()):
        with pytest.raises(ValueError, match="private key"):
            DPoP(wrong)


def test_the_client_retries_a_token_request_once_with_the_nonce() -> None:
    """Against the test authorization server's nonce: one challenge, one retry, a bound token."""
    from mcpgen._runtime.client.auth import ServerMetadata
    from mcpgen._runtime.client.auth.dpop import Prover
    from mcpgen._runtime.client.auth.grants import ClientCredentials, Registration, Target

    from tests.auth.authorization_server import Client

    for server in serving(dpop=True, dpop_nonce=True):
        server.add_client(Client("machine", "secret", [], ["client_credentials"], "client_secret_basic", "mcp:read"))

        async def go(server: TestAuthorizationServer = server) -> Any:
            grant = ClientCredentials(Registration("machine", "secret"))
            async with httpx.AsyncClient() as http:
                metadata = ServerMetadata.parse(server.metadata(), server.issuer, server.issuer, False)
                prover = Prover(DPoP(), DPoPKey.generate("ES256"))
                target = Target(RESOURCE, RESOURCE, metadata, "mcp:read", prover)
                return await grant.obtain(http, target, None), prover  # type: ignore[arg-type]

        tokens, prover = asyncio.run(go())
        assert tokens.token_type == "DPoP" and tokens.dpop_jkt == prover.key.thumbprint
        assert len(server.seen("/token")) == 2  # the challenge, then the retry
        assert prover.dpop.nonce(f"{server.issuer}/token") == server.dpop_nonce
        assert prover.dpop.nonce(f"{server.issuer}/mcp") is None  # nonces are per endpoint


# -- a client that knows no DPoP ------------------------------------------------------------


@pytest.mark.interop
@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_python_sdk_client_uses_bearer_where_dpop_is_offered(
    issuer: TestAuthorizationServer, mode: str
) -> None:
    """``mcp`` 2.3.0's client and its OAuth know nothing of DPoP: a server offering it beside
    Bearer (two challenges) lets it in with a Bearer token as before."""
    from tests.auth.test_protected_server import POLICY as VAULT_POLICY
    from tests.auth.test_protected_server import Endpoint, SdkStorage, Vault, official_client

    sock = listening_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    verifier = JWTVerifier(issuer=issuer.issuer, audience=base + "/mcp", jwks_uri=f"{issuer.issuer}/jwks")
    guard = ResourceServer(
        verifier, ProtectedResource(base + "/mcp", (issuer.issuer,)), VAULT_POLICY, dpop=DPoPProofs()
    )
    vault = Vault()
    observed = Observed(vault.asgi_app(auth=guard))
    from tests.auth.protected import served_in_thread

    with served_in_thread(observed, sock):
        ep = Endpoint(issuer, base, vault, observed)
        try:
            negotiated, texts = asyncio.run(official_client(ep, mode, SdkStorage(), ["whoami"]))
        finally:
            ep.http.close()
    assert negotiated == ("2026-07-28" if mode == "auto" else "2025-11-25")
    assert texts[0].startswith(f"{issuer.subject} [mcp:read")
    assert [schemes(r.www_authenticate) for r in observed.refused()] == [["bearer", "dpop"]]
    assert all(bound_key(p.claims) is None for _, p in vault.calls if p is not None)


# -- any proof at all: an answer, never an exception ------------------------------------------

JSON_ANY = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**400), max_value=10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(exclude_categories=()), max_size=20)  # lone surrogates too
    | st.sampled_from(["\ud800", "\udfff x", "", "x" * 300, "POST", RESOURCE, "dpop+jwt", "ES256"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
FIELDS = ("htm", "htu", "iat", "ath", "jti", "nonce")


NASTY = [
    None,
    True,
    0,
    -1,
    10**400,
    -(10**400),
    1e308,
    float("nan"),
    float("inf"),
    "",
    "\ud800",
    "x" * 300,
    [],
    {},
    [1],
    {"a": 1},
]


def test_every_claim_of_every_nasty_kind_gets_an_answer(fuzz_setup: Setup) -> None:
    """Each claim in turn as each kind of JSON value random generation rarely hits together
    (a lone surrogate in ``jti``, an integer no float holds in ``iat``), in a proof signed by the
    token's key: an answer every time."""
    from joserfc import jws

    protected = {"typ": "dpop+jwt", "alg": "ES256", "jwk": fuzz_setup.key.public_jwk}
    for field in FIELDS:
        for value in NASTY:
            payload = json.dumps({**fuzz_setup.claims(), field: value}, allow_nan=True).encode()
            answered(fuzz_setup, jws.serialize_compact(protected, payload, fuzz_setup.key.key), True)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(FIELDS), value=JSON_ANY, bound=st.booleans())
def test_any_claim_in_a_signed_proof_gets_an_answer_never_an_exception(
    fuzz_setup: Setup, field: str, value: Any, bound: bool
) -> None:
    """One claim of any JSON type (huge integers, NaN, lone surrogates, nesting) in a proof the
    token's key signed: the guard answers with a principal or a refusal."""
    from joserfc import jws

    setup = fuzz_setup
    protected = {"typ": "dpop+jwt", "alg": "ES256", "jwk": setup.key.public_jwk}
    payload = json.dumps({**setup.claims(), field: value}, allow_nan=True).encode()
    answered(setup, jws.serialize_compact(protected, payload, setup.key.key), bound)


@settings(max_examples=150, deadline=None)
@given(header=st.dictionaries(st.sampled_from(("typ", "alg", "jwk", "crit", "kid")), JSON_ANY, min_size=1, max_size=2))
def test_any_proof_header_gets_an_answer_never_an_exception(fuzz_setup: Setup, header: dict[str, Any]) -> None:
    """Header members of any JSON type, signed where the signer takes them, else sent over
    another header's signature."""
    from joserfc import jws

    setup = fuzz_setup
    protected = {"typ": "dpop+jwt", "alg": "ES256", "jwk": setup.key.public_jwk, **header}
    payload = json.dumps(setup.claims()).encode()
    try:
        proof = jws.serialize_compact(protected, payload, setup.key.key)
    except Exception:  # the signer refuses this header
        signed = jws.serialize_compact({"alg": "ES256"}, payload, setup.key.key)
        head = json.dumps(protected, allow_nan=True).encode("utf-8", "surrogatepass")
        proof = b64(head) + signed[signed.index(".") :]
    answered(setup, proof, True)


def answered(setup: Setup, proof: str, bound: bool) -> None:
    answer = setup.decide((proof,), token=setup.token if bound else setup.mint(None))
    assert isinstance(answer, (Principal, Denial))
    if isinstance(answer, Denial):
        assert answer.status == 401 and answer.error in ("invalid_dpop_proof", "invalid_token", "use_dpop_nonce")


@pytest.fixture(scope="module")
def fuzz_setup(issuer: TestAuthorizationServer) -> Setup:
    return Setup(issuer)
