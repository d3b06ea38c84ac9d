"""The revision table: the database's own record of which migration files ran and how far.

Columns (current layout):
    version             BIGINT primary key
    description         the file's description
    kind                migration | checkpoint
    state               applied | failed  (anything but applied is a dirty row)
    statements_applied  statements known committed (a lower bound while the row is failed)
    statements_total    statements in the file
    checksum            SHA-256 (hex) of the up file
    execution_millis    how long the file ran; NULL when nothing ran (baseline, set) or unknown
    error_class         SQLSTATE or MySQL error number of the failure; never message text
    recorded_by         up | baseline | set | repair
    applied_at          when the row was last written (UTC)

The first layout had only version, description, state, checksum and applied_at. Such a table is
read as it is (the missing columns read as absent, never as zero) and gains the newer columns
the first time Ptah writes to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.connection import Database, DatabaseError
from ptah_operator.engine.migrations.directory import FileKind, MigrationFile

DEFAULT_TABLE = "schema_migrations"
REQUIRED_COLUMNS = ("version", "state", "checksum")
NEWER_COLUMNS = (
    "kind",
    "statements_applied",
    "statements_total",
    "execution_millis",
    "error_class",
    "recorded_by",
)

STATE_APPLIED = "applied"
STATE_FAILED = "failed"

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_MISSING_TABLE = {"42P01", "3F000"}
_MYSQL_MISSING_TABLE = {1146, 1049}


class RevisionTableError(Exception):
    """The revision table exists but is not one Ptah can read."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class RevisionTable:
    """Where the revision table lives. `schema` None means the connection's default."""

    name: str = DEFAULT_TABLE
    schema: str | None = None

    def __post_init__(self) -> None:
        for part in (self.name, self.schema):
            if part is not None and not _NAME.match(part):
                raise ValueError("a revision table or schema name must be a plain identifier")

    @classmethod
    def parse(cls, text: str) -> RevisionTable:
        schema, _, name = text.rpartition(".")
        return cls(name=name, schema=schema or None)

    def quoted(self, dialect: Dialect) -> str:
        q = '"' if dialect is Dialect.POSTGRESQL else "`"
        schema = self.schema
        if schema is None and dialect is Dialect.POSTGRESQL:
            schema = "public"
        return f"{q}{self.name}{q}" if schema is None else f"{q}{schema}{q}.{q}{self.name}{q}"

    def display(self, dialect: Dialect) -> str:
        schema = self.schema or ("public" if dialect is Dialect.POSTGRESQL else None)
        return self.name if schema is None else f"{schema}.{self.name}"


class Revision(NamedTuple):
    """One row. A NamedTuple rather than a dataclass: a history of ten thousand rows is read on
    every status, and tuples are built several times faster."""

    version: int
    description: str | None
    kind: str
    state: str
    statements_applied: int | None
    statements_total: int | None
    checksum: str
    execution_millis: int | None
    error_class: str | None
    recorded_by: str | None
    applied_at: datetime | None

    @property
    def dirty(self) -> bool:
        return self.state != STATE_APPLIED

    @property
    def is_checkpoint(self) -> bool:
        return self.kind == "checkpoint"


@dataclass(frozen=True)
class RevisionRead:
    """One reading of the table: whether it exists, its columns and its rows by version."""

    exists: bool
    columns: frozenset[str]
    rows: tuple[Revision, ...]


# The columns that mark other tools' revision tables, to name the tool whose table sits where
# Ptah's would (golang-migrate's and dbmate's default name is `schema_migrations`, Ptah's own).
# (tool, columns it always has, whether it has only those)
_FOREIGN_TABLES = (
    ("golang-migrate", frozenset({"version", "dirty"}), True),
    ("morph", frozenset({"version", "name"}), True),
    ("dbmate (or Rails)", frozenset({"version"}), True),
    ("goose", frozenset({"version_id", "is_applied"}), False),
    ("Flyway", frozenset({"installed_rank", "version", "script", "success"}), False),
)


def foreign_tool(columns: frozenset[str]) -> str | None:
    """The migration tool whose revision table has these columns, if one does."""
    for tool, marks, exact in _FOREIGN_TABLES:
        if columns == marks if exact else marks <= columns:
            return tool
    return None


