"""Read a desired schema from plain SQL DDL, parsed per dialect by sqlglot.

Understood: CREATE SCHEMA, CREATE TYPE ... AS ENUM, CREATE TABLE (columns with their
constraints, table constraints, MySQL KEY/INDEX clauses and COMMENT), CREATE [UNIQUE] INDEX,
ALTER TABLE ... ADD CONSTRAINT, COMMENT ON TABLE/COLUMN, CREATE [OR REPLACE] VIEW, GRANT ...
ON table TO ...; on PostgreSQL also CREATE MATERIALIZED VIEW, CREATE SEQUENCE, ALTER SEQUENCE
... OWNED BY, CREATE [OR REPLACE] FUNCTION and ALTER TABLE|[MATERIALIZED] VIEW|SEQUENCE|TYPE|
FUNCTION ... OWNER TO. Anything else is refused with the file and the statement's position:
a desired schema states structure, not data.

The file is split into statements with sqlglot's tokenizer. Sequences, grants, owners and
function headers are read from those tokens rather than from sqlglot's tree: its tree of
CREATE SEQUENCE loses a leading `NO CYCLE` (it reads `CYCLE`), MySQL's `'user'@'host'`
grantees and OWNER TO fall outside it, and a function's body is never parsed.

MySQL/MariaDB columns take what MODIFY COLUMN must restate (see `mysql_columns`): `CHARACTER
SET`, `COLLATE`, `ON UPDATE CURRENT_TIMESTAMP[(n)]`, `INVISIBLE`, `[GENERATED ALWAYS] AS
(...) VIRTUAL|STORED|PERSISTENT` (VIRTUAL when neither is said, as the server takes it), the
spatial types with MariaDB's `REF_SYSTEM_ID=n` or MySQL's `SRID n`; indexes `FULLTEXT` and
`SPATIAL` (`FULLTEXT KEY ...` in CREATE TABLE, `CREATE FULLTEXT|SPATIAL INDEX`). sqlglot
knows neither the spatial types but GEOMETRY, nor SRIDs, nor PERSISTENT, nor CREATE
FULLTEXT INDEX: `_mysql_tokens` reads those from the tokens and hands sqlglot the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import sqlglot
from sqlglot import Token, TokenType, exp

from ptah_operator.engine.schema import collector
from ptah_operator.engine.schema.dumps import DumpError, mysql_statements, psql_meta_commands
from ptah_operator.engine.schema.functions import (
    FunctionError,
    read_arguments,
    read_create_function,
)
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
    UniqueConstraint,
)
from ptah_operator.engine.schema.mysql_columns import (
    SPATIAL_TYPES,
    charset_of,
    normalize_on_update,
)
from ptah_operator.engine.schema.normalize import (
    READ_FAILURES,
    NormalizationError,
    canonical_expression,
    index_column,
    index_key_options,
    index_key_options_tuple,
    is_plain_column,
    is_serial_sequence,
    normalize_action,
    normalize_default,
    normalize_grantee,
    normalize_index_method,
    normalize_privileges,
    normalize_type,
    parse_expression,
    sequence_options,
    sequence_type,
    serial_base,
)
from ptah_operator.engine.schema.normalize import identity_options as normalize_identity_options
from ptah_operator.engine.schema.parts import Attachment, DesiredSchemaError, Parts
from ptah_operator.engine.schema.statements import RefusedError, identity_clause, read_statement
from ptah_operator.engine.schema.triggers import TriggerError
from ptah_operator.engine.schema.views import ViewError, desired_view
from ptah_operator.engine.schema.words import UnreadableError as _UnreadableError
from ptah_operator.engine.schema.words import Words as _Words
from ptah_operator.engine.schema.words import relation as _relation
from ptah_operator.engine.schema.words import span


@functools.cache
def _sqlglot_dialect(dialect: Dialect) -> sqlglot.Dialect:
    """sqlglot's dialect, made once (`get_or_raise` makes a new one per call)."""
    return sqlglot.Dialect.get_or_raise(dialect.sqlglot)


def _sql(dialect: Dialect, node: exp.Expr) -> str:
    """A column's type, default or ON UPDATE as SQL text. `Expression.sql` copies the whole
    subtree before writing it, because the generator may rearrange a query (its CTEs)
    while writing; these are no queries, and the statement's tree is read no further after
    them, so they are written as they are."""
    return _sqlglot_dialect(dialect).generate(node, copy=False)


@functools.lru_cache(maxsize=4096)
def _check_default_source(dialect: Dialect, source: str) -> None:
    """A default as written, checked as any default is: one expression, nothing more (the
    same few defaults recur across a file's tables; a refusal is not cached)."""
    parse_expression(dialect, source, "column default")


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


def _deferral(dialect: Dialect, options: list[exp.Expr], what: str) -> str | None:
    """`DEFERRABLE [INITIALLY DEFERRED|IMMEDIATE]` among a constraint's options, canonical
    (see `model.Deferral`); any other option is refused by name."""
    deferrable, deferred = False, False
    for option in options:
        text = " ".join(str(option).upper().split())
        if text == "DEFERRABLE":
            deferrable = True
        elif text == "INITIALLY DEFERRED":
            deferrable = deferred = True
        elif text in {"NOT DEFERRABLE", "INITIALLY IMMEDIATE", "MATCH SIMPLE"} or text.startswith(
            ("ON DELETE ", "ON UPDATE ")
        ):
            continue
        else:
            raise NormalizationError(f"{what}: {text.split(' (')[0]} is not modelled")
    if deferrable and dialect.family != "postgresql":
        raise NormalizationError(f"{what}: MySQL/MariaDB have no deferrable constraints")
    if not deferrable:
        return None
    return "DEFERRABLE INITIALLY DEFERRED" if deferred else "DEFERRABLE"


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
        deferrable=_deferral(
            dialect, list(reference.args.get("options") or []), f"foreign key {name or ''}"
        ),
    )


