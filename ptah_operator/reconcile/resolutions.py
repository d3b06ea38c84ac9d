"""What a Resolve or a Verify reported, as the SourceRecord status keeps, and how a pass of
either family adopts it (migration/source_read.py, schema/verdicts.py): one reading and one
adoption, each family saying what comes next in its own lifecycle.

- Resolve: a Git commit with the content digest of its selected files, recorded beside the
  repository, ref, path and source policy it answered (SRC-GIT-03, SRC-GIT-04),
  ArtifactResolved CommitResolved (SRC-GIT-05), then the family's read of the database; an OCI
  digest (SRC-OCI-01), ArtifactResolved DigestResolved, then Verifying.
- Verify: accepted, ArtifactVerified PolicySatisfied and the content digest recorded, then the
  family's read; refused, ArtifactVerified PolicyRefused, the plan retired and Blocked
  (SRC-OCI-03), read again at the interval or at once when the policy or the spec changes.

Pure: the reports are already parsed (reports.py); time comes in as an argument or from the
pass.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import EventReason, Reason, SourceKind
from ptah_operator.api.contracts.result import ResolveReport, VerifyReport
from ptah_operator.reconcile import conditions, sources
from ptah_operator.reconcile.draft import Pass


def describe(record: SourceRecord) -> str:
    """A record in words for messages: no credential, no content."""
    if record.kind == SourceKind.GIT:
        where = f"{record.repository} {record.ref}"
        if record.path:
            where += f" ({record.path})"
        return f"commit {record.commit} of {where}"
    if record.kind == SourceKind.ARTIFACT:
        return f"{record.oci_ref}@{record.oci_digest}"
    return f"snapshot {record.snapshot_name}"


def resolved_record(
    resolved: ResolveReport | None,
    kind: SourceKind,
    under: SourceRecord | None,
    when: dt.datetime,
) -> SourceRecord | str:
    """The record a Resolve pinned (SRC-GIT-03, SRC-GIT-04, SRC-OCI-01), or why the report
    cannot be taken. `under` is what the Resolve claim recorded (the source policy it ran
    under, SRC-POL-06)."""
    if resolved is None:
        return "the result holds no resolution"
    if resolved.kind != kind:
        return f"the result resolves a {resolved.kind.value} source"
    if resolved.kind == SourceKind.GIT:
        if resolved.commit is None or resolved.content_digest is None:
            return "the result names no commit or content digest"
        return SourceRecord(
            kind=SourceKind.GIT,
            repository=resolved.repository,
            ref=resolved.ref,
            path=resolved.path or None,
            commit=resolved.commit,
            content_digest=resolved.content_digest,
            source_policy_digest=under.source_policy_digest if under is not None else None,
            resolved_at=when,
        )
    if resolved.oci_digest is None:
        return "the result names no artifact digest"
    return SourceRecord(
        kind=SourceKind.ARTIFACT,
        oci_ref=resolved.oci_ref,
        oci_digest=resolved.oci_digest,
        resolved_at=when,
    )


def resolved_reason(record: SourceRecord) -> Reason:
    """ArtifactResolved's reason: CommitResolved for Git (SRC-GIT-05), DigestResolved for OCI."""
    return Reason.COMMIT_RESOLVED if record.kind == SourceKind.GIT else Reason.DIGEST_RESOLVED


@dataclass(frozen=True)
class Verification:
    """Verify's verdict on a pinned digest: the record to keep and the words for it."""

    record: SourceRecord
    accepted: bool
    message: str


VERDICT_ACCEPTED = "ArtifactTypeAccepted"
VERDICT_NOT_ACCEPTED = "ArtifactTypeNotAccepted"
VERDICT_POLICY_INVALID = "VerificationPolicyInvalid"
POLICY_INVALID_PREFIX = "the verification policy is invalid"
"""How the runner's Verify begins a refusal for a policy it cannot use (engine/sources/
verification.py); any other refusal is an artifact type the policy does not list."""


