"""A database another tool migrated, against real PostgreSQL and MariaDB.

golang-migrate and dbmate keep their history in `schema_migrations`, the name of Ptah's own
revision table, with another shape. Ptah must say whose table it is and refuse: never read it
as an empty or dirty history, never add its columns, never write a row.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.integration.engine.migrations.mig_support import ptah, snapshot, sql, write_dir

FILES = {
    "0000000001_users.up.sql": "CREATE TABLE users (id INT PRIMARY KEY);\n",
    "0000000002_orders.up.sql": "CREATE TABLE orders (id INT PRIMARY KEY);\n",
}
# As the tools create them (golang-migrate: database/postgres and database/mysql; dbmate:
# pkg/driver/postgres and pkg/driver/mysql), with the row they write after one migration.
GOLANG_MIGRATE = (
    "CREATE TABLE schema_migrations (version bigint not null primary key, dirty boolean not null)",
    "INSERT INTO schema_migrations (version, dirty) VALUES (1, false)",
)
DBMATE = (
    "CREATE TABLE schema_migrations (version varchar(128) primary key)",
    "INSERT INTO schema_migrations (version) VALUES ('20240101120000')",
)


@pytest.fixture(params=["postgresql", "mariadb"])
def db_url(request: pytest.FixtureRequest) -> str:
    name = "pg_url" if request.param == "postgresql" else "maria_url"
    url: str = request.getfixturevalue(name)
    return url


def _env() -> dict[str, str]:
    # The child runs this worktree's code, not the installed package.
    return {"PYTHONPATH": str(Path(__file__).resolve().parents[4]) + os.pathsep}


@pytest.mark.req("MIG-33")
@pytest.mark.parametrize(
    ("table", "tool"), [(GOLANG_MIGRATE, "golang-migrate"), (DBMATE, "dbmate")]
)
async def test_another_tools_schema_migrations_is_refused_and_left_untouched(
    db_url: str, tmp_path: Path, table: tuple[str, ...], tool: str
) -> None:
    await sql(db_url, *table)
    path = write_dir(tmp_path / "m", FILES)
    before = await snapshot(db_url)
    for command in ("status", "up", "set"):
        extra = ["--version", "1"] if command == "set" else []
        code, doc = ptah(
            command, "--db-url", db_url, "--migrations-dir", str(path), *extra, env=_env()
        )
        assert code == 3, (command, doc)
        reason = doc.get("reason") or doc["error"]["reason"]
        message = doc.get("message") or doc["error"]["message"]
        assert reason == "RevisionTableUnreadable", (command, doc)
        assert tool in message, (command, message)
        assert "revision table, not Ptah's" in message, (command, message)
        assert "selected" not in doc or doc["selected"] is False
    assert await snapshot(db_url) == before
    assert len(await sql(db_url, "SELECT * FROM schema_migrations")) == 1


async def test_a_table_of_no_known_shape_under_ptahs_name_is_refused_and_left_untouched(
    db_url: str, tmp_path: Path
) -> None:
    await sql(db_url, "CREATE TABLE schema_migrations (id INT PRIMARY KEY, note TEXT)")
    path = write_dir(tmp_path / "m", FILES)
    before = await snapshot(db_url)
    code, doc = ptah("up", "--db-url", db_url, "--migrations-dir", str(path), env=_env())
    assert (code, doc["reason"]) == (3, "RevisionTableUnreadable")
    assert "is not a Ptah revision table" in doc["message"]
    assert await snapshot(db_url) == before


@pytest.fixture
async def shadow_url(db_url: str) -> AsyncIterator[str]:
    """A second fresh database on the same server, for baseline's shadow."""
    name = "s_" + secrets.token_hex(6)
    pg = db_url.startswith("postgres")
    admin = urlunsplit(urlsplit(db_url)._replace(path="/postgres" if pg else "/mysql"))
    await sql(admin, f'CREATE DATABASE "{name}"' if pg else f"CREATE DATABASE `{name}`")
    yield urlunsplit(urlsplit(db_url)._replace(path=f"/{name}"))
    await sql(
        admin,
        f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        if pg
        else f"DROP DATABASE IF EXISTS `{name}`",
    )


@pytest.mark.req("MIG-67", "MIG-64")
async def test_a_golang_migrate_database_is_adopted_through_import_and_baseline(
    db_url: str, shadow_url: str, tmp_path: Path
) -> None:
    """The path the guide documents: import, drop the old table (after a copy), baseline."""
    src = write_dir(
        tmp_path / "golang-migrate",
        {
            "000001_users.up.sql": FILES["0000000001_users.up.sql"],
            "000001_users.down.sql": "DROP TABLE users;\n",
            "000002_orders_v2.0.up.sql": FILES["0000000002_orders.up.sql"],
        },
    )
    # The database as golang-migrate left it at version 2.
    await sql(db_url, FILES["0000000001_users.up.sql"], FILES["0000000002_orders.up.sql"])
    await sql(db_url, GOLANG_MIGRATE[0], "INSERT INTO schema_migrations VALUES (2, false)")
    out = tmp_path / "ptah"
    code, doc = ptah("import", "--from", "golang-migrate", str(src), "--out", str(out), env=_env())
    assert code == 0, doc

    await sql(db_url, "DROP TABLE schema_migrations")
    code, doc = ptah(
        "baseline",
        "--db-url",
        db_url,
        "--migrations-dir",
        str(out),
        "--shadow-db",
        shadow_url,
        env=_env(),
    )
    assert code == 0, doc
    assert doc["recordedVersions"] == [1, 2]
    code, doc = ptah("status", "--db-url", db_url, "--migrations-dir", str(out), env=_env())
    assert (code, doc["verdict"], doc["currentVersion"]) == (0, "NothingPending", 2)
