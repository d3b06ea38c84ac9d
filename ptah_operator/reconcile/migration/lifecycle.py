"""reconcile_migration(world) -> Decision: one pass of a PtahMigration's lifecycle, pure.

The phases and the moves between them are the seeds' (000 first, then the Decisions section
of REQUIREMENTS.md). A pass does, in order:

1. The engine and realm checks (LCK-06; realm.py). They never interrupt an Apply that was
   dispatched or the read that proves one; an undispatched Apply is withdrawn and a plain read
   dropped, and a resource with no claim is Blocked with no Job.
2. With a claim in flight, it follows that claim: an Apply (apply.py) to its end, a read
   (reads.py) to its verdict (history.py), retry or give-way. A plain read is dropped
   to Pending when spec.suspend is set or its inputs moved (MIG-28, SUS-06).
3. With none: a hold put back from metadata (MIG-24), a person's acknowledgment of a held run
   (RUN-06), an invalid read request (RRQ-16), spec.suspend (MIG-25), the source kind and the
   source itself (MIG-26), the proof owed after a run (MIG-22), a plan that no longer fits
   (MIG-16), a read that is due (new, Pending, resumed, an edit, a moved source, a request,
   the interval, a retry), and otherwise the published plan's policy (planning.py).
4. Whatever the pass decided: a Lease still held by the resource's own ended run is given
   back (apply.release_ended), and so is one it took but never recorded
   (apply.release_orphan).

One pass ends at most one operation or starts one, so every verdict is visible in status
before what it allows begins. A ConfigMap source's "Resolving" never shows: the snapshot is
taken in the write that claims the read (SRC-CM-06), and a new resource has no phase until
that write.

Choices where the seeds are silent (each module's docstring has its own):

- Git and OCI sources: every due read starts with a Resolve Job (an OCI digest then a Verify
  Job), each ending in its own pass; the History read follows in the next (source_read.py).
  A verification policy ConfigMap that does not exist is Failed, ConfigurationError, retried
  after failureRetryInterval (its watch wakes the resource sooner).
- A read dropped by a realm or engine refusal goes to Blocked directly, in the write that
  drops it; a read dropped by spec.suspend goes to Pending for one pass, then Suspended
  (Decision 14).
- Progressing reasons beyond the seeds': Pending uses the cause (PlanStale, Suspended,
  OperationInProgress), Failed is Progressing=False with the failure's reason, Suspended uses
  Suspended; ReconciliationFailed is removed, not set False, once a later operation succeeds.
- When the interval or a read request comes due while an exact approval (or apply: Always)
  lets an Apply start, the Apply goes first: the runner compares the approved sequence with
  its own selection under the lock (MIG-50), so a history that moved is refused there, and the
  request is answered by the read after the run.
- A plan that does not appear in the cache within failureRetryInterval "could not be
  published": Failed, ConfigurationError (MIG-26).
- The approval is consumed when the Apply's Job first shows (its dispatch), not when the claim
  is written, so an Apply withdrawn before its Job existed leaves it usable (APR-13).
- A dispatched Apply's result is awaited RESULT_GRACE after its Job ended before the run is
  declared unknown; a History's likewise before the attempt counts as failed.
- Events name operations, plans, versions and reasons; they carry no runner or database text.
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    ApplyPolicy,
    ConditionType,
    EventReason,
    MigrationPhase,
    OperationType,
    Reason,
    SourceKind,
)
from ptah_operator.reconcile import conditions, realm, sources
from ptah_operator.reconcile import reads as core
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.draft import current_binding
from ptah_operator.reconcile.migration import (
    apply,
    approvals,
    planning,
    reads,
    run_records,
    source_read,
    standings,
)
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.migration.plans import misfit
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.read_request import answer_invalid, unanswered
from ptah_operator.reconcile.realm import Refusal
from ptah_operator.reconcile.schedule import PLAN_PUBLISH_CHECK, interval

_STARTING_PHASES = frozenset(
    {
        MigrationPhase.PENDING,
        MigrationPhase.SUSPENDED,
        MigrationPhase.READING,
        MigrationPhase.APPLYING,
        MigrationPhase.RESOLVING,
        MigrationPhase.VERIFYING,
    }
)
_READS = frozenset({OperationType.HISTORY, OperationType.RESOLVE, OperationType.VERIFY})
_ANSWERING_PHASES = frozenset(
    {
        MigrationPhase.IN_SYNC,
        MigrationPhase.BLOCKED,
        MigrationPhase.AWAITING_APPROVAL,
        MigrationPhase.PLANNING,
    }
)
READ_CYCLE = core.ReadCycle(
    starting=_STARTING_PHASES,
    answering=_ANSWERING_PHASES,
    blocked=MigrationPhase.BLOCKED,
    failed=MigrationPhase.FAILED,
    policy_moves_source=True,
)
"""A migration's phases as the read cycle sees them (reads.read_due)."""


