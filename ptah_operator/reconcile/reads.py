"""A read under a claim, the rules both families share (migration/reads.py, schema/reads.py).

- What moved under a plain read since it was claimed (MIG-28, SCH-38): the files a read of the
  database is bound to, the source a Verify verifies, the source policy a Resolve runs under,
  the spec's generation, the execution binding. Each family names which of its reads are
  bound to files.
- Between attempts (RETRY-01..RETRY-07): a failed attempt keeps its claim and runs again after
  failureRetryInterval. Until then the read waits; when the delay ends, a plain read gives way
  to a new one if a person asked for a read, or, under a Git or OCI source, once spec.interval
  passed since the source was last read (a failing Resolve reads it on every attempt, so only
  a request ends it); a proof never gives way (RETRY-09). The next attempt reuses the
  operation's name, so the failed attempt's Job and result record are removed first.
- A running Job whose Pod cannot start (a missing Secret or key, an image that cannot be
  pulled, no Pod created: JobState.pod_problem) is a failed attempt once POD_START_GRACE has
  passed (`cannot_start`), with the Kubernetes reason as the failure's; its Job is removed at
  once, so a Pod that could start later does not run an attempt nobody follows.
- Following a read under way (`observe`), one order for both families: between attempts, the
  family's retry; a counted result, the family's adoption; no Job (and none holding the
  name), the API server's refusal of its create if there is one, else its Job made again;
  otherwise what the Job says (`job_without_result`). Each family supplies what each turn
  means for it in a `ReadFamily`, where the seeds word it differently (a refused read ends
  Failed without its claim for a migration, and keeps it for a schema).
- When a read is due with no claim (`read_due`): at once in a phase that starts one, after a
  realm or engine gate lifted, an edit, or a moved source; for a person's request in a phase
  that answers one (RRQ); at the interval otherwise, and a failure waits for its retry time.
  Each family lists its phases in a `ReadCycle`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import Enum
from typing import Generic, TypeVar

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    OperationType,
    Reason,
    SourceKind,
)
from ptah_operator.api.contracts.result import ErrorReport
from ptah_operator.api.names import job_name, result_record_name
from ptah_operator.reconcile import conditions, resolutions, runs, sources
from ptah_operator.reconcile.conditions import PhaseT
from ptah_operator.reconcile.decision import ObjectRef
from ptah_operator.reconcile.draft import Pass, binding_digest, current_binding
from ptah_operator.reconcile.read_request import ReadRequest, answer_invalid, unanswered
from ptah_operator.reconcile.reports import error_words
from ptah_operator.reconcile.schedule import (
    CLEANUP_CHECK,
    POD_START_GRACE,
    RESULT_GRACE,
    RUN_CAP,
    interval,
)
from ptah_operator.reconcile.world import JobPhase, JobState, OperationResult

P = TypeVar("P", bound=Pass)


def inputs_moved(
    draft: Pass, claim: ActiveOperation, bound_to_files: Collection[OperationType]
) -> str | None:
    """What moved under a plain read since it was claimed, or None. A read of a type in
    `bound_to_files` is bound to the files it reads; a Resolve to the spec alone; a Verify to
    the digest it verifies."""
    if claim.type in bound_to_files and sources.record_moved(draft, claim.source):
        return "the source changed"
    if claim.type == OperationType.VERIFY and not sources.names_spec_source(draft, claim.source):
        return "the source changed"
    if (
        claim.type == OperationType.RESOLVE
        and claim.source is not None
        and claim.source.source_policy_digest != sources.source_policy_digest(draft)
    ):
        return "the source policy changed"
    if claim.generation != draft.generation:
        return f"the spec changed (generation {draft.generation})"
    if binding_digest(claim.execution_binding) != binding_digest(current_binding(draft.world)):
        return "the execution binding changed"
    return None


def source_read_due(draft: Pass, claim: ActiveOperation) -> bool:
    """RETRY-04: under a Git or OCI source, a failing read other than a Resolve gives way once
    the interval passed since the source was last read (a Resolve reads it every attempt)."""
    if claim.type == OperationType.RESOLVE or not sources.read_by_job(draft):
        return False
    record = draft.status.source
    read_at = record.resolved_at if record is not None else None
    return read_at is None or draft.now >= read_at + interval(draft.resource)


def cannot_start(draft: Pass, job: JobState) -> tuple[str, str] | None:
    """The reason and message of a running Job whose Pod cannot start, once POD_START_GRACE
    has passed (the pass wakes for it until then); None while it may still start. The message
    names the Job, the Kubernetes reason and what is missing by name, nothing the server
    wrote."""
    problem = job.pod_problem
    if problem is None:
        return None
    due = (problem.since or draft.now) + POD_START_GRACE
    if draft.now < due:
        draft.wake_at(due)
        return None
    return conditions.reason_or(problem.reason, Reason.OPERATION_FAILED), pod_message(job)


def apply_cannot_start(draft: Pass, job: JobState) -> None:
    """A dispatched Apply whose Pod cannot start is not ended here: a Pod may still start once
    the Secret appears, and the run is followed to its end (its Job's deadline at the latest,
    RETRY-08). The reason is surfaced meanwhile: ReconciliationFailed names it, and a Warning
    says so once, when the condition first takes that reason."""
    stuck = cannot_start(draft, job)
    if stuck is None:
        return
    reason, message = stuck
    failed = draft.status.condition(ConditionType.RECONCILIATION_FAILED)
    message += "; the Apply is followed to its end, its Job's deadline at the latest"
    if failed is None or failed.reason != reason or failed.message != message:
        draft.warning(EventReason.OPERATION_FAILED, message)
    conditions.record_failure(draft.status, reason, message, draft.now, draft.generation)


def pod_message(job: JobState) -> str:
    """What a Job whose Pod could not start says of it, by reason and missing names only."""
    problem = job.pod_problem
    assert problem is not None
    detail = f" ({problem.detail})" if problem.detail else ""
    return f"the Pod of Job {job.name} cannot start: {problem.reason}{detail}"


def job_ending(words: str, job: JobState) -> str:
    """`words`, and how the Job's failing container ended (its name, exit code and reason word:
    `JobState.message`, never text the container wrote)."""
    return f"{words} ({job.message})" if job.message else words


def clear_leftovers(draft: Pass, claim: ActiveOperation) -> bool:
    """Delete the failed attempt's Job and result record, which the next attempt's reuse the
    names of; True while either still exists."""
    name = claim.job_name or job_name(claim.type, claim.operation_id)
    leftovers = False
    if name in draft.world.jobs:
        draft.delete(ObjectRef("batch/v1", "Job", draft.namespace, name))
        leftovers = True
    result = draft.world.results.get(claim.operation_id)
    if result is not None:
        record = result.record_name or result_record_name(claim.operation_id)
        draft.delete(ObjectRef("v1", "ConfigMap", draft.namespace, record))
        leftovers = True
    return leftovers


def next_attempt_due(
    draft: Pass,
    claim: ActiveOperation,
    *,
    waiting: Callable[[], None],
    give_way: Callable[[str], None],
) -> bool:
    """Between attempts: whether the next attempt may start in this pass. Otherwise this pass
    answered an invalid read request, waits (`waiting` stands, and the pass wakes at the retry
    time, or soon while the leftovers go), or gives way (`give_way`, given why)."""
    retry_at = claim.retry_at
    assert retry_at is not None
    proof = bool(claim.serves_proof)
    request = unanswered(draft.resource)
    if request is not None and not request.valid:
        # RRQ-17, a proof's read too: an invalid value starts and ends nothing, so answering
        # it is not giving way (RRQ-15 keeps a proof from giving way to an instant only).
        answer_invalid(draft, request)
        request = None
    if draft.now < retry_at:
        waiting()
        draft.wake_at(retry_at)
        return False
    if request is not None and not proof:
        give_way(f"a read was requested at {request.value}")
        return False
    if not proof and source_read_due(draft, claim):
        give_way("spec.interval passed since the source was last read")
        return False
    if clear_leftovers(draft, claim):
        waiting()
        draft.wake_in(CLEANUP_CHECK)
        return False
    return True


# --- when a read is due ------------------------------------------------------------------------


class Due(Enum):
    """Why a read is due now, if it is."""

    NO = "No"
    STRUCTURAL = "Structural"
    """New, Pending, resumed, after a gate lifted, an edit, a moved source."""
    REQUESTED = "Requested"
    INTERVAL = "Interval"


GATE_REASONS = frozenset(
    {Reason.REALM_CONFLICT, Reason.REALM_NOT_AUTHORIZED, Reason.UNSUPPORTED_ENGINE}
)
"""Blocked for these is a realm or engine check, not a verdict about the database."""


@dataclass(frozen=True)
class ReadCycle(Generic[PhaseT]):
    """A family's phases as the read cycle sees them."""

    starting: frozenset[PhaseT]
    """Phases in which a read is due at once (new, Pending, resumed, an operation's)."""
    answering: frozenset[PhaseT]
    """Phases in which a person's read request is answered by a read now."""
    blocked: PhaseT
    failed: PhaseT
    policy_moves_source: bool
    """Whether a replaced verification policy is a moved source (sources.source_moved)."""


