"""Renames stay a drop and an add; a drop of what the same plan adds in the same shape says it
looks like a rename, in the plan file, the statement's reason and the Plan's findings."""

from __future__ import annotations

import pytest

from ptah_operator.engine.schema.model import Dialect
from ptah_operator.engine.schema.plan import read_plan
from ptah_operator.runner.schema_document import LOOKS_LIKE_RENAME, findings

from .test_schema_plan import MY, PG, plan, schema

BEFORE = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100) NOT NULL, note text);"


def _hints(dialect: Dialect, after: str) -> dict[str, str | None]:
    return {
        s.category: s.looks_like_rename_to
        for s in plan(dialect, BEFORE, after)
        if s.category in {"tables_removed", "columns_removed"}
    }


@pytest.mark.parametrize("dialect", [PG, MY])
def test_a_column_dropped_and_one_of_its_shape_added_looks_like_a_rename(
    dialect: Dialect,
) -> None:
    after = "CREATE TABLE users (id int PRIMARY KEY, mail varchar(100) NOT NULL, note text);"
    statements = plan(dialect, BEFORE, after)
    dropped = next(s for s in statements if s.category == "columns_removed")
    qualified = "public.users" if dialect is PG else "users"
    assert dropped.looks_like_rename_to == f"{qualified}.mail"
    assert "looks like a rename" in dropped.reason
    listed, total = findings(statements)
    renames = [f for f in listed if f["code"] == LOOKS_LIKE_RENAME]
    assert renames == [
        {
            "code": LOOKS_LIKE_RENAME,
            "severity": "Critical",
            "category": "columns_removed",
            "statementIndex": statements.index(dropped),
            "object": qualified,
            "related": f"{qualified}.mail",
        }
    ]
    assert total == len(listed)


@pytest.mark.parametrize(
    "after",
    [
        # Another shape: a type, nullability or default differs.
        "CREATE TABLE users (id int PRIMARY KEY, mail varchar(200) NOT NULL, note text);",
        "CREATE TABLE users (id int PRIMARY KEY, mail varchar(100), note text);",
        # Two added columns of the shape: no one of them is named.
        "CREATE TABLE users (id int PRIMARY KEY, a varchar(100) NOT NULL,"
        " b varchar(100) NOT NULL, note text);",
    ],
)
def test_no_rename_is_suggested_without_exactly_one_twin(after: str) -> None:
    assert _hints(PG, after) == {"columns_removed": None}


def test_a_table_dropped_and_one_of_its_shape_added_looks_like_a_rename() -> None:
    after = "CREATE TABLE people (id int PRIMARY KEY, email varchar(100) NOT NULL, note text);"
    assert _hints(PG, after) == {"tables_removed": "public.people"}
    assert _hints(PG, after.replace("note text", "note varchar(5)")) == {"tables_removed": None}


def test_the_hint_is_in_the_plan_file() -> None:
    from ptah_operator.engine.schema.diff import plan_changes
    from ptah_operator.engine.schema.plan import build_plan
    from ptah_operator.engine.schema.scope import Scope

    before = schema(PG, BEFORE)
    after = schema(
        PG, "CREATE TABLE users (id int PRIMARY KEY, mail varchar(100) NOT NULL, note text);"
    )
    raw = build_plan(before, after, Scope(), plan_changes(before, after))
    hinted = [s for s in read_plan(raw).statements if s.looks_like_rename_to]
    assert [s.looks_like_rename_to for s in hinted] == ["public.users.mail"]
