"""Where a run that did not finish stopped, in status.lastRun and its RunFinished entry.

RUN-12: "status.lastRun says how far the run got"; JNL-09: RunFinished names "where the run
stopped". Not only when a statement failed: a lost session, an interrupted runner and a failed
commit are the runs a person must investigate before acknowledging, so the file the run
stopped in is recorded whenever the result names it (`run.stoppedAt`), with how many of its
statements are known committed, and kept through a hold restored from metadata.
"""

from __future__ import annotations

from typing import Any

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    RunOutcome,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    annotated,
    applying,
    entries_added,
    new,
    run_block,
    run_reported,
    status,
    status_of,
    step,
)

STOPPED = {"version": "0002", "statementsApplied": 1, "statementsTotal": 3}


def stopped(outcome: RunOutcome, message: str, **extra: Any) -> dict[str, Any]:
    return {**run_block(outcome, applied=["0001"], message=message), "stoppedAt": STOPPED, **extra}


def lost_session() -> MigrationWorld:
    return run_reported(
        applying(),
        stopped(
            RunOutcome.UNKNOWN,
            "the session was lost during the run; what it committed is not known",
        ),
    )


def interrupted_runner() -> MigrationWorld:
    return run_reported(
        applying(),
        stopped(RunOutcome.UNKNOWN, "the run was interrupted; what it committed is not known"),
    )


def failed_commit() -> MigrationWorld:
    return run_reported(
        applying(),
        stopped(RunOutcome.FAILED, "migration 0002 failed at commit: SQLSTATE 23514"),
    )


def recorded_where_it_stopped(world: MigrationWorld, decision: Decision) -> None:
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.failure is None
    assert run.stopped_at is not None
    assert (
        run.stopped_at.version,
        run.stopped_at.statements_applied,
        run.stopped_at.statements_total,
    ) == ("0002", 1, 3)
    (finished,) = [
        e for e in entries_added(world, decision) if e.type == JournalEntryType.RUN_FINISHED
    ]
    assert finished.stopped_at == "0002"
    (event,) = [e for e in decision.events if e.reason == EventReason.RUN_FINISHED]
    assert "stopped at version 0002" in event.message


ROWS = [
    Row(
        "a lost session: lastRun and RunFinished name the file the run stopped in",
        lost_session,
        ("RUN-12", "JNL-09"),
        phase=MigrationPhase.BLOCKED,
        then=recorded_where_it_stopped,
    ),
    Row(
        "an interrupted runner: lastRun and RunFinished name where the table shows it stopped",
        interrupted_runner,
        ("RUN-12", "JNL-09"),
        phase=MigrationPhase.BLOCKED,
        then=recorded_where_it_stopped,
    ),
    Row(
        "a failed commit: no statement to point at, and still the file it stopped in",
        failed_commit,
        ("RUN-12", "RUN-18", "JNL-09"),
        then=recorded_where_it_stopped,
    ),
]


@pytest.mark.parametrize("row", params(ROWS))
def test_where_a_run_stopped_is_recorded(row: Row) -> None:
    check(row)


@pytest.mark.req("RUN-12", "JNL-10", "RUN-21")
def test_a_hold_restored_from_metadata_keeps_where_the_run_stopped() -> None:
    held = step(lost_session())
    hold = status(held).unresolved_run
    assert hold is not None
    assert hold.stopped_at == "0002"
    value = (held.migration.metadata.annotations or {})[ANNOTATION_UNRESOLVED_RUN]
    restored = annotated(new(), ANNOTATION_UNRESOLVED_RUN, value)
    decision = reconcile_migration(restored)
    run = status_of(restored, decision).last_run
    assert run is not None
    assert run.stopped_at is not None
    assert run.stopped_at.version == "0002"
    (finished,) = entries_added(restored, decision)
    assert finished.stopped_at == "0002"
