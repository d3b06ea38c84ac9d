"""When a schema Apply is over, and when a read's result counts (issue #18, third review;
docs/design/lifecycle-decisions.md, "When a run is over").

- An Apply is over only once no Pod of it is left running: its Job gone (an `edit` user deleted
  it, its Pods orphaned or still terminating) keeps the claim and the Lease, and no proof reads
  the database, while such a Pod runs (SUS-02: a running Apply is observed to its end).
- A suspended Job with no Pod running ends the Apply with no outcome, its Job deleted, and the
  proof reads at once; any Apply ends so at its hard cap.
- An Apply whose result never arrived is proved at once, not at the next interval (RUN-15).
- A read's result counts only once its Job is seen finished; an Apply's only once its Job was
  seen.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import OperationType, SchemaPhase
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.schedule import POD_CACHE_GRACE, POD_STOP_MARGIN, RESULT_GRACE, RUN_CAP
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.schema.world import SchemaWorld
from ptah_operator.reconcile.world import JobPhase, MadeJob
from tests.unit.reconcile.schema.worlds import (
    applied,
    applying,
    claim_id,
    claim_of,
    job_of,
    later,
    observing,
    phase,
    plan_block,
    planning,
    report,
    status,
    status_of,
    step,
    with_job,
    with_result,
    without_job,
)


def _pods_running(world: SchemaWorld, *operation_ids: str) -> SchemaWorld:
    return dataclasses.replace(world, running_pods=frozenset(operation_ids))


def _released(decision: Decision) -> bool:
    return any(a.verb == LeaseVerb.RELEASE for a in decision.lease)


def _job_deleted(decision: Decision) -> bool:
    return any(r.kind == "Job" for r in decision.delete)


def _proof_starts(world: SchemaWorld) -> None:
    """The Apply is over with no outcome: the proof's read is claimed at once."""
    assert phase(world) == SchemaPhase.VERIFYING_CONVERGENCE
    assert job_of(reconcile_schema(world)) == OperationType.OBSERVE.value


def test_an_apply_whose_job_is_gone_while_a_pod_of_it_runs_is_not_over() -> None:
    world = applying()
    gone = _pods_running(without_job(world), claim_id(world))
    decision = reconcile_schema(gone)
    after = status_of(gone, decision)
    assert after.phase == SchemaPhase.APPLYING
    assert after.active_operation is not None
    assert after.message is not None
    assert "Pod" in after.message
    assert not _released(decision)
    assert job_of(decision) is None
    _proof_starts(
        step(later(dataclasses.replace(step(gone), running_pods=frozenset()), POD_CACHE_GRACE))
    )


def test_a_suspended_apply_job_with_no_pod_running_ends_the_apply() -> None:
    world = with_job(applying(), JobPhase.ACTIVE, suspended=True)
    still = reconcile_schema(_pods_running(world, claim_id(world)))
    assert status_of(world, still).phase == SchemaPhase.APPLYING
    decision = reconcile_schema(world)
    assert _job_deleted(decision)
    # It ends once its Job is gone (the delete comes first: below).
    _proof_starts(step(later(step(step(world)), POD_CACHE_GRACE)))


def test_any_apply_ends_at_its_hard_cap() -> None:
    world = applying()
    before = later(world, RUN_CAP - dt.timedelta(minutes=1))
    assert status_of(before, reconcile_schema(before)).phase == SchemaPhase.APPLYING
    late = _pods_running(later(world, RUN_CAP + dt.timedelta(seconds=1)), claim_id(world))
    decision = reconcile_schema(late)
    assert _job_deleted(decision)
    assert status_of(late, decision).phase == SchemaPhase.APPLYING
    # A Pod still running well past the cap is stuck or forged: the Apply ends all the same.
    stuck = later(step(late), POD_STOP_MARGIN)
    _proof_starts(step(stuck))


def test_an_apply_whose_result_never_arrived_is_proved_at_once() -> None:
    world = with_job(applying(), JobPhase.SUCCEEDED, finished_at=applying().now)
    lost = step(later(world, RESULT_GRACE + dt.timedelta(seconds=1)))
    _proof_starts(lost)


