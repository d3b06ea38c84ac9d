"""Per-dialect normalization of types, defaults and SQL expressions.

Both sides of a comparison pass through these functions: what the catalog reports
(`format_type`, `pg_get_expr`, `COLUMN_TYPE`, `COLUMN_DEFAULT`, ...) and what a person wrote in
DDL or HCL. The result is one canonical spelling per meaning, so that `int4`, `integer` and
`INT` compare equal on PostgreSQL and `int(11)` and `INT` on MySQL.
"""

from __future__ import annotations

import contextlib
import decimal
import functools
import logging
import re
from collections.abc import Iterator

import sqlglot
from sqlglot import TokenType, exp

from ptah_operator.engine.schema.model import Dialect

# sqlglot warns, quoting the statement, when it falls back to an opaque command (`ALTER
# SEQUENCE ... OWNED BY`, MySQL's `GRANT ... TO 'u'@'h'`): SQL text never goes to a log.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


class NormalizationError(ValueError):
    """A type or expression the engine cannot read."""


# What reading a catalog row or a desired statement may raise on content the engine does not
# expect: never to leave the engine as a traceback, but as an error naming the object.
READ_FAILURES = (ArithmeticError, AttributeError, IndexError, KeyError, TypeError, ValueError)


def read_failure(what: str, error: BaseException) -> NormalizationError:
    """The error `reading` raises for `error`, met while reading `what` (for loops too hot
    for a context manager per row: they catch `READ_FAILURES` once and name the row)."""
    if isinstance(error, NormalizationError) or type(error).__module__.startswith("ptah_operator."):
        return NormalizationError(f"{what}: {error}")
    return NormalizationError(f"{what}: the engine cannot read it ({type(error).__name__})")


@contextlib.contextmanager
def reading(what: str) -> Iterator[None]:
    """Name `what` (an object, never its data) in any error raised while reading it: a
    NormalizationError keeps its message behind the name; any other failure of the readers
    (an engine bug, or catalog content the engine does not expect) becomes a
    NormalizationError that names the object and the kind of failure only."""
    try:
        yield
    except NormalizationError as error:
        raise NormalizationError(f"{what}: {error}") from error
    except READ_FAILURES as error:
        if type(error).__module__.startswith("ptah_operator."):
            # The engine's own readers (functions, views) say what they could not read.
            raise NormalizationError(f"{what}: {error}") from error
        raise NormalizationError(
            f"{what}: the engine cannot read it ({type(error).__name__})"
        ) from error


# What an expression field (a default, a check, an index key or predicate, a generated
# column) may never hold: a statement of any kind, a query, or a second statement after a
# `;`. The servers refuse subqueries in all these places anyway; sqlglot, though, reads
# `0; DROP TABLE t` as one `Block`, and the text would reach a plan entry whole.
_STATEMENTS = (
    exp.Query,
    exp.DDL,
    exp.DML,
    exp.Command,
    exp.Block,
    exp.Drop,
    exp.Alter,
    exp.Set,
    exp.Use,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
)


def parse_expression(dialect: Dialect, text: str, what: str) -> exp.Expr:
    """`text` as exactly one SQL expression (no statement, no subquery, no `;`), or a
    NormalizationError naming `what` (never the text)."""
    if "\x00" in text:
        # No server takes a NUL in SQL text; sqlglot reads it into a bare name, which can
        # carry what the statement splitter reads as the start of a quote (`\x00$$`).
        raise NormalizationError(f"{what} holds a NUL character")
    sqlglot_dialect = sqlglot.Dialect.get_or_raise(dialect.sqlglot)
    try:
        tokens = sqlglot_dialect.tokenize(text)
    except sqlglot.errors.SqlglotError:
        raise NormalizationError(f"unreadable {what}") from None
    if any(token.token_type is TokenType.SEMICOLON for token in tokens):
        raise NormalizationError(f"{what} is more than one expression (it holds a `;`)")
    try:
        trees = [t for t in sqlglot_dialect.parser().parse(tokens, text) if t is not None]
    except (sqlglot.errors.SqlglotError, *READ_FAILURES):
        # The compiled parser meets some input with a TypeError (`0?`: an operand missing
        # after a placeholder) rather than a ParseError: unreadable all the same.
        raise NormalizationError(f"unreadable {what}") from None
    if len(trees) != 1:
        raise NormalizationError(f"{what} is not one expression")
    return _one_expression(trees[0], what)


def _one_expression(tree: exp.Expr, what: str) -> exp.Expr:
    for node in tree.walk():
        if isinstance(node, _STATEMENTS):
            raise NormalizationError(f"{what} holds a statement or a subquery")
    return tree


