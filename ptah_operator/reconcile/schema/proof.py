"""The proof of an Apply: a fresh Observe and a coherent Plan under the Apply's Lease.

An Apply's end, whatever its Job reported, leaves a proof owed (status.lastApply without
verification, SCH-22, SCH-25, PATH-10). The proof runs Observe then Plan again, bound to what
the Apply ran from (its files, the database its plan was made for, RETRY-09), holding the
Apply's database-realm Lease (SCH-58, LCK-08). Observe's result claims the Plan in the same
pass, so nothing else can take the database between the two. The proof settles with one
Verified entry (JNL-07):

- a no-change plan: InSync, reason ScopedConverged, or ConvergedAfterUnknownOutcome after an
  Apply whose outcome is unknown (PATH-17, SCH-26, SCH-60); an Apply that reported success is
  then recorded in status.applied (PATH-21). Verified InSync.
- changes: Verified DriftRemains, and a new plan, judged as from Planning (SCH-27, PATH-16).
- a newer spec, verification policy or execution binding took over before it ended: Verified
  Superseded, and the schema goes to Pending, or to Verifying when it was the verification
  policy (SCH-28). A suspension is not a newer spec: the proof's Job runs to its end, the
  schema is Suspended with the proof still owed, and resuming runs it again (SCH-37, SCH-47).
- a read of another database than the plan's: Blocked TargetIdentityChanged, claim and Lease
  kept, the same read again every failureRetryInterval until the database is back (SCH-29,
  SCH-61, SCH-62, LCK-12), or until a person settles it with the annotation
  `operator.ptah.run/settled-apply` set to the proof claim's operation id: Verified Unknown,
  and Pending (SCH-41, SCH-63, Decision 16).

A result produced across a change of the Lease's holder is discarded (LCK-11): Pending with the
proof still owed, so the next pass runs it again (SCH-46).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ANNOTATION_SETTLED_APPLY,
    ApplyOutcome,
    EventReason,
    JournalEntryType,
    JournalOutcome,
    OperationType,
    Reason,
    SchemaPhase,
    SourceKind,
    VerifiedOutcome,
)
from ptah_operator.api.fingerprints import model_digest
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.schema import AppliedPlan, PtahSchemaStatus, SchemaVerification
from ptah_operator.reconcile import approvals, conditions, resolutions, sources
from ptah_operator.reconcile.draft import binding_digest, current_binding
from ptah_operator.reconcile.schedule import LEASE_WAIT, failure_retry_interval
from ptah_operator.reconcile.schema import claims, leases, plans
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import (
    blocked,
    in_sync,
    next_up,
    pending,
    suspended,
    verifying_convergence,
)


def owed(status: PtahSchemaStatus) -> bool:
    """An Apply ended and its proof has not settled."""
    return status.last_apply is not None and status.last_apply.verification is None


def target_moved(status: PtahSchemaStatus) -> bool:
    """Blocked because the proof read another database than the plan's."""
    return (
        status.phase == SchemaPhase.BLOCKED
        and conditions.ready_reason(status) == Reason.TARGET_IDENTITY_CHANGED
    )


def spec_digest(draft: SchemaDraft) -> str:
    """The spec as a proof is bound to it: everything but spec.suspend."""
    return model_digest(draft.spec, exclude={"suspend"})


def start(draft: SchemaDraft) -> None:
    """The proof's first read: Observe the files the Apply ran from, under its Lease."""
    last = draft.status.last_apply
    assert last is not None
    record = last.source
    if record is None or not sources.ensure(draft, record):
        what = resolutions.describe(record) if record is not None else "the source"
        draft.fail(
            Reason.SNAPSHOT_MISSING,
            f"the proof of Apply {last.operation_id} cannot read the files it ran from ({what}); "
            "it runs once they are back",
        )
        return
    if not leases.free_for(draft, last.operation_id):
        draft.stand(
            verifying_convergence(
                f"the proof of Apply {last.operation_id} waits for the database-realm Lease"
            )
        )
        draft.wake_in(LEASE_WAIT)
        return
    claims.start(
        draft,
        OperationType.OBSERVE,
        record,
        proof=True,
        target=last.target_identity_digest,
        lease_holder=last.operation_id,
    )


