"""apply: Always never replays a migration plan, whatever ran between (issue #11, hole 2;
docs/design/lifecycle-decisions.md, "apply: Always never replays a plan" and the sections
after it).

Each row reaches its state as the cluster does: a run ends, the resource starts again from
resolution after failureRetryInterval, its history read publishes a plan."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    MAX_CARRIED_OUT_PLANS,
    ApplyPolicy,
    Authorization,
    JournalEntryType,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.api.migration import PtahMigrationStatus
from ptah_operator.reconcile import approvals as shared
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import JobPhase
from tests.unit.reconcile.migration.worlds import (
    annotated,
    digest,
    job_of,
    later,
    new,
    nothing_pending,
    read,
    ready_to_plan,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    with_approval,
    with_status,
)

A_MINUTE = dt.timedelta(minutes=1)
REFUSED = run_block(RunOutcome.FAILED, selected=False, message="version 0002 needs a mode")
"""A run refused before it selected anything, for a reason that will not change."""
LOCK_TIMEOUT = {"reason": "LockTimeout", "message": "the migration lock was not free"}

A = ready_to_plan("0001", "0002")
"""The reading that gives plan A: the history at 0001, 0002 pending."""
B = ready_to_plan(None, "0001", "0002")
"""The reading that gives plan B: an empty history, 0001 and 0002 pending."""


def _first_run(block: dict[str, Any], **reported: Any) -> MigrationWorld:
    """apply: Always; plan A published and its run ended as `block` says."""
    world = step(read(step(new(apply=ApplyPolicy.ALWAYS)), A))
    assert status(world).phase == MigrationPhase.APPLYING
    return step(run_reported(step(world), block, **reported))


def _next_plan(world: MigrationWorld, reading: dict[str, Any]) -> MigrationWorld:
    """After failureRetryInterval the resource reads its history again and publishes the plan
    `reading` gives."""
    world = step(later(world, A_MINUTE))
    assert status(world).phase == MigrationPhase.READING, status(world).phase
    world = read(world, reading)
    assert status(world).plan is not None
    return world


def _run(world: MigrationWorld, block: dict[str, Any], **reported: Any) -> MigrationWorld:
    """The plan published starts on the next pass and its run ends as `block` says."""
    world = step(world)
    assert status(world).phase == MigrationPhase.APPLYING, status(world).phase
    return step(run_reported(step(world), block, **reported))


def _held(world: MigrationWorld) -> None:
    for _ in range(3):
        decision = reconcile_migration(world)
        assert job_of(decision) is None, "the plan was carried out before; it is not replayed"
        world = step(later(world, A_MINUTE))
    after = status(world)
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    progressing = after.condition("Progressing")
    assert progressing is not None
    assert (progressing.status.value, progressing.reason) == ("False", Reason.AWAITING_APPROVAL)


def _fingerprint(world: MigrationWorld) -> str | None:
    plan = status(world).plan
    assert plan is not None
    return plan.fingerprint


# --- the memory is every plan carried out, not only the last --------------------------------


@pytest.mark.req("MIG-12", "MIG-45")
def test_a_plan_refused_for_good_is_not_replayed_after_another_plan_ran_in_between() -> None:
    world = _first_run(REFUSED)
    a = status(world).last_run
    assert a is not None
    world = _next_plan(world, B)
    assert _fingerprint(world) != a.plan.fingerprint, "plan B is a new plan: it runs"
    world = _run(world, REFUSED)
    world = _next_plan(world, A)
    assert _fingerprint(world) == a.plan.fingerprint, "plan A, published again"
    _held(world)


@pytest.mark.req("MIG-12", "MIG-44")
def test_a_passing_refusal_in_between_does_not_make_a_plan_carried_out_new() -> None:
    world = _first_run(REFUSED)
    world = _next_plan(world, B)
    world = _run(world, REFUSED, error=LOCK_TIMEOUT, job=JobPhase.FAILED)
    world = _next_plan(world, B)
    assert job_of(reconcile_migration(world)) is not None, "B's refusal passes: B runs again"
    world = _run(world, REFUSED)
    world = _next_plan(world, A)
    _held(world)


@pytest.mark.req("MIG-12", "RUN-02")
def test_a_plan_whose_run_applied_it_runs_again_once_the_history_moved_back() -> None:
    world = _first_run(run_block(RunOutcome.APPLIED, applied=["0002"]))
    first = status(world).last_run
    assert first is not None
    world = read(step(world), nothing_pending())
    assert status(world).phase == MigrationPhase.IN_SYNC
    # A backup is restored: the revision table is what it was before the run.
    world = step(later(world, dt.timedelta(minutes=10)))
    world = read(world, A)
    assert _fingerprint(world) == first.plan.fingerprint
    world = step(world)
    assert status(world).phase == MigrationPhase.APPLYING, "the run did what it said: not a replay"
    claim = status(world).active_operation
    assert claim is not None
    assert claim.authorization == Authorization.POLICY


@pytest.mark.req("MIG-12")
def test_plans_carried_out_are_remembered_in_status_without_repeats() -> None:
    world = _first_run(REFUSED)
    a = status(world).last_run
    assert a is not None
    world = _run(_next_plan(world, B), REFUSED)
    b = status(world).last_run
    assert b is not None
    assert status(world).carried_out_plans == [a.plan.fingerprint, b.plan.fingerprint]
    world = step(with_approval(step(_next_plan(world, A))))
    world = step(run_reported(step(world), REFUSED))
    assert status(world).carried_out_plans == [b.plan.fingerprint, a.plan.fingerprint]


# --- an approved run of a held plan that a passing reason refused -----------------------------


@pytest.mark.req("APR-11", "MIG-45", "MIG-12")
def test_a_held_plan_whose_approved_run_hit_a_busy_lock_needs_a_new_approval() -> None:
    world = _first_run(REFUSED)
    world = step(_next_plan(world, A))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    world = step(with_approval(world))
    claim = status(world).active_operation
    assert claim is not None
    assert claim.authorization == Authorization.APPROVAL
    world = step(run_reported(step(world), REFUSED, error=LOCK_TIMEOUT, job=JobPhase.FAILED))
    last = status(world).last_run
    assert last is not None
    assert last.reason == "LockTimeout"
    assert last.approval is not None, "the run carried the person's approval, and spent it"
    world = _next_plan(world, A)
    _held(world)
    journal = status(world).journal
    assert journal is not None
    assert [
        e.authorization for e in journal.entries if e.type == JournalEntryType.RUN_FINISHED
    ] == [
        Authorization.POLICY,
        Authorization.APPROVAL,
    ]


@pytest.mark.req("MIG-44", "MIG-12")
def test_a_plan_never_carried_out_still_runs_again_after_a_passing_refusal() -> None:
    world = _first_run(REFUSED, error=LOCK_TIMEOUT, job=JobPhase.FAILED)
    world = _next_plan(world, A)
    assert job_of(reconcile_migration(world)) is not None
    assert status(world).carried_out_plans is None


# --- which refusals pass on their own ----------------------------------------------------------


@pytest.mark.req("MIG-44", "MIG-12")
@pytest.mark.parametrize("reason", ["HistoryUnreadable", "DirectoryRefused", "BadURL"])
def test_a_refusal_that_will_not_change_holds_the_plan(reason: str) -> None:
    error = {"reason": reason, "message": "the revision table lacks the columns checksum"}
    world = _first_run(REFUSED, error=error, job=JobPhase.FAILED)
    world = _next_plan(world, A)
    _held(world)


@pytest.mark.req("MIG-44", "MIG-12")
@pytest.mark.parametrize(
    "reason", ["LockTimeout", "ConnectionFailed", "DatabaseBusy", "Interrupted", "SnapshotRefused"]
)
def test_a_refusal_that_passes_on_its_own_runs_the_plan_again(reason: str) -> None:
    error = {"reason": reason, "message": "reading the history failed with SQLSTATE 40001"}
    world = _first_run(REFUSED, error=error, job=JobPhase.FAILED)
    world = _next_plan(world, A)
    assert job_of(reconcile_migration(world)) is not None


# --- a status written before carriedOutPlans, and the bound ------------------------------------


@pytest.mark.req("MIG-12")
def test_a_status_written_before_the_list_still_holds_the_plan_its_last_run_carried_out() -> None:
    world = _first_run(REFUSED)
    world = with_status(world, carried_out_plans=None)
    world = _next_plan(world, A)
    _held(world)


@pytest.mark.req("MIG-12")
def test_a_status_written_before_the_list_remembers_its_last_run_when_the_next_one_ends() -> None:
    world = _first_run(REFUSED)
    a = status(world).last_run
    assert a is not None
    world = with_status(world, carried_out_plans=None)
    world = _run(_next_plan(world, B), REFUSED, error=LOCK_TIMEOUT, job=JobPhase.FAILED)
    assert status(world).carried_out_plans == [a.plan.fingerprint]
    world = _next_plan(world, A)
    _held(world)


def test_the_memory_keeps_the_newest_32_plans_each_once() -> None:
    kept = PtahMigrationStatus()
    for n in range(40):
        shared.remember(kept, digest(f"plan {n}"))
    shared.remember(kept, digest("plan 20"))
    shared.remember(kept, None)
    assert kept.carried_out_plans is not None
    assert len(kept.carried_out_plans) == MAX_CARRIED_OUT_PLANS
    assert kept.carried_out_plans[-1] == digest("plan 20")
    assert kept.carried_out_plans[0] == digest("plan 8")
    assert kept.carried_out_plans.count(digest("plan 20")) == 1
    assert not shared.remembered(kept, digest("plan 7")), "the oldest went first"
    assert shared.remembered(kept, digest("plan 8"))
    assert not shared.remembered(kept, None)
    shared.forget(kept, digest("plan 8"))
    shared.forget(kept, None)
    assert not shared.remembered(kept, digest("plan 8"))
    assert len(kept.carried_out_plans) == MAX_CARRIED_OUT_PLANS - 1
    untouched = PtahMigrationStatus()
    shared.forget(untouched, digest("plan 1"))
    assert untouched.carried_out_plans is None


@pytest.mark.req("MIG-12", "RUN-02", "APR-11")
def test_a_held_plan_a_person_approved_and_the_run_applied_is_forgotten() -> None:
    world = _first_run(REFUSED)
    a = status(world).last_run
    assert a is not None
    world = step(with_approval(step(_next_plan(world, A))))
    world = step(run_reported(step(world), run_block(RunOutcome.APPLIED, applied=["0002"])))
    assert status(world).carried_out_plans == [], "the run applied it: shown done"
    world = read(step(world), nothing_pending())
    world = step(later(world, dt.timedelta(minutes=10)))
    world = read(world, A)
    assert _fingerprint(world) == a.plan.fingerprint
    world = step(world)
    assert status(world).phase == MigrationPhase.APPLYING, "a restored history: a new need"


@pytest.mark.req("MIG-12")
def test_the_wait_says_which_run_carried_the_plan_out() -> None:
    world = step(_next_plan(_first_run(REFUSED), A))
    first = status(world).last_run
    assert first is not None
    assert status(world).message == (
        f"plan {_name(world)} waits for a PtahMigrationApproval naming it (run {first.operation_id} "
        "already carried this plan out and ended Failed; apply: Always never replays a plan, "
        "so it runs again only on an approval naming it)"
    )
    world = step(with_approval(world))
    world = step(run_reported(step(world), REFUSED, error=LOCK_TIMEOUT, job=JobPhase.FAILED))
    refused = status(world).last_run
    assert refused is not None
    world = step(_next_plan(world, A))
    assert status(world).message == (
        f"plan {_name(world)} waits for a PtahMigrationApproval naming it (run "
        f"{refused.operation_id} of "
        "this plan was refused before it selected anything (LockTimeout), and an earlier run "
        "already carried it out; apply: Always never replays a plan, so it runs again only on "
        "an approval naming it)"
    )
    world = step(later(world, dt.timedelta(minutes=10)))
    assert status(world).phase == MigrationPhase.READING, "the refresh at the interval"
    world = _run(read(world, B), REFUSED)
    world = step(_next_plan(world, A))
    assert status(world).message == (
        f"plan {_name(world)} waits for a PtahMigrationApproval naming it (an earlier run "
        "already carried "
        "this plan out; apply: Always never replays a plan, so it runs again only on an "
        "approval naming it)"
    )


def _name(world: MigrationWorld) -> str:
    plan = status(world).plan
    assert plan is not None
    return plan.name


@pytest.mark.req("MIG-11", "MIG-45")
def test_under_on_approval_the_wait_says_nothing_of_replays() -> None:
    world = step(read(step(new()), A))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    world = step(with_approval(world))
    world = step(run_reported(step(world), REFUSED))
    world = step(_next_plan(world, A))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    assert status(world).carried_out_plans is not None, "remembered under OnApproval too"
    assert (
        status(world).message == f"plan {_name(world)} waits for a PtahMigrationApproval naming it"
    )


@pytest.mark.req("RUN-21", "MIG-12")
def test_a_hold_restored_from_metadata_remembers_the_plan_its_run_carried_out() -> None:
    world = _first_run(REFUSED)
    failure = {"version": "0002", "statementIndex": 1, "sqlstate": "23505", "mysqlErrno": None}
    world = step(with_approval(step(_next_plan(world, A))))
    world = step(run_reported(step(world), run_block(RunOutcome.UNKNOWN, failure=failure)))
    hold = status(world).unresolved_run
    assert hold is not None
    value = (world.migration.metadata.annotations or {})[ANNOTATION_UNRESOLVED_RUN]
    restored = annotated(new(apply=ApplyPolicy.ALWAYS), ANNOTATION_UNRESOLVED_RUN, value)
    after = status_of(restored, reconcile_migration(restored))
    assert after.unresolved_run is not None
    assert after.carried_out_plans == [hold.plan.fingerprint]
