"""The Apply operation: a run of exactly the approved sequence, and what its end decides.

Starting one (PATH-09, JOB-05): every gate holds (no suspend, the realm admits it, the plan
fits, an exact approval under OnApproval or the policy under Always, the snapshot exists, no
unresolved run: `held`, whatever else a restored or edited status says), and the
database-realm Lease is free. The Decision takes the Lease
(LeaseAction Acquire, holder = the operation id) before it writes the claim, and the claim
before the Job (JOB-04); the claim carries the plan, the approval, the approver, the
authorization, the source, the planned database and the execution binding, so the run's
record never depends on any of them still existing (RUN-10). The Job carries the plan's
sequence, which the runner compares with Ptah's own selection under the lock (MIG-49).

While it runs:
- The Job appearing is the dispatch: the claim records the Job's UID, and the approval is
  consumed then, with an ApprovalAccepted entry (JNL-05). Until then, a claim whose inputs
  moved (source, spec, execution binding, plan, approval, realm, suspend) is withdrawn:
  Pending, the Lease released, and the approval left to the next claim (MIG-20, APR-13).
  Choice: a deleted approval withdraws an undispatched claim, since it was a person's consent.
- Once dispatched it never gives way (RETRY-08), not to suspend either (SUS-02): it is
  observed to its end.
- The Lease epoch the claim first held is remembered; if the Lease changes hands while the run
  holds it, leaseContinuityLost is set before any result is read, and the result is discarded
  (LCK-10, LCK-11): the run's outcome is then unknown.

Its end (lastRun written, one RunFinished entry, and the Lease released once that write is on
record; a release the manager did not get to is done by a later pass, `release_ended`):
- UpToDate, Applied, or Failed after it selected: VerifyingHistory for one pass, then the
  read that confirms it (MIG-17, MIG-22, RUN-04).
- Failed before it selected anything (including a refused expected sequence, RUN-20, and a
  snapshot refused before the run container started): Failed, retried from resolution after
  failureRetryInterval; a later plan needs a new approval (MIG-18, MIG-44, MIG-45). lastRun
  records the result's error reason, by which planning.replayed tells a refusal that passes on
  its own (the same plan runs again under Always) from one that does not (it waits for a
  person's approval of it).
- Partial or Unknown, or a dispatched Job that left no readable result: Blocked with reason
  ApplyOutcomeUnknown and the run held in status.unresolvedRun (MIG-19, MIG-46, RUN-03).
"""

from __future__ import annotations

import contextlib
import datetime as dt

from ptah_operator.api.approvals import PtahMigrationApproval
from ptah_operator.api.common import ActiveOperation, JobReference
from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    EventReason,
    OperationType,
    Reason,
    RunOutcome,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import OperationReport, run_failure, run_stopped_at
from ptah_operator.api.migration import LastRun
from ptah_operator.api.names import job_name
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile import apply_follow, conditions, leases, sources
from ptah_operator.reconcile.approvals import accepted as approval_accepted
from ptah_operator.reconcile.approvals import authorization_of
from ptah_operator.reconcile.decision import (
    LeaseAction,
    LeaseVerb,
    OperationCredentials,
)
from ptah_operator.reconcile.draft import binding_digest, current_binding, new_claim
from ptah_operator.reconcile.jobs import owner_reference
from ptah_operator.reconcile.migration import approvals, planning, run_records, standings
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.migration.jobs import apply_job
from ptah_operator.reconcile.migration.standings import Standing
from ptah_operator.reconcile.realm import Refusal
from ptah_operator.reconcile.reports import Unreadable, read_report, run_words
from ptah_operator.reconcile.schedule import (
    CLEANUP_CHECK,
    JOB_RECREATE_CHECK,
    LEASE_WAIT,
    interval,
)
from ptah_operator.reconcile.world import JobState, OperationResult


