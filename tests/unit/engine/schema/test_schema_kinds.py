"""Materialized views, dropped schemas and columns moving to or from `serial` (PostgreSQL)."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import Statement, plan_changes
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB
SCOPE = Scope(schemas=("public", "app"))


def schema(ddl: str, dialect: Dialect = PG) -> Schema:
    result = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], SCOPE)
    if dialect is PG:
        result = dataclasses.replace(result, schemas=tuple(sorted({*result.schemas, "public"})))
    return result


def plan(before: str, after: str) -> list[Statement]:
    return plan_changes(schema(before), schema(after))


TABLE = "CREATE TABLE t (id int PRIMARY KEY, n int);"


def test_a_materialized_view_reads_the_same_from_sql_and_hcl() -> None:
    from_sql = schema(TABLE + "CREATE MATERIALIZED VIEW mv AS SELECT id FROM t WHERE n > 0;")
    hcl = """
table "t" {
  schema = schema.public
  column "id" { type = int }
  column "n" { type = int }
  primary_key { columns = [column.id] }
}
view "mv" {
  schema       = schema.public
  materialized = true
  as           = "SELECT id FROM t WHERE n > 0"
}
"""
    from_hcl = assemble(PG, [parse_hcl(PG, hcl, "s.hcl")], SCOPE)
    assert from_hcl.views == from_sql.views
    assert [v.materialized for v in from_sql.views] == [True]


def test_a_changed_materialized_view_is_made_again_with_what_reads_it() -> None:
    before = TABLE + (
        "CREATE MATERIALIZED VIEW mv AS SELECT id FROM t; CREATE VIEW v AS SELECT id FROM mv;"
    )
    after = before.replace("SELECT id FROM t", "SELECT id, n FROM t")
    assert [(s.category, s.sql) for s in plan(before, after)] == [
        ("views_changed", 'DROP VIEW "public"."v"'),
        ("views_changed", 'DROP MATERIALIZED VIEW "public"."mv"'),
        ("views_changed", 'CREATE MATERIALIZED VIEW "public"."mv" AS SELECT id, n FROM t'),
        ("views_changed", 'CREATE VIEW "public"."v" AS SELECT id FROM mv'),
    ]


def test_a_view_becoming_materialized_is_dropped_as_a_view() -> None:
    before = TABLE + "CREATE VIEW v AS SELECT id FROM t;"
    after = TABLE + "CREATE MATERIALIZED VIEW v AS SELECT id FROM t; ALTER MATERIALIZED VIEW v "
    after += "OWNER TO app;"
    statements = plan(before, after)
    assert [s.sql for s in statements] == [
        'DROP VIEW "public"."v"',
        'CREATE MATERIALIZED VIEW "public"."v" AS SELECT id FROM t',
        'ALTER MATERIALIZED VIEW "public"."v" OWNER TO "app"',
    ]
    assert "becomes a materialized view" in statements[0].reason


@pytest.mark.parametrize(
    ("dialect", "ddl", "message"),
    [
        (MY, "CREATE TABLE t (id int); CREATE MATERIALIZED VIEW v AS SELECT id FROM t;", "plain"),
        (PG, TABLE + "CREATE VIEW v AS SELECT id FROM t WITH NO DATA;", "materialized"),
    ],
)
def test_materialized_views_refused_where_they_cannot_be_planned(
    dialect: Dialect, ddl: str, message: str
) -> None:
    with pytest.raises(DesiredSchemaError, match=message):
        schema(ddl, dialect)


def test_a_schema_the_desired_schema_leaves_out_is_dropped_last_but_never_public() -> None:
    before = "CREATE SCHEMA app; CREATE TABLE app.t (id int); CREATE TABLE u (id int);"
    statements = plan(before, "")
    assert [(s.category, s.severity, s.sql) for s in statements][-1] == (
        "schemas_removed",
        Severity.DESTRUCTIVE,
        'DROP SCHEMA "app"',
    )
    assert not any("public" in s.sql and "SCHEMA" in s.sql for s in statements)
    # Declared with nothing in it, it stays.
    assert plan(before, "CREATE SCHEMA app;")[-1].sql == 'DROP TABLE "public"."u"'


@pytest.mark.parametrize(
    ("before", "after", "sql", "severity"),
    [
        (
            "b int NOT NULL",
            "b serial",
            [
                'CREATE SEQUENCE "public"."t_b_seq" AS integer OWNED BY "public"."t"."b"',
                'ALTER TABLE "public"."t" ALTER COLUMN "b" SET DEFAULT '
                'nextval(\'"public"."t_b_seq"\'::regclass)',
            ],
            Severity.WARNING,
        ),
        (
            "b bigserial",
            "b bigint NOT NULL",
            [
                'ALTER TABLE "public"."t" ALTER COLUMN "b" DROP DEFAULT',
                'DROP SEQUENCE "public"."t_b_seq"',
            ],
            Severity.DESTRUCTIVE,
        ),
        (
            "b serial",
            "b int GENERATED ALWAYS AS IDENTITY",
            [
                'ALTER TABLE "public"."t" ALTER COLUMN "b" DROP DEFAULT',
                'DROP SEQUENCE "public"."t_b_seq"',
                'ALTER TABLE "public"."t" ALTER COLUMN "b" ADD GENERATED ALWAYS AS IDENTITY',
            ],
            Severity.DESTRUCTIVE,
        ),
        (
            "b int GENERATED BY DEFAULT AS IDENTITY",
            "b serial",
            [
                'ALTER TABLE "public"."t" ALTER COLUMN "b" DROP IDENTITY',
                'CREATE SEQUENCE "public"."t_b_seq" AS integer OWNED BY "public"."t"."b"',
                'ALTER TABLE "public"."t" ALTER COLUMN "b" SET DEFAULT '
                'nextval(\'"public"."t_b_seq"\'::regclass)',
            ],
            Severity.WARNING,
        ),
    ],
)
def test_columns_move_to_and_from_serial(
    before: str, after: str, sql: list[str], severity: Severity
) -> None:
    statements = plan(f"CREATE TABLE t (id int, {before});", f"CREATE TABLE t (id int, {after});")
    assert [s.sql for s in statements] == sql
    assert {s.category for s in statements} == {"columns_changed"}
    assert max(s.severity.rank for s in statements) == severity.rank
