"""Worlds for the schema lifecycle's table tests, built so each row reads like a sentence.

The base is a ConfigMap-sourced PostgreSQL PtahSchema `orders` in `catalog`, apply:
OnApproval, interval 10m, failureRetryInterval 1m. States are reached the way a cluster
reaches them: `carry_out` plays the controller (it writes the Decision's status and annotations
back, makes the objects it created appear with UIDs, takes and releases the Lease), and the
`*_reported` helpers play the runner (a result record for the claim in flight, its Job ended).
So `awaiting_approval()` is literally "a new schema, observed, planned, its plan published".
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ptah_operator.api.approvals import PtahSchemaApproval, PtahSchemaApprovalSpec
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
    OperationType,
    SchemaPhase,
)
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema, PtahSchemaSpec, PtahSchemaStatus, SchemaPolicy
from ptah_operator.reconcile.decision import Decision, LeaseVerb, OperationCredentials
from ptah_operator.reconcile.schema import PlanText, SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import (
    Claimant,
    JobPhase,
    JobState,
    LeaseState,
    OperationResult,
    RunnerConfig,
    SourceFiles,
)

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
NAMESPACE = "catalog"
NAME = "orders"
UID = "7a2b3c4d-1111-4222-8333-444455556666"
CONFIG_MAP = "orders-schema"
CONFIG_MAP_UID = "2d3e4f50-0000-4000-8000-00000000beef"
MANAGER_NAMESPACE = "ptah-system"
TEN_MINUTES = dt.timedelta(minutes=10)
A_MINUTE = dt.timedelta(minutes=1)


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


DB = digest("database: orders-primary")
OTHER_DB = digest("database: orders-restored-elsewhere")

FILES: dict[str, bytes] = {
    "orders.sql": b"CREATE TABLE orders (id BIGINT PRIMARY KEY, placed_at TIMESTAMPTZ);\n",
}
EDITED_FILES: dict[str, bytes] = {
    **FILES,
    "order_lines.sql": b"CREATE TABLE order_lines (id BIGINT PRIMARY KEY);\n",
}

# What a plan file holds: the SQL. It must never leave the plan's chunks.
PLAN_SQL = "CREATE TABLE public.order_lines (id bigint NOT NULL PRIMARY KEY);"
PLAN_FILE = '{\n  "statements": [\n    {"sql": "' + PLAN_SQL + '"}\n  ]\n}\n'
OTHER_PLAN_FILE = PLAN_FILE.replace("order_lines", "order_notes")

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

_operation_ids = (f"op-{n:010x}" for n in itertools.count(0xB0000001))
_uids = (f"00000000-0000-4000-9000-{n:012x}" for n in itertools.count(1))


def next_operation_id() -> str:
    return next(_operation_ids)


def new_uid() -> str:
    return next(_uids)


# --- the base resource -------------------------------------------------------------------------


def source_files(
    files: Mapping[str, bytes] = FILES,
    config_map_uid: str = CONFIG_MAP_UID,
    refusal: str | None = None,
) -> SourceFiles:
    content, manifest = digest_of_files(files)
    return SourceFiles(
        config_map_name=CONFIG_MAP,
        config_map_uid=config_map_uid,
        files=dict(files),
        content_digest=content,
        manifest=manifest,
        refusal=refusal,
    )


def schema(
    *,
    apply: ApplyPolicy = ApplyPolicy.ON_APPROVAL,
    allow_destructive: bool = False,
    protected: Sequence[str] = (),
    suspend: bool = False,
    engine: Engine = Engine.POSTGRESQL,
    realm: str | None = None,
    generation: int = 1,
) -> PtahSchema:
    return PtahSchema(
        metadata=ObjectMeta(
            name=NAME, namespace=NAMESPACE, uid=UID, generation=generation, resource_version="1"
        ),
        spec=PtahSchemaSpec(
            target=Target(
                engine=engine,
                coordination_key="prod/catalog/orders-primary",
                url_from=KeyReference(name="orders-database", key="url"),
                realm=realm,
            ),
            config_map=ConfigMapSource(name=CONFIG_MAP),
            policy=SchemaPolicy(
                apply=apply, allow_destructive=allow_destructive, protected_tables=list(protected)
            ),
            suspend=suspend,
        ),
    )


def new(**kwargs: Any) -> SchemaWorld:
    """A PtahSchema just created: no status, its ConfigMap in place."""
    return SchemaWorld(
        schema=schema(**kwargs),
        now=NOW,
        new_operation_id=next_operation_id(),
        runner=RUNNER,
        source=source_files(),
        claimants=(Claimant("PtahSchema", NAMESPACE, NAME, UID, False, False),),
        manager_namespace=MANAGER_NAMESPACE,
    )


# --- the controller, played --------------------------------------------------------------------


def carry_out(world: SchemaWorld, decision: Decision) -> SchemaWorld:
    """The world after the controller carried the decision out (and nothing else happened)."""
    resource = world.schema
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
            update={"status": PtahSchemaStatus.model_validate(dict(decision.status))}
        )
    snapshots = set(world.snapshots)
    jobs = dict(world.jobs)
    plans = dict(world.plans)
    chunks = dict(world.chunks)
    results = dict(world.results)
    texts = dict(world.plan_texts)
    for obj in decision.create:
        if isinstance(obj, OperationCredentials):
            continue
        kind = obj["kind"]
        meta = obj["metadata"]
        stamped = {**meta, "uid": new_uid(), "creationTimestamp": world.now}
        if kind == "ConfigMap":
            snapshots.add(meta["name"])
        elif kind == "Job" and meta["name"] not in jobs:
            jobs[meta["name"]] = JobState(
                name=meta["name"],
                uid=new_uid(),
                operation_id=meta["labels"][LABEL_OPERATION_ID],
                phase=JobPhase.ACTIVE,
            )
        elif kind == "PtahSchemaPlan" and meta["name"] not in plans:
            plans[meta["name"]] = PtahSchemaPlan.model_validate({**obj, "metadata": stamped})
        elif kind == "PtahSchemaPlanChunk" and meta["name"] not in chunks:
            chunks[meta["name"]] = PtahSchemaPlanChunk.model_validate({**obj, "metadata": stamped})
    for ref in decision.delete:
        if ref.kind == "ConfigMap":
            snapshots.discard(ref.name)
            for operation_id in list(results):
                if ref.name == "ptah-result-" + operation_id.removeprefix("op-"):
                    del results[operation_id]
            for operation_id, text in list(texts.items()):
                prefix = "ptah-result-" + operation_id.removeprefix("op-") + "-"
                if ref.name.startswith(prefix):
                    index = int(ref.name.removeprefix(prefix))
                    pieces = {i: p for i, p in text.pieces.items() if i != index}
                    if pieces:
                        texts[operation_id] = PlanText(operation_id, pieces)
                    else:
                        del texts[operation_id]
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
        schema=resource,
        snapshots=frozenset(snapshots),
        jobs=jobs,
        plans=plans,
        chunks=chunks,
        results=results,
        plan_texts=texts,
        lease=lease,
        new_operation_id=next_operation_id(),
    )


def step(world: SchemaWorld) -> SchemaWorld:
    """One pass, carried out."""
    return carry_out(world, reconcile_schema(world))


def publish(world: SchemaWorld, passes: int = 4) -> SchemaWorld:
    """The passes that publish status.plan: its chunks created, then seen."""
    for _ in range(passes):
        plan = status(world).plan
        if plan is None or plan.uid is not None:
            return world
        world = step(world)
    return world


def later(world: SchemaWorld, delay: dt.timedelta) -> SchemaWorld:
    return dataclasses.replace(world, now=world.now + delay)


# --- what the world holds ----------------------------------------------------------------------


def status(world: SchemaWorld) -> PtahSchemaStatus:
    assert world.schema.status is not None
    return world.schema.status


def phase(world: SchemaWorld) -> SchemaPhase | None:
    return status(world).phase


def claim_of(world: SchemaWorld) -> Any:
    claim = status(world).active_operation
    assert claim is not None, "no claim in flight"
    return claim


def claim_id(world: SchemaWorld) -> str:
    return str(claim_of(world).operation_id)


# --- the runner, played ------------------------------------------------------------------------


def report(
    world: SchemaWorld, operation: OperationType, *, target: str | None = DB, **blocks: Any
) -> OperationResult:
    claim = claim_of(world)
    assert claim.type == operation, f"the claim is a {claim.type}, not a {operation}"
    payload: dict[str, Any] = {
        "contract": "ptah.run/result/v1",
        "operationID": claim.operation_id,
        "type": operation.value,
        "resource": {"kind": "PtahSchema", "namespace": NAMESPACE, "name": NAME, "uid": UID},
        "startedAt": (world.now - dt.timedelta(seconds=4)).isoformat(),
        "finishedAt": world.now.isoformat(),
        "targetIdentityDigest": target,
    }
    payload.update({k: v for k, v in blocks.items() if v is not None})
    return OperationResult(claim.operation_id, operation.value, world.now, payload)


def with_result(
    world: SchemaWorld, result: OperationResult, *, job: JobPhase | None = JobPhase.SUCCEEDED
) -> SchemaWorld:
    results = {**world.results, result.operation_id: result}
    jobs = dict(world.jobs)
    claim = claim_of(world)
    if job is not None and claim.job_name in jobs:
        jobs[claim.job_name] = dataclasses.replace(
            jobs[claim.job_name], phase=job, finished_at=world.now
        )
    return dataclasses.replace(world, results=results, jobs=jobs)


def drift_block(total: int = 1) -> dict[str, Any]:
    return {
        "digest": digest(f"drift {total}"),
        "dialect": "postgresql",
        "total": total,
        "highestSeverity": "Low" if total else None,
        "categories": [{"category": "tables_added", "count": total}] if total else [],
    }


def observed(world: SchemaWorld, *, total: int = 1, target: str | None = DB) -> SchemaWorld:
    """The Observe under way reported a drift report."""
    return with_result(
        world, report(world, OperationType.OBSERVE, target=target, drift=drift_block(total))
    )


def plan_block(
    *,
    changes: bool = True,
    text: str = PLAN_FILE,
    destructive: bool = False,
    privilege: bool = False,
    protected: Sequence[str] = (),
    piece_size: int | None = None,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A Plan's report block, and the pieces its plan file is uploaded in."""
    if not changes:
        return (
            {
                "changes": False,
                "dialect": "postgresql",
                "observedFingerprint": digest("observed"),
                "desiredFingerprint": digest("desired"),
            },
            (),
        )
    size = piece_size or len(text)
    pieces = tuple(text[i : i + size] for i in range(0, len(text), size))
    severity = "Critical" if destructive else "High" if privilege else "Low"
    block = {
        "changes": True,
        "dialect": "postgresql",
        "observedFingerprint": digest("observed"),
        "desiredFingerprint": digest("desired " + text),
        "digest": digest(text),
        "size": len(text.encode()),
        "statementCount": 1,
        "severity": {"highest": severity, "destructive": destructive, "privilegeChange": privilege},
        "findings": [
            {"code": "TableAdded", "severity": "Low", "object": "public.order_lines"},
        ],
        "findingsTotal": 1,
        "protectedTables": list(protected),
        "pieces": [
            {"index": i, "digest": digest(p), "size": len(p.encode())} for i, p in enumerate(pieces)
        ],
    }
    return block, pieces


