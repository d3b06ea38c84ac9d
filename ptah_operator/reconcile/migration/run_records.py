"""What a migration run leaves behind: status.lastRun, status.unresolvedRun and their entries.

- `lastRun` is copied from the Apply claim when the run ends (RUN-08): its operation, plan,
  approval, approver, Job, authorization, source and execution binding, none of which has to
  exist any more for the record to be true (RUN-10), with what the result said: outcome,
  versions applied, where it stopped (RUN-12: `stoppedAt`, the file a run that did not finish
  stopped in, whatever stopped it; RUN-17: `failure`, the statement that failed), and
  targetIdentityDigest, the database
  the result named and nothing else (RUN-13..RUN-15). A later run replaces it (RUN-11).
- A Partial or Unknown run, or a dispatched Job nobody can read, is held in `unresolvedRun`
  (RUN-05), which names the planned database as where to start looking (RUN-15). The hold is
  kept in the annotation `operator.ptah.run/unresolved-run` too, so a restore that loses the
  status puts the resource back to Blocked with the hold's outcome and time, and writes the
  RunFinished entry the lost status held (RUN-21, JNL-10).
- One run writes one `RunFinished` entry (JNL-09), naming the plan, the approval, the
  approver, the Job and the authorization (JNL-17), joined to its `ApprovalAccepted` by
  approvalUID (JNL-18) and to its `Verified` and `RunAcknowledged` by operationID (JNL-16).
"""

from __future__ import annotations

import datetime as dt
import json

from pydantic import ValidationError

from ptah_operator.api.approvals import PtahMigrationRunAcknowledgment
from ptah_operator.api.common import ActiveOperation, JobReference, PlanReference
from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    JournalEntryType,
    JournalOutcome,
    RunOutcome,
    VerifiedOutcome,
)
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.migration import (
    LastRun,
    PtahMigration,
    RunFailure,
    RunStoppedAt,
    UnresolvedRun,
)


def last_run(
    claim: ActiveOperation,
    job: JobReference,
    outcome: RunOutcome,
    *,
    applied: list[str],
    started_at: dt.datetime | None,
    finished_at: dt.datetime,
    failure: RunFailure | None,
    target_identity_digest: str | None,
    message: str | None,
    reason: str | None = None,
    stopped_at: RunStoppedAt | None = None,
) -> LastRun:
    """status.lastRun for the run the claim carried out."""
    return LastRun(
        operation_id=claim.operation_id,
        outcome=outcome,
        plan=claim.plan or PlanReference(name="unknown"),
        approval=claim.approval,
        approver=claim.approver,
        job=job,
        authorization=claim.authorization,
        applied_versions=applied,
        started_at=started_at or claim.started_at,
        finished_at=finished_at,
        failure=failure,
        reason=reason,
        stopped_at=stopped_at,
        target_identity_digest=target_identity_digest,
        source=claim.source,
        execution_binding=claim.execution_binding,
        message=message[:1024] if message else None,
        generation=claim.generation,
    )


def hold_of(run: LastRun, claim: ActiveOperation) -> UnresolvedRun:
    """The hold of a Partial or Unknown run (RUN-05)."""
    assert run.outcome in (RunOutcome.PARTIAL, RunOutcome.UNKNOWN)
    return UnresolvedRun(
        operation_id=run.operation_id,
        outcome=run.outcome,
        plan=run.plan,
        job=run.job,
        finished_at=run.finished_at,
        stopped_at=stopped_version(run),
        planned_target_digest=claim.target_identity_digest,
        target_identity_digest=run.target_identity_digest,
    )


def hold_annotation(hold: UnresolvedRun) -> str:
    """The hold as the annotation keeps it: its wire form, canonical JSON."""
    return json.dumps(
        hold.model_dump(mode="json", by_alias=True, exclude_none=True),
        sort_keys=True,
        separators=(",", ":"),
    )


def annotated_hold(migration: PtahMigration) -> UnresolvedRun | None:
    """The hold the annotation keeps, or None (absent or unreadable)."""
    value = migration.metadata.annotation(ANNOTATION_UNRESOLVED_RUN)
    if not value:
        return None
    try:
        return UnresolvedRun.model_validate_json(value)
    except ValidationError:
        return None


def restored_run(hold: UnresolvedRun) -> LastRun:
    """lastRun as far as the hold remembers it."""
    return LastRun(
        operation_id=hold.operation_id,
        outcome=hold.outcome,
        plan=hold.plan,
        job=hold.job,
        finished_at=hold.finished_at,
        stopped_at=RunStoppedAt(version=hold.stopped_at) if hold.stopped_at else None,
        target_identity_digest=hold.target_identity_digest,
    )


def stopped_version(run: LastRun) -> str | None:
    """The version the run stopped in: where its result said it stopped, else the statement
    that failed; None for a run that finished or left nothing to say (RUN-12, JNL-09)."""
    if run.stopped_at is not None:
        return run.stopped_at.version
    return run.failure.version if run.failure is not None else None


def run_finished(run: LastRun, time: dt.datetime) -> JournalEntry:
    return JournalEntry(
        type=JournalEntryType.RUN_FINISHED,
        time=time,
        operation_id=run.operation_id,
        plan_name=run.plan.name,
        plan_uid=run.plan.uid,
        plan_fingerprint=run.plan.fingerprint,
        approval_name=run.approval.name if run.approval else None,
        approval_uid=run.approval.uid if run.approval else None,
        approver=run.approver,
        job_name=run.job.name if run.job else None,
        job_uid=run.job.uid if run.job else None,
        authorization=run.authorization,
        outcome=JournalOutcome(run.outcome.value),
        reason=run.reason,
        versions_applied=len(run.applied_versions),
        stopped_at=stopped_version(run),
    )


def verified(operation_id: str, outcome: VerifiedOutcome, time: dt.datetime) -> JournalEntry:
    return JournalEntry(
        type=JournalEntryType.VERIFIED,
        time=time,
        operation_id=operation_id,
        outcome=JournalOutcome(outcome.value),
    )


def acknowledged(
    ack: PtahMigrationRunAcknowledgment, hold: UnresolvedRun, time: dt.datetime
) -> JournalEntry:
    return JournalEntry(
        type=JournalEntryType.RUN_ACKNOWLEDGED,
        time=time,
        operation_id=hold.operation_id,
        plan_name=hold.plan.name,
        plan_uid=hold.plan.uid,
        plan_fingerprint=hold.plan.fingerprint,
        job_name=ack.spec.job_ref.name,
        job_uid=ack.spec.job_ref.uid,
        acknowledgment_name=ack.metadata.name,
        acknowledgment_uid=ack.metadata.uid,
        acknowledged_by=ack.spec.acknowledged_by,
        outcome=JournalOutcome(hold.outcome.value),
    )


def hold_message(hold: UnresolvedRun) -> str:
    where = (
        f"; the planned database is {hold.planned_target_digest}"
        if hold.planned_target_digest
        else ""
    )
    return (
        f"run {hold.operation_id} ended {hold.outcome.value}: no plan is published and no "
        "Apply runs until a history read of the planned database finds nothing pending or a "
        f"PtahMigrationRunAcknowledgment names the run{where}"
    )
