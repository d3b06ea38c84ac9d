"""Owners and functions: reading them from DDL and HCL, matching the catalog's spelling, and
planning them as privilege changes."""

from __future__ import annotations

import dataclasses
import json

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import Statement, plan_changes
from ptah_operator.engine.schema.drift import drift_report
from ptah_operator.engine.schema.functions import body_digest, catalog_function
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Argument, Dialect, Schema
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.plan import summarize
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB


def schema(ddl: str, dialect: Dialect = PG) -> Schema:
    result = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope())
    if dialect is PG:
        result = dataclasses.replace(result, schemas=tuple(sorted({*result.schemas, "public"})))
    return result


def plan(before: str, after: str) -> list[Statement]:
    return plan_changes(schema(before), schema(after))


USER_NAME = """
CREATE TYPE mood AS ENUM ('a', 'b');
CREATE TABLE users (id int PRIMARY KEY, name text);
CREATE FUNCTION user_name(uid int, fallback text DEFAULT 'nobody', m mood = 'a', OUT n text)
  LANGUAGE plpgsql STABLE STRICT SECURITY DEFINER SET search_path = public, "$user"
  AS $body$
BEGIN
  n := coalesce((SELECT name FROM users WHERE id = uid), fallback); -- it's here
END;
$body$;
"""


def test_a_function_is_read_with_its_arguments_result_options_and_body_digest() -> None:
    (function,) = schema(USER_NAME).functions
    assert function.arguments == (
        Argument("IN", "uid", "integer"),
        Argument("IN", "fallback", "text", "'nobody'"),
        Argument("IN", "m", "public.mood", "'a'"),
        Argument("OUT", "n", "text"),
    )
    assert function.signature == ("integer", "text", "public.mood")
    assert (function.returns, function.returns_set, function.table_columns) == ("text", False, ())
    assert (function.language, function.volatility, function.strict) == ("plpgsql", "stable", True)
    assert function.security_definer
    assert function.config == ('search_path=public, "$user"',)
    assert (function.cost, function.rows, function.parallel) == (100.0, 0.0, "unsafe")
    # The body is kept verbatim for CREATE FUNCTION, and compared by digest.
    assert function.body is not None
    assert function.body.startswith("\nBEGIN\n  n := coalesce(")
    assert function.body_digest == body_digest(function.body)
    assert function.qualified == "public.user_name(integer, text, public.mood)"


def test_the_catalogs_spelling_of_a_function_reads_as_the_persons() -> None:
    (desired,) = schema(USER_NAME).functions
    # What pg_get_function_arguments / _result and pg_proc say, with search_path=pg_catalog.
    observed = catalog_function(
        schema="public",
        name="user_name",
        arguments="uid integer, fallback text DEFAULT 'nobody'::text, "
        "m public.mood DEFAULT 'a'::public.mood, OUT n text",
        result="text",
        language="plpgsql",
        body=desired.body or "",
        volatility="s",
        strict=True,
        security_definer=True,
        leakproof=False,
        parallel="u",
        cost=100.0,
        rows=0.0,
        config=['search_path=public, "$user"'],
        owner="app",
    )
    assert dataclasses.replace(observed, owner=None) == desired
    observed_schema = dataclasses.replace(schema(USER_NAME), functions=(observed,))
    assert plan_changes(observed_schema, schema(USER_NAME)) == []


@pytest.mark.parametrize(
    ("ddl", "returns", "returns_set", "columns", "rows"),
    [
        (
            "CREATE FUNCTION f() RETURNS SETOF int LANGUAGE sql AS 'SELECT 1'",
            "integer",
            True,
            (),
            1000.0,
        ),
        (
            "CREATE FUNCTION f() RETURNS TABLE (k varchar(3), v double precision) LANGUAGE sql "
            "ROWS 5 AS 'SELECT 1, 2'",
            "record",
            True,
            (("k", "character varying(3)"), ("v", "double precision")),
            5.0,
        ),
        (
            "CREATE FUNCTION f(OUT a int, OUT b text) LANGUAGE sql AS 'SELECT 1, 2'",
            "record",
            False,
            (),
            0.0,
        ),
        ("CREATE FUNCTION f(INOUT a int) LANGUAGE sql AS 'SELECT a'", "integer", False, (), 0.0),
    ],
)
def test_function_results(
    ddl: str, returns: str, returns_set: bool, columns: tuple[tuple[str, str], ...], rows: float
) -> None:
    (function,) = schema(ddl).functions
    assert (function.returns, function.returns_set, function.table_columns) == (
        returns,
        returns_set,
        columns,
    )
    assert function.rows == rows


