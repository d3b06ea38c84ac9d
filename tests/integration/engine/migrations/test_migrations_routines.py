"""MySQL routines written as teams write them, applied on real MariaDB by `ptah migrations up`:
without `DELIMITER` lines (as golang-migrate sends a file in one request) and with them, in
transaction mode `none`, then called, so a body cut short anywhere would show."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.connection import DatabaseError
from ptah_operator.engine.splitter import split
from tests.integration.engine.migrations.mig_support import open_db, ptah, sql, write_dir

TABLES = """CREATE TABLE counters (name VARCHAR(20) PRIMARY KEY, n INT NOT NULL DEFAULT 0,
  end_date DATE NULL);
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(100));
"""

# No DELIMITER anywhere: each routine is one statement all the same.
WITHOUT_DELIMITER = """-- routines as another tool's directory holds them
CREATE DEFINER=CURRENT_USER PROCEDURE bump(IN who VARCHAR(20), IN times INT)
    MODIFIES SQL DATA
    COMMENT 'adds; END IF'
main: BEGIN
  DECLARE i INT DEFAULT 0;
  DECLARE CONTINUE HANDLER FOR 1062 BEGIN
    UPDATE counters SET n = n + 100 WHERE name = 'dup;';
  END;
  IF times IS NULL OR times < 0 THEN
    LEAVE main;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM counters WHERE name = who) THEN
    INSERT INTO counters (name, n) VALUES (who, 0);
  END IF;
  counting: WHILE i < times DO
    SET i = i + 1;
    UPDATE counters SET n = n + IF(i > 0, 1, 0) WHERE name = who;  # IF( is a function; END;
  END WHILE counting;
  REPEAT
    SET i = i - 1;
  UNTIL i <= 0 END REPEAT;
  l: LOOP
    SET i = i + 1;
    IF i >= 2 THEN LEAVE l; END IF;
  END LOOP l;
  FOR k IN 1..2 DO
    UPDATE counters SET n = n + 10 WHERE name = who;
  END FOR;
  CASE
    WHEN times > 100 THEN UPDATE counters SET n = 0 WHERE name = who;
    ELSE UPDATE counters SET end_date = CASE WHEN times = 3 THEN '2026-01-03' ELSE NULL END
      WHERE name = who;
  END CASE;
  /* the last statement: a body cut short never reaches it; */
  INSERT INTO audit (note) VALUES (CONCAT('bump ', who, '; END'));
END main;

CREATE FUNCTION grade(score INT) RETURNS VARCHAR(10) CHARSET utf8mb4 DETERMINISTIC
BEGIN
  DECLARE g VARCHAR(10);
  SET g = CASE WHEN score >= 90 THEN 'A;' WHEN score >= 50 THEN 'B' ELSE 'C' END;
  IF score < 0 THEN
    RETURN 'none';
  ELSEIF score > 100 THEN
    RETURN 'over';
  END IF;
  RETURN CONCAT(g, '!');
END;

CREATE FUNCTION one() RETURNS INT DETERMINISTIC RETURN 1;

CREATE TRIGGER audit_note BEFORE INSERT ON audit FOR EACH ROW
BEGIN
  IF NEW.note IS NULL THEN
    SET NEW.note = 'none;END';
  END IF;
END;

CREATE TRIGGER counters_floor BEFORE UPDATE ON counters FOR EACH ROW
  IF NEW.n < 0 THEN SET NEW.n = 0; END IF;

CREATE EVENT IF NOT EXISTS tidy ON SCHEDULE EVERY 1 DAY DISABLE
DO BEGIN
  DELETE FROM audit WHERE note = 'x;';
  UPDATE counters SET n = n WHERE name = 'END';
END;

BEGIN NOT ATOMIC
  DECLARE x INT DEFAULT 3;
  INSERT INTO audit (note) VALUES (CONCAT('atomic ', x));
END;

IF (SELECT COUNT(*) FROM counters WHERE name = 'seed') = 0 THEN
  INSERT INTO counters (name, n) VALUES ('seed', 7);
END IF;
"""

WITH_DELIMITER = """DELIMITER //
CREATE PROCEDURE bump2(IN who VARCHAR(20))
BEGIN
  IF NOT EXISTS (SELECT 1 FROM counters WHERE name = who) THEN
    INSERT INTO counters (name, n) VALUES (who, 0);
  END IF;
  UPDATE counters SET n = n + 2 WHERE name = who;
  INSERT INTO audit (note) VALUES ('bump2; END');
