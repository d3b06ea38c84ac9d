"""status.journal: bounded, complete from coveredSince, written in the transition's own write
(seed 000, "Every PtahSchema and PtahMigration keeps a bounded journal")."""

from __future__ import annotations

import datetime as dt

import pytest

from ptah_operator.api.common import PlanReference
from ptah_operator.api.constants import (
    JournalEntryType,
    JournalOutcome,
    MigrationPhase,
    OperationType,
    RunOutcome,
)
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.reconcile import journal
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.approvals import consumed
from tests.unit.reconcile.migration.worlds import (
    NOW,
    applying,
    approval_of,
    awaiting_approval,
    entries_added,
    history_reported,
    later,
    new,
    read_failed,
    reading,
    ready_to_plan,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    with_approval,
    with_status,
)

Entry = JournalEntryType
DAY = dt.timedelta(days=1)
PLAN = PlanReference(name="billing-0123456789", uid="plan-uid", fingerprint="sha256:" + "a" * 64)


def failed(time: dt.datetime, reason: str = "ConnectionFailed") -> JournalEntry:
    return JournalEntry(
        type=Entry.OPERATION_FAILED, time=time, operation=OperationType.HISTORY, reason=reason
    )


def published(time: dt.datetime, plan: PlanReference = PLAN) -> JournalEntry:
    return JournalEntry(
        type=Entry.PLAN_PUBLISHED,
        time=time,
        plan_name=plan.name,
        plan_uid=plan.uid,
        plan_fingerprint=plan.fingerprint,
    )


def accepted(time: dt.datetime, uid: str | None, plan: PlanReference = PLAN) -> JournalEntry:
    return JournalEntry(
        type=Entry.APPROVAL_ACCEPTED,
        time=time,
        plan_name=plan.name,
        plan_uid=plan.uid,
        approval_name="billing-ok",
        approval_uid=uid,
    )


def verified(time: dt.datetime) -> JournalEntry:
    return JournalEntry(
        type=Entry.VERIFIED, time=time, operation_id="op-0000000001", outcome=JournalOutcome.IN_SYNC
    )


@pytest.mark.req("JNL-02")
def test_entry_types_are_exactly_the_seeds() -> None:
    assert {t.value for t in JournalEntryType} == {
        "PlanPublished",
        "ApprovalAccepted",
        "ApplyFinished",
        "Verified",
        "RunFinished",
        "RunAcknowledged",
        "OperationFailed",
    }


@pytest.mark.req("JNL-12")
def test_failures_in_a_row_with_the_same_operation_and_reason_are_one_entry() -> None:
    kept = journal.started(None, NOW)
    for minutes in range(3):
        kept = journal.append(kept, failed(NOW + dt.timedelta(minutes=minutes)))
    assert len(kept.entries) == 1
    assert kept.entries[0].count == 3
    assert kept.entries[0].time == NOW + dt.timedelta(minutes=2)
    kept = journal.append(kept, failed(NOW + dt.timedelta(minutes=3), reason="HistoryUnreadable"))
    kept = journal.append(kept, verified(NOW + dt.timedelta(minutes=4)))
    kept = journal.append(kept, failed(NOW + dt.timedelta(minutes=5), reason="HistoryUnreadable"))
    assert [(e.type, e.count) for e in kept.entries] == [
        (Entry.OPERATION_FAILED, 3),
        (Entry.OPERATION_FAILED, 1),
        (Entry.VERIFIED, None),
        (Entry.OPERATION_FAILED, 1),
    ]


@pytest.mark.req("JNL-21", "JNL-22", "PATH-23")
def test_at_most_64_entries_oldest_first_and_covered_since_moves_past_what_was_dropped() -> None:
    kept = journal.started(None, NOW)
    assert kept.covered_since == NOW
    for n in range(70):
        kept = journal.append(kept, verified(NOW + dt.timedelta(minutes=n)))
    kept = journal.bound(kept, None)
    assert len(kept.entries) == 64
    assert kept.entries[0].time == NOW + dt.timedelta(minutes=6)
    assert kept.covered_since is not None
    assert NOW + dt.timedelta(minutes=5) < kept.covered_since <= kept.entries[0].time


