"""A statement smuggled into any desired-schema field that carries SQL never runs.

The probe: a table `accounts` holds a row and is protected; a desired schema carries
`DROP TABLE accounts` after a `;` in one field. Three guards, each tested on its own:
1. the desired-schema readers refuse the field, naming the object (`ptah schema plan`);
2. Apply refuses a plan entry that is not exactly one statement (PlanUnparseable), even in a
   plan file whose digest holds;
3. the connection runs one statement per call: the server refuses a second one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ptah_operator.engine.schema.connection import Connection
from ptah_operator.engine.schema.plan import Policy, digest_of, encode

from .schema_roundtrip import (
    apply_bytes,
    converge,
    execute,
    plan_for,
    ptah_schema,
    rows,
    write_desired,
)

SMUGGLED = "0; DROP TABLE accounts"

ACCOUNTS = "CREATE TABLE accounts (id int PRIMARY KEY, balance int)"


@pytest.fixture(params=["postgresql", "mariadb"])
def url(request: pytest.FixtureRequest) -> str:
    value: str = request.getfixturevalue("pg_url" if request.param == "postgresql" else "maria_url")
    return value


def _hcl_table(body: str, *, pg: bool) -> str:
    schema = 'schema "public" {}\n' if pg else ""
    table_schema = "schema = schema.public\n" if pg else ""
    return f"""{schema}
table "accounts" {{
  {table_schema}
  column "id" {{ type = int  null = false }}
  column "balance" {{ type = int }}
  primary_key {{ columns = [column.id] }}
}}
table "t" {{
  {table_schema}
  column "id" {{ type = int  null = false }}
  column "a" {{ type = int }}
  primary_key {{ columns = [column.id] }}
  {body}
}}
"""


# Each HCL field that reaches a statement, with the smuggled text in it.
HCL_FIELDS = {
    "column default": 'column "b" { type = int  default = sql("0; DROP TABLE accounts") }',
    "column type": 'column "b" { type = "int; DROP TABLE accounts" }',
    "generated expression": 'column "b" { type = int  as { expr = "a; DROP TABLE accounts" } }',
    "index type": 'index "ix" { columns = [column.a]  type = "btree (a); DROP TABLE accounts; --" }',
    "index key expression": 'index "ix" { on { expr = "a); DROP TABLE accounts; --" } }',
    "index predicate": 'index "ix" { columns = [column.a]  where = "a > 0; DROP TABLE accounts" }',
    "check": 'check "c" { expr = "a > 0); DROP TABLE accounts; --" }',
    "foreign key action": (
        'foreign_key "fk" { columns = [column.a]  ref_columns = [table.accounts.column.id]  '
        'on_delete = "CASCADE; DROP TABLE accounts" }'
    ),
}
PG_ONLY_HCL_FIELDS = {
    "index operator class": (
        'index "ix" { on { column = column.a  ops = "int4_ops; DROP TABLE accounts" } }'
    ),
}
SQL_FIELDS = {
    "a second statement": "CREATE TABLE t (id int PRIMARY KEY, a int DEFAULT 0); DROP TABLE accounts;",
    "a default holding a subquery": "CREATE TABLE t (id int PRIMARY KEY, a int DEFAULT (SELECT 1));",
}
PG_ONLY_SQL_FIELDS = {
    "function language": (
        "CREATE FUNCTION f() RETURNS int LANGUAGE 'sql; DROP TABLE accounts' AS $$ SELECT 1 $$;"
    ),
}


async def _accounts_intact(url: str) -> None:
    assert await rows(url, "SELECT id, balance FROM accounts") == [(1, 100)]


def _cases(url: str) -> list[tuple[str, str, str]]:
    pg = url.startswith("postgres")
    hcl = {**HCL_FIELDS, **(PG_ONLY_HCL_FIELDS if pg else {})}
    sql = {**SQL_FIELDS, **(PG_ONLY_SQL_FIELDS if pg else {})}
    accounts = ACCOUNTS + ";\n"
    return [(f"hcl {name}", ".hcl", _hcl_table(body, pg=pg)) for name, body in hcl.items()] + [
        (f"sql {name}", ".sql", accounts + body) for name, body in sql.items()
    ]


async def test_every_sql_field_refuses_a_smuggled_statement(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, ACCOUNTS + ";")
    await execute(url, "INSERT INTO accounts VALUES (1, 100)")
    for name, suffix, text in _cases(url):
        desired = write_desired(tmp_path, text, suffix)
        out = tmp_path / "plan.json"
        code, answer = ptah_schema(
            "plan",
            "--url",
            url,
            "--desired",
            str(desired),
            "--out",
            str(out),
            "--protected-table",
            "accounts",
        )
        assert (code, answer.get("error")) == (1, "DesiredSchemaError"), (name, answer)
        message = str(answer["message"])
        if name != "sql a second statement":
            # A field's text is never quoted back (a statement of its own is named by its
            # first keywords and names).
            assert "DROP TABLE" not in message.upper(), (name, "the message quotes the SQL")
        assert not out.exists(), name
        await _accounts_intact(url)


async def test_apply_refuses_an_entry_of_two_statements_even_with_a_good_digest(
    url: str, tmp_path: Path
) -> None:
    await converge(url, tmp_path, ACCOUNTS + ";")
    await execute(url, "INSERT INTO accounts VALUES (1, 100)")
    planned = await plan_for(
        url, write_desired(tmp_path, ACCOUNTS + "; CREATE TABLE t (id int PRIMARY KEY);")
    )
    document = json.loads(planned.plan_bytes)
    assert [s["severity"] for s in document["statements"]] == ["safe"]
    document["statements"][0]["sql"] += "; DROP TABLE accounts"
    document["digest"] = digest_of(document)
    forged = encode(document)
    for dry_run in (True, False):
        result = await apply_bytes(
            url, forged, policy=Policy(allow_destructive=True), dry_run=dry_run
        )
        assert (result.outcome, result.reason) == ("refused", "PlanUnparseable")
        assert result.detail == {"statement": 0}
    await _accounts_intact(url)
    assert await rows(url, "SELECT 1 FROM information_schema.tables WHERE table_name = 't'") == []


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1; DROP TABLE accounts",
        "SELECT 1 /* a comment */; DROP TABLE accounts",
        "DROP TABLE accounts; SELECT 1",
    ],
)
async def test_the_connection_runs_one_statement_per_call(
    url: str, tmp_path: Path, sql: str
) -> None:
    await converge(url, tmp_path, ACCOUNTS + ";")
    await execute(url, "INSERT INTO accounts VALUES (1, 100)")
    conn = await Connection.open(url)
    try:
        with pytest.raises(Exception) as raised:
            await conn.run_statement(sql)
        if url.startswith("postgres"):
            assert getattr(raised.value, "sqlstate", None) == "42601"
        else:
            assert raised.value.args[0] == 1064
    finally:
        await conn.close()
    await _accounts_intact(url)


async def test_planning_reads_desired_views_one_statement_at_a_time(
    pg_url: str, tmp_path: Path
) -> None:
    """A database set to standard_conforming_strings = off reads `'a\\''` as a string that
    goes on; the server's reading of a desired view must still run one statement, with the
    engine's own setting."""
    database = pg_url.rsplit("/", 1)[1]
    await execute(
        pg_url,
        f'ALTER DATABASE "{database}" SET standard_conforming_strings = off',
        "CREATE TABLE victim (id int PRIMARY KEY)",
        "CREATE VIEW v AS SELECT 1 AS x",
    )
    desired = write_desired(
        tmp_path,
        "CREATE TABLE victim (id int PRIMARY KEY);"
        " CREATE VIEW v AS SELECT 'a\\''; COMMIT; DROP TABLE victim; --' AS x;",
    )
    planned = await plan_for(pg_url, desired)
    assert await rows(pg_url, "SELECT count(*) FROM victim") == [(0,)]
    # Whatever the text turns out to be, it stays one statement: a view of one string.
    for dry_run in (True, False):
        result = await apply_bytes(
            pg_url, planned.plan_bytes, policy=Policy(allow_destructive=True), dry_run=dry_run
        )
        assert result.outcome in {"dryRun", "applied"}, result
    assert await rows(pg_url, "SELECT count(*) FROM victim") == [(0,)]
    assert await rows(pg_url, "SELECT x FROM v") == [("a\\'; COMMIT; DROP TABLE victim; --",)]


