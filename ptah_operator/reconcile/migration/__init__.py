"""The PtahMigration lifecycle as a pure function: reconcile_migration(world) -> Decision.

See lifecycle.py for the order of a pass and docs/design/migration-path.md for the contracts.
"""

from ptah_operator.reconcile.migration.lifecycle import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld

__all__ = ["MigrationWorld", "reconcile_migration"]
