"""What a migration run's end records, and the Lease it may leave behind (MIG-17, MIG-21,
RUN-10, JNL-09, LCK-09): status.lastRun's times, Job and words for a run that failed, one that
stopped before it selected anything, one whose snapshot was refused, one whose result cannot
be read; and a Lease the resource took but never recorded, given back with an Event. Written
against the survivors of `make mutate` on reconcile/migration/apply.py (issue #11)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase, LeaseState
from tests.unit.reconcile.migration.worlds import (
    MANAGER_NAMESPACE,
    MIGRATION,
    UID,
    applying,
    in_sync,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    with_job,
)

FAILURE = {"version": "0002", "statementIndex": 3, "sqlstate": "23505", "mysqlErrno": None}


def _claim(world: MigrationWorld) -> ActiveOperation:
    return MIGRATION.claim_of(world)


@pytest.mark.req("MIG-17", "RUN-10", "RUN-12")
def test_a_failed_run_records_where_it_stopped_when_and_by_which_job() -> None:
    running = applying()
    claim = _claim(running)
    world = run_reported(
        running, run_block(RunOutcome.FAILED, failure=FAILURE), job=JobPhase.FAILED
    )
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    run = after.last_run
    assert run is not None
    said = "migration 0002 failed at statement 3: SQLSTATE 23505"
    assert run.message == said
    assert run.started_at == world.now - dt.timedelta(seconds=4)
    assert run.finished_at == world.now
    assert run.job is not None
    assert (run.job.name, run.job.uid) == (claim.job_name, claim.job_uid)
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert (failed.reason, failed.message) == (Reason.RUN_FAILED, said)
    assert failed.observed_generation == MIGRATION.resource(world).metadata.generation
    assert after.phase == MigrationPhase.VERIFYING_HISTORY
    assert (
        after.message == f"run {claim.operation_id} ended; the history is read next to confirm it"
    )


@pytest.mark.req("MIG-21", "MIG-18")
@pytest.mark.parametrize(
    ("error", "words"),
    [
        (None, "the run stopped before it selected a migration; nothing ran"),
        (
            {"reason": ErrorReason.INTERRUPTED.value, "message": "stopped"},
            "the runner was stopped before it finished; nothing ran",
        ),
    ],
    ids=["stopped", "interrupted"],
)
def test_a_run_that_stopped_before_selecting_says_so_and_starts_again_from_resolution(
    error: dict[str, str] | None, words: str
) -> None:
    running = applying()
    claim = _claim(running)
    block = run_block(RunOutcome.FAILED, selected=False)
    world = run_reported(running, block, job=JobPhase.FAILED, error=error)
    after = status_of(world, reconcile_migration(world))
    assert after.last_run is not None
    assert after.last_run.message == words
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.message == (
        f"run {claim.operation_id} stopped before it selected a migration and ran none; "
        "it starts again from resolution, and a plan needs a new approval"
    )


@pytest.mark.req("MIG-21", "SRC-CM-08")
def test_a_run_whose_snapshot_was_refused_records_that_nothing_ran() -> None:
    running = applying()
    claim = _claim(running)
    ended_at = running.now - dt.timedelta(seconds=3)
    world = with_job(running, JobPhase.FAILED, snapshot_refused=True, finished_at=ended_at)
    after = status_of(world, reconcile_migration(world))
    run = after.last_run
    assert run is not None
    assert run.outcome == RunOutcome.FAILED
    assert run.reason == ErrorReason.SNAPSHOT_REFUSED
    assert run.message == "the snapshot was refused before the run started; nothing ran"
    assert run.finished_at == ended_at
    assert run.job is not None
    assert (run.job.name, run.job.uid) == (claim.job_name, claim.job_uid)


@pytest.mark.req("MIG-19", "RUN-03")
@pytest.mark.parametrize(
    ("error", "block", "words"),
    [
        (
            {"reason": "NotAReason", "message": "x"},
            run_block(RunOutcome.APPLIED, applied=["0002"]),
            "the run's result cannot be read: the result does not fit its contract (error.reason)",
        ),
        (None, None, "the run's result holds no outcome"),
    ],
    ids=["unreadable", "no outcome"],
)
def test_a_run_whose_result_says_nothing_usable_ends_unknown_saying_why(
    error: dict[str, str] | None, block: dict[str, object] | None, words: str
) -> None:
    running = applying()
    claim = _claim(running)
    finished = running.now - dt.timedelta(seconds=1)
    world = run_reported(running, block, job=JobPhase.SUCCEEDED, error=error)  # type: ignore[arg-type]
    world = with_job(world, JobPhase.SUCCEEDED, finished_at=finished, report_witnessed=True)
    after = status_of(world, reconcile_migration(world))
    run = after.last_run
    assert run is not None
    assert run.outcome == RunOutcome.UNKNOWN
    assert run.message == words
    assert run.finished_at == finished
    assert run.job is not None
    assert run.job.uid == claim.job_uid
    assert after.phase == MigrationPhase.BLOCKED


def _lease(holder: str, holder_uid: str = UID) -> LeaseState:
    return LeaseState("ptah-realm-x", MANAGER_NAMESPACE, holder, 3, False, holder_uid)


@pytest.mark.req("LCK-09")
def test_a_lease_this_resource_took_but_never_recorded_is_given_back_with_an_event() -> None:
    world = dataclasses.replace(in_sync(), lease=_lease("op-never-recorded"))
    decision = reconcile_migration(world)
    assert [a.verb for a in decision.lease] == [LeaseVerb.RELEASE]
    assert (
        EventReason.LEASE_RELEASED,
        "released the database-realm Lease that operation op-never-recorded took but never "
        "recorded (the manager stopped in between)",
    ) in [(e.reason, e.message) for e in decision.events]


@pytest.mark.req("LCK-09")
def test_a_lease_held_by_what_status_records_is_not_an_orphan() -> None:
    running = applying()
    claimed = dataclasses.replace(running, lease=_lease(_claim(running).operation_id))
    ended = step(run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])))
    last = status(ended).last_run
    assert last is not None
    by_last_run = dataclasses.replace(ended, lease=_lease(last.operation_id))
    for world in (claimed, by_last_run):
        decision = reconcile_migration(world)
        assert EventReason.LEASE_RELEASED not in [e.reason for e in decision.events], world.lease
    other = dataclasses.replace(in_sync(), lease=_lease("op-of-another", holder_uid="uid-other"))
    assert not reconcile_migration(other).lease
