"""A migration's Apply, the details a person or the cluster reads (issue #11: written against
the survivors of `make mutate` on reconcile/migration/apply.py): the RunFinished Event of each
outcome, the held run's condition, the Lease released by name, the Lease epoch and name the run
records, a claim that names no Job or no Lease, what a run that stopped before selecting
records as its reason, and the journal of a refused Job."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import (
    ConditionType,
    EventReason,
    EventType,
    JournalEntryType,
    OperationType,
    Reason,
    RunOutcome,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.names import job_name
from ptah_operator.reconcile.decision import LeaseAction, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import JOB_RECREATE_CHECK
from ptah_operator.reconcile.world import JobPhase, LeaseState, MadeJob
from tests.unit.reconcile.migration.worlds import (
    MANAGER_NAMESPACE,
    MIGRATION,
    UID,
    applying,
    awaiting_approval,
    entries_added,
    held,
    run_block,
    run_reported,
    status,
    status_of,
    with_approval,
    with_claimant,
    with_job,
    with_source,
    with_status,
)
from tests.unit.reconcile.worlds import condition_reason, created

FAILURE = {"version": "0002", "statementIndex": 3, "sqlstate": "23505", "mysqlErrno": None}


def _claim(world: MigrationWorld) -> ActiveOperation:
    return MIGRATION.claim_of(world)


def _with_claim(world: MigrationWorld, **changes: object) -> MigrationWorld:
    return with_status(world, active_operation=_claim(world).model_copy(update=changes))


@pytest.mark.req("JNL-09", "MIG-17")
@pytest.mark.parametrize(
    ("block", "kind", "ended"),
    [
        (
            run_block(RunOutcome.APPLIED, applied=["0002"]),
            EventType.NORMAL,
            "ended Applied: 1 migration(s) applied",
        ),
        (
            run_block(RunOutcome.FAILED, failure=FAILURE),
            EventType.WARNING,
            "ended Failed: 0 migration(s) applied, stopped at version 0002",
        ),
        (
            run_block(RunOutcome.PARTIAL, applied=["0002"], failure=FAILURE),
            EventType.WARNING,
            "ended Partial: 1 migration(s) applied, stopped at version 0002",
        ),
    ],
    ids=["applied", "failed", "partial"],
)
def test_a_run_end_is_announced_with_its_outcome_what_it_applied_and_where_it_stopped(
    block: dict[str, object], kind: EventType, ended: str
) -> None:
    running = applying()
    claim = _claim(running)
    assert claim.plan is not None
    world = run_reported(running, block)
    decision = reconcile_migration(world)
    finished = [e for e in decision.events if e.reason == EventReason.RUN_FINISHED]
    assert [(e.type, e.message) for e in finished] == [
        (kind, f"run {claim.operation_id} of plan {claim.plan.name} {ended}")
    ]
    # The Lease goes back by its name, in the manager's namespace, from the run that held it.
    assert list(decision.lease) == [
        LeaseAction(
            LeaseVerb.RELEASE, claim.lease_name or "", MANAGER_NAMESPACE, claim.operation_id
        )
    ]


@pytest.mark.req("MIG-19", "RUN-03")
def test_a_held_run_names_what_it_stopped_at_in_its_condition() -> None:
    running = applying()
    world = run_reported(running, run_block(RunOutcome.PARTIAL, applied=["0002"], failure=FAILURE))
    after = status_of(world, reconcile_migration(world))
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert after.last_run is not None
    assert failed.reason == Reason.APPLY_OUTCOME_UNKNOWN
    assert failed.message == after.last_run.message
    assert failed.message == (
        "migration 0002 failed at statement 3: SQLSTATE 23505; earlier statements of it committed"
    )
    assert failed.observed_generation == MIGRATION.resource(world).metadata.generation


@pytest.mark.req("LCK-10")
def test_a_run_records_the_lease_it_holds_by_name_and_epoch() -> None:
    world = _with_claim(applying(), lease_epoch=None, lease_name=None)
    lease = world.lease
    assert lease is not None
    claim = status_of(world, reconcile_migration(world)).active_operation
    assert claim is not None
    assert (claim.lease_name, claim.lease_epoch) == (lease.name, lease.epoch)
    assert not claim.lease_continuity_lost


@pytest.mark.req("LCK-10", "LCK-11")
def test_a_run_whose_lease_is_gone_has_lost_its_continuity() -> None:
    world = dataclasses.replace(applying(), lease=None)
    decision = reconcile_migration(world)
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.lease_continuity_lost
    assert EventReason.LEASE_CONTINUITY_LOST in [e.reason for e in decision.events]


@pytest.mark.req("LCK-09")
def test_a_claim_that_names_no_lease_releases_the_realms_lease_at_its_end() -> None:
    running = applying()
    claim = _claim(running)
    unnamed = _with_claim(running, lease_name=None)
    world = run_reported(unnamed, run_block(RunOutcome.APPLIED, applied=["0002"]))
    decision = reconcile_migration(world)
    assert list(decision.lease) == [
        LeaseAction(
            LeaseVerb.RELEASE, claim.lease_name or "", MANAGER_NAMESPACE, claim.operation_id
        )
    ]


@pytest.mark.req("RUN-10")
def test_a_claim_that_names_no_job_records_the_job_its_id_names() -> None:
    running = applying()
    claim = _claim(running)
    world = run_reported(running, run_block(RunOutcome.APPLIED, applied=["0002"]))
    world = _with_claim(world, job_name=None)
    after = status_of(world, reconcile_migration(world))
    assert after.last_run is not None
    assert after.last_run.job is not None
    assert after.last_run.job.name == job_name(OperationType.APPLY, claim.operation_id)
    assert after.last_run.job.uid == claim.job_uid


@pytest.mark.req("MIG-21")
@pytest.mark.parametrize(
    ("selected", "reason"),
    [(False, ErrorReason.INTERRUPTED), (True, None)],
    ids=["before", "after"],
)
def test_only_a_run_that_stopped_before_selecting_records_its_error_reason(
    selected: bool, reason: str | None
) -> None:
    block = (
        run_block(RunOutcome.FAILED, selected=False)
        if not selected
        else run_block(RunOutcome.FAILED, failure=FAILURE)
    )
    error = {"reason": ErrorReason.INTERRUPTED.value, "message": "stopped"}
    world = run_reported(applying(), block, job=JobPhase.FAILED, error=error)
    after = status_of(world, reconcile_migration(world))
    assert after.last_run is not None
    assert after.last_run.reason == reason


@pytest.mark.req("MIG-21", "JOB-06")
def test_a_refused_apply_job_is_journaled_as_a_failed_apply() -> None:
    world = applying(dispatched=False)
    name = _claim(world).job_name or ""
    refused = dataclasses.replace(world, jobs={}, job_refusals={name: "quota exceeded"})
    decision = reconcile_migration(refused)
    failed = [
        e for e in entries_added(refused, decision) if e.type == JournalEntryType.OPERATION_FAILED
    ]
    assert [(e.operation, e.reason) for e in failed] == [(OperationType.APPLY, Reason.JOB_REFUSED)]
    after = status_of(refused, decision)
    assert after.message is not None
    assert f"the API server refused Apply Job {name}: quota exceeded" in after.message


@pytest.mark.req("MIG-20")
def test_a_made_job_whose_plan_is_gone_is_not_asked_for_again() -> None:
    world = applying(dispatched=False)
    name = _claim(world).job_name or ""
    made = dataclasses.replace(world, jobs_made={name: MadeJob("job-made-1", world.now)}, plans={})
    decision = reconcile_migration(made)
    assert not created(decision, "Job")
    assert decision.requeue_after != JOB_RECREATE_CHECK
    asked = reconcile_migration(dataclasses.replace(made, plans=world.plans))
    assert created(asked, "Job")
    assert asked.requeue_after == JOB_RECREATE_CHECK


@pytest.mark.req("MIG-46")
def test_a_held_run_wakes_at_its_next_reading_and_its_lease_is_no_orphan() -> None:
    world = held()
    when = status(world).next_reconciliation_time
    assert when is not None
    assert when > world.now
    hold = status(world).unresolved_run
    assert hold is not None
    leased = dataclasses.replace(
        world, lease=LeaseState("ptah-realm-x", MANAGER_NAMESPACE, hold.operation_id, 2, False, UID)
    )
    decision = reconcile_migration(leased)
    assert decision.requeue_after == when - world.now
    assert EventReason.LEASE_RELEASED not in [e.reason for e in decision.events]


@pytest.mark.req("PATH-09", "JOB-04")
def test_the_pass_that_claims_the_apply_says_which_plan_it_applies() -> None:
    approved = with_approval(awaiting_approval())
    after = status_of(approved, reconcile_migration(approved))
    claim = after.active_operation
    assert claim is not None
    assert claim.plan is not None
    assert after.message == f"applying plan {claim.plan.name}"


@pytest.mark.req("MIG-20", "LCK-08")
def test_an_undispatched_apply_the_realm_refuses_shows_the_realms_reason() -> None:
    world = with_claimant(applying(dispatched=False), shared=False)
    after = status_of(world, reconcile_migration(world))
    assert after.active_operation is None
    assert condition_reason(after, ConditionType.READY) == Reason.REALM_CONFLICT


@pytest.mark.req("MIG-20")
def test_an_undispatched_claim_that_names_no_plan_is_withdrawn_as_its_plan_gone() -> None:
    world = _with_claim(applying(dispatched=False), plan=None)
    after = status_of(world, reconcile_migration(world))
    assert after.active_operation is None
    assert after.message == "the Apply was withdrawn before its Job existed: the plan is gone"


@pytest.mark.req("MIG-46", "APR-12")
def test_a_held_run_retires_a_published_plan_saying_why() -> None:
    approvable = with_approval(awaiting_approval())
    plan = status(approvable).plan
    hold = status(held()).unresolved_run
    world = with_status(approvable, unresolved_run=hold)
    assert plan is not None
    decision = reconcile_migration(world)
    assert (
        EventReason.PLAN_STALE,
        f"plan {plan.name} is retired before it ran: an unresolved run holds the migration; an "
        "approval must name the plan that replaces it",
    ) in [(e.reason, e.message) for e in decision.events]
    assert status_of(world, decision).plan is None


@pytest.mark.req("LCK-09")
def test_a_lease_held_by_the_unresolved_run_is_no_orphan() -> None:
    world = held()
    hold = status(world).unresolved_run
    last = status(world).last_run
    assert hold is not None
    assert last is not None
    moved_on = with_status(world, last_run=last.model_copy(update={"operation_id": "op-later"}))
    leased = dataclasses.replace(
        moved_on,
        lease=LeaseState("ptah-realm-x", MANAGER_NAMESPACE, hold.operation_id, 2, False, UID),
    )
    decision = reconcile_migration(leased)
    assert EventReason.LEASE_RELEASED not in [e.reason for e in decision.events]
    assert not decision.lease


@pytest.mark.req("MIG-20", "JOB-04")
def test_a_made_job_not_seen_is_asked_for_again_exactly_as_first_made() -> None:
    approved = with_approval(awaiting_approval())
    first = reconcile_migration(approved)
    (made,) = created(first, "Job")
    claimed = MIGRATION.carry_out(approved, first)
    claimed = dataclasses.replace(claimed, jobs={})
    name = _claim(claimed).job_name or ""
    unseen = dataclasses.replace(claimed, jobs_made={name: MadeJob("job-made-1", claimed.now)})
    (again,) = created(reconcile_migration(unseen), "Job")
    assert again == made
    # One that cannot be built any more asks for nothing, and the pass goes on.
    for broken in (_with_claim(unseen, plan=None), _with_claim(unseen, source=None)):
        decision = reconcile_migration(broken)
        assert not created(decision, "Job")


@pytest.mark.req("MIG-20", "JOB-06")
def test_a_made_job_whose_manifest_cannot_be_built_again_is_not_asked_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    approved = with_approval(awaiting_approval())
    claimed = dataclasses.replace(
        MIGRATION.carry_out(approved, reconcile_migration(approved)), jobs={}
    )
    name = _claim(claimed).job_name or ""
    unseen = dataclasses.replace(claimed, jobs_made={name: MadeJob("job-made-1", claimed.now)})

    def refuse(*args: object, **kwargs: object) -> dict[str, object]:
        raise ValueError("spec.execution.image is not allowed")

    monkeypatch.setattr("ptah_operator.reconcile.migration.apply.apply_job", refuse)
    decision = reconcile_migration(unseen)
    assert not created(decision, "Job")
    assert status_of(unseen, decision).active_operation is not None


@pytest.mark.req("MIG-21", "SRC-CM-08")
def test_a_refused_snapshot_fails_the_apply_saying_what_comes_next() -> None:
    running = applying()
    claim = _claim(running)
    world = with_job(running, JobPhase.FAILED, snapshot_refused=True, finished_at=running.now)
    after = status_of(world, reconcile_migration(world))
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.message == (
        f"Apply {claim.operation_id} was refused its snapshot before it started; "
        "it starts again from resolution, and a plan needs a new approval"
    )


@pytest.mark.req("MIG-19", "MIG-47")
def test_a_partial_run_is_read_back_at_the_next_interval() -> None:
    world = run_reported(
        applying(), run_block(RunOutcome.PARTIAL, applied=["0002"], failure=FAILURE)
    )
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.next_reconciliation_time == world.now + dt.timedelta(minutes=10)
    assert decision.requeue_after == dt.timedelta(minutes=10)


@pytest.mark.req("MIG-20", "APR-12")
def test_a_withdrawal_for_a_moved_source_retires_the_plan_saying_why() -> None:
    world = applying(dispatched=False)
    plan = status(world).plan
    assert plan is not None
    moved = with_source(
        world, MIGRATION.source_files({**MIGRATION.files, "9999_added.up.sql": b"SELECT 1;\n"})
    )
    decision = reconcile_migration(moved)
    assert (
        EventReason.PLAN_STALE,
        f"plan {plan.name} is retired before it ran: the source changed; an approval must name "
        "the plan that replaces it",
    ) in [(e.reason, e.message) for e in decision.events]
