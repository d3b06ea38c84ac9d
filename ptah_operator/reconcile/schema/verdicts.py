"""What a schema read's result decides ("From the source to a plan's verdict", seed 000).

- Resolve (SCH-04, SCH-06, SCH-07): a Git commit with the content digest of its selected files,
  recorded beside the repository, ref, path and source policy it answered (SRC-GIT-03,
  SRC-GIT-04), ArtifactResolved CommitResolved, then Observing; an OCI digest (SRC-OCI-01),
  ArtifactResolved DigestResolved, then Verifying.
- Verify (SCH-08, SCH-09): accepted, ArtifactVerified PolicySatisfied and the content digest
  recorded, then Observing; refused, ArtifactVerified PolicyRefused and Blocked with no plan
  (SRC-OCI-03), read again at the interval or at once when the policy or the spec changes.
- Observe (SCH-10, SCH-54): status.drift gets the report's aggregates and the database it read;
  then Planning.
- Plan (SCH-11..SCH-15): a Plan whose database is not the one its Observe read, or whose lock
  was lost (the runner's LockLost, or the Lease changing hands, LCK-09, LCK-11), is discarded and
  the database observed again; no change is InSync (ScopedConverged); changes are published and
  judged (plans.py).

Every result ends its operation in its own pass and the next operation starts in the next one
(the phase shows which), so every verdict is in status before what it allows begins; the one
exception is the proof, whose Observe claims its Plan at once (proof.py). The read that ends a
cycle sets nextReconciliationTime, spec.interval later (RETRY-12).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import (
    EventReason,
    OperationType,
    Reason,
    SchemaPhase,
    SourceKind,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import SchemaOperationReport
from ptah_operator.api.schema import DriftCategory, DriftSummary
from ptah_operator.reconcile import conditions, resolutions, sources
from ptah_operator.reconcile.read_request import unanswered
from ptah_operator.reconcile.schedule import interval
from ptah_operator.reconcile.schema import plans, proof
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import blocked, in_sync, next_up, pending, suspended

LOCK_LOST = frozenset({ErrorReason.LOCK_LOST, ErrorReason.LOCK_NOT_ACQUIRED})
"""Runner reasons that say the Plan could not hold the database's lock to its end."""


def adopt(draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport) -> str | None:
    """Take a read's result into status; why it cannot be taken, or None."""
    if claim.type == OperationType.RESOLVE:
        return _resolution(draft, claim, report)
    if claim.type == OperationType.VERIFY:
        return _verification(draft, claim, report)
    if claim.type == OperationType.OBSERVE:
        return _observation(draft, claim, report)
    return _plan(draft, claim, report)


def rest(draft: SchemaDraft) -> None:
    """A read cycle ended: the next one is due spec.interval later (RETRY-12). A request that
    came while it ran is answered by the read that starts after it (RRQ-12)."""
    status = draft.status
    status.next_reconciliation_time = draft.now + interval(draft.schema)
    draft.wake_at(status.next_reconciliation_time)
    if unanswered(draft.schema) is not None:
        draft.rely_on_own_write()


def replan(draft: SchemaDraft, claim: ActiveOperation, why: str) -> None:
    """Planning → Observing: the Plan is discarded and the database observed again (SCH-15)."""
    draft.status.active_operation = None
    draft.normal(
        EventReason.READ_RESTARTED,
        f"Plan {claim.operation_id} is discarded: {why}; the database is observed again",
    )
    draft.stand(next_up(SchemaPhase.OBSERVING, f"{why}: the database is observed again"))
    draft.rely_on_own_write()


# --- the source --------------------------------------------------------------------------------


def _resolution(
    draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport
) -> str | None:
    def then(record: SourceRecord, what: str) -> None:
        if record.kind == SourceKind.GIT:
            draft.stand(next_up(SchemaPhase.OBSERVING, f"resolved {what}; the database is next"))
        else:
            draft.stand(next_up(SchemaPhase.VERIFYING, f"resolved {what}; it is verified next"))

    return resolutions.adopt_resolution(draft, claim, report.resolve, report.finished_at, then)


