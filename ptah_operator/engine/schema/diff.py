"""Compare an observed and a desired schema; the ordered statements that close the gap.

Order (each phase needs only what the earlier ones made or left):
schemas, enum types and added enum values -> functions (but those over a table's row type or
an enum made again) -> create and alter sequences, release the owner of a sequence that
changes hands or goes -> drop views -> drop foreign keys -> drop other constraints and
indexes -> drop tables -> enums made again, with their columns -> create tables -> add,
change and drop columns -> the other functions -> add keys, checks and indexes -> add
foreign keys -> owners -> sequence OWNED BY -> create or replace views -> owners of views ->
revoke, then grant -> drop functions -> drop sequences -> drop enum types -> drop schemas.
Within a phase, objects go by name (views by what they read, then by name), so the same
inputs always give the same list.

MySQL/MariaDB: a column change is one `MODIFY COLUMN` that restates the column whole from the
desired model (what it leaves out, the server drops); a column whose observed state holds what
the model cannot express (`Column.unmodelled`) is refused, `PlanError`. A foreign key over a
column whose type, character set or collation changes is dropped with the other foreign keys
and added again, unchanged, with them: the server refuses the change under it.

Each statement carries a severity (see `severity`), a category out of `CATEGORIES` (the
bounded vocabulary of the drift report), a reason naming the object but never its data, and
the tables it touches (for the protected-tables policy).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from collections.abc import Sequence as Items
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    Domain,
    EnumType,
    Extension,
    ForeignKey,
    Function,
    Index,
    Schema,
    Sequence,
    Table,
    UniqueConstraint,
    View,
)
from ptah_operator.engine.schema.normalize import (
    expression_columns,
    is_plain_column,
    pg_quote_ident,
    serial_sequence_name,
)
from ptah_operator.engine.schema.render import Renderer
from ptah_operator.engine.schema.severity import (
    Severity,
    enum_change,
    mysql_enum_change,
    type_change,
)
from ptah_operator.engine.schema.triggers import quote

CATEGORIES = (
    "schemas_added",
    "schemas_removed",
    "enums_added",
    "enums_changed",
    "enums_removed",
    "tables_added",
    "tables_removed",
    "tables_changed",
    "columns_added",
    "columns_removed",
    "columns_changed",
    "indexes_added",
    "indexes_removed",
    "constraints_added",
    "constraints_removed",
    "foreign_keys_added",
    "foreign_keys_removed",
    "sequences_added",
    "sequences_changed",
    "sequences_removed",
    "views_added",
    "views_changed",
    "views_removed",
    "grants_added",
    "grants_removed",
    "owners_changed",
    "functions_added",
    "functions_changed",
    "functions_removed",
    "extensions_changed",
    "triggers_changed",
    "domains_changed",
)


class PlanError(ValueError):
    """A change the engine will not plan (it names the object, never data)."""


@dataclass(frozen=True)
class Requirement:
    """What the rows a statement finds must satisfy for it to succeed, in a form a check can
    query without running the statement (MySQL commits DDL as it runs it; see `checks`):
    `unique` (no two rows share non-NULL `columns`, each maybe cut to a prefix), `notNull`
    (no NULL in `columns`), `check` (no row makes `expression` false), `references` (every
    non-NULL `columns` value is found in `ref_table.ref_columns`). Names only the objects."""

    kind: str
    table: str
    columns: tuple[str, ...] = ()
    prefixes: tuple[int | None, ...] = ()
    expression: str | None = None
    ref_table: str | None = None
    ref_columns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {"kind": self.kind, "table": self.table}
        if self.columns:
            value["columns"] = list(self.columns)
        if any(p is not None for p in self.prefixes):
            value["prefixes"] = list(self.prefixes)
        if self.expression is not None:
            value["expression"] = self.expression
        if self.ref_table is not None:
            value["refTable"] = self.ref_table
            value["refColumns"] = list(self.ref_columns)
        return value

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Requirement:
        return cls(
            kind=value["kind"],
            table=value["table"],
            columns=tuple(value.get("columns", ())),
            prefixes=tuple(value.get("prefixes", ())),
            expression=value.get("expression"),
            ref_table=value.get("refTable"),
            ref_columns=tuple(value.get("refColumns", ())),
        )


@dataclass(frozen=True)
class Statement:
    sql: str
    severity: Severity
    category: str
    reason: str
    tables: tuple[str, ...]
    # False for statements PostgreSQL cannot run, or run usefully, inside a transaction block.
    transactional: bool = True
    requires: tuple[Requirement, ...] = ()
    # A drop whose object has the shape of one the same plan adds: the name of that object.
    # Renames are planned as a drop and an add (the data does not follow); this says so.
    looks_like_rename_to: str | None = None

    def to_json(self) -> dict[str, Any]:
        value: dict[str, Any] = {
            "sql": self.sql,
            "severity": self.severity.value,
            "category": self.category,
            "reason": self.reason,
            "tables": list(self.tables),
            "transactional": self.transactional,
        }
        if self.requires:
            value["requires"] = [r.to_json() for r in self.requires]
        if self.looks_like_rename_to is not None:
            value["looksLikeRenameTo"] = self.looks_like_rename_to
        return value


T = TypeVar("T", UniqueConstraint, Index, ForeignKey, Check)
_Kind = Literal["uniques", "checks", "indexes", "foreign_keys"]


def _match(desired: list[T], observed: list[T]) -> tuple[list[T], list[T]]:
    """(desired items with no observed twin, observed items with no desired twin).

    Items are twins when their content (`key()`) is equal and, where the desired side names
    the item, their names are equal too. Named items are matched first: an unnamed one takes
    any twin, so it must not take the one a named item of the same content needs. Of several
    twins, an item takes the first the observed side lists.
    """
    if desired == observed:
        return [], []
    found = _match_named(desired, observed)
    return found if found is not None else _match_any(desired, observed)


def _match_any(desired: list[T], observed: list[T]) -> tuple[list[T], list[T]]:
    """`_match` on any lists."""
    # Each item's key is built once: `key()` makes a tuple per call, and the sides differ on
    # most tables of a plan (MySQL's observed indexes include the ones backing its keys).
    twins: dict[Any, list[int]] = {}
    for position, item in enumerate(observed):
        twins.setdefault(item.key(), []).append(position)
    taken: set[int] = set()
    unmatched: set[int] = set()
    named = [i for i, item in enumerate(desired) if item.name is not None]
    unnamed = [i for i, item in enumerate(desired) if item.name is None]
    for position in named + unnamed:
        item = desired[position]
        candidates = twins.get(item.key(), [])
        twin = next(
            (o for o in candidates if item.name is None or item.name == observed[o].name),
            None,
        )
        if twin is None:
            unmatched.add(position)
        else:
            candidates.remove(twin)
            taken.add(twin)
    gone = [item for position, item in enumerate(observed) if position not in taken]
    return [desired[i] for i in sorted(unmatched)], gone


# What `_Planner.pairs` gives for two equal lists, shared by every table and kind: tuples,
# which no caller can change.
_NO_PAIRS: tuple[Items[Any], Items[Any]] = ((), ())


def _match_named(desired: list[T], observed: list[T]) -> tuple[list[T], list[T]] | None:
    """`_match` where every item on both sides has a name of its own (most tables: a
    server names every index and constraint, and so do most desired schemas), else None.
    An item can then be the twin only of the item of its name on the other side, so each
    pair is one name lookup, and an equal pair needs no keys built."""
    by_name = {item.name: item for item in observed}
    if len(by_name) != len(observed) or None in by_name:
        return None
    names = [item.name for item in desired]
    if None in names or len(set(names)) != len(names):
        return None
    matched: set[str | None] = set()
    missing: list[T] = []
    for item in desired:
        twin = by_name.get(item.name)
        if twin is not None and (twin == item or twin.key() == item.key()):
            matched.add(item.name)
        else:
            missing.append(item)
    return missing, [item for item in observed if item.name not in matched]


class _Planner:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.pg = dialect.family == "postgresql"
        self.r = Renderer(dialect)
        self.out: list[Statement] = []
        # How a column type names each enum type either schema knows (see `enum_type_names`).
        self.enum_types: set[str] = set()
        # PostgreSQL, per table: the checks and partial or expression indexes that stay but
        # read a column leaving an enum type. PostgreSQL rebuilds them from text in which a
        # literal names the former type (`m = 'x'::mood`), and finds no operator: they are
        # dropped before the column changes and made again after.
        self.rebuilt: dict[str, tuple[list[Check], list[Index]]] = {}
        # MySQL/MariaDB: tables whose primary key changes while a column is AUTO_INCREMENT
        # on either side. The server wants an AUTO_INCREMENT column to lead a key at every
        # statement (errno 1075): the key and those columns change in one ALTER TABLE.
        self.auto_keys: set[str] = set()
        # Kept tables, by (schema, name), whose columns are equal on both sides: most tables
        # of a plan. Compared once (`plan_changes`); several passes skip such a table's
        # columns on it, and none needs to find one of its columns by name.
        self.same_columns: set[tuple[str, str]] = set()
        # `_match` of one kind of a kept table's items, by (observed table, desired table,
        # kind): the drop and the add passes, and the checks around retyped columns, pair
        # the same lists. Both tables live as long as the plan does.
        self._pairs: dict[tuple[int, int, str], tuple[Items[Any], Items[Any]]] = {}

    def pairs(self, old: Table, new: Table, kind: _Kind) -> tuple[Items[Any], Items[Any]]:
        """`_match(new.<kind>, old.<kind>)`: (desired items missing, observed items gone)."""
        key = (id(old), id(new), kind)
        found = self._pairs.get(key)
        if found is None:
            observed, desired = getattr(old, kind), getattr(new, kind)
            # Most tables of a plan, for every kind: equal lists, nothing to pair.
            found = _NO_PAIRS if observed == desired else _match(list(desired), list(observed))
            self._pairs[key] = found
        return found

    def emit(
        self,
        sql: str,
        severity: Severity,
        category: str,
        reason: str,
        tables: tuple[str, ...] = (),
        *,
        transactional: bool = True,
        requires: tuple[Requirement, ...] = (),
        looks_like_rename_to: str | None = None,
    ) -> None:
        # PostgreSQL's dry run runs the statements themselves: its plans carry no requirements.
        needs = () if self.pg else requires
        if looks_like_rename_to is not None:
            reason += (
                f"; it looks like a rename to {looks_like_rename_to}, which is planned as a "
                "drop and an add: the data does not follow"
            )
        self.out.append(
            Statement(
                sql, severity, category, reason, tables, transactional, needs, looks_like_rename_to
            )
        )


def plan_changes(observed: Schema, desired: Schema) -> list[Statement]:
    if observed.dialect.family != desired.dialect.family:
        raise PlanError("the desired schema was read for another dialect")
    if observed.unmanaged:
        shown = "; ".join(observed.unmanaged[:8])
        more = f" (and {len(observed.unmanaged) - 8} more)" if len(observed.unmanaged) > 8 else ""
        raise PlanError(
            f"the database holds what the engine cannot manage: {shown}{more}. Nothing is "
            "planned rather than leave it out; manage it outside the engine's scope"
        )
    p = _Planner(observed.dialect)
    r = p.r
    observed_tables = {(t.schema, t.name): t for t in observed.tables}
    desired_tables = {(t.schema, t.name): t for t in desired.tables}
    kept = sorted(observed_tables.keys() & desired_tables.keys())
    p.same_columns = {
        key for key in kept if observed_tables[key].columns == desired_tables[key].columns
    }
    added = sorted(desired_tables.keys() - observed_tables.keys())
    removed = sorted(observed_tables.keys() - desired_tables.keys())
    p.enum_types = {
        name for enum in (*observed.enums, *desired.enums) for name in enum_type_names(enum)
    }
    if not p.pg:
        for key in kept:
            _table_options(observed_tables[key], desired_tables[key])
            if _auto_columns(observed_tables[key], desired_tables[key]):
                p.auto_keys.add(observed_tables[key].qualified)
    else:
        for key in kept:
            _rebuilt_over_enums(p, observed_tables[key], desired_tables[key])

    for schema in sorted(set(desired.schemas) - set(observed.schemas)):
        p.emit(r.create_schema(schema), Severity.SAFE, "schemas_added", f"create schema {schema}")
    _schema_comments(p, observed, desired)
    gone_extensions = _extensions(p, observed, desired)
    observed_enums = {(e.schema, e.name): e for e in observed.enums}
    desired_enums = {(e.schema, e.name): e for e in desired.enums}
    for key in sorted(desired_enums.keys() - observed_enums.keys()):
        enum = desired_enums[key]
        p.emit(r.create_enum(enum), Severity.SAFE, "enums_added", f"create enum {enum.qualified}")
    remade_enums: list[tuple[EnumType, EnumType]] = []
    for key in sorted(desired_enums.keys() & observed_enums.keys()):
        if not _enum_values(p, observed_enums[key], desired_enums[key]):
            remade_enums.append((observed_enums[key], desired_enums[key]))
    _domains(p, observed, desired)
    enum_types = {name for old, _ in remade_enums for name in enum_type_names(old)}
    remade_triggers = _drop_triggers(
        p, observed, desired, observed_tables, desired_tables, kept, enum_types
    )
    remade_functions = _functions(p, observed, desired, enum_types, late=False)
    late_owners = _sequences_early(p, observed, desired)
    affected, touched = _reshaped(
        observed_tables, desired_tables, kept, added, removed, enum_types, p.same_columns
    )
    view_drops, view_creates = _views(p, observed, desired, affected, touched)
    for view, category, reason in view_drops:
        p.emit(r.drop_view(view), Severity.WARNING, category, reason)

    # Foreign keys go first: a table or a key they reference may be dropped next.
    fk_drops: list[tuple[Table, ForeignKey, bool]] = []
    for key in removed:
        table = observed_tables[key]
        fk_drops += [(table, fk, False) for fk in table.foreign_keys]
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        _, gone = p.pairs(old, new, "foreign_keys")
        fk_drops += [(old, fk, True) for fk in gone]
    dropped = {(table.qualified, fk.name) for table, fk, _ in fk_drops}
    relinked = [
        (table, fk, columns)
        for table, fk, columns in _linked_foreign_keys(
            p, observed_tables, desired_tables, kept, enum_types
        )
        if (table.qualified, fk.name) not in dropped
    ]
    for table, fk, table_kept in fk_drops:
        p.emit(
            r.drop_foreign_key(table, fk),
            Severity.DESTRUCTIVE,
            "foreign_keys_removed",
            f"drop foreign key {fk.name} on {table.qualified}",
            (table.qualified,),
        )
        if table_kept and fk.backing_index is not None:
            new = desired_tables[(table.schema, table.name)]
            implicit = next(i for i in table.indexes if i.name == fk.backing_index)
            wanted, _ = _match(list(new.indexes), [implicit])
            if len(wanted) == len(new.indexes):
                p.emit(
                    r.drop_index(table, implicit),
                    Severity.WARNING,
                    "indexes_removed",
                    f"drop index {implicit.name} made for foreign key {fk.name} on "
                    f"{table.qualified}",
                    (table.qualified,),
                )

    for table, fk, columns in relinked:
        p.emit(
            r.drop_foreign_key(table, fk),
            Severity.WARNING,
            "columns_changed",
            f"drop foreign key {fk.name} on {table.qualified} while {columns} change type; "
            "it is added again after them",
            (table.qualified,),
        )
        renamed = _renamed_backing_index(table, fk)
        if renamed is not None:
            p.emit(
                r.drop_index(table, renamed),
                Severity.WARNING,
                "columns_changed",
                f"drop index {renamed.name} made for foreign key {fk.name} on "
                f"{table.qualified}; it is made again, by name, before the key",
                (table.qualified,),
            )
    for key in kept:
        _drop_constraints(p, observed_tables[key], desired_tables[key])
    added_shapes: dict[tuple[Any, ...], list[str]] = {}
    for key in added:
        added_shapes.setdefault(_table_shape(desired_tables[key]), []).append(
            desired_tables[key].qualified
        )
    for key in removed:
        table = observed_tables[key]
        twins = added_shapes.get(_table_shape(table), [])
        p.emit(
            r.drop_table(table),
            Severity.DESTRUCTIVE,
            "tables_removed",
            f"drop table {table.qualified}",
            (table.qualified,),
            looks_like_rename_to=twins[0] if len(twins) == 1 else None,
        )
    for old_enum, new_enum in remade_enums:
        _remake_enum(p, old_enum, new_enum, observed_tables, desired_tables, kept)
    for key in added:
        _create_table(p, desired_tables[key])
    for key in kept:
        _engine(p, observed_tables[key], desired_tables[key])
        _columns(p, observed_tables[key], desired_tables[key])
    remade_functions |= _functions(p, observed, desired, enum_types, late=True)
    for key in kept:
        _add_constraints(p, observed_tables[key], desired_tables[key])
    _domains_late(p, observed, desired)
    for key in added:
        table = desired_tables[key]
        for fk in table.foreign_keys:
            p.emit(
                r.add_constraint(table, r.foreign_key_clause(fk)),
                Severity.SAFE,
                "foreign_keys_added",
                f"add foreign key {fk.name or ''} on new table {table.qualified}".replace(
                    "  ", " "
                ),
                (table.qualified,),
            )
    for table, fk, columns in relinked:
        renamed = _renamed_backing_index(table, fk)
        if renamed is not None:
            p.emit(
                r.create_index(table, renamed),
                Severity.WARNING,
                "columns_changed",
                f"create index {renamed.name} on {table.qualified} again for foreign key {fk.name}",
                (table.qualified,),
            )
        p.emit(
            r.add_constraint(table, r.foreign_key_clause(fk)),
            Severity.WARNING,
            "columns_changed",
            f"add foreign key {fk.name} on {table.qualified} again now that {columns} changed "
            "type; existing rows must satisfy it",
            (table.qualified,),
        )
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        missing, _ = p.pairs(old, new, "foreign_keys")
        for fk in missing:
            referenced = (fk.ref_schema, fk.ref_table)
            known = referenced in observed_tables and all(
                old.column(c) is not None for c in fk.columns
            )
            p.emit(
                r.add_constraint(new, r.foreign_key_clause(fk)),
                Severity.WARNING,
                "foreign_keys_added",
                f"add foreign key on {new.qualified}; existing rows must satisfy it",
                (new.qualified,),
                requires=(
                    Requirement(
                        "references",
                        new.qualified,
                        fk.columns,
                        ref_table=_qualified(*referenced),
                        ref_columns=fk.ref_columns,
                    ),
                )
                if known
                else (),
            )
    _create_triggers(p, observed_tables, desired_tables, kept, added, remade_triggers)
    _owners(
        p,
        observed,
        desired,
        {new.qualified for _, new in remade_enums},
        remade_functions,
        late_owners,
    )
    for sequence, severity, category in late_owners:
        p.emit(
            r.sequence_owner(sequence),
            severity,
            category,
            f"sequence {sequence.qualified} owned by {sequence.owner_table}.{sequence.owner_column}",
            (f"{sequence.schema}.{sequence.owner_table}",),
        )
    for view, replace, severity, category, reason in view_creates:
        p.emit(r.create_view(view, replace=replace), severity, category, reason)
    _view_owners(p, observed, desired, [v for v, replace, *_ in view_creates if not replace])
    _grants(p, observed_tables, desired_tables, kept + added)
    if p.pg:
        _object_comments(p, observed, desired)
    _drop_functions(p, observed, desired, enum_types)
    gone_sequences = {(s.schema, s.name) for s in observed.sequences} - {
        (s.schema, s.name) for s in desired.sequences
    }
    for sequence in observed.sequences:
        if (sequence.schema, sequence.name) in gone_sequences:
            p.emit(
                r.drop_sequence(sequence),
                Severity.DESTRUCTIVE,
                "sequences_removed",
                f"drop sequence {sequence.qualified}; its current value is lost",
            )
    wanted_domains = {d.qualified for d in desired.domains}
    for domain in reversed(observed.domains):
        if domain.qualified not in wanted_domains:
            p.emit(
                r.drop_domain(domain),
                Severity.DESTRUCTIVE,
                "domains_changed",
                f"drop domain {domain.qualified}",
            )
    for key in sorted(observed_enums.keys() - desired_enums.keys()):
        enum = observed_enums[key]
        p.emit(
            r.drop_enum(enum), Severity.DESTRUCTIVE, "enums_removed", f"drop enum {enum.qualified}"
        )
    for old_enum, _ in remade_enums:
        p.emit(
            r.drop_enum(dataclasses.replace(old_enum, name=retired_enum_name(old_enum.name))),
            Severity.DESTRUCTIVE,
            "enums_changed",
            f"drop the former enum {old_enum.qualified}, now that nothing uses it",
        )
    for extension in gone_extensions:
        p.emit(
            r.drop_extension(extension),
            Severity.DESTRUCTIVE,
            "extensions_changed",
            f"drop extension {extension.name}; what it provides goes with it",
        )
    # `public` is every database's own: a desired schema with nothing in it keeps it.
    for schema in sorted(set(observed.schemas) - set(desired.schemas) - {"public"}):
        p.emit(
            r.drop_schema(schema),
            Severity.DESTRUCTIVE,
            "schemas_removed",
            f"drop schema {schema}; the apply fails if it still holds what the engine "
            "does not manage",
        )
    return p.out


def _domains(p: _Planner, observed: Schema, desired: Schema) -> None:
    """Make new domains and change kept ones (default, NOT NULL, checks), before functions
    and tables use them; those the desired schema leaves out are dropped late. A domain's
    base type or collation is not changed in place: refused."""
    r = p.r
    old = {d.qualified: d for d in observed.domains}
    # A domain over another comes after it.
    names = {name: d for d in desired.domains for name in _domain_names(d)}
    ordered: list[Domain] = []
    remaining = list(desired.domains)
    while remaining:
        ready = [
            d
            for d in remaining
            if not (
                (base := names.get(d.type.removesuffix("[]"))) is not None and base in remaining
            )
        ] or remaining[:1]
        ordered += ready
        remaining = [d for d in remaining if d not in ready]
    for domain in ordered:
        before = old.get(domain.qualified)
        if before is None:
            p.emit(
                r.create_domain(domain),
                Severity.SAFE,
                "domains_changed",
                f"create domain {domain.qualified}",
            )
            continue
        if (before.type, before.collation) != (domain.type, domain.collation):
            raise PlanError(
                f"domain {domain.qualified}: changing its base type or collation is not "
                "planned (its columns would have to be converted); make a new domain"
            )
        why = f"change domain {domain.qualified}"
        if before.default != domain.default:
            action = f"SET {r.default(domain.default)}" if domain.default else "DROP DEFAULT"
            p.emit(r.alter_domain(domain, action), Severity.SAFE, "domains_changed", why)
        if not before.nullable and domain.nullable:
            p.emit(
                r.alter_domain(domain, "DROP NOT NULL"),
                Severity.SAFE,
                "domains_changed",
                why,
            )
        _, gone = _match(list(domain.checks), list(before.checks))
        for check in gone:
            p.emit(
                r.alter_domain(domain, f"DROP CONSTRAINT {r.q(check.name or '')}"),
                Severity.DESTRUCTIVE,
                "domains_changed",
                f"drop check {check.name} of domain {domain.qualified}",
            )


def _domains_late(p: _Planner, observed: Schema, desired: Schema) -> None:
    """What a kept domain gains that its values must pass (a check, NOT NULL): once the
    columns that go are gone (PostgreSQL refuses ADD CONSTRAINT on a domain an array column
    uses)."""
    r = p.r
    old = {d.qualified: d for d in observed.domains}
    for domain in desired.domains:
        before = old.get(domain.qualified)
        if before is None:
            continue
        if before.nullable and not domain.nullable:
            p.emit(
                r.alter_domain(domain, "SET NOT NULL"),
                Severity.DESTRUCTIVE,
                "domains_changed",
                f"change domain {domain.qualified}; a NULL in a column of it fails",
            )
        missing, _ = _match(list(domain.checks), list(before.checks))
        # Named ones first: an unnamed check takes `domain_check`, which one may be named.
        for check in sorted(missing, key=lambda c: c.name is None):
            p.emit(
                r.alter_domain(domain, f"ADD {r.check_clause(check)}"),
                Severity.WARNING,
                "domains_changed",
                f"add a check to domain {domain.qualified}; existing values must pass it",
            )


def _domain_names(domain: Domain) -> set[str]:
    """How a column or another domain names `domain` (as `enum_type_names` does an enum)."""
    return {
        f"{domain.schema}.{domain.name}",
        f"{pg_quote_ident(domain.schema)}.{pg_quote_ident(domain.name)}",
    }


def _object_comments(p: _Planner, observed: Schema, desired: Schema) -> None:
    """PostgreSQL: comments on views, sequences, types, domains, functions, indexes,
    constraints and triggers, where the desired schema gives one: set when it differs from
    the object's, or when this plan makes the object (again; it comes back without one)."""
    r = p.r
    made = {s.sql for s in p.out}
    targets: list[tuple[str, str, str | None, str, bool]] = []

    def want(category: str, target: str, comment: str | None, before: Any, dropped: str) -> None:
        if comment is None:
            return
        remade = before is None or dropped in made
        if remade or (before.comment or "") != comment:
            targets.append((category, target, before.comment if before else None, comment, remade))

    # Per kind: (category, observed, desired, the COMMENT ON target, the key the two sides
    # share, the statement that drops or renames the object when this plan makes it again).
    kinds: tuple[
        tuple[
            str,
            tuple[Any, ...],
            tuple[Any, ...],
            Callable[[Any], str],
            Callable[[Any], Any],
            Callable[[Any, Any], str],
        ],
        ...,
    ] = (
        (
            "views_changed",
            observed.views,
            desired.views,
            lambda v: (
                f"{'MATERIALIZED VIEW' if v.materialized else 'VIEW'} " + r.table(v.schema, v.name)
            ),
            lambda v: v.qualified,
            lambda _, before: r.drop_view(before) if before else "",
        ),
        (
            "sequences_changed",
            observed.sequences,
            desired.sequences,
            lambda s: f"SEQUENCE {r.table(s.schema, s.name)}",
            lambda s: s.qualified,
            lambda s, _: r.drop_sequence(s),
        ),
        (
            "enums_changed",
            observed.enums,
            desired.enums,
            lambda e: f"TYPE {r.table(e.schema, e.name)}",
            lambda e: e.qualified,
            lambda e, _: r.rename_enum(e, retired_enum_name(e.name)),
        ),
        (
            "domains_changed",
            observed.domains,
            desired.domains,
            lambda d: f"DOMAIN {r.table(d.schema, d.name)}",
            lambda d: d.qualified,
            lambda d, _: r.drop_domain(d),
        ),
        (
            "functions_changed",
            observed.functions,
            desired.functions,
            lambda f: f"FUNCTION {r.function_name(f)}",
            lambda f: f.identity,
            lambda _, before: r.drop_function(before) if before else "",
        ),
    )
    for category, before_all, after_all, spell, key, undo in kinds:
        old_by_key = {key(o): o for o in before_all}
        for item in after_all:
            if item.comment is None:
                continue
            before = old_by_key.get(key(item))
            want(category, spell(item), item.comment, before, undo(item, before))
    old_tables = {t.qualified: t for t in observed.tables}
    for table in desired.tables:
        before_table = old_tables.get(table.qualified)
        for index in table.indexes:
            if index.comment is None:
                continue
            twin = next(
                (i for i in (before_table.indexes if before_table else ()) if i.name == index.name),
                None,
            )
            if twin is not None and twin.key() != index.key():
                twin = None
            want(
                "indexes_added",
                f"INDEX {r.table(table.schema, index.name or '')}",
                index.comment,
                twin,
                r.drop_index(before_table, twin) if before_table and twin else "",
            )
        for trigger in table.triggers:
            if trigger.comment is None:
                continue
            twin_trigger = next(
                (
                    t
                    for t in (before_table.triggers if before_table else ())
                    if t.name == trigger.name
                ),
                None,
            )
            want(
                "triggers_changed",
                f"TRIGGER {r.q(trigger.name)} ON {r.table(table.schema, table.name)}",
                trigger.comment,
                twin_trigger,
                r.drop_trigger(before_table, twin_trigger) if before_table and twin_trigger else "",
            )
        every: tuple[Any, ...] = (
            *([table.primary_key] if table.primary_key else []),
            *table.uniques,
            *table.foreign_keys,
            *table.checks,
        )
        constraints = [c for c in every if c.comment is not None]
        if not constraints:
            continue
        existing: list[Any] = []
        if before_table is not None:
            existing = [
                *([before_table.primary_key] if before_table.primary_key else []),
                *before_table.uniques,
                *before_table.foreign_keys,
                *before_table.checks,
            ]
        for constraint in constraints:
            twin_constraint = next(
                (
                    c
                    for c in existing
                    if c.name == constraint.name
                    and type(c) is type(constraint)
                    and c.key() == constraint.key()
                ),
                None,
            )
            dropped = ""
            if before_table is not None and twin_constraint is not None:
                dropped = r.drop_constraint(before_table, twin_constraint.name or "")
            want(
                "constraints_added",
                f"CONSTRAINT {r.q(constraint.name or '')} ON {r.table(table.schema, table.name)}",
                constraint.comment,
                twin_constraint,
                dropped,
            )
    for category, target, _, comment, remade in targets:
        p.emit(
            r.comment_on(target, comment),
            Severity.SAFE,
            category,
            f"comment on {target.split(' ', 1)[0].lower()}"
            + (" made by this plan" if remade else ""),
        )


