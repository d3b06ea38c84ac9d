"""Hostile result bodies (issue #18): no text a runner writes into its report reaches status, an
Event or the manager's log. Status says what a report says in the manager's words, from its
closed codes and its positions; a report whose codes or positions do not fit is no evidence.

Each surface a report reaches is played for both families, with a marker in every text field
the contract has (`error.message`, `run.message`), and the pass that takes the report is read
whole: its status, its Events and what it logged."""

from __future__ import annotations

import json
from typing import Any

import pytest
from structlog.testing import capture_logs

from ptah_operator.api.constants import OperationType, RunOutcome
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import (
    ErrorReport,
    OperationReport,
    PlanReport,
    RunReport,
    VerifyReport,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.reports import (
    ERROR_WORDS,
    Unreadable,
    error_words,
    read_report,
    run_words,
)
from ptah_operator.reconcile.schema import reconcile_schema
from tests.unit.reconcile.migration import worlds as mig
from tests.unit.reconcile.schema import worlds as sch

MARKER = "hostile-MARKER postgres://app:hunter2@db/orders DROP TABLE accounts"
_DIGEST = "sha256:" + "a" * 64
_PLAN: dict[str, Any] = {
    "changes": False,
    "observedFingerprint": _DIGEST,
    "desiredFingerprint": _DIGEST,
}
_FINDING = {"code": "ProtectedTable", "severity": "Critical", "object": "accounts"}


def _said(decision: Decision, logs: list[Any]) -> str:
    return json.dumps(decision.status, default=str) + repr(decision.events) + repr(logs)


def _clean(said: str) -> None:
    assert "MARKER" not in said
    assert "hunter2" not in said
    assert "DROP TABLE" not in said


# --- the words -----------------------------------------------------------------------------------


def test_every_error_reason_has_the_managers_words() -> None:
    assert set(ERROR_WORDS) == set(ErrorReason)
    assert all(words and words == words.strip() for words in ERROR_WORDS.values())


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ({"reason": "ConnectionFailed"}, "the database could not be reached"),
        (
            {"reason": "DirectoryRefused", "code": "BadFileName", "file": "0002_b.up.SQL"},
            "the migration directory was refused (BadFileName: 0002_b.up.SQL)",
        ),
        (
            {
                "reason": "DirectoryRefused",
                "code": "UnknownDirective",
                "file": "2_b.sql",
                "line": 3,
            },
            "the migration directory was refused (UnknownDirective: 2_b.sql line 3)",
        ),
        # A line with no file says nothing a person could find.
        ({"reason": "DirectoryRefused", "line": 3}, "the migration directory was refused"),
        (
            {"reason": "SourceUnreachable", "code": "HostKeyNotPinned"},
            "the source could not be reached (HostKeyNotPinned)",
        ),
    ],
)
def test_an_error_is_worded_from_its_codes_and_positions(error: dict[str, Any], words: str) -> None:
    assert error_words(ErrorReport.model_validate(error | {"message": MARKER})) == words


