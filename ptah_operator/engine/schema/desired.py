"""Assemble the desired schema from files: SQL DDL (`*.sql`) and Ptah HCL (`*.hcl`).

Each reader turns one file into `Parts`; `assemble` merges the parts of every file. An object
defined twice identically is taken once; defined twice differently it is refused, naming the
object and both files. Indexes, constraints and comments stated apart from their table
(`CREATE INDEX`, `ALTER TABLE ... ADD CONSTRAINT`, `COMMENT ON`) are attached once every table
is known, whichever file holds them.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, TypeVar

from ptah_operator.engine.schema import collector
from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import (
    Argument,
    Column,
    Dialect,
    Domain,
    EnumType,
    Extension,
    ForeignKey,
    Function,
    Grant,
    Index,
    PrimaryKey,
    Schema,
    Sequence,
    Table,
    UniqueConstraint,
    View,
    canonical_schema,
)
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    is_serial_sequence,
    normalize_default,
    pg_quote_ident,
)
from ptah_operator.engine.schema.normalize import identity_options as normalize_identity_options
from ptah_operator.engine.schema.parts import Attachment, DesiredSchemaError, Parts
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.triggers import quote, resolve_function

T = TypeVar("T", Table, EnumType, Sequence, View, Domain)
F = TypeVar("F", Table, EnumType, Sequence, View, Function, Domain)


def finish_table(dialect: Dialect, table: Table) -> Table:
    """What the database implies: key and identity columns are NOT NULL; MySQL uniques are
    unique indexes; an empty comment is no comment (`COMMENT ... IS ''` removes one, and
    MySQL/MariaDB report an empty comment as none)."""
    pk_columns = set(table.primary_key.columns) if table.primary_key else set()

    def finish(column: Column) -> Column:
        key = column.name in pk_columns or column.identity in {"always", "by default", "serial"}
        if not key and column.comment != "":
            return column
        return dataclasses.replace(
            column, nullable=column.nullable and not key, comment=column.comment or None
        )

    columns = tuple(finish(c) for c in table.columns)
    indexes = list(table.indexes)
    uniques = list(table.uniques)
    # A privilege granted twice (in two files, or with and without the grant option) is one
    # grant, with the option if either has it.
    optioned = {(g.grantee, g.privilege) for g in table.grants if g.grantable}
    grants = tuple(
        {Grant(g.grantee, g.privilege, (g.grantee, g.privilege) in optioned) for g in table.grants}
    )
    if dialect.family == "mysql":
        indexes += [Index(name=u.name, columns=u.columns, unique=True) for u in uniques]
        uniques = []
        # MySQL keeps the grant option per table and grantee, not per privilege.
        holders = {g.grantee for g in grants if g.grantable}
        grants = tuple(dataclasses.replace(g, grantable=g.grantee in holders) for g in grants)
    return dataclasses.replace(
        table,
        columns=columns,
        indexes=tuple(indexes),
        uniques=tuple(uniques),
        grants=grants,
        comment=table.comment or None,
    )


def _attach(dialect: Dialect, table: Table, item: Attachment) -> Table:
    if isinstance(item, PrimaryKey):
        return dataclasses.replace(table, primary_key=item)
    if isinstance(item, UniqueConstraint):
        if dialect.family == "mysql":
            item = Index(name=item.name, columns=item.columns, unique=True)
        else:
            return dataclasses.replace(table, uniques=(*table.uniques, item))
    if isinstance(item, Index):
        return dataclasses.replace(table, indexes=(*table.indexes, item))
    if isinstance(item, ForeignKey):
        return dataclasses.replace(table, foreign_keys=(*table.foreign_keys, item))
    return dataclasses.replace(table, checks=(*table.checks, item))


def _qualified(schema: str, name: str) -> str:
    return f"{schema}.{name}" if schema else name


def _merge(
    found: dict[tuple[str, str], tuple[T, str]],
    kind: str,
    key: tuple[str, str],
    item: T,
    source: str,
) -> None:
    if key in found and found[key][0] != item:
        raise DesiredSchemaError(
            f"{kind} {_qualified(*key)} is defined differently in {found[key][1]} and {source}"
        )
    found.setdefault(key, (item, source))


@collector.paused()
def assemble(dialect: Dialect, parts: list[Parts], scope: Scope) -> Schema:
    tables: dict[tuple[str, str], tuple[Table, str]] = {}
    enums: dict[tuple[str, str], tuple[EnumType, str]] = {}
    sequences: dict[tuple[str, str], tuple[Sequence, str]] = {}
    views: dict[tuple[str, str], tuple[View, str]] = {}
    domains: dict[tuple[str, str], tuple[Domain, str]] = {}
    schemas: set[str] = set()
    for part in parts:
        schemas.update(part.schemas)
        for domain in part.domains:
            _merge(domains, "domain", (domain.schema, domain.name), domain, part.source)
        for sequence in part.sequences:
            _merge(sequences, "sequence", (sequence.schema, sequence.name), sequence, part.source)
        for view in part.views:
            _merge(views, "view", (view.schema, view.name), view, part.source)
        for table in part.tables:
            _merge(tables, "table", (table.schema, table.name), table, part.source)
        for enum in part.enums:
            _merge(enums, "enum", (enum.schema, enum.name), enum, part.source)
    named: dict[tuple[str, str, str, str], tuple[Attachment, str]] = {}
    for part in parts:
        for schema, name, item in part.attachments:
            if (schema, name) not in tables:
                raise DesiredSchemaError(
                    f"{part.source}: {type(item).__name__} on unknown table {_qualified(schema, name)}"
                )
            item_name = getattr(item, "name", None)
            if item_name is not None:
                # A name is one object's within its kind: MySQL names the index it makes for
                # a foreign key after the key (`KEY fk (a)` and `CONSTRAINT fk FOREIGN KEY`).
                kind = "Index" if isinstance(item, UniqueConstraint) else type(item).__name__
                named_key = (schema, name, kind, item_name)
                if named_key in named:
                    if named[named_key][0] == item:
                        continue
                    raise DesiredSchemaError(
                        f"{item_name} on table {_qualified(schema, name)} is defined differently "
                        f"in {named[named_key][1]} and {part.source}"
                    )
                named[named_key] = (item, part.source)
            table, source = tables[(schema, name)]
            tables[(schema, name)] = (_attach(dialect, table, item), source)
        for schema, name, column, comment in part.comments:
            if (schema, name) not in tables:
                raise DesiredSchemaError(
                    f"{part.source}: comment on unknown table {_qualified(schema, name)}"
                )
            table, source = tables[(schema, name)]
            if column is None:
                table = dataclasses.replace(table, comment=comment)
            else:
                if table.column(column) is None:
                    raise DesiredSchemaError(
                        f"{part.source}: comment on unknown column "
                        f"{_qualified(schema, name)}.{column}"
                    )
                table = dataclasses.replace(
                    table,
                    columns=tuple(
                        dataclasses.replace(c, comment=comment) if c.name == column else c
                        for c in table.columns
                    ),
                )
            tables[(schema, name)] = (table, source)
        for schema, name, grant in part.grants:
            if (schema, name) not in tables:
                raise DesiredSchemaError(
                    f"{part.source}: grant on unknown table {_qualified(schema, name)}"
                )
            table, source = tables[(schema, name)]
            tables[(schema, name)] = (
                dataclasses.replace(table, grants=(*table.grants, grant)),
                source,
            )
    _own_sequences(parts, sequences, tables)
    _column_clauses(dialect, parts, tables)
    serial_sequences = _fold_serials(dialect, sequences, tables)
    known_types = {f"{s}.{n}" for s, n in enums} | {f"{s}.{n}" for s, n in tables}
    known_types |= {f"{s}.{n}" for s, n in domains}
    functions: dict[tuple[str, str, tuple[str, ...]], tuple[Function, str]] = {}
    for part in parts:
        for function in part.functions:
            function = _qualify_function(function, known_types)
            key = function.identity
            if key in functions and functions[key][0] != function:
                raise DesiredSchemaError(
                    f"function {function.qualified} is defined differently in "
                    f"{functions[key][1]} and {part.source}"
                )
            functions.setdefault(key, (function, part.source))
    _set_owners(
        parts,
        tables,
        enums,
        sequences,
        views,
        functions,
        known_types,
        serial_sequences,
        domains,
    )
    _attach_triggers(parts, tables, functions)
    _set_comments(parts, tables, enums, sequences, views, functions, domains, known_types)
    clash = sorted(set(views) & (set(tables) | set(sequences)))
    if clash:
        raise DesiredSchemaError(
            f"view {_qualified(*clash[0])} has the name of a table or sequence in "
            f"{views[clash[0]][1]}"
        )
    enum_names = {f"{s}.{n}" for s, n in enums} | {f"{s}.{n}" for s, n in domains}
    finished = []
    for (schema, name), (table, source) in tables.items():
        _check_columns(table, source)
        if any(g.grantee == "PUBLIC" and g.grantable for g in table.grants):
            raise DesiredSchemaError(
                f"{source}: PUBLIC cannot hold the grant option (table {table.qualified})"
            )
        table = _resolve_enum_types(dialect, table, enum_names)
        table = finish_table(dialect, table)
        if dialect.family == "mysql":
            _refuse_beyond_the_bmp(table, source)
        if scope.admits_table(dialect, schema, name):
            finished.append(table)
    kept_views = [v for v, _ in views.values() if scope.admits_table(dialect, v.schema, v.name)]
    kept_sequences = [
        s for s, _ in sequences.values() if scope.admits_table(dialect, s.schema, s.name)
    ]
    kept_functions = [
        f for f, _ in functions.values() if scope.admits_table(dialect, f.schema, f.name)
    ]
    extensions = _extensions(parts)
    schema_owners: dict[str, tuple[str, str]] = {}
    schema_comments: dict[str, tuple[str | None, str]] = {}
    for part in parts:
        for name, role in part.schema_owners:
            if name in schema_owners and schema_owners[name][0] != role:
                raise DesiredSchemaError(
                    f"schema {name} is given two owners, in {schema_owners[name][1]} and "
                    f"{part.source}"
                )
            schema_owners[name] = (role, part.source)
        for name, comment in part.schema_comments:
            schema_comments[name] = (comment, part.source)
    if dialect.family == "postgresql":
        kept_enums = [e for e, _ in enums.values() if scope.admits_schema(dialect, e.schema)]
        kept_domains = [
            _resolve_domain_type(d, enum_names)
            for d, _ in domains.values()
            if scope.admits_schema(dialect, d.schema)
        ]
        schemas.update(d.schema for d in kept_domains)
        schemas.update(t.schema for t in finished)
        schemas.update(v.schema for v in kept_views)
        schemas.update(s.schema for s in kept_sequences)
        schemas.update(f.schema for f in kept_functions)
        # A schema holding only enum types, or only extensions, is the desired schema's too.
        schemas.update(e.schema for e in kept_enums)
        schemas.update(e.schema for e in extensions)
        schemas = {s for s in schemas if scope.admits_schema(dialect, s)}
        for name in list(schema_owners) + list(schema_comments):
            if name not in schemas and scope.admits_schema(dialect, name) and name != "public":
                raise DesiredSchemaError(
                    f"{(schema_owners.get(name) or schema_comments[name])[1]}: schema {name} is "
                    "given an owner or comment but is not declared (CREATE SCHEMA)"
                )
        extensions = [e for e in extensions if scope.admits_schema(dialect, e.schema)]
    else:
        schemas, kept_enums, extensions, kept_domains = set(), [], [], []
    return canonical_schema(
        dialect,
        sorted(schemas),
        finished,
        kept_enums,
        kept_sequences,
        kept_views,
        kept_functions,
        extensions,
        [(n, r) for n, (r, _) in schema_owners.items() if scope.admits_schema(dialect, n)],
        [(n, c or "") for n, (c, _) in schema_comments.items() if scope.admits_schema(dialect, n)],
        domains=kept_domains,
    )


def _function_key(
    schema: str, name: str, arguments: tuple[Argument, ...] | None, known: set[str]
) -> tuple[str, str, tuple[str, ...]]:
    """How a statement naming a function by its argument types (`OWNER TO`, `COMMENT ON`)
    finds it: its input types, qualified as the function's own are."""
    signature = tuple(_qualify(a.type, schema, known) for a in arguments or () if a.mode != "OUT")
    return (schema, name, signature)