def _mentions(expression: str | None, column: str) -> bool:
    if expression is None:
        return False
    quoted = '"' + column.replace('"', '""') + '"'
    return bool(re.search(rf"(?<![\w$]){re.escape(column)}(?![\w$])", expression)) or (
        quoted in expression
    )


def _rebuilt_over_enums(p: _Planner, old: Table, new: Table) -> None:
    """See `_Planner.rebuilt`."""
    if not p.enum_types:
        return
    leaving = [
        c.name
        for c in old.columns
        if c.type.removesuffix("[]") in p.enum_types
        and (wanted := new.column(c.name)) is not None
        and wanted.type != c.type
    ]
    if not leaving:
        return
    _, gone_checks = p.pairs(old, new, "checks")
    _, gone_indexes = p.pairs(old, new, "indexes")
    checks = [
        c for c in old.checks if c not in gone_checks and any(_mentions(c.expr, n) for n in leaving)
    ]
    indexes = [
        i
        for i in old.indexes
        if i not in gone_indexes
        and any(
            _mentions(i.where, n)
            or any(not is_plain_column(k) and _mentions(k, n) for k in i.columns)
            for n in leaving
        )
    ]
    if checks or indexes:
        p.rebuilt[old.qualified] = (checks, indexes)


def _auto_columns(old: Table, new: Table) -> set[str]:
    """MySQL/MariaDB: the AUTO_INCREMENT columns (on either side) of a table whose primary key
    changes; empty when it does not (see `_Planner.auto_keys`)."""
    before = old.primary_key.key() if old.primary_key else None
    after = new.primary_key.key() if new.primary_key else None
    if before == after:
        return set()
    return {c.name for c in (*old.columns, *new.columns) if c.identity == "auto_increment"}


