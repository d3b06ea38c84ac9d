"""Worlds for the schema lifecycle's table tests, built so each row reads like a sentence.

The base is a ConfigMap-sourced PostgreSQL PtahSchema `orders` in `catalog`, apply:
OnApproval, interval 10m, failureRetryInterval 1m. States are reached the way a cluster
reaches them: `carry_out` plays the controller (it writes the Decision's status and annotations
back, makes the objects it created appear with UIDs, takes and releases the Lease), and the
`*_reported` helpers play the runner (a result record for the claim in flight, its Job ended).
So `awaiting_approval()` is literally "a new schema, observed, planned, its plan published".

What both families share (the controller and the runner played, one change at a time, what a
decision says) is tests.unit.reconcile.worlds; this module declares the schema (`SCHEMA`) and
keeps what only a schema has: its plan texts and chunks, its drift, plan and apply reports, its
approvals, and the states its cluster reaches.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from ptah_operator.api.approvals import PtahSchemaApproval, PtahSchemaApprovalSpec
from ptah_operator.api.common import (
    ConfigMapSource,
    KeyReference,
    ObjectReference,
    Target,
    UserInfo,
)
from ptah_operator.api.constants import (
    ApplyPolicy,
    Engine,
    OperationType,
    SchemaPhase,
)
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema, PtahSchemaSpec, PtahSchemaStatus, SchemaPolicy
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.schema import PlanText, SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import (
    Claimant,
    JobPhase,
    LeaseState,
    OperationResult,
)
from tests.unit.reconcile.worlds import (
    ALICE,
    BINDING,
    MANAGER_NAMESPACE,
    ROLLED_OUT,
    RUNNER,
    Worlds,
    condition_reason,
    digest,
    event_reasons,
    job_of,
    later,
    with_runner,
    with_source,
)

__all__ = [
    "ALICE",
    "BINDING",
    "MANAGER_NAMESPACE",
    "ROLLED_OUT",
    "RUNNER",
    "condition_reason",
    "digest",
    "event_reasons",
    "job_of",
    "later",
    "with_runner",
    "with_source",
]

NOW = dt.datetime(2026, 9, 1, 12, 0, tzinfo=dt.UTC)
NAMESPACE = "catalog"
NAME = "orders"
UID = "7a2b3c4d-1111-4222-8333-444455556666"
CONFIG_MAP = "orders-schema"
CONFIG_MAP_UID = "2d3e4f50-0000-4000-8000-00000000beef"
TEN_MINUTES = dt.timedelta(minutes=10)
A_MINUTE = dt.timedelta(minutes=1)

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


def _texts_left(world: SchemaWorld, decision: Decision) -> Mapping[str, Any]:
    """The plan texts whose upload ConfigMaps the decision did not delete."""
    texts = dict(world.plan_texts)
    for ref in decision.delete:
        if ref.kind != "ConfigMap":
            continue
        for operation_id, text in list(texts.items()):
            prefix = "ptah-result-" + operation_id.removeprefix("op-") + "-"
            if ref.name.startswith(prefix):
                index = int(ref.name.removeprefix(prefix))
                pieces = {i: p for i, p in text.pieces.items() if i != index}
                if pieces:
                    texts[operation_id] = PlanText(operation_id, pieces)
                else:
                    del texts[operation_id]
    return {"plan_texts": texts}


SCHEMA = Worlds[SchemaWorld, PtahSchemaStatus](
    resource_field="schema",
    status_type=PtahSchemaStatus,
    journal=lambda status: status.journal,
    reconcile=reconcile_schema,
    kind="PtahSchema",
    namespace=NAMESPACE,
    name=NAME,
    uid=UID,
    config_map=CONFIG_MAP,
    config_map_uid=CONFIG_MAP_UID,
    files=FILES,
    plans={
        "PtahSchemaPlan": ("plans", PtahSchemaPlan),
        "PtahSchemaPlanChunk": ("chunks", PtahSchemaPlanChunk),
    },
    first_operation_id=0xB0000001,
    uid_prefix="00000000-0000-4000-9000-",
    carried_out_also=_texts_left,
)
next_operation_id = SCHEMA.next_operation_id
new_uid = SCHEMA.new_uid
source_files = SCHEMA.source_files
carry_out = SCHEMA.carry_out
step = SCHEMA.step
status = SCHEMA.status
claim_id = SCHEMA.claim_id
with_result = SCHEMA.with_result
read_failed = SCHEMA.read_failed
with_job = SCHEMA.with_job
without_job = SCHEMA.without_job
annotated = SCHEMA.annotated
edited = SCHEMA.edited
suspended = SCHEMA.suspended
resumed = SCHEMA.resumed
with_status = SCHEMA.with_status
status_of = SCHEMA.status_of
entries_added = SCHEMA.entries_added
entry_types = SCHEMA.entry_types
reason_of = SCHEMA.reason_of


# --- the base resource -------------------------------------------------------------------------


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


def publish(world: SchemaWorld, passes: int = 4) -> SchemaWorld:
    """The passes that publish status.plan: its chunks created, then seen."""
    for _ in range(passes):
        plan = status(world).plan
        if plan is None or plan.uid is not None:
            return world
        world = step(world)
    return world


# --- what the world holds ----------------------------------------------------------------------


def phase(world: SchemaWorld) -> SchemaPhase | None:
    return status(world).phase


def claim_of(world: SchemaWorld) -> Any:
    """The claim in flight, untyped: the tests read its optional fields as present."""
    return SCHEMA.claim_of(world)


# --- the runner, played ------------------------------------------------------------------------


def report(
    world: SchemaWorld, operation: OperationType, *, target: str | None = DB, **blocks: Any
) -> OperationResult:
    return SCHEMA.report(world, operation, target=target, **blocks)


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
            plan_operation_id=plan.operation_id,
            approved_by=by,
            approved_at=world.now if by else None,
        ),
    )


def with_approval(world: SchemaWorld, approval: PtahSchemaApproval | None = None) -> SchemaWorld:
    return dataclasses.replace(world, approvals=(*world.approvals, approval or approval_of(world)))


def with_policy(world: SchemaWorld, **changes: Any) -> SchemaWorld:
    return edited(world, policy=world.schema.spec.policy.model_copy(update=changes))


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


def job_manifest(decision: Decision) -> dict[str, Any]:
    return next(
        dict(o) for o in decision.create if isinstance(o, Mapping) and o.get("kind") == "Job"
    )


def created_kinds(decision: Decision) -> list[str]:
    return [str(o["kind"]) for o in decision.create if isinstance(o, Mapping)]


def journal_entries(world: SchemaWorld) -> list[JournalEntry]:
    journal = status(world).journal
    return list(journal.entries) if journal is not None else []


def last_apply_id(world: SchemaWorld) -> str:
    last = status(world).last_apply
    assert last is not None, "no Apply ended yet"
    return last.operation_id
