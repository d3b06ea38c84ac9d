"""The result document (`ptah.run/result/v1`) built from the engine's own answers: every
verdict, every run outcome, and nothing the database wrote in prose."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from ptah_operator.api.constants import OperationType
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import OperationReport
from ptah_operator.engine.migrations.apply import (
    ExpectedMigration,
    Failure,
    Outcome,
    RunResult,
    StoppedAt,
)
from ptah_operator.engine.migrations.connection import DatabaseError, ErrorClass
from ptah_operator.engine.migrations.directory import (
    DirectoryError,
    MigrationDirectory,
    read_directory,
)
from ptah_operator.engine.migrations.revision_table import Revision, RevisionRead
from ptah_operator.engine.migrations.status import Status, evaluate
from ptah_operator.reconcile.reports import read_report
from ptah_operator.reconcile.world import OperationResult
from ptah_operator.runner.checks import connection_message
from ptah_operator.runner.document import (
    ErrorBlock,
    VersionSpelling,
    history_block,
    not_selected_run,
    result_document,
    revision_json,
    run_block,
)
from ptah_operator.runner.migration import (
    Progress,
    apply_finished,
    interrupted,
    parse_operation,
    unreadable,
)

T0 = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
T1 = T0 + dt.timedelta(seconds=3)
OPERATION = parse_operation(
    json.dumps(
        {
            "contract": "ptah.run/operation/v1",
            "operationID": "op-3f9a2c7d1e",
            "type": "Apply",
            "resource": {
                "kind": "PtahMigration",
                "namespace": "application",
                "name": "orders",
                "uid": "u-1",
            },
            "engine": "PostgreSQL",
            "revisionTable": {"schema": None, "name": "schema_migrations"},
            "transactionMode": None,
            "contentDigest": "sha256:" + "1" * 64,
            "expected": [],
            "plannedTargetDigest": "sha256:" + "2" * 64,
        }
    )
)
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


def _row(
    directory: MigrationDirectory,
    version: int,
    state: str = "applied",
    checksum: str | None = None,
    millis: int | None = 12,
    recorded_by: str = "up",
) -> Revision:
    file = directory.by_version.get(version)
    return Revision(
        version=version,
        description=file.description if file else "gone",
        kind="migration",
        state=state,
        statements_applied=1,
        statements_total=1,
        checksum=checksum or (file.checksum if file else "f" * 64),
        execution_millis=millis,
        error_class=None if state == "applied" else "23505",
        recorded_by=recorded_by,
        applied_at=T0,
    )


def _status(directory: MigrationDirectory, *rows: Revision) -> Status:
    return evaluate(directory, RevisionRead(exists=bool(rows), columns=frozenset(), rows=rows))


@pytest.mark.req("MIG-33", "MIG-34", "MIG-35", "MIG-62", "PRIV-02")
def test_an_empty_history_is_ready_to_plan_with_ptahs_own_pending_list(
    directory: MigrationDirectory,
) -> None:
    block = history_block(_status(directory), VersionSpelling(directory))
    assert block["verdict"] == "ReadyToPlan"
    assert block["appliedCount"] == 0
    assert block["pendingCount"] == 3
    assert block["pending"][0] == {
        "version": "0000000001",
        "description": "users",
        "checksum": "sha256:" + directory.by_version[1].checksum,
    }
    assert block["currentVersion"] is None
    assert block["revisions"] == []
    assert block["fingerprint"].startswith("sha256:")
    assert "CREATE" not in json.dumps(block)


@pytest.mark.req("MIG-33", "MIG-36", "MIG-37", "MIG-38", "MIG-39", "PATH-20", "PATH-22")
def test_each_verdict_is_spelled_as_the_api_spells_it(directory: MigrationDirectory) -> None:
    spell = VersionSpelling(directory)
    dirty = history_block(
        _status(directory, _row(directory, 1), _row(directory, 2, state="failed")), spell
    )
    assert dirty["verdict"] == "Dirty"
    assert dirty["dirty"] == {"version": "0000000002", "description": "seed"}
    assert dirty["revisions"][0]["state"] == "Dirty"

    modified = history_block(_status(directory, _row(directory, 1, checksum="0" * 64)), spell)
    assert modified["verdict"] == "Modified"
    assert modified["modifiedVersions"] == ["0000000001"]

    out_of_order = history_block(_status(directory, _row(directory, 1), _row(directory, 3)), spell)
    assert out_of_order["verdict"] == "OutOfOrder"
    assert out_of_order["outOfOrderVersions"] == ["0000000002"]

    ahead = history_block(
        _status(
            directory, *(_row(directory, v) for v in (1, 2, 3)), _row(directory, 7, millis=None)
        ),
        spell,
    )
    assert ahead["verdict"] == "Ahead"
    # A version no file carries is padded to the files' width.
    assert ahead["ahead"] == {"databaseVersion": "0000000007", "artifactVersion": "0000000003"}
    assert ahead["currentVersion"] == "0000000007"
    # Newest first; a row without a duration has no executionMillis at all (PATH-22).
    assert [r["version"] for r in ahead["revisions"]] == [
        "0000000007",
        "0000000003",
        "0000000002",
        "0000000001",
    ]
    assert "executionMillis" not in ahead["revisions"][0]
    assert ahead["revisions"][1]["executionMillis"] == 12
    assert ahead["revisions"][1]["appliedAt"] == "2026-08-30T12:00:00Z"

    nothing = history_block(_status(directory, *(_row(directory, v) for v in (1, 2, 3))), spell)
    assert nothing["verdict"] == "NothingPending"
    assert nothing["pending"] == []
    assert nothing["appliedCount"] == 3


def test_the_newest_twenty_revisions_are_kept(tmp_path: Path) -> None:
    for version in range(1, 31):
        (tmp_path / f"{version:04d}_m{version}.up.sql").write_text("SELECT 1;\n")
    directory = read_directory(tmp_path)
    rows = [_row(directory, v) for v in range(1, 31)]
    block = history_block(_status(directory, *rows), VersionSpelling(directory))
    assert len(block["revisions"]) == 20
    assert block["revisions"][0]["version"] == "0030"
    assert block["revisions"][-1]["version"] == "0011"


def test_a_baseline_row_reads_as_baseline(directory: MigrationDirectory) -> None:
    block = history_block(
        _status(directory, _row(directory, 1, recorded_by="baseline", millis=None)),
        VersionSpelling(directory),
    )
    assert block["revisions"][0]["state"] == "Baseline"


def _result(outcome: Outcome, **fields: object) -> RunResult:
    result = RunResult(outcome=outcome, reason="", message="", started_at=T0, finished_at=T1)
    for key, value in fields.items():
        setattr(result, key, value)
    return result


SELECTION = [ExpectedMigration(1, "a" * 64), ExpectedMigration(2, "b" * 64)]


@pytest.mark.req("RUN-01", "RUN-12", "RUN-17", "RUN-18", "RUN-19", "RUN-20", "PRIV-05")
@pytest.mark.parametrize(
    ("case", "result", "expected"),
    [
        (
            "applied",
            _result(
                Outcome.APPLIED,
                reason="Applied",
                selected=True,
                selection=SELECTION,
                applied_versions=[1, 2],
            ),
            {
                "outcome": "Applied",
                "selected": True,
                "appliedVersions": ["0000000001", "0000000002"],
                "failure": None,
                "reason": "Applied",
                "message": "applied 2 migration(s)",
            },
        ),
        (
            "up to date",
            _result(Outcome.UP_TO_DATE, reason="UpToDate"),
            {
                "outcome": "UpToDate",
                "selected": False,
                "appliedVersions": [],
                "failure": None,
                "reason": "UpToDate",
                "message": "the database already has every planned migration",
            },
        ),
        (
            "a statement failed",
            _result(
                Outcome.FAILED,
                reason="StatementFailed",
                message="version 2: statement 3 failed with SQLSTATE 23505",
                selected=True,
                applied_versions=[1],
                failure=Failure(2, 3, "23505", None),
                stopped_at=StoppedAt(2, 0, 4),
            ),
            {
                "outcome": "Failed",
                "selected": True,
                "appliedVersions": ["0000000001"],
                "failure": {
                    "version": "0000000002",
                    "statementIndex": 3,
                    "sqlstate": "23505",
                    "mysqlErrno": None,
                },
                "reason": "StatementFailed",
                "message": "migration 0000000002 failed: SQLSTATE 23505",
                "stoppedAt": {
                    "version": "0000000002",
                    "statementsApplied": 0,
                    "statementsTotal": 4,
                },
            },
        ),
        (
            "the commit failed",
            _result(
                Outcome.FAILED,
                reason="CommitFailed",
                message="version 2: the commit failed with SQLSTATE 23503",
                selected=True,
                applied_versions=[1],
                stopped_at=StoppedAt(2, 0, 1),
            ),
            {
                "outcome": "Failed",
                "selected": True,
                "appliedVersions": ["0000000001"],
                "failure": None,
                "reason": "CommitFailed",
                "sqlstate": "23503",
                "message": "migration 0000000002 failed at commit: SQLSTATE 23503",
                "stoppedAt": {
                    "version": "0000000002",
                    "statementsApplied": 0,
                    "statementsTotal": 1,
                },
            },
        ),
        (
            "partial",
            _result(
                Outcome.PARTIAL,
                reason="StatementFailed",
                selected=True,
                failure=Failure(1, 2, None, 1062),
                stopped_at=StoppedAt(1, 1, 3),
            ),
            {
                "outcome": "Partial",
                "selected": True,
                "appliedVersions": [],
                "failure": {
                    "version": "0000000001",
                    "statementIndex": 2,
                    "sqlstate": None,
                    "mysqlErrno": 1062,
                },
                "reason": "StatementFailed",
                "message": "migration 0000000001 failed at statement 2: MySQL error 1062;"
                " earlier statements of it committed",
                "stoppedAt": {
                    "version": "0000000001",
                    "statementsApplied": 1,
                    "statementsTotal": 3,
                },
            },
        ),
        (
            "unknown after a DDL statement failed",
            _result(
                Outcome.UNKNOWN,
                reason="OutcomeNotRecorded",
                selected=True,
                failure=Failure(3, 1, None, 1062),
                applied_versions=[1, 2],
            ),
            {
                "outcome": "Unknown",
                "selected": True,
                "appliedVersions": ["0000000001", "0000000002"],
                "failure": {
                    "version": "0000000003",
                    "statementIndex": 1,
                    "sqlstate": None,
                    "mysqlErrno": 1062,
                },
                "reason": "OutcomeNotRecorded",
                "message": "migration 0000000003 failed at statement 1: MySQL error 1062;"
                " it is not recorded whether it committed",
            },
        ),
        (
            "unknown after the session was lost",
            _result(
                Outcome.UNKNOWN,
                reason="ConnectionLostError",
                message="the session was lost during the run; what it committed is not known",
                selected=True,
            ),
            {
                "outcome": "Unknown",
                "selected": True,
                "appliedVersions": [],
                "failure": None,
                "reason": "ConnectionLostError",
                "message": "the session was lost during the run; what it committed is not known",
            },
        ),
        (
            "refused: another sequence",
            _result(
                Outcome.FAILED,
                reason="SequenceMismatch",
                message="the pending sequence under the lock differs from the expected sequence"
                " (expected [2], selected [1, 2])",
            ),
            {
                "outcome": "Failed",
                "selected": False,
                "appliedVersions": [],
                "failure": None,
                "reason": "SequenceMismatch",
                "message": "the pending sequence under the lock differs from the expected"
                " sequence (expected [2], selected [1, 2])",
            },
        ),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_every_outcome_becomes_its_run_block(
    directory: MigrationDirectory, case: str, result: RunResult, expected: dict[str, object]
) -> None:
    assert run_block(result, VersionSpelling(directory)) == expected


def test_the_whole_document_carries_the_contract_and_the_resource(
    directory: MigrationDirectory,
) -> None:
    doc = result_document(
        OPERATION,
        started_at=T0,
        finished_at=T1,
        target_identity_digest="sha256:" + "3" * 64,
        history=history_block(_status(directory), VersionSpelling(directory)),
        run=not_selected_run("refused"),
        error=ErrorBlock("LockTimeout", "the migration lock was not free within 30s"),
    )
    assert doc["contract"] == "ptah.run/result/v1"
    assert doc["operationID"] == "op-3f9a2c7d1e"
    assert doc["type"] == "Apply"
    assert doc["resource"]["uid"] == "u-1"
    assert (doc["startedAt"], doc["finishedAt"]) == ("2026-08-30T12:00:00Z", "2026-08-30T12:00:03Z")
    assert doc["error"] == {
        "reason": "LockTimeout",
        "message": "the migration lock was not free within 30s",
    }
    without = result_document(OPERATION, started_at=T0, finished_at=T1, target_identity_digest=None)
    assert set(without) == {
        "contract",
        "operationID",
        "type",
        "resource",
        "startedAt",
        "finishedAt",
        "targetIdentityDigest",
    }


def _finished(directory: MigrationDirectory, result: RunResult) -> tuple[dict[str, object], int]:
    progress = Progress(started_at=T0, spell=VersionSpelling(directory))
    finished = apply_finished(OPERATION, progress, lambda: T1, result)
    return finished.document, finished.exit_code


@pytest.mark.req("MIG-44", "MIG-51", "RUN-20")
@pytest.mark.parametrize(
    ("reason", "message", "error"),
    [
        ("LockTimeout", "the migration lock was not free within 30s", "LockTimeout"),
        ("DatabaseError", "reading the history failed with SQLSTATE 42501", "HistoryUnreadable"),
        ("DatabaseBusy", "reading the history failed with SQLSTATE 40P01", "DatabaseBusy"),
        (
            "RevisionTableUnreadable",
            "ptah_revisions lacks the columns checksum",
            "HistoryUnreadable",
        ),
        (
            "ConnectionLostError",
            "cannot reach db.internal:5432/orders (OSError)",
            "ConnectionFailed",
        ),
        ("SequenceMismatch", "the pending sequence differs", None),
        ("HistoryDirty", "the history is dirty at version 2", None),
        ("TransactionModeRefused", "version 1: statement 1 commits implicitly", None),
    ],
)
def test_a_refusal_before_selection_is_failed_and_is_an_error_only_when_the_run_could_not_work(
    directory: MigrationDirectory, reason: str, message: str, error: str | None
) -> None:
    document, code = _finished(
        directory,
        _result(
            Outcome.FAILED,
            reason=reason,
            message=message,
            target_identity_digest="sha256:" + "4" * 64,
        ),
    )
    run = document["run"]
    assert isinstance(run, dict)
    assert run["outcome"] == "Failed"
    assert run["selected"] is False
    assert document["targetIdentityDigest"] == "sha256:" + "4" * 64
    if error is None:
        assert "error" not in document
        assert code == 0
    else:
        assert document["error"]["reason"] == error  # type: ignore[index]
        assert code == 1
    assert "db.internal" not in json.dumps(document)


def test_a_run_that_selected_carries_its_reading_under_the_lock(
    directory: MigrationDirectory,
) -> None:
    document, code = _finished(
        directory,
        _result(
            Outcome.APPLIED,
            reason="Applied",
            selected=True,
            applied_versions=[1, 2, 3],
            status_before=_status(directory),
        ),
    )
    assert code == 0
    assert document["history"]["verdict"] == "ReadyToPlan"  # type: ignore[index]


@pytest.mark.req("RUN-01")
def test_an_interrupted_apply_is_unknown_only_once_the_engine_was_called() -> None:
    before = interrupted(OPERATION, Progress(started_at=T0), lambda: T1)
    assert before.document["run"]["outcome"] == "Failed"
    assert before.document["run"]["selected"] is False
    assert before.exit_code == 1
    during = interrupted(OPERATION, Progress(started_at=T0, apply_started=True), lambda: T1)
    assert during.document["run"]["outcome"] == "Unknown"
    assert during.document["run"]["selected"] is True
    assert during.document["error"]["reason"] == "Interrupted"


@pytest.mark.req("PRIV-06")
@pytest.mark.parametrize(
    ("detail", "message"),
    [
        (
            "cannot reach db.internal:5432/orders (ConnectionRefusedError)",
            "the database could not be reached (ConnectionRefusedError)",
        ),
        (
            "the server refused the session (SQLSTATE 28P01)",
            "the database refused the session (SQLSTATE 28P01)",
        ),
        (
            "the server refused the session (MySQL error 1045)",
            "the database refused the session (MySQL error 1045)",
        ),
        ("something else at db.internal", "the database could not be reached"),
    ],
)
def test_a_connection_failure_says_why_without_naming_the_server(detail: str, message: str) -> None:
    assert connection_message(detail) == message


def test_versions_are_spelled_as_the_files_name_them(tmp_path: Path) -> None:
    (tmp_path / "20260830_a.up.sql").write_text("SELECT 1;\n")
    (tmp_path / "7_b.up.sql").write_text("SELECT 1;\n")
    spell = VersionSpelling(read_directory(tmp_path))
    assert spell(7) == "7"
    assert spell(20260830) == "20260830"
    # Files of different widths: a version no file carries is written in plain digits.
    assert spell(99) == "99"
    assert VersionSpelling(None)(5) == "5"


@pytest.mark.req("RUN-02", "MIG-35")
def test_the_operator_reads_back_what_the_runner_reports(directory: MigrationDirectory) -> None:
    """The runner's document fits the reader the lifecycle uses (reconcile.reports)."""
    spell = VersionSpelling(directory)
    status = _status(directory, _row(directory, 1), _row(directory, 2, state="failed", millis=None))
    result = _result(
        Outcome.FAILED,
        reason="StatementFailed",
        selected=True,
        applied_versions=[1],
        failure=Failure(2, 1, "23505", None),
        status_before=status,
    )
    document = apply_finished(
        OPERATION, Progress(started_at=T0, spell=spell), lambda: T1, result
    ).document
    report = read_report(
        OperationResult("op-3f9a2c7d1e", "Apply", T1, document),
        OperationReport,
        "op-3f9a2c7d1e",
        OperationType.APPLY,
        "u-1",
    )
    assert isinstance(report, OperationReport), report
    assert report.history is not None
    assert report.history.dirty is not None
    assert report.run is not None
    assert report.run.failure is not None
    assert report.run.failure.sqlstate == "23505"