def _nulls_not_distinct(dialect: Dialect, node: exp.Expr, table: str) -> bool:
    """Whether a unique constraint says NULLS NOT DISTINCT (sqlglot: `nulls`)."""
    if not node.args.get("nulls"):
        return False
    if dialect.family != "postgresql":
        raise NormalizationError(f"table {table}: NULLS NOT DISTINCT is PostgreSQL's")
    return True


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

    def column(
        self,
        table: str,
        node: exp.ColumnDef,
        items: list[Attachment],
        spatial: dict[str, tuple[str, int | None]] | None = None,
        identity_given: dict[str, dict[str, int | bool]] | None = None,
        default_sources: dict[str, str] | None = None,
    ) -> Column:
        d = self.dialect
        mysql = d.family == "mysql"
        name = ident(d, node.this)
        kind = node.args.get("kind")
        if kind is None:
            raise DesiredSchemaError(f"{self.source}: column {table}.{name} has no type")
        raw_type = _sql(d, kind)
        spatial_type, srid = (spatial or {}).get(name, (None, None))
        if spatial_type is not None:
            raw_type = spatial_type
        identity: str | None = None
        serial = serial_base(raw_type) if d.family == "postgresql" else None
        if serial is not None:
            raw_type, identity = serial, "serial"
        type_text = normalize_type(d, raw_type)
        nullable, default, generated, collation, comment = True, None, None, None, None
        virtual, invisible = False, False
        charset: str | None = None
        on_update: str | None = None
        identity_options: tuple[int, int, int, int, int, bool] | None = None
        default_source: str | None = None
        for constraint in node.constraints:
            c = constraint.kind
            named = ident(d, constraint.this) if constraint.this is not None else None
            options = list(c.args.get("options") or []) if isinstance(c, exp.Expr) else []
            if not mysql and isinstance(
                c,
                exp.OnUpdateColumnConstraint
                | exp.CharacterSetColumnConstraint
                | exp.InvisibleColumnConstraint,
            ):
                raise DesiredSchemaError(
                    f"{self.source}: unsupported clause on column {table}.{name}"
                )
            if isinstance(c, exp.NotNullColumnConstraint):
                nullable = bool(c.args.get("allow_null"))
            elif isinstance(c, exp.DefaultColumnConstraint):
                default = normalize_default(d, _sql(d, c.this), type_text)
                source = (default_sources or {}).get(name)
                if default is not None and source is not None:
                    _check_default_source(d, source)
                    default_source = source
            elif isinstance(c, exp.PrimaryKeyColumnConstraint):
                items.append(
                    PrimaryKey(
                        columns=(name,),
                        name=named if not mysql else None,
                        deferrable=_deferral(d, options, f"primary key of {table}"),
                    )
                )
            elif isinstance(c, exp.UniqueColumnConstraint):
                items.append(
                    UniqueConstraint(
                        columns=(name,),
                        name=named,
                        deferrable=_deferral(d, options, f"unique constraint on {table}"),
                        nulls_not_distinct=_nulls_not_distinct(d, c, table),
                    )
                )
            elif isinstance(c, exp.CheckColumnConstraint):
                # MariaDB keeps a check written on its column as that column's own (named
                # after it); one given a name of its own is read as the table's.
                own = name if mysql and named is None else None
                items.append(Check(expr=canonical_expression(d, c.this), name=named, column=own))
            elif isinstance(c, exp.Reference):
                items.append(_foreign_key(d, (name,), c, named))
            elif isinstance(c, exp.GeneratedAsIdentityColumnConstraint):
                identity = "always" if c.this else "by default"
                if any(
                    c.args.get(k) is not None
                    for k in ("start", "increment", "minvalue", "maxvalue", "cycle")
                ):
                    raise _UnreadableError(f"column {table}.{name}: unread identity options")
                given = (identity_given or {}).get(name)
                if given is not None:
                    identity_options = normalize_identity_options(type_text, **given)  # type: ignore[arg-type]
            elif isinstance(c, exp.AutoIncrementColumnConstraint):
                identity = "auto_increment"
            elif isinstance(c, exp.ComputedColumnConstraint):
                generated = canonical_expression(d, c.this)
                # MySQL/MariaDB: VIRTUAL unless STORED (PERSISTENT) is said.
                virtual = mysql and not c.args.get("persisted")
            elif isinstance(c, exp.CollateColumnConstraint):
                collation = ident(d, c.this) if isinstance(c.this, exp.Identifier) else c.this.name
                if mysql:
                    collation = collation.lower()
            elif isinstance(c, exp.CharacterSetColumnConstraint):
                charset = c.this.name.lower()
            elif isinstance(c, exp.OnUpdateColumnConstraint):
                on_update = normalize_on_update(_sql(d, c.this))
            elif isinstance(c, exp.InvisibleColumnConstraint):
                invisible = True
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
            virtual=virtual,
            charset=charset,
            on_update=on_update,
            invisible=invisible,
            srid=srid,
            identity_options=identity_options,
            default_source=default_source,
        )

    def constraint(self, table: str, node: exp.Expr, name: str | None) -> Attachment:
        d = self.dialect
        options = list(node.args.get("options") or [])
        if isinstance(node, exp.PrimaryKey | exp.PrimaryKeyColumnConstraint):
            return PrimaryKey(
                columns=tuple(ident(d, c) for c in node.expressions),
                name=name,
                deferrable=_deferral(d, options, f"primary key of {table}"),
            )
        if isinstance(node, exp.UniqueColumnConstraint):
            schema = node.this
            columns = tuple(ident(d, c) for c in schema.expressions) if schema else ()
            if name is None and isinstance(schema, exp.Schema) and schema.this is not None:
                name = ident(d, schema.this)
            return UniqueConstraint(
                columns=columns,
                name=name,
                deferrable=_deferral(d, options, f"unique constraint {name or ''} on {table}"),
                nulls_not_distinct=_nulls_not_distinct(d, node, table),
            )
        if isinstance(node, exp.ForeignKey):
            columns = tuple(ident(d, c) for c in node.expressions)
            return _foreign_key(d, columns, node.args["reference"], name)
        if isinstance(node, exp.CheckColumnConstraint):
            return Check(expr=canonical_expression(d, node.this), name=name)
        if isinstance(node, exp.ExcludeColumnConstraint):
            raise _UnreadableError(
                f"table {table}: EXCLUDE constraints are not modelled by the engine"
            )
        if isinstance(node, exp.IndexColumnConstraint):
            for option in node.args.get("options") or []:
                for key, value in option.args.items():
                    if value is None or (key == "using" and str(value).upper() in _PLAIN):
                        continue
                    what = {
                        "comment": "an index comment",
                        "visible": "an invisible (ignored) index",
                    }
                    raise _UnreadableError(
                        f"table {table}, index {ident(d, node.this) if node.this else ''}: "
                        f"{what.get(key, 'the index option ' + key.upper())} is not modelled"
                    )
            kind = str(node.args.get("kind") or "").lower()
            return self.index_from_columns(
                ident(d, node.this) if node.this else None,
                node.expressions,
                unique=False,
                method=kind or None,
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
        options: list[str] = []
        for key in keys:
            desc, nulls_first, opclass = False, None, ""
            if isinstance(key, exp.Ordered):
                desc, nulls_first = bool(key.args.get("desc")), key.args.get("nulls_first")
                key = key.this
            if isinstance(key, exp.Opclass):
                opclass = key.expression.name
                key = key.this
            if isinstance(key, exp.Collate):
                raise _UnreadableError(f"index {name or ''}: per-key collations are not modelled")
            options.append(
                index_key_options(d, desc=desc, nulls_first=nulls_first, opclass=opclass)
            )
            if isinstance(key, exp.ColumnPrefix):
                columns.append(index_column(ident(d, key.this)))
                prefixes.append(int(key.expression.name))
                continue
            if isinstance(key, exp.Column | exp.Identifier):
                columns.append(index_column(ident(d, key)))
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
            method=normalize_index_method(d, method) if method is not None else None,
            key_options=index_key_options_tuple(options),
        )