def _auto_key(
    p: _Planner, old: Table, new: Table, own_checks: dict[str, tuple[Check, ...]]
) -> set[str]:
    """One ALTER TABLE: drop the former primary key, add, change or drop the AUTO_INCREMENT
    columns, add the new key. Returns the columns it took care of."""
    r = p.r
    autos = _auto_columns(old, new)
    clauses: list[str] = []
    severities: list[Severity] = [Severity.WARNING]
    reasons: list[str] = []
    if old.primary_key is not None:
        clauses.append("DROP PRIMARY KEY")
        severities.append(Severity.DESTRUCTIVE)
        reasons.append("drop its primary key")
    for column in new.columns:
        if column.name not in autos:
            continue
        before = old.column(column.name)
        if before is None:
            clauses.append(f"ADD COLUMN {r.column_definition(column)}")
            reasons.append(f"add column {column.name}")
        elif before != column:
            _refuse_unmodelled(old, before)
            clauses.append(
                f"MODIFY COLUMN {r.column_definition(column, own_checks.get(column.name, ()))}"
            )
            found = _column_reasons(p, before, column)
            severities += [s for s, _ in found]
            reasons.append(f"change column {column.name}: " + ", ".join(t for _, t in found))
    for column in old.columns:
        if column.name in autos and new.column(column.name) is None:
            clauses.append(f"DROP COLUMN {r.q(column.name)}")
            severities.append(Severity.DESTRUCTIVE)
            reasons.append(f"drop column {column.name}")
    requires: tuple[Requirement, ...] = ()
    if new.primary_key is not None:
        clauses.append(f"ADD {r.primary_key_clause(new.primary_key)}")
        reasons.append("add its primary key; existing rows must be unique and not null")
        columns = new.primary_key.columns
        if _existing(old, columns):
            requires = (
                Requirement("notNull", new.qualified, columns),
                Requirement("unique", new.qualified, columns),
            )
    p.emit(
        r.alter(new, ", ".join(clauses)),
        max(severities, key=lambda s: s.rank),
        "columns_changed",
        f"{new.qualified}: " + "; ".join(reasons) + ", in one statement (an AUTO_INCREMENT "
        "column must lead a key)",
        (new.qualified,),
        requires=requires,
    )
    return autos