_PG_ALIASES = {
    "int": "integer",
    "int4": "integer",
    "integer": "integer",
    "int8": "bigint",
    "bigint": "bigint",
    "int2": "smallint",
    "smallint": "smallint",
    "varchar": "character varying",
    "character varying": "character varying",
    "char": "character",
    "character": "character",
    "bpchar": "character",
    "bool": "boolean",
    "boolean": "boolean",
    "decimal": "numeric",
    "numeric": "numeric",
    "float8": "double precision",
    "double precision": "double precision",
    "double": "double precision",
    "float": "double precision",
    "float4": "real",
    "real": "real",
    "timestamptz": "timestamp with time zone",
    "timestamp with time zone": "timestamp with time zone",
    "timestamp": "timestamp without time zone",
    "timestamp without time zone": "timestamp without time zone",
    "timetz": "time with time zone",
    "time with time zone": "time with time zone",
    "time": "time without time zone",
    "time without time zone": "time without time zone",
    "varbinary": "bytea",
    "bytea": "bytea",
}

_PG_SERIALS = {
    "serial": "integer",
    "serial4": "integer",
    "bigserial": "bigint",
    "serial8": "bigint",
    "smallserial": "smallint",
    "serial2": "smallint",
}

_MY_INTEGERS = ("tinyint", "smallint", "mediumint", "int", "bigint")
_MY_ALIASES = {
    "integer": "int",
    "bool": "tinyint(1)",
    "boolean": "tinyint(1)",
    "numeric": "decimal",
    "dec": "decimal",
    "fixed": "decimal",
    "double precision": "double",
    "real": "double",
    "character": "char",
    "character varying": "varchar",
}


def _split_type(lowered: str) -> tuple[str, str | None, str]:
    """`base(args) rest` -> (base, args, rest); `rest` keeps trailing words such as `unsigned`."""
    if "(" not in lowered:
        return _squash(lowered), None, ""
    head, _, tail = lowered.partition("(")
    args, _, rest = tail.partition(")")
    return _squash(head), args, _squash(rest)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def serial_base(type_text: str) -> str | None:
    """The integer type behind a PostgreSQL serial pseudo-type, or None."""
    return _PG_SERIALS.get(_squash(type_text).lower())


# What a canonical type may look like: a name (bare lower case or double-quoted, maybe
# qualified), words (`with time zone`, `unsigned`), one argument list, array brackets; on
# MySQL also enum(...)/set(...) of quoted values. A type is spelt into DDL as it is, so the
# shape is checked after normalization, on both sides.
_NAME = r'(?:[a-z_][a-z0-9_$]*|"(?:[^"]|"")+")'
# The words a type may carry after its name: never a constraint (`primary key`,
# `references t`) or a column attribute, which would reach a column definition unmodelled.
_PG_WORD = r"(?:with|without|time|zone|varying|precision|year|month|day|hour|minute|second|to)"
_MY_WORD = r"(?:unsigned|signed|zerofill|precision|varying)"
_PG_TYPE = re.compile(
    rf"{_NAME}(?:\.{_NAME})?(?: {_PG_WORD})*(?:\([a-z0-9_, ]+\))?(?: {_PG_WORD})*(?:\[\])?"
)
_MY_VALUE = r"'(?:[^'\\]|''|\\.)*'"
_MY_TYPE = re.compile(
    rf"[a-z_][a-z0-9_]*(?: {_MY_WORD})*(?:\(\d+(?:,\d+)?\))?(?: {_MY_WORD})*"
    rf"|(?:enum|set)\((?:{_MY_VALUE}(?:,{_MY_VALUE})*)?\)"
)


@functools.lru_cache(maxsize=65536)
def normalize_type(dialect: Dialect, text: str) -> str:
    """The canonical spelling of a column type in `dialect`."""
    if dialect.family == "postgresql":
        result, shape = _normalize_pg_type(text), _PG_TYPE
    else:
        result, shape = _normalize_my_type(text), _MY_TYPE
    if not shape.fullmatch(result):
        raise NormalizationError("unreadable column type")
    return result


_MY_ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a"}


def _mysql_unescape(match: re.Match[str]) -> str:
    text = match.group(0)
    if text == "''":
        return "'"
    return _MY_ESCAPES.get(text[1], text[1])


def _split_enum_args(args: str) -> list[str]:
    """The values of MySQL's enum(...)/set(...), decoded as the server reads its strings
    (`''` and backslash escapes)."""
    values = []
    for match in re.finditer(r"'((?:[^'\\]|''|\\.)*)'", args):
        values.append(re.sub(r"''|\\.", _mysql_unescape, match.group(1)))
    return values


def string_literal(dialect: Dialect, text: str) -> str:
    """`text` as a string literal of `dialect`, as the catalogs spell one: PostgreSQL doubles
    quotes (standard_conforming_strings); MySQL/MariaDB also double a backslash, which would
    otherwise escape the quote after it."""
    if dialect.family == "mysql":
        text = text.replace("\\", "\\\\")
    return "'" + text.replace("'", "''") + "'"


