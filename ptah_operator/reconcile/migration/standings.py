"""The standings of a migration: where a pass can leave a PtahMigration (Decision 15, Decision 17).

Each function names one standing of the seeds: the phase, the Ready/Progressing reason, the
message and whether something comes on its own; Draft.stand (reconcile/draft.py) turns it into
status.phase, status.message and the kstatus conditions. A failed read keeps the phase of the
read while it waits to run again (MIG-27).
"""

from __future__ import annotations

import datetime as dt
from typing import TypeAlias

from ptah_operator.api.constants import MigrationPhase, OperationType, Reason
from ptah_operator.reconcile import conditions

Standing: TypeAlias = conditions.Standing[MigrationPhase]
"""Where a pass leaves the migration."""

_PLAN = conditions.PlanStandings(
    MigrationPhase, MigrationPhase.PLANNING, "a PtahMigrationApproval naming it"
)
ready_to_apply = _PLAN.ready_to_apply
awaiting_approval = _PLAN.awaiting_approval
approved = _PLAN.approved
"""An exactly approved plan whose Apply is next: AwaitingApproval, coming on its own (MIG-52)."""
applying = _PLAN.applying
blocked = _PLAN.blocked
failed = _PLAN.failed
pending = _PLAN.pending


def reading(proof: bool, attempt: int = 1) -> Standing:
    what = (
        "reading the revision table again to confirm the run"
        if proof
        else "reading the revision table"
    )
    if attempt > 1:
        what += f" (attempt {attempt})"
    return Standing(MigrationPhase.READING, Reason.OPERATION_IN_PROGRESS, what, True)


_READ_PHASES = {
    OperationType.RESOLVE: (MigrationPhase.RESOLVING, "resolving the source"),
    OperationType.VERIFY: (MigrationPhase.VERIFYING, "verifying the artifact against its policy"),
    OperationType.HISTORY: (MigrationPhase.READING, "reading the revision table"),
}


def operating(operation: OperationType, proof: bool = False, attempt: int = 1) -> Standing:
    """A read-only operation under way: Resolving, Verifying or Reading."""
    if operation == OperationType.HISTORY:
        return reading(proof, attempt)
    phase, what = _READ_PHASES[operation]
    if attempt > 1:
        what += f" (attempt {attempt})"
    return Standing(phase, Reason.OPERATION_IN_PROGRESS, what, True)


def read_retrying(
    reason: str,
    attempt: int,
    retry_at: dt.datetime,
    operation: OperationType = OperationType.HISTORY,
) -> Standing:
    phase, _ = _READ_PHASES[operation]
    what = "history read" if operation == OperationType.HISTORY else operation.value
    return Standing(
        phase,
        Reason.OPERATION_FAILED,
        f"the {what} failed ({reason}) on attempt {attempt}; "
        f"it runs again at {retry_at.isoformat()}",
        True,
    )


def in_sync(current_version: str | None) -> Standing:
    where = f"at version {current_version}" if current_version else "with an empty history"
    return Standing(
        MigrationPhase.IN_SYNC,
        Reason.HISTORY_MATCHED,
        f"the history matches the source {where}: nothing pending",
        False,
        ready=True,
    )


def publishing(plan_name: str, count: int) -> Standing:
    return Standing(
        MigrationPhase.PLANNING,
        Reason.PLAN_PUBLISHED,
        f"publishing plan {plan_name} of {count} pending migration(s)",
        True,
    )


def apply_disabled(plan_name: str) -> Standing:
    return Standing(
        MigrationPhase.PLANNING,
        Reason.APPLY_DISABLED,
        f"plan {plan_name} is published; spec.policy.apply is Never, so it runs nothing",
        False,
    )


def verifying_history(operation_id: str) -> Standing:
    return Standing(
        MigrationPhase.VERIFYING_HISTORY,
        Reason.VERIFYING_HISTORY,
        f"run {operation_id} ended; the history is read next to confirm it",
        True,
    )


def suspended() -> Standing:
    return Standing(
        MigrationPhase.SUSPENDED,
        Reason.SUSPENDED,
        "spec.suspend is set: no new Job starts",
        False,
    )


def proof_suspended(operation_id: str) -> Standing:
    """The read that proves an Apply failed an attempt under spec.suspend: it waits."""
    return Standing(
        MigrationPhase.SUSPENDED,
        Reason.SUSPENDED,
        f"spec.suspend is set: no new Job starts; the proof read {operation_id} of the last "
        "run runs again when the resource resumes",
        False,
    )
