"""Digests and fingerprints: deterministic SHA-256 over canonical JSON, written sha256:<hex>.

A plan's fingerprint is what an approval names, so it must come out the same on every machine
and in every release that reads the same spec: the spec is dumped by its wire names (aliases),
with absent fields left out, keys sorted and no insignificant whitespace, and everything except
the fingerprint itself goes in. Any bound field that changes changes the fingerprint.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ptah_operator.api.common import ExecutionBinding, PlanSourceBinding, SourceRecord
from ptah_operator.api.constants import SourceKind
from ptah_operator.api.fields import ApiModel
from ptah_operator.api.plans import PtahMigrationPlanSpec, PtahSchemaPlanSpec


def sha256_digest(data: bytes) -> str:
    """sha256:<hex> of some bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def text_digest(text: str) -> str:
    """sha256:<hex> of a text's UTF-8 bytes (a plan's SQL, a chunk's data, a policy)."""
    return sha256_digest(text.encode("utf-8"))


def canonical_json(value: Any) -> bytes:
    """The one byte form of a JSON value that its digest is taken over."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def model_digest(model: ApiModel, *, exclude: set[str] | None = None) -> str:
    """sha256:<hex> over a model's canonical JSON, its wire names, absent fields left out."""
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=exclude)
    return sha256_digest(canonical_json(dumped))


def migration_plan_fingerprint(spec: PtahMigrationPlanSpec) -> str:
    """The fingerprint of a migration plan: SHA-256 over every spec field but fingerprint."""
    return model_digest(spec, exclude={"fingerprint"})


def schema_plan_fingerprint(spec: PtahSchemaPlanSpec) -> str:
    """The fingerprint of a schema plan: SHA-256 over every spec field but fingerprint."""
    return model_digest(spec, exclude={"fingerprint"})


def plan_fingerprint_matches(spec: PtahMigrationPlanSpec | PtahSchemaPlanSpec) -> bool:
    """Whether a plan's recorded fingerprint is the one its spec gives."""
    return model_digest(spec, exclude={"fingerprint"}) == spec.fingerprint


def execution_binding_digest(binding: ExecutionBinding) -> str:
    """The digest of an execution binding: SHA-256 over every field but digest."""
    return model_digest(binding, exclude={"digest"})


def repository_path_digest(repository: str, path: str | None) -> str:
    """What a contract-2 plan binds for a Git source: the repository URL and the path."""
    return sha256_digest(canonical_json({"path": path or "", "repository": repository}))


def plan_source_binding(record: SourceRecord) -> PlanSourceBinding:
    """What a plan made now from this resolution would bind (plan contract 1 or 2).

    Contract 1 (OCI): the verified digest and the verification policy. Contract 2 (ConfigMap,
    Git): the content digest, the source ConfigMap's UID or the repository and path, and the
    source policy.
    """
    if record.kind == SourceKind.ARTIFACT:
        return PlanSourceBinding(
            kind=record.kind,
            oci_digest=record.oci_digest,
            verification_policy_digest=record.verification_policy_digest,
        )
    if record.kind == SourceKind.CONFIG_MAP:
        return PlanSourceBinding(
            kind=record.kind,
            content_digest=record.content_digest,
            config_map_uid=record.config_map_uid,
            source_policy_digest=record.source_policy_digest,
        )
    return PlanSourceBinding(
        kind=record.kind,
        content_digest=record.content_digest,
        repository_path_digest=(
            repository_path_digest(record.repository, record.path)
            if record.repository is not None
            else None
        ),
        source_policy_digest=record.source_policy_digest,
    )
