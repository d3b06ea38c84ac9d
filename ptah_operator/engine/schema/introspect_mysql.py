"""Read a MySQL/MariaDB database into the model: eight set-based information_schema queries,
and a ninth where a table has a spatial column (its SRID).

The scope is the URL's database (`DATABASE()`); information_schema reports only what the
login has some privilege on. Reads run in a READ ONLY transaction; the statistics and the
foreign keys are sent before the Python work on the read before each (`ahead`). The index
MySQL creates for a foreign key that has none is folded into the key
(`ForeignKey.backing_index`) rather than reported as an index nobody declared.

A column carries all that MODIFY COLUMN must restate (see `mysql_columns`): ON UPDATE,
VIRTUAL or STORED generation, INVISIBLE, character set, SRID. What else `EXTRA` reports, or
an SRID the server does not report, is named in `Column.unmodelled`.
"""

from __future__ import annotations

import dataclasses
import json
import operator
import re
from collections import defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

import pymysql

from ptah_operator.engine.schema import collector
from ptah_operator.engine.schema.ahead import meanwhile
from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    ForeignKey,
    Grant,
    Index,
    PrimaryKey,
    Schema,
    Table,
    View,
    canonical_schema,
)
from ptah_operator.engine.schema.mysql_columns import charset_of, is_spatial, read_extra
from ptah_operator.engine.schema.normalize import (
    READ_FAILURES,
    index_key_options,
    index_key_options_tuple,
    normalize_action,
    normalize_default,
    normalize_expression,
    normalize_type,
    parse_grantee,
    read_failure,
    reading,
    table_privileges,
)
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.views import observed_dependencies, server_definition


class _Read(NamedTuple):
    """A read with a row per table, column, index key or foreign key (`_many_rows`)."""

    rows: str  # the query, a row per row
    aggregated: str  # the same rows as one JSON array, and how many there are
    width: int  # fields per row
    order: Callable[[Any], Any]  # the key its rows are put in order by


def _read(fields: str, source: str, order: Callable[[Any], Any]) -> _Read:
    # Both queries are made of this module's constants only.
    return _Read(
        rows=f"SELECT {fields} FROM {source}",  # noqa: S608
        aggregated=f"SELECT COUNT(*), JSON_ARRAYAGG(JSON_ARRAY({fields})) FROM {source}",  # noqa: S608
        width=len(fields.split(",")),
        order=order,
    )


# The reads with a row per table, column, index key or foreign key: what each selects, from
# where, and the positions its rows are put in order by.
_TABLES = _read(
    "TABLE_NAME, TABLE_COMMENT, TABLE_COLLATION, ENGINE, CREATE_OPTIONS, TABLE_TYPE",
    "information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
    "AND TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED', 'SEQUENCE')",
    operator.itemgetter(0),
)

# What the database holds that the engine does not model: triggers, routines, events.
_UNMANAGED = (
    "SELECT CONCAT('table ', EVENT_OBJECT_TABLE, ': trigger ', TRIGGER_NAME) "
    "FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()",
    "SELECT CONCAT(LOWER(ROUTINE_TYPE), ' ', ROUTINE_NAME) FROM information_schema.ROUTINES "
    "WHERE ROUTINE_SCHEMA = DATABASE()",
    "SELECT CONCAT('event ', EVENT_NAME) FROM information_schema.EVENTS "
    "WHERE EVENT_SCHEMA = DATABASE()",
)

_COLUMNS = _read(
    "TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, EXTRA, "
    "GENERATION_EXPRESSION, COLLATION_NAME, COLUMN_COMMENT, CHARACTER_SET_NAME, ORDINAL_POSITION",
    "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()",
    operator.itemgetter(0, 10),
)

_STATISTICS_FIELDS = (
    "TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART, INDEX_TYPE, COLLATION, "
    "INDEX_COMMENT, SEQ_IN_INDEX"
)
_STATISTICS = _read(
    _STATISTICS_FIELDS,
    "information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()",
    operator.itemgetter(0, 1, 8),
)
# MariaDB 10.6+: the same with IGNORED, which `_HIDDEN_INDEXES` would read in a second pass
# over every table's indexes.
_STATISTICS_IGNORED = _read(
    _STATISTICS_FIELDS + ", IGNORED",
    "information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()",
    operator.itemgetter(0, 1, 8),
)