def _split(dialect: Dialect, text: str, source: str) -> list[tuple[str, list[Token]]]:
    """The file's statements, each as (the text its tokens point into, its tokens without
    the `;`). PostgreSQL: the file's tokens cut at each `;`, psql's meta-commands taken out
    first. MySQL/MariaDB: cut as the mysql client cuts them (`DELIMITER`), executable
    comments opened (see `dumps`), each statement tokenized on its own."""
    tokenizer = _sqlglot_dialect(dialect)
    try:
        pieces = mysql_statements(text) if dialect.family == "mysql" else [psql_meta_commands(text)]
    except DumpError as error:
        raise DesiredSchemaError(f"{source}: {error}") from None
    statements: list[tuple[str, list[Token]]] = []
    for piece in pieces:
        try:
            tokens = tokenizer.tokenize(piece)
        except sqlglot.errors.TokenError as error:
            raise DesiredSchemaError(f"{source}: not valid {dialect.family} DDL") from error
        current: list[Token] = []
        for token in tokens:
            if token.token_type is TokenType.SEMICOLON:
                if current:
                    statements.append((piece, current))
                current = []
            else:
                current.append(token)
        if current:
            statements.append((piece, current))
    return statements


@dataclasses.dataclass
class _Extras:
    """What a statement says that sqlglot's tree does not hold, read from its tokens."""

    # MySQL: per column of a CREATE TABLE, its spatial type and SRID.
    spatial: dict[str, tuple[str, int | None]] = dataclasses.field(default_factory=dict)
    # MySQL: the kind of a CREATE FULLTEXT|SPATIAL INDEX.
    index_kind: str | None = None
    # PostgreSQL: per identity column of a CREATE TABLE, its options.
    identity: dict[str, dict[str, int | bool]] = dataclasses.field(default_factory=dict)
    # PostgreSQL: per identity column, the sequence name its options give (SEQUENCE NAME).
    identity_sequences: dict[str, str] = dataclasses.field(default_factory=dict)
    # PostgreSQL: per column of a CREATE TABLE, its default as written.
    default_sources: dict[str, str] = dataclasses.field(default_factory=dict)
    # PostgreSQL: CREATE UNIQUE INDEX ... NULLS NOT DISTINCT.
    nulls_not_distinct: bool = False
    # PostgreSQL: CREATE MATERIALIZED VIEW ... WITH NO DATA.
    with_data: bool = True


@collector.paused()
def parse_ddl(dialect: Dialect, text: str, source: str) -> Parts:
    parts = Parts(source=source)
    reader = _TableReader(dialect, source)
    parser = _sqlglot_dialect(dialect)
    for position, (piece, tokens) in enumerate(_split(dialect, text, source), start=1):
        text = piece
        try:
            if read_statement(dialect, text, tokens, parts):
                continue
            words = _Words(dialect, tokens)
            if words.starts("CREATE", "FUNCTION") or words.starts(
                "CREATE", "OR", "REPLACE", "FUNCTION"
            ):
                if dialect.family != "postgresql":
                    raise _UnreadableError("functions are planned on PostgreSQL only")
                parts.functions.append(read_create_function(text, tokens))
                continue
            if _is_owner_statement(words):
                _owner_statement(dialect, words, parts, text)
                continue
            if words.starts("CREATE", "SEQUENCE") or words.starts("ALTER", "SEQUENCE"):
                _sequence_statement(dialect, words, parts)
                continue
            if words.starts("GRANT"):
                _grant_statement(dialect, words, parts)
                continue
            if words.starts("REVOKE"):
                raise DesiredSchemaError(
                    f"{source}: statement {position}: state the grants a table has, not revokes"
                )
            plain = _plain_index(dialect, tokens)
            if plain is not None:
                parts.attachments.append(plain)
                continue
            extras = _Extras()
            if dialect.family == "mysql":
                tokens, extras.spatial, extras.index_kind = _mysql_tokens(_view_options(tokens))
            else:
                tokens = _postgresql_tokens(tokens, extras)
                if words.starts("CREATE", "TABLE"):
                    _default_spans(text, tokens, extras)
            try:
                statement = parser.parser().parse(tokens, text)[0]
            except sqlglot.errors.ParseError as error:
                raise DesiredSchemaError(
                    f"{source}: statement {position} is not valid {dialect.family} DDL"
                ) from error
            if statement is not None:
                try:
                    _statement(dialect, reader, parts, statement, extras)
                except DesiredSchemaError as error:
                    message = str(error).removeprefix(f"{source}: ")
                    raise DesiredSchemaError(
                        f"{source}: statement {position}: {message}"
                    ) from error
        except (
            NormalizationError,
            ViewError,
            _UnreadableError,
            FunctionError,
            RefusedError,
            TriggerError,
        ) as error:
            raise DesiredSchemaError(f"{source}: statement {position}: {error}") from error
        except DesiredSchemaError:
            raise
        except READ_FAILURES as error:
            raise DesiredSchemaError(
                f"{source}: statement {position} is not understood as "
                f"schema DDL ({type(error).__name__})"
            ) from error
    return parts


