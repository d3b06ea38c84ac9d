"""Read a desired schema from Ptah's HCL format (`schema.hcl`), with python-hcl2.

    schema "public" {}
    enum "status" { schema = schema.public  values = ["a", "b"] }
    table "users" {
      schema  = schema.public
      comment = "people"
      column "id"    { type = bigint  null = false  identity { generated = ALWAYS } }
      column "email" { type = varchar(255)  null = false  default = "x"  comment = "mail" }
      column "made"  { type = timestamptz  default = sql("now()") }
      column "n"     { type = int  auto_increment = true }
      column "st"    { type = enum.status }
      column "g"     { type = int  as { expr = "n * 2" } }   # STORED unless type = VIRTUAL
      primary_key { columns = [column.id] }
      index "ix" {
        unique  = true
        columns = [column.email]
        where   = "email <> ''"
        include = [column.st]
        on { column = column.email  prefix = 20 }
      }
      foreign_key "fk" {
        columns     = [column.org]
        ref_columns = [table.orgs.column.id]
        on_delete   = CASCADE
      }
      check "positive" { expr = "n > 0" }
    }

    sequence "order_no" {                 # PostgreSQL
      schema    = schema.public
      type      = bigint                   # smallint, integer or bigint (default bigint)
      start     = 1000                     # also increment, min_value, max_value, cache, cycle
      owned_by  = table.orders.column.no   # OWNED BY (or owner = table.orders.column.no)
    }
    view "active_users" {
      schema       = schema.public
      materialized = false                 # PostgreSQL: true for a materialized view
      as     = "SELECT id, email FROM users WHERE active"   # or a <<-SQL heredoc
    }

On PostgreSQL, `owner = "role"` on a table, view, enum or sequence (one no column owns) names
the owning role.
    table "users" {
      grant {
        to         = "reader"              # MySQL/MariaDB: "'app'@'%'" (a user), "reader" (a role)
        privileges = [SELECT, INSERT]      # or [ALL]
        grantable  = false
      }
    }

On MySQL/MariaDB the `schema` attributes are ignored (the scope is the URL's database) and an
enum column is written `type = enum("a", "b")`. A column there also takes what MODIFY COLUMN
must restate, and an index its kind:
    table "posts" {
      column "updated" {
        type      = timestamp
        default   = sql("CURRENT_TIMESTAMP")
        on_update = sql("CURRENT_TIMESTAMP")    # or CURRENT_TIMESTAMP(3) for timestamp(3)
      }
      column "title" { type = varchar(200)  charset = "latin1"  collate = "latin1_bin" }
      column "secret" { type = int  invisible = true }
      column "twice"  { type = int  as { expr = "n * 2"  type = VIRTUAL } }   # or STORED
      column "place"  { type = point  null = false  srid = 4326 }
      index "ft" { type = FULLTEXT  columns = [column.title] }           # or SPATIAL
    }
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import textwrap
from collections.abc import Iterator
from typing import Any

import sqlglot

from ptah_operator.engine.schema import collector
from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    EnumType,
    ForeignKey,
    Grant,
    Index,
    PrimaryKey,
    Sequence,
    Table,
    View,
)
from ptah_operator.engine.schema.mysql_columns import normalize_on_update
from ptah_operator.engine.schema.normalize import (
    READ_FAILURES,
    NormalizationError,
    index_column,
    index_key_options,
    index_key_options_tuple,
    normalize_action,
    normalize_default,
    normalize_expression,
    normalize_index_key,
    normalize_index_method,
    normalize_privileges,
    normalize_type,
    parse_grantee,
    sequence_options,
    sequence_type,
    serial_base,
    string_literal,
)
from ptah_operator.engine.schema.parts import DesiredSchemaError, Parts
from ptah_operator.engine.schema.views import ViewError, desired_view


def _string(value: Any) -> str:
    """An HCL string value: python-hcl2 keeps the quotes, and `${...}` around expressions."""
    if not isinstance(value, str):
        return str(value)
    if value.startswith("${") and value.endswith("}"):
        return value[2:-1]
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        decoded: str = json.loads(value)
        return decoded
    return value


def _text(value: Any) -> str:
    """A string that may be a heredoc (`<<-SQL ... SQL`), which python-hcl2 hands over whole."""
    if isinstance(value, str) and value.startswith('"<<') and value.endswith('"'):
        header, _, rest = value[1:-1].partition("\n")
        body = rest.rpartition("\n")[0]
        return textwrap.dedent(body) if header.startswith("<<-") else body
    return _string(value)


def _is_quoted(value: Any) -> bool:
    return isinstance(value, str) and len(value) >= 2 and value[0] == '"' and value[-1] == '"'


def _blocks(body: dict[str, Any], kind: str) -> list[tuple[str | None, dict[str, Any]]]:
    """The blocks of one kind: labelled (`column "id" {}`) or not (`primary_key {}`)."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    for entry in body.get(kind, []):
        if not isinstance(entry, dict):
            continue
        if entry.get("__is_block__") is True and not any(
            isinstance(v, dict) and v.get("__is_block__") for v in entry.values()
        ):
            found.append((None, entry))
            continue
        for label, inner in entry.items():
            if isinstance(inner, dict):
                found.append((_string(label), inner))
    return found


