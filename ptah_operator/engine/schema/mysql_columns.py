"""What MySQL/MariaDB hold for a column besides its type, nullability, default and comment.

`MODIFY COLUMN` replaces a column's definition with the one it is given: whatever the
statement leaves out is gone, silently (ON UPDATE, INVISIBLE, a character set, an SRID,
MariaDB's column-level CHECK). So the model holds each of them, read alike from the catalog
(`information_schema.COLUMNS.EXTRA` and friends) and from a desired schema, and the renderer
restates them all. What the model cannot hold is named in `Column.unmodelled`; `diff`
refuses to plan a change to such a column.

Character sets: a column's collation implies its character set, and a column without a
collation of its own takes the table's default. Both sides hold a collation (and a character
set) only where it differs from the table's default. A desired column may name a character
set without a collation (the server then takes that set's default collation) or spell out
the table's own collation; `settle_columns` asks the server what that comes to, so that it
compares equal to what the server made of it.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass
from typing import Any

import pymysql

from ptah_operator.engine.schema.model import Column, Schema, Table
from ptah_operator.engine.schema.normalize import NormalizationError

SPATIAL_TYPES = frozenset(
    {
        "geometry",
        "point",
        "linestring",
        "polygon",
        "multipoint",
        "multilinestring",
        "multipolygon",
        "geometrycollection",
        "geomcollection",
    }
)


@functools.lru_cache(maxsize=1024)
def is_spatial(type_text: str) -> bool:
    # Cached: inspection asks of every column, and a schema spells few types (bounded: an
    # enum's type spells its values).
    return type_text.split("(", 1)[0].split(" ", 1)[0] in SPATIAL_TYPES


@dataclass(frozen=True)
class Extra:
    """`information_schema.COLUMNS.EXTRA`, read. MariaDB joins its words with ", "
    (`on update current_timestamp(3), INVISIBLE`), MySQL with spaces (`DEFAULT_GENERATED on
    update CURRENT_TIMESTAMP INVISIBLE`)."""

    auto_increment: bool = False
    on_update: str | None = None
    # "virtual" or "stored" (MariaDB's PERSISTENT is STORED).
    generated: str | None = None
    invisible: bool = False
    unmodelled: tuple[str, ...] = ()


_EXTRA_WORD = re.compile(
    r"auto_increment"
    r"|default_generated"
    r"|on update (?P<on_update>[a-z_]+(?:\(\s*\d*\s*\))?)"
    r"|(?P<generated>virtual|stored|persistent) generated"
    r"|invisible"
    r"|without system versioning"
)


_NOTHING = Extra()


def read_extra(text: str | None) -> Extra:
    if not text:
        return _NOTHING  # most columns: read a thousand tables' worth without a regex
    lowered = " ".join(text.lower().split())
    auto_increment = invisible = False
    on_update: str | None = None
    generated: str | None = None
    unmodelled: list[str] = []
    for match in _EXTRA_WORD.finditer(lowered):
        word = match.group(0)
        if word == "auto_increment":
            auto_increment = True
        elif word == "invisible":
            invisible = True
        elif word == "without system versioning":
            unmodelled.append("WITHOUT SYSTEM VERSIONING")
        elif match.group("on_update"):
            on_update = normalize_on_update(match.group("on_update"))
        elif match.group("generated"):
            generated = "virtual" if match.group("generated") == "virtual" else "stored"
        # DEFAULT_GENERATED (MySQL 8): the default is an expression; COLUMN_DEFAULT holds it.
    rest = _EXTRA_WORD.sub(" ", lowered).replace(",", " ").split()
    if rest:
        unmodelled.append(f"EXTRA {' '.join(rest)!r}")
    return Extra(auto_increment, on_update, generated, invisible, tuple(unmodelled))


_NOW = frozenset({"current_timestamp", "now", "localtime", "localtimestamp"})


def normalize_on_update(text: str) -> str:
    """ON UPDATE as the model holds it: `CURRENT_TIMESTAMP()`, or `CURRENT_TIMESTAMP(n)` with
    a precision from 1 to 6 (the spelling a `DEFAULT CURRENT_TIMESTAMP` takes). NOW(),
    LOCALTIME and LOCALTIMESTAMP are the same function; precision 0 is none."""
    match = re.fullmatch(r"\s*([a-z_]+)\s*(?:\(\s*(\d*)\s*\))?\s*", text.lower())
    if match is None or match.group(1) not in _NOW:
        raise NormalizationError("ON UPDATE takes CURRENT_TIMESTAMP, with or without a precision")
    precision = int(match.group(2)) if match.group(2) else 0
    if precision > 6:
        raise NormalizationError("ON UPDATE CURRENT_TIMESTAMP takes a precision up to 6")
    return "CURRENT_TIMESTAMP()" if precision == 0 else f"CURRENT_TIMESTAMP({precision})"


def charset_of(collation: str) -> str:
    """The character set a collation belongs to: every MySQL/MariaDB collation is named after
    its set (`latin1_bin`, `utf8mb4_0900_ai_ci`, `binary`), and no set has `_` in its name."""
    return collation.split("_", 1)[0]


# Names the server reports under another name: `utf8` is `utf8mb3` on MariaDB 10.6+ and
# MySQL 8.0.30+ (older servers report `utf8`). Tried only when the name itself is unknown.
_CHARSET_ALIASES = {"utf8": "utf8mb3", "utf8mb3": "utf8"}


@dataclass(frozen=True)
class _Collations:
    database: str
    # Character set -> the collation a column naming only that set takes.
    defaults: dict[str, str]

    def charset(self, name: str) -> str:
        name = name.lower()
        if name not in self.defaults and _CHARSET_ALIASES.get(name) in self.defaults:
            return _CHARSET_ALIASES[name]
        return name

    def collation(self, name: str, charset: str | None) -> str:
        name = name.lower()
        known = self.defaults.keys()
        head, _, tail = name.partition("_")
        if head not in known and _CHARSET_ALIASES.get(head) in known and tail:
            return f"{_CHARSET_ALIASES[head]}_{tail}"
        if head not in known and charset is not None and charset != "binary":
            # MariaDB 10.10+: `COLLATE uca1400_ai_ci` under a character set.
            return f"{charset}_{name}"
        return name


def settle_column(column: Column, table_collation: str, collations: _Collations) -> Column:
    """The desired column with its character set and collation as the server will hold them
    in a table whose default collation is `table_collation`: a set named alone takes its
    default collation, and what equals the table's default is left unsaid."""
    if column.charset is None and column.collation is None:
        return column
    charset = collations.charset(column.charset) if column.charset is not None else None
    collation = (
        collations.collation(column.collation, charset) if column.collation is not None else None
    )
    if collation is None:
        collation = collations.defaults.get(charset or "")
        if collation is None:
            # A set this server does not know: left as written, for the server to refuse.
            return column
    if charset is None:
        charset = charset_of(collation)
    return dataclasses.replace(
        column,
        charset=None if charset == charset_of(table_collation) else charset,
        collation=None if collation == table_collation else collation,
    )


