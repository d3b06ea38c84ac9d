"""A read under a claim: History (the revision table), and Resolve and Verify (the source).

A read is claimed in `status.activeOperation` in the same Decision that creates its Job
(JOB-04), takes no Lease (LCK-07) and shows its phase (Reading, Resolving, Verifying) until
its result is adopted: a History result is the verdict (history.py), a Resolve or Verify
result pins the source (source_read.py). Everything else below holds for all three.

- Its result comes from the runner's report, never from the Job's exit (PATH-10). A Job that
  ended without a readable result is waited for a short grace (the record may be a moment
  behind), then counts as a failed attempt.
- A failed attempt keeps the phase and the claim: Progressing=True with reason
  OperationFailed, ReconciliationFailed=True naming the failure, an OperationFailed journal
  entry (folded with the ones before it) and a Warning; the same read runs again under the
  same claim, on the same snapshot, after failureRetryInterval (MIG-27, RETRY-01). Its Job and
  result record share the operation's name, so the retry first removes the failed attempt's
  and only then creates the next one.
- A read whose Job the API server refused (admission, a policy, a quota on Jobs) or that
  could not be built: none exists and none will as built, so the read is Failed without its
  claim, reason JobRefused or JobNotBuilt, and the resource starts over from resolution after
  failureRetryInterval (MIG-29, JOB-06).
- A read refused by its files (the init containers, or the runner's own check: a snapshot
  replaced, a Git commit no longer reachable, content that does not give the bound digest) was
  not held to its admission snapshot: Failed, and the resource starts over from resolution
  (MIG-29, SRC-GIT-09: the next Resolve reads the ref again).
- Between attempts, a read gives way (RETRY-02..RETRY-05): at once when its inputs moved, when
  its retry delay ends if a person asked for a read. Giving way retires the claim, writes a
  ReadRestarted Event and leaves the resource Pending for the pass that starts the next read;
  the failure stays on the conditions (RETRY-06). The read that proves an Apply never gives
  way (RETRY-09). Under a Git or OCI source, a History or Verify read also gives way when its
  retry delay ends once spec.interval has passed since the source was last read (RETRY-04); a
  failed Resolve reads the source on every attempt, so only a read request ends it (RETRY-07).
- Under spec.suspend, the read that proves an Apply starts no new attempt (SUS-01): the one
  under way is observed to its end (SUS-03), and after a failed one the claim waits, Suspended,
  until the resource resumes.
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import (
    EventReason,
    OperationType,
    Reason,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import OperationReport
from ptah_operator.reconcile import conditions, resolutions, sources
from ptah_operator.reconcile import reads as core
from ptah_operator.reconcile.decision import OperationCredentials
from ptah_operator.reconcile.draft import new_claim
from ptah_operator.reconcile.jobs import owner_reference
from ptah_operator.reconcile.migration import (
    history,
    planning,
    source_read,
    standings,
)
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.migration.jobs import history_job
from ptah_operator.reconcile.read_request import ReadRequest, answer, answer_invalid, unanswered
from ptah_operator.reconcile.reports import Unreadable, read_report
from ptah_operator.reconcile.schedule import (
    JOB_RECREATE_CHECK,
    failure_retry_interval,
)
from ptah_operator.reconcile.world import OperationResult


def start(
    draft: MigrationDraft,
    *,
    proof: bool,
    request: ReadRequest | None = None,
    pinned: SourceRecord | None = None,
) -> None:
    """Claim a History read and create its Job, taking the snapshot first for a plain read.

    The read that proves an Apply is bound to what that Apply ran from (RETRY-09) and answers
    no read request (RRQ-15). A plain read of a Git or OCI source runs on `pinned`, what this
    cycle's Resolve (and Verify) just pinned; without it the cycle starts with a Resolve."""
    status = draft.status
    chosen = _files_to_read(draft, proof=proof, request=request, pinned=pinned)
    if chosen is None:
        return
    record, proof, request = chosen
    operation_id = draft.world.new_operation_id
    try:
        job = history_job(draft.migration, draft.world.runner, operation_id, record)
    except ValueError as exc:
        _not_built(draft, OperationType.HISTORY, str(exc))
        return
    claim = new_claim(
        draft,
        OperationType.HISTORY,
        operation_id,
        source=record,
        serves_proof=True if proof else None,
        read_request=request.recorded if request is not None else None,
    )
    if request is not None:
        answer(draft, request)
    status.active_operation = claim
    draft.create(
        OperationCredentials(operation_id, draft.namespace, owner_reference(draft.migration))
    )
    draft.create(job)
    draft.stand(standings.reading(proof))


