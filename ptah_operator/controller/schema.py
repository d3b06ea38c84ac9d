"""The PtahSchema controller: builds the SchemaWorld from informer caches, calls the pure
`reconcile_schema`, and carries its Decision out against the API server.

Contract (as the PtahMigration controller's, with what a schema adds):
- A pass reads only caches to build the World (`world.py` for what both families share);
  the API calls it makes are the Decision's, carried out by `executor.py` in the order
  `reconcile/decision.py` fixes, with the status written under the World's resourceVersion.
- A schema's World also holds its PtahSchemaPlans and their PtahSchemaPlanChunks (by name),
  the PtahSchemaApprovals naming it, the plan files its Plans uploaded in pieces (records
  `ptah-result-<operation hex>-<index>`, `plan_texts`), and the Jobs the API server refused to
  create (`job_refusals`, remembered by the executor from the create it last tried).
- A pass waits until the caches show the previous pass's status write and the Jobs it
  created (expectations), so a Job it made is never taken for absent.
- Keys are enqueued by the schema's own events, by everything it owns (Jobs, records, pieces,
  snapshots, plans) and the chunks of its plans, by the Pods of its Jobs, by its source and
  policy ConfigMaps, by approvals naming it, by the realm it names, by the realm Lease, and by
  every claimant of its coordination key in either family.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

import structlog

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.constants import GROUP, Engine, Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema
from ptah_operator.controller.executor import DecisionExecutor, OperationSecretFactory
from ptah_operator.controller.expectations import EXPECTATION_POLL
from ptah_operator.controller.indexes import (
    BY_OWNER_UID,
    BY_SCHEMA_NAME,
    FamilyWatches,
    index_owner_uid,
    index_schema_name,
)
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.observe import ptah_resource
from ptah_operator.controller.world import SharedCaches, now_utc, plan_texts
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.runtime.controller import Controller, Result
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.store import KubeObject, metadata

log = structlog.get_logger(__name__)

FAMILY = "PtahSchema"

SCHEMA_PLANS = ptah_resource(Kind.PTAH_SCHEMA_PLAN)
SCHEMA_PLAN_CHUNKS = ptah_resource(Kind.PTAH_SCHEMA_PLAN_CHUNK)
SCHEMA_APPROVALS = ptah_resource(Kind.PTAH_SCHEMA_APPROVAL)


@dataclass(frozen=True)
class SchemaControllerConfig:
    runner: RunnerConfig
    lease_namespace: str
    operation_secret: OperationSecretFactory
    workers: int = 4
    lifecycle_metrics: LifecycleMetrics | None = None
    """Shared with the other families' controllers; made here when not given."""
    supported_engines: frozenset[Engine] = frozenset(Engine)


class SchemaReconciler:
    """The shell around `reconcile_schema` for one manager."""

    def __init__(self, manager: Manager, config: SchemaControllerConfig) -> None:
        self.config = config
        self.api = manager.api_client
        self.metrics = config.lifecycle_metrics or LifecycleMetrics(manager.metrics.registry)
        self.caches = SharedCaches(manager, config.lease_namespace)
        self.schemas = self.caches.schemas
        self.jobs = self.caches.jobs
        self.plans = manager.informer(SCHEMA_PLANS, indexers={BY_OWNER_UID: index_owner_uid})
        self.chunks = manager.informer(SCHEMA_PLAN_CHUNKS, indexers={BY_OWNER_UID: index_owner_uid})
        self.approvals = manager.informer(
            SCHEMA_APPROVALS, indexers={BY_SCHEMA_NAME: index_schema_name}
        )
        self.executor = DecisionExecutor(
            manager.api_client,
            family=FAMILY,
            operation_secret=config.operation_secret,
            metrics=self.metrics,
            clock=manager.clock,
        )
        self.controller = Controller(
            "ptahschema",
            self.reconcile,
            workers=config.workers,
            clock=manager.clock,
            metrics=manager.metrics,
        )
        self._wire()

    # -- wiring ---------------------------------------------------------------------------

    def _wire(self) -> None:
        c = self.controller
        watches = FamilyWatches(FAMILY, self.schemas, self.jobs)
        c.watch(self.schemas, watches.self_and_claimants)
        c.watch(self.caches.migrations, watches.claimants_of)
        c.owns(self.jobs, FAMILY, GROUP)
        c.owns(self.plans, FAMILY, GROUP)
        c.watch(self.chunks, watches.labelled_keys)
        c.watch(self.caches.configmaps, watches.configmap_keys)
        c.watch(self.approvals, index_schema_name)
        c.watch(self.caches.realms, watches.realm_keys)
        c.watch(self.caches.leases, watches.lease_keys)
        c.watch(self.caches.pods, watches.pod_keys)

    # -- a pass ---------------------------------------------------------------------------

    def world(self, obj: KubeObject, now: dt.datetime) -> SchemaWorld:
        schema = from_manifest(PtahSchema, obj)
        meta = schema.metadata
        namespace, uid = str(meta.namespace), str(meta.uid)
        key = f"{namespace}/{meta.name}"
        owned = self.caches.owned_configmaps(uid)
        common = self.caches.common(schema.spec, namespace, uid, now, owned)
        plans = {
            str(plan.metadata.name): plan
            for plan in (
                from_manifest(PtahSchemaPlan, p)
                for p in self.plans.store.by_index(BY_OWNER_UID, uid)
            )
            if plan.metadata.namespace == namespace
        }
        chunks = {
            str(chunk.metadata.name): chunk
            for chunk in (
                from_manifest(PtahSchemaPlanChunk, c)
                for c in self.chunks.store.by_index(BY_OWNER_UID, uid)
            )
            if chunk.metadata.namespace == namespace
        }
        approvals = tuple(
            from_manifest(PtahSchemaApproval, a)
            for a in self.approvals.store.by_index(BY_SCHEMA_NAME, key)
        )
        return SchemaWorld(
            schema=schema,
            now=now,
            new_operation_id="op-" + secrets.token_hex(5),
            runner=self.config.runner,
            job_refusals=self.executor.refusals.of(key, uid),
            plan_texts=plan_texts(cm for cm in owned if metadata(cm).get("namespace") == namespace),
            plans=plans,
            chunks=chunks,
            approvals=approvals,
            supported_engines=self.config.supported_engines,
            **common.fields(),
        )

    async def reconcile(self, key: str) -> Result:
        obj = self.schemas.store.get(key)
        if obj is None:
            self.executor.forget(key)
            return Result.success()
        if metadata(obj).get("deletionTimestamp"):
            return Result.success()
        if self.executor.expectations.unmet(key, obj, self._job_seen):
            return Result.requeue(EXPECTATION_POLL)
        now = now_utc()
        world = self.world(obj, now)
        decision = reconcile_schema(world)
        return await self.carry_out(obj, world, decision)

    def _job_seen(self, job_key: str) -> bool:
        return self.jobs.store.get(job_key) is not None

    async def carry_out(self, obj: KubeObject, world: SchemaWorld, decision: Decision) -> Result:
        """Carry the Decision a pass made from `world` out (executor.py says how)."""
        return await self.executor.carry_out(obj, decision, world.now)


def schema_controller(manager: Manager, config: SchemaControllerConfig) -> Controller:
    return SchemaReconciler(manager, config).controller


__all__ = ["SchemaControllerConfig", "SchemaReconciler", "schema_controller"]