def planned(world: SchemaWorld, *, target: str | None = DB, **kwargs: Any) -> SchemaWorld:
    """The Plan under way reported, and uploaded its plan file beside the report."""
    block, pieces = plan_block(**kwargs)
    result = report(world, OperationType.PLAN, target=target, plan=block)
    world = with_result(world, result)
    if pieces:
        text = PlanText(result.operation_id, dict(enumerate(pieces)))
        world = dataclasses.replace(
            world, plan_texts={**world.plan_texts, result.operation_id: text}
        )
    return world


def read_failed(
    world: SchemaWorld, operation: OperationType, reason: str = "ConnectionFailed"
) -> SchemaWorld:
    return with_result(
        world,
        report(
            world,
            operation,
            target=None,
            error={"reason": reason, "message": "connection refused (OSError)"},
        ),
        job=JobPhase.FAILED,
    )


def applied(
    world: SchemaWorld,
    *,
    outcome: str = "Applied",
    reason: str | None = None,
    target: str | None = DB,
    plan_digest: str | None = None,
    job: JobPhase = JobPhase.SUCCEEDED,
) -> SchemaWorld:
    """The Apply under way reported."""
    plan = status(world).plan
    block = {
        "outcome": outcome,
        "reason": reason,
        "planDigest": plan_digest or (plan.digest if plan is not None else None),
        "statementsExecuted": 1 if outcome == "Applied" else 0,
    }
    return with_result(
        world, report(world, OperationType.APPLY, target=target, apply=block), job=job
    )