def _reference_tail(value: Any) -> str:
    """`column.id` -> `id`; `table.orgs.column.id` -> `id`."""
    return _string(value).rsplit(".", 1)[-1]


class _Reader:
    def __init__(self, dialect: Dialect, source: str) -> None:
        self.dialect = dialect
        self.source = source

    def error(self, what: str) -> DesiredSchemaError:
        return DesiredSchemaError(f"{self.source}: {what}")

    @contextlib.contextmanager
    def within(self, what: str) -> Iterator[None]:
        """An expression or a type that cannot be taken is refused naming the object."""
        try:
            yield
        except NormalizationError as error:
            raise self.error(f"{what}: {error}") from None

    def schema_of(self, body: dict[str, Any]) -> str:
        if self.dialect.family == "mysql":
            return ""
        if "schema" not in body:
            return "public"
        return _reference_tail(body["schema"])

    def column(self, table: str, name: str, body: dict[str, Any]) -> Column:
        d = self.dialect
        if "type" not in body:
            raise self.error(f"column {table}.{name} has no type")
        raw_type = _string(body["type"])
        identity: str | None = None
        if raw_type.startswith("enum.") and d.family == "postgresql":
            raw_type = raw_type.removeprefix("enum.")
        elif raw_type.startswith(("enum(", "set(")):
            raw_type = raw_type.replace('"', "'")
        serial = serial_base(raw_type) if d.family == "postgresql" else None
        if serial is not None:
            raw_type, identity = serial, "serial"
        type_text = normalize_type(d, raw_type)
        default = None
        if "default" in body:
            value = body["default"]
            if _is_quoted(value):
                text = string_literal(d, _string(value))
            elif isinstance(value, bool):
                text = "TRUE" if value else "FALSE"
            elif isinstance(value, str) and value.startswith("${sql("):
                text = json.loads(value[len("${sql(") : -2])
            else:
                text = _string(value)
            default = normalize_default(d, text, type_text)
        mysql_only = sorted({"on_update", "charset", "invisible", "srid"} & body.keys())
        if d.family != "mysql" and mysql_only:
            raise self.error(f"column {table}.{name}: `{mysql_only[0]}` is MySQL/MariaDB only")
        on_update = None
        if "on_update" in body:
            value = body["on_update"]
            if isinstance(value, str) and value.startswith("${sql("):
                value = json.loads(value[len("${sql(") : -2])
            on_update = normalize_on_update(_string(value))
        for _, block in _blocks(body, "identity"):
            generated = _string(block.get("generated", "BY_DEFAULT")).upper()
            identity = "always" if generated == "ALWAYS" else "by default"
        if body.get("auto_increment") is True:
            identity = "auto_increment"
        generated_expr = None
        virtual = False
        for _, block in _blocks(body, "as"):
            generated_expr = normalize_expression(d, _string(block["expr"]))
            storage = _string(block.get("type", "STORED")).upper()
            if storage not in {"STORED", "PERSISTENT", "VIRTUAL"}:
                raise self.error(f"column {table}.{name}: `as` is STORED or VIRTUAL")
            if storage == "VIRTUAL" and d.family != "mysql":
                raise self.error(f"column {table}.{name}: PostgreSQL generates STORED only")
            virtual = storage == "VIRTUAL"
        srid = body.get("srid")
        if srid is not None and (isinstance(srid, bool) or not isinstance(srid, int)):
            raise self.error(f"column {table}.{name}: `srid` is a number")
        collation = _string(body["collate"]) if "collate" in body else None
        return Column(
            name=name,
            type=type_text,
            nullable=body.get("null", True) is not False,
            default=default,
            identity=identity,
            generated=generated_expr,
            collation=collation.lower() if collation and d.family == "mysql" else collation,
            comment=_string(body["comment"]) if "comment" in body else None,
            virtual=virtual,
            charset=_string(body["charset"]).lower() if "charset" in body else None,
            on_update=on_update,
            invisible=body.get("invisible") is True,
            srid=srid,
        )

    def index(self, name: str | None, body: dict[str, Any]) -> Index:
        d = self.dialect
        columns: list[str] = [index_column(_reference_tail(c)) for c in body.get("columns", [])]
        prefixes: list[int | None] = [None] * len(columns)
        options: list[str] = [""] * len(columns)
        for _, part in _blocks(body, "on"):
            if "column" in part:
                columns.append(index_column(_reference_tail(part["column"])))
            elif "expr" in part:
                columns.append(normalize_index_key(d, _string(part["expr"])))
            else:
                raise self.error(f"index {name}: an `on` block names no column or expr")
            prefixes.append(int(part["prefix"]) if "prefix" in part else None)
            options.append(self.key_options(name, part))
        method = normalize_index_method(d, _string(body["type"])) if "type" in body else None
        return Index(
            name=name,
            columns=tuple(columns),
            unique=body.get("unique") is True,
            where=normalize_expression(d, _string(body["where"])) if "where" in body else None,
            include=tuple(_reference_tail(c) for c in body.get("include", [])),
            prefix_lengths=tuple(prefixes) if any(p is not None for p in prefixes) else (),
            method=method,
            key_options=index_key_options_tuple(options),
        )

    def key_options(self, name: str | None, part: dict[str, Any]) -> str:
        """`desc = true`, `nulls = "first"` / `"last"` and `ops = "text_pattern_ops"`."""
        if self.dialect.family != "postgresql" and ("nulls" in part or "ops" in part):
            raise self.error(f"index {name}: `nulls` and `ops` are PostgreSQL only")
        nulls: bool | None = None
        if "nulls" in part:
            spelt = _string(part["nulls"]).lower()
            if spelt not in {"first", "last"}:
                raise self.error(f'index {name}: `nulls` is "first" or "last"')
            nulls = spelt == "first"
        return index_key_options(
            self.dialect,
            desc=part.get("desc") is True,
            nulls_first=nulls,
            opclass=_string(part["ops"]) if "ops" in part else "",
        )

    def sequence(self, name: str, body: dict[str, Any]) -> Sequence:
        if self.dialect.family != "postgresql":
            raise self.error(f"sequence {name}: sequences are planned on PostgreSQL only")
        schema = self.schema_of(body)
        kind = sequence_type(_string(body["type"]) if "type" in body else None)

        def number(key: str) -> int | None:
            return int(body[key]) if key in body else None

        increment, low, high, start = sequence_options(
            kind,
            increment=number("increment"),
            min_value=number("min_value"),
            max_value=number("max_value"),
            start=number("start"),
        )
        owner_table = owner_column = None
        # `owner` is the owning role when quoted; a reference (`table.t.column.c`, the form
        # `owned_by` takes) is what OWNED BY names.
        role = self.owner(f"sequence {name}", body) if _is_quoted(body.get("owner")) else None
        link = body.get("owned_by")
        if "owner" in body and role is None:
            if link is not None:
                raise self.error(f"sequence {name}: give OWNED BY once, as `owned_by`")
            link = body["owner"]
        if link is not None:
            owner = _string(link).split(".")
            # table.<name>.column.<col>, or table.<schema>.<name>.column.<col>
            if len(owner) not in {4, 5} or owner[0] != "table" or owner[-2] != "column":
                raise self.error(f"sequence {name}: owner must be table.NAME.column.NAME")
            if len(owner) == 5 and owner[1] != schema:
                raise self.error(f"sequence {name}: its owner is a table in its own schema")
            owner_table, owner_column = owner[-3], owner[-1]
            if role is not None:
                raise self.error(
                    f"sequence {name} is owned by a column, so by the owner of its table: "
                    "name the owner on the table"
                )
        return Sequence(
            schema=schema,
            name=name,
            type=kind,
            start=start,
            increment=increment,
            min_value=low,
            max_value=high,
            cache=number("cache") or 1,
            cycle=body.get("cycle") is True,
            owner_table=owner_table,
            owner_column=owner_column,
            owner=role,
        )

    def view(self, name: str, body: dict[str, Any]) -> View:
        if "as" not in body:
            raise self.error(f"view {name} has no `as` query")
        try:
            query = sqlglot.parse_one(_text(body["as"]), read=self.dialect.sqlglot)
        except sqlglot.errors.ParseError as error:
            raise self.error(f"view {name}: its query is not valid SQL") from error
        view = desired_view(self.dialect, self.schema_of(body), name, query, [])
        materialized = body.get("materialized") is True
        if materialized and self.dialect.family != "postgresql":
            raise self.error(f"view {name}: materialized views are PostgreSQL only")
        return dataclasses.replace(
            view, owner=self.owner(f"view {name}", body), materialized=materialized
        )

    def owner(self, what: str, body: dict[str, Any]) -> str | None:
        """`owner = "role"`: the role that owns the object (PostgreSQL)."""
        if "owner" not in body:
            return None
        if self.dialect.family != "postgresql":
            raise self.error(f"{what}: owners are planned on PostgreSQL only")
        if not _is_quoted(body["owner"]):
            raise self.error(f'{what}: `owner` is a role name in quotes, owner = "app"')
        role = parse_grantee(self.dialect, _string(body["owner"]))
        if role == "PUBLIC":
            raise self.error(f"{what}: PUBLIC cannot own anything")
        return role

    def grants(self, table: str, body: dict[str, Any]) -> list[Grant]:
        found: list[Grant] = []
        for _, block in _blocks(body, "grant"):
            if "to" not in block:
                raise self.error(f"a grant on table {table} names no grantee (`to`)")
            grantee = parse_grantee(self.dialect, _string(block["to"]))
            privileges = normalize_privileges(
                self.dialect, [_string(p).replace("_", " ") for p in block.get("privileges", [])]
            )
            if not privileges:
                raise self.error(f"a grant on table {table} names no privilege")
            grantable = block.get("grantable") is True
            found += [Grant(grantee, privilege, grantable) for privilege in privileges]
        return found

    def foreign_key(
        self, name: str | None, body: dict[str, Any], table_schemas: dict[str, str]
    ) -> ForeignKey:
        d = self.dialect
        refs = [_string(r) for r in body.get("ref_columns", [])]
        if not refs:
            raise self.error(f"foreign key {name} has no ref_columns")
        parts = refs[0].split(".")
        # table.<name>.column.<col>, or table.<schema>.<name>.column.<col>
        if len(parts) == 5:
            ref_schema, ref_table = parts[1], parts[2]
        elif len(parts) == 4:
            ref_table = parts[1]
            ref_schema = table_schemas.get(ref_table, "" if d.family == "mysql" else "public")
        else:
            raise self.error(f"foreign key {name}: ref_columns must be table.NAME.column.NAME")
        return ForeignKey(
            columns=tuple(_reference_tail(c) for c in body.get("columns", [])),
            ref_schema="" if d.family == "mysql" else ref_schema,
            ref_table=ref_table,
            ref_columns=tuple(r.rsplit(".", 1)[-1] for r in refs),
            on_delete=normalize_action(
                d, _string(body.get("on_delete", "NO_ACTION")).replace("_", " ")
            ),
            on_update=normalize_action(
                d, _string(body.get("on_update", "NO_ACTION")).replace("_", " ")
            ),
            name=name,
        )