def test_the_same_function_written_differently_plans_nothing() -> None:
    one = (
        "CREATE FUNCTION f(a int4, b varchar) RETURNS bool LANGUAGE sql IMMUTABLE PARALLEL SAFE "
        "SET search_path TO public AS $$ SELECT a > 0 $$;"
    )
    other = (
        "create or replace function public.f(a integer, b character varying) returns boolean "
        "parallel safe immutable language SQL called on null input security invoker "
        "cost 100 set search_path = 'public' as $x$ SELECT a > 0 $x$;"
    )
    assert schema(one).functions == schema(other).functions
    assert plan(one, other) == []


@pytest.mark.parametrize(
    ("ddl", "message"),
    [
        ("CREATE FUNCTION f() RETURNS int LANGUAGE c AS 'lib', 'sym';", "C functions"),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE internal AS 'int4in';", "internal functions"),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql RETURN 1;", "SQL-standard bodies"),
        (
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; END;",
            "SQL-standard bodies",
        ),
        (
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path FROM CURRENT "
            "AS 'SELECT 1';",
            "FROM CURRENT",
        ),
        ("CREATE FUNCTION f() RETURNS int AS 'SELECT 1';", "names no LANGUAGE"),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql;", "has no body"),
        ("CREATE FUNCTION f() LANGUAGE sql AS 'SELECT 1';", "has no RETURNS"),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql WINDOW AS 'SELECT 1';", "unsupported"),
        ("GRANT EXECUTE ON FUNCTION f() TO app;", "only privileges on tables"),
        ("CREATE TABLE t (id int); ALTER TABLE t OWNER TO CURRENT_USER;", "name the owning role"),
        ("CREATE TABLE t (id int); ALTER TABLE t OWNER TO PUBLIC;", "name the owning role"),
        ("ALTER TABLE nowhere OWNER TO app;", "OWNER TO for unknown table public.nowhere"),
        (
            "CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS 'SELECT a'; "
            "ALTER FUNCTION f(text) OWNER TO app;",
            "unknown function",
        ),
        (
            "CREATE TABLE t (id int); ALTER TABLE t OWNER TO a; ALTER TABLE t OWNER TO b;",
            "table public.t is given two owners",
        ),
        (
            "CREATE TABLE t (id int); CREATE SEQUENCE s OWNED BY t.id; "
            "ALTER SEQUENCE s OWNER TO app;",
            "name the owner on the table",
        ),
    ],
)
def test_function_and_owner_refusals_name_the_file_and_the_object(ddl: str, message: str) -> None:
    with pytest.raises(DesiredSchemaError, match=r"s\.sql") as caught:
        schema(ddl)
    assert message in str(caught.value)
    assert "SELECT" not in str(caught.value)


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE FUNCTION f() RETURNS int AS 'SELECT 1';",
        "CREATE TABLE t (id int); ALTER TABLE t OWNER TO app;",
    ],
)
def test_functions_and_owners_are_postgresql_only(ddl: str) -> None:
    with pytest.raises(DesiredSchemaError, match="PostgreSQL only"):
        schema(ddl, MY)


FUNCTION = "CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $$ SELECT a $$;"
DEFINER = FUNCTION.replace("LANGUAGE sql", "LANGUAGE sql SECURITY DEFINER")


@pytest.mark.parametrize(
    ("before", "after", "changes"),
    [
        ("", FUNCTION, [("functions_added", Severity.SAFE)]),
        ("", DEFINER, [("functions_added", Severity.PRIVILEGE)]),
        (FUNCTION, FUNCTION.replace("a $$", "a + 1 $$"), [("functions_changed", Severity.WARNING)]),
        (DEFINER, DEFINER.replace("a $$", "a + 1 $$"), [("functions_changed", Severity.PRIVILEGE)]),
        (FUNCTION, DEFINER, [("functions_changed", Severity.PRIVILEGE)]),
        (DEFINER, FUNCTION, [("functions_changed", Severity.PRIVILEGE)]),
        (
            FUNCTION,
            FUNCTION.replace("(a int)", "(b int)").replace("a $$", "b $$"),
            [("functions_changed", Severity.WARNING)] * 2,
        ),
        (FUNCTION, "", [("functions_removed", Severity.DESTRUCTIVE)]),
        (
            FUNCTION,
            FUNCTION + "ALTER FUNCTION f(integer) OWNER TO app;",
            [("owners_changed", Severity.PRIVILEGE)],
        ),
    ],
)
def test_function_changes_and_their_severity(
    before: str, after: str, changes: list[tuple[str, Severity]]
) -> None:
    statements = plan(before, after)
    assert [(s.category, s.severity) for s in statements] == changes


