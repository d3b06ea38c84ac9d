"""Worlds for the migration lifecycle's table tests, built so each row reads like a sentence.

The base is a ConfigMap-sourced PostgreSQL migration `billing` in `application`, apply:
OnApproval, interval 10m, failureRetryInterval 1m. States are reached the way a cluster
reaches them: `carry_out` plays the controller (it writes the Decision's status back, makes
the objects it created appear with UIDs, takes and releases the Lease), so `awaiting_approval()`
is literally "a new migration, read, planned, published". Helpers then change one thing:
`with_result`, `with_job`, `with_approval`, `edited`, `later`, ...
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationApprovalSpec,
    PtahMigrationRunAcknowledgment,
    PtahMigrationRunAcknowledgmentSpec,
)
from ptah_operator.api.common import (
    ConfigMapSource,
    ExecutionBinding,
    KeyReference,
    ObjectReference,
    Target,
    UserInfo,
)
from ptah_operator.api.constants import (
    LABEL_OPERATION_ID,
    ApplyPolicy,
    ConditionType,
    Engine,
    JournalEntryType,
    MigrationPhase,
    OperationType,
    RunOutcome,
)
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.migration import (
    MigrationPolicy,
    PtahMigration,
    PtahMigrationSpec,
    PtahMigrationStatus,
)
from ptah_operator.api.names import job_name
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.realm import PtahRealm
from ptah_operator.reconcile.decision import Decision, LeaseVerb, OperationCredentials
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import (
    Claimant,
    JobPhase,
    JobState,
    LeaseState,
    OperationResult,
    RunnerConfig,
    SourceFiles,
)

NOW = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
NAMESPACE = "application"
NAME = "billing"
UID = "6f1f2a4e-3c55-4d4b-9a7e-0c2d1b9e8f10"
CONFIG_MAP = "billing-migrations"
CONFIG_MAP_UID = "1c2d3e4f-0000-4000-8000-00000000cafe"
MANAGER_NAMESPACE = "ptah-system"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


DB = digest("database: billing-primary")
OTHER_DB = digest("database: billing-replica")

FILES: dict[str, bytes] = {
    "0001_create_invoices.sql": b"CREATE TABLE invoices (id BIGINT PRIMARY KEY);\n",
    "0002_add_invoice_status.sql": b"ALTER TABLE invoices ADD COLUMN status TEXT;\n",
}
EDITED_FILES: dict[str, bytes] = {
    **FILES,
    "0003_index_invoices.sql": b"CREATE INDEX invoices_status ON invoices (status);\n",
}

BINDING = ExecutionBinding(
    image="registry.example/ptah/ptah-operator@" + digest("image"),
    runner_version="0.1.0",
    protocol_version=1,
    engine_version="0.1.0",
)
RUNNER = RunnerConfig(
    image="registry.example/ptah/ptah-operator:0.1.0",
    result_url="https://ptah-operator.ptah-system.svc:9443/v1/results",
    binding=BINDING,
)
ROLLED_OUT = dataclasses.replace(
    RUNNER, binding=BINDING.model_copy(update={"runner_version": "0.2.0"})
)
ALICE = UserInfo(username="alice@example.com", uid="u-alice", groups=["dba"])
BOB = UserInfo(username="bob@example.com", uid="u-bob", groups=["dba"])

_operation_ids = (f"op-{n:010x}" for n in itertools.count(0xA0000001))
_uids = (f"00000000-0000-4000-8000-{n:012x}" for n in itertools.count(1))


def next_operation_id() -> str:
    return next(_operation_ids)


def new_uid() -> str:
    return next(_uids)


# --- the base resource -------------------------------------------------------------------------


def source_files(
    files: Mapping[str, bytes] = FILES,
    config_map_uid: str = CONFIG_MAP_UID,
    refusal: str | None = None,
    source_policy_digest: str | None = None,
) -> SourceFiles:
    content, manifest = digest_of_files(files)
    return SourceFiles(
        config_map_name=CONFIG_MAP,
        config_map_uid=config_map_uid,
        files=dict(files),
        content_digest=content,
        manifest=manifest,
        refusal=refusal,
        source_policy_digest=source_policy_digest,
    )


def migration(
    *,
    apply: ApplyPolicy = ApplyPolicy.ON_APPROVAL,
    suspend: bool = False,
    engine: Engine = Engine.POSTGRESQL,
    realm: str | None = None,
    shared_realm: bool = False,
    generation: int = 1,
) -> PtahMigration:
    return PtahMigration(
        metadata=ObjectMeta(
            name=NAME,
            namespace=NAMESPACE,
            uid=UID,
            generation=generation,
            resource_version="1",
        ),
        spec=PtahMigrationSpec(
            target=Target(
                engine=engine,
                coordination_key="prod/application/billing-primary",
                url_from=KeyReference(name="billing-database", key="url"),
                realm=realm,
                shared_realm=shared_realm,
            ),
            config_map=ConfigMapSource(name=CONFIG_MAP),
            policy=MigrationPolicy(apply=apply),
            suspend=suspend,
        ),
    )


def new(**kwargs: Any) -> MigrationWorld:
    """A PtahMigration just created: no status, its ConfigMap in place."""
    return MigrationWorld(
        migration=migration(**kwargs),
        now=NOW,
        new_operation_id=next_operation_id(),
        runner=RUNNER,
        source=source_files(),
        claimants=(Claimant("PtahMigration", NAMESPACE, NAME, UID, False, False),),
        manager_namespace=MANAGER_NAMESPACE,
    )


# --- the controller, played --------------------------------------------------------------------


def carry_out(world: MigrationWorld, decision: Decision) -> MigrationWorld:
    """The world after the controller carried the decision out (and nothing else happened)."""
    resource = world.migration
    if decision.annotations:
        annotations = dict(resource.metadata.annotations or {})
        for key, value in decision.annotations.items():
            if value is None:
                annotations.pop(key, None)
            else:
                annotations[key] = value
        resource = resource.model_copy(
            update={"metadata": resource.metadata.model_copy(update={"annotations": annotations})}
        )
    if decision.status is not None:
        resource = resource.model_copy(
            update={"status": PtahMigrationStatus.model_validate(dict(decision.status))}
        )
    snapshots = set(world.snapshots)
    jobs = dict(world.jobs)
    plans = dict(world.plans)
    results = dict(world.results)
    for obj in decision.create:
        if isinstance(obj, OperationCredentials):
            continue
        kind = obj["kind"]
        meta = obj["metadata"]
        if kind == "ConfigMap":
            snapshots.add(meta["name"])
        elif kind == "Job" and meta["name"] not in jobs:
            jobs[meta["name"]] = JobState(
                name=meta["name"],
                uid=new_uid(),
                operation_id=meta["labels"][LABEL_OPERATION_ID],
                phase=JobPhase.ACTIVE,
            )
        elif kind == "PtahMigrationPlan" and meta["name"] not in plans:
            manifest = dict(obj)
            manifest["metadata"] = {**meta, "uid": new_uid(), "creationTimestamp": world.now}
            plans[meta["name"]] = PtahMigrationPlan.model_validate(manifest)
    for ref in decision.delete:
        if ref.kind == "ConfigMap":
            snapshots.discard(ref.name)
            for operation_id in list(results):
                if ref.name == "ptah-result-" + operation_id.removeprefix("op-"):
                    del results[operation_id]
        elif ref.kind == "Job":
            jobs.pop(ref.name, None)
    lease = world.lease
    for action in decision.lease:
        if action.verb == LeaseVerb.ACQUIRE:
            epoch = (lease.epoch if lease else 0) + 1
            lease = LeaseState(action.name, action.namespace, action.holder, epoch, False)
        elif lease is not None and lease.holder == action.holder:
            lease = dataclasses.replace(lease, holder=None)
    return dataclasses.replace(
        world,
        migration=resource,
        snapshots=frozenset(snapshots),
        jobs=jobs,
        plans=plans,
        results=results,
        lease=lease,
        new_operation_id=next_operation_id(),
    )


def step(world: MigrationWorld) -> MigrationWorld:
    """One pass, carried out."""
    return carry_out(world, reconcile_migration(world))


def later(world: MigrationWorld, delay: dt.timedelta) -> MigrationWorld:
    return dataclasses.replace(world, now=world.now + delay)


# --- what the world holds ----------------------------------------------------------------------


def status(world: MigrationWorld) -> PtahMigrationStatus:
    assert world.migration.status is not None
    return world.migration.status


def claim_id(world: MigrationWorld) -> str:
    claim = status(world).active_operation
    assert claim is not None
    return claim.operation_id


def condition_reason(world_status: PtahMigrationStatus, kind: ConditionType) -> str | None:
    found = world_status.condition(kind)
    return None if found is None else found.reason


# --- results -----------------------------------------------------------------------------------


def pending(*versions: str) -> list[dict[str, Any]]:
    return [
        {"version": v, "description": f"migration {v}", "checksum": digest(f"file {v}")}
        for v in versions
    ]


def history(
    verdict: str,
    *,
    current: str | None = None,
    pending_versions: Sequence[str] = (),
    dirty: str | None = None,
    modified: Sequence[str] = (),
    out_of_order: Sequence[str] = (),
    ahead: tuple[str, str | None] | None = None,
    pending_count: int | None = None,
) -> dict[str, Any]:
    listed = pending(*pending_versions)
    return {
        "verdict": verdict,
        "currentVersion": current,
        "checkpointVersion": None,
        "appliedCount": 0 if current is None else int(current),
        "pendingCount": len(listed) if pending_count is None else pending_count,
        "pending": listed,
        "dirty": None if dirty is None else {"version": dirty, "description": "d"},
        "modifiedVersions": list(modified),
        "outOfOrderVersions": list(out_of_order),
        "ahead": None
        if ahead is None
        else {"databaseVersion": ahead[0], "artifactVersion": ahead[1]},
        "fingerprint": digest(f"history {verdict} {current} {dirty} {list(modified)}"),
        "revisions": []
        if current is None
        else [{"version": current, "state": "Applied", "checksum": digest(f"file {current}")}],
    }


def nothing_pending(current: str = "0002") -> dict[str, Any]:
    return history("NothingPending", current=current)


def ready_to_plan(current: str | None = "0001", *versions: str) -> dict[str, Any]:
    return history("ReadyToPlan", current=current, pending_versions=versions or ("0002",))


def report(
    world: MigrationWorld,
    operation: OperationType,
    *,
    target: str | None = DB,
    **blocks: Any,
) -> OperationResult:
    operation_id = claim_id(world)
    payload: dict[str, Any] = {
        "contract": "ptah.run/result/v1",
        "operationID": operation_id,
        "type": operation.value,
        "resource": {"kind": "PtahMigration", "namespace": NAMESPACE, "name": NAME, "uid": UID},
        "startedAt": (world.now - dt.timedelta(seconds=4)).isoformat(),
        "finishedAt": world.now.isoformat(),
        "targetIdentityDigest": target,
    }
    payload.update({k: v for k, v in blocks.items() if v is not None})
    return OperationResult(operation_id, operation.value, world.now, payload)


def with_result(
    world: MigrationWorld, result: OperationResult, *, job: JobPhase | None = JobPhase.SUCCEEDED
) -> MigrationWorld:
    """The runner reported; its Job ended (or is still ending)."""
    results = {**world.results, result.operation_id: result}
    jobs = dict(world.jobs)
    claim = status(world).active_operation
    assert claim is not None
    assert claim.job_name is not None
    if job is not None and claim.job_name in jobs:
        jobs[claim.job_name] = dataclasses.replace(
            jobs[claim.job_name], phase=job, finished_at=world.now
        )
    return dataclasses.replace(world, results=results, jobs=jobs)


def history_reported(
    world: MigrationWorld, block: dict[str, Any], *, target: str | None = DB
) -> MigrationWorld:
    return with_result(world, report(world, OperationType.HISTORY, target=target, history=block))


def read_failed(world: MigrationWorld, reason: str = "ConnectionFailed") -> MigrationWorld:
    return with_result(
        world,
        report(
            world,
            OperationType.HISTORY,
            target=None,
            error={"reason": reason, "message": "connection refused (OSError)"},
        ),
        job=JobPhase.FAILED,
    )


def run_block(
    outcome: RunOutcome,
    *,
    selected: bool = True,
    applied: Sequence[str] = (),
    failure: dict[str, Any] | None = None,
    message: str | None = None,
) -> dict[str, Any]:
    return {
        "outcome": outcome.value,
        "selected": selected,
        "appliedVersions": list(applied),
        "failure": failure,
        "message": message or f"{outcome.value.lower()}",
    }


def run_reported(
    world: MigrationWorld,
    block: dict[str, Any],
    *,
    target: str | None = DB,
    job: JobPhase | None = JobPhase.SUCCEEDED,
) -> MigrationWorld:
    return with_result(world, report(world, OperationType.APPLY, target=target, run=block), job=job)


def with_job(world: MigrationWorld, phase: JobPhase, **changes: Any) -> MigrationWorld:
    """The claim's Job in another state (ended, refused its snapshot, ...)."""
    claim = status(world).active_operation
    assert claim is not None
    assert claim.job_name is not None
    jobs = dict(world.jobs)
    jobs[claim.job_name] = dataclasses.replace(jobs[claim.job_name], phase=phase, **changes)
    return dataclasses.replace(world, jobs=jobs)


