"""A person's commands against real PostgreSQL and MariaDB: repair, set and baseline."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from localstack.mariadb import MariaDBServer

from ptah_operator.engine.migrations.apply import Outcome, RunResult, TransactionMode, apply
from ptah_operator.engine.migrations.baseline import BaselineRefusedError, baseline
from ptah_operator.engine.migrations.maintenance import (
    MaintenanceRefusedError,
    RepairMark,
    repair,
    set_version,
)
from ptah_operator.engine.migrations.status import Status, Verdict, read_status
from tests.integration.engine.migrations.mig_support import (
    TABLE,
    load,
    open_db,
    ptah,
    snapshot,
    sql,
    write_dir,
)

NONE = TransactionMode.NONE

FILES = {
    "0000000001_users.up.sql": "CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100) NOT NULL);\n",
    "0000000002_orders.up.sql": "CREATE TABLE orders (id INT PRIMARY KEY, user_id INT,"
    " total DECIMAL(10, 2) DEFAULT 0);\n",
    "0000000003_index.up.sql": "CREATE INDEX orders_user ON orders (user_id);\n",
}


@pytest.fixture(params=["postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "pg_url" if request.param == "postgresql" else "maria_url"
    url: str = request.getfixturevalue(name)
    return url


def _admin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/postgres" if url.startswith("postgres") else "/mysql"))


@pytest.fixture
async def shadow_url(db_url: str) -> AsyncIterator[str]:
    """A second fresh database on the same server, for baseline's shadow."""
    name = "s_" + secrets.token_hex(6)
    admin = _admin(db_url)
    pg = db_url.startswith("postgres")
    await sql(admin, f'CREATE DATABASE "{name}"' if pg else f"CREATE DATABASE `{name}`")
    yield urlunsplit(urlsplit(db_url)._replace(path=f"/{name}"))
    await sql(
        admin,
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        if pg
        else f"DROP DATABASE IF EXISTS `{name}`",
    )


async def _up(url: str, path: Path) -> RunResult:
    db = await open_db(url)
    try:
        return await apply(db, load(path), table=TABLE, mode=NONE)
    finally:
        await db.close()


async def _status(url: str, path: Path) -> Status:
    db = await open_db(url)
    try:
        status, _ = await read_status(db, load(path), TABLE)
        return status
    finally:
        await db.close()


async def _dirty_at_3(url: str, path: Path) -> None:
    write_dir(
        path,
        {**FILES, "0000000003_index.up.sql": "CREATE TABLE t3 (id INT);\nSELECT * FROM nowhere;\n"},
    )
    result = await _up(url, path)
    assert result.outcome is Outcome.PARTIAL