def blocked_by_gate(phase: PhaseT | None, draft: Pass, cycle: ReadCycle[PhaseT]) -> bool:
    """Blocked by a realm or engine check rather than by a verdict about the database."""
    return phase == cycle.blocked and conditions.ready_reason(draft.status) in GATE_REASONS


def read_due(
    draft: Pass, phase: PhaseT | None, request: ReadRequest | None, cycle: ReadCycle[PhaseT]
) -> Due:
    """Why a read is due now with no claim, if it is (RETRY-12, RRQ-04)."""
    status = draft.status
    if phase is None or phase in cycle.starting or blocked_by_gate(phase, draft, cycle):
        return Due.STRUCTURAL
    if status.observed_generation != draft.generation or sources.source_moved(
        draft, policy_moves_source=cycle.policy_moves_source
    ):
        return Due.STRUCTURAL
    if request is not None and request.valid and phase in cycle.answering:
        return Due.REQUESTED
    due_at = status.next_reconciliation_time
    if phase == cycle.failed:
        return Due.INTERVAL if due_at is not None and draft.now >= due_at else Due.NO
    if due_at is None or draft.now >= due_at:
        return Due.INTERVAL
    return Due.NO


def result_of_finished(
    draft: Pass, claim: ActiveOperation, job: JobState | None
) -> OperationResult | None:
    """A read's result, once it counts: its Job is seen finished and its reporting container
    confirms it by how it exited (JobState.report_witnessed). Anything else is no read's word:
    whoever holds the operation's token could have posted it before the runner, and killed the
    runner's Pod after (issue #18), so the read goes on as if none had come: a Job that ended
    fails the attempt after RESULT_GRACE, and a gone Job is created again (a read may run
    twice; its second report, if different, makes the record a conflict, and the attempt fails
    and is retried)."""
    result = draft.world.results.get(claim.operation_id)
    if result is None or job is None:
        return None
    return result if job.phase != JobPhase.ACTIVE and job.report_witnessed else None