# Indexes the optimizer leaves alone: MariaDB 10.6+ `IGNORED`, MySQL 8 `IS_VISIBLE`.
_HIDDEN_INDEXES = {
    "mariadb": "SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS "
    "WHERE TABLE_SCHEMA = DATABASE() AND IGNORED = 'YES'",
    "mysql": "SELECT DISTINCT TABLE_NAME, INDEX_NAME FROM information_schema.STATISTICS "
    "WHERE TABLE_SCHEMA = DATABASE() AND IS_VISIBLE = 'NO'",
}

# KEY_COLUMN_USAGE and REFERENTIAL_CONSTRAINTS are read apart and joined here: joined in SQL
# they cost several times the two reads (the server opens every table for each row).
_FOREIGN_KEYS = _read(
    "TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME, "
    "ORDINAL_POSITION",
    "information_schema.KEY_COLUMN_USAGE "
    "WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_NAME IS NOT NULL",
    operator.itemgetter(0, 1, 5),
)

_RULES = _read(
    "TABLE_NAME, CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE",
    "information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE()",
    operator.itemgetter(0, 1),
)

_VIEWS = """
SELECT TABLE_NAME, VIEW_DEFINITION, CHECK_OPTION, SECURITY_TYPE FROM information_schema.VIEWS
WHERE TABLE_SCHEMA = DATABASE()
"""

# Table-level privileges (column privileges are not modelled). A role is listed with an
# empty host.
_GRANTS = """
SELECT TABLE_NAME, GRANTEE, PRIVILEGE_TYPE, IS_GRANTABLE FROM information_schema.TABLE_PRIVILEGES
WHERE TABLE_SCHEMA = DATABASE()
"""

_CHECKS = """
SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE()
"""

# MariaDB 10.5.10+: LEVEL tells a column-level check (`a int CHECK (a > 0)`, named after the
# column), which MODIFY COLUMN drops unless it restates it, from a table-level one.
_CHECKS_MARIADB = """
SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE, LEVEL FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE()
"""

# The SRID of each spatial column: MariaDB's GEOMETRY_COLUMNS (0 for none), MySQL 8's
# COLUMNS.SRS_ID (NULL for none).
_SRIDS = {
    "mariadb": """
SELECT G_TABLE_NAME, G_GEOMETRY_COLUMN, SRID FROM information_schema.GEOMETRY_COLUMNS
WHERE G_TABLE_SCHEMA = DATABASE()
""",
    "mysql": """
SELECT TABLE_NAME, COLUMN_NAME, SRS_ID FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND SRS_ID IS NOT NULL
""",
}


# INDEX_TYPE: FULLTEXT and SPATIAL are kinds of index; BTREE and HASH (InnoDB reports BTREE
# even for USING HASH; MariaDB's long unique keys are HASH) are plain ones, read as None.
_INDEX_METHODS = {"FULLTEXT": "fulltext", "SPATIAL": "spatial"}


async def _rows(conn: Any, sql: str) -> list[tuple[Any, ...]]:
    async with conn.cursor() as cur:
        await cur.execute(sql)
        return list(await cur.fetchall())


async def _many_rows(conn: Any, dialect: Dialect, read: _Read) -> list[tuple[Any, ...]]:
    """The rows of `read`, in its order.

    On MariaDB the server sends them as one JSON document (`_aggregated_rows`): the driver
    decodes each field of each row in Python, which on a thousand tables costs several times
    what the server spends on the query, and `json.loads` decodes the document in C.
    Elsewhere (MySQL spells a binary string in JSON as base64), and whenever the document
    does not hold every row, they are read as rows.
    """
    rows = await _aggregated_rows(conn, read) if dialect is Dialect.MARIADB else None
    if rows is None:
        rows = await _rows(conn, read.rows)
    return sorted(rows, key=read.order)