def without_job(world: MigrationWorld) -> MigrationWorld:
    claim = status(world).active_operation
    assert claim is not None
    assert claim.job_name is not None
    jobs = {k: v for k, v in world.jobs.items() if k != claim.job_name}
    return dataclasses.replace(world, jobs=jobs)


# --- what people do ----------------------------------------------------------------------------


def approval_of(
    world: MigrationWorld,
    *,
    by: UserInfo | None = ALICE,
    name: str = "billing-ok",
    fingerprint: str | None = None,
) -> PtahMigrationApproval:
    plan = status(world).plan
    assert plan is not None
    assert plan.uid is not None
    assert plan.fingerprint is not None
    return PtahMigrationApproval(
        metadata=ObjectMeta(
            name=name, namespace=NAMESPACE, uid=new_uid(), creation_timestamp=world.now
        ),
        spec=PtahMigrationApprovalSpec(
            migration_ref=ObjectReference(name=NAME, uid=UID),
            plan_ref=ObjectReference(name=plan.name, uid=plan.uid),
            plan_fingerprint=fingerprint or plan.fingerprint,
            approved_by=by,
            approved_at=world.now if by else None,
        ),
    )


def with_approval(
    world: MigrationWorld, approval: PtahMigrationApproval | None = None
) -> MigrationWorld:
    approval = approval or approval_of(world)
    return dataclasses.replace(world, approvals=(*world.approvals, approval))


