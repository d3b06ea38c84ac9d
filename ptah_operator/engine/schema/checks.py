"""What MySQL and MariaDB can check of a plan without changing anything.

Both servers commit each DDL statement as they run it, so a plan cannot be tried and rolled
back as it is on PostgreSQL. Instead, under the same lock and timeouts as an Apply:

- `statementsPrepared`: each statement is given to `PREPARE` (from a session variable, so
  no quoting is ours) and deallocated. The server parses it then; a syntax error (1064,
  1149) is the refusal. Other answers of PREPARE (a view over a table the plan makes
  earlier, a statement the server will not prepare) are counted as not prepared: PREPARE
  resolves some names and not others, and that is no verdict on the plan;
- `uniqueRows`, `notNullRows`, `checkRows`, `foreignKeyRows`: for each `Requirement` the
  planner attached (a unique key or index over existing columns, NOT NULL added to an
  existing column, a CHECK added to an existing table, a foreign key between existing
  tables), one SELECT looks for a row that would make the statement fail. Such a row is the
  refusal. A requirement whose query the server cannot answer (a column the plan adds
  first), or a check calling a function that may do more than compute (a stored function,
  SLEEP...: the query would run it), is counted as not checked.

Not checked: whether a type conversion succeeds for every value, the server's limits (row
size, index length, errno 1071/1118), privileges, and anything a statement depends on that
an earlier statement of the plan makes. The result names what was checked and counted,
never rows or server text (PRIV-05).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from ptah_operator.engine.schema.connection import Connection
from ptah_operator.engine.schema.diff import Requirement, Statement
from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.normalize import NormalizationError, parse_expression
from ptah_operator.engine.schema.render import Renderer

_SYNTAX_ERRORS = frozenset({1064, 1149})
CHECK_NAMES = {
    "unique": "uniqueRows",
    "notNull": "notNullRows",
    "check": "checkRows",
    "references": "foreignKeyRows",
}


# Functions a CHECK may call that do nothing but compute: a check expression calling anything
# else (a stored function, SLEEP, GET_LOCK, BENCHMARK...) is not evaluated before the Apply,
# where the server judges it; evaluating it would run it.
_PURE_FUNCTIONS = (
    exp.Cast,
    exp.Length,
    exp.Lower,
    exp.Upper,
    exp.Trim,
    exp.Abs,
    exp.Coalesce,
    exp.Substring,
    exp.Concat,
    exp.Round,
    exp.Floor,
    exp.Ceil,
    exp.RegexpLike,
    exp.If,
    exp.Greatest,
    exp.Least,
)


def checkable(dialect: Dialect, requirement: Requirement) -> bool:
    """Whether the rows can be queried for `requirement` without running anything but the
    query: a check's expression must be one expression calling only pure functions."""
    if requirement.kind != "check":
        return True
    try:
        tree = parse_expression(dialect, requirement.expression or "", "a check")
    except NormalizationError:
        return False
    return all(
        not isinstance(node, exp.Func) or isinstance(node, _PURE_FUNCTIONS) for node in tree.walk()
    )


def _errno(error: BaseException) -> int | None:
    args = getattr(error, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def requirement_query(renderer: Renderer, requirement: Requirement) -> str:
    """A SELECT that finds one row that breaks `requirement`, or none."""
    q = renderer.q
    table = q(requirement.table)
    columns = requirement.columns
    if requirement.kind == "notNull":
        nulls = " OR ".join(f"{q(c)} IS NULL" for c in columns)
        return f"SELECT 1 FROM {table} WHERE {nulls} LIMIT 1"
    if requirement.kind == "unique":
        prefixes = requirement.prefixes or (None,) * len(columns)
        keys = [
            f"LEFT({q(c)}, {p})" if p is not None else q(c)
            for c, p in zip(columns, prefixes, strict=True)
        ]
        present = " AND ".join(f"{q(c)} IS NOT NULL" for c in columns)
        return (
            f"SELECT 1 FROM {table} WHERE {present} GROUP BY {', '.join(keys)} "
            "HAVING COUNT(*) > 1 LIMIT 1"
        )
    if requirement.kind == "check":
        return f"SELECT 1 FROM {table} WHERE NOT ({requirement.expression}) LIMIT 1"
    if requirement.kind == "references":
        present = " AND ".join(f"c.{q(col)} IS NOT NULL" for col in columns)
        matched = " AND ".join(
            f"p.{q(ref)} = c.{q(col)}"
            for col, ref in zip(columns, requirement.ref_columns, strict=True)
        )
        return (
            f"SELECT 1 FROM {table} c WHERE {present} AND NOT EXISTS "
            f"(SELECT 1 FROM {q(requirement.ref_table or '')} p WHERE {matched}) LIMIT 1"
        )
    raise ValueError(f"unknown requirement kind {requirement.kind}")


@dataclass(frozen=True)
class Checked:
    """`refused`: a check found the plan would fail (`detail` names the statement and the
    check); else `detail` says what was checked and counted."""

    refused: bool
    detail: dict[str, Any]


async def mysql_checks(conn: Connection, statements: list[Statement]) -> Checked:
    renderer = Renderer(conn.dialect)
    prepared, not_prepared = 0, 0
    for index, statement in enumerate(statements):
        try:
            await conn.raw.query("SET @ptah_check = " + conn.raw.escape(statement.sql))
            await conn.raw.query("PREPARE ptah_check FROM @ptah_check")
            await conn.raw.query("DEALLOCATE PREPARE ptah_check")
            prepared += 1
        except Exception as error:
            errno = _errno(error)
            if errno in _SYNTAX_ERRORS:
                return Checked(
                    True, {"statement": index, "check": "statementsPrepared", "errno": errno}
                )
            if errno is None:
                raise
            not_prepared += 1
    counts: dict[str, int] = {}
    unchecked = 0
    for index, statement in enumerate(statements):
        for requirement in statement.requires:
            name = CHECK_NAMES[requirement.kind]
            if not checkable(conn.dialect, requirement):
                unchecked += 1
                continue
            try:
                broken = bool(await conn.mysql_rows(requirement_query(renderer, requirement)))
            except Exception as error:
                if _errno(error) is None:
                    raise
                unchecked += 1
                continue
            if broken:
                return Checked(True, {"statement": index, "check": name})
            counts[name] = counts.get(name, 0) + 1
    await conn.raw.query("SET @ptah_check = NULL")
    detail: dict[str, Any] = {
        "checked": ["statementsPrepared", *sorted(counts)],
        "statements": len(statements),
        "statementsPrepared": prepared,
        "statementsNotPrepared": not_prepared,
        "rowChecks": counts,
        "rowChecksNotRun": unchecked,
    }
    return Checked(False, detail)
