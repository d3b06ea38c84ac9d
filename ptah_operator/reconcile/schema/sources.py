"""A schema's source, whatever its kind: what a resolution pinned and whether it still holds.

The same rules as a migration's (reconcile/migration/sources.py, reconcile/migration/snapshots.py), answered for a
SchemaDraft:

- ConfigMap (SRC-CM): resolved by the manager into the immutable snapshot `ptah-src-<hash>` in
  the write that claims the Observe, so Resolving never shows (SCH-05, SRC-CM-06);
  ArtifactResolved SnapshotTaken. Another content digest, ConfigMap UID or source policy is a
  moved source (SRC-CM-12, SRC-CM-13, SRC-POL-07); a missing snapshot whose files still give
  the digest is put back byte for byte (SRC-CM-17).
- Git (SRC-GIT): resolved by a Resolve Job to a commit and the content digest of the selected
  files; the later operations fetch that commit again and hold it to the digest.
- OCI (SRC-OCI): resolved by a Resolve Job to a digest, verified by a Verify Job under the
  verification policy as the cluster holds it now; the later operations fetch by digest.

`current` is what a plan made now would bind (plan contract 1 for OCI, 2 for ConfigMap and Git,
Decision 21); `record_moved` says whether what a claim or a plan is bound to is no longer the
source; `source_moved` whether a read is due at once because the source moved under
status.source.
"""

from __future__ import annotations

from ptah_operator.api.common import KeyReference, PlanSourceBinding, SourceRecord
from ptah_operator.api.constants import EventReason, Reason, SourceKind
from ptah_operator.api.fingerprints import plan_source_binding
from ptah_operator.reconcile import conditions
from ptah_operator.reconcile.jobs import snapshot_configmap
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.world import SourceFiles


def kind(draft: SchemaDraft) -> SourceKind:
    return draft.spec.source_kind


def read_by_job(draft: SchemaDraft) -> bool:
    """Git and OCI sources are resolved by a Resolve Job; a ConfigMap by the manager."""
    return kind(draft) != SourceKind.CONFIG_MAP


def names_spec_source(draft: SchemaDraft, record: SourceRecord | None) -> bool:
    """Whether `record` resolved the source the spec names now."""
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


# --- policies ----------------------------------------------------------------------------------


def source_policy_ref(draft: SchemaDraft) -> KeyReference | None:
    spec = draft.spec
    if spec.config_map is not None:
        return spec.config_map.source_policy_from
    if spec.git is not None:
        return spec.git.source_policy_from
    return None


def source_policy_digest(draft: SchemaDraft) -> str | None:
    policy = draft.world.source_policy
    if source_policy_ref(draft) is None or policy is None:
        return None
    return policy.digest


def verification_policy_digest(draft: SchemaDraft) -> str | None:
    policy = draft.world.verification_policy
    return policy.digest if policy is not None else None


def problem(draft: SchemaDraft) -> tuple[Reason, str] | None:
    """Why the source cannot be read now, before any Job (SCH-33): the source policy refuses
    it (SRC-POL-02, SRC-POL-03, SRC-POL-05), a policy or the source ConfigMap is missing or
    unreadable (a configuration error), or a ConfigMap's files cannot be a snapshot."""
    ref = source_policy_ref(draft)
    spec = draft.spec
    if ref is not None:
        held = draft.world.source_policy
        where = f"{ref.name}/{ref.key}"
        if held is None or held.digest is None:
            return (
                Reason.CONFIGURATION_ERROR,
                f"the source policy ConfigMap {ref.name} has no key {ref.key}",
            )
        if held.policy is None:
            return (
                Reason.CONFIGURATION_ERROR,
                f"the source policy {where} cannot be read: {held.error or 'invalid'}",
            )
        rule: str | None = None
        source = draft.world.source
        if spec.config_map is not None and source is not None and not source.refusal:
            size = sum(len(data) for data in source.files.values())
            rule = held.policy.refuse_config_map(source.config_map_name, size)
        elif spec.git is not None:
            rule = held.policy.refuse_git_host(spec.git.repository)
        if rule is not None:
            return (
                Reason.SOURCE_REFUSED,
                f"the source is refused by the source policy {where}: {rule}",
            )
    if spec.config_map is not None:
        source = draft.world.source
        if source is None:
            return (
                Reason.CONFIGURATION_ERROR,
                f"source ConfigMap {spec.config_map.name} does not exist",
            )
        if source.refusal:
            return (
                Reason.SOURCE_REFUSED,
                f"source ConfigMap {spec.config_map.name} is refused: {source.refusal}",
            )
    if spec.artifact is not None and verification_policy_digest(draft) is None:
        policy = spec.artifact.verification_policy_from
        return (
            Reason.CONFIGURATION_ERROR,
            f"the verification policy ConfigMap {policy.name} has no key {policy.key}",
        )
    return None


# --- what is pinned ----------------------------------------------------------------------------


def complete(draft: SchemaDraft, record: SourceRecord | None) -> bool:
    """A Git record with its commit and content digest under the source policy as it is now,
    or an OCI record verified under the verification policy as it is now."""
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
            and record.verification_policy_digest == verification_policy_digest(draft)
        )
    return False


