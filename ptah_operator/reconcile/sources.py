"""What a resolution pinned, whatever the source kind, and whether it still holds: the rules of
both families, asked of a pass (draft.Pass).

- ConfigMap (SRC-CM-01..SRC-CM-17): Resolve is not a Job. The controller hands the selected keys
  in as files, with their content digest (the SHA-256 of their manifest), and a pass that starts
  a read copies them into `ptah-src-<hash>` in the same write that claims the read, so
  Resolving never shows (SRC-CM-06, SCH-05). `status.source` records the snapshot, the digest,
  the ConfigMap's UID and the source policy the files were checked against; ArtifactResolved
  says SnapshotTaken. The same files give the same digest whatever key they came from, so an
  edit to a key the source does not select changes nothing (SRC-CM-11). Another digest,
  another ConfigMap UID (a ConfigMap re-created under the name) or another source policy is a
  moved source: the next read takes a new snapshot (SRC-CM-12, SRC-CM-13, SRC-POL-07). A
  snapshot that went missing while the digest stayed is put back, byte for byte, under the
  same name (SRC-CM-17); one replaced under its name is refused by the operation's init
  container, and the resource starts over from resolution (SRC-CM-16). Snapshots nothing names
  any more are deleted by the Draft once the resolution that replaced them is stored
  (SRC-CM-14).
- Git (SRC-GIT): read only from Jobs (SRC-GIT-01). Resolve pins a commit and the content
  digest of the selected files; the later operations fetch that commit again and hold it to
  the digest.
- OCI (SRC-OCI): Resolve pins a digest, Verify holds it to the verification policy as the
  cluster holds it now; the later operations fetch by digest.

The questions, the same for every kind, so the read, the plan and the run need not know which
kind they stand on:

- `current`: what a plan made now would bind (plan contract 1 for OCI, 2 for ConfigMap and
  Git, Decision 21), or None when nothing usable is pinned;
- `record_moved`: whether what a claim or a plan was bound to is no longer the source;
- `source_moved`: whether the source moved under status.source since it was pinned (a read is
  due at once). A replaced verification policy moves a migration's source (it is resolved
  again) but not a schema's, whose pinned digest is verified again (`policy_changed`, SCH-34):
  each family says which;
- `pinned`: the record a read may use now (a Git commit resolved, or an OCI digest verified
  under the policy as it is now), for a spec that still names that source;
- `ensure`: the files a record names can still be had (a snapshot put back; Git and OCI
  content is fetched again by the operation itself and checked against the digest);
- `policy_problem`, `config_map_problem`: why the source cannot be read before any Job
  (SRC-POL-02, SRC-POL-03, SRC-POL-05), each family wording a source policy's refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ptah_operator.api.common import KeyReference, PlanSourceBinding, SourceRecord
from ptah_operator.api.constants import EventReason, Reason, SourceKind
from ptah_operator.api.fingerprints import plan_source_binding
from ptah_operator.reconcile import conditions
from ptah_operator.reconcile.draft import Pass
from ptah_operator.reconcile.jobs import snapshot_configmap
from ptah_operator.reconcile.world import SourceFiles


def kind(draft: Pass) -> SourceKind:
    return draft.spec.source_kind


def read_by_job(draft: Pass) -> bool:
    """Git and OCI sources are resolved by a Resolve Job; a ConfigMap by the manager."""
    return kind(draft) != SourceKind.CONFIG_MAP


def names_spec_source(draft: Pass, record: SourceRecord | None) -> bool:
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


# --- policies ----------------------------------------------------------------------------------


def source_policy_ref(draft: Pass) -> KeyReference | None:
    """The source policy the spec names (a ConfigMap or Git source), or None."""
    spec = draft.spec
    if spec.config_map is not None:
        return spec.config_map.source_policy_from
    if spec.git is not None:
        return spec.git.source_policy_from
    return None


def source_policy_digest(draft: Pass) -> str | None:
    """The digest of the source policy as the cluster holds it now, when the spec names one."""
    policy = draft.world.source_policy
    if source_policy_ref(draft) is None or policy is None:
        return None
    return policy.digest


def verification_policy_digest(draft: Pass) -> str | None:
    """The digest of the verification policy as the cluster holds it now (OCI)."""
    policy = draft.world.verification_policy
    return policy.digest if policy is not None else None


@dataclass(frozen=True)
class PolicyRefusal:
    """A source policy's refusal of the source, for the family to word."""

    where: str
    """The policy's ConfigMap and key, `name/key`."""
    rule: str
    """The rule that refuses (SRC-POL-05)."""
    config_map: str | None
    """The source ConfigMap refused (by its name or size), or None for a Git host."""


