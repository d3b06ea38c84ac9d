"""Statement severities, and which type changes lose nothing.

safe: cannot lose data or fail on existing rows (create a table, add a nullable column, add
an index or an enum value, change a default or a comment). warning: loses no data but may
fail on existing rows or slow the database (add a unique/check/foreign key/primary key to an
existing table, drop an index, widen a type, change identity). destructive: may lose data or
refuse rows that exist (drop a table, column, constraint, enum type or value, function or
schema; narrow or otherwise change a type; add NOT NULL). privilege: changes who may do what
(grants, owners, security-definer functions: `diff` decides these).

A type change is a warning only when `type_change` proves, per dialect, that every value of
the old type is a value of the new one, read back the same; any other is destructive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum


class Severity(StrEnum):
    SAFE = "safe"
    WARNING = "warning"
    PRIVILEGE = "privilege"
    DESTRUCTIVE = "destructive"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.SAFE: 0, Severity.WARNING: 1, Severity.PRIVILEGE: 2, Severity.DESTRUCTIVE: 3}


def highest(severities: list[Severity]) -> Severity | None:
    return max(severities, key=lambda s: s.rank) if severities else None


# ---------------------------------------------------------------------------------------------
# Type changes: a lattice of value sets per dialect.
#
# A type is read into the set of values it holds (`_Domain`); a change is lossless when every
# value of the old set is a value of the new one, read back the same. Anything the rules below
# cannot prove lossless is destructive. docs/engine-schema.md ("Type changes") has the table.


@dataclass(frozen=True)
class _Exact:
    """Exact numbers: multiples of 10**-scale (scale None: any) between low and high (None:
    unbounded), plus the special values in `special` ("nan", "inf")."""

    low: Decimal | None
    high: Decimal | None
    scale: int | None
    special: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Float:
    """Binary floating point with `mantissa` bits; `shown` is how many significant digits the
    server prints (MySQL FLOAT: 6), None when it prints every value exactly."""

    mantissa: int
    max_exponent: int
    shown: int | None = None


@dataclass(frozen=True)
class _Chars:
    """Character strings of at most `chars` characters and `bytes` bytes (None: no limit).
    `padding`: "none" (kept as written), "stripped" (MySQL CHAR: trailing spaces stripped on
    read) or "blank" (PostgreSQL character(n): padded, trailing spaces do not count)."""

    chars: int | None
    bytes: int | None
    padding: str = "none"


@dataclass(frozen=True)
class _Bytes:
    """Byte strings of at most `size` bytes (None: no limit); `fixed` pads every value to
    `size` (MySQL BINARY with 0x00)."""

    size: int | None
    fixed: bool = False


@dataclass(frozen=True)
class _Bits:
    """Bit strings of at most `size` bits; `fixed`: exactly `size` (PostgreSQL bit(n)).
    `numeric`: MySQL BIT(n), a number below 2**n."""

    size: int | None
    fixed: bool = False
    numeric: bool = False


@dataclass(frozen=True)
class _Time:
    """A temporal kind (`date`, `datetime`, `timestamp`, `timestamptz`, `time`, `timetz`,
    `interval`, `year`) with fractional-second digits."""

    kind: str
    precision: int = 0


@dataclass(frozen=True)
class _Array:
    element: _Domain


@dataclass(frozen=True)
class _Opaque:
    """A type the lattice knows nothing of: it holds its own values and no other's."""

    text: str


_Domain = _Exact | _Float | _Chars | _Bytes | _Bits | _Time | _Array | _Opaque


def _integers(low: int, high: int) -> _Exact:
    return _Exact(Decimal(low), Decimal(high), 0)


def _decimal(precision: int, scale: int, *, unsigned: bool = False, special: str = "") -> _Exact:
    high = (Decimal(10) ** precision - 1).scaleb(-scale)
    return _Exact(Decimal(0) if unsigned else -high, high, scale, frozenset(special.split()))


_PG_NUMBERS: dict[str, _Domain] = {
    "smallint": _integers(-(2**15), 2**15 - 1),
    "integer": _integers(-(2**31), 2**31 - 1),
    "bigint": _integers(-(2**63), 2**63 - 1),
    "real": _Float(24, 128),
    "double precision": _Float(53, 1024),
}
_MY_SIGNS = frozenset({"unsigned", "signed", "zerofill"})
_MY_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
# MySQL/MariaDB TINYTEXT/TEXT/... and TINYBLOB/BLOB/...: limits in bytes.
_MY_LOBS = {"tiny": 255, "": 65_535, "medium": 16_777_215, "long": 4_294_967_295}
# A character of utf8mb4, the widest character set: the model does not know a column's.
_MY_CHAR_BYTES = 4
# What a row, and so one VARCHAR, holds at most (bytes).
_MY_ROW_BYTES = 65_535
# PostgreSQL's default (and highest) fractional-second precision.
_PG_SECONDS = 6