# The tokens a plain index statement may name things with: a bare or a quoted name (a
# keyword the tokenizer marks, as PostgreSQL's marks `name`, is left to the parser).
_PLAIN_NAMES = frozenset({TokenType.VAR, TokenType.IDENTIFIER})


def _plain_index(dialect: Dialect, tokens: list[Token]) -> tuple[str, str, Index] | None:
    """`CREATE [UNIQUE] INDEX name ON [schema.]table (column, ...)` and nothing more, read
    from its tokens without sqlglot's parser (most of a schema's indexes are written so, and
    parsing them was a fifth of reading a file); None for any other statement, which the
    parser reads. What the parser would make of the shape (the key options of so many plain
    keys) is taken once from the parser itself (`_plain_index_template`)."""
    n = len(tokens)
    if n < 8 or tokens[0].token_type is not TokenType.CREATE:
        return None
    at = 1
    unique = tokens[1].token_type is TokenType.UNIQUE
    if unique:
        at = 2
    if tokens[at].token_type is not TokenType.INDEX:
        return None
    names = _PLAIN_NAMES
    if tokens[at + 1].token_type not in names or tokens[at + 2].token_type is not TokenType.ON:
        return None
    name_token, at = tokens[at + 1], at + 3
    schema_token = None
    if at + 2 < n and tokens[at + 1].token_type is TokenType.DOT:
        if dialect.family == "mysql" or tokens[at].token_type not in names:
            return None
        schema_token, at = tokens[at], at + 2
    if tokens[at].token_type not in names or tokens[at + 1].token_type is not TokenType.L_PAREN:
        return None
    table_token, at = tokens[at], at + 2
    columns: list[str] = []
    while True:
        if at + 1 >= n or tokens[at].token_type not in names:
            return None
        column = _plain_name(dialect, tokens[at])
        if not column or not is_plain_column(column):
            return None  # refused by the parser's path, in its words
        columns.append(column)
        follow = tokens[at + 1].token_type
        at += 2
        if follow is TokenType.R_PAREN:
            break
        if follow is not TokenType.COMMA:
            return None
    if at != n:
        return None
    words = _parser_words()
    if words is None or any(t.text.upper() in words for t in tokens if t.token_type in names):
        return None
    template = _plain_index_template(dialect, unique, len(columns))
    if template is None:
        return None
    if dialect.family == "mysql":
        schema = ""
    else:
        schema = _plain_name(dialect, schema_token) if schema_token is not None else "public"
    index = Index(
        name=_plain_name(dialect, name_token),
        columns=tuple(columns),
        unique=unique,
        key_options=template.key_options,
    )
    return schema, _plain_name(dialect, table_token), index


@functools.cache
def _parser_words() -> frozenset[str] | None:
    """Every word sqlglot's parsers (the common one, PostgreSQL's and MySQL's) spell out in
    their source: the words they match by a token's text, quoted names included (`CREATE
    INDEX concurrently ON t (a)` has no name: CONCURRENTLY is matched by its text). A plain
    statement naming one of them is left to the parser. Read from the installed sources,
    so that it follows the pinned sqlglot; None (no fast path) if they cannot be read."""
    root = Path(sqlglot.__file__).parent
    words: set[str] = set()
    try:
        for source in ("parser.py", "parsers/postgres.py", "parsers/mysql.py"):
            text = (root / source).read_text(encoding="utf-8")
            words.update(_QUOTED_WORD.findall(text))
    except (OSError, UnicodeDecodeError):
        return None
    return frozenset(words) if words else None


_QUOTED_WORD = re.compile(r"""["']([A-Z][A-Z0-9_]*)["']""")


def _plain_name(dialect: Dialect, token: Token) -> str:
    """A name token as `ident` reads the identifier the parser makes of it."""
    if token.token_type is TokenType.IDENTIFIER or dialect.family == "mysql":
        return token.text
    return token.text.lower()


@functools.lru_cache(maxsize=64)
def _plain_index_template(dialect: Dialect, unique: bool, keys: int) -> Index | None:
    """The Index the parser makes of a plain index statement of this shape, when it holds
    nothing but a name, its keys, uniqueness and key options (else None: the fast path is
    not taken, and every such statement goes through the parser)."""
    columns = tuple(f"c{i}" for i in range(keys))
    text = f"CREATE {'UNIQUE ' if unique else ''}INDEX i ON t ({', '.join(columns)})"
    tokens = _sqlglot_dialect(dialect).tokenize(text)
    statement = _sqlglot_dialect(dialect).parser().parse(tokens, text)[0]
    parts = Parts(source="")
    if statement is None:
        return None
    _statement(dialect, _TableReader(dialect, ""), parts, statement, _Extras())
    if len(parts.attachments) != 1:
        return None
    _, _, index = parts.attachments[0]
    if not isinstance(index, Index):
        return None
    if index != Index(name="i", columns=columns, unique=unique, key_options=index.key_options):
        return None
    return index


def _view_options(tokens: list[Token]) -> list[Token]:
    """MySQL/MariaDB: `CREATE [OR REPLACE] ALGORITHM=UNDEFINED DEFINER=u@h SQL SECURITY
    DEFINER VIEW ...`, as a dump writes every view, read as `CREATE VIEW ...`. Those are the
    defaults but the definer, which is not managed (a view the engine makes has the applying
    login as its definer, as CREATE VIEW gives it). Other algorithms and SQL SECURITY
    INVOKER are refused by name."""
    words = [t.text.upper() for t in tokens]
    if not words or words[0] != "CREATE" or "VIEW" not in words[:16]:
        return tokens
    start = 3 if words[1:3] == ["OR", "REPLACE"] else 1
    end = words.index("VIEW")
    if end == start:
        return tokens
    at = start
    while at < end:
        token = tokens[at]
        word = words[at]
        if word == "ALGORITHM" and at + 2 < end and tokens[at + 1].token_type is TokenType.EQ:
            if words[at + 2] != "UNDEFINED":
                raise _UnreadableError(f"view ALGORITHM={words[at + 2]} is not modelled")
            at += 3
        elif word == "DEFINER" and at + 1 < end and tokens[at + 1].token_type is TokenType.EQ:
            at += 3
            if at < end and tokens[at].token_type is TokenType.PARAMETER:
                at += 2
        elif token.token_type is TokenType.SQL_SECURITY or word == "SQL":
            at += 1 if token.token_type is TokenType.SQL_SECURITY else 2
            if at >= end or words[at] != "DEFINER":
                raise _UnreadableError("view SQL SECURITY INVOKER is not modelled")
            at += 1
        else:
            # Not a dump's view options: the view reader says what it makes of them.
            return tokens
    return [*tokens[:start], *tokens[end:]]


