"""The PtahMigration controller: builds the World from informer caches, calls the pure
`reconcile_migration`, and carries its Decision out against the API server.

Contract:
- A pass reads only caches to build the World; the API calls it makes are the Decision's,
  in the order `reconcile/decision.py` fixes (Lease taken, status, Lease released, creates,
  deletes, Events), and it stops at the first that fails: the next pass decides again from
  what then exists.
- The status is written with the resourceVersion the World was built from, so a pass that
  raced another writer is refused (409) and simply requeued.
- Objects are created with deterministic names; AlreadyExists counts as created.
- Keys are enqueued by the resource's own events, by everything it owns (Jobs, snapshot and
  result ConfigMaps, plans), by its source ConfigMap, by approvals and acknowledgments naming
  it, by the realm it names, by the realm Lease, and by every other claimant of its
  coordination key (the census can change its verdict).
- The caches are read by `world_reads.py`, the Decision carried out by `decisions.py` (with
  expectations: a pass waits for the caches to show the previous pass's writes), both shared
  with the PtahSchema controller.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

import structlog

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.constants import GROUP, Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.controller.controller import Controller, Result
from ptah_operator.controller.decisions import (
    EXPECTATION_POLL,
    LEASE_DURATION_SECONDS,
    DecisionExecutor,
    OperationSecretFactory,
)
from ptah_operator.controller.indexes import (
    BY_MIGRATION_NAME,
    BY_OWNER_UID,
    FamilyWatches,
    index_migration_name,
    index_owner_uid,
)
from ptah_operator.controller.informer import Informer
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.manager import Manager
from ptah_operator.controller.observe import ptah_resource
from ptah_operator.controller.store import KubeObject, metadata
from ptah_operator.controller.world_reads import (
    MIGRATIONS,
    SCHEMAS,
    SharedCaches,
    now_utc,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import RunnerConfig

log = structlog.get_logger(__name__)

FAMILY = "PtahMigration"

MIGRATION_PLANS = ptah_resource(Kind.PTAH_MIGRATION_PLAN)
MIGRATION_APPROVALS = ptah_resource(Kind.PTAH_MIGRATION_APPROVAL)
ACKNOWLEDGMENTS = ptah_resource(Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT)


@dataclass(frozen=True)
class MigrationControllerConfig:
    runner: RunnerConfig
    lease_namespace: str
    operation_secret: OperationSecretFactory
    workers: int = 4
    lifecycle_metrics: LifecycleMetrics | None = None
    """Shared with the other families' controllers; made here when not given."""


class MigrationReconciler:
    """The shell around `reconcile_migration` for one manager."""

    def __init__(self, manager: Manager, config: MigrationControllerConfig) -> None:
        self.config = config
        self.api = manager.api_client
        self.metrics = config.lifecycle_metrics or LifecycleMetrics(manager.metrics.registry)
        self.caches = SharedCaches(manager, config.lease_namespace)
        self.migrations = self.caches.migrations
        self.schemas = self.caches.schemas
        self.configmaps = self.caches.configmaps
        self.jobs = self.caches.jobs
        self.plans = manager.informer(MIGRATION_PLANS, indexers={BY_OWNER_UID: index_owner_uid})
        self.approvals = manager.informer(
            MIGRATION_APPROVALS, indexers={BY_MIGRATION_NAME: index_migration_name}
        )
        self.acknowledgments = manager.informer(
            ACKNOWLEDGMENTS, indexers={BY_MIGRATION_NAME: index_migration_name}
        )
        self.executor = DecisionExecutor(
            manager.api_client,
            family=FAMILY,
            operation_secret=config.operation_secret,
            metrics=self.metrics,
            clock=manager.clock,
        )
        self.controller = Controller(
            "ptahmigration",
            self.reconcile,
            workers=config.workers,
            clock=manager.clock,
            metrics=manager.metrics,
        )
        self._wire()

    # -- wiring ---------------------------------------------------------------------------

    def _wire(self) -> None:
        c = self.controller
        watches = FamilyWatches(FAMILY, self.migrations, self.jobs)
        c.watch(self.migrations, watches.self_and_claimants)
        c.watch(self.schemas, watches.claimants_of)
        c.owns(self.jobs, FAMILY, GROUP)
        c.owns(self.plans, FAMILY, GROUP)
        c.watch(self.configmaps, watches.configmap_keys)
        c.watch(self.approvals, index_migration_name)
        c.watch(self.acknowledgments, index_migration_name)
        c.watch(self.caches.realms, watches.realm_keys)
        c.watch(self.caches.leases, watches.lease_keys)
        c.watch(self.caches.pods, watches.pod_keys)

    # -- a pass ---------------------------------------------------------------------------

    def world(self, obj: KubeObject, now: dt.datetime) -> MigrationWorld:
        migration = from_manifest(PtahMigration, obj)
        meta = migration.metadata
        namespace, uid = str(meta.namespace), str(meta.uid)
        common = self.caches.common(migration.spec, namespace, uid, now)
        plans = {
            str(plan.metadata.name): plan
            for plan in (
                from_manifest(PtahMigrationPlan, p)
                for p in self.plans.store.by_index(BY_OWNER_UID, uid)
            )
            if plan.metadata.namespace == namespace
        }
        key = f"{namespace}/{meta.name}"
        approvals = tuple(
            from_manifest(PtahMigrationApproval, a)
            for a in self.approvals.store.by_index(BY_MIGRATION_NAME, key)
        )
        acknowledgments = tuple(
            from_manifest(PtahMigrationRunAcknowledgment, a)
            for a in self.acknowledgments.store.by_index(BY_MIGRATION_NAME, key)
        )
        return MigrationWorld(
            migration=migration,
            now=now,
            new_operation_id="op-" + secrets.token_hex(5),
            runner=self.config.runner,
            plans=plans,
            approvals=approvals,
            acknowledgments=acknowledgments,
            **common.fields(),
        )

    async def reconcile(self, key: str) -> Result:
        obj = self.migrations.store.get(key)
        if obj is None:
            self.executor.forget(key)
            return Result.success()
        if metadata(obj).get("deletionTimestamp"):
            return Result.success()
        if self.executor.expectations.unmet(key, obj, self._job_seen):
            return Result.requeue(EXPECTATION_POLL)
        now = now_utc()
        world = self.world(obj, now)
        decision = reconcile_migration(world)
        return await self.carry_out(obj, world, decision)

    def _job_seen(self, job_key: str) -> bool:
        return self.jobs.store.get(job_key) is not None

    async def carry_out(self, obj: KubeObject, world: MigrationWorld, decision: Decision) -> Result:
        """Carry the Decision a pass made from `world` out (decisions.py says how)."""
        return await self.executor.carry_out(obj, decision, world.now)


def migration_controller(manager: Manager, config: MigrationControllerConfig) -> Controller:
    return MigrationReconciler(manager, config).controller


__all__ = [
    "LEASE_DURATION_SECONDS",
    "MIGRATIONS",
    "SCHEMAS",
    "Informer",
    "MigrationControllerConfig",
    "MigrationReconciler",
    "migration_controller",
]
