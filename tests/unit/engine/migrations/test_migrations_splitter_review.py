"""MySQL compound statements: `begin`, `end` and `if` where they are not block words.

A BEGIN opens a block, and a bare END closes one, only where a statement can start; `END IF`,
`END CASE`, ... close only a block of that kind. Findings of a review of #12 item 3.
"""

from __future__ import annotations

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.apply import commits_implicitly
from ptah_operator.engine.splitter import split

MY = Dialect.MYSQL

EVENT_A = (
    "CREATE EVENT purge_a ON SCHEDULE EVERY 1 DAY DO DELETE FROM bookings"
    " WHERE begin < NOW() - INTERVAL 1 YEAR"
)
EVENT_B = "CREATE EVENT purge_b ON SCHEDULE EVERY 1 DAY DO DELETE FROM slots WHERE end < NOW()"
EVENT_C = "CREATE EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t WHERE begin < NOW()"
TRIGGER_SET = "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.x = (SELECT begin FROM u)"
PROC_END_COL = "CREATE PROCEDURE p() BEGIN UPDATE t SET end = NOW(); SELECT 1; END"
PROC_END_ALIAS = "CREATE PROCEDURE p() BEGIN SELECT a AS end FROM t; SELECT 1; END"
PROC_FOR_UPDATE = (
    "CREATE PROCEDURE p() BEGIN SELECT a FROM t ORDER BY CASE WHEN b THEN 1 END FOR UPDATE;"
    " SELECT 1; END"
)
TRIGGER_ROW_IF = (
    "CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW IF (NEW.a, NEW.b) = (1, 2) THEN"
    " SET NEW.c = 1; END IF"
)
PROC_ROW_IF = "CREATE PROCEDURE p() BEGIN IF (a, b) = (1, 2) THEN SELECT 1; SELECT 2; END IF; END"
HANDLER = (
    "CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR SQLSTATE '23000', 1062 BEGIN"
    " SET @e = 1; END; DECLARE EXIT HANDLER FOR NOT FOUND BEGIN END; SELECT 1; END"
)
FOLLOWS = "CREATE TRIGGER b BEFORE INSERT ON t FOR EACH ROW FOLLOWS a BEGIN SET NEW.x = 1; END"
FUNC_HEAD = (
    "CREATE FUNCTION f() RETURNS TEXT CHARACTER SET utf8mb4 NOT DETERMINISTIC"
    " SQL SECURITY INVOKER BEGIN RETURN 'x'; END"
)
NESTED = "CREATE PROCEDURE p() lbl: BEGIN IF 1 THEN BEGIN SELECT 1; END; END IF; END lbl"

# (name, text, expected statements)
CASES: list[tuple[str, str, list[str]]] = [
    (
        "event bodies using begin and end columns stay apart",
        f"{EVENT_A};\n{EVENT_B};\nCREATE TABLE z (a int);",
        [EVENT_A, EVENT_B, "CREATE TABLE z (a int)"],
    ),
    (
        "begin column, then an end column in the next statement",
        f"{EVENT_C};\nALTER TABLE a ADD COLUMN end int;",
        [EVENT_C, "ALTER TABLE a ADD COLUMN end int"],
    ),
    ("event body with a begin column", f"{EVENT_C};\nSELECT 1;", [EVENT_C, "SELECT 1"]),
    ("trigger body with a begin column", f"{TRIGGER_SET};\nSELECT 1;", [TRIGGER_SET, "SELECT 1"]),
    ("an end column in a body", f"{PROC_END_COL};\nSELECT 2;", [PROC_END_COL, "SELECT 2"]),
    ("an end alias in a body", f"{PROC_END_ALIAS};\nSELECT 2;", [PROC_END_ALIAS, "SELECT 2"]),
    ("CASE ... END FOR UPDATE", f"{PROC_FOR_UPDATE};\nSELECT 2;", [PROC_FOR_UPDATE, "SELECT 2"]),
    ("IF with a row comparison", f"{TRIGGER_ROW_IF};\nSELECT 2;", [TRIGGER_ROW_IF, "SELECT 2"]),
    ("IF with a row comparison in a body", f"{PROC_ROW_IF};\nSELECT 2;", [PROC_ROW_IF, "SELECT 2"]),
    ("handler bodies", f"{HANDLER};\nSELECT 2;", [HANDLER, "SELECT 2"]),
    ("trigger with FOLLOWS", f"{FOLLOWS};\nSELECT 2;", [FOLLOWS, "SELECT 2"]),
    ("function head words", f"{FUNC_HEAD};\nSELECT 2;", [FUNC_HEAD, "SELECT 2"]),
    ("labels and nested blocks", f"{NESTED};\nSELECT 2;", [NESTED, "SELECT 2"]),
]


@pytest.mark.req("MIG-49", "MIG-56")
@pytest.mark.parametrize(("name", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_split_block_words_in_statements(name: str, text: str, expected: list[str]) -> None:
    assert [s.text for s in split(text, MY)] == expected


@pytest.mark.req("MIG-55")
@pytest.mark.parametrize(
    "text",
    [
        "lbl: BEGIN NOT ATOMIC CREATE TABLE x (a int); END",
        "`my lbl` : LOOP CREATE TABLE x (a int); LEAVE `my lbl`; END LOOP",
    ],
)
def test_a_labelled_compound_statement_commits_implicitly(text: str) -> None:
    (statement,) = split(text, MY)
    assert commits_implicitly(statement)
