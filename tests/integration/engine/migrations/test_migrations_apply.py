"""Runs against real PostgreSQL and MariaDB: the expected sequence, transaction modes, every
outcome, a run killed mid-file, and refusals that leave everything as it was."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.apply import (
    ExpectedMigration,
    Outcome,
    RunResult,
    TransactionMode,
    apply,
)
from ptah_operator.engine.migrations.connection import connect
from ptah_operator.engine.migrations.output import run_json
from ptah_operator.engine.migrations.status import Status, Verdict, read_status
from tests.integration.engine.migrations.mig_support import (
    TABLE,
    load,
    open_db,
    ptah,
    snapshot,
    spawn_ptah,
    sql,
    write_dir,
)

NONE = TransactionMode.NONE
TABLE_DIALECT = {True: Dialect.POSTGRESQL, False: Dialect.MYSQL}
SECRET = "SECRET-ROW-VALUE-7731"


@pytest.fixture(params=["postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "pg_url" if request.param == "postgresql" else "maria_url"
    url: str = request.getfixturevalue(name)
    return url


def _is_pg(url: str) -> bool:
    return url.startswith("postgres")


async def _up(url: str, path: Path, **kwargs: Any) -> RunResult:
    db = await open_db(url)
    try:
        return await apply(db, load(path), table=TABLE, reconnect=lambda: connect(url), **kwargs)
    finally:
        await db.close()


async def _status(url: str, path: Path) -> Status:
    db = await open_db(url)
    try:
        status, _ = await read_status(db, load(path), TABLE)
        return status
    finally:
        await db.close()


BASE = {
    "0000000001_users.up.sql": "CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100));\n",
    "0000000002_seed.up.sql": "INSERT INTO users VALUES (1, 'a@example.com');\n",
}


@pytest.mark.req("MIG-49", "MIG-50", "MIG-51", "RUN-20")
async def test_sequence_mismatch_refuses_before_changing_anything(
    db_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", BASE)
    directory = load(path)
    before = await snapshot(db_url)
    wrong_checksum = [
        ExpectedMigration(1, directory.by_version[1].checksum),
        ExpectedMigration(2, "0" * 64),
    ]
    for expected in (wrong_checksum, [ExpectedMigration(1, directory.by_version[1].checksum)]):
        result = await _up(db_url, path, expected=expected, mode=NONE)
        assert (result.outcome, result.reason, result.selected) == (
            Outcome.FAILED,
            "SequenceMismatch",
            False,
        )
        assert result.applied_versions == []
        assert await snapshot(db_url) == before


@pytest.mark.req("MIG-49", "RUN-01", "RUN-13", "PRIV-06")
async def test_expected_sequence_runs_then_reads_up_to_date(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", BASE)
    directory = load(path)
    expected = [ExpectedMigration(f.version, f.checksum) for f in directory.files]
    result = await _up(db_url, path, expected=expected, mode=NONE)
    assert (result.outcome, result.applied_versions) == (Outcome.APPLIED, [1, 2])
    digest = result.target_identity_digest
    assert digest is not None
    assert digest.startswith("sha256:")
    again = await _up(db_url, path, expected=expected, mode=NONE)
    assert again.outcome is Outcome.UP_TO_DATE
    assert again.target_identity_digest == digest
    assert "127.0.0.1" not in json.dumps(run_json(again))


@pytest.mark.req("RUN-17", "MIG-43", "MIG-54", "PRIV-05", "PRIV-01", "PRIV-02")
async def test_postgres_file_mode_failure_commits_nothing(pg_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            **BASE,
            "0000000003_bad.up.sql": "CREATE TABLE t3 (id INT);\n"
            f"INSERT INTO users VALUES (1, '{SECRET}');\n"
            "CREATE TABLE t3b (id INT);\n",
        },
    )
    result = await _up(pg_url, path)
    assert result.outcome is Outcome.FAILED
    assert result.selected
    assert result.applied_versions == [1, 2]
    failure = result.failure
    assert failure is not None
    assert (failure.version, failure.statement_index, failure.sqlstate, failure.mysql_errno) == (
        3,
        2,
        "23505",
        None,
    )
    assert result.message == "version 3: statement 2 failed with SQLSTATE 23505"
    document = json.dumps(run_json(result))
    assert SECRET not in document
    assert "INSERT" not in document
    assert await sql(pg_url, "SELECT to_regclass('t3') IS NULL") == [(True,)]
    status = await _status(pg_url, path)
    assert status.verdict is Verdict.DIRTY
    (row,) = status.dirty
    assert (row.version, row.statements_applied, row.statements_total, row.error_class) == (
        3,
        0,
        3,
        "23505",
    )


@pytest.mark.req("MIG-56", "RUN-01", "RUN-12", "RUN-17")
async def test_none_mode_failure_after_a_commit_is_partial(db_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            **BASE,
            "0000000003_half.up.sql": "CREATE TABLE t3 (id INT);\nINSERT INTO t3 VALUES (1);\n"
            "INSERT INTO users VALUES (1, 'dup');\nCREATE TABLE t3c (id INT);\n",
        },
    )
    result = await _up(db_url, path, mode=NONE)
    assert result.outcome is Outcome.PARTIAL
    assert result.failure is not None
    assert result.failure.statement_index == 3
    if _is_pg(db_url):
        assert (result.failure.sqlstate, result.failure.mysql_errno) == ("23505", None)
    else:
        assert (result.failure.sqlstate, result.failure.mysql_errno) == (None, 1062)
    assert result.stopped_at is not None
    assert (result.stopped_at.statements_applied, result.stopped_at.statements_total) == (2, 4)
    assert await sql(db_url, "SELECT count(*) FROM t3") == [(1,)]
    status = await _status(db_url, path)
    (row,) = status.dirty
    assert (row.statements_applied, row.statements_total) == (2, 4)


@pytest.mark.req("MIG-56", "RUN-01")
async def test_none_mode_failure_at_first_statement_is_failed(db_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {**BASE, "0000000003_bad.up.sql": "INSERT INTO users VALUES (1, 'dup');\n"},
    )
    result = await _up(db_url, path, mode=NONE)
    assert result.outcome is Outcome.FAILED
    assert result.selected
    status = await _status(db_url, path)
    (row,) = status.dirty
    assert (row.version, row.statements_applied) == (3, 0)


@pytest.mark.req("MIG-55")
async def test_mariadb_refuses_file_mode_for_ddl_before_any_statement(
    maria_url: str, tmp_path: Path
) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            "0000000001_dml.up.sql": "SELECT 1;\n",
            "0000000002_ddl.up.sql": "INSERT INTO nowhere VALUES (1);\nALTER TABLE x ADD c INT;\n",
        },
    )
    before = await snapshot(maria_url)
    for mode in (None, TransactionMode.FILE):
        result = await _up(maria_url, path, mode=mode)
        assert (result.outcome, result.reason, result.selected) == (
            Outcome.FAILED,
            "TransactionModeRefused",
            False,
        )
        assert "version 2: statement 2" in result.message
        assert await snapshot(maria_url) == before


@pytest.mark.req("MIG-57")
async def test_mariadb_file_mode_runs_dml_as_one_unit(maria_url: str, tmp_path: Path) -> None:
    await sql(maria_url, "CREATE TABLE t (id INT PRIMARY KEY)")
    path = write_dir(
        tmp_path / "m",
        {"0000000001_dml.up.sql": "INSERT INTO t VALUES (1);\nINSERT INTO t VALUES (1);\n"},
    )
    result = await _up(maria_url, path, mode=TransactionMode.FILE)
    assert result.outcome is Outcome.FAILED
    assert result.failure is not None
    assert result.failure.mysql_errno == 1062
    assert await sql(maria_url, "SELECT count(*) FROM t") == [(0,)]


@pytest.mark.req("RUN-18")
async def test_commit_failure_has_no_statement_to_point_at(pg_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            "0000000001_deferred.up.sql": "CREATE TABLE p (id INT PRIMARY KEY);\n"
            "CREATE TABLE c (p_id INT REFERENCES p (id) DEFERRABLE INITIALLY DEFERRED);\n"
            "INSERT INTO c VALUES (42);\n",
        },
    )
    result = await _up(pg_url, path)
    assert (result.outcome, result.reason, result.failure) == (Outcome.FAILED, "CommitFailed", None)
    assert result.message == "version 1: the commit failed with SQLSTATE 23503"
    assert "failure" not in run_json(result)
    assert await sql(pg_url, "SELECT to_regclass('p') IS NULL") == [(True,)]


@pytest.mark.req("RUN-19")
async def test_mariadb_ddl_failure_that_may_have_committed_is_unknown(
    maria_url: str, tmp_path: Path
) -> None:
    await sql(
        maria_url,
        "CREATE TABLE t (id INT, email VARCHAR(50))",
        "INSERT INTO t VALUES (1, 'x'), (2, 'x')",
    )
    path = write_dir(
        tmp_path / "m",
        {"0000000001_unique.up.sql": "CREATE UNIQUE INDEX t_email ON t (email);\n"},
    )
    result = await _up(maria_url, path, mode=NONE)
    assert (result.outcome, result.reason) == (Outcome.UNKNOWN, "OutcomeNotRecorded")
    assert result.failure is not None
    assert (result.failure.version, result.failure.statement_index) == (1, 1)
    assert result.failure.mysql_errno == 1062
    assert "not recorded whether it committed" in result.message
    assert (await _status(maria_url, path)).verdict is Verdict.DIRTY


@pytest.mark.req("MIG-50")
async def test_lock_held_elsewhere_refuses_and_changes_nothing(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", BASE)
    holder = await open_db(db_url)
    try:
        assert await holder.try_lock(1)
        before = await snapshot(db_url)
        result = await _up(db_url, path, mode=NONE, lock_timeout=0.5)
        assert (result.outcome, result.reason, result.selected) == (
            Outcome.FAILED,
            "LockTimeout",
            False,
        )
        assert await snapshot(db_url) == before
    finally:
        await holder.close()


@pytest.mark.req("MIG-44", "MIG-50")
async def test_a_history_read_the_database_times_out_is_refused_as_database_busy(
    db_url: str, tmp_path: Path
) -> None:
    """A lock wait the database gives up on passes on its own: DatabaseBusy, not DatabaseError
    (issue #11: under apply: Always only the first runs the same plan again)."""
    path = write_dir(tmp_path / "m", BASE)
    assert (await _up(db_url, path, mode=NONE)).outcome is Outcome.APPLIED
    path = write_dir(
        tmp_path / "m", {**BASE, "0000000003_more.up.sql": "ALTER TABLE users ADD COLUMN n INT;\n"}
    )
    name = TABLE.quoted(TABLE_DIALECT[_is_pg(db_url)])
    holder = await open_db(db_url)
    runner = await open_db(db_url)
    try:
        if _is_pg(db_url):
            await holder.begin()
            await holder.execute(f"LOCK TABLE {name} IN ACCESS EXCLUSIVE MODE")
            await runner.execute("SET lock_timeout = '200ms'")
        else:
            await holder.execute(f"LOCK TABLES {name} WRITE")
            await runner.execute("SET SESSION lock_wait_timeout = 1")
        result = await apply(runner, load(path), table=TABLE, mode=NONE, lock_timeout=1)
        assert (result.outcome, result.selected, result.reason) == (
            Outcome.FAILED,
            False,
            "DatabaseBusy",
        )
        assert result.message in (
            "reading the history failed with SQLSTATE 55P03",
            "reading the history failed with MySQL error 1205",
        )
    finally:
        await runner.close()
        await holder.close()


@pytest.mark.req("MIG-56")
async def test_no_transaction_directive_runs_concurrent_index(pg_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            "0000000001_t.up.sql": "CREATE TABLE t (id INT);\n",
            "0000000002_idx.up.sql": "-- +ptah no_transaction\n"
            "CREATE INDEX CONCURRENTLY t_id ON t (id);\n",
        },
    )
    result = await _up(pg_url, path)
    assert result.outcome is Outcome.APPLIED


