"""MariaDB 10.11: a MODIFY COLUMN loses nothing the server holds for the column; FULLTEXT and
SPATIAL indexes; foreign keys around a type change (errno 1832/1833 otherwise)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiomysql
import pytest

from ptah_operator.engine.schema.connection import parse_url

from .schema_roundtrip import converge, execute, plan_for, write_desired


async def fetch(url: str, sql: str) -> list[tuple[Any, ...]]:
    target = parse_url(url)
    conn = await aiomysql.connect(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password or "",
        db=target.database,
        autocommit=True,
    )
    try:
        async with conn.cursor() as cur:
            await cur.execute(sql)
            return list(await cur.fetchall())
    finally:
        conn.close()


async def show_create(url: str, table: str) -> str:
    return str((await fetch(url, f"SHOW CREATE TABLE `{table}`"))[0][1])


STAMPED = (
    "CREATE TABLE t (id int PRIMARY KEY, updated_at timestamp NOT NULL "
    "DEFAULT current_timestamp() ON UPDATE current_timestamp(){comment});"
)
ON_UPDATE = "ON UPDATE current_timestamp()"


@pytest.mark.req("SCH-58")
async def test_mariadb_a_comment_change_keeps_on_update(maria_url: str, tmp_path: Path) -> None:
    await execute(maria_url, STAMPED.format(comment=" COMMENT 'when'"))
    applied = await converge(maria_url, tmp_path, STAMPED.format(comment=" COMMENT 'last change'"))
    assert [s.severity.value for s in applied.statements] == ["safe"]
    assert "ON UPDATE CURRENT_TIMESTAMP()" in applied.statements[0].sql
    created = await show_create(maria_url, "t")
    assert ON_UPDATE in created
    assert "COMMENT 'last change'" in created


@pytest.mark.req("SCH-58")
async def test_mariadb_on_update_the_database_lacks_is_planned(
    maria_url: str, tmp_path: Path
) -> None:
    await execute(
        maria_url,
        "CREATE TABLE t (id int PRIMARY KEY, updated_at timestamp NOT NULL "
        "DEFAULT current_timestamp())",
    )
    applied = await converge(maria_url, tmp_path, STAMPED.format(comment=""))
    assert [s.reason for s in applied.statements] == [
        "change column t.updated_at: ON UPDATE changes"
    ]
    assert ON_UPDATE in await show_create(maria_url, "t")
    # And taken away again when the desired schema no longer says it.
    await converge(
        maria_url,
        tmp_path,
        "CREATE TABLE t (id int PRIMARY KEY, updated_at timestamp NOT NULL "
        "DEFAULT current_timestamp());",
    )
    assert "ON UPDATE" not in await show_create(maria_url, "t")


# Everything MODIFY COLUMN must restate, on columns a person made by hand.
ZOO = """
CREATE TABLE z (
  id int PRIMARY KEY,
  u2 datetime(3) DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3),
  latin varchar(10) CHARACTER SET latin1,
  bin varchar(10) COLLATE utf8mb4_bin,
  secret int INVISIBLE,
  twice int AS (id * 2) VIRTUAL,
  thrice int AS (id * 3) PERSISTENT,
  place geometry REF_SYSTEM_ID=4326,
  positive int CHECK (positive > 0)
)
"""

# The same columns, each with a comment more.
ZOO_COMMENTED = """
CREATE TABLE z (
  id int PRIMARY KEY,
  u2 datetime(3) DEFAULT current_timestamp(3) ON UPDATE current_timestamp(3) COMMENT 'c1',
  latin varchar(10) CHARACTER SET latin1 COMMENT 'c2',
  bin varchar(10) COLLATE utf8mb4_bin COMMENT 'c3',
  secret int INVISIBLE COMMENT 'c4',
  twice int AS (id * 2) VIRTUAL COMMENT 'c5',
  thrice int AS (id * 3) STORED COMMENT 'c6',
  place geometry REF_SYSTEM_ID=4326 COMMENT 'c7',
  positive int COMMENT 'c8' CHECK (positive > 0)
);
"""


@pytest.mark.req("SCH-58")
async def test_mariadb_comment_changes_restate_every_column_attribute(
    maria_url: str, tmp_path: Path
) -> None:
    await execute(maria_url, ZOO)
    before = await show_create(maria_url, "z")
    # The schema as written converges with what the server made of it: nothing to plan.
    assert (await plan_for(maria_url, write_desired(tmp_path, ZOO + ";"))).statements == []
    applied = await converge(maria_url, tmp_path, ZOO_COMMENTED)
    assert {s.severity.value for s in applied.statements} == {"safe"}
    assert len(applied.statements) == 8
    after = await show_create(maria_url, "z")
    assert after.replace(" COMMENT 'c", "") != after
    for kept in (
        "ON UPDATE current_timestamp(3)",
        "CHARACTER SET latin1 COLLATE latin1_swedish_ci",
        "COLLATE utf8mb4_bin",
        "INVISIBLE",
        "GENERATED ALWAYS AS (`id` * 2) VIRTUAL",
        "GENERATED ALWAYS AS (`id` * 3) STORED",
        "CHECK (`positive` > 0)",
    ):
        assert kept in before
        assert kept in after, kept
    rows = await fetch(
        maria_url,
        "SELECT G_GEOMETRY_COLUMN, SRID FROM information_schema.GEOMETRY_COLUMNS "
        "WHERE G_TABLE_SCHEMA = DATABASE()",
    )
    assert [tuple(r) for r in rows] == [("place", 4326)]
    checks = await fetch(
        maria_url,
        "SELECT CONSTRAINT_NAME, LEVEL FROM information_schema.CHECK_CONSTRAINTS "
        "WHERE CONSTRAINT_SCHEMA = DATABASE()",
    )
    assert [tuple(r) for r in checks] == [("positive", "Column")]


ZOO_HCL = """
table "z" {
  column "id" { type = int }
  column "u2" {
    type      = datetime(3)
    default   = sql("CURRENT_TIMESTAMP(3)")
    on_update = sql("CURRENT_TIMESTAMP(3)")
  }
  column "latin" {
    type    = varchar(10)
    charset = "latin1"
  }
  column "bin" {
    type    = varchar(10)
    collate = "utf8mb4_bin"
  }
  column "secret" {
    type      = int
    invisible = true
  }
  column "twice" {
    type = int
    as {
      expr = "id * 2"
      type = VIRTUAL
    }
  }
  column "thrice" {
    type = int
    as { expr = "id * 3" }
  }
  column "place" {
    type = geometry
    srid = 4326
  }
  column "positive" { type = int }
  primary_key { columns = [column.id] }
  check "positive" { expr = "positive > 0" }
}
"""


@pytest.mark.req("SCH-58")
async def test_mariadb_column_attributes_from_hcl_converge(maria_url: str, tmp_path: Path) -> None:
    await converge(maria_url, tmp_path, ZOO_HCL, suffix=".hcl")
    # What HCL made, the SQL above says too.
    assert (await plan_for(maria_url, write_desired(tmp_path, ZOO + ";"))).statements == []


CHARSETS = """
CREATE TABLE c (
  id int PRIMARY KEY,
  a varchar(10) CHARACTER SET latin1,
  b varchar(10) CHARACTER SET utf8,
  c varchar(10) COLLATE utf8mb4_general_ci,
  d varchar(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci,
  e varchar(10)
);
"""


@pytest.mark.req("SCH-58")
async def test_mariadb_character_sets_converge_against_the_server_defaults(
    maria_url: str, tmp_path: Path
) -> None:
    await converge(maria_url, tmp_path, CHARSETS)
    created = await show_create(maria_url, "c")
    assert "`a` varchar(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci" in created
    assert "`b` varchar(10) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci" in created
    # Spelled as the server spells it, the same columns plan nothing.
    spelled = (
        CHARSETS.replace("CHARACTER SET latin1", "COLLATE latin1_swedish_ci")
        .replace("CHARACTER SET utf8,", "CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci,")
        .replace(" COLLATE utf8mb4_general_ci", "")
    )
    assert (await plan_for(maria_url, write_desired(tmp_path, spelled))).statements == []
    # A column converted to another set is a destructive change.
    converted = await plan_for(
        maria_url,
        write_desired(
            tmp_path, CHARSETS.replace("e varchar(10)", "e varchar(10) CHARACTER SET latin1")
        ),
    )
    assert [(s.severity.value, s.sql) for s in converted.statements] == [
        (
            "destructive",
            "ALTER TABLE `c` MODIFY COLUMN `e` varchar(10) CHARACTER SET `latin1` "
            "COLLATE `latin1_swedish_ci` NULL",
        )
    ]


@pytest.mark.req("SCH-58")
async def test_mariadb_new_tables_with_spatial_columns_converge(
    maria_url: str, tmp_path: Path
) -> None:
    applied = await converge(
        maria_url,
        tmp_path,
        "CREATE TABLE s (id int PRIMARY KEY, p point NOT NULL REF_SYSTEM_ID=4326, "
        "a polygon, g geometry NOT NULL, SPATIAL KEY s_p (p)); CREATE SPATIAL INDEX s_g ON s (g);",
    )
    assert not any("MODIFY COLUMN" in s.sql for s in applied.statements)
    created = await show_create(maria_url, "s")
    assert "`p` point NOT NULL" in created
    assert "`a` polygon DEFAULT NULL" in created
    assert "SPATIAL KEY `s_p` (`p`)" in created


TEXTS = "CREATE TABLE d (id int PRIMARY KEY, title varchar(200), body text, {});"


@pytest.mark.req("SCH-58")
async def test_mariadb_fulltext_indexes(maria_url: str, tmp_path: Path) -> None:
    await execute(maria_url, TEXTS.format("FULLTEXT KEY d_ft (title, body)").rstrip(";"))
    # An existing FULLTEXT index that the desired one matches plans nothing, however written.
    for same in (
        TEXTS.format("FULLTEXT KEY d_ft (title, body)"),
        TEXTS.format("FULLTEXT INDEX d_ft (title, body)"),
        TEXTS.format("KEY d_x (id)").replace(", KEY d_x (id)", "")
        + " CREATE FULLTEXT INDEX d_ft ON d (title, body);",
    ):
        assert (await plan_for(maria_url, write_desired(tmp_path, same))).statements == []
    # A plain index of that name instead is a drop and a create, and back.
    plain = await converge(maria_url, tmp_path, TEXTS.format("KEY d_ft (title, body(20))"))
    assert [s.sql for s in plain.statements] == [
        "ALTER TABLE `d` DROP INDEX `d_ft`",
        "ALTER TABLE `d` ADD INDEX `d_ft` (`title`, `body`(20))",
    ]
    full = await converge(maria_url, tmp_path, TEXTS.format("FULLTEXT KEY d_ft (title, body)"))
    assert [s.sql for s in full.statements] == [
        "ALTER TABLE `d` DROP INDEX `d_ft`",
        "ALTER TABLE `d` ADD FULLTEXT INDEX `d_ft` (`title`, `body`)",
    ]
    assert "FULLTEXT KEY `d_ft` (`title`,`body`)" in await show_create(maria_url, "d")


LINKED = """
CREATE TABLE parent (id {0} PRIMARY KEY);
CREATE TABLE child (
  id int PRIMARY KEY,
  parent_id {0},
  CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE
);
"""


@pytest.mark.req("SCH-58")
async def test_mariadb_foreign_keys_around_a_type_change(maria_url: str, tmp_path: Path) -> None:
    await converge(maria_url, tmp_path, LINKED.format("int"))
    await execute(
        maria_url,
        "INSERT INTO parent VALUES (1), (2)",
        "INSERT INTO child VALUES (10, 1), (20, 2), (30, NULL)",
    )
    applied = await converge(maria_url, tmp_path, LINKED.format("bigint"))
    assert [s.sql.split(" ", 3)[3] for s in applied.statements] == [
        "DROP FOREIGN KEY `child_parent`",
        "MODIFY COLUMN `parent_id` bigint NULL",
        "MODIFY COLUMN `id` bigint NOT NULL",
        "ADD CONSTRAINT `child_parent` FOREIGN KEY (`parent_id`) REFERENCES `parent` (`id`) "
        "ON DELETE CASCADE ON UPDATE RESTRICT",
    ]
    assert {s.severity.value for s in applied.statements} == {"warning"}
    keys = await fetch(
        maria_url,
        "SELECT CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME, DELETE_RULE "
        "FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()",
    )
    assert [tuple(k) for k in keys] == [("child_parent", "child", "parent", "CASCADE")]
    types = await fetch(
        maria_url,
        "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = DATABASE() AND COLUMN_NAME IN ('id', 'parent_id') "
        "ORDER BY TABLE_NAME, COLUMN_NAME",
    )
    assert [tuple(t) for t in types] == [
        ("child", "id", "int(11)"),
        ("child", "parent_id", "bigint(20)"),
        ("parent", "id", "bigint(20)"),
    ]
    assert len(await fetch(maria_url, "SELECT * FROM child")) == 3


async def test_mariadb_checks_written_on_a_column_stay_the_columns(
    maria_url: str, tmp_path: Path
) -> None:
    # Found by the convergence harness: the engine made them table checks (CONSTRAINT_1),
    # where the same DDL run by hand makes each its column's own check, named after it.
    await converge(maria_url, tmp_path, "CREATE TABLE t (id int PRIMARY KEY, a int CHECK (a > 0));")
    await converge(
        maria_url,
        tmp_path,
        "CREATE TABLE t (id int PRIMARY KEY, a int CHECK (a > 0), b int CHECK (b < 9));",
    )
    checks = await fetch(
        maria_url,
        "SELECT CONSTRAINT_NAME, LEVEL FROM information_schema.CHECK_CONSTRAINTS "
        "WHERE CONSTRAINT_SCHEMA = DATABASE() ORDER BY CONSTRAINT_NAME",
    )
    assert [tuple(r) for r in checks] == [("a", "Column"), ("b", "Column")]
    # Replaced, then dropped: MariaDB refuses DROP CONSTRAINT of a column's own check
    # (errno 1091); restating the column does it.
    await converge(
        maria_url,
        tmp_path,
        "CREATE TABLE t (id int PRIMARY KEY, a int CHECK (a > 1), b int CHECK (b < 9));",
    )
    dropped = await converge(
        maria_url, tmp_path, "CREATE TABLE t (id int PRIMARY KEY, a int, b int CHECK (b < 9));"
    )
    assert [s.severity.value for s in dropped.statements] == ["destructive"]
    checks = await fetch(
        maria_url,
        "SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS "
        "WHERE CONSTRAINT_SCHEMA = DATABASE()",
    )
    assert [tuple(r) for r in checks] == [("b", "`b` < 9")]


async def test_mariadb_an_unnamed_key_keeps_its_index_around_a_type_change(
    maria_url: str, tmp_path: Path
) -> None:
    # Found by the convergence harness: MariaDB names the index of a key made without a name
    # after its first column; added again by name around a type change, the key took a new
    # index named after itself (`child_ibfk_1`), where the same DDL run by hand has `pid`.
    schema = (
        "CREATE TABLE parent (id {0} PRIMARY KEY); "
        "CREATE TABLE child (id int PRIMARY KEY, pid {0}, FOREIGN KEY (pid) REFERENCES parent (id));"
    )
    index_names = (
        "SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS "
        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'child'"
    )
    await converge(maria_url, tmp_path, schema.format("int"))
    assert sorted(r[0] for r in await fetch(maria_url, index_names)) == ["PRIMARY", "pid"]
    applied = await converge(maria_url, tmp_path, schema.format("bigint"))
    assert [s.sql.split(" ", 3)[3] for s in applied.statements] == [
        "DROP FOREIGN KEY `child_ibfk_1`",
        "DROP INDEX `pid`",
        "MODIFY COLUMN `pid` bigint NULL",
        "MODIFY COLUMN `id` bigint NOT NULL",
        "ADD INDEX `pid` (`pid`)",
        "ADD CONSTRAINT `child_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `parent` (`id`) "
        "ON DELETE RESTRICT ON UPDATE RESTRICT",
    ]
    assert sorted(r[0] for r in await fetch(maria_url, index_names)) == ["PRIMARY", "pid"]


async def test_mariadb_a_key_is_dropped_around_a_change_of_the_column_it_references(
    maria_url: str, tmp_path: Path
) -> None:
    # Only the referenced side changes (varchar(10) -> varchar(20); MariaDB lets a key join
    # strings of other lengths), and the server still refuses to change it under the key.
    schema = (
        "CREATE TABLE parent (code varchar({}) PRIMARY KEY);"
        "CREATE TABLE child (id int PRIMARY KEY, code varchar(10),"
        " CONSTRAINT child_code FOREIGN KEY (code) REFERENCES parent (code));"
    )
    await converge(maria_url, tmp_path, schema.format(10))
    await execute(maria_url, "INSERT INTO parent VALUES ('a')", "INSERT INTO child VALUES (1, 'a')")
    applied = await converge(maria_url, tmp_path, schema.format(20))
    assert applied.statements[0].sql.split(" ", 3)[3] == "DROP FOREIGN KEY `child_code`"
