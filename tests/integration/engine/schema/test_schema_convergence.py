"""The convergence harness: random schema pairs with rows, on real PostgreSQL 15 and MariaDB.

Each example (`convergence_strategies.cases`) is a current schema, a desired one made from it
by a few random changes, and rows for the current one that the desired one can take too. Per
example, on fresh databases (`FreshDatabases`, three per example):

1. A: the current DDL loaded with the driver, the rows inserted. The inspection of A, written
   as desired DDL (the plan from an empty schema to it, statements joined with `;`), plans
   nothing against A.
2. A is planned current -> desired by the engine and applied (`allow_destructive=True`):
   (a) a fresh plan is empty;
   (b) A's catalog equals B's, B being the desired DDL loaded with the driver: the engine's
       own fingerprint, and an independent view (`pg_dump --schema-only`, normalized; on
       MariaDB `SHOW CREATE TABLE` of each table, its key and constraint lines sorted);
   (c) every pre-existing row's values in surviving columns are unchanged, but in columns a
       `destructive` statement names (`ALTER COLUMN`, `MODIFY COLUMN`, ... ): with no
       destructive statement, every value. Rows are compared by primary key where the table
       has one whose columns are compared, else as multisets; values as canonical values
       (numbers by value, a date as its midnight), since a lossless change may respell them
       (`1.50` -> `1.500`). On PostgreSQL rows may hold values a change alters without a
       word (a string cut by a shorter varchar, a number rounded): the statement must then
       be destructive.
3. B's inspection, written as desired DDL, plans nothing against B.
4. C: empty, planned to the desired file and applied: a fresh plan is empty and C's catalog
   equals B's (fingerprint and independent view).

The generator leaves out what the engine does not converge on, each with its reason
(`convergence_strategies.LEFT_OUT`, and docs/engine-schema.md, Convergence harness): a
plan that raises is a failure here, a refusal by name (DesiredSchemaError, PlanError) too.

Bounded in `make test` (`PTAH_CONVERGENCE_EXAMPLES` per engine, default 16: under a minute
per engine on the shared 2-CPU machine); `make soak` runs 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import difflib
import json
import os
import re
import tempfile
from contextlib import AbstractAsyncContextManager
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import asyncpg
import pytest
from hypothesis import HealthCheck, event, given, settings

from ptah_operator.engine.schema.apply import apply_plan
from ptah_operator.engine.schema.connection import connect_mysql, parse_url
from ptah_operator.engine.schema.diff import PlanError, Statement, plan_changes
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.operations import PlanResult, inspect_url, plan_url
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

from .convergence_strategies import Case, GSchema, GTable, cases, insert_sql

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore::pymysql.err.Warning"),
]

EXAMPLES = int(os.environ.get("PTAH_CONVERGENCE_EXAMPLES", "16"))
# `make test` runs the same examples every time (a red CI run names a fault, not a draw);
# `make soak` (PTAH_CONVERGENCE_RANDOM=1) explores new ones and keeps failures in .hypothesis/.
RANDOM = os.environ.get("PTAH_CONVERGENCE_RANDOM") == "1"
HARNESS = settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PG_DUMP = "/usr/lib/postgresql/15/bin/pg_dump"


class Databases(Protocol):
    def fresh(self) -> AbstractAsyncContextManager[str]: ...


@pytest.mark.req("SCH-58")
@HARNESS
@given(case=cases(Dialect.POSTGRESQL))
def test_postgresql_converges(pg_databases: Databases, case: Case) -> None:
    asyncio.run(check_case(pg_databases, case))


@pytest.mark.req("SCH-58")
@HARNESS
@given(case=cases(Dialect.MARIADB))
def test_mariadb_converges(maria_databases: Databases, case: Case) -> None:
    asyncio.run(check_case(maria_databases, case))


async def check_case(databases: Databases, case: Case) -> None:
    async with contextlib.AsyncExitStack() as stack:
        a = await stack.enter_async_context(databases.fresh())
        b = await stack.enter_async_context(databases.fresh())
        c = await stack.enter_async_context(databases.fresh())
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        desired_file = directory / "desired.sql"
        _write(desired_file, case.desired.ddl())

        await load(a, case.current, "current")
        await insert_rows(a, case)
        await load(b, case.desired, "desired")
        await inspection_plans_nothing(a, directory / "current-inspected.sql")

        before = await snapshot(a, case.current)
        plan = await _plan(a, desired_file)
        severities = {s.severity.value for s in plan.statements}
        event(f"plan: {'+'.join(sorted(severities)) or 'empty'}")
        event(f"rows: {'some' if any(case.rows.values()) else 'none'}")
        applied = await apply_plan(a, plan.plan_bytes, policy=Policy(allow_destructive=True))
        assert applied.outcome == "applied", f"apply: {applied.to_json()}\n{_listing(plan)}"
        again = await _plan(a, desired_file)
        assert again.statements == [], (
            f"(a) not converged: {_listing(again)}\nafter applying {_listing(plan)}"
        )
        await same_catalog(a, b, "(b) current + plan vs desired loaded directly", plan)
        await rows_kept(a, case, before, plan.statements)

        await inspection_plans_nothing(b, directory / "desired-inspected.sql")

        from_empty = await _plan(c, desired_file)
        applied = await apply_plan(c, from_empty.plan_bytes, policy=Policy())
        assert applied.outcome == "applied", f"apply: {applied.to_json()}\n{_listing(from_empty)}"
        again = await _plan(c, desired_file)
        assert again.statements == [], f"not converged from empty: {_listing(again)}"
        await same_catalog(c, b, "empty + plan vs desired loaded directly", from_empty)


async def _plan(url: str, desired: Path) -> PlanResult:
    try:
        return await plan_url(url, [desired], Scope())
    except (DesiredSchemaError, PlanError) as error:
        # The generator makes only what the engine claims to converge on (see LEFT_OUT).
        raise AssertionError(f"the engine refuses a generated schema: {error}") from error


def _write(path: Path, text: str) -> None:
    path.write_text(text)


def _listing(plan: PlanResult) -> str:
    return "\n".join(f"  [{s.severity.value}] {s.sql}" for s in plan.statements) or "  (none)"


# ---------------------------------------------------------------------------------------------
# Talking to the servers behind the engine's back.


class _Session:
    """One connection of either family: `run` a statement, `fetch` the rows of a query."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.postgresql = parse_url(url).family == "postgresql"
        self.raw: Any = None

    async def __aenter__(self) -> _Session:
        if self.postgresql:
            self.raw = await asyncpg.connect(self.url)
        else:
            self.raw = await connect_mysql(parse_url(self.url))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.postgresql:
            await self.raw.close()
        else:
            self.raw.close()

    async def run(self, sql: str, *params: Any) -> None:
        if self.postgresql:
            await self.raw.execute(sql, *params)
            return
        async with self.raw.cursor() as cur:
            await cur.execute(sql, params or None)

    async def fetch(self, sql: str) -> list[tuple[Any, ...]]:
        if self.postgresql:
            return [tuple(r) for r in await self.raw.fetch(sql)]
        async with self.raw.cursor() as cur:
            await cur.execute(sql)
            return [tuple(r) for r in await cur.fetchall()]


