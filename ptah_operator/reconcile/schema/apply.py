"""The Apply of a schema plan: started once every gate holds, and what its end decides.

Starting one (SCH-16, SCH-19, PATH-09, JOB-05): a published plan that still fits, its verdict
ReadyToApply (apply: Always, nothing destructive, no privilege change) or AwaitingApproval with
an exact, unconsumed approval (APR-02, APR-11); no suspend, the realm admits the schema, no
proof owed (an Apply nobody has proved yet goes to its proof first, SCH-59, whatever else a
restored or edited status says), and the database-realm Lease is free. The Decision takes
the Lease before it writes the claim, and the claim before the Job (JOB-04); the claim carries
the plan, the approval and approver, the authorization, the source and the database the plan
was made for, and the execution binding, so status.lastApply never depends on any of them
still existing.

While it runs:
- The Job appearing is the dispatch: the claim records the Job's UID and the approval is
  consumed then, recorded on status.plan (APR-14) with an ApprovalAccepted entry (JNL-05).
  Until then, a claim whose inputs moved is withdrawn, nothing ran and nothing is consumed
  (SCH-23, APR-13): to Suspended (spec.suspend, SUS-05), AwaitingApproval (its approval was
  deleted), Verifying (the verification policy changed), Observing (the plan went stale or its
  ConfigMap source changed), or Pending (the spec, the execution binding or the realm). An
  ApplyFinished is not written for it (JNL-06).
- A Job that could not be built, or that the API server refused, does not exist: Failed, the
  claim kept without the Lease, and built again after failureRetryInterval (SCH-24, RETRY-14).
- Once dispatched it never gives way (RETRY-08), not to suspend either (SUS-02): it is
  observed to its end. If the Lease changes hands while it runs, leaseContinuityLost is set
  and its result discarded (LCK-10, LCK-11): the outcome is unknown.

Its end, whatever the Job reported (SCH-22, SCH-25): status.lastApply records it with outcome
Succeeded (the runner reports Applied, having hashed exactly the plan's bytes) or Unknown
(anything else: every Apply error is ApplyOutcomeUnknown, SCH-59), an ApplyFinished entry is
written (JNL-06), the plan is carried out (status.plan cleared), and the schema goes to
VerifyingConvergence, still holding the Lease, for the proof (proof.py). Nothing is replayed.
"""

from __future__ import annotations