@pytest.mark.req("JNL-21", "JNL-22")
def test_none_more_than_30_days_older_than_the_newest() -> None:
    kept = Journal(covered_since=NOW, entries=[verified(NOW), verified(NOW + 10 * DAY)])
    kept = journal.bound(journal.append(kept, verified(NOW + 31 * DAY)), None)
    assert [e.time for e in kept.entries] == [NOW + 10 * DAY, NOW + 31 * DAY]
    assert kept.covered_since is not None
    assert kept.covered_since > NOW


@pytest.mark.req("JNL-23")
def test_the_plan_nothing_carried_out_stays_past_age_and_count() -> None:
    entries = [published(NOW - 40 * DAY), accepted(NOW - 39 * DAY, "a-1")]
    entries += [verified(NOW + dt.timedelta(minutes=n)) for n in range(70)]
    kept = journal.bound(
        Journal.model_construct(covered_since=NOW - 41 * DAY, entries=entries), PLAN
    )
    assert len(kept.entries) == 64
    assert kept.entries[0].type == Entry.PLAN_PUBLISHED
    assert kept.entries[1].type == Entry.APPROVAL_ACCEPTED
    assert kept.covered_since is not None
    assert kept.entries[0].time < kept.covered_since
    # Once a run ended it (status.plan no longer names it), the bounds apply to it too.
    released = journal.bound(kept, None)
    assert Entry.PLAN_PUBLISHED not in [e.type for e in released.entries]


@pytest.mark.req("JNL-19", "JNL-20")
def test_an_approval_accepted_before_0_2_10_names_no_uid_and_stops_nothing() -> None:
    world = awaiting_approval()
    approval = approval_of(world, name="billing-ok")
    old = JournalEntry(
        type=Entry.APPROVAL_ACCEPTED,
        time=NOW - DAY,
        approval_name="billing-ok",
    )
    stored = status(world).journal
    assert stored is not None
    world = with_status(
        world, journal=stored.model_copy(update={"entries": [old, *stored.entries]})
    )
    assert approval.metadata.uid not in consumed(status(world))
    world = step(step(with_approval(world, approval)))
    journal_after = status(world).journal
    assert journal_after is not None
    accepted_entries = [e for e in journal_after.entries if e.type == Entry.APPROVAL_ACCEPTED]
    assert [e.approval_uid for e in accepted_entries] == [None, approval.metadata.uid]
    assert accepted_entries[0] == old


@pytest.mark.req("JNL-24", "JNL-01")
def test_the_journal_is_written_in_the_status_write_of_the_transition() -> None:
    world = run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]))
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.phase == MigrationPhase.VERIFYING_HISTORY
    assert after.journal is not None
    assert after.journal.entries[-1].type == Entry.RUN_FINISHED


@pytest.mark.req("JNL-22")
def test_covered_since_is_the_first_status_write() -> None:
    world = new()
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.journal is not None
    assert after.journal.covered_since == world.now
    assert after.journal.entries == []


@pytest.mark.req("JNL-25")
def test_times_come_from_the_transition() -> None:
    world = step(history_reported(reading(), _ready()))
    plan_created = next(iter(world.plans.values())).metadata.creation_timestamp
    world = later(world, dt.timedelta(minutes=3))
    decision = reconcile_migration(world)
    entry = entries_added(world, decision)[0]
    assert entry.type == Entry.PLAN_PUBLISHED
    assert entry.time == plan_created
    assert entry.time != world.now


@pytest.mark.req("JNL-14", "PRIV-04", "PRIV-07", "JNL-15")
def test_entries_carry_reasons_and_names_in_the_namespace_never_messages() -> None:
    world = step(read_failed(reading()))
    world = step(step(later(world, dt.timedelta(minutes=1))))
    world = step(run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])))
    kept = status(world).journal
    assert kept is not None
    for entry in kept.entries:
        dumped = entry.model_dump(by_alias=True, exclude_none=True)
        assert "message" not in dumped
        for key, value in dumped.items():
            if key.endswith("Name") and value is not None:
                assert "/" not in value
        if entry.reason is not None:
            assert " " not in entry.reason
    outcomes = {e.type: e.outcome for e in kept.entries if e.outcome is not None}
    assert outcomes[Entry.RUN_FINISHED] == "Applied"