# What ends a column's DEFAULT expression in CREATE TABLE: the next clause of the column.
_DEFAULT_ENDS = frozenset(
    {
        "NOT",
        "NULL",
        "CONSTRAINT",
        "CHECK",
        "REFERENCES",
        "PRIMARY",
        "UNIQUE",
        "GENERATED",
        "COLLATE",
        "DEFAULT",
    }
)


def _default_spans(text: str, tokens: list[Token], extras: _Extras) -> None:
    """PostgreSQL CREATE TABLE: each column's DEFAULT as written (see `Column.default_source`)."""
    depth = 0
    element: list[Token] = []
    at = 0
    while at < len(tokens):
        token = tokens[at]
        kind = token.token_type
        if kind is TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                element = []
                at += 1
                continue
        elif kind is TokenType.R_PAREN:
            depth -= 1
        elif kind is TokenType.COMMA and depth == 1:
            element = []
            at += 1
            continue
        if (
            depth == 1
            and element
            and token.text.upper() == "DEFAULT"
            and kind is not TokenType.STRING
        ):
            end = at + 1
            inner = 0
            while end < len(tokens):
                current = tokens[end]
                if current.token_type is TokenType.L_PAREN:
                    inner += 1
                elif current.token_type is TokenType.R_PAREN:
                    if inner == 0:
                        break
                    inner -= 1
                elif (current.token_type is TokenType.COMMA and inner == 0) or (
                    inner == 0
                    and end > at + 1
                    and current.token_type is not TokenType.STRING
                    # sqlglot reads `PRIMARY KEY` as one token: its first word counts.
                    and (current.text.upper().split() or [""])[0] in _DEFAULT_ENDS
                ):
                    break
                end += 1
            first = element[0]
            name = first.text if first.token_type is TokenType.IDENTIFIER else first.text.lower()
            if end > at + 1:
                extras.default_sources[name] = span(text, tokens[at + 1 : end])
            at = end
            continue
        if depth >= 1:
            element.append(token)
        at += 1


def _postgresql_tokens(tokens: list[Token], extras: _Extras) -> list[Token]:
    """What sqlglot does not read in PostgreSQL DDL, taken out of a statement's tokens into
    `extras`: the options of `GENERATED ... AS IDENTITY (...)` in CREATE TABLE (sqlglot
    refuses `NO MAXVALUE`), `NULLS NOT DISTINCT` of CREATE UNIQUE INDEX, and `WITH [NO]
    DATA` of CREATE MATERIALIZED VIEW."""
    words = [t.text.upper() if t.token_type is not TokenType.STRING else "" for t in tokens]
    views = words[:2] == ["CREATE", "MATERIALIZED"] or words[:2] == ["CREATE", "VIEW"]
    views = views or words[:4] == ["CREATE", "OR", "REPLACE", "VIEW"]
    if views and len(tokens) > 3:
        if words[-3:] == ["WITH", "NO", "DATA"]:
            extras.with_data = False
            return tokens[:-3]
        if words[-2:] == ["WITH", "DATA"]:
            return tokens[:-2]
        return tokens
    if words[:2] == ["CREATE", "INDEX"] or words[:3] == ["CREATE", "UNIQUE", "INDEX"]:
        if "ONLY" in words and words[words.index("ONLY") - 1] == "ON":
            raise _UnreadableError(
                "an index ON ONLY a partitioned table: declarative partitioning is not modelled"
            )
        for at in range(len(tokens) - 2):
            if words[at : at + 3] == ["NULLS", "NOT", "DISTINCT"]:
                extras.nulls_not_distinct = True
                return [*tokens[:at], *tokens[at + 3 :]]
        return tokens
    if words[:2] != ["CREATE", "TABLE"] and words[:4] != ["CREATE", "UNLOGGED", "TABLE"]:
        return tokens
    kept: list[Token] = []
    depth = 0
    element: list[Token] = []
    at = 0
    while at < len(tokens):
        token = tokens[at]
        if token.token_type is TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                element = []
                kept.append(token)
                at += 1
                continue
        elif token.token_type is TokenType.R_PAREN:
            depth -= 1
        elif token.token_type is TokenType.COMMA and depth == 1:
            element = []
            kept.append(token)
            at += 1
            continue
        if (
            depth == 1
            and element
            and words[at] == "IDENTITY"
            and at + 1 < len(tokens)
            and tokens[at + 1].token_type is TokenType.L_PAREN
        ):
            kept.append(token)
            reader = _Words(Dialect.POSTGRESQL, tokens)
            reader.at = at + 1
            inside = reader.parenthesized()
            options, sequence = identity_clause(
                Dialect.POSTGRESQL, _Words(Dialect.POSTGRESQL, inside)
            )
            column = element[0]
            name = column.text if column.token_type is TokenType.IDENTIFIER else column.text.lower()
            extras.identity[name] = options
            if sequence is not None:
                extras.identity_sequences[name] = sequence
            at = reader.at
            continue
        if depth >= 1:
            element.append(token)
        kept.append(token)
        at += 1
    return kept


# Index types that are a plain index (InnoDB makes BTREE of either).
_PLAIN = frozenset({"BTREE", "HASH"})