def _qualify(type_text: str, schema: str, known: set[str]) -> str:
    """A type named without its schema, qualified as introspection prints it when it is one
    of the desired enums or tables (looked for in the function's schema, then `public`)."""
    base = type_text.removesuffix("[]")
    suffix = type_text[len(base) :]
    if "." in base:
        return type_text
    for candidate in (f"{schema}.{base}", f"public.{base}"):
        if candidate in known:
            return candidate + suffix
    return type_text


def _qualify_function(function: Function, known: set[str]) -> Function:
    def qualify(type_text: str) -> str:
        return _qualify(type_text, function.schema, known)

    return dataclasses.replace(
        function,
        arguments=tuple(dataclasses.replace(a, type=qualify(a.type)) for a in function.arguments),
        returns=qualify(function.returns),
        table_columns=tuple((n, qualify(t)) for n, t in function.table_columns),
    )


def _with_owner(
    found: dict[Any, tuple[F, str]], key: Any, what: str, role: str, source: str
) -> None:
    item, where = found[key]
    if item.owner is not None and item.owner != role:
        raise DesiredSchemaError(f"{what} is given two owners, in {where} and {source}")
    found[key] = (dataclasses.replace(item, owner=role), where)


def _set_owners(
    parts: list[Parts],
    tables: dict[tuple[str, str], tuple[Table, str]],
    enums: dict[tuple[str, str], tuple[EnumType, str]],
    sequences: dict[tuple[str, str], tuple[Sequence, str]],
    views: dict[tuple[str, str], tuple[View, str]],
    functions: dict[tuple[str, str, tuple[str, ...]], tuple[Function, str]],
    known_types: set[str],
    serial_sequences: dict[tuple[str, str], str] | None = None,
    domains: dict[tuple[str, str], tuple[Domain, str]] | None = None,
) -> None:
    """Apply `ALTER ... OWNER TO`; a sequence owned by a column has its table's owner (the
    owner pg_dump names for a `serial`'s sequence must be its table's)."""
    serials: list[tuple[str, tuple[str, str], str, str]] = []
    for part in parts:
        for kind, schema, name, role, arguments in part.owners:
            what = f"{kind.lower()} {_qualified(schema, name)}"
            key = (schema, name)
            if kind == "FUNCTION":
                function_key = _function_key(schema, name, arguments, known_types)
                if function_key not in functions:
                    raise DesiredSchemaError(f"{part.source}: OWNER TO for unknown function")
                _with_owner(functions, function_key, what, role, part.source)
            elif kind == "TYPE" and key in enums:
                _with_owner(enums, key, what, role, part.source)
            elif kind in {"TYPE", "DOMAIN"} and domains is not None and key in domains:
                _with_owner(domains, key, what, role, part.source)
            elif kind == "TABLE" and key in tables:
                _with_owner(tables, key, what, role, part.source)
            elif kind in {"TABLE", "VIEW"} and key in views:
                _with_owner(views, key, what, role, part.source)
            elif kind in {"TABLE", "SEQUENCE"} and key in sequences:
                _with_owner(sequences, key, what, role, part.source)
            elif kind in {"TABLE", "SEQUENCE"} and key in (serial_sequences or {}):
                serials.append((role, key, (serial_sequences or {})[key], part.source))
            else:
                raise DesiredSchemaError(f"{part.source}: OWNER TO for unknown {what}")
    for role, (schema, name), table_name, source in serials:
        owner = next((t.owner for t, _ in tables.values() if t.qualified == table_name), None)
        if owner is not None and owner != role:
            raise DesiredSchemaError(
                f"{source}: sequence {_qualified(schema, name)} of serial column in "
                f"{table_name} is given owner {role}, not its table's ({owner})"
            )
    for (schema, name), (sequence, source) in sequences.items():
        if sequence.owner is not None and sequence.owner_table is not None:
            raise DesiredSchemaError(
                f"{source}: sequence {_qualified(schema, name)} is owned by a column, so by "
                f"the owner of table {sequence.owner_table}: name the owner on the table"
            )


