"""The read verbs' objects without pydantic: a manifest read into plain objects that carry the
API models' attribute names, by the field tables `shapes_gen` writes from the models.

Importing pydantic and building the API models takes most of a second here, longer than a read
verb takes to answer; what the views print needs only the values. `read_view` converts a
manifest as the model would, field by field: the wire names, the defaults, enum members, aware
datetimes, nested objects and lists. It is stricter than the model, never looser: anything it
does not take exactly (an unknown key, a type or enum value it does not expect, a time that is
not RFC 3339 with a zone, a required field missing) raises `MismatchError`, and `lookup` then reads
the object into its model after all (`read_model`), which prints the same text or refuses the
object as before. String constraints (patterns, lengths) and cross-field rules are not checked:
the API server holds stored objects to them, from the same models, through the CRDs.

Also here, for the same reason: the kinds' names (`NAMES`, the same as `api.kinds`, a test
keeps them equal) and the three small functions the views take from modules that import
pydantic (`format_time`, `parse_duration`, `text_digest`; tests keep them equal too).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ptah_operator.api import constants
from ptah_operator.api.constants import Kind
from ptah_operator.cli.kubectl.shapes import REQUIRED, SHAPES


class MismatchError(Exception):
    """The manifest is not exactly what the tables take: read it into its model instead."""


class View:
    """An object of a manifest, read: its fields as attributes, by the models' Python names."""

    def __init__(self, shape: str, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)
        self.__dict__["_shape"] = shape

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items() if k != "_shape")
        return f"{self.__dict__['_shape']}({fields})"

    def condition(self, condition_type: str) -> Any:
        """The condition of that type, or None (a status's)."""
        conditions = self.__dict__.get("conditions") or []
        return next((c for c in conditions if c.type == condition_type), None)


def read_view(shape: str, obj: Any) -> Any:
    """The manifest `obj` of model `shape` (its class name) as a View; raises MismatchError."""
    return _model(shape, obj)


def empty(shape: str) -> Any:
    """An object of that model with every field at its default (a status not written yet)."""
    return _model(shape, {})


def _model(shape: str, obj: Any) -> View:
    if type(obj) is not dict:
        raise MismatchError(shape)
    extra, fields = SHAPES[shape]
    values: dict[str, Any] = {}
    seen = 0
    for python, alias, kind, default in fields:
        if alias in obj:
            seen += 1
            values[python] = _value(kind, obj[alias])
        elif default == REQUIRED:
            raise MismatchError(f"{shape}.{alias}")
        else:
            values[python] = None if default is None else _value(kind, default)
    if seen != len(obj) and not extra:
        raise MismatchError(shape)
    return View(shape, values)


def _value(kind: list[Any], value: Any) -> Any:
    what = kind[0]
    if what == "optional":
        return None if value is None else _value(kind[1], value)
    if what == "str":
        if type(value) is not str:
            raise MismatchError(what)
        return value
    if what == "int":
        if type(value) is not int:
            raise MismatchError(what)
        return value
    if what == "bool":
        if type(value) is not bool:
            raise MismatchError(what)
        return value
    if what == "time":
        return _time(value)
    if what == "enum":
        return _enum(kind[1], value)
    if what == "literal":
        if type(value) not in (str, int) or value not in kind[2]:
            raise MismatchError(what)
        return value if kind[1] is None else _enum(kind[1], value)
    if what == "model":
        return _model(kind[1], value)
    if what == "list":
        if type(value) is not list:
            raise MismatchError(what)
        return [_value(kind[1], item) for item in value]
    if what == "dict":
        if type(value) is not dict or any(type(k) is not str for k in value):
            raise MismatchError(what)
        return {k: _value(kind[1], v) for k, v in value.items()}
    if what == "any":
        return value
    raise MismatchError(what)


def _enum(name: str, value: Any) -> Any:
    if type(value) is not str:
        raise MismatchError(name)
    try:
        return getattr(constants, name)(value)
    except ValueError:
        raise MismatchError(name) from None


# An RFC 3339 instant as the API server writes it: a zone (Z or an offset) is required.
_INSTANT = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})", re.ASCII
)


def _time(value: Any) -> datetime:
    if type(value) is not str or not _INSTANT.fullmatch(value):
        raise MismatchError("time")
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise MismatchError("time") from None


# --- the kinds' names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """How a kind is named and served, as `api.kinds.KindInfo` says it."""

    kind: Kind
    plural: str
    short_names: tuple[str, ...]

    @property
    def singular(self) -> str:
        return self.kind.lower()


NAMES: Mapping[Kind, Names] = {
    names.kind: names
    for names in (
        Names(Kind.PTAH_SCHEMA, "ptahschemas", ("psch",)),
        Names(Kind.PTAH_MIGRATION, "ptahmigrations", ("pmig",)),
        Names(Kind.PTAH_SCHEMA_PLAN, "ptahschemaplans", ("pschplan",)),
        Names(Kind.PTAH_SCHEMA_PLAN_CHUNK, "ptahschemaplanchunks", ("pschchunk",)),
        Names(Kind.PTAH_MIGRATION_PLAN, "ptahmigrationplans", ("pmigplan",)),
        Names(Kind.PTAH_SCHEMA_APPROVAL, "ptahschemaapprovals", ("pschappr",)),
        Names(Kind.PTAH_MIGRATION_APPROVAL, "ptahmigrationapprovals", ("pmigappr",)),
    )
}


# --- what the views take from modules that import pydantic ---------------------------------------


def format_time(value: datetime) -> str:
    """As `api.fields.format_time`: UTC, whole seconds, a trailing Z."""
    if value.tzinfo is None:
        raise ValueError("an instant needs a time zone")
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> timedelta:
    """As `api.fields.parse_duration`: 1h30m, 90s; ValueError for anything else."""
    if not _DURATION.fullmatch(value):
        raise ValueError(f"not a duration like 10m or 1h30m: {value!r}")
    seconds = sum(
        float(number) * _UNIT_SECONDS[unit] for number, unit in _DURATION_PART.findall(value)
    )
    return timedelta(seconds=seconds)


def text_digest(text: str) -> str:
    """As `api.fingerprints.text_digest`: sha256:<hex> of the text's UTF-8 bytes."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
