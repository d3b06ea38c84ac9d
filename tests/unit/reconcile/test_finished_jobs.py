"""How long finished Jobs are kept (JOB-07), both families.

Seed 000: "the finished Jobs it keeps for five minutes, or 24 hours after a failed Apply that
keeps its log". A Job's ttlSecondsAfterFinished is fixed when it is created, before anybody
knows how the run ends, so every Apply Job is created with the 24-hour one; once the run is on
record as having succeeded, the operator removes its Job about five minutes after it finished.
Every other Job (a read) is created with five minutes. A failed, partial or unknown Apply's
Job stays for its 24 hours, log and all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import OperationType, RunOutcome
from ptah_operator.reconcile.decision import Decision, Requeue
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema

FIVE_MINUTES = 300
A_DAY = 86400
AFTER = dt.timedelta(minutes=5, seconds=30)
SOON = dt.timedelta(minutes=1)


def deleted_jobs(decision: Decision) -> list[str]:
    return [ref.name for ref in decision.delete if ref.kind == "Job"]


def created_ttls(decision: Decision) -> dict[str, int]:
    return {
        str(o["metadata"]["labels"]["operator.ptah.run/operation"]): o["spec"][
            "ttlSecondsAfterFinished"
        ]
        for o in decision.create
        if isinstance(o, dict) and o.get("kind") == "Job"
    }


# --- migration ---------------------------------------------------------------------------------


def migration_run_ended(outcome: RunOutcome) -> tuple[MigrationWorld, str]:
    """The run reported and its end is on record; its Job finished at the world's now."""
    world = migration.applying()
    name = migration.apply_job_name(world)
    failure = (
        {"version": "0002", "statementIndex": 1, "sqlstate": "23505", "mysqlErrno": None}
        if outcome != RunOutcome.APPLIED
        else None
    )
    block = migration.run_block(
        outcome, applied=["0002"] if outcome == RunOutcome.APPLIED else [], failure=failure
    )
    ended = migration.step(migration.run_reported(world, block))
    assert migration.status(ended).active_operation is None or (
        migration.status(ended).active_operation.operation_id  # type: ignore[union-attr]
        != migration.claim_id(world)
    )
    assert ended.jobs[name].phase == JobPhase.SUCCEEDED
    return ended, name


@pytest.mark.req("JOB-07")
def test_a_migration_apply_job_is_created_to_keep_a_day_and_a_read_job_five_minutes() -> None:
    applying = migration.with_approval(migration.awaiting_approval())
    assert created_ttls(reconcile_migration(applying)) == {"Apply": A_DAY}
    assert created_ttls(reconcile_migration(migration.new())) == {"History": FIVE_MINUTES}


@pytest.mark.req("JOB-07")
def test_a_successful_migration_apply_job_goes_about_five_minutes_after_it_finished() -> None:
    ended, name = migration_run_ended(RunOutcome.APPLIED)
    early = reconcile_migration(migration.later(ended, SOON))
    assert name not in deleted_jobs(early)
    assert early.requeue != Requeue.NONE
    assert early.requeue_after is None or early.requeue_after <= dt.timedelta(minutes=4)
    late = reconcile_migration(migration.later(ended, AFTER))
    assert name in deleted_jobs(late)


@pytest.mark.req("JOB-07")
@pytest.mark.parametrize("outcome", [RunOutcome.FAILED, RunOutcome.PARTIAL])
def test_a_failed_migration_apply_job_is_kept_with_its_log(outcome: RunOutcome) -> None:
    ended, name = migration_run_ended(outcome)
    for delay in (AFTER, dt.timedelta(hours=2)):
        assert name not in deleted_jobs(reconcile_migration(migration.later(ended, delay)))


@pytest.mark.req("JOB-07")
def test_a_job_still_followed_by_its_claim_is_never_removed() -> None:
    world = migration.applying()
    name = migration.apply_job_name(world)
    jobs = dict(world.jobs)
    jobs[name] = dataclasses.replace(
        jobs[name], phase=JobPhase.SUCCEEDED, finished_at=world.now - AFTER
    )
    decision = reconcile_migration(dataclasses.replace(world, jobs=jobs))
    assert name not in deleted_jobs(decision)


# --- schema ------------------------------------------------------------------------------------


def schema_apply_ended(outcome: str) -> tuple[SchemaWorld, str]:
    world = schema.applying()
    claim = schema.claim_of(world)
    name = claim.job_name
    ended = schema.step(schema.applied(world, outcome=outcome))
    record = schema.status(ended).last_apply
    assert record is not None
    assert record.operation_id == claim.operation_id
    return ended, name


@pytest.mark.req("JOB-07")
def test_a_schema_apply_job_is_created_to_keep_a_day() -> None:
    world = schema.with_approval(schema.awaiting_approval())
    assert created_ttls(reconcile_schema(world)) == {"Apply": A_DAY}
    assert created_ttls(reconcile_schema(schema.new())) == {"Observe": FIVE_MINUTES}


@pytest.mark.req("JOB-07")
def test_a_successful_schema_apply_job_goes_about_five_minutes_after_it_finished() -> None:
    ended, name = schema_apply_ended("Applied")
    assert name not in deleted_jobs(reconcile_schema(schema.later(ended, SOON)))
    assert name in deleted_jobs(reconcile_schema(schema.later(ended, AFTER)))


@pytest.mark.req("JOB-07", "SCH-59")
def test_a_schema_apply_whose_outcome_is_unknown_keeps_its_job() -> None:
    ended, name = schema_apply_ended("Unknown")
    assert name not in deleted_jobs(reconcile_schema(schema.later(ended, AFTER)))


def test_the_operation_type_label_names_the_job() -> None:
    assert OperationType.APPLY.value == "Apply"