def _table_options(old: Table, new: Table) -> None:
    """MySQL/MariaDB: a table's default collation is what its columns are read against; a
    change of it is not planned (its columns would have to be restated against the new one)."""
    if (
        new.collation is not None
        and old.collation is not None
        and new.collation.lower() != old.collation.lower()
    ):
        raise PlanError(
            f"table {new.qualified}: changing its default collation ({old.collation} to "
            f"{new.collation}) is not planned; convert it by hand"
        )


def _engine(p: _Planner, old: Table, new: Table) -> None:
    if p.pg or new.engine is None or (old.engine or "").lower() == new.engine.lower():
        return
    p.emit(
        p.r.set_engine(new),
        Severity.WARNING,
        "tables_changed",
        f"change the storage engine of {new.qualified} to {new.engine}; the table is copied",
        (new.qualified,),
    )


def _schema_comments(p: _Planner, observed: Schema, desired: Schema) -> None:
    """Comments on schemas, where the desired schema gives one (COMMENT ... IS NULL gives
    none: "")."""
    old = dict(observed.schema_comments)
    for schema, comment in desired.schema_comments:
        if old.get(schema, "") != comment:
            p.emit(
                p.r.schema_comment(schema, comment),
                Severity.SAFE,
                "schemas_added",
                f"comment on schema {schema}",
            )


def _extensions(p: _Planner, observed: Schema, desired: Schema) -> list[Extension]:
    """Create extensions, move them to their schema, set their comments; returns those to
    drop (last: what is made of their types and functions goes first)."""
    r = p.r
    old = {e.name: e for e in observed.extensions}
    new = {e.name: e for e in desired.extensions}
    for name in sorted(new.keys() - old.keys()):
        extension = new[name]
        p.emit(
            r.create_extension(extension),
            Severity.PRIVILEGE,
            "extensions_changed",
            f"create extension {name} in schema {extension.schema}; its script runs with the "
            "rights the extension asks for",
        )
        if extension.comment is not None:
            p.emit(
                r.extension_comment(extension),
                Severity.SAFE,
                "extensions_changed",
                f"comment on extension {name}",
            )
    for name in sorted(new.keys() & old.keys()):
        before, after = old[name], new[name]
        if before.schema != after.schema:
            p.emit(
                r.extension_schema(after),
                Severity.WARNING,
                "extensions_changed",
                f"move extension {name} to schema {after.schema}; what names its objects "
                "qualified must follow",
            )
        if after.comment is not None and (before.comment or "") != after.comment:
            p.emit(
                r.extension_comment(after),
                Severity.SAFE,
                "extensions_changed",
                f"comment on extension {name}",
            )
    return [old[name] for name in sorted(old.keys() - new.keys())]


def _function_ref(function: Function) -> str:
    """How a trigger names `function` (see `triggers`)."""
    return f"{quote(function.schema)}.{quote(function.name)}"


def _drop_triggers(
    p: _Planner,
    observed: Schema,
    desired: Schema,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
    remade_enum_types: AbstractSet[str],
) -> set[tuple[str, str]]:
    """Drop, first, the triggers that go or change, and those PostgreSQL would not let stay
    while what they use changes: their function dropped or made again, a column they name
    (UPDATE OF, WHEN) dropped or retyped. Returns those to make again, (table, trigger)."""
    if not any(t.triggers for t in observed.tables):
        return set()
    r = p.r
    wanted = {f.identity: f for f in desired.functions}
    going: set[str] = set()
    for function in observed.functions:
        after = wanted.get(function.identity)
        if (
            after is None
            or _uses_a_type(function, remade_enum_types)
            or (function.returns, function.returns_set, function.table_columns)
            != (after.returns, after.returns_set, after.table_columns)
            or function.arguments != after.arguments
        ):
            going.add(_function_ref(function))
    remade: set[tuple[str, str]] = set()
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        if not old.triggers:
            continue
        new_triggers = {t.name: t for t in new.triggers}
        moved = {
            c.name
            for c in old.columns
            if (wanted_column := new.column(c.name)) is None
            or (c.type, c.collation) != (wanted_column.type, wanted_column.collation)
            or c.type.removesuffix("[]") in remade_enum_types
        }
        for trigger in old.triggers:
            after_trigger = new_triggers.get(trigger.name)
            names = " ".join(trigger.events) + " " + (trigger.when or "")
            reason = None
            if after_trigger is None:
                reason = f"drop trigger {trigger.name} on {old.qualified}"
            elif after_trigger != trigger:
                reason = (
                    f"drop trigger {trigger.name} on {old.qualified} to make it again: it changes"
                )
            elif trigger.function in going:
                reason = (
                    f"drop trigger {trigger.name} on {old.qualified} while its function is "
                    "dropped or made again"
                )
            elif any(re.search(rf"(?<![\w$]){re.escape(c)}(?![\w$])", names) for c in moved):
                reason = (
                    f"drop trigger {trigger.name} on {old.qualified} while a column it names "
                    "changes"
                )
            if reason is None:
                continue
            p.emit(
                r.drop_trigger(old, trigger),
                Severity.WARNING,
                "triggers_changed",
                reason,
                (old.qualified,),
            )
            if after_trigger is not None:
                remade.add((old.qualified, trigger.name))
    return remade


def _create_triggers(
    p: _Planner,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
    added: list[tuple[str, str]],
    remade: set[tuple[str, str]],
) -> None:
    """Make the triggers of new tables, new triggers and those dropped to be made again, once
    tables, columns and functions are in place."""
    r = p.r
    for key in added:
        table = desired_tables[key]
        for trigger in table.triggers:
            p.emit(
                r.create_trigger(table, trigger),
                Severity.SAFE,
                "triggers_changed",
                f"create trigger {trigger.name} on new table {table.qualified}",
                (table.qualified,),
            )
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        existing = {t.name for t in old.triggers}
        for trigger in new.triggers:
            if trigger.name in existing and (new.qualified, trigger.name) not in remade:
                continue
            p.emit(
                r.create_trigger(new, trigger),
                Severity.WARNING,
                "triggers_changed",
                f"create trigger {trigger.name} on {new.qualified}; writes to the table run it",
                (new.qualified,),
            )


def _renamed_backing_index(table: Table, fk: ForeignKey) -> Index | None:
    """MySQL/MariaDB: the index the server made for `fk`, where it is named otherwise than
    the key (after its first column, as for a key made without a name). Added again by
    name, the key would take a new index named after itself: the index is dropped with the
    key and made again, by its name, before the key, which then uses it."""
    if fk.backing_index is None or fk.backing_index == fk.name:
        return None
    return next(
        (
            dataclasses.replace(i, implicit=False)
            for i in table.indexes
            if i.name == fk.backing_index
        ),
        None,
    )


def _linked_foreign_keys(
    p: _Planner,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
    remade_enums: AbstractSet[str] = frozenset(),
) -> list[tuple[Table, ForeignKey, str]]:
    """Each existing foreign key of a kept table that uses, on either side, a column changed
    in a way the key cannot stand while the plan changes its columns one at a time, with
    those columns named: the key is dropped before the columns change and added again, as
    it was, after. MySQL/MariaDB: any change of type, character set or collation
    (`_retyped`); the server refuses it under the key (errno 1832, 1833). PostgreSQL
    converts a key along with its column, but the other side is converted by a statement of
    its own: in between the two sides must still compare, which a change within integers
    and numerics, or within strings, keeps (`_pg_keeps_keys`), and a column of an enum type
    made again (`_remake_enum`: new type against former) or any other change does not
    (42804)."""
    kept_keys = set(kept)
    seen: dict[tuple[str, str, str], bool] = {}

    def retyped(schema: str, name: str, column_name: str) -> bool:
        at = (schema, name, column_name)
        if at not in seen:
            seen[at] = _key_breaks(p, observed_tables, desired_tables, kept_keys, at, remade_enums)
        return seen[at]

    # What `_key_breaks` says of a column of a table whose columns stay as they are, without
    # asking it per column: most keys of a plan are over such tables on both sides.
    unchanged = p.same_columns if not (p.pg and remade_enums) else set()
    linked: list[tuple[Table, ForeignKey, str]] = []
    for key in kept:
        table = observed_tables[key]
        if key in unchanged and all(
            (fk.ref_schema, fk.ref_table) in unchanged
            or (fk.ref_schema, fk.ref_table) not in kept_keys
            for fk in table.foreign_keys
        ):
            continue
        for fk in table.foreign_keys:
            used = [
                f"{table.qualified}.{c}" for c in fk.columns if retyped(table.schema, table.name, c)
            ] + [
                f"{_qualified_name(fk.ref_schema, fk.ref_table)}.{c}"
                for c in fk.ref_columns
                if retyped(fk.ref_schema, fk.ref_table, c)
            ]
            if used:
                linked.append((table, fk, ", ".join(used)))
    return linked


def _key_breaks(
    p: _Planner,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: AbstractSet[tuple[str, str]],
    at: tuple[str, str, str],
    remade_enums: AbstractSet[str],
) -> bool:
    """Whether column `at` (schema, table, column) of a kept table changes in a way a foreign
    key over it cannot stand (see `_linked_foreign_keys`)."""
    schema, name, column_name = at
    if (schema, name) not in kept:
        return False
    if (schema, name) in p.same_columns and not (p.pg and remade_enums):
        return False  # the column is as it was: only a remade enum type changes it
    column = observed_tables[(schema, name)].column(column_name)
    wanted = desired_tables[(schema, name)].column(column_name)
    if column is None or wanted is None:
        return False
    if not p.pg:
        return _retyped(column, wanted)
    remade = column.type.removesuffix("[]") in remade_enums
    return (remade and wanted.type == column.type) or not _pg_keeps_keys(column.type, wanted.type)


_PG_NUMBERS = re.compile(
    r"(smallint|integer|bigint|real|double precision|numeric(\(\d+(,\d+)?\))?)"
)
_PG_STRINGS = re.compile(r"(text|character varying(\(\d+\))?|character\(\d+\))")


def _pg_keeps_keys(old: str, new: str) -> bool:
    """Whether a foreign key between a column of (normalized) type `old` and one of `new`
    still holds in PostgreSQL: the same type, two numbers, or two strings."""
    if old == new:
        return True
    return any(
        pattern.fullmatch(old) and pattern.fullmatch(new) for pattern in (_PG_NUMBERS, _PG_STRINGS)
    )


def _qualified_name(schema: str, name: str) -> str:
    return f"{schema}.{name}" if schema else name


