"""Resolve and Verify: how a Git or OCI source is pinned, from Jobs only (SRC-GIT, SRC-OCI).

Both are read-only operations, claimed and retried exactly as a History read is
(reads.py follows any read claim). This module starts them and adopts what they report:

- Resolve (MIG-06): a Git ref to a commit with the content digest of the selected files
  (SRC-GIT-02, SRC-GIT-03), recorded beside the repository, ref and path it answered
  (SRC-GIT-04), `ArtifactResolved` CommitResolved naming the commit (SRC-GIT-05), then Reading;
  an OCI reference to the manifest digest behind it (SRC-OCI-01), `ArtifactResolved`
  DigestResolved, then Verifying. A failed Resolve reads the source again on every attempt,
  so only a read request makes it give way (RETRY-07).
- Verify (MIG-07): the digest under the verification policy, and the artifact type inspected
  by the Job (SRC-OCI-02, SRC-OCI-04). Accepted: `ArtifactVerified` PolicySatisfied, the
  content digest of the files recorded, then Reading. Refused: `ArtifactVerified`
  PolicyRefused, Blocked with no plan (SRC-OCI-03); the next read is due at the interval or at
  once when the policy or the spec changes.

Each result ends its operation in one pass, and the next operation starts in the next pass
(the phase shows where it stands meanwhile), so every verdict is in status before what it
allows begins. A resource whose source moved from a ConfigMap loses its last snapshot once the
first resolution of the new source is stored (SRC-CM-15: the MigrationDraft deletes what no stored
status names).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import EventReason, OperationType, Reason, SourceKind
from ptah_operator.api.contracts.result import OperationReport
from ptah_operator.reconcile import resolutions, sources
from ptah_operator.reconcile.decision import OperationCredentials
from ptah_operator.reconcile.draft import new_claim
from ptah_operator.reconcile.jobs import owner_reference
from ptah_operator.reconcile.migration import planning, standings
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.migration.jobs import resolve_job, verify_job
from ptah_operator.reconcile.read_request import ReadRequest, answer
from ptah_operator.reconcile.schedule import interval


def start_resolve(draft: MigrationDraft, request: ReadRequest | None = None) -> None:
    """Claim a Resolve and create its Job: the read every due cycle of a Git or OCI source
    starts with (a request is answered by it, RRQ-03). The claim records the source policy
    the Resolve runs under, to be recorded beside what it resolves (SRC-POL-06)."""
    under = SourceRecord(
        kind=sources.kind(draft), source_policy_digest=sources.source_policy_digest(draft)
    )
    _start(draft, OperationType.RESOLVE, under, request)


def start_verify(draft: MigrationDraft, record: SourceRecord) -> None:
    """Claim a Verify of the digest `record` pinned."""
    _start(draft, OperationType.VERIFY, record, None)


def _start(
    draft: MigrationDraft,
    operation: OperationType,
    record: SourceRecord | None,
    request: ReadRequest | None,
) -> None:
    operation_id = draft.world.new_operation_id
    job = build_job(draft, operation, operation_id, record)
    if isinstance(job, str):
        not_built(draft, operation, job)
        return
    claim = new_claim(
        draft,
        operation,
        operation_id,
        source=record,
        read_request=request.recorded if request is not None else None,
    )
    if request is not None:
        answer(draft, request)
    draft.status.active_operation = claim
    draft.create(
        OperationCredentials(operation_id, draft.namespace, owner_reference(draft.migration))
    )
    draft.create(job)
    draft.stand(standings.operating(operation))


def build_job(
    draft: MigrationDraft, operation: OperationType, operation_id: str, record: SourceRecord | None
) -> dict[str, object] | str:
    """The Resolve or Verify Job, or why it cannot be built."""
    try:
        if operation == OperationType.RESOLVE:
            held = draft.world.source_policy
            policy = held.policy if held is not None and sources.source_policy_ref(draft) else None
            return resolve_job(draft.migration, draft.world.runner, operation_id, policy)
        if record is None:
            return "the Verify claim names no resolution"
        return verify_job(draft.migration, draft.world.runner, operation_id, record)
    except ValueError as exc:
        return str(exc)


def not_built(
    draft: MigrationDraft,
    operation: OperationType,
    why: str,
    *,
    reason: Reason = Reason.JOB_NOT_BUILT,
    job: str | None = None,
) -> None:
    """The Job could not be built, or (with `job`) the API server refused it: none exists,
    Failed (MIG-29, JOB-06)."""
    draft.operation_failed(operation, reason)
    if job is not None:
        message = f"the API server refused {operation.value} Job {job}: {why}"
        draft.warning(
            EventReason.OPERATION_FAILED,
            f"the {operation.value} did not start: the API server refused Job {job}",
        )
    else:
        message = f"the {operation.value} Job could not be built: {why}"
        draft.warning(EventReason.OPERATION_FAILED, message)
    draft.fail(reason, message)


def problem(draft: MigrationDraft) -> tuple[Reason, str] | None:
    """Why a Git or OCI source cannot be read now without a Job telling us, or None: the
    verification policy an OCI source names must exist (its Job mounts it)."""
    artifact = draft.spec.artifact
    if artifact is None:
        return None
    policy = draft.world.verification_policy
    if policy is None or policy.digest is None:
        ref = artifact.verification_policy_from
        return (
            Reason.CONFIGURATION_ERROR,
            f"the verification policy ConfigMap {ref.name} has no key {ref.key}",
        )
    return None


# --- adopting a result -------------------------------------------------------------------------


def adopt(draft: MigrationDraft, claim: ActiveOperation, report: OperationReport) -> str | None:
    """Take a Resolve's or a Verify's result into status; why it cannot be taken, or None."""
    if claim.type == OperationType.RESOLVE:
        return _adopt_resolution(draft, claim, report)
    return _adopt_verification(draft, claim, report)


def _adopt_resolution(
    draft: MigrationDraft, claim: ActiveOperation, report: OperationReport
) -> str | None:
    def then(record: SourceRecord, what: str) -> None:
        if record.kind == SourceKind.GIT:
            draft.stand(standings.operating(OperationType.HISTORY))
        else:
            draft.stand(standings.operating(OperationType.VERIFY))

    return resolutions.adopt_resolution(draft, claim, report.resolve, report.finished_at, then)


def _adopt_verification(
    draft: MigrationDraft, claim: ActiveOperation, report: OperationReport
) -> str | None:
    def accepted(message: str) -> None:
        draft.stand(standings.operating(OperationType.HISTORY))

    def refused(message: str) -> None:
        planning.retire(draft, "the verification policy refused the artifact")
        draft.warning(EventReason.ARTIFACT_REFUSED, message)
        status = draft.status
        status.next_reconciliation_time = draft.now + interval(draft.migration)
        draft.stand(standings.blocked(Reason.POLICY_REFUSED, message))
        draft.wake_at(status.next_reconciliation_time)

    return resolutions.adopt_verification(
        draft, claim, report.verify, report.finished_at, accepted=accepted, refused=refused
    )
