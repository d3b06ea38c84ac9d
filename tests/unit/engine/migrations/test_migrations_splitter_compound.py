"""MySQL/MariaDB compound statements without DELIMITER, and quoted DELIMITER arguments.

A routine body (`CREATE PROCEDURE | FUNCTION | TRIGGER | EVENT ... BEGIN ... END`) and a
MariaDB compound statement outside a routine (`BEGIN NOT ATOMIC`, `IF`, `CASE`, loops) are one
statement, cut where the same text with `DELIMITER //` around it would be cut.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.splitter import SplitError, split

MY = Dialect.MYSQL

PROC = (
    "CREATE PROCEDURE p(IN n INT)\nBEGIN\n  DECLARE i INT DEFAULT 0;\n  SET i = i + n;\n"
    "  SELECT i;\nEND"
)

# (name, text, expected statements)
CASES: list[tuple[str, str, list[str]]] = [
    ("procedure body", PROC + ";\nSELECT 2;", [PROC, "SELECT 2"]),
    ("procedure body, no trailing semicolon", PROC, [PROC]),
    (
        "definer with backticks",
        "CREATE DEFINER=`root`@`%` PROCEDURE p() BEGIN SELECT 1; SELECT 2; END;\nSELECT 3",
        ["CREATE DEFINER=`root`@`%` PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "SELECT 3"],
    ),
    (
        "definer with quotes and unquoted",
        "CREATE DEFINER='app'@'localhost' PROCEDURE a() BEGIN SELECT 1; END;\n"
        "CREATE DEFINER=app@localhost PROCEDURE b() BEGIN SELECT 1; END;\n"
        "CREATE DEFINER = CURRENT_USER() PROCEDURE c() BEGIN SELECT 1; END;",
        [
            "CREATE DEFINER='app'@'localhost' PROCEDURE a() BEGIN SELECT 1; END",
            "CREATE DEFINER=app@localhost PROCEDURE b() BEGIN SELECT 1; END",
            "CREATE DEFINER = CURRENT_USER() PROCEDURE c() BEGIN SELECT 1; END",
        ],
    ),
    (
        "create or replace, if not exists",
        "CREATE OR REPLACE PROCEDURE a() BEGIN SELECT 1; END; "
        "CREATE PROCEDURE IF NOT EXISTS b() BEGIN SELECT 1; END; SELECT 2",
        [
            "CREATE OR REPLACE PROCEDURE a() BEGIN SELECT 1; END",
            "CREATE PROCEDURE IF NOT EXISTS b() BEGIN SELECT 1; END",
            "SELECT 2",
        ],
    ),
    (
        "function with characteristics",
        "CREATE FUNCTION f(a INT) RETURNS VARCHAR(10) CHARSET utf8mb4 DETERMINISTIC"
        " READS SQL DATA COMMENT 'x; y' BEGIN DECLARE r VARCHAR(10); SET r = 'a;b';"
        " RETURN r; END;SELECT f(1)",
        [
            "CREATE FUNCTION f(a INT) RETURNS VARCHAR(10) CHARSET utf8mb4 DETERMINISTIC"
            " READS SQL DATA COMMENT 'x; y' BEGIN DECLARE r VARCHAR(10); SET r = 'a;b';"
            " RETURN r; END",
            "SELECT f(1)",
        ],
    ),
    (
        "function whose body is one statement ends at its semicolon",
        "CREATE FUNCTION f() RETURNS INT RETURN 1; SELECT f();",
        ["CREATE FUNCTION f() RETURNS INT RETURN 1", "SELECT f()"],
    ),
    (
        "one-statement function with a CASE expression",
        "CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC RETURN CASE WHEN a > 0 THEN 1"
        " ELSE 0 END; SELECT 2",
        [
            "CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC RETURN CASE WHEN a > 0 THEN 1"
            " ELSE 0 END",
            "SELECT 2",
        ],
    ),
    (
        "loadable function (SONAME) is one plain statement",
        "CREATE AGGREGATE FUNCTION g RETURNS INTEGER SONAME 'g.so'; SELECT 1",
        ["CREATE AGGREGATE FUNCTION g RETURNS INTEGER SONAME 'g.so'", "SELECT 1"],
    ),
    (
        "trigger with BEGIN",
        "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = 1;"
        " SET NEW.b = 2; END; INSERT INTO x VALUES (1)",
        [
            "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = 1;"
            " SET NEW.b = 2; END",
            "INSERT INTO x VALUES (1)",
        ],
    ),
    (
        "trigger whose body is one statement",
        "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = IF(NEW.a < 0, 0, NEW.a);"
        " SELECT 1",
        [
            "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = IF(NEW.a < 0, 0, NEW.a)",
            "SELECT 1",
        ],
    ),
    (
        "trigger whose body is an IF without BEGIN",
        "CREATE TRIGGER t BEFORE UPDATE ON x FOR EACH ROW FOLLOWS u IF NEW.a < 0 THEN"
        " SET NEW.a = 0; END IF; SELECT 1",
        [
            "CREATE TRIGGER t BEFORE UPDATE ON x FOR EACH ROW FOLLOWS u IF NEW.a < 0 THEN"
            " SET NEW.a = 0; END IF",
            "SELECT 1",
        ],
    ),
    (
        "event with BEGIN",
        "CREATE EVENT e ON SCHEDULE EVERY 1 DAY STARTS '2026-01-01 00:00:00' ENDS"
        " '2027-01-01' DO BEGIN DELETE FROM t WHERE end_date < NOW(); OPTIMIZE TABLE t; END;"
        "\nSELECT 1",
        [
            "CREATE EVENT e ON SCHEDULE EVERY 1 DAY STARTS '2026-01-01 00:00:00' ENDS"
            " '2027-01-01' DO BEGIN DELETE FROM t WHERE end_date < NOW(); OPTIMIZE TABLE t; END",
            "SELECT 1",
        ],
    ),
    (
        "event whose body is one statement",
        "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t WHERE t.end < NOW(); SELECT 1",
        [
            "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t WHERE t.end < NOW()",
            "SELECT 1",
        ],
    ),
    (
        "alter event with BEGIN",
        "ALTER EVENT e DO BEGIN SELECT 1; SELECT 2; END; SELECT 3",
        ["ALTER EVENT e DO BEGIN SELECT 1; SELECT 2; END", "SELECT 3"],
    ),
    (
        "nested blocks and labels",
        "CREATE PROCEDURE p() outer_block: BEGIN inner_block: BEGIN SELECT 1; LEAVE inner_block;"
        " END inner_block; SELECT 2; END outer_block; SELECT 3",
        [
            "CREATE PROCEDURE p() outer_block: BEGIN inner_block: BEGIN SELECT 1;"
            " LEAVE inner_block; END inner_block; SELECT 2; END outer_block",
            "SELECT 3",
        ],
    ),
    (
        "IF ... ELSEIF ... ELSE ... END IF and ELSE IF nesting",
        "CREATE PROCEDURE p(a INT) BEGIN IF a = 1 THEN SELECT 1; ELSEIF a = 2 THEN SELECT 2;"
        " ELSE IF a = 3 THEN SELECT 3; END IF; END IF; SELECT 4; END; SELECT 5",
        [
            "CREATE PROCEDURE p(a INT) BEGIN IF a = 1 THEN SELECT 1; ELSEIF a = 2 THEN SELECT 2;"
            " ELSE IF a = 3 THEN SELECT 3; END IF; END IF; SELECT 4; END",
            "SELECT 5",
        ],
    ),
    (
        "IF( function versus IF (condition) statement",
        "CREATE PROCEDURE p(a INT) BEGIN SET @x = IF(a > 0, 'y', 'n'); IF (a > 0) THEN"
        " SELECT IF (a, 1, 2); END IF; IF(a < 0) THEN SELECT 0; END IF; END; SELECT 1",
        [
            "CREATE PROCEDURE p(a INT) BEGIN SET @x = IF(a > 0, 'y', 'n'); IF (a > 0) THEN"
            " SELECT IF (a, 1, 2); END IF; IF(a < 0) THEN SELECT 0; END IF; END",
            "SELECT 1",
        ],
    ),
    (
        "IF NOT EXISTS statement versus DDL IF [NOT] EXISTS",
        "CREATE PROCEDURE m() BEGIN IF NOT EXISTS (SELECT * FROM information_schema.columns"
        " WHERE table_name = 't' AND column_name = 'c') THEN ALTER TABLE t ADD COLUMN c INT;"
        " END IF; DROP TABLE IF EXISTS old; CREATE TABLE IF NOT EXISTS n (a INT);"
        " ALTER TABLE t ADD COLUMN IF NOT EXISTS d INT, DROP INDEX IF EXISTS k;"
        " IF EXISTS (SELECT 1) THEN SELECT 1; END IF; END; CALL m()",
        [
            "CREATE PROCEDURE m() BEGIN IF NOT EXISTS (SELECT * FROM information_schema.columns"
            " WHERE table_name = 't' AND column_name = 'c') THEN ALTER TABLE t ADD COLUMN c INT;"
            " END IF; DROP TABLE IF EXISTS old; CREATE TABLE IF NOT EXISTS n (a INT);"
            " ALTER TABLE t ADD COLUMN IF NOT EXISTS d INT, DROP INDEX IF EXISTS k;"
            " IF EXISTS (SELECT 1) THEN SELECT 1; END IF; END",
            "CALL m()",
        ],
    ),
    (
        "CASE statement with a CASE expression inside",
        "CREATE PROCEDURE p(a INT) BEGIN CASE a WHEN 1 THEN SET @x = CASE WHEN a > 0 THEN 1"
        " ELSE 2 END; WHEN 2 THEN SELECT (CASE a WHEN 2 THEN 'b' END); ELSE BEGIN END;"
        " END CASE; END; SELECT 1",
        [
            "CREATE PROCEDURE p(a INT) BEGIN CASE a WHEN 1 THEN SET @x = CASE WHEN a > 0 THEN 1"
            " ELSE 2 END; WHEN 2 THEN SELECT (CASE a WHEN 2 THEN 'b' END); ELSE BEGIN END;"
            " END CASE; END",
            "SELECT 1",
        ],
    ),
    (
        "loops",
        "CREATE PROCEDURE p() BEGIN DECLARE i INT DEFAULT 0; l1: LOOP SET i = i + 1;"
        " IF i > 3 THEN LEAVE l1; END IF; END LOOP l1; REPEAT SET i = i - 1; UNTIL i = 0"
        " END REPEAT; WHILE i < 2 DO SET i = i + 1; END WHILE; SELECT REPEAT('a;', 2); END;"
        " SELECT 1",
        [
            "CREATE PROCEDURE p() BEGIN DECLARE i INT DEFAULT 0; l1: LOOP SET i = i + 1;"
            " IF i > 3 THEN LEAVE l1; END IF; END LOOP l1; REPEAT SET i = i - 1; UNTIL i = 0"
            " END REPEAT; WHILE i < 2 DO SET i = i + 1; END WHILE; SELECT REPEAT('a;', 2); END",
            "SELECT 1",
        ],
    ),
    (
        "MariaDB FOR loop, cursor FOR and FOR UPDATE",
        "CREATE PROCEDURE p() BEGIN DECLARE c CURSOR FOR SELECT a FROM t WHERE a IN (1, 2);"
        " FOR i IN 1..3 DO SELECT i FOR UPDATE; END FOR; FOR r IN c DO SELECT r.a; END FOR;"
        " END; SELECT 1",
        [
            "CREATE PROCEDURE p() BEGIN DECLARE c CURSOR FOR SELECT a FROM t WHERE a IN (1, 2);"
            " FOR i IN 1..3 DO SELECT i FOR UPDATE; END FOR; FOR r IN c DO SELECT r.a; END FOR;"
            " END",
            "SELECT 1",
        ],
    ),
    (
        "handler with a block",
        "CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN"
        " ROLLBACK; RESIGNAL; END; DECLARE EXIT HANDLER FOR 1062 SET @dup = 1;"
        " START TRANSACTION; INSERT INTO t VALUES (1); COMMIT; END; SELECT 1",
        [
            "CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN"
            " ROLLBACK; RESIGNAL; END; DECLARE EXIT HANDLER FOR 1062 SET @dup = 1;"
            " START TRANSACTION; INSERT INTO t VALUES (1); COMMIT; END",
            "SELECT 1",
        ],
    ),
    (
        "keywords inside strings, comments and identifiers",
        "CREATE PROCEDURE p() BEGIN SELECT 'END; END IF' AS \"begin; end\", `begin`, `end`;"
        " -- END;\n # END;\n /* END; */ SELECT end_date, begin_at, t.end, x.begin FROM t;"
        " SET @end = 1, @begin = 2; SELECT MAX(end) FROM t; SELECT 'it\\'s; END' ; END;"
        " SELECT 1",
        [
            "CREATE PROCEDURE p() BEGIN SELECT 'END; END IF' AS \"begin; end\", `begin`, `end`;"
            " -- END;\n # END;\n /* END; */ SELECT end_date, begin_at, t.end, x.begin FROM t;"
            " SET @end = 1, @begin = 2; SELECT MAX(end) FROM t; SELECT 'it\\'s; END' ; END",
            "SELECT 1",
        ],
    ),
    (
        "executable comments inside and around",
        "CREATE PROCEDURE p() BEGIN SELECT /*!40001 SQL_NO_CACHE */ 1; /*!50003 SELECT 2; */"
        " END; /*!40101 SET NAMES utf8mb4 */; SELECT 3",
        [
            "CREATE PROCEDURE p() BEGIN SELECT /*!40001 SQL_NO_CACHE */ 1; /*!50003 SELECT 2; */"
            " END",
            "/*!40101 SET NAMES utf8mb4 */",
            "SELECT 3",
        ],
    ),
    (
        "mysqldump's versioned IF NOT EXISTS on a table is plain",
        "CREATE /*!32312 IF NOT EXISTS*/ TABLE t (a INT); SELECT 1",
        ["CREATE /*!32312 IF NOT EXISTS*/ TABLE t (a INT)", "SELECT 1"],
    ),
    (
        "a routine inside an executable comment",
        "/*!50003 CREATE PROCEDURE p() BEGIN SELECT 1; END */; SELECT 2",
        ["/*!50003 CREATE PROCEDURE p() BEGIN SELECT 1; END */", "SELECT 2"],
    ),
    (
        "CASE expressions inside function calls",
        "CREATE FUNCTION f(a INT) RETURNS INT BEGIN RETURN COALESCE(CASE WHEN a THEN (1)"
        " END, 0) + (SELECT CASE a WHEN 1 THEN 2 END); END; SELECT 1",
        [
            "CREATE FUNCTION f(a INT) RETURNS INT BEGIN RETURN COALESCE(CASE WHEN a THEN (1)"
            " END, 0) + (SELECT CASE a WHEN 1 THEN 2 END); END",
            "SELECT 1",
        ],
    ),
    (
        "CRLF line endings and DELIMITER",
        "CREATE PROCEDURE p()\r\nBEGIN\r\n  SELECT 1;\r\nEND;\r\nDELIMITER //\r\nSELECT 2//\r\n",
        ["CREATE PROCEDURE p()\r\nBEGIN\r\n  SELECT 1;\r\nEND", "SELECT 2"],
    ),
    (
        "mysqldump-style versioned trigger head",
        "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`%`*/ /*!50003 TRIGGER t BEFORE INSERT ON x"
        " FOR EACH ROW */ BEGIN SET NEW.a = 1; SET NEW.b = 2; END; SELECT 1",
        [
            "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`%`*/ /*!50003 TRIGGER t BEFORE INSERT ON x"
            " FOR EACH ROW */ BEGIN SET NEW.a = 1; SET NEW.b = 2; END",
            "SELECT 1",
        ],
    ),
    (
        "END followed by semicolon versus END IF on the next line",
        "CREATE PROCEDURE p(a INT) BEGIN IF a THEN SELECT 1; END\nIF; END\n;\nSELECT 2",
        ["CREATE PROCEDURE p(a INT) BEGIN IF a THEN SELECT 1; END\nIF; END", "SELECT 2"],
    ),
    (
        "transaction BEGIN outside routines splits",
        "BEGIN; INSERT INTO t VALUES (1); COMMIT; BEGIN WORK; SELECT 1; ROLLBACK;",
        ["BEGIN", "INSERT INTO t VALUES (1)", "COMMIT", "BEGIN WORK", "SELECT 1", "ROLLBACK"],
    ),
    (
        "XA BEGIN splits",
        "XA BEGIN 'x'; INSERT INTO t VALUES (1); XA END 'x'; XA PREPARE 'x'; XA COMMIT 'x';",
        [
            "XA BEGIN 'x'",
            "INSERT INTO t VALUES (1)",
            "XA END 'x'",
            "XA PREPARE 'x'",
            "XA COMMIT 'x'",
        ],
    ),
    (
        "MariaDB BEGIN NOT ATOMIC outside routines",
        "BEGIN NOT ATOMIC DECLARE x INT; SET x = 1; SELECT x; END; SELECT 2",
        ["BEGIN NOT ATOMIC DECLARE x INT; SET x = 1; SELECT x; END", "SELECT 2"],
    ),
    (
        "MariaDB IF, CASE, WHILE, REPEAT and FOR outside routines",
        "IF @a THEN SELECT 1; ELSE SELECT 2; END IF; CASE @a WHEN 1 THEN SELECT 1; END CASE;"
        " WHILE @a < 3 DO SET @a = @a + 1; END WHILE; REPEAT SET @a = 1; UNTIL 1 END REPEAT;"
        " FOR i IN 1..2 DO SET @b = i; END FOR; SELECT 3",
        [
            "IF @a THEN SELECT 1; ELSE SELECT 2; END IF",
            "CASE @a WHEN 1 THEN SELECT 1; END CASE",
            "WHILE @a < 3 DO SET @a = @a + 1; END WHILE",
            "REPEAT SET @a = 1; UNTIL 1 END REPEAT",
            "FOR i IN 1..2 DO SET @b = i; END FOR",
            "SELECT 3",
        ],
    ),
    (
        # MariaDB 10.11 refuses labels outside stored programs; cut as DELIMITER would cut.
        "a labelled block outside routines is one statement",
        "l: LOOP LEAVE l; END LOOP; SELECT 3",
        ["l: LOOP LEAVE l; END LOOP", "SELECT 3"],
    ),
    (
        "plain statements with keywords split as before",
        "SELECT CASE WHEN 1 THEN 2 END; UPDATE t SET a = IF(b, 1, 2); SELECT `end`, begin_x"
        " FROM t WHERE x IN (1); CREATE TABLE IF NOT EXISTS t (a INT); DROP VIEW IF EXISTS v",
        [
            "SELECT CASE WHEN 1 THEN 2 END",
            "UPDATE t SET a = IF(b, 1, 2)",
            "SELECT `end`, begin_x FROM t WHERE x IN (1)",
            "CREATE TABLE IF NOT EXISTS t (a INT)",
            "DROP VIEW IF EXISTS v",
        ],
    ),
    (
        "views and tables created with DEFINER are plain",
        "CREATE ALGORITHM=MERGE DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW v AS SELECT"
        " CASE WHEN 1 THEN 2 END AS c; SELECT 1",
        [
            "CREATE ALGORITHM=MERGE DEFINER=`root`@`%` SQL SECURITY DEFINER VIEW v AS SELECT"
            " CASE WHEN 1 THEN 2 END AS c",
            "SELECT 1",
        ],
    ),
    (
        "lower case and a parameter named like a keyword",
        "create procedure p(in `end` int, in begin int) begin select 1 as x; end; select 1",
        ["create procedure p(in `end` int, in begin int) begin select 1 as x; end", "select 1"],
    ),
    (
        "the same routine with DELIMITER",
        "DELIMITER //\n" + PROC + "//\nDELIMITER ;\nSELECT 2;",
        [PROC, "SELECT 2"],
    ),
    (
        "a custom delimiter ends the statement whatever the blocks",
        "DELIMITER $$\nCREATE PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END IF; END$$\n"
        "DELIMITER ;\nCREATE PROCEDURE q() BEGIN SELECT 2; END;",
        [
            "CREATE PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END IF; END",
            "CREATE PROCEDURE q() BEGIN SELECT 2; END",
        ],
    ),
    (
        "a DELIMITER line after a routine without a semicolon",
        "CREATE PROCEDURE p() BEGIN SELECT 1; END\nDELIMITER //\nSELECT 2//",
        ["CREATE PROCEDURE p() BEGIN SELECT 1; END", "SELECT 2"],
    ),
    # Quoted DELIMITER arguments lose their quotes, as the mariadb client does (checked
    # against mariadb 10.11's client: a doubled quote is one quote, a backslash escapes).
    (
        "delimiter in single quotes",
        "delimiter '//'\nSELECT 1//\nSELECT 2//",
        ["SELECT 1", "SELECT 2"],
    ),
    ("DELIMITER in double quotes", 'DELIMITER "$$"\nSELECT 1$$\n', ["SELECT 1"]),
    ("DELIMITER in backticks", "DELIMITER `;;`\nSELECT 1;;\n", ["SELECT 1"]),
    ("doubled quote in a quoted DELIMITER", "DELIMITER 'a''b'\nSELECT 1 a'b", ["SELECT 1"]),
    ("backslash escape in a quoted DELIMITER", "DELIMITER 'a\\'b'\nSELECT 1 a'b", ["SELECT 1"]),
    ("text after a quoted DELIMITER is ignored", "DELIMITER 'x'y\nSELECT 1 x", ["SELECT 1"]),
    ("text after a DELIMITER is ignored", "DELIMITER // -- c\nSELECT 1//", ["SELECT 1"]),
    ("a quote inside a DELIMITER", "DELIMITER \"'\"\nSELECT 1'", ["SELECT 1"]),
]


@pytest.mark.req("MIG-49", "MIG-56")
@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_split_compound(name: str, text: str, expected: list[str]) -> None:
    assert [s.text for s in split(text, MY)] == expected


def test_statement_line_of_a_routine_and_the_next() -> None:
    statements = split("-- h\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\nEND;\n\nSELECT 2;", MY)
    assert [s.line for s in statements] == [2, 7]
    assert statements[0].keywords[:2] == ("CREATE", "PROCEDURE")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("CREATE PROCEDURE p() BEGIN SELECT 1;", "compound statement"),
        ("CREATE PROCEDURE p() BEGIN IF 1 THEN SELECT 1; END IF;", "compound statement"),
        ("IF @a THEN SELECT 1; END WHILE;", "compound statement"),
        ("BEGIN NOT ATOMIC SELECT 1;\nDELIMITER //\nSELECT 2//", "compound statement"),
        ("DELIMITER '//\nSELECT 1;", "quoted delimiter"),
        ("DELIMITER ''\nSELECT 1;", "empty delimiter"),
        ("DELIMITER\nSELECT 1;", "empty delimiter"),
        ("DELIMITER '\\\\'\nSELECT 1;", "delimiter with a backslash"),
    ],
)
def test_refused(text: str, what: str) -> None:
    with pytest.raises(SplitError) as info:
        split(text, MY)
    assert info.value.what == what


# A small grammar of routine bodies: every statement the splitter must keep whole.
_simple = st.sampled_from(
    [
        "SELECT 1",
        "SELECT 'a;b' AS `end`",
        'SET @x = "END; IF"',
        "SET @y = IF(@x > 0, 1, 2)",
        "SELECT CASE WHEN @x THEN 'then;' ELSE 2 END",
        "SELECT end_date FROM t WHERE t.begin < 1 -- END;\n",
        "DROP TABLE IF EXISTS t /* END; */",
        "INSERT INTO t VALUES (REPEAT('x;', 2))",
        "SELECT 1 # END IF;\n",
    ]
)


def _body(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    block = st.lists(children, min_size=1, max_size=3).map(lambda xs: "; ".join(xs) + ";")
    return st.one_of(
        block.map(lambda b: f"BEGIN {b} END"),
        block.map(lambda b: f"lbl: BEGIN {b} END lbl"),
        block.map(lambda b: f"IF @x THEN {b} ELSEIF @y THEN {b} ELSE {b} END IF"),
        block.map(lambda b: f"IF NOT EXISTS (SELECT 1) THEN {b} END IF"),
        block.map(lambda b: f"CASE @x WHEN 1 THEN {b} ELSE {b} END CASE"),
        block.map(lambda b: f"WHILE @x < 1 DO {b} END WHILE"),
        block.map(lambda b: f"l2: LOOP {b} LEAVE l2; END LOOP l2"),
        block.map(lambda b: f"REPEAT {b} UNTIL 1 END REPEAT"),
        block.map(lambda b: f"FOR i IN 1..2 DO {b} END FOR"),
    )


_statement_in_body = st.recursive(_simple, _body, max_leaves=8)
_top = st.one_of(
    _simple,
    st.lists(_statement_in_body, min_size=1, max_size=3).map(
        lambda xs: "CREATE PROCEDURE p() BEGIN " + "; ".join(xs) + "; END"
    ),
    _statement_in_body.map(
        lambda s: "CREATE DEFINER=`a`@`%` TRIGGER t BEFORE INSERT ON x FOR EACH ROW " + s
    ),
    st.just("CREATE FUNCTION f() RETURNS INT RETURN 1"),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_top, min_size=1, max_size=5))
def test_split_of_joined_routines_gives_the_parts(parts: list[str]) -> None:
    text = ";\n".join(parts) + ";\n"
    assert [s.text for s in split(text, MY)] == [p.strip() for p in parts]
    delimited = "DELIMITER //\n" + "//\n".join(parts) + "//\nDELIMITER ;\n"
    assert [s.text for s in split(delimited, MY)] == [p.strip() for p in parts]