@pytest.mark.parametrize(
    ("run", "words"),
    [
        (
            {"outcome": "Applied", "appliedVersions": ["0002", "0003"]},
            "applied 2 migration(s)",
        ),
        (
            {"outcome": "UpToDate", "selected": False},
            "the database already has every planned migration",
        ),
        (
            {
                "outcome": "Failed",
                "failure": {"version": "0002", "statementIndex": 3, "sqlstate": "23505"},
            },
            "migration 0002 failed at statement 3: SQLSTATE 23505",
        ),
        (
            {"outcome": "Partial", "failure": {"version": "0002", "mysqlErrno": 1062}},
            "migration 0002 failed: MySQL error 1062; earlier statements of it committed",
        ),
        (
            {"outcome": "Unknown", "failure": {"version": "0002", "statementIndex": 1}},
            "migration 0002 failed at statement 1: no error class;"
            " it is not recorded whether it committed",
        ),
        (
            {
                "outcome": "Failed",
                "reason": "CommitFailed",
                "stoppedAt": {"version": "0004"},
                "mysqlErrno": 1213,
            },
            "migration 0004 failed at commit: MySQL error 1213",
        ),
        (
            {"outcome": "Failed", "selected": False, "reason": "TransactionModeRefused"},
            "a file cannot run in the transaction mode it was given; nothing ran",
        ),
        (
            {"outcome": "Failed", "selected": False, "reason": "SomethingNew"},
            "the run was refused (SomethingNew); nothing ran",
        ),
        (
            {"outcome": "Failed", "selected": False},
            "the run stopped before it selected a migration; nothing ran",
        ),
        (
            {
                "outcome": "Unknown",
                "reason": "ConnectionLostError",
                "stoppedAt": {"version": "0003", "statementsApplied": 1, "statementsTotal": 4},
            },
            "the session to the database was lost; it stopped in migration 0003 with 1 of 4"
            " statements known committed; what it committed is not known",
        ),
    ],
)
def test_a_run_is_worded_from_its_outcome_codes_and_positions(
    run: dict[str, Any], words: str
) -> None:
    assert run_words(RunReport.model_validate(run | {"message": MARKER}), None) == words


def test_a_run_that_stopped_before_it_selected_says_the_errors_reason() -> None:
    run = RunReport.model_validate({"outcome": "Failed", "selected": False, "message": MARKER})
    error = ErrorReport.model_validate({"reason": "LockTimeout", "message": MARKER})
    assert run_words(run, error) == "the migration lock was not free in time; nothing ran"
    # The error's closed reason (and its positions) before the run's own code.
    coded = RunReport.model_validate(
        {"outcome": "Failed", "selected": False, "reason": "ConnectionLostError"}
    )
    lost = ErrorReport.model_validate({"reason": "ConnectionFailed"})
    assert run_words(coded, lost) == "the database could not be reached; nothing ran"


def test_where_a_run_stopped_gives_counts_only_when_both_are_known() -> None:
    run = RunReport.model_validate(
        {"outcome": "Unknown", "stoppedAt": {"version": "0003", "statementsApplied": 1}}
    )
    assert run_words(run, None) == (
        "the run ended Unknown; it stopped in migration 0003; what it committed is not known"
    )


# --- codes and positions that do not fit are no evidence -----------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        {"reason": "Connection failed: " + MARKER},
        {"reason": "NotAReason"},
        {"reason": "DirectoryRefused", "code": MARKER},
        {"reason": "DirectoryRefused", "code": "Bad-Name"},
        {"reason": "DirectoryRefused", "file": "../etc/passwd"},
        {"reason": "DirectoryRefused", "file": "a b.sql"},
        {"reason": "DirectoryRefused", "file": "2_b\x1b[31mred.up.sql"},
        {"reason": "DirectoryRefused", "file": "x" * 256},
        {"reason": "DirectoryRefused", "file": "a.sql", "line": 0},
    ],
)
def test_an_error_whose_codes_or_positions_do_not_fit_makes_the_report_unreadable(
    error: dict[str, Any],
) -> None:
    world = mig.reading()
    result = mig.report(world, OperationType.HISTORY, error=error | {"message": MARKER})
    claim = mig.status(world).active_operation
    assert claim is not None
    uid = world.migration.metadata.uid
    assert uid is not None
    read = read_report(result, OperationReport, claim.operation_id, claim.type, uid)
    assert isinstance(read, Unreadable)
    assert read.why.startswith("the result does not fit its contract (error.")
    _clean(read.why)
    # The same report with codes and positions that fit is read.
    fitting = {"reason": "DirectoryRefused", "code": "BadFileName", "file": "a.sql", "line": 1}
    result = mig.report(world, OperationType.HISTORY, error=fitting | {"message": MARKER})
    assert isinstance(
        read_report(result, OperationReport, claim.operation_id, claim.type, uid), OperationReport
    )


