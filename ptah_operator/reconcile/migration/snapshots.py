"""A ConfigMap source, resolved by the manager into an immutable snapshot (SRC-CM-01..SRC-CM-17).

Resolve is not a Job for a ConfigMap: the controller hands the selected keys in as files, with
their content digest (the SHA-256 of their manifest), and a pass that starts a read copies
them into `ptah-src-<hash>` in the same write that claims the read, so "Resolving" never
shows (SRC-CM-06). `status.source` records the snapshot, the digest, the ConfigMap's UID and
the source policy the files were checked against; ArtifactResolved says SnapshotTaken.

- The same files give the same digest whatever key they came from, so an edit to a key the
  source does not select changes nothing (SRC-CM-11).
- Another digest, another ConfigMap UID (a ConfigMap re-created under the name) or another
  source policy is a moved source: the next read takes a new snapshot (SRC-CM-12, SRC-CM-13).
- A snapshot that went missing while the digest stayed is put back, byte for byte, under the
  same name (SRC-CM-17); one replaced under its name is refused by the operation's init
  container, and the resource starts over from resolution (SRC-CM-16).
- Snapshots nothing names any more are deleted once the resolution that replaced them is
  stored (the MigrationDraft does it, SRC-CM-14).

Git and OCI sources are resolved by Jobs instead (source_read.py); sources.py answers the
same questions for every kind.
"""

from __future__ import annotations

from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import EventReason, Reason, SourceKind
from ptah_operator.reconcile import conditions
from ptah_operator.reconcile.jobs import snapshot_configmap
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.world import SourceFiles


def problem(draft: MigrationDraft) -> tuple[Reason, str] | None:
    """Why the ConfigMap source cannot be resolved now (SRC-POL-05), or None."""
    config_map = draft.spec.config_map
    name = config_map.name if config_map is not None else "?"
    source = draft.world.source
    if source is None:
        return Reason.CONFIGURATION_ERROR, f"source ConfigMap {name} does not exist"
    if source.refusal:
        return Reason.SOURCE_REFUSED, f"source ConfigMap {name} is refused: {source.refusal}"
    return None


def moved(record: SourceRecord | None, source: SourceFiles) -> bool:
    """Whether the files are not what the record pinned: another digest, ConfigMap or policy."""
    return (
        record is None
        or record.kind != SourceKind.CONFIG_MAP
        or record.content_digest != source.content_digest
        or record.config_map_uid != source.config_map_uid
        or record.source_policy_digest != source.source_policy_digest
    )


def source_moved(draft: MigrationDraft) -> bool:
    """The ConfigMap source exists, can be read, and is not what status.source pinned."""
    source = draft.world.source
    if source is None or source.refusal:
        return False
    return moved(draft.status.source, source)


def record_moved(draft: MigrationDraft, record: SourceRecord | None) -> bool:
    """Whether what a claim or plan was bound to is no longer the source (or the source is
    gone or refused)."""
    source = draft.world.source
    if source is None or source.refusal:
        return True
    return moved(record, source)


def resolve(draft: MigrationDraft) -> SourceRecord:
    """Pin the current files: a new snapshot when they moved, the old one put back when it is
    missing, and status.source recording it. The caller checked `problem` first."""
    source = draft.world.source
    assert source is not None
    manifest = snapshot_configmap(draft.migration, source)
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


def ensure(draft: MigrationDraft, record: SourceRecord) -> bool:
    """The snapshot a record names exists, or is put back now, byte for byte, because the
    source still gives its digest (SRC-CM-17); False when neither holds (SRC-CM-16)."""
    if record.snapshot_name is None:
        return False
    if record.snapshot_name in draft.world.snapshots:
        return True
    source = draft.world.source
    if source is None or source.refusal or moved(record, source):
        return False
    manifest = snapshot_configmap(draft.migration, source)
    if manifest["metadata"]["name"] != record.snapshot_name:
        return False
    draft.create(manifest)
    return True


def unresolved(draft: MigrationDraft, reason: Reason, message: str) -> None:
    """ArtifactResolved=False: the source could not be pinned."""
    conditions.artifact_resolved(draft.status, False, reason, message, draft.now, draft.generation)
