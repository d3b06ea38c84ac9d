"""Random schemas, their mutations and rows fitting them, for the convergence harness.

A small model of its own (`GSchema`: tables of typed columns, keys, indexes, checks, foreign
keys, comments, PostgreSQL enum types), independent of the engine's, rendered as the SQL DDL
a person writes (`GSchema.statements`). Three strategies:

- `schemas(dialect)`: a random schema within what the engine supports;
- `mutated(current)`: a "desired" schema made from it by a few random changes (tables,
  columns, types within and across families, nullability, defaults, comments, indexes,
  uniques, checks, foreign keys, primary keys, enum values);
- `rows_for(current, desired)`: rows for the current schema that the desired one can take
  too: each row fits the current constraints, and its image in the desired schema (surviving
  columns converted to their new type, added columns at their default) fits the desired ones.

`repair` keeps each schema one the server accepts (foreign keys reference a key of the same
types, keys avoid what MariaDB cannot index, checks fit their column's type, ...): a change
that breaks a rule is followed by the change a person would make with it.

What the generator leaves out, and why, is listed in `LEFT_OUT` (the harness documents it).
"""

from __future__ import annotations

import copy
import datetime as dt
import decimal
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import hypothesis.strategies as st

from ptah_operator.engine.schema.model import Dialect

PG = Dialect.POSTGRESQL
MARIA = Dialect.MARIADB

# Enough digits for numeric(1000, s) and MariaDB decimal(65, 30) values.
_CONTEXT = decimal.Context(prec=2100)

LEFT_OUT = {
    "column order": "a column added in the middle of a table is added at its end (PostgreSQL "
    "has no positional ADD COLUMN): new columns are generated at the end only",
    "renames": "the engine plans a rename as a drop and an add: generated as such",
    "type changes without a cast": "PostgreSQL has no cast between some families (integer "
    "and date or timestamp, smallint/bigint/numeric and boolean, one enum type and another, "
    "enum and number or time): the engine's `ALTER COLUMN ... TYPE t USING c::t` fails at "
    "Apply even on an empty table, where drop-and-add would do; such changes are not "
    "generated (see `pg_castable`)",
    "server-chosen names that depend on order": "where two unnamed objects would get the "
    "same name from PostgreSQL (`t_c_idx`, then `t_c_idx1`; `t_c_check`, `t_c_check1`), "
    "which gets which depends on the order they are made in; the engine makes them in its "
    "canonical order, not the file's, so the catalogs differ in names only: such objects "
    "are named (see `_pg_auto_name`); MariaDB likewise names unnamed unique indexes after "
    "their first column and numbers unnamed checks and foreign keys, and the first of two "
    "foreign keys over one first column names the index both use: one is generated",
    "characters beyond U+FFFF in MariaDB definitions": "MariaDB keeps a table's definition "
    "in utf8mb3: an emoji in a default, comment, enum value or check is lost or unreadable; "
    "the engine refuses such a desired schema by name (unit-tested), so the generator puts "
    "them in row values only there",
    "names left to the server": "a desired index or constraint without a name that matches "
    "a named one by content keeps the existing name (the engine's contract: a name counts "
    "where the desired side gives one), where the same DDL run by hand gets the server's "
    "name; the generator keeps the name of what it keeps (see `_keep_names`)",
    "server rules": "what the servers themselves refuse is not generated: MariaDB checks over "
    "a column of a foreign key with ON DELETE CASCADE or SET NULL (errno 1901), two checks "
    "on one column definition, keys over TEXT or beyond 3072 bytes, a SET NULL key over a "
    "NOT NULL column, an unnamed key on a table whose name leaves no room for `_ibfk_<n>`",
    "char_length on PostgreSQL": "the engine writes an expression in sqlglot's spelling, "
    "not the person's: `char_length(c)` goes to the server as `length(c)` (the same "
    "function on text, but pg_dump shows the other name); checks use `length` there",
}

# ---------------------------------------------------------------------------------------------
# The model.


@dataclass
class GType:
    """`kind`: int kinds (tinyint, smallint, int, bigint), numeric, varchar, text, bool, date,
    timestamp, timestamptz (PostgreSQL), enum. `size`: numeric precision, varchar length,
    timestamp fractional digits (None: the type's default); `scale` of a numeric."""

    kind: str
    size: int | None = None
    scale: int = 0
    unsigned: bool = False
    # MariaDB enum('a','b'): its labels. PostgreSQL: the enum type's name.
    labels: tuple[str, ...] = ()
    enum: str | None = None
    # Which spelling of the type to write (int, integer, int4, ...): not part of its meaning.
    spelling: int = field(default=0, compare=False)


@dataclass
class GColumn:
    name: str
    type: GType
    nullable: bool = True
    default: Any = None
    comment: str | None = None
    # Whether `NULL` is written out for a nullable column (a style, not a meaning).
    say_null: bool = field(default=False, compare=False)


@dataclass
class GKey:
    name: str | None
    columns: tuple[str, ...]
    # Written on the column (`c int PRIMARY KEY`, `c int UNIQUE`), where it has one column.
    inline: bool = field(default=False, compare=False)


@dataclass
class GIndex:
    name: str | None
    columns: tuple[str, ...]
    unique: bool = False
    # MariaDB: written in CREATE TABLE (`KEY ix (a)`) rather than CREATE INDEX.
    inline: bool = field(default=False, compare=False)


@dataclass
class GCheck:
    """A check over one column: `op` with its operands (see `check_sql`, `check_holds`)."""

    name: str | None
    column: str
    op: str
    args: tuple[Any, ...]
    # Written on the column (MariaDB: a column-level check, named after the column).
    inline: bool = False


@dataclass
class GForeignKey:
    name: str | None
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    on_delete: str = "NO ACTION"
    # Written in CREATE TABLE (where the referenced table exists by then) or ALTER TABLE.
    inline: bool = field(default=False, compare=False)


@dataclass
class GTable:
    # The order tables were made in: a foreign key references a table made before it (or
    # itself), so that rows can be inserted table after table.
    tid: int
    name: str
    columns: list[GColumn]
    pk: GKey | None = None
    uniques: list[GKey] = field(default_factory=list)
    indexes: list[GIndex] = field(default_factory=list)
    checks: list[GCheck] = field(default_factory=list)
    fks: list[GForeignKey] = field(default_factory=list)
    comment: str | None = None
    # Names of columns dropped by a mutation: an added column takes another name (the same
    # name would be the same column, changed in place).
    retired: set[str] = field(default_factory=set, compare=False)

    def column_names(self) -> set[str]:
        return {c.name for c in self.columns} | self.retired

    def column(self, name: str) -> GColumn | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass
class GSchema:
    dialect: Dialect
    tables: list[GTable] = field(default_factory=list)
    # PostgreSQL enum types: name -> labels.
    enums: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Names given so far (relations, constraints, indexes, types): a mutation takes new ones.
    used: set[str] = field(default_factory=set, compare=False)
    next_tid: int = field(default=0, compare=False)

    def table(self, name: str) -> GTable | None:
        return next((t for t in self.tables if t.name == name), None)

    def statements(self) -> list[str]:
        return _render(self)

    def ddl(self) -> str:
        return "".join(s + ";\n" for s in self.statements())


# ---------------------------------------------------------------------------------------------
# Names.

_RESERVED = ("order", "user", "group", "select", "check", "table", "column", "limit", "default")


def name_limit(dialect: Dialect) -> int:
    """The longest identifier the server keeps (bytes on PostgreSQL, characters on MariaDB)."""
    return 63 if dialect is PG else 64