def test_a_function_whose_arguments_change_is_dropped_and_made_again() -> None:
    after = FUNCTION.replace("(a int)", "(b int)").replace("a $$", "b $$")
    assert [s.sql for s in plan(FUNCTION, after)] == [
        'DROP FUNCTION "public"."f"(integer)',
        'CREATE FUNCTION "public"."f"("b" integer) RETURNS integer LANGUAGE sql VOLATILE '
        "CALLED ON NULL INPUT SECURITY INVOKER NOT LEAKPROOF PARALLEL UNSAFE COST 100 "
        "AS $ptah$ SELECT b $ptah$",
    ]


def test_a_body_holding_the_quote_tag_gets_another() -> None:
    ddl = "CREATE FUNCTION f() RETURNS text LANGUAGE sql AS $q$ SELECT '$ptah$' $q$;"
    (statement,) = plan("", ddl)
    assert statement.sql.endswith("AS $ptah1$ SELECT '$ptah$' $ptah1$")


def test_functions_over_a_row_type_come_after_the_tables_others_before() -> None:
    ddl = (
        "CREATE TABLE users (id int PRIMARY KEY, code text DEFAULT next_code()); "
        "CREATE FUNCTION next_code() RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$; "
        "CREATE FUNCTION all_users() RETURNS SETOF users LANGUAGE sql AS $$ SELECT 1 $$;"
    )
    assert [s.sql.split("(")[0] for s in plan("", ddl)] == [
        'CREATE FUNCTION "public"."next_code"',
        'CREATE TABLE "public"."users" ',
        'CREATE FUNCTION "public"."all_users"',
    ]


OWNED_DDL = """
CREATE TYPE mood AS ENUM ('a');
CREATE TABLE t (id int PRIMARY KEY);
CREATE SEQUENCE s;
CREATE VIEW v AS SELECT id FROM t;
ALTER TYPE mood OWNER TO app;
ALTER TABLE t OWNER TO "App";
ALTER SEQUENCE s OWNER TO app;
ALTER VIEW v OWNER TO app;
"""

OWNED_HCL = """
enum "mood" {
  schema = schema.public
  values = ["a"]
  owner  = "app"
}
table "t" {
  schema = schema.public
  owner  = "\\"App\\""
  column "id" { type = int }
  primary_key { columns = [column.id] }
}
sequence "s" {
  schema = schema.public
  owner  = "app"
}
view "v" {
  schema = schema.public
  owner  = "app"
  as     = "SELECT id FROM t"
}
"""


def test_ddl_and_hcl_name_the_same_owners() -> None:
    from_ddl = schema(OWNED_DDL)
    from_hcl = assemble(PG, [parse_hcl(PG, OWNED_HCL, "s.hcl")], Scope())
    assert from_hcl == dataclasses.replace(from_ddl, schemas=from_hcl.schemas)
    assert [e.owner for e in from_ddl.enums] == ["app"]
    assert [t.owner for t in from_ddl.tables] == ["App"]
    assert [s.owner for s in from_ddl.sequences] == ["app"]
    assert [v.owner for v in from_ddl.views] == ["app"]