def _sequences_early(
    p: _Planner, observed: Schema, desired: Schema
) -> list[tuple[Sequence, Severity, str]]:
    """Create and alter sequences; release the owner of one that changes hands or goes (a
    dropped owner column would take it along). Returns the owners to set once the tables and
    columns exist."""
    r = p.r
    old = {(s.schema, s.name): s for s in observed.sequences}
    new = {(s.schema, s.name): s for s in desired.sequences}
    late: list[tuple[Sequence, Severity, str]] = []
    for key in sorted(new.keys() - old.keys()):
        sequence = new[key]
        p.emit(
            r.create_sequence(sequence),
            Severity.SAFE,
            "sequences_added",
            f"create sequence {sequence.qualified}",
        )
        if sequence.owner_table is not None:
            late.append((sequence, Severity.SAFE, "sequences_added"))
    for key in sorted(new.keys() & old.keys()):
        before, after = old[key], new[key]
        if r.sequence_options(after, before):
            p.emit(
                r.alter_sequence(after, before),
                Severity.WARNING,
                "sequences_changed",
                f"alter sequence {after.qualified}; the values it hands out change",
            )
        owner_before = (before.owner_table, before.owner_column)
        owner_after = (after.owner_table, after.owner_column)
        if owner_before != owner_after:
            if before.owner_table is not None:
                p.emit(
                    r.sequence_owner(dataclasses.replace(after, owner_table=None)),
                    Severity.WARNING,
                    "sequences_changed",
                    f"sequence {after.qualified} no longer owned by "
                    f"{before.owner_table}.{before.owner_column}",
                    (f"{before.schema}.{before.owner_table}",),
                )
            if after.owner_table is not None:
                late.append((after, Severity.WARNING, "sequences_changed"))
    for key in sorted(old.keys() - new.keys()):
        sequence = old[key]
        if sequence.owner_table is not None:
            p.emit(
                r.sequence_owner(dataclasses.replace(sequence, owner_table=None)),
                Severity.WARNING,
                "sequences_changed",
                f"sequence {sequence.qualified} released by its owner before it is dropped",
                (f"{sequence.schema}.{sequence.owner_table}",),
            )
    return late


_NAME_BYTES = 63


def enum_type_names(enum: EnumType) -> set[str]:
    """How a column type names `enum`: schema-qualified, quoted where the name needs it (as
    introspection spells it), or plainly (as a desired schema may)."""
    return {
        f"{enum.schema}.{enum.name}",
        f"{pg_quote_ident(enum.schema)}.{pg_quote_ident(enum.name)}",
    }


def retired_enum_name(name: str) -> str:
    """The name an enum type steps aside to while it is made again."""
    suffix = "__ptah_old"
    room = _NAME_BYTES - len(suffix)
    return name.encode()[:room].decode(errors="ignore") + suffix


def _uses_a_type(function: Function, types: AbstractSet[str]) -> bool:
    used = [a.type for a in function.arguments] + [function.returns]
    used += [t for _, t in function.table_columns]
    return any(t.removesuffix("[]") in types for t in used)


def _functions(
    p: _Planner,
    observed: Schema,
    desired: Schema,
    remade_types: AbstractSet[str],
    *,
    late: bool,
) -> set[tuple[Any, ...]]:
    """Create new functions and replace changed ones (dropping first one whose arguments or
    result change, which CREATE OR REPLACE cannot do). Returns the functions made anew.

    Functions come early, before the tables whose defaults and checks may call them; those
    that take or return a table's row type come `late`, once the tables exist, and so do those
    over an enum type made again (`_remake_enum`): they are dropped early, while their
    signature still names the type they were made with, and made again late.

    A security-definer function runs with its owner's privileges: making one, changing one,
    or turning the property on or off is a privilege change."""
    if not observed.functions and not desired.functions:
        return set()
    r = p.r
    tables = {t.qualified for t in desired.tables}
    old = {f.identity: f for f in observed.functions}
    wanted = {f.identity for f in desired.functions}
    if late:
        old = {k: f for k, f in old.items() if not _uses_a_type(f, remade_types)}
    else:
        for key, function in sorted(old.items()):
            if _uses_a_type(function, remade_types):
                p.emit(
                    r.drop_function(function),
                    Severity.DESTRUCTIVE if key not in wanted else Severity.WARNING,
                    "functions_changed" if key in wanted else "functions_removed",
                    f"drop function {function.qualified}: an enum type it uses is made again",
                )
    new = {
        f.identity: f
        for f in desired.functions
        if (_uses_a_type(f, tables) or _uses_a_type(f, remade_types)) == late
    }
    made: set[tuple[Any, ...]] = set()
    existed = {f.identity for f in observed.functions}
    for key in sorted(new.keys() - old.keys()):
        function = new[key]
        definer = function.security_definer
        why = "; security definer: it runs with its owner's privileges" if definer else ""
        if key in existed:
            # Dropped early, over an enum type made again.
            p.emit(
                r.create_function(function),
                Severity.PRIVILEGE if definer else Severity.WARNING,
                "functions_changed",
                f"make function {function.qualified} again over the enum type made again" + why,
            )
        else:
            p.emit(
                r.create_function(function),
                Severity.PRIVILEGE if definer else Severity.SAFE,
                "functions_added",
                f"create function {function.qualified}" + why,
            )
        made.add(key)
    for key in sorted(new.keys() & old.keys()):
        before, after = old[key], new[key]
        if dataclasses.replace(before, owner=None) == dataclasses.replace(after, owner=None):
            continue
        definer = before.security_definer or after.security_definer
        severity = Severity.PRIVILEGE if definer else Severity.WARNING
        why = "; security definer: it runs with its owner's privileges" if definer else ""
        if (before.arguments, before.returns, before.returns_set, before.table_columns) != (
            after.arguments,
            after.returns,
            after.returns_set,
            after.table_columns,
        ):
            reason = f"make function {after.qualified} again: its arguments or result change"
            p.emit(r.drop_function(before), severity, "functions_changed", reason + why)
            p.emit(r.create_function(after), severity, "functions_changed", reason + why)
            made.add(key)
        else:
            p.emit(
                r.create_function(after, replace=True),
                severity,
                "functions_changed",
                f"replace function {after.qualified}" + why,
            )
    return made


def _drop_functions(
    p: _Planner, observed: Schema, desired: Schema, remade_types: AbstractSet[str]
) -> None:
    wanted = {f.identity for f in desired.functions}
    for function in observed.functions:
        if function.identity not in wanted and not _uses_a_type(function, remade_types):
            p.emit(
                p.r.drop_function(function),
                Severity.DESTRUCTIVE,
                "functions_removed",
                f"drop function {function.qualified}; whatever calls it fails",
            )


