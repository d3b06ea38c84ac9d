"""The runner's report of an operation (contract `ptah.run/result/v1`), read and checked.

The models are api/contracts/result.py's, the ones the runner's documents are checked against.
The result record is the only evidence of what an operation did, so it is read strictly: a
report of another contract, another operation, another type or another resource, or one whose
fields do not fit the status they would go into, is *unreadable*, and the lifecycle treats it
as no result at all (a read runs again; an Apply is an outcome nobody established). One reader
serves both families: each passes the model of its reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import ValidationError

from ptah_operator.api.constants import OperationType, RunOutcome
from ptah_operator.api.contracts.codes import ErrorReason, error_class
from ptah_operator.api.contracts.result import ErrorReport, ResultEnvelope, RunReport
from ptah_operator.reconcile.world import OperationResult

ReportT = TypeVar("ReportT", bound=ResultEnvelope)


@dataclass(frozen=True)
class Unreadable:
    """A report that cannot be taken as evidence; why, in words for status (no content)."""

    why: str


def read_report(
    result: OperationResult,
    model: type[ReportT],
    operation_id: str,
    operation_type: OperationType,
    resource_uid: str,
) -> ReportT | Unreadable:
    """The report of this operation of this resource, read with `model`, or why it cannot be
    read. A record the endpoint made of two different reports of one operation (`conflict`:
    the digests of both), or one whose digest the claim does not remember (`unconfirmed`,
    controller/world.py `claim_checked`), is evidence of neither."""
    if "conflict" in result.payload:
        return Unreadable("two different results arrived for the operation")
    if "unconfirmed" in result.payload:
        return Unreadable("the result endpoint did not confirm the result in the claim")
    try:
        report = model.model_validate(dict(result.payload))
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:3]
        return Unreadable(f"the result does not fit its contract ({', '.join(fields)})")
    if report.operation_id != operation_id:
        return Unreadable("the result names another operation")
    if report.type != operation_type.value:
        return Unreadable("the result is of another type of operation")
    if report.resource.uid != resource_uid:
        return Unreadable("the result names another resource")
    why = report.misfit()
    return report if why is None else Unreadable(why)


# --- the words status gives a report (issue #18) -----------------------------------------------
#
# A report's `message` fields are the runner's own words and are never read here: status, Events
# and logs say what a result says in the manager's words, from its closed codes and its
# positions (a version, a statement's index, an error class, a file whose name fits
# REPORTED_FILE_PATTERN). The runner's words stay in its Pod's log for a person who may read it.

ERROR_WORDS: Mapping[ErrorReason, str] = {
    ErrorReason.CONNECTION_FAILED: "the database could not be reached",
    ErrorReason.BAD_URL: "the database URL cannot be used",
    ErrorReason.ENGINE_MISMATCH: "the database URL names another engine than spec.target",
    ErrorReason.SNAPSHOT_REFUSED: "the files were refused",
    ErrorReason.INTERRUPTED: "the runner was stopped before it finished",
    ErrorReason.RUNNER_ERROR: "the runner stopped unexpectedly",
    ErrorReason.DIRECTORY_REFUSED: "the migration directory was refused",
    ErrorReason.HISTORY_UNREADABLE: "the revision table cannot be read",
    ErrorReason.DATABASE_BUSY: "the database was busy",
    ErrorReason.LOCK_TIMEOUT: "the migration lock was not free in time",
    ErrorReason.DESIRED_SCHEMA_REFUSED: "the desired schema was refused",
    ErrorReason.PLAN_REFUSED: "the plan was refused",
    ErrorReason.INTROSPECTION_FAILED: "the database's structure could not be read",
    ErrorReason.PLAN_INCOHERENT: "two plans of the same inputs differ",
    ErrorReason.DRY_RUN_REFUSED: "the plan's dry run was refused",
    ErrorReason.PRECHECK_REFUSED: "the plan's prechecks were refused",
    ErrorReason.LOCK_NOT_ACQUIRED: "the database's lock was not acquired",
    ErrorReason.LOCK_LOST: "the database's lock was lost",
    ErrorReason.PLAN_TOO_LARGE: "the plan is too large",
    ErrorReason.PLAN_NOT_UPLOADED: "the plan could not be uploaded",
    ErrorReason.PLAN_UNAVAILABLE: "the published plan could not be fetched",
    ErrorReason.SOURCE_UNREACHABLE: "the source could not be reached",
    ErrorReason.REF_NOT_FOUND: "the ref names no branch or tag of the repository",
    ErrorReason.COMMIT_NOT_ADVERTISED: "the repository does not let the commit be fetched",
    ErrorReason.COMMIT_UNREACHABLE: "the commit could not be reached",
    ErrorReason.SOURCE_REFUSED: "the source's content was refused",
}

RUN_WORDS: Mapping[str, str] = {
    "LockTimeout": "the migration lock was not free in time",
    "SequenceMismatch": "the pending sequence under the lock is not the planned one",
    "TransactionModeRefused": "a file cannot run in the transaction mode it was given",
    "UnsplittableFile": "a file cannot be split into statements",
    "TargetIdentityChanged": "the database is not the one the plan was read from",
    "ConnectionLostError": "the session to the database was lost",
    "DatabaseBusy": "the database was busy",
    "DatabaseError": "the revision table cannot be read",
    "RevisionTableUnwritable": "the revision table could not be written",
    "CommitFailed": "a migration's commit failed",
    "StatementCountMismatch": "a file's statements are not the ones recorded",
    "OutcomeNotRecorded": "it is not recorded whether the last migration committed",
    "HistoryUnreadable": "the revision table could not be read back",
    "HistoryDisagrees": "the revision table read back disagrees with the run",
}
"""Words for the engine's run codes (engine/migrations/apply.py); another code is shown as is."""