@st.composite
def _fresh_name(draw: st.DrawFn, used: set[str], prefix: str, dialect: Dialect) -> str:
    shape = draw(st.sampled_from(["short"] * 8 + ["limit", "reserved"]))
    free = [w for w in _RESERVED if w not in used]
    if shape == "reserved" and free:
        name = draw(st.sampled_from(free))
    else:
        number = 1
        while _shaped(f"{prefix}{number}", shape, dialect) in used:
            number += 1
        name = _shaped(f"{prefix}{number}", shape, dialect)
    used.add(name)
    return name


def _shaped(name: str, shape: str, dialect: Dialect) -> str:
    if shape == "limit":
        return (name + "_" + "abcdefghij" * 7)[: name_limit(dialect)]
    return name


def quote(dialect: Dialect, name: str) -> str:
    """An identifier as a person writes it: bare, quoted where it is a reserved word."""
    if name not in _RESERVED:
        return name
    return f'"{name}"' if dialect is PG else f"`{name}`"


# ---------------------------------------------------------------------------------------------
# Types and values.

_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}
_INT_KINDS = {PG: ("smallint", "int", "bigint"), MARIA: ("tinyint", "smallint", "int", "bigint")}
_LABELS = ("a", "b", "c", "d", "x y", "it's")
_SPELLINGS = {
    (PG, "smallint"): ("smallint", "int2"),
    (PG, "int"): ("int", "integer", "int4"),
    (PG, "bigint"): ("bigint", "int8"),
    (PG, "numeric"): ("numeric", "decimal"),
    (PG, "varchar"): ("varchar", "character varying"),
    (PG, "bool"): ("boolean", "bool"),
    (PG, "timestamp"): ("timestamp", "timestamp without time zone"),
    (PG, "timestamptz"): ("timestamptz", "timestamp with time zone"),
    (MARIA, "int"): ("int", "integer"),
    (MARIA, "numeric"): ("decimal", "numeric"),
    (MARIA, "bool"): ("boolean", "bool"),
}


def family(t: GType) -> str:
    if t.kind in _INT_BITS or t.kind == "numeric":
        return "number"
    if t.kind in {"varchar", "text"}:
        return "string"
    if t.kind in {"date", "timestamp", "timestamptz"}:
        return "time"
    return t.kind


def type_sql(dialect: Dialect, t: GType) -> str:
    spellings = _SPELLINGS.get((dialect, t.kind), (t.kind,))
    base = spellings[t.spelling % len(spellings)]
    if t.kind == "enum":
        if dialect is PG:
            return quote(dialect, t.enum or "")
        return "enum(" + ",".join(string_literal(dialect, v) for v in t.labels) + ")"
    if dialect is MARIA and t.kind == "timestamp":
        base = "datetime"
    if t.kind == "numeric" and t.size is not None:
        return f"{base}({t.size},{t.scale})"
    if t.kind == "timestamp" and t.size is not None and " " in base:
        kind, _, zone = base.partition(" ")
        return f"{kind}({t.size}) {zone}"
    if t.kind in {"varchar", "timestamp"} and t.size is not None:
        return f"{base}({t.size})"
    if t.kind in _INT_BITS and t.unsigned:
        return f"{base} unsigned"
    return base


def int_range(t: GType) -> tuple[int, int]:
    bits = _INT_BITS[t.kind]
    if t.unsigned:
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def fraction_digits(dialect: Dialect, t: GType) -> int:
    if t.size is not None:
        return t.size
    return 6 if dialect is PG else 0


def labels_of(schema: GSchema, t: GType) -> tuple[str, ...]:
    return schema.enums.get(t.enum or "", ()) if schema.dialect is PG else t.labels


_LOW_DAY = dt.date(1000, 1, 1)
_HIGH_DAY = dt.date(9999, 12, 31)


def fits(schema: GSchema, t: GType, value: Any) -> bool:
    """Whether `value` (a Python value) is one of the type's values, as the model writes it."""
    if value is None:
        return True
    kind = t.kind
    if kind in _INT_BITS:
        low, high = int_range(t)
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if kind == "bool":
        if schema.dialect is PG:
            return isinstance(value, bool)
        return value in (0, 1) and not isinstance(value, bool)
    if kind == "numeric":
        if not isinstance(value, Decimal):
            return False
        if t.size is None:
            return True
        exponent = value.as_tuple().exponent
        assert isinstance(exponent, int)
        if -exponent > t.scale:
            return False
        return bool(abs(value) < _CONTEXT.power(10, t.size - t.scale))
    if kind in {"varchar", "text"}:
        return isinstance(value, str) and (t.size is None or len(value) <= t.size)
    if kind == "date":
        return type(value) is dt.date
    if kind in {"timestamp", "timestamptz"}:
        if not isinstance(value, dt.datetime):
            return False
        if (value.tzinfo is not None) != (kind == "timestamptz"):
            return False
        digits = fraction_digits(schema.dialect, t)
        return bool(value.microsecond % 10 ** (6 - digits) == 0)
    if kind == "enum":
        return isinstance(value, str) and value in labels_of(schema, t)
    raise AssertionError(kind)


_STRINGS = (
    "",
    "a",
    "A",
    "a ",
    " a",
    "it's",
    "back\\slash",
    "\u00e9",
    "stra\u00dfe",
    "\U0001f600",
    "x y",
    "0",
    "1",
    "42",
    "-7",
    "1.5",
    "2024-02-29",
    "true",
    "false",
    "b",
    "c",
    "d",
)


