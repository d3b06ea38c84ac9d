"""The runner's result client (runner/report.py, on http.client since issue #16) against a
real TLS server in this process: what it retries, what it takes as final, the cap on what it
reads, and that it trusts only the CA it is given for the name it asked for."""

from __future__ import annotations

import datetime
import http.server
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ptah_operator.runner.report import ReportTarget, exchange


def _certificate(directory: Path, name: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(name))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / f"{name}.crt", directory / f"{name}.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


class _Server:
    """Answers each request with the next of `answers` (status, body); records what it got."""

    def __init__(self, cert: Path, key: Path) -> None:
        self.answers: list[tuple[int, bytes]] = []
        self.seen: list[tuple[str, str, str | None, bytes]] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                server.seen.append((self.command, self.path, self.headers["Authorization"], body))
                status, answer = server.answers.pop(0) if server.answers else (500, b"")
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            do_POST = do_PUT = do_GET = _answer  # noqa: N815  (http.server names them so)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.httpd.server_address[1]}/v1/results"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[_Server, ReportTarget]]:
    cert, key = _certificate(tmp_path, "127.0.0.1")
    server = _Server(cert, key)
    token = tmp_path / "token"
    token.write_text("t0ken\n")
    target = ReportTarget.from_env(server.url, str(token), str(cert))
    yield server, target
    server.httpd.shutdown()


async def test_a_5xx_and_a_429_are_retried_and_the_same_bytes_sent_again(
    served: tuple[_Server, ReportTarget],
) -> None:
    server, target = served
    server.answers = [(503, b""), (429, b""), (201, b"")]
    url = target.endpoint("ns", "op-1")
    sent = await exchange(target, "POST", url, body=b'{"a":1}', content_type="application/json")
    assert (sent.done, sent.status, sent.attempts) == (True, 201, 3)
    assert [s[3] for s in server.seen] == [b'{"a":1}'] * 3
    assert {(s[0], s[1], s[2]) for s in server.seen} == {
        ("POST", "/v1/results/ns/op-1", "Bearer t0ken")
    }


async def test_a_refusal_is_final_and_its_short_error_kept(
    served: tuple[_Server, ReportTarget],
) -> None:
    server, target = served
    server.answers = [(409, json.dumps({"error": "differs from the stored record"}).encode())]
    sent = await exchange(target, "POST", target.endpoint("ns", "op"), body=b"{}")
    assert (sent.done, sent.status, sent.attempts) == (False, 409, 1)
    assert sent.error == "differs from the stored record"


async def test_an_answer_is_read_up_to_its_cap_and_refused_beyond(
    served: tuple[_Server, ReportTarget],
) -> None:
    server, target = served
    server.answers = [(200, b"x" * 100), (200, b"x" * 101)]
    url = f"{target.endpoint('ns', 'op')}/plan"
    got = await exchange(target, "GET", url, max_answer_bytes=100)
    assert (got.done, got.body) == (True, b"x" * 100)
    refused = await exchange(target, "GET", url, max_answer_bytes=100)
    assert (refused.done, refused.error) == (False, "the answer is too large")


async def test_a_server_the_ca_did_not_sign_is_never_sent_the_token(
    served: tuple[_Server, ReportTarget], tmp_path: Path
) -> None:
    server, target = served
    other = tmp_path / "other"
    other.mkdir()
    other_ca, _ = _certificate(other, "127.0.0.1")
    stranger = ReportTarget(url=target.url, token=target.token, ca_file=other_ca)
    server.answers = [(201, b"")]
    sent = await exchange(stranger, "POST", stranger.endpoint("ns", "op"), budget_seconds=1.5)
    assert not sent.done
    assert sent.status is None
    assert sent.attempts >= 2  # not reached: retried until the budget was spent
    assert server.seen == []