def _normalize_pg_type(text: str) -> str:
    squashed = _squash(text)
    # PostgreSQL keeps no array dimensions or sizes: `integer[3][]` is `integer[]`.
    arrays = 0
    while (bracket := re.search(r"\[\s*\d*\s*\]$", squashed)) is not None:
        arrays = 1
        squashed = squashed[: bracket.start()].rstrip()
    if squashed.lower().endswith(" array"):
        arrays, squashed = 1, squashed[: -len(" array")].rstrip()
    lowered = squashed.lower()
    if '"' in squashed:
        # A quoted user-defined type: keep its case.
        return squashed + "[]" * arrays
    base, args, rest = _split_type(lowered)
    if base in {"timestamp", "time"} and rest in {"with time zone", "without time zone"}:
        base = f"{base} {rest}"
        rest = ""
    canonical = _PG_ALIASES.get(base)
    if canonical is None:
        # User-defined (enum) or a type without aliases: keep the unquoted lowercase name.
        if base.replace('"', "") != base:
            return squashed + "[]" * arrays
        name = base
    else:
        name = canonical
    arg_list = [a.strip() for a in args.split(",")] if args else []
    if name == "character" and not arg_list:
        arg_list = ["1"]
    if name == "double precision" and arg_list:
        # float(p): p <= 24 is real.
        name = "real" if int(arg_list[0]) <= 24 else "double precision"
        arg_list = []
    if name.startswith(("timestamp ", "time ")) and arg_list:
        kind, _, zone = name.partition(" ")
        result = f"{kind}({arg_list[0]}) {zone}"
    elif arg_list:
        result = f"{name}({','.join(arg_list)})"
    else:
        result = name
    if rest:
        result = f"{result} {rest}"
    return result + "[]" * arrays


def _normalize_my_type(text: str) -> str:
    squashed = _squash(text).lower()
    if squashed.startswith(("enum(", "enum (", "set(", "set (")):
        kind = squashed.split("(", 1)[0].strip()
        original = _squash(text)
        inner = original[original.index("(") + 1 : original.rindex(")")]
        values = _split_enum_args(inner)
        quoted = ",".join(string_literal(Dialect.MYSQL, v) for v in values)
        return f"{kind}({quoted})"
    base, args, rest = _split_type(squashed)
    for suffix in ("zerofill", "unsigned", "signed"):
        if args is None and base.endswith(" " + suffix):
            base = base[: -len(suffix) - 1].strip()
            rest = _squash(f"{suffix} {rest}")
    if base == "double" and rest.startswith("precision"):
        rest = rest[len("precision") :].strip()
    if base == "character" and rest.startswith("varying"):
        base, rest = "varchar", rest[len("varying") :].strip()
    name = _MY_ALIASES.get(base, base)
    arg_list = [a.strip() for a in args.split(",")] if args else []
    if name == "tinyint(1)":
        name, arg_list = "tinyint", ["1"]
    if name in _MY_INTEGERS and not (name == "tinyint" and arg_list == ["1"]):
        arg_list = []
    if name == "decimal":
        if not arg_list:
            arg_list = ["10", "0"]
        elif len(arg_list) == 1:
            arg_list.append("0")
    if name in {"char", "binary"} and not arg_list:
        arg_list = ["1"]
    if name in {"datetime", "timestamp", "time"} and arg_list == ["0"]:
        # No fractional digits is the default: the server reports `datetime(0)` as `datetime`.
        arg_list = []
    result = f"{name}({','.join(arg_list)})" if arg_list else name
    return f"{result} {rest}" if rest else result


def is_numeric_type(type_text: str) -> bool:
    base = type_text.split("(", 1)[0].split(" ", 1)[0]
    return base in {
        "integer",
        "bigint",
        "smallint",
        "numeric",
        "real",
        "double",
        "decimal",
        "tinyint",
        "mediumint",
        "int",
        "float",
    } or type_text.startswith("double precision")


def _is_string_literal(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal) and node.is_string


def _literal_like(node: exp.Expr) -> bool:
    return isinstance(node, exp.Literal | exp.Null | exp.Boolean) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal)
    )


_ATOMS = (
    exp.Literal,
    exp.Column,
    exp.Cast,
    exp.Func,
    exp.Null,
    exp.Boolean,
    exp.Paren,
    exp.Identifier,
)
_PREDICATES = (
    exp.EQ,
    exp.NEQ,
    exp.GT,
    exp.GTE,
    exp.LT,
    exp.LTE,
    exp.Is,
    exp.In,
    exp.Like,
    exp.ILike,
    exp.Between,
    exp.Not,
)


# PostgreSQL 15's reserved key words, and those reserved but as a function or type name
# (Appendix C): a column of such a name is quoted wherever an expression names it.
_PG_RESERVED = frozenset(
    """all analyse analyze and any array as asc asymmetric both case cast check collate column
    constraint create current_catalog current_date current_role current_time
    current_timestamp current_user default deferrable desc distinct do else end except
    false fetch for foreign from grant group having in initially intersect into lateral
    leading limit localtime localtimestamp not null offset on only or order placing primary
    references returning select session_user some symmetric table then to trailing true
    union unique user using variadic when where window with authorization binary collation
    concurrently cross current_schema freeze full ilike inner is isnull join left like
    natural notnull outer overlaps right similar tablesample verbose""".split()  # noqa: SIM905
)
# PostgreSQL 15's key words that are not reserved but cannot name a function or type: with
# the reserved ones, what `quote_ident` quotes (it leaves only unreserved key words bare).
_PG_COLUMN_NAME_KEYWORDS = frozenset(
    """between bigint bit boolean char character coalesce dec decimal exists extract float
    greatest grouping inout int integer interval least national nchar none normalize nullif
    numeric out overlay position precision real row setof smallint substring time timestamp
    treat trim values varchar xmlattributes xmlconcat xmlelement xmlexists xmlforest
    xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable""".split()  # noqa: SIM905
)
_PG_BARE = re.compile(r"[a-z_][a-z0-9_$]*")