def values(schema: GSchema, t: GType) -> st.SearchStrategy[Any]:
    """Values of `t`, its limits among them."""
    kind = t.kind
    if kind in _INT_BITS:
        low, high = int_range(t)
        limits = sorted({low, low + 1, -1 if low < 0 else 0, 0, 1, 2, 42, high - 1, high})
        return st.one_of(
            st.sampled_from([v for v in limits if low <= v <= high]), st.integers(low, high)
        )
    if kind == "bool":
        return st.booleans() if schema.dialect is PG else st.sampled_from([0, 1])
    if kind == "numeric":
        if t.size is None:
            return st.decimals(allow_nan=False, allow_infinity=False, places=4).map(lambda d: d + 0)
        step = Decimal(1).scaleb(-t.scale)
        top = _CONTEXT.subtract(_CONTEXT.power(10, t.size), 1).scaleb(-t.scale, _CONTEXT)
        # Negated in `_CONTEXT`: `-top` rounds to the default context's 28 digits, which
        # made -10**65 of -(10**65 - 1), a value decimal(65, 0) refuses.
        edges = [top, _CONTEXT.minus(top), Decimal(0).quantize(step), step, -step]
        if t.size - t.scale >= 2:
            edges.append(Decimal(42).quantize(step, context=_CONTEXT))
        units = st.integers(-(10**t.size) + 1, 10**t.size - 1)
        return st.one_of(
            st.sampled_from(edges), units.map(lambda n: Decimal(n).scaleb(-t.scale, _CONTEXT))
        )
    if kind in {"varchar", "text"}:
        size = t.size if t.size is not None else 1000
        longest = min(size, 300)
        pool = [s for s in _STRINGS if len(s) <= size] + ["x" * longest, "\u00e9" * longest]
        return st.one_of(
            st.sampled_from(pool),
            st.text(st.characters(codec="ascii", categories=["L", "N"]), max_size=min(size, 8)),
        )
    if kind == "date":
        return st.one_of(
            st.sampled_from(
                [_LOW_DAY, dt.date(1970, 1, 1), dt.date(2000, 2, 29), _HIGH_DAY],
            ),
            st.dates(_LOW_DAY, _HIGH_DAY),
        )
    if kind in {"timestamp", "timestamptz"}:
        digits = fraction_digits(schema.dialect, t)
        zone = dt.UTC if kind == "timestamptz" else None

        def at_precision(value: dt.datetime) -> dt.datetime:
            cut = 10 ** (6 - digits)
            return value.replace(microsecond=value.microsecond // cut * cut, tzinfo=zone)

        return st.one_of(
            st.sampled_from(
                [
                    dt.datetime(1000, 1, 1),
                    dt.datetime(2000, 2, 29, 12, 34, 56, 789012),
                    dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
                ]
            ),
            st.datetimes(dt.datetime(1000, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59)),
        ).map(at_precision)
    if kind == "enum":
        return st.sampled_from(labels_of(schema, t))
    raise AssertionError(kind)


def string_literal(dialect: Dialect, text: str) -> str:
    if dialect is MARIA:
        text = text.replace("\\", "\\\\")
    return "'" + text.replace("'", "''") + "'"


def literal(dialect: Dialect, t: GType, value: Any) -> str:
    """`value` as a SQL literal a person writes for a column of type `t`."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if t.kind == "bool" and dialect is MARIA:
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        return "'" + timestamp_text(dialect, t, value) + "'"
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'"
    return string_literal(dialect, str(value))


def timestamp_text(dialect: Dialect, t: GType, value: dt.datetime) -> str:
    """A timestamp as the server prints it: PostgreSQL without trailing zeros in the
    fraction, MariaDB with the column's digits."""
    text = value.replace(tzinfo=None).isoformat(" ")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if dialect is MARIA:
        digits = fraction_digits(dialect, t)
        whole, _, fraction = text.partition(".")
        text = whole + ("." + fraction.ljust(digits, "0") if digits else "")
    if value.tzinfo is not None:
        text += "+00"
    return text


# ---------------------------------------------------------------------------------------------
# Checks over one column.


def check_ops(t: GType) -> list[str]:
    f = family(t)
    if f == "number":
        return ["gt", "ge", "ne", "between"]
    if f == "string":
        return ["length", "ne", "in"]
    if f == "time":
        return ["ge"]
    if f == "enum":
        return ["ne"]
    return []


def check_sql(dialect: Dialect, t: GType, check: GCheck) -> str:
    column = quote(dialect, check.column)
    args = [literal(dialect, t, a) for a in check.args]
    if check.op == "gt":
        return f"{column} > {args[0]}"
    if check.op == "ge":
        return f"{column} >= {args[0]}"
    if check.op == "ne":
        return f"{column} <> {args[0]}"
    if check.op == "between":
        return f"{column} BETWEEN {args[0]} AND {args[1]}"
    if check.op == "length":
        # PostgreSQL: `length`, as the engine writes char_length back (see LEFT_OUT).
        function = "length" if dialect is PG else "char_length"
        return f"{function}({column}) >= {check.args[0]}"
    if check.op == "in":
        return f"{column} IN ({', '.join(args)})"
    raise AssertionError(check.op)


def collation_key(dialect: Dialect, value: Any) -> Any:
    """What equality of strings could be on the server, widened: MariaDB's
    utf8mb4_general_ci ignores case, trailing spaces and accents, and weighs every character
    outside the BMP alike; PostgreSQL (C collation) compares bytes."""
    if dialect is MARIA and isinstance(value, str):
        return "".join(c if c.isascii() else "?" for c in value.rstrip(" ").lower())
    return value


def check_holds(dialect: Dialect, check: GCheck, value: Any) -> bool:
    """Whether a row whose column holds `value` passes the check, on the safe side: what the
    server may read either way fails it."""
    if value is None:
        return True
    op, args = check.op, check.args
    try:
        if op == "gt":
            return bool(value > args[0])
        if op == "ge":
            return bool(value >= args[0])
        if op == "between":
            return bool(args[0] <= value <= args[1])
    except TypeError:
        return False
    if op == "ne":
        if isinstance(value, str) != isinstance(args[0], str):
            return False
        return bool(collation_key(dialect, value) != collation_key(dialect, args[0]))
    if op == "length":
        return isinstance(value, str) and len(value) >= args[0]
    if op == "in":
        return value in args
    raise AssertionError(op)


def check_fits(schema: GSchema, t: GType, check: GCheck) -> bool:
    """Whether the check is one for a column of type `t` (its operands of the type)."""
    if check.op not in check_ops(t):
        return False
    if check.op == "length":
        return True
    return all(fits(schema, t, a) and a is not None for a in check.args)


# ---------------------------------------------------------------------------------------------
# Value conversion between types (what a row holds once its column changes type).


class _NoValue:
    """A value the conversion cannot tell (or refuses): the row cannot hold it."""


NO = _NoValue()


def convert(schema: GSchema, old: GType, new: GType, value: Any) -> Any:
    """The value a column of type `old` holding `value` holds once it is of type `new`; NO
    where the servers refuse the conversion or where this model cannot say what comes out.
    PostgreSQL changes some values without a word (a string cut to a shorter varchar, a
    number rounded to fewer digits): those rows are kept, so that a change the lattice
    wrongly calls lossless shows as changed values. MariaDB (strict) refuses them."""
    if value is None:
        return None
    d = schema.dialect
    before, after = family(old), family(new)
    result: Any = NO
    if old.kind == "bool" and d is PG:
        if new.kind in _INT_BITS:
            result = int(value)
        elif after == "string":
            result = "true" if value else "false"
        elif new.kind == "bool":
            result = value
    elif new.kind == "bool" and d is PG:
        if old.kind in _INT_BITS and value in (0, 1):
            result = bool(value)
        elif before == "string" and value in ("true", "false"):
            result = value == "true"
    elif before == "number" or old.kind == "bool":  # MariaDB's bool is tinyint(1)
        number = Decimal(value)
        if d is PG and new.kind in _INT_BITS:
            # PostgreSQL rounds a numeric to an integer, half away from zero.
            result = int(number.quantize(Decimal(1), rounding=decimal.ROUND_HALF_UP))
        elif new.kind in _INT_BITS or new.kind == "bool":
            result = int(number) if number == int(number) else NO
        elif new.kind == "numeric":
            result = _rounded(number, new) if d is PG else _exactly(number, new)
        elif after == "string":
            result = str(value) if isinstance(value, int) else format(value, "f")
    elif before == "string":
        if after == "string" or after == "enum":
            result = value
        elif after == "number" and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value):
            number = Decimal(value)
            if new.kind in _INT_BITS:
                result = int(number) if number == int(number) else NO
            else:
                result = _rounded(number, new) if d is PG else _exactly(number, new)
        elif new.kind == "date" and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            result = dt.date.fromisoformat(value)
    elif before == "time":
        if old.kind == "date" and new.kind == "timestamp":
            result = dt.datetime.combine(value, dt.time())
        elif old.kind == "timestamp" and new.kind == "date":
            result = value.date() if value.time() == dt.time() else NO
        elif old.kind == new.kind:
            result = value
        elif after == "string" and old.kind == "date":
            result = value.isoformat()
        elif after == "string" and old.kind == "timestamp":
            result = timestamp_text(d, old, value)
    elif before == "enum" and after in {"string", "enum"}:
        result = value
    if d is PG and new.kind == "varchar" and isinstance(result, str) and new.size is not None:
        # `USING c::varchar(n)`, an explicit cast, cuts what is longer.
        result = result[: new.size]
    if result is NO or not fits(schema, new, result):
        return NO
    return result


def _exactly(number: Decimal, t: GType) -> Any:
    """`number` as a value of numeric type `t` (at its scale), NO unless it is exact: the
    servers round (PostgreSQL) or cut (MariaDB) a value with more digits."""
    if t.size is None:
        return number
    at_scale = number.quantize(Decimal(1).scaleb(-t.scale), context=_CONTEXT)
    return at_scale if at_scale == number else NO


def _rounded(number: Decimal, t: GType) -> Decimal:
    """`number` as PostgreSQL stores it in numeric type `t`: rounded to its scale, half away
    from zero (`fits` then tells an overflow, which the server refuses)."""
    if t.size is None:
        return number
    step = Decimal(1).scaleb(-t.scale)
    return number.quantize(step, rounding=decimal.ROUND_HALF_UP, context=_CONTEXT)