def acknowledgment_of(
    world: MigrationWorld, *, by: UserInfo | None = BOB, operation_id: str | None = None
) -> PtahMigrationRunAcknowledgment:
    hold = status(world).unresolved_run
    assert hold is not None
    assert hold.job is not None
    return PtahMigrationRunAcknowledgment(
        metadata=ObjectMeta(name="billing-run-ack", namespace=NAMESPACE, uid=new_uid()),
        spec=PtahMigrationRunAcknowledgmentSpec(
            migration_ref=ObjectReference(name=NAME, uid=UID),
            operation_id=operation_id or hold.operation_id,
            plan_ref=ObjectReference(name=hold.plan.name, uid=hold.plan.uid or ""),
            job_ref=ObjectReference(name=hold.job.name, uid=hold.job.uid or ""),
            outcome=hold.outcome,
            acknowledged_by=by,
            acknowledged_at=world.now if by else None,
        ),
    )


def with_acknowledgment(
    world: MigrationWorld, ack: PtahMigrationRunAcknowledgment | None = None
) -> MigrationWorld:
    return dataclasses.replace(
        world, acknowledgments=(*world.acknowledgments, ack or acknowledgment_of(world))
    )


def annotated(world: MigrationWorld, key: str, value: str | None) -> MigrationWorld:
    annotations = dict(world.migration.metadata.annotations or {})
    if value is None:
        annotations.pop(key, None)
    else:
        annotations[key] = value
    meta = world.migration.metadata.model_copy(update={"annotations": annotations})
    return dataclasses.replace(
        world, migration=world.migration.model_copy(update={"metadata": meta})
    )


