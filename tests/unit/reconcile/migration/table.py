"""The migration lifecycle's table: rows of tests.unit.reconcile.table, run by reconcile_migration.

What a migration row cannot show: the SQL of the source files, a database URL (PRIV-01,
PRIV-02), in any Event, the status or a PtahMigrationPlan.
"""

from __future__ import annotations

from ptah_operator.api.constants import MigrationPhase
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile import table
from tests.unit.reconcile.migration.worlds import FILES, entry_types, status_of
from tests.unit.reconcile.table import params

__all__ = ["Row", "check", "never_shows_sql_or_urls", "params"]

Row = table.Row[MigrationWorld, MigrationPhase]

MIGRATION = table.Table[MigrationWorld, MigrationPhase](
    reconcile=reconcile_migration,
    status_of=status_of,
    entry_types=entry_types,
    forbidden=(
        *(content.decode().strip() for content in FILES.values()),
        "CREATE TABLE",
        "ALTER TABLE",
        "postgresql://",
        "mysql://",
        "SELECT ",
    ),
    searched_kinds=("PtahMigrationPlan",),
)
check = MIGRATION.check
never_shows_sql_or_urls = MIGRATION.never_shows_sql_or_urls
