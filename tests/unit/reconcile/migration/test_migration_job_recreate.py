"""An Apply whose claim stands but whose Job is not there (yet), migration side.

Seed 000: "The claim is written before the Job" (JOB-04): a pass that finds the claim and no
Job, with nothing moved, asks for the very Job the claim names again (the same name, so the API
server's name check makes a second create harmless), with the same operation credentials, and
looks again shortly after; the claim, the Lease and the phase stay as they were.
"""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import ConditionType, MigrationPhase, Reason
from ptah_operator.reconcile.decision import Decision, LeaseVerb, OperationCredentials
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import JOB_RECREATE_CHECK
from tests.unit.reconcile.migration.worlds import (
    MIGRATION,
    awaiting_approval,
    status,
    step,
    with_approval,
    without_job,
)


def _dispatch() -> tuple[MigrationWorld, Decision]:
    """The pass that claimed the Apply and created its Job, and the world after it."""
    world = with_approval(awaiting_approval())
    return step(world), reconcile_migration(world)


def _jobs(decision: Decision) -> list[object]:
    return [o for o in decision.create if isinstance(o, dict) and o.get("kind") == "Job"]


def _credentials(decision: Decision) -> list[OperationCredentials]:
    return [o for o in decision.create if isinstance(o, OperationCredentials)]


@pytest.mark.req("JOB-04", "JOB-05")
def test_a_claimed_apply_whose_job_is_missing_asks_for_the_same_job_again() -> None:
    claimed, first = _dispatch()
    world = without_job(claimed)
    claim = status(world).active_operation
    assert claim is not None
    assert claim.job_name is not None

    decision = reconcile_migration(world)

    jobs = _jobs(decision)
    assert len(jobs) == 1
    assert jobs == _jobs(first)
    assert jobs[0]["metadata"]["name"] == claim.job_name  # type: ignore[index]
    credentials = _credentials(decision)
    assert credentials == _credentials(first)
    assert [c.operation_id for c in credentials] == [claim.operation_id]
    assert [c.namespace for c in credentials] == ["application"]
    # The credentials Secret comes first: the Job mounts it.
    kinds = [
        type(o).__name__ if isinstance(o, OperationCredentials) else "Job" for o in decision.create
    ]
    assert kinds == ["OperationCredentials", "Job"]


@pytest.mark.req("JOB-04")
def test_the_claim_lease_and_phase_stay_while_the_job_is_asked_for_again() -> None:
    claimed, _ = _dispatch()
    world = without_job(claimed)
    before = status(world)

    decision = reconcile_migration(world)

    after = MIGRATION.status_of(world, decision)
    claim, kept = before.active_operation, after.active_operation
    assert claim is not None
    assert kept is not None
    # The same claim (the pass may note the Lease epoch it holds, LCK-10).
    assert kept.model_copy(update={"lease_epoch": None}) == claim.model_copy(
        update={"lease_epoch": None}
    )
    assert not decision.lease
    assert after.phase == MigrationPhase.APPLYING
    plan = claim.plan
    assert plan is not None
    for kind in (ConditionType.READY, ConditionType.PROGRESSING):
        condition = after.condition(kind)
        assert condition is not None
        assert condition.reason == Reason.OPERATION_IN_PROGRESS
        assert condition.message == f"applying plan {plan.name}"
    # It looks again soon: the Job may only be slow to show, or the create may have been lost.
    assert decision.requeue_after == JOB_RECREATE_CHECK


@pytest.mark.req("JOB-04", "SRC-CM-17")
def test_a_missing_job_and_a_missing_snapshot_are_both_put_back() -> None:
    claimed, first = _dispatch()
    world = dataclasses.replace(without_job(claimed), snapshots=frozenset())
    record = status(world).source
    assert record is not None

    decision = reconcile_migration(world)

    snapshots = [
        o["metadata"]["name"]
        for o in decision.create
        if isinstance(o, dict) and o.get("kind") == "ConfigMap"
    ]
    assert snapshots == [record.snapshot_name]
    assert _jobs(decision) == _jobs(first)
    assert MIGRATION.status_of(world, decision).phase == MigrationPhase.APPLYING


@pytest.mark.req("JOB-04", "SRC-CM-16")
def test_a_missing_job_whose_snapshot_cannot_be_had_withdraws_the_apply() -> None:
    # A claim whose record names no snapshot (a restored or edited status): no Job can be
    # built from files that cannot be had, so nothing is asked for, the Lease goes back.
    claimed, _ = _dispatch()
    world = without_job(claimed)
    claim = status(world).active_operation
    assert claim is not None
    assert claim.source is not None
    claim.source = claim.source.model_copy(update={"snapshot_name": None})

    decision = reconcile_migration(world)

    assert _jobs(decision) == []
    assert _credentials(decision) == []
    assert [(a.verb, a.holder) for a in decision.lease] == [(LeaseVerb.RELEASE, claim.operation_id)]
    after = MIGRATION.status_of(world, decision)
    assert after.active_operation is None
    assert after.phase == MigrationPhase.PENDING
    ready = after.condition(ConditionType.READY)
    assert ready is not None
    assert ready.reason == Reason.OPERATION_IN_PROGRESS
    assert ready.message == "the Apply was withdrawn before its Job existed: the snapshot is gone"