def _own_sequences(
    parts: list[Parts],
    sequences: dict[tuple[str, str], tuple[Sequence, str]],
    tables: dict[tuple[str, str], tuple[Table, str]],
) -> None:
    """Apply `ALTER SEQUENCE ... OWNED BY`, then check that every owner column exists."""
    for part in parts:
        for schema, name, table, column in part.sequence_owners:
            if (schema, name) not in sequences:
                raise DesiredSchemaError(
                    f"{part.source}: OWNED BY for unknown sequence {_qualified(schema, name)}"
                )
            sequence, source = sequences[(schema, name)]
            sequences[(schema, name)] = (
                dataclasses.replace(sequence, owner_table=table, owner_column=column),
                source,
            )
    for (schema, name), (sequence, source) in sequences.items():
        if sequence.owner_table is None:
            continue
        owner = tables.get((schema, sequence.owner_table))
        if owner is None or owner[0].column(sequence.owner_column or "") is None:
            raise DesiredSchemaError(
                f"{source}: sequence {_qualified(schema, name)} is owned by an unknown column "
                f"{sequence.owner_table}.{sequence.owner_column}"
            )


def _column_clauses(
    dialect: Dialect, parts: list[Parts], tables: dict[tuple[str, str], tuple[Table, str]]
) -> None:
    """`ALTER TABLE ... ALTER COLUMN c SET DEFAULT` and `... ADD GENERATED ... AS IDENTITY`,
    as pg_dump states a column's default and identity apart from its table."""
    for part in parts:
        for schema, name, column, default in part.column_defaults:
            table, source = _known_column(tables, schema, name, column, part.source)
            found = table.column(column)
            assert found is not None
            try:
                value = normalize_default(dialect, default, found.type)
            except NormalizationError as error:
                raise DesiredSchemaError(
                    f"{part.source}: column {_qualified(schema, name)}.{column}: {error}"
                ) from None
            if found.default is not None and found.default != value:
                raise DesiredSchemaError(
                    f"{part.source}: column {_qualified(schema, name)}.{column} is given two "
                    "defaults"
                )
            tables[(schema, name)] = (
                _with_column(table, column, default=value, default_source=default.strip()),
                source,
            )
        for schema, name, column, kind, options, sequence in part.identities:
            table, source = _known_column(tables, schema, name, column, part.source)
            found = table.column(column)
            assert found is not None
            if sequence is not None and not is_serial_sequence(name, column, sequence):
                raise DesiredSchemaError(
                    f"{part.source}: column {_qualified(schema, name)}.{column}: an identity's "
                    "sequence named other than table_column_seq is not modelled"
                )
            try:
                identity_options = normalize_identity_options(found.type, **options)  # type: ignore[arg-type]
            except NormalizationError as error:
                raise DesiredSchemaError(
                    f"{part.source}: column {_qualified(schema, name)}.{column}: {error}"
                ) from None
            tables[(schema, name)] = (
                _with_column(
                    table,
                    column,
                    identity=kind,
                    identity_options=identity_options,
                    nullable=False,
                ),
                source,
            )