def test_an_apply_result_before_its_job_was_ever_seen_ends_nothing() -> None:
    world = applying(dispatched=False)
    plan = status(world).plan
    assert plan is not None
    block = {"outcome": "Applied", "planDigest": plan.digest, "statementsExecuted": 1}
    early = with_result(world, report(world, OperationType.APPLY, apply=block), job=None)
    decision = reconcile_schema(early)
    assert status_of(early, decision).phase == SchemaPhase.APPLYING
    assert not _released(decision)


def test_a_plan_result_counts_only_once_its_job_is_seen_finished() -> None:
    world = planning()
    block, _ = plan_block(changes=False)
    early = with_result(world, report(world, OperationType.PLAN, plan=block), job=None)
    assert phase(step(early)) != SchemaPhase.IN_SYNC
    done = with_job(early, JobPhase.SUCCEEDED, finished_at=early.now, report_witnessed=True)
    assert phase(step(done)) == SchemaPhase.IN_SYNC


def test_an_observe_result_whose_job_is_not_seen_is_not_taken() -> None:
    world = observing()
    early = with_result(without_job(world), report(world, OperationType.OBSERVE, drift=None))
    decision = reconcile_schema(early)
    assert job_of(decision) == OperationType.OBSERVE.value


def test_a_suspended_plan_job_with_no_pod_running_fails_its_attempt() -> None:
    world = with_job(planning(), JobPhase.ACTIVE, suspended=True)
    assert not _job_deleted(reconcile_schema(_pods_running(world, claim_id(world))))
    decision = reconcile_schema(world)
    assert _job_deleted(decision)
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.retry_at is not None


def _edited(world: SchemaWorld) -> SchemaWorld:
    schema = world.schema.model_copy(deep=True)
    schema.metadata.generation = (schema.metadata.generation or 1) + 1
    return dataclasses.replace(world, schema=schema)


def test_an_apply_whose_job_was_never_seen_but_whose_pod_runs_is_not_over() -> None:
    # Review finding 1: the Job deleted --cascade=orphan before a pass recorded its UID.
    world = applying(dispatched=False)
    orphaned = _pods_running(world, claim_id(world))
    for seen in (orphaned, _edited(orphaned)):
        decision = reconcile_schema(seen)
        after = status_of(seen, decision)
        assert after.phase == SchemaPhase.APPLYING
        assert after.active_operation is not None
        assert after.message is not None
        assert "never seen" in after.message
        assert not _released(decision)
        assert job_of(decision) is None
    late = later(orphaned, RUN_CAP + dt.timedelta(seconds=1))
    assert status_of(late, reconcile_schema(late)).phase == SchemaPhase.APPLYING
    # A Pod still running well past the cap is stuck or forged: the Apply ends all the same.
    _proof_starts(step(later(late, POD_STOP_MARGIN)))


def test_a_result_whose_job_was_never_seen_creates_no_job_and_withdraws_nothing() -> None:
    world = applying(dispatched=False)
    plan = status(world).plan
    assert plan is not None
    block = {"outcome": "Applied", "planDigest": plan.digest, "statementsExecuted": 1}
    early = with_result(world, report(world, OperationType.APPLY, apply=block), job=None)
    for seen in (early, _edited(early)):
        decision = reconcile_schema(seen)
        assert status_of(seen, decision).phase == SchemaPhase.APPLYING
        assert job_of(decision) is None
        assert not _released(decision)
    _proof_starts(step(later(early, RUN_CAP + dt.timedelta(seconds=1))))