async def _aggregated_rows(conn: Any, read: _Read) -> list[tuple[Any, ...]] | None:
    """The rows of `read` as the server aggregates them into one JSON array, or None when
    the array does not hold them all: the server cuts it at `group_concat_max_len` (set to
    `max_allowed_packet` by `connect_mysql`), possibly just after an element, and sends NULL
    for one over `max_allowed_packet`; the count read in the same statement tells. Read off
    the connection, not a cursor: a cursor would print the server's warning about a cut as
    a Python warning."""
    try:
        await conn.query(read.aggregated)
    except pymysql.MySQLError:
        return None  # MariaDB before 10.5 has no JSON_ARRAYAGG (1305): rows it is
    result = conn._result
    rows = result.rows if result is not None else None
    if not rows or len(rows) != 1 or len(rows[0]) != 2:
        return None
    ((count, document),) = rows
    return document_rows(count, document, read.width)


def document_rows(count: int, document: str | bytes | None, width: int) -> list[Any] | None:
    """The `count` rows of `width` fields an aggregated read's document holds, or None when
    it does not hold exactly those: cut, missing, or not an array of such rows."""
    if not count:
        return []
    try:
        rows = json.loads(document) if document is not None else None
    except ValueError:
        return None
    if not isinstance(rows, list) or len(rows) != count:
        return None
    if not all(isinstance(row, list) and len(row) == width for row in rows):
        return None
    return [tuple(row) for row in rows]


def _text(value: Any) -> str | None:
    if value is None or value.__class__ is str:
        return value
    return value.decode() if isinstance(value, bytes) else str(value)


_UNKNOWN_COLUMN = 1054

_MARIADB_VERSION = re.compile(r"(\d+)\.(\d+)\.\d+-MariaDB")


def _mariadb_version(conn: Any) -> tuple[int, int]:
    """(major, minor) of a MariaDB server from its handshake (`10.11.6-MariaDB-…`, or with
    the `5.5.5-` older clients are given first); (0, 0) when it does not say."""
    found = _MARIADB_VERSION.search(str(getattr(conn, "server_version", "") or ""))
    return (int(found[1]), int(found[2])) if found else (0, 0)


async def inspect_mysql(
    conn: Any, dialect: Dialect, scope: Scope, *, own_transaction: bool = True
) -> Schema:
    """The model of what `conn` sees within `scope`, read in a read-only transaction of its
    own unless `own_transaction` is False (Apply's freshness check, inside its own). The
    collector is paused meanwhile (`collector`)."""
    with collector.paused():
        if not own_transaction:
            return await _inspect(conn, dialect, scope)
        async with conn.cursor() as cur:
            await cur.execute("START TRANSACTION READ ONLY")
        try:
            return await _inspect(conn, dialect, scope)
        finally:
            async with conn.cursor() as cur:
                await cur.execute("COMMIT")


def _table_unmanaged(row: tuple[Any, ...]) -> list[str]:
    """What a TABLES row says the engine does not model: partitioning, system versioning, a
    sequence, explicit table options (`CREATE_OPTIONS`)."""
    name, kind = row[0], _text(row[5])
    found: list[str] = []
    if kind == "SYSTEM VERSIONED":
        found.append(f"table {name}: system versioning (WITH SYSTEM VERSIONING)")
    elif kind == "SEQUENCE":
        found.append(f"sequence {name} (MariaDB sequences)")
    for option in (_text(row[4]) or "").split():
        if (_text(row[3]) or "").lower() == "aria" and option.lower() == "transactional=1":
            continue  # what Aria reports for a table made without the option
        if option.lower() == "partitioned":
            found.append(f"table {name}: partitioning (PARTITION BY)")
        else:
            found.append(f"table {name}: the table option {option.split('=')[0].upper()}")
    return found


