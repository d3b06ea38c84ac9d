"""What one desired-schema file declares, before the files are merged (see `desired`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ptah_operator.engine.schema.model import (
    Argument,
    Check,
    Domain,
    EnumType,
    Extension,
    ForeignKey,
    Function,
    Grant,
    Index,
    PrimaryKey,
    Sequence,
    Table,
    Trigger,
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
    # (schema, table, column, default text) from `ALTER TABLE ... ALTER COLUMN c SET DEFAULT`
    # (how pg_dump gives a serial column its nextval).
    column_defaults: list[tuple[str, str, str, str]] = field(default_factory=list)
    # (schema, table, column, "always" | "by default", options, sequence name or None) from
    # `ALTER TABLE ... ALTER COLUMN c ADD GENERATED ... AS IDENTITY (...)`; options as
    # `identity_clause` reads them.
    identities: list[tuple[str, str, str, str, dict[str, int | bool], str | None]] = field(
        default_factory=list
    )
    extensions: list[Extension] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)
    # (extension, comment) from `COMMENT ON EXTENSION`.
    extension_comments: list[tuple[str, str | None]] = field(default_factory=list)
    # (schema, role) from `ALTER SCHEMA ... OWNER TO`; (schema, comment) from COMMENT ON SCHEMA.
    schema_owners: list[tuple[str, str]] = field(default_factory=list)
    schema_comments: list[tuple[str, str | None]] = field(default_factory=list)
    # (schema, table, trigger) from CREATE TRIGGER, its function not yet resolved.
    triggers: list[tuple[str, str, Trigger]] = field(default_factory=list)

    def declares_nothing(self) -> bool:
        """Whether nothing has been read from the file yet (session settings aside)."""
        return not any(getattr(self, f.name) for f in fields(self) if f.name != "source")

    def forget(self, kind: str, schema: str, name: str) -> None:
        """`DROP kind IF EXISTS name`, read in order: what this file declared of that name
        so far is taken back (a dump drops each object before it makes it). Dropping what
        it did not declare changes nothing: a desired schema states what exists."""
        if kind == "TABLE":
            self.tables = [t for t in self.tables if (t.schema, t.name) != (schema, name)]
            self.attachments = [a for a in self.attachments if a[:2] != (schema, name)]
            self.comments = [c for c in self.comments if c[:2] != (schema, name)]
            self.grants = [g for g in self.grants if g[:2] != (schema, name)]
            self.column_defaults = [c for c in self.column_defaults if c[:2] != (schema, name)]
            self.identities = [i for i in self.identities if i[:2] != (schema, name)]
            self.triggers = [t for t in self.triggers if t[:2] != (schema, name)]
        if kind in {"TABLE", "VIEW", "MATERIALIZED VIEW"}:
            self.views = [v for v in self.views if (v.schema, v.name) != (schema, name)]
            self.owners = [
                o for o in self.owners if o[0] == "FUNCTION" or (o[1], o[2]) != (schema, name)
            ]
        if kind == "SEQUENCE":
            self.sequences = [s for s in self.sequences if (s.schema, s.name) != (schema, name)]
