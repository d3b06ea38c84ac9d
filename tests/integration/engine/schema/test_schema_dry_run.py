"""What a dry run proves, and the timeouts every statement is held to, on real servers.

PostgreSQL: the plan's exact statements run in a transaction that is rolled back; the first
failure is the refusal (DryRunRefused, its index and SQLSTATE). MySQL/MariaDB cannot try DDL
without committing it: each statement is prepared and the rows are checked for what would
make it fail (PrecheckRefused), and the result names what was checked. Either way nothing
stays.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiomysql
import asyncpg
import pytest

from ptah_operator.engine.schema.connection import parse_url
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.timeouts import Timeouts

from .schema_roundtrip import (
    apply_bytes,
    converge,
    execute,
    fingerprint,
    plan_for,
    ptah_schema,
    write_desired,
)

BASE = "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int, code varchar(10));"


@pytest.fixture(params=["postgresql", "mariadb"])
def url(request: pytest.FixtureRequest) -> str:
    value: str = request.getfixturevalue("pg_url" if request.param == "postgresql" else "maria_url")
    return value


def _pg(url: str) -> bool:
    return url.startswith("postgres")


async def _with_rows(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    await execute(
        url,
        "INSERT INTO people VALUES (1, 'a@x', NULL, '12'), (2, 'a@x', 5, 'abc'), (3, 'b@x', -1, '7')",
    )


# (what the desired schema adds, the PostgreSQL SQLSTATE, the MySQL check that finds it)
BREAKING = {
    "unique index over duplicates": (
        "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int, code varchar(10));"
        " CREATE UNIQUE INDEX people_email ON people (email);",
        "23505",
        "uniqueRows",
    ),
    "NOT NULL over NULLs": (
        "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int NOT NULL,"
        " code varchar(10));",
        "23502",
        "notNullRows",
    ),
    "a check the rows break": (
        "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int, code varchar(10),"
        " CONSTRAINT adult CHECK (age >= 0));",
        "23514",
        "checkRows",
    ),
}


@pytest.mark.req("SCH-56")
@pytest.mark.parametrize("case", sorted(BREAKING))
async def test_a_dry_run_refuses_a_plan_the_rows_would_break(
    url: str, tmp_path: Path, case: str
) -> None:
    await _with_rows(url, tmp_path)
    desired_text, sqlstate, check = BREAKING[case]
    desired = write_desired(tmp_path, desired_text)
    plan_file = tmp_path / "plan.json"
    code, planned = ptah_schema(
        "plan",
        "--url",
        url,
        "--desired",
        str(desired),
        "--out",
        str(plan_file),
        "--allow-destructive",
    )
    assert code == 0, planned
    before = await fingerprint(url)
    code, answer = ptah_schema(
        "apply", "--url", url, "--plan", str(plan_file), "--dry-run", "--allow-destructive"
    )
    assert code == 4, answer
    assert answer["outcome"] == "refused"
    detail = answer["detail"]
    assert isinstance(detail, dict)
    if _pg(url):
        assert answer["reason"] == "DryRunRefused"
        assert detail["sqlstate"] == sqlstate
        assert isinstance(detail["statement"], int)
    else:
        assert answer["reason"] == "PrecheckRefused"
        assert detail["check"] == check
    assert "@x" not in json.dumps(answer), "a row's value in the answer"
    assert await fingerprint(url) == before


async def test_a_failing_cast_is_refused_by_the_postgresql_dry_run(
    pg_url: str, tmp_path: Path
) -> None:
    await _with_rows(pg_url, tmp_path)
    planned = await plan_for(
        pg_url,
        write_desired(
            tmp_path,
            "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int, code int);",
        ),
    )
    result = await apply_bytes(
        pg_url, planned.plan_bytes, policy=Policy(allow_destructive=True), dry_run=True
    )
    assert (result.outcome, result.reason) == ("refused", "DryRunRefused")
    assert result.detail["sqlstate"] == "22P02"


async def test_a_dry_run_that_holds_changes_nothing_and_says_what_it_checked(
    url: str, tmp_path: Path
) -> None:
    await _with_rows(url, tmp_path)
    planned = await plan_for(
        url,
        write_desired(
            tmp_path,
            "CREATE TABLE people (id int PRIMARY KEY, email varchar(100) NOT NULL, age int,"
            " code varchar(10)); CREATE UNIQUE INDEX people_id_email ON people (id, email);"
            " CREATE TABLE pets (id int PRIMARY KEY, owner int REFERENCES people (id));",
        ),
    )
    before = await fingerprint(url)
    result = await apply_bytes(
        url, planned.plan_bytes, policy=Policy(allow_destructive=True), dry_run=True
    )
    assert result.outcome == "dryRun", result
    total = len(planned.statements)
    if _pg(url):
        assert result.detail == {
            "checked": ["statementsRunAndRolledBack"],
            "statementsRun": total,
            "statements": total,
            "notRolledBack": ["sequenceValues", "effectsOutsideTheTransaction"],
        }
    else:
        assert result.detail["checked"] == ["statementsPrepared", "notNullRows", "uniqueRows"]
        assert result.detail["statementsPrepared"] == total
        assert result.detail["rowChecks"] == {"notNullRows": 1, "uniqueRows": 1}
    assert await fingerprint(url) == before
    applied = await apply_bytes(url, planned.plan_bytes, policy=Policy(allow_destructive=True))
    assert applied.outcome == "applied"


async def test_the_mysql_checks_find_orphan_rows_for_a_new_foreign_key(
    maria_url: str, tmp_path: Path
) -> None:
    await converge(
        maria_url,
        tmp_path,
        "CREATE TABLE owners (id int PRIMARY KEY); CREATE TABLE pets (id int PRIMARY KEY, owner int);",
    )
    await execute(
        maria_url, "INSERT INTO owners VALUES (1)", "INSERT INTO pets VALUES (1, 1), (2, 9)"
    )
    planned = await plan_for(
        maria_url,
        write_desired(
            tmp_path,
            "CREATE TABLE owners (id int PRIMARY KEY);"
            " CREATE TABLE pets (id int PRIMARY KEY, owner int,"
            " CONSTRAINT pets_owner FOREIGN KEY (owner) REFERENCES owners (id));",
        ),
    )
    result = await apply_bytes(
        maria_url, planned.plan_bytes, policy=Policy(allow_destructive=True), dry_run=True
    )
    assert (result.outcome, result.reason) == ("refused", "PrecheckRefused")
    assert result.detail["check"] == "foreignKeyRows"


async def _hold_a_lock(url: str) -> tuple[object, asyncio.Event]:
    """A session that reads `people` in a transaction it keeps open, as a long report
    would: an ALTER TABLE must wait for it."""
    target = parse_url(url)
    if _pg(url):
        pg = await asyncpg.connect(url)
        await pg.execute("BEGIN")
        await pg.fetch("SELECT * FROM people")
        return pg, asyncio.Event()
    my = await aiomysql.connect(
        host=target.host, port=target.port, user=target.user, db=target.database
    )
    async with my.cursor() as cur:
        await cur.execute("START TRANSACTION")
        await cur.execute("SELECT * FROM people")
        await cur.fetchall()
    return my, asyncio.Event()


async def _release(url: str, holder: object) -> None:
    if _pg(url):
        await holder.close()  # type: ignore[attr-defined]
    else:
        holder.close()  # type: ignore[attr-defined]


async def test_a_statement_waits_for_a_lock_no_longer_than_the_lock_timeout(
    url: str, tmp_path: Path
) -> None:
    await _with_rows(url, tmp_path)
    planned = await plan_for(
        url,
        write_desired(
            tmp_path,
            "CREATE TABLE people (id int PRIMARY KEY, email varchar(100), age int,"
            " code varchar(10), note text);",
        ),
    )
    holder, _ = await _hold_a_lock(url)
    try:
        for dry_run in (True, False) if _pg(url) else (False,):
            started = time.monotonic()
            result = await apply_bytes(
                url,
                planned.plan_bytes,
                timeouts=Timeouts(lock=1.0),
                dry_run=dry_run,
            )
            waited = time.monotonic() - started
            assert waited < 10, f"waited {waited:.1f} s behind a lock"
            if dry_run:
                assert (result.outcome, result.reason) == ("refused", "DryRunRefused")
                assert result.detail["sqlstate"] == "55P03"
            else:
                assert result.outcome == "unknown"
                code = result.detail.get("errno") or result.detail.get("sqlstate")
                assert code in {"55P03", 1205}, result
    finally:
        await _release(url, holder)
    # Once the reader is gone, the same plan applies.
    assert (await apply_bytes(url, planned.plan_bytes)).outcome == "applied"