def reconcile_migration(world: MigrationWorld) -> Decision:
    """Decide one pass for one PtahMigration."""
    draft = MigrationDraft.begin(world)
    refusal = realm.refusal(draft)
    claim = draft.status.active_operation
    if claim is not None:
        _claimed(draft, claim, refusal)
    else:
        _idle(draft, refusal)
    apply.release_ended(draft)
    apply.release_orphan(draft)
    return draft.finish()


# --- a claim in flight -------------------------------------------------------------------------


def _claimed(draft: MigrationDraft, claim: ActiveOperation, refusal: Refusal | None) -> None:
    if claim.type == OperationType.APPLY:
        apply.observe(draft, claim, refusal)
        return
    if claim.type not in _READS:
        reads.drop(draft, claim)
        draft.stand(
            standings.pending(
                Reason.OPERATION_IN_PROGRESS,
                f"a {claim.type.value} operation is not one a PtahMigration runs",
            )
        )
        draft.rely_on_own_write()
        return
    if not claim.serves_proof:
        if refusal is not None:
            reads.drop(draft, claim)
            _refuse(draft, refusal)
            return
        if draft.spec.suspend:
            reads.drop(draft, claim)
            draft.stand(standings.pending(Reason.SUSPENDED, "spec.suspend dropped the read"))
            draft.rely_on_own_write()
            return
        moved = reads.inputs_moved(draft, claim)
        if moved is not None:
            reads.give_way(draft, claim, moved)
            return
    reads.observe(draft, claim)


# --- no claim ----------------------------------------------------------------------------------


def _plan_no_longer_fits(draft: MigrationDraft) -> bool:
    """A published plan that no longer fits its inputs is retired and the history read again."""
    ref = draft.status.plan
    current = sources.current(draft)
    if ref is None or current is None:
        return False
    why = misfit(
        draft.world.plans.get(ref.name),
        ref,
        draft.migration,
        current,
        current_binding(draft.world),
    )
    if why is None:
        return False
    planning.retire(draft, why)
    draft.stand(
        standings.pending(
            Reason.PLAN_STALE,
            f"plan {ref.name} no longer fits: {why}; the history is read again",
        )
    )
    draft.rely_on_own_write()
    return True


def _idle(draft: MigrationDraft, refusal: Refusal | None) -> None:
    status = draft.status
    if _restore_hold(draft):
        return
    if refusal is not None:
        _refuse(draft, refusal)
        return
    settled = _acknowledged(draft)
    request = unanswered(draft.migration)
    if request is not None and not request.valid:
        answer_invalid(draft, request)
        request = None
    if draft.spec.suspend:
        draft.stand(standings.suspended())
        return
    if status.phase == MigrationPhase.VERIFYING_HISTORY and status.unresolved_run is None:
        reads.start(draft, proof=True)
        return
    problem = sources.policy_problem(draft, _policy_refused) or (
        source_read.problem(draft)
        if sources.read_by_job(draft)
        else sources.config_map_problem(draft)
    )
    if problem is not None:
        reason, message = problem
        planning.retire(draft, message)
        sources.unresolved(draft, reason, message)
        draft.fail(reason, message)
        return
    if _continue_source_read(draft):
        return
    if _plan_no_longer_fits(draft):
        return
    due = (
        core.Due.STRUCTURAL
        if settled
        else core.read_due(draft, draft.status.phase, request, READ_CYCLE)
    )
    if due == core.Due.STRUCTURAL or (due != core.Due.NO and not _apply_ready(draft)):
        reads.start(draft, proof=False, request=request if request else None)
        return
    if status.plan is not None and not _apply_refused(draft):
        _plan_step(draft)
    if status.active_operation is None and status.next_reconciliation_time is not None:
        draft.wake_at(status.next_reconciliation_time)


def _continue_source_read(draft: MigrationDraft) -> bool:
    """The pass after a Resolve or a Verify of this generation ended well starts the next
    operation of the same read: Verify after an OCI digest is pinned (MIG-06), the History
    read once the commit is resolved or the digest verified (MIG-06, MIG-07)."""
    status = draft.status
    if not sources.read_by_job(draft) or status.observed_generation != draft.generation:
        return False
    record = status.source
    if status.phase == MigrationPhase.VERIFYING:
        if (
            record is not None
            and record.kind == SourceKind.ARTIFACT
            and record.oci_digest is not None
            and record.verified_at is None
            and sources.names_spec_source(draft, record)
        ):
            source_read.start_verify(draft, record)
            return True
        return False
    pinned = sources.pinned(draft)
    if status.phase == MigrationPhase.READING and pinned is not None:
        reads.start(draft, proof=False, pinned=pinned)
        return True
    return False


def _apply_ready(draft: MigrationDraft) -> bool:
    """A published plan that an Apply may start on now (its policy or an exact approval)."""
    status = draft.status
    ref = status.plan
    if ref is None or ref.uid is None or status.unresolved_run is not None:
        return False
    if status.phase not in (MigrationPhase.AWAITING_APPROVAL, MigrationPhase.PLANNING):
        return False
    policy = draft.spec.policy.apply
    if policy == ApplyPolicy.NEVER:
        return False
    if not planning.needs_approval(draft, ref):
        return True
    used = approvals.consumed(status)
    return approvals.exact_approval(draft.world.approvals, draft.migration, ref, used) is not None