def _split(type_text: str) -> tuple[str, list[int], list[str]] | None:
    """`base(args) rest` -> (base, [args], [rest words]); None for what is no such thing."""
    base, paren, tail = type_text.partition("(")
    rest = ""
    args: list[int] = []
    if paren:
        inside, closing, rest = tail.partition(")")
        if not closing or "(" in rest or ")" in rest:
            return None
        try:
            args = [int(a) for a in inside.split(",")]
        except ValueError:
            return None
    if not re.fullmatch(r"[a-z][a-z ]*", base.strip()) or re.search(r"[^a-z ]", rest):
        return None
    return base.strip(), args, rest.split()


def _pg_domain(type_text: str) -> _Domain:
    if type_text.endswith("[]"):
        # PostgreSQL does not hold an array's dimensions to its type: int[] is int[][].
        return _Array(_pg_domain(type_text.removesuffix("[]").rstrip("[]")))
    parts = _split(type_text)
    if parts is None:
        return _Opaque(type_text)
    base, args, rest = parts
    for kind in ("timestamp", "time"):
        if base.startswith(kind + " ") and not rest:
            base, rest = kind, base.removeprefix(kind).split()
    zone = " ".join(rest)
    if base in _PG_NUMBERS and not args and not rest:
        return _PG_NUMBERS[base]
    if base == "numeric" and not rest:
        if not args:
            return _Exact(None, None, None, frozenset({"nan", "inf"}))
        if len(args) <= 2:
            return _decimal(args[0], args[1] if len(args) == 2 else 0, special="nan")
    if base in {"text", "character varying"} and not rest and len(args) <= 1:
        return _Chars(args[0] if args else None, None)
    if base == "character" and not rest and len(args) == 1:
        return _Chars(args[0], None, "blank")
    if base == "bytea" and not args and not rest:
        return _Bytes(None)
    if base == "bit" and not rest and len(args) <= 1:
        return _Bits(args[0] if args else 1, fixed=True)
    if base in {"bit varying", "varbit"} and not rest and len(args) <= 1:
        return _Bits(args[0] if args else None)
    if base in {"timestamp", "time"} and zone in {"with time zone", "without time zone"}:
        kind = base + ("tz" if zone == "with time zone" else "")
        if len(args) <= 1:
            return _Time(kind, args[0] if args else _PG_SECONDS)
    if base == "interval" and not rest and len(args) <= 1:
        return _Time("interval", args[0] if args else _PG_SECONDS)
    if base == "date" and not args and not rest:
        return _Time("date")
    return _Opaque(type_text)


def _my_domain(type_text: str) -> _Domain:
    parts = _split(type_text)
    if parts is None:
        return _Opaque(type_text)
    base, args, rest = parts
    head = base.split()
    while len(head) > 1 and head[-1] in _MY_SIGNS:
        rest.insert(0, head.pop())
    base = " ".join(head)
    words = set(rest)
    if not words <= _MY_SIGNS:
        return _Opaque(type_text)
    unsigned = bool(words & {"unsigned", "zerofill"})
    if base in _MY_INTEGER_BITS and (not args or (base == "tinyint" and args == [1])):
        bits = _MY_INTEGER_BITS[base]
        if unsigned:
            return _integers(0, 2**bits - 1)
        return _integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if base == "decimal" and len(args) == 2:
        return _decimal(args[0], args[1], unsigned=unsigned)
    if words:
        return _Opaque(type_text)
    if base == "float" and not args:
        # MariaDB prints a FLOAT to 6 significant digits (16777215 reads back as 16777200).
        return _Float(24, 128, shown=6)
    if base == "double" and not args:
        return _Float(53, 1024)
    if base in {"char", "varchar"} and len(args) == 1:
        size = min(args[0] * _MY_CHAR_BYTES, _MY_ROW_BYTES)
        return _Chars(args[0], size, "stripped" if base == "char" else "none")
    if base in {"binary", "varbinary"} and len(args) == 1:
        return _Bytes(args[0], fixed=base == "binary")
    for prefix, size in _MY_LOBS.items():
        if base == prefix + "text" and not args:
            # Every character takes a byte at least.
            return _Chars(size, size)
        if base == prefix + "blob" and not args:
            return _Bytes(size)
    if base == "bit" and len(args) <= 1:
        return _Bits(args[0] if args else 1, numeric=True)
    if base in {"datetime", "timestamp", "time"} and len(args) <= 1:
        return _Time(base, args[0] if args else 0)
    if base == "date" and not args:
        return _Time("date")
    if base == "year" and args in ([], [4]):
        return _Time("year")
    return _Opaque(type_text)


def _within(low: Decimal | None, high: Decimal | None, outer: _Exact) -> bool:
    if outer.low is not None and (low is None or low < outer.low):
        return False
    return outer.high is None or (high is not None and high <= outer.high)


