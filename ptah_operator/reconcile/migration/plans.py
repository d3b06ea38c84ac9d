"""A PtahMigrationPlan: arithmetic on a history reading, and whether a plan still fits (MIG-03).

Planning needs no Pod: the plan is the pending list Ptah itself reported (MIG-34), in order,
as versions, descriptions and checksums, never SQL (PRIV-02), bound to what it was computed
from so that an approval of it means exactly one thing:

- the source, under plan contract version 2 for a ConfigMap: its content digest, the
  ConfigMap's UID and the source policy (SRC-CM-13, SRC-POL-06);
- the reading: the database it read (targetIdentityDigest) and the history fingerprint;
- the engine, the revision table and the transaction mode of the spec;
- the execution binding (what runs it).

Its `spec.fingerprint` is the SHA-256 over all of that (api.fingerprints), and its name is
`<migration>-<first 10 hex of the fingerprint>`, so the same reading of the same source under
the same spec is the same plan. A plan that cannot be complete (Ptah reports more pending
migrations than it listed, or a reading that names no database) is not published at all.
"""

from __future__ import annotations

from typing import Any

from ptah_operator.api.common import (
    ExecutionBinding,
    ObjectReference,
    PlanReference,
    PlanSourceBinding,
    SourceRecord,
)
from ptah_operator.api.constants import (
    API_VERSION,
    PLAN_CONTRACT_CONFIGMAP_GIT,
    PLAN_CONTRACT_OCI,
    SourceKind,
)
from ptah_operator.api.fingerprints import (
    migration_plan_fingerprint,
    plan_fingerprint_matches,
    plan_source_binding,
)
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PlannedVersion, PtahMigrationPlan, PtahMigrationPlanSpec
from ptah_operator.reconcile.draft import binding_digest
from ptah_operator.reconcile.jobs import owner_labels, owner_reference
from ptah_operator.reconcile.reports import HistoryReport

_UNSET = "sha256:" + "0" * 64
MAX_NAME = 253
FINGERPRINT_CHARS = 10


def source_binding(record: SourceRecord) -> PlanSourceBinding:
    """What a plan binds of a resolution: the one rule admission checks approvals by too."""
    return plan_source_binding(record)


def plan_spec(
    migration: PtahMigration,
    history: HistoryReport,
    target_identity_digest: str | None,
    record: SourceRecord,
    binding: ExecutionBinding,
) -> PtahMigrationPlanSpec | str:
    """The plan a ReadyToPlan reading gives, or why it cannot be published."""
    if not history.pending:
        return "the reading lists no pending migration"
    if history.pending_count != len(history.pending):
        return (
            f"Ptah reports {history.pending_count} pending migrations but listed "
            f"{len(history.pending)}: a plan must carry the whole sequence"
        )
    if target_identity_digest is None:
        return "the reading names no database"
    if history.fingerprint is None:
        return "the reading has no history fingerprint"
    spec = migration.spec
    draft = PtahMigrationPlanSpec(
        migration_ref=ObjectReference(
            name=migration.metadata.name or "", uid=migration.metadata.uid or ""
        ),
        plan_contract_version=PLAN_CONTRACT_OCI
        if record.kind == SourceKind.ARTIFACT
        else PLAN_CONTRACT_CONFIGMAP_GIT,
        source=source_binding(record),
        engine=spec.target.engine,
        target_identity_digest=target_identity_digest,
        history_fingerprint=history.fingerprint,
        revision_table=spec.policy.revision_table,
        transaction_mode=spec.policy.transaction_mode,
        execution_binding=binding,
        from_version=history.current_version,
        to_version=history.pending[-1].version,
        versions=[
            PlannedVersion(version=p.version, description=p.description, checksum=p.checksum)
            for p in history.pending
        ],
        fingerprint=_UNSET,
    )
    return draft.model_copy(update={"fingerprint": migration_plan_fingerprint(draft)})


def plan_name(migration_name: str, fingerprint: str) -> str:
    suffix = fingerprint.removeprefix("sha256:")[:FINGERPRINT_CHARS]
    return f"{migration_name[: MAX_NAME - FINGERPRINT_CHARS - 1]}-{suffix}"


def plan_manifest(
    migration: PtahMigration, name: str, spec: PtahMigrationPlanSpec
) -> dict[str, Any]:
    """The plan object to create: owned by the migration, immutable once created."""
    return {
        "apiVersion": API_VERSION,
        "kind": "PtahMigrationPlan",
        "metadata": {
            "name": name,
            "namespace": migration.metadata.namespace,
            "labels": owner_labels(migration),
            "ownerReferences": [owner_reference(migration)],
        },
        "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def same_spec(plan: PtahMigrationPlan, spec: PtahMigrationPlanSpec) -> bool:
    return plan.spec.fingerprint == spec.fingerprint and plan_fingerprint_matches(plan.spec)


def misfit(
    plan: PtahMigrationPlan | None,
    ref: PlanReference,
    migration: PtahMigration,
    current: PlanSourceBinding,
    binding: ExecutionBinding,
) -> str | None:
    """Why the plan status.plan names no longer fits the resource, or None when it does.

    The history half of "fits" is decided by the next reading, which compares fingerprints;
    this checks everything else the plan binds against the spec, the source files and the
    execution binding as they are now (MIG-16).
    """
    if plan is None:
        return None if ref.uid is None else f"plan {ref.name} no longer exists"
    if ref.uid is not None and plan.metadata.uid != ref.uid:
        return f"plan {ref.name} was replaced by another object of that name"
    if plan.spec.fingerprint != ref.fingerprint or not plan_fingerprint_matches(plan.spec):
        return f"plan {ref.name} no longer has the fingerprint it was published with"
    spec = plan.spec
    if spec.migration_ref.uid != migration.metadata.uid:
        return f"plan {ref.name} belongs to another PtahMigration"
    bound = spec.source
    if bound.kind != current.kind:
        return "the source changed kind"
    if bound.content_digest != current.content_digest:
        return "the source files changed (another content digest)"
    if bound.config_map_uid != current.config_map_uid:
        return "the source ConfigMap was re-created (another UID)"
    if bound.repository_path_digest != current.repository_path_digest:
        return "the source names another repository or path"
    if bound.oci_digest != current.oci_digest:
        return "the artifact moved to another digest"
    if bound.verification_policy_digest != current.verification_policy_digest:
        return "the verification policy changed"
    if bound.source_policy_digest != current.source_policy_digest:
        return "the source policy changed"
    policy = migration.spec.policy
    if spec.engine != migration.spec.target.engine:
        return "spec.target.engine changed"
    if spec.revision_table != policy.revision_table:
        return "spec.policy.revisionTable changed"
    if spec.transaction_mode != policy.transaction_mode:
        return "spec.policy.transactionMode changed"
    if binding_digest(spec.execution_binding) != binding_digest(binding):
        return "the execution binding changed (runner image, protocol or engine version)"
    return None