def test_the_hard_cap_counts_from_a_late_jobs_creation() -> None:
    # Review finding 3: a refused Apply keeps its claim across retries, so its Job may be
    # created long after the claim; the cap counts from the Job's creation.
    world = applying(dispatched=False)
    claim = claim_of(world)
    refused = step(
        dataclasses.replace(
            world, jobs={}, job_refusals={claim.job_name: "exceeded quota: count/jobs.batch"}
        )
    )
    retried = step(dataclasses.replace(later(refused, RUN_CAP), job_refusals={}))
    assert claim.job_name in retried.jobs
    running = _pods_running(retried, claim.operation_id)
    decision = reconcile_schema(running)
    assert status_of(running, decision).phase == SchemaPhase.APPLYING
    assert not _job_deleted(decision)
    # At the cap from the Job's creation its Job goes, but the Apply ends only once no Pod of
    # it runs.
    capped = later(step(running), RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_schema(capped)
    assert _job_deleted(decision)
    assert status_of(capped, decision).phase == SchemaPhase.APPLYING
    assert not _released(decision)
    gone = step(capped)
    decision = reconcile_schema(gone)
    after = status_of(gone, decision)
    assert after.phase == SchemaPhase.APPLYING
    assert after.message is not None
    assert "Pod" in after.message
    assert not _released(decision)
    _proof_starts(
        step(later(dataclasses.replace(step(gone), running_pods=frozenset()), POD_CACHE_GRACE))
    )


def test_a_plan_is_over_at_its_hard_cap_and_gives_the_lease_back() -> None:
    # Fifth review: a suspended Plan Job with a Pending Pod named after it held the realm Lease
    # for ever. Reads have the Apply's hard cap.
    world = with_job(planning(), JobPhase.ACTIVE, suspended=True)
    wedged = _pods_running(world, claim_id(world))
    before = later(wedged, RUN_CAP - dt.timedelta(minutes=1))
    assert not _job_deleted(reconcile_schema(before))
    capped = later(wedged, RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_schema(capped)
    assert _job_deleted(decision)
    assert not _released(decision)
    assert claim_of(step(capped)).retry_at is None
    # Its Job gone, the Pod still running: no Job is made again, the Lease stays.
    gone = step(capped)
    decision = reconcile_schema(gone)
    assert job_of(decision) is None
    assert not _released(decision)
    # The Pod stopped (or POD_STOP_MARGIN passed): the attempt failed; the Lease is given back.
    for over in (dataclasses.replace(gone, running_pods=frozenset()), later(gone, POD_STOP_MARGIN)):
        decision = reconcile_schema(over)
        assert job_of(decision) is None
        assert _released(decision)
        assert claim_of(step(over)).retry_at is not None


def test_an_apply_ends_only_once_the_job_its_end_deletes_is_gone() -> None:
    # Fifth review: the Apply's end was written before the Job delete that justifies it, so a
    # failed delete left a suspended Job that a resume could run with no claim and no Lease.
    world = with_job(applying(), JobPhase.ACTIVE, suspended=True)
    for attempt in range(2):  # the delete failed: the Job is still there, and asked to go again
        decision = reconcile_schema(world)
        assert _job_deleted(decision), attempt
        after = status_of(world, decision)
        assert after.phase == SchemaPhase.APPLYING
        assert after.active_operation is not None
        assert after.last_apply is None or after.last_apply.operation_id != claim_id(world)
    for gone in (
        with_job(world, JobPhase.ACTIVE, suspended=True, deleting=True),
        later(step(step(world)), POD_CACHE_GRACE),
    ):
        _proof_starts(step(gone))


def test_an_apply_past_its_cap_ends_only_once_its_job_is_gone() -> None:
    world = applying()
    stuck = later(world, RUN_CAP + POD_STOP_MARGIN)
    decision = reconcile_schema(stuck)
    assert _job_deleted(decision)
    assert phase(step(stuck)) == SchemaPhase.APPLYING
    _proof_starts(step(later(step(step(stuck)), POD_CACHE_GRACE)))


def test_a_gone_job_ends_the_apply_only_after_the_pod_cache_grace() -> None:
    # Fifth review: a Job gone ended the Apply in the same pass, though a Pod of it (orphaned)
    # may not be in the Pod cache yet.
    gone = without_job(applying())
    decision = reconcile_schema(gone)
    assert status_of(gone, decision).phase == SchemaPhase.APPLYING
    assert not _released(decision)
    seen = step(gone)
    assert phase(step(_pods_running(seen, claim_id(seen)))) == SchemaPhase.APPLYING
    _proof_starts(step(later(seen, POD_CACHE_GRACE)))


def test_a_plan_cap_counts_from_its_attempts_first_job() -> None:
    # Sixth review: the user deleted the suspended Plan Job just before its cap, the operator
    # made it again, and the cap restarted: one attempt held the realm Lease for hours.
    world = with_job(planning(), JobPhase.ACTIVE, suspended=True)
    op = claim_id(world)
    wedged = _pods_running(world, op)
    start = wedged.now
    for _ in range(2):
        wedged = _pods_running(without_job(later(wedged, RUN_CAP / 3)), op)
        assert job_of(reconcile_schema(wedged)) == OperationType.PLAN.value
        wedged = step(_pods_running(with_job(step(wedged), JobPhase.ACTIVE, suspended=True), op))
    capped = later(wedged, start + RUN_CAP + dt.timedelta(seconds=1) - wedged.now)
    assert _job_deleted(reconcile_schema(capped))


def test_a_forged_job_under_the_apply_name_is_not_the_run_job() -> None:
    # Sixth review: a same-name Job with another UID is not the Apply's Job: the run's is gone.
    world = applying()
    claim = claim_of(world)
    assert claim.job_name is not None
    assert claim.job_uid is not None
    world = later(world, RUN_CAP - dt.timedelta(minutes=1))
    forged = dataclasses.replace(
        world.jobs[claim.job_name], uid="forged", created_at=world.now, phase=JobPhase.ACTIVE
    )
    world = dataclasses.replace(world, jobs={**world.jobs, claim.job_name: forged})
    for _ in range(3):
        world = step(later(world, POD_CACHE_GRACE))
    after = status(world).active_operation
    assert after is None or after.type != OperationType.APPLY


# --- a result is the run's word only with its runner's exit (issue #18) ------------------------


@pytest.mark.parametrize("ended", [JobPhase.FAILED, JobPhase.SUCCEEDED])
def test_an_apply_result_its_runners_exit_does_not_confirm_is_no_outcome(ended: JobPhase) -> None:
    early = step(applied(applying(), job=JobPhase.ACTIVE))
    done = with_job(early, ended, finished_at=early.now)  # the container's exit says otherwise
    assert phase(step(done)) == SchemaPhase.APPLYING  # the Pod cache may lag the Job's
    _proof_starts(step(later(done, RESULT_GRACE)))


def test_an_apply_result_whose_job_is_gone_is_no_outcome() -> None:
    noted = step(without_job(step(applied(applying(), job=JobPhase.ACTIVE))))
    assert phase(noted) == SchemaPhase.APPLYING
    _proof_starts(step(later(noted, POD_CACHE_GRACE)))


def test_a_plan_result_its_runners_exit_does_not_confirm_fails_the_attempt() -> None:
    world = planning()
    block, _ = plan_block(changes=False)
    early = with_result(world, report(world, OperationType.PLAN, plan=block), job=None)
    done = with_job(early, JobPhase.FAILED, finished_at=early.now)
    after = step(later(done, RESULT_GRACE))
    assert phase(after) != SchemaPhase.IN_SYNC
    claim = claim_of(after)
    assert claim.retry_at is not None


# --- an Apply Job the manager made is never made again, nor its claim withdrawn (issue #18) ----


def _made(gone: bool) -> SchemaWorld:
    """An Apply claimed and its Job made (`jobs_made`), no cache showing the Job: not yet, or
    it ran and was deleted before any pass saw it."""
    world = applying(dispatched=False)
    name = job_name(OperationType.APPLY, claim_id(world))
    made = MadeJob("job-made-1", world.now, gone=gone)
    return dataclasses.replace(world, jobs_made={name: made})


def test_an_apply_whose_job_was_made_but_not_seen_is_not_withdrawn() -> None:
    for world in (_made(gone=False), _edited(_made(gone=False))):
        decision = reconcile_schema(world)
        after = status_of(world, decision)
        assert after.phase == SchemaPhase.APPLYING
        assert after.active_operation is not None
        assert not _released(decision)
        assert job_of(decision) == OperationType.APPLY.value  # (the executor only reads it)


def test_an_apply_whose_made_job_is_gone_ends_with_no_outcome_and_is_never_made_again() -> None:
    world = _made(gone=True)
    decision = reconcile_schema(world)
    noted = status_of(world, decision)
    assert job_of(decision) is None
    assert noted.active_operation is not None
    assert noted.active_operation.job_uid == "job-made-1"
    over = step(later(step(world), POD_CACHE_GRACE))
    _proof_starts(over)


def test_an_apply_whose_made_job_never_shows_is_deleted_at_its_cap_and_ends_once_gone() -> None:
    late = later(_made(gone=False), RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_schema(late)
    assert _job_deleted(decision)
    assert status_of(late, decision).phase == SchemaPhase.APPLYING
    assert not _released(decision)
    name = job_name(OperationType.APPLY, claim_id(late))
    gone = dataclasses.replace(
        step(late), jobs_made={name: MadeJob("job-made-1", late.now, gone=True)}
    )
    _proof_starts(step(later(step(gone), POD_CACHE_GRACE)))


def test_an_apply_create_whose_answer_was_lost_and_whose_job_is_absent_has_no_outcome() -> None:
    world = applying(dispatched=False)
    name = job_name(OperationType.APPLY, claim_id(world))
    lost = dataclasses.replace(world, jobs_made={name: MadeJob(None, None, gone=True)})
    decision = reconcile_schema(lost)
    assert job_of(decision) is None
    _proof_starts(step(later(step(lost), POD_CACHE_GRACE)))


# --- after a restart or a new leader: a claim whose Job is not there may have been made ---------


def _restarted(world: SchemaWorld, *, after_claim: bool) -> SchemaWorld:
    written = frozenset() if after_claim else frozenset({claim_of(world).operation_id})
    return dataclasses.replace(world, claims_written=written)


def test_after_a_restart_a_claim_whose_job_is_not_there_is_neither_withdrawn_nor_made_again() -> (
    None
):
    world = _restarted(applying(dispatched=False), after_claim=True)
    for seen in (world, _edited(world)):
        decision = reconcile_schema(seen)
        after = status_of(seen, decision)
        assert after.phase == SchemaPhase.APPLYING
        assert job_of(decision) is None
        assert not _released(decision)
    _proof_starts(step(later(step(world), POD_CACHE_GRACE)))


def test_a_claim_this_process_wrote_whose_job_is_not_there_yet_is_asked_for_again() -> None:
    world = _restarted(applying(dispatched=False), after_claim=False)
    assert job_of(reconcile_schema(world)) == OperationType.APPLY.value


def test_a_claim_waiting_to_try_again_after_a_restart_is_not_taken_for_a_made_job() -> None:
    world = _restarted(applying(dispatched=False), after_claim=True)
    claim = claim_of(world).model_copy(update={"retry_at": world.now + dt.timedelta(minutes=5)})
    status(world).active_operation = claim
    decision = reconcile_schema(world)
    assert status_of(world, decision).active_operation is not None
    assert "may have been made" not in (status_of(world, decision).message or "")


def test_a_job_under_its_name_with_another_uid_than_the_one_made_is_not_the_runs() -> None:
    world = applying()  # a Job in the cache, its UID recorded by nobody yet
    name = job_name(OperationType.APPLY, claim_id(world))
    status(world).active_operation = claim_of(world).model_copy(update={"job_uid": None})
    made = dataclasses.replace(world, jobs_made={name: MadeJob("job-made-1", world.now)})
    after = status_of(made, reconcile_schema(made)).active_operation
    assert after is not None
    assert after.job_uid == "job-made-1"
    assert world.jobs[name].uid != "job-made-1"


def test_a_claim_another_process_left_waiting_to_try_again_is_tried_again_here() -> None:
    # The second review of session 11: the claim written before a restart waits for its retry
    # (its Job refused); this process tries it again, and the claim is its own from then on.
    world = _restarted(applying(dispatched=False), after_claim=True)
    due = claim_of(world).model_copy(update={"retry_at": world.now})
    status(world).active_operation = due
    decision = reconcile_schema(world)
    assert job_of(decision) == OperationType.APPLY.value
    retried = status_of(world, decision).active_operation
    assert retried is not None
    assert retried.retry_at is None