@pytest.mark.req("MIG-44")
@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (ErrorClass(sqlstate="40P01"), ErrorReason.DATABASE_BUSY),
        (ErrorClass(sqlstate="08006"), ErrorReason.DATABASE_BUSY),
        (ErrorClass(mysql_errno=1205), ErrorReason.DATABASE_BUSY),
        (ErrorClass(sqlstate="42501"), ErrorReason.HISTORY_UNREADABLE),
        (ErrorClass(mysql_errno=1142), ErrorReason.HISTORY_UNREADABLE),
        (ErrorClass(), ErrorReason.HISTORY_UNREADABLE),
    ],
)
def test_a_refused_history_read_is_database_busy_only_for_an_answer_that_passes(
    error: ErrorClass, reason: ErrorReason
) -> None:
    assert unreadable(DatabaseError(error)) == reason


@pytest.mark.req("MIG-34")
def test_more_than_a_plans_worth_of_pending_lists_the_first_and_counts_them_all(
    tmp_path: Path,
) -> None:
    """The limit a plan carries (MAX_PLAN_VERSIONS, 1000): the history block lists that many
    pending migrations and `pendingCount` stays the true count, so the manager can say the
    reading cannot be planned (Blocked TooManyPending) rather than plan part of it."""
    from ptah_operator.api.constants import MAX_PLAN_VERSIONS

    for version in range(1, MAX_PLAN_VERSIONS + 3):
        (tmp_path / f"{version:05d}_m.up.sql").write_text("SELECT 1;\n")
    many = read_directory(tmp_path)
    block = history_block(_status(many), VersionSpelling(many))
    assert block["pendingCount"] == MAX_PLAN_VERSIONS + 2
    assert len(block["pending"]) == MAX_PLAN_VERSIONS
    assert block["pending"][-1]["version"] == f"{MAX_PLAN_VERSIONS:05d}"


