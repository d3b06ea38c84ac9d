"""What part of a database a command looks at: schemas, tables, exclusions.

The same scope filters both the observed and the desired schema, so that an excluded table is
never created, changed or dropped.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ptah_operator.engine.schema.model import Dialect


@dataclass(frozen=True)
class Scope:
    # PostgreSQL schemas; ignored on MySQL/MariaDB, whose scope is the URL's database.
    schemas: tuple[str, ...] = ("public",)
    # Glob patterns of tables to include (`users`, `app.*`); empty means every table.
    tables: tuple[str, ...] = ()
    # Glob patterns of tables to leave alone.
    exclude: tuple[str, ...] = ()

    def admits_schema(self, dialect: Dialect, schema: str) -> bool:
        return dialect.family == "mysql" or schema in self.schemas

    def admits_table(self, dialect: Dialect, schema: str, table: str) -> bool:
        if not self.admits_schema(dialect, schema):
            return False
        names = {table, f"{schema}.{table}"} if schema else {table}
        if self.tables and not any(fnmatch.fnmatchcase(n, p) for n in names for p in self.tables):
            return False
        return not any(fnmatch.fnmatchcase(n, p) for n in names for p in self.exclude)

    def to_json(self) -> dict[str, Any]:
        return {
            "schemas": sorted(self.schemas),
            "tables": sorted(self.tables),
            "exclude": sorted(self.exclude),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Scope:
        return cls(
            schemas=tuple(value.get("schemas", ("public",))),
            tables=tuple(value.get("tables", ())),
            exclude=tuple(value.get("exclude", ())),
        )
