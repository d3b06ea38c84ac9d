"""Following an Apply claim to its end: the one rule both families follow (issue #14).

An Apply's Job appearing is its dispatch (the claim records the Job's UID and the approval is
consumed then, JNL-05). Before that, whatever moved under the claim is the family's to judge
(`ApplyFamily.undispatched`: a migration and a schema withdraw to different phases). After it,
the Apply never gives way (RETRY-08), not to suspend either (SUS-02): it is followed to its end
through `runs.stage`, and each end is the family's (`end_unknown`: a migration's run is held
and read back, a schema's Apply ends with no outcome and is proved; `end_reported`; a
migration's snapshot refused before its run container started, `end_refused`).

Between the two, the cases where the Job was never seen but the Apply may have begun (issue
#18): a result or a running Pod of it (`_begun_unseen`), a Job this manager asked for and whose
answer it lost (`_made_unseen`, `_made_elsewhere`), a claim another manager process wrote
(`runs.made_elsewhere`). None of them is withdrawn or has its Job made again; each ends with
no outcome at its hard cap, or once no Pod of it shows.

The messages are the families' own where the seeds word them differently (`run` or `Apply`);
everything else is said once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import OperationType
from ptah_operator.api.names import job_name
from ptah_operator.reconcile import reads as core
from ptah_operator.reconcile import runs
from ptah_operator.reconcile.conditions import Standing
from ptah_operator.reconcile.decision import ObjectRef
from ptah_operator.reconcile.draft import Draft
from ptah_operator.reconcile.realm import Refusal
from ptah_operator.reconcile.schedule import (
    JOB_RECREATE_CHECK,
    POD_STOP_CHECK,
    RESULT_GRACE,
    RUN_CAP,
)
from ptah_operator.reconcile.world import JobState, OperationResult

D = TypeVar("D", bound=Draft[Any, Any, Any])


@dataclass(frozen=True)
class ApplyFamily(Generic[D]):
    """What a family supplies to follow its Apply claims: its words, its standings, and what
    each end and each undispatched claim means for it."""

    run: str
    """What the family's messages call an Apply: "run" (a migration) or "Apply" (a schema)."""
    cap_subject: str
    """The subject of the message that ends an Apply at its hard cap: "the run" or "it"."""
    lease_lost_running: str
    """Why a run whose Lease changed hands and whose Job still runs is not over."""
    awaiting_result: str
    """Why a run whose Job ended a moment ago is not over (its result may be a moment behind)."""
    applying: Callable[[str, str], Standing[Any]]
    """The family's Applying standing: plan name, why."""
    accept: Callable[[D, ActiveOperation], None]
    """The Apply consumed its approval: its Job exists."""
    track_lease: Callable[[D, ActiveOperation], ActiveOperation]
    """The claim with the Lease epoch it holds, or the Lease's loss, recorded (LCK-10)."""
    undispatched: Callable[[D, ActiveOperation, str, Refusal | None], None]
    """A claim whose Job does not exist and may not have been made: withdrawn, or its Job
    asked for (again)."""
    remake: Callable[[D, ActiveOperation], bool]
    """Ask for the Job of a claim this manager made but no cache shows yet (a manifest that
    cannot be built asks for nothing); False when it cannot be asked for (its plan is gone)."""
    end_unknown: Callable[[D, ActiveOperation, JobState | None, str], None]
    """The Apply ends with no outcome, for the reason given."""
    end_reported: Callable[[D, ActiveOperation, JobState | None, OperationResult], None]
    """The Apply ends as its witnessed result says."""
    end_refused: Callable[[D, ActiveOperation, JobState], None] | None = None
    """The Job's snapshot was refused before the container that holds the database URL
    started (a migration's SRC-CM-08), or None where the family has no such end."""