def test_owners_are_privilege_changes_set_once_objects_exist() -> None:
    statements = plan("", OWNED_DDL)
    owners = [(s.category, s.severity, s.sql) for s in statements if "OWNER" in s.sql]
    assert owners == [
        ("owners_changed", Severity.PRIVILEGE, 'ALTER TYPE "public"."mood" OWNER TO "app"'),
        ("owners_changed", Severity.PRIVILEGE, 'ALTER TABLE "public"."t" OWNER TO "App"'),
        ("owners_changed", Severity.PRIVILEGE, 'ALTER SEQUENCE "public"."s" OWNER TO "app"'),
        ("owners_changed", Severity.PRIVILEGE, 'ALTER VIEW "public"."v" OWNER TO "app"'),
    ]
    # The view's owner is set after the view is made.
    sql = [s.sql for s in statements]
    assert sql.index('ALTER VIEW "public"."v" OWNER TO "app"') > sql.index(
        'CREATE VIEW "public"."v" AS SELECT id FROM t'
    )
    assert summarize(statements)["highestSeverity"] == "privilege"


def test_an_owner_is_compared_only_where_the_desired_schema_names_it() -> None:
    observed = schema(OWNED_DDL)
    unnamed = schema("\n".join(line for line in OWNED_DDL.splitlines() if "OWNER" not in line))
    assert plan_changes(observed, unnamed) == []
    moved = schema(OWNED_DDL.replace('"App"', "other"))
    assert [s.sql for s in plan_changes(observed, moved)] == [
        'ALTER TABLE "public"."t" OWNER TO "other"'
    ]


def test_a_view_made_again_gets_its_named_owner_again() -> None:
    changed = OWNED_DDL.replace("id int PRIMARY KEY", "id bigint PRIMARY KEY")
    sql = [s.sql for s in plan(OWNED_DDL, changed)]
    assert sql[-2:] == [
        'CREATE VIEW "public"."v" AS SELECT id FROM t',
        'ALTER VIEW "public"."v" OWNER TO "app"',
    ]


def test_grants_to_the_owner_are_implied_not_planned() -> None:
    before = "CREATE TABLE t (id int); ALTER TABLE t OWNER TO app; GRANT SELECT ON t TO other;"
    after = before + "GRANT SELECT, UPDATE ON t TO app;"
    assert plan(before, after) == []


def test_a_sequence_owned_by_a_column_first_takes_the_tables_owner() -> None:
    before = "CREATE TABLE t (id int, n int); ALTER TABLE t OWNER TO app;"
    after = before + "CREATE SEQUENCE s OWNED BY t.n;"
    sql = [s.sql for s in plan(before, after)]
    assert sql[1:] == [
        'ALTER SEQUENCE "public"."s" OWNER TO "app"',
        'ALTER SEQUENCE "public"."s" OWNED BY "public"."t"."n"',
    ]


@pytest.mark.req("SCH-54", "PRIV-03")
def test_the_drift_report_of_functions_and_owners_carries_no_sql() -> None:
    statements = plan("", USER_NAME + OWNED_DDL.replace("mood", "feel"))
    report = drift_report(PG, statements)
    assert report["categories"]["owners_changed"] == 4
    assert report["categories"]["functions_added"] == 1
    assert report["highestSeverity"] == "privilege"
    text = json.dumps(report)
    for secret in ("coalesce", "user_name", "BEGIN", "app", "mood"):
        assert secret not in text
    # Reasons name objects, never a body.
    assert all("coalesce" not in s.reason for s in statements)


def test_hcl_owned_by_and_a_quoted_owner_are_told_apart() -> None:
    table = """
table "t" {
  schema = schema.public
  column "n" { type = int }
}
"""
    linked = table + 'sequence "s" {\n  owned_by = table.t.column.n\n}\n'
    legacy = table + 'sequence "s" {\n  owner = table.t.column.n\n}\n'
    named = table + 'sequence "s" {\n  owner = "app"\n}\n'

    def sequences(text: str) -> list[tuple[str | None, str | None, str | None]]:
        read = assemble(PG, [parse_hcl(PG, text, "s.hcl")], Scope())
        return [(s.owner_table, s.owner_column, s.owner) for s in read.sequences]

    assert sequences(linked) == sequences(legacy) == [("t", "n", None)]
    assert sequences(named) == [(None, None, "app")]
    with pytest.raises(DesiredSchemaError, match="name the owner on the table"):
        sequences(table + 'sequence "s" {\n  owned_by = table.t.column.n\n  owner = "app"\n}\n')


def test_owners_in_hcl_are_postgresql_only() -> None:
    text = 'table "t" {\n  owner = "app"\n  column "n" { type = int }\n}\n'
    with pytest.raises(DesiredSchemaError, match="PostgreSQL only"):
        parse_hcl(MY, text, "s.hcl")