def _known_column(
    tables: dict[tuple[str, str], tuple[Table, str]],
    schema: str,
    name: str,
    column: str,
    source: str,
) -> tuple[Table, str]:
    if (schema, name) not in tables:
        raise DesiredSchemaError(
            f"{source}: ALTER TABLE of unknown table {_qualified(schema, name)}"
        )
    table, where = tables[(schema, name)]
    if table.column(column) is None:
        raise DesiredSchemaError(
            f"{source}: ALTER COLUMN of unknown column {_qualified(schema, name)}.{column}"
        )
    return table, where


def _with_column(table: Table, column: str, **changes: Any) -> Table:
    return dataclasses.replace(
        table,
        columns=tuple(
            dataclasses.replace(c, **changes) if c.name == column else c for c in table.columns
        ),
    )


def _fold_serials(
    dialect: Dialect,
    sequences: dict[tuple[str, str], tuple[Sequence, str]],
    tables: dict[tuple[str, str], tuple[Table, str]],
) -> dict[tuple[str, str], str]:
    """A sequence owned by a column whose default draws from it, and named as `serial` names
    it, is that column's `serial` (as introspection reads it; pg_dump writes a serial so):
    the column becomes `serial` and the sequence is no sequence of its own. Returns
    {sequence: qualified owner table} for each sequence folded."""
    folded: dict[tuple[str, str], str] = {}
    if dialect.family != "postgresql":
        return folded
    for (schema, name), (sequence, _) in list(sequences.items()):
        if sequence.owner_table is None or sequence.owner_column is None:
            continue
        entry = tables.get((schema, sequence.owner_table))
        if entry is None:
            continue
        table, source = entry
        column = table.column(sequence.owner_column)
        if column is None or column.identity is not None or column.default is None:
            continue
        if drawn_sequence(column.default, schema) != name:
            continue
        if not is_serial_sequence(table.name, column.name, name):
            continue
        tables[(schema, table.name)] = (
            _with_column(table, column.name, identity="serial", default=None, nullable=False),
            source,
        )
        del sequences[(schema, name)]
        folded[(schema, name)] = table.qualified
    return folded


