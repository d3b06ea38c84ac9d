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

from ptah_operator.api.common import ExecutionBinding
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