def error_words(error: ErrorReport) -> str:
    """What an `error` block says, in the manager's words: its reason, the engine's finer code,
    and the file and line it names."""
    words = ERROR_WORDS[error.reason]
    where = [part for part in (error.code, error.file) if part]
    if error.line is not None and error.file:
        where[-1] += f" line {error.line}"
    return f"{words} ({': '.join(where)})" if where else words


def run_words(run: RunReport, error: ErrorReport | None) -> str:
    """What a run block says, in the manager's words (Decision 22: the migration version and
    the database's error class, or the rule that refused the run; RUN-12: where it stopped)."""
    failure = run.failure
    if failure is not None:
        at = f"migration {failure.version}"
        if failure.statement_index is not None:
            at += f" failed at statement {failure.statement_index}"
        else:
            at += " failed"
        said = f"{at}: {error_class(failure.sqlstate, failure.mysql_errno)}"
        if run.outcome == RunOutcome.UNKNOWN:
            return f"{said}; it is not recorded whether it committed"
        if run.outcome == RunOutcome.PARTIAL:
            return f"{said}; earlier statements of it committed"
        return said
    stopped = run.stopped_at
    if run.reason == "CommitFailed" and stopped is not None:
        return (
            f"migration {stopped.version} failed at commit: "
            f"{error_class(run.sqlstate, run.mysql_errno)}"
        )
    if run.outcome == RunOutcome.APPLIED:
        return f"applied {len(run.applied_versions)} migration(s)"
    if run.outcome == RunOutcome.UP_TO_DATE:
        return "the database already has every planned migration"
    cause = error_words(error) if error is not None else None
    if cause is None and run.reason is not None:
        cause = RUN_WORDS.get(run.reason, f"the run was refused ({run.reason})")
    if not run.selected:
        return f"{cause or 'the run stopped before it selected a migration'}; nothing ran"
    said = cause or f"the run ended {run.outcome.value}"
    if stopped is not None:
        said += f"; it stopped in migration {stopped.version}"
        if stopped.statements_applied is not None and stopped.statements_total is not None:
            said += (
                f" with {stopped.statements_applied} of {stopped.statements_total}"
                " statements known committed"
            )
    if run.outcome == RunOutcome.UNKNOWN:
        said += "; what it committed is not known"
    return said
