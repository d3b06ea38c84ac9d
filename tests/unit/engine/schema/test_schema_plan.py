"""Diff ordering, severities, rendering, policy, plan bytes and the drift report."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from ptah_operator.engine.schema.apply import transactions
from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import Statement, plan_changes
from ptah_operator.engine.schema.drift import drift_report
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.plan import (
    PlanFileError,
    Policy,
    build_plan,
    policy_refusals,
    read_plan,
)
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity

PG = Dialect.POSTGRESQL
MY = Dialect.MARIADB


def schema(dialect: Dialect, ddl: str) -> Schema:
    """The schema `ddl` describes, in a database that has its `public` schema."""
    result = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope())
    if dialect is PG:
        result = dataclasses.replace(result, schemas=tuple(sorted({*result.schemas, "public"})))
    return result


def plan(dialect: Dialect, before: str, after: str) -> list[Statement]:
    return plan_changes(schema(dialect, before), schema(dialect, after))


BASE = """
CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20));
CREATE TABLE users (id int PRIMARY KEY, org_id int REFERENCES orgs (id), email text);
"""


def test_same_schema_plans_nothing() -> None:
    assert plan(PG, BASE, BASE) == []


def test_types_come_before_tables_and_foreign_keys_after() -> None:
    statements = plan(
        PG,
        "",
        "CREATE TYPE mood AS ENUM ('ok'); CREATE TABLE b (id int PRIMARY KEY, a_id int "
        "REFERENCES a (id), m mood); CREATE TABLE a (id int PRIMARY KEY);",
    )
    sql = [s.sql for s in statements]
    assert sql[0].startswith('CREATE TYPE "public"."mood"')
    assert sql[1].startswith('CREATE TABLE "public"."a"')
    assert sql[2].startswith('CREATE TABLE "public"."b"')
    assert sql[3].startswith('ALTER TABLE "public"."b" ADD FOREIGN KEY')


def test_foreign_keys_are_dropped_before_the_tables_they_reference() -> None:
    observed = schema(PG, BASE)
    # Name the key as the database would have.
    users = observed.table("public", "users")
    assert users is not None
    fk = dataclasses.replace(users.foreign_keys[0], name="users_org_id_fkey")
    observed = dataclasses.replace(
        observed,
        tables=tuple(
            dataclasses.replace(t, foreign_keys=(fk,)) if t.name == "users" else t
            for t in observed.tables
        ),
    )
    desired = schema(PG, "CREATE TABLE users (id int PRIMARY KEY, org_id int, email text);")
    statements = plan_changes(observed, desired)
    assert [s.category for s in statements] == ["foreign_keys_removed", "tables_removed"]
    assert 'DROP CONSTRAINT "users_org_id_fkey"' in statements[0].sql
    assert statements[1].sql == 'DROP TABLE "public"."orgs"'
    assert all(s.severity is Severity.DESTRUCTIVE for s in statements)


@pytest.mark.parametrize(
    ("after", "severity", "category"),
    [
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20), note text);",
            "safe",
            "columns_added",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20), n int NOT NULL);",
            "destructive",
            "columns_added",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20), n int NOT NULL DEFAULT 0);",
            "safe",
            "columns_added",
        ),
        ("CREATE TABLE orgs (id int PRIMARY KEY);", "destructive", "columns_removed"),
        ("CREATE TABLE orgs (id int PRIMARY KEY, name varchar(40));", "warning", "columns_changed"),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(10));",
            "destructive",
            "columns_changed",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20) NOT NULL);",
            "destructive",
            "columns_changed",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20) DEFAULT 'x');",
            "safe",
            "columns_changed",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20) UNIQUE);",
            "warning",
            "constraints_added",
        ),
        (
            "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20)); CREATE INDEX ON orgs (name);",
            "safe",
            "indexes_added",
        ),
    ],
)
@pytest.mark.parametrize("dialect", [PG, MY])
def test_severity_of_each_kind_of_change(
    dialect: Dialect, after: str, severity: str, category: str
) -> None:
    statements = plan(dialect, "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20));", after)
    assert statements, "a change was expected"
    top = max(statements, key=lambda s: s.severity.rank)
    assert top.severity.value == severity
    if dialect is MY and category == "constraints_added":
        category = "indexes_added"  # a MySQL unique constraint is a unique index
    assert {s.category for s in statements} == {category}


def test_an_enum_that_loses_or_reorders_values_is_made_again_destructively() -> None:
    before = (
        "CREATE TYPE mood AS ENUM ('a', 'b', 'c'); "
        "CREATE TABLE t (id int, m mood DEFAULT 'a', ms mood[], x mood, "
        "CONSTRAINT t_c CHECK (m <> 'b')); CREATE INDEX t_p ON t (id) WHERE m = 'a'; "
        "CREATE INDEX t_m ON t (m);"
    )
    after = before.replace("('a', 'b', 'c')", "('c', 'a')").replace("x mood", "x text")
    statements = plan(PG, before, after)
    assert [s.sql for s in statements] == [
        'ALTER TYPE "public"."mood" RENAME TO "mood__ptah_old"',
        "CREATE TYPE \"public\".\"mood\" AS ENUM ('c', 'a')",
        'ALTER TABLE "public"."t" DROP CONSTRAINT "t_c"',
        'DROP INDEX "public"."t_p"',
        'ALTER TABLE "public"."t" ALTER COLUMN "m" DROP DEFAULT',
        'ALTER TABLE "public"."t" ALTER COLUMN "m" TYPE public.mood USING "m"::text::public.mood',
        'ALTER TABLE "public"."t" ALTER COLUMN "m" SET DEFAULT \'a\'',
        'ALTER TABLE "public"."t" ALTER COLUMN "ms" TYPE public.mood[] '
        'USING "ms"::text[]::public.mood[]',
        'ALTER TABLE "public"."t" ADD CONSTRAINT "t_c" CHECK (m <> \'b\')',
        'CREATE INDEX "t_p" ON "public"."t" ("id") WHERE m = \'a\'',
        'ALTER TABLE "public"."t" ALTER COLUMN "x" TYPE text USING "x"::text',
        'DROP TYPE "public"."mood__ptah_old"',
    ]
    remade = [s for s in statements if s.category == "enums_changed"]
    assert all(s.severity is Severity.DESTRUCTIVE for s in remade)
    assert all("public.mood" in s.reason for s in remade)
    # The ALTER TABLE statements name their table, for the protected-table policy.
    refusals = policy_refusals(statements, Policy(protected_tables=("t",)))
    assert refusals[0] == {"reason": "ProtectedTable", "tables": ["public.t"]}


def test_adding_an_enum_value_keeps_its_position_and_commits_before_its_use() -> None:
    statements = plan(
        PG,
        "CREATE TYPE mood AS ENUM ('a', 'c'); CREATE TABLE t (id int);",
        "CREATE TYPE mood AS ENUM ('a', 'b', 'c', 'd'); "
        "CREATE TABLE t (id int, m mood DEFAULT 'b');",
    )
    assert [s.sql for s in statements] == [
        "ALTER TYPE \"public\".\"mood\" ADD VALUE 'b' BEFORE 'c'",
        'ALTER TYPE "public"."mood" ADD VALUE \'d\'',
        'ALTER TABLE "public"."t" ADD COLUMN "m" public.mood DEFAULT \'b\' NULL',
    ]
    assert [s.transactional for s in statements] == [False, False, True]
    assert {s.severity for s in statements[:2]} == {Severity.SAFE}
    # Apply commits the values in a transaction of their own, then runs the rest.
    assert transactions(statements) == [range(2), range(2, 3)]


@pytest.mark.parametrize(
    ("flags", "cuts"),
    [
        ([], []),
        ([True, True], [range(2)]),
        ([True, False, False, True], [range(3), range(3, 4)]),
        ([False], [range(1)]),
        ([False, True, False], [range(1), range(1, 3)]),
    ],
)
def test_postgresql_transactions_end_after_statements_that_must_commit(
    flags: list[bool], cuts: list[range]
) -> None:
    statements = [Statement("SELECT 1", Severity.SAFE, "tables_added", "r", (), f) for f in flags]
    assert transactions(statements) == cuts


@pytest.mark.parametrize(
    ("after", "severity"),
    [
        ("enum('a','b','c')", Severity.SAFE),
        ("enum('a','c','b')", Severity.WARNING),
        ("enum('a')", Severity.DESTRUCTIVE),
        ("enum('b','a')", Severity.DESTRUCTIVE),
        ("enum('b','a','c')", Severity.DESTRUCTIVE),
    ],
)
def test_mysql_enum_column_changes_by_what_happens_to_stored_values(
    after: str, severity: Severity
) -> None:
    statements = plan(MY, "CREATE TABLE t (k enum('a','b'));", f"CREATE TABLE t (k {after});")
    assert [(s.category, s.severity) for s in statements] == [("columns_changed", severity)]
    assert statements[0].sql == f"ALTER TABLE `t` MODIFY COLUMN `k` {after} NULL"


def test_mysql_renders_whole_column_definitions() -> None:
    statements = plan(
        MY,
        "CREATE TABLE t (id int PRIMARY KEY, n int);",
        "CREATE TABLE t (id int PRIMARY KEY, n bigint NOT NULL DEFAULT 0 COMMENT 'count');",
    )
    assert [s.sql for s in statements] == [
        "ALTER TABLE `t` MODIFY COLUMN `n` bigint DEFAULT 0 NOT NULL COMMENT 'count'"
    ]
    assert statements[0].severity is Severity.DESTRUCTIVE


def test_index_key_options_are_rendered_and_a_changed_order_rebuilds_the_index() -> None:
    before = "CREATE TABLE t (a int, b text); CREATE INDEX t_k ON t (a, b);"
    after = (
        "CREATE TABLE t (a int, b text); "
        "CREATE INDEX t_k ON t (a DESC NULLS LAST, b text_pattern_ops NULLS FIRST);"
    )
    assert [s.sql for s in plan(PG, before, after)] == [
        'DROP INDEX "public"."t_k"',
        'CREATE INDEX "t_k" ON "public"."t" ("a" DESC NULLS LAST, "b" text_pattern_ops NULLS FIRST)',
    ]
    assert plan(PG, after, after) == []
    my_before = "CREATE TABLE t (a int, b text, KEY t_k (a, b(8)));"
    my_after = "CREATE TABLE t (a int, b text, KEY t_k (a DESC, b(8) DESC));"
    assert [s.sql for s in plan(MY, my_before, my_after)] == [
        "ALTER TABLE `t` DROP INDEX `t_k`",
        "ALTER TABLE `t` ADD INDEX `t_k` (`a` DESC, `b`(8) DESC)",
    ]


def test_policy_names_protected_tables_and_counts_destructive_statements() -> None:
    statements = plan(PG, BASE, "CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20));")
    refusals = policy_refusals(statements, Policy(protected_tables=("users",)))
    assert refusals == [
        {"reason": "ProtectedTable", "tables": ["public.users"]},
        {"reason": "DestructiveChangeNotAllowed", "statements": 2},
    ]
    assert policy_refusals(statements, Policy(allow_destructive=True)) == []


PLAN_SCRIPT = """
import sys
from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import plan_changes
from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.plan import build_plan
from ptah_operator.engine.schema.scope import Scope
d = Dialect(sys.argv[1])
before = assemble(d, [parse_ddl(d, sys.argv[2], "a.sql")], Scope())
after = assemble(d, [parse_ddl(d, sys.argv[3], "b.sql")], Scope())
sys.stdout.buffer.write(build_plan(before, after, Scope(), plan_changes(before, after)))
"""

AFTER = """
CREATE TABLE orgs (id bigint PRIMARY KEY, name varchar(40) NOT NULL, note text);
CREATE TABLE teams (id int PRIMARY KEY, org_id bigint REFERENCES orgs (id));
CREATE INDEX teams_org ON teams (org_id);
"""


OBJECTS_BEFORE = """
CREATE TABLE orgs (id int PRIMARY KEY, name varchar(20));
CREATE VIEW a AS SELECT id FROM orgs;
CREATE VIEW b AS SELECT id FROM a;
GRANT SELECT ON orgs TO reader;
"""

OBJECTS_AFTER = """
CREATE TABLE orgs (id bigint PRIMARY KEY, name varchar(40));
CREATE VIEW a AS SELECT id, name FROM orgs;
CREATE VIEW b AS SELECT id FROM a;
CREATE VIEW c AS SELECT name FROM a WHERE id > 0;
GRANT SELECT, UPDATE ON orgs TO reader, writer;
"""

PG_SEQUENCES = "CREATE SEQUENCE s START 10; CREATE SEQUENCE t INCREMENT -1 CYCLE;"

PRIVILEGES_BEFORE = """
CREATE TYPE mood AS ENUM ('a', 'b', 'c');
CREATE TABLE orgs (id int PRIMARY KEY, m mood DEFAULT 'a');
CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $$ SELECT a $$;
"""

PRIVILEGES_AFTER = """
CREATE TYPE mood AS ENUM ('c', 'a', 'd');
CREATE TABLE orgs (id int PRIMARY KEY, m mood DEFAULT 'a');
ALTER TABLE orgs OWNER TO app;
CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql SECURITY DEFINER AS $$ SELECT a + 1 $$;
CREATE FUNCTION g(VARIADIC xs text[]) RETURNS SETOF text LANGUAGE sql AS $$ SELECT 1 $$;
ALTER FUNCTION f(int) OWNER TO app;
"""


@pytest.mark.req("SCH-55")
@pytest.mark.parametrize(
    ("dialect", "before", "after"),
    [
        (PG, BASE, AFTER),
        (MY, BASE, AFTER),
        (PG, OBJECTS_BEFORE, OBJECTS_AFTER + PG_SEQUENCES),
        (MY, OBJECTS_BEFORE, OBJECTS_AFTER),
        (PG, PRIVILEGES_BEFORE, PRIVILEGES_AFTER),
    ],
)
def test_plan_bytes_are_identical_across_processes(
    dialect: Dialect, before: str, after: str
) -> None:
    runs = [
        subprocess.run(
            [sys.executable, "-c", PLAN_SCRIPT, dialect.value, before, after],
            check=True,
            capture_output=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
        ).stdout
        for seed in ("1", "2", "random")
    ]
    assert runs[0] == runs[1] == runs[2]
    observed, desired = schema(dialect, before), schema(dialect, after)
    statements = plan_changes(observed, desired)
    assert build_plan(observed, desired, Scope(), statements) == runs[0]
    assert statements, "the plan should not be empty"


@pytest.mark.req("SCH-57")
def test_a_plan_file_is_accepted_only_as_its_exact_bytes() -> None:
    before, after = schema(PG, BASE), schema(PG, AFTER)
    raw = build_plan(before, after, Scope(), plan_changes(before, after))
    plan_file = read_plan(raw)
    assert plan_file.digest.startswith("sha256:")
    assert plan_file.observed_fingerprint == before.fingerprint()
    document = json.loads(raw)
    assert document["desiredFingerprint"] == after.fingerprint()
    tampered = raw.replace(b"note", b"nite")
    with pytest.raises(PlanFileError, match="digest"):
        read_plan(tampered)
    with pytest.raises(PlanFileError, match="canonical"):
        read_plan(raw.replace(b"\n", b"\r\n"))


@pytest.mark.req("SCH-54", "PRIV-03")
def test_drift_report_is_bounded_and_carries_no_detail() -> None:
    statements = plan(PG, BASE, AFTER)
    report = drift_report(PG, statements)
    assert set(report) == {
        "contractVersion",
        "dialect",
        "digest",
        "total",
        "highestSeverity",
        "categories",
    }
    assert report["total"] == len(statements)
    assert report["highestSeverity"] == "destructive"
    assert sum(report["categories"].values()) == report["total"]
    text = json.dumps(report)
    for secret in ("orgs", "teams", "ALTER", "CREATE", "note"):
        assert secret not in text


@pytest.mark.parametrize("dialect", [PG, MY])
def test_an_unnamed_item_does_not_take_the_twin_a_named_one_needs(dialect: Dialect) -> None:
    # Two checks alike, one named ck1 and one left to the server: the unnamed desired one
    # used to match ck1 first, so ck1 was added again (a duplicate name, the apply failed)
    # and the server-named one dropped. Found by the convergence harness.
    before = (
        "CREATE TABLE t (a int, CONSTRAINT t_a_check CHECK (a > 0), CONSTRAINT ck1 CHECK (a > 0));"
    )
    after = "CREATE TABLE t (a int, CHECK (a > 0), CONSTRAINT ck1 CHECK (a > 0));"
    assert plan(dialect, before, after) == []
    named = "CREATE TABLE t (a int, CHECK (a > 0), CONSTRAINT ck2 CHECK (a > 0));"
    q = "`" if dialect is MY else '"'
    actions = [s.sql.split(" ", 3)[3] for s in plan(dialect, before, named)]
    assert len(actions) == 2
    assert actions[0].startswith("DROP CONSTRAINT ")
    assert actions[1] == f"ADD CONSTRAINT {q}ck2{q} CHECK (a > 0)"


def test_mariadb_checks_written_on_a_column_are_made_on_it() -> None:
    # MariaDB keeps `a int CHECK (a > 0)` as the column's own check, named after it; made as
    # a table check it was named CONSTRAINT_1 instead (found by the convergence harness).
    statements = plan(MY, "", "CREATE TABLE t (a int CHECK (a > 0), b int, CHECK (b > 0));")
    assert [s.sql for s in statements] == [
        "CREATE TABLE `t` (\n  `a` int NULL CHECK (a > 0),\n  `b` int NULL,\n  CHECK (b > 0)\n)"
    ]
    before = "CREATE TABLE t (id int PRIMARY KEY);"
    added = plan(MY, before, "CREATE TABLE t (id int PRIMARY KEY, a int CHECK (a > 0));")
    assert [(s.sql, s.severity) for s in added] == [
        ("ALTER TABLE `t` ADD COLUMN `a` int NULL CHECK (a > 0)", Severity.SAFE)
    ]
    # Existing rows take the default, which must pass the check: the change may fail.
    filled = plan(MY, before, "CREATE TABLE t (id int PRIMARY KEY, a int DEFAULT 5 CHECK (a > 0));")
    assert [s.severity for s in filled] == [Severity.WARNING]
    assert plan(PG, "", "CREATE TABLE t (a int CHECK (a > 0));")[0].sql.endswith(
        '"a" integer NULL,\n  CHECK (a > 0)\n)'
    )


@pytest.mark.parametrize(
    ("observed", "desired", "changes"),
    [
        ((None, None), (), False),  # no column has a prefix: the same as giving none
        ((10, None), (), True),  # a prefix on one side only is another index
        ((10, None), (10, None), False),
        ((10, None), (12, None), True),
    ],
)
def test_an_index_prefix_counts_only_where_a_column_has_one(
    observed: tuple[int | None, ...], desired: tuple[int | None, ...], changes: bool
) -> None:
    """MySQL/MariaDB prefix lengths (`Index.key`): all-None prefix lengths are no prefix."""
    from ptah_operator.engine.schema.model import Column, Index, Table

    def schema(prefixes: tuple[int | None, ...]) -> Schema:
        columns = (Column(name="a", type="varchar(20)"), Column(name="b", type="varchar(20)"))
        index = Index(name="t_ab", columns=("a", "b"), prefix_lengths=prefixes)
        return Schema(
            dialect=MY, tables=(Table(schema="", name="t", columns=columns, indexes=(index,)),)
        )

    statements = plan_changes(schema(observed), schema(desired))
    assert bool(statements) is changes