def drawn_sequence(default: str, schema: str) -> str | None:
    """The sequence of `schema` a (normalized) default `nextval('...')` draws from, by name."""
    match = re.fullmatch(r"NEXTVAL\('((?:[^']|'')*)'\)", default, re.IGNORECASE)
    if match is None:
        return None
    name = match.group(1).replace("''", "'")
    pieces: list[tuple[str, str]] = re.findall(r'"((?:[^"]|"")*)"|([^."]+)', name)
    names = [quoted.replace('""', '"') if quoted else bare.lower() for quoted, bare in pieces]
    if len(names) == 2 and names[0] == schema:
        return names[1]
    if len(names) == 1 and schema == "public":
        return names[0]
    return None


def _extensions(parts: list[Parts]) -> list[Extension]:
    found: dict[str, tuple[Extension, str]] = {}
    for part in parts:
        for extension in part.extensions:
            if extension.name in found and found[extension.name][0] != extension:
                raise DesiredSchemaError(
                    f"extension {extension.name} is defined differently in "
                    f"{found[extension.name][1]} and {part.source}"
                )
            found[extension.name] = (extension, part.source)
    for part in parts:
        for name, comment in part.extension_comments:
            if name not in found:
                raise DesiredSchemaError(f"{part.source}: comment on unknown extension {name}")
            extension, source = found[name]
            found[name] = (dataclasses.replace(extension, comment=comment or ""), source)
    return [e for e, _ in found.values()]