async def test_the_mysql_checks_never_run_a_function_a_check_calls(
    maria_url: str, tmp_path: Path
) -> None:
    """A check calling SLEEP (or a stored function, which the engine now refuses to plan
    around at all) is not evaluated before the Apply: the query would run it."""
    await execute(
        maria_url, "CREATE TABLE t (id int PRIMARY KEY)", "INSERT INTO t VALUES (1), (2), (3)"
    )
    planned = await plan_for(
        maria_url,
        write_desired(
            tmp_path, "CREATE TABLE t (id int PRIMARY KEY, CONSTRAINT c CHECK (SLEEP(2) = 0));"
        ),
    )
    started = time.monotonic()
    result = await apply_bytes(
        maria_url, planned.plan_bytes, policy=Policy(allow_destructive=True), dry_run=True
    )
    assert time.monotonic() - started < 2, "the check's function ran"
    assert result.outcome == "dryRun", result
    assert result.detail["rowChecksNotRun"] == 1

    # A plan file whose requirement holds more than one expression is not a plan file.
    document = json.loads(planned.plan_bytes)
    [requirement] = [r for s in document["statements"] for r in s.get("requires", [])]
    requirement["expression"] = "0) UNION SELECT SLEEP(3) FROM t WHERE (1"
    document["digest"] = digest_of(document)
    started = time.monotonic()
    forged = await apply_bytes(
        maria_url, encode(document), policy=Policy(allow_destructive=True), dry_run=True
    )
    assert (forged.outcome, forged.reason) == ("refused", "PlanDigestMismatch")
    assert time.monotonic() - started < 3