async def _wait_for(predicate: Callable[[], Awaitable[bool]], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not reached")


def _sleep_file(url: str) -> dict[str, str]:
    pause = "SELECT pg_sleep(30)" if _is_pg(url) else "SELECT SLEEP(30)"
    return {
        "0000000001_users.up.sql": BASE["0000000001_users.up.sql"],
        "0000000002_slow.up.sql": "-- +ptah no_transaction\n"
        f"CREATE TABLE before_sleep (id INT);\n{pause};\nCREATE TABLE after_sleep (id INT);\n",
    }


async def _progress(url: str, version: int) -> int | None:
    rows = await sql(
        url, f"SELECT statements_applied FROM schema_migrations WHERE version = {version}"
    )
    return int(rows[0][0]) if rows else None


async def _sleeping_session(url: str) -> int | None:
    if _is_pg(url):
        query = (
            "SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'"
            " AND datname = current_database()"
        )
    else:
        query = (
            "SELECT id FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP%'"
            " AND DB = DATABASE()"
        )
    rows = await sql(url, query)
    return int(rows[0][0]) if rows else None


@pytest.mark.req("MIG-43", "MIG-56", "RUN-02")
async def test_run_killed_mid_file_reads_dirty_never_applied(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", _sleep_file(db_url))
    proc = spawn_ptah(
        "up", "--db-url", db_url, "--migrations-dir", str(path), "--transaction-mode", "none"
    )
    try:

        async def sleeping() -> bool:
            return await _sleeping_session(db_url) is not None

        await _wait_for(sleeping)
        assert await _progress(db_url, 2) == 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    status = await _status(db_url, path)
    assert status.verdict is Verdict.DIRTY
    (row,) = status.dirty
    assert (row.version, row.state, row.statements_applied, row.statements_total) == (
        2,
        "failed",
        1,
        3,
    )
    assert row.error_class is None
    assert 2 not in [r.version for r in status.revisions if not r.dirty]
    # The orphaned server session may still be sleeping; end it so the database can be dropped.
    pid = await _sleeping_session(db_url)
    if pid is not None:
        kill = f"SELECT pg_terminate_backend({pid})" if _is_pg(db_url) else f"KILL {pid}"
        await sql(db_url, kill)


@pytest.mark.req("RUN-01", "RUN-02", "MIG-43")
async def test_session_terminated_mid_file_is_unknown_and_reads_dirty(
    db_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", _sleep_file(db_url))
    task = asyncio.create_task(_up(db_url, path, mode=NONE))

    async def sleeping() -> bool:
        return await _sleeping_session(db_url) is not None

    await _wait_for(sleeping)
    pid = await _sleeping_session(db_url)
    kill = f"SELECT pg_terminate_backend({pid})" if _is_pg(db_url) else f"KILL CONNECTION {pid}"
    await sql(db_url, kill)
    result = await asyncio.wait_for(task, 30)
    assert result.outcome is Outcome.UNKNOWN
    assert result.applied_versions == [1]
    assert result.stopped_at is not None
    assert (result.stopped_at.version, result.stopped_at.statements_applied) == (2, 1)
    status = await _status(db_url, path)
    assert status.verdict is Verdict.DIRTY
    assert [(r.version, r.statements_applied) for r in status.dirty] == [(2, 1)]


@pytest.mark.req("RUN-01", "RUN-17", "PRIV-05")
async def test_cli_up_json_contract_and_exit_codes(db_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {**BASE, "0000000003_bad.up.sql": f"INSERT INTO users VALUES (1, '{SECRET}');\n"},
    )
    code, doc = ptah(
        "up", "--db-url", db_url, "--migrations-dir", str(path), "--transaction-mode", "none"
    )
    assert code == 4
    assert doc["contractVersion"] == 1
    assert doc["command"] == "up"
    assert doc["outcome"] == "Failed"
    assert doc["selected"] is True
    assert doc["appliedVersions"] == [1, 2]
    assert doc["failure"]["version"] == 3
    assert doc["failure"]["statementIndex"] == 1
    assert SECRET not in json.dumps(doc)
    code, doc = ptah("up", "--db-url", db_url, "--migrations-dir", str(path))
    assert (code, doc["outcome"], doc["reason"]) == (3, "Failed", "HistoryDirty")
    code, doc = ptah("status", "--db-url", db_url, "--migrations-dir", str(path))
    assert (code, doc["verdict"], doc["reason"]) == (3, "Dirty", "HistoryDirty")
    assert doc["dirty"][0]["statementsApplied"] == 0
    assert db_url.split("@")[0] not in json.dumps(doc)
