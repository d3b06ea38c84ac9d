"""A database another tool migrated, against real PostgreSQL and MariaDB.

golang-migrate and dbmate keep their history in `schema_migrations`, the name of Ptah's own
revision table, with another shape. Ptah must say whose table it is and refuse: never read it
as an empty or dirty history, never add its columns, never write a row.
"""

from __future__ import annotations

import os
from pathlib import Path

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