def with_job(world: SchemaWorld, job_phase: JobPhase, **changes: Any) -> SchemaWorld:
    claim = claim_of(world)
    jobs = dict(world.jobs)
    jobs[claim.job_name] = dataclasses.replace(jobs[claim.job_name], phase=job_phase, **changes)
    return dataclasses.replace(world, jobs=jobs)


def without_job(world: SchemaWorld) -> SchemaWorld:
    claim = claim_of(world)
    return dataclasses.replace(
        world, jobs={k: v for k, v in world.jobs.items() if k != claim.job_name}
    )


# --- what people and the cluster do ------------------------------------------------------------


def approval_of(
    world: SchemaWorld, *, by: UserInfo | None = ALICE, name: str = "orders-ok"
) -> PtahSchemaApproval:
    plan = status(world).plan
    assert plan is not None
    assert plan.uid is not None
    assert plan.fingerprint is not None
    return PtahSchemaApproval(
        metadata=ObjectMeta(
            name=name, namespace=NAMESPACE, uid=new_uid(), creation_timestamp=world.now
        ),
        spec=PtahSchemaApprovalSpec(
            schema_ref=ObjectReference(name=NAME, uid=UID),
            plan_ref=ObjectReference(name=plan.name, uid=plan.uid),
            plan_fingerprint=plan.fingerprint,
            approved_by=by,
            approved_at=world.now if by else None,
        ),
    )


