"""Worlds for the migration lifecycle's table tests, built so each row reads like a sentence.

The base is a ConfigMap-sourced PostgreSQL migration `billing` in `application`, apply:
OnApproval, interval 10m, failureRetryInterval 1m. States are reached the way a cluster
reaches them: `carry_out` plays the controller (it writes the Decision's status back, makes
the objects it created appear with UIDs, takes and releases the Lease), so `awaiting_approval()`
is literally "a new migration, read, planned, published". Helpers then change one thing:
`with_result`, `with_job`, `with_approval`, `edited`, `later`, ...

What both families share (the controller and the runner played, one change at a time, what a
decision says) is tests.unit.reconcile.worlds; this module declares the migration (`MIGRATION`)
and keeps what only a migration has: its history and run reports, its approvals and run
acknowledgments, its realm, and the states its cluster reaches.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Sequence
from typing import Any

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationApprovalSpec,
    PtahMigrationRunAcknowledgment,
    PtahMigrationRunAcknowledgmentSpec,
)
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
    MigrationPhase,
    OperationType,
    RunOutcome,
)
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
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
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

NOW = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
NAMESPACE = "application"
NAME = "billing"
UID = "6f1f2a4e-3c55-4d4b-9a7e-0c2d1b9e8f10"
CONFIG_MAP = "billing-migrations"
CONFIG_MAP_UID = "1c2d3e4f-0000-4000-8000-00000000cafe"

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

BOB = UserInfo(username="bob@example.com", uid="u-bob", groups=["dba"])

MIGRATION = Worlds[MigrationWorld, PtahMigrationStatus](
    resource_field="migration",
    status_type=PtahMigrationStatus,
    journal=lambda status: status.journal,
    reconcile=reconcile_migration,
    kind="PtahMigration",
    namespace=NAMESPACE,
    name=NAME,
    uid=UID,
    config_map=CONFIG_MAP,
    config_map_uid=CONFIG_MAP_UID,
    files=FILES,
    plans={"PtahMigrationPlan": ("plans", PtahMigrationPlan)},
    first_operation_id=0xA0000001,
    uid_prefix="00000000-0000-4000-8000-",
)
next_operation_id = MIGRATION.next_operation_id
new_uid = MIGRATION.new_uid
source_files = MIGRATION.source_files
carry_out = MIGRATION.carry_out
step = MIGRATION.step
status = MIGRATION.status
claim_id = MIGRATION.claim_id
with_result = MIGRATION.with_result
with_job = MIGRATION.with_job
without_job = MIGRATION.without_job
annotated = MIGRATION.annotated
edited = MIGRATION.edited
suspended = MIGRATION.suspended
resumed = MIGRATION.resumed
with_status = MIGRATION.with_status
status_of = MIGRATION.status_of
entries_added = MIGRATION.entries_added
entry_types = MIGRATION.entry_types
reason_of = MIGRATION.reason_of


# --- the base resource -------------------------------------------------------------------------


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


# --- the runner, played --------------------------------------------------------------------


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
    return MIGRATION.report(world, operation, target=target, **blocks)


def history_reported(
    world: MigrationWorld, block: dict[str, Any], *, target: str | None = DB
) -> MigrationWorld:
    return with_result(world, report(world, OperationType.HISTORY, target=target, history=block))


def read_failed(world: MigrationWorld, reason: str = "ConnectionFailed") -> MigrationWorld:
    return MIGRATION.read_failed(world, OperationType.HISTORY, reason)


def run_block(
    outcome: RunOutcome,
    *,
    selected: bool = True,
    applied: Sequence[str] = (),
    failure: dict[str, Any] | None = None,
    message: str | None = None,
    **more: Any,
) -> dict[str, Any]:
    """A run block; `more` adds its other fields (reason, stoppedAt, sqlstate...), by their
    names in the contract."""
    return {
        "outcome": outcome.value,
        "selected": selected,
        "appliedVersions": list(applied),
        "failure": failure,
        "message": message or f"{outcome.value.lower()}",
        **more,
    }


def run_reported(
    world: MigrationWorld,
    block: dict[str, Any],
    *,
    target: str | None = DB,
    job: JobPhase | None = JobPhase.SUCCEEDED,
    error: dict[str, Any] | None = None,
) -> MigrationWorld:
    result = report(world, OperationType.APPLY, target=target, run=block, error=error)
    return with_result(world, result, job=job)


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
            plan_operation_id=plan.operation_id,
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


def with_policy(world: MigrationWorld, apply: ApplyPolicy) -> MigrationWorld:
    policy = world.migration.spec.policy.model_copy(update={"apply": apply})
    return edited(world, policy=policy)


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


def apply_job_name(world: MigrationWorld) -> str:
    return job_name(OperationType.APPLY, claim_id(world))