def _files_to_read(
    draft: MigrationDraft,
    *,
    proof: bool,
    request: ReadRequest | None,
    pinned: SourceRecord | None,
) -> tuple[SourceRecord, bool, ReadRequest | None] | None:
    """What a History read reads (the record, whether it proves a run, the request it
    answers), or None when the pass already stood elsewhere (`start`'s docstring)."""
    status = draft.status
    if proof and status.last_run is not None and status.last_run.source is not None:
        record = status.last_run.source
        if not sources.ensure(draft, record):
            _refused(
                draft, None, f"the files the run read ({resolutions.describe(record)}) are gone"
            )
            return None
        return record, True, None
    if sources.read_by_job(draft):
        if pinned is None:
            # A due read of a Git or OCI source starts by reading the source (MIG-06).
            source_read.start_resolve(draft, request)
            return None
        return pinned, False, request
    # A proof with no run's source on record (a restored or edited status) reads the
    # ConfigMap as it is, which must be there and fit first, as for any plain read.
    problem = sources.config_map_problem(draft)
    if problem is not None:
        sources.unresolved(draft, *problem)
        draft.fail(*problem)
        return None
    return sources.take_snapshot(draft), False, request


def observe(draft: MigrationDraft, claim: ActiveOperation) -> None:
    """Follow a read under way: its result, its Job, its failure and its retry."""
    core.observe(draft, READ, claim)


def _read_result(draft: MigrationDraft, claim: ActiveOperation, result: OperationResult) -> None:
    """The attempt reported: fail it, refuse its files, or adopt what it says."""
    report = read_report(result, OperationReport, claim.operation_id, claim.type, draft.uid)
    if isinstance(report, Unreadable):
        _failed_attempt(draft, claim, Reason.OPERATION_FAILED, report.why, result.received_at)
    elif report.error is not None and report.error.reason == ErrorReason.SNAPSHOT_REFUSED:
        _refused(draft, claim, core.failure_words(draft, claim, report.error))
    elif report.error is not None:
        _failed_attempt(
            draft,
            claim,
            conditions.reason_or(report.error.reason, Reason.OPERATION_FAILED),
            core.failure_words(draft, claim, report.error),
            report.finished_at or draft.now,
        )
    elif claim.type != OperationType.HISTORY:
        why = source_read.adopt(draft, claim, report)
        if why is not None:
            _failed_attempt(draft, claim, Reason.OPERATION_FAILED, why, draft.now)
    elif report.history is None:
        _failed_attempt(
            draft, claim, Reason.OPERATION_FAILED, "the result holds no reading", draft.now
        )
    else:
        history.adopt_reading(draft, claim, report, report.history)


def inputs_moved(draft: MigrationDraft, claim: ActiveOperation) -> str | None:
    """What moved under a plain read since it was claimed (MIG-28, reads.inputs_moved), or
    None: a History read is bound to its files."""
    return core.inputs_moved(draft, claim, (OperationType.HISTORY,))


def drop(draft: MigrationDraft, claim: ActiveOperation) -> None:
    """Retire the claim; whatever its Job reports later is not read."""
    if draft.status.active_operation is not None:
        draft.status.active_operation = None


def give_way(draft: MigrationDraft, claim: ActiveOperation, why: str) -> None:
    """The read gives way to a new one (RETRY-05): Pending for the pass that starts it."""
    drop(draft, claim)
    if claim.type == OperationType.HISTORY and sources.record_moved(draft, claim.source):
        planning.retire(draft, why)
    draft.normal(
        EventReason.READ_RESTARTED,
        f"{_what(claim.type)} {claim.operation_id} gave way to a new read: {why}",
    )
    draft.stand(standings.pending(Reason.OPERATION_IN_PROGRESS, f"{why}: a new read starts"))
    draft.rely_on_own_write()


# --- attempts ----------------------------------------------------------------------------------


def _between_attempts(draft: MigrationDraft, claim: ActiveOperation) -> None:
    retry_at = claim.retry_at
    assert retry_at is not None
    reason = claim.last_failure_reason or Reason.OPERATION_FAILED
    if claim.serves_proof and draft.spec.suspend:
        # SUS-01 over SUS-03: the attempt under way ran to its end; no new one starts while
        # suspended. The proof stays claimed, bound to what the run ran from, and its next
        # attempt starts once the resource resumes (docs/design/lifecycle-decisions.md).
        draft.stand(standings.proof_suspended(claim.operation_id))
        return

    def waiting() -> None:
        draft.stand(standings.read_retrying(reason, claim.attempt, retry_at, claim.type))

    def gives_way(why: str) -> None:
        give_way(draft, claim, why)

    if not core.next_attempt_due(draft, claim, waiting=waiting, give_way=gives_way):
        return
    claim = core.next_attempt(claim, draft.now)
    draft.status.active_operation = claim
    if _create_job(draft, claim):
        _running(draft, claim)