def start(
    draft: MigrationDraft, plan: PtahMigrationPlan, approval: PtahMigrationApproval | None
) -> None:
    """Take the Lease, claim the Apply and create its Job, or say what it waits for."""
    status = draft.status
    ref = status.plan
    assert ref is not None
    if status.unresolved_run is not None:
        held(draft)
        return
    record = status.source
    if record is None or not sources.ensure(draft, record):
        draft.fail(Reason.SNAPSHOT_MISSING, "the snapshot the plan was made from is gone")
        return
    if record.snapshot_name is not None and record.snapshot_name not in draft.world.snapshots:
        _wait(draft, approval, "its snapshot is being put back", CLEANUP_CHECK)
        return
    operation_id = draft.world.new_operation_id
    if not leases.free_for(draft, operation_id):
        _wait(draft, approval, "the database-realm Lease is held by another operation", LEASE_WAIT)
        return
    try:
        job = apply_job(draft.migration, draft.world.runner, operation_id, record, plan)
    except ValueError as exc:
        draft.operation_failed(OperationType.APPLY, Reason.JOB_NOT_BUILT)
        draft.warning(EventReason.OPERATION_FAILED, f"the Apply Job could not be built: {exc}")
        # The plan comes back from the next reading, and an approval of it is still unused.
        status.plan = None
        draft.fail(Reason.JOB_NOT_BUILT, f"the Apply Job could not be built: {exc}")
        return
    lease_name = leases.name(draft)
    claim = new_claim(
        draft,
        OperationType.APPLY,
        operation_id,
        source=record,
        plan=ref,
        **authorization_of(approval),
        target_identity_digest=plan.spec.target_identity_digest,
        lease_name=lease_name,
    )
    draft.leases.append(
        LeaseAction(LeaseVerb.ACQUIRE, lease_name, leases.namespace(draft), operation_id)
    )
    status.active_operation = claim
    draft.create(
        OperationCredentials(operation_id, draft.namespace, owner_reference(draft.migration))
    )
    draft.create(job)
    draft.stand(standings.applying(ref.name))


def held(draft: MigrationDraft) -> None:
    """The no-unresolved-run gate (MIG-46): a run held in status.unresolvedRun, which a
    restored or edited status can put beside a published plan and an exact approval, lets no
    Apply start. The plan is retired, as a reading beside the hold retires it, and the
    resource is Blocked until a read or a person settles the run (MIG-47)."""
    status = draft.status
    hold = status.unresolved_run
    assert hold is not None
    planning.retire(draft, "an unresolved run holds the migration")
    draft.stand(standings.blocked(Reason.APPLY_OUTCOME_UNKNOWN, run_records.hold_message(hold)))
    if status.next_reconciliation_time is not None:
        draft.wake_at(status.next_reconciliation_time)


def observe(draft: MigrationDraft, claim: ActiveOperation, refusal: Refusal | None) -> None:
    """Follow an Apply claim to its end (apply_follow.py, with the migration's ends)."""
    apply_follow.observe(draft, APPLY, claim, refusal)


def _undispatched(
    draft: MigrationDraft, claim: ActiveOperation, name: str, refusal: Refusal | None
) -> None:
    """No Job of the claim exists, and none may have been made: withdrawn if anything moved,
    refused if the API server refused its Job, else asked for again."""
    status = draft.status
    why = _withdrawal(draft, claim, refusal)
    if why is None and status.unresolved_run is not None:
        # The gate again (MIG-46): a claim whose Job never showed, beside a held run (as
        # a restored or edited status can hold them), asks for no Job.
        status.active_operation = None
        _release(draft, claim)
        held(draft)
        return
    if why is not None:
        _withdraw(draft, claim, why, refusal)
    elif name in draft.world.job_refusals:
        _job_refused(draft, claim, name, draft.world.job_refusals[name])
    else:
        _recreate(draft, claim)


def _track_lease(draft: MigrationDraft, claim: ActiveOperation) -> ActiveOperation:
    """Record the epoch the run holds the Lease at, or that it lost it (LCK-10)."""
    lease = draft.world.lease
    if claim.lease_epoch is None and lease is not None and lease.holder == claim.operation_id:
        claim = claim.model_copy(
            update={"lease_epoch": lease.epoch, "lease_name": claim.lease_name or lease.name}
        )
    elif (
        claim.lease_epoch is not None
        and not claim.lease_continuity_lost
        and (
            lease is None or lease.holder != claim.operation_id or lease.epoch != claim.lease_epoch
        )
    ):
        claim = claim.model_copy(update={"lease_continuity_lost": True})
        draft.warning(
            EventReason.LEASE_CONTINUITY_LOST,
            f"the database-realm Lease changed hands while Apply {claim.operation_id} held it",
        )
    return claim


