"""What a history reading decides: one of six verdicts, never a guess (MIG-33).

The reading ends the claim and becomes status.history (MIG-35); the resource reads again at
nextReconciliationTime, spec.interval later (MIG-40, RRQ-01). Then, in order:

1. The first reading after a run of the database that run named verifies it: lastRun
   .verification and a Verified entry with the resource's verdict, InSync, Pending or Blocked
   (RUN-09, RUN-16, JNL-08). A run that named no database is never verified (RUN-16).
2. An unresolved run holds the resource Blocked with reason ApplyOutcomeUnknown, publishing
   no plan (MIG-46), until a reading of the planned database finds nothing pending; that
   reading settles it (RUN-07, MIG-47).
3. The verdict: Dirty, Modified, OutOfOrder and Ahead are Blocked with their reasons and
   their details in status.history (MIG-36..MIG-39); NothingPending is InSync, Ready=True
   HistoryMatched (MIG-08, PATH-18); ReadyToPlan publishes the plan (MIG-09). Every verdict but
   the last retires a waiting plan: it no longer fits the history (MIG-16).

The read that proves an Apply is bound to what the Apply ran from (RETRY-09); when the source
moved meanwhile, its reading still verifies the run, but a plan made from the old files would
be stale at birth, so the resource goes to Pending and reads the new source next.
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    EventReason,
    HistoryVerdict,
    Reason,
    VerifiedOutcome,
)
from ptah_operator.api.contracts.result import HistoryReport, OperationReport, history_status
from ptah_operator.api.migration import RunVerification
from ptah_operator.reconcile import conditions, sources
from ptah_operator.reconcile.migration import planning, run_records, standings
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.read_request import unanswered
from ptah_operator.reconcile.schedule import interval

_BLOCKING = {
    HistoryVerdict.DIRTY: Reason.HISTORY_DIRTY,
    HistoryVerdict.MODIFIED: Reason.HISTORY_MODIFIED,
    HistoryVerdict.OUT_OF_ORDER: Reason.HISTORY_OUT_OF_ORDER,
    HistoryVerdict.AHEAD: Reason.HISTORY_AHEAD,
}


def adopt_reading(
    draft: MigrationDraft, claim: ActiveOperation, report: OperationReport, history: HistoryReport
) -> None:
    status = draft.status
    read_at = report.finished_at or draft.now
    target = report.target_identity_digest
    status.active_operation = None
    status.history = history_status(history, claim.operation_id, report, read_at)
    conditions.clear_failure(status)
    status.next_reconciliation_time = draft.now + interval(draft.migration)
    draft.wake_at(status.next_reconciliation_time)
    request = unanswered(draft.migration)
    if request is not None:
        # Answered by the read that starts after this one (RRQ-12).
        draft.rely_on_own_write()

    hold = status.unresolved_run
    if hold is not None:
        planned = hold.planned_target_digest or hold.target_identity_digest
        if history.verdict == HistoryVerdict.NOTHING_PENDING and target and target == planned:
            status.unresolved_run = None
            draft.annotations[ANNOTATION_UNRESOLVED_RUN] = None
            draft.normal(
                EventReason.VERIFIED,
                f"run {hold.operation_id} is settled: the planned database has nothing pending",
            )
        else:
            _verify(draft, target, VerifiedOutcome.BLOCKED, claim.operation_id, read_at)
            planning.retire(draft, "an unresolved run holds the migration")
            draft.stand(
                standings.blocked(Reason.APPLY_OUTCOME_UNKNOWN, run_records.hold_message(hold))
            )
            return

    verdict = history.verdict
    if verdict in _BLOCKING:
        _verify(draft, target, VerifiedOutcome.BLOCKED, claim.operation_id, read_at)
        planning.retire(draft, f"the history reads {verdict.value}")
        draft.stand(standings.blocked(_BLOCKING[verdict], blocked_message(history)))
        return
    if verdict == HistoryVerdict.NOTHING_PENDING:
        _verify(draft, target, VerifiedOutcome.IN_SYNC, claim.operation_id, read_at)
        planning.retire(draft, "the history has nothing pending")
        draft.stand(standings.in_sync(history.current_version))
        return
    _verify(draft, target, VerifiedOutcome.PENDING, claim.operation_id, read_at)
    if claim.serves_proof and sources.record_moved(draft, claim.source):
        planning.retire(draft, "the source changed")
        draft.stand(
            standings.pending(
                Reason.OPERATION_IN_PROGRESS,
                "the run is confirmed against the files it ran; the changed source is read next",
            )
        )
        draft.rely_on_own_write()
        return
    planning.adopt(draft, claim, history, target)


def _verify(
    draft: MigrationDraft,
    target: str | None,
    outcome: VerifiedOutcome,
    reading: str,
    read_at: dt.datetime,
) -> None:
    status = draft.status
    run = status.last_run
    if run is None or run.verification is not None:
        return
    if run.target_identity_digest is None or run.target_identity_digest != target:
        return
    verification = RunVerification(outcome=outcome, read_at=read_at, operation_id=reading)
    status.last_run = run.model_copy(update={"verification": verification})
    draft.journal(run_records.verified(run.operation_id, outcome, read_at))
    draft.normal(
        EventReason.VERIFIED,
        f"run {run.operation_id} verified by reading its database: {outcome.value}",
    )


def blocked_message(history: HistoryReport) -> str:
    """What blocks, named by versions only (never SQL or rows)."""
    verdict = history.verdict
    if verdict == HistoryVerdict.DIRTY:
        version = history.dirty.version if history.dirty else "?"
        return (
            f"revision {version} is dirty: a failed or interrupted run left it, and nothing "
            "applies until a person repairs it with Ptah and a read is requested"
        )
    if verdict == HistoryVerdict.MODIFIED:
        return (
            "applied migration(s) no longer match the checksum the database recorded: "
            + _versions(history.modified_versions)
        )
    if verdict == HistoryVerdict.OUT_OF_ORDER:
        return (
            f"pending migration(s) sort below the current version {history.current_version}: "
            + _versions(history.out_of_order_versions)
        )
    ahead = history.ahead
    database = ahead.database_version if ahead else history.current_version
    artifact = ahead.artifact_version if ahead and ahead.artifact_version else "none"
    return (
        f"the database is at version {database}, past the last version the source carries "
        f"({artifact}); the operator never rolls back"
    )


def _versions(versions: list[str]) -> str:
    shown = ", ".join(versions[:10])
    more = len(versions) - 10
    return shown + (f" and {more} more" if more > 0 else "")