@pytest.mark.req("MIG-36")
async def test_repair_marks_a_dirty_row_applied(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "m"
    await _dirty_at_3(db_url, path)
    (path / "0000000003_index.up.sql").write_text("CREATE TABLE t3 (id INT);\n")
    db = await open_db(db_url)
    try:
        result = await repair(db, load(path), table=TABLE, version=3, mark=RepairMark.APPLIED)
    finally:
        await db.close()
    assert [(c.version, c.change) for c in result.changes] == [(3, "markedApplied")]
    status = await _status(db_url, path)
    assert status.verdict is Verdict.NOTHING_PENDING
    assert status.revisions[-1].recorded_by == "repair"


@pytest.mark.req("MIG-36")
async def test_repair_pending_removes_the_row_so_the_file_runs_again(
    db_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "m"
    await _dirty_at_3(db_url, path)
    await sql(db_url, "DROP TABLE t3")
    code, doc = ptah(
        "repair",
        "--db-url",
        db_url,
        "--migrations-dir",
        str(path),
        "--version",
        "3",
        "--mark",
        "pending",
    )
    assert code == 0
    assert doc["contractVersion"] == 1
    assert doc["changes"] == [{"version": 3, "change": "removed"}]
    assert doc["status"]["verdict"] == "Ready"
    (path / "0000000003_index.up.sql").write_text(FILES["0000000003_index.up.sql"])
    assert (await _up(db_url, path)).outcome is Outcome.APPLIED


@pytest.mark.req("MIG-36")
async def test_repair_refuses_a_clean_version_and_changes_nothing(
    db_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _up(db_url, path)
    before = await snapshot(db_url)
    db = await open_db(db_url)
    try:
        with pytest.raises(MaintenanceRefusedError) as info:
            await repair(db, load(path), table=TABLE, version=2, mark=RepairMark.PENDING)
    finally:
        await db.close()
    assert info.value.reason == "NotDirty"
    assert await snapshot(db_url) == before
    code, doc = ptah(
        "repair",
        "--db-url",
        db_url,
        "--migrations-dir",
        str(path),
        "--version",
        "2",
        "--mark",
        "applied",
    )
    assert (code, doc["error"]["reason"]) == (3, "NotDirty")
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-36")
async def test_set_moves_the_boundary_without_running_sql(db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "m"
    await _dirty_at_3(db_url, path)
    write_dir(path, {"0000000004_four.up.sql": "CREATE TABLE never_runs (id INT);\n"})
    db = await open_db(db_url)
    try:
        result = await set_version(db, load(path), table=TABLE, version=4)
    finally:
        await db.close()
    assert [(c.version, c.change) for c in result.changes] == [
        (3, "markedApplied"),
        (4, "recorded"),
    ]
    status = await _status(db_url, path)
    assert (status.verdict, status.current_version) == (Verdict.NOTHING_PENDING, 4)
    four = status.revisions[-1]
    assert (four.recorded_by, four.execution_millis) == ("set", None)
    pg = db_url.startswith("postgres")
    exists = (
        "SELECT to_regclass('never_runs') IS NOT NULL"
        if pg
        else (
            "SELECT COUNT(*) FROM information_schema.TABLES"
            " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'never_runs'"
        )
    )
    assert (await sql(db_url, exists))[0][0] in (False, 0)
    code, doc = ptah("set", "--db-url", db_url, "--migrations-dir", str(path), "--version", "2")
    assert code == 0
    assert doc["changes"] == [
        {"version": 3, "change": "removed"},
        {"version": 4, "change": "removed"},
    ]
    assert doc["status"]["currentVersion"] == 2
    code, doc = ptah("set", "--db-url", db_url, "--migrations-dir", str(path), "--version", "99")
    assert (code, doc["error"]["reason"]) == (3, "UnknownVersion")


async def _build(url: str, statements: list[str]) -> None:
    await sql(url, *statements)


def _schema_statements() -> list[str]:
    return [text.strip().rstrip(";") for text in FILES.values()]


@pytest.mark.req("MIG-67", "MIG-68", "MIG-64", "MIG-70")
async def test_baseline_records_a_matching_schema(
    db_url: str, shadow_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _build(db_url, _schema_statements())
    await sql(db_url, "INSERT INTO users VALUES (7, 'kept@example.com')")
    await sql(shadow_url, "CREATE TABLE leftover (id INT)")
    before = await snapshot(db_url)
    code, doc = ptah(
        "baseline", "--db-url", db_url, "--migrations-dir", str(path), "--shadow-db", shadow_url
    )
    assert code == 0, doc
    assert doc["contractVersion"] == 1
    assert doc["recordedVersions"] == [1, 2, 3]
    assert doc["status"]["verdict"] == "NothingPending"
    assert doc["status"]["currentVersion"] == 3
    after = await snapshot(db_url)
    # Only the revision table is new; the application schema and its rows are as they were.
    assert {k: v for k, v in after["catalog"].items() if "schema_migrations" not in k} == before[
        "catalog"
    ]
    assert {k: v for k, v in after["data"].items() if "schema_migrations" not in k} == before[
        "data"
    ]
    status = await _status(db_url, path)
    assert all(r.recorded_by == "baseline" and r.execution_millis is None for r in status.revisions)
    # The shadow was emptied before the replay: what was there before is gone.
    shadow_catalog = (await snapshot(shadow_url))["catalog"]
    assert not any("leftover" in key for key in shadow_catalog)


@pytest.mark.req("MIG-69")
async def test_baseline_refuses_a_mismatch_and_records_nothing(
    db_url: str, shadow_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", FILES)
    statements = _schema_statements()
    statements[1] = statements[1].replace("user_id INT", "user_id BIGINT")
    await _build(db_url, [*statements, "CREATE TABLE extra_in_target (id INT)"])
    before = await snapshot(db_url)
    db, shadow = await open_db(db_url), await open_db(shadow_url)
    try:
        with pytest.raises(BaselineRefusedError) as info:
            await baseline(db, shadow, load(path), table=TABLE)
    finally:
        await db.close()
        await shadow.close()
    assert info.value.reason == "SchemaMismatch"
    assert any("extra_in_target" in d for d in info.value.details)
    assert any("user_id" in d and d.startswith("differs") for d in info.value.details)
    assert await snapshot(db_url) == before
    code, doc = ptah(
        "baseline", "--db-url", db_url, "--migrations-dir", str(path), "--shadow-db", shadow_url
    )
    assert (code, doc["error"]["reason"]) == (3, "SchemaMismatch")
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-69")
async def test_baseline_refuses_a_database_with_history(
    db_url: str, shadow_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _up(db_url, path)
    before = await snapshot(db_url)
    code, doc = ptah(
        "baseline", "--db-url", db_url, "--migrations-dir", str(path), "--shadow-db", shadow_url
    )
    assert (code, doc["error"]["reason"]) == (3, "HistoryNotEmpty")
    code, doc = ptah(
        "baseline", "--db-url", db_url, "--migrations-dir", str(path), "--shadow-db", db_url
    )
    assert (code, doc["error"]["reason"]) == (3, "ShadowIsTarget")
    assert await snapshot(db_url) == before


@pytest.mark.req("MIG-71")
async def test_mariadb_shadow_user_needs_global_privileges(
    maria_server: MariaDBServer, maria_url: str, tmp_path: Path
) -> None:
    path = write_dir(tmp_path / "m", FILES)
    await _build(maria_url, _schema_statements())
    shadow_db = "s_" + secrets.token_hex(6)
    user = "u_" + secrets.token_hex(6)
    admin = maria_server.admin_url
    await sql(
        admin,
        f"CREATE DATABASE `{shadow_db}`",
        f"CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'pw'",
        f"GRANT ALL ON `{shadow_db}`.* TO '{user}'@'127.0.0.1'",
    )
    shadow_url = f"mysql://{user}:pw@127.0.0.1:{maria_server.port}/{shadow_db}"
    try:
        await sql(shadow_url, "CREATE TABLE must_survive (id INT)")
        before = await snapshot(maria_url)
        code, doc = ptah(
            "baseline",
            "--db-url",
            maria_url,
            "--migrations-dir",
            str(path),
            "--shadow-db",
            shadow_url,
        )
        assert (code, doc["error"]["reason"]) == (3, "ShadowPrivileges")
        assert "SHOW VIEW" in doc["error"]["message"]
        assert "pw" not in doc["error"]["message"]
        assert await snapshot(maria_url) == before
        assert "table must_survive" in (await snapshot(shadow_url))["catalog"]
        await sql(
            admin,
            "GRANT SELECT, DROP, ALTER, ALTER ROUTINE, EVENT, LOCK TABLES, PROCESS, SHOW VIEW"
            f" ON *.* TO '{user}'@'127.0.0.1'",
        )
        code, doc = ptah(
            "baseline",
            "--db-url",
            maria_url,
            "--migrations-dir",
            str(path),
            "--shadow-db",
            shadow_url,
        )
        assert code == 0, doc
        assert doc["recordedVersions"] == [1, 2, 3]
    finally:
        await sql(
            admin,
            f"DROP USER IF EXISTS '{user}'@'127.0.0.1'",
            f"DROP DATABASE IF EXISTS `{shadow_db}`",
        )


@pytest.mark.req("MIG-67", "MIG-59")
async def test_baseline_with_a_checkpoint_records_what_a_new_database_runs(
    db_url: str, shadow_url: str, tmp_path: Path
) -> None:
    files = {
        **FILES,
        "0000000004_all.checkpoint.up.sql": "".join(FILES.values()),
        "0000000005_more.up.sql": "ALTER TABLE users ADD COLUMN name VARCHAR(20);\n",
    }
    path = write_dir(tmp_path / "m", files)
    await _build(db_url, [*_schema_statements(), "ALTER TABLE users ADD COLUMN name VARCHAR(20)"])
    db, shadow = await open_db(db_url), await open_db(shadow_url)
    try:
        result = await baseline(db, shadow, load(path), table=TABLE)
    finally:
        await db.close()
        await shadow.close()
    assert result.recorded_versions == [4, 5]
    status = await _status(db_url, path)
    assert (status.verdict, status.checkpoint_version, status.applied_count) == (
        Verdict.NOTHING_PENDING,
        4,
        5,
    )