END//
DELIMITER ;
delimiter '$$'
CREATE FUNCTION twice(a INT) RETURNS INT DETERMINISTIC
BEGIN
  RETURN a * 2;
END$$
DELIMITER ;;
CREATE TRIGGER audit_len BEFORE INSERT ON audit FOR EACH ROW
BEGIN
  IF CHAR_LENGTH(NEW.note) > 90 THEN SET NEW.note = LEFT(NEW.note, 90); END IF;
END;;
DELIMITER ;
INSERT INTO counters (name, n) VALUES ('delimited', twice(4));
"""


@pytest.mark.req("MIG-56", "MIG-49")
async def test_routines_with_and_without_delimiter_apply_whole(
    maria_url: str, tmp_path: Path
) -> None:
    files = {
        "0000000001_tables.up.sql": TABLES,
        "0000000002_routines.up.sql": WITHOUT_DELIMITER,
        "0000000003_delimited.up.sql": WITH_DELIMITER,
    }
    assert len(split(WITHOUT_DELIMITER, Dialect.MYSQL)) == 8
    assert len(split(WITH_DELIMITER, Dialect.MYSQL)) == 4
    path = write_dir(tmp_path / "m", files)
    args = ("--db-url", maria_url, "--migrations-dir", str(path), "--transaction-mode", "none")
    code, doc = ptah("up", *args)
    assert (code, doc["outcome"], doc["appliedVersions"]) == (0, "Applied", [1, 2, 3]), doc

    db = await open_db(maria_url)
    try:
        await db.execute("CALL bump('a', 3)")
        await db.execute("CALL bump('a', -1)")  # leaves `main` at once
        await db.execute("CALL bump2('b')")
        await db.execute("INSERT INTO audit (note) VALUES (NULL)")
        await db.execute("UPDATE counters SET n = -5 WHERE name = 'b'")
        _, rows = await db.fetch("SELECT grade(95), grade(10), grade(101), one(), twice(21)")
        assert rows == [("A;!", "C!", "over", 1, 42)]
        _, rows = await db.fetch("SELECT name, n, end_date FROM counters ORDER BY name")
        assert rows == [
            ("a", 23, datetime.date(2026, 1, 3)),
            ("b", 0, None),
            ("delimited", 8, None),
            ("seed", 7, None),
        ]
        _, rows = await db.fetch("SELECT note FROM audit ORDER BY id")
        assert [r[0] for r in rows] == ["atomic 3", "bump a; END", "bump2; END", "none;END"]
        _, rows = await db.fetch(
            "SELECT EVENT_DEFINITION FROM information_schema.EVENTS WHERE EVENT_NAME = 'tidy'"
        )
        assert "name = 'END'" in rows[0][0]
    finally:
        await db.close()

    code, doc = ptah("up", *args)
    assert (code, doc["outcome"]) == (0, "UpToDate"), doc
    code, doc = ptah("status", "--db-url", maria_url, "--migrations-dir", str(path))
    assert (code, doc["verdict"]) == (0, "NothingPending"), doc
    assert await sql(maria_url, "SELECT COUNT(*) FROM information_schema.ROUTINES"
                     " WHERE ROUTINE_SCHEMA = DATABASE()") == [(5,)]  # fmt: skip


@pytest.mark.req("MIG-56")
async def test_one_statement_per_request_except_a_batch(maria_url: str) -> None:
    """A single execute is one statement: were two ever merged into one text, the server
    refuses it (1064) instead of running both. File mode's batch still sends the whole file in
    one request, and single requests refuse again after it."""
    db = await open_db(maria_url)
    try:
        with pytest.raises(DatabaseError) as info:
            await db.execute("SELECT 1;\nSELECT 2")
        assert info.value.error_class.mysql_errno == 1064
        await db.execute_batch([("SET @a = 1", None), ("SET @b = @a + 1", None)])
        _, rows = await db.fetch("SELECT @b")
        assert rows == [(2,)]
        with pytest.raises(DatabaseError):
            await db.execute("SET @c = 1; SET @d = 2")
    finally:
        await db.close()
