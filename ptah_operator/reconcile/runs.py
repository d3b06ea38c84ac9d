"""When a dispatched Apply is over: the rules both families follow (migration/apply.py,
schema/apply.py; docs/design/lifecycle-decisions.md, "When a run is over").

- `stage`: where a dispatched run stands, from its Job, its result, its Pods and its Lease.
  A result counts only once its Job ended and the Job's reporting container confirms it by how
  it exited (JobState.report_witnessed). Each family says what each stage means for it (an
  Unknown run read back, an Apply with no outcome proved).
- `cap` and `at_cap`: the hard cap, RUN_CAP from the creation of the attempt's first Job
  (from the claim while no Job was seen); at the cap the Job is deleted, and the run is over once it is gone and no
  Pod of it runs, or POD_STOP_MARGIN later whatever runs.
- `deleted`: a run's end that a Job's deletion justifies waits for the Job to be gone.
- `gone_settled`: a run whose Job is gone ends only POD_CACHE_GRACE after a pass first saw it
  so, when no Pod of it showed meanwhile.
"""

from __future__ import annotations

import datetime as dt
from enum import Enum

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import ObjectRef
from ptah_operator.reconcile.draft import Pass
from ptah_operator.reconcile.schedule import (
    POD_CACHE_GRACE,
    POD_STOP_CHECK,
    POD_STOP_MARGIN,
    RESULT_GRACE,
    RUN_CAP,
)
from ptah_operator.reconcile.world import JobPhase, JobState, OperationResult


class Stage(Enum):
    """Where a dispatched run stands."""

    POD_RUNS = "PodRuns"
    """Its Job is gone, ended or suspended, but a Pod of it still runs (orphaned, or still
    terminating): it may still change the database, so it is not over (issue #18)."""
    SUSPENDED = "Suspended"
    """Its Job is suspended and no Pod of it runs: it would never end by itself."""
    LEASE_LOST_RUNNING = "LeaseLostRunning"
    """The Lease changed hands, and its Job still runs with no result: followed to its end."""
    LEASE_LOST = "LeaseLost"
    """The Lease changed hands, and the run is done: its result is discarded (LCK-11)."""
    EARLY_RESULT = "EarlyResult"
    """A result before its Job's end: not yet the run's last word (whoever holds the
    operation's token could have posted it)."""
    RESULT = "Result"
    """Its Job ended, and the container that reports ended as a runner does once its report is
    stored (JobState.report_witnessed): the result is the run's word."""
    GONE = "Gone"
    """Its Job is gone: whatever result it left, no container of it can confirm it any more."""
    RUNNING = "Running"
    AWAITING_RESULT = "AwaitingResult"
    """Its Job ended a moment ago; its result may be a moment behind (RESULT_GRACE)."""
    NO_RESULT = "NoResult"
    """Its Job ended without a readable result, or with one no container of it confirmed."""


def stage(
    draft: Pass, claim: ActiveOperation, job: JobState | None, result: OperationResult | None
) -> Stage:
    """Where a dispatched run stands; a stage that waits for the result wakes the pass."""
    job_runs = job is not None and job.phase == JobPhase.ACTIVE and not job.suspended
    if not job_runs and claim.operation_id in draft.world.running_pods:
        return Stage.POD_RUNS
    if job is not None and job.suspended and job.phase == JobPhase.ACTIVE:
        return Stage.SUSPENDED
    if claim.lease_continuity_lost:
        return Stage.LEASE_LOST_RUNNING if result is None and job_runs else Stage.LEASE_LOST
    if result is not None and job is not None:
        if job.phase == JobPhase.ACTIVE:
            return Stage.EARLY_RESULT
        if job.report_witnessed:
            return Stage.RESULT
    # From here on a result is no result: its run's container did not end as a runner that
    # reported it does, or its Job is gone and nothing can say (JobState.report_witnessed).
    if job is None:
        return Stage.GONE
    if job.phase == JobPhase.ACTIVE:
        return Stage.RUNNING
    if job.finished_at is not None and draft.now < job.finished_at + RESULT_GRACE:
        return Stage.AWAITING_RESULT
    return Stage.NO_RESULT


def cap(claim: ActiveOperation, job: JobState | None = None) -> dt.datetime:
    """The hard cap: RUN_CAP from the creation of the attempt's first Job once a Job was seen
    (a Job may be created long after its claim: refused and retried, or after an API outage),
    else from the claim. The earliest of the recorded creation and the Job's: a Job made again
    within the attempt, or one made in its place, does not restart it (issue #18, sixth
    review)."""
    times = [t for t in (claim.job_created_at, job.created_at if job else None) if t is not None]
    return max(claim.started_at, min(times, default=claim.started_at)) + RUN_CAP


