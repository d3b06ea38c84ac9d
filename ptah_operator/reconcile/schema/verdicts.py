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
from ptah_operator.api.schema import DriftCategory, DriftSummary
from ptah_operator.reconcile import conditions
from ptah_operator.reconcile.read_request import unanswered
from ptah_operator.reconcile.schedule import interval
from ptah_operator.reconcile.schema import plans, proof, sources
from ptah_operator.reconcile.schema.draft import (
    SchemaDraft,
    blocked,
    in_sync,
    next_up,
    pending,
    suspended,
)
from ptah_operator.reconcile.schema.results import SchemaOperationReport

LOCK_LOST = frozenset({"LockLost", "LockNotAcquired"})
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
        draft.wake_now()


def replan(draft: SchemaDraft, claim: ActiveOperation, why: str) -> None:
    """Planning → Observing: the Plan is discarded and the database observed again (SCH-15)."""
    draft.status.active_operation = None
    draft.normal(
        EventReason.READ_RESTARTED,
        f"Plan {claim.operation_id} is discarded: {why}; the database is observed again",
    )
    draft.stand(next_up(SchemaPhase.OBSERVING, f"{why}: the database is observed again"))
    draft.wake_now()


# --- the source --------------------------------------------------------------------------------


def _resolution(
    draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport
) -> str | None:
    resolved = report.resolve
    if resolved is None:
        return "the result holds no resolution"
    when = report.finished_at or draft.now
    if resolved.kind != sources.kind(draft):
        return f"the result resolves a {resolved.kind.value} source"
    if resolved.kind == SourceKind.GIT:
        if resolved.commit is None or resolved.content_digest is None:
            return "the result names no commit or content digest"
        record = SourceRecord(
            kind=SourceKind.GIT,
            repository=resolved.repository,
            ref=resolved.ref,
            path=resolved.path or None,
            commit=resolved.commit,
            content_digest=resolved.content_digest,
            source_policy_digest=claim.source.source_policy_digest if claim.source else None,
            resolved_at=when,
        )
    else:
        if resolved.oci_digest is None:
            return "the result names no artifact digest"
        record = SourceRecord(
            kind=SourceKind.ARTIFACT,
            oci_ref=resolved.oci_ref,
            oci_digest=resolved.oci_digest,
            resolved_at=when,
        )
    if not sources.names_spec_source(draft, record):
        return "the result answers for another source than the spec names"
    status = draft.status
    status.active_operation = None
    status.source = record
    conditions.clear_failure(status)
    what = sources.describe(record)
    if record.kind == SourceKind.GIT:
        conditions.artifact_resolved(
            status, True, Reason.COMMIT_RESOLVED, what, draft.now, draft.generation
        )
        draft.normal(EventReason.SOURCE_RESOLVED, f"resolved {what} ({record.content_digest})")
        draft.stand(next_up(SchemaPhase.OBSERVING, f"resolved {what}; the database is next"))
    else:
        conditions.artifact_resolved(
            status, True, Reason.DIGEST_RESOLVED, what, draft.now, draft.generation
        )
        draft.normal(EventReason.SOURCE_RESOLVED, f"resolved {what}")
        draft.stand(next_up(SchemaPhase.VERIFYING, f"resolved {what}; it is verified next"))
    draft.wake_now()
    return None


def _verification(
    draft: SchemaDraft, claim: ActiveOperation, report: SchemaOperationReport
) -> str | None:
    verdict = report.verify
    record = claim.source
    if verdict is None:
        return "the result holds no verification"
    if record is None:
        return "the Verify claim names no resolution"
    status = draft.status
    when = report.finished_at or draft.now
    artifact = draft.spec.artifact
    ref = artifact.verification_policy_from if artifact is not None else None
    policy = f"{ref.name}/{ref.key}" if ref is not None else "?"
    if verdict.accepted:
        if verdict.content_digest is None or verdict.policy_digest is None:
            return "the result names no content or policy digest"
        status.source = record.model_copy(
            update={
                "verification_policy_digest": verdict.policy_digest,
                "artifact_type": verdict.artifact_type,
                "content_digest": verdict.content_digest,
                "verified_at": when,
            }
        )
        status.active_operation = None
        conditions.clear_failure(status)
        message = (
            f"{sources.describe(record)} ({verdict.artifact_type}) is accepted by the "
            f"verification policy {policy}"
        )
        conditions.artifact_verified(
            status, True, Reason.POLICY_SATISFIED, message, draft.now, draft.generation
        )
        draft.normal(EventReason.ARTIFACT_VERIFIED, message)
        draft.stand(next_up(SchemaPhase.OBSERVING, f"{message}; the database is next"))
        draft.wake_now()
        return None
    status.source = record.model_copy(
        update={
            "verification_policy_digest": verdict.policy_digest,
            "artifact_type": verdict.artifact_type,
            "content_digest": None,
            "verified_at": None,
        }
    )
    status.active_operation = None
    refusal = verdict.refusal or "the artifact is not one the policy accepts"
    message = (
        f"{sources.describe(record)} is refused by the verification policy {policy}: {refusal}"
    )
    conditions.artifact_verified(
        status, False, Reason.POLICY_REFUSED, message, draft.now, draft.generation
    )
    plans.retire(draft, "the verification policy refused the artifact")
    draft.warning(EventReason.ARTIFACT_REFUSED, message)
    draft.stand(blocked(Reason.POLICY_REFUSED, message))
    rest(draft)
    return None


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
    draft.wake_now()
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
            draft.wake_now()
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