def _attach_triggers(
    parts: list[Parts],
    tables: dict[tuple[str, str], tuple[Table, str]],
    functions: dict[tuple[str, str, tuple[str, ...]], tuple[Function, str]],
) -> None:
    """Each trigger on its table, its function resolved (see `triggers.resolve_function`)."""
    known = {f"{schema}.{quote(name)}" for schema, name, signature in functions if not signature}
    for part in parts:
        for schema, name, trigger in part.triggers:
            if (schema, name) not in tables:
                raise DesiredSchemaError(
                    f"{part.source}: trigger {trigger.name} on unknown table "
                    f"{_qualified(schema, name)}"
                )
            table, source = tables[(schema, name)]
            if any(t.name == trigger.name for t in table.triggers):
                raise DesiredSchemaError(
                    f"{part.source}: trigger {trigger.name} is defined twice on table "
                    f"{_qualified(schema, name)}"
                )
            trigger = resolve_function(trigger, known)
            tables[(schema, name)] = (
                dataclasses.replace(table, triggers=(*table.triggers, trigger)),
                source,
            )


def _set_comments(
    parts: list[Parts],
    tables: dict[tuple[str, str], tuple[Table, str]],
    enums: dict[tuple[str, str], tuple[EnumType, str]],
    sequences: dict[tuple[str, str], tuple[Sequence, str]],
    views: dict[tuple[str, str], tuple[View, str]],
    functions: dict[tuple[str, str, tuple[str, ...]], tuple[Function, str]],
    domains: dict[tuple[str, str], tuple[Domain, str]],
    known_types: set[str],
) -> None:
    """`COMMENT ON VIEW|SEQUENCE|TYPE|DOMAIN|INDEX|FUNCTION|CONSTRAINT|TRIGGER ...`: each on its
    object ("" for IS NULL). An object the desired schema does not make is refused."""
    for part in parts:
        for kind, schema, name, table_name, arguments, comment in part.object_comments:
            text = comment if comment is not None else ""
            key = (schema, name)
            what = f"{kind.lower()} {_qualified(schema, name)}"
            if kind in {"VIEW", "MATERIALIZED VIEW"} and key in views:
                _with_comment(views, key, text)
            elif kind == "SEQUENCE" and key in sequences:
                _with_comment(sequences, key, text)
            elif kind == "TYPE" and key in enums:
                _with_comment(enums, key, text)
            elif kind in {"TYPE", "DOMAIN"} and key in domains:
                _with_comment(domains, key, text)
            elif kind == "FUNCTION":
                function_key = _function_key(schema, name, arguments, known_types)
                if function_key not in functions:
                    raise DesiredSchemaError(f"{part.source}: comment on unknown function {what}")
                function, where = functions[function_key]
                functions[function_key] = (dataclasses.replace(function, comment=text), where)
            elif kind == "INDEX" and _comment_index(tables, schema, name, text):
                continue
            elif kind in {"CONSTRAINT", "TRIGGER"} and (schema, table_name or "") in tables:
                table, where = tables[(schema, table_name or "")]
                commented = _comment_on_table_object(table, kind, name, text)
                if commented is None:
                    raise DesiredSchemaError(
                        f"{part.source}: comment on unknown {kind.lower()} {name} of table "
                        f"{_qualified(schema, table_name or '')}"
                    )
                tables[(schema, table_name or "")] = (commented, where)
            else:
                raise DesiredSchemaError(f"{part.source}: comment on unknown {what}")