def _end_reported(
    draft: MigrationDraft, claim: ActiveOperation, job: JobState | None, result: OperationResult
) -> None:
    """The run's result counts: its end is what it reports, or Unknown if it says none."""
    report = read_report(
        result, OperationReport, claim.operation_id, OperationType.APPLY, draft.uid
    )
    if isinstance(report, Unreadable):
        _end_unknown(draft, claim, job, f"the run's result cannot be read: {report.why}")
    elif report.run is None:
        _end_unknown(draft, claim, job, "the run's result holds no outcome")
    else:
        _end(draft, claim, report)


# --- before dispatch ---------------------------------------------------------------------------


def _withdrawal(
    draft: MigrationDraft, claim: ActiveOperation, refusal: Refusal | None
) -> str | None:
    """What moved under an Apply claim whose Job does not exist yet, or None."""
    world = draft.world
    if refusal is not None:
        return refusal.message
    if draft.spec.suspend:
        return "spec.suspend is set"
    if sources.record_moved(draft, claim.source):
        return "the source changed"
    if claim.generation != draft.generation:
        return f"the spec changed (generation {draft.generation})"
    if binding_digest(claim.execution_binding) != binding_digest(current_binding(world)):
        return "the execution binding changed"
    ref = claim.plan
    plan = world.plans.get(ref.name) if ref is not None else None
    if ref is None or plan is None or plan.metadata.uid != ref.uid:
        return "the plan is gone"
    current = draft.status.plan
    if current is None or current.uid != ref.uid:
        return "the plan was retired"
    if claim.approval is not None and not approvals.still_there(
        world.approvals, claim.approval.uid
    ):
        return f"approval {claim.approval.name} was deleted"
    if claim.lease_continuity_lost:
        return "the database-realm Lease changed hands"
    return None


def _withdraw(
    draft: MigrationDraft, claim: ActiveOperation, why: str, refusal: Refusal | None
) -> None:
    """The Apply is withdrawn before any Job existed: nothing ran, nothing is consumed."""
    draft.status.active_operation = None
    _release(draft, claim)
    reason: str = Reason.OPERATION_IN_PROGRESS
    if refusal is not None:
        reason = refusal.reason
    elif draft.spec.suspend:
        reason = Reason.SUSPENDED
    elif sources.record_moved(draft, claim.source) or why.startswith("the plan"):
        reason = Reason.PLAN_STALE
        planning.retire(draft, why)
    draft.stand(standings.pending(reason, f"the Apply was withdrawn before its Job existed: {why}"))
    draft.rely_on_own_write()


def _remake(draft: MigrationDraft, claim: ActiveOperation) -> bool:
    """Ask again for the Job this manager made and no cache shows; with its plan or snapshot
    gone it cannot be asked for."""
    plan = draft.world.plans.get(claim.plan.name) if claim.plan is not None else None
    record = claim.source
    if plan is None or record is None:
        return False
    # (A manifest that cannot be built now asks for nothing: the one asked for is only read.)
    with contextlib.suppress(ValueError):
        draft.create(
            apply_job(draft.migration, draft.world.runner, claim.operation_id, record, plan)
        )
    return True


def _recreate(draft: MigrationDraft, claim: ActiveOperation) -> None:
    """Nothing moved and the Job is not there (yet): ask for it again, idempotently."""
    ref = claim.plan
    plan = draft.world.plans.get(ref.name) if ref is not None else None
    record = claim.source
    assert plan is not None
    assert record is not None
    if not sources.ensure(draft, record):
        _withdraw(draft, claim, "the snapshot is gone", None)
        return
    job = apply_job(draft.migration, draft.world.runner, claim.operation_id, record, plan)
    draft.create(
        OperationCredentials(claim.operation_id, draft.namespace, owner_reference(draft.migration))
    )
    draft.create(job)
    draft.stand(standings.applying(plan.metadata.name or ""))
    draft.wake_in(JOB_RECREATE_CHECK)


def _job_refused(draft: MigrationDraft, claim: ActiveOperation, name: str, why: str) -> None:
    """The API server refused the Apply Job (admission, a quota): none exists and none will
    as built, so nothing ran and nothing is consumed. Failed, the Lease given back; the plan
    comes back from the next reading, after failureRetryInterval (MIG-21, JOB-06). The plan
    stays in status.plan, not retired: a reading that computes it again keeps its
    publication, so the approval the Apply never used still names it (APR-13)."""
    status = draft.status
    status.active_operation = None
    _release(draft, claim)
    message = f"the API server refused Apply Job {name}: {why}"
    draft.operation_failed(OperationType.APPLY, Reason.JOB_REFUSED)
    draft.warning(
        EventReason.OPERATION_FAILED,
        f"Apply {claim.operation_id} did not start: the API server refused Job {name}; "
        f"it starts again from resolution after {draft.spec.execution.failure_retry_interval}",
    )
    draft.fail(Reason.JOB_REFUSED, message)