async def load(url: str, schema: GSchema, what: str) -> None:
    async with _Session(url) as session:
        for statement in schema.statements():
            try:
                await session.run(statement)
            except Exception as error:
                raise AssertionError(
                    f"generator: the server refuses the {what} schema's statement "
                    f"({type(error).__name__}: {error}):\n{statement}"
                ) from error


def _parameter(dialect: Dialect, value: Any) -> Any:
    if dialect is not Dialect.POSTGRESQL and isinstance(value, Decimal):
        return format(value, "f")  # PyMySQL writes str(Decimal), which may be 1E-7
    return value


async def insert_rows(url: str, case: Case) -> None:
    d = case.current.dialect
    async with _Session(url) as session:
        for table in sorted(case.current.tables, key=lambda t: t.tid):
            sql = insert_sql(d, table)
            for row in case.rows.get(table.name, []):
                params = [_parameter(d, row[c.name]) for c in table.columns]
                try:
                    await session.run(sql, *params)
                except Exception as error:
                    raise AssertionError(
                        f"generator: the server refuses a row of {table.name} "
                        f"({type(error).__name__}: {error}): {row!r}"
                    ) from error


def _q(dialect: Dialect, name: str) -> str:
    if dialect is Dialect.POSTGRESQL:
        return '"' + name.replace('"', '""') + '"'
    return "`" + name.replace("`", "``") + "`"