def pg_quote_ident(name: str) -> str:
    """`name` as PostgreSQL's `quote_ident` spells it (what introspection reports an enum
    type as): bare when it is a plain lower-case name and no key word that needs quotes."""
    if _PG_BARE.fullmatch(name) and name not in _PG_RESERVED | _PG_COLUMN_NAME_KEYWORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")


def _number(text: str) -> exp.Expr:
    if text.startswith("-"):
        return exp.Neg(this=exp.Literal.number(text[1:]))
    return exp.Literal.number(text)


def _quantifier(node: exp.Expr) -> tuple[str, exp.Expr] | None:
    """`ANY (x)` or `ALL (x)` as ("ANY" | "ALL", x); sqlglot reads `ALL (...)` after `<>` as
    a call of a function named ALL."""
    if isinstance(node, exp.Any):
        return "ANY", node.this
    if isinstance(node, exp.All):
        return "ALL", node.this
    if (
        isinstance(node, exp.Anonymous)
        and str(node.this).upper() in {"ANY", "ALL"}
        and len(node.expressions) == 1
    ):
        return str(node.this).upper(), node.expressions[0]
    return None


def _simplify(node: exp.Expr, dialect_family: str) -> exp.Expr:
    """Undo what the catalogs add: literal casts, redundant parentheses, `= ANY (ARRAY[..])`,
    a one-value `IN` kept as `=`, PostgreSQL's `BETWEEN` spelt out and its negative numbers
    as cast strings."""
    if dialect_family == "postgresql" and isinstance(node, exp.Not):
        inner = node.this
        if isinstance(inner, exp.Between):
            # What PostgreSQL keeps of `x NOT BETWEEN a AND b`: `x < a OR x > b`.
            below = exp.LT(this=inner.this.copy(), expression=inner.args["low"].copy())
            above = exp.GT(this=inner.this.copy(), expression=inner.args["high"].copy())
            return exp.Paren(this=exp.Or(this=below, expression=above))
    if isinstance(node, exp.In | exp.Not):
        # What PostgreSQL and MariaDB keep of `x IN (a)`, `x NOT IN (a)`: `x = a`, `x <> a`.
        negated = isinstance(node, exp.Not)
        inner = node.this if negated else node
        values = inner.expressions if isinstance(inner, exp.In) else []
        if len(values) == 1 and not inner.args.get("query"):
            comparison = exp.NEQ if negated else exp.EQ
            return exp.Paren(this=comparison(this=inner.this.copy(), expression=values[0].copy()))
    if dialect_family == "postgresql" and isinstance(node, exp.Between):
        # What PostgreSQL keeps of `x BETWEEN a AND b`: `x >= a AND x <= b`.
        low = exp.GTE(this=node.this.copy(), expression=node.args["low"].copy())
        high = exp.LTE(this=node.this.copy(), expression=node.args["high"].copy())
        return exp.Paren(this=exp.And(this=low, expression=high))
    if (
        isinstance(node, exp.Cast)
        and _is_string_literal(node.this)
        and node.to.is_type(*exp.DataType.NUMERIC_TYPES)
        and _NUMBER.fullmatch(str(node.this.this))
    ):
        # PostgreSQL keeps a negative number as a string cast to the type, `'-5'::integer`.
        return _number(str(node.this.this))
    if (
        dialect_family == "postgresql"
        and isinstance(node, exp.Cast)
        and isinstance(node.this, exp.Column)
        and node.to.this == exp.DataType.Type.TEXT
    ):
        # PostgreSQL spells the implicit varchar -> text cast out in index keys.
        return node.this.copy()
    if (
        dialect_family == "mysql"
        and isinstance(node, exp.Anonymous)
        and str(node.this).lower() == "octet_length"
        and len(node.expressions) == 1
    ):
        # MariaDB stores LENGTH() (bytes) as OCTET_LENGTH().
        return exp.Length(this=node.expressions[0].copy(), binary=True)
    if isinstance(node, exp.Cast):
        inner = node.this
        while isinstance(inner, exp.Paren):
            inner = inner.this
        if _literal_like(inner) or (
            isinstance(inner, exp.Array) and all(_literal_like(e) for e in inner.expressions)
        ):
            unwrapped: exp.Expr = inner.copy()
            return unwrapped
    if (
        dialect_family == "postgresql"
        and isinstance(node, exp.Anonymous)
        and str(node.this).lower() == "nextval"
        and len(node.expressions) == 1
        and _is_string_literal(node.expressions[0])
    ):
        # `nextval('public.s')` is `nextval('s')`, as the catalog prints a sequence on the
        # search path (public's, as unqualified names are read).
        name = str(node.expressions[0].this)
        for prefix in ("public.", '"public".'):
            if name.startswith(prefix):
                return exp.Anonymous(
                    this=node.this, expressions=[exp.Literal.string(name[len(prefix) :])]
                )
    if (
        isinstance(node, exp.EQ | exp.NEQ)
        and isinstance(node.expression, exp.Anonymous)
        and str(node.expression.this).upper() == "SOME"
        and len(node.expression.expressions) == 1
    ):
        # SOME is ANY (sqlglot reads it as a function call).
        node = node.__class__(
            this=node.this.copy(),
            expression=exp.Any(this=exp.Paren(this=node.expression.expressions[0].copy())),
        )
    quantifier = _quantifier(node.expression) if isinstance(node, exp.EQ | exp.NEQ) else None
    if quantifier is not None:
        kind, target = quantifier
        while isinstance(target, exp.Paren):
            target = target.this
        if isinstance(target, exp.Array):
            values = [_simplify(v, dialect_family) for v in target.expressions]
            in_node = exp.In(this=node.this.copy(), expressions=values)
            if isinstance(node, exp.EQ) and kind == "ANY":
                return in_node
            if isinstance(node, exp.NEQ) and kind == "ALL":
                return exp.Not(this=in_node)
    if isinstance(node, exp.Paren):
        inner = node.this
        parent = node.parent
        if isinstance(parent, exp.Any | exp.All):
            # `x = ANY (ARRAY[...])`: the parentheses are the syntax's.
            return node
        if parent is None or isinstance(inner, _ATOMS):
            bare: exp.Expr = inner.copy()
            return bare
        if isinstance(inner, _PREDICATES) and isinstance(parent, exp.And | exp.Or | exp.Not):
            return inner.copy()
        if isinstance(inner, exp.And) and isinstance(parent, exp.Or):
            return inner.copy()
    if isinstance(node, exp.Identifier):
        name = node.this
        if node.quoted and dialect_family == "postgresql" and name in _PG_RESERVED:
            # Unquoted, `"user"` would read as CURRENT_USER, `"order"` not at all.
            return node
        if not node.quoted or re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            return exp.Identifier(this=name.lower() if not node.quoted else name, quoted=False)
    return node