def _accept(draft: MigrationDraft, claim: ActiveOperation) -> None:
    """The Apply consumed its approval: the Job exists (JNL-05, APR-11)."""
    approval_accepted(draft, claim)


# --- the end -----------------------------------------------------------------------------------


def _end(draft: MigrationDraft, claim: ActiveOperation, report: OperationReport) -> None:
    run = report.run
    assert run is not None
    record = run_records.last_run(
        claim,
        _job_ref(claim),
        run.outcome,
        applied=list(run.applied_versions),
        started_at=report.started_at,
        finished_at=report.finished_at or draft.now,
        failure=run_failure(run.failure) if run.failure is not None else None,
        stopped_at=run_stopped_at(run.stopped_at) if run.stopped_at is not None else None,
        target_identity_digest=report.target_identity_digest,
        message=run_words(run, report.error),
        reason=_refusal_reason(report),
    )
    _close(draft, claim, record)
    outcome = run.outcome
    if outcome in (RunOutcome.PARTIAL, RunOutcome.UNKNOWN):
        _hold(draft, claim, record)
    elif outcome == RunOutcome.FAILED and not run.selected:
        draft.fail(
            Reason.RUN_FAILED,
            f"run {claim.operation_id} stopped before it selected a migration and ran none; "
            "it starts again from resolution, and a plan needs a new approval",
        )
    else:
        if outcome == RunOutcome.FAILED:
            conditions.record_failure(
                draft.status,
                Reason.RUN_FAILED,
                record.message or f"run {claim.operation_id} failed",
                draft.now,
                draft.generation,
            )
        else:
            conditions.clear_failure(draft.status)
        draft.stand(standings.verifying_history(claim.operation_id))
        draft.rely_on_own_write()


def _refusal_reason(report: OperationReport) -> str | None:
    """The error reason of a run that stopped before it selected anything, when the result
    gives one (a closed code: api/contracts/codes.py ErrorReason)."""
    run = report.run
    if report.error is None or run is None or run.selected:
        return None
    return report.error.reason


def _end_unknown(
    draft: MigrationDraft, claim: ActiveOperation, job: JobState | None, why: str
) -> None:
    """A dispatched run nobody can account for: Unknown, held (MIG-19)."""
    record = run_records.last_run(
        claim,
        _job_ref(claim),
        RunOutcome.UNKNOWN,
        applied=[],
        started_at=None,
        finished_at=(job.finished_at if job is not None and job.finished_at else draft.now),
        failure=None,
        target_identity_digest=None,
        message=why,
    )
    _close(draft, claim, record)
    _hold(draft, claim, record, read_now=True)


def _end_refused(draft: MigrationDraft, claim: ActiveOperation, job: JobState) -> None:
    """The init container refused the snapshot: the run container never started, so the run
    stopped before it selected anything (MIG-21)."""
    record = run_records.last_run(
        claim,
        _job_ref(claim),
        RunOutcome.FAILED,
        applied=[],
        started_at=None,
        finished_at=job.finished_at or draft.now,
        failure=None,
        target_identity_digest=None,
        message="the snapshot was refused before the run started; nothing ran",
        reason=ErrorReason.SNAPSHOT_REFUSED,
    )
    _close(draft, claim, record)
    draft.fail(
        Reason.SNAPSHOT_MISSING,
        f"Apply {claim.operation_id} was refused its snapshot before it started; "
        "it starts again from resolution, and a plan needs a new approval",
    )


def _close(draft: MigrationDraft, claim: ActiveOperation, record: LastRun) -> None:
    status = draft.status
    planning.record_end(status, record)
    status.last_run = record
    status.active_operation = None
    status.plan = None
    _release(draft, claim)
    draft.journal(run_records.run_finished(record, record.finished_at or draft.now))
    applied = len(record.applied_versions)
    message = (
        f"run {claim.operation_id} of plan {record.plan.name} ended {record.outcome.value}: "
        f"{applied} migration(s) applied"
    )
    stopped = run_records.stopped_version(record)
    if stopped is not None:
        message += f", stopped at version {stopped}"
    if record.outcome in (RunOutcome.APPLIED, RunOutcome.UP_TO_DATE):
        draft.normal(EventReason.RUN_FINISHED, message)
    else:
        draft.warning(EventReason.RUN_FINISHED, message)


