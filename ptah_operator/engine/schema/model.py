"""The normalized schema model shared by introspection, the desired-schema readers and diff.

Every object is a frozen dataclass and every collection a tuple in a canonical order (columns
keep their ordinal order, everything else is sorted by name), so that two models that mean
the same thing are equal and serialize to the same bytes. Types, defaults and expressions are
stored already normalized for their dialect (see `normalize`).

Constraint and index names are optional on the desired side: a person may leave them to the
database. Comparison then goes by content (`key()`), and a name takes part only when the
desired side gives one.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar


class Dialect(StrEnum):
    POSTGRESQL = "postgresql"
    MYSQL = "mysql"
    MARIADB = "mariadb"

    @property
    def family(self) -> str:
        """`postgresql` or `mysql`: what parsing, rendering and normalization go by."""
        return "postgresql" if self is Dialect.POSTGRESQL else "mysql"

    @property
    def sqlglot(self) -> str:
        return "postgres" if self is Dialect.POSTGRESQL else "mysql"


_Model = TypeVar("_Model")


def _lean_init(cls: type[_Model]) -> type[_Model]:
    """Give a frozen model class an `__init__` that stores only the fields given something
    other than their default (by identity), and the tuple of its compared fields, which its
    `__eq__`, `__hash__` and the compact encoding read. A field left unset reads the class
    attribute `dataclass` leaves for each default: that same value.

    Why: the generated `__init__` stores every field, one `object.__setattr__` call each: a
    Column (17 fields, most at their default) took 2 µs, and inspection and parsing make
    one per column; now it takes half that. A field left unset reads a little slower, and
    the generated `__eq__` reads every compared field of both objects: comparing the tuples
    costs less than either did. Equality, hashing, `repr`, `dataclasses.replace`, the
    encodings and pickling see what they saw (`tests/unit/engine/schema/
    test_schema_model_init.py`). The class keeps the generated `__init__` as
    `_dataclass_init`."""
    namespace: dict[str, Any] = {"_set": object.__setattr__}
    parameters, body, compared = [], [], []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init or f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: only plain defaults can be left unset")
        if f.compare:
            compared.append(f.name)
        if f.default is dataclasses.MISSING:
            parameters.append(f.name)
            body.append(f"    _set(self, {f.name!r}, {f.name})")
            continue
        if getattr(cls, f.name) is not f.default:
            raise TypeError(f"{cls.__name__}.{f.name}: no class attribute holds its default")
        namespace[f"_default_{f.name}"] = f.default
        parameters.append(f"{f.name}=_default_{f.name}")
        body.append(f"    if {f.name} is not _default_{f.name}:")
        body.append(f"        _set(self, {f.name!r}, {f.name})")
    body.append(f"    _set(self, '_compared', ({''.join(name + ', ' for name in compared)}))")
    source = "\n".join([f"def __init__(self, {', '.join(parameters)}):", *body])
    # What `dataclasses` does itself: the function is made of the class's field names only.
    exec(source, namespace)  # noqa: S102
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"

    def __eq__(self: Any, other: Any) -> Any:  # noqa: N807
        if other.__class__ is self.__class__:
            return self._compared == other._compared
        return NotImplemented

    def __hash__(self: Any) -> int:  # noqa: N807
        return hash(self._compared)

    cls._dataclass_init = cls.__init__  # type: ignore[attr-defined]
    cls.__init__ = init  # type: ignore[method-assign]
    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__hash__ = __hash__  # type: ignore[method-assign]
    _LEAN.add(cls)
    return cls


# The classes `_lean_init` made: their objects carry their compared values as `_compared`.
_LEAN: set[type] = set()


@_lean_init
@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    # PostgreSQL, desired side: the default as it was written (`now()`, which normalizes to
    # CURRENT_TIMESTAMP), which is what CREATE and SET DEFAULT are given, so that the catalog
    # holds what the person wrote. Not compared.
    default_source: str | None = field(default=None, compare=False)
    # PostgreSQL: "always", "by default" (identity) or "serial" (an owned sequence's nextval);
    # MySQL/MariaDB: "auto_increment".
    identity: str | None = None
    # Expression of a generated column: STORED, or on MySQL/MariaDB VIRTUAL (`virtual`).
    generated: str | None = None
    # MySQL/MariaDB: the column's collation where it differs from the table's default.
    collation: str | None = None
    comment: str | None = None
    # PostgreSQL `serial`: the name of its sequence, where known (introspection); not compared.
    sequence: str | None = field(default=None, compare=False)
    # What MySQL/MariaDB hold for a column besides the above, so that MODIFY COLUMN (which
    # restates a column whole) can restate it; never set on PostgreSQL.
    # A generated column computed when read (VIRTUAL) rather than stored.
    virtual: bool = False
    # The character set where it differs from the table's default (the collation, when the
    # column has one of its own, implies it; see `mysql_columns.settle_columns`).
    charset: str | None = None
    # ON UPDATE of a timestamp/datetime column: `CURRENT_TIMESTAMP()` or `CURRENT_TIMESTAMP(n)`.
    on_update: str | None = None
    # MariaDB / MySQL 8.0.23+: left out of `SELECT *` and of INSERT without a column list.
    invisible: bool = False
    # The spatial reference system of a spatial column (MariaDB REF_SYSTEM_ID, MySQL SRID);
    # None for none (0).
    srid: int | None = None
    # PostgreSQL identity: the options of its sequence, (start, increment, min, max, cache,
    # cycle), where any differs from what the column's type gives by default; None for the
    # defaults (`normalize.identity_options`).
    identity_options: tuple[int, int, int, int, int, bool] | None = None
    # Observed side: what the server holds for the column that the model cannot express
    # (system versioning, an EXTRA word it does not know, an SRID it cannot read), each named.
    # A plan that would restate the column is refused rather than drop it. Not compared.
    unmodelled: tuple[str, ...] = field(default=(), compare=False)


# PostgreSQL: when a key, unique or foreign key is checked. None for NOT DEFERRABLE; otherwise
# "DEFERRABLE" (checked at each statement unless a transaction defers it) or "DEFERRABLE
# INITIALLY DEFERRED" (checked at commit).
Deferral = str | None


@dataclass(frozen=True)
class PrimaryKey:
    columns: tuple[str, ...]
    name: str | None = None
    deferrable: Deferral = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def key(self) -> tuple[Any, ...]:
        return (self.columns, self.deferrable) if self.deferrable else self.columns


@dataclass(frozen=True)
class UniqueConstraint:
    columns: tuple[str, ...]
    name: str | None = None
    deferrable: Deferral = None
    # PostgreSQL 15: NULLS NOT DISTINCT (two NULLs collide).
    nulls_not_distinct: bool = False
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def key(self) -> tuple[Any, ...]:
        if self.deferrable or self.nulls_not_distinct:
            return (self.columns, self.deferrable, self.nulls_not_distinct)
        return self.columns


@_lean_init
@dataclass(frozen=True)
class Index:
    name: str | None
    columns: tuple[str, ...]
    unique: bool = False
    # PostgreSQL only: partial-index predicate and INCLUDE columns.
    where: str | None = None
    include: tuple[str, ...] = ()
    # MySQL/MariaDB only: prefix length per column (None for a whole column).
    prefix_lengths: tuple[int | None, ...] = ()
    # PostgreSQL: the access method, None for btree. MySQL/MariaDB: "fulltext" or "spatial",
    # None for a plain index (BTREE or HASH: the storage engine picks, InnoDB always BTREE).
    method: str | None = None
    # Per key, its canonical options (`normalize.index_key_options`): operator class
    # (PostgreSQL), `DESC`, `NULLS FIRST/LAST` (PostgreSQL), "" for a key with none; () when
    # no key has any, so that an index written without options compares as it always did.
    key_options: tuple[str, ...] = ()
    # MySQL/MariaDB: the index the server made for a foreign key that had none. Kept while
    # nobody declares it, dropped with its key; not part of the comparison.
    implicit: bool = field(default=False, compare=False)
    # PostgreSQL 15: a unique index whose NULLs collide (NULLS NOT DISTINCT).
    nulls_not_distinct: bool = False
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def key(self) -> tuple[Any, ...]:
        prefixes = self.prefix_lengths
        if prefixes.count(None) == len(prefixes):
            prefixes = ()  # no column has a prefix: as if none were given
        options = self.key_options if any(self.key_options) else ()
        key = (self.columns, self.unique, self.where, self.include, prefixes, self.method, options)
        return (*key, True) if self.nulls_not_distinct else key


@dataclass(frozen=True)
class ForeignKey:
    columns: tuple[str, ...]
    ref_schema: str
    ref_table: str
    ref_columns: tuple[str, ...]
    on_delete: str = "NO ACTION"
    on_update: str = "NO ACTION"
    name: str | None = None
    # MySQL/MariaDB: the name of the implicit index the server made for this key.
    backing_index: str | None = field(default=None, compare=False)
    deferrable: Deferral = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def key(self) -> tuple[Any, ...]:
        key = (
            self.columns,
            self.ref_schema,
            self.ref_table,
            self.ref_columns,
            self.on_delete,
            self.on_update,
        )
        return (*key, self.deferrable) if self.deferrable else key


@dataclass(frozen=True)
class Check:
    expr: str
    name: str | None = None
    # MariaDB: the column a column-level check belongs to (`a int CHECK (a > 0)`, named after
    # the column). MODIFY COLUMN drops such a check unless it restates it. Not compared.
    column: str | None = field(default=None, compare=False)
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def key(self) -> tuple[str, ...]:
        return (self.expr,)


@dataclass(frozen=True)
class Grant:
    """One privilege on a table held by one grantee.

    PostgreSQL: a role name, or `PUBLIC`. MySQL/MariaDB: a user as the server spells it
    (`'app'@'%'`), or a role by its bare name (`reader`). A table's owner is never a grantee
    here (PostgreSQL gives the owner everything without a grant)."""

    grantee: str
    privilege: str
    grantable: bool = False


@dataclass(frozen=True)
class Trigger:
    """A PostgreSQL trigger on a table, read alike from CREATE TRIGGER and the catalog's
    `pg_get_triggerdef` (`triggers.read_trigger`). Which it is: its table and name."""

    name: str
    # BEFORE, AFTER or INSTEAD OF.
    timing: str
    # INSERT, UPDATE, UPDATE OF col, ..., DELETE, TRUNCATE, in that order.
    events: tuple[str, ...]
    # ROW or STATEMENT.
    level: str
    # The function it executes, as the catalog prints it (schema-qualified unless it is
    # pg_catalog's), and its arguments (each a string).
    function: str
    arguments: tuple[str, ...] = ()
    # The WHEN condition, canonical; REFERENCING OLD/NEW TABLE AS ..., as written.
    when: str | None = None
    referencing: str | None = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[Column, ...]
    primary_key: PrimaryKey | None = None
    uniques: tuple[UniqueConstraint, ...] = ()
    indexes: tuple[Index, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[Check, ...] = ()
    comment: str | None = None
    # Sorted by grantee, then privilege.
    grants: tuple[Grant, ...] = ()
    # PostgreSQL: the owning role. Always known on the observed side; on the desired side
    # None means the owner is not managed (not compared).
    owner: str | None = None
    # MySQL/MariaDB, observed side: the table's default collation, which a column without a
    # collation of its own takes; desired side: the one its options name (`DEFAULT
    # CHARSET=… COLLATE=…`), or None. Compared where the desired schema names it (`diff`).
    collation: str | None = field(default=None, compare=False)
    # MySQL/MariaDB, desired side: the default character set its options name alone
    # (`DEFAULT CHARSET=latin1`), which the server gives its default collation (settled in
    # `mysql_columns.settle_columns`). Not compared.
    charset: str | None = field(default=None, compare=False)
    # MySQL/MariaDB: the storage engine (`ENGINE=InnoDB`); on the desired side None when its
    # options do not name one (not managed).
    engine: str | None = field(default=None, compare=False)
    # PostgreSQL: triggers, by name.
    triggers: tuple[Trigger, ...] = ()

    if TYPE_CHECKING:
        # `schema.name` (`name` alone on MySQL/MariaDB), which the planner asks for thousands
        # of times a plan: set by `__post_init__`, not a field. Not a cached property either:
        # the first read of one writes the instance's `__dict__`, after which every attribute
        # of the table reads slower (the diff of a thousand tables took a third longer).
        qualified: str = field(init=False)

    def __post_init__(self) -> None:
        qualified = f"{self.schema}.{self.name}" if self.schema else self.name
        object.__setattr__(self, "qualified", qualified)

    def column(self, name: str) -> Column | None:
        return self._columns_by_name.get(name)

    @functools.cached_property
    def _columns_by_name(self) -> dict[str, Column]:
        # The first of a name, as a search would find: later entries win in a dict display.
        return {column.name: column for column in reversed(self.columns)}


@dataclass(frozen=True)
class EnumType:
    """A PostgreSQL enum type. MySQL enums are column types (`enum('a','b')`)."""

    schema: str
    name: str
    values: tuple[str, ...]
    owner: str | None = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class Domain:
    """A PostgreSQL domain: a base type with a default, NOT NULL and checks (`VALUE > 0`),
    each check compared by content and, where the desired schema names it, by name."""

    schema: str
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    collation: str | None = None
    checks: tuple[Check, ...] = ()
    owner: str | None = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class Extension:
    """A PostgreSQL extension installed in a schema in scope. Its version is not compared
    (`ALTER EXTENSION ... UPDATE` is not planned); its comment only where the desired schema
    gives one (an extension's own script sets one)."""

    name: str
    schema: str
    comment: str | None = None


@dataclass(frozen=True)
class Sequence:
    """A PostgreSQL sequence of its own: not the one behind a `serial` column (that is the
    column's `identity`) nor an identity column's. Every option is explicit: the desired side
    fills in PostgreSQL's defaults, so that both sides spell the same sequence alike."""

    schema: str
    name: str
    type: str
    start: int
    increment: int
    min_value: int
    max_value: int
    cache: int = 1
    cycle: bool = False
    # OWNED BY: a column of a table in the sequence's own schema (PostgreSQL requires it).
    owner_table: str | None = None
    owner_column: str | None = None
    # The owning role (see `Table.owner`). A sequence owned by a column has its table's owner.
    owner: str | None = None
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


@dataclass(frozen=True)
class View:
    """A view; `definition` is its query as the server reports it once the view exists.

    A desired view starts as the query a person wrote (re-spelled by sqlglot). Before diffing,
    `views.settle_views` asks the server whether it reads the same as the existing view; if
    so, the desired view takes the server's text, so a converged view compares equal. The
    person's text stays in `source`: it is what CREATE VIEW is given."""

    schema: str
    name: str
    definition: str
    source: str | None = field(default=None, compare=False)
    # (name, type) of each output column, where known (the server's view, or a probe of the
    # desired one on PostgreSQL): decides whether CREATE OR REPLACE VIEW can keep the view.
    columns: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    # Relations the query reads, qualified: the order views are made and dropped in.
    depends_on: tuple[str, ...] = field(default=(), compare=False)
    # Whether the query selects `*`, which the server expands when it makes the view.
    reads_star: bool = field(default=False, compare=False)
    # The owning role (see `Table.owner`).
    owner: str | None = None
    # PostgreSQL: a materialized view (its rows are computed when it is made).
    materialized: bool = False
    # A materialized view made WITH NO DATA (as pg_dump writes one): whether its rows are
    # computed is the state of its data, not compared; it says how CREATE makes it.
    with_data: bool = field(default=True, compare=False)
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    @property
    def text(self) -> str:
        """The query CREATE VIEW is given."""
        return self.source if self.source is not None else self.definition


@dataclass(frozen=True)
class Argument:
    """One argument of a function: mode (`IN`, `OUT`, `INOUT`, `VARIADIC`), name ("" for
    none), type and default, each normalized."""

    mode: str
    name: str
    type: str
    default: str | None = None


@dataclass(frozen=True)
class Function:
    """A PostgreSQL function (not a procedure, aggregate or window function).

    Its body is compared by digest (SHA-256 of the text between the quotes, which is what
    `pg_proc.prosrc` holds): the model never carries the text of an existing function. A
    desired function keeps its body in `body` (not compared) for CREATE FUNCTION. Schema,
    name and input argument types (`signature`) say which function it is: PostgreSQL
    overloads a name by them."""

    schema: str
    name: str
    arguments: tuple[Argument, ...]
    # The result type; with `returns_set`, SETOF it. RETURNS TABLE (...) is `table_columns`
    # (name, type), with `returns` "record" and `returns_set` true.
    returns: str
    returns_set: bool
    table_columns: tuple[tuple[str, str], ...]
    language: str
    body_digest: str
    # "immutable", "stable" or "volatile".
    volatility: str = "volatile"
    strict: bool = False
    security_definer: bool = False
    leakproof: bool = False
    # "safe", "restricted" or "unsafe".
    parallel: str = "unsafe"
    cost: float = 100.0
    rows: float = 0.0
    # `SET name = value` clauses as `pg_proc.proconfig` holds them (`search_path=public`).
    config: tuple[str, ...] = ()
    owner: str | None = None
    body: str | None = field(default=None, compare=False)
    # PostgreSQL: its comment. The desired side gives one only where it says COMMENT ON
    # ("" for IS NULL); None there is not managed. Compared by `diff`, not by equality.
    comment: str | None = field(default=None, compare=False)

    def with_comment(self, comment: str | None) -> Function:
        return dataclasses.replace(self, comment=comment) if comment is not None else self

    @property
    def signature(self) -> tuple[str, ...]:
        return tuple(a.type for a in self.arguments if a.mode != "OUT")

    @property
    def qualified(self) -> str:
        """The function's name with its input types: a name, never its body."""
        return f"{self.schema}.{self.name}({', '.join(self.signature)})"

    @property
    def identity(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.schema, self.name, self.signature)


@dataclass(frozen=True)
class Schema:
    dialect: Dialect
    schemas: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    enums: tuple[EnumType, ...] = ()
    sequences: tuple[Sequence, ...] = ()
    views: tuple[View, ...] = ()
    functions: tuple[Function, ...] = ()
    extensions: tuple[Extension, ...] = ()
    domains: tuple[Domain, ...] = ()
    # PostgreSQL: (schema, role) for each schema whose owner is known (observed) or named
    # (desired; one it does not name is not compared), and (schema, comment) likewise.
    schema_owners: tuple[tuple[str, str], ...] = ()
    schema_comments: tuple[tuple[str, str], ...] = ()
    # Observed side: what the database holds in scope that the engine cannot manage, each
    # named with its construct (`table public.t: row-level security`). Planning refuses a
    # database that holds any (`diff.plan_changes`): nothing is silently left out. Not compared.
    unmanaged: tuple[str, ...] = field(default=(), compare=False)

    def table(self, schema: str, name: str) -> Table | None:
        for table in self.tables:
            if table.schema == schema and table.name == name:
                return table
        return None

    def to_json(self) -> dict[str, Any]:
        plain: dict[str, Any] = json.loads(canonical_json(self))
        return plain

    @functools.cached_property
    def fingerprint_value(self) -> str:
        return "sha256:" + hashlib.sha256(_FINGERPRINT_FORMAT + compact_json(self)).hexdigest()

    def fingerprint(self) -> str:
        """SHA-256 of the compact encoding of the model: equal models, equal fingerprints."""
        return self.fingerprint_value


# Names the compact encoding, so that a change of it can never pass for an equal model.
_FINGERPRINT_FORMAT = b"ptah.schema.model/compact-v1\n"


@functools.cache
def _compared_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.compare)


