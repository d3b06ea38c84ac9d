"""The standings of a schema: where a pass can leave a PtahSchema.

Standings (Decision 15): Ready is True only in InSync; Progressing is True only while
something comes on its own (an operation runs, a failed read will run again, a plan is being
published, an Apply or the proof is next, a dropped claim is about to be replaced). Beside
them a schema carries `InSync`: True with ScopedConverged (or ConvergedAfterUnknownOutcome)
once a coherent plan found nothing to change (PATH-17), False with DriftRemains once one found
changes; reads and failures leave it as the last plan left it.

A failed read shows Failed while it waits to run again, the claim kept (SCH-36).
"""

from __future__ import annotations

import datetime as dt
from typing import TypeAlias

from ptah_operator.api.constants import OperationType, Reason, SchemaPhase
from ptah_operator.reconcile import conditions

Standing: TypeAlias = conditions.Standing[SchemaPhase]
"""Where a pass leaves the schema."""

_PLAN = conditions.PlanStandings(
    SchemaPhase,
    SchemaPhase.READY_TO_APPLY,
    "a PtahSchemaApproval naming it and its fingerprint",
)
ready_to_apply = _PLAN.ready_to_apply
awaiting_approval = _PLAN.awaiting_approval
approved = _PLAN.approved
applying = _PLAN.applying
blocked = _PLAN.blocked
failed = _PLAN.failed
pending = _PLAN.pending


_OPERATION_PHASES = {
    OperationType.RESOLVE: (SchemaPhase.RESOLVING, "resolving the source"),
    OperationType.VERIFY: (SchemaPhase.VERIFYING, "verifying the artifact against its policy"),
    OperationType.OBSERVE: (SchemaPhase.OBSERVING, "observing the database"),
    OperationType.PLAN: (SchemaPhase.PLANNING, "planning against the database"),
    OperationType.APPLY: (SchemaPhase.APPLYING, "applying the plan"),
}


def operating(
    operation: OperationType, *, proof: bool = False, attempt: int = 1, retry: bool = False
) -> Standing:
    """An operation under way. A proof's reads show VerifyingConvergence; the attempt after a
    failed one shows Failed while it runs (SCH-42)."""
    phase, what = _OPERATION_PHASES[operation]
    if proof:
        phase = SchemaPhase.VERIFYING_CONVERGENCE
        what = f"proving the Apply: {what} again"
    if retry:
        phase = SchemaPhase.FAILED
    if attempt > 1:
        what += f" (attempt {attempt})"
    return Standing(phase, Reason.OPERATION_IN_PROGRESS, what, True)


def next_up(phase: SchemaPhase, what: str) -> Standing:
    """Between two operations of one read: the phase of the next one, claimed next pass."""
    return Standing(phase, Reason.OPERATION_IN_PROGRESS, what, True)


def read_retrying(
    operation: OperationType, reason: str, attempt: int, retry_at: dt.datetime
) -> Standing:
    """A read whose Job failed, between attempts: Failed, the claim kept (SCH-36)."""
    return Standing(
        SchemaPhase.FAILED,
        Reason.OPERATION_FAILED,
        f"the {operation.value} failed ({reason}) on attempt {attempt}; it runs again at "
        f"{retry_at.isoformat()}",
        True,
    )


def in_sync(reason: str, message: str) -> Standing:
    return Standing(SchemaPhase.IN_SYNC, reason, message, False, ready=True)


def publishing(phase: SchemaPhase, plan_name: str, why: str) -> Standing:
    return Standing(phase, Reason.PLAN_PUBLISHED, f"publishing plan {plan_name}: {why}", True)


def verifying_convergence(message: str) -> Standing:
    return Standing(SchemaPhase.VERIFYING_CONVERGENCE, Reason.VERIFYING_CONVERGENCE, message, True)


def suspended(message: str = "spec.suspend is set: no new Job starts") -> Standing:
    return Standing(SchemaPhase.SUSPENDED, Reason.SUSPENDED, message, False)
