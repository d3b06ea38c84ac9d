"""reconcile_schema(world) -> Decision: one pass of a PtahSchema's lifecycle, pure.

The phases and the moves between them are seed 000's (then the Decisions section of
REQUIREMENTS.md); docs/design/schema-path.md gives the contracts and every choice made where
the seeds are silent. A pass does, in order:

1. The settled-apply annotation (proof.settle, Decision 16): a person giving up a proof whose
   target moved.
2. The engine and realm checks (LCK-06, realm.refusal). They never interrupt a dispatched
   Apply or a proof's read; an undispatched Apply is withdrawn and a plain read dropped, and a
   schema with no claim is Blocked with no Job (SCH-31).
3. With a claim in flight, it follows that claim: an Apply (apply.py) to its end, a read
   (reads.py) to its verdict (verdicts.py), retry or give-way. A plain read is dropped to
   Suspended on spec.suspend (SCH-37) and gives way to a new read when its inputs moved
   (SCH-38); a proof's read runs to its end first and is never superseded mid-Job.
4. With none: an invalid read request is answered (RRQ-16), spec.suspend (SCH-32), the proof
   owed after an Apply (SCH-46, SCH-47), the source's problems before any Job (SCH-33), an
   execution component that changed (SCH-35), a verification policy that changed (SCH-34), the
   next operation of a read under way (Verify, Observe, Plan), a plan that went stale (SCH-18,
   SCH-21), a plan being published, a read that is due (new, Pending, resumed, an edit, a moved
   source, a request, the interval, the end of a failure's delay), and otherwise the published
   plan's verdict: Blocked, AwaitingApproval, or an Apply started (SCH-16, SCH-19).
5. Whatever it decided, the database-realm Lease is given back if nothing needs it any more
   (leases.settle).

A ConfigMap source's Resolving never shows: the snapshot is taken in the write that claims the
Observe (SCH-05, SRC-CM-06). A new schema has no phase until that write (SCH-02).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import (
    ApplyPolicy,
    OperationType,
    Reason,
    SchemaPhase,
    SourceKind,
)
from ptah_operator.reconcile import conditions, realm, sources
from ptah_operator.reconcile import reads as core
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.draft import binding_digest, current_binding
from ptah_operator.reconcile.read_request import ReadRequest, answer_invalid, unanswered
from ptah_operator.reconcile.realm import Refusal
from ptah_operator.reconcile.schedule import LEASE_WAIT
from ptah_operator.reconcile.schema import apply, claims, leases, plans, proof, reads
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import blocked, next_up, pending, suspended
from ptah_operator.reconcile.schema.world import SchemaWorld

_READS = frozenset(
    {OperationType.RESOLVE, OperationType.VERIFY, OperationType.OBSERVE, OperationType.PLAN}
)
_STARTING = frozenset(
    {
        SchemaPhase.PENDING,
        SchemaPhase.SUSPENDED,
        SchemaPhase.RESOLVING,
        SchemaPhase.VERIFYING,
        SchemaPhase.OBSERVING,
        SchemaPhase.PLANNING,
        SchemaPhase.APPLYING,
        SchemaPhase.VERIFYING_CONVERGENCE,
    }
)
_ANSWERING = frozenset(
    {
        SchemaPhase.IN_SYNC,
        SchemaPhase.BLOCKED,
        SchemaPhase.READY_TO_APPLY,
        SchemaPhase.AWAITING_APPROVAL,
    }
)


READ_CYCLE = core.ReadCycle(
    starting=_STARTING,
    answering=_ANSWERING,
    blocked=SchemaPhase.BLOCKED,
    failed=SchemaPhase.FAILED,
    policy_moves_source=False,
)
"""A schema's phases as the read cycle sees them (reads.read_due)."""


def reconcile_schema(world: SchemaWorld) -> Decision:
    """Decide one pass for one PtahSchema."""
    draft = SchemaDraft.begin(world)
    if not proof.settle(draft):
        refusal = realm.refusal(draft)
        claim = draft.status.active_operation
        if claim is not None:
            _claimed(draft, claim, refusal)
        else:
            _idle(draft, refusal)
    leases.settle(draft)
    return draft.finish()


# --- a claim in flight -------------------------------------------------------------------------