@collector.paused()
def parse_hcl(dialect: Dialect, text: str, source: str) -> Parts:
    # python-hcl2 (and lark under it) is loaded here, by a desired schema that has an HCL file:
    # about 50 ms of every schema Job's start-up otherwise (issue #16).
    import hcl2

    try:
        document = hcl2.loads(text)
    except Exception as error:  # python-hcl2 raises lark's and its own errors alike
        raise DesiredSchemaError(f"{source}: not valid HCL") from error
    reader = _Reader(dialect, source)
    parts = Parts(source=source)
    try:
        _document(dialect, reader, parts, document)
    except (NormalizationError, ViewError) as error:
        raise DesiredSchemaError(f"{source}: {error}") from error
    except READ_FAILURES as error:
        if isinstance(error, DesiredSchemaError):
            raise
        raise DesiredSchemaError(
            f"{source}: a block is not understood ({type(error).__name__})"
        ) from error
    return parts


def _document(dialect: Dialect, reader: _Reader, parts: Parts, document: dict[str, Any]) -> None:
    for name, _ in _blocks(document, "schema"):
        if dialect.family == "postgresql" and name is not None:
            parts.schemas.append(name)
    for name, body in _blocks(document, "enum"):
        if dialect.family == "mysql":
            raise reader.error(f"enum {name}: MySQL enums are column types, enum(...)")
        values = tuple(_string(v) for v in body.get("values", []))
        parts.enums.append(
            EnumType(
                schema=reader.schema_of(body),
                name=name or "",
                values=values,
                owner=reader.owner(f"enum {name}", body),
            )
        )
    tables = _blocks(document, "table")
    table_schemas = {name or "": reader.schema_of(body) for name, body in tables}
    for name, body in tables:
        if name is None:
            raise reader.error("a table block has no name")
        columns: list[Column] = []
        for cname, cbody in _blocks(body, "column"):
            with reader.within(f"column {name}.{cname}"):
                columns.append(reader.column(name, cname or "", cbody))
        pk = None
        for pk_name, pk_body in _blocks(body, "primary_key"):
            pk = PrimaryKey(
                columns=tuple(_reference_tail(c) for c in pk_body.get("columns", [])),
                name=pk_name,
            )
        indexes: list[Index] = []
        for index_name, index_body in _blocks(body, "index"):
            with reader.within(f"index {index_name or '(unnamed)'} on table {name}"):
                indexes.append(reader.index(index_name, index_body))
        foreign_keys: list[ForeignKey] = []
        for fk_name, fk_body in _blocks(body, "foreign_key"):
            with reader.within(f"foreign key {fk_name or '(unnamed)'} on table {name}"):
                foreign_keys.append(reader.foreign_key(fk_name, fk_body, table_schemas))
        checks: list[Check] = []
        for check_name, check_body in _blocks(body, "check"):
            with reader.within(f"check {check_name or '(unnamed)'} on table {name}"):
                expr = normalize_expression(dialect, _string(check_body["expr"]))
                checks.append(Check(expr=expr, name=check_name))
        parts.tables.append(
            Table(
                schema=reader.schema_of(body),
                name=name,
                columns=tuple(columns),
                primary_key=pk,
                indexes=tuple(indexes),
                foreign_keys=tuple(foreign_keys),
                checks=tuple(checks),
                comment=_string(body["comment"]) if "comment" in body else None,
                grants=tuple(reader.grants(name, body)),
                owner=reader.owner(f"table {name}", body),
            )
        )
    for name, body in _blocks(document, "sequence"):
        with reader.within(f"sequence {name}"):
            parts.sequences.append(reader.sequence(name or "", body))
    for name, body in _blocks(document, "view"):
        with reader.within(f"view {name}"):
            parts.views.append(reader.view(name or "", body))
