"""One controller for every family of Ptah resources: a family only declares what differs.

Contract (`FamilyReconciler.reconcile(key)`, one pass of one resource):
1. The resource is read from its informer. Gone: its expectations, Job refusals and phase
   metric are forgotten. Being deleted: nothing to do.
2. While the caches do not yet show the previous pass's writes (expectations.py), the pass
   waits: requeue in `EXPECTATION_POLL` seconds.
3. The World is built from caches only: `SharedCaches.common` gives what every family has
   (world.py); the shell adds the fresh operation id, the runner, its plans and approvals,
   and what the family declares of its own.
4. The family's pure function decides, and the `DecisionExecutor` carries the Decision out
   (executor.py); its `Result` goes back to the work queue.

What a family declares (`Family`, data, and a few hooks a subclass overrides, as kopf's
resource registries do over one generic registry):
- its kinds (the resource, its plan, its approval) and the index its approvals name it by;
- `own_informers` / `own_watches`: informers beyond the shared ones, and what enqueues keys;
- `world` (typed, from the parts `seen` gives) and `decide` (the family's pure function).

Every family watches the same table (`watch_table`): its resources and their claimants in every
family, the Jobs and plans it owns, the ConfigMaps it reads or owns, its approvals, what the
family adds (`own_watches`), its realm, its realm Lease and the Pods of its Jobs.
"""

from __future__ import annotations

import datetime as dt
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import structlog

from ptah_operator.api.common import ActiveOperation, CommonSpec
from ptah_operator.api.constants import GROUP, EventReason, EventType, Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.objectmeta import ObjectMeta, Resource
from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.controller.executor import DecisionExecutor, OperationSecretFactory
from ptah_operator.controller.expectations import EXPECTATION_POLL
from ptah_operator.controller.indexes import BY_OWNER_UID, FamilyWatches, index_owner_uid
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.world import (
    SharedCaches,
    UnsealedReports,
    now_utc,
    ptah_resource,
    unsealed_records,
)
from ptah_operator.reconcile.decision import Decision, Event
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.runtime.controller import Controller, MapFunc, Result, controller_owner
from ptah_operator.runtime.event_filter import EventSpamFilter, with_held_back
from ptah_operator.runtime.informer import Informer
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.store import IndexFunc, KubeObject, metadata

log = structlog.get_logger(__name__)

Watch = tuple[Informer, MapFunc]
"""An informer and the keys of this family's resources an event on it concerns."""


class World(Protocol):
    @property
    def now(self) -> dt.datetime: ...


WorldT = TypeVar("WorldT", bound=World)
R = TypeVar("R", bound=Resource)


@dataclass(frozen=True)
class FamilyControllerConfig:
    runner: RunnerConfig
    lease_namespace: str
    operation_secret: OperationSecretFactory
    workers: int = 4
    lifecycle_metrics: LifecycleMetrics | None = None
    """Shared with the other families' controllers; made here when not given."""
    result_seal: ResultSeal = field(default_factory=ResultSeal)
    """Opens the result endpoint's records (derived from the manager's result key); by default
    a key nobody has, so no record opens."""


ConfigT = TypeVar("ConfigT", bound=FamilyControllerConfig)


@dataclass(frozen=True)
class Family:
    """What tells one family's shell from another's."""

    kind: Kind
    plan: Kind
    approval: Kind
    named_by: str
    """The index of objects that name a resource of the family (approvals), by its key."""
    index_named: IndexFunc


@dataclass(frozen=True)
class Seen:
    """One resource as a pass found it: its identity and the World fields every family has."""

    key: str
    namespace: str
    uid: str
    owned_configmaps: list[KubeObject]
    fields: dict[str, Any]
    """now, new_operation_id, runner, the common fields, job_refusals, jobs_made and
    claims_written: keyword arguments of the family's World."""

    def owned_here(self) -> list[KubeObject]:
        """The ConfigMaps the resource owns, in its own namespace."""
        return [
            cm for cm in self.owned_configmaps if metadata(cm).get("namespace") == self.namespace
        ]


