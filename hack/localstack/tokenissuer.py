"""A small token service for a registry configured for Bearer-token auth (distribution's
`auth: token: realm/service/issuer/rootcertbundle`).

`TokenIssuer(workdir, users={"bob": "pw"})` makes a P-256 key and a self-signed certificate
(`cert_path`, the registry's `rootcertbundle`) and serves `GET /token?service=...&scope=...` on
127.0.0.1 in a thread of the test process. A request with HTTP basic credentials of a known
user gets a JWT (ES256, the certificate in its `x5c` header) granting the scope's actions on
that repository, `pull` only (`pull,push` for a user in `pushers`); wrong credentials get 401; no credentials get a token with no
access (anonymous). `grant_for` rewrites which repository a token names (a token for another
scope); `requests` records what was asked (scope, service, user).
"""

from __future__ import annotations

import base64
import datetime as dt
import hmac
import json
import secrets
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

ISSUER = "ptah-test-token-issuer"
SERVICE = "ptah-test-registry"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class TokenIssuer:
    def __init__(
        self, workdir: Path, users: dict[str, str], pushers: frozenset[str] = frozenset()
    ) -> None:
        self.workdir = workdir / f"token-issuer-{secrets.token_hex(3)}"
        self.users = dict(users)
        self.pushers = pushers
        self.grant_for: Callable[[str], str] = lambda repository: repository
        self.requests: list[dict[str, str]] = []
        self._key = ec.generate_private_key(ec.SECP256R1())
        self._cert: x509.Certificate | None = None
        self._server: ThreadingHTTPServer | None = None

    @property
    def cert_path(self) -> Path:
        return self.workdir / "issuer.crt"

    @property
    def realm(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/token"

    @property
    def host(self) -> str:
        assert self._server is not None
        return f"127.0.0.1:{self._server.server_address[1]}"

    def registry_auth(self) -> dict[str, object]:
        """The registry config's `auth` block."""
        return {
            "token": {
                "realm": self.realm,
                "service": SERVICE,
                "issuer": ISSUER,
                "rootcertbundle": str(self.cert_path),
            }
        }

    def token(self, user: str | None, scope: str) -> str:
        access = []
        parts = scope.split(":")
        if user is not None and len(parts) == 3 and parts[0] == "repository":
            allowed = {"pull", "push"} if user in self.pushers else {"pull"}
            actions = [a for a in parts[2].split(",") if a in allowed]
            access.append(
                {"type": "repository", "name": self.grant_for(parts[1]), "actions": actions}
            )
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": user or "",
            "aud": SERVICE,
            "exp": now + 300,
            "nbf": now - 10,
            "iat": now,
            "jti": secrets.token_hex(8),
            "access": access,
        }
        assert self._cert is not None
        header = {
            "typ": "JWT",
            "alg": "ES256",
            "x5c": [base64.b64encode(self._cert.public_bytes(serialization.Encoding.DER)).decode()],
        }
        signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(claims).encode())}"
        der = self._key.sign(signing_input.encode("ascii"), ec.ECDSA(hashes.SHA256()))
        r, s = decode_dss_signature(der)
        return f"{signing_input}.{_b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"

    def _user(self, authorization: str | None) -> tuple[bool, str | None]:
        """(acceptable, user): no credentials is anonymous, wrong ones are not acceptable."""
        if not authorization:
            return True, None
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "basic":
            return False, None
        try:
            user, _, password = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False, None
        known = self.users.get(user)
        if known is None or not hmac.compare_digest(known, password):
            return False, None
        return True, user

    def start(self) -> TokenIssuer:
        self.workdir.mkdir(parents=True, exist_ok=True)
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, ISSUER)])
        now = dt.datetime.now(dt.UTC)
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self._key, hashes.SHA256())
        )
        self.cert_path.write_bytes(self._cert.public_bytes(serialization.Encoding.PEM))
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                ok, user = issuer._user(self.headers.get("Authorization"))
                issuer.requests.append(
                    {
                        "scope": query.get("scope", ""),
                        "service": query.get("service", ""),
                        "user": user or ("?" if not ok else ""),
                    }
                )
                if parts.path != "/token" or not ok:
                    self.send_response(404 if parts.path != "/token" else 401)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"token": issuer.token(user, query.get("scope", ""))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> TokenIssuer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