def pg_castable(old: GType, new: GType) -> bool:
    """Whether PostgreSQL has a cast from `old` to `new` (what `ALTER COLUMN ... TYPE new
    USING c::new` needs, rows or none)."""
    before, after = family(old), family(new)
    if old == new or before == "string" or after == "string":
        return True  # to and from text, every type has its input and output functions
    if before == after == "number" or before == after == "time":
        return True
    if {old.kind, new.kind} == {"bool", "int"}:
        return True
    return before == after == "enum" and old.enum == new.enum


# ---------------------------------------------------------------------------------------------
# Strategies: types, columns, tables, schemas.

_VARCHAR_SIZES = {PG: (1, 5, 10, 50, 255, 10485760), MARIA: (1, 5, 10, 50, 255, 1000)}
_NUMERIC_SIZES = {PG: (1, 2, 5, 10, 18, 38, 1000), MARIA: (1, 2, 5, 10, 18, 38, 65)}


@st.composite
def types(draw: st.DrawFn, schema: GSchema) -> GType:
    d = schema.dialect
    kinds = [*_INT_KINDS[d], "numeric", "varchar", "text", "bool", "date", "timestamp"]
    if d is PG:
        kinds.append("timestamptz")
        if schema.enums:
            kinds.append("enum")
    else:
        kinds.append("enum")
    kind = draw(st.sampled_from(kinds))
    spelling = draw(st.integers(0, 2))
    if kind in _INT_BITS:
        unsigned = d is MARIA and draw(st.booleans())
        return GType(kind, unsigned=unsigned, spelling=spelling)
    if kind == "numeric":
        if d is PG and draw(st.integers(0, 5)) == 0:
            return GType("numeric", spelling=spelling)
        size = draw(st.sampled_from(_NUMERIC_SIZES[d]))
        scale = draw(st.integers(0, min(size, 30)))
        return GType("numeric", size, scale, spelling=spelling)
    if kind == "varchar":
        return GType("varchar", draw(st.sampled_from(_VARCHAR_SIZES[d])), spelling=spelling)
    if kind == "timestamp":
        return GType("timestamp", draw(st.sampled_from([None, 0, 3, 6])), spelling=spelling)
    if kind == "enum":
        if d is PG:
            return GType("enum", enum=draw(st.sampled_from(sorted(schema.enums))))
        return GType("enum", labels=draw(_labels()))
    return GType(kind, spelling=spelling)


def _labels() -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(_LABELS), min_size=1, max_size=4, unique=True).map(tuple)


_COMMENTS = ("", "plain", "it's", "back\\slash", "\u00fcn\u00efcode", "x" * 1024)


def _comments() -> st.SearchStrategy[str | None]:
    return st.one_of(st.none(), st.none(), st.sampled_from(_COMMENTS))


@st.composite
def columns(draw: st.DrawFn, schema: GSchema, used: set[str]) -> GColumn:
    t = draw(types(schema))
    column = GColumn(
        name=draw(_fresh_name(used, "c", schema.dialect)),
        type=t,
        nullable=draw(st.booleans()),
        comment=draw(_comments()),
        say_null=draw(st.booleans()),
    )
    if draw(st.integers(0, 2)) == 0:
        column.default = draw(values(schema, t))
    return column


@st.composite
def checks(draw: st.DrawFn, schema: GSchema, table: GTable) -> GCheck | None:
    candidates = [c for c in table.columns if check_ops(c.type)]
    if not candidates:
        return None
    column = draw(st.sampled_from(candidates))
    op = draw(st.sampled_from(check_ops(column.type)))
    t = column.type
    args: tuple[Any, ...]
    if op == "between":
        low, high = sorted([draw(values(schema, t)), draw(values(schema, t))])
        args = (low, high)
    elif op == "length":
        args = (draw(st.integers(0, 3)),)
    elif op == "in":
        args = tuple(draw(st.lists(values(schema, t), min_size=1, max_size=3, unique=True)))
    else:
        args = (draw(values(schema, t)),)
    named = draw(st.booleans())
    inline = draw(st.booleans()) and not named
    return GCheck(
        name=draw(_fresh_name(schema.used, "ck", schema.dialect)) if named else None,
        column=column.name,
        op=op,
        args=args,
        inline=inline,
    )


def _maybe_name(draw: st.DrawFn, schema: GSchema, prefix: str, always: bool = False) -> str | None:
    if always or draw(st.integers(0, 2)) > 0:
        return draw(_fresh_name(schema.used, prefix, schema.dialect))
    return None


def _column_sets(table: GTable, most: int = 2) -> st.SearchStrategy[tuple[str, ...]]:
    names = [c.name for c in table.columns]
    most = min(most, len(names))
    return st.lists(st.sampled_from(names), min_size=1, max_size=most, unique=True).map(tuple)


@st.composite
def foreign_keys(draw: st.DrawFn, schema: GSchema, table: GTable) -> GForeignKey | None:
    """A key to a table made before (or to itself) that has a primary key or unique: its
    columns are new columns of the referenced types."""
    targets = [
        (t, key)
        for t in schema.tables
        if t.tid <= table.tid
        for key in ([t.pk] if t.pk else []) + t.uniques
        if fk_target_ok(schema, t, key.columns)
    ]
    if not targets:
        return None
    target, key = draw(st.sampled_from(targets))
    nullable = draw(st.booleans())
    names: list[str] = []
    used = table.column_names()
    for ref in key.columns:
        ref_column = target.column(ref)
        assert ref_column is not None
        column = GColumn(
            name=draw(_fresh_name(used, "f", schema.dialect)),
            type=copy.deepcopy(ref_column.type),
            nullable=nullable,
        )
        table.columns.append(column)
        names.append(column.name)
    actions = ["NO ACTION", "RESTRICT", "CASCADE"] + (["SET NULL"] if nullable else [])
    return GForeignKey(
        name=_maybe_name(draw, schema, "fk"),
        columns=tuple(names),
        ref_table=target.name,
        ref_columns=key.columns,
        on_delete=draw(st.sampled_from(actions)),
        inline=draw(st.booleans()),
    )


@st.composite
def tables(draw: st.DrawFn, schema: GSchema) -> GTable:
    used: set[str] = set()
    table = GTable(
        tid=schema.next_tid,
        name=draw(_fresh_name(schema.used, "t", schema.dialect)),
        columns=[draw(columns(schema, used)) for _ in range(draw(st.integers(1, 5)))],
        comment=draw(_comments()),
    )
    schema.next_tid += 1
    if draw(st.integers(0, 3)) > 0:
        pk_columns = draw(_column_sets(table))
        table.pk = GKey(
            _maybe_name(draw, schema, "pk") if schema.dialect is PG else None,
            pk_columns,
            inline=len(pk_columns) == 1 and draw(st.booleans()),
        )
    for _ in range(draw(st.integers(0, 2))):
        columns_ = draw(_column_sets(table))
        table.uniques.append(
            GKey(
                _maybe_name(draw, schema, "uq"),
                columns_,
                inline=len(columns_) == 1 and draw(st.booleans()),
            )
        )
    for _ in range(draw(st.integers(0, 2))):
        table.indexes.append(
            GIndex(
                _maybe_name(draw, schema, "ix", always=schema.dialect is MARIA),
                draw(_column_sets(table, 3)),
                unique=draw(st.booleans()),
                inline=draw(st.booleans()),
            )
        )
    for _ in range(draw(st.integers(0, 2))):
        check = draw(checks(schema, table))
        if check is not None:
            table.checks.append(check)
    schema.tables.append(table)
    for _ in range(draw(st.integers(0, 2))):
        fk = draw(foreign_keys(schema, table))
        if fk is not None:
            table.fks.append(fk)
    return table


