"""The forms a large golang-migrate/morph history (about 120 files per engine) is written in,
each as a fixture of our own in the same form: routines without DELIMITER whose header and
first declarations share a line, PREPARE/EXECUTE inside a routine body, labelled loops left
with LEAVE, cursors and handlers, a string followed by a comment inside a statement, calls
indented after END, a file of only a comment; PostgreSQL DO blocks with labels, a dollar
quote inside another, `DO $$ ... $$ LANGUAGE plpgsql`, and a last statement with no `;`.

Each case gives the statements the splitter must cut, as (how it starts, how it ends).
"""

from __future__ import annotations

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.splitter import split

MY = Dialect.MYSQL
PG = Dialect.POSTGRESQL

MY_ONE_LINE_HEADER = (
    "CREATE PROCEDURE Fill () BEGIN DECLARE a_seen INT; DECLARE b_seen INT;\n"
    "SELECT COUNT(*) FROM information_schema.columns\n"
    "WHERE table_name = 'Box' AND column_name = 'A' INTO a_seen;\n"
    "SET @n := 0;\n"
    "\tIF(a_seen = 1) THEN\n"
    "\t\tSELECT @n := COUNT(*)\n\t\tFROM Box WHERE A IS NULL;\n"
    "END IF;\n\n"
    "SET @stmt =\n  (SELECT IF((SELECT COUNT(*) FROM information_schema.columns\n"
    "    WHERE table_name = 'Box' AND column_name = 'B') > 0, 'SELECT 1',"
    " 'ALTER TABLE Box ADD COLUMN B int;'));\n\n"
    "PREPARE addIfMissing FROM @stmt;\nEXECUTE addIfMissing;\nDEALLOCATE PREPARE addIfMissing;\n\n"
    "IF(@n > 0) THEN\nUPDATE Box SET B = 1;\nEND IF;\n\nEND;\n\n"
    "CALL Fill ();\n\nDROP PROCEDURE IF EXISTS Fill;\n"
)

MY_LABELLED_LOOP = (
    "CREATE PROCEDURE Trim()\nBEGIN\n    trimRows: LOOP\n        -- a note; with a semicolon\n"
    "        UPDATE Box \n            SET A = REGEXP_REPLACE(A, 'x([[:space:]]|$)', '')\n"
    "            WHERE A like '%x%'\n            LIMIT 100;\n\n"
    "          -- done?    \n          IF  ROW_COUNT() < 100 THEN\n"
    "              LEAVE trimRows;\n          END IF;    \n    END LOOP trimRows;\nEND;\n\n"
    "CALL Trim();\nDROP PROCEDURE IF EXISTS Trim;"
)

MY_CURSOR = (
    "CREATE PROCEDURE Walk()\nBEGIN\n    DECLARE finished INTEGER DEFAULT 0;\n"
    "    DECLARE cur_a VARCHAR(26);\n\n    DECLARE rows_c\n        CURSOR FOR\n"
    "            SELECT A FROM Box WHERE A LIKE '%;%';\n\n    -- declare NOT FOUND handler\n"
    "    DECLARE CONTINUE HANDLER\n    FOR NOT FOUND SET finished = 1;\n\n    OPEN rows_c;\n\n"
    "    walkRows: LOOP\n        FETCH rows_c INTO cur_a;\n        IF finished = 1 THEN\n"
    "            LEAVE walkRows;\n        END IF;\n        IF(CHAR_LENGTH(cur_a) > 3) THEN\n"
    "            SET @m = CONCAT('too long: ', cur_a);\n            SIGNAL SQLSTATE '45000'\n"
    "                SET MESSAGE_TEXT = @m;\n        END IF;\n    END LOOP walkRows;\nEND;\n\n"
    "CALL Walk();\n"
)

MY_VERSION_GATE = (
    "/* a block comment; before the routine */\n\n"
    "CREATE PROCEDURE Gate ()\nBEGIN\nDECLARE\n\tV TEXT;\n\tSELECT\n\t\tValue\n\tFROM\n"
    "\t\tSettings\n\tWHERE\n\t\tName = 'Version' INTO V;\n"
    "\tIF(INET_ATON(V) < INET_ATON('5.0.0')) THEN\t\t\n        UPDATE Box SET A = '';\n"
    "\tEND IF;\nEND;\n\tCALL Gate ();\n\tDROP PROCEDURE IF EXISTS Gate;\n"
)

MY_COMMENT_AFTER_STRING = (
    "SET @stmt = (SELECT IF(\n    (SELECT COUNT(*) FROM information_schema.columns"
    " WHERE column_name = 'C') > 0,\n    'SELECT 1',\n"
    "    'ALTER TABLE Box ADD COLUMN C tinyint(4);' -- it was tinyint(4); here\n));\n\n"
    "PREPARE p FROM @stmt;\nEXECUTE p;\nDEALLOCATE PREPARE p;\n"
)