@functools.cache
def _field_values(cls: type) -> Callable[[Any], Any]:
    names = _compared_fields(cls)
    read = operator.attrgetter(*names)
    if len(names) == 1:
        return lambda value: (read(value),)
    return read


def _model_class(value: Any) -> type:
    cls = type(value)
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"not part of the schema model: {cls.__name__}")
    return cls


def _as_mapping(value: Any) -> dict[str, Any]:
    """Encoder hook: a model object as the mapping of its compared fields."""
    names = _compared_fields(_model_class(value))
    return {name: getattr(value, name) for name in names}


# The getter of each model class, found once: the hook runs for every column of every table.
_VALUE_GETTERS: dict[type, Callable[[Any], Any]] = {}


def _as_values(value: Any) -> Any:
    """Encoder hook: a model object as the values of its compared fields, in declaration
    order. The C encoder does the rest (tuples as lists, a `StrEnum` as its string)."""
    getter = _VALUE_GETTERS.get(type(value))
    if getter is None:
        cls = _model_class(value)
        getter = _compared_of if cls in _LEAN else _field_values(cls)
        _VALUE_GETTERS[type(value)] = getter
    return getter(value)


_compared_of = operator.attrgetter("_compared")


_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_as_mapping
)
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_as_values)


def canonical_json(value: Any) -> bytes:
    """The one JSON encoding the engine writes: sorted keys, no spaces, UTF-8. A model object
    encodes as the mapping of its compared fields."""
    return _CANONICAL.encode(value).encode()


