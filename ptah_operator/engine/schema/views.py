"""Views: what a view's query reads, and the server's word on whether two queries read alike.

A server keeps a view as it rewrote it: PostgreSQL qualifies every column and spells out the
casts it added (`t.email::text <> 'x'::text`), MariaDB qualifies with the database, names
every output and renames functions (`lcase`, `count(0)`). No re-spelling on the client side
matches that for every query, so `settle_views` asks the server itself, read-only in effect:

- PostgreSQL: the desired query becomes a temporary view inside a transaction that is always
  rolled back, and `pg_get_viewdef` of it is compared with that of the existing view (the
  same function, the same session: equal text means the same view);
- MySQL/MariaDB: `EXPLAIN EXTENDED` (MySQL: `EXPLAIN`) of both queries, whose rewritten
  query (note 1003) the server prints the same way for both.

Where the server reads them alike, the desired view takes the existing view's definition
(and keeps the person's query in `source`), so the diff sees no change. Where it cannot say
(a table the query reads is still to be made, or the server refuses temporary objects), the
desired view keeps the person's text and the view is re-made: the next plan then converges.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import asyncpg
import pymysql
import sqlglot
from sqlglot import exp

from ptah_operator.engine.schema.model import Dialect, Schema, View

_SIMPLE_NAME = re.compile(r"[a-z_][a-z0-9_]*")


class ViewError(ValueError):
    """A view the engine cannot read (the message names the view, never its query)."""


def _leftmost_select(query: exp.Expr) -> exp.Select | None:
    while isinstance(query, exp.SetOperation | exp.Subquery):
        query = query.this
    return query if isinstance(query, exp.Select) else None


def _selects_star(select: exp.Select) -> bool:
    return any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
        for e in select.expressions
    )


def relations(dialect: Dialect, query: exp.Expr) -> tuple[str, ...]:
    """The tables and views a query reads, qualified as the model names them (an unqualified
    PostgreSQL name is taken to be in `public`; MySQL names carry no database)."""
    ctes = {cte.alias_or_name for cte in query.find_all(exp.CTE)}
    found: set[str] = set()
    for table in query.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        name = str(table.this.this)
        if dialect.family == "postgresql" and not table.this.quoted:
            name = name.lower()
        db = table.args.get("db")
        if dialect.family == "mysql":
            if db is None and name in ctes:
                continue
            found.add(name)
            continue
        if db is None:
            if name in ctes:
                continue
            found.add(f"public.{name}")
        else:
            schema = str(db.this)
            if not db.quoted:
                schema = schema.lower()
            found.add(f"{schema}.{name}")
    return tuple(sorted(found))


def reads_star(query: exp.Expr) -> bool:
    return any(_selects_star(select) for select in query.find_all(exp.Select))


def desired_view(
    dialect: Dialect, schema: str, name: str, query: exp.Expr, column_names: list[str]
) -> View:
    """The view a person declared: `CREATE VIEW name (columns) AS query`, or HCL's `as`.

    A column list becomes output names in the query itself (`SELECT x AS a`), as the server
    reports it."""
    if not isinstance(query, exp.Query):
        raise ViewError(f"view {name}: its definition is not a query")
    query = query.copy()
    if column_names:
        select = _leftmost_select(query)
        if select is None or _selects_star(select) or len(select.expressions) != len(column_names):
            raise ViewError(
                f"view {name}: its column list must name each output of the select list"
            )
        select.set(
            "expressions",
            [
                exp.alias_(
                    e.this if isinstance(e, exp.Alias) else e,
                    column,
                    quoted=_SIMPLE_NAME.fullmatch(column) is None,
                )
                for e, column in zip(select.expressions, column_names, strict=True)
            ],
        )
    text = query.sql(dialect=dialect.sqlglot)
    compared = text
    if dialect.family == "mysql":
        # `_utf8mb3' '` (as a dump writes a view's literals): information_schema reports the
        # query without the introducer, so it is compared without it (the same string in any
        # UTF-8 set) and CREATE VIEW is given it as written.
        plain = query.transform(
            lambda node: (
                node.expression.copy()
                if isinstance(node, exp.Introducer)
                and str(node.this).lower() in {"_utf8", "_utf8mb3", "_utf8mb4"}
                else node
            )
        )
        compared = plain.sql(dialect=dialect.sqlglot)
    return View(
        schema=schema,
        name=name,
        definition=compared,
        source=text if compared != text else None,
        depends_on=relations(dialect, query),
        reads_star=reads_star(query),
    )


def observed_dependencies(dialect: Dialect, definition: str) -> tuple[str, ...]:
    """What an existing MySQL/MariaDB view reads (PostgreSQL's come from `pg_depend`)."""
    try:
        tree = sqlglot.parse_one(definition, read=dialect.sqlglot)
    except sqlglot.errors.ParseError:
        return ()
    return relations(dialect, tree)


def server_definition(text: str) -> str:
    """A definition as the server gave it, less the surrounding blanks and `;`."""
    return text.strip().rstrip(";").strip()


_PG_PROBE = """
SELECT pg_get_viewdef(c.oid, true),
       ARRAY(SELECT ARRAY[a.attname::text, format_type(a.atttypid, a.atttypmod)]
             FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0
             ORDER BY a.attnum)
FROM pg_class c WHERE c.oid = $1::regclass
"""


async def _settle_postgresql(conn: Any, pairs: list[tuple[View, View]]) -> dict[str, View]:
    settled: dict[str, View] = {}
    transaction = conn.transaction()
    await transaction.start()
    try:
        for position, (old, new) in enumerate(pairs):
            probe = f"pg_temp.ptah_probe_{position}"
            try:
                async with conn.transaction():
                    # `fetch`: the extended protocol, one statement per Parse, as at Apply.
                    await conn.fetch(f"CREATE TEMPORARY VIEW ptah_probe_{position} AS {new.text}")
                    definition, columns = await conn.fetchrow(_PG_PROBE, probe)
            except asyncpg.PostgresError:
                continue
            columns_read = tuple((str(c[0]), str(c[1])) for c in columns)
            if server_definition(definition) == old.definition:
                settled[new.qualified] = dataclasses.replace(
                    new, definition=old.definition, source=new.text, columns=columns_read
                )
            else:
                settled[new.qualified] = dataclasses.replace(new, columns=columns_read)
    finally:
        await transaction.rollback()
    return settled


async def _explained(conn: Any, dialect: Dialect, query: str) -> str | None:
    verb = "EXPLAIN EXTENDED" if dialect is Dialect.MARIADB else "EXPLAIN"
    try:
        # The connection's own calls, not a cursor's: a cursor turns each note into a Python
        # warning, which would print the rewritten query on stderr.
        await conn.query(f"{verb} {query}")
        notes = await conn.show_warnings() or ()
    except pymysql.MySQLError:
        return None
    rewritten = [str(row[2]) for row in notes if len(row) > 2 and int(row[1]) == 1003]
    return rewritten[0] if len(rewritten) == 1 else None


async def _settle_mysql(
    conn: Any, dialect: Dialect, pairs: list[tuple[View, View]]
) -> dict[str, View]:
    settled: dict[str, View] = {}
    for old, new in pairs:
        mine = await _explained(conn, dialect, new.definition)
        theirs = await _explained(conn, dialect, old.definition)
        if mine is not None and mine == theirs:
            settled[new.qualified] = dataclasses.replace(
                new, definition=old.definition, source=new.text, columns=old.columns
            )
    return settled


async def settle_views(conn: Any, observed: Schema, desired: Schema) -> Schema:
    """`desired`, each of its views that the server reads as the existing view of the same
    name taking that view's definition. Nothing persistent is written."""
    existing = {v.qualified: v for v in observed.views}
    pairs = [
        (existing[v.qualified], v)
        for v in desired.views
        if v.qualified in existing and existing[v.qualified].definition != v.definition
    ]
    if not pairs:
        return desired
    if desired.dialect.family == "postgresql":
        settled = await _settle_postgresql(conn, pairs)
    else:
        settled = await _settle_mysql(conn, desired.dialect, pairs)
    if not settled:
        return desired
    return dataclasses.replace(
        desired, views=tuple(settled.get(v.qualified, v) for v in desired.views)
    )
