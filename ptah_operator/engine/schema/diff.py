"""Compare an observed and a desired schema; the ordered statements that close the gap.

Order (each phase needs only what the earlier ones made or left):
schemas and enum types -> create and alter sequences, release the owner of a sequence that
changes hands or goes -> drop views -> drop foreign keys -> drop other constraints and
indexes -> drop tables -> create tables -> add, change and drop columns -> add keys, checks
and indexes -> add foreign keys -> sequence owners -> create or replace views -> revoke,
then grant -> drop sequences -> drop enum types. Within a phase, objects go by name (views by
what they read, then by name), so the same inputs always give the same list.

Each statement carries a severity (see `severity`), a category out of `CATEGORIES` (the
bounded vocabulary of the drift report), a reason naming the object but never its data, and
the tables it touches (for the protected-tables policy).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

from ptah_operator.engine.schema.model import (
    Check,
    Column,
    Dialect,
    ForeignKey,
    Index,
    Schema,
    Sequence,
    Table,
    UniqueConstraint,
    View,
)
from ptah_operator.engine.schema.render import Renderer
from ptah_operator.engine.schema.severity import Severity, type_widens

CATEGORIES = (
    "schemas_added",
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
)


class PlanError(ValueError):
    """A change the engine will not plan (it names the object, never data)."""


@dataclass(frozen=True)
class Statement:
    sql: str
    severity: Severity
    category: str
    reason: str
    tables: tuple[str, ...]
    # False for statements PostgreSQL cannot run, or run usefully, inside a transaction block.
    transactional: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "sql": self.sql,
            "severity": self.severity.value,
            "category": self.category,
            "reason": self.reason,
            "tables": list(self.tables),
            "transactional": self.transactional,
        }


T = TypeVar("T", UniqueConstraint, Index, ForeignKey, Check)


def _match(desired: list[T], observed: list[T]) -> tuple[list[T], list[T]]:
    """(desired items with no observed twin, observed items with no desired twin).

    Items are twins when their content (`key()`) is equal and, where the desired side names
    the item, their names are equal too.
    """
    if desired == observed:
        return [], []
    remaining = list(observed)
    missing: list[T] = []
    for item in desired:
        twin = next(
            (
                o
                for o in remaining
                if o.key() == item.key() and (item.name is None or item.name == o.name)
            ),
            None,
        )
        if twin is None:
            missing.append(item)
        else:
            remaining.remove(twin)
    return missing, remaining


class _Planner:
    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.pg = dialect.family == "postgresql"
        self.r = Renderer(dialect)
        self.out: list[Statement] = []

    def emit(
        self,
        sql: str,
        severity: Severity,
        category: str,
        reason: str,
        tables: tuple[str, ...] = (),
        *,
        transactional: bool = True,
    ) -> None:
        self.out.append(Statement(sql, severity, category, reason, tables, transactional))


def plan_changes(observed: Schema, desired: Schema) -> list[Statement]:
    if observed.dialect.family != desired.dialect.family:
        raise PlanError("the desired schema was read for another dialect")
    p = _Planner(observed.dialect)
    r = p.r
    observed_tables = {(t.schema, t.name): t for t in observed.tables}
    desired_tables = {(t.schema, t.name): t for t in desired.tables}
    kept = sorted(observed_tables.keys() & desired_tables.keys())
    added = sorted(desired_tables.keys() - observed_tables.keys())
    removed = sorted(observed_tables.keys() - desired_tables.keys())

    for schema in sorted(set(desired.schemas) - set(observed.schemas)):
        p.emit(r.create_schema(schema), Severity.SAFE, "schemas_added", f"create schema {schema}")
    observed_enums = {(e.schema, e.name): e for e in observed.enums}
    desired_enums = {(e.schema, e.name): e for e in desired.enums}
    for key in sorted(desired_enums.keys() - observed_enums.keys()):
        enum = desired_enums[key]
        p.emit(r.create_enum(enum), Severity.SAFE, "enums_added", f"create enum {enum.qualified}")
    for key in sorted(desired_enums.keys() & observed_enums.keys()):
        _enum_values(p, observed_enums[key].values, desired_enums[key])
    late_owners = _sequences_early(p, observed, desired)
    affected, touched = _reshaped(observed_tables, desired_tables, kept, added, removed)
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
        _, gone = _match(list(new.foreign_keys), list(old.foreign_keys))
        fk_drops += [(old, fk, True) for fk in gone]
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

    for key in kept:
        _drop_constraints(p, observed_tables[key], desired_tables[key])
    for key in removed:
        table = observed_tables[key]
        p.emit(
            r.drop_table(table),
            Severity.DESTRUCTIVE,
            "tables_removed",
            f"drop table {table.qualified}",
            (table.qualified,),
        )
    for key in added:
        _create_table(p, desired_tables[key])
    for key in kept:
        _columns(p, observed_tables[key], desired_tables[key])
    for key in kept:
        _add_constraints(p, observed_tables[key], desired_tables[key])
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
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        missing, _ = _match(list(new.foreign_keys), list(old.foreign_keys))
        for fk in missing:
            p.emit(
                r.add_constraint(new, r.foreign_key_clause(fk)),
                Severity.WARNING,
                "foreign_keys_added",
                f"add foreign key on {new.qualified}; existing rows must satisfy it",
                (new.qualified,),
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
    _grants(p, observed_tables, desired_tables, kept + added)
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
    for key in sorted(observed_enums.keys() - desired_enums.keys()):
        enum = observed_enums[key]
        p.emit(
            r.drop_enum(enum), Severity.DESTRUCTIVE, "enums_removed", f"drop enum {enum.qualified}"
        )
    return p.out


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


def _reshaped(
    observed_tables: dict[tuple[str, str], Table],
    desired_tables: dict[tuple[str, str], Table],
    kept: list[tuple[str, str]],
    added: list[tuple[str, str]],
    removed: list[tuple[str, str]],
) -> tuple[set[str], set[str]]:
    """(tables a view may not stay on while they change: dropped, or a column dropped or
    retyped — PostgreSQL refuses both under a view; tables whose columns change at all)."""
    affected = {observed_tables[key].qualified for key in removed}
    touched = set(affected) | {desired_tables[key].qualified for key in added}
    for key in kept:
        old, new = observed_tables[key], desired_tables[key]
        if old.columns == new.columns:
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
        if p.pg and set(before.depends_on) & affected:
            remake[name] = "a table it reads changes"
        elif before != after or star_moved:
            why = "its query changes" if before != after else "the columns `*` stands for change"
            compatible = (
                bool(before.columns)
                and after.columns[: len(before.columns)] == before.columns
                and not star_moved
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
        old_grants = observed_tables[key].grants if key in observed_tables else ()
        if old_grants == new.grants:
            continue
        before: dict[str, dict[str, bool]] = {}
        after: dict[str, dict[str, bool]] = {}
        for grants, into in ((old_grants, before), (new.grants, after)):
            for grant in grants:
                if grant.grantee in managed:
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


def _enum_values(p: _Planner, old: tuple[str, ...], enum: Any) -> None:
    new: tuple[str, ...] = enum.values
    if old == new:
        return
    if [v for v in new if v in old] != list(old):
        raise PlanError(
            f"enum {enum.qualified} loses or reorders values; this engine only adds values"
        )
    for position, value in enumerate(new):
        if value in old:
            continue
        before = next((v for v in new[position + 1 :] if v in old), None)
        p.emit(
            p.r.add_enum_value(enum, value, before),
            Severity.SAFE,
            "enums_changed",
            f"add a value to enum {enum.qualified}",
            transactional=False,
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
    if old.primary_key is not None and (
        new.primary_key is None or new.primary_key.key() != old.primary_key.key()
    ):
        p.emit(
            r.drop_primary_key(old, old.primary_key),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop primary key of {old.qualified}",
            where,
        )
    _, gone_uniques = _match(list(new.uniques), list(old.uniques))
    for unique in gone_uniques:
        p.emit(
            r.drop_unique(old, unique),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop unique constraint {unique.name} on {old.qualified}",
            where,
        )
    _, gone_checks = _match(list(new.checks), list(old.checks))
    for check in gone_checks:
        p.emit(
            r.drop_constraint(old, check.name or ""),
            Severity.DESTRUCTIVE,
            "constraints_removed",
            f"drop check {check.name} on {old.qualified}",
            where,
        )
    _, gone_indexes = _match(list(new.indexes), list(old.indexes))
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


def _add_constraints(p: _Planner, old: Table, new: Table) -> None:
    r = p.r
    where = (new.qualified,)
    if new.primary_key is not None and (
        old.primary_key is None or new.primary_key.key() != old.primary_key.key()
    ):
        p.emit(
            r.add_constraint(new, r.primary_key_clause(new.primary_key)),
            Severity.WARNING,
            "constraints_added",
            f"add primary key to {new.qualified}; existing rows must be unique and not null",
            where,
        )
    missing_uniques, _ = _match(list(new.uniques), list(old.uniques))
    for unique in missing_uniques:
        p.emit(
            r.add_constraint(new, r.unique_clause(unique)),
            Severity.WARNING,
            "constraints_added",
            f"add unique constraint on {new.qualified}; existing rows must be unique",
            where,
        )
    missing_checks, _ = _match(list(new.checks), list(old.checks))
    for check in missing_checks:
        p.emit(
            r.add_constraint(new, r.check_clause(check)),
            Severity.WARNING,
            "constraints_added",
            f"add check on {new.qualified}; existing rows must pass it",
            where,
        )
    missing_indexes, _ = _match(list(new.indexes), list(old.indexes))
    for index in missing_indexes:
        severity = Severity.WARNING if index.unique else Severity.SAFE
        p.emit(
            r.create_index(new, index),
            severity,
            "indexes_added",
            f"create index on {new.qualified}",
            where,
        )


def _columns(p: _Planner, old: Table, new: Table) -> None:
    if old.columns == new.columns and old.comment == new.comment:
        return
    r = p.r
    where = (new.qualified,)
    old_columns = {c.name: c for c in old.columns}
    new_names = {c.name for c in new.columns}
    for column in new.columns:
        before = old_columns.get(column.name)
        if before is None:
            needs_value = (
                not column.nullable
                and column.default is None
                and column.identity is None
                and column.generated is None
            )
            p.emit(
                r.add_column(new, column),
                Severity.DESTRUCTIVE if needs_value else Severity.SAFE,
                "columns_added",
                f"add column {new.qualified}.{column.name}"
                + (
                    "; NOT NULL without a default fails or fills existing rows"
                    if needs_value
                    else ""
                ),
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
            _change_column(p, new, before, column)
    for column in old.columns:
        if column.name not in new_names:
            p.emit(
                r.drop_column(old, column.name),
                Severity.DESTRUCTIVE,
                "columns_removed",
                f"drop column {old.qualified}.{column.name}",
                where,
            )
    if old.comment != new.comment:
        p.emit(
            r.table_comment(new, new.comment),
            Severity.SAFE,
            "tables_changed",
            f"comment on table {new.qualified}",
            where,
        )


def _change_column(p: _Planner, table: Table, old: Column, new: Column) -> None:
    r = p.r
    where = (table.qualified,)
    name = f"{table.qualified}.{new.name}"
    if old.generated != new.generated:
        # A generated column's expression cannot be altered in place.
        p.emit(
            r.drop_column(table, old.name),
            Severity.DESTRUCTIVE,
            "columns_changed",
            f"drop column {name} to redefine its generation",
            where,
        )
        p.emit(
            r.add_column(table, new),
            Severity.SAFE,
            "columns_changed",
            f"add column {name} with its new generation",
            where,
        )
        return
    reasons: list[tuple[Severity, str]] = []
    type_changed = old.type != new.type or old.collation != new.collation
    if type_changed:
        if old.collation != new.collation:
            reasons.append((Severity.WARNING, "collation changes"))
        if old.type != new.type:
            widens = type_widens(old.type, new.type)
            reasons.append(
                (Severity.WARNING, "type widens")
                if widens
                else (Severity.DESTRUCTIVE, "type narrows or converts")
            )
    if old.nullable and not new.nullable:
        reasons.append((Severity.DESTRUCTIVE, "adds NOT NULL"))
    if not old.nullable and new.nullable:
        reasons.append((Severity.SAFE, "drops NOT NULL"))
    if old.default != new.default:
        reasons.append((Severity.SAFE, "default changes"))
    if old.identity != new.identity:
        if "serial" in {old.identity, new.identity}:
            raise PlanError(f"column {name}: changing to or from serial is not planned")
        reasons.append((Severity.WARNING, "identity changes"))
    comment_changed = old.comment != new.comment
    if comment_changed:
        reasons.append((Severity.SAFE, "comment changes"))
    severity = max((s for s, _ in reasons), key=lambda s: s.rank)
    reason = f"change column {name}: " + ", ".join(text for _, text in reasons)
    if not p.pg:
        p.emit(r.modify_column(table, new), severity, "columns_changed", reason, where)
        return
    statements: list[tuple[str, Severity]] = []
    if old.identity is not None and new.identity is None:
        # An identity column refuses DROP NOT NULL until it is an ordinary column.
        statements.append((r.alter_column(table, new.name, "DROP IDENTITY"), Severity.WARNING))
    if type_changed:
        if old.default is not None:
            statements.append((r.alter_column(table, new.name, "DROP DEFAULT"), Severity.SAFE))
        statements.append((r.set_type(table, new), severity))
        if new.default is not None:
            statements.append(
                (r.alter_column(table, new.name, f"SET DEFAULT {new.default}"), Severity.SAFE)
            )
    elif old.default != new.default:
        action = f"SET DEFAULT {new.default}" if new.default is not None else "DROP DEFAULT"
        statements.append((r.alter_column(table, new.name, action), Severity.SAFE))
    if old.nullable != new.nullable:
        action = "DROP NOT NULL" if new.nullable else "SET NOT NULL"
        statements.append(
            (
                r.alter_column(table, new.name, action),
                Severity.SAFE if new.nullable else Severity.DESTRUCTIVE,
            )
        )
    if old.identity != new.identity and new.identity is not None:
        if old.identity is None:
            action = f"ADD GENERATED {new.identity.upper()} AS IDENTITY"
        else:
            action = f"SET GENERATED {new.identity.upper()}"
        statements.append((r.alter_column(table, new.name, action), Severity.WARNING))
    if comment_changed:
        statements.append((r.column_comment(table, new.name, new.comment), Severity.SAFE))
    for sql, statement_severity in statements:
        p.emit(sql, statement_severity, "columns_changed", reason, where)