# --- the codes and positions an error block carries (issue #18) ---------------------------------


@pytest.mark.parametrize(
    ("name", "files"),
    [
        ("0000000002_b.up.SQL", {"0000000001_a.up.sql": b"SELECT 1;", "0000000002_b.up.SQL": b""}),
        ("0000000001_a.up.sql", {"0000000001_a.up.sql": b"\xff\xfe"}),
    ],
    ids=["a misspelt name", "not UTF-8"],
)
def test_a_refused_directory_names_its_rule_and_file(
    tmp_path: Path, name: str, files: dict[str, bytes]
) -> None:
    for file, content in files.items():
        (tmp_path / file).write_bytes(content)
    with pytest.raises(DirectoryError) as refused:
        read_directory(tmp_path, verify_sum=False)
    assert refused.value.name == name
    block = ErrorBlock(
        "DirectoryRefused", str(refused.value), code=refused.value.reason, file=refused.value.name
    ).as_json()
    assert block["code"] == refused.value.reason
    assert block["file"] == name


def test_a_directive_refused_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "0000000001_a.up.sql").write_text("SELECT 1;\n-- +ptah no_transaction\n")
    with pytest.raises(DirectoryError) as refused:
        read_directory(tmp_path, verify_sum=False)
    assert (refused.value.reason, refused.value.name, refused.value.line) == (
        "MisplacedDirective",
        "0000000001_a.up.sql",
        2,
    )


@pytest.mark.parametrize(
    "name", ["2_b\x1b[31mred.up.sql", "a b.sql", "../x.sql", "x" * 300, "résumé.sql"]
)
def test_a_file_name_a_status_may_not_hold_is_left_out(name: str) -> None:
    block = ErrorBlock("DirectoryRefused", "words", code="BadFileName", file=name, line=2).as_json()
    assert "file" not in block
    assert "line" not in block
    assert block["code"] == "BadFileName"


def test_a_code_that_is_not_one_is_left_out() -> None:
    block = ErrorBlock("DirectoryRefused", "words", code="not a code").as_json()
    assert "code" not in block


def test_a_revision_rows_description_is_reported_escaped(directory: MigrationDirectory) -> None:
    """A revision table's row is the database's text: its description is reported with what a
    terminal must not get escaped (issue #18), and the manager reads the report."""
    row = _row(directory, 1)._replace(description="init\x1b[2J\u202eforged\nline")
    doc = revision_json(row, VersionSpelling(directory))
    assert doc["description"] == "init\\x1b[2J\\u202eforged\\x0aline"
    assert (
        len(
            revision_json(row._replace(description="é" * 300), VersionSpelling(directory))[
                "description"
            ]
        )
        == 256
    )
