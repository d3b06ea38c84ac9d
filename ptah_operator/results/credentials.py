"""The result key, per-operation tokens, and the operation Secret that hands a token to a Job.

The result key is the manager's secret: the Secret `ptah-operator-result-key` in the
manager's namespace (made on first start, key `key`, 32 random bytes), or a file
(`--result-key-file`). An operation's token is `hex(HMAC-SHA256(key, "<namespace>/<operation
id>"))`: the endpoint recomputes it from the URL, so no token is stored anywhere but in the
operation's own Secret, and a token opens only the one record of its operation.

`operation_secret` builds `ptah-op-<hex>` (keys `token` and `ca.crt`), owned by the resource so
it goes with it. The controller creates it for an `OperationCredentials` entry of a Decision.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ptah_operator.api.constants import (
    LABEL_MANAGED_BY,
    MANAGED_BY,
)
from ptah_operator.api.names import operation_labels, operation_secret_name

RESULT_KEY_SECRET = "ptah-operator-result-key"  # noqa: S105 (a Secret's name)
RESULT_KEY_FIELD = "key"
RESULT_KEY_BYTES = 32
MIN_RESULT_KEY_BYTES = 32
TOKEN_FIELD = "token"  # noqa: S105 (a key's name)
CA_FIELD = "ca.crt"


class ResultKeyError(ValueError):
    """The result key cannot be used (too short, unreadable)."""


def operation_token(key: bytes, namespace: str, operation_id: str) -> str:
    """The bearer token of one operation: hex(HMAC-SHA256(key, "<namespace>/<operationID>"))."""
    return hmac.new(key, f"{namespace}/{operation_id}".encode(), hashlib.sha256).hexdigest()


def token_matches(key: bytes, namespace: str, operation_id: str, presented: str) -> bool:
    """Compare a presented token with the operation's, in constant time."""
    expected = operation_token(key, namespace, operation_id)
    return hmac.compare_digest(expected.encode(), presented.encode())


def new_result_key() -> bytes:
    return secrets.token_bytes(RESULT_KEY_BYTES)


def check_result_key(key: bytes) -> bytes:
    if len(key) < MIN_RESULT_KEY_BYTES:
        raise ResultKeyError(f"the result key must hold at least {MIN_RESULT_KEY_BYTES} bytes")
    return key


def read_result_key_file(path: Path) -> bytes:
    """A result key from a file (`--result-key-file`): its bytes, surrounding whitespace
    removed (so a key written with a trailing newline reads the same)."""
    try:
        data = path.read_bytes().strip()
    except OSError:
        raise ResultKeyError("the result key file cannot be read") from None
    return check_result_key(data)


def result_key_secret(namespace: str, key: bytes) -> dict[str, Any]:
    """The Secret that keeps the result key in the manager's namespace."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": RESULT_KEY_SECRET,
            "namespace": namespace,
            "labels": {LABEL_MANAGED_BY: MANAGED_BY},
        },
        "type": "Opaque",
        "immutable": True,
        "data": {RESULT_KEY_FIELD: base64.b64encode(key).decode()},
    }


def key_from_secret(secret: Mapping[str, Any]) -> bytes:
    data = secret.get("data") or {}
    encoded = data.get(RESULT_KEY_FIELD)
    if not isinstance(encoded, str):
        raise ResultKeyError(f"Secret {RESULT_KEY_SECRET} has no key {RESULT_KEY_FIELD}")
    try:
        key = base64.b64decode(encoded, validate=True)
    except ValueError:
        raise ResultKeyError(f"Secret {RESULT_KEY_SECRET} holds no usable key") from None
    return check_result_key(key)


def operation_secret(
    namespace: str,
    operation_id: str,
    token: str,
    ca_pem: bytes | str,
    owner_reference: Mapping[str, Any],
    *,
    operation_type: str | None = None,
) -> dict[str, Any]:
    """The Secret `ptah-op-<hex>` an operation's run container mounts at /ptah/result:
    `token` (its bearer token) and `ca.crt` (the only CA it trusts for the endpoint)."""
    ca = ca_pem.encode() if isinstance(ca_pem, str) else ca_pem
    labels = operation_labels(
        str(owner_reference["kind"]),
        str(owner_reference["name"]),
        str(owner_reference["uid"]),
        operation_id,
        operation_type,
    )
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": operation_secret_name(operation_id),
            "namespace": namespace,
            "labels": labels,
            "ownerReferences": [dict(owner_reference)],
        },
        "type": "Opaque",
        "immutable": True,
        "data": {
            TOKEN_FIELD: base64.b64encode(token.encode()).decode(),
            CA_FIELD: base64.b64encode(ca).decode(),
        },
    }


OperationSecretFactory = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]
"""(namespace, operation id, owner reference) -> the `ptah-op-<hex>` Secret manifest."""


def operation_secret_factory(key: bytes, ca_pem: bytes | str) -> OperationSecretFactory:
    """What the controller is given to materialise an `OperationCredentials` entry: the
    operation's Secret with its token (from the manager's result key) and the endpoint's CA."""
    check_result_key(key)

    def make(namespace: str, operation_id: str, owner: Mapping[str, Any]) -> dict[str, Any]:
        token = operation_token(key, namespace, operation_id)
        return operation_secret(namespace, operation_id, token, ca_pem, owner)

    return make