@pytest.mark.parametrize(
    "run",
    [
        {"outcome": "Failed", "selected": False, "reason": MARKER},
        {"outcome": "Failed", "selected": False, "reason": "a" * 65},
        {"outcome": "Failed", "reason": "CommitFailed", "sqlstate": "2350'"},
    ],
)
def test_a_run_whose_codes_do_not_fit_is_not_taken(run: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="validation error"):
        RunReport.model_validate(run)


# --- every surface, both families ----------------------------------------------------------------


@pytest.mark.req("PRIV-04", "PRIV-05")
@pytest.mark.parametrize("reason", sorted(ErrorReason))
def test_a_migration_read_that_failed_shows_only_the_managers_words(reason: ErrorReason) -> None:
    world = mig.reading()
    error = {"reason": reason.value, "message": MARKER}
    world = mig.with_result(world, mig.report(world, OperationType.HISTORY, error=error))
    with capture_logs() as logs:
        decision = reconcile_migration(world)
    _clean(_said(decision, logs))
    assert ERROR_WORDS[reason] in json.dumps(decision.status, default=str)


@pytest.mark.req("PRIV-04", "PRIV-05", "RUN-17")
@pytest.mark.parametrize(
    ("block", "error"),
    [
        (mig.run_block(RunOutcome.APPLIED, applied=["0002"], message=MARKER), None),
        (
            mig.run_block(
                RunOutcome.FAILED,
                message=MARKER,
                failure={"version": "0002", "statementIndex": 3, "sqlstate": "23505"},
            ),
            None,
        ),
        (
            mig.run_block(
                RunOutcome.PARTIAL,
                message=MARKER,
                failure={"version": "0002", "statementIndex": 1, "mysqlErrno": 1062},
            ),
            None,
        ),
        (mig.run_block(RunOutcome.UNKNOWN, message=MARKER, reason="ConnectionLostError"), None),
        (
            mig.run_block(RunOutcome.FAILED, selected=False, message=MARKER),
            {"reason": "LockTimeout", "message": MARKER},
        ),
        (
            mig.run_block(
                RunOutcome.FAILED, selected=False, message=MARKER, reason="TransactionModeRefused"
            ),
            None,
        ),
    ],
    ids=["applied", "failed", "partial", "unknown", "not selected", "refused"],
)
def test_a_migration_run_shows_only_the_managers_words(
    block: dict[str, Any], error: dict[str, Any] | None
) -> None:
    world = mig.step(mig.applying())
    world = mig.run_reported(world, block, error=error)
    with capture_logs() as logs:
        decision = reconcile_migration(world)
    said = _said(decision, logs)
    _clean(said)
    last_run = mig.MIGRATION.status_of(world, decision).last_run
    assert last_run is not None
    assert last_run.message
    assert last_run.message in said


@pytest.mark.req("PRIV-04", "PRIV-05")
@pytest.mark.parametrize("reason", sorted(ErrorReason))
@pytest.mark.parametrize("operation", [OperationType.OBSERVE, OperationType.PLAN])
def test_a_schema_read_that_failed_shows_only_the_managers_words(
    reason: ErrorReason, operation: OperationType
) -> None:
    world = sch.observing() if operation == OperationType.OBSERVE else sch.planning()
    claim = sch.claim_of(world)
    assert claim.type == operation
    error = {"reason": reason.value, "message": MARKER}
    world = sch.with_result(world, sch.report(world, operation, error=error))
    with capture_logs() as logs:
        decision = reconcile_schema(world)
    _clean(_said(decision, logs))


@pytest.mark.req("PRIV-04", "PRIV-05")
@pytest.mark.parametrize("outcome", ["Applied", "Refused", "Unknown"])
def test_a_schema_apply_shows_only_the_managers_words(outcome: str) -> None:
    world = sch.applying()
    plan = sch.status(world).plan
    block = {
        "outcome": outcome,
        "reason": None if outcome == "Applied" else "StalePlan",
        "planDigest": plan.digest if plan is not None else None,
        "statementsExecuted": 1 if outcome == "Applied" else 0,
    }
    error = None if outcome == "Applied" else {"reason": "LockNotAcquired", "message": MARKER}
    world = sch.with_result(world, sch.report(world, OperationType.APPLY, apply=block, error=error))
    with capture_logs() as logs:
        decision = reconcile_schema(world)
    _clean(_said(decision, logs))


