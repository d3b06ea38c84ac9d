"""PtahMigration: a sequence of versioned SQL files matched against the revision table.

Status records readings of the revision table (history), the last run (lastRun) and a run nobody
could account for (unresolvedRun). None of it carries SQL, row data or a database's prose
(PRIV-01, PRIV-02, PRIV-05): versions, checksums, positions and error codes only.
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
    DEFAULT_REVISION_TABLE,
    MAX_LISTED_VERSIONS,
    MAX_MESSAGE_LENGTH,
    MAX_PLAN_VERSIONS,
    MAX_REVISIONS,
    ApplyPolicy,
    Authorization,
    HistoryVerdict,
    MigrationPhase,
    RevisionState,
    RunOutcome,
    TransactionMode,
    VerifiedOutcome,
)
from ptah_operator.api.fields import (
    SQLSTATE_PATTERN,
    ApiModel,
    Checksum,
    ConditionReason,
    Description,
    Digest,
    LabelName,
    Timestamp,
    Version,
    bounded_list,
    defaulted_object,
)
from ptah_operator.api.journal import Journal
from ptah_operator.api.objectmeta import Resource

IDENTIFIER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_$]*$"


class RevisionTable(ApiModel):
    """Where the database records which migrations ran."""

    schema_: str | None = Field(
        default=None, alias="schema", max_length=63, pattern=IDENTIFIER_PATTERN
    )
    """Database schema of the table. Absent: the connection's default."""
    name: str = Field(default=DEFAULT_REVISION_TABLE, max_length=63, pattern=IDENTIFIER_PATTERN)


class MigrationPolicy(ApiModel):
    """What a published migration plan may do, and how its files run."""

    apply: ApplyPolicy = ApplyPolicy.ON_APPROVAL
    """OnApproval waits for a PtahMigrationApproval naming the plan; Always runs it as soon as
    it is published; Never publishes it and runs nothing."""
    transaction_mode: TransactionMode | None = None
    """file: one transaction per file; none: each statement stands alone. Absent: the operator
    names no mode and Ptah picks one."""
    revision_table: RevisionTable = defaulted_object(RevisionTable)
    require_distinct_approver: bool = False
    """Four eyes: admission refuses an approval by anyone who wrote this resource's spec since
    its last Apply (admission records them, sealed, in the spec-written-by annotation). Off by
    default."""


class PtahMigrationSpec(CommonSpec):
    """A sequence of versioned SQL files, and the rules for running them."""

    policy: MigrationPolicy = defaulted_object(MigrationPolicy)


class Revision(ApiModel):
    """One row of the revision table."""

    version: Version
    description: Description | None = None
    state: RevisionState
    checksum: Checksum | None = None
    execution_millis: int | None = Field(default=None, ge=0)
    """Absent, not 0, when the revision table does not record durations."""
    applied_at: Timestamp | None = None


class DirtyRevision(ApiModel):
    """The revision row a failed or interrupted run left behind."""

    version: Version
    description: Description | None = None


class AheadVersions(ApiModel):
    """The database records a migration the artifact does not carry."""

    database_version: Version
    artifact_version: Version | None = None
    """The last version the artifact carries; absent when it carries none."""


class History(ApiModel):
    """One reading of the revision table."""

    verdict: HistoryVerdict | None = None
    current_version: Version | None = None
    checkpoint_version: Version | None = None
    """The checkpoint covering the versions below it, which count as applied."""
    applied_count: int = Field(default=0, ge=0)
    pending_count: int = Field(default=0, ge=0)
    pending_versions: list[Version] = bounded_list(MAX_LISTED_VERSIONS)
    """Ptah's own pending list, the first of them when there are more than fit."""
    dirty: DirtyRevision | None = None
    modified_versions: list[Version] = bounded_list(MAX_LISTED_VERSIONS)
    out_of_order_versions: list[Version] = bounded_list(MAX_LISTED_VERSIONS)
    ahead: AheadVersions | None = None
    fingerprint: Digest | None = None
    """SHA-256 of the reading; a plan binds it."""
    target_identity_digest: Digest | None = None
    """The database that was read."""
    operation_id: LabelName | None = Field(default=None, alias="operationID")
    read_at: Timestamp | None = None
    revisions: list[Revision] = bounded_list(MAX_REVISIONS)
    """The newest rows, newest first."""