def _claimed(draft: SchemaDraft, claim: ActiveOperation, refusal: Refusal | None) -> None:
    if claim.type == OperationType.APPLY:
        apply.observe(draft, claim, refusal)
        return
    if claim.type not in _READS:
        reads.drop(draft)
        draft.stand(
            pending(
                Reason.OPERATION_IN_PROGRESS,
                f"a {claim.type.value} operation is not one a PtahSchema runs",
            )
        )
        draft.rely_on_own_write()
        return
    if claim.serves_proof:
        running = reads.in_flight(draft, claim)
        if not running and draft.spec.suspend:
            proof.suspend(draft)
            return
        took_over = proof.superseded(draft)
        if not running and took_over is not None:
            proof.supersede(draft, *took_over)
            return
        reads.observe(draft, claim)
        return
    if refusal is not None:
        reads.drop(draft)
        _refuse(draft, refusal)
        return
    if draft.spec.suspend:
        reads.drop(draft)
        draft.stand(suspended(f"spec.suspend dropped the {claim.type.value}"))
        return
    moved = reads.inputs_moved(draft, claim)
    if moved is not None:
        reads.give_way(draft, claim, moved)
        return
    reads.observe(draft, claim)


# --- no claim ----------------------------------------------------------------------------------


def _idle(draft: SchemaDraft, refusal: Refusal | None) -> None:
    status = draft.status
    if refusal is not None:
        _refuse(draft, refusal)
        return
    request = unanswered(draft.schema)
    if request is not None and not request.valid:
        answer_invalid(draft, request)
        request = None
    if draft.spec.suspend:
        draft.stand(suspended())
        return
    if proof.owed(status):
        took_over = proof.superseded(draft)
        if took_over is not None:
            proof.supersede(draft, *took_over)
        else:
            proof.start(draft)
        return
    if _source_step(draft):
        return
    if _next_operation(draft):
        return
    why = plans.misfit(draft)
    if why is not None:
        plans.retire(draft, why)
        _start_read(draft, None, stale=True)
        return
    if status.plan is not None and status.plan.uid is None:
        phase = (
            SchemaPhase.VERIFYING_CONVERGENCE
            if status.phase == SchemaPhase.VERIFYING_CONVERGENCE
            else SchemaPhase.PLANNING
        )
        if plans.progress(draft, phase):
            plans.stand_verdict(draft)
        return
    due = core.read_due(draft, draft.status.phase, request, READ_CYCLE)
    if due == core.Due.STRUCTURAL or (due != core.Due.NO and not _apply_ready(draft)):
        _start_read(draft, request)
        return
    if status.plan is not None:
        _plan_step(draft)
    if status.active_operation is None and status.next_reconciliation_time is not None:
        draft.wake_at(status.next_reconciliation_time)


def _source_step(draft: SchemaDraft) -> bool:
    """What the source and the executor ask for before anything else, if anything: a source
    that cannot be read fails, a changed execution binding reads the source again, a replaced
    verification policy verifies the pinned digest again. True when this pass did one."""
    status = draft.status
    problem = _source_problem(draft)
    if problem is not None:
        reason, message = problem
        plans.retire(draft, message)
        sources.unresolved(draft, reason, message)
        draft.fail(reason, message)
        return True
    if status.execution_binding is not None and binding_digest(
        status.execution_binding
    ) != binding_digest(current_binding(draft.world)):
        plans.retire(draft, "the execution binding changed")
        draft.stand(
            pending(
                Reason.OPERATION_IN_PROGRESS,
                "the execution binding changed (runner image, protocol or engine version); "
                "the source is read again",
            )
        )
        draft.rely_on_own_write()
        return True
    if sources.policy_changed(draft):
        plans.retire(draft, "the verification policy changed")
        record = status.source
        assert record is not None
        claims.start(draft, OperationType.VERIFY, record.model_copy(update={"verified_at": None}))
        return True
    return False


def _next_operation(draft: SchemaDraft) -> bool:
    """The pass after an operation of this generation ended well starts the next one of the
    same read: Verify once an OCI digest is pinned (SCH-06), Observe once the source is pinned
    (SCH-07, SCH-08), Plan once the drift is read (SCH-10)."""
    status = draft.status
    if status.observed_generation != draft.generation or sources.source_moved(
        draft, policy_moves_source=False
    ):
        return False
    phase = status.phase
    record = status.source
    if phase == SchemaPhase.VERIFYING and sources.read_by_job(draft):
        if (
            record is not None
            and record.kind == SourceKind.ARTIFACT
            and record.oci_digest is not None
            and record.verified_at is None
            and sources.names_spec_source(draft, record)
        ):
            claims.start(draft, OperationType.VERIFY, record)
            return True
        return False
    if phase == SchemaPhase.OBSERVING and sources.read_by_job(draft):
        pinned = sources.pinned(draft)
        if pinned is not None:
            claims.start(draft, OperationType.OBSERVE, pinned)
            return True
        return False
    if phase == SchemaPhase.PLANNING and not _publishing(draft):
        return _start_plan(draft)
    return False


def _publishing(draft: SchemaDraft) -> bool:
    plan = draft.status.plan
    return plan is not None and plan.uid is None


