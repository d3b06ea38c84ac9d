"""Stories of several passes, told as a person would: the path of a change, its branches, and
the promise that a pass which finds nothing new writes nothing."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable

import pytest

from ptah_operator.api.constants import (
    ApplyPolicy,
    JournalEntryType,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.reconcile.decision import Decision
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.table import never_shows_sql_or_urls
from tests.unit.reconcile.migration.worlds import (
    DB,
    applying,
    awaiting_approval,
    carry_out,
    held,
    history,
    history_reported,
    in_sync,
    job_of,
    later,
    new,
    nothing_pending,
    planning,
    read,
    read_failed,
    reading,
    ready_to_plan,
    run_block,
    run_reported,
    status,
    step,
    suspended,
    with_acknowledgment,
    with_approval,
    with_claimant,
)

Entry = JournalEntryType


class Story:
    """A world that moves pass by pass, every decision held to what must never appear."""

    def __init__(self, world: MigrationWorld) -> None:
        self.world = world
        self.decisions: list[Decision] = []

    def passes(self, change: Callable[[MigrationWorld], MigrationWorld] | None = None) -> Story:
        if change is not None:
            self.world = change(self.world)
        decision = reconcile_migration(self.world)
        never_shows_sql_or_urls(decision)
        self.decisions.append(decision)
        self.world = carry_out(self.world, decision)
        return self

    def phase(self) -> MigrationPhase | None:
        return status(self.world).phase

    @property
    def journal(self) -> list[JournalEntryType]:
        kept = status(self.world).journal
        return [e.type for e in kept.entries] if kept else []


@pytest.mark.req(
    "PATH-01", "PATH-05", "PATH-07", "PATH-08", "PATH-09", "PATH-10", "PATH-11", "PATH-20"
)
def test_a_change_from_configmap_to_in_sync_through_an_approval() -> None:
    story = Story(new())
    assert story.passes().phase() == MigrationPhase.READING
    assert job_of(story.decisions[-1]) == "History"
    story.passes(lambda w: history_reported(w, ready_to_plan("0001", "0002")))
    assert story.phase() == MigrationPhase.PLANNING
    assert story.passes().phase() == MigrationPhase.AWAITING_APPROVAL
    assert story.passes().decisions[-1].status is None
    story.passes(with_approval)
    assert story.phase() == MigrationPhase.APPLYING
    assert job_of(story.decisions[-1]) == "Apply"
    assert story.passes().phase() == MigrationPhase.APPLYING
    story.passes(lambda w: run_reported(w, run_block(RunOutcome.APPLIED, applied=["0002"])))
    assert story.phase() == MigrationPhase.VERIFYING_HISTORY
    assert story.passes().phase() == MigrationPhase.READING
    story.passes(lambda w: history_reported(w, nothing_pending()))
    assert story.phase() == MigrationPhase.IN_SYNC
    assert story.journal == [
        Entry.PLAN_PUBLISHED,
        Entry.APPROVAL_ACCEPTED,
        Entry.RUN_FINISHED,
        Entry.VERIFIED,
    ]
    final = status(story.world)
    assert final.last_run is not None
    assert final.last_run.verification is not None
    assert final.history is not None
    assert final.history.revisions
    assert final.active_operation is None
    assert not story.world.snapshots - {final.source.snapshot_name if final.source else ""}
    resting = story.passes().decisions[-1]
    assert resting.changes_nothing
    # The run's Job goes five minutes after it finished (JOB-07), then the resource rests
    # until its interval.
    assert resting.requeue_after == dt.timedelta(minutes=5)
    removed = story.passes(lambda w: later(w, dt.timedelta(minutes=5))).decisions[-1]
    assert [ref.kind for ref in removed.delete] == ["Job"]
    rested = story.passes().decisions[-1]
    assert rested.changes_nothing
    assert rested.requeue_after == dt.timedelta(minutes=5)


@pytest.mark.req("PATH-16", "APR-11", "MIG-45")
def test_changes_remain_after_a_run_a_new_plan_needs_a_new_approval() -> None:
    story = Story(with_approval(awaiting_approval()))
    story.passes().passes()
    story.passes(lambda w: run_reported(w, run_block(RunOutcome.APPLIED, applied=["0002"])))
    story.passes()
    story.passes(lambda w: history_reported(w, ready_to_plan("0002", "0003")))
    assert story.phase() == MigrationPhase.PLANNING
    assert story.passes().phase() == MigrationPhase.AWAITING_APPROVAL
    story.passes()
    assert story.phase() == MigrationPhase.AWAITING_APPROVAL
    assert job_of(story.decisions[-1]) is None
    assert story.journal.count(Entry.PLAN_PUBLISHED) == 2


@pytest.mark.req("MIG-43", "MIG-36", "RRQ-02")
def test_failed_at_a_statement_blocked_until_a_person_clears_it_and_asks_for_a_read() -> None:
    failure = {"version": "0002", "statementIndex": 0, "sqlstate": "23505"}
    story = Story(applying())
    story.passes(lambda w: run_reported(w, run_block(RunOutcome.FAILED, failure=failure)))
    story.passes()
    story.passes(lambda w: history_reported(w, history("Dirty", current="0001", dirty="0002")))
    assert story.phase() == MigrationPhase.BLOCKED
    assert status(story.world).conditions[0].reason == Reason.HISTORY_DIRTY
    # A person runs `ptah migrations set` and asks for a read.
    story.passes(
        lambda w: dataclasses.replace(
            w,
            migration=w.migration.model_copy(
                update={
                    "metadata": w.migration.metadata.model_copy(
                        update={
                            "annotations": {
                                "operator.ptah.run/read-requested-at": "2026-08-30T12:30:00Z"
                            }
                        }
                    )
                }
            ),
        )
    )
    assert story.phase() == MigrationPhase.READING
    story.passes(lambda w: history_reported(w, nothing_pending()))
    assert story.phase() == MigrationPhase.IN_SYNC


@pytest.mark.req("MIG-27", "RETRY-01")
def test_a_read_fails_and_is_retried() -> None:
    story = Story(reading())
    story.passes(read_failed)
    assert story.phase() == MigrationPhase.READING
    story.passes(lambda w: later(w, dt.timedelta(minutes=1))).passes()
    story.passes(lambda w: history_reported(w, nothing_pending()))
    assert story.phase() == MigrationPhase.IN_SYNC
    assert story.journal == [Entry.OPERATION_FAILED]


@pytest.mark.req("RUN-06", "MIG-47", "RETRY-13")
def test_partial_held_until_acknowledged_then_read_again() -> None:
    story = Story(held())
    assert story.phase() == MigrationPhase.BLOCKED
    story.passes(lambda w: later(w, dt.timedelta(days=2)))
    story.passes(lambda w: history_reported(w, ready_to_plan("0001", "0002")))
    assert story.phase() == MigrationPhase.BLOCKED
    story.passes(with_acknowledgment)
    assert story.phase() == MigrationPhase.READING
    assert story.journal[-1] == Entry.RUN_ACKNOWLEDGED
    # The same reading gives the same plan, but the run spent its approval.
    story.passes(lambda w: history_reported(w, ready_to_plan("0001", "0002")))
    assert story.phase() == MigrationPhase.AWAITING_APPROVAL
    assert job_of(story.passes().decisions[-1]) is None


def _resting() -> list[tuple[str, MigrationWorld]]:
    return [
        ("InSync", in_sync()),
        ("AwaitingApproval", awaiting_approval()),
        ("Planning under Never", step(planning(apply=ApplyPolicy.NEVER))),
        ("Blocked HistoryDirty", read(reading(), history("Dirty", current="0001", dirty="0002"))),
        ("Blocked ApplyOutcomeUnknown", held()),
        ("Blocked RealmConflict", step(with_claimant(in_sync(), shared=False))),
        ("Suspended", step(suspended(in_sync()))),
        ("Reading, Job running", reading()),
        ("Applying, Job running", applying()),
        (
            "Failed, waiting to retry",
            step(run_reported(applying(), run_block(RunOutcome.FAILED, selected=False))),
        ),
        ("Reading between attempts", step(read_failed(reading()))),
    ]


@pytest.mark.req("JNL-13", "JNL-24")
@pytest.mark.parametrize(("name", "world"), _resting(), ids=[n for n, _ in _resting()])
def test_a_pass_that_finds_nothing_new_writes_nothing(name: str, world: MigrationWorld) -> None:
    decision = reconcile_migration(world)
    assert decision.status is None, name
    assert not decision.events
    assert not decision.lease
    assert not decision.annotations
    assert [ref for ref in decision.delete if ref.kind != "Secret"] == []


@pytest.mark.req("PRIV-01", "PRIV-02", "PRIV-05", "PRIV-06")
def test_what_the_status_holds_of_a_run_is_versions_codes_and_digests() -> None:
    failure = {"version": "0002", "statementIndex": 2, "sqlstate": "23505", "mysqlErrno": None}
    world = step(run_reported(applying(), run_block(RunOutcome.PARTIAL, failure=failure)))
    last = status(world).last_run
    assert last is not None
    assert last.failure is not None
    assert set(last.failure.model_dump(exclude_none=True)) == {
        "version",
        "statementIndex",
        "sqlstate",
    }
    assert last.target_identity_digest == DB
    assert last.target_identity_digest.startswith("sha256:")
    plan = next(iter(world.plans.values()))
    assert set(plan.spec.versions[0].model_dump(exclude_none=True)) == {
        "version",
        "description",
        "checksum",
    }
