"""Diff ordering, severities, rendering, policy, plan bytes and the drift report."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import PlanError, Statement, plan_changes
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


def test_removing_an_enum_value_is_refused_not_guessed() -> None:
    with pytest.raises(PlanError, match=r"public\.mood"):
        plan(PG, "CREATE TYPE mood AS ENUM ('a', 'b');", "CREATE TYPE mood AS ENUM ('a');")


def test_adding_an_enum_value_keeps_its_position_and_runs_outside_a_transaction() -> None:
    statements = plan(
        PG, "CREATE TYPE mood AS ENUM ('a', 'c');", "CREATE TYPE mood AS ENUM ('a', 'b', 'c');"
    )
    assert [s.sql for s in statements] == [
        "ALTER TYPE \"public\".\"mood\" ADD VALUE 'b' BEFORE 'c'"
    ]
    assert statements[0].transactional is False


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


@pytest.mark.req("SCH-55")
@pytest.mark.parametrize(
    ("dialect", "before", "after"),
    [
        (PG, BASE, AFTER),
        (MY, BASE, AFTER),
        (PG, OBJECTS_BEFORE, OBJECTS_AFTER + PG_SEQUENCES),
        (MY, OBJECTS_BEFORE, OBJECTS_AFTER),
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
