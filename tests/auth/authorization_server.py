"""A real OAuth 2.1 authorization server for the tests, on 127.0.0.1 in a thread.

authlib's server components (its Flask integration) do the protocol: the authorization code
grant with PKCE required, refresh tokens (rotated), client credentials, dynamic client
registration (RFC 7591), token introspection (RFC 7662), RFC 9068 JWT access tokens signed
with an RSA key published at ``/jwks``, and the RFC 9207 ``iss`` on authorization responses.
What authlib leaves to the application is here: in-memory clients, codes and tokens, a user
who approves every request at once (the tests play the browser), and RFC 8707 resource
indicators (the ``resource`` of the authorization request is the token's ``aud``; a token
request naming another resource is refused with ``invalid_target``). With ``dpop=True`` it
binds tokens to the key of the DPoP proof a token request carries (RFC 9449 §5, checked here
with joserfc, independently of the runtime's checker): ``cnf.jkt`` in the JWT and in
introspection, ``token_type: DPoP``, refresh only with the same key; ``dpop_nonce=True``
demands its nonce first (``use_dpop_nonce``, §8); ``dpop_bearer=True`` binds only the refresh
token and issues Bearer access tokens (what §5 allows for a public client).

Every request is recorded in ``requests`` so tests can assert what the client sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, ClassVar
from urllib.parse import urlsplit

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2 import OAuth2Error
from authlib.oauth2.rfc6749 import ClientMixin, TokenMixin, grants
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc9068 import JWTBearerTokenGenerator
from authlib.oauth2.rfc9207 import IssuerParameter
from flask import Flask, g, jsonify, request
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, RSAKey, import_key
from packaging.version import Version
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

SIGNS_WITH_JOSERFC = Version(metadata.version("authlib")) >= Version("1.7")

LOOPBACK = ("127.0.0.1", "localhost", "::1")
RESOURCE_SERVER = ("resource-server", "resource-server-secret")  # the client the MCP server introspects as


@dataclass
class Client(ClientMixin):  # type: ignore[misc]
    client_id: str
    client_secret: str | None
    redirect_uris: list[str]
    grant_types: list[str]
    token_endpoint_auth_method: str
    scope: str = ""
    response_types: list[str] = field(default_factory=lambda: ["code"])
    known: frozenset[str] = frozenset()

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> str | None:
        return self.redirect_uris[0] if self.redirect_uris else None

    def get_allowed_scope(self, scope: str) -> str:
        """What this client may have of ``scope``: its registered scopes (all, when it registered
        none), and only the scopes the server knows (set by ``TestAuthorizationServer``)."""
        if not scope:
            return ""
        allowed = set(self.scope.split()) if self.scope else None
        return " ".join(s for s in scope.split() if (allowed is None or s in allowed) and s in self.known)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        """Exact match, the port aside on loopback addresses (RFC 8252 §7.3)."""
        if redirect_uri in self.redirect_uris:
            return True
        mine = urlsplit(redirect_uri)
        return mine.hostname in LOOPBACK and any(
            (u.scheme, u.hostname, u.path) == (mine.scheme, mine.hostname, mine.path)
            for u in map(urlsplit, self.redirect_uris)
        )

    def check_client_secret(self, client_secret: str) -> bool:
        return self.client_secret is not None and client_secret == self.client_secret

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if endpoint == "token":
            return method == self.token_endpoint_auth_method
        return True

    def check_response_type(self, response_type: str) -> bool:
        return response_type in self.response_types

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grant_types


@dataclass
class Code:
    code: str
    client_id: str
    redirect_uri: str
    scope: str
    user_id: str
    code_challenge: str | None
    code_challenge_method: str | None
    resource: str | None

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


@dataclass
class Token(TokenMixin):  # type: ignore[misc]
    access_token: str
    refresh_token: str | None
    client_id: str
    scope: str
    user_id: str | None
    resource: str | None
    issued_at: float
    expires_in: int
    jkt: str | None = None
    """The thumbprint of the DPoP key the tokens are bound to."""
    revoked: bool = False
    """The whole grant (a refresh rotates it away)."""
    access_revoked: bool = False
    """Only the access token (introspection says inactive; the refresh token still works)."""

    def check_client(self, client: Client) -> bool:
        return self.client_id == client.client_id

    def get_scope(self) -> str:
        return self.scope

    def get_expires_in(self) -> int:
        return self.expires_in

    def is_expired(self) -> bool:
        return time.time() >= self.issued_at + self.expires_in

    def is_revoked(self) -> bool:
        return self.revoked or self.access_revoked

    def get_user(self) -> User | None:
        return User(self.user_id) if self.user_id else None

    def get_client(self) -> Client:
        raise NotImplementedError


@dataclass(frozen=True)
class User:
    id: str

    def get_user_id(self) -> str:
        return self.id


SPARE_KEYS: list[RSAKey] = []  # the signing keys of stopped servers, for the next ones


def signing_key() -> RSAKey:
    """A stopped server's signing key, or a new one (making a 2048-bit RSA key takes 50-150 ms of
    CPU, and the suite starts some 40 of these servers). A server that stops hands its key back and
    signs with another if started again, so servers running at once never share one."""
    try:
        return SPARE_KEYS.pop()
    except IndexError:
        return RSAKey.generate_key(2048, parameters={"kid": generate_token(8), "alg": "RS256", "use": "sig"})


class TestAuthorizationServer:
    """The server; ``start()`` binds a free loopback port, ``stop()`` shuts it down."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        scopes: tuple[str, ...] = ("mcp:read", "mcp:write", "offline_access"),
        access_ttl: int = 3600,
        subject: str = "user-1",
        registration: bool = True,
        dpop: bool = False,
        dpop_nonce: bool = False,
        dpop_bearer: bool = False,
    ) -> None:
        self.dpop = dpop
        self.dpop_bearer = dpop_bearer
        self.dpop_nonce = generate_token(16) if dpop_nonce else None
        self.scopes = scopes
        self.access_ttl = access_ttl
        self.subject = subject
        self.registration_open = registration
        self.key = signing_key()
        self._key_handed_back = False
        self.clients: dict[str, Client] = {}
        self.codes: dict[str, Code] = {}
        self.tokens: dict[str, Token] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._server: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.add_client(Client(*RESOURCE_SERVER, [], [], "client_secret_basic"))
        self.app = self._build()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> TestAuthorizationServer:
        if self._key_handed_back:  # started again after a stop(): its old key may be another's now
            self.key, self._key_handed_back = signing_key(), False
        self._server = make_server("127.0.0.1", 0, self.app, threaded=True, request_handler=Quiet)  # listening now
        outer = self

        class Generator(JWTBearerTokenGenerator):  # type: ignore[misc]
            def get_jwks(self) -> KeySet | dict[str, Any]:
                keys = KeySet([outer.key])
                # authlib 1.7 and later sign with joserfc; 1.6 (the runtime's floor) with its own
                # jose, which takes the JWKS as data
                return keys if SIGNS_WITH_JOSERFC else dict(keys.as_dict(private=True))

            def get_audiences(self, client: Client, user: User | None, scope: str) -> str | list[str]:
                return g.resource or client.client_id

            def get_extra_claims(
                self, client: Client, grant_type: str, user: User | None, scope: str
            ) -> dict[str, Any]:
                return {"cnf": {"jkt": g.jkt}} if g.jkt and not outer.dpop_bearer else {}

        generator = Generator(self.issuer, refresh_token_generator=refresh_token, expires_generator=self._expires_in)
        self.oauth.register_token_generator("default", generator)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
            SPARE_KEYS.append(self.key)
            self._key_handed_back = True

    def __enter__(self) -> TestAuthorizationServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def issuer(self) -> str:
        assert self._server is not None, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_port}"

    # -- state for tests -------------------------------------------------------------------

    def add_client(self, client: Client) -> Client:
        client.known = frozenset(self.scopes)
        self.clients[client.client_id] = client
        return client

    def jwks(self) -> dict[str, Any]:
        return dict(KeySet([self.key]).as_dict(private=False))

    def mint(self, claims: Mapping[str, Any], header: Mapping[str, Any] | None = None) -> str:
        """A JWT signed with this server's key: ``iss``, ``iat`` and a one-hour ``exp`` unless given."""
        now = int(time.time())
        body = {"iss": self.issuer, "iat": now, "exp": now + 3600, "sub": self.subject, **claims}
        head = {"alg": "RS256", "kid": self.key.kid, "typ": "at+jwt", **(header or {})}
        return jwt.encode(head, {k: v for k, v in body.items() if v is not None}, self.key)

    def seen(self, path: str) -> list[dict[str, str]]:
        """The parameters of every request to ``path`` so far."""
        return [params for _, p, params in self.requests if p == path]

    def revoke_access_tokens(self) -> None:
        """Every access token issued so far turns inactive; refresh tokens stay usable."""
        for token in self.tokens.values():
            token.access_revoked = True

    # -- the app ---------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        issuer = self.issuer
        doc = {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "jwks_uri": f"{issuer}/jwks",
            "introspection_endpoint": f"{issuer}/introspect",
            "scopes_supported": list(self.scopes),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
        }
        if self.registration_open:
            doc["registration_endpoint"] = f"{issuer}/register"
        if self.dpop:
            doc["dpop_signing_alg_values_supported"] = ["ES256", "PS256"]
        return doc

    def proof_key(self, proof: str) -> str:
        """The thumbprint of a valid token-request proof's key; raises ``ValueError`` saying why not."""
        header = jws.extract_compact(proof.encode("ascii")).headers()
        if header.get("typ") != "dpop+jwt" or header.get("alg") not in ("ES256", "PS256"):
            raise ValueError("typ or alg")
        key = import_key(header["jwk"])
        if key.is_private:
            raise ValueError("a private key in the proof")
        claims = jwt.decode(proof, key, algorithms=[header["alg"]]).claims
        if claims.get("htm") != "POST" or claims.get("htu") != f"{self.issuer}/token":
            raise ValueError(f"htm {claims.get('htm')!r} htu {claims.get('htu')!r}")
        if not isinstance(claims.get("jti"), str) or abs(time.time() - claims.get("iat", 0)) > 60:
            raise ValueError("jti or iat")
        if self.dpop_nonce is not None and claims.get("nonce") != self.dpop_nonce:
            raise LookupError("use_dpop_nonce")
        return str(key.thumbprint())

    def _build(self) -> Flask:
        app = Flask("test-authorization-server")
        outer = self
        server = self.oauth = AuthorizationServer(app, query_client=self.clients.get, save_token=self._save_token)

        @app.before_request
        def record() -> None:
            params = {**request.args.to_dict(), **request.form.to_dict()}
            if request.is_json:
                params.update({k: str(v) for k, v in (request.get_json(silent=True) or {}).items()})
            if request.authorization is not None:
                params["authorization"] = request.authorization.type
            if request.headers.get("dpop") is not None:
                params["dpop"] = request.headers["dpop"]
            outer.requests.append((request.method, request.path, params))
            g.resource = None
            g.jkt = None

        # subclasses of this server's own: a class attribute set on the shared classes would hand
        # every server's codes and refresh tokens to the last one built
        server.register_grant(type("CodeGrant", (CodeGrant,), {"store": self}), [CodeChallenge(required=True)])
        server.register_grant(type("RefreshGrant", (RefreshGrant,), {"store": self}))
        server.register_grant(grants.ClientCredentialsGrant)
        server.register_extension(Issuer(self))
        server.register_endpoint(Registration(self))
        server.register_endpoint(Introspection(self))

        @app.get("/.well-known/oauth-authorization-server")
        def metadata() -> Any:
            return jsonify(outer.metadata())

        @app.get("/jwks")
        def jwks() -> Any:
            return jsonify(outer.jwks())

        @app.get("/authorize")
        def authorize() -> Any:  # the user approves at once
            user = User(outer.subject)
            try:
                grant = server.get_consent_grant(end_user=user)
            except OAuth2Error as error:
                return server.handle_error_response(None, error)
            return server.create_authorization_response(grant=grant, grant_user=user)

        @app.post("/token")
        def token() -> Any:
            wanted = request.form.get("resource")
            grant_type = request.form.get("grant_type")
            old = None
            if grant_type == "authorization_code":
                code = outer.codes.get(request.form.get("code", ""))
                bound = code.resource if code else None
            elif grant_type == "refresh_token":
                old = outer.tokens.get(request.form.get("refresh_token", ""))
                bound = old.resource if old else None
            else:
                bound = wanted
            if wanted is not None and bound is not None and wanted != bound:
                return jsonify(error="invalid_target", error_description="not the resource authorized"), 400
            g.resource = bound
            proof = request.headers.get("dpop")
            if outer.dpop and proof is not None:
                try:
                    g.jkt = outer.proof_key(proof)
                except LookupError:
                    answer = jsonify(error="use_dpop_nonce", error_description="a nonce is required")
                    return answer, 400, {"DPoP-Nonce": outer.dpop_nonce}
                except (ValueError, KeyError, TypeError, JoseError) as exc:
                    return jsonify(error="invalid_dpop_proof", error_description=str(exc)), 400
            if grant_type == "refresh_token" and old is not None and old.jkt != g.jkt:
                return jsonify(
                    error="invalid_grant", error_description="refresh with the key the token is bound to"
                ), 400
            response = server.create_token_response()
            if g.jkt is not None and response.status_code == 200 and not outer.dpop_bearer:
                answer = response.get_json()
                answer["token_type"] = "DPoP"
                response.set_data(json.dumps(answer))
            return response

        @app.post("/register")
        def register() -> Any:
            if not outer.registration_open:
                return jsonify(error="access_denied"), 403
            return server.create_endpoint_response("client_registration")

        @app.post("/introspect")
        def introspect() -> Any:
            return server.create_endpoint_response("introspection")

        return app

    def _expires_in(self, client: Client, grant_type: str) -> int:
        return self.access_ttl

    def _save_token(self, token: dict[str, Any], req: Any) -> None:
        record = Token(
            access_token=token["access_token"],
            refresh_token=token.get("refresh_token"),
            client_id=req.client.client_id,
            scope=token.get("scope", ""),
            user_id=req.user.id if req.user else None,
            resource=g.resource,
            issued_at=time.time(),
            expires_in=token.get("expires_in", self.access_ttl),
            jkt=g.jkt,
        )
        self.tokens[record.access_token] = record
        if record.refresh_token:
            self.tokens[record.refresh_token] = record