PG_LABELLED_DO = (
    "DO $$\n<<check_sizes>>\nDECLARE\n    too_long integer := 0;\nBEGIN\n"
    "    SELECT COALESCE(SUM(CASE WHEN CHAR_LENGTH(a) > 3 THEN 1 ELSE 0 END), 0) INTO too_long\n"
    "    FROM box;\n    IF too_long > 0 THEN\n        RAISE EXCEPTION 'box.a has values; too long';\n"
    "    END IF;\nEND check_sizes $$;\n\n"
    "DO $$\n\t<< gate >>\nDECLARE\n\tv VARCHAR(100) := '';\nBEGIN\n"
    "\tSELECT value INTO v FROM settings WHERE name = 'Version';\n\tIF (v < '5') THEN\t\n"
    "        DELETE FROM box WHERE a = ';';\n\tEND IF;\nEND gate\n$$;\n"
)

PG_NESTED_DOLLAR = (
    "DO $$\nDECLARE\n version text;\nBEGIN\nSELECT version() INTO version;\n"
    " -- a note; with a semicolon\nIF version !~ '-XY-' THEN\n execute $DDL$\n"
    "alter table box set (fillfactor = 90);\nalter table bag set (fillfactor = 90);\n $DDL$;\n"
    "END IF;\nEND $$;\n"
)

PG_LANGUAGE_AFTER = (
    "DO\n$$\nBEGIN\n  IF NOT EXISTS (SELECT * FROM pg_type WHERE typname = 'box_kind') THEN\n"
    "    CREATE TYPE box_kind AS ENUM ('a', 'b');\n  END IF;\nEND;\n$$\nLANGUAGE plpgsql;\n"
    "ALTER TABLE box alter column kind type box_kind using kind::box_kind;\n"
    "DO $$BEGIN\n    IF (SELECT 1) = 0 THEN\n        ALTER TABLE box ALTER COLUMN a SET DEFAULT NULL;\n"
    "    END IF;\nEND$$;\n"
)

PG_NO_LAST_SEMICOLON = (
    "-- morph:nontransactional\nCREATE INDEX CONCURRENTLY IF NOT EXISTS box_a ON box(a)"
)

# (name, dialect, text, statements as (start, end))
CASES: list[tuple[str, Dialect, str, list[tuple[str, str]]]] = [
    (
        "routine header and declarations on one line, PREPARE inside",
        MY,
        MY_ONE_LINE_HEADER,
        [("CREATE PROCEDURE Fill", "END IF;\n\nEND"), ("CALL", "()"), ("DROP", "Fill")],
    ),
    (
        "labelled loop left with LEAVE, comments with semicolons",
        MY,
        MY_LABELLED_LOOP,
        [("CREATE PROCEDURE Trim", "trimRows;\nEND"), ("CALL", "()"), ("DROP", "Trim")],
    ),
    (
        "cursor, handler and SIGNAL",
        MY,
        MY_CURSOR,
        [("CREATE PROCEDURE Walk", "walkRows;\nEND"), ("CALL", "()")],
    ),
    (
        "block comment first, calls indented after END",
        MY,
        MY_VERSION_GATE,
        [("/* a block comment", "END IF;\nEND"), ("CALL", "()"), ("DROP", "Gate")],
    ),
    (
        "a string then a comment inside a statement",
        MY,
        MY_COMMENT_AFTER_STRING,
        [("SET @stmt", "here\n))"), ("PREPARE", "@stmt"), ("EXECUTE", "p"), ("DEALLOCATE", "p")],
    ),
    ("only a comment (MySQL)", MY, "-- Nothing to do here", []),
    ("only a comment (PostgreSQL)", PG, "-- Replaced by a later file\n", []),
    (
        "DO blocks with labels",
        PG,
        PG_LABELLED_DO,
        [("DO $$\n<<check_sizes>>", "check_sizes $$"), ("DO $$\n\t<< gate >>", "gate\n$$")],
    ),
    ("a dollar quote inside another", PG, PG_NESTED_DOLLAR, [("DO $$", "END $$")]),
    (
        "DO $$ ... $$ LANGUAGE plpgsql, and DO $$BEGIN ... END$$",
        PG,
        PG_LANGUAGE_AFTER,
        [("DO\n$$", "LANGUAGE plpgsql"), ("ALTER TABLE", "::box_kind"), ("DO $$BEGIN", "END$$")],
    ),
    (
        "a last statement with no semicolon after a directive",
        PG,
        PG_NO_LAST_SEMICOLON,
        [("-- morph:nontransactional", "ON box(a)")],
    ),
]


@pytest.mark.req("MIG-56")
@pytest.mark.parametrize(("name", "dialect", "text", "expected"), CASES, ids=[c[0] for c in CASES])
def test_split_history_forms(
    name: str, dialect: Dialect, text: str, expected: list[tuple[str, str]]
) -> None:
    statements = [s.text for s in split(text, dialect)]
    assert [
        (s[: len(a)], s[-len(b) :]) for s, (a, b) in zip(statements, expected, strict=False)
    ] == expected
    assert len(statements) == len(expected)