@dataclass(frozen=True)
class JobVerdict:
    """What a read's Job with no counted result says of the attempt: it runs or its result is
    awaited (neither field set), its files were refused (`refused`: the message), or the
    attempt failed (`failed`: the reason, the message and when)."""

    refused: str | None = None
    failed: tuple[str, str, dt.datetime] | None = None


RUNS = JobVerdict()


def seen(claim: ActiveOperation, job: JobState | None) -> ActiveOperation:
    """The claim with its read Job's UID and creation time recorded (when the cap deletes the
    Job): the read's hard cap counts from the attempt's first Job, and still does once the Job
    is gone; the earliest creation recorded is kept (`made_again`, issue #18, sixth review)."""
    if job is None or claim.job_uid is not None:
        return claim
    times = [t for t in (claim.job_created_at, job.created_at) if t is not None]
    created = min(times, default=None)
    return claim.model_copy(update={"job_uid": job.uid, "job_created_at": created})


def made_again(claim: ActiveOperation) -> ActiveOperation:
    """The claim as its Job is made again within the attempt: the cap still counts from when
    the attempt's first Job was made (the claim's start for the first attempt, the attempt's
    own start after: `next_attempt`), recorded in the write this pass makes anyway, not on a
    pass that only sees a Job (issue #18, sixth review)."""
    return claim.model_copy(
        update={"job_uid": None, "job_created_at": claim.job_created_at or claim.started_at}
    )