class Quiet(WSGIRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def refresh_token(*args: Any, **kwargs: Any) -> str:
    return str(generate_token(48))


class CodeGrant(grants.AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]
    store: TestAuthorizationServer

    def save_authorization_code(self, code: str, req: Any) -> None:
        data = req.payload.data
        self.store.codes[code] = Code(
            code=code,
            client_id=req.client.client_id,
            redirect_uri=req.payload.redirect_uri,
            scope=req.payload.scope or "",
            user_id=req.user.id,
            code_challenge=data.get("code_challenge"),
            code_challenge_method=data.get("code_challenge_method"),
            resource=data.get("resource"),
        )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        found = self.store.codes.get(code)
        return found if found is not None and found.client_id == client.client_id else None

    def delete_authorization_code(self, code: Code) -> None:
        self.store.codes.pop(code.code, None)

    def authenticate_user(self, code: Code) -> User:
        return User(code.user_id)


class RefreshGrant(grants.RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic", "client_secret_post", "none"]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation (OAuth 2.1 for public clients)
    store: TestAuthorizationServer

    def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
        token = self.store.tokens.get(refresh_token)
        if token is None or token.revoked or token.refresh_token != refresh_token:
            return None
        return token

    def authenticate_user(self, token: Token) -> User | None:
        return token.get_user()

    def revoke_old_credential(self, token: Token) -> None:
        token.revoked = True


class Issuer(IssuerParameter):  # type: ignore[misc]
    def __init__(self, store: TestAuthorizationServer) -> None:
        self.store = store

    def get_issuer(self) -> str:
        return self.store.issuer


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    def __init__(self, store: TestAuthorizationServer) -> None:
        super().__init__()
        self.store = store

    def authenticate_token(self, req: Any) -> bool:
        return True  # open registration

    def get_server_metadata(self) -> dict[str, Any]:
        return self.store.metadata()

    def generate_client_secret(self, req: Any) -> str | None:
        method = req.payload.data.get("token_endpoint_auth_method", "client_secret_basic")
        return None if method == "none" else generate_token(32)

    def save_client(self, info: dict[str, Any], metadata: dict[str, Any], req: Any) -> Client:
        return self.store.add_client(
            Client(
                client_id=info["client_id"],
                client_secret=info.get("client_secret"),
                redirect_uris=list(metadata.get("redirect_uris", [])),
                grant_types=list(metadata.get("grant_types", ["authorization_code"])),
                token_endpoint_auth_method=metadata.get("token_endpoint_auth_method", "client_secret_basic"),
                scope=metadata.get("scope", ""),
                response_types=list(metadata.get("response_types", ["code"])),
            )
        )


class Introspection(IntrospectionEndpoint):  # type: ignore[misc]
    def __init__(self, store: TestAuthorizationServer) -> None:
        super().__init__(None)  # authlib 1.6 requires the server argument; register_endpoint sets it
        self.store = store

    def query_token(self, token: str, hint: str | None) -> Token | None:
        found = self.store.tokens.get(token)
        return found if found is not None and found.access_token == token else None

    def check_permission(self, token: Token, client: Client, req: Any) -> bool:
        return client.client_id == RESOURCE_SERVER[0]

    def introspect_token(self, token: Token) -> dict[str, Any]:
        return {
            "active": True,
            "client_id": token.client_id,
            "scope": token.scope,
            "sub": token.user_id or token.client_id,
            "aud": token.resource,
            "iss": self.store.issuer,
            "exp": int(token.issued_at + token.expires_in),
            "iat": int(token.issued_at),
            "token_type": "DPoP" if token.jkt and not self.store.dpop_bearer else "Bearer",
            **({"cnf": {"jkt": token.jkt}} if token.jkt and not self.store.dpop_bearer else {}),
        }


def serving(**options: Any) -> Iterator[TestAuthorizationServer]:
    """A started server for a fixture; stopped afterwards."""
    server = TestAuthorizationServer(**options).start()
    try:
        yield server
    finally:
        server.stop()