def expression_columns(dialect: Dialect, text: str) -> set[str]:
    """The names of the columns a (canonical) expression reads."""
    tree = parse_expression(dialect, text, "SQL expression")
    return {column.name for column in tree.find_all(exp.Column)}


@functools.lru_cache(maxsize=65536)
def normalize_expression(dialect: Dialect, text: str) -> str:
    """The canonical text of a SQL expression (a check, a predicate, an index key)."""
    return canonical_expression(dialect, parse_expression(dialect, text, "SQL expression"))


def canonical_expression(dialect: Dialect, tree: exp.Expr, what: str = "SQL expression") -> str:
    """The canonical text of one expression. The text is read back after every rendering,
    as one expression again: what comes out is checked like what went in."""
    previous = None
    current = _one_expression(tree, what).copy()
    # Simplification can expose more of itself (a paren inside a cast inside a paren).
    for _ in range(8):
        current = current.transform(lambda n: _simplify(n, dialect.family))
        rendered = current.sql(dialect=dialect.sqlglot)
        if rendered == previous:
            break
        previous = rendered
        current = parse_expression(dialect, rendered, what)
    return current.sql(dialect=dialect.sqlglot)


@functools.lru_cache(maxsize=65536)
def normalize_default(dialect: Dialect, text: str | None, column_type: str) -> str | None:
    """The canonical default of a column of (normalized) `column_type`; None for no default."""
    if text is None:
        return None
    stripped = text.strip()
    if not stripped or stripped.upper() == "NULL":
        return None
    tree = parse_expression(dialect, stripped, "column default")
    if _is_null(tree):
        return None
    rendered = canonical_expression(dialect, tree, "column default")
    tree = parse_expression(dialect, rendered, "column default")
    if _is_null(tree):
        return None
    if (
        _is_string_literal(tree)
        and is_numeric_type(column_type)
        and re.fullmatch(r"-?\d+(\.\d+)?", str(tree.this))
    ):
        return _scaled(dialect, str(tree.this), column_type)
    if (
        isinstance(tree, exp.Literal)
        and not tree.is_string
        and not is_numeric_type(column_type)
        and dialect.family == "mysql"
    ):
        # MariaDB quotes a number default of a string column; a person may not.
        return "'" + str(tree.this) + "'"
    if isinstance(tree, exp.Neg) and isinstance(tree.this, exp.Literal):
        return _scaled(dialect, "-" + str(tree.this.this), column_type)
    if isinstance(tree, exp.Literal) and not tree.is_string and is_numeric_type(column_type):
        return _scaled(dialect, str(tree.this), column_type)
    if dialect.family == "mysql" and column_type == "tinyint(1)" and isinstance(tree, exp.Boolean):
        return "1" if tree.this else "0"
    return tree.sql(dialect=dialect.sqlglot)