def _start_plan(draft: SchemaDraft) -> bool:
    """Claim the Plan of the drift just read, under its own hold of the Lease (LCK-08)."""
    status = draft.status
    drift = status.drift
    record = status.source
    if drift is None or record is None or sources.record_moved(draft, record):
        return False
    if not sources.ensure(draft, record):
        return False
    operation_id = draft.world.new_operation_id
    if not leases.free_for(draft, operation_id):
        draft.stand(next_up(SchemaPhase.PLANNING, "the plan waits for the database-realm Lease"))
        draft.wake_in(LEASE_WAIT)
        return True
    claims.start(
        draft,
        OperationType.PLAN,
        record,
        target=drift.target_identity_digest,
        lease_holder=operation_id,
    )
    return True


def _start_read(draft: SchemaDraft, request: ReadRequest | None, *, stale: bool = False) -> None:
    """Start the read a due cycle starts: a Resolve Job (Git, OCI, SCH-04), or the snapshot
    and the Observe in one write (ConfigMap, SCH-05). A plan gone stale on a source still
    pinned is observed again at once (SCH-18, SCH-21)."""
    if sources.read_by_job(draft):
        pinned = sources.pinned(draft) if stale else None
        if pinned is not None:
            claims.start(draft, OperationType.OBSERVE, pinned, request=request)
            return
        under = SourceRecord(
            kind=sources.kind(draft), source_policy_digest=sources.source_policy_digest(draft)
        )
        claims.start(draft, OperationType.RESOLVE, under, request=request)
        return
    record = sources.take_snapshot(draft)
    claims.start(draft, OperationType.OBSERVE, record, request=request)


def _apply_ready(draft: SchemaDraft) -> bool:
    """A published plan an Apply may start on now: the interval or a request does not take its
    turn (the Apply's own freshness check under the database's lock refuses a stale plan, and
    the proof reads the database afresh)."""
    plan = plans.published(draft)
    if plan is None:
        return False
    phase, _ = plans.verdict(draft, plan)
    if phase == SchemaPhase.READY_TO_APPLY:
        return leases.free_for(draft, draft.world.new_operation_id)
    ref = draft.status.plan
    if phase == SchemaPhase.AWAITING_APPROVAL and ref is not None:
        return plans.exact_approval(draft, ref) is not None and leases.free_for(
            draft, draft.world.new_operation_id
        )
    return False


def _plan_step(draft: SchemaDraft) -> None:
    """A published plan, no read due: its verdict decides (SCH-12..SCH-14, SCH-16, SCH-19)."""
    ref = draft.status.plan
    assert ref is not None
    plan = plans.published(draft)
    if plan is None:
        return
    phase, standing = plans.verdict(draft, plan)
    if phase == SchemaPhase.READY_TO_APPLY and draft.spec.policy.apply == ApplyPolicy.ALWAYS:
        apply.start(draft, plan, None)
        return
    if phase == SchemaPhase.AWAITING_APPROVAL:
        approval = plans.exact_approval(draft, ref)
        if approval is not None:
            apply.start(draft, plan, approval)
            return
    draft.stand(standing)


def _refuse(draft: SchemaDraft, refusal: Refusal) -> None:
    """Blocked by the engine or the realm (SCH-31, SCH-50, SCH-51)."""
    status = draft.status
    if not (
        status.phase == SchemaPhase.BLOCKED and conditions.ready_reason(status) == refusal.reason
    ):
        status.next_reconciliation_time = None
    draft.stand(blocked(refusal.reason, refusal.message))
    if refusal.recheck is not None:
        draft.wake_in(refusal.recheck)


def _source_problem(draft: SchemaDraft) -> tuple[Reason, str] | None:
    """Why the source cannot be read now, before any Job (SCH-33): the source policy refuses
    it (SRC-POL-02, SRC-POL-03, SRC-POL-05), a policy or the source ConfigMap is missing or
    unreadable (a configuration error), or a ConfigMap's files cannot be a snapshot."""
    problem = sources.policy_problem(draft, _policy_refused)
    if problem is not None:
        return problem
    spec = draft.spec
    if spec.config_map is not None:
        problem = sources.config_map_problem(draft)
        if problem is not None:
            return problem
    if spec.artifact is not None and sources.verification_policy_digest(draft) is None:
        policy = spec.artifact.verification_policy_from
        return (
            Reason.CONFIGURATION_ERROR,
            f"the verification policy ConfigMap {policy.name} has no key {policy.key}",
        )
    return None


def _policy_refused(refusal: sources.PolicyRefusal) -> str:
    """A schema's words for a source policy's refusal, whatever it refused."""
    return f"the source is refused by the source policy {refusal.where}: {refusal.rule}"