def policy_problem(
    draft: Pass, refused: Callable[[PolicyRefusal], str]
) -> tuple[Reason, str] | None:
    """Why the source policy refuses the source before anything is written or run: a
    ConfigMap's name and size before its snapshot (SRC-POL-02), a Git host before the Resolve
    Job (SRC-POL-03); the rule named (SRC-POL-05), in the words `refused` gives. A policy that
    is missing or cannot be read is a configuration error."""
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
    refusal: PolicyRefusal | None = None
    if spec.config_map is not None:
        source = draft.world.source
        if source is None or source.refusal:
            return None
        size = sum(len(data) for data in source.files.values())
        rule = policy.refuse_config_map(source.config_map_name, size)
        if rule is not None:
            refusal = PolicyRefusal(where, rule, source.config_map_name)
    elif spec.git is not None:
        rule = policy.refuse_git_host(spec.git.repository)
        if rule is not None:
            refusal = PolicyRefusal(where, rule, None)
    if refusal is None:
        return None
    return Reason.SOURCE_REFUSED, refused(refusal)


def config_map_problem(draft: Pass) -> tuple[Reason, str] | None:
    """Why the ConfigMap source cannot be resolved now (SRC-POL-05), or None."""
    config_map = draft.spec.config_map
    name = config_map.name if config_map is not None else "?"
    source = draft.world.source
    if source is None:
        return Reason.CONFIGURATION_ERROR, f"source ConfigMap {name} does not exist"
    if source.refusal:
        return Reason.SOURCE_REFUSED, f"source ConfigMap {name} is refused: {source.refusal}"
    return None


# --- what is pinned ----------------------------------------------------------------------------


def complete(draft: Pass, record: SourceRecord | None) -> bool:
    """A Git record with its commit and content digest under the source policy as it is now,
    or an OCI record verified under the verification policy as it is now, for the source the
    spec names."""
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


def pinned(draft: Pass) -> SourceRecord | None:
    """status.source when a read (a migration's History, a schema's Observe) may run on it now
    (Git/OCI), else None."""
    record = draft.status.source
    return record if complete(draft, record) else None


def moved(record: SourceRecord | None, source: SourceFiles) -> bool:
    """Whether the files are not what the record pinned: another digest, ConfigMap or policy."""
    return (
        record is None
        or record.kind != SourceKind.CONFIG_MAP
        or record.content_digest != source.content_digest
        or record.config_map_uid != source.config_map_uid
        or record.source_policy_digest != source.source_policy_digest
    )


def _usable_files(draft: Pass) -> SourceFiles | None:
    source = draft.world.source
    if source is None or source.refusal:
        return None
    return source


def current(draft: Pass) -> PlanSourceBinding | None:
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


def record_moved(draft: Pass, record: SourceRecord | None) -> bool:
    """Whether what a claim or a plan is bound to is no longer the source (or the source is
    gone, refused, or no longer pinned)."""
    if not read_by_job(draft):
        source = _usable_files(draft)
        return source is None or moved(record, source)
    now = current(draft)
    return record is None or now is None or plan_source_binding(record) != now


def source_moved(draft: Pass, *, policy_moves_source: bool) -> bool:
    """The source is not what status.source pinned, as far as the cluster shows without a Job:
    another ConfigMap content, UID or source policy; a spec naming another Git or OCI source
    (which moves the generation too); a replaced source policy (Git, SRC-POL-07: the source is
    resolved again under it); with `policy_moves_source`, a replaced verification policy (OCI).
    """
    if not read_by_job(draft):
        source = _usable_files(draft)
        return source is not None and moved(draft.status.source, source)
    record = draft.status.source
    if not names_spec_source(draft, record):
        return True
    assert record is not None
    if record.kind == SourceKind.GIT:
        return record.source_policy_digest != source_policy_digest(draft)
    return (
        policy_moves_source
        and record.verification_policy_digest is not None
        and record.verification_policy_digest != verification_policy_digest(draft)
    )


def policy_changed(draft: Pass) -> bool:
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


def ensure(draft: Pass, record: SourceRecord) -> bool:
    """The files the record names can still be had: a snapshot exists or is put back now, byte
    for byte, because the source still gives its digest (SRC-CM-17; False when neither holds,
    SRC-CM-16); a commit or a digest is fetched again by the operation itself."""
    if record.kind != SourceKind.CONFIG_MAP:
        return bool(record.content_digest)
    if record.snapshot_name is None:
        return False
    if record.snapshot_name in draft.world.snapshots:
        return True
    source = _usable_files(draft)
    if source is None or moved(record, source):
        return False
    manifest = snapshot_configmap(draft.resource, source)
    if manifest["metadata"]["name"] != record.snapshot_name:
        return False
    draft.create(manifest)
    return True


def take_snapshot(draft: Pass) -> SourceRecord:
    """Pin the ConfigMap's current files: a new snapshot when they moved, the old one put back
    when it is missing, and status.source recording it (SRC-CM-02). The caller checked
    `config_map_problem` first."""
    source = draft.world.source
    assert source is not None
    manifest = snapshot_configmap(draft.resource, source)
    name = str(manifest["metadata"]["name"])
    config_map = draft.spec.config_map
    config_map_name = config_map.name if config_map is not None else "?"
    record = draft.status.source
    if record is None or moved(record, source) or record.snapshot_name != name:
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


def unresolved(draft: Pass, reason: str, message: str) -> None:
    """ArtifactResolved=False: the source could not be pinned."""
    conditions.artifact_resolved(draft.status, False, reason, message, draft.now, draft.generation)
