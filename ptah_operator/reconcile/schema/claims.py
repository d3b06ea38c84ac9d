"""Claiming a schema read, and what a failed attempt of one leaves.

A read (Resolve, Verify, Observe, Plan) is claimed in `status.activeOperation` in the same
Decision that creates its Job (JOB-04): the claim names the operation, its Job, the generation,
the source it is bound to, the execution binding, the database it must read (a Plan: the one
its Observe read; a proof: the one the Apply's plan was made for), whether it serves a proof,
and the read request it answers. A Plan asks for the database-realm Lease under its own id
(LCK-08); a proof's reads hold the Apply's (leases.py); the rest take none.

A failed attempt keeps the claim (SCH-36): Failed, Progressing=True with reason
OperationFailed, ReconciliationFailed naming the failure, an OperationFailed journal entry
(folded with the ones before it, JNL-12) and a Warning; the same read runs again under the same
claim after failureRetryInterval (SCH-42, RETRY-01). A Job that could not be built, or that the
API server refused (its admission), is such a failure: none exists, and the claim tries again.
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import EventReason, OperationType, Reason
from ptah_operator.reconcile import conditions, sources
from ptah_operator.reconcile.decision import OperationCredentials
from ptah_operator.reconcile.draft import new_claim
from ptah_operator.reconcile.jobs import Manifest, owner_reference
from ptah_operator.reconcile.read_request import ReadRequest, answer
from ptah_operator.reconcile.schedule import failure_retry_interval
from ptah_operator.reconcile.schema import jobs, leases
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import operating, read_retrying

READ_ANSWER = "the database is observed now"


def build_job(draft: SchemaDraft, claim: ActiveOperation) -> Manifest | str:
    """The claim's Job, or why it cannot be built."""
    world = draft.world
    record = claim.source
    try:
        if claim.type == OperationType.RESOLVE:
            held = world.source_policy
            policy = held.policy if held is not None and sources.source_policy_ref(draft) else None
            return jobs.resolve_job(draft.schema, world.runner, claim.operation_id, policy)
        if record is None:
            return f"the {claim.type.value} claim names no resolution"
        if claim.type == OperationType.VERIFY:
            return jobs.verify_job(draft.schema, world.runner, claim.operation_id, record)
        return jobs.read_job(
            draft.schema,
            world.runner,
            claim.type,
            claim.operation_id,
            record,
            expected_target=claim.target_identity_digest,
            proof=bool(claim.serves_proof),
        )
    except ValueError as exc:
        return str(exc)


def start(
    draft: SchemaDraft,
    operation: OperationType,
    record: SourceRecord | None,
    *,
    proof: bool = False,
    request: ReadRequest | None = None,
    target: str | None = None,
    lease_holder: str | None = None,
) -> None:
    """Claim a read and create its Job; with `lease_holder`, ask for the Lease under it."""
    operation_id = draft.world.new_operation_id
    claim = new_claim(
        draft,
        operation,
        operation_id,
        source=record,
        target_identity_digest=target,
        serves_proof=True if proof else None,
        read_request=request.recorded if request is not None else None,
        lease_name=leases.name(draft) if lease_holder is not None else None,
    )
    if request is not None:
        answer(draft, request, READ_ANSWER)
    draft.status.active_operation = claim
    job = build_job(draft, claim)
    if isinstance(job, str):
        failed_attempt(draft, claim, Reason.JOB_NOT_BUILT, f"its Job could not be built: {job}")
        return
    if lease_holder is not None:
        leases.take(draft, lease_holder)
    create(draft, claim, job)
    draft.stand(operating(operation, proof=proof))


def create(draft: SchemaDraft, claim: ActiveOperation, job: Manifest) -> None:
    """The claim's operation Secret and Job (idempotent by their names)."""
    draft.create(
        OperationCredentials(claim.operation_id, draft.namespace, owner_reference(draft.schema))
    )
    draft.create(job)


def failed_attempt(
    draft: SchemaDraft,
    claim: ActiveOperation,
    reason: str,
    message: str,
    when: dt.datetime | None = None,
) -> None:
    """The attempt failed: Failed, the claim kept, the same read again later (SCH-36)."""
    retry_at = draft.now + failure_retry_interval(draft.schema)
    claim = claim.model_copy(update={"retry_at": retry_at, "last_failure_reason": reason})
    draft.status.active_operation = claim
    what = f"{claim.type.value} {claim.operation_id}"
    conditions.record_failure(
        draft.status, reason, f"{what} failed: {message}", draft.now, draft.generation
    )
    draft.operation_failed(claim.type, reason, when)
    draft.warning(
        EventReason.OPERATION_FAILED,
        f"{what} failed ({reason}) on attempt {claim.attempt}; it runs again after "
        f"{draft.spec.execution.failure_retry_interval}",
    )
    draft.stand(read_retrying(claim.type, reason, claim.attempt, retry_at))
    draft.wake_at(retry_at)