class FamilyReconciler(ABC, Generic[ConfigT, WorldT]):
    """The shell around one family's pure function, for one manager."""

    family: ClassVar[Family]

    def __init__(self, manager: Manager, config: ConfigT) -> None:
        kind = self.family.kind
        self.config = config
        self.metrics = config.lifecycle_metrics or LifecycleMetrics(manager.metrics.registry)
        self.caches = SharedCaches(manager, config.lease_namespace, config.result_seal)
        self._unsealed_seen = UnsealedReports()
        """The unsealed records already reported, per resource (bounded)."""
        self._unsealed_events = EventSpamFilter(clock=manager.clock)
        """Their Warnings, per resource: a ConfigMap writer can make any number of them."""
        self.primaries = self.caches.by_kind[kind]
        self.jobs = self.caches.jobs
        self.plans = self.owned_informer(manager, self.family.plan)
        self.approvals = self.naming_informer(manager, self.family.approval)
        self.own_informers(manager)
        self.executor = DecisionExecutor(
            manager.api_client,
            family=str(kind),
            operation_secret=config.operation_secret,
            metrics=self.metrics,
            clock=manager.clock,
        )
        self.controller = Controller(
            str(kind).lower(),
            self.reconcile,
            workers=config.workers,
            clock=manager.clock,
            metrics=manager.metrics,
        )
        for informer, map_func in self.watch_table():
            self.controller.watch(informer, map_func)

    # -- what a family declares -------------------------------------------------------------

    def own_informers(self, manager: Manager) -> None:
        """Take the family's own informers from the manager (none by default)."""

    def own_watches(self, watches: FamilyWatches) -> Iterable[Watch]:
        """The family's own entries of the watch table (none by default)."""
        return ()

    @abstractmethod
    def world(self, obj: KubeObject, now: dt.datetime) -> WorldT:
        """The family's World of one pass, from `seen(...)` and its own caches."""

    @abstractmethod
    def decide(self, world: WorldT) -> Decision:
        """The family's pure function."""

    # -- the one mechanism ------------------------------------------------------------------

    def watch_table(self) -> list[Watch]:
        kind = str(self.family.kind)
        watches = FamilyWatches(kind, self.primaries, self.jobs)
        owner = controller_owner(kind, GROUP)
        others = [i for k, i in self.caches.by_kind.items() if k != self.family.kind]
        return [
            (self.primaries, watches.self_and_claimants),
            *((other, watches.claimants_of) for other in others),
            (self.jobs, owner),
            (self.plans, owner),
            (self.caches.configmaps, watches.configmap_keys),
            (self.approvals, self.family.index_named),
            *self.own_watches(watches),
            (self.caches.realms, watches.realm_keys),
            (self.caches.leases, watches.lease_keys),
            (self.caches.pods, watches.pod_keys),
        ]

    def seen(
        self,
        meta: ObjectMeta,
        spec: CommonSpec,
        now: dt.datetime,
        claim: ActiveOperation | None = None,
    ) -> Seen:
        """What the caches say of one resource that every family's World holds; `claim` is
        its status.activeOperation (a record of the claimed operation counts for its attempt
        only)."""
        namespace, uid = str(meta.namespace), str(meta.uid)
        key = f"{namespace}/{meta.name}"
        owned = self.caches.owned_configmaps(uid)
        claimed = (claim.operation_id, claim.attempt, claim.report) if claim is not None else None
        fields: dict[str, Any] = {
            "now": now,
            "new_operation_id": "op-" + secrets.token_hex(5),
            "runner": self.config.runner,
            **self.caches.common(spec, namespace, uid, now, owned, claimed).fields(),
        }
        # Every family's World carries the Jobs the API server refused to create and those
        # this manager made (FamilyWorld): no family can forget a refused Job.
        fields["job_refusals"] = self.executor.refusals.of(key, uid)
        fields["jobs_made"] = self.executor.made.of(key, uid)
        fields["claims_written"] = frozenset(self.executor.claims.of(key, uid))
        return Seen(key, namespace, uid, owned, fields)

    def owned_informer(self, manager: Manager, kind: Kind) -> Informer:
        """The shared informer of a kind whose objects a resource of the family owns."""
        return manager.informer(ptah_resource(kind), indexers={BY_OWNER_UID: index_owner_uid})

    def naming_informer(self, manager: Manager, kind: Kind) -> Informer:
        """The shared informer of a kind whose objects name a resource of the family."""
        named_by = {self.family.named_by: self.family.index_named}
        return manager.informer(ptah_resource(kind), indexers=named_by)

    def owned(self, informer: Informer, model: type[R], seen: Seen) -> dict[str, R]:
        """The objects of `informer` the resource owns (in its namespace), by name."""
        return {
            str(item.metadata.name): item
            for item in (
                from_manifest(model, obj) for obj in informer.store.by_index(BY_OWNER_UID, seen.uid)
            )
            if item.metadata.namespace == seen.namespace
        }

    def naming(self, informer: Informer, model: type[R], seen: Seen) -> tuple[R, ...]:
        """The objects of `informer` that name the resource (its approvals, ...)."""
        named = informer.store.by_index(self.family.named_by, seen.key)
        return tuple(from_manifest(model, obj) for obj in named)

    async def reconcile(self, key: str) -> Result:
        obj = self.primaries.store.get(key)
        if obj is None:
            self.executor.forget(key)
            self._unsealed_seen.forget(key)
            self._unsealed_events.forget(key)
            return Result.success()
        if metadata(obj).get("deletionTimestamp"):
            return Result.success()
        if self.executor.expectations.unmet(key, obj, self._job_seen):
            return Result.requeue(EXPECTATION_POLL)
        world = self.world(obj, now_utc())
        result = await self.carry_out(obj, world, self.decide(world))
        await self._report_unsealed(obj, world.now)
        return result

    async def _report_unsealed(self, obj: KubeObject, now: dt.datetime) -> None:
        """A `ptah-result-*` record whose seal does not open is not the endpoint's: it is
        ignored, and reported once per manager by its name only (log, count, Warning)."""
        meta = metadata(obj)
        uid, key = str(meta.get("uid")), f"{meta.get('namespace')}/{meta.get('name')}"
        unsealed = unsealed_records(self.caches.owned_configmaps(uid), self.caches.seal)
        for name in self._unsealed_seen.new(key, uid, unsealed):
            self.metrics.results_unsealed.labels(family=str(self.family.kind)).inc()
            held_back = self._unsealed_events.admit(key)
            if held_back is None:
                continue
            log.warning("result record not sealed by the endpoint: ignored", record=name)
            message = f"ConfigMap {name} is not a record the result endpoint sealed: ignored"
            await self.executor.event(
                obj,
                Event(
                    EventType.WARNING,
                    EventReason.RESULT_UNSEALED,
                    with_held_back(message, held_back),
                ),
                now,
            )

    def _job_seen(self, job_key: str) -> bool:
        return self.jobs.store.get(job_key) is not None

    async def carry_out(self, obj: KubeObject, world: WorldT, decision: Decision) -> Result:
        """Carry the Decision a pass made from `world` out (executor.py says how)."""
        return await self.executor.carry_out(obj, decision, world.now)
