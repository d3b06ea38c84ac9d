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

from collections.abc import Callable
from dataclasses import dataclass
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
    Engine,
    SourceKind,
    TransactionMode,
)
from ptah_operator.api.contracts.result import HistoryReport
from ptah_operator.api.fingerprints import (
    migration_plan_fingerprint,
    plan_fingerprint_matches,
    plan_source_binding,
)
from ptah_operator.api.migration import PtahMigration, RevisionTable
from ptah_operator.api.plans import PlannedVersion, PtahMigrationPlan, PtahMigrationPlanSpec
from ptah_operator.reconcile.bindings import Rule, first_change, plan_identity
from ptah_operator.reconcile.draft import binding_digest
from ptah_operator.reconcile.jobs import owner_labels, owner_reference

_UNSET = "sha256:" + "0" * 64


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


@dataclass(frozen=True)
class Bound:
    """What a migration plan binds beside its identity (MIG-16)."""

    source: PlanSourceBinding
    engine: Engine
    revision_table: RevisionTable
    transaction_mode: TransactionMode | None
    execution: str | None
    """The execution binding's digest."""


def _differs(get: Callable[[Bound], object]) -> Callable[[Bound, Bound], bool]:
    return lambda plan, now: get(plan) != get(now)


BINDING_RULES: tuple[Rule[Bound], ...] = (
    Rule("the source changed kind", _differs(lambda b: b.source.kind)),
    Rule(
        "the source files changed (another content digest)",
        _differs(lambda b: b.source.content_digest),
    ),
    Rule(
        "the source ConfigMap was re-created (another UID)",
        _differs(lambda b: b.source.config_map_uid),
    ),
    Rule(
        "the source names another repository or path",
        _differs(lambda b: b.source.repository_path_digest),
    ),
    Rule("the artifact moved to another digest", _differs(lambda b: b.source.oci_digest)),
    Rule(
        "the verification policy changed",
        _differs(lambda b: b.source.verification_policy_digest),
    ),
    Rule("the source policy changed", _differs(lambda b: b.source.source_policy_digest)),
    Rule("spec.target.engine changed", _differs(lambda b: b.engine)),
    Rule("spec.policy.revisionTable changed", _differs(lambda b: b.revision_table)),
    Rule("spec.policy.transactionMode changed", _differs(lambda b: b.transaction_mode)),
    Rule(
        "the execution binding changed (runner image, protocol or engine version)",
        _differs(lambda b: b.execution),
    ),
)
"""What a migration plan binds, in the order a stale plan's reason names it."""


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
    why = plan_identity(plan, ref, migration.metadata.uid, "PtahMigration")
    if why is not None or plan is None:
        return why
    spec = plan.spec
    policy = migration.spec.policy
    bound = Bound(
        spec.source,
        spec.engine,
        spec.revision_table,
        spec.transaction_mode,
        binding_digest(spec.execution_binding),
    )
    now = Bound(
        current,
        migration.spec.target.engine,
        policy.revision_table,
        policy.transaction_mode,
        binding_digest(binding),
    )
    return first_change(bound, now, BINDING_RULES)
