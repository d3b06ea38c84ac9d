"""The realm Lease of a run that ended is given back, even when the manager stopped first.

The controller releases a run's Lease only after the status write that records the run's end
(reconcile/decision.py), so a refused write, or a manager killed between a release and that
write, can never leave a claim on record whose Lease is already gone: the next pass would take
that for the Lease changing hands under the run (LCK-10, LCK-11) and discard an Applied
result as Unknown. The price is the other order's gap: a manager that stops after the status
write and before the release leaves the Lease with a run that has ended. Every later pass of
the resource gives it back, so the database's other claimants are not held until it expires.
"""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import MigrationPhase, RunOutcome
from ptah_operator.reconcile.decision import LeaseAction, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import LeaseState
from tests.unit.reconcile.migration.worlds import (
    applying,
    carry_out,
    claim_id,
    held,
    run_block,
    run_reported,
    status,
    status_of,
    step,
)


def ended_but_lease_kept(outcome: RunOutcome = RunOutcome.APPLIED) -> tuple[MigrationWorld, str]:
    """The run's end is on record; the manager stopped before it released the Lease."""
    world = applying()
    operation = claim_id(world)
    world = run_reported(world, run_block(outcome, applied=["0002"]))
    decision = reconcile_migration(world)
    assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]
    world = carry_out(world, dataclasses.replace(decision, lease=()))
    assert world.lease is not None
    assert world.lease.holder == operation
    return world, operation


@pytest.mark.req("LCK-07", "LCK-10", "MIG-22")
def test_a_lease_left_with_an_ended_run_is_released_by_the_next_pass() -> None:
    world, operation = ended_but_lease_kept()
    assert status(world).phase == MigrationPhase.VERIFYING_HISTORY
    lease = world.lease
    assert lease is not None

    decision = reconcile_migration(world)

    assert decision.lease == (
        LeaseAction(LeaseVerb.RELEASE, lease.name, lease.namespace, operation),
    )
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.READING, "the proof read starts as it would anyway"
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.APPLIED
    world = carry_out(world, decision)
    assert world.lease is not None
    assert world.lease.holder is None
    assert not reconcile_migration(world).lease, "released once"


@pytest.mark.req("LCK-10", "RUN-05")
def test_a_held_run_gives_its_lease_back_too() -> None:
    world, operation = ended_but_lease_kept(RunOutcome.PARTIAL)
    assert status(world).unresolved_run is not None
    decision = reconcile_migration(world)
    assert [(a.verb, a.holder) for a in decision.lease] == [(LeaseVerb.RELEASE, operation)]


@pytest.mark.req("LCK-10", "LCK-11")
def test_the_run_that_ends_releases_its_lease_once() -> None:
    world = run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]))
    decision = reconcile_migration(world)
    assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]


@pytest.mark.req("LCK-01", "LCK-11")
def test_a_lease_another_operation_holds_is_never_released() -> None:
    world = held()
    assert world.lease is not None
    assert world.lease.holder is None
    other = LeaseState(world.lease.name, world.lease.namespace, "op-0000000bad", 9, False)
    world = dataclasses.replace(world, lease=other)
    assert not reconcile_migration(world).lease


@pytest.mark.req("LCK-10")
def test_a_running_apply_keeps_its_lease() -> None:
    world = step(applying())
    assert status(world).active_operation is not None
    assert world.lease is not None
    assert world.lease.holder == claim_id(world)
    assert not reconcile_migration(world).lease