def next_attempt(claim: ActiveOperation, now: dt.datetime) -> ActiveOperation:
    """The claim for its next attempt: a new Job, so no Job seen yet; its Job is made now, and
    the attempt's cap counts from then at the latest (`made_again`); no report stored."""
    return claim.model_copy(
        update={
            "attempt": claim.attempt + 1,
            "retry_at": None,
            "job_uid": None,
            "job_created_at": now,
            "job_gone_at": None,
            "report": None,
        }
    )


def _over_at_cap(draft: Pass, claim: ActiveOperation, job: JobState | None) -> JobVerdict | None:
    """A read is held to the Apply's hard cap (runs.at_cap, issue #18, fifth review): past it,
    its Job is deleted, and the attempt fails once no Pod of it runs (or POD_STOP_MARGIN
    later, whatever runs); until then it is still under way. None before the cap."""
    at_cap = runs.at_cap(draft, claim, job)
    if at_cap == runs.AtCap.BEFORE:
        return None
    # The Job is deleted now: the claim keeps when it was made, so that it is not made again.
    draft.status.active_operation = seen(claim, job)
    if at_cap in (runs.AtCap.DELETING, runs.AtCap.STOPPING):
        return RUNS
    name = claim.job_name or job_name(claim.type, claim.operation_id)
    minutes = int(RUN_CAP.total_seconds() // 60)
    why = f"Job {name} was not over {minutes} minutes after it was made"
    return JobVerdict(failed=(Reason.OPERATION_FAILED, why, draft.now))


def job_gone(draft: Pass, claim: ActiveOperation) -> JobVerdict | None:
    """A read whose Job is not there: None when it is to be made (again); once the cap deleted
    the attempt's Job, it is not made again (`_over_at_cap`)."""
    if claim.job_uid is None and claim.job_created_at is None:
        return None
    return _over_at_cap(draft, claim, None)


def job_without_result(draft: Pass, claim: ActiveOperation, job: JobState) -> JobVerdict:
    """A read's Job with no counted result, the same rule for every read of both families: past
    its hard cap it is deleted and the attempt is over (`_over_at_cap`); a suspended Job with
    no Pod running, or a running one whose Pod cannot start, is deleted and fails the attempt;
    a Job that ended waits RESULT_GRACE for its record, then fails it (naming its Pod's problem
    or how its container ended)."""
    name = job.name
    capped = _over_at_cap(draft, claim, job)
    if capped is not None:
        return capped
    if suspended_for_good(draft, job):
        draft.delete(ObjectRef("batch/v1", "Job", draft.namespace, name))
        return JobVerdict(failed=(Reason.OPERATION_FAILED, f"Job {name} was suspended", draft.now))
    if job.phase == JobPhase.ACTIVE:
        stuck = cannot_start(draft, job)
        if stuck is None:
            return RUNS
        draft.delete(ObjectRef("batch/v1", "Job", draft.namespace, name))
        return JobVerdict(failed=(*stuck, draft.now))
    if job.snapshot_refused:
        return JobVerdict(refused=job_ending(f"the files were refused by Job {name}", job))
    if job.finished_at is not None and draft.now < job.finished_at + RESULT_GRACE:
        draft.wake_at(job.finished_at + RESULT_GRACE)
        return RUNS
    if job.pod_problem is not None:
        reason = conditions.reason_or(job.pod_problem.reason, Reason.OPERATION_FAILED)
        message = pod_message(job)
    else:
        reason = conditions.reason_or(job.reason, Reason.OPERATION_FAILED)
        message = job_ending(f"Job {name} ended without a readable result", job)
    return JobVerdict(failed=(reason, message, job.finished_at or draft.now))


def suspended_for_good(draft: Pass, job: JobState) -> bool:
    """A read's Job someone suspended, with no Pod of it running: it would never end (and a
    schema Plan holds the realm Lease), so the attempt fails and is retried (issue #18)."""
    return (
        job.phase == JobPhase.ACTIVE
        and job.suspended
        and job.operation_id not in draft.world.running_pods
    )


def failure_words(draft: Pass, claim: ActiveOperation, error: ErrorReport) -> str:
    """Why a read could not do its work, in the manager's words (reports.error_words); a
    Resolve's or a Verify's names the source it last recorded (the commit a ref moved away
    from, the artifact), which the runner's own words named before (issue #18)."""
    words = error_words(error)
    record = draft.status.source
    reads_source = claim.type in (OperationType.RESOLVE, OperationType.VERIFY)
    if reads_source and record is not None and record.kind != SourceKind.CONFIG_MAP:
        return f"{words}; the source last recorded is {resolutions.describe(record)}"
    return words


# --- following a read under way ----------------------------------------------------------------


@dataclass(frozen=True)
class ReadFamily(Generic[P]):
    """What a family does at each turn of following one of its reads (`observe`)."""

    track: Callable[[P, ActiveOperation], ActiveOperation]
    """The claim with whatever the family tracks on every pass recorded (a schema's Lease
    epoch, LCK-10); the claim itself where the family tracks nothing."""
    between_attempts: Callable[[P, ActiveOperation], None]
    """A failed attempt's claim: wait, give way, or start the next attempt."""
    read_result: Callable[[P, ActiveOperation, OperationResult], None]
    """The attempt's counted result: adopt what it says, or fail the attempt."""
    job_refused: Callable[[P, ActiveOperation, str, str], None]
    """The API server refused to create the Job (its name, the refusal's reason)."""
    make_again: Callable[[P, ActiveOperation], None]
    """Ask for the attempt's Job again (`made_again` recorded on the claim already)."""
    running: Callable[[P, ActiveOperation], None]
    """The attempt runs, or its result is awaited: the family's standing for it."""
    refused: Callable[[P, ActiveOperation, str], None]
    """The read could not be held to its files (the message)."""
    failed_attempt: Callable[[P, ActiveOperation, str, str, dt.datetime], None]
    """The attempt failed (reason, message, when)."""


def observe(draft: P, family: ReadFamily[P], claim: ActiveOperation) -> None:
    """Follow a read under way: its retry, its result, its Job, its failure."""
    claim = family.track(draft, claim)
    if claim.retry_at is not None:
        family.between_attempts(draft, claim)
        return
    name = claim.job_name or job_name(claim.type, claim.operation_id)
    found = draft.world.jobs.get(name)
    job = runs.run_job(claim, found)
    result = result_of_finished(draft, claim, job)
    if result is not None:
        family.read_result(draft, claim, result)
        return
    verdict = job_gone(draft, claim) if job is None else None
    if job is None and verdict is None and found is not None:
        verdict = RUNS  # another Job holds the name: none is made over it; the cap runs
    if job is None and verdict is None:
        refusal = draft.world.job_refusals.get(name)
        if refusal is not None:
            family.job_refused(draft, claim, name, refusal)
            return
        claim = made_again(claim)
        draft.status.active_operation = claim
        family.make_again(draft, claim)
        return
    if verdict is None:
        assert job is not None
        verdict = job_without_result(draft, claim, job)
    if verdict.refused is not None:
        family.refused(draft, claim, verdict.refused)
    elif verdict.failed is not None:
        family.failed_attempt(draft, claim, *verdict.failed)
    else:
        family.running(draft, claim)
