"""Pure rules: which statements a transaction cannot witness, RUN-19's class of failure, the
shadow privilege check, URL parsing and what the JSON leaves out."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.apply import (
    Failure,
    Outcome,
    RunResult,
    _may_have_committed,
    commits_implicitly,
    is_transaction_control,
)
from ptah_operator.engine.migrations.baseline import missing_shadow_privileges
from ptah_operator.engine.migrations.connection import BadURLError, Engine, ErrorClass, parse_url
from ptah_operator.engine.migrations.output import revision_json, run_json
from ptah_operator.engine.migrations.revision_table import Revision, RevisionTable
from ptah_operator.engine.splitter import Statement, split

MY = Dialect.MYSQL


def _one(text: str, dialect: Dialect = MY) -> Statement:
    (statement,) = split(text, dialect)
    return statement


@pytest.mark.req("MIG-55")
@pytest.mark.parametrize(
    ("text", "implicit"),
    [
        ("CREATE TABLE t (id INT)", True),
        ("create temporary table t (id int)", False),
        ("DROP TEMPORARY TABLE t", False),
        ("ALTER TABLE t ADD c INT", True),
        ("/* why */ RENAME TABLE a TO b", True),
        ("TRUNCATE t", True),
        ("LOCK TABLES t WRITE", True),
        ("SET autocommit = 1", True),
        ("SET @x = 1", False),
        ("INSERT INTO t VALUES (1)", False),
        ("UPDATE t SET c = 1", False),
        ("LOAD DATA INFILE 'x' INTO TABLE t", False),
        ("LOAD INDEX INTO CACHE t", True),
        ("START TRANSACTION", True),
        ("/*!50003 CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW SET @a = 1 */", True),
        # A MariaDB compound statement outside a routine may hold DDL: taken as committing.
        ("IF @x THEN CREATE TABLE t (a INT); END IF", True),
        ("BEGIN NOT ATOMIC ALTER TABLE t ADD c INT; END", True),
        ("WHILE @x < 1 DO SET @x = 1; END WHILE", True),
        ("CASE @x WHEN 1 THEN DROP TABLE t; END CASE", True),
        ("FOR i IN 1..2 DO SET @b = i; END FOR", True),
    ],
)
def test_commits_implicitly(text: str, implicit: bool) -> None:
    assert commits_implicitly(_one(text)) is implicit


@pytest.mark.parametrize(
    ("text", "control"),
    [
        ("BEGIN", True),
        ("COMMIT", True),
        ("ROLLBACK", True),
        ("ROLLBACK TO SAVEPOINT s", False),
        ("SAVEPOINT s", False),
        ("START TRANSACTION", True),
        ("END", True),
        ("PREPARE TRANSACTION 'x'", True),
        ("PREPARE q AS SELECT 1", False),
        ("SELECT 1", False),
    ],
)
def test_transaction_control(text: str, control: bool) -> None:
    assert is_transaction_control(_one(text, Dialect.POSTGRESQL)) is control


def test_mariadb_compound_block_is_not_a_transaction_statement() -> None:
    block = _one("BEGIN NOT ATOMIC SELECT 1; END")
    assert not is_transaction_control(block)
    assert commits_implicitly(block)
    assert is_transaction_control(_one("BEGIN WORK"))


@pytest.mark.req("RUN-19")
def test_ddl_failure_may_have_committed_unless_refused_up_front() -> None:
    index = _one("CREATE UNIQUE INDEX i ON t (c)")
    assert _may_have_committed(MY, index, ErrorClass(mysql_errno=1062))
    assert not _may_have_committed(MY, index, ErrorClass(mysql_errno=1061))  # name taken
    assert not _may_have_committed(MY, index, ErrorClass(mysql_errno=1064))  # syntax
    assert not _may_have_committed(
        MY, _one("INSERT INTO t VALUES (1)"), ErrorClass(mysql_errno=1062)
    )
    pg = _one("CREATE UNIQUE INDEX i ON t (c)", Dialect.POSTGRESQL)
    assert not _may_have_committed(Dialect.POSTGRESQL, pg, ErrorClass(sqlstate="23505"))


@pytest.mark.req("MIG-71")
def test_shadow_privileges_mariadb_and_mysql() -> None:
    scoped = ["GRANT ALL PRIVILEGES ON `shadow`.* TO `u`@`%`"]
    assert "SHOW VIEW" in missing_shadow_privileges(Engine.MARIADB, scoped)
    mariadb = [
        "GRANT USAGE ON *.* TO `u`@`%`",
        "GRANT SELECT, DROP, ALTER, ALTER ROUTINE, EVENT, LOCK TABLES, PROCESS, SHOW VIEW"
        " ON *.* TO `u`@`%`",
    ]
    assert missing_shadow_privileges(Engine.MARIADB, mariadb) == []
    assert missing_shadow_privileges(Engine.MYSQL, mariadb) == ["SHOW_ROUTINE", "TRIGGER"]
    mysql = [
        "GRANT SELECT, DROP, ALTER, ALTER ROUTINE, EVENT, LOCK TABLES, PROCESS, TRIGGER ON *.* TO `u`@`%`",
        "GRANT SHOW_ROUTINE ON *.* TO `u`@`%`",
    ]
    assert missing_shadow_privileges(Engine.MYSQL, mysql) == []
    assert (
        missing_shadow_privileges(Engine.MYSQL, ["GRANT ALL PRIVILEGES ON *.* TO `root`@`%`"]) == []
    )


def test_urls() -> None:
    pg = parse_url("postgres://me:p%40ss@db.example:6543/app?sslmode=require")
    assert (pg.dialect, pg.host, pg.port, pg.database, pg.password) == (
        Dialect.POSTGRESQL,
        "db.example",
        6543,
        "app",
        "p@ss",
    )
    assert "p@ss" not in pg.display
    assert "me" not in pg.display
    my = parse_url("mariadb://root@127.0.0.1/app")
    assert (my.dialect, my.port) == (Dialect.MYSQL, 3306)
    with pytest.raises(BadURLError) as info:
        parse_url("sqlite:///secret-path")
    assert "secret" not in str(info.value)


def test_revision_table_names() -> None:
    assert RevisionTable.parse("ops.history").quoted(Dialect.POSTGRESQL) == '"ops"."history"'
    assert RevisionTable.parse("history").quoted(MY) == "`history`"
    assert RevisionTable().display(Dialect.POSTGRESQL) == "public.schema_migrations"
    with pytest.raises(ValueError, match="plain identifier"):
        RevisionTable.parse('x"; DROP TABLE y; --')


@pytest.mark.req("RUN-18", "PRIV-05")
def test_json_leaves_unknowns_out() -> None:
    row = Revision(1, "a", "migration", "applied", None, None, "0" * 64, None, None, None, None)
    doc = revision_json(row)
    assert "executionMillis" not in doc
    assert "statementsApplied" not in doc
    result = RunResult(outcome=Outcome.FAILED, reason="CommitFailed", message="m", selected=True)
    result.finished_at = datetime.now(UTC)
    assert "failure" not in run_json(result)
    result.failure = Failure(3, 2, "23505", None)
    assert run_json(result)["failure"] == {"version": 3, "statementIndex": 2, "sqlstate": "23505"}
