"""Helpers for the schema round-trip scenarios: write a desired schema, plan, apply, re-plan."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiomysql
import asyncpg

from ptah_operator.engine.schema.apply import ApplyResult, apply_plan
from ptah_operator.engine.schema.connection import parse_url
from ptah_operator.engine.schema.operations import PlanResult, inspect_url, plan_url
from ptah_operator.engine.schema.plan import Policy
from ptah_operator.engine.schema.scope import Scope

_counter = itertools.count()


def write_desired(directory: Path, text: str, suffix: str = ".sql") -> Path:
    path = directory / f"desired-{next(_counter)}{suffix}"
    path.write_text(text)
    return path


async def plan_for(url: str, desired: Path, scope: Scope | None = None) -> PlanResult:
    return await plan_url(url, [desired], scope or Scope())


async def converge(
    url: str,
    directory: Path,
    text: str,
    *,
    suffix: str = ".sql",
    scope: Scope | None = None,
    policy: Policy | None = None,
) -> PlanResult:
    """desired -> plan -> apply -> a fresh plan is empty. Returns the plan that was applied."""
    desired = write_desired(directory, text, suffix)
    first = await plan_for(url, desired, scope)
    result = await apply_plan(
        url, first.plan_bytes, policy=policy or Policy(allow_destructive=True)
    )
    assert result.outcome == "applied", result
    again = await plan_for(url, desired, scope)
    leftover = [s.sql for s in again.statements]
    assert leftover == [], (
        f"not converged: {leftover} left after {[s.sql for s in first.statements]}"
    )
    return first


async def fingerprint(url: str, scope: Scope | None = None) -> str:
    return (await inspect_url(url, scope or Scope())).fingerprint()


async def execute(url: str, *statements: str) -> None:
    """Change the database behind the engine's back."""
    target = parse_url(url)
    if target.family == "postgresql":
        conn = await asyncpg.connect(url)
        try:
            for statement in statements:
                await conn.execute(statement)
        finally:
            await conn.close()
        return
    mconn = await aiomysql.connect(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password or "",
        db=target.database,
        autocommit=True,
    )
    try:
        async with mconn.cursor() as cur:
            for statement in statements:
                await cur.execute(statement)
    finally:
        mconn.close()


async def apply_bytes(url: str, raw: bytes, **kwargs: Any) -> ApplyResult:
    return await apply_plan(url, raw, policy=kwargs.pop("policy", Policy()), **kwargs)


async def rows(url: str, sql: str) -> list[tuple[Any, ...]]:
    """The rows of one query, read behind the engine's back."""
    target = parse_url(url)
    if target.family == "postgresql":
        conn = await asyncpg.connect(url)
        try:
            return [tuple(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()
    mconn = await aiomysql.connect(
        host=target.host,
        port=target.port,
        user=target.user,
        password=target.password or "",
        db=target.database,
        autocommit=True,
    )
    try:
        async with mconn.cursor() as cur:
            await cur.execute(sql)
            return [tuple(r) for r in await cur.fetchall()]
    finally:
        mconn.close()


def ptah_schema(*args: str) -> tuple[int, dict[str, Any]]:
    """`ptah schema ARGS` as a person runs it: its exit code and the JSON it printed. It
    never ends in a traceback."""
    ptah = str(Path(sys.executable).with_name("ptah"))
    done = subprocess.run([ptah, "schema", *args], capture_output=True, text=True, check=False)
    assert "Traceback" not in done.stderr, "a traceback, not an error"
    answer: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, answer