def compact_json(value: Any) -> bytes:
    """What fingerprints hash: like `canonical_json`, but a model object is the list of its
    compared fields' values in declaration order. Each field has one place, so the encoding
    is as unambiguous as the keyed one, at half the size and a third of the time (no key to
    write or sort), which keeps fingerprinting a thousand tables to a few milliseconds."""
    return _COMPACT.encode(value).encode()


T = TypeVar("T", UniqueConstraint, Index, ForeignKey, Check)


def _by_name(item: Any) -> tuple[str, bytes]:
    return (item.name or "", compact_json(item))


def _in_order(items: tuple[T, ...]) -> tuple[T, ...]:
    """Items by name; by content as well where names are missing or repeated (the desired
    side may leave names to the database). Encoding only when it decides something."""
    if len(items) < 2:
        return items
    names = [item.name for item in items]
    if None not in names and len(set(names)) == len(names):
        return tuple(sorted(items, key=lambda item: item.name or ""))
    return tuple(sorted(items, key=_by_name))


# A table's collections besides its columns, in the order `Table` declares them.
TableCollections = tuple[
    tuple[UniqueConstraint, ...],
    tuple[Index, ...],
    tuple[ForeignKey, ...],
    tuple[Check, ...],
    tuple[Grant, ...],
    tuple[Trigger, ...],
]


