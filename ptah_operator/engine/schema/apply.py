"""Apply a plan file: verify its bytes, hold the lock, refuse a stale plan, run, report.

Order, each step before the next can change anything:
1. hash the exact bytes (`read_plan`) and compare with the digest the caller expects;
2. hold the plan to the policy (protected tables, destructive changes);
3. check that every entry is exactly one statement, lexed as the server lexes it (the
   migration engine's splitter: quotes, dollar quoting, comments); the connection runs one
   statement per call besides (`Connection.run_statement`), so nothing can ride along;
4. connect, take the schema-level advisory lock (`pg_try_advisory_lock` / `GET_LOCK`) and set
   the session's timeouts (`Timeouts`: how long a statement waits for a table's lock, and how
   long it may run);
5. inspect the scope again and compare its fingerprint with the one the plan was made from
   (SCH-57: a stale plan is refused and nothing runs);
6. run the statements with per-statement progress — PostgreSQL in one transaction, or, when
   the plan adds enum values, in a first transaction that commits them and a second one for
   the rest (`transactions`); MySQL/MariaDB one by one.

The outcome is `applied` only when every statement ran and committed. Any error once
execution began gives `unknown` (SCH-59): it is not established what committed, and the
caller observes afresh rather than replaying. Errors carry SQLSTATE/errno and the statement
index, never statement or server text (PRIV-05).

`dry_run` runs no change that stays. PostgreSQL: the exact statements run in one transaction
that is always rolled back, under the same timeouts; the first failure is the refusal
(`DryRunRefused`, with its index and SQLSTATE). MySQL and MariaDB commit DDL as they run it,
so there is no such trial: `checks.mysql_checks` does what can be done without changing
anything, and says what it did (`checked`), never calling itself a dry run.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from ptah_operator.engine.dialect import Dialect as SplitDialect
from ptah_operator.engine.locks import ADVISORY_LOCK_KEY, named_lock
from ptah_operator.engine.schema.checks import mysql_checks
from ptah_operator.engine.schema.connection import Connection
from ptah_operator.engine.schema.diff import Statement
from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.operations import observe
from ptah_operator.engine.schema.plan import Plan, PlanFileError, Policy, policy_refusals, read_plan
from ptah_operator.engine.schema.timeouts import Timeouts
from ptah_operator.engine.splitter import SplitError, split

Progress = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class ApplyResult:
    # "applied", "unknown", "refused" (nothing ran) or "dryRun" (nothing stayed; every check
    # held: `detail` says what was checked).
    outcome: str
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    executed: int = 0

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"outcome": self.outcome, "executed": self.executed}
        if self.reason is not None:
            value["reason"] = self.reason
        if self.detail:
            value["detail"] = self.detail
        return value


def lock_name(database: str) -> str:
    """The MySQL / MariaDB lock this engine takes: the one the migration engine takes too."""
    return named_lock(database)


def lock_key(database: str) -> int:
    """The PostgreSQL advisory lock key: the one the migration engine takes too (LCK-05)."""
    del database  # advisory locks belong to one database already
    return ADVISORY_LOCK_KEY


def _error_code(error: BaseException) -> dict[str, Any]:
    code: dict[str, Any] = {"error": type(error).__name__}
    sqlstate = getattr(error, "sqlstate", None)
    if sqlstate:
        code["sqlstate"] = sqlstate
    args = getattr(error, "args", ())
    if args and isinstance(args[0], int):
        code["errno"] = args[0]
    return code


async def acquire_lock(conn: Connection, wait_seconds: float) -> bool:
    """Take the database lock on this connection, waiting at most `wait_seconds`."""
    deadline = asyncio.get_running_loop().time() + wait_seconds
    if conn.dialect.family == "postgresql":
        key = lock_key(conn.target.database)
        while True:
            if await conn.raw.fetchval("SELECT pg_try_advisory_lock($1)", key):
                return True
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(0.2)
    async with conn.raw.cursor() as cur:
        await cur.execute(
            "SELECT GET_LOCK(%s, %s)", (lock_name(conn.target.database), int(wait_seconds))
        )
        row = await cur.fetchone()
    return bool(row and row[0] == 1)


async def release_lock(conn: Connection) -> None:
    if conn.dialect.family == "postgresql":
        await conn.raw.execute("SELECT pg_advisory_unlock($1)", lock_key(conn.target.database))
    else:
        async with conn.raw.cursor() as cur:
            await cur.execute("SELECT RELEASE_LOCK(%s)", (lock_name(conn.target.database),))


def one_statement(sql: str, dialect: Dialect) -> bool:
    """Whether `sql` is exactly one statement as the server's own client would cut it."""
    family = SplitDialect.POSTGRESQL if dialect.family == "postgresql" else SplitDialect.MYSQL
    try:
        return len(split(sql, family)) == 1
    except SplitError:
        return False