def _owners(
    p: _Planner,
    observed: Schema,
    desired: Schema,
    remade_enums: set[str],
    made_functions: set[tuple[Any, ...]],
    linked: list[tuple[Sequence, Severity, str]],
) -> None:
    """Owners of types, tables, sequences and functions, where the desired schema names one
    (an owner it does not name is left alone). An object made by this plan belongs to the
    login that applies it, so a named owner is always set on it. A sequence about to be
    owned by a column first takes the table's owner: PostgreSQL requires the two to match."""
    r = p.r
    old_schemas = dict(observed.schema_owners)
    for schema, schema_role in desired.schema_owners:
        if old_schemas.get(schema) != schema_role:
            p.emit(
                r.schema_owner(schema, schema_role),
                Severity.PRIVILEGE,
                "owners_changed",
                f"schema {schema} owned by {schema_role}",
            )
    old_domains = {d.qualified: d for d in observed.domains}
    for domain in desired.domains:
        before_domain = old_domains.get(domain.qualified)
        if domain.owner is not None and (
            before_domain is None or before_domain.owner != domain.owner
        ):
            p.emit(
                r.owner_to("DOMAIN", r.table(domain.schema, domain.name), domain.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"domain {domain.qualified} owned by {domain.owner}",
            )
    old_enums = {e.qualified: e for e in observed.enums}
    for enum in desired.enums:
        before = old_enums.get(enum.qualified)
        if enum.owner is not None and (
            before is None or enum.qualified in remade_enums or before.owner != enum.owner
        ):
            p.emit(
                r.owner_to("TYPE", r.table(enum.schema, enum.name), enum.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"enum {enum.qualified} owned by {enum.owner}",
            )
    named_tables = [t for t in desired.tables if t.owner is not None]
    if not named_tables and not linked:
        old_tables: dict[str, Table] = {}
        new_tables: dict[str, Table] = {}
    else:
        old_tables = {t.qualified: t for t in observed.tables}
        new_tables = {t.qualified: t for t in desired.tables}
    for table in named_tables:
        before_table = old_tables.get(table.qualified)
        if table.owner is not None and (before_table is None or before_table.owner != table.owner):
            p.emit(
                r.owner_to("TABLE", r.table(table.schema, table.name), table.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"table {table.qualified} owned by {table.owner}",
                (table.qualified,),
            )
    old_sequences = {s.qualified: s for s in observed.sequences}
    for sequence in desired.sequences:
        before_sequence = old_sequences.get(sequence.qualified)
        if sequence.owner is not None and (
            before_sequence is None or before_sequence.owner != sequence.owner
        ):
            p.emit(
                r.owner_to("SEQUENCE", r.table(sequence.schema, sequence.name), sequence.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"sequence {sequence.qualified} owned by {sequence.owner}",
            )
    for sequence, _, _ in linked:
        table_name = f"{sequence.schema}.{sequence.owner_table}"
        owner_table = new_tables.get(table_name)
        existing = old_tables.get(table_name)
        role = (owner_table.owner if owner_table else None) or (
            existing.owner if existing else None
        )
        before_sequence = old_sequences.get(sequence.qualified)
        if role is not None and (before_sequence is None or before_sequence.owner != role):
            p.emit(
                r.owner_to("SEQUENCE", r.table(sequence.schema, sequence.name), role),
                Severity.PRIVILEGE,
                "owners_changed",
                f"sequence {sequence.qualified} takes the owner of table {table_name}, "
                "which will own it",
                (table_name,),
            )
    old_functions = {f.identity: f for f in observed.functions}
    for function in desired.functions:
        before_function = old_functions.get(function.identity)
        if function.owner is not None and (
            before_function is None
            or function.identity in made_functions
            or before_function.owner != function.owner
        ):
            p.emit(
                r.owner_to("FUNCTION", r.function_name(function), function.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"function {function.qualified} owned by {function.owner}"
                + ("; it is a security definer" if function.security_definer else ""),
            )


def _view_owners(p: _Planner, observed: Schema, desired: Schema, made: list[View]) -> None:
    """Owners of views, once made: a view made (again) by this plan belongs to the login."""
    old = {v.qualified: v for v in observed.views}
    remade = {v.qualified for v in made}
    for view in desired.views:
        before = old.get(view.qualified)
        if view.owner is not None and (
            before is None or view.qualified in remade or before.owner != view.owner
        ):
            kind = "MATERIALIZED VIEW" if view.materialized else "VIEW"
            p.emit(
                p.r.owner_to(kind, p.r.table(view.schema, view.name), view.owner),
                Severity.PRIVILEGE,
                "owners_changed",
                f"view {view.qualified} owned by {view.owner}",
            )


def _reshaped(
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
    added: list[tuple[str, str]],
    removed: list[tuple[str, str]],
    remade_enum_types: AbstractSet[str] = frozenset(),
    same_columns: AbstractSet[tuple[str, str]] = frozenset(),
) -> tuple[set[str], set[str]]:
    """(tables a view may not stay on while they change: dropped, or a column dropped or
    retyped — PostgreSQL refuses both under a view, and a column of an enum type that is made
    again is retyped; tables whose columns change at all)."""
    affected = {observed_tables[key].qualified for key in removed}
    touched = set(affected) | {desired_tables[key].qualified for key in added}
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        if remade_enum_types and any(
            c.type.removesuffix("[]") in remade_enum_types for c in old.columns
        ):
            affected.add(old.qualified)
            touched.add(old.qualified)
        if key in same_columns or old.columns == new.columns:
            continue
        touched.add(old.qualified)
        new_columns = {c.name: c for c in new.columns}
        for column in old.columns:
            after = new_columns.get(column.name)
            if after is None or (column.type, column.collation, column.generated) != (
                after.type,
                after.collation,
                after.generated,
            ):
                affected.add(old.qualified)
                break
    return affected, touched


def _in_dependency_order(views: dict[str, View]) -> list[View]:
    """Views each after the views it reads, ties by name (a cycle, which no server allows,
    by name)."""
    remaining = dict(views)
    ordered: list[View] = []
    while remaining:
        ready = sorted(
            name
            for name, view in remaining.items()
            if not (set(view.depends_on) - {name}) & remaining.keys()
        ) or [min(remaining)]
        for name in ready:
            ordered.append(remaining.pop(name))
    return ordered


ViewCreate = tuple[View, bool, Severity, str, str]


def _views(
    p: _Planner, observed: Schema, desired: Schema, affected: set[str], touched: set[str]
) -> tuple[list[tuple[View, str, str]], list[ViewCreate]]:
    """(views to drop, dependents first; views to create or replace, dependencies first).

    A changed view is replaced in place where the server allows it (MySQL always;
    PostgreSQL when its columns stay as they are, new ones after them). Otherwise, and on
    PostgreSQL for a view over a table that is dropped or has a column dropped or retyped,
    it is dropped first and made again last, with every view that reads it. A view that
    selects `*` from a table whose columns change is made again too: the server expanded
    the `*` when it made the view."""
    old = {v.qualified: v for v in observed.views}
    new = {v.qualified: v for v in desired.views}
    remake: dict[str, str] = {}
    replace: dict[str, str] = {}
    for name in sorted(old.keys() & new.keys()):
        before, after = old[name], new[name]
        star_moved = after.reads_star and bool(set(after.depends_on) & touched)
        changed = (before.definition, before.materialized) != (
            after.definition,
            after.materialized,
        )
        if p.pg and set(before.depends_on) & affected:
            remake[name] = "a table it reads changes"
        elif changed or star_moved:
            why = "its query changes" if changed else "the columns `*` stands for change"
            if before.materialized != after.materialized:
                why = (
                    "it becomes a materialized view"
                    if after.materialized
                    else ("it is no longer a materialized view")
                )
            # A materialized view has no CREATE OR REPLACE.
            compatible = (
                bool(before.columns)
                and after.columns[: len(before.columns)] == before.columns
                and not star_moved
                and not (before.materialized or after.materialized)
            )
            if p.pg and not compatible:
                remake[name] = why
            else:
                replace[name] = why
    gone = set(old.keys() - new.keys())
    if p.pg:
        # A view that reads a dropped view goes with it, and comes back if it is kept.
        while True:
            dropped = gone | remake.keys()
            more = {
                name
                for name, view in old.items()
                if name not in dropped and set(view.depends_on) & dropped
            }
            if not more:
                break
            for name in sorted(more):
                if name in new:
                    remake[name] = "a view it reads is made again"
                    replace.pop(name, None)
                else:
                    gone.add(name)
    drops = [
        (
            view,
            "views_removed" if view.qualified in gone else "views_changed",
            f"drop view {view.qualified}"
            if view.qualified in gone
            else f"drop view {view.qualified} to make it again: {remake[view.qualified]}",
        )
        for view in reversed(_in_dependency_order({n: old[n] for n in gone | remake.keys()}))
    ]
    creates: list[ViewCreate] = []
    wanted = {n: new[n] for n in (new.keys() - old.keys()) | remake.keys() | replace.keys()}
    for view in _in_dependency_order(wanted):
        name = view.qualified
        if name in replace:
            creates.append(
                (
                    view,
                    True,
                    Severity.WARNING,
                    "views_changed",
                    f"replace view {name}: {replace[name]}",
                )
            )
        elif name in remake:
            creates.append(
                (
                    view,
                    False,
                    Severity.WARNING,
                    "views_changed",
                    f"make view {name} again: {remake[name]}",
                )
            )
        else:
            creates.append((view, False, Severity.SAFE, "views_added", f"create view {name}"))
    return drops, creates


def _grants(
    p: _Planner,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    keys: list[tuple[str, str]],
) -> None:
    """Revokes, then grants, per table and grantee. Only grantees the desired schema names
    in some grant are compared: privileges of anyone else are left alone."""
    r = p.r
    managed = {g.grantee for t in desired_tables.values() for g in t.grants}
    for key in sorted(keys):
        new = desired_tables[key]
        old_table = observed_tables.get(key)
        old_grants = old_table.grants if old_table is not None else ()
        if old_grants == new.grants:
            continue
        # The owner holds every privilege without a grant, and PostgreSQL lists none for it.
        owner = new.owner or (old_table.owner if old_table is not None else None)
        before: dict[str, dict[str, bool]] = {}
        after: dict[str, dict[str, bool]] = {}
        for grants, into in ((old_grants, before), (new.grants, after)):
            for grant in grants:
                if grant.grantee in managed and grant.grantee != owner:
                    into.setdefault(grant.grantee, {})[grant.privilege] = grant.grantable
        where = (new.qualified,)
        for grantee in sorted(before.keys() | after.keys()):
            had, wants = before.get(grantee, {}), after.get(grantee, {})
            gone = sorted(had.keys() - wants.keys())
            if gone:
                p.emit(
                    r.revoke(new, grantee, gone),
                    Severity.PRIVILEGE,
                    "grants_removed",
                    f"revoke {', '.join(gone)} on {new.qualified} from {grantee}",
                    where,
                )
            _grant_changes(p, new, grantee, had, wants)


def _grant_changes(
    p: _Planner, table: Table, grantee: str, had: dict[str, bool], wants: dict[str, bool]
) -> None:
    r = p.r
    where = (table.qualified,)
    option_lost = sorted(k for k, v in wants.items() if had.get(k) and not v)
    if p.pg:
        plain = sorted(k for k, v in wants.items() if k not in had and not v)
        optioned = sorted(k for k, v in wants.items() if v and not had.get(k))
    else:
        # MySQL: the grant option is the table's; granting it re-grants every privilege.
        option_lost = sorted(had) if option_lost else []
        gains_option = any(wants.values()) and not any(had.values())
        missing = sorted(k for k in wants if k not in had)
        plain = [] if gains_option else missing
        optioned = sorted(wants) if gains_option else []
    if option_lost:
        p.emit(
            r.revoke_grant_option(table, grantee, option_lost),
            Severity.PRIVILEGE,
            "grants_removed",
            f"revoke the grant option for {', '.join(option_lost)} on {table.qualified} "
            f"from {grantee}",
            where,
        )
    if plain:
        p.emit(
            r.grant(table, grantee, plain),
            Severity.PRIVILEGE,
            "grants_added",
            f"grant {', '.join(plain)} on {table.qualified} to {grantee}",
            where,
        )
    if optioned:
        p.emit(
            r.grant(table, grantee, optioned, grantable=True),
            Severity.PRIVILEGE,
            "grants_added",
            f"grant {', '.join(optioned)} with grant option on {table.qualified} to {grantee}",
            where,
        )


def _enum_values(p: _Planner, observed: EnumType, enum: EnumType) -> bool:
    """Add the values `enum` gains, each in its place; False when values are lost or
    reordered, which only making the type again can do (`_remake_enum`)."""
    old, new = observed.values, enum.values
    change = enum_change(old, new)
    if change == "same":
        return True
    if change == "loses":
        return False
    for position, value in enumerate(new):
        if value in old:
            continue
        before = next((v for v in new[position + 1 :] if v in old), None)
        # PostgreSQL will not let a transaction use a value it added: the value is committed
        # before the statements that may use it run (see `apply`).
        p.emit(
            p.r.add_enum_value(enum, value, before),
            Severity.SAFE,
            "enums_changed",
            f"add a value to enum {enum.qualified}",
            transactional=False,
        )
    return True


def _remake_enum(
    p: _Planner,
    old: EnumType,
    new: EnumType,
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
) -> None:
    """An enum that loses or reorders values is made again: the type steps aside under
    another name, the new one takes its name, and every kept column of it is converted
    through text (a row holding a lost value makes the apply fail, and it changes nothing).
    The former type is dropped last. Views over those columns are made again around this
    (see `_reshaped`); tables being dropped went before it."""
    r = p.r
    reason = (
        f"enum {new.qualified} loses or reorders values: it is made again and its columns "
        "converted; a row holding a lost value fails the apply"
    )
    retired = retired_enum_name(old.name)
    p.emit(r.rename_enum(old, retired), Severity.DESTRUCTIVE, "enums_changed", reason)
    p.emit(r.create_enum(new), Severity.DESTRUCTIVE, "enums_changed", reason)
    names = enum_type_names(old)
    for key in kept:
        before, after = observed_tables[key], desired_tables[key]
        converted = [
            (column, wanted)
            for column in before.columns
            if column.type.removesuffix("[]") in names
            and (wanted := after.column(column.name)) is not None
            and wanted.type == column.type
        ]
        # A column that goes, or leaves the type, is changed by `_columns`.
        if not converted:
            continue
        where = (after.qualified,)
        # PostgreSQL rebuilds what reads a retyped column from its text, in which a literal
        # still names the former type (`m = 'x'::mood__ptah_old`) and finds no operator:
        # checks and expression or partial indexes that stay are dropped and made again.
        _, gone_checks = p.pairs(before, after, "checks")
        _, gone_indexes = p.pairs(before, after, "indexes")
        checks = [c for c in before.checks if c not in gone_checks]
        indexes = [
            i
            for i in before.indexes
            if i not in gone_indexes
            and (i.where is not None or not all(is_plain_column(k) for k in i.columns))
        ]
        for check in checks:
            p.emit(
                r.drop_constraint(before, check.name or ""),
                Severity.DESTRUCTIVE,
                "enums_changed",
                reason,
                where,
            )
        for index in indexes:
            p.emit(
                r.drop_index(before, index), Severity.DESTRUCTIVE, "enums_changed", reason, where
            )
        for column, wanted in converted:
            if column.default is not None:
                p.emit(
                    r.alter_column(after, column.name, "DROP DEFAULT"),
                    Severity.DESTRUCTIVE,
                    "enums_changed",
                    reason,
                    where,
                )
            p.emit(
                r.retype_through_text(after, column.name, column.type),
                Severity.DESTRUCTIVE,
                "enums_changed",
                reason,
                where,
            )
            if column.default is not None and wanted.default == column.default:
                # A default that changes is set by `_columns`.
                p.emit(
                    r.alter_column(after, column.name, f"SET {r.default(r.default_text(wanted))}"),
                    Severity.DESTRUCTIVE,
                    "enums_changed",
                    reason,
                    where,
                )
        for check in checks:
            p.emit(
                r.add_constraint(after, r.check_clause(check)),
                Severity.DESTRUCTIVE,
                "enums_changed",
                reason,
                where,
            )
        for index in indexes:
            p.emit(
                r.create_index(after, index), Severity.DESTRUCTIVE, "enums_changed", reason, where
            )


def _create_table(p: _Planner, table: Table) -> None:
    r = p.r
    p.emit(
        r.create_table(table),
        Severity.SAFE,
        "tables_added",
        f"create table {table.qualified}",
        (table.qualified,),
    )
    if p.pg:
        if table.comment is not None:
            p.emit(
                r.table_comment(table, table.comment),
                Severity.SAFE,
                "tables_added",
                f"comment on new table {table.qualified}",
                (table.qualified,),
            )
        for column in table.columns:
            if column.comment is not None:
                p.emit(
                    r.column_comment(table, column.name, column.comment),
                    Severity.SAFE,
                    "tables_added",
                    f"comment on new column {table.qualified}.{column.name}",
                    (table.qualified,),
                )
    for index in table.indexes:
        p.emit(
            r.create_index(table, index),
            Severity.SAFE,
            "indexes_added",
            f"create index on new table {table.qualified}",
            (table.qualified,),
        )


def _drop_constraints(p: _Planner, old: Table, new: Table) -> None:
    r = p.r
    where = (old.qualified,)
    if (
        old.primary_key is not None
        and (new.primary_key is None or new.primary_key.key() != old.primary_key.key())
        and old.qualified not in p.auto_keys
    ):
        p.emit(
            r.drop_primary_key(old, old.primary_key),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop primary key of {old.qualified}",
            where,
        )
    _, gone_uniques = p.pairs(old, new, "uniques")
    for unique in gone_uniques:
        p.emit(
            r.drop_unique(old, unique),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop unique constraint {unique.name} on {old.qualified}",
            where,
        )
    _, gone_checks = p.pairs(old, new, "checks")
    for check in gone_checks:
        if not p.pg and check.column is not None:
            continue  # a column's own check goes with a MODIFY or DROP COLUMN of it
        p.emit(
            r.drop_constraint(old, check.name or ""),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop check {check.name} on {old.qualified}",
            where,
        )
    rebuilt_checks, rebuilt_indexes = p.rebuilt.get(old.qualified, ([], []))
    for check in rebuilt_checks:
        p.emit(
            r.drop_constraint(old, check.name or ""),
            Severity.WARNING,
            "columns_changed",
            f"drop check {check.name} on {old.qualified} while a column it reads leaves its "
            "enum type; it is added again after",
            where,
        )
    for index in rebuilt_indexes:
        p.emit(
            r.drop_index(old, index),
            Severity.WARNING,
            "columns_changed",
            f"drop index {index.name} on {old.qualified} while a column it reads leaves its "
            "enum type; it is made again after",
            where,
        )
    _, gone_indexes = p.pairs(old, new, "indexes")
    for index in gone_indexes:
        if index.implicit:
            continue
        p.emit(
            r.drop_index(old, index),
            Severity.WARNING,
            "indexes_removed",
            f"drop index {index.name} on {old.qualified}",
            where,
        )


def _column_shape(column: Column) -> tuple[Any, ...]:
    """What a column is, but for its name and comment: two columns of one shape, one dropped
    and one added, look like a rename."""
    return (column.type, column.nullable, column.default, column.identity, column.generated)


def _table_shape(table: Table) -> tuple[Any, ...]:
    return (table.schema, tuple(_column_shape(c) for c in table.columns))


def _qualified(schema: str, name: str) -> str:
    return f"{schema}.{name}" if schema else name


def _existing(old: Table, columns: tuple[str, ...]) -> bool:
    """Whether every one of `columns` is a plain column the table already has: what a check
    of the rows can read before the plan runs."""
    return bool(columns) and all(is_plain_column(c) and old.column(c) is not None for c in columns)


def _rename_primary_key(p: _Planner, old: Table, new: Table) -> None:
    """PostgreSQL: a primary key that stays, which the desired schema names otherwise, is
    renamed (its index with it; foreign keys over it stay). MySQL names every one PRIMARY."""
    before, after = old.primary_key, new.primary_key
    if not p.pg or before is None or after is None or after.name is None:
        return
    current = before.name or f"{old.name}_pkey"
    if before.key() != after.key() or current == after.name:
        return
    p.emit(
        p.r.alter(old, f"RENAME CONSTRAINT {p.r.q(current)} TO {p.r.q(after.name)}"),
        Severity.WARNING,
        "tables_changed",
        f"rename the primary key of {new.qualified}; what names it (ON CONFLICT ON "
        "CONSTRAINT) must use the new name",
        (new.qualified,),
    )


def _add_constraints(p: _Planner, old: Table, new: Table) -> None:
    r = p.r
    where = (new.qualified,)
    if (
        new.primary_key is not None
        and (old.primary_key is None or new.primary_key.key() != old.primary_key.key())
        and new.qualified not in p.auto_keys
    ):
        columns = new.primary_key.columns
        p.emit(
            r.add_constraint(new, r.primary_key_clause(new.primary_key)),
            Severity.WARNING,
            "constraints_added",
            f"add primary key to {new.qualified}; existing rows must be unique and not null",
            where,
            requires=(
                Requirement("notNull", new.qualified, columns),
                Requirement("unique", new.qualified, columns),
            )
            if _existing(old, columns)
            else (),
        )
    _rename_primary_key(p, old, new)
    missing_uniques, _ = p.pairs(old, new, "uniques")
    for unique in missing_uniques:
        p.emit(
            r.add_constraint(new, r.unique_clause(unique)),
            Severity.WARNING,
            "constraints_added",
            f"add unique constraint on {new.qualified}; existing rows must be unique",
            where,
            requires=(Requirement("unique", new.qualified, unique.columns),)
            if _existing(old, unique.columns)
            else (),
        )
    missing_checks, _ = p.pairs(old, new, "checks")
    restated = _own_check_changes(p, old, new)
    gained = {c.column: c for change in restated.values() for c in change.gained}
    for check in missing_checks:
        if not p.pg and check.column is not None and old.column(check.column) is None:
            continue  # made with its new column (see `_columns`)
        if check.column is not None and gained.get(check.column) == check:
            continue  # made by restating its column, below
        p.emit(
            r.add_constraint(new, r.check_clause(check)),
            Severity.WARNING,
            "constraints_added",
            f"add check on {new.qualified}; existing rows must pass it",
            where,
            requires=(Requirement("check", new.qualified, expression=check.expr),),
        )
    rebuilt_checks, rebuilt_indexes = p.rebuilt.get(old.qualified, ([], []))
    for check in rebuilt_checks:
        p.emit(
            r.add_constraint(new, r.check_clause(check)),
            Severity.WARNING,
            "columns_changed",
            f"add check {check.name} on {new.qualified} again; existing rows must pass it",
            where,
        )
    for index in rebuilt_indexes:
        p.emit(
            r.create_index(new, index),
            Severity.WARNING,
            "columns_changed",
            f"make index {index.name} on {new.qualified} again",
            where,
        )
    for name, change in restated.items():
        column = new.column(name)
        assert column is not None
        if not change.gained and old.column(name) != column:
            continue  # the column's own change restated it without the check
        _refuse_unmodelled(old, old.column(name) or column)
        why = []
        if change.lost:
            why.append(f"without its check {', '.join(c.name or '' for c in change.lost)}")
        if change.gained:
            why.append("with a check of its own; existing rows must pass it")
        p.emit(
            r.modify_column(new, column, change.kept + change.gained),
            Severity.DESTRUCTIVE if change.lost else Severity.WARNING,
            "constraints_added" if change.gained else "constraints_removed",
            f"restate column {new.qualified}.{name} " + " and ".join(why),
            where,
            requires=tuple(
                Requirement("check", new.qualified, expression=c.expr) for c in change.gained
            ),
        )
    missing_indexes, _ = p.pairs(old, new, "indexes")
    for index in missing_indexes:
        severity = Severity.WARNING if index.unique else Severity.SAFE
        checkable = index.unique and index.where is None and _existing(old, index.columns)
        p.emit(
            r.create_index(new, index),
            severity,
            "indexes_added",
            f"create index on {new.qualified}",
            where,
            requires=(Requirement("unique", new.qualified, index.columns, index.prefix_lengths),)
            if checkable
            else (),
        )


def _columns(p: _Planner, old: Table, new: Table) -> None:
    auto_key = new.qualified in p.auto_keys
    same = (old.schema, old.name) in p.same_columns or old.columns == new.columns
    if same and old.comment == new.comment and not auto_key:
        return
    r = p.r
    where = (new.qualified,)
    old_columns = {c.name: c for c in old.columns}
    new_names = {c.name for c in new.columns}
    own_checks = _own_checks(p, old, new)
    rechecked, retyped = _rechecked(p, old, new)
    for check in rechecked:
        p.emit(
            r.drop_constraint(old, check.name or ""),
            Severity.WARNING,
            "columns_changed",
            f"drop check {check.name} on {old.qualified} while {retyped} change type; it is "
            "added again after them",
            where,
        )
    done = _auto_key(p, old, new, own_checks) if auto_key else set()
    for column in new.columns:
        before = old_columns.get(column.name)
        if column.name in done:
            continue
        if before is None:
            needs_value = (
                not column.nullable
                and column.default is None
                and column.identity is None
                and column.generated is None
            )
            # MariaDB: a check written on the column comes with it (see `_add_constraints`);
            # the value existing rows take, a default or a generated one, must pass it.
            checked = r.own_checks(new, column.name)
            filled = bool(checked) and (column.default is not None or column.generated is not None)
            severity = Severity.WARNING if filled else Severity.SAFE
            p.emit(
                r.add_column(new, column, checked),
                Severity.DESTRUCTIVE if needs_value else severity,
                "columns_added",
                f"add column {new.qualified}.{column.name}"
                + (
                    "; NOT NULL without a default fails or fills existing rows"
                    if needs_value
                    else ""
                )
                + ("; existing rows take a value its check must pass" if filled else ""),
                where,
            )
            if p.pg and column.comment is not None:
                p.emit(
                    r.column_comment(new, column.name, column.comment),
                    Severity.SAFE,
                    "columns_added",
                    f"comment on column {new.qualified}.{column.name}",
                    where,
                )
        elif before != column:
            _change_column(p, new, before, column, own_checks.get(column.name, ()))
    old_names = {c.name for c in old.columns}
    added_shapes: dict[tuple[Any, ...], list[str]] = {}
    for column in new.columns:
        if column.name not in old_names:
            added_shapes.setdefault(_column_shape(column), []).append(column.name)
    for column in old.columns:
        if column.name not in new_names and column.name not in done:
            twins = added_shapes.get(_column_shape(column), [])
            p.emit(
                r.drop_column(old, column.name),
                Severity.DESTRUCTIVE,
                "columns_removed",
                f"drop column {old.qualified}.{column.name}",
                where,
                looks_like_rename_to=f"{new.qualified}.{twins[0]}" if len(twins) == 1 else None,
            )
    if old.comment != new.comment:
        p.emit(
            r.table_comment(new, new.comment),
            Severity.SAFE,
            "tables_changed",
            f"comment on table {new.qualified}",
            where,
        )
    for check in rechecked:
        p.emit(
            r.add_constraint(new, r.check_clause(check)),
            Severity.WARNING,
            "columns_changed",
            f"add check {check.name} on {new.qualified} again now that {retyped} changed "
            "type; existing rows must pass it",
            where,
        )


def _rechecked(p: _Planner, old: Table, new: Table) -> tuple[list[Check], str]:
    """PostgreSQL: the checks a table keeps over a column whose type changes, and those
    columns named. ALTER COLUMN ... TYPE rebuilds such a check from its text, in which the
    former type's casts stay: `n > 5` over numeric(5,2), the column made integer, is kept
    as `(n)::numeric > (5)::numeric`, which is not what the desired schema says, and was
    dropped and added again by the next plan. Dropped before the change and added after,
    the check is read against the new type."""
    if not p.pg:
        return [], ""
    changed = sorted(
        c.name
        for c in old.columns
        if (wanted := new.column(c.name)) is not None
        and (wanted.type, wanted.collation) != (c.type, c.collation)
    )
    if not changed or not old.checks:
        return [], ""
    _, gone = p.pairs(old, new, "checks")
    # A check over a column leaving an enum type is made again already (`_Planner.rebuilt`).
    over_enums, _ = p.rebuilt.get(old.qualified, ([], []))
    rechecked = [
        c
        for c in old.checks
        if c not in gone
        and c not in over_enums
        and set(changed) & expression_columns(p.dialect, c.expr)
    ]
    return rechecked, ", ".join(f"{old.qualified}.{c}" for c in changed)


def _own_checks(p: _Planner, old: Table, new: Table) -> dict[str, tuple[Check, ...]]:
    """MariaDB: per column, the column-level checks it keeps (`Check.column`), which a
    MODIFY COLUMN restates: the server drops those it is not given again."""
    if not any(c.column is not None for c in old.checks):
        return {}
    _, gone = p.pairs(old, new, "checks")
    own: dict[str, tuple[Check, ...]] = {}
    for check in old.checks:
        if check.column is not None and check not in gone:
            own[check.column] = (*own.get(check.column, ()), check)
    return own


@dataclass(frozen=True)
class _OwnChecks:
    kept: tuple[Check, ...]
    lost: tuple[Check, ...]
    gained: tuple[Check, ...]


def _own_check_changes(p: _Planner, old: Table, new: Table) -> dict[str, _OwnChecks]:
    """MariaDB: per column on both sides whose own checks (`Check.column`, written on the
    column) change, the checks it keeps, loses and gains. The server will not drop such a
    check with DROP CONSTRAINT (errno 1091), and ADD CHECK makes a table check: restating
    the column (MODIFY COLUMN) with the checks it keeps does both. A column has one own
    check at most: one gained beside one kept is added as a table check. A column that goes
    takes its own checks along; a new one comes with them (`_columns`)."""
    if p.pg:
        return {}
    missing, gone = p.pairs(old, new, "checks")
    names = {c.column for c in [*missing, *gone] if c.column is not None}
    changes: dict[str, _OwnChecks] = {}
    for name in sorted(names):
        if old.column(name) is None or new.column(name) is None:
            continue
        kept = tuple(c for c in old.checks if c.column == name and c not in gone)
        lost = tuple(c for c in gone if c.column == name)
        gained = tuple(c for c in missing if c.column == name)
        if kept or len(gained) > 1:
            gained = ()
        if lost or gained:
            changes[name] = _OwnChecks(kept, lost, gained)
    return changes


def _refuse_unmodelled(table: Table, column: Column) -> None:
    """MySQL/MariaDB restate a column whole: one holding what the model cannot express
    would lose it, so no change to it is planned."""
    if column.unmodelled:
        raise PlanError(
            f"column {table.qualified}.{column.name} holds {', '.join(column.unmodelled)}, "
            "which the engine cannot restate: changing the column would drop it. Change "
            "this column by hand, or leave it as the database has it"
        )


def _retyped(old: Column, new: Column) -> bool:
    """Whether the column's type, character set or collation changes, or it is made again
    (its generation changes): what MySQL/MariaDB refuse on a column a foreign key uses."""
    return (old.type, old.charset, old.collation, old.generated, old.virtual) != (
        new.type,
        new.charset,
        new.collation,
        new.generated,
        new.virtual,
    )


def _column_reasons(p: _Planner, old: Column, new: Column) -> list[tuple[Severity, str]]:
    """Why a column changes, each with its severity (never empty for a changed column)."""
    reasons: list[tuple[Severity, str]] = []
    type_changed = (
        old.type != new.type or old.collation != new.collation or old.charset != new.charset
    )
    if type_changed:
        if old.charset != new.charset:
            reasons.append(
                (Severity.DESTRUCTIVE, "character set converts; what the new one lacks is lost")
            )
        elif old.collation != new.collation:
            reasons.append((Severity.WARNING, "collation changes"))
        if old.type != new.type:
            enum = mysql_enum_change(old.type, new.type) if not p.pg else None
            if enum is not None:
                reasons.append(enum)
            else:
                reasons.append(type_change(p.dialect.family, old.type, new.type))
    if old.nullable and not new.nullable:
        reasons.append((Severity.DESTRUCTIVE, "adds NOT NULL"))
    if not old.nullable and new.nullable:
        reasons.append((Severity.SAFE, "drops NOT NULL"))
    if old.default != new.default:
        reasons.append((Severity.SAFE, "default changes"))
    if old.identity != new.identity:
        if old.identity == "serial":
            reasons.append(
                (Severity.DESTRUCTIVE, "its serial sequence goes, with its current value")
            )
        else:
            reasons.append((Severity.WARNING, "identity changes"))
    elif old.identity_options != new.identity_options:
        reasons.append(
            (Severity.WARNING, "identity options change; the values it hands out change")
        )
    comment_changed = old.comment != new.comment
    if comment_changed:
        reasons.append((Severity.SAFE, "comment changes"))
    if old.on_update != new.on_update:
        reasons.append((Severity.SAFE, "ON UPDATE changes"))
    if old.invisible != new.invisible:
        reasons.append(
            (Severity.WARNING, "visibility changes (SELECT * and INSERT without columns)")
        )
    if old.srid != new.srid:
        reasons.append((Severity.WARNING, "SRID changes; a row in another SRID fails it"))
    return reasons or [(Severity.SAFE, "its definition changes")]


_GENERATED = frozenset({"always", "by default"})


def _change_column(
    p: _Planner, table: Table, old: Column, new: Column, own_checks: tuple[Check, ...] = ()
) -> None:
    r = p.r
    where = (table.qualified,)
    name = f"{table.qualified}.{new.name}"
    if not p.pg:
        _refuse_unmodelled(table, old)
    if old.generated != new.generated or old.virtual != new.virtual:
        # A generated column's expression, or whether it is stored, cannot be altered in place.
        p.emit(
            r.drop_column(table, old.name),
            Severity.DESTRUCTIVE,
            "columns_changed",
            f"drop column {name} to redefine its generation",
            where,
        )
        p.emit(
            r.add_column(table, new, own_checks),
            Severity.SAFE,
            "columns_changed",
            f"add column {name} with its new generation",
            where,
        )
        return
    reasons = _column_reasons(p, old, new)
    type_changed = (
        old.type != new.type or old.collation != new.collation or old.charset != new.charset
    )
    comment_changed = old.comment != new.comment
    severity = max((s for s, _ in reasons), key=lambda s: s.rank)
    reason = f"change column {name}: " + ", ".join(text for _, text in reasons)
    if not p.pg:
        adds_not_null = old.nullable and not new.nullable
        p.emit(
            r.modify_column(table, new, own_checks),
            severity,
            "columns_changed",
            reason,
            where,
            requires=(Requirement("notNull", table.qualified, (new.name,)),)
            if adds_not_null
            else (),
        )
        return
    statements: list[tuple[str, Severity]] = []
    was_generated = old.identity in _GENERATED
    becomes_generated = new.identity in _GENERATED
    if was_generated and not becomes_generated:
        # An identity column refuses DROP NOT NULL until it is an ordinary column.
        statements.append((r.alter_column(table, new.name, "DROP IDENTITY"), Severity.WARNING))
    if old.identity == "serial" and new.identity != "serial":
        # The default draws from the sequence: it goes first, then the sequence.
        sequence = old.sequence or serial_sequence_name(table.name, old.name)
        statements.append((r.alter_column(table, new.name, "DROP DEFAULT"), Severity.SAFE))
        statements.append((r.drop_sequence_named(table.schema, sequence), Severity.DESTRUCTIVE))
    if type_changed:
        if old.default is not None:
            statements.append((r.alter_column(table, new.name, "DROP DEFAULT"), Severity.SAFE))
        from_enum = old.type.removesuffix("[]") in p.enum_types
        from_enum = from_enum and new.type.removesuffix("[]") != "text"
        statements.append((r.set_type(table, new, through_text=from_enum), severity))
        if new.default is not None:
            statements.append(
                (
                    r.alter_column(table, new.name, f"SET {r.default(r.default_text(new))}"),
                    Severity.SAFE,
                )
            )
    elif old.default != new.default:
        action = (
            f"SET {r.default(r.default_text(new))}" if new.default is not None else "DROP DEFAULT"
        )
        statements.append((r.alter_column(table, new.name, action), Severity.SAFE))
    if old.nullable != new.nullable:
        action = "DROP NOT NULL" if new.nullable else "SET NOT NULL"
        statements.append(
            (
                r.alter_column(table, new.name, action),
                Severity.SAFE if new.nullable else Severity.DESTRUCTIVE,
            )
        )
    if new.identity == "serial" and old.identity != "serial":
        # What `serial` makes: a sequence owned by the column, which the default draws from.
        # It starts at 1, whatever the column holds.
        sequence = serial_sequence_name(table.name, new.name)
        statements.append(
            (r.serial_sequence(table, new.name, new.type, sequence), Severity.WARNING)
        )
        statements.append(
            (
                r.alter_column(table, new.name, f"SET DEFAULT {r.nextval(table.schema, sequence)}"),
                Severity.WARNING,
            )
        )
    if new.identity is not None and becomes_generated and old.identity != new.identity:
        if was_generated:
            action = f"SET GENERATED {new.identity.upper()}"
        else:
            action = f"ADD GENERATED {new.identity.upper()} AS IDENTITY"
            if new.identity_options is not None:
                action += f" ({r.identity_options(new)})"
        statements.append((r.alter_column(table, new.name, action), Severity.WARNING))
    if becomes_generated and was_generated and old.identity_options != new.identity_options:
        statements.append((r.set_identity_options(table, new), Severity.WARNING))
    if comment_changed:
        statements.append((r.column_comment(table, new.name, new.comment), Severity.SAFE))
    for sql, statement_severity in statements:
        p.emit(sql, statement_severity, "columns_changed", reason, where)
