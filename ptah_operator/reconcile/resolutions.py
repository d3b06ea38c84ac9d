"""What a Resolve or a Verify reported, as the SourceRecord status keeps: one reading for both
families (migration/source_read.py for a migration, schema/verdicts.py for a schema), which then decide
what comes next in their own lifecycle.

Pure: the reports are already parsed (reports.py); time comes in as an argument.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import Reason, SourceKind
from ptah_operator.reconcile.reports import ResolveReport, VerifyReport


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
            f"{describe(record)} ({verdict.artifact_type}) is accepted by the "
            f"verification policy {policy}"
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
    refusal = verdict.refusal or "the artifact is not one the policy accepts"
    message = f"{describe(record)} is refused by the verification policy {policy}: {refusal}"
    return Verification(kept, False, message)
