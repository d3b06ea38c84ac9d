"""What a PtahMigration pass sees: an immutable snapshot, built by the controller from its caches.

The parts both families share (a Job's state, a result record, the source files, a policy file,
the realm census, the Lease, the runner) are the types of reconcile.world; see that module for
what a World carries and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile.world import FamilyWorld


@dataclass(frozen=True, kw_only=True)
class MigrationWorld(FamilyWorld):
    """Everything reconcile_migration may look at for one PtahMigration: the shared fields of
    FamilyWorld, and these."""

    migration: PtahMigration
    plans: Mapping[str, PtahMigrationPlan] = field(default_factory=dict)
    """The resource's plans by name."""
    approvals: tuple[PtahMigrationApproval, ...] = ()
    """Approvals in the namespace that name this migration."""
    acknowledgments: tuple[PtahMigrationRunAcknowledgment, ...] = ()