async def apply_plan(
    url: str,
    raw: bytes,
    *,
    policy: Policy,
    expected_digest: str | None = None,
    dry_run: bool = False,
    lock_timeout: float = 30.0,
    timeouts: Timeouts | None = None,
    progress: Progress | None = None,
) -> ApplyResult:
    """`lock_timeout`: how long to wait for the engine's own database lock (LCK-05);
    `timeouts`: what every statement is held to."""
    try:
        plan = read_plan(raw)
    except PlanFileError as error:
        return ApplyResult("refused", "PlanDigestMismatch", {"problem": str(error)})
    if expected_digest is not None and plan.digest != expected_digest:
        return ApplyResult("refused", "PlanDigestMismatch", {"problem": "not the expected plan"})
    statements = plan.statements
    refusals = policy_refusals(statements, policy)
    if refusals:
        return ApplyResult("refused", "PolicyRefused", {"refusals": refusals})
    for index, statement in enumerate(statements):
        if not one_statement(statement.sql, plan.dialect):
            return ApplyResult("refused", "PlanUnparseable", {"statement": index})
    conn = await Connection.open(url)
    try:
        if conn.dialect.family != plan.dialect.family:
            return ApplyResult("refused", "DialectMismatch")
        if not await acquire_lock(conn, lock_timeout):
            return ApplyResult("refused", "LockNotAcquired")
        try:
            await conn.set_timeouts(timeouts or Timeouts())
            return await _locked(conn, plan, dry_run, progress)
        finally:
            await release_lock(conn)
    finally:
        await conn.close()


async def _stale(conn: Connection, plan: Plan, own_transaction: bool) -> ApplyResult | None:
    current = await observe(conn, plan.scope, own_transaction=own_transaction)
    if current.fingerprint() != plan.observed_fingerprint:
        return ApplyResult("refused", "StalePlan")
    return None


async def _locked(
    conn: Connection, plan: Plan, dry_run: bool, progress: Progress | None
) -> ApplyResult:
    statements = plan.statements
    total = len(statements)

    def report(index: int) -> None:
        if progress is not None:
            s = statements[index]
            progress(
                {
                    "event": "statement",
                    "index": index,
                    "total": total,
                    "severity": s.severity.value,
                    "category": s.category,
                }
            )

    if dry_run and conn.dialect is Dialect.POSTGRESQL:
        return await _postgresql_dry_run(conn, plan)
    if dry_run or not statements:
        refused = await _stale(conn, plan, own_transaction=True)
        if refused is not None:
            return refused
        if not dry_run:
            return ApplyResult("applied")
        checked = await mysql_checks(conn, statements)
        if checked.refused:
            return ApplyResult("refused", "PrecheckRefused", checked.detail)
        return ApplyResult("dryRun", detail=checked.detail)
    if conn.dialect.family == "postgresql":
        return await _postgresql(conn, plan, report)
    refused = await _stale(conn, plan, own_transaction=True)
    if refused is not None:
        return refused
    executed = 0
    for index, statement in enumerate(statements):
        try:
            await conn.run_statement(statement.sql)
        except Exception as error:  # every execution error is an unknown outcome (SCH-59)
            return ApplyResult(
                "unknown",
                "ApplyOutcomeUnknown",
                {"statement": index, **_error_code(error)},
                executed,
            )
        executed += 1
        report(index)
    return ApplyResult("applied", executed=executed)