@st.composite
def schemas(draw: st.DrawFn, dialect: Dialect) -> GSchema:
    schema = GSchema(dialect)
    if dialect is PG:
        for _ in range(draw(st.integers(0, 2))):
            schema.enums[draw(_fresh_name(schema.used, "e", dialect))] = draw(_labels())
    for _ in range(draw(st.integers(1, 4))):
        draw(tables(schema))
    repair(schema)
    return schema


# ---------------------------------------------------------------------------------------------
# Repair: what the servers require of a schema.


def key_bytes(t: GType) -> int | None:
    """MariaDB: the bytes a key part of this type takes (utf8mb4); None for text."""
    if t.kind == "text":
        return None
    if t.kind == "varchar":
        return 4 * (t.size or 0)
    if t.kind == "enum":
        return 2
    return 8 if t.kind != "numeric" else 30


def indexable(schema: GSchema, table: GTable, columns: Iterable[str]) -> bool:
    """Whether a plain index, a primary key or a key a foreign key references can be made on
    these columns: MariaDB takes no TEXT without a prefix and at most 3072 bytes of key."""
    if schema.dialect is PG:
        return True
    total = 0
    for name in columns:
        column = table.column(name)
        assert column is not None
        size = key_bytes(column.type)
        if size is None:
            return False
        total += size
    return total <= 3072


def fk_target_ok(schema: GSchema, table: GTable, columns: tuple[str, ...]) -> bool:
    return all(table.column(c) is not None for c in columns) and indexable(schema, table, columns)


def repair(schema: GSchema) -> None:
    d = schema.dialect
    for _ in range(6):  # foreign keys carry types along their chains
        changed = False
        for table in schema.tables:
            for fk in list(table.fks):
                target = schema.table(fk.ref_table)
                ok = (
                    target is not None
                    and target.tid <= table.tid
                    and all(table.column(c) is not None for c in fk.columns)
                    and any(
                        key.columns == fk.ref_columns
                        for key in ([target.pk] if target.pk else []) + target.uniques
                    )
                    and fk_target_ok(schema, target, fk.ref_columns)
                    and len(set(fk.columns)) == len(fk.columns)
                )
                if not ok or target is None:
                    table.fks.remove(fk)
                    changed = True
                    continue
                for name, ref in zip(fk.columns, fk.ref_columns, strict=True):
                    column, ref_column = table.column(name), target.column(ref)
                    assert column is not None
                    assert ref_column is not None
                    if column.type != ref_column.type:
                        column.type = copy.deepcopy(ref_column.type)
                        changed = True
        if not changed:
            break
    for table in schema.tables:
        # A column in two keys to different types cannot follow both: its second key goes.
        table.fks = [
            fk
            for fk in table.fks
            if all(
                (column := table.column(name)) is not None
                and (target := schema.table(fk.ref_table)) is not None
                and (ref_column := target.column(ref)) is not None
                and column.type == ref_column.type
                for name, ref in zip(fk.columns, fk.ref_columns, strict=True)
            )
        ]
    for table in schema.tables:
        names = {c.name for c in table.columns}
        if d is PG:
            for column in table.columns:
                if column.type.kind == "enum" and column.type.enum not in schema.enums:
                    column.type = GType("text")
        if table.pk is not None and not (
            set(table.pk.columns) <= names and indexable(schema, table, table.pk.columns)
        ):
            table.pk = None
        for column in table.columns:
            if table.pk is not None and column.name in table.pk.columns:
                column.nullable = False
            if not fits(schema, column.type, column.default) or (
                d is MARIA and _beyond_the_bmp(column.default)
            ):
                column.default = None
        seen: set[tuple[str, ...]] = {table.pk.columns} if table.pk else set()
        uniques = []
        for key in table.uniques:
            if set(key.columns) <= names and key.columns not in seen:
                seen.add(key.columns)
                uniques.append(key)
        table.uniques = uniques
        indexes = []
        seen_index: set[tuple[tuple[str, ...], bool]] = set()
        for index in table.indexes:
            mark = (index.columns, index.unique)
            if not set(index.columns) <= names or mark in seen_index:
                continue
            if d is MARIA and index.unique and index.columns in seen:
                continue  # the same unique index as a unique constraint
            if d is MARIA and not indexable(schema, table, index.columns) and not index.unique:
                continue
            seen_index.add(mark)
            indexes.append(index)
        table.indexes = indexes
        kept_checks = []
        for check in table.checks:
            column = table.column(check.column)
            if column is not None and check_fits(schema, column.type, check):
                if d is MARIA and any(_beyond_the_bmp(a) for a in check.args):
                    continue
                kept_checks.append(check)
        table.checks = kept_checks
        if d is MARIA:
            # MariaDB refuses a check over a column a foreign key changes itself (errno 1901).
            acting = {
                c for f in table.fks if f.on_delete in {"CASCADE", "SET NULL"} for c in f.columns
            }
            table.checks = [c for c in table.checks if c.column not in acting]
            # A MariaDB column definition takes one CHECK.
            inline: set[str] = set()
            for check in table.checks:
                if check.inline and check.column in inline:
                    check.inline = False
                inline |= {check.column} if check.inline else set()
        if d is PG:
            _name_order_dependent(schema, table)
        else:
            _name_order_dependent_mariadb(schema, table)
        for fk in table.fks:
            if fk.on_delete == "SET NULL" and not all(
                (c := table.column(n)) is not None and c.nullable for n in fk.columns
            ):
                fk.on_delete = "CASCADE"
            if d is MARIA and fk.name is None and len(table.name) > 50:
                # MariaDB names it `<table>_ibfk_<n>`, which must fit 64 characters.
                fk.name = _next_name(schema, "fk")


def _pg_auto_name(table: str, columns: tuple[str, ...], label: str) -> str:
    """The name PostgreSQL gives an unnamed index or constraint (`makeObjectName`): table,
    columns and label joined by `_`, the longer of the first two cut first to fit 63 bytes."""
    name2 = "_".join(columns)[:63]
    available = 63 - len(label) - 1 - (1 if name2 else 0)
    keep1, keep2 = len(table), len(name2)
    while keep1 + keep2 > available:
        if keep1 > keep2:
            keep1 -= 1
        else:
            keep2 -= 1
    return table[:keep1] + ("_" + name2[:keep2] if name2 else "") + "_" + label


def _name_order_dependent(schema: GSchema, table: GTable) -> None:
    """Name each unnamed index or constraint that would get the name another unnamed one
    gets (PostgreSQL then numbers the second: which is which depends on order)."""
    seen: set[str] = set()
    if table.pk is not None and table.pk.name is None:
        seen.add(_pg_auto_name(table.name, (), "pkey"))
    items: list[tuple[Any, tuple[str, ...], str]] = [(k, k.columns, "key") for k in table.uniques]
    items += [(i, i.columns, "idx") for i in table.indexes]
    items += [(c, (c.column,), "check") for c in table.checks]
    items += [(f, f.columns, "fkey") for f in table.fks]
    for item, columns, label in items:
        if item.name is not None:
            continue
        auto = _pg_auto_name(table.name, columns, label)
        if auto in seen:
            item.name = _next_name(schema, label[:2])
            if isinstance(item, GCheck):
                item.inline = False
        seen.add(auto)


def _beyond_the_bmp(value: Any) -> bool:
    return isinstance(value, str) and any(ord(c) > 0xFFFF for c in value)