def run_job(claim: ActiveOperation, job: JobState | None) -> JobState | None:
    """The run's Job: a Job under its name with another UID than the claim recorded is not it
    (one made in its place, its owner label copied): the run's Job is gone (issue #18, sixth
    review)."""
    if job is not None and claim.job_uid is not None and job.uid != claim.job_uid:
        return None
    return job


class AtCap(Enum):
    """Where a run stands against its hard cap."""

    BEFORE = "Before"
    """Not yet at its cap: the pass wakes at the cap."""
    DELETING = "Deleting"
    """Past its cap, and its Job, asked to go, is still there (not even marked for deletion):
    the run is not over until it is gone, since a Job still there could still run (a resumed
    suspension); the pass looks again soon."""
    STOPPING = "Stopping"
    """Past its cap, its Job deleted, and a Pod of it still runs (for at most
    POD_STOP_MARGIN): the pass looks again soon."""
    OVER = "Over"


def at_cap(draft: Pass, claim: ActiveOperation, job: JobState | None) -> AtCap:
    """Where the run stands against its hard cap (`cap`); at the cap its Job is deleted, and
    the run is over only once it is gone (`deleted`)."""
    when = cap(claim, job)
    if draft.now < when:
        draft.wake_at(when)
        return AtCap.BEFORE
    if job is not None and not deleted(draft, claim, job):
        return AtCap.DELETING
    if claim.operation_id in draft.world.running_pods and draft.now < when + POD_STOP_MARGIN:
        draft.wake_in(POD_STOP_CHECK)
        return AtCap.STOPPING
    return AtCap.OVER


def deleted(draft: Pass, claim: ActiveOperation, job: JobState) -> bool:
    """Ask for the Job's deletion (again: an earlier delete may have failed); whether it is
    gone already, as a run's end needs: marked for deletion, so the Job controller starts no
    Pod of it. A run's end that a delete justifies (a suspended Job, the cap) is written only
    then, never in the pass that asks for the delete, which the status write precedes
    (decision.py): a failed delete would leave a Job that a resume runs with no claim and no
    Lease (issue #18, fifth review). Until then the pass looks again soon (the delete's own
    watch event is sooner)."""
    name = claim.job_name or job_name(claim.type, claim.operation_id)
    draft.delete(ObjectRef("batch/v1", "Job", draft.namespace, name))
    if job.deleting:
        return True
    draft.wake_in(POD_STOP_CHECK)
    return False


def note_gone(draft: Pass, claim: ActiveOperation, job: JobState | None) -> ActiveOperation:
    """The claim, with when a pass first found its Job gone recorded (`jobGoneAt`)."""
    if job is not None or claim.job_gone_at is not None:
        return claim
    claim = claim.model_copy(update={"job_gone_at": draft.now})
    draft.status.active_operation = claim
    return claim


def gone_settled(draft: Pass, claim: ActiveOperation) -> bool:
    """Whether a dispatched run whose Job is gone, with no result and no Pod of it in the
    cache, may end now: POD_CACHE_GRACE after a pass first found the Job gone (`note_gone`),
    since an orphaned Pod of it may be a moment behind in the Pod cache (issue #18, fifth
    review). Until then the pass wakes at the grace's end."""
    since = claim.job_gone_at or draft.now
    if draft.now < since + POD_CACHE_GRACE:
        draft.wake_at(since + POD_CACHE_GRACE)
        return False
    return True


def made_elsewhere(draft: Pass, claim: ActiveOperation) -> bool:
    """Whether an Apply claim with no Job seen may have had its Job made by another manager
    process (before a restart, or the previous leader): this process did not write the claim
    (`claims_written`), and no Job of it was seen (`jobUID` unset: the caller takes a Job in
    the cache, and looks at `jobs_made`, first). Such a Job may have run and been removed while
    no one watched; made again, the Apply would run twice (issue #18). The claim is then not
    withdrawn and its Job not made again; once POD_CACHE_GRACE passed with no Pod of it
    showing (`gone_settled`), the run ends with no outcome and its database is read back. A
    claim this process writes again (a schema Apply's retry) is its own from then on."""
    written = draft.world.claims_written
    return (
        claim.job_uid is None
        and claim.retry_at is None  # (a claim waiting to try again has no Job out)
        and written is not None
        and claim.operation_id not in written
    )