def pinned(draft: SchemaDraft) -> SourceRecord | None:
    """status.source when an Observe may run on it now (Git/OCI), else None."""
    record = draft.status.source
    return record if complete(draft, record) else None


def _moved_from(record: SourceRecord | None, source: SourceFiles) -> bool:
    return (
        record is None
        or record.kind != SourceKind.CONFIG_MAP
        or record.content_digest != source.content_digest
        or record.config_map_uid != source.config_map_uid
        or record.source_policy_digest != source.source_policy_digest
    )


def _usable_files(draft: SchemaDraft) -> SourceFiles | None:
    source = draft.world.source
    if source is None or source.refusal:
        return None
    return source


def current(draft: SchemaDraft) -> PlanSourceBinding | None:
    """What a plan made now would bind, or None when no usable resolution stands."""
    if not read_by_job(draft):
        source = _usable_files(draft)
        if source is None:
            return None
        return PlanSourceBinding(
            kind=SourceKind.CONFIG_MAP,
            content_digest=source.content_digest,
            config_map_uid=source.config_map_uid,
            source_policy_digest=source.source_policy_digest,
        )
    record = pinned(draft)
    return plan_source_binding(record) if record is not None else None


def record_moved(draft: SchemaDraft, record: SourceRecord | None) -> bool:
    """Whether what a claim or a plan is bound to is no longer the source (or the source is
    gone, refused, or no longer pinned)."""
    if not read_by_job(draft):
        source = _usable_files(draft)
        return source is None or _moved_from(record, source)
    now = current(draft)
    return record is None or now is None or plan_source_binding(record) != now


def source_moved(draft: SchemaDraft) -> bool:
    """The source is not what status.source pinned, as far as the cluster shows without a Job:
    another ConfigMap content, UID or source policy; a spec naming another Git or OCI source; a
    replaced source policy (Git). A replaced verification policy is not a moved source: the
    pinned digest is verified again (SCH-34, `policy_changed`)."""
    if not read_by_job(draft):
        source = _usable_files(draft)
        return source is not None and _moved_from(draft.status.source, source)
    record = draft.status.source
    if not names_spec_source(draft, record):
        return True
    assert record is not None
    if record.kind == SourceKind.GIT:
        return record.source_policy_digest != source_policy_digest(draft)
    return False


def policy_changed(draft: SchemaDraft) -> bool:
    """The OCI digest status.source pinned was verified under another verification policy than
    the cluster holds now (SCH-34, SRC-OCI-08)."""
    record = draft.status.source
    return (
        record is not None
        and record.kind == SourceKind.ARTIFACT
        and names_spec_source(draft, record)
        and record.oci_digest is not None
        and record.verification_policy_digest is not None
        and record.verification_policy_digest != verification_policy_digest(draft)
    )


def ensure(draft: SchemaDraft, record: SourceRecord) -> bool:
    """The files the record names can still be had: a snapshot exists or is put back now
    (SRC-CM-17); a commit or a digest is fetched again by the operation itself."""
    if record.kind != SourceKind.CONFIG_MAP:
        return bool(record.content_digest)
    if record.snapshot_name is None:
        return False
    if record.snapshot_name in draft.world.snapshots:
        return True
    source = _usable_files(draft)
    if source is None or _moved_from(record, source):
        return False
    manifest = snapshot_configmap(draft.schema, source)
    if manifest["metadata"]["name"] != record.snapshot_name:
        return False
    draft.create(manifest)
    return True


def take_snapshot(draft: SchemaDraft) -> SourceRecord:
    """Pin the ConfigMap's current files: a new snapshot when they moved, the old one put back
    when it is missing, and status.source recording it (SRC-CM-02). The caller checked
    `problem` first."""
    source = draft.world.source
    assert source is not None
    manifest = snapshot_configmap(draft.schema, source)
    name = str(manifest["metadata"]["name"])
    config_map = draft.spec.config_map
    config_map_name = config_map.name if config_map is not None else "?"
    record = draft.status.source
    if record is None or _moved_from(record, source) or record.snapshot_name != name:
        record = SourceRecord(
            kind=SourceKind.CONFIG_MAP,
            content_digest=source.content_digest,
            snapshot_name=name,
            config_map_uid=source.config_map_uid,
            source_policy_digest=source.source_policy_digest,
            resolved_at=draft.now,
        )
        draft.status.source = record
        draft.normal(
            EventReason.SNAPSHOT_TAKEN,
            f"snapshot {name} taken of ConfigMap {config_map_name} ({source.content_digest})",
        )
    if name not in draft.world.snapshots:
        draft.create(manifest)
    conditions.artifact_resolved(
        draft.status,
        True,
        Reason.SNAPSHOT_TAKEN,
        f"snapshot {name} of ConfigMap {config_map_name} ({source.content_digest})",
        draft.now,
        draft.generation,
    )
    return record


def unresolved(draft: SchemaDraft, reason: str, message: str) -> None:
    """ArtifactResolved=False: the source could not be pinned."""
    conditions.artifact_resolved(draft.status, False, reason, message, draft.now, draft.generation)