def observe(
    draft: D, family: ApplyFamily[D], claim: ActiveOperation, refusal: Refusal | None
) -> None:
    """Follow an Apply claim to its end."""
    world = draft.world
    name = claim.job_name or job_name(OperationType.APPLY, claim.operation_id)
    job = world.jobs.get(name)
    result = world.results.get(claim.operation_id)
    made = world.jobs_made.get(name)
    # Refused, or the name taken by a Job Ptah did not make (the executor read it): no Job
    # of this Apply was made, so none under its name is adopted, and nothing of it has begun.
    refused = claim.job_uid is None and made is None and name in world.job_refusals
    if claim.job_uid is None and made is not None and made.uid is not None and (made.gone or job):
        # The Job this manager made, by the create's answer: the Apply began with it, and a
        # Job under its name with another UID is not it (runs.run_job; issue #18).
        claim = claim.model_copy(update={"job_uid": made.uid, "job_created_at": made.created_at})
        family.accept(draft, claim)
    elif claim.job_uid is None and job is not None and not refused:
        claim = claim.model_copy(update={"job_uid": job.uid, "job_created_at": job.created_at})
        family.accept(draft, claim)
    job = runs.run_job(claim, job)
    claim = family.track_lease(draft, claim)
    draft.status.active_operation = claim

    # A result before its Job was ever seen is no Apply's word: whoever holds the operation's
    # token could have posted it (issue #18). The claim goes on as if none had come.
    dispatched = claim.job_uid is not None
    begun = result is not None or claim.operation_id in world.running_pods
    if not dispatched and begun and not refused:
        _begun_unseen(draft, family, claim, name)
    elif not dispatched and made is not None and made.gone:
        # Asked for, its answer lost, and not there: it may have been made (issue #18).
        _made_elsewhere(draft, family, claim, name)
    elif not dispatched and made is not None:
        _made_unseen(draft, family, claim, name)
    elif runs.made_elsewhere(draft, claim):
        _made_elsewhere(draft, family, claim, name)
    elif not dispatched:
        family.undispatched(draft, claim, name, refusal)
    else:
        _follow_dispatched(draft, family, claim, name, job, result)


def _applying(draft: D, family: ApplyFamily[D], claim: ActiveOperation, why: str) -> None:
    draft.stand(family.applying(claim.plan.name if claim.plan else "?", why))


def _begun_unseen(draft: D, family: ApplyFamily[D], claim: ActiveOperation, name: str) -> None:
    """The Job was never seen, but the Apply has begun: a result came, or a Pod of it runs (the
    Job deleted with its Pods orphaned before a pass recorded its UID). Nothing is withdrawn
    and no Job made again, which would run the Apply twice; the result is not taken either (no
    run's word: whoever holds the operation's token could have posted it, issue #18). The Apply
    is over at its hard cap, from the claim, once no Pod of it runs: no outcome."""
    if runs.at_cap(draft, claim, None) == runs.AtCap.OVER:
        family.accept(draft, claim)
        family.end_unknown(
            draft, claim, None, f"Job {name} was never seen; its result is not taken"
        )
        return
    why = f"Job {name} was never seen but the {family.run} has begun"
    if claim.operation_id in draft.world.running_pods:
        why += "; a Pod of it still runs"
    _applying(draft, family, claim, why)


def _made_elsewhere(draft: D, family: ApplyFamily[D], claim: ActiveOperation, name: str) -> None:
    """The claim was written by another manager process and its Job is not there: it may have
    been made, run and removed while no one watched (runs.made_elsewhere). Not withdrawn and
    not made again; once no Pod of it shows (POD_CACHE_GRACE), no outcome, at once."""
    claim = runs.note_gone(draft, claim, None)
    if runs.gone_settled(draft, claim):
        family.accept(draft, claim)
        family.end_unknown(
            draft, claim, None, f"Job {name} may have been made before this manager ran"
        )
        return
    why = f"Job {name} is not there and may have been made before this manager ran"
    _applying(draft, family, claim, why)


def _made_unseen(draft: D, family: ApplyFamily[D], claim: ActiveOperation, name: str) -> None:
    """The manager made the Job, and no cache shows it yet: the Apply may have begun, so the
    claim is not withdrawn, whatever moved. The Job is asked for again, which the executor
    turns into a read (a 404 marks it gone: `MadeJob.gone`); with its plan gone it cannot be
    asked for. Past its hard cap it is deleted by name, and the Apply is over once the delete
    is done."""
    if runs.at_cap(draft, claim, None) != runs.AtCap.BEFORE:
        # Still there for all the executor knows (relabelled out of the cache, say): deleted,
        # and the Apply ends once that delete is done (MadeJob.gone), never before.
        draft.delete(ObjectRef("batch/v1", "Job", draft.namespace, name))
        draft.wake_in(POD_STOP_CHECK)
        why = f"past its hard cap: Job {name}, made but never seen, is being deleted"
        _applying(draft, family, claim, why)
        return
    if family.remake(draft, claim):
        draft.wake_in(JOB_RECREATE_CHECK)
    _applying(draft, family, claim, f"Job {name} was made but is not seen yet")