def with_approval(world: SchemaWorld, approval: PtahSchemaApproval | None = None) -> SchemaWorld:
    return dataclasses.replace(world, approvals=(*world.approvals, approval or approval_of(world)))


def annotated(world: SchemaWorld, key: str, value: str | None) -> SchemaWorld:
    annotations = dict(world.schema.metadata.annotations or {})
    if value is None:
        annotations.pop(key, None)
    else:
        annotations[key] = value
    meta = world.schema.metadata.model_copy(update={"annotations": annotations})
    return dataclasses.replace(world, schema=world.schema.model_copy(update={"metadata": meta}))


def edited(world: SchemaWorld, **spec_changes: Any) -> SchemaWorld:
    """A spec edit: the generation moves."""
    resource = world.schema
    spec = resource.spec.model_copy(update=spec_changes)
    meta = resource.metadata.model_copy(
        update={"generation": (resource.metadata.generation or 1) + 1}
    )
    return dataclasses.replace(
        world, schema=resource.model_copy(update={"spec": spec, "metadata": meta})
    )


def with_policy(world: SchemaWorld, **changes: Any) -> SchemaWorld:
    return edited(world, policy=world.schema.spec.policy.model_copy(update=changes))


def suspended(world: SchemaWorld) -> SchemaWorld:
    return edited(world, suspend=True)


def resumed(world: SchemaWorld) -> SchemaWorld:
    return edited(world, suspend=False)


def with_source(world: SchemaWorld, source: SourceFiles | None) -> SchemaWorld:
    return dataclasses.replace(world, source=source)


def with_status(world: SchemaWorld, **changes: Any) -> SchemaWorld:
    new_status = status(world).model_copy(update=changes)
    return dataclasses.replace(world, schema=world.schema.model_copy(update={"status": new_status}))


def with_claimant(world: SchemaWorld, *, shared: bool = False) -> SchemaWorld:
    other = Claimant("PtahMigration", "billing", "billing", new_uid(), shared, False)
    return dataclasses.replace(world, claimants=(*world.claimants, other))


def lease_taken_by_another(world: SchemaWorld) -> SchemaWorld:
    lease = world.lease
    epoch = (lease.epoch if lease else 0) + 1
    name = lease.name if lease else "ptah-realm-x"
    return dataclasses.replace(
        world, lease=LeaseState(name, MANAGER_NAMESPACE, "op-ffffffffff", epoch, False)
    )


def with_runner(world: SchemaWorld, runner: RunnerConfig) -> SchemaWorld:
    return dataclasses.replace(world, runner=runner)


# --- states reached as a cluster reaches them --------------------------------------------------


def observing(world: SchemaWorld | None = None) -> SchemaWorld:
    """The first read claimed: the snapshot taken, the Observe's Job running."""
    return step(world or new())


def plan_next(world: SchemaWorld | None = None, **kwargs: Any) -> SchemaWorld:
    """The Observe reported: Planning, the Plan claimed next pass."""
    return step(observed(world or observing(new(**kwargs))))


def planning(world: SchemaWorld | None = None, **kwargs: Any) -> SchemaWorld:
    """The Plan claimed under the Lease, its Job running."""
    return step(world or plan_next(**kwargs))