def continue_to_plan(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """The proof's Observe read the right database: its Plan, in the same pass."""
    last = draft.status.last_apply
    assert last is not None
    claims.start(
        draft,
        OperationType.PLAN,
        claim.source,
        proof=True,
        target=last.target_identity_digest,
        lease_holder=last.operation_id,
    )


def superseded(draft: SchemaDraft) -> tuple[str, SchemaPhase] | None:
    """What took over from the Apply the proof is bound to (SCH-28), and where it leads."""
    last = draft.status.last_apply
    if last is None:
        return None
    if last.spec_digest is not None and last.spec_digest != spec_digest(draft):
        return f"the spec changed (generation {draft.generation})", SchemaPhase.PENDING
    if binding_digest(last.execution_binding) != binding_digest(current_binding(draft.world)):
        return "the execution binding changed", SchemaPhase.PENDING
    record = last.source
    if (
        record is not None
        and record.kind == SourceKind.ARTIFACT
        and record.verification_policy_digest != sources.verification_policy_digest(draft)
    ):
        return "the verification policy changed", SchemaPhase.VERIFYING
    return None


def supersede(draft: SchemaDraft, why: str, phase: SchemaPhase) -> None:
    """The proof ends unsettled: a newer spec, policy or binding took over (SCH-28)."""
    last = draft.status.last_apply
    assert last is not None
    _verified(draft, VerifiedOutcome.SUPERSEDED, f"{why} before its proof ended")
    draft.status.active_operation = None
    message = f"the proof of Apply {last.operation_id} is superseded: {why}"
    if phase == SchemaPhase.VERIFYING:
        draft.stand(next_up(SchemaPhase.VERIFYING, f"{message}; the artifact is verified again"))
    else:
        draft.stand(pending(Reason.OPERATION_IN_PROGRESS, f"{message}; the source is read again"))
    draft.rely_on_own_write()


def moved(draft: SchemaDraft, claim: ActiveOperation, seen: str | None) -> None:
    """The proof read another database: Blocked, its claim and Lease kept, the same read again
    after failureRetryInterval (SCH-29, SCH-61, SCH-62)."""
    last = draft.status.last_apply
    assert last is not None
    retry_at = draft.now + failure_retry_interval(draft.schema)
    claim = claim.model_copy(
        update={"retry_at": retry_at, "last_failure_reason": Reason.TARGET_IDENTITY_CHANGED}
    )
    draft.status.active_operation = claim
    message = (
        f"the proof of Apply {last.operation_id} read database {seen or 'none'}, not "
        f"{last.target_identity_digest} its plan was made for; it reads again every "
        f"{draft.spec.execution.failure_retry_interval} until that database is back, or a "
        f"person settles it with the annotation {ANNOTATION_SETTLED_APPLY}={claim.operation_id}"
    )
    if not target_moved(draft.status):
        draft.warning(EventReason.TARGET_IDENTITY_CHANGED, message)
    conditions.record_failure(
        draft.status, Reason.TARGET_IDENTITY_CHANGED, message, draft.now, draft.generation
    )
    draft.stand(blocked(Reason.TARGET_IDENTITY_CHANGED, message))
    draft.wake_at(retry_at)


def converged(draft: SchemaDraft) -> None:
    """A fresh no-change plan: the proof (PATH-17, SCH-26, SCH-60, PATH-21)."""
    status = draft.status
    last = status.last_apply
    assert last is not None
    unknown = last.outcome != ApplyOutcome.SUCCEEDED
    reason = Reason.CONVERGED_AFTER_UNKNOWN_OUTCOME if unknown else Reason.SCOPED_CONVERGED
    _verified(draft, VerifiedOutcome.IN_SYNC, "a fresh plan finds nothing to change")
    if not unknown and last.plan_digest is not None:
        status.applied = AppliedPlan(
            plan=last.plan,
            digest=last.plan_digest,
            operation_id=last.operation_id,
            approval=last.approval,
            approver=last.approver,
            applied_at=last.finished_at,
            verified_at=draft.now,
        )
    plans.retire(draft, "the database converged", replaced=False)
    conditions.clear_failure(status)
    message = (
        f"Apply {last.operation_id} of plan {last.plan.name} is proved: a fresh observation "
        "and a coherent plan find nothing to change"
    )
    if unknown:
        message = (
            f"the outcome of Apply {last.operation_id} was unknown; a fresh observation and a "
            "coherent plan find nothing to change"
        )
    draft.verdict(True, reason, message)
    draft.stand(in_sync(reason, message))


def drift_remains(draft: SchemaDraft) -> None:
    """The proof's plan still finds changes (SCH-27): Verified DriftRemains."""
    _verified(draft, VerifiedOutcome.DRIFT_REMAINS, "a fresh plan still finds changes")
    conditions.clear_failure(draft.status)


def discard(draft: SchemaDraft, why: str) -> None:
    """The proof's result cannot be read as evidence; it runs again (SCH-46)."""
    last = draft.status.last_apply
    assert last is not None
    draft.status.active_operation = None
    draft.stand(
        pending(
            Reason.LEASE_CONTINUITY_LOST,
            f"the proof of Apply {last.operation_id} is discarded ({why}); it runs again",
        )
    )
    draft.rely_on_own_write()


def suspend(draft: SchemaDraft) -> None:
    """spec.suspend, once no proof Job runs: the claim goes, the proof stays owed (SCH-37)."""
    last = draft.status.last_apply
    assert last is not None
    draft.status.active_operation = None
    draft.stand(
        suspended(
            f"spec.suspend is set: no new Job starts; the proof of Apply {last.operation_id} "
            "runs when it resumes"
        )
    )


def settle(draft: SchemaDraft) -> bool:
    """The settled-apply annotation (Decision 16): a person gives up the proof of a schema
    Blocked with TargetIdentityChanged, naming the proof claim's operation id. It is removed
    once answered, valid or not, so it is answered once."""
    value = draft.schema.metadata.annotation(ANNOTATION_SETTLED_APPLY)
    if value is None:
        return False
    draft.annotations[ANNOTATION_SETTLED_APPLY] = None
    status = draft.status
    claim = status.active_operation
    if not (
        target_moved(status)
        and claim is not None
        and claim.serves_proof
        and value == claim.operation_id
    ):
        draft.warning(
            EventReason.SETTLED_APPLY_INVALID,
            f"{ANNOTATION_SETTLED_APPLY} value {value[:64]!r} names no proof this schema is "
            "Blocked on with TargetIdentityChanged; nothing is settled",
        )
        return False
    last = status.last_apply
    assert last is not None
    _verified(draft, VerifiedOutcome.UNKNOWN, "a person gave it up: its target moved")
    status.active_operation = None
    conditions.clear_failure(status)
    draft.normal(
        EventReason.SETTLED_APPLY,
        f"the proof of Apply {last.operation_id} was given up by a person; its outcome stays "
        "unknown and the source is read again",
    )
    draft.stand(
        pending(
            Reason.APPLY_SETTLED,
            f"a person settled Apply {last.operation_id}; the source is read again",
        )
    )
    draft.rely_on_own_write()
    return True


def _verified(draft: SchemaDraft, outcome: VerifiedOutcome, why: str) -> None:
    """lastApply.verification and the one Verified entry of the Apply (JNL-07)."""
    status = draft.status
    last = status.last_apply
    assert last is not None
    claim = status.active_operation
    if outcome == VerifiedOutcome.IN_SYNC:
        approvals.forget(status, last.plan.fingerprint)
    status.last_apply = last.model_copy(
        update={
            "verification": SchemaVerification(
                outcome=outcome,
                read_at=draft.now,
                operation_id=claim.operation_id if claim is not None else None,
            )
        }
    )
    draft.journal(
        JournalEntry(
            type=JournalEntryType.VERIFIED,
            time=draft.now,
            operation_id=last.operation_id,
            plan_name=last.plan.name,
            plan_uid=last.plan.uid,
            plan_fingerprint=last.plan.fingerprint,
            outcome=JournalOutcome(outcome.value),
        )
    )
    message = f"Apply {last.operation_id} of plan {last.plan.name}: {outcome.value} ({why})"
    if outcome == VerifiedOutcome.IN_SYNC:
        draft.normal(EventReason.VERIFIED, message)
    else:
        draft.warning(EventReason.VERIFIED, message)
