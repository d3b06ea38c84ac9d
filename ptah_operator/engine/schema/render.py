"""SQL text per dialect for each kind of change `diff` decides.

Every identifier is quoted (`"x"` on PostgreSQL, `` `x` `` on MySQL/MariaDB) so the text does
not depend on keyword lists. Types, defaults and expressions come from the model already in
their canonical spelling, which is valid SQL for the dialect. A statement carries no
terminating semicolon.
"""

from __future__ import annotations

import re

from ptah_operator.engine.schema.functions import number_text, setting_clause
from ptah_operator.engine.schema.model import (
    Argument,
    Check,
    Column,
    Dialect,
    Domain,
    EnumType,
    Extension,
    ForeignKey,
    Function,
    Index,
    PrimaryKey,
    Sequence,
    Table,
    Trigger,
    UniqueConstraint,
    View,
)
from ptah_operator.engine.schema.normalize import (
    is_plain_column,
    mysql_grantee_parts,
    sequence_options,
    string_literal,
)
from ptah_operator.engine.schema.triggers import render_trigger

# A default the grammar takes bare after DEFAULT: a literal, a name, a function call, a cast
# of one, an array; anything else (`now() AT TIME ZONE 'utc'`, `a || b`) is given in
# parentheses, which both servers read the same (PostgreSQL's DEFAULT takes no AT TIME ZONE,
# COLLATE or boolean operator bare).
_BARE_DEFAULT = re.compile(
    r"""(?:-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"""
    r"""|[bBxXeEnN]?'(?:[^']|'')*'"""
    r"""|[A-Za-z_][A-Za-z0-9_$.]*(?:\((?:[^()']|'(?:[^']|'')*')*\))?"""
    r"""|ARRAY\[(?:[^\[\]']|'(?:[^']|'')*')*\])"""
    r"""(?:::[A-Za-z_][A-Za-z0-9_ .\[\]"()]*)?""",
    re.IGNORECASE,
)