def _hold(
    draft: MigrationDraft, claim: ActiveOperation, record: LastRun, *, read_now: bool = False
) -> None:
    """Hold the run Blocked until a reading or a person settles it. A run nobody can account
    for (`read_now`: no result received, or none to believe) has its database read back at
    once rather than at the next interval: the run may well have applied everything."""
    status = draft.status
    hold = run_records.hold_of(record, claim)
    status.unresolved_run = hold
    draft.annotations[ANNOTATION_UNRESOLVED_RUN] = run_records.hold_annotation(hold)
    message = run_records.hold_message(hold)
    conditions.record_failure(
        status, Reason.APPLY_OUTCOME_UNKNOWN, record.message or message, draft.now, draft.generation
    )
    status.next_reconciliation_time = draft.now + (
        dt.timedelta(0) if read_now else interval(draft.migration)
    )
    draft.wake_at(status.next_reconciliation_time)
    draft.stand(standings.blocked(Reason.APPLY_OUTCOME_UNKNOWN, message))


def release_ended(draft: MigrationDraft) -> None:
    """Give back the Lease this resource's ended run still holds.

    A run's Lease is released after the status write that records its end (decision.py), so
    when the manager stopped between the two, or the release itself failed, the Lease is
    still held by a run that status.lastRun says has ended; no claim will release it, and
    every Apply on the database would wait for it to expire. This pass releases it again.
    """
    lease = draft.world.lease
    run = draft.status.last_run
    if lease is None or lease.holder is None or run is None or lease.holder != run.operation_id:
        return
    claim = draft.status.active_operation
    if claim is not None and claim.operation_id == lease.holder:
        return
    leases.release_held(draft)


def release_orphan(draft: MigrationDraft) -> None:
    """Give back a Lease this resource took but never recorded (leases.release_orphan): the
    operation ids recorded are the claim, lastRun and the unresolved run of the stored and the
    new status. The release is announced with an Event."""
    recorded: list[str | None] = []
    for status in (draft.stored, draft.status):
        if status is None:
            continue
        recorded += [
            status.active_operation.operation_id if status.active_operation else None,
            status.last_run.operation_id if status.last_run else None,
            status.unresolved_run.operation_id if status.unresolved_run else None,
        ]
    lease = draft.world.lease
    if lease is not None and leases.release_orphan(draft, recorded):
        draft.normal(
            EventReason.LEASE_RELEASED,
            f"released the database-realm Lease that operation {lease.holder} took but never "
            "recorded (the manager stopped in between)",
        )


def _release(draft: MigrationDraft, claim: ActiveOperation) -> None:
    lease_name = claim.lease_name or leases.name(draft)
    draft.leases.append(
        LeaseAction(LeaseVerb.RELEASE, lease_name, leases.namespace(draft), claim.operation_id)
    )


def _job_ref(claim: ActiveOperation) -> JobReference:
    """The run's Job as the claim recorded it (runs.run_job holds a Job seen under its name to
    the UID the claim recorded)."""
    name = claim.job_name or job_name(OperationType.APPLY, claim.operation_id)
    return JobReference(name=name, uid=claim.job_uid)


def _wait(
    draft: MigrationDraft, approval: PtahMigrationApproval | None, why: str, delay: dt.timedelta
) -> None:
    ref = draft.status.plan
    assert ref is not None
    standing: Standing
    if approval is not None:
        standing = standings.approved(ref.name, f"the Apply waits: {why}")
    else:
        standing = standings.ready_to_apply(ref.name, f"it waits: {why}")
    draft.stand(standing)
    draft.wake_in(delay)


APPLY = apply_follow.ApplyFamily[MigrationDraft](
    run="run",
    cap_subject="the run",
    lease_lost_running="",
    awaiting_result="",
    applying=standings.applying,
    accept=_accept,
    track_lease=_track_lease,
    undispatched=_undispatched,
    remake=_remake,
    end_unknown=_end_unknown,
    end_reported=_end_reported,
    end_refused=_end_refused,
)
"""How a migration's Apply claims are followed (apply_follow.py): a run with no outcome is
held Unknown and read back; a snapshot refused before the run container started ends it."""
