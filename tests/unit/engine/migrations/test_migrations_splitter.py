"""Statement splitting, table-driven, with the cases that break naive splitters."""

from __future__ import annotations

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.splitter import SplitError, leading_keywords, split

PG = Dialect.POSTGRESQL
MY = Dialect.MYSQL

CASES: list[tuple[str, Dialect, str, list[str]]] = [
    ("two plain statements", PG, "SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
    ("no trailing semicolon", PG, "SELECT 1;\nSELECT 2", ["SELECT 1", "SELECT 2"]),
    ("empty statements dropped", PG, ";;  ;\nSELECT 1;;", ["SELECT 1"]),
    ("comment-only tail dropped", PG, "SELECT 1;\n-- the end\n/* bye */\n", ["SELECT 1"]),
    ("semicolon in string", PG, "SELECT 'a;b'; SELECT 2", ["SELECT 'a;b'", "SELECT 2"]),
    ("doubled quote", PG, "SELECT 'it''s; fine'; SELECT 2", ["SELECT 'it''s; fine'", "SELECT 2"]),
    (
        "backslash is literal in standard strings",
        PG,
        "SELECT 'C:\\'; SELECT 2",
        ["SELECT 'C:\\'", "SELECT 2"],
    ),
    (
        "E string backslash escape",
        PG,
        "SELECT E'a\\';b'; SELECT 2",
        ["SELECT E'a\\';b'", "SELECT 2"],
    ),
    (
        "lowercase e string after a space",
        PG,
        "SELECT e'\\'';SELECT 2",
        ["SELECT e'\\''", "SELECT 2"],
    ),
    (
        "an identifier ending in e is not an E string",
        PG,
        "SELECT date'2020-01-01'; SELECT 2",
        ["SELECT date'2020-01-01'", "SELECT 2"],
    ),
    (
        "quoted identifier",
        PG,
        'SELECT 1 AS "a;b""c"; SELECT 2',
        ['SELECT 1 AS "a;b""c"', "SELECT 2"],
    ),
    (
        "line comment",
        PG,
        "SELECT 1 -- no; split\n; SELECT 2",
        ["SELECT 1 -- no; split", "SELECT 2"],
    ),
    (
        "nested block comment",
        PG,
        "SELECT /* a /* b; */ c; */ 1; SELECT 2",
        ["SELECT /* a /* b; */ c; */ 1", "SELECT 2"],
    ),
    (
        "dollar quoted body",
        PG,
        "CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END $$ LANGUAGE plpgsql; SELECT 2",
        [
            "CREATE FUNCTION f() RETURNS int AS $$ BEGIN RETURN 1; END $$ LANGUAGE plpgsql",
            "SELECT 2",
        ],
    ),
    (
        "tagged dollar quote holding $$",
        PG,
        "DO $fn$ BEGIN PERFORM '$$;'; END $fn$; SELECT 2",
        ["DO $fn$ BEGIN PERFORM '$$;'; END $fn$", "SELECT 2"],
    ),
    (
        "dollar quote with a different inner tag",
        PG,
        "SELECT $a$ x $b$ ; $b$ y $a$; SELECT 2",
        ["SELECT $a$ x $b$ ; $b$ y $a$", "SELECT 2"],
    ),
    (
        "positional parameter is not a dollar quote",
        PG,
        "SELECT $1; SELECT 2",
        ["SELECT $1", "SELECT 2"],
    ),
    (
        "dollar inside an identifier",
        PG,
        "SELECT a$b$ FROM t; SELECT 2",
        ["SELECT a$b$ FROM t", "SELECT 2"],
    ),
    (
        "BEGIN ATOMIC body",
        PG,
        "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN"
        " true THEN 1 END; END; SELECT 2",
        [
            "CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN"
            " true THEN 1 END; END",
            "SELECT 2",
        ],
    ),
    (
        "CREATE OR REPLACE PROCEDURE with BEGIN ATOMIC",
        PG,
        "CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC INSERT INTO t VALUES (1); END;"
        "\nSELECT 2;",
        [
            "CREATE OR REPLACE PROCEDURE p() LANGUAGE sql BEGIN ATOMIC INSERT INTO t VALUES (1); END",
            "SELECT 2",
        ],
    ),
    (
        "BEGIN as a transaction statement splits",
        PG,
        "BEGIN; SELECT 1; COMMIT;",
        ["BEGIN", "SELECT 1", "COMMIT"],
    ),
    ("mysql backslash escape", MY, "SELECT 'a\\';b'; SELECT 2", ["SELECT 'a\\';b'", "SELECT 2"]),
    (
        "mysql double-quoted string",
        MY,
        'SELECT "x;\\"y"; SELECT 2',
        ['SELECT "x;\\"y"', "SELECT 2"],
    ),
    ("mysql backtick", MY, "SELECT 1 AS `a;``b`; SELECT 2", ["SELECT 1 AS `a;``b`", "SELECT 2"]),
    (
        "mysql hash comment",
        MY,
        "SELECT 1 # no; split\n; SELECT 2",
        ["SELECT 1 # no; split", "SELECT 2"],
    ),
    (
        "mysql dash comment needs a space",
        MY,
        "SELECT 1-- 1;\n; SELECT 2",
        ["SELECT 1-- 1;", "SELECT 2"],
    ),
    ("mysql 1--1 is arithmetic", MY, "SELECT 1--1; SELECT 2", ["SELECT 1--1", "SELECT 2"]),
    ("mysql block comment", MY, "SELECT /* ; */ 1; SELECT 2", ["SELECT /* ; */ 1", "SELECT 2"]),
    (
        "mysql DELIMITER block",
        MY,
        "DELIMITER $$\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END$$\nDELIMITER ;\nSELECT 3;",
        ["CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END", "SELECT 3"],
    ),
    (
        "mysql DELIMITER // with trigger and string holding the delimiter",
        MY,
        "delimiter //\nCREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = '//';"
        " END //\ndelimiter ;\nSELECT 1",
        [
            "CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW BEGIN SET NEW.a = '//'; END",
            "SELECT 1",
        ],
    ),
    (
        "mysql the word delimiter mid-line is not a command",
        MY,
        "SELECT 'delimiter $$' AS delimiter; SELECT 2",
        ["SELECT 'delimiter $$' AS delimiter", "SELECT 2"],
    ),
    (
        "dollar quotes mean nothing to mysql",
        MY,
        "SELECT '$$'; SELECT $$ ;",
        ["SELECT '$$'", "SELECT $$"],
    ),
    (
        "mysql executable comment",
        MY,
        "/*!40101 SET NAMES utf8mb4 */; SELECT 2",
        ["/*!40101 SET NAMES utf8mb4 */", "SELECT 2"],
    ),
]


@pytest.mark.req("MIG-49")
@pytest.mark.parametrize(("name", "dialect", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_split(name: str, dialect: Dialect, text: str, expected: list[str]) -> None:
    assert [s.text for s in split(text, dialect)] == expected


@pytest.mark.parametrize(
    ("dialect", "text", "what"),
    [
        (PG, "SELECT 'open", "string"),
        (PG, 'SELECT "open', "quoted identifier"),
        (PG, "SELECT $$ open", "dollar-quoted string"),
        (PG, "SELECT /* /* */ 1", "block comment"),
        (MY, "SELECT 'open\\'", "string"),
        (MY, "SELECT /* open", "block comment"),
        (MY, "SELECT `open", "quoted identifier"),
    ],
)
def test_unterminated_refused(dialect: Dialect, text: str, what: str) -> None:
    with pytest.raises(SplitError) as info:
        split(text, dialect)
    assert info.value.what == what


def test_statement_lines_and_keywords() -> None:
    statements = split(
        "-- header\n\nCREATE TABLE a (id int);\n\n/* x */ insert into a values (1);", PG
    )
    assert [s.line for s in statements] == [3, 5]
    assert statements[0].keywords[:2] == ("CREATE", "TABLE")
    assert statements[1].keywords[:2] == ("INSERT", "INTO")


def test_leading_keywords_read_into_mysql_executable_comment() -> None:
    assert leading_keywords("/*!50003 CREATE TRIGGER x */", MY)[:2] == ("CREATE", "TRIGGER")
    assert leading_keywords("# c\n-- c\nALTER TABLE t", MY)[:2] == ("ALTER", "TABLE")