def edited(world: MigrationWorld, **spec_changes: Any) -> MigrationWorld:
    """A spec edit: the generation moves."""
    resource = world.migration
    spec = resource.spec.model_copy(update=spec_changes)
    meta = resource.metadata.model_copy(
        update={"generation": (resource.metadata.generation or 1) + 1}
    )
    return dataclasses.replace(
        world, migration=resource.model_copy(update={"spec": spec, "metadata": meta})
    )


def with_policy(world: MigrationWorld, apply: ApplyPolicy) -> MigrationWorld:
    policy = world.migration.spec.policy.model_copy(update={"apply": apply})
    return edited(world, policy=policy)


def suspended(world: MigrationWorld) -> MigrationWorld:
    return edited(world, suspend=True)


def resumed(world: MigrationWorld) -> MigrationWorld:
    return edited(world, suspend=False)


def with_source(world: MigrationWorld, source: SourceFiles | None) -> MigrationWorld:
    return dataclasses.replace(world, source=source)


def with_status(world: MigrationWorld, **changes: Any) -> MigrationWorld:
    new_status = status(world).model_copy(update=changes)
    return dataclasses.replace(
        world, migration=world.migration.model_copy(update={"status": new_status})
    )


def with_claimant(
    world: MigrationWorld, *, shared: bool, suspended: bool = False, kind: str = "PtahSchema"
) -> MigrationWorld:
    other = Claimant(kind, "catalog", "orders", new_uid(), shared, suspended)
    return dataclasses.replace(world, claimants=(*world.claimants, other))


