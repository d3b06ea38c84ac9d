"""The runner's report of an operation (contract `ptah.run/result/v1`), typed once for both sides.

The runner builds it (runner/document.py, runner/schema_document.py,
runner/source_commands.py); the manager reads it with these models (reconcile/reports.py
`read_report`). The envelope is the
same for every family: contract, operationID, type, resource, startedAt, finishedAt,
targetIdentityDigest, and `error` {reason, code, file, line, message} for an operation that
could not do its work (the manager words status from the codes and positions and never reads a
`message`: issue #18). Resolve and Verify carry `resolve` and `verify`. A migration's blocks
are `history` and `run`; a schema's are:

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

The result record is the only evidence of what an operation did, so it is read strictly: a
report whose fields do not fit the status they would go into (`misfit`) is unreadable, and the
lifecycle treats it as no result at all. Unknown fields are ignored, so a newer runner's
additions do not make a report unreadable.
"""

from __future__ import annotations

import datetime as dt
import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic.alias_generators import to_camel

from ptah_operator.api.constants import (
    MAX_DRIFT_CATEGORIES,
    MAX_LISTED_VERSIONS,
    MAX_PLAN_CHUNKS,
    MAX_PLAN_FINDINGS,
    MAX_PLAN_VERSIONS,
    MAX_REVISIONS,
    HistoryVerdict,
    RunOutcome,
    Severity,
    SourceKind,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.fields import (
    COMMIT_PATTERN,
    REPORT_CODE_PATTERN,
    REPORTED_FILE_PATTERN,
    SQLSTATE_PATTERN,
    Checksum,
    Description,
    Digest,
)
from ptah_operator.api.migration import (
    AheadVersions,
    DirtyRevision,
    History,
    Revision,
    RunFailure,
    RunStoppedAt,
)

MAX_REPORTED_TABLES = 100

ReportCode = Annotated[str, StringConstraints(pattern=REPORT_CODE_PATTERN)]
ReportedFile = Annotated[str, StringConstraints(pattern=REPORTED_FILE_PATTERN)]
Category = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
"""A change's category (engine/schema/diff.py CATEGORIES: columns_added, ...)."""
ReportedVersion = Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z._-]{1,128}$")]
"""A migration version as a report spells it (the files' digits): printable, no control
character, so a version quoted in status or an Event cannot carry text of its own."""
UNSHOWABLE = r"\x00-\x1f\x7f-\x9f\u2028-\u202e\u2066-\u2069"
"""What no text a report quotes may hold, as a character class: control characters, the line
and paragraph separators and the bidirectional overrides."""
ObjectName = Annotated[
    str, StringConstraints(min_length=1, max_length=256, pattern=f"^[^{UNSHOWABLE}]+$")
]
"""A database object a report names (a table, `schema.table`, `table.column`): any characters
but control characters and the bidirectional overrides; a report naming another is unreadable."""
Dialect = Annotated[str, StringConstraints(pattern=r"^[a-z]{1,32}$")]
MediaType = Annotated[
    str,
    StringConstraints(
        max_length=255,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$",
    ),
]
"""An artifact type: a media type (RFC 6838), the registry's word for what the artifact is."""


class _Report(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore"
    )


class PendingMigration(_Report):
    version: ReportedVersion
    description: Description | None = None
    checksum: Checksum


class HistoryReport(_Report):
    verdict: HistoryVerdict
    current_version: ReportedVersion | None = None
    checkpoint_version: ReportedVersion | None = None
    applied_count: int = Field(default=0, ge=0)
    pending_count: int = Field(default=0, ge=0)
    pending: list[PendingMigration] = Field(default_factory=list, max_length=MAX_PLAN_VERSIONS)
    dirty: DirtyRevision | None = None
    modified_versions: list[ReportedVersion] = Field(default_factory=list)
    out_of_order_versions: list[ReportedVersion] = Field(default_factory=list)
    ahead: AheadVersions | None = None
    fingerprint: Digest | None = None
    revisions: list[Revision] = Field(default_factory=list)


class FailureReport(_Report):
    version: ReportedVersion
    statement_index: int | None = Field(default=None, ge=0)
    sqlstate: str | None = Field(default=None, pattern=SQLSTATE_PATTERN)
    mysql_errno: int | None = Field(default=None, ge=0)


class StoppedAtReport(_Report):
    version: ReportedVersion
    statements_applied: int | None = Field(default=None, ge=0)
    statements_total: int | None = Field(default=None, ge=0)


