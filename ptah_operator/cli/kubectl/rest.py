"""A small synchronous HTTPS client of the API server, for the verbs that only read.

Standard library only (http.client, ssl, json): the read verbs answer before a Kubernetes
client library would have finished importing. One keep-alive connection carries the GETs; a
watch takes a connection of its own. Credentials come from `kubeconfig.load`.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import ssl
import tempfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from ptah_operator.cli.kubectl.kubeconfig import Credentials, run_exec

REQUEST_SECONDS = 30.0
# Answers that will not change by asking again.
FINAL_STATUSES = frozenset({401, 403, 404})


class ApiError(Exception):
    """A non-success answer: its HTTP status and the API server's own message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def status_message(status: int, reason: str, body: bytes) -> str:
    """The API server's message for a failed request, else the HTTP status line."""
    try:
        decoded = json.loads(body)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("message"):
        return str(decoded["message"])
    return f"HTTP {status} {reason or ''}".strip()


def _load_pair(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """ssl reads a certificate and key only from files: write them, 0600, load, remove."""
    with tempfile.TemporaryDirectory(prefix="kubectl-ptah-") as directory:
        cert_path = os.path.join(directory, "client.crt")
        key_path = os.path.join(directory, "client.key")
        for path, data in ((cert_path, cert), (key_path, key)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        context.load_cert_chain(cert_path, key_path)


class Client:
    """GETs and watches on one API server, authenticated as the kubeconfig says."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        url = urlsplit(credentials.server)
        self._https = url.scheme != "http"
        self._host = url.hostname or "localhost"
        self._port = url.port or (443 if self._https else 80)
        self._prefix = url.path.rstrip("/")
        self._token = credentials.token
        self._exec_ran = False
        self._context: ssl.SSLContext | None = None
        self._cert = (credentials.cert_data, credentials.key_data)
        self._connection: http.client.HTTPConnection | None = None
        if credentials.exec_plugin is not None and not self._token:
            self._run_exec()

    def _run_exec(self) -> None:
        assert self.credentials.exec_plugin is not None
        result = run_exec(self.credentials.exec_plugin, self.credentials.exec_base)
        self._exec_ran = True
        self._token = result.token
        if result.cert_data and result.key_data:
            self._cert = (result.cert_data, result.key_data)
        self._context = None

    def _ssl(self) -> ssl.SSLContext:
        if self._context is not None:
            return self._context
        c = self.credentials
        context = ssl.create_default_context(
            cafile=c.ca_file, cadata=c.ca_data.decode() if c.ca_data else None
        )
        if c.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        cert, key = self._cert
        if cert and key:
            _load_pair(context, cert, key)
        elif c.cert_file and c.key_file:
            context.load_cert_chain(c.cert_file, c.key_file)
        self._context = context
        return context

    def _open(self, timeout: float) -> http.client.HTTPConnection:
        if not self._https:
            return http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        return _Https(
            self._host, self._port, timeout, self._ssl(), self.credentials.tls_server_name
        )

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "kubectl-ptah"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        elif self.credentials.basic is not None:
            pair = ":".join(self.credentials.basic).encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        return headers

    def _send(self, connection: http.client.HTTPConnection, path: str) -> http.client.HTTPResponse:
        connection.request("GET", self._prefix + path, headers=self._headers())
        return connection.getresponse()

    def get(self, path: str) -> Any:
        """The decoded body of GET `path`; raises ApiError for any non-2xx answer."""
        for attempt in range(2):
            connection = self._connection or self._open(REQUEST_SECONDS)
            self._connection = connection
            try:
                response = self._send(connection, path)
                body = response.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                # A kept-alive connection the server closed meanwhile: dial once more.
                connection.close()
                self._connection = None
                if attempt:
                    raise
                continue
            if response.status == 401 and self._refresh_exec():
                continue
            if not 200 <= response.status < 300:
                raise ApiError(
                    response.status, status_message(response.status, response.reason, body)
                )
            return json.loads(body)
        raise AssertionError("unreachable")

    def _refresh_exec(self) -> bool:
        """An exec plugin's credential refused: run the plugin again, once."""
        if self.credentials.exec_plugin is None or self._exec_ran is False:
            return False
        self._exec_ran = False
        self.close()
        self._run_exec()
        return True

    def stream(self, path: str, timeout: float) -> tuple[http.client.HTTPConnection, Iterator[Any]]:
        """A watch: its own connection (for the caller to close) and its events, decoded."""
        connection = self._open(timeout)
        try:
            response = self._send(connection, path)
            if response.status != 200:
                body = response.read()
                raise ApiError(
                    response.status, status_message(response.status, response.reason, body)
                )
        except BaseException:
            connection.close()
            raise
        return connection, _events(response)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def _events(response: http.client.HTTPResponse) -> Iterator[Any]:
    while True:
        line = response.readline()
        if not line:
            return
        if line.strip():
            yield json.loads(line)


class _Https(http.client.HTTPSConnection):
    """An HTTPS connection that checks the certificate for `server_name` when one is given
    (the cluster's tls-server-name), else for the host it dials."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        context: ssl.SSLContext,
        server_name: str | None,
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._tls_context = context
        self._server_name = server_name

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._tls_context.wrap_socket(
            sock, server_hostname=self._server_name or self.host
        )
