"""The engine's operations over a database URL: inspect, plan, drift.

Each opens its own connection and reads inside a read-only transaction; none writes. Planning
also asks the server how it reads the desired views (`views.settle_views`): on PostgreSQL in
temporary views inside a transaction that is always rolled back. On MySQL/MariaDB it asks
which collation a character set named alone comes to (`mysql_columns.settle_columns`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ptah_operator.engine.schema.connection import Connection
from ptah_operator.engine.schema.desired import load_files
from ptah_operator.engine.schema.diff import PlanError, Statement, plan_changes
from ptah_operator.engine.schema.drift import drift_report
from ptah_operator.engine.schema.introspect_mysql import inspect_mysql
from ptah_operator.engine.schema.introspect_postgresql import inspect_postgresql
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.mysql_columns import settle_columns
from ptah_operator.engine.schema.normalize import READ_FAILURES, NormalizationError
from ptah_operator.engine.schema.plan import build_plan
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.settle import settle_expressions
from ptah_operator.engine.schema.timeouts import Timeouts
from ptah_operator.engine.schema.views import settle_views


async def observe(conn: Connection, scope: Scope, *, own_transaction: bool = True) -> Schema:
    if conn.dialect is Dialect.POSTGRESQL:
        return await inspect_postgresql(conn.raw, scope, own_transaction=own_transaction)
    return await inspect_mysql(conn.raw, conn.dialect, scope, own_transaction=own_transaction)


async def inspect_url(url: str, scope: Scope) -> Schema:
    async with await Connection.open(url) as conn:
        return await observe(conn, scope)


@dataclass(frozen=True)
class PlanResult:
    observed: Schema
    desired: Schema
    statements: list[Statement]
    plan_bytes: bytes


def planned(observed: Schema, desired: Schema) -> list[Statement]:
    """`plan_changes`, whose only errors are the engine's own: any other failure is a bug
    of the engine's, reported as a PlanError (its kind, never data) rather than a traceback."""
    try:
        return plan_changes(observed, desired)
    except (PlanError, NormalizationError):
        raise
    except READ_FAILURES as error:
        raise PlanError(
            f"the engine failed while planning ({type(error).__name__}): this is a bug of the "
            "engine's; nothing was planned"
        ) from error


async def plan_url(
    url: str, desired_paths: list[Path], scope: Scope, timeouts: Timeouts | None = None
) -> PlanResult:
    """`timeouts`: what the reads and the server's reading of desired views are held to (a
    temporary view waits for locks on what it reads like any DDL)."""
    async with await Connection.open(url) as conn:
        if timeouts is not None:
            await conn.set_timeouts(timeouts)
        desired = load_files(conn.dialect, desired_paths, scope)
        observed = await observe(conn, scope)
        desired = await settle_views(conn.raw, observed, desired)
        desired = await settle_columns(conn.raw, observed, desired)
        desired = await settle_expressions(conn.raw, observed, desired)
    if scope.tables or scope.exclude:
        # Under table globs the engine does not see all a schema holds: it drops none.
        desired = dataclasses.replace(
            desired, schemas=tuple(sorted({*desired.schemas, *observed.schemas}))
        )
    statements = planned(observed, desired)
    return PlanResult(
        observed, desired, statements, build_plan(observed, desired, scope, statements)
    )


async def drift_url(url: str, desired_paths: list[Path], scope: Scope) -> dict[str, Any]:
    result = await plan_url(url, desired_paths, scope)
    return drift_report(result.observed.dialect, result.statements)