class RunReport(_Report):
    outcome: RunOutcome
    selected: bool = True
    """False only when the run stopped before it selected a migration. Absent counts as True:
    a run that may have started is never taken for one that did not."""
    applied_versions: list[ReportedVersion] = Field(
        default_factory=list, max_length=MAX_PLAN_VERSIONS
    )
    failure: FailureReport | None = None
    stopped_at: StoppedAtReport | None = None
    """The file a run that did not finish stopped in, whatever stopped it (RUN-12)."""
    reason: ReportCode | None = None
    """The engine's code for how the run ended (StatementFailed, TransactionModeRefused,
    CommitFailed, ...): the manager words status from it and the fields around it."""
    sqlstate: str | None = Field(default=None, pattern=SQLSTATE_PATTERN)
    mysql_errno: int | None = Field(default=None, ge=0)
    """The database's error class of what stopped a run when no statement's failure says it
    (a failed commit)."""
    message: str | None = None
    """The runner's own words, kept in the record for a person reading it. The manager never
    reads them (issue #18): no text a container wrote reaches status, an Event or a log."""


class ErrorReport(_Report):
    reason: ErrorReason
    """Why the operation could not do its work, from a closed set: any other does not fit."""
    code: ReportCode | None = None
    """The engine's finer code (a directory refusal's rule: BadFileName, SymlinkRefused...)."""
    file: ReportedFile | None = None
    """The file the refusal is about, when its name is one a status may hold."""
    line: int | None = Field(default=None, ge=1)
    message: str = ""
    """The runner's own words; never read by the manager (RunReport.message)."""


class ResourceReport(_Report):
    kind: str
    namespace: str
    name: str
    uid: str


class ResolveReport(_Report):
    """What Resolve pinned: a Git commit with the content digest of the selected files, or an
    OCI manifest digest."""

    kind: SourceKind
    repository: str | None = Field(default=None, max_length=512)
    ref: str | None = Field(default=None, max_length=256)
    path: str | None = Field(default=None, max_length=256)
    commit: str | None = Field(default=None, pattern=COMMIT_PATTERN, max_length=64)
    content_digest: Digest | None = None
    oci_ref: str | None = Field(default=None, max_length=512)
    oci_digest: Digest | None = None
    file_count: int | None = Field(default=None, ge=0)
    total_bytes: int | None = Field(default=None, ge=0)


class VerifyReport(_Report):
    """Verify's verdict on the pinned digest under the verification policy it read."""

    accepted: bool
    artifact_type: MediaType | None = None
    policy_digest: Digest | None = None
    content_digest: Digest | None = None
    refusal: str | None = Field(default=None, max_length=1024)


class DriftCategoryReport(_Report):
    category: Category
    count: int = Field(ge=0)
    highest_severity: Severity | None = None


class DriftReport(_Report):
    """Observe: the drift report reduced to what status may hold."""

    digest: Digest
    """SHA-256 of the raw report, which stays inside the runner."""
    dialect: Dialect
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
    category: Category | None = None
    object: ObjectName | None = None
    related: ObjectName | None = None
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
    dialect: Dialect | None = None
    observed_fingerprint: Digest
    desired_fingerprint: Digest
    digest: Digest | None = None
    """SHA-256 of the plan file's bytes (the pieces joined), when it changes something."""
    size: int = Field(default=0, ge=0)
    statement_count: int = Field(default=0, ge=0)
    severity: PlanSeverityReport = Field(default_factory=PlanSeverityReport)
    findings: list[FindingReport] = Field(default_factory=list, max_length=MAX_PLAN_FINDINGS)
    findings_total: int = Field(default=0, ge=0)
    protected_tables: list[ObjectName] = Field(default_factory=list, max_length=MAX_REPORTED_TABLES)
    """The tables the plan would change that spec.policy.protectedTables names."""
    pieces: list[PieceReport] = Field(default_factory=list, max_length=MAX_PLAN_CHUNKS)


class ApplyOutcomeReport(StrEnum):
    APPLIED = "Applied"
    REFUSED = "Refused"
    UNKNOWN = "Unknown"


class ApplyFailureReport(_Report):
    statement_index: int | None = Field(default=None, ge=0)
    sqlstate: str | None = Field(default=None, pattern=SQLSTATE_PATTERN)
    mysql_errno: int | None = Field(default=None, ge=0)


