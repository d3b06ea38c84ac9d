"""The PtahSchema controller: `reconcile_schema` on the family shell (family.py).

Contract: a schema's World adds its plans' chunks (labelled with the schema: a chunk enqueues
it), the plan files its Plans uploaded (`plan_texts`), the supported engines, `job_refusals`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.constants import Engine, Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema
from ptah_operator.controller.family import Family, FamilyControllerConfig, FamilyReconciler, Watch
from ptah_operator.controller.indexes import BY_SCHEMA_NAME, FamilyWatches, index_schema_name
from ptah_operator.controller.world import plan_texts
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.store import KubeObject


@dataclass(frozen=True)
class SchemaControllerConfig(FamilyControllerConfig):
    supported_engines: frozenset[Engine] = frozenset(Engine)


class SchemaReconciler(FamilyReconciler[SchemaControllerConfig, SchemaWorld]):
    family = Family(
        kind=Kind.PTAH_SCHEMA,
        plan=Kind.PTAH_SCHEMA_PLAN,
        approval=Kind.PTAH_SCHEMA_APPROVAL,
        named_by=BY_SCHEMA_NAME,
        index_named=index_schema_name,
    )

    def own_informers(self, manager: Manager) -> None:
        self.chunks = self.owned_informer(manager, Kind.PTAH_SCHEMA_PLAN_CHUNK)

    def own_watches(self, watches: FamilyWatches) -> list[Watch]:
        return [(self.chunks, watches.labelled_keys)]

    def world(self, obj: KubeObject, now: dt.datetime) -> SchemaWorld:
        schema = from_manifest(PtahSchema, obj)
        claim = schema.status.active_operation if schema.status else None
        seen = self.seen(schema.metadata, schema.spec, now, claim)
        return SchemaWorld(
            schema=schema,
            plan_texts=plan_texts(seen.owned_here()),
            plans=self.owned(self.plans, PtahSchemaPlan, seen),
            chunks=self.owned(self.chunks, PtahSchemaPlanChunk, seen),
            approvals=self.naming(self.approvals, PtahSchemaApproval, seen),
            supported_engines=self.config.supported_engines,
            **seen.fields,
        )

    def decide(self, world: SchemaWorld) -> Decision:
        return reconcile_schema(world)