def _follow_dispatched(
    draft: D,
    family: ApplyFamily[D],
    claim: ActiveOperation,
    name: str,
    job: JobState | None,
    result: OperationResult | None,
) -> None:
    """A dispatched Apply never gives way: follow it to its end, whatever it left
    (runs.stage)."""
    claim = runs.note_gone(draft, claim, job)
    stage = runs.stage(draft, claim, job, result)
    if stage == runs.Stage.POD_RUNS:
        # It may still change the database: nothing reads it back and the Lease stays until
        # that Pod stops (issue #18).
        _not_over(draft, family, claim, job, f"a Pod of Job {name} still runs")
    elif stage == runs.Stage.SUSPENDED:
        assert job is not None
        _suspended(draft, family, claim, name, job)
    elif stage == runs.Stage.LEASE_LOST_RUNNING:
        # Its result will be discarded, but nothing may read a database it may still be
        # changing: it is followed to its end (SUS-02), and only then declared unknown.
        _not_over(draft, family, claim, job, family.lease_lost_running)
    elif stage == runs.Stage.LEASE_LOST:
        lost = (
            f"the database-realm Lease changed hands during the {family.run}: "
            "its result is discarded"
        )
        family.end_unknown(draft, claim, job, lost)
    elif stage == runs.Stage.EARLY_RESULT:
        # Not yet its last word: the claim, the Lease and the gate to the next Apply stay
        # until the Job is done.
        _not_over(draft, family, claim, job, "")
    elif stage == runs.Stage.RESULT:
        assert result is not None
        family.end_reported(draft, claim, job, result)
    elif stage == runs.Stage.GONE and runs.gone_settled(draft, claim):
        family.end_unknown(draft, claim, None, f"Job {name} is gone and left no result")
    elif stage == runs.Stage.GONE:
        _applying(draft, family, claim, f"Job {name} is gone: the run ends once no Pod of it shows")
    elif stage == runs.Stage.RUNNING:
        assert job is not None
        _not_over(draft, family, claim, job, "")
        if draft.status.active_operation is not None:
            core.apply_cannot_start(draft, job)
    elif job is not None and job.snapshot_refused and family.end_refused is not None:
        family.end_refused(draft, claim, job)
    elif stage == runs.Stage.AWAITING_RESULT:
        assert job is not None
        assert job.finished_at is not None
        _applying(draft, family, claim, family.awaiting_result)
        draft.wake_at(job.finished_at + RESULT_GRACE)
    else:
        family.end_unknown(draft, claim, job, f"Job {name} ended without a readable result")


def _suspended(
    draft: D, family: ApplyFamily[D], claim: ActiveOperation, name: str, job: JobState
) -> None:
    """Its Job is suspended: it would never end by itself. It ends with no outcome, and its
    Job goes, so that resuming it cannot run the Apply without the Lease; the end is written
    only once the Job is going (runs.deleted)."""
    if runs.deleted(draft, claim, job):
        family.end_unknown(draft, claim, job, f"Job {name} was suspended before it ended")
    else:
        why = f"Job {name} was suspended: the run ends once it is deleted"
        _applying(draft, family, claim, why)


def _not_over(
    draft: D, family: ApplyFamily[D], claim: ActiveOperation, job: JobState | None, why: str
) -> None:
    """The Apply is not over: the claim and the Lease stay, and status says why; but any Apply
    is over at its hard cap (`runs.at_cap`): its Job is deleted then, and once no Pod of it
    runs (or POD_STOP_MARGIN later, whatever runs) it ends with no outcome."""
    name = claim.job_name or job_name(OperationType.APPLY, claim.operation_id)
    at_cap = runs.at_cap(draft, claim, job)
    if at_cap == runs.AtCap.OVER:
        minutes = int(RUN_CAP.total_seconds() // 60)
        family.end_unknown(
            draft,
            claim,
            job,
            f"{family.cap_subject} was not over {minutes} minutes after its Job was made",
        )
        return
    if at_cap == runs.AtCap.DELETING:
        why = f"past its hard cap: Job {name} is being deleted"
    elif at_cap == runs.AtCap.STOPPING:
        why = f"past its hard cap: Job {name} is deleted, and a Pod of it still runs"
    _applying(draft, family, claim, why)