def _name_order_dependent_mariadb(schema: GSchema, table: GTable) -> None:
    """MariaDB names an unnamed unique index after its first column (`c1`, then `c1_2`), an
    unnamed check CONSTRAINT_<n> and an unnamed foreign key <table>_ibfk_<n>, by the order
    they are made in: all but one of each such group are named."""
    taken = {i.name for i in table.indexes if i.name} | {k.name for k in table.uniques if k.name}
    firsts: set[str] = set()
    for key in table.uniques:
        if key.name is None and (key.columns[0] in firsts or key.columns[0] in taken):
            key.name = _next_name(schema, "uq")
            key.inline = False
        elif key.name is None:
            firsts.add(key.columns[0])
    table_checks = [c for c in table.checks if c.name is None and not c.inline]
    for check in table_checks[1:]:
        check.name = _next_name(schema, "ck")
    for fk in [f for f in table.fks if f.name is None][1:]:
        fk.name = _next_name(schema, "fk")
    # A foreign key makes an index named after itself (or, unnamed, after its first column)
    # unless one over its columns exists: of two keys over the same first column, the one
    # made first names the index both use. One key per first column is kept.
    firsts_fk: set[str] = set()
    kept = []
    for fk in table.fks:
        if fk.columns[0] not in firsts_fk:
            kept.append(fk)
        firsts_fk.add(fk.columns[0])
    table.fks = kept


def _next_name(schema: GSchema, prefix: str) -> str:
    number = 1
    while f"{prefix}{number}" in schema.used:
        number += 1
    schema.used.add(f"{prefix}{number}")
    return f"{prefix}{number}"


# ---------------------------------------------------------------------------------------------
# Mutations: current -> desired.


def _any_table(draw: st.DrawFn, schema: GSchema) -> GTable | None:
    return draw(st.sampled_from(schema.tables)) if schema.tables else None


def _any_column(draw: st.DrawFn, schema: GSchema) -> tuple[GTable, GColumn] | None:
    table = _any_table(draw, schema)
    if table is None:
        return None
    return table, draw(st.sampled_from(table.columns))


@st.composite
def _near_type(draw: st.DrawFn, schema: GSchema, t: GType) -> GType:
    """A type of the same family: wider or narrower, another spelling."""
    d = schema.dialect
    new = copy.deepcopy(t)
    new.spelling = draw(st.integers(0, 2))
    if t.kind in _INT_BITS:
        new.kind = draw(st.sampled_from(_INT_KINDS[d]))
        if d is MARIA:
            new.unsigned = draw(st.booleans())
    elif t.kind == "numeric":
        size = draw(st.sampled_from(_NUMERIC_SIZES[d]))
        new.size, new.scale = size, draw(st.integers(0, min(size, 30)))
    elif t.kind in {"varchar", "text"}:
        if draw(st.booleans()):
            new.kind, new.size = "text", None
        else:
            new.kind, new.size = "varchar", draw(st.sampled_from(_VARCHAR_SIZES[d]))
    elif t.kind in {"timestamp", "date", "timestamptz"}:
        new.kind = draw(
            st.sampled_from(["date", "timestamp"] + (["timestamptz"] if d is PG else []))
        )
        new.size = draw(st.sampled_from([None, 0, 3, 6])) if new.kind != "date" else None
    elif t.kind == "enum" and d is MARIA:
        new.labels = draw(_relabel(t.labels))
    return new


@st.composite
def _relabel(draw: st.DrawFn, labels: tuple[str, ...]) -> tuple[str, ...]:
    """Enum labels changed: one added (anywhere), removed, or the order changed."""
    how = draw(st.sampled_from(["add", "remove", "reorder"]))
    result = list(labels)
    if how == "add":
        free = [v for v in _LABELS if v not in result]
        if free:
            result.insert(draw(st.integers(0, len(result))), draw(st.sampled_from(free)))
    elif how == "remove" and len(result) > 1:
        result.pop(draw(st.integers(0, len(result) - 1)))
    else:
        result = draw(st.permutations(result))
    return tuple(result)


def _op_add_table(draw: st.DrawFn, s: GSchema) -> None:
    draw(tables(s))


