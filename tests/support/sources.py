"""Helpers for tests of Git and OCI sources against the real servers of `oci_registry` and
`git_server` (tests/conftest.py)."""

from __future__ import annotations

import secrets

from localstack.registry import OciRegistry

from ptah_operator.engine.sources.files import Credentials
from ptah_operator.engine.sources.oci import OciClient, OciRef, parse_ref
from ptah_operator.engine.sources.verification import MIGRATIONS_ARTIFACT_TYPE

MIGRATIONS = {
    "0000000001_users.up.sql": b"CREATE TABLE users (id INT PRIMARY KEY);\n",
    "0000000002_orders.up.sql": b"CREATE TABLE orders (id INT PRIMARY KEY);\n",
}
MORE_MIGRATIONS = {
    **MIGRATIONS,
    "0000000003_items.up.sql": b"CREATE TABLE items (id INT PRIMARY KEY);\n",
}
MIGRATION_POLICY = b"version: 1\nartifact_types:\n  - application/vnd.stokaro.ptah.migrations.v1\n"


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"


def oci_client(registry: OciRegistry, credentials: Credentials | None = None) -> OciClient:
    return OciClient(insecure_registries=[registry.host], credentials=credentials)


def pushed(
    registry: OciRegistry,
    files: dict[str, bytes] | None = None,
    *,
    tag: str = "v1",
    artifact_type: str = MIGRATIONS_ARTIFACT_TYPE,
    repository: str | None = None,
) -> tuple[OciRef, str]:
    """Push `files` (the migrations by default) to a fresh repository; (ref, digest)."""
    ref = parse_ref(registry.ref(repository or unique("acme/migs"), tag))
    digest = oci_client(registry).push(ref, MIGRATIONS if files is None else files, artifact_type)
    return ref, digest
