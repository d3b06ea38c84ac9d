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

import sqlglot
from sqlglot import Token, TokenType, exp

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
from ptah_operator.engine.schema.mysql_columns import SPATIAL_TYPES, normalize_on_update
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    canonical_expression,
    index_key_options,
    index_key_options_tuple,
    normalize_action,
    normalize_default,
    normalize_grantee,
    normalize_index_method,
    normalize_privileges,
    normalize_type,
    sequence_options,
    sequence_type,
    serial_base,
)
from ptah_operator.engine.schema.parts import Attachment, DesiredSchemaError, Parts
from ptah_operator.engine.schema.views import ViewError, desired_view


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

    def column(
        self,
        table: str,
        node: exp.ColumnDef,
        items: list[Attachment],
        spatial: dict[str, tuple[str, int | None]] | None = None,
    ) -> Column:
        d = self.dialect
        mysql = d.family == "mysql"
        name = ident(d, node.this)
        kind = node.args.get("kind")
        if kind is None:
            raise DesiredSchemaError(f"{self.source}: column {table}.{name} has no type")
        raw_type = kind.sql(dialect=d.sqlglot)
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
        for constraint in node.constraints:
            c = constraint.kind
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
                default = normalize_default(d, c.this.sql(dialect=d.sqlglot), type_text)
            elif isinstance(c, exp.PrimaryKeyColumnConstraint):
                items.append(PrimaryKey(columns=(name,)))
            elif isinstance(c, exp.UniqueColumnConstraint):
                items.append(UniqueConstraint(columns=(name,)))
            elif isinstance(c, exp.CheckColumnConstraint):
                # MariaDB keeps a check written on its column as that column's own.
                own = name if mysql else None
                items.append(Check(expr=canonical_expression(d, c.this), column=own))
            elif isinstance(c, exp.Reference):
                items.append(_foreign_key(d, (name,), c, None))
            elif isinstance(c, exp.GeneratedAsIdentityColumnConstraint):
                identity = "always" if c.this else "by default"
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
                on_update = normalize_on_update(c.this.sql(dialect=d.sqlglot))
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
            options.append(
                index_key_options(d, desc=desc, nulls_first=nulls_first, opclass=opclass)
            )
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
            method=normalize_index_method(d, method) if method is not None else None,
            key_options=index_key_options_tuple(options),
        )


class _UnreadableError(ValueError):
    """A statement read token by token that says something the engine does not take."""


