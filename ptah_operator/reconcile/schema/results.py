"""What a schema operation's runner reports (contract `ptah.run/result/v1`), read and checked.

The same envelope as a migration's (reconcile/reports.py): contract, operationID, type,
resource, startedAt, finishedAt, targetIdentityDigest, and `error` for an operation that could
not do its work. Resolve and Verify carry the same `resolve` and `verify` blocks. A schema's
own blocks are:

- `drift` (Observe): the aggregates of the raw drift report, whose detail stays inside the
  runner (SCH-54, PRIV-03): its digest, the dialect, the total, the highest severity and at
  most 32 categories with their counts.
- `plan` (Plan): whether the coherent scoped plan changes anything (SCH-55, SCH-56), the
  fingerprints it was planned between and, when it does, the digest, size and statement count
  of the plan file, its severity, its first findings, the protected tables it touches, and the
  pieces (index, digest, size) the plan file was uploaded in. The plan file itself, which holds
  the SQL, is never in the report: it arrives beside it (SchemaWorld.plan_texts).
- `apply` (Apply): Applied, Refused (nothing ran) or Unknown, the digest of the bytes it hashed
  before it ran them (SCH-57), how many statements it executed, and where it stopped (position,
  SQLSTATE, errno; never text).

A report of another contract, operation, type or resource, or one whose fields do not fit, is
unreadable and counts as no result (reports.Unreadable). Unknown fields are ignored, so a newer
runner's additions do not make a report unreadable.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ptah_operator.api.constants import (
    MAX_DRIFT_CATEGORIES,
    MAX_PLAN_CHUNKS,
    MAX_PLAN_FINDINGS,
    OperationType,
    Severity,
)
from ptah_operator.api.fields import Digest
from ptah_operator.reconcile.reports import (
    ErrorReport,
    ResolveReport,
    ResourceReport,
    Unreadable,
    VerifyReport,
)
from ptah_operator.reconcile.world import OperationResult

MAX_REPORTED_TABLES = 100


class _Report(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore"
    )


class DriftCategoryReport(_Report):
    category: str = Field(min_length=1, max_length=64)
    count: int = Field(ge=0)
    highest_severity: Severity | None = None


class DriftReport(_Report):
    """Observe: the drift report reduced to what status may hold."""

    digest: Digest
    """SHA-256 of the raw report, which stays inside the runner."""
    dialect: str = Field(min_length=1, max_length=32)
    total: int = Field(ge=0)
    highest_severity: Severity | None = None
    categories: list[DriftCategoryReport] = Field(
        default_factory=list, max_length=MAX_DRIFT_CATEGORIES
    )


class PlanSeverityReport(_Report):
    highest: Severity | None = None
    destructive: bool = False
    privilege_change: bool = False


class FindingReport(_Report):
    code: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z][A-Za-z0-9_.-]*$")
    severity: Severity
    category: str | None = Field(default=None, max_length=256)
    object: str | None = Field(default=None, max_length=256)
    related: str | None = Field(default=None, max_length=256)
    statement_index: int | None = Field(default=None, ge=0)


class PieceReport(_Report):
    """One piece of the plan file as it was uploaded: becomes one chunk."""

    index: int = Field(ge=0, le=MAX_PLAN_CHUNKS - 1)
    digest: Digest
    """SHA-256 of the piece's UTF-8 bytes."""
    size: int = Field(ge=0)
    """The piece's length in UTF-8 bytes."""


class PlanReport(_Report):
    """Plan: the verdict of two byte-identical scoped plans, dry-run on the Apply path."""

    changes: bool
    """False: the plan is empty, the authoritative statement that the database converged."""
    dialect: str | None = Field(default=None, max_length=32)
    observed_fingerprint: Digest
    desired_fingerprint: Digest
    digest: Digest | None = None
    """SHA-256 of the plan file's bytes (the pieces joined), when it changes something."""
    size: int = Field(default=0, ge=0)
    statement_count: int = Field(default=0, ge=0)
    severity: PlanSeverityReport = Field(default_factory=PlanSeverityReport)
    findings: list[FindingReport] = Field(default_factory=list, max_length=MAX_PLAN_FINDINGS)
    findings_total: int = Field(default=0, ge=0)
    protected_tables: list[str] = Field(default_factory=list, max_length=MAX_REPORTED_TABLES)
    """The tables the plan would change that spec.policy.protectedTables names."""
    pieces: list[PieceReport] = Field(default_factory=list, max_length=MAX_PLAN_CHUNKS)


class ApplyOutcomeReport(StrEnum):
    APPLIED = "Applied"
    REFUSED = "Refused"
    UNKNOWN = "Unknown"


class ApplyFailureReport(_Report):
    statement_index: int | None = Field(default=None, ge=0)
    sqlstate: str | None = Field(default=None, max_length=5)
    mysql_errno: int | None = Field(default=None, ge=0)


class ApplyReport(_Report):
    """Apply: what the engine answered. Only Applied with the plan's digest is Succeeded."""

    outcome: ApplyOutcomeReport
    reason: str | None = Field(default=None, max_length=128)
    """Why it was refused or is unknown (StalePlan, PlanDigestMismatch, LockNotAcquired, ...)."""
    plan_digest: Digest | None = None
    """The digest of the bytes the runner hashed just before it ran them."""
    statements_executed: int = Field(default=0, ge=0)
    failure: ApplyFailureReport | None = None


class SchemaOperationReport(_Report):
    contract: Literal["ptah.run/result/v1"]
    operation_id: str = Field(alias="operationID")
    type: str
    resource: ResourceReport
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    target_identity_digest: Digest | None = None
    resolve: ResolveReport | None = None
    verify: VerifyReport | None = None
    drift: DriftReport | None = None
    plan: PlanReport | None = None
    apply: ApplyReport | None = None
    error: ErrorReport | None = None


def read_schema_report(
    result: OperationResult, operation_id: str, operation_type: OperationType, resource_uid: str
) -> SchemaOperationReport | Unreadable:
    """The report of this operation of this schema, or why it cannot be read."""
    try:
        report = SchemaOperationReport.model_validate(dict(result.payload))
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:3]
        return Unreadable(f"the result does not fit its contract ({', '.join(fields)})")
    if report.operation_id != operation_id:
        return Unreadable("the result names another operation")
    if report.type != operation_type.value:
        return Unreadable(f"the result is of a {report.type} operation")
    if report.resource.uid != resource_uid:
        return Unreadable("the result names another resource")
    plan = report.plan
    if plan is not None and plan.changes:
        indexes = [p.index for p in plan.pieces]
        if plan.digest is None or plan.statement_count < 1:
            return Unreadable("the result's plan has changes but no digest or statements")
        if not indexes or indexes != list(range(len(indexes))):
            return Unreadable("the result's plan lists its pieces out of order")
        if plan.size != sum(p.size for p in plan.pieces):
            return Unreadable("the result's plan size is not the size of its pieces")
    return report