def test_every_reason_a_source_read_reports_is_in_the_closed_set() -> None:
    from ptah_operator.engine.sources.errors import REASONS

    assert set(REASONS) <= set(ErrorReason)


@pytest.mark.parametrize(
    ("model", "body"),
    [
        (
            RunReport,
            {"outcome": "Failed", "failure": {"version": "1\x1b]0;pwn\x07", "statementIndex": 1}},
        ),
        (RunReport, {"outcome": "Unknown", "stoppedAt": {"version": "2\u202e"}}),
        (RunReport, {"outcome": "Applied", "appliedVersions": ["0002\x00"]}),
        (PlanReport, {**_PLAN, "protectedTables": ["accounts\n\x1b[2J" + MARKER]}),
        (PlanReport, {**_PLAN, "findings": [{**_FINDING, "object": "t\r\nForged: line"}]}),
        (PlanReport, {**_PLAN, "protectedTables": ["accounts\u202e"]}),
        (PlanReport, {**_PLAN, "dialect": "postgres\n" + MARKER}),
        (VerifyReport, {"accepted": True, "artifactType": "application/x\n" + MARKER}),
    ],
    ids=[
        "a failure's version",
        "where a run stopped",
        "an applied version",
        "a protected table",
        "a finding's object",
        "a protected table turned backwards",
        "a plan's dialect",
        "an artifact type",
    ],
)
def test_text_a_report_may_not_quote_makes_it_unreadable(model: Any, body: dict[str, Any]) -> None:
    """From a review of this change: each of these went into status, an Event or a plan's spec
    as the runner wrote it (a control character could rewrite a terminal line)."""
    with pytest.raises(ValueError, match="validation error"):
        model.model_validate(body)
    # Without the hostile value the same body is read.
    fitting = json.loads(
        json.dumps(body)
        .replace("\\u001b]0;pwn\\u0007", "")
        .replace("\\u202e", "")
        .replace("\\u0000", "")
        .replace("\\n\\u001b[2J" + MARKER, "")
        .replace("\\r\\nForged: line", "")
        .replace("\\n" + MARKER, "")
    )
    model.model_validate(fitting)


@pytest.mark.parametrize(
    "history",
    [
        {
            "verdict": "ReadyToPlan",
            "pending": [{"version": "2", "description": "a\x1b[2J", "checksum": "c"}],
        },
        {"verdict": "Dirty", "dirty": {"version": "2", "description": "b\u202ec"}},
        {
            "verdict": "NothingPending",
            "revisions": [{"version": "1", "state": "Applied", "description": "x\ny"}],
        },
    ],
    ids=["pending", "dirty", "a revision"],
)
def test_a_history_quoting_a_control_character_is_unreadable(history: dict[str, Any]) -> None:
    world = mig.reading()
    claim = mig.status(world).active_operation
    assert claim is not None
    uid = world.migration.metadata.uid
    assert uid is not None
    result = mig.report(world, OperationType.HISTORY, history=history)
    read = read_report(result, OperationReport, claim.operation_id, claim.type, uid)
    assert isinstance(read, Unreadable)
    assert read.why == "the result's history holds a description status may not show"
    # Escaped, as the runner reports it (runner/document.py `shown`), it is read.
    escaped = json.loads(
        json.dumps(history)
        .replace("\\u001b", "\\\\x1b")
        .replace("\\u202e", "\\\\u202e")
        .replace("\\n", "\\\\x0a")
    )
    result = mig.report(world, OperationType.HISTORY, history=escaped)
    assert not isinstance(
        read_report(result, OperationReport, claim.operation_id, claim.type, uid), Unreadable
    )
