"""Starting a migration's Apply, and what it waits for when it cannot start yet (PATH-09,
JOB-05, MIG-46): the snapshot put back or gone, the Lease another operation holds (under an
approval, and under `apply: Always`), a Job that cannot be built, and a held run. Each by what
status says and when the pass looks again. Written against the survivors of `make mutate` on
reconcile/migration/apply.py (issue #11)."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    ConditionType,
    EventReason,
    MigrationPhase,
    OperationType,
    Reason,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import CLEANUP_CHECK, LEASE_WAIT
from tests.unit.reconcile.migration.worlds import (
    awaiting_approval,
    held,
    lease_held_by_another,
    planning,
    status,
    status_of,
    with_approval,
    with_status,
)
from tests.unit.reconcile.worlds import condition_reason, created


def _approved() -> MigrationWorld:
    """An exact approval of the published plan: the next pass starts the Apply."""
    return with_approval(awaiting_approval())


def _plan(world: MigrationWorld) -> str:
    plan = status(world).plan
    assert plan is not None
    return plan.name


def _snapshot_gone(world: MigrationWorld) -> MigrationWorld:
    return dataclasses.replace(world, snapshots=frozenset())


def _made(decision: Decision, kind: str) -> list[str]:
    return [str(m["metadata"]["name"]) for m in created(decision, kind)]


@pytest.mark.req("SRC-CM-17", "PATH-09")
def test_an_apply_whose_snapshot_is_missing_waits_while_it_is_put_back() -> None:
    world = _snapshot_gone(_approved())
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    assert after.message == (
        f"plan {_plan(world)} is approved; the Apply waits: its snapshot is being put back"
    )
    record = status(world).source
    assert record is not None
    assert _made(decision, "ConfigMap") == [record.snapshot_name]
    assert decision.requeue_after == CLEANUP_CHECK
    assert not _made(decision, "Job")


@pytest.mark.req("SRC-CM-16", "PATH-09")
def test_an_apply_whose_snapshot_cannot_be_put_back_fails_and_says_so() -> None:
    # A restored status names a snapshot that is gone and that the source, unchanged, would
    # not recreate under that name: what the plan was made from cannot be had.
    world = _approved()
    record = status(world).source
    assert record is not None
    restored = with_status(
        world, source=record.model_copy(update={"snapshot_name": "ptah-src-restored"})
    )
    world = _snapshot_gone(restored)
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.phase == MigrationPhase.FAILED
    assert after.message == "the snapshot the plan was made from is gone"
    assert condition_reason(after, ConditionType.READY) == Reason.SNAPSHOT_MISSING
    assert not _made(decision, "Job")


@pytest.mark.req("LCK-01", "PATH-09")
def test_an_approved_apply_waits_for_the_lease_another_operation_holds() -> None:
    world = lease_held_by_another(_approved())
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    assert after.message == (
        f"plan {_plan(world)} is approved; "
        "the Apply waits: the database-realm Lease is held by another operation"
    )
    assert decision.requeue_after == LEASE_WAIT


@pytest.mark.req("LCK-01", "MIG-12")
def test_under_always_the_apply_waits_for_the_lease_as_ready_to_apply() -> None:
    world = lease_held_by_another(planning(apply=ApplyPolicy.ALWAYS))
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.message == (
        f"plan {_plan(world)} is next to apply: "
        "it waits: the database-realm Lease is held by another operation"
    )
    assert decision.requeue_after == LEASE_WAIT


@pytest.mark.req("JOB-06", "PATH-09")
def test_an_apply_whose_job_cannot_be_built_fails_and_names_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.image is not allowed")

    monkeypatch.setattr("ptah_operator.reconcile.migration.apply.apply_job", refuse)
    world = _approved()
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.plan is None, "the plan comes back from the next reading"
    said = "the Apply Job could not be built: spec.execution.image is not allowed"
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert (failed.reason, failed.message) == (Reason.JOB_NOT_BUILT, said)
    assert (EventReason.OPERATION_FAILED, said) in [(e.reason, e.message) for e in decision.events]
    entries = list(after.journal.entries) if after.journal else []
    failures = [e for e in entries if e.operation == OperationType.APPLY]
    assert failures, entries
    assert failures[-1].reason == Reason.JOB_NOT_BUILT


@pytest.mark.req("MIG-46")
def test_a_held_run_beside_a_plan_and_an_approval_starts_nothing_and_retires_the_plan() -> None:
    world = held()
    plan = status(world).plan
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.BLOCKED
    assert condition_reason(after, ConditionType.READY) == Reason.APPLY_OUTCOME_UNKNOWN
    assert not _made(decision, "Job")
    if plan is not None:
        assert after.plan is None
    nxt = status(world).next_reconciliation_time
    if nxt is not None and nxt > world.now:
        assert decision.requeue_after == nxt - world.now
