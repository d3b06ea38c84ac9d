"""Enum values on real databases: added in place, lost or reordered by making the type again
(PostgreSQL) or restating the column (MariaDB); each converges, and a refusal changes nothing."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest

from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.severity import Severity

from .schema_roundtrip import apply_bytes, converge, execute, fingerprint, plan_for, write_desired

PG_BEFORE = """
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE level AS ENUM ('low', 'high');
CREATE TABLE t (
  id int PRIMARY KEY,
  m mood NOT NULL DEFAULT 'ok',
  ms mood[],
  l level,
  CONSTRAINT t_not_sad CHECK (m <> 'sad')
);
CREATE INDEX t_m ON t (m);
CREATE INDEX t_happy ON t (id) WHERE m = 'happy';
CREATE VIEW v AS SELECT id, m FROM t;
"""

# mood loses 'sad', gains 'meh' and changes order; level gains a value in the middle, which
# a new column's default and check use in the same plan.
PG_AFTER = """
CREATE TYPE mood AS ENUM ('happy', 'ok', 'meh');
CREATE TYPE level AS ENUM ('low', 'mid', 'high');
CREATE TABLE t (
  id int PRIMARY KEY,
  m mood NOT NULL DEFAULT 'ok',
  ms mood[],
  l level,
  l2 level DEFAULT 'mid' CHECK (l2 <> 'low'),
  CONSTRAINT t_not_sad CHECK (m <> 'meh')
);
CREATE INDEX t_m ON t (m);
CREATE INDEX t_happy ON t (id) WHERE m = 'happy';
CREATE VIEW v AS SELECT id, m FROM t;
"""


async def _rows(url: str) -> list[tuple[object, ...]]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch("SELECT id, m::text, ms::text[], l::text FROM t ORDER BY id")
        return [tuple(r) for r in rows]
    finally:
        await conn.close()


@pytest.mark.req("SCH-58")
async def test_postgresql_enum_values_lost_reordered_and_added_converge(
    pg_url: str, tmp_path: Path
) -> None:
    await converge(pg_url, tmp_path, PG_BEFORE)
    await execute(
        pg_url,
        "INSERT INTO t VALUES (1, 'ok', ARRAY['happy', 'ok']::mood[], 'high'), "
        "(2, 'happy', NULL, 'low')",
    )
    applied = await converge(pg_url, tmp_path, PG_AFTER)
    by_category = {s.category for s in applied.statements}
    assert "enums_changed" in by_category
    added = [s for s in applied.statements if "ADD VALUE" in s.sql]
    assert [s.sql for s in added] == [
        "ALTER TYPE \"public\".\"level\" ADD VALUE 'mid' BEFORE 'high'"
    ]
    assert added[0].severity is Severity.SAFE
    assert not added[0].transactional
    remade = [s for s in applied.statements if s.category == "enums_changed" and s not in added]
    assert remade
    assert all(s.severity is Severity.DESTRUCTIVE for s in remade)
    # The rows keep their values through the conversion.
    assert await _rows(pg_url) == [(1, "ok", ["happy", "ok"], "high"), (2, "happy", None, "low")]
    # Converged: the same desired schema again plans nothing, and no retired type is left.
    again = await plan_for(pg_url, write_desired(tmp_path, PG_AFTER))
    assert again.statements == []
    conn = await asyncpg.connect(pg_url)
    try:
        leftovers = await conn.fetchval(
            "SELECT count(*) FROM pg_type WHERE typname LIKE '%ptah_old%'"
        )
    finally:
        await conn.close()
    assert leftovers == 0


async def test_postgresql_enum_plans_are_identical_across_runs(pg_url: str, tmp_path: Path) -> None:
    await converge(pg_url, tmp_path, PG_BEFORE)
    desired = write_desired(tmp_path, PG_AFTER)
    first, second = await plan_for(pg_url, desired), await plan_for(pg_url, desired)
    assert first.plan_bytes == second.plan_bytes


async def test_postgresql_losing_an_enum_value_is_refused_without_permission(
    pg_url: str, tmp_path: Path
) -> None:
    await converge(pg_url, tmp_path, PG_BEFORE)
    before = await fingerprint(pg_url)
    plan = await plan_for(pg_url, write_desired(tmp_path, PG_AFTER))
    result = await apply_bytes(pg_url, plan.plan_bytes)
    assert (result.outcome, result.reason) == ("refused", "PolicyRefused")
    assert await fingerprint(pg_url) == before


async def test_postgresql_a_row_holding_a_lost_value_fails_the_apply_and_changes_nothing(
    pg_url: str, tmp_path: Path
) -> None:
    await converge(pg_url, tmp_path, PG_BEFORE)
    await execute(
        pg_url, "ALTER TABLE t DROP CONSTRAINT t_not_sad", "INSERT INTO t VALUES (1, 'sad')"
    )
    before = await fingerprint(pg_url)
    plan = await plan_for(pg_url, write_desired(tmp_path, PG_AFTER))
    result = await apply_bytes(pg_url, plan.plan_bytes, policy=Policy(allow_destructive=True))
    assert (result.outcome, result.reason) == ("unknown", "ApplyOutcomeUnknown")
    assert set(result.detail) <= {"statement", "error", "sqlstate", "errno"}
    # The values were added in a transaction of their own, committed before the failing one:
    # only they remain; the type was not made again.
    conn = await asyncpg.connect(pg_url)
    try:
        labels = await conn.fetchval(
            "SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum "
            "WHERE enumtypid = 'mood'::regtype"
        )
    finally:
        await conn.close()
    assert labels == ["sad", "ok", "happy"]
    assert await fingerprint(pg_url) != before  # level gained 'mid', committed first


FK_CASES = {
    # Found by the convergence harness: each column is converted by its own statement, and
    # in between the key joins the new type to the former one (42804). (before, after,
    # the referenced key values; row 1 of c references the last.)
    "enum made again": (
        "CREATE TYPE e AS ENUM ('a', 'b', 'c'); CREATE TABLE p (k e PRIMARY KEY); "
        "CREATE TABLE c (id int PRIMARY KEY, k e REFERENCES p (k));",
        "CREATE TYPE e AS ENUM ('b', 'a'); CREATE TABLE p (k e PRIMARY KEY); "
        "CREATE TABLE c (id int PRIMARY KEY, k e REFERENCES p (k));",
        ("a", "b"),
    ),
    "text to integer": (
        "CREATE TABLE p (k text PRIMARY KEY); "
        "CREATE TABLE c (id int PRIMARY KEY, k text REFERENCES p (k));",
        "CREATE TABLE p (k integer PRIMARY KEY); "
        "CREATE TABLE c (id int PRIMARY KEY, k integer REFERENCES p (k));",
        ("1", "2"),
    ),
}


@pytest.mark.parametrize("case", sorted(FK_CASES))
async def test_postgresql_foreign_keys_around_columns_converted_one_by_one(
    pg_url: str, tmp_path: Path, case: str
) -> None:
    before, after, keys = FK_CASES[case]
    await converge(pg_url, tmp_path, before)
    await execute(
        pg_url,
        "INSERT INTO p VALUES " + ", ".join(f"('{k}')" for k in keys),
        f"INSERT INTO c VALUES (1, '{keys[-1]}')",
    )
    applied = await converge(pg_url, tmp_path, after)
    sql = [s.sql for s in applied.statements]
    drop = next(i for i, q in enumerate(sql) if q.endswith('DROP CONSTRAINT "c_k_fkey"'))
    add = next(i for i, q in enumerate(sql) if 'ADD CONSTRAINT "c_k_fkey" FOREIGN KEY' in q)
    assert drop < add
    conn = await asyncpg.connect(pg_url)
    try:
        assert [tuple(r) for r in await conn.fetch("SELECT id, k::text FROM c")] == [(1, keys[-1])]
    finally:
        await conn.close()


async def test_postgresql_enum_types_named_by_key_words_converge(
    pg_url: str, tmp_path: Path
) -> None:
    # Found by the convergence harness: `"select"` never equalled `public."select"`.
    before = (
        "CREATE TYPE \"select\" AS ENUM ('a', 'b'); CREATE TYPE \"Mood\" AS ENUM ('x'); "
        'CREATE TABLE t (id int PRIMARY KEY, s "select" DEFAULT \'b\', m "Mood");'
    )
    await converge(pg_url, tmp_path, before)
    await execute(pg_url, "INSERT INTO t VALUES (1, 'b', 'x')")
    # Made again (a value lost): the column is found under its quoted name and converted.
    after = before.replace("('a', 'b')", "('b')")
    applied = await converge(pg_url, tmp_path, after)
    assert any('TYPE public."select" USING' in s.sql for s in applied.statements)
    conn = await asyncpg.connect(pg_url)
    try:
        assert await conn.fetchval("SELECT s::text FROM t") == "b"
    finally:
        await conn.close()


MARIA_CASES = {
    "appended": ("enum('a','b','c')", Severity.SAFE),
    "inserted": ("enum('a','x','b')", Severity.WARNING),
    "lost": ("enum('a')", Severity.DESTRUCTIVE),
    "reordered": ("enum('b','a')", Severity.DESTRUCTIVE),
}


@pytest.mark.req("SCH-58")
@pytest.mark.parametrize("case", sorted(MARIA_CASES))
async def test_mariadb_enum_column_changes_converge(
    maria_url: str, tmp_path: Path, case: str
) -> None:
    before = "CREATE TABLE t (id int PRIMARY KEY, k enum('a','b') NOT NULL DEFAULT 'a');"
    await converge(maria_url, tmp_path, before)
    await execute(maria_url, "INSERT INTO t VALUES (1, 'a')")
    after_type, severity = MARIA_CASES[case]
    after = before.replace("enum('a','b')", after_type)
    planned = await plan_for(maria_url, write_desired(tmp_path, after))
    assert [(s.category, s.severity) for s in planned.statements] == [("columns_changed", severity)]
    if severity is Severity.DESTRUCTIVE:
        unchanged = await fingerprint(maria_url)
        refused = await apply_bytes(maria_url, planned.plan_bytes)
        assert (refused.outcome, refused.reason) == ("refused", "PolicyRefused")
        assert await fingerprint(maria_url) == unchanged
    await converge(maria_url, tmp_path, after)
    assert (await plan_for(maria_url, write_desired(tmp_path, after))).statements == []
