"""The operator.ptah.run/read-requested-at annotation (seed 000), every rule a row."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Callable

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    ConditionType,
    EventReason,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    annotated,
    applying,
    awaiting_approval,
    edited,
    event_reasons,
    history,
    history_reported,
    in_sync,
    job_of,
    later,
    nothing_pending,
    planning,
    read,
    read_failed,
    reading,
    ready_to_plan,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    suspended,
    with_claimant,
)

KEY = "operator.ptah.run/read-requested-at"
INSTANT = "2026-08-30T12:05:00Z"
A_MINUTE = dt.timedelta(minutes=1)


def requested(world: MigrationWorld, value: str = INSTANT) -> MigrationWorld:
    return annotated(world, KEY, value)


def answered(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_read_request == INSTANT
    assert after.next_reconciliation_time == world.now
    claim = after.active_operation
    assert claim is not None
    assert claim.read_request == INSTANT
    assert world.migration.metadata.generation == after.observed_generation


def not_answered(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_read_request != INSTANT
    assert EventReason.READ_REQUESTED not in event_reasons(decision)


def plan_kept_unchanged(world: MigrationWorld, decision: Decision) -> None:
    before = status(world).plan
    assert before is not None
    assert status_of(world, decision).plan == before
    assert EventReason.PLAN_STALE not in event_reasons(decision)


def invalid_recorded(value: str, recorded: str) -> Callable[[MigrationWorld, Decision], None]:
    def then(world: MigrationWorld, decision: Decision) -> None:
        after = status_of(world, decision)
        assert after.last_read_request == recorded
        warning = next(e for e in decision.events if e.reason == EventReason.READ_REQUEST_INVALID)
        assert warning.type == "Warning"
        assert recorded[:20] in warning.message

    return then


def proof_running() -> MigrationWorld:
    """The run ended Applied and the read that proves it runs."""
    return step(step(run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]))))


def failed_proof() -> MigrationWorld:
    """The read that proves an Apply failed once: between attempts, inside its retry delay."""
    return step(read_failed(proof_running()))


def proof_goes_on(value: str) -> Callable[[MigrationWorld, Decision], None]:
    def then(world: MigrationWorld, decision: Decision) -> None:
        invalid_recorded(value, value)(world, decision)
        before = status(world).active_operation
        assert before is not None
        assert before.serves_proof
        assert status_of(world, decision).active_operation == before, "the proof goes on"

    return then


def blocked_modified() -> MigrationWorld:
    return read(reading(), history("Modified", current="0002", modified=["0001"]))


def failed_with_retry_pending() -> MigrationWorld:
    return step(run_reported(applying(), run_block(RunOutcome.FAILED, selected=False)))


LONG = "x" * 65
LONG_RECORD = "sha256:" + hashlib.sha256(LONG.encode()).hexdigest()
CONTROL = "now\x1b[2J\r\nplease\u202e"
CONTROL_RECORD = "sha256:" + hashlib.sha256(CONTROL.encode()).hexdigest()


def nothing_unprintable(world: MigrationWorld, decision: Decision) -> None:
    invalid_recorded(CONTROL, CONTROL_RECORD)(world, decision)
    assert all(event.message.isprintable() for event in decision.events)


ANSWERED = [
    Row(
        "InSync answers: records the value, moves nextReconciliationTime to now, ReadRequested",
        lambda: requested(in_sync()),
        ("RRQ-02", "RRQ-03", "RRQ-04", "RRQ-05", "RRQ-21"),
        phase=MigrationPhase.READING,
        job="History",
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "AwaitingApproval answers, and the waiting plan is kept",
        lambda: requested(awaiting_approval()),
        ("RRQ-04", "RRQ-06", "RRQ-13"),
        phase=MigrationPhase.READING,
        job="History",
        events=[EventReason.READ_REQUESTED],
        then=plan_kept_unchanged,
    ),
    Row(
        "a migration's Planning (apply: Never) answers",
        lambda: requested(step(planning(apply=ApplyPolicy.NEVER))),
        ("RRQ-04",),
        phase=MigrationPhase.READING,
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "Blocked for another reason than the engine or the realm answers",
        lambda: requested(blocked_modified()),
        ("RRQ-09", "RRQ-04"),
        phase=MigrationPhase.READING,
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "the reading the request started keeps the plan when it agrees",
        lambda: history_reported(step(requested(awaiting_approval())), ready_to_plan()),
        ("RRQ-06", "RETRY-12"),
        phase=MigrationPhase.AWAITING_APPROVAL,
        entries=[],
        events=[],
    ),
    Row(
        "the request never starts a mutating operation: a History read, never an Apply",
        lambda: requested(awaiting_approval()),
        ("RRQ-10",),
        job="History",
        lease=[],
    ),
    Row(
        "a request does not change the generation, and nothing else about the resource",
        lambda: requested(awaiting_approval()),
        ("RRQ-13",),
        then=plan_kept_unchanged,
    ),
]

WAITING = [
    Row(
        "Blocked RealmConflict does not answer: the realm is checked first",
        lambda: requested(with_claimant(in_sync(), shared=False)),
        ("RRQ-07", "LCK-06"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.REALM_CONFLICT,
        job=None,
        then=not_answered,
    ),
    Row(
        "Blocked UnsupportedEngine does not answer",
        lambda: requested(dataclasses.replace(in_sync(), supported_engines=frozenset())),
        ("RRQ-07", "LCK-06"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.UNSUPPORTED_ENGINE,
        then=not_answered,
    ),
    Row(
        "a read already under way does not answer it",
        lambda: requested(reading()),
        ("RRQ-12", "RRQ-03"),
        writes=False,
        then=not_answered,
    ),
    Row(
        "the read under way ends; the request waits for the read that starts after it",
        lambda: history_reported(requested(reading()), nothing_pending()),
        ("RRQ-12",),
        phase=MigrationPhase.IN_SYNC,
        then=not_answered,
    ),
    Row(
        "... and the next pass answers it with a new read",
        lambda: step(history_reported(requested(reading()), nothing_pending())),
        ("RRQ-12", "RRQ-05"),
        phase=MigrationPhase.READING,
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "an Apply under way: the request waits until it ends",
        lambda: requested(applying()),
        ("RRQ-15",),
        phase=MigrationPhase.APPLYING,
        then=not_answered,
    ),
    Row(
        "a Failed resource does not shorten its retry delay for a request",
        lambda: requested(later(failed_with_retry_pending(), dt.timedelta(seconds=20))),
        ("RRQ-11",),
        writes=False,
        job=None,
        then=not_answered,
    ),
    Row(
        "a Failed resource answers it when its retry starts",
        lambda: requested(later(failed_with_retry_pending(), A_MINUTE)),
        ("RRQ-11",),
        phase=MigrationPhase.READING,
        events=[EventReason.READ_REQUESTED],
        then=answered,
    ),
    Row(
        "Suspended keeps the request until it resumes",
        lambda: requested(step(suspended(in_sync()))),
        ("RRQ-03", "SUS-01"),
        writes=False,
        job=None,
        then=not_answered,
    ),
    Row(
        "an answered value is not answered twice",
        lambda: step(requested(in_sync())),
        ("RRQ-18", "RRQ-04"),
        events=[],
    ),
]

INVALID = [
    Row(
        "a value that is not an RFC 3339 instant starts nothing: answered, one Warning",
        lambda: requested(in_sync(), "now please"),
        ("RRQ-16", "RRQ-18"),
        writes=True,
        job=None,
        events=[EventReason.READ_REQUEST_INVALID],
        then=invalid_recorded("now please", "now please"),
    ),
    Row(
        "an invalid value is reported once, not on every pass",
        lambda: step(requested(in_sync(), "now please")),
        ("RRQ-16",),
        writes=False,
        events=[],
        job=None,
    ),
    Row(
        "a read between failed attempts answers an invalid value at once, and goes on retrying",
        lambda: requested(later(step(read_failed(reading())), dt.timedelta(seconds=10)), "soon"),
        ("RRQ-17",),
        phase=MigrationPhase.READING,
        events=[EventReason.READ_REQUEST_INVALID],
        then=invalid_recorded("soon", "soon"),
    ),
    Row(
        "a failed proof read answers an invalid value at once too, and goes on retrying",
        lambda: requested(later(failed_proof(), dt.timedelta(seconds=10)), "soon"),
        ("RRQ-17", "RRQ-15"),
        phase=MigrationPhase.READING,
        job=None,
        events=[EventReason.READ_REQUEST_INVALID],
        then=proof_goes_on("soon"),
    ),
    Row(
        "a proof read that fails answers an invalid value made while it ran, in that pass",
        lambda: read_failed(requested(proof_running(), "soon")),
        ("RRQ-17", "RRQ-15"),
        phase=MigrationPhase.READING,
        events=[EventReason.OPERATION_FAILED, EventReason.READ_REQUEST_INVALID],
        then=invalid_recorded("soon", "soon"),
    ),
    Row(
        "a value longer than 64 bytes is recorded as its sha256:<hex>",
        lambda: requested(in_sync(), LONG),
        ("RRQ-19", "PRIV-08"),
        events=[EventReason.READ_REQUEST_INVALID],
        then=invalid_recorded(LONG, LONG_RECORD),
    ),
    Row(
        "a value with control characters is recorded, and named, only as its sha256:<hex>",
        lambda: requested(in_sync(), CONTROL),
        ("RRQ-19", "RRQ-16", "PRIV-08"),
        events=[EventReason.READ_REQUEST_INVALID],
        then=nothing_unprintable,
    ),
]


@pytest.mark.parametrize("row", params(ANSWERED))
def test_a_request_is_answered(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(WAITING))
def test_a_request_waits(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(INVALID))
def test_a_value_that_is_not_an_instant(row: Row) -> None:
    check(row)


@pytest.mark.req("RRQ-01")
def test_the_resource_reads_again_at_next_reconciliation_time() -> None:
    world = in_sync()
    due = status(world).next_reconciliation_time
    assert due == world.now + dt.timedelta(minutes=10)
    assert reconcile_migration(world).requeue_after == dt.timedelta(minutes=10)
    assert job_of(reconcile_migration(later(world, dt.timedelta(minutes=10)))) == "History"


@pytest.mark.req("RRQ-07")
def test_the_request_is_answered_once_the_realm_admits_the_resource() -> None:
    world = step(requested(with_claimant(in_sync(), shared=False)))
    assert status(world).phase == MigrationPhase.BLOCKED
    world = dataclasses.replace(world, claimants=world.claimants[:1])
    decision = reconcile_migration(world)
    assert status_of(world, decision).last_read_request == INSTANT
    assert job_of(decision) == "History"


@pytest.mark.req("RRQ-13")
def test_an_edit_is_not_a_request_and_a_request_is_not_an_edit() -> None:
    world = requested(awaiting_approval())
    after = status_of(world, reconcile_migration(world))
    assert after.observed_generation == 1
    assert after.condition(ConditionType.READY) is not None
    edited_world = edited(awaiting_approval(), interval="5m")
    assert edited_world.migration.metadata.generation == 2
