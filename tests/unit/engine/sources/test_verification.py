"""The verification policy: `version: 1`, a non-empty `artifact_types` list, nothing else."""

from __future__ import annotations

import hashlib

import pytest

from ptah_operator.engine.sources.verification import (
    MIGRATIONS_ARTIFACT_TYPE,
    SCHEMA_ARTIFACT_TYPE,
    PolicyError,
    decide,
    parse_policy,
    policy_digest,
)

MIGRATION_POLICY = b"version: 1\nartifact_types:\n  - application/vnd.stokaro.ptah.migrations.v1\n"


@pytest.mark.req("SRC-OCI-04")
def test_a_migration_policy_refuses_a_schema_artifact() -> None:
    assert decide(MIGRATION_POLICY, MIGRATIONS_ARTIFACT_TYPE).accepted
    verdict = decide(MIGRATION_POLICY, SCHEMA_ARTIFACT_TYPE)
    assert not verdict.accepted
    assert verdict.refusal == (
        f"artifact type {SCHEMA_ARTIFACT_TYPE} is not one the policy accepts"
    )


def test_a_policy_may_list_several_types() -> None:
    policy = parse_policy(
        b"version: 1\nartifact_types: [application/vnd.a.v1, application/vnd.b.v1]\n"
    )
    assert policy.artifact_types == ("application/vnd.a.v1", "application/vnd.b.v1")
    assert policy.accepts("application/vnd.b.v1")
    assert not policy.accepts("application/vnd.c.v1")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b"", "mapping"),
        (b"- a\n", "mapping"),
        (b"version: 2\nartifact_types: [a/b]\n", "version must be 1"),
        (b'version: "1"\nartifact_types: [a/b]\n', "version must be 1"),
        (b"version: true\nartifact_types: [a/b]\n", "version must be 1"),
        (b"version: 1.0\nartifact_types: [a/b]\n", "version must be 1"),
        (b"artifact_types: [a/b]\n", "version must be 1"),
        (b"version: 1\n", "non-empty list"),
        (b"version: 1\nartifact_types: []\n", "non-empty list"),
        (b"version: 1\nartifact_types: a/b\n", "non-empty list"),
        (b"version: 1\nartifact_types: [3]\n", "artifact_types[0]"),
        (b"version: 1\nartifact_types: ['']\n", "artifact_types[0]"),
        (b"version: 1\nartifact_types: [not-a-media-type]\n", "artifact_types[0]"),
        (b"version: 1\nartifact_types: [a/b]\nextra: 1\n", "unknown key 'extra'"),
        (b"version: 1\nartifact_types: [a/b\n", "not valid YAML"),
        (b"\xff\xfe", "not UTF-8"),
    ],
)
def test_anything_else_is_an_invalid_policy(text: bytes, why: str) -> None:
    with pytest.raises(PolicyError, match=r".*" + why.replace("[", r"\[").replace("]", r"\]")):
        parse_policy(text)
    verdict = decide(text, MIGRATIONS_ARTIFACT_TYPE)
    assert not verdict.accepted
    assert verdict.refusal is not None
    assert verdict.refusal.startswith("the verification policy is invalid: ")


def test_the_policy_digest_is_the_sha256_of_its_bytes() -> None:
    assert policy_digest(MIGRATION_POLICY) == (
        "sha256:" + hashlib.sha256(MIGRATION_POLICY).hexdigest()
    )