async def _read_collations(conn: Any) -> _Collations:
    async with conn.cursor() as cur:
        await cur.execute(
            "SELECT CHARACTER_SET_NAME, DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS"
        )
        defaults = {str(r[0]).lower(): str(r[1]).lower() for r in await cur.fetchall()}
        await cur.execute("SELECT @@collation_database")
        row = await cur.fetchone()
        database = str(row[0]).lower()
        try:
            # MariaDB 11.2+: the collation each set takes when named alone, where it is not
            # the set's compiled default (`utf8mb4=utf8mb4_uca1400_ai_ci,...`).
            await cur.execute("SELECT @@character_set_collations")
            setting = await cur.fetchone()
        except pymysql.MySQLError:
            setting = None
    for entry in str(setting[0] if setting and setting[0] else "").split(","):
        name, _, collation = entry.strip().lower().partition("=")
        if name and collation:
            defaults[name] = collation
    return _Collations(database, defaults)


async def settle_columns(conn: Any, observed: Schema, desired: Schema) -> Schema:
    """`desired`, each column that names a character set or collation settled against the
    server (`settle_column`): an existing table by its default collation, a new one by the
    database's. Reads only; asks nothing when no column names either."""
    if desired.dialect.family != "mysql" or (
        not any(
            c.charset is not None or c.collation is not None
            for t in desired.tables
            for c in t.columns
        )
        and not any(t.charset is not None or t.collation is not None for t in desired.tables)
    ):
        return desired
    collations = await _read_collations(conn)
    tables: list[Table] = []
    for table in desired.tables:
        existing = observed.table(table.schema, table.name)
        named = settle_table_collation(table, collations)
        default = (
            named or (existing.collation if existing is not None else None) or collations.database
        )
        columns = tuple(settle_column(c, default.lower(), collations) for c in table.columns)
        settled = dataclasses.replace(table, columns=columns, collation=named, charset=None)
        tables.append(table if settled == table and named == table.collation else settled)
    return dataclasses.replace(desired, tables=tuple(tables))


def settle_table_collation(table: Table, collations: _Collations) -> str | None:
    """The default collation a desired table's options name (`DEFAULT CHARSET=x` alone is the
    set's default collation), as the server names it; None when they name neither."""
    if table.collation is not None:
        charset = collations.charset(charset_of(table.collation))
        return collations.collation(table.collation, charset)
    if table.charset is not None:
        return collations.defaults.get(collations.charset(table.charset))
    return None
