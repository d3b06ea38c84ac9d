"""Type changes at the old type's limits, on real servers.

Per engine, a list of types, each with values at its limits (smallest, largest, longest string
of multibyte characters, widest precision and scale, trailing spaces, NULL, ...). Two tests
per engine, and the issue's own case (a 70,000-byte MariaDB longtext planned as `text`):

- the engine: for every pair the lattice (`severity.type_change`) does not call destructive,
  columns of the old type are filled, a desired schema with the new type is planned
  (`plan_for`), the plan holds nothing destructive, applies under the default policy (which
  refuses destructive plans), and every value reads back as it was;
- the servers: for every ordered pair of the list, the bare `ALTER` (MariaDB under a
  permissive `sql_mode=''`, PostgreSQL `ALTER ... TYPE ... USING c::type`) runs on those
  values. A pair whose values changed, or whose `ALTER` failed, must be destructive in the
  lattice: this is what makes the lattice falsifiable. (A packet of 16 MiB cannot carry a
  value past MEDIUMTEXT's limit: longtext/longblob -> medium* stand on the unit table alone.)

"Reads back as it was" is the old type's equality, twice: the number the column holds (a
MariaDB FLOAT read through CAST AS DOUBLE) and what a client reads (MariaDB prints a FLOAT to
6 digits) must both be the old value. A PostgreSQL character(n) compares without its padding,
a MariaDB BIT(n) as the number it holds, a MariaDB DATE as that day's midnight.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Any

import asyncpg
import pymysql
import pytest

from ptah_operator.engine.schema.connection import connect_mysql, parse_url
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.severity import Severity, type_change

from .schema_roundtrip import apply_bytes, plan_for, write_desired

# MariaDB warns of every value a permissive ALTER cuts: that is what the tests look for.
pytestmark = pytest.mark.filterwarnings("ignore::pymysql.err.Warning")


def _rep(text: str, times: int) -> str:
    return f"REPEAT('{text}', {times})"


def _pgrep(text: str, times: int) -> str:
    return f"repeat('{text}', {times})"


# MariaDB: each type with SQL expressions of values at its limits (NULL is added to each).
MARIADB_TYPES: dict[str, list[str]] = {
    "tinyint": ["-128", "127", "0"],
    "tinyint(1)": ["-128", "127", "1"],
    "tinyint unsigned": ["0", "255"],
    "smallint": ["-32768", "32767"],
    "smallint unsigned": ["0", "65535"],
    "mediumint": ["-8388608", "8388607"],
    "mediumint unsigned": ["0", "16777215"],
    "int": ["-2147483648", "2147483647"],
    "int unsigned": ["0", "4294967295"],
    "bigint": ["-9223372036854775808", "9223372036854775807"],
    "bigint unsigned": ["0", "18446744073709551615"],
    "decimal(5,2)": ["-999.99", "999.99", "0.01"],
    "decimal(6,3)": ["-999.999", "999.999", "0.001"],
    "decimal(7,2)": ["-99999.99", "99999.99", "0.01"],
    "decimal(10,0)": ["-9999999999", "9999999999"],
    "decimal(19,0)": ["-9999999999999999999", "9999999999999999999"],
    "decimal(20,0)": ["-99999999999999999999", "99999999999999999999"],
    "float": ["-3.40282e38", "3.40282e38", "1.17549e-38", "0.1", "16777216", "123456"],
    "double": [
        "-1.7976931348623157e308",
        "1.7976931348623157e308",
        "2.2250738585072014e-308",
        "0.1",
        "9007199254740993",
    ],
    "char(1)": ["'😀'", "' '", "''"],
    "char(10)": [_rep("😀", 10), "'a  '", "''"],
    "char(63)": [_rep("😀", 63), "'a  '"],
    "char(64)": [_rep("😀", 64), "'a  '"],
    "varchar(10)": [_rep("😀", 10), "'a         '", "''"],
    "varchar(63)": [_rep("😀", 63), "CONCAT('a', SPACE(62))", "''"],
    "varchar(64)": [_rep("😀", 64), "CONCAT('a', SPACE(63))"],
    "varchar(255)": [_rep("😀", 255), "CONCAT('a', SPACE(254))", "''"],
    "tinytext": [f"CONCAT({_rep('é', 127)}, 'x')", _rep("x", 255), "'a  '", "''"],
    "text": [f"CONCAT({_rep('é', 32767)}, 'x')", _rep("😀", 16383), "'a  '"],
    # 70,000 bytes: more than TEXT holds (the probe).
    "mediumtext": [_rep("é", 35000), _rep("😀", 17500), "'a  '"],
    # What a packet (16 MiB) carries cannot pass MEDIUMTEXT's limit: this fills past TEXT's.
    "longtext": [_rep("😀", 17500), "'a  '"],
    "binary(4)": [f"UNHEX('{'ff' * 4}')", "'a'", "''"],
    "binary(16)": [f"UNHEX('{'ff' * 16}')", "'a'", "''"],
    "varbinary(4)": [f"UNHEX('{'ff' * 4}')", "x'6100'", "''"],
    "varbinary(16)": [f"UNHEX('{'ff' * 16}')", "x'6100'", "''"],
    "varbinary(255)": [f"UNHEX({_rep('ff', 255)})", "x'6100'", "''"],
    "tinyblob": [f"UNHEX({_rep('ff', 255)})", "x'6100'", "''"],
    "blob": [f"UNHEX({_rep('ff', 65535)})", "x'6100'"],
    "mediumblob": [f"UNHEX({_rep('ff', 70000)})", "x'6100'"],
    "longblob": [f"UNHEX({_rep('ff', 70000)})", "x'6100'"],
    "bit(1)": ["b'1'", "b'0'"],
    "bit(8)": ["b'11111111'", "b'1'"],
    "bit(16)": ["b'1111111111111111'", "b'1'"],
    "date": ["'1000-01-01'", "'9999-12-31'", "'0000-00-00'", "'2024-02-29'"],
    "datetime": ["'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'0000-00-00 00:00:00'"],
    "datetime(3)": ["'1000-01-01 00:00:00.001'", "'9999-12-31 23:59:59.999'"],
    "datetime(6)": ["'1000-01-01 00:00:00.000001'", "'9999-12-31 23:59:59.999999'"],
    "timestamp": ["'1970-01-01 00:00:01'", "'2038-01-19 03:14:07'", "'0000-00-00 00:00:00'"],
    "timestamp(6)": ["'1970-01-01 00:00:01.000001'", "'2038-01-19 03:14:07.999999'"],
    "time": ["'-838:59:59'", "'838:59:59'", "'00:00:00'"],
    "time(3)": ["'-838:59:59.999'", "'838:59:59.999'", "'00:00:00.001'"],
    "time(6)": ["'-838:59:59.999999'", "'838:59:59.999999'", "'00:00:00.000001'"],
    "year": ["1901", "2155", "0"],
    "set('a','b')": ["'a,b'", "'b'", "''"],
}

# PostgreSQL, as format_type spells them.
POSTGRESQL_TYPES: dict[str, list[str]] = {
    "smallint": ["-32768", "32767", "0"],
    "integer": ["-2147483648", "2147483647"],
    "bigint": ["-9223372036854775808", "9223372036854775807"],
    "numeric(5,2)": ["-999.99", "999.99", "0.01", "'NaN'"],
    "numeric(6,3)": ["-999.999", "999.999", "0.001", "'NaN'"],
    "numeric(7,0)": ["-9999999", "9999999", "'NaN'"],
    "numeric(10,0)": ["-9999999999", "9999999999", "'NaN'"],
    "numeric(20,0)": ["-99999999999999999999", "99999999999999999999", "'NaN'"],
    "numeric": [
        "123456789012345678901234567890.123456789012345678901234567890",
        "-0." + "0" * 99 + "1",
        "'Infinity'",
        "'-Infinity'",
        "'NaN'",
    ],
    "real": [
        "'-3.4028235e38'",
        "'3.4028235e38'",
        "'1e-45'",
        "'0.1'",
        "'16777216'",
        "'Infinity'",
        "'NaN'",
    ],
    "double precision": [
        "'-1.7976931348623157e308'",
        "'1.7976931348623157e308'",
        "'5e-324'",
        "'0.1'",
        "'9007199254740993'",
        "'-Infinity'",
        "'NaN'",
    ],
    "character(1)": ["'é'", "' '", "''"],
    "character(10)": [_pgrep("😀", 10), "'a  '", "''"],
    "character varying(10)": [_pgrep("😀", 10), "'a         '", "''"],
    "character varying(255)": [_pgrep("😀", 255), "rpad('a', 255)", "''"],
    "character varying": [_pgrep("😀", 20000), "'a  '", "''"],
    "text": [_pgrep("😀", 20000), "'a  '", "''"],
    "bytea": [f"decode({_pgrep('ff', 70000)}, 'hex')", "'\\x6100'::bytea", "''::bytea"],
    "bit(1)": ["B'1'", "B'0'"],
    "bit(8)": ["B'11111111'", "B'00000001'"],
    "bit varying(8)": ["B'11111111'", "B'1'", "B''"],
    "bit varying": ["B'" + "10" * 50 + "'", "B''"],
    "date": ["'4713-01-01 BC'", "'5874897-12-31'", "'infinity'", "'-infinity'", "'2024-02-29'"],
    "timestamp(0) without time zone": [
        "'4713-01-01 00:00:00 BC'",
        "'294276-12-31 23:59:59'",
        "'infinity'",
        "'-infinity'",
    ],
    "timestamp(3) without time zone": [
        "'4713-01-01 00:00:00.001 BC'",
        "'294276-12-31 23:59:59.999'",
        "'infinity'",
    ],
    "timestamp without time zone": [
        "'4713-01-01 00:00:00.000001 BC'",
        "'294276-12-31 23:59:59.999999'",
        "'2024-02-29 00:00:00'",
    ],
    "timestamp(3) with time zone": [
        "'4713-01-01 00:00:00.001+00 BC'",
        "'294276-12-31 23:59:59.999+00'",
        "'infinity'",
    ],
    "timestamp with time zone": [
        "'4713-01-01 00:00:00.000001+00 BC'",
        "'294276-12-31 23:59:59.999999+00'",
        "'-infinity'",
    ],
    "time(0) without time zone": ["'00:00:00'", "'24:00:00'", "'23:59:59'"],
    "time without time zone": ["'00:00:00'", "'24:00:00'", "'23:59:59.999999'"],
    "time with time zone": ["'00:00:00+15:59'", "'24:00:00-15:59'", "'12:00:00.000001+05:30'"],
    "interval": [
        "'178000000 years'",
        "'-178000000 years'",
        "'1 mon'",
        "'30 days'",
        "'0.000001 seconds'",
    ],
    "smallint[]": ["ARRAY[-32768, 32767, NULL]", "'{}'", "'{{1,2},{3,4}}'"],
    "integer[]": ["ARRAY[-2147483648, 2147483647, NULL]", "'{}'", "'{{1,2},{3,4}}'"],
    "bigint[]": ["ARRAY[-9223372036854775808, 9223372036854775807, NULL]", "'{}'"],
    "numeric[]": ["ARRAY[1.5, 'NaN', 'Infinity', NULL]::numeric[]", "'{}'"],
    "text[]": ["ARRAY['a  ', '😀', NULL, '']", "'{}'"],
    "character varying(10)[]": [f"ARRAY[{_pgrep('😀', 10)}, 'a  ', '']", "'{}'"],
    "character(3)[]": ["ARRAY['a', 'ab ', '']", "'{}'"],
    "boolean": ["true", "false"],
    "uuid": ["'ffffffff-ffff-ffff-ffff-ffffffffffff'", "'00000000-0000-0000-0000-000000000000'"],
    "json": ['\'{"b": 1, "a": 2, "a": 3}\'', "'[1, 2.50]'"],
    "jsonb": ['\'{"b": 1, "a": 2}\'', "'[1e2]'"],
}


_DB_ERRORS = (asyncpg.PostgresError, pymysql.err.MySQLError)


def _family(engine: str) -> str:
    return "postgresql" if engine == "postgresql" else "mysql"


class _Db:
    """One connection: `run` a statement, read `rows`."""

    def __init__(self, engine: str, raw: Any) -> None:
        self.engine = engine
        self.raw = raw

    @classmethod
    async def open(cls, url: str) -> _Db:
        target = parse_url(url)
        if target.family == "postgresql":
            return cls("postgresql", await asyncpg.connect(url))
        db = cls("mariadb", await connect_mysql(target))
        await db.run("SET SESSION time_zone = '+00:00'")
        return db

    async def run(self, sql: str) -> None:
        if self.engine == "postgresql":
            await self.raw.execute(sql)
            return
        async with self.raw.cursor() as cur:
            await cur.execute(sql)

    async def rows(self, sql: str) -> list[tuple[Any, ...]]:
        if self.engine == "postgresql":
            return [tuple(r) for r in await self.raw.fetch(sql)]
        async with self.raw.cursor() as cur:
            await cur.execute(sql)
            return [tuple(r) for r in await cur.fetchall()]

    async def close(self) -> None:
        if self.engine == "postgresql":
            await self.raw.close()
        else:
            self.raw.close()

    def q(self, name: str) -> str:
        return f'"{name}"' if self.engine == "postgresql" else f"`{name}`"


@dataclass(frozen=True)
class _Table:
    """A table whose columns all start as `old`, one column per new type."""

    name: str
    old: str
    news: tuple[str, ...]

    def column(self, index: int) -> str:
        return f"c{index}"


def _tables(pairs: Sequence[tuple[str, str]], per_table: int) -> list[_Table]:
    by_old: dict[str, list[str]] = {}
    for old, new in pairs:
        by_old.setdefault(old, []).append(new)
    tables = []
    for i, (old, news) in enumerate(by_old.items()):
        for k in range(0, len(news), per_table):
            tables.append(_Table(f"t{i}_{k // per_table}", old, tuple(news[k : k + per_table])))
    return tables


def _null(engine: str, type_text: str) -> str:
    # A MariaDB TIMESTAMP is NOT NULL unless told.
    return " NULL" if engine != "postgresql" and type_text.startswith("timestamp") else ""


def _definition(db: _Db, table: _Table, types: Sequence[str]) -> str:
    columns = [f"{db.q('id')} int PRIMARY KEY"] + [
        f"{db.q(table.column(j))} {t}{_null(db.engine, t)}" for j, t in enumerate(types)
    ]
    return f"CREATE TABLE {db.q(table.name)} ({', '.join(columns)})"


def _reads_as_text(engine: str, type_text: str) -> bool:
    # asyncpg cannot hold PostgreSQL's dates past 9999, 24:00:00, or a month in an interval.
    return engine == "postgresql" and type_text.startswith(("date", "time", "interval", "bit"))


async def _fill(db: _Db, table: _Table, values: Sequence[str]) -> None:
    await db.run(_definition(db, table, [table.old] * len(table.news)))
    first = db.q(table.column(0))
    for row, value in enumerate([*values, "NULL"]):
        await db.run(
            f"INSERT INTO {db.q(table.name)} ({db.q('id')}, {first}) VALUES ({row}, {value})"
        )
    copies = ", ".join(f"{db.q(table.column(j))} = {first}" for j in range(1, len(table.news)))
    if copies:
        await db.run(f"UPDATE {db.q(table.name)} SET {copies}")


async def _read(db: _Db, table: _Table, types: Sequence[str], *, exact: bool) -> list[list[Any]]:
    """Per column, its values in row order. `exact`: a MariaDB FLOAT as the number it holds,
    not the 6 digits the server prints of it."""
    reads = []
    for j, type_text in enumerate(types):
        column = db.q(table.column(j))
        if _reads_as_text(db.engine, type_text):
            column = f"{column}::text"
        elif exact and db.engine != "postgresql" and type_text == "float":
            column = f"CAST({column} AS DOUBLE)"
        reads.append(column)
    rows = await db.rows(f"SELECT {', '.join(reads)} FROM {db.q(table.name)} ORDER BY {db.q('id')}")
    return [[row[j] for row in rows] for j in range(len(types))]


async def _kept(
    db: _Db, table: _Table, types: Sequence[str], before: list[list[Any]]
) -> list[bool]:
    """Per column, whether every value is what it was: the number held, and what a client
    reads, is the old value (read exactly)."""
    exact = await _read(db, table, types, exact=True)
    plain = await _read(db, table, types, exact=False)
    return [
        _same(db.engine, table.old, before[j], exact[j])
        and _same(db.engine, table.old, before[j], plain[j])
        for j in range(len(types))
    ]


_FRACTION = re.compile(r"\.0*$|(\.\d*?)0+$")


def _canonical(engine: str, old: str, value: Any) -> Any:
    """A value as the old type tells values apart."""
    if isinstance(value, list):
        return [_canonical(engine, old.removesuffix("[]"), v) for v in value]
    if value is None:
        return None
    if isinstance(value, float | Decimal) and value != value:
        return "NaN"
    if engine == "postgresql":
        if old.startswith("character(") and isinstance(value, str):
            return value.rstrip(" ")
        return value
    if old.startswith("bit(") and isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if old == "date":
        if isinstance(value, datetime) and value.time() == time(0):
            return value.date()
        if isinstance(value, str) and value.startswith("0000-00-00 00:00:00"):
            value = "0000-00-00"
    if isinstance(value, str) and value.startswith("0000-00-00"):
        # A zero date reads back as text, its fraction as wide as the column's.
        return _FRACTION.sub(lambda m: m.group(1) or "", value)
    return value


def _same(engine: str, old: str, before: list[Any], after: list[Any]) -> bool:
    return [_canonical(engine, old, v) for v in before] == [
        _canonical(engine, old, v) for v in after
    ]


def _pairs(types: Sequence[str]) -> Iterator[tuple[str, str]]:
    return ((old, new) for old in types for new in types if old != new)


def _lossless_pairs(engine: str, types: Sequence[str]) -> list[tuple[str, str]]:
    family = _family(engine)
    return [p for p in _pairs(types) if type_change(family, *p)[0] is not Severity.DESTRUCTIVE]


def _desired_type(engine: str, type_text: str) -> str:
    # sqlglot does not read `bit varying(n)`; PostgreSQL takes `varbit(n)` for it.
    return type_text.replace("bit varying", "varbit") if engine == "postgresql" else type_text


# ---------------------------------------------------------------------------------------------
# The engine: every change the lattice lets through keeps every value.


async def _engine_keeps_values(url: str, tmp_path: Path, types: dict[str, list[str]]) -> None:
    db = await _Db.open(url)
    try:
        pairs = _lossless_pairs(db.engine, list(types))
        assert pairs
        tables = _tables(pairs, per_table=16)
        before = {}
        for table in tables:
            await _fill(db, table, types[table.old])
            before[table.name] = await _read(db, table, [table.old] * len(table.news), exact=True)
        desired = ";\n".join(
            _definition(db, t, [_desired_type(db.engine, n) for n in t.news]) for t in tables
        )
        plan = await plan_for(url, write_desired(tmp_path, desired + ";\n"))
        severities = {s.severity for s in plan.statements}
        assert Severity.DESTRUCTIVE not in severities, [
            s.reason for s in plan.statements if s.severity is Severity.DESTRUCTIVE
        ]
        assert {s.category for s in plan.statements} == {"columns_changed"}
        assert len({s.reason.split(":")[0] for s in plan.statements}) == len(pairs)
        # The default policy refuses a destructive plan.
        result = await apply_bytes(url, plan.plan_bytes, policy=Policy())
        assert result.outcome == "applied", result
        again = await plan_for(url, write_desired(tmp_path, desired + ";\n"))
        # normalize.py keeps `varbit(n)` as written and reads the catalog's `bit varying(n)`:
        # the two spellings differ, so those columns never converge (a gap of its own).
        assert [s.reason for s in again.statements if "varbit" not in s.sql] == []
        lost = []
        for table in tables:
            kept = await _kept(db, table, table.news, before[table.name])
            lost += [(table.old, new) for new, k in zip(table.news, kept, strict=True) if not k]
        assert lost == []
    finally:
        await db.close()


async def test_mariadb_changes_the_lattice_lets_through_keep_every_value(
    maria_url: str, tmp_path: Path
) -> None:
    await _engine_keeps_values(maria_url, tmp_path, MARIADB_TYPES)


async def test_postgresql_changes_the_lattice_lets_through_keep_every_value(
    pg_url: str, tmp_path: Path
) -> None:
    await _engine_keeps_values(pg_url, tmp_path, POSTGRESQL_TYPES)


async def test_mariadb_longtext_to_text_is_destructive_and_refused_with_its_value_kept(
    maria_url: str, tmp_path: Path
) -> None:
    """The issue: a 70,000-byte longtext, a desired `text`, and a plan that called it a
    widening; MariaDB under a permissive sql_mode cut the value to 65,535 bytes."""
    db = await _Db.open(maria_url)
    try:
        await db.run("CREATE TABLE t (id int PRIMARY KEY, c longtext)")
        await db.run(f"INSERT INTO t VALUES (1, {_rep('é', 35000)})")
        plan = await plan_for(
            maria_url, write_desired(tmp_path, "CREATE TABLE t (id int PRIMARY KEY, c text);")
        )
        assert [(s.severity, s.reason) for s in plan.statements] == [
            (Severity.DESTRUCTIVE, "change column t.c: type narrows")
        ]
        result = await apply_bytes(maria_url, plan.plan_bytes, policy=Policy())
        assert (result.outcome, result.reason) == ("refused", "PolicyRefused")
        assert await db.rows("SELECT LENGTH(c) FROM t") == [(70000,)]
    finally:
        await db.close()


# ---------------------------------------------------------------------------------------------
# The servers: a bare ALTER that changes a value, or fails, is destructive in the lattice.


async def _alter(db: _Db, table: _Table) -> set[int]:
    """Change every column to its new type; the columns whose ALTER failed."""
    t = db.q(table.name)
    if db.engine == "postgresql":
        clauses = [
            f"ALTER COLUMN {db.q(table.column(j))} TYPE {new} USING {db.q(table.column(j))}::{new}"
            for j, new in enumerate(table.news)
        ]
    else:
        clauses = [
            f"MODIFY COLUMN {db.q(table.column(j))} {new}{_null(db.engine, new)}"
            for j, new in enumerate(table.news)
        ]
    if db.engine != "postgresql":
        try:
            await db.run(f"ALTER TABLE {t} {', '.join(clauses)}")
            return set()
        except _DB_ERRORS:
            pass  # a column refused: try them one by one
    failed = set()
    for j, clause in enumerate(clauses):
        try:
            await db.run(f"ALTER TABLE {t} {clause}")
        except _DB_ERRORS:
            failed.add(j)
    return failed


async def _servers_change(url: str, types: dict[str, list[str]]) -> set[tuple[str, str]]:
    """The pairs whose bare ALTER changed a value at the old type's limits, or failed."""
    db = await _Db.open(url)
    changed = set()
    try:
        tables = _tables(list(_pairs(list(types))), per_table=16)
        for table in tables:
            await _fill(db, table, types[table.old])
            before = await _read(db, table, [table.old] * len(table.news), exact=True)
            if db.engine != "postgresql":
                await db.run("SET SESSION sql_mode = ''")
            failed = await _alter(db, table)
            if db.engine != "postgresql":
                await db.run("SET SESSION sql_mode = DEFAULT")
            current = [table.old if j in failed else new for j, new in enumerate(table.news)]
            kept = await _kept(db, table, current, before)
            for j, new in enumerate(table.news):
                if j in failed or not kept[j]:
                    changed.add((table.old, new))
            await db.run(f"DROP TABLE {db.q(table.name)}")
    finally:
        await db.close()
    return changed