def _verification(
    draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport
) -> str | None:
    def accepted(message: str) -> None:
        draft.stand(next_up(SchemaPhase.OBSERVING, f"{message}; the database is next"))

    def refused(message: str) -> None:
        plans.retire(draft, "the verification policy refused the artifact")
        draft.warning(EventReason.ARTIFACT_REFUSED, message)
        draft.stand(blocked(Reason.POLICY_REFUSED, message))
        rest(draft)

    return resolutions.adopt_verification(
        draft, claim, report.verify, report.finished_at, accepted=accepted, refused=refused
    )


# --- the database ------------------------------------------------------------------------------


def _observation(
    draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport
) -> str | None:
    drift = report.drift
    if drift is None:
        return "the result holds no drift report"
    if report.target_identity_digest is None:
        return "the result names no database"
    status = draft.status
    if claim.serves_proof:
        last = status.last_apply
        if last is None:
            return "the proof has no Apply to prove"
        if report.target_identity_digest != last.target_identity_digest:
            proof.moved(draft, claim, report.target_identity_digest)
            return None
    status.drift = DriftSummary(
        digest=drift.digest,
        dialect=drift.dialect,
        total=drift.total,
        highest_severity=drift.highest_severity,
        categories=[
            DriftCategory(category=c.category, count=c.count, highest_severity=c.highest_severity)
            for c in drift.categories
        ],
        observed_at=report.finished_at or draft.now,
        target_identity_digest=report.target_identity_digest,
    )
    conditions.clear_failure(status)
    status.active_operation = None
    if claim.serves_proof:
        if draft.spec.suspend:
            proof.suspend(draft)
            return None
        took_over = proof.superseded(draft)
        if took_over is not None:
            proof.supersede(draft, *took_over)
            return None
        proof.continue_to_plan(draft, claim)
        return None
    draft.stand(
        next_up(
            SchemaPhase.PLANNING,
            f"the observation finds {drift.total} difference(s); the plan is next",
        )
    )
    draft.rely_on_own_write()
    return None


def _plan(draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport) -> str | None:
    planned = report.plan
    if planned is None:
        return "the result holds no plan"
    status = draft.status
    if claim.serves_proof:
        last = status.last_apply
        if last is None:
            return "the proof has no Apply to prove"
        if report.target_identity_digest != last.target_identity_digest:
            proof.moved(draft, claim, report.target_identity_digest)
            return None
        took_over = proof.superseded(draft)
        if took_over is not None:
            proof.supersede(draft, *took_over)
            return None
        status.active_operation = None
        rest(draft)
        if not planned.changes:
            proof.converged(draft)
            if draft.spec.suspend:
                draft.stand(suspended())
            return None
        proof.drift_remains(draft)
        if draft.spec.suspend:
            draft.stand(suspended())
            return None
        if sources.record_moved(draft, claim.source):
            draft.stand(
                pending(
                    Reason.OPERATION_IN_PROGRESS,
                    "the Apply is proved against the files it ran from; the changed source "
                    "is read next",
                )
            )
            draft.rely_on_own_write()
            return None
        plans.adopt(draft, claim, report, planned, SchemaPhase.VERIFYING_CONVERGENCE)
        return None
    if report.target_identity_digest != claim.target_identity_digest:
        replan(draft, claim, "the target moved while it planned")
        return None
    status.active_operation = None
    conditions.clear_failure(status)
    rest(draft)
    if not planned.changes:
        plans.retire(draft, "the database converged", replaced=False)
        message = "a coherent scoped plan finds nothing to change"
        draft.verdict(True, Reason.SCOPED_CONVERGED, message)
        draft.stand(in_sync(Reason.SCOPED_CONVERGED, message))
        return None
    plans.adopt(draft, claim, report, planned, SchemaPhase.PLANNING)
    return None
