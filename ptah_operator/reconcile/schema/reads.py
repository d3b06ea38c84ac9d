"""A schema read under a claim: its Job, its result, its failure, its retry, giving way.

Everything here holds for Resolve, Verify, Observe and Plan alike (claims.py starts them,
verdicts.py adopts what they report):

- The result comes from the runner's report, never from the Job's exit (PATH-10). A Job that
  ended with no readable result is waited for a short grace, then counts as a failed attempt.
- A result produced across a change of the Lease's holder is discarded before it is read
  (LCK-10, LCK-11): a plain Plan is done again from a fresh observation (LCK-09), a proof runs
  again (proof.discard).
- A failed attempt keeps the claim and shows Failed; the same read runs again after
  failureRetryInterval, on the same snapshot, commit or digest, and shows Failed while it runs
  (SCH-36, SCH-42, RETRY-01). Its Job and result record share the operation's name, so the
  retry first removes the failed attempt's. A plain Plan gives the Lease back between attempts
  and takes it again for the next; a proof keeps it.
- A read refused by its files (an init container or the runner found they do not give the
  bound digest) was not held to what it was bound to: a plain read is Failed without its claim
  and the schema starts over from resolution (SRC-CM-16); a proof keeps its claim and tries
  again, since it may read nothing but the files its Apply ran from (SRC-CM-17).
- Between attempts, a plain read gives way to a new Resolve (RETRY-02..RETRY-07): at once when
  its inputs moved; when its retry delay ends if a person asked for a read, or, under a Git or
  OCI source, once spec.interval passed since the source was last read (a failing Resolve
  reads it on every attempt, so only a request ends it). Giving way retires the claim, writes a
  ReadRestarted Event and leaves the schema Pending for the pass that starts the Resolve; the
  failure stays on the conditions (RETRY-06). A proof never gives way (RETRY-09).
- A proof Blocked on a moved target keeps the Blocked standing while its read runs again
  (SCH-40).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import EventReason, OperationType, Reason
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import SchemaOperationReport
from ptah_operator.api.names import job_name
from ptah_operator.reconcile import conditions, resolutions, sources
from ptah_operator.reconcile import reads as core
from ptah_operator.reconcile.reports import Unreadable, read_report
from ptah_operator.reconcile.schedule import (
    JOB_RECREATE_CHECK,
    LEASE_WAIT,
)
from ptah_operator.reconcile.schema import claims, leases, plans, proof, verdicts
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import operating, pending, read_retrying
from ptah_operator.reconcile.world import OperationResult


def observe(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """Follow a read under way."""
    core.observe(draft, READ, claim)


def _track(draft: SchemaDraft, claim: ActiveOperation) -> ActiveOperation:
    claim = leases.track(draft, claim)
    draft.status.active_operation = claim
    return claim


def _read_result(draft: SchemaDraft, claim: ActiveOperation, result: OperationResult) -> None:
    """The attempt reported: discard, fail, replan or adopt what it says."""
    if claim.lease_continuity_lost:
        _discard(draft, claim, "the database-realm Lease changed hands while it ran")
        return
    report = read_report(result, SchemaOperationReport, claim.operation_id, claim.type, draft.uid)
    if isinstance(report, Unreadable):
        claims.failed_attempt(draft, claim, Reason.OPERATION_FAILED, report.why, result.received_at)
        return
    error = report.error
    if error is not None and error.reason == ErrorReason.SNAPSHOT_REFUSED:
        _refused(draft, claim, core.failure_words(draft, claim, error))
        return
    if (
        error is not None
        and claim.type == OperationType.PLAN
        and error.reason in (verdicts.LOCK_LOST)
    ):
        if claim.serves_proof:
            _discard(draft, claim, "it could not hold the database's lock")
        else:
            verdicts.replan(draft, claim, "the lock was lost while it planned")
        return
    if error is not None:
        claims.failed_attempt(
            draft,
            claim,
            conditions.reason_or(error.reason, Reason.OPERATION_FAILED),
            core.failure_words(draft, claim, error),
            report.finished_at or draft.now,
        )
        return
    why = verdicts.adopt(draft, claim, report)
    if why is not None:
        claims.failed_attempt(draft, claim, Reason.OPERATION_FAILED, why, draft.now)


def _job_refused(draft: SchemaDraft, claim: ActiveOperation, name: str, refusal: str) -> None:
    """The API server refused the read's Job: a failed attempt, the claim kept (SCH-36)."""
    claims.failed_attempt(
        draft, claim, Reason.JOB_REFUSED, f"the API server refused Job {name}: {refusal}"
    )


def _make_again(draft: SchemaDraft, claim: ActiveOperation) -> None:
    built = claims.build_job(draft, claim)
    if isinstance(built, str):
        claims.failed_attempt(
            draft, claim, Reason.JOB_NOT_BUILT, f"its Job could not be built: {built}"
        )
        return
    claims.create(draft, claim, built)
    _running(draft, claim)
    draft.wake_in(JOB_RECREATE_CHECK)


def inputs_moved(draft: SchemaDraft, claim: ActiveOperation) -> str | None:
    """What moved under a plain read since it was claimed (SCH-38, reads.inputs_moved), or
    None: an Observe and a Plan are bound to their files."""
    return core.inputs_moved(draft, claim, (OperationType.OBSERVE, OperationType.PLAN))


