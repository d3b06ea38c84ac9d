"""reconcile/journal.py rule by rule, at the edges `make mutate` found unpinned (issue #11): a
failure folded into an entry written before counts existed, the age bound's exact edge, the
count bound on entries whose times are not in index order, coveredSince never moving back,
which entries a plan not yet carried out keeps, and which entries name a plan or an approval."""

from __future__ import annotations

import datetime as dt

import pytest

from ptah_operator.api.common import PlanReference
from ptah_operator.api.constants import JOURNAL_MAX_ENTRIES, JournalEntryType, OperationType
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.reconcile import journal

T0 = dt.datetime(2026, 8, 30, 12, 0, tzinfo=dt.UTC)
E = JournalEntryType
PLAN = PlanReference(name="billing-aaaaaaaaaa", uid="plan-uid")
OTHER = PlanReference(name="billing-bbbbbbbbbb", uid="other-uid")


def _at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def _entry(
    type_: E, minutes: float = 0, plan: PlanReference | None = None, approval: str | None = None
) -> JournalEntry:
    return JournalEntry(
        type=type_,
        time=_at(minutes),
        plan_name=plan.name if plan else None,
        plan_uid=plan.uid if plan else None,
        approval_uid=approval,
    )


def _journal(entries: list[JournalEntry], covered_since: dt.datetime | None = T0) -> Journal:
    """A journal as a status holds it; past the 64-entry bound only a pass builds one."""
    return Journal(covered_since=covered_since).model_copy(update={"entries": entries})


def _failed(minutes: float, count: int | None) -> JournalEntry:
    return JournalEntry(
        type=E.OPERATION_FAILED,
        time=_at(minutes),
        operation=OperationType.HISTORY,
        reason="ConnectionFailed",
        count=count,
    )


@pytest.mark.req("JNL-12")
def test_a_failure_folds_into_an_entry_written_before_counts_existed() -> None:
    folded = journal.append(_journal([_failed(0, None)]), _failed(1, None))
    [entry] = folded.entries
    assert (entry.count, entry.time) == (2, _at(1))


@pytest.mark.req("JNL-21", "JNL-22")
def test_an_entry_exactly_thirty_days_older_than_the_newest_is_kept() -> None:
    days = 30 * 24 * 60
    edge = journal.bound(_journal([_entry(E.VERIFIED, 0), _entry(E.VERIFIED, days)]), None)
    assert len(edge.entries) == 2
    past = journal.bound(_journal([_entry(E.VERIFIED, 0), _entry(E.VERIFIED, days + 1)]), None)
    assert [e.time for e in past.entries] == [_at(days + 1)]
    assert past.covered_since == _at(0) + journal.PAST


@pytest.mark.req("JNL-21")
def test_the_count_bound_drops_the_oldest_by_time_not_by_position() -> None:
    # A PlanPublished carries its plan's creation time, so an entry can be older than one
    # written before it.
    entries = [_entry(E.VERIFIED, 5), _entry(E.PLAN_PUBLISHED, 1, OTHER)]
    entries += [_entry(E.VERIFIED, 10 + i) for i in range(JOURNAL_MAX_ENTRIES - 1)]
    kept = journal.bound(_journal(entries), None)
    assert len(kept.entries) == JOURNAL_MAX_ENTRIES
    assert kept.entries[0] == entries[0]
    assert entries[1] not in kept.entries
    assert kept.covered_since == _at(1) + journal.PAST


@pytest.mark.req("JNL-22")
def test_covered_since_never_moves_back_and_starts_where_none_was() -> None:
    days = 30 * 24 * 60
    entries = [_entry(E.VERIFIED, 0), _entry(E.VERIFIED, days + 1)]
    later = _at(days)
    assert journal.bound(_journal(entries, covered_since=later), None).covered_since == later
    assert journal.bound(_journal(entries, covered_since=None), None).covered_since == (
        _at(0) + journal.PAST
    )


@pytest.mark.req("JNL-23")
def test_a_plan_not_carried_out_keeps_its_publication_and_newest_approval_only() -> None:
    entries = [
        _entry(E.PLAN_PUBLISHED, 0, OTHER),
        _entry(E.PLAN_PUBLISHED, 1, PLAN),
        _entry(E.APPROVAL_ACCEPTED, 2, PLAN, approval="a-1"),
        _entry(E.APPROVAL_ACCEPTED, 2, PLAN, approval="a-2"),
        _entry(E.APPLY_FINISHED, 3, PLAN),
    ]
    # Another plan's entry first does not end the search; of two approvals at the same
    # instant the later written is the newest; an ApplyFinished of the plan is no approval.
    assert journal.pinned_indexes(entries, PLAN) == {1, 3}


@pytest.mark.req("JNL-03")
def test_holds_plan_means_that_plans_publication() -> None:
    assert not journal.holds_plan(None, PLAN)
    accepted_only = _journal([_entry(E.APPROVAL_ACCEPTED, 0, PLAN, approval="a-1")])
    assert not journal.holds_plan(accepted_only, PLAN)
    same_name = PlanReference(name=PLAN.name, uid="another-uid")
    published = _journal([_entry(E.PLAN_PUBLISHED, 0, same_name)])
    assert not journal.holds_plan(published, PLAN)
    assert journal.holds_plan(published, PlanReference(name=PLAN.name))
    assert journal.holds_plan(published, same_name)


@pytest.mark.req("APR-15", "JNL-19")
def test_only_approval_accepted_entries_name_consumed_approvals() -> None:
    entries = [
        _entry(E.APPROVAL_ACCEPTED, 0, PLAN, approval="a-1"),
        _entry(E.APPROVAL_ACCEPTED, 1, PLAN),  # before 0.2.10: no UID
        _entry(E.APPLY_FINISHED, 2, PLAN, approval="a-2"),
    ]
    assert journal.accepted_approval_uids(_journal(entries)) == {"a-1"}
