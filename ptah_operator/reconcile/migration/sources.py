"""What a resolution pinned, whatever the source kind, and whether it still holds.

A ConfigMap source is resolved by the manager into a snapshot (snapshots.py). A Git or OCI
source is read only from Jobs (SRC-GIT-01): Resolve pins a commit or a digest, Verify (OCI)
holds that digest to the verification policy, and `status.source` records what they answered
(source_read.py). This module answers the same questions for every kind, so the read, the plan
and the run need not know which kind they stand on:

- `current`: what a plan made now would bind, or None when nothing usable is pinned;
- `record_moved`: whether what a claim or a plan was bound to is no longer the source;
- `source_moved`: whether the source moved under status.source since it was pinned (a read is
  due at once);
- `pinned`: the record a History read may use now (a Git commit resolved, or an OCI digest
  verified under the policy as it is now), for a spec that still names that source;
- `ensure`: the files a record names can still be had (a snapshot put back; Git and OCI
  content is fetched again by the operation itself and checked against the digest).
"""

from __future__ import annotations

from ptah_operator.api.common import KeyReference, PlanSourceBinding, SourceRecord
from ptah_operator.api.constants import Reason, SourceKind
from ptah_operator.api.fingerprints import plan_source_binding
from ptah_operator.reconcile.migration import snapshots
from ptah_operator.reconcile.migration.draft import MigrationDraft


def kind(draft: MigrationDraft) -> SourceKind:
    return draft.spec.source_kind


def read_by_job(draft: MigrationDraft) -> bool:
    """Git and OCI sources are resolved by a Resolve Job; a ConfigMap by the manager."""
    return kind(draft) != SourceKind.CONFIG_MAP


def names_spec_source(draft: MigrationDraft, record: SourceRecord | None) -> bool:
    """Whether `record` resolved the source the spec names now (kind, repository, ref, path,
    reference); a Git record may name the commit it answered for a commit-id ref."""
    if record is None:
        return False
    spec = draft.spec
    if spec.git is not None:
        git = spec.git
        return (
            record.kind == SourceKind.GIT
            and record.repository == git.repository
            and record.ref == git.ref
            and (record.path or None) == (git.path or None)
        )
    if spec.artifact is not None:
        return record.kind == SourceKind.ARTIFACT and record.oci_ref == spec.artifact.oci_ref
    return record.kind == SourceKind.CONFIG_MAP


def source_policy_ref(draft: MigrationDraft) -> KeyReference | None:
    """The source policy the spec names (a ConfigMap or Git source), or None."""
    spec = draft.spec
    if spec.config_map is not None:
        return spec.config_map.source_policy_from
    if spec.git is not None:
        return spec.git.source_policy_from
    return None


def source_policy_digest(draft: MigrationDraft) -> str | None:
    """The digest of the source policy as the cluster holds it now, when the spec names one."""
    policy = draft.world.source_policy
    if source_policy_ref(draft) is None or policy is None:
        return None
    return policy.digest


def policy_problem(draft: MigrationDraft) -> tuple[Reason, str] | None:
    """Why the source policy refuses the source before anything is written or run: a
    ConfigMap's name and size before its snapshot (SRC-POL-02), a Git host before the Resolve
    Job (SRC-POL-03); the rule named (SRC-POL-05). A policy that is missing or cannot be read
    is a configuration error."""
    ref = source_policy_ref(draft)
    if ref is None:
        return None
    held = draft.world.source_policy
    where = f"{ref.name}/{ref.key}"
    if held is None or held.digest is None:
        return (
            Reason.CONFIGURATION_ERROR,
            f"the source policy ConfigMap {ref.name} has no key {ref.key}",
        )
    policy = held.policy
    if policy is None:
        return (
            Reason.CONFIGURATION_ERROR,
            f"the source policy {where} cannot be read: {held.error or 'invalid'}",
        )
    spec = draft.spec
    if spec.config_map is not None:
        source = draft.world.source
        if source is None or source.refusal:
            return None
        size = sum(len(data) for data in source.files.values())
        rule = policy.refuse_config_map(source.config_map_name, size)
        if rule is not None:
            return (
                Reason.SOURCE_REFUSED,
                f"source ConfigMap {source.config_map_name} is refused by the source policy "
                f"{where}: {rule}",
            )
    elif spec.git is not None:
        rule = policy.refuse_git_host(spec.git.repository)
        if rule is not None:
            return (
                Reason.SOURCE_REFUSED,
                f"the repository is refused by the source policy {where}: {rule}",
            )
    return None


def policy_digest(draft: MigrationDraft) -> str | None:
    """The digest of the verification policy as the cluster holds it now (OCI)."""
    policy = draft.world.verification_policy
    return policy.digest if policy is not None else None


def complete(draft: MigrationDraft, record: SourceRecord | None) -> bool:
    """A Git record with its commit and content digest, or an OCI record verified under the
    verification policy the cluster holds now, for the source the spec names."""
    if record is None or not names_spec_source(draft, record):
        return False
    if record.kind == SourceKind.GIT:
        return bool(record.commit and record.content_digest) and (
            record.source_policy_digest == source_policy_digest(draft)
        )
    if record.kind == SourceKind.ARTIFACT:
        return (
            record.verified_at is not None
            and bool(record.oci_digest and record.content_digest)
            and record.verification_policy_digest == policy_digest(draft)
        )
    return False


def pinned(draft: MigrationDraft) -> SourceRecord | None:
    """status.source when a History read may run on it now (Git/OCI), else None."""
    record = draft.status.source
    return record if complete(draft, record) else None


def current(draft: MigrationDraft) -> PlanSourceBinding | None:
    """What a plan made now would bind, or None when no usable resolution stands."""
    if not read_by_job(draft):
        source = draft.world.source
        if source is None or source.refusal:
            return None
        return PlanSourceBinding(
            kind=SourceKind.CONFIG_MAP,
            content_digest=source.content_digest,
            config_map_uid=source.config_map_uid,
            source_policy_digest=source.source_policy_digest,
        )
    record = pinned(draft)
    return plan_source_binding(record) if record is not None else None


def record_moved(draft: MigrationDraft, record: SourceRecord | None) -> bool:
    """Whether what a claim or a plan was bound to is no longer the source (or the source is
    gone, refused, or not pinned any more)."""
    if not read_by_job(draft):
        return snapshots.record_moved(draft, record)
    now = current(draft)
    return record is None or now is None or plan_source_binding(record) != now


def source_moved(draft: MigrationDraft) -> bool:
    """The source is not what status.source pinned: a read is due at once. For Git and OCI
    only the cluster's side can be seen without a Job: the spec naming another source (which
    moves the generation too), a replaced verification policy, and a replaced source policy
    (SRC-POL-07: the source is resolved again under it)."""
    if not read_by_job(draft):
        return snapshots.source_moved(draft)
    record = draft.status.source
    if not names_spec_source(draft, record):
        return True
    assert record is not None
    if record.kind == SourceKind.GIT:
        return record.source_policy_digest != source_policy_digest(draft)
    return (
        record.verification_policy_digest is not None
        and record.verification_policy_digest != policy_digest(draft)
    )


def ensure(draft: MigrationDraft, record: SourceRecord) -> bool:
    """The files the record names can still be had: a snapshot exists or is put back now;
    a commit or a digest is fetched again by the operation, held to its content digest."""
    if record.kind == SourceKind.CONFIG_MAP:
        return snapshots.ensure(draft, record)
    return bool(record.content_digest)