def published(
    world: SchemaWorld | None = None, *, spec: Mapping[str, Any] | None = None, **plan: Any
) -> SchemaWorld:
    """A Plan that found changes, its plan and chunks published, its verdict standing."""
    world = world or planning(**(spec or {}))
    return publish(step(planned(world, **plan)))


def about_to_publish(*, spec: Mapping[str, Any] | None = None, **plan: Any) -> SchemaWorld:
    """A Plan that found changes: its plan object and chunks exist; the next pass publishes."""
    world = step(step(planned(planning(**(spec or {})), **plan)))
    ref = status(world).plan
    assert ref is not None
    assert ref.uid is None
    return world


def awaiting_approval(**plan: Any) -> SchemaWorld:
    return published(**plan)


def ready_to_apply(**plan: Any) -> SchemaWorld:
    return published(spec={"apply": ApplyPolicy.ALWAYS}, **plan)


def applying(world: SchemaWorld | None = None, *, dispatched: bool = True) -> SchemaWorld:
    """An exact approval given and the Apply claimed; with `dispatched`, its Job has shown."""
    world = world if world is not None else with_approval(awaiting_approval())
    world = step(world)
    assert phase(world) == SchemaPhase.APPLYING, phase(world)
    return step(world) if dispatched else without_job(world)


def verifying_convergence(world: SchemaWorld | None = None, **apply: Any) -> SchemaWorld:
    """The Apply ended: VerifyingConvergence, its proof next."""
    return step(applied(world or applying(), **apply))


def proving(world: SchemaWorld | None = None, **apply: Any) -> SchemaWorld:
    """The proof's Observe claimed under the Apply's Lease."""
    return step(world or verifying_convergence(**apply))


def proof_planning(world: SchemaWorld | None = None, **apply: Any) -> SchemaWorld:
    """The proof's Observe reported; its Plan claimed in the same pass."""
    return step(observed(world or proving(**apply)))


def in_sync(**kwargs: Any) -> SchemaWorld:
    return step(planned(planning(**kwargs), changes=False))


def target_moved() -> SchemaWorld:
    """The proof's Plan read another database: Blocked TargetIdentityChanged."""
    return step(planned(proof_planning(), target=OTHER_DB))


# --- what a decision says ----------------------------------------------------------------------


def status_of(world: SchemaWorld, decision: Decision) -> PtahSchemaStatus:
    if decision.status is None:
        return status(world)
    return PtahSchemaStatus.model_validate(dict(decision.status))


def entries_added(before: SchemaWorld, decision: Decision) -> list[JournalEntry]:
    if decision.status is None:
        return []
    after = PtahSchemaStatus.model_validate(dict(decision.status)).journal
    old = before.schema.status.journal if before.schema.status else None
    seen = [e.model_dump() for e in (old.entries if old else [])]
    return [e for e in (after.entries if after else []) if e.model_dump() not in seen]


def entry_types(before: SchemaWorld, decision: Decision) -> list[JournalEntryType]:
    return [e.type for e in entries_added(before, decision)]


def job_of(decision: Decision) -> str | None:
    for obj in decision.create:
        if not isinstance(obj, OperationCredentials) and obj.get("kind") == "Job":
            return str(obj["metadata"]["labels"]["operator.ptah.run/operation"])
    return None


def job_manifest(decision: Decision) -> dict[str, Any]:
    return next(
        dict(o) for o in decision.create if isinstance(o, Mapping) and o.get("kind") == "Job"
    )


def created_kinds(decision: Decision) -> list[str]:
    return [str(o["kind"]) for o in decision.create if isinstance(o, Mapping)]


def event_reasons(decision: Decision) -> list[str]:
    return [e.reason for e in decision.events]


def reason_of(
    world: SchemaWorld, decision: Decision, kind: ConditionType = ConditionType.READY
) -> str | None:
    found = status_of(world, decision).condition(kind)
    return None if found is None else found.reason


def journal_entries(world: SchemaWorld) -> list[JournalEntry]:
    journal = status(world).journal
    return list(journal.entries) if journal is not None else []


def condition_reason(
    schema_status: PtahSchemaStatus, kind: ConditionType = ConditionType.READY
) -> str | None:
    found = schema_status.condition(kind)
    return None if found is None else found.reason


def last_apply_id(world: SchemaWorld) -> str:
    last = status(world).last_apply
    assert last is not None, "no Apply ended yet"
    return last.operation_id
