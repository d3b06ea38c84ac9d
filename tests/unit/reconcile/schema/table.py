"""The schema lifecycle's table: rows of tests.unit.reconcile.table, run by reconcile_schema.

What a schema row cannot show (PRIV-01..PRIV-04): SQL, a database URL, in any Event, the
status, a PtahSchemaPlan or a Job; the only place a plan's SQL goes is its chunks.
"""

from __future__ import annotations

from ptah_operator.api.constants import SchemaPhase
from ptah_operator.reconcile.schema import SchemaWorld, reconcile_schema
from tests.unit.reconcile import table
from tests.unit.reconcile.schema.worlds import FILES, PLAN_SQL, entry_types, status_of
from tests.unit.reconcile.table import params

__all__ = ["Row", "check", "never_shows_sql_or_urls", "params"]

Row = table.Row[SchemaWorld, SchemaPhase]

SCHEMA = table.Table[SchemaWorld, SchemaPhase](
    reconcile=reconcile_schema,
    status_of=status_of,
    entry_types=entry_types,
    forbidden=(
        *(content.decode().strip() for content in FILES.values()),
        PLAN_SQL,
        "CREATE TABLE",
        "postgresql://",
        "mysql://",
    ),
    searched_kinds=("PtahSchemaPlan", "Job"),
)
check = SCHEMA.check
never_shows_sql_or_urls = SCHEMA.never_shows_sql_or_urls