def _with_comment(found: dict[Any, tuple[Any, str]], key: Any, comment: str) -> None:
    item, where = found[key]
    found[key] = (dataclasses.replace(item, comment=comment), where)


def _comment_index(
    tables: dict[tuple[str, str], tuple[Table, str]], schema: str, name: str, comment: str
) -> bool:
    for key, (table, where) in tables.items():
        if key[0] != schema:
            continue
        if any(i.name == name for i in table.indexes):
            indexes = tuple(
                dataclasses.replace(i, comment=comment) if i.name == name else i
                for i in table.indexes
            )
            tables[key] = (dataclasses.replace(table, indexes=indexes), where)
            return True
    return False


def _comment_on_table_object(table: Table, kind: str, name: str, comment: str) -> Table | None:
    if kind == "TRIGGER":
        if not any(t.name == name for t in table.triggers):
            return None
        return dataclasses.replace(
            table,
            triggers=tuple(
                dataclasses.replace(t, comment=comment) if t.name == name else t
                for t in table.triggers
            ),
        )
    if table.primary_key is not None and table.primary_key.name == name:
        return dataclasses.replace(
            table, primary_key=dataclasses.replace(table.primary_key, comment=comment)
        )
    changes: dict[str, Any] = {}
    for field_name in ("uniques", "foreign_keys", "checks"):
        items = getattr(table, field_name)
        if any(i.name == name for i in items):
            changes[field_name] = tuple(
                dataclasses.replace(i, comment=comment) if i.name == name else i for i in items
            )
    return dataclasses.replace(table, **changes) if changes else None


def _beyond_the_bmp(text: str | None) -> bool:
    return text is not None and any(ord(c) > 0xFFFF for c in text)


