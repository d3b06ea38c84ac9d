"""What a migration Apply believes of a result, when the result may not be the runner's last
word or may never arrive (docs/security.md, "Result records").

- A result that arrives while its Job still runs does not end the run: the Job is followed to
  its end first, so a report posted early by whoever holds the operation's token ends nothing,
  releases no Lease and lets no second Apply start while the first still changes the database
  (MIG-19, SUS-02: a running Apply is observed to a terminal result).
- A record the endpoint made of two different reports of one run (`conflict`) is no result:
  neither is believed, the run is held Unknown and read back at once.
- More pending migrations than a plan carries (MAX_PLAN_VERSIONS, 1000) can never be planned:
  Blocked TooManyPending until the source or the database changes, not Failed and retried
  after every failureRetryInterval (MIG-10: Blocked is a verdict that will not change on its
  own).
- A run that ended with no result the manager received (the manager was away longer than the
  runner's report budget) is held Unknown, and its database is read back at once, not at the
  next interval: a clean reading settles the hold (MIG-19, MIG-47, RUN-15).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from ptah_operator.api.constants import (
    MAX_PLAN_VERSIONS,
    MigrationPhase,
    OperationType,
    Reason,
    RunOutcome,
)
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.worlds import (
    applying,
    history,
    history_reported,
    job_of,
    later,
    new,
    nothing_pending,
    read,
    reading,
    report,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    with_job,
    with_result,
)
from tests.unit.reconcile.worlds import condition_reason


def test_a_result_that_arrives_while_its_apply_job_runs_ends_nothing_yet() -> None:
    world = run_reported(
        applying(), run_block(RunOutcome.FAILED, selected=False), job=JobPhase.ACTIVE
    )
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.active_operation is not None
    assert (
        after.last_run is None or after.last_run.operation_id != after.active_operation.operation_id
    )
    assert job_of(decision) is None
    assert not [a for a in decision.lease if a.verb == LeaseVerb.RELEASE]


def test_once_that_job_ended_the_result_is_the_verdict() -> None:
    world = run_reported(
        applying(), run_block(RunOutcome.APPLIED, applied=["0002"]), job=JobPhase.ACTIVE
    )
    world = with_job(step(world), JobPhase.SUCCEEDED, finished_at=world.now, report_witnessed=True)
    after = status(step(world))
    assert after.phase == MigrationPhase.VERIFYING_HISTORY
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.APPLIED


def test_a_run_whose_result_never_arrived_is_read_back_at_once() -> None:
    ran = applying()
    ended = with_job(later(ran, dt.timedelta(minutes=5)), JobPhase.SUCCEEDED, finished_at=ran.now)
    held = step(ended)
    assert status(held).phase == MigrationPhase.BLOCKED
    assert condition_reason(status(held)) == Reason.APPLY_OUTCOME_UNKNOWN
    assert status(held).next_reconciliation_time == held.now
    decision = reconcile_migration(held)
    assert job_of(decision) == OperationType.HISTORY.value
    settled = status(step(history_reported(step(held), nothing_pending())))
    assert settled.phase == MigrationPhase.IN_SYNC
    assert settled.unresolved_run is None


def test_two_different_results_of_one_run_are_neither_believed() -> None:
    world = applying()
    real = report(world, OperationType.APPLY, run=run_block(RunOutcome.APPLIED, applied=["0002"]))
    digests = {"recorded": "sha256:" + "a" * 64, "received": "sha256:" + "b" * 64}
    envelope = {k: real.payload[k] for k in ("contract", "operationID", "type", "resource")}
    conflict = dataclasses.replace(real, payload={**envelope, "conflict": digests})
    held = step(with_result(world, conflict))
    after = status(held)
    assert after.phase == MigrationPhase.BLOCKED
    assert after.unresolved_run is not None
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN
    assert after.next_reconciliation_time == held.now
    assert job_of(reconcile_migration(held)) == OperationType.HISTORY.value


# --- more pending migrations than a plan carries ---------------------------------------------


def _too_many(count: int) -> dict[str, object]:
    """A ReadyToPlan reading of `count` pending migrations: the runner lists at most
    MAX_PLAN_VERSIONS of them (pendingCount stays the true count)."""
    listed = [f"{v:05d}" for v in range(2, 2 + min(count, MAX_PLAN_VERSIONS))]
    return history("ReadyToPlan", current="00001", pending_versions=listed, pending_count=count)


def test_more_pending_migrations_than_a_plan_carries_is_blocked_not_retried() -> None:
    world = read(reading(new()), _too_many(MAX_PLAN_VERSIONS + 500))
    after = status(world)
    assert after.phase == MigrationPhase.BLOCKED
    assert condition_reason(after) == Reason.TOO_MANY_PENDING
    assert after.plan is None
    assert job_of(reconcile_migration(world)) is None
    # Not the failureRetryInterval loop: nothing starts until the interval's read.
    assert job_of(reconcile_migration(later(world, dt.timedelta(minutes=2)))) is None
    assert job_of(reconcile_migration(later(world, dt.timedelta(hours=2)))) is not None


def test_exactly_as_many_as_a_plan_carries_is_planned() -> None:
    world = read(reading(new()), _too_many(MAX_PLAN_VERSIONS))
    after = status(world)
    assert after.phase != MigrationPhase.BLOCKED
    assert after.plan is not None
