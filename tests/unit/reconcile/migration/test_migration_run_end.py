"""When a migration run is over, and when a result counts (issue #18, third review;
docs/design/lifecycle-decisions.md, "When a run is over").

- A run is over only once no Pod of it is left running: its Job gone (deleted by an `edit`
  user, its Pods orphaned or still terminating) keeps the claim and the Lease, and reads nothing
  back, while such a Pod runs (MIG-19, SUS-02: a running Apply is observed to its end).
- A suspended Job with no Pod running ends the run Unknown (read back at once), and its Job
  goes so that resuming it cannot run the Apply outside the Lease; any run ends Unknown at its
  hard cap (the Job's activeDeadlineSeconds and a margin from the claim).
- A read's result counts only once its Job is seen finished, and an Apply's only once its Job
  was seen: a result posted early by whoever holds the token settles nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import MigrationPhase, OperationType, Reason, RunOutcome
from ptah_operator.reconcile.decision import LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import (
    POD_CACHE_GRACE,
    POD_STOP_MARGIN,
    RESULT_GRACE,
    RUN_CAP,
)
from ptah_operator.reconcile.world import JobPhase, MadeJob
from tests.unit.reconcile.migration.worlds import (
    apply_job_name,
    applying,
    claim_id,
    job_of,
    later,
    new,
    nothing_pending,
    reading,
    report,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    with_job,
    with_result,
    without_job,
)
from tests.unit.reconcile.worlds import condition_reason


def _pods_running(world: MigrationWorld, *operation_ids: str) -> MigrationWorld:
    return dataclasses.replace(world, running_pods=frozenset(operation_ids))


def _released(decision: object) -> bool:
    return any(a.verb == LeaseVerb.RELEASE for a in decision.lease)  # type: ignore[attr-defined]


def _job_deleted(decision: object) -> bool:
    return any(r.kind == "Job" for r in decision.delete)  # type: ignore[attr-defined]


def test_an_apply_whose_job_is_gone_while_a_pod_of_it_runs_is_not_over() -> None:
    world = applying()
    gone = _pods_running(without_job(world), claim_id(world))
    decision = reconcile_migration(gone)
    after = status_of(gone, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.active_operation is not None
    assert after.message is not None
    assert "Pod" in after.message
    assert not _released(decision)
    assert job_of(decision) is None
    # The Pod stopped: now the run is over, Unknown, and read back.
    over = step(later(dataclasses.replace(step(gone), running_pods=frozenset()), POD_CACHE_GRACE))
    assert status(over).phase == MigrationPhase.BLOCKED
    assert condition_reason(status(over)) == Reason.APPLY_OUTCOME_UNKNOWN
    assert status(over).next_reconciliation_time == over.now


def test_a_result_of_an_apply_whose_job_is_gone_waits_for_its_pods() -> None:
    world = run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]), job=None)
    gone = _pods_running(without_job(world), claim_id(world))
    decision = reconcile_migration(gone)
    assert status_of(gone, decision).phase == MigrationPhase.APPLYING
    assert not _released(decision)


def test_a_suspended_apply_job_with_no_pod_running_ends_the_run_unknown() -> None:
    world = with_job(applying(), JobPhase.ACTIVE, suspended=True)
    held = reconcile_migration(_pods_running(world, claim_id(world)))
    assert status_of(world, held).phase == MigrationPhase.APPLYING
    assert _job_deleted(reconcile_migration(world))
    # It ends once its Job is gone (the delete comes first: below).
    gone = later(
        step(step(world)), POD_CACHE_GRACE
    )  # and POD_CACHE_GRACE after a pass found it gone
    after = status_of(gone, reconcile_migration(gone))
    assert after.phase == MigrationPhase.BLOCKED
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN
    assert after.next_reconciliation_time == gone.now


def test_any_run_ends_unknown_at_its_hard_cap() -> None:
    world = applying()
    before = later(world, RUN_CAP - dt.timedelta(minutes=1))
    assert status_of(before, reconcile_migration(before)).phase == MigrationPhase.APPLYING
    late = _pods_running(later(world, RUN_CAP + dt.timedelta(seconds=1)), claim_id(world))
    decision = reconcile_migration(late)
    assert _job_deleted(decision)
    assert status_of(late, decision).phase == MigrationPhase.APPLYING
    # A Pod still running well past the cap is stuck or forged: the run ends all the same.
    stuck = later(step(late), POD_STOP_MARGIN)
    decision = reconcile_migration(stuck)
    after = status_of(stuck, decision)
    assert after.phase == MigrationPhase.BLOCKED
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN


def test_an_apply_result_before_its_job_was_ever_seen_ends_nothing() -> None:
    world = applying(dispatched=False)
    early = with_result(
        world,
        report(world, OperationType.APPLY, run=run_block(RunOutcome.APPLIED, applied=["0002"])),
        job=None,
    )
    decision = reconcile_migration(early)
    after = status_of(early, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.last_run is None
    assert not _released(decision)


def test_a_history_result_counts_only_once_its_job_is_seen_finished() -> None:
    world = reading(new())
    early = with_result(
        world, report(world, OperationType.HISTORY, history=nothing_pending()), job=None
    )
    after = status(step(early))
    assert after.phase != MigrationPhase.IN_SYNC
    assert after.active_operation is not None
    done = with_job(early, JobPhase.SUCCEEDED, finished_at=early.now, report_witnessed=True)
    assert status(step(done)).phase == MigrationPhase.IN_SYNC


def test_a_history_result_whose_job_is_not_seen_is_not_taken_either() -> None:
    world = reading(new())
    early = with_result(
        without_job(world), report(world, OperationType.HISTORY, history=nothing_pending())
    )
    decision = reconcile_migration(early)
    assert status_of(early, decision).phase != MigrationPhase.IN_SYNC
    assert job_of(decision) == OperationType.HISTORY.value


def test_a_suspended_read_job_with_no_pod_running_fails_its_attempt() -> None:
    world = with_job(reading(new()), JobPhase.ACTIVE, suspended=True)
    assert not _job_deleted(reconcile_migration(_pods_running(world, claim_id(world))))
    decision = reconcile_migration(world)
    assert _job_deleted(decision)
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.retry_at is not None


def _edited(world: MigrationWorld) -> MigrationWorld:
    migration = world.migration.model_copy(deep=True)
    migration.metadata.generation = (migration.metadata.generation or 1) + 1
    return dataclasses.replace(world, migration=migration)


def test_an_apply_whose_job_was_never_seen_but_whose_pod_runs_is_not_over() -> None:
    # Review finding 1: the Job deleted --cascade=orphan before a pass recorded its UID.
    world = applying(dispatched=False)
    orphaned = _pods_running(world, claim_id(world))
    for seen in (orphaned, _edited(orphaned)):
        decision = reconcile_migration(seen)
        after = status_of(seen, decision)
        assert after.phase == MigrationPhase.APPLYING
        assert after.active_operation is not None
        assert after.message is not None
        assert "never seen" in after.message
        assert not _released(decision)
        assert job_of(decision) is None
    late = later(orphaned, RUN_CAP + dt.timedelta(seconds=1))
    assert status_of(late, reconcile_migration(late)).phase == MigrationPhase.APPLYING
    # A Pod still running well past the cap is stuck or forged: the run ends all the same.
    over = step(later(late, POD_STOP_MARGIN))
    assert status(over).phase == MigrationPhase.BLOCKED
    assert status(over).next_reconciliation_time == over.now


def test_a_result_whose_job_was_never_seen_creates_no_job_and_withdraws_nothing() -> None:
    world = applying(dispatched=False)
    early = with_result(
        world,
        report(world, OperationType.APPLY, run=run_block(RunOutcome.APPLIED, applied=["0002"])),
        job=None,
    )
    for seen in (early, _edited(early)):
        decision = reconcile_migration(seen)
        assert status_of(seen, decision).phase == MigrationPhase.APPLYING
        assert job_of(decision) is None
        assert not _released(decision)
    over = step(later(early, RUN_CAP + dt.timedelta(seconds=1)))
    assert status(over).phase == MigrationPhase.BLOCKED
    last = status(over).last_run
    assert last is not None
    assert last.outcome == RunOutcome.UNKNOWN


def test_the_hard_cap_counts_from_a_late_jobs_creation() -> None:
    # Review finding 3: a Job created after an API outage, long after the claim; the cap
    # counts from the Job's creation, and at the cap the run ends only once no Pod of it runs.
    world = applying(dispatched=False)
    late_job = step(later(world, RUN_CAP))
    running = _pods_running(late_job, claim_id(late_job))
    decision = reconcile_migration(running)
    assert status_of(running, decision).phase == MigrationPhase.APPLYING
    assert not _job_deleted(decision)
    capped = later(step(running), RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_migration(capped)
    assert _job_deleted(decision)
    assert status_of(capped, decision).phase == MigrationPhase.APPLYING
    assert not _released(decision)
    gone = step(capped)
    decision = reconcile_migration(gone)
    after = status_of(gone, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.message is not None
    assert "Pod" in after.message
    assert not _released(decision)
    over = step(later(dataclasses.replace(step(gone), running_pods=frozenset()), POD_CACHE_GRACE))
    assert status(over).phase == MigrationPhase.BLOCKED


def test_a_read_is_over_at_its_hard_cap() -> None:
    # Fifth review: a suspended History Job with a Pending Pod named after it held the read
    # (and, for a schema Plan, the realm Lease) for ever. Reads have the Apply's hard cap.
    world = with_job(reading(new()), JobPhase.ACTIVE, suspended=True)
    wedged = _pods_running(world, claim_id(world))
    before = later(wedged, RUN_CAP - dt.timedelta(minutes=1))
    assert not _job_deleted(reconcile_migration(before))
    capped = later(wedged, RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_migration(capped)
    assert _job_deleted(decision)
    claim = status_of(capped, decision).active_operation
    assert claim is not None
    assert claim.retry_at is None  # a Pod of it still runs
    # Its Job gone, the Pod still running: no Job is made again, the attempt waits.
    gone = step(capped)
    decision = reconcile_migration(gone)
    assert job_of(decision) is None
    claim = status_of(gone, decision).active_operation
    assert claim is not None
    assert claim.retry_at is None
    # The Pod stopped (or POD_STOP_MARGIN passed): the attempt failed, and is retried.
    for over in (dataclasses.replace(gone, running_pods=frozenset()), later(gone, POD_STOP_MARGIN)):
        decision = reconcile_migration(over)
        assert job_of(decision) is None
        claim = status_of(over, decision).active_operation
        assert claim is not None
        assert claim.retry_at is not None


def test_a_run_ends_only_once_the_job_its_end_deletes_is_gone() -> None:
    # Fifth review: the run's end was written before the Job delete that justifies it, so a
    # failed delete left a suspended Job that a resume could run with no claim and no Lease.
    world = with_job(applying(), JobPhase.ACTIVE, suspended=True)
    for attempt in range(2):  # the delete failed: the Job is still there, and asked to go again
        decision = reconcile_migration(world)
        assert _job_deleted(decision), attempt
        after = status_of(world, decision)
        assert after.phase == MigrationPhase.APPLYING
        assert after.active_operation is not None
        assert after.last_run is None
        assert not _released(decision)
    for gone in (
        with_job(world, JobPhase.ACTIVE, suspended=True, deleting=True),
        later(step(step(world)), POD_CACHE_GRACE),
    ):
        decision = reconcile_migration(gone)
        after = status_of(gone, decision)
        assert after.phase == MigrationPhase.BLOCKED
        assert after.last_run is not None
        assert after.last_run.outcome == RunOutcome.UNKNOWN
        assert _released(decision)


def test_a_run_past_its_cap_ends_only_once_its_job_is_gone() -> None:
    world = applying()
    stuck = later(world, RUN_CAP + POD_STOP_MARGIN)
    decision = reconcile_migration(stuck)
    assert _job_deleted(decision)
    after = status_of(stuck, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.last_run is None
    assert not _released(decision)
    over = step(later(step(step(stuck)), POD_CACHE_GRACE))  # the Job gone: the run ends
    assert status(over).phase == MigrationPhase.BLOCKED


def test_a_gone_job_ends_the_run_only_after_the_pod_cache_grace() -> None:
    # Fifth review: a Job gone ended the run in the same pass, though a Pod of it (orphaned)
    # may not be in the Pod cache yet.
    gone = without_job(applying())
    decision = reconcile_migration(gone)
    after = status_of(gone, decision)
    assert after.phase == MigrationPhase.APPLYING
    assert after.last_run is None
    assert not _released(decision)
    # The Pod shows within the grace: the run is not over while it runs.
    seen = step(gone)
    assert status(step(_pods_running(seen, claim_id(seen)))).phase == MigrationPhase.APPLYING
    over = step(later(seen, POD_CACHE_GRACE))
    assert status(over).phase == MigrationPhase.BLOCKED


def test_a_read_cap_counts_from_its_attempts_first_job() -> None:
    # Sixth review: an `edit` user deleted the suspended History Job just before its cap; the
    # operator made it again, and the cap counted from the new Job: the read never ended.
    world = with_job(reading(new()), JobPhase.ACTIVE, suspended=True)
    wedged = _pods_running(world, claim_id(world))
    start = wedged.now
    for _ in range(2):
        wedged = _pods_running(without_job(later(wedged, RUN_CAP / 3)), claim_id(wedged))
        decision = reconcile_migration(wedged)
        assert job_of(decision) == OperationType.HISTORY.value
        wedged = _pods_running(
            with_job(step(wedged), JobPhase.ACTIVE, suspended=True), claim_id(wedged)
        )
        wedged = step(wedged)
    assert wedged.now < start + 2 * RUN_CAP
    capped = later(wedged, start + RUN_CAP + dt.timedelta(seconds=1) - wedged.now)
    assert _job_deleted(reconcile_migration(capped))


def test_a_forged_job_under_the_apply_name_is_not_the_run_job() -> None:
    # Sixth review: a Job made under the Apply's name (owner label copied) reset the cap; the
    # claim's jobUID was never compared. Another UID is not the run's Job: the run's is gone.
    world = applying()
    claim = status(world).active_operation
    assert claim is not None
    assert claim.job_name is not None
    assert claim.job_uid is not None
    world = later(world, RUN_CAP - dt.timedelta(minutes=1))
    forged = dataclasses.replace(
        world.jobs[claim.job_name], uid="forged", created_at=world.now, phase=JobPhase.ACTIVE
    )
    world = later(
        dataclasses.replace(world, jobs={**world.jobs, claim.job_name: forged}), POD_CACHE_GRACE
    )
    for _ in range(3):
        world = step(later(world, POD_CACHE_GRACE))
    after = status(world)
    assert after.phase != MigrationPhase.APPLYING
    assert after.active_operation is None or after.active_operation.type != OperationType.APPLY


def test_a_forged_read_job_past_the_cap_does_not_hold_the_read() -> None:
    # Sixth review: past its cap the read's Job was deleted (its UID recorded); a Job made
    # in its place under the same name is not the read's: the attempt is over, none is made.
    world = with_job(reading(new()), JobPhase.ACTIVE, suspended=True)
    capped = step(later(world, RUN_CAP + dt.timedelta(seconds=1)))
    claim = status(capped).active_operation
    assert claim is not None
    assert claim.job_name is not None
    assert claim.job_uid is not None
    forged = dataclasses.replace(
        world.jobs[claim.job_name], uid="forged", created_at=capped.now, suspended=False
    )
    world = dataclasses.replace(capped, jobs={**capped.jobs, claim.job_name: forged})
    decision = reconcile_migration(world)
    assert job_of(decision) is None
    after = status_of(world, decision).active_operation
    assert after is not None
    assert after.retry_at is not None


# --- a result is the run's word only with its runner's exit (issue #18, the open HIGH of
# session 8's review: a token holder posts a report first, then kills the runner's Pod) ---------


def _reported_early(outcome: RunOutcome = RunOutcome.APPLIED) -> MigrationWorld:
    """An Apply with a result stored while its Job still ran (the first report, whoever sent it)."""
    world = run_reported(applying(), run_block(outcome, applied=["0002"]), job=JobPhase.ACTIVE)
    return step(world)


def _over_unknown(over: MigrationWorld) -> None:
    after = status(over)
    assert after.phase == MigrationPhase.BLOCKED
    assert condition_reason(after) == Reason.APPLY_OUTCOME_UNKNOWN
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN
    assert after.next_reconciliation_time == over.now  # read back at once


@pytest.mark.parametrize("phase", [JobPhase.FAILED, JobPhase.SUCCEEDED])
def test_an_apply_result_its_runners_exit_does_not_confirm_is_no_outcome(phase: JobPhase) -> None:
    early = _reported_early()
    ended = with_job(early, phase, finished_at=early.now)  # the container's exit says otherwise
    waiting = step(ended)
    assert status(waiting).phase == MigrationPhase.APPLYING  # the Pod cache may lag the Job's
    _over_unknown(step(later(ended, RESULT_GRACE)))


def test_an_apply_result_whose_job_is_gone_is_no_outcome() -> None:
    gone = without_job(_reported_early())
    noted = step(gone)
    assert status(noted).phase == MigrationPhase.APPLYING
    _over_unknown(step(later(noted, POD_CACHE_GRACE)))


def test_a_history_result_its_runners_exit_does_not_confirm_fails_the_attempt() -> None:
    world = reading(new())
    early = with_result(
        world, report(world, OperationType.HISTORY, history=nothing_pending()), job=None
    )
    ended = with_job(early, JobPhase.FAILED, finished_at=early.now)
    after = status(step(later(ended, RESULT_GRACE)))
    assert after.phase != MigrationPhase.IN_SYNC
    assert after.active_operation is not None
    assert after.active_operation.retry_at is not None


def test_a_history_result_is_not_taken_once_its_job_went_by_its_ttl() -> None:
    world = reading(new())
    early = with_result(
        without_job(world), report(world, OperationType.HISTORY, history=nothing_pending())
    )
    late = later(early, dt.timedelta(seconds=world.runner.job_ttl_seconds + 1))
    decision = reconcile_migration(late)
    assert status_of(late, decision).phase != MigrationPhase.IN_SYNC
    assert job_of(decision) == OperationType.HISTORY.value


# --- an Apply Job the manager made is never made again, nor its claim withdrawn (issue #18) ----


def _made(gone: bool) -> MigrationWorld:
    """An Apply claimed and its Job made (the create's answer remembered: `jobs_made`), no
    cache showing the Job: not yet, or it ran and was deleted before any pass saw it."""
    world = applying(dispatched=False)
    made = MadeJob("job-made-1", world.now, gone=gone)
    return dataclasses.replace(world, jobs_made={apply_job_name(world): made})


def test_an_apply_whose_job_was_made_but_not_seen_is_not_withdrawn() -> None:
    for world in (_made(gone=False), _edited(_made(gone=False))):
        decision = reconcile_migration(world)
        after = status_of(world, decision)
        assert after.phase == MigrationPhase.APPLYING
        assert after.active_operation is not None
        assert not _released(decision)
        # Asked for again, which the executor turns into a read of the one it made.
        assert job_of(decision) == OperationType.APPLY.value


def test_an_apply_whose_made_job_is_gone_ends_unknown_and_is_never_made_again() -> None:
    world = _made(gone=True)
    decision = reconcile_migration(world)
    noted = status_of(world, decision)
    assert job_of(decision) is None
    assert noted.active_operation is not None
    assert noted.active_operation.job_uid == "job-made-1"
    assert noted.phase == MigrationPhase.APPLYING
    over = step(later(step(world), POD_CACHE_GRACE))
    _over_unknown(over)
    assert job_of(reconcile_migration(over)) != OperationType.APPLY.value


def test_an_apply_whose_made_job_never_shows_is_deleted_at_its_cap_and_ends_once_gone() -> None:
    late = later(_made(gone=False), RUN_CAP + dt.timedelta(seconds=1))
    decision = reconcile_migration(late)
    assert _job_deleted(decision)
    assert status_of(late, decision).phase == MigrationPhase.APPLYING
    assert not _released(decision)
    deleted = step(late)
    gone = dataclasses.replace(
        deleted, jobs_made={apply_job_name(late): MadeJob("job-made-1", late.now, gone=True)}
    )
    _over_unknown(step(later(step(gone), POD_CACHE_GRACE)))


def test_a_job_under_its_name_with_another_uid_than_the_one_made_is_not_the_runs() -> None:
    world = applying()  # a Job in the cache, its UID recorded by nobody yet
    name = apply_job_name(world)
    claim = status(world).active_operation
    assert claim is not None
    unseen = claim.model_copy(update={"job_uid": None})
    status(world).active_operation = unseen
    made = dataclasses.replace(world, jobs_made={name: MadeJob("job-made-1", world.now)})
    after = status_of(made, reconcile_migration(made)).active_operation
    assert after is not None
    assert after.job_uid == "job-made-1"
    assert world.jobs[name].uid != "job-made-1"


def test_an_apply_create_whose_answer_was_lost_and_whose_job_is_absent_ends_unknown() -> None:
    world = applying(dispatched=False)
    lost = dataclasses.replace(
        world, jobs_made={apply_job_name(world): MadeJob(None, None, gone=True)}
    )
    decision = reconcile_migration(lost)
    assert job_of(decision) is None
    assert status_of(lost, decision).phase == MigrationPhase.APPLYING
    _over_unknown(step(later(step(lost), POD_CACHE_GRACE)))


# --- after a restart or a new leader: a claim whose Job is not there may have been made ---------


def _restarted(world: MigrationWorld, *, after_claim: bool) -> MigrationWorld:
    """The manager process deciding this pass did not write the claim (a restart, a new
    leader: `after_claim`) or wrote it itself."""
    written = frozenset() if after_claim else frozenset({claim_of_world(world).operation_id})
    return dataclasses.replace(world, claims_written=written)


def claim_of_world(world: MigrationWorld) -> Any:
    claim = status(world).active_operation
    assert claim is not None
    return claim


def test_after_a_restart_a_claim_whose_job_is_not_there_is_neither_withdrawn_nor_made_again() -> (
    None
):
    world = _restarted(applying(dispatched=False), after_claim=True)
    for seen in (world, _edited(world)):
        decision = reconcile_migration(seen)
        after = status_of(seen, decision)
        assert after.phase == MigrationPhase.APPLYING
        assert after.active_operation is not None
        assert job_of(decision) is None
        assert not _released(decision)
    _over_unknown(step(later(step(world), POD_CACHE_GRACE)))


def test_a_claim_this_process_wrote_whose_job_is_not_there_yet_is_asked_for_again() -> None:
    world = _restarted(applying(dispatched=False), after_claim=False)
    assert job_of(reconcile_migration(world)) == OperationType.APPLY.value


def test_a_claim_whose_write_this_process_asked_for_is_its_own_whatever_the_clocks() -> None:
    # The second review of session 11: a clock decides nothing; the executor remembers each
    # claim it asked to write, before the write (one whose answer is lost may be on record).
    world = applying(dispatched=False)
    written = frozenset({"op-another", claim_of_world(world).operation_id})
    mine = dataclasses.replace(world, claims_written=written)
    assert job_of(reconcile_migration(mine)) == OperationType.APPLY.value