def canonical_collections(
    uniques: tuple[UniqueConstraint, ...],
    indexes: tuple[Index, ...],
    foreign_keys: tuple[ForeignKey, ...],
    checks: tuple[Check, ...],
    grants: tuple[Grant, ...],
    triggers: tuple[Trigger, ...],
) -> TableCollections:
    """A table's collections in canonical order: what a reader that builds each table once
    gives `Table`, so that `canonical_table` then has nothing to change (making a table again
    costs more than ordering its parts)."""
    return (
        _in_order(uniques),
        _in_order(indexes),
        _in_order(foreign_keys),
        _in_order(checks),
        tuple(sorted(set(grants), key=lambda g: (g.grantee, g.privilege, g.grantable))),
        tuple(sorted(triggers, key=lambda t: t.name)),
    )


def canonical_table(table: Table) -> Table:
    """The same table with every collection but the columns in canonical order."""
    given = (
        table.uniques,
        table.indexes,
        table.foreign_keys,
        table.checks,
        table.grants,
        table.triggers,
    )
    ordered = canonical_collections(*given)
    if ordered == given:
        return table
    uniques, indexes, foreign_keys, checks, grants, triggers = ordered
    return dataclasses.replace(
        table,
        uniques=uniques,
        indexes=indexes,
        foreign_keys=foreign_keys,
        checks=checks,
        grants=grants,
        triggers=triggers,
    )