def _op_drop_table(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and len(s.tables) > 1:
        s.tables.remove(table)


def _op_add_column(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None:
        table.columns.append(draw(columns(s, table.column_names())))


def _op_drop_column(draw: st.DrawFn, s: GSchema) -> None:
    found = _any_column(draw, s)
    if found is not None and len(found[0].columns) > 1:
        found[0].columns.remove(found[1])
        found[0].retired.add(found[1].name)
        _forget_column(s, found[0], found[1].name)


def _forget_column(s: GSchema, table: GTable, name: str) -> None:
    if table.pk is not None and name in table.pk.columns:
        table.pk = None
    table.uniques = [k for k in table.uniques if name not in k.columns]
    table.indexes = [i for i in table.indexes if name not in i.columns]
    table.checks = [c for c in table.checks if c.column != name]
    table.fks = [f for f in table.fks if name not in f.columns]
    for other in s.tables:
        other.fks = [
            f for f in other.fks if not (f.ref_table == table.name and name in f.ref_columns)
        ]


def _op_change_type(draw: st.DrawFn, s: GSchema) -> None:
    found = _any_column(draw, s)
    if found is None:
        return
    table, column = found
    if draw(st.booleans()):
        column.type = draw(_near_type(s, column.type))
    else:
        column.type = draw(types(s))
    # A key or a type one references: the referencing columns follow (see `repair`); a
    # referencing column changed alone makes its key go.
    for fk in table.fks:
        if column.name in fk.columns:
            table.fks.remove(fk)
            break


def _op_nullability(draw: st.DrawFn, s: GSchema) -> None:
    found = _any_column(draw, s)
    if found is not None:
        found[1].nullable = not found[1].nullable


def _op_default(draw: st.DrawFn, s: GSchema) -> None:
    found = _any_column(draw, s)
    if found is not None:
        column = found[1]
        column.default = draw(st.one_of(st.none(), values(s, column.type)))


def _op_column_comment(draw: st.DrawFn, s: GSchema) -> None:
    found = _any_column(draw, s)
    if found is not None:
        found[1].comment = draw(_comments())


def _op_table_comment(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None:
        table.comment = draw(_comments())


def _op_add_index(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None:
        table.indexes.append(
            GIndex(
                _maybe_name(draw, s, "ix", always=s.dialect is MARIA),
                draw(_column_sets(table, 3)),
                unique=draw(st.booleans()),
                inline=draw(st.booleans()),
            )
        )


def _op_drop_index(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and table.indexes:
        table.indexes.pop(draw(st.integers(0, len(table.indexes) - 1)))


def _op_add_unique(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None:
        table.uniques.append(GKey(_maybe_name(draw, s, "uq"), draw(_column_sets(table))))


def _op_drop_unique(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and table.uniques:
        table.uniques.pop(draw(st.integers(0, len(table.uniques) - 1)))


def _op_add_check(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None:
        check = draw(checks(s, table))
        if check is not None:
            table.checks.append(check)


def _op_drop_check(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and table.checks:
        table.checks.pop(draw(st.integers(0, len(table.checks) - 1)))


def _op_add_fk(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is None:
        return
    if draw(st.booleans()):
        fk = draw(foreign_keys(s, table))
        if fk is not None:
            table.fks.append(fk)
        return
    # A key over existing columns (their types follow the referenced ones, see `repair`).
    targets = [
        (t, key)
        for t in s.tables
        if t.tid <= table.tid
        for key in ([t.pk] if t.pk else []) + t.uniques
        if len(key.columns) <= len(table.columns)
    ]
    if not targets:
        return
    target, key = draw(st.sampled_from(targets))
    names = [c.name for c in table.columns]
    chosen = draw(st.permutations(names))[: len(key.columns)]
    table.fks.append(
        GForeignKey(_maybe_name(draw, s, "fk"), tuple(chosen), target.name, key.columns)
    )


def _op_drop_fk(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and table.fks:
        table.fks.pop(draw(st.integers(0, len(table.fks) - 1)))


def _op_fk_action(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is not None and table.fks:
        fk = draw(st.sampled_from(table.fks))
        fk.on_delete = draw(st.sampled_from(["NO ACTION", "RESTRICT", "CASCADE", "SET NULL"]))


def _op_primary_key(draw: st.DrawFn, s: GSchema) -> None:
    table = _any_table(draw, s)
    if table is None:
        return
    if table.pk is not None and draw(st.booleans()):
        table.pk = None
    else:
        table.pk = GKey(
            _maybe_name(draw, s, "pk") if s.dialect is PG else None, draw(_column_sets(table))
        )


def _op_enum(draw: st.DrawFn, s: GSchema) -> None:
    if s.dialect is MARIA:
        found = _any_column(draw, s)
        if found is not None and found[1].type.kind == "enum":
            found[1].type.labels = draw(_relabel(found[1].type.labels))
        return
    how = draw(st.sampled_from(["relabel", "new", "drop"]))
    if how == "new" or not s.enums:
        name = draw(_fresh_name(s.used, "e", s.dialect))
        s.enums[name] = draw(_labels())
        table = _any_table(draw, s)
        if table is not None and draw(st.booleans()):
            used = table.column_names()
            table.columns.append(
                GColumn(draw(_fresh_name(used, "c", s.dialect)), GType("enum", enum=name))
            )
        return
    name = draw(st.sampled_from(sorted(s.enums)))
    if how == "relabel":
        s.enums[name] = draw(_relabel(s.enums[name]))
    elif not any(c.type.enum == name for t in s.tables for c in t.columns):
        del s.enums[name]


_OPS: list[Callable[[st.DrawFn, GSchema], None]] = [
    _op_add_table,
    _op_drop_table,
    _op_add_column,
    _op_drop_column,
    _op_change_type,
    _op_change_type,
    _op_change_type,
    _op_change_type,
    _op_nullability,
    _op_nullability,
    _op_default,
    _op_default,
    _op_column_comment,
    _op_table_comment,
    _op_add_index,
    _op_drop_index,
    _op_add_unique,
    _op_drop_unique,
    _op_add_check,
    _op_drop_check,
    _op_add_fk,
    _op_drop_fk,
    _op_fk_action,
    _op_primary_key,
    _op_enum,
]


@st.composite
def mutated(draw: st.DrawFn, current: GSchema) -> GSchema:
    desired = copy.deepcopy(current)
    for _ in range(draw(st.integers(1, 7))):
        op = draw(st.sampled_from(_OPS))
        op(draw, desired)
    repair(desired)
    _keep_names(current, desired)
    if desired.dialect is PG:
        for _ in range(4):
            if not _uncast(current, desired):
                break
            repair(desired)
        assert not _uncast(current, desired), "a type change without a cast is left"
    return desired


def _content(dialect: Dialect, item: Any) -> tuple[Any, ...]:
    """What an index or constraint is, its name aside (on MariaDB a unique constraint is a
    unique index)."""
    if isinstance(item, GKey):
        return ("unique" if dialect is MARIA else "unique constraint", item.columns)
    if isinstance(item, GIndex):
        return ("unique" if item.unique else "index", item.columns)
    if isinstance(item, GCheck):
        return ("check", item.column, item.op, item.args)
    assert isinstance(item, GForeignKey)
    return ("fk", item.columns, item.ref_table, item.ref_columns, item.on_delete)


def _keep_names(current: GSchema, desired: GSchema) -> None:
    """An unnamed desired index or constraint that is a named current one, by content, takes
    its name: the engine keeps an object whose name the desired side leaves to the server
    (see LEFT_OUT), and a person who keeps an object keeps its name."""
    d = desired.dialect
    for table in desired.tables:
        old = current.table(table.name)
        if old is None:
            continue
        named: dict[tuple[Any, ...], str] = {}
        olds: list[Any] = [*old.uniques, *old.indexes, *old.checks, *old.fks]
        news: list[Any] = [*table.uniques, *table.indexes, *table.checks, *table.fks]
        for item in olds:
            if item.name is not None:
                named.setdefault(_content(d, item), item.name)
        taken = {i.name for i in news}
        for item in news:
            name = named.get(_content(d, item))
            if item.name is None and name is not None and name not in taken:
                item.name = name
                taken.add(name)
                if isinstance(item, GCheck | GKey):
                    item.inline = False
        pk, old_pk = table.pk, old.pk
        same_pk = pk is not None and old_pk is not None and pk.columns == old_pk.columns
        if same_pk and pk is not None and old_pk is not None and pk.name is None:
            pk.name = old_pk.name
            pk.inline = False


def _uncast(current: GSchema, desired: GSchema) -> bool:
    """Undo each type change PostgreSQL has no cast for (with the keys that carried it, see
    `repair`); whether there was one."""
    found = False
    for table in desired.tables:
        old = current.table(table.name)
        for column in table.columns:
            before = old.column(column.name) if old is not None else None
            if before is None or pg_castable(before.type, column.type):
                continue
            found = True
            column.type = copy.deepcopy(before.type)
            column.default = (
                None if not fits(desired, column.type, column.default) else column.default
            )
            table.fks = [f for f in table.fks if column.name not in f.columns]
    return found


# ---------------------------------------------------------------------------------------------
# Rows.

Row = dict[str, Any]


def _image(current: GSchema, desired: GSchema, table: GTable, row: Row) -> Row | None:
    """The row as the desired schema holds it (None when a value cannot be converted)."""
    wanted = desired.table(table.name)
    if wanted is None:
        return None
    image: Row = {}
    for column in wanted.columns:
        before = table.column(column.name)
        if before is None:
            image[column.name] = column.default
            continue
        value = convert(desired, before.type, column.type, row[column.name])
        if value is NO:
            return None
        image[column.name] = value
    return image


def _keys(table: GTable) -> list[tuple[str, ...]]:
    keys = [table.pk.columns] if table.pk else []
    keys += [k.columns for k in table.uniques]
    keys += [i.columns for i in table.indexes if i.unique]
    return keys


def _row_ok(
    schema: GSchema, table: GTable, row: Row, earlier: list[Row], parents: dict[str, list[Row]]
) -> bool:
    """Whether `row` fits `table` of `schema`, after the rows `earlier` (and the rows of the
    tables it references, `parents`)."""
    d = schema.dialect
    for column in table.columns:
        if row[column.name] is None and not column.nullable:
            return False
    for check in table.checks:
        if not check_holds(d, check, row[check.column]):
            return False
    for key in _keys(table):
        values_ = tuple(row[c] for c in key)
        if any(v is None for v in values_):
            continue
        mine = tuple(collation_key(d, v) for v in values_)
        for other in earlier:
            if tuple(collation_key(d, other[c]) for c in key) == mine:
                return False
    for fk in table.fks:
        values_ = tuple(row[c] for c in fk.columns)
        if any(v is None for v in values_):
            continue
        referenced = (
            [*earlier, row] if fk.ref_table == table.name else parents.get(fk.ref_table, [])
        )
        if not any(tuple(r[c] for c in fk.ref_columns) == values_ for r in referenced):
            return False
    return True


def _column_ok(
    current: GSchema, desired: GSchema, table: GTable, column: GColumn, value: Any
) -> bool:
    """Whether `value` fits the column on both sides, as far as the column alone decides:
    nullability, its checks, and its conversion to the desired type."""
    d = current.dialect
    if value is None and not column.nullable:
        return False
    if not all(check_holds(d, c, value) for c in table.checks if c.column == column.name):
        return False
    wanted = desired.table(table.name)
    after = wanted.column(column.name) if wanted is not None else None
    if wanted is None or after is None:
        return True
    image = convert(desired, column.type, after.type, value)
    if image is NO or (image is None and not after.nullable):
        return False
    return all(check_holds(d, c, image) for c in wanted.checks if c.column == column.name)


def _draw_row(
    draw: st.DrawFn,
    current: GSchema,
    desired: GSchema,
    table: GTable,
    kept: list[Row],
    result: dict[str, list[Row]],
) -> Row:
    row: Row = {}
    for fk in table.fks:
        parents = kept if fk.ref_table == table.name else result.get(fk.ref_table, [])
        if parents and draw(st.integers(0, 7)) > 0:
            parent = draw(st.sampled_from(parents))
            for name, ref in zip(fk.columns, fk.ref_columns, strict=True):
                row.setdefault(name, parent[ref])
    for column in table.columns:
        if column.name in row and _column_ok(current, desired, table, column, row[column.name]):
            continue
        row[column.name] = None
        for _ in range(4):  # a value both sides take, else NULL
            if column.nullable and draw(st.integers(0, 5)) == 0:
                break
            value = draw(values(current, column.type))
            if _column_ok(current, desired, table, column, value):
                row[column.name] = value
                break
    for fk in table.fks:
        # A row may reference itself (both servers check the key once the row is in).
        if fk.ref_table == table.name and draw(st.booleans()):
            own = {name: row[ref] for name, ref in zip(fk.columns, fk.ref_columns, strict=True)}
            if all(
                _column_ok(current, desired, table, c, own[c.name])
                for c in table.columns
                if c.name in own
            ):
                row.update(own)
    return row


@st.composite
def rows_for(draw: st.DrawFn, current: GSchema, desired: GSchema) -> dict[str, list[Row]]:
    """Rows per current table, in table order (each references only rows before it)."""
    result: dict[str, list[Row]] = {}
    images: dict[str, list[Row]] = {}
    for table in sorted(current.tables, key=lambda t: t.tid):
        kept: list[Row] = []
        kept_images: list[Row] = []
        wanted = desired.table(table.name)
        for _ in range(draw(st.integers(1, 6))):
            for _ in range(3):  # a row that fits every key, else none
                row = _draw_row(draw, current, desired, table, kept, result)
                if not _row_ok(current, table, row, kept, result):
                    continue
                if wanted is not None:
                    image = _image(current, desired, table, row)
                    if image is None or not _row_ok(desired, wanted, image, kept_images, images):
                        continue
                    kept_images.append(image)
                kept.append(row)
                break
        result[table.name] = kept
        images[table.name] = kept_images
    return result


# ---------------------------------------------------------------------------------------------
# Rendering.


def _column_sql(schema: GSchema, table: GTable, column: GColumn) -> str:
    d = schema.dialect
    parts = [quote(d, column.name), type_sql(d, column.type)]
    if not column.nullable:
        parts.append("NOT NULL")
    elif column.say_null:
        parts.append("NULL")
    if column.default is not None:
        parts.append("DEFAULT " + literal(d, column.type, column.default))
    if table.pk is not None and table.pk.inline and table.pk.columns == (column.name,):
        parts.append("PRIMARY KEY")
    for key in table.uniques:
        if key.inline and key.name is None and key.columns == (column.name,):
            parts.append("UNIQUE")
    if d is MARIA and column.comment is not None:
        parts.append("COMMENT " + string_literal(d, column.comment))
    for check in table.checks:
        if check.inline and check.column == column.name:
            parts.append(f"CHECK ({check_sql(d, column.type, check)})")
    return " ".join(parts)


def _cols(d: Dialect, names: Iterable[str]) -> str:
    return ", ".join(quote(d, n) for n in names)


def _constraint(d: Dialect, name: str | None) -> str:
    return f"CONSTRAINT {quote(d, name)} " if name else ""


def _fk_sql(d: Dialect, fk: GForeignKey) -> str:
    action = f" ON DELETE {fk.on_delete}" if fk.on_delete != "NO ACTION" else ""
    return (
        f"{_constraint(d, fk.name)}FOREIGN KEY ({_cols(d, fk.columns)}) "
        f"REFERENCES {quote(d, fk.ref_table)} ({_cols(d, fk.ref_columns)}){action}"
    )


def _render(schema: GSchema) -> list[str]:
    d = schema.dialect
    out: list[str] = []
    for name, labels in schema.enums.items():
        values_ = ", ".join(string_literal(d, v) for v in labels)
        out.append(f"CREATE TYPE {quote(d, name)} AS ENUM ({values_})")
    later: list[str] = []
    made: set[str] = set()
    for table in sorted(schema.tables, key=lambda t: t.tid):
        t = quote(d, table.name)
        lines = [_column_sql(schema, table, c) for c in table.columns]
        if table.pk is not None and not table.pk.inline:
            lines.append(
                f"{_constraint(d, table.pk.name)}PRIMARY KEY ({_cols(d, table.pk.columns)})"
            )
        for key in table.uniques:
            if key.inline and key.name is None:
                continue
            if d is MARIA and key.inline:
                lines.append(f"UNIQUE KEY {quote(d, key.name or '')} ({_cols(d, key.columns)})")
            else:
                lines.append(f"{_constraint(d, key.name)}UNIQUE ({_cols(d, key.columns)})")
        for index in table.indexes:
            if d is MARIA and index.inline:
                kind = "UNIQUE KEY" if index.unique else "KEY"
                lines.append(f"{kind} {quote(d, index.name or '')} ({_cols(d, index.columns)})")
        column_types = {c.name: c.type for c in table.columns}
        for check in table.checks:
            if not check.inline:
                expression = check_sql(d, column_types[check.column], check)
                lines.append(f"{_constraint(d, check.name)}CHECK ({expression})")
        for fk in table.fks:
            if fk.inline and (fk.ref_table in made or fk.ref_table == table.name):
                lines.append(_fk_sql(d, fk))
            else:
                later.append(f"ALTER TABLE {t} ADD {_fk_sql(d, fk)}")
        body = ",\n  ".join(lines)
        suffix = ""
        if d is MARIA and table.comment is not None:
            suffix = " COMMENT=" + string_literal(d, table.comment)
        out.append(f"CREATE TABLE {t} (\n  {body}\n){suffix}")
        made.add(table.name)
        for index in table.indexes:
            if d is MARIA and index.inline:
                continue
            unique = "UNIQUE " if index.unique else ""
            name = f"{quote(d, index.name)} " if index.name else ""
            out.append(f"CREATE {unique}INDEX {name}ON {t} ({_cols(d, index.columns)})")
        if d is PG:
            if table.comment is not None:
                out.append(f"COMMENT ON TABLE {t} IS {string_literal(d, table.comment)}")
            for column in table.columns:
                if column.comment is not None:
                    out.append(
                        f"COMMENT ON COLUMN {t}.{quote(d, column.name)} IS "
                        f"{string_literal(d, column.comment)}"
                    )
    return out + later


def insert_sql(dialect: Dialect, table: GTable) -> str:
    names = _cols(dialect, [c.name for c in table.columns])
    if dialect is PG:
        marks = ", ".join(f"${i}" for i in range(1, len(table.columns) + 1))
    else:
        marks = ", ".join("%s" for _ in table.columns)
    return f"INSERT INTO {quote(dialect, table.name)} ({names}) VALUES ({marks})"


class Case:
    """One example: a current schema, a desired one and rows for the current one. Printed
    (when Hypothesis reports it) as the DDL of both and the rows."""

    def __init__(self, current: GSchema, desired: GSchema, rows: dict[str, list[Row]]) -> None:
        self.current = current
        self.desired = desired
        self.rows = rows

    def __repr__(self) -> str:
        row_lines = [f"  {table}: {row!r}" for table, rows in self.rows.items() for row in rows]
        return (
            f"Case({self.current.dialect.value})\n-- current\n{self.current.ddl()}"
            f"-- desired\n{self.desired.ddl()}-- rows\n" + "\n".join(row_lines)
        )


@st.composite
def cases(draw: st.DrawFn, dialect: Dialect) -> Case:
    current = draw(schemas(dialect))
    desired = draw(mutated(current))
    return Case(current, desired, draw(rows_for(current, desired)))