class Renderer:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.pg = dialect.family == "postgresql"

    def literal(self, text: str) -> str:
        return string_literal(self.dialect, text)

    def q(self, name: str) -> str:
        if self.pg:
            return '"' + name.replace('"', '""') + '"'
        return "`" + name.replace("`", "``") + "`"

    def table(self, schema: str, name: str) -> str:
        return f"{self.q(schema)}.{self.q(name)}" if schema else self.q(name)

    def cols(self, names: tuple[str, ...]) -> str:
        return ", ".join(self.q(n) for n in names)

    def key(self, key: str, prefix: int | None = None) -> str:
        if not is_plain_column(key):
            return f"({key})"
        return f"{self.q(key)}({prefix})" if prefix is not None else self.q(key)

    def default_text(self, column: Column) -> str:
        """The default CREATE and SET DEFAULT are given: on PostgreSQL as the desired schema
        wrote it, where it did."""
        if self.pg and column.default_source is not None:
            return column.default_source
        return column.default or ""

    def default(self, expression: str) -> str:
        """`DEFAULT expr`: bare where the grammar takes it, else in parentheses."""
        return (
            f"DEFAULT {expression}"
            if _BARE_DEFAULT.fullmatch(expression)
            else f"DEFAULT ({expression})"
        )

    # Schemas, extensions and enum types (PostgreSQL).

    def create_schema(self, name: str) -> str:
        return f"CREATE SCHEMA {self.q(name)}"

    def schema_owner(self, name: str, role: str) -> str:
        return f"ALTER SCHEMA {self.q(name)} OWNER TO {self.q(role)}"

    def schema_comment(self, name: str, comment: str) -> str:
        return f"COMMENT ON SCHEMA {self.q(name)} IS {self.literal(comment)}"

    def create_extension(self, extension: Extension) -> str:
        return f"CREATE EXTENSION {self.q(extension.name)} SCHEMA {self.q(extension.schema)}"

    def extension_schema(self, extension: Extension) -> str:
        return f"ALTER EXTENSION {self.q(extension.name)} SET SCHEMA {self.q(extension.schema)}"

    def extension_comment(self, extension: Extension) -> str:
        return f"COMMENT ON EXTENSION {self.q(extension.name)} IS {self.literal(extension.comment or '')}"

    def drop_extension(self, extension: Extension) -> str:
        return f"DROP EXTENSION {self.q(extension.name)}"

    def comment_on(self, target: str, comment: str) -> str:
        """`COMMENT ON <target> IS '...'`; `target` is already rendered (`VIEW "s"."v"`)."""
        return f"COMMENT ON {target} IS {self.literal(comment)}"

    # Domains (PostgreSQL).

    def create_domain(self, domain: Domain) -> str:
        parts = [f"CREATE DOMAIN {self.table(domain.schema, domain.name)} AS {domain.type}"]
        if domain.collation is not None:
            parts.append(f"COLLATE {self.q(domain.collation)}")
        if domain.default is not None:
            parts.append(self.default(domain.default))
        if not domain.nullable:
            parts.append("NOT NULL")
        parts += [self.check_clause(check) for check in domain.checks]
        return " ".join(parts)

    def alter_domain(self, domain: Domain, action: str) -> str:
        return f"ALTER DOMAIN {self.table(domain.schema, domain.name)} {action}"

    def drop_domain(self, domain: Domain) -> str:
        return f"DROP DOMAIN {self.table(domain.schema, domain.name)}"

    # Triggers (PostgreSQL).

    def create_trigger(self, table: Table, trigger: Trigger) -> str:
        return render_trigger(table.schema, table.name, trigger)

    def drop_trigger(self, table: Table, trigger: Trigger) -> str:
        return f"DROP TRIGGER {self.q(trigger.name)} ON {self.table(table.schema, table.name)}"

    def create_enum(self, enum: EnumType) -> str:
        values = ", ".join(self.literal(v) for v in enum.values)
        return f"CREATE TYPE {self.table(enum.schema, enum.name)} AS ENUM ({values})"

    def add_enum_value(self, enum: EnumType, value: str, before: str | None) -> str:
        where = f" BEFORE {self.literal(before)}" if before is not None else ""
        return f"ALTER TYPE {self.table(enum.schema, enum.name)} ADD VALUE {self.literal(value)}{where}"

    def drop_enum(self, enum: EnumType) -> str:
        return f"DROP TYPE {self.table(enum.schema, enum.name)}"

    def rename_enum(self, enum: EnumType, name: str) -> str:
        return f"ALTER TYPE {self.table(enum.schema, enum.name)} RENAME TO {self.q(name)}"

    # Owners (PostgreSQL).

    def owner_to(self, kind: str, name: str, role: str) -> str:
        """`kind` is TABLE, VIEW, SEQUENCE, TYPE or FUNCTION; `name` is already rendered."""
        return f"ALTER {kind} {name} OWNER TO {self.q(role)}"

    # Tables and columns.

    def column_definition(self, column: Column, checks: tuple[Check, ...] = ()) -> str:
        """The column whole. On MySQL/MariaDB, in the order both servers take: type, SRID,
        character set, collation, generation, nullability, default, ON UPDATE,
        AUTO_INCREMENT, INVISIBLE, comment, then `checks`, the column's own (MariaDB
        column-level) checks, which MODIFY COLUMN would otherwise drop."""
        parts = [self.q(column.name)]
        if self.pg and column.identity == "serial":
            parts.append(
                {"integer": "serial", "bigint": "bigserial", "smallint": "smallserial"}[column.type]
            )
        else:
            parts.append(column.type)
        if not self.pg and column.srid is not None:
            # MariaDB takes REF_SYSTEM_ID only right after the type.
            if self.dialect is Dialect.MARIADB:
                parts.append(f"REF_SYSTEM_ID={column.srid}")
            else:
                parts.append(f"SRID {column.srid}")
        if not self.pg and column.charset is not None:
            parts.append(f"CHARACTER SET {self.q(column.charset)}")
        if column.collation is not None:
            parts.append(f"COLLATE {self.q(column.collation)}")
        if column.generated is not None:
            storage = "VIRTUAL" if column.virtual and not self.pg else "STORED"
            parts.append(f"GENERATED ALWAYS AS ({column.generated}) {storage}")
        if column.identity in {"always", "by default"}:
            parts.append(f"GENERATED {column.identity.upper()} AS IDENTITY")
            if column.identity_options is not None:
                parts.append(f"({self.identity_options(column)})")
        if column.default is not None and column.generated is None:
            parts.append(self.default(self.default_text(column)))
        if self.pg or column.generated is None or self.dialect is Dialect.MYSQL:
            # MariaDB refuses a nullability clause on a generated column (it is always
            # nullable there); MySQL takes one, and MODIFY would drop a NOT NULL unsaid.
            parts.append("NULL" if column.nullable else "NOT NULL")
        if not self.pg and column.on_update is not None:
            parts.append(f"ON UPDATE {column.on_update}")
        if column.identity == "auto_increment":
            parts.append("AUTO_INCREMENT")
        if not self.pg and column.invisible:
            parts.append("INVISIBLE")
        if not self.pg and column.comment is not None:
            parts.append(f"COMMENT {self.literal(column.comment)}")
        parts += [f"CHECK ({check.expr})" for check in checks]
        return " ".join(parts)

    def identity_options(self, column: Column) -> str:
        """The options of an identity's sequence, every one stated (`SET ...` for `ALTER
        COLUMN` with `alter`)."""
        start, increment, low, high, cache, cycle = self.identity_values(column)
        return (
            f"START WITH {start} INCREMENT BY {increment} MINVALUE {low} MAXVALUE {high} "
            f"CACHE {cache} {'CYCLE' if cycle else 'NO CYCLE'}"
        )

    @staticmethod
    def identity_values(column: Column) -> tuple[int, int, int, int, int, bool]:
        if column.identity_options is not None:
            return column.identity_options
        increment, low, high, start = sequence_options(column.type)
        return (start, increment, low, high, 1, False)

    def set_identity_options(self, table: Table, column: Column) -> str:
        start, increment, low, high, cache, cycle = self.identity_values(column)
        return self.alter_column(
            table,
            column.name,
            f"SET START WITH {start} SET INCREMENT BY {increment} SET MINVALUE {low} "
            f"SET MAXVALUE {high} SET CACHE {cache} SET {'CYCLE' if cycle else 'NO CYCLE'}",
        )

    @staticmethod
    def deferral(deferrable: str | None) -> str:
        return f" {deferrable}" if deferrable else ""

    def primary_key_clause(self, pk: PrimaryKey) -> str:
        name = f"CONSTRAINT {self.q(pk.name)} " if pk.name and self.pg else ""
        return f"{name}PRIMARY KEY ({self.cols(pk.columns)}){self.deferral(pk.deferrable)}"

    def unique_clause(self, unique: UniqueConstraint) -> str:
        name = f"CONSTRAINT {self.q(unique.name)} " if unique.name else ""
        nulls = "NULLS NOT DISTINCT " if unique.nulls_not_distinct else ""
        return (
            f"{name}UNIQUE {nulls}({self.cols(unique.columns)}){self.deferral(unique.deferrable)}"
        )

    def check_clause(self, check: Check) -> str:
        name = f"CONSTRAINT {self.q(check.name)} " if check.name else ""
        return f"{name}CHECK ({check.expr})"

    def foreign_key_clause(self, fk: ForeignKey) -> str:
        name = f"CONSTRAINT {self.q(fk.name)} " if fk.name else ""
        return (
            f"{name}FOREIGN KEY ({self.cols(fk.columns)}) "
            f"REFERENCES {self.table(fk.ref_schema, fk.ref_table)} ({self.cols(fk.ref_columns)}) "
            f"ON DELETE {fk.on_delete} ON UPDATE {fk.on_update}{self.deferral(fk.deferrable)}"
        )

    def own_checks(self, table: Table, column: str) -> tuple[Check, ...]:
        """MySQL/MariaDB: the checks written on `column` (`a int CHECK (a > 0)`), which
        MariaDB keeps as the column's own, named after it."""
        if self.pg:
            return ()
        return tuple(c for c in table.checks if c.column == column)

    def create_table(self, table: Table) -> str:
        lines = [self.column_definition(c, self.own_checks(table, c.name)) for c in table.columns]
        if table.primary_key is not None:
            lines.append(self.primary_key_clause(table.primary_key))
        lines += [self.unique_clause(u) for u in table.uniques]
        lines += [self.check_clause(c) for c in table.checks if self.pg or c.column is None]
        body = ",\n  ".join(lines)
        suffix = ""
        if not self.pg:
            suffix = self.table_options(table)
            if table.comment is not None:
                suffix += f" COMMENT {self.literal(table.comment)}"
        return f"CREATE TABLE {self.table(table.schema, table.name)} (\n  {body}\n){suffix}"

    def table_options(self, table: Table) -> str:
        """MySQL/MariaDB: the engine and default collation a desired table names."""
        options = ""
        if table.engine is not None:
            options += f" ENGINE={table.engine}"
        if table.collation is not None:
            options += (
                f" DEFAULT CHARSET={table.collation.split('_', 1)[0]} COLLATE={table.collation}"
            )
        elif table.charset is not None:
            options += f" DEFAULT CHARSET={table.charset}"
        return options

    def set_engine(self, table: Table) -> str:
        return self.alter(table, f"ENGINE={table.engine}")

    def drop_table(self, table: Table) -> str:
        return f"DROP TABLE {self.table(table.schema, table.name)}"

    def table_comment(self, table: Table, comment: str | None) -> str:
        # An empty comment removes it in both dialects (and parses everywhere, unlike NULL).
        text = self.literal(comment or "")
        if self.pg:
            return f"COMMENT ON TABLE {self.table(table.schema, table.name)} IS {text}"
        return f"ALTER TABLE {self.table(table.schema, table.name)} COMMENT {text}"

    def column_comment(self, table: Table, column: str, comment: str | None) -> str:
        text = self.literal(comment or "")
        return (
            f"COMMENT ON COLUMN {self.table(table.schema, table.name)}.{self.q(column)} IS {text}"
        )

    def alter(self, table: Table, action: str) -> str:
        return f"ALTER TABLE {self.table(table.schema, table.name)} {action}"

    def add_column(self, table: Table, column: Column, checks: tuple[Check, ...] = ()) -> str:
        return self.alter(table, f"ADD COLUMN {self.column_definition(column, checks)}")

    def drop_column(self, table: Table, column: str) -> str:
        return self.alter(table, f"DROP COLUMN {self.q(column)}")

    def modify_column(self, table: Table, column: Column, checks: tuple[Check, ...] = ()) -> str:
        """MySQL/MariaDB: restate the whole column (with its own checks, see
        `column_definition`): what the statement leaves out, the server drops."""
        return self.alter(table, f"MODIFY COLUMN {self.column_definition(column, checks)}")

    def alter_column(self, table: Table, column: str, action: str) -> str:
        return self.alter(table, f"ALTER COLUMN {self.q(column)} {action}")

    def set_type(self, table: Table, column: Column, *, through_text: bool = False) -> str:
        """`ALTER COLUMN c TYPE t USING c::t`; `through_text` from an enum type, which casts
        to no other type but text (`c::text::t`)."""
        collate = f" COLLATE {self.q(column.collation)}" if column.collation else ""
        via = ""
        if through_text:
            via = "::text[]" if column.type.endswith("[]") else "::text"
        return self.alter_column(
            table,
            column.name,
            f"TYPE {column.type}{collate} USING {self.q(column.name)}{via}::{column.type}",
        )

    def retype_through_text(self, table: Table, column: str, type_text: str) -> str:
        """Convert a column to an enum type of the same name made again: through text, the
        one way from one enum type to another."""
        text = "text[]" if type_text.endswith("[]") else "text"
        return self.alter_column(
            table, column, f"TYPE {type_text} USING {self.q(column)}::{text}::{type_text}"
        )

    # Constraints and indexes.

    def add_constraint(self, table: Table, clause: str) -> str:
        return self.alter(table, f"ADD {clause}")

    def drop_constraint(self, table: Table, name: str) -> str:
        return self.alter(table, f"DROP CONSTRAINT {self.q(name)}")

    def drop_primary_key(self, table: Table, pk: PrimaryKey) -> str:
        if self.pg:
            return self.drop_constraint(table, pk.name or f"{table.name}_pkey")
        return self.alter(table, "DROP PRIMARY KEY")

    def drop_foreign_key(self, table: Table, fk: ForeignKey) -> str:
        if self.pg:
            return self.drop_constraint(table, fk.name or "")
        return self.alter(table, f"DROP FOREIGN KEY {self.q(fk.name or '')}")

    def drop_unique(self, table: Table, unique: UniqueConstraint) -> str:
        return self.drop_constraint(table, unique.name or "")

    def create_index(self, table: Table, index: Index) -> str:
        prefixes = index.prefix_lengths or (None,) * len(index.columns)
        options = index.key_options or ("",) * len(index.columns)
        keys = ", ".join(
            f"{self.key(k, p)} {o}" if o else self.key(k, p)
            for k, p, o in zip(index.columns, prefixes, options, strict=True)
        )
        unique = "UNIQUE " if index.unique else ""
        nulls = " NULLS NOT DISTINCT" if index.nulls_not_distinct else ""
        if not self.pg:
            name = f"{self.q(index.name)} " if index.name else ""
            kind = "UNIQUE INDEX" if index.unique else "INDEX"
            if index.method in {"fulltext", "spatial"}:
                kind = f"{index.method.upper()} INDEX"
            return self.alter(table, f"ADD {kind} {name}({keys})")
        name = f"{self.q(index.name)} " if index.name else ""
        using = f" USING {index.method}" if index.method else ""
        include = f" INCLUDE ({self.cols(index.include)})" if index.include else ""
        where = f" WHERE {index.where}" if index.where else ""
        return (
            f"CREATE {unique}INDEX {name}ON {self.table(table.schema, table.name)}{using} "
            f"({keys}){include}{nulls}{where}"
        )

    def drop_index(self, table: Table, index: Index) -> str:
        if self.pg:
            return f"DROP INDEX {self.table(table.schema, index.name or '')}"
        return self.alter(table, f"DROP INDEX {self.q(index.name or '')}")

    # Sequences (PostgreSQL).

    def sequence_options(self, sequence: Sequence, before: Sequence | None = None) -> str:
        """The options of `sequence`; with `before`, only those that differ from it."""
        options = [
            ("type", f"AS {sequence.type}"),
            ("increment", f"INCREMENT BY {sequence.increment}"),
            ("min_value", f"MINVALUE {sequence.min_value}"),
            ("max_value", f"MAXVALUE {sequence.max_value}"),
            ("start", f"START WITH {sequence.start}"),
            ("cache", f"CACHE {sequence.cache}"),
            ("cycle", "CYCLE" if sequence.cycle else "NO CYCLE"),
        ]
        return " ".join(
            text
            for name, text in options
            if before is None or getattr(before, name) != getattr(sequence, name)
        )

    def create_sequence(self, sequence: Sequence) -> str:
        name = self.table(sequence.schema, sequence.name)
        return f"CREATE SEQUENCE {name} {self.sequence_options(sequence)}"

    def alter_sequence(self, sequence: Sequence, before: Sequence) -> str:
        name = self.table(sequence.schema, sequence.name)
        return f"ALTER SEQUENCE {name} {self.sequence_options(sequence, before)}"

    def sequence_owner(self, sequence: Sequence) -> str:
        name = self.table(sequence.schema, sequence.name)
        if sequence.owner_table is None:
            return f"ALTER SEQUENCE {name} OWNED BY NONE"
        owner = f"{self.table(sequence.schema, sequence.owner_table)}.{self.q(sequence.owner_column or '')}"
        return f"ALTER SEQUENCE {name} OWNED BY {owner}"

    def drop_sequence(self, sequence: Sequence) -> str:
        return self.drop_sequence_named(sequence.schema, sequence.name)

    def drop_sequence_named(self, schema: str, name: str) -> str:
        return f"DROP SEQUENCE {self.table(schema, name)}"

    def serial_sequence(self, table: Table, column: str, type_text: str, name: str) -> str:
        """The sequence `serial` makes for `table.column`."""
        owner = f"{self.table(table.schema, table.name)}.{self.q(column)}"
        return f"CREATE SEQUENCE {self.table(table.schema, name)} AS {type_text} OWNED BY {owner}"

    def nextval(self, schema: str, name: str) -> str:
        return f"nextval({self.literal(self.table(schema, name))}::regclass)"

    # Views.

    def create_view(self, view: View, *, replace: bool = False) -> str:
        if view.materialized:
            verb = "CREATE MATERIALIZED VIEW"
        else:
            verb = "CREATE OR REPLACE VIEW" if replace else "CREATE VIEW"
        data = " WITH NO DATA" if view.materialized and not view.with_data else ""
        return f"{verb} {self.table(view.schema, view.name)} AS {view.text}{data}"

    def drop_view(self, view: View) -> str:
        kind = "MATERIALIZED VIEW" if view.materialized else "VIEW"
        return f"DROP {kind} {self.table(view.schema, view.name)}"

    def drop_schema(self, name: str) -> str:
        # RESTRICT (the default): a schema still holding what the engine does not manage
        # stays, and the apply fails rather than take it along.
        return f"DROP SCHEMA {self.q(name)}"

    # Functions (PostgreSQL).

    def function_name(self, function: Function) -> str:
        """`"schema"."name"(input types)`: how ALTER and DROP name one function."""
        return f"{self.table(function.schema, function.name)}({', '.join(function.signature)})"

    def argument(self, argument: Argument) -> str:
        parts = [] if argument.mode == "IN" else [argument.mode]
        if argument.name:
            parts.append(self.q(argument.name))
        parts.append(argument.type)
        if argument.default is not None:
            parts.append(f"DEFAULT {argument.default}")
        return " ".join(parts)

    def create_function(self, function: Function, *, replace: bool = False) -> str:
        verb = "CREATE OR REPLACE FUNCTION" if replace else "CREATE FUNCTION"
        arguments = ", ".join(self.argument(a) for a in function.arguments)
        if function.table_columns:
            columns = ", ".join(f"{self.q(n)} {t}" for n, t in function.table_columns)
            result = f"TABLE({columns})"
        else:
            result = ("SETOF " if function.returns_set else "") + function.returns
        options = [
            f"LANGUAGE {function.language}",
            function.volatility.upper(),
            "STRICT" if function.strict else "CALLED ON NULL INPUT",
            "SECURITY DEFINER" if function.security_definer else "SECURITY INVOKER",
            "LEAKPROOF" if function.leakproof else "NOT LEAKPROOF",
            f"PARALLEL {function.parallel.upper()}",
            f"COST {number_text(function.cost)}",
        ]
        if function.returns_set:
            options.append(f"ROWS {number_text(function.rows)}")
        options += [f"SET {setting_clause(entry)}" for entry in function.config]
        body = function.body or ""
        tag = "$ptah$"
        counter = 0
        while tag in body:
            counter += 1
            tag = f"$ptah{counter}$"
        return (
            f"{verb} {self.table(function.schema, function.name)}({arguments}) "
            f"RETURNS {result} {' '.join(options)} AS {tag}{body}{tag}"
        )

    def drop_function(self, function: Function) -> str:
        return f"DROP FUNCTION {self.function_name(function)}"

    # Grants on tables.

    def grantee(self, grantee: str) -> str:
        if self.pg:
            return grantee if grantee == "PUBLIC" else self.q(grantee)
        # A MySQL user is kept as the server spells it ('app'@'%'), a role as a bare name;
        # each part is spelt again as a literal, whatever the model holds.
        user, host = mysql_grantee_parts(grantee)
        if host is None:
            return self.literal(user)
        return f"{self.literal(user)}@{self.literal(host)}"

    def grant(
        self, table: Table, grantee: str, privileges: list[str], *, grantable: bool = False
    ) -> str:
        option = " WITH GRANT OPTION" if grantable else ""
        return (
            f"GRANT {', '.join(privileges)} ON {self.table(table.schema, table.name)} "
            f"TO {self.grantee(grantee)}{option}"
        )

    def revoke(self, table: Table, grantee: str, privileges: list[str]) -> str:
        return (
            f"REVOKE {', '.join(privileges)} ON {self.table(table.schema, table.name)} "
            f"FROM {self.grantee(grantee)}"
        )

    def revoke_grant_option(self, table: Table, grantee: str, privileges: list[str]) -> str:
        on = self.table(table.schema, table.name)
        if self.pg:
            return f"REVOKE GRANT OPTION FOR {', '.join(privileges)} ON {on} FROM {self.grantee(grantee)}"
        # MySQL holds the grant option per table, for every privilege at once.
        return f"REVOKE GRANT OPTION ON {on} FROM {self.grantee(grantee)}"
