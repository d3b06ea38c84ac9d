"""Sequences, views and grants: reading them from DDL and HCL, and planning them."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import Statement, plan_changes
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Dialect, Grant, Schema, Sequence, View
from ptah_operator.engine.schema.normalize import is_serial_sequence
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.plan import summarize
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB


def schema(dialect: Dialect, ddl: str) -> Schema:
    result = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope(schemas=("public", "app")))
    if dialect is PG:
        result = dataclasses.replace(result, schemas=tuple(sorted({*result.schemas, "public"})))
    return result


def plan(dialect: Dialect, before: str, after: str) -> list[Statement]:
    return plan_changes(schema(dialect, before), schema(dialect, after))


OBJECTS_DDL = """
CREATE TABLE orders (id int PRIMARY KEY, no bigint DEFAULT nextval('order_no'), note text);
CREATE SEQUENCE order_no AS integer START WITH 1000 INCREMENT BY 5 CYCLE;
ALTER SEQUENCE order_no OWNED BY orders.no;
CREATE VIEW open_orders (order_id, number) AS SELECT id, no FROM orders WHERE note IS NULL;
GRANT SELECT, INSERT ON orders TO reader;
GRANT UPDATE ON TABLE orders TO writer WITH GRANT OPTION;
GRANT SELECT ON orders TO PUBLIC;
"""

OBJECTS_HCL = """
sequence "order_no" {
  schema    = schema.public
  type      = integer
  start     = 1000
  increment = 5
  cycle     = true
  owner     = table.orders.column.no
}
view "open_orders" {
  schema = schema.public
  as     = <<-SQL
    SELECT id AS order_id, no AS number FROM orders WHERE note IS NULL
  SQL
}
table "orders" {
  schema = schema.public
  column "id" { type = int }
  column "no" {
    type    = bigint
    default = sql("nextval('order_no')")
  }
  column "note" { type = text }
  primary_key { columns = [column.id] }
  grant {
    to         = "reader"
    privileges = [SELECT, INSERT]
  }
  grant {
    to         = "writer"
    privileges = [UPDATE]
    grantable  = true
  }
  grant {
    to         = "PUBLIC"
    privileges = [SELECT]
  }
}
"""


def test_ddl_and_hcl_describe_the_same_sequences_views_and_grants() -> None:
    from_ddl = assemble(PG, [parse_ddl(PG, OBJECTS_DDL, "s.sql")], Scope())
    from_hcl = assemble(PG, [parse_hcl(PG, OBJECTS_HCL, "s.hcl")], Scope())
    assert from_ddl == from_hcl
    assert from_ddl.fingerprint() == from_hcl.fingerprint()
    assert from_ddl.sequences == (
        Sequence(
            schema="public",
            name="order_no",
            type="integer",
            start=1000,
            increment=5,
            min_value=1,
            max_value=2147483647,
            cycle=True,
            owner_table="orders",
            owner_column="no",
        ),
    )
    (view,) = from_ddl.views
    assert view.definition == "SELECT id AS order_id, no AS number FROM orders WHERE note IS NULL"
    assert view.depends_on == ("public.orders",)
    assert from_ddl.tables[0].grants == (
        Grant("PUBLIC", "SELECT"),
        Grant("reader", "INSERT"),
        Grant("reader", "SELECT"),
        Grant("writer", "UPDATE", grantable=True),
    )


@pytest.mark.parametrize(
    ("ddl", "expected"),
    [
        # sqlglot's own tree reads a leading NO CYCLE as CYCLE; the engine reads the tokens.
        ("CREATE SEQUENCE s NO CYCLE", (1, 1, 9223372036854775807, 1, False)),
        ("CREATE SEQUENCE s NO MINVALUE CYCLE", (1, 1, 9223372036854775807, 1, True)),
        ("CREATE SEQUENCE s INCREMENT -1", (-1, -9223372036854775808, -1, -1, False)),
        (
            "CREATE SEQUENCE s AS smallint INCREMENT BY -2 MINVALUE -100 START 0",
            (-2, -100, -1, 0, False),
        ),
        ("CREATE SEQUENCE s AS int4 MAXVALUE 10", (1, 1, 10, 1, False)),
    ],
)
def test_sequence_options_and_their_defaults(
    ddl: str, expected: tuple[int, int, int, int, bool]
) -> None:
    (sequence,) = parse_ddl(PG, ddl, "s.sql").sequences
    assert (
        sequence.increment,
        sequence.min_value,
        sequence.max_value,
        sequence.start,
        sequence.cycle,
    ) == expected


@pytest.mark.parametrize(
    ("dialect", "ddl", "message"),
    [
        (PG, "CREATE SEQUENCE s OWNED BY t.c", "unknown column t.c"),
        (PG, "CREATE SEQUENCE s AS text", "smallint, integer or bigint"),
        (PG, "CREATE SEQUENCE s RESTART 5", "unsupported option"),
        (MY, "CREATE SEQUENCE s", "PostgreSQL only"),
        (PG, "CREATE TABLE t (id int); GRANT SELECT (id) ON t TO r", "column privileges"),
        (PG, "CREATE TABLE t (id int); GRANT SELECT ON t TO PUBLIC WITH GRANT OPTION", "PUBLIC"),
        (PG, "CREATE TABLE t (id int); REVOKE SELECT ON t FROM r", "not revokes"),
        (PG, "CREATE TABLE t (id int); GRANT USAGE ON t TO r", "not a table privilege"),
        (PG, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO r", "each table"),
        (PG, "GRANT SELECT ON nowhere TO r", "unknown table"),
        (PG, "CREATE VIEW v (a) AS SELECT * FROM t", "column list"),
        (PG, "CREATE OR REPLACE MATERIALIZED VIEW v AS SELECT 1", "cannot be replaced"),
        (PG, "CREATE TEMPORARY VIEW v AS SELECT 1", "plain CREATE"),
        (PG, "CREATE TABLE v (id int); CREATE VIEW v AS SELECT 1", "table or sequence"),
    ],
)
def test_refusals_name_the_file_and_the_object(dialect: Dialect, ddl: str, message: str) -> None:
    with pytest.raises(DesiredSchemaError, match=message) as caught:
        assemble(dialect, [parse_ddl(dialect, ddl, "bad.sql")], Scope())
    assert "bad.sql" in str(caught.value)


def test_mysql_grantees_are_users_with_hosts_or_bare_roles() -> None:
    parts = parse_ddl(
        MY,
        "CREATE TABLE t (id int); "
        "GRANT SELECT ON t TO 'app'@'%', app2@localhost, reader; "
        "GRANT INSERT ON t TO 'app'@'%' WITH GRANT OPTION",
        "g.sql",
    )
    table = assemble(MY, [parts], Scope()).tables[0]
    # MySQL keeps the grant option per table and grantee: both privileges carry it.
    assert table.grants == (
        Grant("'app'@'%'", "INSERT", grantable=True),
        Grant("'app'@'%'", "SELECT", grantable=True),
        Grant("'app2'@'localhost'", "SELECT"),
        Grant("reader", "SELECT"),
    )


def test_all_privileges_are_spelled_out_per_dialect() -> None:
    pg = schema(PG, "CREATE TABLE t (id int); GRANT ALL PRIVILEGES ON t TO r;").tables[0]
    assert [g.privilege for g in pg.grants] == [
        "DELETE",
        "INSERT",
        "REFERENCES",
        "SELECT",
        "TRIGGER",
        "TRUNCATE",
        "UPDATE",
    ]
    maria = schema(MY, "CREATE TABLE t (id int); GRANT ALL ON t TO r;").tables[0]
    assert "DELETE HISTORY" in {g.privilege for g in maria.grants}
    mysql = assemble(
        Dialect.MYSQL,
        [parse_ddl(Dialect.MYSQL, "CREATE TABLE t (id int); GRANT ALL ON t TO r;", "m.sql")],
        Scope(),
    ).tables[0]
    assert "DELETE HISTORY" not in {g.privilege for g in mysql.grants}


GRANTS_BEFORE = """
CREATE TABLE t (id int PRIMARY KEY);
GRANT SELECT ON t TO reader;
GRANT SELECT, INSERT ON t TO writer WITH GRANT OPTION;
"""


def test_grants_are_privilege_changes_and_only_named_grantees_are_compared() -> None:
    observed = schema(PG, GRANTS_BEFORE)
    # A role the desired schema never names keeps what it has.
    table = observed.tables[0]
    observed = dataclasses.replace(
        observed,
        tables=(dataclasses.replace(table, grants=(*table.grants, Grant("backup", "SELECT"))),),
    )
    desired = schema(
        PG,
        "CREATE TABLE t (id int PRIMARY KEY); GRANT SELECT, UPDATE ON t TO reader; "
        "GRANT INSERT ON t TO writer;",
    )
    statements = plan_changes(observed, desired)
    assert [(s.severity, s.category, s.sql) for s in statements] == [
        (Severity.PRIVILEGE, "grants_added", 'GRANT UPDATE ON "public"."t" TO "reader"'),
        (Severity.PRIVILEGE, "grants_removed", 'REVOKE SELECT ON "public"."t" FROM "writer"'),
        (
            Severity.PRIVILEGE,
            "grants_removed",
            'REVOKE GRANT OPTION FOR INSERT ON "public"."t" FROM "writer"',
        ),
    ]
    assert summarize(statements)["highestSeverity"] == "privilege"
    assert all(s.tables == ("public.t",) for s in statements)


def test_mysql_grant_option_is_per_table() -> None:
    statements = plan(
        MY,
        "CREATE TABLE t (id int); GRANT SELECT ON t TO 'a'@'%';",
        "CREATE TABLE t (id int); GRANT SELECT, INSERT ON t TO 'a'@'%' WITH GRANT OPTION;",
    )
    assert [s.sql for s in statements] == [
        "GRANT INSERT, SELECT ON `t` TO 'a'@'%' WITH GRANT OPTION"
    ]
    statements = plan(
        MY,
        "CREATE TABLE t (id int); GRANT SELECT, INSERT ON t TO 'a'@'%' WITH GRANT OPTION;",
        "CREATE TABLE t (id int); GRANT SELECT ON t TO reader, 'a'@'%';",
    )
    assert [s.sql for s in statements] == [
        "REVOKE INSERT ON `t` FROM 'a'@'%'",
        "REVOKE GRANT OPTION ON `t` FROM 'a'@'%'",
        "GRANT SELECT ON `t` TO 'reader'",
    ]


def test_sequences_are_made_before_tables_owned_after_them_and_dropped_last() -> None:
    statements = plan(
        PG,
        "CREATE TABLE old (id int); CREATE SEQUENCE gone OWNED BY old.id;",
        "CREATE SEQUENCE app.s START 10; "
        "CREATE TABLE app.t (id int DEFAULT nextval('app.s')); ALTER SEQUENCE app.s OWNED BY app.t.id;",
    )
    assert [(s.category, s.sql.split(" AS ")[0]) for s in statements] == [
        ("schemas_added", 'CREATE SCHEMA "app"'),
        ("sequences_added", 'CREATE SEQUENCE "app"."s"'),
        ("sequences_changed", 'ALTER SEQUENCE "public"."gone" OWNED BY NONE'),
        ("tables_removed", 'DROP TABLE "public"."old"'),
        (
            "tables_added",
            # The default as the desired schema writes it.
            'CREATE TABLE "app"."t" (\n  "id" integer DEFAULT nextval(\'app.s\') NULL\n)',
        ),
        ("sequences_added", 'ALTER SEQUENCE "app"."s" OWNED BY "app"."t"."id"'),
        ("sequences_removed", 'DROP SEQUENCE "public"."gone"'),
    ]
    assert statements[-1].severity is Severity.DESTRUCTIVE


def test_changing_a_sequence_alters_only_what_differs() -> None:
    statements = plan(
        PG,
        "CREATE SEQUENCE s START 5",
        "CREATE SEQUENCE s START 5 MAXVALUE 100 CYCLE",
    )
    assert [(s.severity, s.sql) for s in statements] == [
        (Severity.WARNING, 'ALTER SEQUENCE "public"."s" MAXVALUE 100 CYCLE')
    ]


VIEWS = """
CREATE TABLE t (id int PRIMARY KEY, n int);
CREATE VIEW a AS SELECT id FROM t;
CREATE VIEW b AS SELECT id FROM a;
CREATE VIEW c AS SELECT b.id FROM b JOIN a ON a.id = b.id;
"""


def test_views_are_made_after_what_they_read_and_dropped_before() -> None:
    made = plan(PG, "", VIEWS)
    assert [s.sql.split(" AS ")[0] for s in made if s.category == "views_added"] == [
        'CREATE VIEW "public"."a"',
        'CREATE VIEW "public"."b"',
        'CREATE VIEW "public"."c"',
    ]
    observed = schema(PG, VIEWS)
    # Retyping a column PostgreSQL would refuse under a view: every view over it is dropped
    # first (the ones reading others before those) and made again after.
    desired = schema(PG, VIEWS.replace("n int", "n bigint"))
    statements = plan_changes(observed, desired)
    assert [s.sql.split(" AS ")[0] for s in statements] == [
        'DROP VIEW "public"."c"',
        'DROP VIEW "public"."b"',
        'DROP VIEW "public"."a"',
        'ALTER TABLE "public"."t" ALTER COLUMN "n" TYPE bigint USING "n"::bigint',
        'CREATE VIEW "public"."a"',
        'CREATE VIEW "public"."b"',
        'CREATE VIEW "public"."c"',
    ]
    assert {s.category for s in statements if "VIEW" in s.sql} == {"views_changed"}
    # MySQL does not hold a view to its tables: nothing to drop or make again.
    assert [s.category for s in plan(MY, VIEWS, VIEWS.replace("n int", "n bigint"))] == [
        "columns_changed"
    ]


def test_a_changed_view_is_replaced_where_its_columns_allow() -> None:
    observed = schema(PG, VIEWS)
    columns = (("id", "integer"),)
    observed = dataclasses.replace(
        observed, views=tuple(dataclasses.replace(v, columns=columns) for v in observed.views)
    )
    desired = schema(PG, VIEWS.replace("SELECT id FROM t", "SELECT id, n FROM t"))
    wider = tuple(
        dataclasses.replace(v, columns=(*columns, ("n", "integer"))) if v.name == "a" else v
        for v in desired.views
    )
    statements = plan_changes(observed, dataclasses.replace(desired, views=wider))
    assert [(s.severity, s.sql) for s in statements] == [
        (Severity.WARNING, 'CREATE OR REPLACE VIEW "public"."a" AS SELECT id, n FROM t')
    ]
    # Columns unknown (the server could not read the new query): dropped and made again.
    remade = plan_changes(observed, desired)
    assert [s.sql.split(" AS ")[0] for s in remade] == [
        'DROP VIEW "public"."c"',
        'DROP VIEW "public"."b"',
        'DROP VIEW "public"."a"',
        'CREATE VIEW "public"."a"',
        'CREATE VIEW "public"."b"',
        'CREATE VIEW "public"."c"',
    ]


def test_a_view_selecting_star_is_made_again_when_its_table_gains_a_column() -> None:
    before = "CREATE TABLE t (id int); CREATE VIEW v AS SELECT * FROM t;"
    after = "CREATE TABLE t (id int, n int); CREATE VIEW v AS SELECT * FROM t;"
    assert [s.category for s in plan(PG, before, after)] == [
        "views_changed",
        "columns_added",
        "views_changed",
    ]
    assert [s.sql.split(" AS ")[0] for s in plan(MY, before, after)] == [
        "ALTER TABLE `t` ADD COLUMN `n` int NULL",
        "CREATE OR REPLACE VIEW `v`",
    ]


def test_a_view_the_server_reads_alike_keeps_the_persons_text_for_create() -> None:
    view = View(
        schema="public", name="v", definition="SELECT t.id FROM t", source="SELECT id FROM t"
    )
    assert view.text == "SELECT id FROM t"
    assert view == dataclasses.replace(view, source=None, columns=(("id", "integer"),))


@pytest.mark.parametrize(
    ("table", "column", "sequence", "serial"),
    [
        ("orders", "id", "orders_id_seq", True),
        ("orders", "id", "orders_id_seq1", True),
        ("orders", "id", "order_no", False),
        ("orders", "id", "orders_id_seq_x", False),
        ("a" * 40, "b" * 40, "a" * 29 + "_" + "b" * 29 + "_seq", True),
        ("a" * 60, "id", "a" * 56 + "_id_seq", True),
    ],
)
def test_a_serial_sequence_is_told_by_its_name(
    table: str, column: str, sequence: str, serial: bool
) -> None:
    assert is_serial_sequence(table, column, sequence) is serial
