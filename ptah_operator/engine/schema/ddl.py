"""Read a desired schema from plain SQL DDL, parsed per dialect by sqlglot.

Understood: CREATE SCHEMA, CREATE TYPE ... AS ENUM, CREATE TABLE (columns with their
constraints, table constraints, MySQL KEY/INDEX clauses and COMMENT), CREATE [UNIQUE] INDEX,
ALTER TABLE ... ADD CONSTRAINT, COMMENT ON TABLE/COLUMN. Anything else is refused with the
file and the statement's position: a desired schema states structure, not data.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    EnumType,
    ForeignKey,
    Index,
    PrimaryKey,
    Table,
    UniqueConstraint,
)
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    canonical_expression,
    normalize_action,
    normalize_default,
    normalize_type,
    serial_base,
)
from ptah_operator.engine.schema.parts import Attachment, DesiredSchemaError, Parts


def ident(dialect: Dialect, node: exp.Expr | str | None) -> str:
    """An identifier as the catalog stores it: unquoted PostgreSQL names fold to lower case."""
    if node is None:
        return ""
    if isinstance(node, str):
        return node
    if isinstance(node, exp.Column):
        node = node.this
    if isinstance(node, str):
        return node
    if isinstance(node, exp.Identifier):
        name = str(node.this)
        if dialect.family == "postgresql" and not node.quoted:
            return name.lower()
        return name
    return str(node.name)


def _table_name(dialect: Dialect, table: exp.Table) -> tuple[str, str]:
    name = ident(dialect, table.this)
    if dialect.family == "mysql":
        return "", name
    db = table.args.get("db")
    return (ident(dialect, db) if db is not None else "public"), name


def _actions(dialect: Dialect, reference: exp.Reference) -> tuple[str, str]:
    on_delete, on_update = "NO ACTION", "NO ACTION"
    for option in reference.args.get("options") or []:
        text = " ".join(str(option).upper().split())
        if text.startswith("ON DELETE "):
            on_delete = text.removeprefix("ON DELETE ")
        elif text.startswith("ON UPDATE "):
            on_update = text.removeprefix("ON UPDATE ")
    return normalize_action(dialect, on_delete), normalize_action(dialect, on_update)


def _foreign_key(
    dialect: Dialect, columns: tuple[str, ...], reference: exp.Reference, name: str | None
) -> ForeignKey:
    target = reference.this
    if isinstance(target, exp.Schema):
        ref_table = target.this
        ref_columns = tuple(ident(dialect, c) for c in target.expressions)
    else:
        ref_table, ref_columns = target, ()
    ref_schema, ref_name = _table_name(dialect, ref_table)
    on_delete, on_update = _actions(dialect, reference)
    return ForeignKey(
        columns=columns,
        ref_schema=ref_schema,
        ref_table=ref_name,
        ref_columns=ref_columns,
        on_delete=on_delete,
        on_update=on_update,
        name=name,
    )


def _literal_text(node: exp.Expr | None) -> str | None:
    if node is None:
        return None
    if isinstance(node, exp.Literal):
        return str(node.this)
    return node.name


class _TableReader:
    def __init__(self, dialect: Dialect, source: str) -> None:
        self.dialect = dialect
        self.source = source

    def column(self, table: str, node: exp.ColumnDef, items: list[Attachment]) -> Column:
        d = self.dialect
        name = ident(d, node.this)
        kind = node.args.get("kind")
        if kind is None:
            raise DesiredSchemaError(f"{self.source}: column {table}.{name} has no type")
        raw_type = kind.sql(dialect=d.sqlglot)
        identity: str | None = None
        serial = serial_base(raw_type) if d.family == "postgresql" else None
        if serial is not None:
            raw_type, identity = serial, "serial"
        type_text = normalize_type(d, raw_type)
        nullable, default, generated, collation, comment = True, None, None, None, None
        for constraint in node.constraints:
            c = constraint.kind
            if isinstance(c, exp.NotNullColumnConstraint):
                nullable = bool(c.args.get("allow_null"))
            elif isinstance(c, exp.DefaultColumnConstraint):
                default = normalize_default(d, c.this.sql(dialect=d.sqlglot), type_text)
            elif isinstance(c, exp.PrimaryKeyColumnConstraint):
                items.append(PrimaryKey(columns=(name,)))
            elif isinstance(c, exp.UniqueColumnConstraint):
                items.append(UniqueConstraint(columns=(name,)))
            elif isinstance(c, exp.CheckColumnConstraint):
                items.append(Check(expr=canonical_expression(d, c.this)))
            elif isinstance(c, exp.Reference):
                items.append(_foreign_key(d, (name,), c, None))
            elif isinstance(c, exp.GeneratedAsIdentityColumnConstraint):
                identity = "always" if c.this else "by default"
            elif isinstance(c, exp.AutoIncrementColumnConstraint):
                identity = "auto_increment"
            elif isinstance(c, exp.ComputedColumnConstraint):
                generated = canonical_expression(d, c.this)
            elif isinstance(c, exp.CollateColumnConstraint):
                collation = ident(d, c.this) if isinstance(c.this, exp.Identifier) else c.this.name
            elif isinstance(c, exp.CommentColumnConstraint):
                comment = _literal_text(c.this)
            else:
                raise DesiredSchemaError(
                    f"{self.source}: unsupported clause on column {table}.{name}"
                )
        return Column(
            name=name,
            type=type_text,
            nullable=nullable,
            default=default,
            identity=identity,
            generated=generated,
            collation=collation,
            comment=comment,
        )

    def constraint(self, table: str, node: exp.Expr, name: str | None) -> Attachment:
        d = self.dialect
        if isinstance(node, exp.PrimaryKey | exp.PrimaryKeyColumnConstraint):
            return PrimaryKey(columns=tuple(ident(d, c) for c in node.expressions), name=name)
        if isinstance(node, exp.UniqueColumnConstraint):
            schema = node.this
            columns = tuple(ident(d, c) for c in schema.expressions) if schema else ()
            if name is None and isinstance(schema, exp.Schema) and schema.this is not None:
                name = ident(d, schema.this)
            return UniqueConstraint(columns=columns, name=name)
        if isinstance(node, exp.ForeignKey):
            columns = tuple(ident(d, c) for c in node.expressions)
            return _foreign_key(d, columns, node.args["reference"], name)
        if isinstance(node, exp.CheckColumnConstraint):
            return Check(expr=canonical_expression(d, node.this), name=name)
        if isinstance(node, exp.IndexColumnConstraint):
            return self.index_from_columns(
                ident(d, node.this) if node.this else None, node.expressions, unique=False
            )
        raise DesiredSchemaError(f"{self.source}: unsupported constraint on table {table}")

    def index_from_columns(
        self,
        name: str | None,
        keys: list[exp.Expr],
        *,
        unique: bool,
        where: exp.Expr | None = None,
        include: list[exp.Expr] | None = None,
        method: str | None = None,
    ) -> Index:
        d = self.dialect
        columns: list[str] = []
        prefixes: list[int | None] = []
        for key in keys:
            if isinstance(key, exp.Ordered):
                key = key.this
            if isinstance(key, exp.ColumnPrefix):
                columns.append(ident(d, key.this))
                prefixes.append(int(key.expression.name))
                continue
            if isinstance(key, exp.Column | exp.Identifier):
                columns.append(ident(d, key))
            else:
                columns.append(canonical_expression(d, key))
            prefixes.append(None)
        return Index(
            name=name,
            columns=tuple(columns),
            unique=unique,
            where=canonical_expression(d, where) if where is not None else None,
            include=tuple(ident(d, c) for c in include or []),
            prefix_lengths=tuple(prefixes) if any(p is not None for p in prefixes) else (),
            method=None if method in {None, "btree"} else method,
        )


def parse_ddl(dialect: Dialect, text: str, source: str) -> Parts:
    parts = Parts(source=source)
    reader = _TableReader(dialect, source)
    try:
        statements = sqlglot.parse(text, read=dialect.sqlglot)
    except sqlglot.errors.ParseError as error:
        raise DesiredSchemaError(f"{source}: not valid {dialect.family} DDL") from error
    for position, statement in enumerate(statements, start=1):
        if statement is None:
            continue
        try:
            _statement(dialect, reader, parts, statement)
        except NormalizationError as error:
            raise DesiredSchemaError(f"{source}: statement {position}: {error}") from error
        except DesiredSchemaError:
            raise
        except (KeyError, AttributeError, TypeError, ValueError) as error:
            raise DesiredSchemaError(
                f"{source}: statement {position} is not understood as schema DDL"
            ) from error
    return parts


def _statement(dialect: Dialect, reader: _TableReader, parts: Parts, node: exp.Expr) -> None:
    source = parts.source
    d = dialect
    if isinstance(node, exp.Create):
        kind = str(node.args.get("kind") or "").upper()
        if kind == "SCHEMA":
            if d.family == "postgresql":
                parts.schemas.append(ident(d, node.this.args.get("db") or node.this.this))
            return
        if kind == "TYPE":
            target = node.args.get("expression")
            if not (isinstance(target, exp.DataType) and target.this == exp.DataType.Type.ENUM):
                raise DesiredSchemaError(f"{source}: only enum types are supported")
            schema, name = _table_name(d, node.this)
            values = tuple(str(v.this) for v in target.expressions)
            parts.enums.append(EnumType(schema=schema, name=name, values=values))
            return
        if kind == "TABLE":
            _create_table(d, reader, parts, node)
            return
        if kind == "INDEX":
            index_node = node.this
            schema, table = _table_name(d, index_node.args["table"])
            params = index_node.args.get("params")
            using = params.args.get("using") if params else None
            where = params.args.get("where") if params else None
            index = reader.index_from_columns(
                ident(d, index_node.this) if index_node.this else None,
                list(params.args.get("columns") or []) if params else [],
                unique=bool(node.args.get("unique")),
                where=where.this if where is not None else None,
                include=list(params.args.get("include") or []) if params else [],
                method=str(using.name).lower() if using is not None else None,
            )
            parts.attachments.append((schema, table, index))
            return
    if isinstance(node, exp.Alter) and str(node.args.get("kind")).upper() == "TABLE":
        schema, table = _table_name(d, node.this)
        for action in node.args.get("actions") or []:
            if not isinstance(action, exp.AddConstraint):
                raise DesiredSchemaError(
                    f"{source}: only ALTER TABLE ... ADD CONSTRAINT is supported"
                )
            for constraint in action.expressions:
                if isinstance(constraint, exp.Constraint):
                    name = ident(d, constraint.this)
                    for inner in constraint.expressions:
                        parts.attachments.append(
                            (schema, table, reader.constraint(table, inner, name))
                        )
                else:
                    parts.attachments.append(
                        (schema, table, reader.constraint(table, constraint, None))
                    )
        return
    if isinstance(node, exp.Comment):
        kind = str(node.args.get("kind")).upper()
        comment = _literal_text(node.expression)
        target = node.this
        if kind == "TABLE":
            schema, table = _table_name(d, target)
            parts.comments.append((schema, table, None, comment))
            return
        if kind == "COLUMN" and isinstance(target, exp.Column):
            table = ident(d, target.args.get("table"))
            db = target.args.get("db")
            schema = "" if d.family == "mysql" else (ident(d, db) if db else "public")
            parts.comments.append((schema, table, ident(d, target.this), comment))
            return
    raise DesiredSchemaError(f"{source}: unsupported statement ({type(node).__name__})")


def _create_table(d: Dialect, reader: _TableReader, parts: Parts, node: exp.Create) -> None:
    schema_node = node.this
    if not isinstance(schema_node, exp.Schema):
        raise DesiredSchemaError(f"{parts.source}: CREATE TABLE without columns")
    schema, name = _table_name(d, schema_node.this)
    items: list[Attachment] = []
    columns: list[Column] = []
    for element in schema_node.expressions:
        if isinstance(element, exp.ColumnDef):
            columns.append(reader.column(name, element, items))
        elif isinstance(element, exp.Constraint):
            constraint_name = ident(d, element.this)
            for inner in element.expressions:
                items.append(reader.constraint(name, inner, constraint_name))
        else:
            items.append(reader.constraint(name, element, None))
    comment = None
    properties = node.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = _literal_text(prop.this)
    table = Table(schema=schema, name=name, columns=tuple(columns), comment=comment)
    pk = [i for i in items if isinstance(i, PrimaryKey)]
    if len(pk) > 1:
        raise DesiredSchemaError(f"{parts.source}: table {name} has two primary keys")
    table = Table(
        schema=schema,
        name=name,
        columns=tuple(columns),
        primary_key=pk[0] if pk else None,
        uniques=tuple(i for i in items if isinstance(i, UniqueConstraint)),
        indexes=tuple(i for i in items if isinstance(i, Index)),
        foreign_keys=tuple(i for i in items if isinstance(i, ForeignKey)),
        checks=tuple(i for i in items if isinstance(i, Check)),
        comment=table.comment,
    )
    parts.tables.append(table)