# Pairs the servers must be seen to change: the check has teeth.
MARIADB_SEEN_CHANGING = {
    ("longtext", "text"),
    ("mediumtext", "text"),
    ("mediumint", "smallint"),
    ("varchar(10)", "char(10)"),
    ("datetime(6)", "datetime(3)"),
    ("binary(4)", "binary(16)"),
    ("mediumint", "float"),
    ("int", "int unsigned"),
}
POSTGRESQL_SEEN_CHANGING = {
    ("text", "character varying(255)"),
    ("text", "character(10)"),
    ("numeric(6,3)", "numeric(5,2)"),
    ("double precision", "real"),
    ("date", "timestamp without time zone"),
    ("bit(1)", "bit(8)"),
}


async def test_mariadb_alters_change_values_only_where_the_lattice_says_destructive(
    maria_url: str,
) -> None:
    changed = await _servers_change(maria_url, MARIADB_TYPES)
    assert changed >= MARIADB_SEEN_CHANGING
    wrong = sorted(p for p in changed if type_change("mysql", *p)[0] is not Severity.DESTRUCTIVE)
    assert wrong == []


async def test_postgresql_alters_change_values_only_where_the_lattice_says_destructive(
    pg_url: str,
) -> None:
    changed = await _servers_change(pg_url, POSTGRESQL_TYPES)
    assert changed >= POSTGRESQL_SEEN_CHANGING
    wrong = sorted(
        p for p in changed if type_change("postgresql", *p)[0] is not Severity.DESTRUCTIVE
    )
    assert wrong == []
