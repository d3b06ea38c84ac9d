"""Apply's refusals and outcomes on real databases: each refusal changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ptah_operator.engine.schema.plan import Policy

from .schema_roundtrip import apply_bytes, converge, execute, fingerprint, plan_for, write_desired

BASE = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100), note text);"
SHRUNK = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100));"
GROWN = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100), note text, age int);"


@pytest.fixture(params=["postgresql", "mariadb"])
def url(request: pytest.FixtureRequest) -> str:
    value: str = request.getfixturevalue("pg_url" if request.param == "postgresql" else "maria_url")
    return value


async def test_a_destructive_plan_is_refused_without_permission(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    before = await fingerprint(url)
    shrink = await plan_for(url, write_desired(tmp_path, SHRUNK))
    result = await apply_bytes(url, shrink.plan_bytes)
    assert (result.outcome, result.reason) == ("refused", "PolicyRefused")
    assert result.detail["refusals"] == [{"reason": "DestructiveChangeNotAllowed", "statements": 1}]
    assert await fingerprint(url) == before


async def test_a_plan_touching_a_protected_table_is_refused(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    before = await fingerprint(url)
    grow = await plan_for(url, write_desired(tmp_path, GROWN))
    result = await apply_bytes(url, grow.plan_bytes, policy=Policy(protected_tables=("users",)))
    assert result.outcome == "refused"
    assert result.detail["refusals"][0]["reason"] == "ProtectedTable"
    assert result.detail["refusals"][0]["tables"][0].endswith("users")
    assert await fingerprint(url) == before


@pytest.mark.req("SCH-57")
async def test_a_stale_plan_is_refused_and_changes_nothing(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    grow = await plan_for(url, write_desired(tmp_path, GROWN))
    await execute(url, "CREATE TABLE other (id int PRIMARY KEY)")
    moved = await fingerprint(url)
    result = await apply_bytes(url, grow.plan_bytes)
    assert (result.outcome, result.reason) == ("refused", "StalePlan")
    assert await fingerprint(url) == moved


@pytest.mark.req("SCH-57")
async def test_altered_plan_bytes_are_refused(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    before = await fingerprint(url)
    grow = await plan_for(url, write_desired(tmp_path, GROWN))
    tampered = grow.plan_bytes.replace(b"age", b"aga")
    result = await apply_bytes(url, tampered)
    assert (result.outcome, result.reason) == ("refused", "PlanDigestMismatch")
    other = await apply_bytes(url, grow.plan_bytes, expected_digest="sha256:" + "0" * 64)
    assert (other.outcome, other.reason) == ("refused", "PlanDigestMismatch")
    assert await fingerprint(url) == before


@pytest.mark.req("SCH-55", "SCH-56")
async def test_two_plans_agree_and_a_dry_run_changes_nothing(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    desired = write_desired(tmp_path, GROWN)
    first, second = await plan_for(url, desired), await plan_for(url, desired)
    assert first.plan_bytes == second.plan_bytes
    before = await fingerprint(url)
    result = await apply_bytes(url, first.plan_bytes, dry_run=True)
    assert result.outcome == "dryRun"
    assert await fingerprint(url) == before


@pytest.mark.req("SCH-59")
async def test_an_error_during_apply_is_an_unknown_outcome(url: str, tmp_path: Path) -> None:
    await converge(url, tmp_path, BASE)
    await execute(
        url,
        "INSERT INTO users (id, email) VALUES (1, 'same')",
        "INSERT INTO users (id, email) VALUES (2, 'same')",
    )
    unique = "CREATE TABLE users (id int PRIMARY KEY, email varchar(100) UNIQUE, note text);"
    plan = await plan_for(url, write_desired(tmp_path, unique))
    result = await apply_bytes(url, plan.plan_bytes)
    assert (result.outcome, result.reason) == ("unknown", "ApplyOutcomeUnknown")
    # Codes only: no statement or server text in the result.
    assert set(result.detail) <= {"statement", "error", "sqlstate", "errno"}
    # A fresh observation still sees the change to make; nothing replays it.
    again = await plan_for(url, write_desired(tmp_path, unique))
    assert len(again.statements) == 1


async def test_the_command_line_plans_applies_and_reports_drift(
    pg_url: str, tmp_path: Path
) -> None:
    desired = write_desired(tmp_path, GROWN)
    env = {**os.environ, "PTAH_DATABASE_URL": pg_url}
    ptah = str(Path(sys.executable).with_name("ptah"))

    def run(*args: str) -> tuple[int, dict[str, object], str]:
        done = subprocess.run([ptah, "schema", *args], capture_output=True, text=True, env=env)
        return done.returncode, json.loads(done.stdout), done.stderr

    code, drift, _ = run("drift", "--desired", str(desired))
    assert code == 0
    assert drift["contractVersion"] == "ptah.schema.drift/v1"
    assert (drift["total"], drift["categories"]) == (1, {"tables_added": 1})
    plan_file = tmp_path / "plan.json"
    code, planned, _ = run("plan", "--desired", str(desired), "--out", str(plan_file))
    assert (code, planned["noChange"]) == (0, False)
    code, applied, progress = run(
        "apply", "--plan", str(plan_file), "--expect-digest", str(planned["digest"])
    )
    assert (code, applied["outcome"]) == (0, "applied")
    assert "CREATE" not in progress
    assert "users" not in progress
    code, replanned, _ = run("plan", "--desired", str(desired), "--out", str(plan_file))
    assert (code, replanned["noChange"]) == (0, True)
    code, refused, _ = run(
        "plan", "--desired", str(write_desired(tmp_path, "")), "--out", str(plan_file)
    )
    assert (code, refused["refused"]) == (3, True)