def _is_null(tree: exp.Expr) -> bool:
    """NULL, in parentheses or cast to any type: PostgreSQL stores no default for such a
    constant (and MySQL reports none), so it is the same as no default."""
    while isinstance(tree, (exp.Paren, exp.Cast)):
        tree = tree.this
    return isinstance(tree, exp.Null)


def _scaled(dialect: Dialect, number: str, column_type: str) -> str:
    """MySQL reports a decimal default at the column's scale (`0` is `0.00`)."""
    match = re.fullmatch(r"decimal\(\d+,(\d+)\)(?: unsigned)?", column_type)
    if dialect.family != "mysql" or match is None:
        return number
    # MySQL holds up to 65 digits, scale 30: more than decimal's default context (28).
    context = decimal.Context(prec=200)
    try:
        value = decimal.Decimal(number)
        scaled = value.quantize(decimal.Decimal(1).scaleb(-int(match.group(1))), context=context)
        # Positional, as the server reports it: str() writes 9.7E-12 for a small value.
        return format(scaled, "f")
    except decimal.InvalidOperation:
        return number


_ACTIONS = frozenset({"NO ACTION", "RESTRICT", "CASCADE", "SET NULL", "SET DEFAULT"})


def normalize_action(dialect: Dialect, action: str | None) -> str:
    """A foreign-key action; MySQL treats NO ACTION as RESTRICT."""
    value = _squash(action or "NO ACTION").upper()
    if value not in _ACTIONS:
        raise NormalizationError("a foreign-key action is one of " + ", ".join(sorted(_ACTIONS)))
    if dialect.family == "mysql" and value == "NO ACTION":
        return "RESTRICT"
    return value


_QUALIFIED_NAME = re.compile(rf"{_NAME}(?:\.{_NAME})?")
_MYSQL_INDEX_METHODS = frozenset({"btree", "hash", "fulltext", "spatial"})


def normalize_index_method(dialect: Dialect, text: str) -> str | None:
    """An index method (`USING gin`; MySQL's FULLTEXT and SPATIAL kinds): one bare name, None
    for the default (btree). It is spelt into CREATE INDEX as it is, so nothing else passes."""
    method = _squash(text).lower()
    if dialect.family == "mysql":
        if method not in _MYSQL_INDEX_METHODS:
            raise NormalizationError(
                "an index type is one of " + ", ".join(sorted(_MYSQL_INDEX_METHODS))
            )
        # FULLTEXT and SPATIAL are kinds of index; BTREE and HASH are the storage engine's
        # pick (InnoDB reports a HASH index as BTREE).
        return method if method in {"fulltext", "spatial"} else None
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", method):
        raise NormalizationError("an index method is one bare name (btree, hash, gin, gist...)")
    return None if method == "btree" else method


def normalize_qualified_name(text: str, what: str) -> str:
    """A name spelt into SQL as written (an operator class, a function language): a bare or
    double-quoted name, optionally schema-qualified, and nothing more."""
    if not _QUALIFIED_NAME.fullmatch(text):
        raise NormalizationError(f"{what} is a name, optionally schema-qualified")
    return text


def normalize_identifier(dialect: Dialect, name: str) -> str:
    """Unquoted identifiers fold to lower case on PostgreSQL; MySQL column names are caseless."""
    if len(name) >= 2 and name[0] == name[-1] and name[0] in {'"', "`"}:
        return name[1:-1]
    return name.lower()


@functools.lru_cache(maxsize=65536)
def normalize_index_key(dialect: Dialect, text: str) -> str:
    """An index key: a plain column is its bare name, anything else a canonical expression."""
    if re.fullmatch(r"[a-z_][a-z0-9_]*", text):
        return text
    tree = parse_expression(dialect, text, "index key")
    while isinstance(tree, exp.Paren):
        tree = tree.this
    if isinstance(tree, exp.Column) and not tree.table:
        identifier = tree.this
        name = str(identifier.this)
        index_column(name)
        if dialect.family == "postgresql" and not identifier.quoted:
            return name.lower()
        return name
    return canonical_expression(dialect, tree, "index key")


