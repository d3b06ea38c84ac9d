"""The type-change lattice (`severity.type_change`): every ordered pair of a list of types per
dialect, against a table of the pairs that lose nothing written out by hand; every other pair
is destructive."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import Statement, plan_changes
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.severity import Severity, type_change

# MySQL/MariaDB, as introspection spells them (normalize.py), and what each widens to. A type
# missing from the right-hand sets of a row is a destructive target of that row's type.
MYSQL_LOSSLESS: dict[str, set[str]] = {
    "tinyint": {
        "tinyint(1)",
        "smallint",
        "mediumint",
        "int",
        "bigint",
        "decimal(5,2)",
        "decimal(6,3)",
        "decimal(7,2)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "float",
        "double",
    },
    "tinyint(1)": {
        "tinyint",
        "smallint",
        "mediumint",
        "int",
        "bigint",
        "decimal(5,2)",
        "decimal(6,3)",
        "decimal(7,2)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "float",
        "double",
    },
    "tinyint unsigned": {
        "smallint",
        "smallint unsigned",
        "mediumint",
        "mediumint unsigned",
        "int",
        "int unsigned",
        "bigint",
        "bigint unsigned",
        "decimal(5,2)",
        "decimal(6,3)",
        "decimal(7,2)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "float",
        "double",
    },
    "smallint": {
        "mediumint",
        "int",
        "bigint",
        "decimal(7,2)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "float",
        "double",
    },
    "smallint unsigned": {
        "mediumint",
        "mediumint unsigned",
        "int",
        "int unsigned",
        "bigint",
        "bigint unsigned",
        "decimal(7,2)",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "float",
        "double",
    },
    # 7 digits: a FLOAT holds them but prints 6 (8388607 reads back as 8388610).
    "mediumint": {"int", "bigint", "decimal(10,0)", "decimal(19,0)", "decimal(20,0)", "double"},
    "mediumint unsigned": {
        "int",
        "int unsigned",
        "bigint",
        "bigint unsigned",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "double",
    },
    "int": {"bigint", "decimal(10,0)", "decimal(19,0)", "decimal(20,0)", "double"},
    "int unsigned": {
        "bigint",
        "bigint unsigned",
        "decimal(10,0)",
        "decimal(19,0)",
        "decimal(20,0)",
        "double",
    },
    # 2**53 < bigint's largest: a DOUBLE does not hold every bigint.
    "bigint": {"decimal(19,0)", "decimal(20,0)"},
    "bigint unsigned": {"decimal(20,0)"},
    "decimal(5,2)": {"decimal(6,3)", "decimal(7,2)"},
    "decimal(6,3)": set(),
    "decimal(7,2)": set(),
    "decimal(10,0)": {"bigint", "decimal(19,0)", "decimal(20,0)", "double"},
    "decimal(19,0)": {"decimal(20,0)"},
    "decimal(20,0)": set(),
    "float": {"double"},
    "double": set(),
    # CHAR strips trailing spaces on read, so a CHAR's values fit a VARCHAR as they read.
    "char(1)": {
        "char(10)",
        "char(63)",
        "char(64)",
        "varchar(10)",
        "varchar(63)",
        "varchar(64)",
        "varchar(255)",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
    },
    "char(10)": {
        "char(63)",
        "char(64)",
        "varchar(10)",
        "varchar(63)",
        "varchar(64)",
        "varchar(255)",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
    },
    # 63 characters of 4 bytes fit TINYTEXT's 255 bytes; 64 do not.
    "char(63)": {
        "char(64)",
        "varchar(63)",
        "varchar(64)",
        "varchar(255)",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
    },
    "char(64)": {"varchar(64)", "varchar(255)", "text", "mediumtext", "longtext"},
    "varchar(10)": {
        "varchar(63)",
        "varchar(64)",
        "varchar(255)",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
    },
    "varchar(63)": {"varchar(64)", "varchar(255)", "tinytext", "text", "mediumtext", "longtext"},
    "varchar(64)": {"varchar(255)", "text", "mediumtext", "longtext"},
    "varchar(255)": {"text", "mediumtext", "longtext"},
    # 255 bytes are at most 255 characters.
    "tinytext": {"varchar(255)", "text", "mediumtext", "longtext"},
    "text": {"mediumtext", "longtext"},
    "mediumtext": {"longtext"},
    "longtext": set(),
    # BINARY pads with 0x00 and reads back padded: a wider BINARY pads further.
    "binary(4)": {
        "varbinary(4)",
        "varbinary(16)",
        "varbinary(255)",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
    },
    "binary(16)": {"varbinary(16)", "varbinary(255)", "tinyblob", "blob", "mediumblob", "longblob"},
    "varbinary(4)": {
        "varbinary(16)",
        "varbinary(255)",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
    },
    "varbinary(16)": {"varbinary(255)", "tinyblob", "blob", "mediumblob", "longblob"},
    "varbinary(255)": {"tinyblob", "blob", "mediumblob", "longblob"},
    "tinyblob": {"varbinary(255)", "blob", "mediumblob", "longblob"},
    "blob": {"mediumblob", "longblob"},
    "mediumblob": {"longblob"},
    "longblob": set(),
    "bit(1)": {"bit(8)", "bit(16)"},
    "bit(8)": {"bit(16)"},
    "bit(16)": set(),
    # A DATE becomes that day's midnight.
    "date": {"datetime", "datetime(3)", "datetime(6)"},
    "datetime": {"datetime(3)", "datetime(6)"},
    "datetime(3)": {"datetime(6)"},
    "datetime(6)": set(),
    "timestamp": {"timestamp(6)"},
    "timestamp(6)": set(),
    "time": {"time(3)", "time(6)"},
    "time(3)": {"time(6)"},
    "time(6)": set(),
    "year": set(),
    "json": set(),
    "set('a','b')": set(),
}

# PostgreSQL, as format_type spells them (normalize.py).
POSTGRESQL_LOSSLESS: dict[str, set[str]] = {
    "smallint": {
        "integer",
        "bigint",
        "numeric(7,0)",
        "numeric(10,0)",
        "numeric(20,0)",
        "numeric",
        "real",
        "double precision",
    },
    # 2**31 does not fit a real's 24 bits; a double's 53 hold it.
    "integer": {"bigint", "numeric(10,0)", "numeric(20,0)", "numeric", "double precision"},
    "bigint": {"numeric(20,0)", "numeric"},
    "numeric(5,2)": {"numeric(6,3)", "numeric"},
    "numeric(6,3)": {"numeric"},
    # numeric holds NaN, which no integer type does; floats do.
    "numeric(7,0)": {"numeric(10,0)", "numeric(20,0)", "numeric", "real", "double precision"},
    "numeric(10,0)": {"numeric(20,0)", "numeric", "double precision"},
    "numeric(20,0)": {"numeric"},
    "numeric": set(),
    "real": {"double precision"},
    "double precision": set(),
    # character(n) to text or varchar drops the trailing spaces ('a  '::char(3)::text is 'a').
    "character(1)": {"character(10)"},
    "character(10)": set(),
    "character varying(10)": {"character varying(255)", "character varying", "text"},
    "character varying(255)": {"character varying", "text"},
    "character varying": {"text"},
    "text": {"character varying"},
    "bytea": set(),
    # bit(n) pads or cuts on the right to another length; bit varying keeps it.
    "bit(1)": {"bit varying(8)", "bit varying"},
    "bit(8)": {"bit varying(8)", "bit varying"},
    "bit varying(8)": {"bit varying"},
    "bit varying": set(),
    # date reaches 5874897 AD, timestamp 294276 AD.
    "date": set(),
    "timestamp(0) without time zone": {
        "timestamp(3) without time zone",
        "timestamp without time zone",
    },
    "timestamp(3) without time zone": {"timestamp without time zone"},
    "timestamp without time zone": set(),
    "timestamp(3) with time zone": {"timestamp with time zone"},
    "timestamp with time zone": set(),
    "time(0) without time zone": {"time without time zone"},
    "time without time zone": set(),
    "time with time zone": set(),
    "interval": set(),
    "smallint[]": {"integer[]", "bigint[]", "numeric[]"},
    "integer[]": {"bigint[]", "numeric[]"},
    "bigint[]": {"numeric[]"},
    "numeric[]": set(),
    "text[]": set(),
    "character varying(10)[]": {"text[]"},
    "character(3)[]": set(),
    "boolean": set(),
    "uuid": set(),
    "json": set(),
    "jsonb": set(),
}

TABLES = {"mysql": MYSQL_LOSSLESS, "postgresql": POSTGRESQL_LOSSLESS}


def _rows() -> list[tuple[str, str]]:
    return [(family, old) for family, table in TABLES.items() for old in table]


def test_the_tables_name_only_types_of_their_own_list() -> None:
    for table in TABLES.values():
        for old, targets in table.items():
            assert targets <= table.keys(), old
            assert old not in targets


@pytest.mark.parametrize(("family", "old"), _rows())
def test_every_change_is_destructive_unless_the_table_says_it_loses_nothing(
    family: str, old: str
) -> None:
    table = TABLES[family]
    got = {new: type_change(family, old, new)[0] for new in table if new != old}
    wrong = {
        new: severity
        for new, severity in got.items()
        if severity is not (Severity.WARNING if new in table[old] else Severity.DESTRUCTIVE)
    }
    assert wrong == {}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("longtext", "text"),
        ("longtext", "mediumtext"),
        ("mediumtext", "text"),
        ("mediumint", "smallint"),
        ("longblob", "mediumblob"),
        ("mediumint unsigned", "mediumint"),
        ("int", "int unsigned"),
        ("varchar(255)", "varchar(64)"),
        ("varchar(64)", "tinytext"),
        ("varchar(10)", "char(10)"),
        ("char(10)", "binary(10)"),
        ("text", "blob"),
        ("blob", "text"),
        ("decimal(10,2)", "decimal(10,3)"),
        ("decimal(10,2)", "decimal(9,2)"),
        ("decimal(5,2)", "decimal(5,2) unsigned"),
        ("bigint", "double"),
        ("mediumint", "float"),
        ("double", "float"),
        ("datetime(6)", "datetime(3)"),
        ("datetime", "timestamp"),
        ("timestamp", "datetime"),
        ("datetime", "date"),
        ("time(6)", "time"),
        ("binary(4)", "binary(16)"),
        ("varbinary(4)", "binary(4)"),
        ("int", "varchar(20)"),
        ("float(10,2)", "double"),
        ("text(100)", "text"),
    ],
)
def test_mysql_narrowings_and_conversions_are_destructive(old: str, new: str) -> None:
    assert type_change("mysql", old, new)[0] is Severity.DESTRUCTIVE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("integer", "smallint"),
        ("bigint", "integer"),
        ("text", "character varying(10)"),
        ("character varying(20)", "character varying(10)"),
        ("character(3)", "text"),
        ("character(3)", "character varying(3)"),
        ("text", "character(3)"),
        ("numeric(10,2)", "numeric(10,3)"),
        ("numeric", "numeric(38,10)"),
        ("numeric(5,0)", "integer"),
        ("double precision", "real"),
        ("double precision", "numeric"),
        ("bigint", "double precision"),
        ("integer", "real"),
        ("timestamp without time zone", "timestamp with time zone"),
        ("timestamp with time zone", "timestamp without time zone"),
        ("time without time zone", "time with time zone"),
        ("timestamp(6) without time zone", "timestamp(3) without time zone"),
        ("date", "timestamp without time zone"),
        ("bigint[]", "integer[]"),
        ("integer[]", "integer"),
        ("integer", "integer[]"),
        ("text", "integer"),
        ("integer", "text"),
        ("json", "jsonb"),
        ("bit(3)", "bit(5)"),
        ('"Mood"', "text"),
    ],
)
def test_postgresql_narrowings_and_conversions_are_destructive(old: str, new: str) -> None:
    assert type_change("postgresql", old, new)[0] is Severity.DESTRUCTIVE


@pytest.mark.parametrize(
    ("family", "old", "new", "reason"),
    [
        ("mysql", "int", "bigint", "type widens"),
        ("mysql", "bigint", "int", "type narrows"),
        ("mysql", "longtext", "text", "type narrows"),
        ("mysql", "text", "blob", "type converts"),
        ("mysql", "tinyint(1)", "tinyint", "type changes, values kept"),
        ("mysql", "year(4)", "year", "type changes, values kept"),
        ("mysql", "int unsigned zerofill", "int unsigned", "type changes, values kept"),
        ("postgresql", "text", "character varying", "type changes, values kept"),
        ("postgresql", "integer[]", "integer[][]", "type changes, values kept"),
        ("postgresql", "character varying(10)", "text", "type widens"),
        ("postgresql", "timestamp without time zone", "date", "type converts"),
        ("postgresql", "integer", "integer", "type unchanged"),
    ],
)
def test_reasons_name_the_kind_of_change(family: str, old: str, new: str, reason: str) -> None:
    assert type_change(family, old, new)[1] == reason


def test_an_unchanged_type_is_safe() -> None:
    assert type_change("mysql", "int", "int") == (Severity.SAFE, "type unchanged")


def _schema(dialect: Dialect, ddl: str) -> Schema:
    result = assemble(dialect, [parse_ddl(dialect, ddl, "s.sql")], Scope())
    if dialect is Dialect.POSTGRESQL:
        result = dataclasses.replace(result, schemas=("public",))
    return result


def _plan(dialect: Dialect, old: str, new: str) -> list[Statement]:
    return plan_changes(
        _schema(dialect, f"CREATE TABLE t (c {old});"),
        _schema(dialect, f"CREATE TABLE t (c {new});"),
    )


@pytest.mark.parametrize(
    ("old", "new", "severity", "reason"),
    [
        ("longtext", "text", Severity.DESTRUCTIVE, "type narrows"),
        ("longtext", "mediumtext", Severity.DESTRUCTIVE, "type narrows"),
        ("mediumtext", "text", Severity.DESTRUCTIVE, "type narrows"),
        ("mediumint", "smallint", Severity.DESTRUCTIVE, "type narrows"),
        ("text", "longtext", Severity.WARNING, "type widens"),
        ("smallint", "mediumint", Severity.WARNING, "type widens"),
    ],
)
def test_a_mysql_column_change_takes_the_lattices_severity(
    old: str, new: str, severity: Severity, reason: str
) -> None:
    """The issue's probes: a permissive sql_mode cut a 70,000-byte longtext to 65,535 bytes
    under a plan that called the change a widening."""
    for dialect in (Dialect.MARIADB, Dialect.MYSQL):
        statements = _plan(dialect, old, new)
        assert [(s.severity, s.reason) for s in statements] == [
            (severity, f"change column t.c: {reason}")
        ]


def test_a_postgresql_column_change_takes_the_lattices_severity() -> None:
    narrowed = _plan(Dialect.POSTGRESQL, "text", "varchar(10)")
    assert [(s.severity, s.reason) for s in narrowed] == [
        (Severity.DESTRUCTIVE, "change column public.t.c: type narrows")
    ]
    widened = _plan(Dialect.POSTGRESQL, "int[]", "bigint[]")
    assert [(s.severity, s.reason) for s in widened] == [
        (Severity.WARNING, "change column public.t.c: type widens")
    ]