def canonical_schema(
    dialect: Dialect,
    schemas: list[str] | tuple[str, ...],
    tables: list[Table] | tuple[Table, ...],
    enums: list[EnumType] | tuple[EnumType, ...],
    sequences: list[Sequence] | tuple[Sequence, ...] = (),
    views: list[View] | tuple[View, ...] = (),
    functions: list[Function] | tuple[Function, ...] = (),
    extensions: list[Extension] | tuple[Extension, ...] = (),
    schema_owners: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
    schema_comments: list[tuple[str, str]] | tuple[tuple[str, str], ...] = (),
    unmanaged: list[str] | tuple[str, ...] = (),
    domains: list[Domain] | tuple[Domain, ...] = (),
) -> Schema:
    return Schema(
        dialect=dialect,
        schemas=tuple(sorted(set(schemas))),
        tables=tuple(
            sorted((canonical_table(t) for t in tables), key=lambda t: (t.schema, t.name))
        ),
        enums=tuple(sorted(enums, key=lambda e: (e.schema, e.name))),
        sequences=tuple(sorted(sequences, key=lambda s: (s.schema, s.name))),
        views=tuple(sorted(views, key=lambda v: (v.schema, v.name))),
        functions=tuple(sorted(functions, key=lambda f: f.identity)),
        extensions=tuple(sorted(set(extensions), key=lambda e: (e.name, e.schema))),
        schema_owners=tuple(sorted(set(schema_owners))),
        schema_comments=tuple(sorted(set(schema_comments))),
        unmanaged=tuple(sorted(set(unmanaged))),
        domains=tuple(
            sorted(
                (dataclasses.replace(d, checks=_in_order(d.checks)) for d in domains),
                key=lambda d: (d.schema, d.name),
            )
        ),
    )