def _apply_refused(draft: MigrationDraft) -> bool:
    """The last Apply's Job was refused (`apply._job_refused`): its plan stays published, so
    that the approval it never used still names it (APR-13), but no Apply starts again before
    the reading after failureRetryInterval (MIG-31)."""
    failed = draft.status.condition(ConditionType.RECONCILIATION_FAILED)
    return (
        draft.status.phase == MigrationPhase.FAILED
        and failed is not None
        and failed.status == "True"
        and failed.reason == Reason.JOB_REFUSED
    )


def _plan_step(draft: MigrationDraft) -> None:
    """A published plan, no read due: its policy decides (MIG-11..MIG-14)."""
    status = draft.status
    ref = status.plan
    assert ref is not None
    if not planning.published(draft):
        if planning.publication_overdue(draft):
            planning.retire(draft, "its object never appeared")
            draft.fail(Reason.CONFIGURATION_ERROR, f"plan {ref.name} could not be published")
            return
        count = status.history.pending_count if status.history is not None else 0
        draft.stand(standings.publishing(ref.name, count))
        draft.wake_in(PLAN_PUBLISH_CHECK)
        return
    ref = status.plan
    assert ref is not None
    plan = draft.world.plans.get(ref.name)
    if plan is None:
        return
    policy = draft.spec.policy.apply
    if policy == ApplyPolicy.NEVER:
        draft.stand(standings.apply_disabled(ref.name))
        return
    if not planning.needs_approval(draft, ref):
        apply.start(draft, plan, None)
        return
    used = approvals.consumed(status)
    approval = approvals.exact_approval(draft.world.approvals, draft.migration, ref, used)
    if approval is None:
        draft.stand(standings.awaiting_approval(ref.name, planning.replay_note(draft, ref)))
        return
    apply.start(draft, plan, approval)


def _refuse(draft: MigrationDraft, refusal: Refusal) -> None:
    """Blocked by the engine or the realm; the time of the next read is unknown until it ends."""
    status = draft.status
    if not (
        status.phase == MigrationPhase.BLOCKED and conditions.ready_reason(status) == refusal.reason
    ):
        status.next_reconciliation_time = None
    draft.stand(standings.blocked(refusal.reason, refusal.message))
    if refusal.recheck is not None:
        draft.wake_in(refusal.recheck)


def _restore_hold(draft: MigrationDraft) -> bool:
    """A hold the annotation keeps and status lost: put it back, Blocked (MIG-24, RUN-21)."""
    status = draft.status
    hold = run_records.annotated_hold(draft.migration)
    if hold is None or status.unresolved_run is not None:
        return False
    if status.last_run is not None and status.last_run.operation_id == hold.operation_id:
        return False
    restored = hold.model_copy(update={"restored": True})
    status.unresolved_run = restored
    run = run_records.restored_run(hold)
    planning.record_end(status, run)
    status.last_run = run
    draft.journal(run_records.run_finished(run, hold.finished_at or draft.now))
    draft.warning(
        EventReason.RUN_FINISHED,
        f"run {hold.operation_id} ended {hold.outcome.value}; its hold was restored from "
        "metadata after status was lost",
    )
    message = run_records.hold_message(restored)
    conditions.record_failure(
        status, Reason.APPLY_OUTCOME_UNKNOWN, message, draft.now, draft.generation
    )
    status.next_reconciliation_time = draft.now + interval(draft.migration)
    draft.wake_at(status.next_reconciliation_time)
    draft.stand(standings.blocked(Reason.APPLY_OUTCOME_UNKNOWN, message))
    return True


def _acknowledged(draft: MigrationDraft) -> bool:
    """A person's acknowledgment of the held run settles it (RUN-06, JNL-11)."""
    status = draft.status
    hold = status.unresolved_run
    if hold is None:
        return False
    ack = approvals.acknowledgment_of(draft.world.acknowledgments, draft.migration, hold)
    if ack is None:
        return False
    status.unresolved_run = None
    draft.annotations[ANNOTATION_UNRESOLVED_RUN] = None
    draft.journal(run_records.acknowledged(ack, hold, ack.spec.acknowledged_at or draft.now))
    who = ack.spec.acknowledged_by.username if ack.spec.acknowledged_by else "a person"
    draft.normal(
        EventReason.RUN_ACKNOWLEDGED,
        f"run {hold.operation_id} ({hold.outcome.value}) acknowledged by {who} in {ack.metadata.name}",
    )
    conditions.clear_failure(status)
    return True


def _policy_refused(refusal: sources.PolicyRefusal) -> str:
    """A migration's words for a source policy's refusal: the ConfigMap or the repository."""
    if refusal.config_map is not None:
        return (
            f"source ConfigMap {refusal.config_map} is refused by the source policy "
            f"{refusal.where}: {refusal.rule}"
        )
    return f"the repository is refused by the source policy {refusal.where}: {refusal.rule}"
