"""The operation Secret and the result key: what a Job mounts, and what the manager keeps."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from ptah_operator.results.credentials import (
    ResultKeyError,
    key_from_secret,
    new_result_key,
    operation_secret,
    operation_secret_factory,
    operation_token,
    read_result_key_file,
    result_key_secret,
)

OWNER = {
    "apiVersion": "operator.ptah.run/v1alpha1",
    "kind": "PtahMigration",
    "name": "orders",
    "uid": "u-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.mark.req("JOB-01")
def test_the_operation_secret_holds_the_token_and_the_ca_and_goes_with_the_resource() -> None:
    token = operation_token(b"k" * 32, "application", "op-3f9a2c7d1e")
    secret = operation_secret(
        "application", "op-3f9a2c7d1e", token, CA, OWNER, operation_type="Apply"
    )
    assert secret["metadata"]["name"] == "ptah-op-3f9a2c7d1e"
    assert secret["metadata"]["namespace"] == "application"
    assert secret["metadata"]["ownerReferences"] == [OWNER]
    assert secret["metadata"]["labels"] == {
        "app.kubernetes.io/managed-by": "ptah-operator",
        "operator.ptah.run/owner-kind": "PtahMigration",
        "operator.ptah.run/owner-name": "orders",
        "operator.ptah.run/owner-uid": "u-1",
        "operator.ptah.run/operation-id": "op-3f9a2c7d1e",
        "operator.ptah.run/operation": "Apply",
    }
    assert secret["immutable"] is True
    data = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    # Exactly the keys the Job's run container reads at /ptah/result (and no database URL).
    assert data == {"token": token.encode(), "ca.crt": CA}


def test_the_ca_may_be_given_as_text() -> None:
    secret = operation_secret("ns", "op-3f9a2c7d1e", "t", CA.decode(), OWNER)
    assert base64.b64decode(secret["data"]["ca.crt"]) == CA
    assert "operator.ptah.run/operation" not in secret["metadata"]["labels"]


def test_the_result_key_round_trips_through_its_secret() -> None:
    key = new_result_key()
    assert len(key) == 32
    secret = result_key_secret("ptah-system", key)
    assert secret["metadata"]["name"] == "ptah-operator-result-key"
    assert key_from_secret(secret) == key
    with pytest.raises(ResultKeyError):
        key_from_secret({"data": {"key": base64.b64encode(b"short").decode()}})
    with pytest.raises(ResultKeyError):
        key_from_secret({"data": {}})


def test_a_result_key_file_is_read_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"0123456789abcdef0123456789abcdef\n")
    assert read_result_key_file(path) == b"0123456789abcdef0123456789abcdef"
    path.write_bytes(b"short\n")
    with pytest.raises(ResultKeyError, match="at least 32 bytes"):
        read_result_key_file(path)
    with pytest.raises(ResultKeyError, match="cannot be read"):
        read_result_key_file(tmp_path / "missing")


def test_the_factory_the_controller_is_given_makes_the_operation_secret() -> None:
    key = b"k" * 32
    make = operation_secret_factory(key, CA)
    secret = make("application", "op-3f9a2c7d1e", OWNER)
    assert secret == operation_secret(
        "application",
        "op-3f9a2c7d1e",
        operation_token(key, "application", "op-3f9a2c7d1e"),
        CA,
        OWNER,
    )
    with pytest.raises(ResultKeyError):
        operation_secret_factory(b"short", CA)
