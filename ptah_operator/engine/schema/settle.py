"""PostgreSQL keeps a column default or a check as it parsed it: a typed literal is stored as
its value and printed in its type's output format (`TIMESTAMP '2020-01-01 00:00'` reads back
`'2020-01-01 00:00:00'::timestamp without time zone`, `INTERVAL '24 hours'` `'24:00:00'`,
`x = SOME (ARRAY[...])` `x = ANY (ARRAY[...])`), which no client-side spelling reproduces
for every type. So, as for views (`views.settle_views`), planning asks the server: for each
kept table where a desired default or check differs in text from the existing one, the
expression is given to a temporary copy of the table (`CREATE TEMPORARY TABLE ... (LIKE t)`)
inside a transaction that is always rolled back; where what the server makes of it
normalizes to the existing text, the desired side takes the existing text. Where the server
cannot tell (a type or function still to be made, a read-only server), nothing is settled
and the change is planned: the next plan, once it exists, converges.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import asyncpg

from ptah_operator.engine.schema.model import Check, Column, Dialect, Schema, Table
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    normalize_default,
    normalize_expression,
)
from ptah_operator.engine.schema.render import Renderer

_D = Dialect.POSTGRESQL

_DEFAULT = """
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d
JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
WHERE d.adrelid = $1::regclass AND a.attname = $2
"""

_CHECK = """
SELECT pg_get_expr(c.conbin, c.conrelid) FROM pg_constraint c
WHERE c.conrelid = $1::regclass AND c.conname = 'ptah_probe'
"""


def _pending(old: Table, new: Table) -> tuple[list[tuple[Column, Column]], list[Check]]:
    defaults = [
        (before, after)
        for after in new.columns
        if (before := old.column(after.name)) is not None
        and after.default is not None
        and before.default is not None
        and before.default != after.default
        and before.type == after.type
    ]
    existing = {c.expr for c in old.checks}
    checks = [c for c in new.checks if c.expr not in existing]
    if checks and not old.checks:
        checks = []
    return defaults, checks


async def settle_expressions(conn: Any, observed: Schema, desired: Schema) -> Schema:
    """`desired`, each default and check the server reads as the existing one taking its
    text. Nothing persistent is written."""
    if desired.dialect.family != "postgresql":
        return desired
    old_tables = {(t.schema, t.name): t for t in observed.tables}
    work = {
        key: pending
        for t in desired.tables
        if (key := (t.schema, t.name)) in old_tables
        and any(pending := _pending(old_tables[key], t))
    }
    if not work:
        return desired
    r = Renderer(_D)
    settled: dict[tuple[str, str], Table] = {}
    transaction = conn.transaction()
    await transaction.start()
    try:
        for position, (key, (defaults, checks)) in enumerate(sorted(work.items())):
            old, new = old_tables[key], next(t for t in desired.tables if (t.schema, t.name) == key)
            probe = f"ptah_probe_{position}"
            try:
                async with conn.transaction():
                    await conn.execute(
                        f"CREATE TEMPORARY TABLE {probe} (LIKE {r.table(old.schema, old.name)})"
                    )
            except asyncpg.PostgresError:
                continue
            columns = {c.name: c for c in new.columns}
            for before, after in defaults:
                text = await _server_text(
                    conn,
                    f"ALTER TABLE {probe} ALTER COLUMN {r.q(after.name)} SET "
                    f"{r.default(after.default or '')}",
                    _DEFAULT,
                    probe,
                    after.name,
                )
                if text is not None and _same(normalize_default, text, before.default, after.type):
                    columns[after.name] = dataclasses.replace(after, default=before.default)
            new_checks = list(new.checks)
            for check in checks:
                text = await _server_text(
                    conn,
                    f"ALTER TABLE {probe} ADD CONSTRAINT ptah_probe CHECK ({check.expr})",
                    _CHECK,
                    probe,
                    None,
                )
                if text is None:
                    continue
                try:
                    expr = normalize_expression(_D, text)
                except NormalizationError:
                    continue
                twin = next(
                    (
                        c
                        for c in old.checks
                        if c.expr == expr and (check.name is None or check.name == c.name)
                    ),
                    None,
                )
                if twin is not None:
                    new_checks[new_checks.index(check)] = dataclasses.replace(check, expr=twin.expr)
            settled[key] = dataclasses.replace(
                new,
                columns=tuple(columns[c.name] for c in new.columns),
                checks=tuple(new_checks),
            )
    finally:
        await transaction.rollback()
    if not settled:
        return desired
    return dataclasses.replace(
        desired, tables=tuple(settled.get((t.schema, t.name), t) for t in desired.tables)
    )


def _same(normalize: Any, text: str, existing: str | None, column_type: str) -> bool:
    try:
        return bool(normalize(_D, text, column_type) == existing)
    except NormalizationError:
        return False


async def _server_text(
    conn: Any, statement: str, query: str, probe: str, column: str | None
) -> str | None:
    """What the server stores for the expression `statement` gives the probe, or None when it
    refuses it. Each try runs in a savepoint, undone."""
    try:
        async with conn.transaction():
            # `fetch`: the extended protocol, one statement per Parse, as at Apply: the
            # statement holds desired text.
            await conn.fetch(statement)
            if column is None:
                value = await conn.fetchval(query, f"pg_temp.{probe}")
            else:
                value = await conn.fetchval(query, f"pg_temp.{probe}", column)
            await conn.execute(
                "ALTER TABLE "
                + probe
                + (
                    f" ALTER COLUMN {Renderer(_D).q(column)} DROP DEFAULT"
                    if column is not None
                    else " DROP CONSTRAINT ptah_probe"
                )
            )
    except asyncpg.PostgresError:
        return None
    return str(value) if value is not None else None