def _what(operation: OperationType) -> str:
    return "history read" if operation == OperationType.HISTORY else operation.value


def _create_job(draft: MigrationDraft, claim: ActiveOperation) -> bool:
    if claim.type != OperationType.HISTORY:
        built = source_read.build_job(draft, claim.type, claim.operation_id, claim.source)
        if isinstance(built, str):
            drop(draft, claim)
            _not_built(draft, claim.type, built)
            return False
        job = built
    else:
        record = claim.source
        if record is None or not sources.ensure(draft, record):
            what = resolutions.describe(record) if record is not None else "the source"
            _refused(draft, claim, f"the files the read is bound to ({what}) are gone")
            return False
        try:
            job = history_job(draft.migration, draft.world.runner, claim.operation_id, record)
        except ValueError as exc:
            drop(draft, claim)
            _not_built(draft, OperationType.HISTORY, str(exc))
            return False
    draft.create(
        OperationCredentials(claim.operation_id, draft.namespace, owner_reference(draft.migration))
    )
    draft.create(job)
    return True


def _failed_attempt(
    draft: MigrationDraft, claim: ActiveOperation, reason: str, message: str, when: dt.datetime
) -> None:
    retry_at = draft.now + failure_retry_interval(draft.migration)
    claim = claim.model_copy(update={"retry_at": retry_at, "last_failure_reason": reason})
    draft.status.active_operation = claim
    conditions.record_failure(draft.status, reason, message, draft.now, draft.generation)
    draft.operation_failed(claim.type, reason, when)
    draft.warning(
        EventReason.OPERATION_FAILED,
        f"{_what(claim.type)} {claim.operation_id} failed ({reason}) on attempt "
        f"{claim.attempt}; it runs again after {draft.spec.execution.failure_retry_interval}",
    )
    draft.stand(standings.read_retrying(reason, claim.attempt, retry_at, claim.type))
    draft.wake_at(retry_at)
    request = unanswered(draft.migration)
    if request is not None and not request.valid:
        # RRQ-17, a proof's read too: answering an invalid value is not giving way.
        answer_invalid(draft, request)


def _refused(draft: MigrationDraft, claim: ActiveOperation | None, message: str) -> None:
    """The read could not be held to its files: Failed, and start over from resolution
    (MIG-29). A snapshot that went is SnapshotMissing; fetched content that was refused (a
    commit no longer reachable, another digest) is SourceRefused (SRC-GIT-09)."""
    if claim is not None:
        drop(draft, claim)
    reason = Reason.SOURCE_REFUSED if sources.read_by_job(draft) else Reason.SNAPSHOT_MISSING
    draft.operation_failed(OperationType.HISTORY, reason)
    draft.warning(EventReason.OPERATION_FAILED, f"history read refused: {message}")
    draft.fail(reason, f"the history read was refused: {message}")


def _not_built(draft: MigrationDraft, operation: OperationType, why: str) -> None:
    """The Job could not be built: none exists, Failed (MIG-29)."""
    source_read.not_built(draft, operation, why)


def _job_refused(draft: MigrationDraft, claim: ActiveOperation, name: str, refusal: str) -> None:
    """The API server refused the read's Job: none exists, Failed without the claim (MIG-29)."""
    drop(draft, claim)
    source_read.not_built(draft, claim.type, refusal, reason=Reason.JOB_REFUSED, job=name)


def _make_again(draft: MigrationDraft, claim: ActiveOperation) -> None:
    _create_job(draft, claim)
    draft.wake_in(JOB_RECREATE_CHECK)


def _running(draft: MigrationDraft, claim: ActiveOperation) -> None:
    draft.stand(standings.operating(claim.type, bool(claim.serves_proof), claim.attempt))


READ = core.ReadFamily[MigrationDraft](
    track=lambda draft, claim: claim,
    between_attempts=_between_attempts,
    read_result=_read_result,
    job_refused=_job_refused,
    make_again=_make_again,
    running=_running,
    refused=_refused,
    failed_attempt=_failed_attempt,
)
"""How a migration's reads are followed (reads.observe): a refused Job ends the read Failed
without its claim, and the resource starts over from resolution."""