@pytest.mark.req("JNL-03")
def test_a_plan_republished_while_the_resource_refreshes_writes_nothing() -> None:
    world = step(later(awaiting_approval(), dt.timedelta(minutes=10)))
    decision = reconcile_migration(history_reported(world, _ready()))
    assert entries_added(world, decision) == []
    assert status_of(world, decision).phase == MigrationPhase.AWAITING_APPROVAL


def _ready() -> dict[str, object]:
    return ready_to_plan()


@pytest.mark.req("JNL-05", "JNL-23")
def test_the_published_plan_and_its_approval_are_recorded_in_order() -> None:
    world = with_approval(awaiting_approval())
    world = step(step(world))
    journal_after = status(world).journal
    assert journal_after is not None
    assert [e.type for e in journal_after.entries] == [
        Entry.PLAN_PUBLISHED,
        Entry.APPROVAL_ACCEPTED,
    ]


def _run_end(operation_id: str, **changes: object) -> JournalEntry:
    fields: dict[str, object] = {
        "type": JournalEntryType.RUN_FINISHED,
        "time": NOW,
        "operation_id": operation_id,
        "plan_name": "orders-abc",
        "plan_uid": "p-1",
        "plan_fingerprint": "sha256:" + "a" * 64,
        "authorization": "Policy",
        "outcome": JournalOutcome.FAILED,
        "reason": "LockTimeout",
        "versions_applied": 0,
    }
    fields.update(changes)
    return JournalEntry.model_validate(fields)


def _appended(*entries: JournalEntry) -> list[JournalEntry]:
    record = Journal(covered_since=NOW)
    for entry in entries:
        record = journal.append(record, entry)
    return list(record.entries)


@pytest.mark.req("JNL-09", "JNL-12", "JNL-16")
def test_a_repeated_run_end_folds_with_its_reading_and_names_the_newest_run() -> None:
    first = _run_end("op-0000000001")
    reading = JournalEntry(
        type=JournalEntryType.VERIFIED,
        time=NOW,
        operation_id="op-0000000001",
        outcome=JournalOutcome.PENDING,
    )
    later_end = _run_end("op-0000000002", time=NOW + dt.timedelta(minutes=1))
    folded = _appended(first, reading, later_end)
    assert [(e.type, e.operation_id, e.count) for e in folded] == [
        (JournalEntryType.RUN_FINISHED, "op-0000000002", 2)
    ]
    assert folded[0].time == NOW + dt.timedelta(minutes=1)


_APPROVED = {"approval_name": "orders-ok", "approval_uid": "a-1", "authorization": "Approval"}


@pytest.mark.req("JNL-09", "JNL-05", "JNL-17")
@pytest.mark.parametrize(
    ("earlier", "later_changes"),
    [
        (_APPROVED, _APPROVED),
        ({}, {"reason": "ConnectionFailed"}),
        ({"outcome": JournalOutcome.APPLIED}, {"outcome": JournalOutcome.APPLIED}),
        ({"versions_applied": 1}, {"versions_applied": 1}),
        ({}, {"plan_fingerprint": "sha256:" + "b" * 64}),
    ],
    ids=[
        "an approved run",
        "another reason",
        "a run that applied",
        "versions applied",
        "another plan",
    ],
)
def test_a_run_end_that_is_not_a_repeat_is_its_own_entry(
    earlier: dict[str, object], later_changes: dict[str, object]
) -> None:
    entries = _appended(
        _run_end("op-0000000001", **earlier), _run_end("op-0000000002", **later_changes)
    )
    assert [e.operation_id for e in entries] == ["op-0000000001", "op-0000000002"]
