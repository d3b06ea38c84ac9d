"""The database-realm Lease of a schema: who must hold it, taken explicitly, given back by rule.

The rules both families share (name, namespace, held_by, free_for, take, the release of an
orphan) are reconcile/leases.py's, re-exported here for the schema's modules.

Three things hold it (LCK-08): a plain Plan, under its own operation id, while its Job may
run; an Apply, under its own id, from its claim to its end; and the proof that follows an
Apply (its Observe and Plan, SCH-58), under the *Apply's* id: the proof keeps the Apply's
Lease, and after a suspension or a lost Lease takes it again under that id. Resolve, Verify and
a plain Observe never take it.

Taking is explicit: the pass that claims the operation asks for it (LeaseAction Acquire,
applied before the status write, decision.py). Giving back is one rule applied at the end of
every pass (`settle`): a Lease held under an operation id this resource used, and that nothing
now needs, is released, after the status write that ended its use. A plain Plan between
failed attempts, and an Apply whose Job could not be built, hold none (they would keep every
other resource of the database waiting for nothing); a proof keeps it between attempts and
while Blocked on a moved target (SUS-03, LCK-12).

Continuity (LCK-10): a claim that holds the Lease records the epoch it first saw it at; if the
holder or the epoch changes while the claim holds it, `leaseContinuityLost` is set before any
result is read, and the result is discarded (LCK-11).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import EventReason, OperationType, SchemaPhase
from ptah_operator.reconcile import leases as realm_lease
from ptah_operator.reconcile.leases import free_for as free_for
from ptah_operator.reconcile.leases import held_by as held_by
from ptah_operator.reconcile.leases import name as name
from ptah_operator.reconcile.leases import namespace as namespace
from ptah_operator.reconcile.leases import take as take
from ptah_operator.reconcile.schema.draft import SchemaDraft


def proof_holder(draft: SchemaDraft) -> str | None:
    """The operation id a proof holds the Lease under: the Apply it proves."""
    last = draft.status.last_apply
    return last.operation_id if last is not None else None


def holder_of(draft: SchemaDraft, claim: ActiveOperation | None) -> str | None:
    """Under which id the claim needs the Lease now, or None when it needs none."""
    if claim is None:
        return None
    if claim.serves_proof:
        return proof_holder(draft)
    if claim.type == OperationType.APPLY:
        return None if claim.retry_at is not None and claim.job_uid is None else claim.operation_id
    if claim.type == OperationType.PLAN and claim.lease_name is not None:
        return None if claim.retry_at is not None else claim.operation_id
    return None


def track(draft: SchemaDraft, claim: ActiveOperation) -> ActiveOperation:
    """Record the epoch the claim holds the Lease at, or that it lost it (LCK-10)."""
    holder = holder_of(draft, claim)
    if holder is None or claim.lease_continuity_lost:
        return claim
    lease = draft.world.lease
    if claim.lease_epoch is None:
        if lease is not None and lease.holder == holder:
            claim = claim.model_copy(update={"lease_epoch": lease.epoch, "lease_name": lease.name})
        return claim
    if lease is None or lease.holder != holder or lease.epoch != claim.lease_epoch:
        draft.warning(
            EventReason.LEASE_CONTINUITY_LOST,
            f"the database-realm Lease changed hands while {claim.type.value} "
            f"{claim.operation_id} held it: its result is discarded",
        )
        return claim.model_copy(update={"lease_continuity_lost": True})
    return claim


def settle(draft: SchemaDraft) -> None:
    """Release the Lease when this resource holds it and nothing needs it any more."""
    lease = draft.world.lease
    if lease is None or lease.holder is None:
        return
    status = draft.status
    stored = draft.stored
    ours = {proof_holder(draft)}
    for claim in (status.active_operation, stored.active_operation if stored else None):
        if claim is not None:
            ours.add(claim.operation_id)
    if lease.holder not in ours:
        _release_orphan(draft)
        return
    needed = holder_of(draft, status.active_operation)
    last = status.last_apply
    if (
        needed is None
        and status.active_operation is None
        and last is not None
        and last.verification is None
        and status.phase == SchemaPhase.VERIFYING_CONVERGENCE
    ):
        # The Apply ended and its proof starts next pass, under the same Lease (SCH-58).
        needed = last.operation_id
    if lease.holder == needed:
        return
    realm_lease.release_held(draft)


def _release_orphan(draft: SchemaDraft) -> None:
    """A Lease this schema took but never recorded (the manager stopped between taking it and
    writing the claim): the Lease names this resource and no status names its holder, so no
    Job can run under it; give it back rather than make every operation on the database wait
    for it to expire."""
    recorded: list[str | None] = []
    for status in (draft.stored, draft.status):
        if status is None:
            continue
        if status.active_operation is not None:
            recorded.append(status.active_operation.operation_id)
        if status.last_apply is not None:
            recorded.append(status.last_apply.operation_id)
    realm_lease.release_orphan(draft, recorded)
