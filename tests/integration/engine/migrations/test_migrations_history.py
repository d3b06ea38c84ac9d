"""History reads against real PostgreSQL and MariaDB: every verdict, checkpoints, older tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from ptah_operator.engine.migrations.apply import Outcome, RunResult, TransactionMode, apply
from ptah_operator.engine.migrations.status import Status, Verdict, read_status
from tests.integration.engine.migrations.mig_support import (
    TABLE,
    load,
    open_db,
    snapshot,
    sql,
    write_dir,
)


@pytest.fixture(params=["postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "pg_url" if request.param == "postgresql" else "maria_url"
    url: str = request.getfixturevalue(name)
    return url


# `none` so the same DDL files run on both engines; PostgreSQL's default is covered elsewhere.
NONE = TransactionMode.NONE

FILES = {
    "0000000001_users.up.sql": "CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100));\n",
    "0000000002_orders.up.sql": "CREATE TABLE orders (id INT PRIMARY KEY, user_id INT);\n",
    "0000000003_index.up.sql": "CREATE INDEX orders_user ON orders (user_id);\n",
}


async def _status(url: str, path: Path) -> Status:
    db = await open_db(url)
    try:
        status, _ = await read_status(db, load(path), TABLE)
        return status
    finally:
        await db.close()


async def _up(url: str, path: Path, mode: TransactionMode | None = NONE) -> RunResult:
    db = await open_db(url)
    try:
        return await apply(db, load(path), table=TABLE, mode=mode)
    finally:
        await db.close()


@pytest.mark.req("MIG-33", "MIG-62", "MIG-09")
async def test_empty_database_reads_ready_and_writes_nothing(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    before = await snapshot(db_url)
    status = await _status(db_url, path)
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (1, 2, 3)
    assert status.current_version is None
    assert not status.revision_table_exists
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-08", "MIG-35", "RUN-01")
async def test_after_apply_nothing_pending(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    result = await _up(db_url, path)
    assert result.outcome is Outcome.APPLIED
    assert result.applied_versions == [1, 2, 3]
    status = await _status(db_url, path)
    assert status.verdict is Verdict.NOTHING_PENDING
    assert (status.current_version, status.applied_count, status.pending_count) == (3, 3, 0)
    assert all(r.execution_millis is not None for r in status.revisions)
    again = await _up(db_url, path)
    assert again.outcome is Outcome.UP_TO_DATE


@pytest.mark.req("MIG-37", "MIG-40")
async def test_file_edited_after_it_ran_reads_modified(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _up(db_url, path)
    (path / "0000000002_orders.up.sql").write_text(
        "CREATE TABLE orders (id INT PRIMARY KEY, user_id BIGINT);\n"
    )
    status = await _status(db_url, path)
    assert status.verdict is Verdict.MODIFIED
    assert status.modified_versions == (2,)
    before = await snapshot(db_url)
    result = await _up(db_url, path)
    assert (result.outcome, result.reason, result.selected) == (
        Outcome.FAILED,
        "HistoryModified",
        False,
    )
    assert await snapshot(db_url) == before
    # Fixing the artifact is enough: nothing needs waiting for.
    (path / "0000000002_orders.up.sql").write_text(FILES["0000000002_orders.up.sql"])
    assert (await _status(db_url, path)).verdict is Verdict.NOTHING_PENDING


@pytest.mark.req("MIG-38", "MIG-50")
async def test_late_merged_lower_version_reads_out_of_order(db_url: str, tmp_path: Path) -> None:
    files = {
        "0000000001_users.up.sql": FILES["0000000001_users.up.sql"],
        "0000000003_audit.up.sql": "CREATE TABLE audit (id INT);\n",
    }
    path = write_dir(tmp_path / "m", files)
    await _up(db_url, path)
    write_dir(path, {"0000000002_orders.up.sql": FILES["0000000002_orders.up.sql"]})
    write_dir(path, {"0000000004_more.up.sql": "CREATE TABLE more_t (id INT);\n"})
    status = await _status(db_url, path)
    assert status.verdict is Verdict.OUT_OF_ORDER
    assert status.out_of_order_versions == (2,)
    assert status.pending_versions == (2, 4)
    before = await snapshot(db_url)
    result = await _up(db_url, path)
    assert (result.outcome, result.reason) == (Outcome.FAILED, "HistoryOutOfOrder")
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-39")
async def test_older_artifact_reads_ahead_naming_both_versions(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _up(db_url, path)
    (path / "0000000003_index.up.sql").unlink()
    status = await _status(db_url, path)
    assert status.verdict is Verdict.AHEAD
    assert (status.current_version, status.artifact_version) == (3, 2)
    assert status.ahead_versions == (3,)
    before = await snapshot(db_url)
    result = await _up(db_url, path)
    assert (result.outcome, result.reason) == (Outcome.FAILED, "HistoryAhead")
    assert "3" in result.message
    assert "2" in result.message
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-36", "MIG-43")
async def test_failed_file_reads_dirty_and_blocks(db_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            **FILES,
            "0000000004_broken.up.sql": "CREATE TABLE t4 (id INT);\nSELECT * FROM missing_table;\n",
        },
    )
    result = await _up(db_url, path)
    assert result.outcome is Outcome.PARTIAL
    status = await _status(db_url, path)
    assert status.verdict is Verdict.DIRTY
    (row,) = status.dirty
    assert (row.version, row.statements_applied, row.statements_total) == (4, 1, 2)
    assert row.error_class in {"42P01", "1146"}
    before = await snapshot(db_url)
    again = await _up(db_url, path)
    assert (again.outcome, again.reason, again.selected) == (Outcome.FAILED, "HistoryDirty", False)
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-33", "MIG-34", "MIG-59", "MIG-60")
async def test_checkpoint_bootstrap_on_an_empty_database(db_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {
            **FILES,
            "0000000004_all.checkpoint.up.sql": FILES["0000000001_users.up.sql"]
            + FILES["0000000002_orders.up.sql"]
            + FILES["0000000003_index.up.sql"],
            "0000000005_extra.up.sql": "CREATE TABLE extra (id INT);\n",
        },
    )
    status = await _status(db_url, path)
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (4, 5)  # five files, two pending: not a subtraction
    assert status.checkpoint_version == 4
    assert status.covered_versions == (1, 2, 3)
    result = await _up(db_url, path)
    assert (result.outcome, result.applied_versions) == (Outcome.APPLIED, [4, 5])
    status = await _status(db_url, path)
    assert status.verdict is Verdict.NOTHING_PENDING
    assert (status.checkpoint_version, status.checkpoint_applied) == (4, True)
    assert status.applied_count == 5
    assert status.pending_count == 0
    assert [r.version for r in status.revisions] == [4, 5]
    # A later file is the only thing pending; covered versions never come back.
    write_dir(path, {"0000000006_later.up.sql": "CREATE TABLE later_t (id INT);\n"})
    status = await _status(db_url, path)
    assert (status.verdict, status.pending_versions) == (Verdict.READY, (6,))


@pytest.mark.req("MIG-61")
async def test_database_past_the_checkpoint_ignores_it(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _up(db_url, path)
    write_dir(
        path,
        {
            "0000000004_all.checkpoint.up.sql": "CREATE TABLE never_run (id INT);\n",
            "0000000005_extra.up.sql": "CREATE TABLE extra (id INT);\n",
        },
    )
    status = await _status(db_url, path)
    assert status.verdict is Verdict.READY
    assert status.pending_versions == (5,)
    assert status.ignored_checkpoint_versions == (4,)
    result = await _up(db_url, path)
    assert result.applied_versions == [5]
    assert (await _status(db_url, path)).verdict is Verdict.NOTHING_PENDING


@pytest.mark.req("MIG-35")
async def test_older_revision_table_is_read_and_upgraded(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    checksum = load(path).by_version[1].checksum
    ts = "TIMESTAMPTZ" if db_url.startswith("postgres") else "DATETIME"
    await sql(
        db_url,
        "CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100))",
        f"CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, description VARCHAR(255),"
        f" state VARCHAR(16) NOT NULL, checksum CHAR(64) NOT NULL, applied_at {ts})",
        f"INSERT INTO schema_migrations VALUES (1, 'users', 'applied', '{checksum}', NULL)",
    )
    status = await _status(db_url, path)
    assert status.verdict is Verdict.READY
    (row,) = status.revisions
    assert row.execution_millis is None
    assert row.statements_applied is None
    result = await _up(db_url, path)
    assert result.applied_versions == [2, 3]
    status = await _status(db_url, path)
    assert status.verdict is Verdict.NOTHING_PENDING
    old, *new = status.revisions
    assert old.execution_millis is None
    assert all(r.execution_millis is not None for r in new)


@pytest.mark.req("MIG-33")
async def test_history_fingerprint_moves_with_the_table(db_url: str, tmp_path: Path) -> None:
    path = write_dir(tmp_path / "m", FILES)
    empty = (await _status(db_url, path)).history_fingerprint
    await _up(db_url, path)
    first = (await _status(db_url, path)).history_fingerprint
    assert first != empty
    assert (await _status(db_url, path)).history_fingerprint == first


@pytest.mark.req("MIG-54", "MIG-57")
async def test_postgres_default_file_mode_lands_whole(pg_url: str, tmp_path: Path) -> None:
    path = write_dir(
        tmp_path / "m",
        {"0000000001_two.up.sql": "CREATE TABLE a (id INT);\nCREATE TABLE b (id INT);\n"},
    )
    result = await _up(pg_url, path, mode=None)
    assert (result.outcome, result.transaction_mode) == (Outcome.APPLIED, TransactionMode.FILE)