Snapshot = dict[str, tuple[list[str], list[tuple[Any, ...]]]]


async def snapshot(url: str, schema: GSchema) -> Snapshot:
    """Every table's rows, every column, as the server reads them."""
    d = schema.dialect
    found: Snapshot = {}
    async with _Session(url) as session:
        for table in schema.tables:
            names = [c.name for c in table.columns]
            sql = f"SELECT {', '.join(_q(d, n) for n in names)} FROM {_q(d, table.name)}"
            found[table.name] = (names, await session.fetch(sql))
    return found


# ---------------------------------------------------------------------------------------------
# (c) rows.


def canonical(value: Any) -> Any:
    """A value as what it means: a number by its value, a date as its midnight."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | Decimal):
        return ("number", format(Decimal(value).normalize(), "f"))
    if isinstance(value, dt.datetime):
        return ("time", value.isoformat())
    if isinstance(value, dt.date):
        return ("time", dt.datetime.combine(value, dt.time()).isoformat())
    return value


_COLUMN = re.compile(r'COLUMN ("(?:[^"]|"")+"|`(?:[^`]|``)+`)')


def destructive_columns(statements: list[Statement]) -> dict[str, set[str]]:
    """Per table (as statements name it), the columns destructive statements name."""
    touched: dict[str, set[str]] = {}
    for statement in statements:
        if statement.severity is not Severity.DESTRUCTIVE:
            continue
        for match in _COLUMN.finditer(statement.sql):
            quoted = match.group(1)
            name = quoted[1:-1].replace(quoted[0] * 2, quoted[0])
            for table in statement.tables:
                touched.setdefault(table, set()).add(name)
    return touched


async def rows_kept(url: str, case: Case, before: Snapshot, statements: list[Statement]) -> None:
    d = case.current.dialect
    touched = destructive_columns(statements)
    async with _Session(url) as session:
        for old in case.current.tables:
            new = case.desired.table(old.name)
            if new is None:
                continue
            qualified = f"public.{old.name}" if d is Dialect.POSTGRESQL else old.name
            skip = touched.get(qualified, set())
            names = [
                c.name for c in old.columns if new.column(c.name) is not None and c.name not in skip
            ]
            old_names, old_rows = before[old.name]
            sql = f"SELECT {', '.join(_q(d, n) for n in names) or '1'} FROM {_q(d, old.name)}"
            after = await session.fetch(sql)
            positions = [old_names.index(n) for n in names]
            expected = [tuple(canonical(r[i]) for i in positions) for r in old_rows]
            found = [tuple(canonical(v) for v in r[: len(names)]) for r in after]
            assert len(found) == len(expected), f"(c) {old.name}: row count changed"
            key = _row_key(old, names)
            if key is not None:
                ordered_expected = sorted(expected, key=lambda r: repr([r[i] for i in key]))
                ordered_found = sorted(found, key=lambda r: repr([r[i] for i in key]))
            else:
                ordered_expected = sorted(expected, key=repr)
                ordered_found = sorted(found, key=repr)
            assert ordered_found == ordered_expected, (
                f"(c) {old.name}: values in {names} changed (destructive statements name "
                f"{sorted(skip)}):\nbefore {ordered_expected}\nafter  {ordered_found}\n"
                + "\n".join(f"  [{s.severity.value}] {s.sql}" for s in statements)
            )


def _row_key(table: GTable, names: list[str]) -> list[int] | None:
    if table.pk is None or not set(table.pk.columns) <= set(names):
        return None
    return [names.index(c) for c in table.pk.columns]


# ---------------------------------------------------------------------------------------------
# (b) the catalog, two ways.


async def same_catalog(url: str, expected_url: str, what: str, plan: PlanResult) -> None:
    got, expected = await inspect_url(url, Scope()), await inspect_url(expected_url, Scope())
    if got.fingerprint() != expected.fingerprint():
        diff = difflib.unified_diff(
            _model_lines(expected), _model_lines(got), "desired loaded", "planned", lineterm=""
        )
        raise AssertionError(
            f"{what}: the engine's fingerprints differ\n" + "\n".join(diff) + "\n"
            f"plan applied:\n{_listing(plan)}"
        )
    got_view, expected_view = await independent_view(url), await independent_view(expected_url)
    if got_view != expected_view:
        diff = difflib.unified_diff(
            expected_view.splitlines(), got_view.splitlines(), "desired", "planned", lineterm=""
        )
        raise AssertionError(
            f"{what}: the server's own view differs\n" + "\n".join(diff) + "\n"
            f"plan applied:\n{_listing(plan)}"
        )


def _model_lines(schema: Schema) -> list[str]:
    return json.dumps(schema.to_json(), indent=1, sort_keys=True).splitlines()


_DUMP_NOISE = re.compile(r"^(--|SET |SELECT pg_catalog\.set_config|\\)")


async def independent_view(url: str) -> str:
    """The catalog as the server's own tools print it, without what names the database."""
    target = parse_url(url)
    if target.family == "postgresql":
        parts = urlsplit(url)
        process = await asyncio.create_subprocess_exec(
            PG_DUMP,
            "--schema-only",
            "--schema=public",
            "-h",
            target.host,
            "-p",
            str(target.port),
            "-U",
            target.user,
            parts.path.lstrip("/"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        lines = [
            line
            for line in out.decode().splitlines()
            if line.strip() and not _DUMP_NOISE.match(line)
        ]
        return "\n".join(lines)
    blocks: list[str] = []
    async with _Session(url) as session:
        tables = await session.fetch("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'")
        for name, _ in sorted(tables):
            rows = await session.fetch(f"SHOW CREATE TABLE {_q(Dialect.MARIADB, name)}")
            blocks.append(_normalized_create(str(rows[0][1])))
    return "\n".join(blocks)


def _normalized_create(text: str) -> str:
    """SHOW CREATE TABLE with its key and constraint lines sorted (the server lists them in
    the order they were made) and no AUTO_INCREMENT counter; columns keep their order."""
    lines = text.splitlines()
    head, body, tail = lines[0], lines[1:-1], lines[-1]
    body = [line.rstrip(",") for line in body]
    columns = [line for line in body if line.lstrip().startswith("`")]
    others = sorted(line for line in body if not line.lstrip().startswith("`"))
    tail = re.sub(r" AUTO_INCREMENT=\d+", "", tail)
    return "\n".join([head, *columns, *others, tail])


# ---------------------------------------------------------------------------------------------
# An inspection, written as desired input, plans nothing against its database.


async def inspection_plans_nothing(url: str, path: Path) -> None:
    observed = await inspect_url(url, Scope())
    public = ("public",) if observed.dialect is Dialect.POSTGRESQL else ()
    statements = plan_changes(Schema(dialect=observed.dialect, schemas=public), observed)
    text = "".join(s.sql + ";\n" for s in statements)
    _write(path, text)
    result = await _plan(url, path)
    assert result.statements == [], (
        f"the inspection written as desired plans against its own database:\n"
        f"{_listing(result)}\ninspection written as:\n{text}"
    )
