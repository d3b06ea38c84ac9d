"""PtahSchema: a desired structure the operator observes, plans, applies and proves.

Status carries only aggregates of drift (SCH-54, PRIV-03): a digest, a dialect, a total, the
highest severity and bounded categories. The plan's SQL lives in PtahSchemaPlanChunk objects,
never here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ptah_operator.api.common import (
    CommonSpec,
    ExecutionBinding,
    JobReference,
    ObjectReference,
    PlanReference,
    PublishedPlan,
    SourceRecord,
    StatusCommon,
    UserInfo,
)
from ptah_operator.api.constants import (
    DEFAULT_LOCK_TIMEOUT,
    MAX_DRIFT_CATEGORIES,
    MAX_PROTECTED_TABLES,
    ApplyOutcome,
    ApplyPolicy,
    Authorization,
    SchemaPhase,
    Severity,
    VerifiedOutcome,
)
from ptah_operator.api.fields import (
    ApiModel,
    ConditionReason,
    Digest,
    Duration,
    LabelName,
    ShortText,
    Timestamp,
    bounded_list,
    defaulted_object,
)
from ptah_operator.api.journal import Journal
from ptah_operator.api.objectmeta import Resource

TablePattern = ShortText
"""A table as schema.table or table; * matches any run of characters."""


class SchemaPolicy(ApiModel):
    """What a published schema plan may do."""

    apply: ApplyPolicy = ApplyPolicy.ON_APPROVAL
    """OnApproval waits for a PtahSchemaApproval of the exact plan; Always applies a plan with
    nothing destructive and no privilege change; Never records plans and applies none."""
    allow_destructive: bool = False
    """Allow a plan that drops or narrows what holds data. Without it such a plan is Blocked."""
    protected_tables: list[TablePattern] = bounded_list(MAX_PROTECTED_TABLES)
    """Tables no plan may change. A plan that would is Blocked."""
    lock_timeout: Duration = DEFAULT_LOCK_TIMEOUT
    """How long one statement of an Apply, or of the Plan's dry run, may wait for a lock on
    what it changes (PostgreSQL lock_timeout, MySQL lock_wait_timeout). Past it the statement
    fails instead of queueing every reader of the table behind it. 0s: no limit."""
    statement_timeout: Duration | None = None
    """How long one statement of an Apply or a dry run may run (PostgreSQL statement_timeout,
    MariaDB max_statement_time; MySQL has no limit for DDL). Unset or 0s: no limit."""
    require_distinct_approver: bool = False
    """Four eyes: admission refuses an approval by anyone who wrote this resource's spec since
    its last Apply (admission records them, sealed, in the spec-written-by annotation). Off by
    default."""


class SchemaScope(ApiModel):
    """The part of the database the schema manages."""

    schemas: list[ShortText] = bounded_list(64)
    """Database schemas (namespaces) to manage. Empty: the engine's default schema."""
    include_tables: list[TablePattern] = bounded_list(256)
    """Only these tables. Empty: every table in the schemas."""
    exclude_tables: list[TablePattern] = bounded_list(256)
    """Tables left alone."""


class PtahSchemaSpec(CommonSpec):
    """The desired structure of a database, and the rules for converging it."""

    policy: SchemaPolicy = defaulted_object(SchemaPolicy)
    scope: SchemaScope | None = None


class DriftCategory(ApiModel):
    """How many differences of one category the observation found."""

    category: ShortText
    count: int = Field(ge=0)
    highest_severity: Severity | None = None


class DriftSummary(ApiModel):
    """The aggregates of the last drift report; its detail stays in the runner."""

    digest: Digest
    """SHA-256 of the drift report."""
    dialect: ShortText
    total: int = Field(ge=0)
    highest_severity: Severity | None = None
    categories: list[DriftCategory] = bounded_list(MAX_DRIFT_CATEGORIES)
    observed_at: Timestamp | None = None
    target_identity_digest: Digest | None = None


class SchemaPlanStatus(PublishedPlan):
    """The current plan, and the approval it records."""

    digest: Digest | None = None
    """SHA-256 of the plan's SQL bytes."""
    operation_id: LabelName | None = Field(default=None, alias="operationID")
    """The Plan operation that produced it (its uploaded text becomes the plan's chunks)."""
    planned_at: Timestamp | None = None
    """When that Plan ended; a plan not published within failureRetryInterval of it could not
    be published."""
    approval_required: bool | None = None
    drift_digest: Digest | None = None
    """status.drift.digest of the observation the plan was computed after (and last computed
    again after, when a refresh kept it): admission refuses an approval once status.drift
    records another observation of the database."""
    approval: ObjectReference | None = None
    """The approval this plan consumes, once accepted."""
    approver: UserInfo | None = None


class SchemaVerification(ApiModel):
    """The observation that settled an Apply."""

    outcome: VerifiedOutcome
    read_at: Timestamp
    operation_id: LabelName | None = Field(default=None, alias="operationID")


class ApplyRecord(ApiModel):
    """The last schema Apply: what it ran and how it ended. Absent verification: proof owed."""

    operation_id: LabelName = Field(alias="operationID")
    outcome: ApplyOutcome | None = None
    """Succeeded, or Unknown: every Apply error is an outcome nobody established."""
    reason: ConditionReason | None = None
    plan: PlanReference
    plan_digest: Digest | None = None
    approval: ObjectReference | None = None
    approver: UserInfo | None = None
    job: JobReference | None = None
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    target_identity_digest: Digest | None = None
    """The database the plan was made for, which the proof must read."""
    verification: SchemaVerification | None = None
    authorization: Authorization | None = None
    """Approval (a person's PtahSchemaApproval) or Policy (apply: Always)."""
    source: SourceRecord | None = None
    """The resolution the Apply ran from; the proof reads the same files."""
    execution_binding: ExecutionBinding | None = None
    """What ran the Apply; another one taking over supersedes its proof."""
    generation: int | None = Field(default=None, ge=0)
    """metadata.generation the Apply was claimed for."""
    spec_digest: Digest | None = None
    """SHA-256 of the spec the Apply was claimed under, spec.suspend left out: another spec
    taking over supersedes its proof, a suspension does not."""


class AppliedPlan(ApiModel):
    """What the last confirmed Apply ran (kubectl ptah plan --applied prints it)."""

    plan: PlanReference
    digest: Digest
    """SHA-256 of the plan's SQL bytes."""
    operation_id: LabelName | None = Field(default=None, alias="operationID")
    approval: ObjectReference | None = None
    approver: UserInfo | None = None
    applied_at: Timestamp | None = None
    verified_at: Timestamp | None = None


class PtahSchemaStatus(StatusCommon):
    """Where a schema is, what it found and what it last applied."""

    phase: SchemaPhase | None = None
    """Where the schema is. Absent until its first read starts."""
    plan: SchemaPlanStatus | None = None
    drift: DriftSummary | None = None
    last_apply: ApplyRecord | None = None
    applied: AppliedPlan | None = None
    retired_plan: PlanReference | None = None
    """The plan a changed input retired before it ran while a person could approve it or had
    approved it; the next PlanPublished entry names it in replaced."""
    journal: Journal | None = None


class PtahSchema(Resource):
    """A desired database structure the operator converges the database towards."""

    kind: Literal["PtahSchema"] = "PtahSchema"
    spec: PtahSchemaSpec
    status: PtahSchemaStatus | None = None
