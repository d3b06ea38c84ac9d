"""What one desired-schema file declares, before the files are merged (see `desired`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ptah_operator.engine.schema.model import (
    Argument,
    Check,
    EnumType,
    ForeignKey,
    Function,
    Grant,
    Index,
    PrimaryKey,
    Sequence,
    Table,
    UniqueConstraint,
    View,
)


class DesiredSchemaError(ValueError):
    """A desired-schema file the engine refuses; the message names the file and the object."""


Attachment = PrimaryKey | UniqueConstraint | Index | ForeignKey | Check


@dataclass
class Parts:
    """What one file declares."""

    source: str
    schemas: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    enums: list[EnumType] = field(default_factory=list)
    # (schema, table, object) stated apart from the table's definition.
    attachments: list[tuple[str, str, Attachment]] = field(default_factory=list)
    # (schema, table, column or None for the table, comment)
    comments: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    sequences: list[Sequence] = field(default_factory=list)
    # (schema, sequence, table, column) from `ALTER SEQUENCE ... OWNED BY`; None for NONE.
    sequence_owners: list[tuple[str, str, str | None, str | None]] = field(default_factory=list)
    views: list[View] = field(default_factory=list)
    # (schema, table, grant) from `GRANT ... ON table TO ...`.
    grants: list[tuple[str, str, Grant]] = field(default_factory=list)
    # PostgreSQL functions, their types not yet qualified (`desired` does it).
    functions: list[Function] = field(default_factory=list)
    # (kind, schema, name, role, arguments) from `ALTER TABLE|VIEW|SEQUENCE|TYPE|FUNCTION ...
    # OWNER TO role`; arguments name a function's overload, None for the other kinds.
    owners: list[tuple[str, str, str, str, tuple[Argument, ...] | None]] = field(
        default_factory=list
    )
