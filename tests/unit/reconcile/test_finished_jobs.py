"""How long finished Jobs are kept (JOB-07), both families.

Seed 000: "the finished Jobs it keeps for five minutes, or 24 hours after a failed Apply that
keeps its log". A Job's ttlSecondsAfterFinished is fixed when it is created, before anybody
knows how the run ends, so every Apply Job is created with the 24-hour one; once the run is on
record as having succeeded, the operator removes its Job about five minutes after it finished.
Every other Job (a read) is created with five minutes. A failed, partial or unknown Apply's
Job stays for its 24 hours, log and all.

"Succeeded" means confirmed: an Apply's own report is not the proof (PATH-10), so its Job stays
while the read-back (a migration's verifying History read, a schema's proof) is owed, and for
its day when that reading disagrees (a migration's history Blocked or still pending the applied
versions; a schema's DriftRemains), so the log is there for whoever looks into it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

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


def migration_read_back(block: dict[str, Any], delay: dt.timedelta) -> tuple[Decision, str]:
    """A run that applied 0002, and the pass that takes the reading after it, `delay` after the
    run's Job finished."""
    ended, name = migration_run_ended(RunOutcome.APPLIED)
    reading = migration.step(migration.later(ended, delay))
    assert migration.MIGRATION.claim_of(reading).type == OperationType.HISTORY
    return reconcile_migration(migration.history_reported(reading, block)), name


def migration_verified(block: dict[str, Any]) -> tuple[MigrationWorld, str]:
    """The run's read-back on record, taken as soon as the run ended."""
    ended, name = migration_run_ended(RunOutcome.APPLIED)
    verified = migration.step(migration.history_reported(migration.step(ended), block))
    run = migration.status(verified).last_run
    assert run is not None
    assert run.verification is not None
    return verified, name


@pytest.mark.req("JOB-07")
def test_a_successful_migration_apply_job_stays_while_its_read_back_is_owed() -> None:
    ended, name = migration_run_ended(RunOutcome.APPLIED)
    assert name not in deleted_jobs(reconcile_migration(migration.later(ended, AFTER)))
    reading = migration.step(ended)
    assert migration.MIGRATION.claim_of(reading).type == OperationType.HISTORY
    assert name not in deleted_jobs(reconcile_migration(migration.later(reading, AFTER)))


AGREEING_READINGS = {
    "nothing pending": migration.nothing_pending("0002"),
    "a later version pending": migration.ready_to_plan("0002", "0003"),
}


@pytest.mark.req("JOB-07", "RUN-09")
@pytest.mark.parametrize("block", AGREEING_READINGS.values(), ids=AGREEING_READINGS.keys())
def test_a_confirmed_migration_apply_job_goes_about_five_minutes_after_it_finished(
    block: dict[str, Any],
) -> None:
    verified, name = migration_verified(block)
    early = reconcile_migration(migration.later(verified, SOON))
    assert name not in deleted_jobs(early)
    assert early.requeue != Requeue.NONE
    assert early.requeue_after is None or early.requeue_after <= dt.timedelta(minutes=4)
    late = reconcile_migration(migration.later(verified, AFTER))
    assert name in deleted_jobs(late)
    # A read-back that ends later than that removes the Job in the pass that records it.
    decision, name = migration_read_back(block, dt.timedelta(minutes=10))
    assert name in deleted_jobs(decision)


DISAGREEING_READINGS = {
    "history dirty": migration.history("Dirty", current="0001", dirty="0002"),
    "the applied version still pending": migration.ready_to_plan("0001", "0002"),
    # Status lists only the first pending versions: past them, the run's own may be pending.
    "a pending list cut short": migration.history(
        "ReadyToPlan", current="0002", pending_versions=("0003",), pending_count=150
    ),
}


@pytest.mark.req("JOB-07", "RUN-09")
@pytest.mark.parametrize("block", DISAGREEING_READINGS.values(), ids=DISAGREEING_READINGS.keys())
def test_a_migration_apply_job_whose_read_back_disagrees_keeps_its_log(
    block: dict[str, Any],
) -> None:
    verified, name = migration_verified(block)
    for delay in (AFTER, dt.timedelta(hours=2)):
        assert name not in deleted_jobs(reconcile_migration(migration.later(verified, delay)))
    decision, name = migration_read_back(block, dt.timedelta(minutes=10))
    assert name not in deleted_jobs(decision)


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


def schema_proved(changes: bool) -> tuple[SchemaWorld, str]:
    """A successful Apply and its proof's Plan, finding `changes` or none, on record."""
    ended, name = schema_apply_ended("Applied")
    proved = schema.step(
        schema.planned(schema.proof_planning(schema.proving(ended)), changes=changes)
    )
    record = schema.status(proved).last_apply
    assert record is not None
    assert record.verification is not None
    return proved, name


@pytest.mark.req("JOB-07")
def test_a_successful_schema_apply_job_stays_while_its_proof_is_owed() -> None:
    ended, name = schema_apply_ended("Applied")
    assert schema.status(ended).last_apply.verification is None  # type: ignore[union-attr]
    for world in (ended, schema.proving(ended), schema.proof_planning(schema.proving(ended))):
        assert name not in deleted_jobs(reconcile_schema(schema.later(world, AFTER)))


@pytest.mark.req("JOB-07", "SCH-26")
def test_a_proved_schema_apply_job_goes_about_five_minutes_after_it_finished() -> None:
    proved, name = schema_proved(changes=False)
    assert name not in deleted_jobs(reconcile_schema(schema.later(proved, SOON)))
    assert name in deleted_jobs(reconcile_schema(schema.later(proved, AFTER)))
    # A proof that ends later than that removes the Job in the pass that records it.
    ended, name = schema_apply_ended("Applied")
    planning = schema.proof_planning(schema.proving(schema.later(ended, dt.timedelta(minutes=10))))
    assert name in deleted_jobs(reconcile_schema(schema.planned(planning, changes=False)))


@pytest.mark.req("JOB-07", "JNL-07")
def test_a_schema_apply_job_whose_proof_finds_changes_keeps_its_log() -> None:
    proved, name = schema_proved(changes=True)
    for delay in (AFTER, dt.timedelta(hours=2)):
        assert name not in deleted_jobs(reconcile_schema(schema.later(proved, delay)))


@pytest.mark.req("JOB-07", "SCH-59")
def test_a_schema_apply_whose_outcome_is_unknown_keeps_its_job() -> None:
    ended, name = schema_apply_ended("Unknown")
    assert name not in deleted_jobs(reconcile_schema(schema.later(ended, AFTER)))


def test_the_operation_type_label_names_the_job() -> None:
    assert OperationType.APPLY.value == "Apply"
