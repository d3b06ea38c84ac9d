"""Statement severities, and which type changes lose nothing.

safe: cannot lose data or fail on existing rows (create a table, add a nullable column, add
an index or an enum value, change a default or a comment). warning: loses no data but may
fail on existing rows or slow the database (add a unique/check/foreign key/primary key to an
existing table, drop an index, widen a type, change identity). destructive: may lose data or
refuse rows that exist (drop a table, column, constraint, enum type or value, function or
schema; narrow or otherwise change a type; add NOT NULL). privilege: changes who may do what
(grants, owners, security-definer functions: `diff` decides these).
"""

from __future__ import annotations

import re
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


_INTEGER_RANKS = {
    "smallint": 1,
    "integer": 2,
    "bigint": 3,
    "tinyint": 0,
    "mediumint": 1,
    "int": 2,
}
_FLOAT_RANKS = {"real": 1, "double precision": 2, "float": 1, "double": 2}
_UNBOUNDED_TEXT = {"text", "character varying", "mediumtext", "longtext"}


def _parts(type_text: str) -> tuple[str, list[int], str]:
    match = re.fullmatch(r"([a-z ]+?)(?:\(([\d, ]+)\))?( unsigned)?", type_text)
    if match is None:
        return type_text, [], ""
    args = [int(a) for a in match.group(2).split(",")] if match.group(2) else []
    return match.group(1), args, match.group(3) or ""


def type_widens(old: str, new: str) -> bool:
    """Whether every value of `old` is a value of `new`, so the change loses nothing."""
    if old == new:
        return True
    old_base, old_args, old_sign = _parts(old)
    new_base, new_args, new_sign = _parts(new)
    if old_base in _INTEGER_RANKS and new_base in _INTEGER_RANKS:
        if old_base == "tinyint" and old_args == [1]:
            old_base = "tinyint"
        return old_sign == new_sign and _INTEGER_RANKS[new_base] >= _INTEGER_RANKS[old_base]
    if old_base in _FLOAT_RANKS and new_base in _FLOAT_RANKS:
        return _FLOAT_RANKS[new_base] >= _FLOAT_RANKS[old_base]
    if old_base in {"numeric", "decimal"} and new_base == old_base:
        if not new_args:
            return True
        if not old_args:
            return False
        old_scale = old_args[1] if len(old_args) > 1 else 0
        new_scale = new_args[1] if len(new_args) > 1 else 0
        return new_scale >= old_scale and new_args[0] - new_scale >= old_args[0] - old_scale
    texts = {
        "character varying",
        "varchar",
        "text",
        "character",
        "char",
        "mediumtext",
        "longtext",
        "tinytext",
    }
    if old_base in texts and new_base in texts:
        if new_base in _UNBOUNDED_TEXT and not new_args:
            return old_base != "character" or new_base == "text"
        if new_base in {"longtext", "mediumtext"}:
            return True
        if old_base == new_base and old_args and new_args:
            return new_args[0] >= old_args[0]
        return False
    if old.startswith("enum(") and new.startswith("enum("):
        # MySQL: appending values keeps every stored one.
        return new[:-1].startswith(old[:-1])
    return False


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