# Operator classes that are the default of every index method and type they serve
# (pg_opclass.opcdefault, PostgreSQL 15): written on the desired side they change nothing,
# and the server does not report them. `inet_ops` is left out: not the default for GiST.
_DEFAULT_OPCLASSES = frozenset(
    (
        "aclitem_ops",
        "array_ops",
        "bit_minmax_ops",
        "bit_ops",
        "bool_ops",
        "box_inclusion_ops",
        "box_ops",
        "bpchar_minmax_ops",
        "bpchar_ops",
        "bytea_minmax_ops",
        "bytea_ops",
        "char_minmax_ops",
        "char_ops",
        "cid_ops",
        "circle_ops",
        "date_minmax_ops",
        "date_ops",
        "enum_ops",
        "float4_minmax_ops",
        "float4_ops",
        "float8_minmax_ops",
        "float8_ops",
        "inet_inclusion_ops",
        "int2_minmax_ops",
        "int2_ops",
        "int4_minmax_ops",
        "int4_ops",
        "int8_minmax_ops",
        "int8_ops",
        "interval_minmax_ops",
        "interval_ops",
        "jsonb_ops",
        "macaddr8_minmax_ops",
        "macaddr8_ops",
        "macaddr_minmax_ops",
        "macaddr_ops",
        "money_ops",
        "multirange_ops",
        "name_minmax_ops",
        "name_ops",
        "numeric_minmax_ops",
        "numeric_ops",
        "oid_minmax_ops",
        "oid_ops",
        "oidvector_ops",
        "pg_lsn_minmax_ops",
        "pg_lsn_ops",
        "point_ops",
        "poly_ops",
        "quad_point_ops",
        "range_inclusion_ops",
        "range_ops",
        "record_ops",
        "text_minmax_ops",
        "text_ops",
        "tid_minmax_ops",
        "tid_ops",
        "time_minmax_ops",
        "time_ops",
        "timestamp_minmax_ops",
        "timestamp_ops",
        "timestamptz_minmax_ops",
        "timestamptz_ops",
        "timetz_minmax_ops",
        "timetz_ops",
        "tsquery_ops",
        "tsvector_ops",
        "uuid_minmax_ops",
        "uuid_ops",
        "varbit_minmax_ops",
        "varbit_ops",
        "xid8_ops",
        "xid_ops",
    )
)


def index_key_options(
    dialect: Dialect, *, desc: bool = False, nulls_first: bool | None = None, opclass: str = ""
) -> str:
    """The canonical options of one index key, "" for the defaults.

    PostgreSQL sorts NULLs last ascending and first descending; only an order that departs
    from that is spelt out. MySQL/MariaDB have no NULLS clause and no operator classes.
    """
    opclass = normalize_qualified_name(opclass.lower(), "an operator class") if opclass else ""
    postgresql = dialect.family == "postgresql"
    parts = [opclass] if postgresql and opclass and opclass not in _DEFAULT_OPCLASSES else []
    if desc:
        parts.append("DESC")
    if postgresql and nulls_first is not None and nulls_first != desc:
        parts.append("NULLS FIRST" if nulls_first else "NULLS LAST")
    return " ".join(parts)


def index_key_options_tuple(options: list[str]) -> tuple[str, ...]:
    """Per-key options as the model keeps them: () when no key has any."""
    return tuple(options) if any(options) else ()


def index_column(name: str) -> str:
    """A column named as an index key. The model keeps a plain key as the bare name, which the
    renderer quotes, and an expression as its canonical text, which it spells as it is; a
    name that would read as an expression (a space, a parenthesis) is refused, never spelt."""
    if not name or not is_plain_column(name):
        raise NormalizationError(
            "an index key names a column whose name is empty or holds a space or a parenthesis"
        )
    return name


def is_plain_column(key: str) -> bool:
    """Whether an index key (as stored in the model) names a column rather than an expression."""
    return "(" not in key and " " not in key


_SEQUENCE_BOUNDS = {
    "smallint": (-32768, 32767),
    "integer": (-2147483648, 2147483647),
    "bigint": (-9223372036854775808, 9223372036854775807),
}


def sequence_type(text: str | None) -> str:
    """The canonical name of a sequence's type (`AS ...`, default bigint)."""
    if text is None:
        return "bigint"
    name = _normalize_pg_type(text)
    if name not in _SEQUENCE_BOUNDS:
        raise NormalizationError("a sequence is smallint, integer or bigint")
    return name


def sequence_options(
    type_name: str,
    *,
    increment: int | None = None,
    min_value: int | None = None,
    max_value: int | None = None,
    start: int | None = None,
) -> tuple[int, int, int, int]:
    """(increment, min, max, start) with PostgreSQL's defaults filled in: an ascending
    sequence runs from 1 to its type's maximum, a descending one from its type's minimum to
    -1, and starts at its minimum (ascending) or maximum (descending)."""
    low, high = _SEQUENCE_BOUNDS[type_name]
    step = 1 if increment is None else increment
    if step == 0:
        raise NormalizationError("a sequence's increment cannot be zero")
    lowest = min_value if min_value is not None else (1 if step > 0 else low)
    highest = max_value if max_value is not None else (high if step > 0 else -1)
    first = start if start is not None else (lowest if step > 0 else highest)
    return step, lowest, highest, first


_TABLE_PRIVILEGES = {
    "postgresql": ("SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"),
    "mysql": (
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "REFERENCES",
        "INDEX",
        "ALTER",
        "CREATE VIEW",
        "SHOW VIEW",
        "TRIGGER",
    ),
}


def table_privileges(dialect: Dialect) -> tuple[str, ...]:
    """What `ALL` on a table means (PostgreSQL 15; MariaDB adds DELETE HISTORY to MySQL's)."""
    privileges = _TABLE_PRIVILEGES[dialect.family]
    if dialect is Dialect.MARIADB:
        return (*privileges, "DELETE HISTORY")
    return privileges


