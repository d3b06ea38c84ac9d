"""spec.suspend (seed 000: "spec.suspend prevents new Jobs"; Decision 14: a migration's read
under suspend goes to Pending for one pass, then Suspended)."""

from __future__ import annotations

import pytest

from ptah_operator.api.constants import EventReason, MigrationPhase, Reason, RunOutcome
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    applying,
    awaiting_approval,
    history_reported,
    in_sync,
    new,
    nothing_pending,
    reading,
    ready_to_plan,
    resumed,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    suspended,
    verifying_history,
    with_approval,
)


def plan_kept(world: MigrationWorld, decision: Decision) -> None:
    assert status(world).plan is not None
    assert status_of(world, decision).plan == status(world).plan


def read_dropped(world: MigrationWorld, decision: Decision) -> None:
    assert status_of(world, decision).active_operation is None
    assert not decision.lease


def approval_still_usable(world: MigrationWorld, decision: Decision) -> None:
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.approval is not None
    assert claim.approval.uid == world.approvals[0].metadata.uid


def resumed_after_suspending_an_approved_plan() -> MigrationWorld:
    world = step(step(suspended(with_approval(awaiting_approval()))))
    assert status(world).phase == MigrationPhase.SUSPENDED
    world = step(resumed(world))
    assert status(world).phase == MigrationPhase.READING
    return step(history_reported(world, ready_to_plan()))


ROWS = [
    Row(
        "any phase, no claim -> Suspended: no new Job",
        lambda: suspended(in_sync()),
        ("MIG-25", "SUS-01"),
        phase=MigrationPhase.SUSPENDED,
        ready=Reason.SUSPENDED,
        progressing=(False, Reason.SUSPENDED),
        job=None,
        lease=[],
    ),
    Row(
        "a new resource under suspend starts nothing",
        lambda: new(suspend=True),
        ("SUS-01",),
        phase=MigrationPhase.SUSPENDED,
        job=None,
    ),
    Row(
        "a read under way -> Pending on spec.suspend, its claim dropped",
        lambda: suspended(reading()),
        ("SUS-06", "SUS-04", "MIG-28"),
        phase=MigrationPhase.PENDING,
        job=None,
        lease=[],
        then=read_dropped,
    ),
    Row(
        "... then, with no claim, Suspended",
        lambda: step(suspended(reading())),
        ("SUS-06",),
        phase=MigrationPhase.SUSPENDED,
        job=None,
    ),
    Row(
        "an Apply already running is observed to its end under suspend",
        lambda: run_reported(
            suspended(applying()), run_block(RunOutcome.APPLIED, applied=["0002"])
        ),
        ("SUS-02", "SUS-08"),
        phase=MigrationPhase.VERIFYING_HISTORY,
        lease=[LeaseVerb.RELEASE],
    ),
    Row(
        "an Apply not yet dispatched is withdrawn: Pending, its Lease released in the same write",
        lambda: suspended(applying(dispatched=False)),
        ("SUS-04", "SUS-08", "MIG-20", "APR-13"),
        phase=MigrationPhase.PENDING,
        ready=Reason.SUSPENDED,
        job=None,
        lease=[LeaseVerb.RELEASE],
        events=[],
        then=plan_kept,
    ),
    Row(
        "the read that proves an Apply is observed to its end under suspend",
        lambda: history_reported(suspended(step(verifying_history())), nothing_pending()),
        ("SUS-03",),
        phase=MigrationPhase.IN_SYNC,
        events=[EventReason.VERIFIED],
    ),
    Row(
        "a suspended resource dispatches no Apply, even for an approved plan",
        lambda: step(suspended(with_approval(awaiting_approval()))),
        ("SUS-08", "SUS-01"),
        phase=MigrationPhase.SUSPENDED,
        job=None,
        lease=[],
        then=plan_kept,
    ),
    Row(
        "Suspended -> Reading: resumed, the edit moved the generation",
        lambda: resumed(step(suspended(in_sync()))),
        ("SUS-07", "MIG-32"),
        phase=MigrationPhase.READING,
        job="History",
    ),
    Row(
        "resumed, read again, the approval that was never used still authorizes the Apply",
        resumed_after_suspending_an_approved_plan,
        ("SUS-07", "APR-13"),
        phase=MigrationPhase.APPLYING,
        job="Apply",
        then=approval_still_usable,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_suspend(row: Row) -> None:
    check(row)


@pytest.mark.req("SUS-02")
def test_an_apply_under_suspend_keeps_its_claim_while_its_job_runs() -> None:
    world = suspended(applying())
    decision = reconcile_migration(world)
    assert status_of(world, decision).phase == MigrationPhase.APPLYING
    assert status_of(world, decision).active_operation is not None
    assert not decision.lease