# What starts a table element that is not a column (`KEY point (p)` names an index).
_NOT_COLUMNS = frozenset(
    {"CONSTRAINT", "KEY", "INDEX", "UNIQUE", "PRIMARY", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL"}
)


def _mysql_tokens(
    tokens: list[Token],
) -> tuple[list[Token], dict[str, tuple[str, int | None]], str | None]:
    """What sqlglot does not read in MySQL/MariaDB DDL, taken out of a statement's tokens:
    (the tokens for sqlglot; per column of a CREATE TABLE, its spatial type and SRID; the
    kind of a CREATE FULLTEXT|SPATIAL INDEX).

    A spatial type other than GEOMETRY goes to sqlglot as GEOMETRY, `REF_SYSTEM_ID=n`
    (MariaDB) and `SRID n` (MySQL) not at all, MariaDB's `PERSISTENT` as `STORED`."""
    words = [t.text.upper() if t.token_type is not TokenType.STRING else "" for t in tokens]
    if len(tokens) > 2 and words[0] == "CREATE" and words[1] in {"FULLTEXT", "SPATIAL"}:
        return [tokens[0], *tokens[2:]], {}, words[1].lower()
    if len(tokens) < 3 or words[:2] != ["CREATE", "TABLE"]:
        return tokens, {}, None
    spatial: dict[str, tuple[str, int | None]] = {}
    kept: list[Token] = []
    depth = 0
    element: list[Token] = []  # the tokens of the current column or constraint so far
    at = 0
    while at < len(tokens):
        token = tokens[at]
        kind = token.token_type
        if kind is TokenType.L_PAREN:
            depth += 1
            if depth == 1:
                kept.append(token)
                element = []
                at += 1
                continue
        elif kind is TokenType.R_PAREN:
            depth -= 1
        elif kind is TokenType.COMMA and depth == 1:
            kept.append(token)
            element = []
            at += 1
            continue
        if depth == 1 and element and token.token_type is not TokenType.STRING:
            name = element[0].text
            word = token.text.upper()
            if (
                len(element) == 1
                and token.text.lower() in SPATIAL_TYPES
                and element[0].text.upper() not in _NOT_COLUMNS
            ):
                spatial[name] = (token.text.lower(), spatial.get(name, ("", None))[1])
                token = Token(TokenType.GEOMETRY, "GEOMETRY", token.line, token.col)
            elif len(element) >= 2 and word in {"SRID", "REF_SYSTEM_ID"}:
                step = 1
                if (
                    word == "REF_SYSTEM_ID"
                    and at + 1 < len(tokens)
                    and tokens[at + 1].token_type is TokenType.EQ
                ):
                    step = 2
                if at + step < len(tokens) and tokens[at + step].token_type is TokenType.NUMBER:
                    base = spatial.get(name, (element[1].text.lower(), None))[0]
                    spatial[name] = (base, int(tokens[at + step].text))
                    element.append(token)
                    at += step + 1
                    continue
            elif word == "PERSISTENT" and element[-1].token_type is TokenType.R_PAREN:
                token = Token(TokenType.VAR, "STORED", token.line, token.col)
        if depth >= 1:
            element.append(token)
        kept.append(token)
        at += 1
    return kept, spatial, None


def _owner(words: _Words, sequence_schema: str) -> tuple[str | None, str | None]:
    """`OWNED BY NONE` or `OWNED BY [schema.]table.column` (the sequence's schema)."""
    words.expect("OWNED", "BY")
    if words.take("NONE"):
        return None, None
    names = words.dotted()
    if len(names) == 3 and names[0] != sequence_schema:
        raise _UnreadableError("a sequence is owned by a column of a table in its own schema")
    if len(names) not in {2, 3}:
        raise _UnreadableError("OWNED BY names a table and a column")
    return names[-2], names[-1]


def _sequence_statement(dialect: Dialect, words: _Words, parts: Parts) -> None:
    if dialect.family != "postgresql":
        raise _UnreadableError("sequences are planned on PostgreSQL only")
    if words.take("ALTER", "SEQUENCE"):
        words.take("IF", "EXISTS")
        schema, name = _relation(dialect, words.dotted())
        table, column = _owner(words, schema)
        if not words.done():
            raise _UnreadableError("only ALTER SEQUENCE ... OWNED BY is supported")
        parts.sequence_owners.append((schema, name, table, column))
        return
    words.expect("CREATE", "SEQUENCE")
    words.take("IF", "NOT", "EXISTS")
    schema, name = _relation(dialect, words.dotted())
    values: dict[str, int] = {}
    type_text: str | None = None
    cycle = False
    owner: tuple[str | None, str | None] = (None, None)
    while not words.done():
        if words.take("AS"):
            type_text = words.next().text
        elif words.take("INCREMENT"):
            words.take("BY")
            values["increment"] = words.number()
        elif words.take("NO", "MINVALUE") or words.take("NO", "MAXVALUE"):
            continue
        elif words.take("NO", "CYCLE"):
            cycle = False
        elif words.take("MINVALUE"):
            values["min_value"] = words.number()
        elif words.take("MAXVALUE"):
            values["max_value"] = words.number()
        elif words.take("START"):
            words.take("WITH")
            values["start"] = words.number()
        elif words.take("CACHE"):
            values["cache"] = words.number()
        elif words.take("CYCLE"):
            cycle = True
        elif words.starts("OWNED", "BY"):
            owner = _owner(words, schema)
        else:
            raise _UnreadableError(f"sequence {name}: unsupported option")
    kind = sequence_type(type_text)
    increment, low, high, start = sequence_options(
        kind,
        increment=values.get("increment"),
        min_value=values.get("min_value"),
        max_value=values.get("max_value"),
        start=values.get("start"),
    )
    parts.sequences.append(
        Sequence(
            schema=schema,
            name=name,
            type=kind,
            start=start,
            increment=increment,
            min_value=low,
            max_value=high,
            cache=values.get("cache", 1),
            cycle=cycle,
            owner_table=owner[0],
            owner_column=owner[1],
        )
    )


_OWNED_KINDS = frozenset(
    {"TABLE", "VIEW", "MATERIALIZED", "SEQUENCE", "TYPE", "FUNCTION", "DOMAIN"}
)


def _is_owner_statement(words: _Words) -> bool:
    tokens = words.tokens
    return (
        words.starts("ALTER")
        and len(tokens) > 4
        and tokens[1].text.upper() in _OWNED_KINDS
        and tokens[-3].text.upper() == "OWNER"
        and tokens[-2].text.upper() == "TO"
    )


def _owner_statement(dialect: Dialect, words: _Words, parts: Parts, text: str) -> None:
    """`ALTER TABLE|[MATERIALIZED] VIEW|SEQUENCE|TYPE name OWNER TO role`, `ALTER FUNCTION
    name(types) OWNER TO role`."""
    if dialect.family != "postgresql":
        raise _UnreadableError("owners are planned on PostgreSQL only")
    words.expect("ALTER")
    if words.take("MATERIALIZED"):
        words.expect("VIEW")
        kind = "VIEW"
    else:
        kind = words.next().text.upper()
    words.take("IF", "EXISTS")
    if kind == "TABLE":
        words.take("ONLY")
    schema, name = _relation(dialect, words.dotted())
    arguments = None
    if kind == "FUNCTION":
        if words.peek_type() is not TokenType.L_PAREN:
            raise _UnreadableError("ALTER FUNCTION names the function with its argument types")
        arguments = read_arguments(text, words.parenthesized())
    words.expect("OWNER", "TO")
    token = words.next()
    quoted = token.token_type in {TokenType.IDENTIFIER, TokenType.STRING}
    if not quoted and token.text.upper() in {
        "CURRENT_USER",
        "SESSION_USER",
        "CURRENT_ROLE",
        "PUBLIC",
    }:
        raise _UnreadableError("name the owning role")
    role = normalize_grantee(dialect, token.text, None, quoted=quoted)
    if not words.done():
        raise _UnreadableError("unsupported OWNER TO clause")
    parts.owners.append((kind, schema, name, role, arguments))


def _privilege_words(words: _Words) -> list[str]:
    privileges: list[str] = []
    current: list[str] = []
    while not words.starts("ON"):
        token = words.next()
        if token.token_type is TokenType.COMMA:
            privileges.append(" ".join(current))
            current = []
        elif token.token_type is TokenType.L_PAREN:
            raise _UnreadableError("column privileges are not supported; grant on the table")
        else:
            current.append(token.text)
    privileges.append(" ".join(current))
    if not all(privileges):
        raise _UnreadableError("a GRANT names no privilege")
    return privileges


def _grantee(dialect: Dialect, words: _Words) -> str:
    if dialect.family == "postgresql":
        words.take("GROUP")
    token = words.next()
    quoted = token.token_type in {TokenType.IDENTIFIER, TokenType.STRING}
    if not quoted and (
        token.token_type in _Words._NOT_WORDS or not token.text.replace("_", "").isalnum()
    ):
        raise _UnreadableError("expected a grantee")
    if not quoted and token.text.upper() in {"CURRENT_USER", "SESSION_USER", "CURRENT_ROLE"}:
        raise _UnreadableError("name the grantee; CURRENT_USER and the like are not compared")
    if dialect.family == "postgresql":
        return normalize_grantee(dialect, token.text, None, quoted=quoted)
    host: str | None = None
    if words.peek_type() is TokenType.PARAMETER and words.tokens[words.at].text == "@":
        words.at += 1
        host = words.next().text
    return normalize_grantee(dialect, token.text, host, quoted=True)


def _grant_statement(dialect: Dialect, words: _Words, parts: Parts) -> None:
    words.expect("GRANT")
    privilege_words = _privilege_words(words)
    words.expect("ON")
    if words.starts("ALL"):
        raise _UnreadableError("grant on each table, not on ALL TABLES")
    if any(
        words.starts(kind)
        for kind in ("FUNCTION", "PROCEDURE", "ROUTINE", "SEQUENCE", "SCHEMA", "TYPE", "DATABASE")
    ):
        raise _UnreadableError("only privileges on tables are planned")
    privileges = normalize_privileges(dialect, privilege_words)
    words.take("TABLE")
    tables = [_relation(dialect, words.dotted())]
    while words.peek_type() is TokenType.COMMA:
        words.at += 1
        tables.append(_relation(dialect, words.dotted()))
    words.expect("TO")
    grantees = [_grantee(dialect, words)]
    while words.peek_type() is TokenType.COMMA:
        words.at += 1
        grantees.append(_grantee(dialect, words))
    grantable = words.take("WITH", "GRANT", "OPTION")
    if not words.done():
        raise _UnreadableError("unsupported GRANT clause")
    for schema, table in tables:
        for grantee in grantees:
            for privilege in privileges:
                parts.grants.append((schema, table, Grant(grantee, privilege, grantable)))


def _statement(
    dialect: Dialect,
    reader: _TableReader,
    parts: Parts,
    node: exp.Expr,
    extras: _Extras,
) -> None:
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
            schema, name = _table_name(d, node.this)
            if not (isinstance(target, exp.DataType) and target.this == exp.DataType.Type.ENUM):
                raise DesiredSchemaError(
                    f"{source}: type {schema}.{name}: only enum types are modelled (composite, "
                    "range, base and shell types are not)"
                )
            values = tuple(str(v.this) for v in target.expressions)
            parts.enums.append(EnumType(schema=schema, name=name, values=values))
            return
        if kind == "TABLE":
            _create_table(d, reader, parts, node, extras)
            return
        if kind == "VIEW":
            _create_view(d, parts, node, extras.with_data)
            return
        if kind == "INDEX":
            index_node = node.this
            schema, table = _table_name(d, index_node.args["table"])
            params = index_node.args.get("params")
            using = params.args.get("using") if params else None
            where = params.args.get("where") if params else None
            if params is not None and (
                params.args.get("with_storage") or params.args.get("tablespace")
            ):
                raise DesiredSchemaError(
                    f"{source}: index on {table}: storage parameters and tablespaces "
                    "(WITH (...), TABLESPACE) are not modelled"
                )
            index = reader.index_from_columns(
                ident(d, index_node.this) if index_node.this else None,
                list(params.args.get("columns") or []) if params else [],
                unique=bool(node.args.get("unique")),
                where=where.this if where is not None else None,
                include=list(params.args.get("include") or []) if params else [],
                method=extras.index_kind
                or (normalize_index_method(d, str(using.name)) if using is not None else None),
            )
            if extras.nulls_not_distinct:
                if not index.unique:
                    raise DesiredSchemaError(
                        f"{source}: index on {table}: NULLS NOT DISTINCT is for a unique index"
                    )
                index = dataclasses.replace(index, nulls_not_distinct=True)
            parts.attachments.append((schema, table, index))
            return
    if isinstance(node, exp.Alter) and str(node.args.get("kind")).upper() == "TABLE":
        schema, table = _table_name(d, node.this)
        if node.args.get("not_valid"):
            raise DesiredSchemaError(
                f"{source}: table {table}: NOT VALID constraints are not modelled (add it valid)"
            )
        for action in node.args.get("actions") or []:
            if not isinstance(action, exp.AddConstraint):
                raise DesiredSchemaError(
                    f"{source}: table {table}: only ALTER TABLE ... ADD CONSTRAINT is supported"
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
    if isinstance(node, exp.Comment):
        raise DesiredSchemaError(
            f"{source}: COMMENT ON {str(node.args.get('kind')).upper()}: comments are modelled "
            "on tables, columns, schemas and extensions only"
        )
    raise DesiredSchemaError(
        f"{source}: unsupported statement ({type(node).__name__}): a desired schema states "
        "structure, not changes or data"
    )


# Table options sqlglot reads, per family: what each is read as ("" for accepted, not a
# schema's: the next AUTO_INCREMENT value is the data's).
_PG_TABLE_REFUSALS = {
    exp.PartitionedByProperty: "declarative partitioning (PARTITION BY)",
    exp.PartitionedOfProperty: "declarative partitioning (PARTITION OF)",
    exp.InheritsProperty: "table inheritance (INHERITS)",
}


def _table_options(
    d: Dialect, parts: Parts, name: str, node: exp.Create
) -> tuple[str | None, str | None, str | None, str | None]:
    """(comment, engine, character set, collation) from a CREATE TABLE's options; every
    option the engine does not model is refused by name."""
    comment: str | None = None
    engine: str | None = None
    charset: str | None = None
    collation: str | None = None
    properties = node.args.get("properties")
    for prop in properties.expressions if properties else []:
        refusal = _PG_TABLE_REFUSALS.get(type(prop))
        if refusal is not None:
            raise DesiredSchemaError(
                f"{parts.source}: table {name}: {refusal} is not modelled by the engine"
            )
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = _literal_text(prop.this)
        elif d.family == "mysql" and isinstance(prop, exp.EngineProperty):
            engine = prop.this.name if isinstance(prop.this, exp.Expr) else str(prop.this)
        elif d.family == "mysql" and isinstance(prop, exp.CharacterSetProperty):
            charset = prop.this.name.lower() if isinstance(prop.this, exp.Expr) else str(prop.this)
        elif d.family == "mysql" and isinstance(prop, exp.CollateProperty):
            collation = (
                prop.this.name.lower() if isinstance(prop.this, exp.Expr) else str(prop.this)
            )
        elif d.family == "mysql" and isinstance(prop, exp.AutoIncrementProperty):
            continue
        else:
            option = prop.sql(dialect=d.sqlglot).split("=")[0].split("(")[0].strip()
            raise DesiredSchemaError(
                f"{parts.source}: table {name}: the table option {option or type(prop).__name__} "
                "is not modelled by the engine"
            )
    if (
        charset is not None
        and collation is not None
        and charset_of(collation) != charset
        and not (charset.startswith("utf8") and charset_of(collation).startswith("utf8"))
    ):
        raise DesiredSchemaError(
            f"{parts.source}: table {name}: collation {collation} is not of character set {charset}"
        )
    return comment, engine, charset if collation is None else None, collation


def _create_table(
    d: Dialect,
    reader: _TableReader,
    parts: Parts,
    node: exp.Create,
    extras: _Extras,
) -> None:
    schema_node = node.this
    table_name = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
    schema, name = _table_name(d, table_name) if isinstance(table_name, exp.Table) else ("", "")
    comment, engine, charset, collation = _table_options(d, parts, name, node)
    if not isinstance(schema_node, exp.Schema):
        raise DesiredSchemaError(f"{parts.source}: CREATE TABLE {name} without columns")
    items: list[Attachment] = []
    columns: list[Column] = []
    for element in schema_node.expressions:
        try:
            if isinstance(element, exp.ColumnDef):
                column = reader.column(
                    name, element, items, extras.spatial, extras.identity, extras.default_sources
                )
                sequence = extras.identity_sequences.get(column.name)
                if sequence is not None and not is_serial_sequence(name, column.name, sequence):
                    raise _UnreadableError(
                        f"column {name}.{column.name}: an identity's sequence named other than "
                        "table_column_seq is not modelled"
                    )
                columns.append(column)
            elif isinstance(element, exp.Constraint):
                constraint_name = ident(d, element.this)
                for inner in element.expressions:
                    items.append(reader.constraint(name, inner, constraint_name))
            else:
                items.append(reader.constraint(name, element, None))
        except NormalizationError as error:
            what = "a constraint"
            if isinstance(element, exp.ColumnDef):
                what = f"column {name}.{ident(d, element.this)}"
            elif isinstance(element, exp.Constraint):
                what = f"constraint {ident(d, element.this)}"
            raise NormalizationError(f"table {name}, {what}: {error}") from None
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
        comment=comment,
        collation=collation,
        charset=charset,
        engine=engine,
    )
    parts.tables.append(table)


def _create_view(d: Dialect, parts: Parts, node: exp.Create, with_data: bool = True) -> None:
    target = node.this
    columns: list[str] = []
    if isinstance(target, exp.Schema):
        columns = [ident(d, c) for c in target.expressions]
        target = target.this
    schema, name = _table_name(d, target)
    properties = node.args.get("properties")
    found = list(properties.expressions) if properties is not None else []
    materialized = [p for p in found if isinstance(p, exp.MaterializedProperty)]
    if len(materialized) != len(found) or (materialized and d.family != "postgresql"):
        raise DesiredSchemaError(
            f"{parts.source}: view {name}: only a plain CREATE [OR REPLACE] VIEW, or on "
            "PostgreSQL CREATE MATERIALIZED VIEW, is supported"
        )
    if materialized and node.args.get("replace"):
        raise DesiredSchemaError(
            f"{parts.source}: view {name}: a materialized view cannot be replaced"
        )
    if not with_data and not materialized:
        raise DesiredSchemaError(
            f"{parts.source}: view {name}: WITH NO DATA is for materialized views"
        )
    view = desired_view(d, schema, name, node.expression, columns)
    parts.views.append(
        dataclasses.replace(view, materialized=bool(materialized), with_data=with_data)
    )