def _split(dialect: Dialect, text: str, source: str) -> list[list[Token]]:
    """The file's statements, each as its tokens (without the `;`)."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect.sqlglot).tokenize(text)
    except sqlglot.errors.TokenError as error:
        raise DesiredSchemaError(f"{source}: not valid {dialect.family} DDL") from error
    statements: list[list[Token]] = []
    current: list[Token] = []
    for token in tokens:
        if token.token_type is TokenType.SEMICOLON:
            if current:
                statements.append(current)
            current = []
        else:
            current.append(token)
    if current:
        statements.append(current)
    return statements


def parse_ddl(dialect: Dialect, text: str, source: str) -> Parts:
    parts = Parts(source=source)
    reader = _TableReader(dialect, source)
    parser = sqlglot.Dialect.get_or_raise(dialect.sqlglot)
    for position, tokens in enumerate(_split(dialect, text, source), start=1):
        try:
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
            spatial: dict[str, tuple[str, int | None]] = {}
            index_kind: str | None = None
            if dialect.family == "mysql":
                tokens, spatial, index_kind = _mysql_tokens(tokens)
            try:
                statement = parser.parser().parse(tokens, text)[0]
            except sqlglot.errors.ParseError as error:
                raise DesiredSchemaError(
                    f"{source}: statement {position} is not valid {dialect.family} DDL"
                ) from error
            if statement is not None:
                _statement(dialect, reader, parts, statement, spatial, index_kind)
        except (NormalizationError, ViewError, _UnreadableError, FunctionError) as error:
            raise DesiredSchemaError(f"{source}: statement {position}: {error}") from error
        except DesiredSchemaError:
            raise
        except (KeyError, AttributeError, TypeError, ValueError, IndexError) as error:
            raise DesiredSchemaError(
                f"{source}: statement {position} is not understood as schema DDL"
            ) from error
    return parts


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


class _Words:
    """A statement's tokens read one at a time, for the statements sqlglot's tree misreads."""

    # Tokens that are values or punctuation, never a keyword.
    _NOT_WORDS = frozenset(
        {
            TokenType.STRING,
            TokenType.IDENTIFIER,
            TokenType.NUMBER,
            TokenType.DOT,
            TokenType.COMMA,
            TokenType.L_PAREN,
            TokenType.R_PAREN,
            TokenType.DASH,
            TokenType.PLUS,
            TokenType.PARAMETER,
        }
    )

    def __init__(self, dialect: Dialect, tokens: list[Token]) -> None:
        self.dialect = dialect
        self.tokens = tokens
        self.at = 0

    def _word(self, offset: int = 0) -> str | None:
        index = self.at + offset
        if index >= len(self.tokens):
            return None
        token = self.tokens[index]
        if token.token_type in self._NOT_WORDS:
            return None
        return token.text.upper()

    def starts(self, *words: str) -> bool:
        return all(self._word(i) == w for i, w in enumerate(words))

    def take(self, *words: str) -> bool:
        """Consume `words` if they come next."""
        if not self.starts(*words):
            return False
        self.at += len(words)
        return True

    def expect(self, *words: str) -> None:
        if not self.take(*words):
            raise _UnreadableError(f"expected {' '.join(words)}")

    def done(self) -> bool:
        return self.at >= len(self.tokens)

    def peek_type(self) -> TokenType | None:
        return self.tokens[self.at].token_type if not self.done() else None

    def next(self) -> Token:
        if self.done():
            raise _UnreadableError("the statement ends too early")
        token = self.tokens[self.at]
        self.at += 1
        return token

    def name(self) -> str:
        """One identifier, as the catalog stores it."""
        token = self.next()
        if token.token_type is TokenType.IDENTIFIER:
            return token.text
        if token.token_type in self._NOT_WORDS or not token.text.replace("_", "").isalnum():
            raise _UnreadableError("expected a name")
        return token.text.lower() if self.dialect.family == "postgresql" else token.text

    def dotted(self) -> list[str]:
        names = [self.name()]
        while self.peek_type() is TokenType.DOT:
            self.at += 1
            names.append(self.name())
        return names

    def number(self) -> int:
        sign = 1
        if self.peek_type() in {TokenType.DASH, TokenType.PLUS}:
            sign = -1 if self.next().token_type is TokenType.DASH else 1
        token = self.next()
        if token.token_type is not TokenType.NUMBER:
            raise _UnreadableError("expected a number")
        return sign * int(token.text)


def _relation(dialect: Dialect, names: list[str]) -> tuple[str, str]:
    if len(names) == 1:
        return ("" if dialect.family == "mysql" else "public"), names[0]
    if len(names) == 2:
        return ("" if dialect.family == "mysql" else names[0]), names[1]
    raise _UnreadableError("expected [schema.]name")


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


_OWNED_KINDS = frozenset({"TABLE", "VIEW", "MATERIALIZED", "SEQUENCE", "TYPE", "FUNCTION"})


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
        words.at += 1
        inside: list[Token] = []
        depth = 1
        while True:
            token = words.next()
            if token.token_type is TokenType.L_PAREN:
                depth += 1
            elif token.token_type is TokenType.R_PAREN:
                depth -= 1
                if depth == 0:
                    break
            inside.append(token)
        arguments = read_arguments(text, inside)
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
    spatial: dict[str, tuple[str, int | None]] | None = None,
    index_kind: str | None = None,
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
            if not (isinstance(target, exp.DataType) and target.this == exp.DataType.Type.ENUM):
                raise DesiredSchemaError(f"{source}: only enum types are supported")
            schema, name = _table_name(d, node.this)
            values = tuple(str(v.this) for v in target.expressions)
            parts.enums.append(EnumType(schema=schema, name=name, values=values))
            return
        if kind == "TABLE":
            _create_table(d, reader, parts, node, spatial or {})
            return
        if kind == "VIEW":
            _create_view(d, parts, node)
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
                method=index_kind
                or (normalize_index_method(d, str(using.name)) if using is not None else None),
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
    raise DesiredSchemaError(
        f"{source}: unsupported statement ({type(node).__name__}): a desired schema states "
        "structure, not changes or data"
    )


def _create_table(
    d: Dialect,
    reader: _TableReader,
    parts: Parts,
    node: exp.Create,
    spatial: dict[str, tuple[str, int | None]],
) -> None:
    schema_node = node.this
    if not isinstance(schema_node, exp.Schema):
        raise DesiredSchemaError(f"{parts.source}: CREATE TABLE without columns")
    schema, name = _table_name(d, schema_node.this)
    items: list[Attachment] = []
    columns: list[Column] = []
    for element in schema_node.expressions:
        try:
            if isinstance(element, exp.ColumnDef):
                columns.append(reader.column(name, element, items, spatial))
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


def _create_view(d: Dialect, parts: Parts, node: exp.Create) -> None:
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
    view = desired_view(d, schema, name, node.expression, columns)
    parts.views.append(dataclasses.replace(view, materialized=bool(materialized)))