def verification(
    verdict: VerifyReport | None,
    record: SourceRecord | None,
    policy: str,
    when: dt.datetime,
) -> Verification | str:
    """The verdict of a Verify of `record` under the policy named `policy` (SRC-OCI-02,
    SRC-OCI-03), or why the report cannot be taken. A refused record keeps the policy's
    digest, so a replaced policy is seen as a moved source."""
    if verdict is None:
        return "the result holds no verification"
    if record is None:
        return "the Verify claim names no resolution"
    if verdict.accepted:
        if verdict.content_digest is None or verdict.policy_digest is None:
            return "the result names no content or policy digest"
        kept = record.model_copy(
            update={
                "verification_policy_digest": verdict.policy_digest,
                "artifact_type": verdict.artifact_type,
                "content_digest": verdict.content_digest,
                "verified_at": when,
            }
        )
        message = (
            f"{describe(record)} is accepted by the verification policy {policy} "
            f"({VERDICT_ACCEPTED})"
        )
        return Verification(kept, True, message)
    kept = record.model_copy(
        update={
            "verification_policy_digest": verdict.policy_digest,
            "artifact_type": verdict.artifact_type,
            "content_digest": None,
            "verified_at": None,
        }
    )
    # The refusal's text names the manifest's artifact type (the registry's text): by code.
    code = (
        VERDICT_POLICY_INVALID
        if (verdict.refusal or "").startswith(POLICY_INVALID_PREFIX)
        else VERDICT_NOT_ACCEPTED
    )
    message = f"{describe(record)} is refused by the verification policy {policy} ({code})"
    return Verification(kept, False, message)


# --- adopting a result -------------------------------------------------------------------------


def adopt_resolution(
    draft: Pass,
    claim: ActiveOperation,
    resolved: ResolveReport | None,
    finished_at: dt.datetime | None,
    then: Callable[[SourceRecord, str], None],
) -> str | None:
    """Take a Resolve's result into status, end the claim, and stand where `then` says (given
    the record and its description); why the result cannot be taken, or None."""
    when = finished_at or draft.now
    record = resolved_record(resolved, sources.kind(draft), claim.source, when)
    if isinstance(record, str):
        return record
    if not sources.names_spec_source(draft, record):
        return "the result answers for another source than the spec names"
    status = draft.status
    status.active_operation = None
    status.source = record
    conditions.clear_failure(status)
    what = describe(record)
    reason = resolved_reason(record)
    conditions.artifact_resolved(status, True, reason, what, draft.now, draft.generation)
    if record.kind == SourceKind.GIT:
        draft.normal(EventReason.SOURCE_RESOLVED, f"resolved {what} ({record.content_digest})")
    else:
        draft.normal(EventReason.SOURCE_RESOLVED, f"resolved {what}")
    then(record, what)
    draft.rely_on_own_write()
    return None


def adopt_verification(
    draft: Pass,
    claim: ActiveOperation,
    verified: VerifyReport | None,
    finished_at: dt.datetime | None,
    *,
    accepted: Callable[[str], None],
    refused: Callable[[str], None],
) -> str | None:
    """Take a Verify's result into status and end the claim: accepted, stand where `accepted`
    says (given the message) and run again at once; refused, the plan retired and Blocked by
    `refused` (given the message). Why the result cannot be taken, or None."""
    artifact = draft.spec.artifact
    ref = artifact.verification_policy_from if artifact is not None else None
    policy = f"{ref.name}/{ref.key}" if ref is not None else "?"
    when = finished_at or draft.now
    verdict = verification(verified, claim.source, policy, when)
    if isinstance(verdict, str):
        return verdict
    status = draft.status
    status.source = verdict.record
    status.active_operation = None
    if verdict.accepted:
        conditions.clear_failure(status)
        conditions.artifact_verified(
            status, True, Reason.POLICY_SATISFIED, verdict.message, draft.now, draft.generation
        )
        draft.normal(EventReason.ARTIFACT_VERIFIED, verdict.message)
        accepted(verdict.message)
        draft.rely_on_own_write()
        return None
    conditions.artifact_verified(
        status, False, Reason.POLICY_REFUSED, verdict.message, draft.now, draft.generation
    )
    refused(verdict.message)
    return None
