"""Following an Apply claim to its end (reconcile/apply_follow.py), in both families, by what a
person reads: the standing's message while the Apply is not over, and what its end records
(why it ended with no outcome, when, and which Job), for every stage of a dispatched run and
every case of a Job never seen.

Written against the survivors of `make mutate` on apply_follow.py (issue #11): each test pins a
message or a value that a one-line change of that module would alter. The families' own words
differ only where the seeds' do ("run" or "Apply"; a migration's `lastRun.message`, a schema's
status message).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import OperationType, RunOutcome
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import Decision, ObjectRef
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.schedule import POD_CACHE_GRACE, POD_STOP_MARGIN, RESULT_GRACE, RUN_CAP
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import JobPhase, MadeJob
from tests.unit.reconcile.migration import worlds as migration
from tests.unit.reconcile.schema import worlds as schema

LATE = RUN_CAP + dt.timedelta(seconds=1)


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    worlds: Any
    reconcile: Callable[[Any], Decision]
    run: str
    cap_subject: str

    def applying(self, *, dispatched: bool = True) -> Any:
        return self.worlds.applying(dispatched=dispatched)

    def claim(self, world: Any) -> ActiveOperation:
        claim: ActiveOperation | None = self.worlds.status(world).active_operation
        assert claim is not None
        return claim

    def job(self, world: Any) -> str:
        name = self.claim(world).job_name
        assert name is not None
        return name

    def plan(self, world: Any) -> str:
        plan = self.claim(world).plan
        assert plan is not None
        return plan.name

    def after(self, world: Any) -> tuple[Decision, Any]:
        decision = self.reconcile(world)
        return decision, self.worlds.status_of(world, decision)

    def applying_message(self, world: Any, why: str) -> str:
        message = f"applying plan {self.plan(world)}"
        return f"{message} ({why})" if why else message

    def ended(self, status: Any) -> tuple[str, Any, dt.datetime | None]:
        """What an end with no outcome recorded: why (as a person reads it), the Job, when."""
        if self.name == "migration":
            record = status.last_run
            assert record is not None
            assert record.outcome == RunOutcome.UNKNOWN
            return record.message or "", record.job, record.finished_at
        record = status.last_apply
        assert record is not None
        assert record.outcome == "Unknown"
        return status.message or "", record.job, record.finished_at


FAMILIES = [
    Family("migration", migration, reconcile_migration, "run", "the run"),
    Family("schema", schema, reconcile_schema, "Apply", "it"),
]
each = pytest.mark.parametrize("f", FAMILIES, ids=[f.name for f in FAMILIES])


def _pods(world: Any, f: Family) -> Any:
    return dataclasses.replace(world, running_pods=frozenset({f.claim(world).operation_id}))


def _job_deleted(decision: Decision, world: Any, f: Family) -> bool:
    return ObjectRef("batch/v1", "Job", f.worlds.NAMESPACE, f.job(world)) in decision.delete


def _with_claim(f: Family, world: Any, **changes: Any) -> Any:
    return f.worlds.with_status(world, active_operation=f.claim(world).model_copy(update=changes))


# --- a dispatched run, stage by stage ----------------------------------------------------------


@each
def test_a_pod_of_an_ended_job_still_running_keeps_the_apply_going(f: Family) -> None:
    world = _pods(f.worlds.with_job(f.applying(), JobPhase.FAILED, finished_at=None), f)
    _, after = f.after(world)
    assert after.message == f.applying_message(world, f"a Pod of Job {f.job(world)} still runs")


@each
def test_past_its_cap_a_job_still_there_is_deleted_whatever_stage_the_run_is_in(f: Family) -> None:
    world = f.applying()
    finished = world.now + dt.timedelta(seconds=30)
    stages = {
        "pod runs": _pods(f.worlds.with_job(world, JobPhase.FAILED, finished_at=finished), f),
        "lease lost": _with_claim(f, world, lease_continuity_lost=True),
        "early result": _early_result(f, world),
        "running": world,
    }
    for stage, seen in stages.items():
        late = f.worlds.later(seen, LATE)
        decision, after = f.after(late)
        assert _job_deleted(decision, late, f), stage
        why = f"past its hard cap: Job {f.job(late)} is being deleted"
        assert after.message == f.applying_message(late, why), stage
        assert after.active_operation is not None, stage


def _early_result(f: Family, world: Any) -> Any:
    if f.name == "migration":
        block = migration.run_block(RunOutcome.APPLIED, applied=["0002"])
        return migration.run_reported(world, block, job=JobPhase.ACTIVE)
    return schema.applied(world, job=JobPhase.ACTIVE)


@each
def test_past_its_cap_plus_the_stop_margin_an_ended_job_with_a_pod_still_running_ends_it(
    f: Family,
) -> None:
    world = f.applying()
    finished = world.now + dt.timedelta(seconds=30)
    ended = _pods(f.worlds.with_job(world, JobPhase.FAILED, finished_at=finished, deleting=True), f)
    late = f.worlds.later(ended, LATE + POD_STOP_MARGIN)
    _, after = f.after(late)
    why, job, when = f.ended(after)
    minutes = int(RUN_CAP.total_seconds() // 60)
    assert f"{f.cap_subject} was not over {minutes} minutes after its Job was made" in why
    assert when == finished
    assert job is not None
    assert job.name == f.job(world)


@each
def test_a_suspended_job_is_deleted_and_the_apply_ends_once_it_goes(f: Family) -> None:
    world = f.worlds.with_job(f.applying(), JobPhase.ACTIVE, suspended=True)
    decision, after = f.after(world)
    assert _job_deleted(decision, world, f)
    why = f"Job {f.job(world)} was suspended: the run ends once it is deleted"
    assert after.message == f.applying_message(world, why)
    going = f.worlds.with_job(world, JobPhase.ACTIVE, suspended=True, deleting=True)
    _, after = f.after(going)
    said, job, _ = f.ended(after)
    assert f"Job {f.job(world)} was suspended before it ended" in said
    assert job is not None
    assert job.name == f.job(world)


@each
def test_a_lost_lease_with_the_job_still_running_is_followed_to_its_end(f: Family) -> None:
    world = _with_claim(f, f.applying(), lease_continuity_lost=True)
    _, after = f.after(world)
    why = (
        "the database-realm Lease changed hands; its result will be discarded"
        if f.name == "schema"
        else ""
    )
    assert after.message == f.applying_message(world, why)


@each
def test_a_lost_lease_once_the_job_ended_discards_the_result(f: Family) -> None:
    world = _with_claim(f, f.applying(), lease_continuity_lost=True)
    finished = world.now - dt.timedelta(seconds=5)
    ended = f.worlds.with_job(world, JobPhase.SUCCEEDED, finished_at=finished)
    _, after = f.after(ended)
    said, job, when = f.ended(after)
    assert (
        f"the database-realm Lease changed hands during the {f.run}: its result is discarded"
        in said
    )
    assert when == finished
    assert job is not None


@each
def test_an_early_result_is_not_the_end(f: Family) -> None:
    world = _early_result(f, f.applying())
    _, after = f.after(world)
    assert after.message == f.applying_message(world, "")
    assert after.active_operation is not None


@each
def test_a_job_gone_with_no_result_ends_the_apply_after_the_pod_cache_grace(f: Family) -> None:
    world = f.worlds.without_job(f.applying())
    _, after = f.after(world)
    why = f"Job {f.job(world)} is gone: the run ends once no Pod of it shows"
    assert after.message == f.applying_message(world, why)
    over = f.worlds.later(f.worlds.step(world), POD_CACHE_GRACE)
    _, after = f.after(over)
    said, _, _ = f.ended(after)
    assert f"Job {f.job(world)} is gone and left no result" in said


@each
def test_a_job_that_ended_a_moment_ago_waits_for_its_result(f: Family) -> None:
    world = f.applying()
    finished = world.now - dt.timedelta(seconds=2)
    ended = f.worlds.with_job(world, JobPhase.SUCCEEDED, finished_at=finished)
    decision, after = f.after(ended)
    why = "its result is awaited" if f.name == "schema" else ""
    assert after.message == f.applying_message(ended, why)
    assert decision.requeue_after == finished + RESULT_GRACE - ended.now


@each
def test_a_job_that_ended_without_a_readable_result_ends_the_apply_with_no_outcome(
    f: Family,
) -> None:
    world = f.applying()
    finished = world.now - RESULT_GRACE - dt.timedelta(seconds=1)
    ended = f.worlds.with_job(world, JobPhase.SUCCEEDED, finished_at=finished)
    _, after = f.after(ended)
    said, job, when = f.ended(after)
    assert f"Job {f.job(world)} ended without a readable result" in said
    assert when == finished
    assert job is not None


# --- a Job never seen ----------------------------------------------------------------------------


@each
def test_an_apply_begun_but_never_seen_says_so_and_ends_at_its_cap(f: Family) -> None:
    world = _pods(f.applying(dispatched=False), f)
    _, after = f.after(world)
    why = f"Job {f.job(world)} was never seen but the {f.run} has begun; a Pod of it still runs"
    assert after.message == f.applying_message(world, why)
    late = f.worlds.later(dataclasses.replace(world, running_pods=frozenset()), LATE)
    late = dataclasses.replace(
        late, results={f.claim(late).operation_id: _a_result(f, f.applying(dispatched=False))}
    )
    _, after = f.after(late)
    said, _, _ = f.ended(after)
    assert f"Job {f.job(world)} was never seen; its result is not taken" in said


def _a_result(f: Family, world: Any) -> Any:
    if f.name == "migration":
        block = migration.run_block(RunOutcome.APPLIED, applied=["0002"])
        return migration.report(world, OperationType.APPLY, target=migration.DB, run=block)
    return schema.SCHEMA.report(
        world, OperationType.APPLY, target=schema.DB, apply={"outcome": "Applied"}
    )


@each
def test_a_claim_another_manager_wrote_whose_job_is_not_there(f: Family) -> None:
    world = dataclasses.replace(f.applying(dispatched=False), claims_written=frozenset())
    _, after = f.after(world)
    why = f"Job {f.job(world)} is not there and may have been made before this manager ran"
    assert after.message == f.applying_message(world, why)
    over = f.worlds.later(f.worlds.step(world), POD_CACHE_GRACE)
    _, after = f.after(over)
    said, _, _ = f.ended(after)
    assert f"Job {f.job(world)} may have been made before this manager ran" in said


@each
def test_a_job_made_but_not_seen_is_asked_for_and_deleted_at_its_cap(f: Family) -> None:
    world = f.applying(dispatched=False)
    made = dataclasses.replace(world, jobs_made={f.job(world): MadeJob("job-made-1", world.now)})
    _, after = f.after(made)
    assert after.message == f.applying_message(
        made, f"Job {f.job(world)} was made but is not seen yet"
    )
    late = f.worlds.later(made, LATE)
    decision, after = f.after(late)
    assert _job_deleted(decision, late, f)
    why = f"past its hard cap: Job {f.job(world)}, made but never seen, is being deleted"
    assert after.message == f.applying_message(late, why)


@each
def test_a_made_job_taken_records_when_it_was_made(f: Family) -> None:
    world = f.applying(dispatched=False)
    made_at = world.now + dt.timedelta(seconds=3)
    gone = dataclasses.replace(
        world, jobs_made={f.job(world): MadeJob("job-made-1", made_at, gone=True)}
    )
    _, after = f.after(gone)
    claim = after.active_operation
    assert claim is not None
    assert claim.job_uid == "job-made-1"
    assert claim.job_created_at == made_at


# --- a claim that does not name its Job (a status written before claims named it) ------------


@each
def test_a_claim_without_a_job_name_finds_its_job_by_the_name_its_id_gives(f: Family) -> None:
    world = f.applying()
    name = job_name(OperationType.APPLY, f.claim(world).operation_id)
    assert name == f.job(world)
    unnamed = _with_claim(f, world, job_name=None)
    # Running, its Job found: not over, and at the cap the Job is deleted by that name.
    _, after = f.after(unnamed)
    assert after.message == f.applying_message(world, "")
    assert after.active_operation is not None
    decision, after = f.after(f.worlds.later(unnamed, LATE))
    assert ObjectRef("batch/v1", "Job", f.worlds.NAMESPACE, name) in decision.delete
    assert after.message == f.applying_message(
        world, f"past its hard cap: Job {name} is being deleted"
    )


@each
def test_an_undispatched_claim_the_realm_refuses_is_withdrawn_with_the_refusal(f: Family) -> None:
    world = f.worlds.with_claimant(f.applying(dispatched=False), shared=False)
    _, after = f.after(world)
    assert after.active_operation is None
    assert after.message is not None
    assert "the Apply was withdrawn before its Job existed: " in after.message
    assert "every claimant must set spec.target.sharedRealm: true" in after.message


@each
def test_a_create_whose_answer_was_lost_and_whose_job_is_absent_may_have_been_made(
    f: Family,
) -> None:
    world = f.applying(dispatched=False)
    lost = dataclasses.replace(world, jobs_made={f.job(world): MadeJob(None, None, gone=True)})
    _, after = f.after(lost)
    why = f"Job {f.job(world)} is not there and may have been made before this manager ran"
    assert after.message == f.applying_message(lost, why)


@each
def test_a_claim_that_names_no_plan_still_says_what_it_waits_for(f: Family) -> None:
    # A restored or edited status may hold such a claim; the standing names no plan then.
    world = _with_claim(f, f.worlds.without_job(f.applying()), plan=None)
    _, after = f.after(world)
    why = f"Job {f.job(world)} is gone: the run ends once no Pod of it shows"
    assert after.message == f"applying plan ? ({why})"
