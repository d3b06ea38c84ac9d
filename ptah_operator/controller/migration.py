"""The PtahMigration controller: `reconcile_migration` on the family shell (family.py).

Contract: a migration's World adds the PtahMigrationRunAcknowledgments naming it (they enqueue
it), and `job_refusals`: the Jobs the API server refused to create, so a refused History,
Resolve, Verify or Apply Job ends its operation Failed rather than being asked for again.
"""

from __future__ import annotations

import datetime as dt

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.constants import Kind
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.controller.family import Family, FamilyControllerConfig, FamilyReconciler, Watch
from ptah_operator.controller.indexes import BY_MIGRATION_NAME, FamilyWatches, index_migration_name
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.runtime.manager import Manager
from ptah_operator.runtime.store import KubeObject

MigrationControllerConfig = FamilyControllerConfig


class MigrationReconciler(FamilyReconciler[MigrationControllerConfig, MigrationWorld]):
    family = Family(
        kind=Kind.PTAH_MIGRATION,
        plan=Kind.PTAH_MIGRATION_PLAN,
        approval=Kind.PTAH_MIGRATION_APPROVAL,
        named_by=BY_MIGRATION_NAME,
        index_named=index_migration_name,
    )

    def own_informers(self, manager: Manager) -> None:
        self.acknowledgments = self.naming_informer(manager, Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT)

    def own_watches(self, watches: FamilyWatches) -> list[Watch]:
        return [(self.acknowledgments, index_migration_name)]

    def world(self, obj: KubeObject, now: dt.datetime) -> MigrationWorld:
        migration = from_manifest(PtahMigration, obj)
        claim = migration.status.active_operation if migration.status else None
        seen = self.seen(migration.metadata, migration.spec, now, claim)
        return MigrationWorld(
            migration=migration,
            plans=self.owned(self.plans, PtahMigrationPlan, seen),
            approvals=self.naming(self.approvals, PtahMigrationApproval, seen),
            acknowledgments=self.naming(self.acknowledgments, PtahMigrationRunAcknowledgment, seen),
            **seen.fields,
        )

    def decide(self, world: MigrationWorld) -> Decision:
        return reconcile_migration(world)
