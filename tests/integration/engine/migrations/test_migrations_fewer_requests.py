"""A file's transaction opens in the same request as its first statement, and its revision row
is written with its values in the SQL (issue #16: fewer round trips per file on PostgreSQL).
What a run reports must not change: a first statement that fails, at execution or at parsing,
is statement 1 and commits nothing; a file of comments only still runs in a transaction of its
own; a revision row whose text falls outside the literal character set goes as parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.engine.migrations.apply import Outcome, RunResult, apply
from ptah_operator.engine.migrations.connection import connect
from ptah_operator.engine.migrations.directory import FileKind, MigrationFile
from ptah_operator.engine.migrations.revision_table import (
    NewRevision,
    RevisionTable,
    insert_revision,
    insert_revision_literal_sql,
    literal,
)
from ptah_operator.engine.migrations.status import Verdict, read_status
from tests.integration.engine.migrations.mig_support import TABLE, load, sql, write_dir

FIRST = "0000000001_users.up.sql"


async def _up(url: str, path: Path) -> RunResult:
    db = await connect(url)
    try:
        return await apply(db, load(path), table=TABLE, reconnect=lambda: connect(url))
    finally:
        await db.close()


@pytest.mark.parametrize(
    ("first", "sqlstate"),
    [
        ("INSERT INTO missing_table VALUES (1)", "42P01"),  # fails when it runs
        ("CREATE TABLE (", "42601"),  # does not parse: neither it nor BEGIN runs
    ],
)
async def test_a_failing_first_statement_is_statement_one_and_commits_nothing(
    pg_url: str, tmp_path: Path, first: str, sqlstate: str
) -> None:
    path = write_dir(tmp_path / "m", {FIRST: f"{first};\nCREATE TABLE after_first (id INT);\n"})
    result = await _up(pg_url, path)
    assert result.outcome is Outcome.FAILED
    assert result.failure is not None
    assert (result.failure.version, result.failure.statement_index) == (1, 1)
    assert result.failure.sqlstate == sqlstate
    assert await sql(pg_url, "SELECT to_regclass('after_first') IS NULL") == [(True,)]
    db = await connect(pg_url)
    try:  # read from another session: the dirty row was committed, alone
        status, _ = await read_status(db, load(path), TABLE)
    finally:
        await db.close()
    assert status.verdict is Verdict.DIRTY
    (row,) = status.dirty
    assert (row.version, row.statements_applied, row.error_class) == (1, 0, sqlstate)


async def test_the_first_statement_and_the_rest_commit_together(
    pg_url: str, tmp_path: Path
) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            FIRST: "CREATE TABLE users (id INT PRIMARY KEY);\nINSERT INTO users VALUES (1);\n",
            "0000000002_dup.up.sql": "INSERT INTO users VALUES (2);\nINSERT INTO users VALUES (1);\n",
        },
    )
    result = await _up(pg_url, path)
    assert result.outcome is Outcome.FAILED
    assert result.applied_versions == [1]
    assert result.failure is not None
    assert result.failure.statement_index == 2
    # Version 2's first statement ran in its transaction and went with it.
    assert await sql(pg_url, "SELECT id FROM users ORDER BY id") == [(1,)]


async def test_a_file_of_comments_only_is_applied_and_recorded(pg_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", {FIRST: "-- nothing to do yet\n"})
    result = await _up(pg_url, path)
    assert (result.outcome, result.applied_versions) == (Outcome.APPLIED, [1])
    assert await sql(pg_url, f"SELECT statements_total FROM {TABLE.name}") == [(0,)]


def _row(description: str, error_class: str | None) -> NewRevision:
    file = MigrationFile(
        version=7,
        description=description,
        kind=FileKind.MIGRATION,
        name=f"0000000007_{description}.up.sql",
        checksum="ab" * 32,
        sql="",
        directives=frozenset(),
    )
    return NewRevision(file, "failed", 0, 1, 12, error_class, "up")


def test_literals_are_integers_null_and_words_only() -> None:
    assert literal(7) == "7"
    assert literal(None) == "NULL"
    assert literal("add_users-2.v1") == "'add_users-2.v1'"

    class Disguised(str):
        def __format__(self, spec: str) -> str:
            return "x'; DROP TABLE t; --"

    for value in ("it's", "a\\b", "x\ny", "é", True, 1.5, b"x", "x" * 256, Disguised("ok")):
        assert literal(value) is None


async def test_a_row_outside_the_literal_set_goes_as_parameters(pg_url: str) -> None:
    table = RevisionTable()
    db = await connect(pg_url)
    try:
        assert insert_revision_literal_sql(db, table, _row("ok", "it's")) is None
        written = insert_revision_literal_sql(db, table, _row("ok", "42P01"))
        assert written is not None
        assert "'42P01'" in written
        assert "$" not in written
    finally:
        await db.close()
    await sql(
        pg_url,
        f"CREATE TABLE IF NOT EXISTS {TABLE.name} (version BIGINT PRIMARY KEY, description TEXT,"
        " kind TEXT, state TEXT, statements_applied INT, statements_total INT, checksum TEXT,"
        " execution_millis BIGINT, error_class TEXT, recorded_by TEXT, applied_at TIMESTAMPTZ)",
    )
    db = await connect(pg_url)
    try:
        await insert_revision(db, table, _row("ok", "it's"))
        _, rows = await db.fetch(f"SELECT error_class, execution_millis FROM {TABLE.name}")
    finally:
        await db.close()
    assert rows == [("it's", 12)]


async def test_a_revision_row_the_table_refuses_is_not_taken_for_a_failed_commit(
    pg_url: str, tmp_path: Path
) -> None:
    # The row and the COMMIT travel in one request: the server's transaction status after the
    # error tells which failed. Here the row fails (a CHECK), so the transaction is still open
    # and the COMMIT never ran: nothing of version 2 is kept, and the run is not CommitFailed.
    first = {FIRST: "CREATE TABLE one (id INT);\n"}
    assert (await _up(pg_url, write_dir(tmp_path / "a", first))).outcome is Outcome.APPLIED
    await sql(pg_url, f"ALTER TABLE {TABLE.name} ADD CONSTRAINT no_two CHECK (version <> 2)")
    files = {**first, "0000000002_two.up.sql": "CREATE TABLE two (id INT);\n"}
    result = await _up(pg_url, write_dir(tmp_path / "b", files))
    assert (result.outcome, result.reason) == (Outcome.UNKNOWN, "RevisionTableUnwritable")
    assert "23514" in result.message
    assert await sql(pg_url, "SELECT to_regclass('two') IS NULL") == [(True,)]
    assert await sql(pg_url, f"SELECT version FROM {TABLE.name}") == [(1,)]