def transactions(statements: list[Statement]) -> list[range]:
    """PostgreSQL: the statements cut into transactions. A statement that is not
    `transactional` (adding an enum value, which no transaction may use before it commits)
    ends its transaction, with the others of its kind that follow it; the diff puts them
    before anything that could use them. A plan with none runs in one transaction."""
    cuts: list[range] = []
    start = 0
    for index, statement in enumerate(statements):
        last = index + 1 == len(statements)
        if not statement.transactional and (last or statements[index + 1].transactional):
            cuts.append(range(start, index + 1))
            start = index + 1
    if start < len(statements):
        cuts.append(range(start, len(statements)))
    return cuts


async def _function_bodies_unchecked(conn: Connection, plan: Plan) -> None:
    if any(s.category.startswith("functions_") for s in plan.statements):
        # As pg_restore does: a function body may read tables made later in the plan. The
        # body is checked when the function is called.
        await conn.raw.execute("SET check_function_bodies = off")


# A value `ALTER TYPE ... ADD VALUE` added is usable only once that transaction commits.
_UNSAFE_NEW_ENUM_VALUE = "55P04"


async def _postgresql_dry_run(conn: Connection, plan: Plan) -> ApplyResult:
    """The exact statements in one transaction that is always rolled back: the first error is
    the refusal. A plan that adds enum values commits them before the statements that use
    them; a trial cannot, so it stops, and says so, at the first statement that uses one."""
    statements = plan.statements
    await _function_bodies_unchecked(conn, plan)
    transaction = conn.raw.transaction()
    await transaction.start()
    try:
        refused = await _stale(conn, plan, own_transaction=False)
        if refused is not None:
            return refused
        for index, statement in enumerate(statements):
            try:
                await conn.run_statement(statement.sql)
            except asyncpg.PostgresError as error:
                added_before = any(not s.transactional for s in statements[:index])
                if error.sqlstate == _UNSAFE_NEW_ENUM_VALUE and added_before:
                    return ApplyResult(
                        "dryRun",
                        detail=_tried(index, len(statements), "EnumValueNotCommitted"),
                    )
                return ApplyResult(
                    "refused", "DryRunRefused", {"statement": index, **_error_code(error)}
                )
        return ApplyResult("dryRun", detail=_tried(len(statements), len(statements)))
    finally:
        with contextlib.suppress(Exception):
            await transaction.rollback()


def _tried(ran: int, total: int, stopped: str | None = None) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "checked": ["statementsRunAndRolledBack"],
        "statementsRun": ran,
        "statements": total,
        # What a rollback does not undo: values drawn from sequences (a DEFAULT nextval
        # filling existing rows), and what a function called by a default, a check or a
        # materialized view does outside the transaction.
        "notRolledBack": ["sequenceValues", "effectsOutsideTheTransaction"],
    }
    if stopped is not None:
        detail["stoppedAt"] = {"statement": ran, "reason": stopped}
    return detail


async def _postgresql(conn: Connection, plan: Plan, report: Callable[[int], None]) -> ApplyResult:
    """Each transaction of `transactions` in turn, the freshness check inside the first: a
    stale plan changes nothing. An error rolls back the transaction it happens in; any
    before it stay committed, so the outcome is unknown (SCH-59) either way."""
    statements = plan.statements
    await _function_bodies_unchecked(conn, plan)
    executed = 0
    for number, cut in enumerate(transactions(statements)):
        transaction = conn.raw.transaction()
        await transaction.start()
        try:
            if number == 0:
                refused = await _stale(conn, plan, own_transaction=False)
                if refused is not None:
                    await transaction.rollback()
                    return refused
            for index in cut:
                await conn.run_statement(statements[index].sql)
                executed += 1
                report(index)
        except Exception as error:  # every execution error is an unknown outcome (SCH-59)
            # The connection may be gone; the outcome stays unknown either way.
            with contextlib.suppress(Exception):
                await transaction.rollback()
            return ApplyResult(
                "unknown",
                "ApplyOutcomeUnknown",
                {"statement": executed, **_error_code(error)},
                executed,
            )
        try:
            await transaction.commit()
        except Exception as error:
            return ApplyResult(
                "unknown",
                "ApplyOutcomeUnknown",
                {"statement": None, **_error_code(error)},
                executed,
            )
    return ApplyResult("applied", executed=executed)
