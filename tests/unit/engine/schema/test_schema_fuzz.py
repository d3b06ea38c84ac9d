"""Fuzzing the desired-schema readers, the normalizers and the renderer (Hypothesis).

Properties, on any input:
- a reader gives Parts or a DesiredSchemaError, never another exception (a traceback);
- a normalizer gives a canonical text or a NormalizationError, and its canonical text is a
  fixed point (normalizing it again gives it back: what the catalog and the desired side
  both pass through must meet);
- every statement the renderer makes of what a reader accepted is exactly one statement.

Bounded here (`PTAH_FUZZ_EXAMPLES`, default 150 per property); `make fuzz` runs longer.
"""

from __future__ import annotations

import os

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, example, given, settings

from ptah_operator.engine.schema.apply import one_statement
from ptah_operator.engine.schema.ddl import parse_ddl
from ptah_operator.engine.schema.desired import assemble
from ptah_operator.engine.schema.diff import plan_changes
from ptah_operator.engine.schema.hcl import parse_hcl
from ptah_operator.engine.schema.model import Dialect, Schema
from ptah_operator.engine.schema.normalize import (
    NormalizationError,
    is_plain_column,
    normalize_default,
    normalize_expression,
    normalize_index_key,
    normalize_type,
)
from ptah_operator.engine.schema.parts import DesiredSchemaError
from ptah_operator.engine.schema.scope import Scope

EXAMPLES = int(os.environ.get("PTAH_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

DIALECTS = [Dialect.POSTGRESQL, Dialect.MARIADB]

# Pieces of SQL that quote, comment, end or start statements, mixed with plain text.
PIECES = [
    "'",
    '"',
    "`",
    ";",
    "--",
    "#",
    "/*",
    "*/",
    "/*!",
    "$$",
    "$t$",
    "E'",
    "\\",
    "(",
    ")",
    ",",
    " ",
    "\n",
    "::",
    "DROP TABLE accounts",
    "SELECT 1",
    "now()",
    "CURRENT_TIMESTAMP",
    "a",
    "x > 0",
    "1",
    "-1.5",
    "NULL",
    "int",
    "varchar(10)",
    "AND",
    "ARRAY[1,2]",
    "interval '1 day'",
    "\x00",
    "\u00e9",
]
sql_text = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
    st.text(max_size=40),
)


def _fixed_point(normalize: object, dialect: Dialect, text: str, *extra: str) -> None:
    assert callable(normalize)
    try:
        once = normalize(dialect, text, *extra)
    except NormalizationError:
        return
    if once is None:
        return
    assert normalize(dialect, once, *extra) == once


@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(text=sql_text)
def test_types_normalize_to_a_fixed_point_or_are_refused(dialect: Dialect, text: str) -> None:
    _fixed_point(normalize_type, dialect, text)


@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(text=sql_text)
def test_expressions_normalize_to_a_fixed_point_or_are_refused(dialect: Dialect, text: str) -> None:
    _fixed_point(normalize_expression, dialect, text)
    try:
        key = normalize_index_key(dialect, text)
    except NormalizationError:
        return
    # A plain column is kept as its bare name, which is not SQL to read again.
    assert key
    if not is_plain_column(key):
        assert normalize_index_key(dialect, key) == key


@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(text=sql_text, column_type=st.sampled_from(["integer", "text", "decimal(10,2)", "int"]))
# Found by this test: the compiled sqlglot raised a TypeError on these (a traceback).
@example(text="0?", column_type="integer")
@example(text="1 ?", column_type="integer")
def test_defaults_normalize_to_a_fixed_point_or_are_refused(
    dialect: Dialect, text: str, column_type: str
) -> None:
    _fixed_point(normalize_default, dialect, text, column_type)


def _hcl_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


HCL_SLOTS = [
    'column "b" {{ type = {v} }}',
    'column "b" {{ type = int  default = sql({v}) }}',
    'column "b" {{ type = text  default = {v} }}',
    'column "b" {{ type = int  as {{ expr = {v} }} }}',
    'column "b" {{ type = int  comment = {v} }}',
    'index "ix" {{ columns = [column.a]  type = {v} }}',
    'index "ix" {{ columns = [column.a]  where = {v} }}',
    'index "ix" {{ on {{ expr = {v} }} }}',
    'check "c" {{ expr = {v} }}',
    'foreign_key "fk" {{ columns = [column.a]  ref_columns = [table.t.column.id]  on_delete = {v} }}',
]


def _accepted_statements_are_single(dialect: Dialect, parts: list[object]) -> None:
    desired = assemble(dialect, parts, Scope())  # type: ignore[arg-type]
    empty = Schema(dialect=dialect, schemas=("public",) if dialect is Dialect.POSTGRESQL else ())
    for statement in plan_changes(empty, desired):
        assert one_statement(statement.sql, dialect), "a rendered entry is not one statement"


@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(slot=st.sampled_from(HCL_SLOTS), text=sql_text)
def test_hcl_fields_are_taken_as_one_piece_of_sql_or_refused(
    dialect: Dialect, slot: str, text: str
) -> None:
    body = slot.format(v=_hcl_string(text))
    document = f"""
table "t" {{
  column "id" {{ type = int  null = false }}
  column "a" {{ type = int }}
  primary_key {{ columns = [column.id] }}
  {body}
}}
"""
    try:
        parts = parse_hcl(dialect, document, "fuzz.hcl")
        _accepted_statements_are_single(dialect, [parts])
    except DesiredSchemaError:
        return


SQL_SLOTS = [
    "CREATE TABLE t (id int PRIMARY KEY, a {v});",
    "CREATE TABLE t (id int PRIMARY KEY, a int DEFAULT {v});",
    "CREATE TABLE t (id int PRIMARY KEY, a int, CHECK ({v}));",
    "CREATE TABLE t (id int PRIMARY KEY, a int); CREATE INDEX ix ON t (a) WHERE {v};",
    "CREATE TABLE t (id int PRIMARY KEY, a int COMMENT '{v}');",
    "CREATE TABLE t (id int PRIMARY KEY, a int); COMMENT ON TABLE t IS '{v}';",
    "CREATE VIEW v AS {v};",
    "{v}",
]


@pytest.mark.parametrize("dialect", DIALECTS)
@FUZZ
@given(slot=st.sampled_from(SQL_SLOTS), text=sql_text)
def test_sql_ddl_is_read_or_refused(dialect: Dialect, slot: str, text: str) -> None:
    try:
        parts = parse_ddl(dialect, slot.format(v=text), "fuzz.sql")
        _accepted_statements_are_single(dialect, [parts])
    except DesiredSchemaError:
        return