async def _inspect(conn: Any, dialect: Dialect, scope: Scope) -> Schema:
    all_rows = [
        r for r in await _many_rows(conn, dialect, _TABLES) if scope.admits_table(dialect, "", r[0])
    ]
    unmanaged = [u for r in all_rows for u in _table_unmanaged(r)]
    table_rows = [r for r in all_rows if _text(r[5]) == "BASE TABLE"]
    for query in _UNMANAGED:
        try:
            unmanaged += [_text(r[0]) or "" for r in await _rows(conn, query)]
        except pymysql.MySQLError:
            unmanaged.append("objects the login may not list (information_schema refused)")
    names = {r[0] for r in table_rows}
    table_collation = {r[0]: r[2] for r in table_rows}
    column_rows = await _many_rows(conn, dialect, _COLUMNS)
    # The server reads the indexes while Python reads the columns (`ahead`).
    (statistics, with_ignored), (columns, binary, spatial) = await meanwhile(
        _statistics(conn, dialect),
        lambda: _columns(dialect, column_rows, table_collation),
    )
    if spatial:
        await _read_srids(conn, dialect, columns)
    if with_ignored:
        hidden = sorted({(r[0], r[1]) for r in statistics if r[9] == "YES"})
    else:
        try:
            hidden = await _rows(
                conn, _HIDDEN_INDEXES["mariadb" if dialect is Dialect.MARIADB else "mysql"]
            )
        except pymysql.MySQLError:
            hidden = []  # a server without the column has no such indexes
    unmanaged += [f"table {r[0]}, index {r[1]}: an invisible (ignored) index" for r in hidden]
    # And the foreign keys while Python reads the indexes.
    fk_rows, (pks, indexes, commented) = await meanwhile(
        _many_rows(conn, dialect, _FOREIGN_KEYS),
        lambda: _indexes(dialect, statistics, names),
    )
    unmanaged += commented
    rules = {(r[0], r[1]): (r[2], r[3]) for r in await _many_rows(conn, dialect, _RULES)}
    fk_parts: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for r in fk_rows:
        if r[0] in names:
            fk_parts[(r[0], r[1])].append(r)
    fks: dict[str, list[ForeignKey]] = defaultdict(list)
    for (table, name), parts in sorted(fk_parts.items()):
        cols = tuple(p[2] for p in parts)
        backing = _implicit_index(indexes[table], name, cols)
        if backing is not None:
            indexes[table] = [
                dataclasses.replace(i, implicit=True) if i.name == backing else i
                for i in indexes[table]
            ]
        fks[table].append(
            ForeignKey(
                columns=cols,
                ref_schema="",
                ref_table=parts[0][3],
                ref_columns=tuple(p[4] for p in parts),
                on_update=normalize_action(dialect, rules[(table, name)][0]),
                on_delete=normalize_action(dialect, rules[(table, name)][1]),
                name=name,
                backing_index=backing,
            )
        )
    checks: dict[str, list[Check]] = defaultdict(list)
    for r in await _check_rows(conn, dialect):
        if r[0] in names:
            level = _text(r[3]) if len(r) > 3 else None
            with reading(f"table {r[0]}, check {r[1]}"):
                checks[r[0]].append(
                    Check(
                        expr=normalize_expression(dialect, _text(r[2]) or ""),
                        name=r[1],
                        column=r[1] if level == "Column" else None,
                    )
                )
    _fold_json_columns(dialect, columns, checks, binary)
    grants: dict[str, list[Grant]] = defaultdict(list)
    known = set(table_privileges(dialect))
    for table, grantee, privilege, grantable in await _rows(conn, _GRANTS):
        if table in names and str(privilege) in known:
            grants[table].append(
                Grant(parse_grantee(dialect, str(grantee)), str(privilege), grantable == "YES")
            )
    tables = [
        Table(
            schema="",
            name=r[0],
            columns=tuple(columns[r[0]]),
            primary_key=pks.get(r[0]),
            indexes=tuple(indexes[r[0]]),
            foreign_keys=tuple(fks[r[0]]),
            checks=tuple(checks[r[0]]),
            comment=_text(r[1]) or None,
            grants=tuple(grants[r[0]]),
            collation=r[2],
            engine=_text(r[3]),
        )
        for r in table_rows
    ]
    views = []
    for name, definition, check_option, security in await _rows(conn, _VIEWS):
        if not scope.admits_table(dialect, "", name):
            continue
        if (_text(check_option) or "NONE") != "NONE":
            unmanaged.append(f"view {name}: WITH CHECK OPTION")
        if (_text(security) or "DEFINER") != "DEFINER":
            unmanaged.append(f"view {name}: SQL SECURITY INVOKER")
        text = server_definition(_text(definition) or "")
        views.append(
            View(
                schema="",
                name=name,
                definition=text,
                depends_on=observed_dependencies(dialect, text),
            )
        )
    return canonical_schema(dialect, [], tables, [], [], views, unmanaged=unmanaged)