def _refuse_beyond_the_bmp(table: Table, source: str) -> None:
    """MySQL/MariaDB keep a table's definition in utf8mb3 (three bytes a character at most):
    a character beyond the Basic Multilingual Plane (an emoji) in a comment, a default or an
    enum value becomes `?`, and in a check or generated expression it reads back as `????`
    from information_schema. Such a schema would never converge: it is refused, naming the
    table and the column, never the text."""
    if _beyond_the_bmp(table.comment):
        raise DesiredSchemaError(
            f"{source}: the comment of table {table.qualified} holds a character MySQL and "
            "MariaDB cannot keep in a table's definition (beyond U+FFFF)"
        )
    for column in table.columns:
        if any(
            _beyond_the_bmp(text)
            for text in (column.comment, column.default, column.type, column.generated)
        ):
            raise DesiredSchemaError(
                f"{source}: column {table.qualified}.{column.name} holds, in its type, "
                "default, comment or expression, a character MySQL and MariaDB cannot keep in "
                "a table's definition (beyond U+FFFF)"
            )
    for check in table.checks:
        if _beyond_the_bmp(check.expr):
            raise DesiredSchemaError(
                f"{source}: a check of table {table.qualified} holds a character MySQL and "
                "MariaDB cannot read back from information_schema (beyond U+FFFF)"
            )


def _check_columns(table: Table, source: str) -> None:
    names = [c.name for c in table.columns]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DesiredSchemaError(
            f"{source}: column {duplicates[0]} is defined twice in table {table.qualified}"
        )
    known = set(names)
    used: list[str] = []
    if table.primary_key:
        used += table.primary_key.columns
    for u in table.uniques:
        used += u.columns
    for fk in table.foreign_keys:
        used += fk.columns
    for column in used:
        if column not in known:
            raise DesiredSchemaError(
                f"{source}: unknown column {column} in a key of table {table.qualified}"
            )


_TYPE_NAME = re.compile(
    r'("(?:[^"]|"")+"|[^."()\[\] ]+)(?:\.("(?:[^"]|"")+"|[^."()\[\] ]+))?(.*)', re.S
)


def _unquote(part: str) -> str:
    return part[1:-1].replace('""', '"') if part.startswith('"') else part


def _resolve_domain_type(domain: Domain, names: set[str]) -> Domain:
    """A domain over an enum or another domain names it as introspection prints it."""
    table = Table(
        schema=domain.schema, name=domain.name, columns=(Column(name="", type=domain.type),)
    )
    resolved = _resolve_enum_types(Dialect.POSTGRESQL, table, names).columns[0].type
    return domain if resolved == domain.type else dataclasses.replace(domain, type=resolved)


def _resolve_enum_types(dialect: Dialect, table: Table, enum_names: set[str]) -> Table:
    """Column types as introspection prints them: an enum type schema-qualified, each name
    quoted where `quote_ident` quotes it (`public."Mood"`, `public."select"`), whether the
    desired schema qualified or quoted it; any other type of `public` unqualified
    (`public.citext` is `citext`: the catalog prints a type on the search path bare)."""
    if dialect.family != "postgresql":
        return table
    columns: list[Column] = []
    for column in table.columns:
        match = _TYPE_NAME.fullmatch(column.type)
        if match is not None:
            first, second, rest = match.groups()
            schema, name = (first, second) if second is not None else (None, first)
            raw_schema = _unquote(schema) if schema is not None else None
            raw_name = _unquote(name)
            candidates = [raw_schema] if raw_schema is not None else [table.schema, "public"]
            enum_schema = next((c for c in candidates if f"{c}.{raw_name}" in enum_names), None)
            if enum_schema is not None:
                type_text = f"{pg_quote_ident(enum_schema)}.{pg_quote_ident(raw_name)}{rest}"
            elif raw_schema == "public":
                type_text = f"{name}{rest}"
            else:
                type_text = column.type
            if type_text != column.type:
                column = dataclasses.replace(column, type=type_text)
        columns.append(column)
    return dataclasses.replace(table, columns=tuple(columns))


@collector.paused()
def load_files(dialect: Dialect, paths: list[Path], scope: Scope) -> Schema:
    """Read every file (a directory stands for its `*.sql` and `*.hcl` files, sorted)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in {".sql", ".hcl"})
        else:
            files.append(path)
    parts = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as error:
            raise DesiredSchemaError(f"{file}: cannot be read ({error.strerror})") from error
        if file.suffix == ".hcl":
            parts.append(parse_hcl(dialect, text, str(file)))
        else:
            parts.append(parse_ddl(dialect, text, str(file)))
    return assemble(dialect, parts, scope)