def with_realm(
    world: MigrationWorld, realm: PtahRealm | None, *, missing: bool = False
) -> MigrationWorld:
    return dataclasses.replace(world, realm=realm, realm_missing=missing)


def lease_held_by_another(world: MigrationWorld) -> MigrationWorld:
    lease = LeaseState("ptah-realm-x", MANAGER_NAMESPACE, "op-ffffffffff", 7, False)
    return dataclasses.replace(world, lease=lease)


# --- states reached as a cluster reaches them --------------------------------------------------


def reading(world: MigrationWorld | None = None) -> MigrationWorld:
    """The first read claimed: phase Reading, its Job running."""
    return step(world or new())


def read(
    world: MigrationWorld, block: dict[str, Any], *, target: str | None = DB
) -> MigrationWorld:
    """The read under way reported this reading, and the pass that took it is done."""
    return step(history_reported(world, block, target=target))


def in_sync(**kwargs: Any) -> MigrationWorld:
    return read(reading(new(**kwargs)), nothing_pending())


def planning(**kwargs: Any) -> MigrationWorld:
    """A ReadyToPlan reading taken: the plan is created, its UID not yet known."""
    return read(reading(new(**kwargs)), ready_to_plan())


def awaiting_approval(**kwargs: Any) -> MigrationWorld:
    """Published under OnApproval: AwaitingApproval."""
    return step(planning(**kwargs))


def applying(world: MigrationWorld | None = None, *, dispatched: bool = True) -> MigrationWorld:
    """An exact approval given and the Apply claimed; with `dispatched`, its Job has shown."""
    world = world if world is not None else with_approval(awaiting_approval())
    world = step(world)
    assert status(world).phase == MigrationPhase.APPLYING, status(world).phase
    return step(world) if dispatched else without_job(world)


def verifying_history(block: dict[str, Any] | None = None) -> MigrationWorld:
    world = run_reported(applying(), block or run_block(RunOutcome.APPLIED, applied=["0002"]))
    return step(world)


def held(outcome: RunOutcome = RunOutcome.PARTIAL) -> MigrationWorld:
    """A run that ended Partial (or Unknown): Blocked, the run held."""
    failure = {"version": "0002", "statementIndex": 1, "sqlstate": "23505", "mysqlErrno": None}
    return step(run_reported(applying(), run_block(outcome, applied=[], failure=failure)))


# --- what a decision says ----------------------------------------------------------------------


def entries_added(before: MigrationWorld, decision: Decision) -> list[JournalEntry]:
    """The journal entries the decision wrote (a folded OperationFailed counts as written)."""
    if decision.status is None:
        return []
    after = PtahMigrationStatus.model_validate(dict(decision.status)).journal
    old = before.migration.status.journal if before.migration.status else None
    seen = [e.model_dump() for e in (old.entries if old else [])]
    return [e for e in (after.entries if after else []) if e.model_dump() not in seen]


def entry_types(before: MigrationWorld, decision: Decision) -> list[JournalEntryType]:
    return [e.type for e in entries_added(before, decision)]


def job_of(decision: Decision) -> str | None:
    """Which operation's Job the decision creates, if any."""
    for obj in decision.create:
        if not isinstance(obj, OperationCredentials) and obj.get("kind") == "Job":
            labels = obj["metadata"]["labels"]
            return str(labels["operator.ptah.run/operation"])
    return None


def status_of(world: MigrationWorld, decision: Decision) -> PtahMigrationStatus:
    """The status after the decision (the old one when it writes none)."""
    if decision.status is None:
        return status(world)
    return PtahMigrationStatus.model_validate(dict(decision.status))


def reason_of(
    world: MigrationWorld, decision: Decision, kind: ConditionType = ConditionType.READY
) -> str | None:
    return condition_reason(status_of(world, decision), kind)


def event_reasons(decision: Decision) -> list[str]:
    return [e.reason for e in decision.events]


def apply_job_name(world: MigrationWorld) -> str:
    return job_name(OperationType.APPLY, claim_id(world))


def with_runner(world: MigrationWorld, runner: RunnerConfig) -> MigrationWorld:
    """The manager rolled out another runner (another execution binding)."""
    return dataclasses.replace(world, runner=runner)
