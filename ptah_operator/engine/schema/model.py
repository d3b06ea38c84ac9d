"""The normalized schema model shared by introspection, the desired-schema readers and diff.

Every object is a frozen dataclass and every collection a tuple in a canonical order (columns
keep their ordinal order, everything else is sorted by name), so that two models that mean
the same thing are equal and serialize to the same bytes. Types, defaults and expressions are
stored already normalized for their dialect (see `normalize`).

Constraint and index names are optional on the desired side: a person may leave them to the
database. Comparison then goes by content (`key()`), and a name takes part only when the
desired side gives one.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Dialect(StrEnum):
    POSTGRESQL = "postgresql"
    MYSQL = "mysql"
    MARIADB = "mariadb"

    @property
    def family(self) -> str:
        """`postgresql` or `mysql`: what parsing, rendering and normalization go by."""
        return "postgresql" if self is Dialect.POSTGRESQL else "mysql"

    @property
    def sqlglot(self) -> str:
        return "postgres" if self is Dialect.POSTGRESQL else "mysql"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    # PostgreSQL: "always", "by default" (identity) or "serial" (an owned sequence's nextval);
    # MySQL/MariaDB: "auto_increment".
    identity: str | None = None
    # Expression of a STORED generated column.
    generated: str | None = None
    collation: str | None = None
    comment: str | None = None


@dataclass(frozen=True)
class PrimaryKey:
    columns: tuple[str, ...]
    name: str | None = None

    def key(self) -> tuple[str, ...]:
        return self.columns


@dataclass(frozen=True)
class UniqueConstraint:
    columns: tuple[str, ...]
    name: str | None = None

    def key(self) -> tuple[str, ...]:
        return self.columns


@dataclass(frozen=True)
class Index:
    name: str | None
    columns: tuple[str, ...]
    unique: bool = False
    # PostgreSQL only: partial-index predicate and INCLUDE columns.
    where: str | None = None
    include: tuple[str, ...] = ()
    # MySQL/MariaDB only: prefix length per column (None for a whole column).
    prefix_lengths: tuple[int | None, ...] = ()
    method: str | None = None
    # MySQL/MariaDB: the index the server made for a foreign key that had none. Kept while
    # nobody declares it, dropped with its key; not part of the comparison.
    implicit: bool = field(default=False, compare=False)

    def key(self) -> tuple[Any, ...]:
        prefixes = self.prefix_lengths if any(p is not None for p in self.prefix_lengths) else ()
        return (self.columns, self.unique, self.where, self.include, prefixes, self.method)


@dataclass(frozen=True)
class ForeignKey:
    columns: tuple[str, ...]
    ref_schema: str
    ref_table: str
    ref_columns: tuple[str, ...]
    on_delete: str = "NO ACTION"
    on_update: str = "NO ACTION"
    name: str | None = None
    # MySQL/MariaDB: the name of the implicit index the server made for this key.
    backing_index: str | None = field(default=None, compare=False)

    def key(self) -> tuple[Any, ...]:
        return (
            self.columns,
            self.ref_schema,
            self.ref_table,
            self.ref_columns,
            self.on_delete,
            self.on_update,
        )


@dataclass(frozen=True)
class Check:
    expr: str
    name: str | None = None

    def key(self) -> tuple[str, ...]:
        return (self.expr,)


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[Column, ...]
    primary_key: PrimaryKey | None = None
    uniques: tuple[UniqueConstraint, ...] = ()
    indexes: tuple[Index, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[Check, ...] = ()
    comment: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    def column(self, name: str) -> Column | None:
        for column in self.columns:
            if column.name == name:
                return column
        return None


@dataclass(frozen=True)
class EnumType:
    """A PostgreSQL enum type. MySQL enums are column types (`enum('a','b')`)."""

    schema: str
    name: str
    values: tuple[str, ...]

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class Schema:
    dialect: Dialect
    schemas: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    enums: tuple[EnumType, ...] = ()

    def table(self, schema: str, name: str) -> Table | None:
        for table in self.tables:
            if table.schema == schema and table.name == name:
                return table
        return None

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = _plain(self)
        return plain

    @functools.cached_property
    def fingerprint_value(self) -> str:
        return "sha256:" + hashlib.sha256(canonical_json(self.to_json())).hexdigest()

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of the model: equal models, equal fingerprints."""
        return self.fingerprint_value


def canonical_json(value: Any) -> bytes:
    """The one JSON encoding the engine hashes and writes: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@functools.cache
def _compared_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.compare)


def _plain(value: Any) -> Any:
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, str | int | bool) or value is None:
        return value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: _plain(getattr(value, name)) for name in _compared_fields(type(value))}
    return value


def _by_name(item: Any) -> tuple[str, str]:
    return (item.name or "", json.dumps(_plain(item), sort_keys=True))


def canonical_table(table: Table) -> Table:
    """The same table with every collection but the columns in canonical order."""
    return dataclasses.replace(
        table,
        uniques=tuple(sorted(table.uniques, key=_by_name)),
        indexes=tuple(sorted(table.indexes, key=_by_name)),
        foreign_keys=tuple(sorted(table.foreign_keys, key=_by_name)),
        checks=tuple(sorted(table.checks, key=_by_name)),
    )


def canonical_schema(
    dialect: Dialect,
    schemas: list[str] | tuple[str, ...],
    tables: list[Table] | tuple[Table, ...],
    enums: list[EnumType] | tuple[EnumType, ...],
) -> Schema:
    return Schema(
        dialect=dialect,
        schemas=tuple(sorted(set(schemas))),
        tables=tuple(
            sorted((canonical_table(t) for t in tables), key=lambda t: (t.schema, t.name))
        ),
        enums=tuple(sorted(enums, key=lambda e: (e.schema, e.name))),
    )