def in_flight(draft: SchemaDraft, claim: ActiveOperation) -> bool:
    """Whether an attempt of the claim is under way: its Job exists under the reserved name or
    its result arrived, and it is not waiting between attempts (RETRY-10). Such an attempt is
    observed to its end before anything else happens to the claim."""
    if claim.retry_at is not None:
        return False
    name = claim.job_name or job_name(claim.type, claim.operation_id)
    return name in draft.world.jobs or claim.operation_id in draft.world.results


def give_way(draft: SchemaDraft, claim: ActiveOperation, why: str) -> None:
    """The read gives way to a new one (SCH-38, SCH-43, RETRY-05): its claim retires, its
    result (if any comes) is not read, and the schema is Pending for one pass."""
    draft.status.active_operation = None
    if claim.type in (OperationType.OBSERVE, OperationType.PLAN) and sources.record_moved(
        draft, claim.source
    ):
        plans.retire(draft, why)
    draft.normal(
        EventReason.READ_RESTARTED,
        f"{claim.type.value} {claim.operation_id} gave way to a new read: {why}",
    )
    draft.stand(pending(Reason.OPERATION_IN_PROGRESS, f"{why}: a new read starts"))
    draft.rely_on_own_write()


def drop(draft: SchemaDraft) -> None:
    """Retire the claim; whatever its Job reports later is not read."""
    draft.status.active_operation = None


# --- attempts ----------------------------------------------------------------------------------


def _running(draft: SchemaDraft, claim: ActiveOperation) -> None:
    if claim.serves_proof and proof.target_moved(draft.status):
        return  # the Blocked standing stays while the proof reads again (SCH-40)
    draft.stand(
        operating(
            claim.type,
            proof=bool(claim.serves_proof),
            attempt=claim.attempt,
            retry=claim.attempt > 1 and not claim.serves_proof,
        )
    )


def _waiting(draft: SchemaDraft, claim: ActiveOperation) -> None:
    """Between attempts: Failed with the claim kept, or Blocked on a moved target."""
    if claim.serves_proof and proof.target_moved(draft.status):
        return
    reason = claim.last_failure_reason or Reason.OPERATION_FAILED
    assert claim.retry_at is not None
    draft.stand(read_retrying(claim.type, reason, claim.attempt, claim.retry_at))


def _between_attempts(draft: SchemaDraft, claim: ActiveOperation) -> None:
    retry_at = claim.retry_at
    assert retry_at is not None
    is_proof = bool(claim.serves_proof)

    def gives_way(why: str) -> None:
        give_way(draft, claim, why)

    if not core.next_attempt_due(
        draft, claim, waiting=lambda: _waiting(draft, claim), give_way=gives_way
    ):
        return
    if (
        claim.type in (OperationType.OBSERVE, OperationType.PLAN)
        and claim.source is not None
        and not sources.ensure(draft, claim.source)
    ):
        _refused(
            draft,
            claim,
            f"the files it is bound to ({resolutions.describe(claim.source)}) are gone",
        )
        return
    claim = core.next_attempt(claim, draft.now).model_copy(
        update={
            "lease_epoch": None if not is_proof else claim.lease_epoch,
            "lease_continuity_lost": None if not is_proof else claim.lease_continuity_lost,
        }
    )
    holder = leases.holder_of(draft, claim)
    if holder is not None and not leases.free_for(draft, holder):
        _waiting(draft, claim.model_copy(update={"retry_at": retry_at}))
        draft.wake_in(LEASE_WAIT)
        return
    built = claims.build_job(draft, claim)
    if isinstance(built, str):
        claims.failed_attempt(
            draft, claim, Reason.JOB_NOT_BUILT, f"its Job could not be built: {built}"
        )
        return
    draft.status.active_operation = claim
    if holder is not None:
        leases.take(draft, holder)
    claims.create(draft, claim, built)
    _running(draft, claim)


def _discard(draft: SchemaDraft, claim: ActiveOperation, why: str) -> None:
    """A result that cannot be evidence (LCK-11)."""
    if claim.serves_proof:
        proof.discard(draft, why)
    else:
        verdicts.replan(draft, claim, why)


def _refused(draft: SchemaDraft, claim: ActiveOperation, message: str) -> None:
    """The read could not be held to its files (SRC-CM-16)."""
    reason = Reason.SOURCE_REFUSED if sources.read_by_job(draft) else Reason.SNAPSHOT_MISSING
    if claim.serves_proof:
        claims.failed_attempt(draft, claim, reason, f"its files were refused: {message}")
        return
    drop(draft)
    draft.operation_failed(claim.type, reason)
    draft.warning(
        EventReason.OPERATION_FAILED, f"{claim.type.value} {claim.operation_id} refused: {message}"
    )
    draft.fail(reason, f"the {claim.type.value} was refused its files: {message}")


READ = core.ReadFamily[SchemaDraft](
    track=_track,
    between_attempts=_between_attempts,
    read_result=_read_result,
    job_refused=_job_refused,
    make_again=_make_again,
    running=_running,
    refused=_refused,
    failed_attempt=claims.failed_attempt,
)
"""How a schema's reads are followed (reads.observe): a refused Job is a failed attempt, the
claim kept for the next."""