def _aware(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


# The columns read, in this order; an older table lacks some and they read as NULL.
_READ_ORDER = (
    "version",
    "description",
    "kind",
    "state",
    "statements_applied",
    "statements_total",
    "checksum",
    "execution_millis",
    "error_class",
    "recorded_by",
    "applied_at",
)


async def read_revisions(db: Database, table: RevisionTable) -> RevisionRead:
    """Every row, in version order, from one SELECT (so one consistent snapshot of the rows).

    A first, row-less `SELECT * ... LIMIT 0` learns which columns exist, so an older table
    without the newer columns is read as it is and an absent table reads as an empty history.
    The rows are then read with an explicit column list; on MySQL/MariaDB the timestamp is read
    as text, which the driver decodes far faster than a DATETIME.
    """
    name = table.quoted(db.dialect)
    try:
        names, _ = await db.fetch(f"SELECT * FROM {name} LIMIT 0")
    except DatabaseError as exc:
        error = exc.error_class
        if error.sqlstate in _MISSING_TABLE or error.mysql_errno in _MYSQL_MISSING_TABLE:
            return RevisionRead(exists=False, columns=frozenset(), rows=())
        raise
    columns = frozenset(n.lower() for n in names)
    missing = [c for c in REQUIRED_COLUMNS if c not in columns]
    if missing:
        tool = foreign_tool(columns)
        if tool is not None:
            raise RevisionTableError(
                "RevisionTableUnreadable",
                f"{table.display(db.dialect)} is {tool}'s revision table, not Ptah's:"
                " Ptah neither reads nor alters it; to adopt the database, see"
                " docs/guide-migrations.md, 'A database another tool migrated'",
            )
        raise RevisionTableError(
            "RevisionTableUnreadable",
            f"{table.display(db.dialect)} is not a Ptah revision table (it lacks the columns"
            f" {', '.join(missing)}); Ptah neither reads nor alters it",
        )
    select: list[str] = []
    for column in _READ_ORDER:
        if column not in columns:
            select.append("NULL")
        elif column == "applied_at" and db.dialect is Dialect.MYSQL:
            select.append("CAST(applied_at AS CHAR)")
        else:
            select.append(column)
    _, rows = await db.fetch(f"SELECT {', '.join(select)} FROM {name} ORDER BY version")
    make = Revision
    revisions = tuple(
        make(
            int(version),
            description,
            kind or "migration",
            state,
            None if applied is None else int(applied),
            None if total is None else int(total),
            checksum.strip(),
            None if millis is None else int(millis),
            error_class,
            recorded_by,
            _aware(applied_at),
        )
        for (
            version,
            description,
            kind,
            state,
            applied,
            total,
            checksum,
            millis,
            error_class,
            recorded_by,
            applied_at,
        ) in rows
    )
    return RevisionRead(exists=True, columns=columns, rows=revisions)


def _column_types(dialect: Dialect) -> dict[str, str]:
    if dialect is Dialect.POSTGRESQL:
        return {
            "description": "TEXT NOT NULL DEFAULT ''",
            "kind": "TEXT NOT NULL DEFAULT 'migration'",
            "statements_applied": "INTEGER",
            "statements_total": "INTEGER",
            "execution_millis": "BIGINT",
            "error_class": "TEXT",
            "recorded_by": "TEXT",
            "applied_at": "TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()",
        }
    return {
        "description": "VARCHAR(255) NOT NULL DEFAULT ''",
        "kind": "VARCHAR(16) NOT NULL DEFAULT 'migration'",
        "statements_applied": "INT NULL",
        "statements_total": "INT NULL",
        "execution_millis": "BIGINT NULL",
        "error_class": "VARCHAR(16) NULL",
        "recorded_by": "VARCHAR(16) NULL",
        "applied_at": "DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)",
    }


async def ensure_table(db: Database, table: RevisionTable, read: RevisionRead) -> None:
    """Create the table, or give an older one the newer columns. Call only when about to write."""
    name = table.quoted(db.dialect)
    types = _column_types(db.dialect)
    if not read.exists:
        if db.dialect is Dialect.POSTGRESQL:
            if table.schema not in (None, "public"):
                await db.execute(f'CREATE SCHEMA IF NOT EXISTS "{table.schema}"')
            await db.execute(
                f"CREATE TABLE IF NOT EXISTS {name} ("
                "version BIGINT PRIMARY KEY,"
                f" description {types['description']},"
                f" kind {types['kind']},"
                " state TEXT NOT NULL,"
                f" statements_applied {types['statements_applied']},"
                f" statements_total {types['statements_total']},"
                " checksum TEXT NOT NULL,"
                f" execution_millis {types['execution_millis']},"
                f" error_class {types['error_class']},"
                f" recorded_by {types['recorded_by']},"
                f" applied_at {types['applied_at']})"
            )
        else:
            await db.execute(
                f"CREATE TABLE IF NOT EXISTS {name} ("
                "version BIGINT NOT NULL PRIMARY KEY,"
                f" description {types['description']},"
                f" kind {types['kind']},"
                " state VARCHAR(16) NOT NULL,"
                f" statements_applied {types['statements_applied']},"
                f" statements_total {types['statements_total']},"
                " checksum CHAR(64) NOT NULL,"
                f" execution_millis {types['execution_millis']},"
                f" error_class {types['error_class']},"
                f" recorded_by {types['recorded_by']},"
                f" applied_at {types['applied_at']}"
                ") ENGINE=InnoDB"
            )
        return
    for column in (*NEWER_COLUMNS, "description", "applied_at"):
        if column not in read.columns:
            await db.execute(f"ALTER TABLE {name} ADD COLUMN {column} {types[column]}")


def _now(dialect: Dialect) -> str:
    return "clock_timestamp()" if dialect is Dialect.POSTGRESQL else "UTC_TIMESTAMP(6)"


@dataclass(frozen=True)
class NewRevision:
    """One revision row to write for a file: its state and counts; the file gives the rest."""

    file: MigrationFile
    state: str
    statements_applied: int
    statements_total: int
    execution_millis: int | None
    error_class: str | None
    recorded_by: str


def recorded_without_running(file: MigrationFile, statements: int, recorded_by: str) -> NewRevision:
    """The applied row of a file recorded though nothing ran (baseline, set): no duration."""
    return NewRevision(
        file,
        state=STATE_APPLIED,
        statements_applied=statements,
        statements_total=statements,
        execution_millis=None,
        error_class=None,
        recorded_by=recorded_by,
    )


def _row_values(row: NewRevision) -> list[object]:
    """The revision row's values, in the INSERT's column order (execution_millis sixth)."""
    file = row.file
    kind = "checkpoint" if file.kind is FileKind.CHECKPOINT else "migration"
    return [
        file.version,
        file.description,
        kind,
        row.state,
        row.statements_applied,
        row.statements_total,
        file.checksum,
        row.execution_millis,
        row.error_class,
        row.recorded_by,
    ]


def _insert(db: Database, table: RevisionTable, values: list[str]) -> str:
    return (
        f"INSERT INTO {table.quoted(db.dialect)} (version, description, kind, state,"
        " statements_applied, statements_total, checksum, execution_millis, error_class,"
        f" recorded_by, applied_at) VALUES ({', '.join(values)}, {_now(db.dialect)})"
    )


def insert_revision_sql(
    db: Database,
    table: RevisionTable,
    row: NewRevision,
    millis_expression: str | None = None,
) -> tuple[str, list[object]]:
    """The INSERT of one revision row and its parameters.

    `millis_expression`, when given, is SQL the server evaluates for execution_millis (used
    when the duration is only known on the server, inside one batched request).
    """
    params: list[object] = []
    marks: list[str] = []
    for position, value in enumerate(_row_values(row)):
        if position == 7 and millis_expression is not None:
            marks.append(millis_expression)
            continue
        params.append(value)
        marks.append(db.param(len(params)))
    return _insert(db, table, marks), params


# A value written into a revision row's SQL as a literal: an integer, NULL, or text of these
# characters only (file descriptions are `[A-Za-z0-9._-]`, checksums hex; states, error classes
# and recorders are words), which needs nothing beyond the two quotes around it.
_LITERAL_TEXT = re.compile(r"[A-Za-z0-9._:\- ]{0,255}")


def literal(value: object) -> str | None:
    """`value` as an SQL literal both engines read alike, or None when it is not one of the
    kinds above (it must then go as a parameter)."""
    # Exact types, not subclasses: what is checked must be what is written (a str subclass
    # could format as other text; a bool is an int).
    if value is None:
        return "NULL"
    if type(value) is int:
        return str(value)
    if type(value) is str and _LITERAL_TEXT.fullmatch(value):
        return f"'{value}'"
    return None


def insert_revision_literal_sql(db: Database, table: RevisionTable, row: NewRevision) -> str | None:
    """The INSERT of one revision row with its values written in, or None if one cannot be."""
    values = [literal(v) for v in _row_values(row)]
    written = [v for v in values if v is not None]
    return _insert(db, table, written) if len(written) == len(values) else None


def _postgres_literal_insert(db: Database, table: RevisionTable, row: NewRevision) -> str | None:
    """On PostgreSQL, the row's INSERT with its values written in (see `literal`): asyncpg
    sends a parameterised statement in two round trips, prepare then execute, and this one is
    written for every file applied. None elsewhere, or when a value cannot be written in."""
    if db.dialect is not Dialect.POSTGRESQL:
        return None
    return insert_revision_literal_sql(db, table, row)


async def insert_revision(db: Database, table: RevisionTable, row: NewRevision) -> None:
    """Write one revision row (on PostgreSQL as literals where it can be)."""
    text = _postgres_literal_insert(db, table, row)
    if text is not None:
        await db.execute(text)
    else:
        await db.execute(*insert_revision_sql(db, table, row))


async def insert_revision_and_commit(db: Database, table: RevisionTable, row: NewRevision) -> None:
    """Write one revision row as the open transaction's last statement and commit (on
    PostgreSQL in one request when its values can be written in). A failure of the commit
    raises CommitFailedError, of the row DatabaseError."""
    text = _postgres_literal_insert(db, table, row)
    if text is not None:
        await db.execute_and_commit(text)
    else:
        await db.execute_and_commit(*insert_revision_sql(db, table, row))


async def record_progress(
    db: Database, table: RevisionTable, version: int, statements_applied: int
) -> None:
    p = db.param
    await db.execute(
        f"UPDATE {table.quoted(db.dialect)} SET statements_applied = {p(1)},"
        f" applied_at = {_now(db.dialect)} WHERE version = {p(2)}",
        [statements_applied, version],
    )


async def finish_revision(
    db: Database,
    table: RevisionTable,
    *,
    version: int,
    state: str,
    statements_applied: int,
    execution_millis: int | None,
    error_class: str | None,
) -> None:
    p = db.param
    await db.execute(
        f"UPDATE {table.quoted(db.dialect)} SET state = {p(1)}, statements_applied = {p(2)},"
        f" execution_millis = {p(3)}, error_class = {p(4)}, applied_at = {_now(db.dialect)}"
        f" WHERE version = {p(5)}",
        [state, statements_applied, execution_millis, error_class, version],
    )


async def mark_applied(
    db: Database,
    table: RevisionTable,
    *,
    version: int,
    checksum: str,
    statements_total: int,
    recorded_by: str,
) -> None:
    """A person's decision that a dirty row's file is in effect after all (repair, set)."""
    p = db.param
    await db.execute(
        f"UPDATE {table.quoted(db.dialect)} SET state = {p(1)}, statements_applied = {p(2)},"
        f" statements_total = {p(3)}, checksum = {p(4)}, error_class = NULL,"
        f" recorded_by = {p(5)}, applied_at = {_now(db.dialect)} WHERE version = {p(6)}",
        [STATE_APPLIED, statements_total, statements_total, checksum, recorded_by, version],
    )


async def delete_revisions(db: Database, table: RevisionTable, versions: Sequence[int]) -> None:
    if not versions:
        return
    p = db.param
    marks = ", ".join(p(i + 1) for i in range(len(versions)))
    await db.execute(
        f"DELETE FROM {table.quoted(db.dialect)} WHERE version IN ({marks})", list(versions)
    )