def _exact_in_float(old: _Exact, new: _Float) -> bool:
    """Whether every value of `old` is a float of `new`, printed as itself: whole numbers no
    larger than 2**mantissa (and no longer than the digits the server prints)."""
    if old.scale is None or old.scale > 0 or old.low is None or old.high is None:
        return False
    largest = max(-old.low, old.high)
    if largest > 2**new.mantissa:
        return False
    return new.shown is None or len(str(int(largest))) <= new.shown


def _lossless(old: _Domain, new: _Domain) -> bool:
    """Whether every value of `old` is a value of `new`, read back the same."""
    if old == new:
        return True
    if isinstance(old, _Exact) and isinstance(new, _Exact):
        if new.scale is not None and (old.scale is None or old.scale > new.scale):
            return False
        return _within(old.low, old.high, new) and old.special <= new.special
    if isinstance(old, _Exact) and isinstance(new, _Float):
        # NaN and the infinities are floats too (PostgreSQL).
        return _exact_in_float(old, new)
    if isinstance(old, _Float) and isinstance(new, _Float):
        return old.mantissa <= new.mantissa and old.max_exponent <= new.max_exponent
    if isinstance(old, _Chars) and isinstance(new, _Chars):
        if (old.padding == "blank") != (new.padding == "blank"):
            # PostgreSQL character(n) to or from another string type: spaces go or come.
            return False
        if new.padding == "stripped" and old.padding != "stripped":
            # MySQL CHAR strips the trailing spaces of what it holds.
            return False
        return _fits(old.chars, new.chars) and _fits(old.bytes, new.bytes)
    if isinstance(old, _Bytes) and isinstance(new, _Bytes):
        if new.fixed and not (old.fixed and old.size == new.size):
            # BINARY(n) pads shorter values with 0x00 and cuts longer ones.
            return False
        return _fits(old.size, new.size)
    if isinstance(old, _Bits) and isinstance(new, _Bits):
        if old.numeric != new.numeric:
            return False
        if new.fixed and not (old.fixed and old.size == new.size):
            # PostgreSQL bit(n) pads or cuts on the right.
            return False
        return _fits(old.size, new.size)
    if isinstance(old, _Time) and isinstance(new, _Time):
        if old.kind == "date" and new.kind == "datetime":
            # MySQL: a DATE becomes that day's midnight; DATETIME spans every DATE.
            return True
        return old.kind == new.kind and old.precision <= new.precision
    if isinstance(old, _Array) and isinstance(new, _Array):
        return _lossless(old.element, new.element)
    return False


def _fits(size: int | None, limit: int | None) -> bool:
    return limit is None or (size is not None and size <= limit)


def _domain(dialect_family: str, type_text: str) -> _Domain:
    if dialect_family == "postgresql":
        return _pg_domain(type_text)
    return _my_domain(type_text)


def type_change(dialect_family: str, old: str, new: str) -> tuple[Severity, str]:
    """The severity of changing a column from (normalized) type `old` to `new`, and why.

    A warning when every value of `old` is a value of `new`, read back the same ("type
    widens"; "type changes, values kept" when the reverse holds too); destructive otherwise:
    "type narrows" when `new`'s values all fit `old` (the change loses those that do not fit
    `new`), "type converts" for anything else, a type the lattice does not know included.
    """
    if old == new:
        return Severity.SAFE, "type unchanged"
    before, after = _domain(dialect_family, old), _domain(dialect_family, new)
    forward, backward = _lossless(before, after), _lossless(after, before)
    if forward:
        return Severity.WARNING, "type changes, values kept" if backward else "type widens"
    return Severity.DESTRUCTIVE, "type narrows" if backward else "type converts"


def enum_change(old: tuple[str, ...], new: tuple[str, ...]) -> str:
    """How an enum's values change: "same"; "appends" (new values after every old one);
    "inserts" (new values among the old ones, whose order holds); "loses" (a value goes, or
    the old values change order)."""
    if old == new:
        return "same"
    if [v for v in new if v in old] != list(old):
        return "loses"
    return "appends" if new[: len(old)] == old else "inserts"


_ENUM_VALUE = re.compile(r"'((?:[^']|'')*)'")


def _enum_values(type_text: str) -> tuple[str, ...] | None:
    if not (type_text.startswith("enum(") and type_text.endswith(")")):
        return None
    return tuple(v.replace("''", "'") for v in _ENUM_VALUE.findall(type_text[5:-1]))


def mysql_enum_change(old: str, new: str) -> tuple[Severity, str] | None:
    """The severity of a MySQL/MariaDB `enum(...)` column type change (None when either type
    is not an enum): values appended are safe (a stored value keeps its number); inserted
    among the others, a warning (the table is copied, stored values keep their text); lost or
    reordered, destructive (a row holding a lost value is emptied or refused, and the sort
    order of the column changes)."""
    before, after = _enum_values(old), _enum_values(new)
    if before is None or after is None:
        return None
    change = enum_change(before, after)
    if change == "appends":
        return Severity.SAFE, "enum values added at the end"
    if change == "inserts":
        return Severity.WARNING, "enum values inserted among the others"
    return Severity.DESTRUCTIVE, "enum values lost or reordered"
