"""Which database answers pass on their own (issue #11: a run refused before it selected
anything runs the same plan again under apply: Always only for those; every other refusal waits
for a person, docs/design/lifecycle-decisions.md)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ptah_operator.engine.dialect import Dialect
from ptah_operator.engine.migrations.apply import Outcome, apply
from ptah_operator.engine.migrations.connection import (
    Database,
    DatabaseError,
    Engine,
    ErrorClass,
    Target,
)
from ptah_operator.engine.migrations.directory import read_directory
from ptah_operator.engine.migrations.revision_table import RevisionTable


@pytest.mark.req("MIG-44")
@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (ErrorClass(sqlstate="40001"), True),
        (ErrorClass(sqlstate="40P01"), True),
        (ErrorClass(sqlstate="55P03"), True),
        (ErrorClass(sqlstate="57014"), True),
        (ErrorClass(sqlstate="57P01"), True),
        (ErrorClass(sqlstate="57P03"), True),
        (ErrorClass(sqlstate="53300"), True),
        (ErrorClass(sqlstate="08006"), True),
        (ErrorClass(sqlstate="42501"), False),
        (ErrorClass(sqlstate="42703"), False),
        (ErrorClass(sqlstate="57P04"), False),
        (ErrorClass(sqlstate="53100"), False),
        (ErrorClass(sqlstate="XX000"), False),
        (ErrorClass(mysql_errno=1205), True),
        (ErrorClass(mysql_errno=1213), True),
        (ErrorClass(mysql_errno=1040), True),
        (ErrorClass(mysql_errno=3024), True),
        (ErrorClass(mysql_errno=1969), True),
        (ErrorClass(mysql_errno=1142), False),
        (ErrorClass(mysql_errno=1054), False),
        (ErrorClass(), False),
    ],
)
def test_only_error_classes_that_pass_on_their_own_are_transient(
    error: ErrorClass, transient: bool
) -> None:
    assert error.transient is transient


class _Refusing(Database):
    """A session whose lock is free and whose every query is refused with `error`."""

    engine = Engine.POSTGRESQL

    def __init__(self, error: ErrorClass) -> None:
        self.target = Target(
            Dialect.POSTGRESQL, "postgresql://db/app", "db", 5432, "app", "app", "", {}
        )
        self.error = error

    def param(self, index: int) -> str:
        return f"${index}"

    async def execute(self, sql: str, params: Sequence[object] | None = None) -> None:
        raise DatabaseError(self.error)

    async def fetch(
        self, sql: str, params: Sequence[object] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        raise DatabaseError(self.error)

    async def try_lock(self, wait_seconds: float) -> bool:
        return True

    async def unlock(self) -> None:
        return None

    async def identity(self) -> dict[str, object]:
        return {"engine": "PostgreSQL", "database": "app"}

    async def close(self) -> None:
        return None

    def terminate(self) -> None:
        return None

    async def session_id(self) -> int:
        return 1


@pytest.mark.req("MIG-44", "MIG-50")
@pytest.mark.parametrize(
    ("sqlstate", "reason"), [("40P01", "DatabaseBusy"), ("42501", "DatabaseError")]
)
def test_a_history_read_refused_before_selection_says_whether_it_passes(
    tmp_path: Path, sqlstate: str, reason: str
) -> None:
    (tmp_path / "0001_a.up.sql").write_text("CREATE TABLE a (id INT);\n")
    db = _Refusing(ErrorClass(sqlstate=sqlstate))
    result = asyncio.run(apply(db, read_directory(tmp_path), table=RevisionTable()))
    assert (result.outcome, result.selected, result.reason) == (Outcome.FAILED, False, reason)
    assert result.message == f"reading the history failed with SQLSTATE {sqlstate}"