class ApplyReport(_Report):
    """Apply: what the engine answered. Only Applied with the plan's digest is Succeeded."""

    outcome: ApplyOutcomeReport
    reason: ReportCode | None = None
    """Why it was refused or is unknown (StalePlan, PlanDigestMismatch, LockNotAcquired, ...)."""
    plan_digest: Digest | None = None
    """The digest of the bytes the runner hashed just before it ran them."""
    statements_executed: int = Field(default=0, ge=0)
    failure: ApplyFailureReport | None = None


class ResultEnvelope(_Report):
    """What every report carries, whichever family and operation made it."""

    contract: Literal["ptah.run/result/v1"]
    operation_id: str = Field(alias="operationID")
    type: str
    resource: ResourceReport
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    target_identity_digest: Digest | None = None
    resolve: ResolveReport | None = None
    verify: VerifyReport | None = None
    error: ErrorReport | None = None

    def misfit(self) -> str | None:
        """Why the report cannot be taken as evidence although it fits its model, or None."""
        return None


_UNSHOWABLE = re.compile(f"[{UNSHOWABLE}]")


def _descriptions(history: HistoryReport) -> list[str]:
    found = [p.description for p in history.pending] + [r.description for r in history.revisions]
    if history.dirty is not None:
        found.append(history.dirty.description)
    return [d for d in found if d]


class OperationReport(ResultEnvelope):
    """The report of a PtahMigration's operation (History, Apply, Resolve, Verify)."""

    history: HistoryReport | None = None
    run: RunReport | None = None

    def misfit(self) -> str | None:
        if self.history is not None and any(
            _UNSHOWABLE.search(text) for text in _descriptions(self.history)
        ):
            return "the result's history holds a description status may not show"
        if self.history is not None:
            try:
                history_status(self.history, self.operation_id, self, self.finished_at)
            except ValidationError:
                return "the result's history does not fit status.history"
        if self.run is not None and self.run.failure is not None:
            try:
                run_failure(self.run.failure)
            except ValidationError:
                return "the result's failure does not fit status.lastRun.failure"
        if self.run is not None and self.run.stopped_at is not None:
            try:
                run_stopped_at(self.run.stopped_at)
            except ValidationError:
                return "the result's stoppedAt does not fit status.lastRun.stoppedAt"
        return None


class SchemaOperationReport(ResultEnvelope):
    """The report of a PtahSchema's operation (Observe, Plan, Apply, Resolve, Verify)."""

    drift: DriftReport | None = None
    plan: PlanReport | None = None
    apply: ApplyReport | None = None

    def misfit(self) -> str | None:
        plan = self.plan
        if plan is not None and plan.changes:
            indexes = [p.index for p in plan.pieces]
            if plan.digest is None or plan.statement_count < 1:
                return "the result's plan has changes but no digest or statements"
            if not indexes or indexes != list(range(len(indexes))):
                return "the result's plan lists its pieces out of order"
            if plan.size != sum(p.size for p in plan.pieces):
                return "the result's plan size is not the size of its pieces"
        return None


def history_status(
    history: HistoryReport,
    operation_id: str,
    report: OperationReport,
    read_at: dt.datetime | None,
) -> History:
    """status.history for one reading: counts, the blocking details, the newest rows."""
    return History(
        verdict=history.verdict,
        current_version=history.current_version,
        checkpoint_version=history.checkpoint_version,
        applied_count=history.applied_count,
        pending_count=history.pending_count,
        pending_versions=[p.version for p in history.pending[:MAX_LISTED_VERSIONS]],
        dirty=history.dirty,
        modified_versions=history.modified_versions[:MAX_LISTED_VERSIONS],
        out_of_order_versions=history.out_of_order_versions[:MAX_LISTED_VERSIONS],
        ahead=history.ahead,
        fingerprint=history.fingerprint,
        target_identity_digest=report.target_identity_digest,
        operation_id=operation_id,
        read_at=read_at,
        revisions=history.revisions[:MAX_REVISIONS],
    )


def run_failure(failure: FailureReport) -> RunFailure:
    """Where a run stopped: version, statement, SQLSTATE and errno, never text (RUN-17)."""
    return RunFailure(
        version=failure.version,
        statement_index=failure.statement_index,
        sqlstate=failure.sqlstate,
        mysql_errno=failure.mysql_errno,
    )


def run_stopped_at(stopped: StoppedAtReport) -> RunStoppedAt:
    """Where a run that did not finish stopped: the file and its statement counts (RUN-12)."""
    return RunStoppedAt(
        version=stopped.version,
        statements_applied=stopped.statements_applied,
        statements_total=stopped.statements_total,
    )