def normalize_privileges(dialect: Dialect, privileges: list[str]) -> tuple[str, ...]:
    """Table privileges in upper case, `ALL [PRIVILEGES]` spelled out, sorted."""
    known = table_privileges(dialect)
    result: set[str] = set()
    for privilege in privileges:
        word = _squash(privilege).upper()
        if word in {"ALL", "ALL PRIVILEGES"}:
            result.update(known)
        elif word in known:
            result.add(word)
        else:
            raise NormalizationError(
                f"a privilege named is not a table privilege on {dialect.value} (one of "
                + ", ".join(known)
                + ")"
            )
    return tuple(sorted(result))


_MYSQL_USER = re.compile(r"[A-Za-z0-9_.$-]{1,80}")
_MYSQL_HOST = re.compile(r"[A-Za-z0-9_.%:-]{1,255}")


def mysql_grantee_parts(grantee: str) -> tuple[str, str | None]:
    """(user, host) of a grantee as `normalize_grantee` spells it; a role has no host."""
    if not grantee.startswith("'"):
        return grantee, None
    user, _, host = grantee.partition("'@'")
    return user[1:], host[:-1]


def normalize_grantee(dialect: Dialect, user: str, host: str | None, *, quoted: bool) -> str:
    """A grantee as introspection reports it.

    PostgreSQL: a role name (unquoted names fold to lower case) or PUBLIC. MySQL/MariaDB: a
    user with its host, `'app'@'%'`; a name without a host is a role, kept bare (the server
    lists a role with an empty host, `'reader'@''`, which introspection reads the same way).
    """
    if dialect.family == "mysql" and not (
        _MYSQL_USER.fullmatch(user) and (not host or _MYSQL_HOST.fullmatch(host))
    ):
        # The server spells grantees back quoted, so a name holding a quote, a backslash or a
        # space could not be compared, and would not be safe to spell.
        raise NormalizationError(
            "a MySQL/MariaDB grantee is a user of letters, digits and _ . $ - (at most 80), "
            "and a host of letters, digits and _ . % : - (at most 255)"
        )
    if "'" in user or "'" in (host or ""):
        raise NormalizationError("a grantee name cannot hold a quote")
    if dialect.family == "postgresql":
        if host is not None:
            raise NormalizationError("a PostgreSQL grantee is a role, without a host")
        if not quoted and user.upper() == "PUBLIC":
            return "PUBLIC"
        return user if quoted else user.lower()
    if not host:
        return user
    return f"'{user}'@'{host}'"


def parse_grantee(dialect: Dialect, text: str) -> str:
    """A grantee written as text (HCL `to`, or as MySQL lists it): `reader`, `PUBLIC`,
    `app@%` or `'app'@'%'`."""
    if dialect.family == "postgresql":
        quoted = len(text) >= 2 and text[0] == text[-1] == '"'
        return normalize_grantee(dialect, text.strip('"') if quoted else text, None, quoted=quoted)
    user, at, host = text.rpartition("@")
    if not at:
        user, host = text, ""
    return normalize_grantee(dialect, user.strip("'`\""), host.strip("'`\""), quoted=True)


_PG_NAME_BYTES = 63


def serial_sequence_name(table: str, column: str) -> str:
    """The name `serial` gives the sequence of `table.column`: `table_column_seq`, the two
    names shortened in turn (the longer first) to fit 63 bytes."""
    first, second = table.encode(), column.encode()
    room = _PG_NAME_BYTES - len("_seq") - 1
    keep_first, keep_second = len(first), len(second)
    while keep_first + keep_second > room:
        if keep_first > keep_second:
            keep_first -= 1
        else:
            keep_second -= 1
    return (
        first[:keep_first].decode(errors="ignore")
        + "_"
        + second[:keep_second].decode(errors="ignore")
        + "_seq"
    )


def is_serial_sequence(table: str, column: str, sequence: str) -> bool:
    """Whether `sequence` has the name `serial` gives the sequence of `table.column`
    (`serial_sequence_name`), maybe with a number after it when that name was taken."""
    base = serial_sequence_name(table, column)
    return sequence == base or (sequence.startswith(base) and sequence[len(base) :].isdigit())


def identity_options(
    column_type: str,
    *,
    start: int | None = None,
    increment: int | None = None,
    min_value: int | None = None,
    max_value: int | None = None,
    cache: int | None = None,
    cycle: bool = False,
) -> tuple[int, int, int, int, int, bool] | None:
    """The options of an identity column's sequence as the model holds them: (start,
    increment, min, max, cache, cycle), None when each is what PostgreSQL gives a sequence of
    the column's type by default (so `AS IDENTITY` and `AS IDENTITY (START WITH 1)` are one)."""
    if column_type not in _SEQUENCE_BOUNDS:
        raise NormalizationError("an identity column is smallint, integer or bigint")
    step, low, high, first = sequence_options(
        column_type, increment=increment, min_value=min_value, max_value=max_value, start=start
    )
    options = (first, step, low, high, 1 if cache is None else cache, cycle)
    default_step, default_low, default_high, default_first = sequence_options(column_type)
    default = (default_first, default_step, default_low, default_high, 1, False)
    return None if options == default else options