class RunFailure(ApiModel):
    """Where a run stopped, when a statement reached the database and failed there. No text."""

    version: Version
    statement_index: int | None = Field(default=None, ge=0)
    sqlstate: str | None = Field(default=None, pattern=SQLSTATE_PATTERN, max_length=5)
    mysql_errno: int | None = Field(default=None, ge=0)


class RunStoppedAt(ApiModel):
    """The file a run that did not finish stopped in, whatever stopped it (a statement, a lost
    session, an interruption, a failed commit), and how many of its statements are known
    committed. No text."""

    version: Version
    statements_applied: int | None = Field(default=None, ge=0)
    """Statements of the file known committed; absent when nothing records it."""
    statements_total: int | None = Field(default=None, ge=0)


class RunVerification(ApiModel):
    """The first reading of the run's database after the run."""

    outcome: VerifiedOutcome
    read_at: Timestamp
    operation_id: LabelName | None = Field(default=None, alias="operationID")


class LastRun(ApiModel):
    """The last migration run, with the identity its Apply claim carried."""

    operation_id: LabelName = Field(alias="operationID")
    outcome: RunOutcome
    plan: PlanReference
    approval: ObjectReference | None = None
    approver: UserInfo | None = None
    job: JobReference | None = None
    authorization: Authorization | None = None
    applied_versions: list[Version] = bounded_list(MAX_PLAN_VERSIONS)
    started_at: Timestamp | None = None
    finished_at: Timestamp | None = None
    failure: RunFailure | None = None
    reason: ConditionReason | None = None
    """Why a run that stopped before it selected a migration stopped, when its result said:
    LockTimeout, ConnectionFailed, DatabaseBusy, Interrupted, SnapshotRefused, HistoryUnreadable,
    ... A run stopped for one of the first five may start again on its own; see
    planning.PASSING_REASONS."""
    stopped_at: RunStoppedAt | None = None
    """Where a run that did not finish stopped, when its result names it (RUN-12)."""
    target_identity_digest: Digest | None = None
    """The database the run's result named; absent when the run left no result."""
    source: SourceRecord | None = None
    execution_binding: ExecutionBinding | None = None
    verification: RunVerification | None = None
    message: str | None = Field(default=None, max_length=MAX_MESSAGE_LENGTH)
    """The migration version and the database's error class; never SQL or server prose."""
    generation: int | None = Field(default=None, ge=0)
    """metadata.generation the run's Apply was claimed for (four eyes: who wrote the spec
    since)."""


class UnresolvedRun(ApiModel):
    """A Partial or Unknown run that holds every later Apply until it is settled."""

    operation_id: LabelName = Field(alias="operationID")
    outcome: Literal[RunOutcome.PARTIAL, RunOutcome.UNKNOWN]
    plan: PlanReference
    job: JobReference | None = None
    finished_at: Timestamp | None = None
    stopped_at: Version | None = None
    """The version the run stopped in, when its result named it."""
    planned_target_digest: Digest | None = None
    """The database the plan was made against: where to start looking."""
    target_identity_digest: Digest | None = None
    restored: bool | None = None
    """Brought back from metadata after status was lost."""


class PtahMigrationStatus(StatusCommon):
    """Where a migration is, what the history says and how the last run ended."""

    phase: MigrationPhase | None = None
    """Where the migration is. Absent until its first read starts."""
    plan: PublishedPlan | None = None
    history: History | None = None
    last_run: LastRun | None = None
    unresolved_run: UnresolvedRun | None = None
    journal: Journal | None = None


class PtahMigration(Resource):
    """A sequence of versioned SQL migrations the operator runs against a database."""

    kind: Literal["PtahMigration"] = "PtahMigration"
    spec: PtahMigrationSpec
    status: PtahMigrationStatus | None = None
