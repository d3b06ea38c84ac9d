"""Published plans: PtahMigrationPlan, PtahSchemaPlan and the chunks that hold a schema plan's SQL.

A plan is immutable (its spec carries a CEL rule self == oldSelf) and binds what it was computed
from: the source, the reading of the database, the target and the execution binding. Its
spec.fingerprint is the SHA-256 over the rest of its spec (see fingerprints.py), which an
approval names. A migration plan holds versions, descriptions and checksums and never SQL
(PRIV-02); a schema plan's SQL is split into PtahSchemaPlanChunk objects the plan lists.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from ptah_operator.api.common import (
    ExecutionBinding,
    ObjectReference,
    PlanSourceBinding,
)
from ptah_operator.api.constants import (
    MAX_CHUNK_CHARS,
    MAX_PLAN_CHUNKS,
    MAX_PLAN_FINDINGS,
    MAX_PLAN_VERSIONS,
    PLAN_CONTRACT_CONFIGMAP_GIT,
    PLAN_CONTRACT_OCI,
    Engine,
    Severity,
    SourceKind,
    TransactionMode,
)
from ptah_operator.api.fields import (
    ApiModel,
    Checksum,
    Description,
    Digest,
    Name,
    ShortText,
    Version,
    bounded_list,
)
from ptah_operator.api.migration import RevisionTable
from ptah_operator.api.objectmeta import Resource

IMMUTABLE_SPEC: dict[str, Any] = {
    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "spec is immutable"}]
}

PlanContractVersion = Literal[1, 2]


def _check_contract(contract: int, source: PlanSourceBinding) -> None:
    expected = (
        PLAN_CONTRACT_OCI if source.kind == SourceKind.ARTIFACT else PLAN_CONTRACT_CONFIGMAP_GIT
    )
    if contract != expected:
        raise ValueError(
            f"a plan of a {source.kind} source has plan contract version {expected}, not {contract}"
        )


# --- migration plans ---------------------------------------------------------------------------


class PlannedVersion(ApiModel):
    """One migration the plan runs, in order."""

    version: Version
    description: Description | None = None
    checksum: Checksum


class PtahMigrationPlanSpec(ApiModel):
    """The pending sequence a history reading left, bound to what it was read from."""

    migration_ref: ObjectReference
    plan_contract_version: PlanContractVersion
    """1 for an OCI source, 2 for a ConfigMap or Git source."""
    source: PlanSourceBinding
    engine: Engine
    target_identity_digest: Digest
    """The database the history was read from."""
    history_fingerprint: Digest
    """Fingerprint of the reading the plan continues."""
    revision_table: RevisionTable = Field(default_factory=RevisionTable)
    transaction_mode: TransactionMode | None = None
    execution_binding: ExecutionBinding
    from_version: Version | None = None
    """The database's current version when read; absent for an empty history."""
    to_version: Version
    """The last version the plan runs."""
    versions: list[PlannedVersion] = Field(min_length=1, max_length=MAX_PLAN_VERSIONS)
    fingerprint: Digest
    """SHA-256 over the rest of this spec; an approval names it."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        _check_contract(self.plan_contract_version, self.source)
        if self.versions[-1].version != self.to_version:
            raise ValueError("toVersion must be the last of versions")
        return self


class PtahMigrationPlan(Resource):
    """A published, immutable migration plan."""

    kind: Literal["PtahMigrationPlan"] = "PtahMigrationPlan"
    spec: PtahMigrationPlanSpec = Field(json_schema_extra=IMMUTABLE_SPEC)


# --- schema plans ------------------------------------------------------------------------------


class SeveritySummary(ApiModel):
    """What the plan's statements amount to."""

    highest: Severity | None = None
    destructive: bool = False
    """Some statement drops or narrows what holds data."""
    privilege_change: bool = False
    """Some statement grants or revokes a privilege."""


class Finding(ApiModel):
    """Something the safety analysis noted about one statement. No SQL text."""

    code: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z][A-Za-z0-9_.-]*$")
    severity: Severity
    category: ShortText | None = None
    object: ShortText | None = None
    """The object the statement touches, such as schema.table."""
    related: ShortText | None = None
    """LooksLikeRename: what the same plan adds in the shape of the object it drops."""
    statement_index: int | None = Field(default=None, ge=0)


class ChunkReference(ApiModel):
    """One PtahSchemaPlanChunk of the plan, in order."""

    name: Name
    index: int = Field(ge=0, le=MAX_PLAN_CHUNKS - 1)
    digest: Digest
    """SHA-256 of the chunk's data (UTF-8)."""


class PtahSchemaPlanSpec(ApiModel):
    """The SQL a scoped plan produced, bound to what it was computed from."""

    schema_ref: ObjectReference
    plan_contract_version: PlanContractVersion
    source: PlanSourceBinding
    engine: Engine
    dialect: ShortText | None = None
    target_identity_digest: Digest
    observed_fingerprint: Digest
    """Fingerprint of the observed schema the plan starts from."""
    desired_fingerprint: Digest
    """Fingerprint of the desired schema the plan leads to."""
    execution_binding: ExecutionBinding
    digest: Digest
    """SHA-256 of the plan's SQL bytes (the chunks' data joined, UTF-8)."""
    size: int = Field(ge=0)
    """Length of the plan's SQL in bytes."""
    statement_count: int = Field(ge=1)
    severity: SeveritySummary = Field(default_factory=SeveritySummary)
    findings: list[Finding] = bounded_list(MAX_PLAN_FINDINGS)
    findings_total: int = Field(default=0, ge=0)
    """How many findings there were; findings lists the first of them."""
    approval_required: bool
    """The plan asks for a person's approval under the policy it was published under."""
    chunks: list[ChunkReference] = Field(min_length=1, max_length=MAX_PLAN_CHUNKS)
    fingerprint: Digest
    """SHA-256 over the rest of this spec; an approval names it."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        _check_contract(self.plan_contract_version, self.source)
        if [c.index for c in self.chunks] != list(range(len(self.chunks))):
            raise ValueError("chunks must be listed in order, indexes 0, 1, 2 ...")
        return self


class PtahSchemaPlan(Resource):
    """A published, immutable schema plan."""

    kind: Literal["PtahSchemaPlan"] = "PtahSchemaPlan"
    spec: PtahSchemaPlanSpec = Field(json_schema_extra=IMMUTABLE_SPEC)


class PtahSchemaPlanChunkSpec(ApiModel):
    """One piece of a schema plan's SQL."""

    plan_ref: ObjectReference
    index: int = Field(ge=0, le=MAX_PLAN_CHUNKS - 1)
    data: str = Field(max_length=MAX_CHUNK_CHARS)
    """The SQL text of this piece."""
    digest: Digest
    """SHA-256 of data (UTF-8)."""


class PtahSchemaPlanChunk(Resource):
    """A piece of a schema plan's SQL; the plan lists its chunks in order."""

    kind: Literal["PtahSchemaPlanChunk"] = "PtahSchemaPlanChunk"
    spec: PtahSchemaPlanChunkSpec = Field(json_schema_extra=IMMUTABLE_SPEC)


def split_plan_text(text: str, max_chars: int = MAX_CHUNK_CHARS) -> list[str]:
    """Cut a plan's SQL into chunk data, in order; joined they give the text back exactly."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    pieces = [text[i : i + max_chars] for i in range(0, len(text), max_chars)] or [""]
    if len(pieces) > MAX_PLAN_CHUNKS:
        raise ValueError(
            f"a plan of {len(text)} characters needs more than {MAX_PLAN_CHUNKS} chunks"
        )
    return pieces
