"""A Plan's two guards, with the database played: two independent plans that differ are
PlanIncoherent (SCH-55), and a dry run the Apply path refuses stops the Plan (SCH-56). Either
way nothing is uploaded and no plan is reported. Pinned where a one-line change to the runner
survived every other test (issue #11's mutation review); the integration suite runs both
against real databases, where two plans never differ."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ptah_operator.api.content import digest_of_files
from ptah_operator.api.contracts.codes import ExitCode
from ptah_operator.api.contracts.operation import ResourceRef
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.schema.apply import ApplyResult
from ptah_operator.engine.schema.operations import PlanResult
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.runner import schema as runner
from ptah_operator.runner.schema import SchemaOperation, SchemaProgress, run_plan
from ptah_operator.runner.schema_document import Piece

FILES = {"orders.sql": b"CREATE TABLE orders (id bigint PRIMARY KEY);\n"}
URL = "postgresql://ptah:secret@db.internal:5432/shop"
TARGET = "sha256:" + "e" * 64
PLAN_BYTES = b"-- ptah plan\nCREATE TABLE orders (id bigint PRIMARY KEY);\n"


class _Lock:
    async def give_back(self) -> bool:
        return True


class _Database:
    """What the runner asks of the database, played: the plans it makes, the dry run's answer,
    and what was uploaded."""

    def __init__(self, plans: list[bytes], dry_run: ApplyResult) -> None:
        self.plans = list(plans)
        self.dry_run = dry_run
        self.dry_runs: list[bytes] = []
        self.uploaded: list[Piece] = []

    async def take(self, url: str, wait_seconds: float) -> _Lock:
        return _Lock()

    async def identity(self, url: str) -> str:
        return TARGET

    async def plan_url(self, *args: Any, **kwargs: Any) -> PlanResult:
        plan_bytes = self.plans.pop(0)
        return PlanResult(observed=None, desired=None, statements=[], plan_bytes=plan_bytes)  # type: ignore[arg-type]

    async def apply_plan(self, url: str, plan_bytes: bytes, **kwargs: Any) -> ApplyResult:
        assert kwargs["dry_run"] is True
        self.dry_runs.append(plan_bytes)
        return self.dry_run

    async def upload(self, piece: Piece) -> Any:
        self.uploaded.append(piece)
        raise AssertionError("nothing is uploaded")


def _operation() -> SchemaOperation:
    digest, _ = digest_of_files(FILES)
    return SchemaOperation(
        operation_id="op-00000000a1",
        type="Plan",
        resource=ResourceRef(kind="PtahSchema", uid="u-1", namespace="application", name="shop"),
        engine=Engine.POSTGRESQL,
        scope=Scope(),
        protected_tables=(),
        allow_destructive=False,
        content_digest=digest,
    )


async def _plan(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database: _Database
) -> dict[str, Any]:
    for name, content in FILES.items():
        (tmp_path / name).write_bytes(content)
    monkeypatch.setattr(runner._SchemaLock, "take", database.take)
    monkeypatch.setattr(runner, "_identity", database.identity)
    monkeypatch.setattr(runner, "plan_url", database.plan_url)
    monkeypatch.setattr(runner, "apply_plan", database.apply_plan)
    finished = await run_plan(
        _operation(), tmp_path, URL, SchemaProgress(), database.upload, lock_timeout=5
    )
    assert finished.exit_code == ExitCode.NOT_DONE
    assert database.uploaded == []
    document: dict[str, Any] = dict(finished.document)
    assert document.get("plan") is None, "a stopped Plan reports no plan"
    assert URL not in str(document)
    return document


@pytest.mark.req("SCH-55")
async def test_two_plans_that_differ_are_incoherent_and_nothing_is_tried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    database = _Database([PLAN_BYTES, PLAN_BYTES + b"-- another\n"], ApplyResult("dryRun"))
    document = await _plan(monkeypatch, tmp_path, database)
    assert document["error"]["reason"] == "PlanIncoherent"
    assert database.dry_runs == [], "an incoherent plan is never dry-run"


@pytest.mark.req("SCH-56")
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            ApplyResult("refused", "DryRunRefused", {"statement": 0, "sqlstate": "23505"}),
            "DryRunRefused",
        ),
        (ApplyResult("refused", "PrecheckRefused", {"check": "unique rows"}), "PrecheckRefused"),
        (ApplyResult("refused", "LockNotAcquired"), "LockLost"),
        (ApplyResult("refused", "StalePlan"), "DryRunRefused"),
    ],
)
async def test_a_dry_run_the_apply_path_refuses_stops_the_plan(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, answer: ApplyResult, reason: str
) -> None:
    database = _Database([PLAN_BYTES, PLAN_BYTES], answer)
    document = await _plan(monkeypatch, tmp_path, database)
    assert document["error"]["reason"] == reason
    assert database.dry_runs == [PLAN_BYTES], "the dry run tries exactly the agreed bytes"
