"""status.journal: the bounded record of what happened (JNL-01..JNL-25), written in the status
write that records the transition, so it costs no request of its own (JNL-24).

Rules, in the order a pass applies them:

- An `OperationFailed` entry whose operation and reason are those of the newest entry, when
  that one is an `OperationFailed` too, is folded into it: its count goes up by one and its
  time becomes the time of this failure (JNL-12). Anything written in between starts a new run.
- A `RunFinished` that repeats the newest one, a run on policy alone of the same plan that
  applied nothing and ended the same way for the same reason (`repeats`), is folded into it the
  same way, with only that run's own `Verified` in between: the count goes up, the time, the
  operation and the Job become the newest run's, and the earlier run's `Verified` goes, so the
  record keeps one run end and its reading however often a run is refused (JNL-09, JNL-21;
  docs/design/lifecycle-decisions.md). A run a person approved is never folded.
- The journal holds at most 64 entries, none more than 30 days older than the newest; the
  oldest go first (JNL-21).
- The plan nothing has carried out yet (status.plan after the pass) keeps its `PlanPublished`
  entry and the newest `ApprovalAccepted` of it past both bounds, until an Apply or a run ends
  it or another plan is published (JNL-23); they may be older than coveredSince.
- `coveredSince` starts at the first status write of a manager that keeps a journal and moves
  forward past the newest entry a bound dropped (JNL-22). "Past" is one microsecond later:
  the instant from which the record is complete again.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from ptah_operator.api.common import PlanReference
from ptah_operator.api.constants import (
    JOURNAL_MAX_AGE_DAYS,
    JOURNAL_MAX_ENTRIES,
    JournalEntryType,
    JournalOutcome,
)
from ptah_operator.api.journal import Journal, JournalEntry

MAX_AGE = dt.timedelta(days=JOURNAL_MAX_AGE_DAYS)
PAST = dt.timedelta(microseconds=1)


def started(journal: Journal | None, now: dt.datetime) -> Journal:
    """The journal as it is, or a new one complete from now."""
    if journal is not None:
        return journal
    return Journal(covered_since=now)


def append(journal: Journal, entry: JournalEntry) -> Journal:
    """Add one entry, folding a repeated OperationFailed into the newest one (JNL-12)."""
    entries = list(journal.entries)
    if entry.type == JournalEntryType.OPERATION_FAILED and entries:
        last = entries[-1]
        if (
            last.type == JournalEntryType.OPERATION_FAILED
            and last.operation == entry.operation
            and last.reason == entry.reason
        ):
            entries[-1] = last.model_copy(
                update={"count": (last.count or 1) + (entry.count or 1), "time": entry.time}
            )
            return journal.model_copy(update={"entries": entries})
    if entry.type == JournalEntryType.OPERATION_FAILED and entry.count is None:
        entry = entry.model_copy(update={"count": 1})
    if entry.type == JournalEntryType.RUN_FINISHED:
        folded = _fold_run(entries, entry)
        if folded is not None:
            return journal.model_copy(update={"entries": folded})
    entries.append(entry)
    return journal.model_copy(update={"entries": entries})


_FAILED_RUN_OUTCOMES = frozenset(
    {JournalOutcome.FAILED, JournalOutcome.PARTIAL, JournalOutcome.UNKNOWN}
)


def repeats(earlier: JournalEntry, entry: JournalEntry) -> bool:
    """Whether a RunFinished ends a run just as the earlier one did: the same plan, on policy
    (no approval), nothing applied, the same failed outcome, reason and stopping point."""
    return (
        earlier.type == entry.type == JournalEntryType.RUN_FINISHED
        and earlier.approval_uid is None
        and entry.approval_uid is None
        and earlier.approval_name is None
        and entry.approval_name is None
        and earlier.plan_uid == entry.plan_uid
        and earlier.plan_fingerprint == entry.plan_fingerprint
        and earlier.authorization == entry.authorization
        and entry.outcome in _FAILED_RUN_OUTCOMES
        and earlier.outcome == entry.outcome
        and earlier.reason == entry.reason
        and earlier.stopped_at == entry.stopped_at
        and not earlier.versions_applied
        and not entry.versions_applied
    )


def _fold_run(entries: list[JournalEntry], entry: JournalEntry) -> list[JournalEntry] | None:
    """The entries with `entry` folded into the newest RunFinished it repeats, or None."""
    index = len(entries) - 1
    while index >= 0 and entries[index].type == JournalEntryType.VERIFIED:
        index -= 1
    if index < 0:
        return None
    earlier = entries[index]
    between = entries[index + 1 :]
    if not repeats(earlier, entry) or any(e.operation_id != earlier.operation_id for e in between):
        return None
    folded = entry.model_copy(update={"count": (earlier.count or 1) + (entry.count or 1)})
    return [*entries[:index], folded]


def pinned_indexes(entries: Sequence[JournalEntry], plan: PlanReference | None) -> set[int]:
    """The entries of a plan nothing has carried out yet: its PlanPublished and its newest
    ApprovalAccepted (JNL-23)."""
    if plan is None or plan.uid is None:
        return set()
    kept: set[int] = set()
    newest_approval: int | None = None
    for index, entry in enumerate(entries):
        if entry.plan_uid != plan.uid:
            continue
        if entry.type == JournalEntryType.PLAN_PUBLISHED:
            kept.add(index)
        elif entry.type == JournalEntryType.APPROVAL_ACCEPTED and (
            newest_approval is None or entry.time >= entries[newest_approval].time
        ):
            newest_approval = index
    if newest_approval is not None:
        kept.add(newest_approval)
    return kept


def bound(journal: Journal, plan: PlanReference | None) -> Journal:
    """Apply the count and age bounds, keeping the entries of the plan not yet carried out."""
    entries = list(journal.entries)
    if not entries:
        return journal
    pinned = pinned_indexes(entries, plan)
    newest = max(e.time for e in entries)
    dropped: list[JournalEntry] = []
    keep: list[int] = []
    for index, entry in enumerate(entries):
        if index not in pinned and entry.time < newest - MAX_AGE:
            dropped.append(entry)
        else:
            keep.append(index)
    while len(keep) > JOURNAL_MAX_ENTRIES:
        candidates = [i for i in keep if i not in pinned]
        oldest = min(candidates, key=lambda i: (entries[i].time, i))
        keep.remove(oldest)
        dropped.append(entries[oldest])
    if not dropped:
        return journal
    covered = max(e.time for e in dropped) + PAST
    covered_since = journal.covered_since
    if covered_since is None or covered > covered_since:
        covered_since = covered
    return Journal(covered_since=covered_since, entries=[entries[i] for i in keep])


def holds_plan(journal: Journal | None, plan: PlanReference) -> bool:
    """Whether the journal already holds the PlanPublished of this plan (JNL-03)."""
    if journal is None:
        return False
    return any(
        e.type == JournalEntryType.PLAN_PUBLISHED
        and e.plan_name == plan.name
        and (plan.uid is None or e.plan_uid == plan.uid)
        for e in journal.entries
    )


def accepted_approval_uids(journal: Journal | None) -> set[str]:
    """The approvals an Apply already consumed, by UID (APR-11, APR-15). An entry from before
    0.2.10 names no UID and is not joined to any approval by its name (JNL-19)."""
    if journal is None:
        return set()
    return {
        e.approval_uid
        for e in journal.entries
        if e.type == JournalEntryType.APPROVAL_ACCEPTED and e.approval_uid
    }
