"""A schema's journal (seed 000, "Every PtahSchema and PtahMigration keeps a bounded journal"):
which transitions write which entry, and what an entry may carry."""

from __future__ import annotations

import json

import pytest

from ptah_operator.api.constants import JournalEntryType, OperationType, SchemaPhase
from ptah_operator.reconcile.schema import reconcile_schema
from tests.unit.reconcile.schema.worlds import (
    A_MINUTE,
    PLAN_SQL,
    TEN_MINUTES,
    approval_of,
    awaiting_approval,
    entries_added,
    in_sync,
    journal_entries,
    later,
    new,
    observed,
    observing,
    planned,
    proof_planning,
    publish,
    read_failed,
    status,
    step,
    with_approval,
)

E = JournalEntryType


@pytest.mark.req("JNL-01", "JNL-02", "JNL-06", "JNL-07", "JNL-05", "JNL-03")
def test_a_change_from_plan_to_proof_writes_one_entry_per_transition() -> None:
    world = planned(proof_planning(), changes=False)
    world = step(world)
    assert [e.type for e in journal_entries(world)] == [
        E.PLAN_PUBLISHED,
        E.APPROVAL_ACCEPTED,
        E.APPLY_FINISHED,
        E.VERIFIED,
    ]
    published, accepted, finished, verified = journal_entries(world)
    assert published.plan_uid == accepted.plan_uid == finished.plan_uid == verified.plan_uid
    assert finished.operation_id == verified.operation_id
    assert accepted.approval_uid == finished.approval_uid
    assert {e.type for e in journal_entries(world)} <= set(JournalEntryType)


@pytest.mark.req("JNL-12")
def test_failed_attempts_of_the_same_operation_and_reason_fold_into_one_entry() -> None:
    world = step(read_failed(observing(), OperationType.OBSERVE))
    world = step(step(later(world, A_MINUTE)))
    world = step(read_failed(world, OperationType.OBSERVE))
    failed = [e for e in journal_entries(world) if e.type == E.OPERATION_FAILED]
    assert len(failed) == 1
    assert failed[0].count == 2
    assert failed[0].time == world.now


@pytest.mark.req("JNL-13")
def test_a_cycle_that_finds_nothing_to_do_writes_no_entry() -> None:
    world = later(in_sync(), TEN_MINUTES)
    before = list(journal_entries(world))
    world = step(step(observed(step(world))))
    world = step(planned(world, changes=False))
    assert status(world).phase == SchemaPhase.IN_SYNC
    assert journal_entries(world) == before


@pytest.mark.req("JNL-14", "PRIV-04", "PRIV-07")
def test_entries_carry_reasons_and_names_never_messages_or_sql() -> None:
    world = step(read_failed(observing(), OperationType.OBSERVE))
    world = planned(proof_planning(), changes=False)
    decision = reconcile_schema(world)
    for entry in entries_added(world, decision):
        dumped = json.dumps(entry.model_dump(mode="json", by_alias=True))
        assert "message" not in dumped
        assert PLAN_SQL not in dumped
        assert "refused" not in dumped


@pytest.mark.req("JNL-22", "JNL-24")
def test_the_journal_starts_with_the_first_status_write() -> None:
    world = new()
    decision = reconcile_schema(world)
    assert decision.status is not None
    assert decision.status["journal"]["coveredSince"] == world.now.isoformat().replace(
        "+00:00", "Z"
    )


@pytest.mark.req("JNL-25", "JNL-04")
def test_plan_published_is_timed_by_the_plans_creation() -> None:
    world = awaiting_approval()
    ref = status(world).plan
    assert ref is not None
    entry = next(e for e in journal_entries(world) if e.type == E.PLAN_PUBLISHED)
    assert entry.time == world.plans[ref.name].metadata.creation_timestamp
    assert entry.approval_required is True
    assert entry.replaced is None


@pytest.mark.req("JNL-05", "APR-15", "APR-11")
def test_a_later_approval_under_an_earlier_name_is_its_own_decision() -> None:
    world = publish(step(planned(proof_planning(), text="-- the rest --")))
    assert status(world).phase == SchemaPhase.AWAITING_APPROVAL
    first = world.approvals[0]
    again = approval_of(world, name=first.metadata.name or "")
    assert again.metadata.uid != first.metadata.uid
    world = step(step(with_approval(world, again)))
    accepted = [e for e in journal_entries(world) if e.type == E.APPROVAL_ACCEPTED]
    assert [e.approval_name for e in accepted] == [first.metadata.name, first.metadata.name]
    assert [e.approval_uid for e in accepted] == [first.metadata.uid, again.metadata.uid]