def _columns(
    dialect: Dialect, column_rows: list[tuple[Any, ...]], table_collation: dict[str, Any]
) -> tuple[dict[str, list[Column]], set[tuple[str, str]], bool]:
    """The columns of the tables in `table_collation` (their names, and each one's default
    collation) from COLUMNS rows; the (table, column) pairs that may be MariaDB's `json`
    (`_fold_json_columns`); whether any column is spatial."""
    columns: dict[str, list[Column]] = defaultdict(list)
    binary: set[tuple[str, str]] = set()
    spatial = False
    charsets = {table: charset_of(collation or "") for table, collation in table_collation.items()}
    r: tuple[Any, ...] = ()
    try:
        for r in column_rows:
            table = r[0]
            if table not in table_collation:
                continue
            type_text = normalize_type(dialect, r[2])
            if type_text == "longtext" and r[7] == _JSON_COLLATION:
                binary.add((table, r[1]))
            extra = read_extra(_text(r[5]))
            unmodelled = list(extra.unmodelled)
            generated = _text(r[6]) if extra.generated else None
            if extra.generated and not generated:
                # MariaDB's system-versioning columns: generated, without an expression.
                unmodelled.append("GENERATED ALWAYS AS ROW START/END (system versioning)")
            collation = r[7] if r[7] and r[7] != table_collation[table] else None
            own_charset = _text(r[9])
            spatial = spatial or is_spatial(type_text)
            columns[table].append(
                Column(
                    name=r[1],
                    type=type_text,
                    nullable=r[3] == "YES",
                    default=None
                    if generated
                    else normalize_default(dialect, _text(r[4]), type_text),
                    identity="auto_increment" if extra.auto_increment else None,
                    generated=normalize_expression(dialect, generated) if generated else None,
                    collation=collation,
                    comment=_text(r[8]) or None,
                    virtual=bool(generated) and extra.generated == "virtual",
                    charset=own_charset if own_charset and own_charset != charsets[table] else None,
                    on_update=extra.on_update,
                    invisible=extra.invisible,
                    unmodelled=tuple(unmodelled),
                )
            )
    except READ_FAILURES as error:
        # One handler for the loop, not a `reading` per column: a thousand tables' columns.
        raise read_failure(f"table {r[0]}, column {r[1]}", error) from error
    return columns, binary, spatial


async def _statistics(conn: Any, dialect: Dialect) -> tuple[list[tuple[Any, ...]], bool]:
    """The STATISTICS rows, and whether they carry IGNORED (MariaDB 10.6+) as a tenth field."""
    if dialect is Dialect.MARIADB and _mariadb_version(conn) >= (10, 6):
        try:
            return await _many_rows(conn, dialect, _STATISTICS_IGNORED), True
        except pymysql.MySQLError as error:
            # The handshake's version is what a proxy in between says: the server behind
            # it may have no IGNORED (1054, unknown column). Read as for any other server.
            if not error.args or error.args[0] != _UNKNOWN_COLUMN:
                raise
    return await _many_rows(conn, dialect, _STATISTICS), False


