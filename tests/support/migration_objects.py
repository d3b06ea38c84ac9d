"""PtahMigration, plan and approval objects for tests, consistent with one another.

`awaiting_approval(...)` gives a migration status that supports its plan exactly: the history
reading the plan continues, the source and executor it binds. A test changes one thing in it
to make one piece of evidence move.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ptah_operator.api.approvals import (
    PtahMigrationApprovalSpec,
    PtahMigrationRunAcknowledgmentSpec,
)
from ptah_operator.api.common import (
    Condition,
    ConfigMapSource,
    ExecutionBinding,
    JobReference,
    KeyReference,
    ObjectReference,
    PlanReference,
    PlanSourceBinding,
    SourceRecord,
    Target,
)
from ptah_operator.api.constants import (
    ConditionStatus,
    Engine,
    MigrationPhase,
    Reason,
    RunOutcome,
    SourceKind,
)
from ptah_operator.api.fingerprints import (
    execution_binding_digest,
    migration_plan_fingerprint,
    text_digest,
)
from ptah_operator.api.migration import (
    History,
    PtahMigration,
    PtahMigrationSpec,
    PtahMigrationStatus,
    UnresolvedRun,
)
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PlannedVersion, PtahMigrationPlan, PtahMigrationPlanSpec

T0 = datetime(2026, 8, 30, 9, 0, 0, tzinfo=UTC)


def d(seed: str) -> str:
    """A digest made from a word, so tests can tell digests apart by name."""
    return text_digest(seed)


def executor(image: str = "runner-1") -> ExecutionBinding:
    binding = ExecutionBinding(
        image=f"registry.example/ptah@{d(image)}",
        runner_version="0.1.0",
        protocol_version=1,
        engine_version="0.1.0",
    )
    return binding.model_copy(update={"digest": execution_binding_digest(binding)})


def config_map_record(content: str = "files-1", config_map_uid: str = "cm-uid-1") -> SourceRecord:
    return SourceRecord(
        kind=SourceKind.CONFIG_MAP,
        content_digest=d(content),
        snapshot_name="ptah-src-" + d(content)[7:17],
        config_map_uid=config_map_uid,
        resolved_at=T0,
    )


def migration_spec() -> PtahMigrationSpec:
    return PtahMigrationSpec(
        target=Target(
            engine=Engine.POSTGRESQL,
            coordination_key="test/orders",
            url_from=KeyReference(name="orders-database", key="url"),
        ),
        config_map=ConfigMapSource(name="orders-migrations"),
    )


def migration(
    name: str = "orders",
    namespace: str = "application",
    uid: str | None = "m-uid-1",
    status: PtahMigrationStatus | None = None,
) -> PtahMigration:
    return PtahMigration(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
        spec=migration_spec(),
        status=status,
    )


def plan_spec(
    migration_ref: ObjectReference,
    *,
    history: str = "history-1",
    target: str = "target-1",
    source: SourceRecord | None = None,
    execution: ExecutionBinding | None = None,
    versions: tuple[str, ...] = ("0000000002", "0000000003"),
) -> PtahMigrationPlanSpec:
    record = source or config_map_record()
    spec = PtahMigrationPlanSpec(
        migration_ref=migration_ref,
        plan_contract_version=2,
        source=PlanSourceBinding(
            kind=record.kind,
            content_digest=record.content_digest,
            config_map_uid=record.config_map_uid,
            source_policy_digest=record.source_policy_digest,
        ),
        engine=Engine.POSTGRESQL,
        target_identity_digest=d(target),
        history_fingerprint=d(history),
        execution_binding=execution or executor(),
        from_version="0000000001",
        to_version=versions[-1],
        versions=[
            PlannedVersion(version=v, description=f"step {v[-1]}", checksum=d(f"file-{v}"))
            for v in versions
        ],
        fingerprint=d("placeholder"),
    )
    return spec.model_copy(update={"fingerprint": migration_plan_fingerprint(spec)})


def plan(
    spec: PtahMigrationPlanSpec,
    name: str | None = None,
    namespace: str = "application",
    uid: str | None = "p-uid-1",
) -> PtahMigrationPlan:
    plan_name = name or f"{spec.migration_ref.name}-{spec.fingerprint[7:17]}"
    return PtahMigrationPlan(
        metadata=ObjectMeta(name=plan_name, namespace=namespace, uid=uid), spec=spec
    )


def plan_ref(p: PtahMigrationPlan) -> PlanReference:
    assert p.metadata.name is not None
    return PlanReference(name=p.metadata.name, uid=p.metadata.uid, fingerprint=p.spec.fingerprint)


def awaiting_approval(
    p: PtahMigrationPlan,
    *,
    source: SourceRecord | None = None,
    current_version: str = "0000000001",
) -> PtahMigrationStatus:
    """A status in AwaitingApproval that supports plan `p` (made from `source`) exactly."""
    return PtahMigrationStatus(
        observed_generation=1,
        phase=MigrationPhase.AWAITING_APPROVAL,
        conditions=[
            Condition(
                type="Ready",
                status=ConditionStatus.FALSE,
                last_transition_time=T0,
                reason=Reason.AWAITING_APPROVAL,
                message="plan waits for an approval",
            ),
            Condition(
                type="Progressing",
                status=ConditionStatus.FALSE,
                last_transition_time=T0,
                reason=Reason.AWAITING_APPROVAL,
            ),
        ],
        plan=plan_ref(p),
        history=History(
            current_version=current_version,
            applied_count=1,
            pending_count=len(p.spec.versions),
            pending_versions=[v.version for v in p.spec.versions],
            fingerprint=p.spec.history_fingerprint,
            target_identity_digest=p.spec.target_identity_digest,
            read_at=T0,
        ),
        source=source or config_map_record(),
        execution_binding=p.spec.execution_binding,
    )


def approval_spec(m: PtahMigration, p: PtahMigrationPlan) -> PtahMigrationApprovalSpec:
    assert m.metadata.name is not None
    assert m.metadata.uid is not None
    assert p.metadata.name is not None
    assert p.metadata.uid is not None
    return PtahMigrationApprovalSpec(
        migration_ref=ObjectReference(name=m.metadata.name, uid=m.metadata.uid),
        plan_ref=ObjectReference(name=p.metadata.name, uid=p.metadata.uid),
        plan_fingerprint=p.spec.fingerprint,
    )


def unresolved_run(p: PtahMigrationPlan, operation_id: str = "op-3f9a2c7d1e") -> UnresolvedRun:
    return UnresolvedRun(
        operation_id=operation_id,
        outcome=RunOutcome.PARTIAL,
        plan=plan_ref(p),
        job=JobReference(name=f"ptah-apply-{operation_id[3:]}", uid="job-uid-1"),
        finished_at=T0,
        planned_target_digest=p.spec.target_identity_digest,
    )


def acknowledgment_spec(m: PtahMigration, run: UnresolvedRun) -> PtahMigrationRunAcknowledgmentSpec:
    assert m.metadata.name is not None
    assert m.metadata.uid is not None
    assert run.plan.uid is not None
    assert run.job is not None
    assert run.job.uid is not None
    return PtahMigrationRunAcknowledgmentSpec(
        migration_ref=ObjectReference(name=m.metadata.name, uid=m.metadata.uid),
        operation_id=run.operation_id,
        plan_ref=ObjectReference(name=run.plan.name, uid=run.plan.uid),
        job_ref=ObjectReference(name=run.job.name, uid=run.job.uid),
        outcome=run.outcome,
    )


def status_manifest(status: PtahMigrationStatus) -> dict[str, Any]:
    return status.model_dump(mode="json", by_alias=True, exclude_none=True)
