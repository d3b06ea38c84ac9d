"""The runner's report of an operation (contract `ptah.run/result/v1`), read and checked.

The result record is the only evidence of what an operation did, so it is read strictly: a
report of another contract, another operation, another type or another resource, or one whose
fields do not fit the status they would go into, is *unreadable*, and the lifecycle treats it
as no result at all (a read runs again; an Apply is an outcome nobody established). Unknown
fields are ignored, so a newer runner's additions do not make a report unreadable.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from ptah_operator.api.constants import (
    MAX_LISTED_VERSIONS,
    MAX_PLAN_VERSIONS,
    MAX_REVISIONS,
    HistoryVerdict,
    OperationType,
    RunOutcome,
    SourceKind,
)
from ptah_operator.api.fields import COMMIT_PATTERN, Checksum, Description, Digest, Version
from ptah_operator.api.migration import (
    AheadVersions,
    DirtyRevision,
    History,
    Revision,
    RunFailure,
)
from ptah_operator.reconcile.world import OperationResult

RESULT_CONTRACT = "ptah.run/result/v1"


class _Report(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="ignore"
    )


class PendingMigration(_Report):
    version: Version
    description: Description | None = None
    checksum: Checksum


class HistoryReport(_Report):
    verdict: HistoryVerdict
    current_version: Version | None = None
    checkpoint_version: Version | None = None
    applied_count: int = Field(default=0, ge=0)
    pending_count: int = Field(default=0, ge=0)
    pending: list[PendingMigration] = Field(default_factory=list, max_length=MAX_PLAN_VERSIONS)
    dirty: DirtyRevision | None = None
    modified_versions: list[Version] = Field(default_factory=list)
    out_of_order_versions: list[Version] = Field(default_factory=list)
    ahead: AheadVersions | None = None
    fingerprint: Digest | None = None
    revisions: list[Revision] = Field(default_factory=list)


class FailureReport(_Report):
    version: Version
    statement_index: int | None = Field(default=None, ge=0)
    sqlstate: str | None = None
    mysql_errno: int | None = Field(default=None, ge=0)


class RunReport(_Report):
    outcome: RunOutcome
    selected: bool = True
    """False only when the run stopped before it selected a migration. Absent counts as True:
    a run that may have started is never taken for one that did not."""
    applied_versions: list[Version] = Field(default_factory=list, max_length=MAX_PLAN_VERSIONS)
    failure: FailureReport | None = None
    message: str | None = None


class ErrorReport(_Report):
    reason: str = Field(min_length=1)
    message: str = ""


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
    artifact_type: str | None = Field(default=None, max_length=256)
    policy_digest: Digest | None = None
    content_digest: Digest | None = None
    refusal: str | None = Field(default=None, max_length=1024)


class OperationReport(_Report):
    contract: Literal["ptah.run/result/v1"]
    operation_id: str = Field(alias="operationID")
    type: str
    resource: ResourceReport
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None
    target_identity_digest: Digest | None = None
    history: HistoryReport | None = None
    run: RunReport | None = None
    resolve: ResolveReport | None = None
    verify: VerifyReport | None = None
    error: ErrorReport | None = None


@dataclass(frozen=True)
class Unreadable:
    """A report that cannot be taken as evidence; why, in words for status (no content)."""

    why: str


def read_report(
    result: OperationResult, operation_id: str, operation_type: OperationType, resource_uid: str
) -> OperationReport | Unreadable:
    """The report of this operation of this resource, or why it cannot be read."""
    try:
        report = OperationReport.model_validate(dict(result.payload))
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:3]
        return Unreadable(f"the result does not fit its contract ({', '.join(fields)})")
    if report.operation_id != operation_id:
        return Unreadable("the result names another operation")
    if report.type != operation_type.value:
        return Unreadable(f"the result is of a {report.type} operation")
    if report.resource.uid != resource_uid:
        return Unreadable("the result names another resource")
    if report.history is not None:
        try:
            history_status(report.history, operation_id, report, report.finished_at)
        except ValidationError:
            return Unreadable("the result's history does not fit status.history")
    if report.run is not None and report.run.failure is not None:
        try:
            run_failure(report.run.failure)
        except ValidationError:
            return Unreadable("the result's failure does not fit status.lastRun.failure")
    return report


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