def _indexes(
    dialect: Dialect, statistics: list[tuple[Any, ...]], names: set[str]
) -> tuple[dict[str, PrimaryKey], dict[str, list[Index]], list[str]]:
    """The primary keys and indexes of the tables in `names` from STATISTICS rows, and the
    indexes with a comment (not modelled: named in `unmanaged`)."""
    index_parts: dict[tuple[str, str], list[tuple[Any, ...]]] = defaultdict(list)
    for r in statistics:
        if r[0] in names:
            index_parts[(r[0], r[1])].append(r)
    pks: dict[str, PrimaryKey] = {}
    indexes: dict[str, list[Index]] = defaultdict(list)
    commented: list[str] = []
    for (table, name), parts in sorted(index_parts.items()):
        if _text(parts[0][7]):
            commented.append(f"table {table}, index {name}: an index comment")
        cols = tuple(p[3] for p in parts)
        if name == "PRIMARY":
            pks[table] = PrimaryKey(columns=cols, name="PRIMARY")
            continue
        method = _INDEX_METHODS.get(str(parts[0][5]).upper())
        # MariaDB reports a SPATIAL key with SUB_PART 32 (the bytes of its MBR); no prefix
        # can be written on one.
        prefixes = tuple(
            int(p[4]) if p[4] is not None and method != "spatial" else None for p in parts
        )
        indexes[table].append(
            Index(
                name=name,
                columns=cols,
                unique=not parts[0][2],
                prefix_lengths=prefixes if any(p is not None for p in prefixes) else (),
                method=method,
                # COLLATION is "D" for a descending key part (MariaDB 10.8+, MySQL 8).
                # No descending part (most indexes): no options.
                key_options=index_key_options_tuple(
                    [index_key_options(dialect, desc=p[6] == "D") for p in parts]
                )
                if any(p[6] == "D" for p in parts)
                else (),
            )
        )
    return pks, indexes, commented


# MariaDB's `json` is an alias: `longtext` in utf8mb4_bin with a column check named after the
# column, `json_valid(col)`. Read back as `json` with neither, so that the desired `json`
# column compares equal and the check is not drift. (MySQL reports a native `json`.)
_JSON_COLLATION = "utf8mb4_bin"


def _fold_json_columns(
    dialect: Dialect,
    columns: dict[str, list[Column]],
    checks: dict[str, list[Check]],
    binary: set[tuple[str, str]],
) -> None:
    for table, column in sorted(binary):
        expected = normalize_expression(dialect, f"json_valid(`{column.replace('`', '``')}`)")
        implied = Check(expr=expected, name=column)
        if implied not in checks[table]:
            continue
        checks[table] = [c for c in checks[table] if c != implied]
        columns[table] = [
            dataclasses.replace(c, type="json", collation=None, charset=None)
            if c.name == column
            else c
            for c in columns[table]
        ]


async def _check_rows(conn: Any, dialect: Dialect) -> list[tuple[Any, ...]]:
    if dialect is Dialect.MARIADB:
        try:
            return await _rows(conn, _CHECKS_MARIADB)
        except pymysql.MySQLError:
            pass  # before 10.5.10: no LEVEL, every check read as the table's
    return await _rows(conn, _CHECKS)


async def _read_srids(conn: Any, dialect: Dialect, columns: dict[str, list[Column]]) -> None:
    """Each spatial column's SRID; where the server does not report it, the column says so
    (`unmodelled`): restating it could drop an SRID nobody can see."""
    try:
        rows: list[tuple[Any, ...]] | None = await _rows(
            conn, _SRIDS["mariadb" if dialect is Dialect.MARIADB else "mysql"]
        )
    except pymysql.MySQLError:
        rows = None
    srids = {(r[0], r[1]): int(r[2]) for r in rows or () if r[2] is not None and int(r[2]) != 0}
    unknown = "SRID (this server does not report it)"
    for table, found in columns.items():
        read: list[Column] = []
        for column in found:
            if is_spatial(column.type):
                if rows is None:
                    column = dataclasses.replace(column, unmodelled=(*column.unmodelled, unknown))
                else:
                    column = dataclasses.replace(column, srid=srids.get((table, column.name)))
            read.append(column)
        columns[table] = read


def _implicit_index(indexes: list[Index], fk_name: str, columns: tuple[str, ...]) -> str | None:
    """The index the server named after the key (or its first column) for a key that had none."""
    for index in indexes:
        if (
            index.unique
            or index.columns != columns
            or index.prefix_lengths
            or index.key_options
            or index.method is not None
        ):
            continue
        name = index.name or ""
        if name == fk_name or name == columns[0] or name.startswith(columns[0] + "_"):
            return name
    return None