import contextlib
import datetime as dt

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.common import (
    ActiveOperation,
    JobReference,
    PlanReference,
)
from ptah_operator.api.constants import (
    ApplyOutcome,
    Authorization,
    EventReason,
    JournalEntryType,
    JournalOutcome,
    OperationType,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.contracts.result import ApplyOutcomeReport, SchemaOperationReport
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.names import job_name
from ptah_operator.api.plans import PtahSchemaPlan
from ptah_operator.api.schema import ApplyRecord
from ptah_operator.reconcile import apply_follow, conditions, sources
from ptah_operator.reconcile.approvals import accepted as approval_accepted
from ptah_operator.reconcile.approvals import authorization_of
from ptah_operator.reconcile.draft import binding_digest, current_binding, new_claim
from ptah_operator.reconcile.realm import Refusal
from ptah_operator.reconcile.reports import Unreadable, read_report
from ptah_operator.reconcile.schedule import (
    JOB_RECREATE_CHECK,
    LEASE_WAIT,
    failure_retry_interval,
)
from ptah_operator.reconcile.schema import claims, jobs, leases, plans, proof
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import (
    Standing,
    applying,
    approved,
    awaiting_approval,
    next_up,
    pending,
    ready_to_apply,
    suspended,
    verifying_convergence,
)
from ptah_operator.reconcile.world import JobState, OperationResult


def start(draft: SchemaDraft, plan: PtahSchemaPlan, approval: PtahSchemaApproval | None) -> None:
    """Take the Lease, claim the Apply and create its Job, or say what it waits for."""
    status = draft.status
    ref = status.plan
    assert ref is not None
    if proof.owed(status):
        proof.start(draft)
        return
    operation_id = draft.world.new_operation_id
    if not leases.free_for(draft, operation_id):
        _wait(draft, approval, "the database-realm Lease is held by another operation")
        draft.wake_in(LEASE_WAIT)
        return
    claim = new_claim(
        draft,
        OperationType.APPLY,
        operation_id,
        spec_digest=proof.spec_digest(draft),
        source=status.source,
        plan=PlanReference(name=ref.name, uid=ref.uid, fingerprint=ref.fingerprint),
        **authorization_of(approval),
        target_identity_digest=plan.spec.target_identity_digest,
        lease_name=leases.name(draft),
    )
    status.active_operation = claim
    try:
        job = jobs.apply_job(draft.schema, draft.world.runner, operation_id, plan)
    except ValueError as exc:
        _not_built(draft, claim, Reason.JOB_NOT_BUILT, f"its Job could not be built: {exc}")
        return
    leases.take(draft, operation_id)
    claims.create(draft, claim, job)
    draft.stand(applying(ref.name))


def observe(draft: SchemaDraft, claim: ActiveOperation, refusal: Refusal | None) -> None:
    """Follow an Apply claim to its end (apply_follow.py, with the schema's ends)."""
    apply_follow.observe(draft, APPLY, claim, refusal)


def _undispatched_claim(
    draft: SchemaDraft, claim: ActiveOperation, name: str, refusal: Refusal | None
) -> None:
    """No Job of the claim exists, and none may have been made: withdrawn if anything moved,
    else built again or waiting for its retry (`_undispatched`)."""
    moved = _withdrawal(draft, claim, refusal)
    if moved is not None:
        _withdraw(draft, claim, moved, refusal)
        return
    _undispatched(draft, claim)


def _remake(draft: SchemaDraft, claim: ActiveOperation) -> bool:
    """Ask again for the Job this manager made and no cache shows; with its plan gone it
    cannot be asked for."""
    plan = plans.published(draft)
    if plan is None:
        return False
    # (A manifest that cannot be built now asks for nothing: the one asked for is only read.)
    with contextlib.suppress(ValueError):
        draft.create(jobs.apply_job(draft.schema, draft.world.runner, claim.operation_id, plan))
    return True


def _end_reported(
    draft: SchemaDraft, claim: ActiveOperation, job: JobState | None, result: OperationResult
) -> None:
    """The Apply's result counts: its end is what it reports, no outcome if unreadable."""
    report = read_report(
        result, SchemaOperationReport, claim.operation_id, OperationType.APPLY, draft.uid
    )
    if isinstance(report, Unreadable):
        _end(draft, claim, job, None, f"its result cannot be read: {report.why}")
    else:
        _end(draft, claim, job, report, None)


# --- before dispatch ---------------------------------------------------------------------------


def _withdrawal(
    draft: SchemaDraft, claim: ActiveOperation, refusal: Refusal | None
) -> tuple[str, SchemaPhase] | None:
    """What moved under an Apply claim whose Job does not exist, and where it leads."""
    world = draft.world
    if draft.spec.suspend:
        return "spec.suspend is set", SchemaPhase.SUSPENDED
    if refusal is not None:
        return refusal.message, SchemaPhase.PENDING
    if claim.generation != draft.generation:
        return f"the spec changed (generation {draft.generation})", SchemaPhase.PENDING
    if binding_digest(claim.execution_binding) != binding_digest(current_binding(world)):
        return "the execution binding changed", SchemaPhase.PENDING
    if sources.policy_changed(draft):
        return "the verification policy changed", SchemaPhase.VERIFYING
    if sources.record_moved(draft, claim.source):
        phase = SchemaPhase.PENDING if sources.read_by_job(draft) else SchemaPhase.OBSERVING
        return "the source changed", phase
    ref = claim.plan
    current = draft.status.plan
    if ref is None or current is None or current.uid != ref.uid:
        return "the plan was retired", SchemaPhase.OBSERVING
    why = plans.misfit(draft)
    if why is not None:
        return why, SchemaPhase.OBSERVING
    if claim.approval is not None and not plans.approval_still_there(draft, claim.approval.uid):
        return f"approval {claim.approval.name} was deleted", SchemaPhase.AWAITING_APPROVAL
    return None


def _withdraw(
    draft: SchemaDraft,
    claim: ActiveOperation,
    moved: tuple[str, SchemaPhase],
    refusal: Refusal | None,
) -> None:
    """The Apply is withdrawn before any Job existed: nothing ran, nothing is consumed (the
    Lease is given back by leases.settle)."""
    why, phase = moved
    status = draft.status
    status.active_operation = None
    message = f"the Apply was withdrawn before its Job existed: {why}"
    standing: Standing
    if phase == SchemaPhase.SUSPENDED:
        standing = suspended(message)
    elif phase == SchemaPhase.AWAITING_APPROVAL and status.plan is not None:
        standing = awaiting_approval(status.plan.name, message)
    elif phase in (SchemaPhase.OBSERVING, SchemaPhase.VERIFYING):
        plans.retire(draft, why)
        standing = next_up(phase, message)
        draft.rely_on_own_write()
    else:
        if sources.record_moved(draft, claim.source):
            plans.retire(draft, why)
        reason = refusal.reason if refusal is not None else Reason.OPERATION_IN_PROGRESS
        standing = pending(reason, message)
        draft.rely_on_own_write()
    draft.stand(standing)


def _undispatched(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """Nothing moved and there is no Job: a refusal or a build failure waits for its retry
    (RETRY-14); otherwise the Job is asked for (again, idempotently)."""
    name = claim.job_name or job_name(OperationType.APPLY, claim.operation_id)
    refused = draft.world.job_refusals.get(name)
    if refused is not None and claim.retry_at is None:
        _not_built(
            draft, claim, Reason.JOB_REFUSED, f"the API server refused Job {name}: {refused}"
        )
        return
    plan = plans.published(draft)
    assert plan is not None  # _withdrawal checked it fits
    if claim.retry_at is not None:
        if draft.now < claim.retry_at:
            _standing_failed(draft, claim)
            draft.wake_at(claim.retry_at)
            return
        if not leases.free_for(draft, claim.operation_id):
            _standing_failed(draft, claim)
            draft.wake_in(LEASE_WAIT)
            return
    try:
        job = jobs.apply_job(draft.schema, draft.world.runner, claim.operation_id, plan)
    except ValueError as exc:
        _not_built(draft, claim, Reason.JOB_NOT_BUILT, f"its Job could not be built: {exc}")
        return
    if claim.retry_at is not None:
        claim = claim.model_copy(
            update={
                "retry_at": None,
                "attempt": claim.attempt + 1,
                "lease_epoch": None,
                "report": None,
            }
        )
        draft.status.active_operation = claim
        leases.take(draft, claim.operation_id)
    claims.create(draft, claim, job)
    draft.stand(applying(plan.metadata.name or ""))
    draft.wake_in(JOB_RECREATE_CHECK)


def _not_built(draft: SchemaDraft, claim: ActiveOperation, reason: str, why: str) -> None:
    """No Job exists and none will as built: Failed, the claim kept to try again after
    failureRetryInterval, the Lease given back meanwhile (SCH-24, RETRY-14)."""
    retry_at = draft.now + failure_retry_interval(draft.schema)
    claim = claim.model_copy(
        update={"retry_at": retry_at, "last_failure_reason": reason, "lease_epoch": None}
    )
    draft.status.active_operation = claim
    message = (
        f"Apply {claim.operation_id} did not start: {why}; it tries again at {retry_at.isoformat()}"
    )
    conditions.record_failure(draft.status, reason, message, draft.now, draft.generation)
    draft.operation_failed(OperationType.APPLY, reason)
    draft.warning(EventReason.OPERATION_FAILED, message)
    _standing_failed(draft, claim)
    draft.wake_at(retry_at)


def _standing_failed(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """Failed between attempts, until the retry `_not_built` set (a restored claim may not
    say why it failed)."""
    reason = claim.last_failure_reason or Reason.JOB_NOT_BUILT
    assert claim.retry_at is not None
    message = (
        f"Apply {claim.operation_id} has no Job ({reason}); it tries again at "
        f"{claim.retry_at.isoformat()}"
    )
    draft.stand(Standing(SchemaPhase.FAILED, reason, message, True))


def _accept(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """The Apply consumed its approval: its Job exists (APR-11, APR-14, JNL-05). status.plan,
    when it is the plan applied, records the approval and the approver."""
    status = draft.status
    if claim.authorization != Authorization.APPROVAL or claim.approval is None:
        return
    if status.plan is not None and claim.plan is not None and status.plan.uid == claim.plan.uid:
        status.plan = status.plan.model_copy(
            update={"approval": claim.approval, "approver": claim.approver}
        )
    approval_accepted(draft, claim)


# --- the end -----------------------------------------------------------------------------------


def _end(
    draft: SchemaDraft,
    claim: ActiveOperation,
    job: JobState | None,
    report: SchemaOperationReport | None,
    lost: str | None,
) -> None:
    """The Apply ended or was lost: record it, and the proof is next (SCH-22)."""
    status = draft.status
    plan_ref = claim.plan or PlanReference(name="unknown")
    plan_status = status.plan
    digest = plan_status.digest if plan_status is not None else None
    finished_at = job.finished_at if job is not None and job.finished_at else draft.now
    started_at: dt.datetime | None = None
    if report is not None:
        started_at = report.started_at
        finished_at = report.finished_at or finished_at
    outcome, why = _outcome(claim, report, digest, lost)
    record = _record(claim, plan_ref, digest, outcome, started_at, finished_at)
    plans.record_end(status, record)
    status.last_apply = record
    status.active_operation = None
    status.plan = None
    draft.journal(_finished_entry(claim, plan_ref, record, outcome, finished_at))
    if outcome == ApplyOutcome.SUCCEEDED:
        conditions.clear_failure(status)
        draft.normal(
            EventReason.APPLY_FINISHED,
            f"Apply {claim.operation_id} of plan {plan_ref.name} ran; the proof is next",
        )
        draft.stand(
            verifying_convergence(
                f"Apply {claim.operation_id} of plan {plan_ref.name} ran; a fresh observation "
                "and plan prove it"
            )
        )
    else:
        message = (
            f"the outcome of Apply {claim.operation_id} of plan {plan_ref.name} is unknown: "
            f"{why}; nothing is replayed, a fresh observation comes first"
        )
        conditions.record_failure(
            status, Reason.APPLY_OUTCOME_UNKNOWN, message, draft.now, draft.generation
        )
        draft.warning(EventReason.APPLY_FINISHED, message)
        draft.stand(
            Standing(SchemaPhase.VERIFYING_CONVERGENCE, Reason.APPLY_OUTCOME_UNKNOWN, message, True)
        )
    draft.rely_on_own_write()


def _outcome(
    claim: ActiveOperation,
    report: SchemaOperationReport | None,
    digest: str | None,
    lost: str | None,
) -> tuple[ApplyOutcome, str | None]:
    """Succeeded only for a report that says Applied, of the plan's bytes, on the plan's
    database; otherwise Unknown, and why."""
    if report is None:
        return ApplyOutcome.UNKNOWN, lost
    applied = report.apply
    if report.error is not None:
        return ApplyOutcome.UNKNOWN, f"the Apply failed ({report.error.reason})"
    if applied is None:
        return ApplyOutcome.UNKNOWN, "its result holds no outcome"
    if applied.outcome != ApplyOutcomeReport.APPLIED:
        return (
            ApplyOutcome.UNKNOWN,
            f"the Apply ended {applied.outcome.value} ({applied.reason or 'no reason given'})",
        )
    if digest is None or applied.plan_digest != digest:
        return ApplyOutcome.UNKNOWN, "the Apply ran bytes whose digest is not the plan's"
    if report.target_identity_digest != claim.target_identity_digest:
        return ApplyOutcome.UNKNOWN, "the Apply names another database than the plan's"
    return ApplyOutcome.SUCCEEDED, lost


def _record(
    claim: ActiveOperation,
    plan_ref: PlanReference,
    digest: str | None,
    outcome: ApplyOutcome,
    started_at: dt.datetime | None,
    finished_at: dt.datetime,
) -> ApplyRecord:
    """status.lastApply: the Apply's end, with everything its claim carried."""
    return ApplyRecord(
        operation_id=claim.operation_id,
        outcome=outcome,
        reason=Reason.APPLY_OUTCOME_UNKNOWN if outcome == ApplyOutcome.UNKNOWN else None,
        plan=plan_ref,
        plan_digest=digest,
        approval=claim.approval,
        approver=claim.approver,
        job=JobReference(
            name=claim.job_name or job_name(OperationType.APPLY, claim.operation_id),
            uid=claim.job_uid,
        ),
        started_at=started_at or claim.started_at,
        finished_at=finished_at,
        target_identity_digest=claim.target_identity_digest,
        authorization=claim.authorization,
        source=claim.source,
        execution_binding=claim.execution_binding,
        generation=claim.generation,
        spec_digest=claim.spec_digest,
    )


def _finished_entry(
    claim: ActiveOperation,
    plan_ref: PlanReference,
    record: ApplyRecord,
    outcome: ApplyOutcome,
    when: dt.datetime,
) -> JournalEntry:
    """The ApplyFinished journal entry of the record."""
    return JournalEntry(
        type=JournalEntryType.APPLY_FINISHED,
        time=when,
        operation_id=claim.operation_id,
        plan_name=plan_ref.name,
        plan_uid=plan_ref.uid,
        plan_fingerprint=plan_ref.fingerprint,
        approval_name=claim.approval.name if claim.approval else None,
        approval_uid=claim.approval.uid if claim.approval else None,
        approver=claim.approver,
        job_name=record.job.name if record.job else None,
        job_uid=record.job.uid if record.job else None,
        authorization=claim.authorization,
        outcome=JournalOutcome(outcome.value),
        reason=record.reason,
    )


def _wait(draft: SchemaDraft, approval: PtahSchemaApproval | None, why: str) -> None:
    ref = draft.status.plan
    assert ref is not None
    if approval is not None:
        # An approved plan about to run is coming on its own.
        draft.stand(approved(ref.name, f"the Apply waits: {why}"))
    else:
        draft.stand(ready_to_apply(ref.name, f"it waits: {why}"))


def _end_unknown(
    draft: SchemaDraft, claim: ActiveOperation, job: JobState | None, why: str
) -> None:
    """The Apply ended with no outcome: recorded, and proved (SCH-25)."""
    _end(draft, claim, job, None, why)


APPLY = apply_follow.ApplyFamily[SchemaDraft](
    run="Apply",
    cap_subject="it",
    lease_lost_running="the database-realm Lease changed hands; its result will be discarded",
    awaiting_result="its result is awaited",
    applying=applying,
    accept=_accept,
    track_lease=leases.track,
    undispatched=_undispatched_claim,
    remake=_remake,
    end_unknown=_end_unknown,
    end_reported=_end_reported,
)
"""How a schema's Apply claims are followed (apply_follow.py): an Apply with no outcome is
recorded Unknown and proved."""
