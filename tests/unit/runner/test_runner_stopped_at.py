"""Where an Apply that did not finish stopped, as the runner reports it (RUN-12, JNL-09).

The engine knows the file a run stopped in and how many of its statements are known committed
(`StoppedAt`), whatever stopped it: a statement that failed, a lost session, a failed commit, a
server that answered otherwise than asked. The result carries it as `run.stoppedAt`, so a
person investigating an Unknown or Partial run knows which file to look at. A runner stopped
by SIGTERM has no engine answer: it reports where the revision table, read again on a fresh
session, shows the run stopped, and nothing when that read fails.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ptah_operator.api.constants import OperationType
from ptah_operator.api.contracts.result import OperationReport
from ptah_operator.engine.migrations.apply import ExpectedMigration, Outcome, RunResult, StoppedAt
from ptah_operator.engine.migrations.directory import MigrationDirectory, read_directory
from ptah_operator.engine.migrations.revision_table import Revision, RevisionRead
from ptah_operator.reconcile.reports import read_report
from ptah_operator.reconcile.world import OperationResult
from ptah_operator.runner.document import VersionSpelling, result_document, run_block
from ptah_operator.runner.migration import Progress, after_interruption, interrupted
from tests.unit.runner.test_runner_document import OPERATION

T0 = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(seconds=3)
SQL = {
    "0000000001_users.up.sql": "CREATE TABLE users (id INT);\n",
    "0000000002_seed.up.sql": "INSERT INTO users VALUES (1);\n",
    "0000000003_index.up.sql": "CREATE INDEX users_id ON users (id);\n",
}


@pytest.fixture
def directory(tmp_path: Path) -> MigrationDirectory:
    for name, text in SQL.items():
        (tmp_path / name).write_text(text)
    return read_directory(tmp_path)


def _result(outcome: Outcome, reason: str, **fields: object) -> RunResult:
    result = RunResult(
        outcome=outcome, reason=reason, message="", started_at=T0, finished_at=T1, selected=True
    )
    for key, value in fields.items():
        setattr(result, key, value)
    return result


def _parsed(block: dict[str, object]) -> OperationReport:
    document = result_document(
        OPERATION, started_at=T0, finished_at=T1, target_identity_digest=None, run=block
    )
    report = read_report(
        OperationResult(OPERATION.operation_id, "Apply", T1, document),
        OperationReport,
        OPERATION.operation_id,
        OperationType.APPLY,
        OPERATION.resource.uid,
    )
    assert isinstance(report, OperationReport), report
    return report


@pytest.mark.req("RUN-12", "JNL-09")
@pytest.mark.parametrize(
    ("case", "result", "stopped"),
    [
        (
            "a lost session",
            _result(
                Outcome.UNKNOWN,
                "ConnectionLostError",
                message="the session was lost during the run; what it committed is not known",
                applied_versions=[1],
                stopped_at=StoppedAt(2, 0, 3),
            ),
            {"version": "0000000002", "statementsApplied": 0, "statementsTotal": 3},
        ),
        (
            "a failed commit",
            _result(
                Outcome.FAILED,
                "CommitFailed",
                message="version 3: the commit failed with SQLSTATE 23503",
                applied_versions=[1, 2],
                stopped_at=StoppedAt(3, 0, 1),
            ),
            {"version": "0000000003", "statementsApplied": 0, "statementsTotal": 1},
        ),
        (
            "a server that answered otherwise than asked",
            _result(
                Outcome.UNKNOWN,
                "StatementCountMismatch",
                message="version 1: the server did not answer one result per statement",
                stopped_at=StoppedAt(1, 0, 2),
            ),
            {"version": "0000000001", "statementsApplied": 0, "statementsTotal": 2},
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_the_run_block_names_where_a_run_stopped_without_a_failed_statement(
    directory: MigrationDirectory, case: str, result: RunResult, stopped: dict[str, object]
) -> None:
    block = run_block(result, VersionSpelling(directory))
    assert block["failure"] is None
    assert block["stoppedAt"] == stopped
    run = _parsed(block).run
    assert run is not None
    assert run.stopped_at is not None
    assert run.stopped_at.version == stopped["version"]


@pytest.mark.req("RUN-12")
def test_a_run_that_finished_names_no_stop(directory: MigrationDirectory) -> None:
    block = run_block(
        _result(Outcome.APPLIED, "Applied", applied_versions=[1, 2, 3]), VersionSpelling(directory)
    )
    assert "stoppedAt" not in block


def _row(version: int, state: str, applied: int, total: int, checksum: str) -> Revision:
    return Revision(
        version=version,
        description=None,
        kind="migration",
        state=state,
        statements_applied=applied,
        statements_total=total,
        checksum=checksum,
        execution_millis=None,
        error_class=None,
        recorded_by="up",
        applied_at=T0,
    )


@pytest.mark.req("RUN-12", "JNL-09")
def test_an_interrupted_run_stops_where_the_revision_table_shows_it_stopped(
    directory: MigrationDirectory,
) -> None:
    files = directory.by_version
    expected = [ExpectedMigration(v, files[v].checksum) for v in (1, 2, 3)]
    spell = VersionSpelling(directory)
    rows = (
        _row(1, "applied", 1, 1, files[1].checksum),
        _row(2, "failed", 1, 4, files[2].checksum),
    )
    found = after_interruption(expected, RevisionRead(True, frozenset(), rows), spell)
    assert found.applied == ["0000000001"]
    assert found.stopped_at == {
        "version": "0000000002",
        "statementsApplied": 1,
        "statementsTotal": 4,
    }
    # No row for the next file: it stopped there, and nothing of it is recorded.
    clean = after_interruption(expected, RevisionRead(True, frozenset(), rows[:1]), spell)
    assert clean.stopped_at == {"version": "0000000002"}
    # Every expected file recorded: it stopped after the last one, nowhere to point at.
    done = tuple(_row(v, "applied", 1, 1, files[v].checksum) for v in (1, 2, 3))
    assert (
        after_interruption(expected, RevisionRead(True, frozenset(), done), spell).stopped_at
        is None
    )

    during = interrupted(
        OPERATION, Progress(started_at=T0, apply_started=True), lambda: T1, recorded=found
    )
    run = during.document["run"]
    assert run["outcome"] == "Unknown"
    assert run["appliedVersions"] == ["0000000001"]
    assert run["stoppedAt"]["version"] == "0000000002"
