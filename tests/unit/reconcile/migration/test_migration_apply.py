"""Approvals, runs and what a run leaves behind (seeds 000 and 002: "Approving a run", "What
the run reports", "Migration, Failed", "Migration, Partial or Unknown", the journal's run
entries)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import pytest

from ptah_operator.api.constants import (
    ANNOTATION_UNRESOLVED_RUN,
    ApplyPolicy,
    Authorization,
    EventReason,
    JournalEntryType,
    MigrationPhase,
    Reason,
    RunOutcome,
)
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.names import realm_lease_name
from ptah_operator.reconcile.decision import Decision, LeaseVerb
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import RESULT_GRACE, RUN_CAP
from ptah_operator.reconcile.world import JobPhase, LeaseState
from tests.unit.reconcile.migration.table import Row, check, params
from tests.unit.reconcile.migration.worlds import (
    ALICE,
    BOB,
    DB,
    EDITED_FILES,
    OTHER_DB,
    acknowledgment_of,
    annotated,
    applying,
    approval_of,
    awaiting_approval,
    entries_added,
    held,
    history,
    history_reported,
    job_of,
    later,
    lease_held_by_another,
    new,
    nothing_pending,
    read,
    ready_to_plan,
    run_block,
    run_reported,
    source_files,
    status,
    status_of,
    step,
    with_acknowledgment,
    with_approval,
    with_job,
    with_source,
    with_status,
)

A_MINUTE = dt.timedelta(minutes=1)
TEN_MINUTES = dt.timedelta(minutes=10)
FAILURE = {"version": "0002", "statementIndex": 3, "sqlstate": "23505", "mysqlErrno": None}
Entry = JournalEntryType


# --- worlds ------------------------------------------------------------------------------------


def awaiting_with(**approval: object) -> MigrationWorld:
    world = awaiting_approval()
    return with_approval(world, approval_of(world, **approval))  # type: ignore[arg-type]


def approved_for_another_migration() -> MigrationWorld:
    world = awaiting_approval()
    approval = approval_of(world)
    spec = approval.spec.model_copy(
        update={"migration_ref": approval.spec.migration_ref.model_copy(update={"uid": "other"})}
    )
    return with_approval(world, approval.model_copy(update={"spec": spec}))


def approved_for_another_plan_uid() -> MigrationWorld:
    world = awaiting_approval()
    approval = approval_of(world)
    spec = approval.spec.model_copy(
        update={"plan_ref": approval.spec.plan_ref.model_copy(update={"uid": "an-older-plan"})}
    )
    return with_approval(world, approval.model_copy(update={"spec": spec}))


def retried_after_stopping_before_selection() -> MigrationWorld:
    """The run stopped before it selected anything; after the retry the same plan is back."""
    failed = step(run_reported(applying(), run_block(RunOutcome.FAILED, selected=False)))
    reread = step(later(failed, A_MINUTE))
    return step(read(reread, ready_to_plan()))


def withdrawn_then_planned_again() -> MigrationWorld:
    """An Apply withdrawn before its Job existed (spec.suspend), resumed, read, published."""
    world = applying(dispatched=False)
    world = step(dataclasses.replace(world, migration=_with_suspend(world, True)))
    world = step(world)  # Suspended
    world = dataclasses.replace(world, migration=_with_suspend(world, False, bump=True))
    world = step(world)  # Reading
    return read(world, ready_to_plan())


def _with_suspend(world: MigrationWorld, value: bool, bump: bool = True) -> PtahMigration:
    resource = world.migration
    meta = resource.metadata.model_copy(
        update={"generation": (resource.metadata.generation or 1) + (1 if bump else 0)}
    )
    spec = resource.spec.model_copy(update={"suspend": value})
    return resource.model_copy(update={"spec": spec, "metadata": meta})


def approved_then_retired() -> MigrationWorld:
    """A person approved plan A; the source changed; plan B is published; A's approval stays."""
    waiting = awaiting_approval()
    old_approval = approval_of(waiting)
    world = step(with_source(waiting, source_files(EDITED_FILES)))
    assert status(world).phase == MigrationPhase.PENDING
    world = step(read(step(world), ready_to_plan("0001", "0002", "0003")))
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    return with_approval(world, old_approval)


def lease_changed_hands() -> MigrationWorld:
    world = applying()
    world = step(world)  # the claim remembers the epoch it holds
    lease = world.lease
    assert lease is not None
    stolen = LeaseState(lease.name, lease.namespace, "op-0000000bad", lease.epoch + 1, False)
    world = dataclasses.replace(world, lease=stolen)
    return run_reported(world, run_block(RunOutcome.APPLIED, applied=["0002"]))


def lease_changed_hands_mid_run() -> MigrationWorld:
    world = applying()
    world = step(world)
    lease = world.lease
    assert lease is not None
    stolen = LeaseState(lease.name, lease.namespace, "op-0000000bad", lease.epoch + 1, False)
    return dataclasses.replace(world, lease=stolen)


def lease_lost_then_job_ended() -> MigrationWorld:
    world = step(lease_changed_hands_mid_run())
    claim = status(world).active_operation
    assert claim is not None
    assert claim.lease_continuity_lost
    later_on = later(world, TEN_MINUTES)
    return with_job(later_on, JobPhase.FAILED, finished_at=later_on.now - RESULT_GRACE * 2)


def held_then_read(block: dict[str, Any], target: str | None = DB) -> MigrationWorld:
    world = step(later(held(), TEN_MINUTES))
    return history_reported(world, block, target=target)


def ran_against_another_database() -> MigrationWorld:
    world = step(
        run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]), target=OTHER_DB)
    )
    return history_reported(step(world), nothing_pending(), target=DB)


def restored_without_status() -> MigrationWorld:
    """A backup restore brought the resource back with its annotations and no status."""
    source = held()
    value = (source.migration.metadata.annotations or {})[ANNOTATION_UNRESOLVED_RUN]
    fresh = new()
    return annotated(fresh, ANNOTATION_UNRESOLVED_RUN, value)


# --- assertions --------------------------------------------------------------------------------


def stays_waiting(world: MigrationWorld, decision: Decision) -> None:
    assert decision.status is None
    assert job_of(decision) is None
    assert not decision.lease


def last_run_copied_from_claim(world: MigrationWorld, decision: Decision) -> None:
    claim = status(world).active_operation
    assert claim is not None
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.operation_id == claim.operation_id
    assert run.plan == claim.plan
    assert run.approval == claim.approval
    assert run.approver == ALICE
    assert run.authorization == Authorization.APPROVAL
    assert run.job is not None
    assert run.job.name == claim.job_name
    assert run.job.uid == claim.job_uid
    assert run.source == claim.source
    assert run.execution_binding == claim.execution_binding
    assert run.applied_versions == ["0002"]
    assert run.target_identity_digest == DB
    finished = entries_added(world, decision)[-1]
    assert finished.type == Entry.RUN_FINISHED
    assert finished.operation_id == claim.operation_id
    assert finished.plan_uid == claim.plan.uid if claim.plan else False
    assert finished.approval_uid == claim.approval.uid if claim.approval else False
    assert finished.job_uid == claim.job_uid
    assert finished.authorization == Authorization.APPROVAL
    assert finished.versions_applied == 1
    accepted = [e for e in status(world).journal.entries if e.type == Entry.APPROVAL_ACCEPTED]  # type: ignore[union-attr]
    assert [e.approval_uid for e in accepted] == [finished.approval_uid]


def failure_recorded(world: MigrationWorld, decision: Decision) -> None:
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.failure is not None
    assert (run.failure.version, run.failure.statement_index, run.failure.sqlstate) == (
        "0002",
        3,
        "23505",
    )
    finished = entries_added(world, decision)[-1]
    assert finished.stopped_at == "0002"


def no_failure_for_a_commit(world: MigrationWorld, decision: Decision) -> None:
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.failure is None
    assert run.message == "migration 0002 failed at commit: SQLSTATE 23514"


def names_the_secrets_database(world: MigrationWorld, decision: Decision) -> None:
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.target_identity_digest == OTHER_DB


def hold_names_planned_database(world: MigrationWorld, decision: Decision) -> None:
    hold = status_of(world, decision).unresolved_run
    assert hold is not None
    assert hold.planned_target_digest == DB
    assert hold.target_identity_digest is None


def settled(world: MigrationWorld, decision: Decision) -> None:
    assert status(world).unresolved_run is not None
    assert status_of(world, decision).unresolved_run is None
    assert decision.annotations == {ANNOTATION_UNRESOLVED_RUN: None}


def still_held(world: MigrationWorld, decision: Decision) -> None:
    assert status_of(world, decision).unresolved_run is not None
    assert status_of(world, decision).plan is None
    assert not [o for o in decision.create if isinstance(o, dict) and o["kind"] != "Job"]


def not_verified(world: MigrationWorld, decision: Decision) -> None:
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.verification is None


def acknowledged_entry(world: MigrationWorld, decision: Decision) -> None:
    hold = status(world).unresolved_run
    assert hold is not None
    entry = entries_added(world, decision)[0]
    assert entry.type == Entry.RUN_ACKNOWLEDGED
    assert entry.operation_id == hold.operation_id
    assert entry.plan_uid == hold.plan.uid
    assert hold.job is not None
    assert entry.job_uid == hold.job.uid
    assert entry.acknowledged_by == BOB
    assert entry.outcome == hold.outcome.value


def settled_by_acknowledgment(world: MigrationWorld, decision: Decision) -> None:
    settled(world, decision)
    acknowledged_entry(world, decision)


def restored_hold(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.unresolved_run is not None
    assert after.unresolved_run.restored is True
    assert after.unresolved_run.outcome == RunOutcome.PARTIAL
    entry = entries_added(world, decision)[0]
    assert entry.outcome == "Partial"
    assert entry.time == after.unresolved_run.finished_at


def failed_job_that_applied() -> MigrationWorld:
    world = run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"]))
    return with_job(world, JobPhase.FAILED, finished_at=world.now, reason="BackoffLimitExceeded")


def second_run_ends() -> MigrationWorld:
    world = step(run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])))
    world = read(step(world), ready_to_plan("0002", "0003"))
    world = step(world)  # published: AwaitingApproval for the second plan
    world = applying(with_approval(world, approval_of(world, name="billing-ok-2")))
    return run_reported(world, run_block(RunOutcome.APPLIED, applied=["0003"]))


def two_runs_in_journal(world: MigrationWorld, decision: Decision) -> None:
    after = status_of(world, decision)
    assert after.last_run is not None
    assert after.last_run.applied_versions == ["0003"]
    assert after.journal is not None
    finished = [e for e in after.journal.entries if e.type == Entry.RUN_FINISHED]
    assert len(finished) == 2
    assert finished[0].operation_id != after.last_run.operation_id
    accepted = [e.approval_uid for e in after.journal.entries if e.type == Entry.APPROVAL_ACCEPTED]
    assert accepted == [e.approval_uid for e in finished]


APPROVALS = [
    Row(
        "an exact approval: migration, plan (name and UID), fingerprint, and a stamped approver",
        lambda: awaiting_with(),
        ("APR-02", "APR-04", "MIG-14"),
        phase=MigrationPhase.APPLYING,
        job="Apply",
    ),
    Row(
        "an approval admission did not stamp authorizes nothing",
        lambda: awaiting_with(by=None),
        ("APR-04", "APR-03"),
        then=stays_waiting,
    ),
    Row(
        "an approval of another fingerprint authorizes nothing",
        lambda: awaiting_with(fingerprint="sha256:" + "1" * 64),
        ("APR-02", "APR-03"),
        then=stays_waiting,
    ),
    Row(
        "an approval of another plan object under the same name authorizes nothing",
        approved_for_another_plan_uid,
        ("APR-02", "APR-05", "APR-12"),
        then=stays_waiting,
    ),
    Row(
        "an approval naming another migration authorizes nothing",
        approved_for_another_migration,
        ("APR-02",),
        then=stays_waiting,
    ),
    Row(
        "one approval authorizes one execution: the run spent it, the same plan needs another",
        retried_after_stopping_before_selection,
        ("APR-11", "MIG-45", "PATH-16"),
        phase=MigrationPhase.AWAITING_APPROVAL,
        job=None,
        writes=False,
    ),
    Row(
        "an Apply withdrawn before dispatch leaves the approval to the next claim",
        withdrawn_then_planned_again,
        ("APR-13", "MIG-20"),
        phase=MigrationPhase.APPLYING,
        job="Apply",
    ),
    Row(
        "an approval of a retired plan never carries over to its replacement",
        approved_then_retired,
        ("APR-12", "SRC-CM-12"),
        phase=MigrationPhase.AWAITING_APPROVAL,
        job=None,
    ),
]

RUNS = [
    Row(
        "lastRun is copied from the Apply claim when the run ends",
        lambda: run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])),
        ("RUN-08", "RUN-12", "RUN-13", "JNL-16", "JNL-17", "JNL-18", "APR-15", "PRIV-06"),
        entries=[Entry.RUN_FINISHED],
        then=last_run_copied_from_claim,
    ),
    Row(
        "the claim outlives the plan and the approval: lastRun is true without them",
        lambda: dataclasses.replace(
            run_reported(applying(), run_block(RunOutcome.APPLIED, applied=["0002"])),
            plans={},
            approvals=(),
        ),
        ("RUN-10",),
        phase=MigrationPhase.VERIFYING_HISTORY,
        then=last_run_copied_from_claim,
    ),
    Row(
        "a statement that failed is recorded: version, position, SQLSTATE, no text",
        lambda: run_reported(applying(), run_block(RunOutcome.FAILED, failure=FAILURE)),
        ("RUN-17", "RUN-12", "PRIV-05", "JNL-09"),
        phase=MigrationPhase.VERIFYING_HISTORY,
        then=failure_recorded,
    ),
    Row(
        "a commit that failed has no statement to point at: failure unset, the message names it",
        lambda: run_reported(
            applying(),
            run_block(
                RunOutcome.FAILED,
                message="the runner's words, never read",
                reason="CommitFailed",
                stoppedAt={"version": "0002"},
                sqlstate="23514",
            ),
        ),
        ("RUN-18",),
        then=no_failure_for_a_commit,
    ),
    Row(
        "a MySQL statement that may have committed makes the run Unknown, failure recorded",
        lambda: run_reported(
            applying(),
            run_block(
                RunOutcome.UNKNOWN,
                failure={"version": "0002", "statementIndex": 0, "mysqlErrno": 1062},
                message="migration 0002 failed at statement 0: MySQL error 1062; it is not "
                "recorded whether it committed",
            ),
        ),
        ("RUN-19", "RUN-03"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
    ),
    Row(
        "a run refused because its Secret moved names the database the Secret held",
        lambda: run_reported(
            applying(), run_block(RunOutcome.FAILED, selected=False), target=OTHER_DB
        ),
        ("RUN-14", "RUN-13"),
        phase=MigrationPhase.FAILED,
        then=names_the_secrets_database,
    ),
    Row(
        "a run that left no result names no database; its hold names the planned one",
        lambda: with_job(
            later(applying(), dt.timedelta(minutes=2)),
            JobPhase.FAILED,
            finished_at=applying().now,
        ),
        ("RUN-15", "MIG-19"),
        phase=MigrationPhase.BLOCKED,
        then=hold_names_planned_database,
    ),
    Row(
        "the verdict is the result's, not the Job's exit: a failed Job that reported Applied",
        failed_job_that_applied,
        ("RUN-02", "PATH-10", "JOB-08"),
        phase=MigrationPhase.VERIFYING_HISTORY,
    ),
    Row(
        "a later run replaces lastRun; the journal still names the one before",
        second_run_ends,
        ("RUN-11",),
        then=two_runs_in_journal,
    ),
    Row(
        "the Lease changed hands during the run: its result is discarded, the run is unknown",
        lease_changed_hands,
        ("LCK-10", "LCK-11"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        lease=[LeaseVerb.RELEASE],
    ),
    Row(
        "the Lease changed hands while the Job still runs: followed to its end, not yet judged",
        lease_changed_hands_mid_run,
        ("LCK-10",),
        phase=MigrationPhase.APPLYING,
        lease=[],
    ),
    Row(
        "... and once that Job ended, the run is unknown and held",
        lease_lost_then_job_ended,
        ("LCK-10", "LCK-11"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
    ),
]

HOLDS = [
    Row(
        "Partial: held in status.unresolvedRun and in metadata, Blocked, never retried",
        lambda: run_reported(applying(), run_block(RunOutcome.PARTIAL, failure=FAILURE)),
        ("RUN-05", "RUN-03", "MIG-46", "RETRY-13"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        entries=[Entry.RUN_FINISHED],
    ),
    Row(
        "held: a reading with pending versions publishes no plan",
        lambda: held_then_read(ready_to_plan("0001", "0002")),
        ("MIG-46", "MIG-47"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        then=still_held,
    ),
    Row(
        "held: a retry never settles it, however long it waits",
        lambda: later(held(), dt.timedelta(days=3)),
        ("RETRY-13", "MIG-47", "RUN-03"),
        phase=MigrationPhase.READING,
        job="History",
        then=lambda w, d: None if status_of(w, d).unresolved_run else pytest.fail("settled"),
    ),
    Row(
        "held: a clean reading of the planned database settles it",
        lambda: held_then_read(nothing_pending()),
        ("RUN-07", "MIG-47", "PATH-19"),
        phase=MigrationPhase.IN_SYNC,
        then=settled,
    ),
    Row(
        "held: a clean reading of another database settles nothing",
        lambda: held_then_read(nothing_pending(), target=OTHER_DB),
        ("RUN-07", "MIG-47"),
        phase=MigrationPhase.BLOCKED,
        then=still_held,
    ),
    Row(
        "held: a clean reading settles a run that named no database",
        lambda: history_reported(
            step(
                later(
                    step(
                        with_job(
                            later(applying(), dt.timedelta(minutes=2)),
                            JobPhase.FAILED,
                            finished_at=applying().now,
                        )
                    ),
                    TEN_MINUTES,
                )
            ),
            nothing_pending(),
        ),
        ("RUN-07", "RUN-16"),
        phase=MigrationPhase.IN_SYNC,
        entries=[],
        then=settled,
    ),
    Row(
        "held: a PtahMigrationRunAcknowledgment bound to the run settles it",
        lambda: with_acknowledgment(held()),
        ("RUN-06", "JNL-11", "JNL-16", "MIG-47"),
        phase=MigrationPhase.READING,
        job="History",
        entries=[Entry.RUN_ACKNOWLEDGED],
        then=settled_by_acknowledgment,
    ),
    Row(
        "held: an acknowledgment of another run settles nothing",
        lambda: with_acknowledgment(
            held(), acknowledgment_of(held(), operation_id="op-0000000001")
        ),
        ("RUN-06",),
        writes=False,
        job=None,
    ),
    Row(
        "held: an acknowledgment admission did not stamp settles nothing",
        lambda: with_acknowledgment(held(), acknowledgment_of(held(), by=None)),
        ("RUN-06",),
        writes=False,
    ),
    Row(
        "a hold a restore brings back without status: Blocked, RunFinished as the hold recorded",
        restored_without_status,
        ("MIG-24", "RUN-21", "JNL-10"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        entries=[Entry.RUN_FINISHED],
        then=restored_hold,
    ),
    Row(
        "a reading verifies only a run that named the database it read",
        ran_against_another_database,
        ("RUN-16", "JNL-08"),
        phase=MigrationPhase.IN_SYNC,
        entries=[],
        then=not_verified,
    ),
]


def _with_hold(world: MigrationWorld) -> MigrationWorld:
    """The world with a Partial run held in status.unresolvedRun, as a restored or edited
    status can put it beside a published plan (and no annotation says so)."""
    hold = status(held()).unresolved_run
    assert hold is not None
    return with_status(world, unresolved_run=hold)


def _no_apply(world: MigrationWorld, decision: Decision) -> None:
    assert job_of(decision) is None
    assert not [a for a in decision.lease if a.verb == LeaseVerb.ACQUIRE]
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.unresolved_run is not None, "the hold stays until a read or a person settles it"
    assert after.plan is None, "a held run publishes no plan"


NO_UNRESOLVED_RUN = [
    Row(
        "an exact approval beside a held run starts no Apply",
        lambda: _with_hold(awaiting_with()),
        ("MIG-46", "RUN-05", "APR-02"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        progressing=(False, Reason.APPLY_OUTCOME_UNKNOWN),
        job=None,
        then=_no_apply,
    ),
    Row(
        "apply: Always beside a held run starts no Apply",
        lambda: _with_hold(read(step(new(apply=ApplyPolicy.ALWAYS)), ready_to_plan())),
        ("MIG-46", "RUN-05", "MIG-12"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        job=None,
        then=_no_apply,
    ),
    Row(
        "an Apply claim whose Job never showed, beside a held run, asks for no Job",
        lambda: _with_hold(applying(dispatched=False)),
        ("MIG-46", "RUN-05"),
        phase=MigrationPhase.BLOCKED,
        ready=Reason.APPLY_OUTCOME_UNKNOWN,
        job=None,
        then=_no_apply,
    ),
    Row(
        "... and a read that comes due beside it runs, so the hold can be settled",
        lambda: later(_with_hold(awaiting_with()), TEN_MINUTES),
        ("MIG-46", "MIG-47", "MIG-15"),
        phase=MigrationPhase.READING,
        job="History",
    ),
]


@pytest.mark.parametrize("row", params(NO_UNRESOLVED_RUN))
def test_no_apply_starts_while_a_run_is_unresolved(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(APPROVALS))
def test_approving_a_run(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(RUNS))
def test_what_the_run_reports(row: Row) -> None:
    check(row)


@pytest.mark.parametrize("row", params(HOLDS))
def test_partial_or_unknown_until_a_read_or_a_person_settles_it(row: Row) -> None:
    check(row)


@pytest.mark.req("LCK-01", "LCK-05", "LCK-07", "JOB-05")
def test_an_apply_takes_the_realm_lease_of_its_coordination_key_before_its_claim() -> None:
    world = with_approval(awaiting_approval())
    decision = reconcile_migration(world)
    assert [a.verb for a in decision.lease] == [LeaseVerb.ACQUIRE]
    action = decision.lease[0]
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert action.holder == claim.operation_id
    # The name depends on the coordination key alone, so a schema on the same database takes
    # the same Lease and the two take turns.
    assert action.name == realm_lease_name("prod/application/billing-primary")
    assert action.namespace == "ptah-system"


@pytest.mark.req("LCK-01", "LCK-05")
def test_an_apply_waits_while_another_operation_holds_the_lease() -> None:
    world = lease_held_by_another(with_approval(awaiting_approval()))
    decision = reconcile_migration(world)
    assert job_of(decision) is None
    assert not decision.lease
    after = status_of(world, decision)
    assert after.active_operation is None
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    assert decision.requeue_after == dt.timedelta(seconds=10)


@pytest.mark.req("JNL-05", "APR-15")
def test_a_later_approval_under_an_earlier_name_is_its_own_decision() -> None:
    world = retried_after_stopping_before_selection()
    first = status(world).last_run
    assert first is not None
    assert first.approval is not None
    again = with_approval(world, approval_of(world, name=first.approval.name, by=BOB))
    world = step(step(again))
    assert status(world).phase == MigrationPhase.APPLYING
    journal = status(world).journal
    assert journal is not None
    accepted = [e for e in journal.entries if e.type == Entry.APPROVAL_ACCEPTED]
    assert [e.approval_name for e in accepted] == [first.approval.name] * 2
    assert accepted[0].approval_uid != accepted[1].approval_uid
    assert accepted[1].approver == BOB


@pytest.mark.req("SUS-02", "RETRY-08", "RRQ-15")
def test_a_dispatched_apply_never_gives_way() -> None:
    world = with_source(applying(), source_files(EDITED_FILES))
    world = annotated(world, "operator.ptah.run/read-requested-at", "2026-08-30T12:00:30Z")
    world = dataclasses.replace(world, migration=_with_suspend(world, True))
    decision = reconcile_migration(world)
    assert status_of(world, decision).phase == MigrationPhase.APPLYING
    assert status_of(world, decision).active_operation is not None
    assert not decision.lease
    ended = reconcile_migration(
        run_reported(world, run_block(RunOutcome.APPLIED, applied=["0002"]))
    )
    assert status_of(world, ended).phase == MigrationPhase.VERIFYING_HISTORY
    assert EventReason.READ_REQUESTED not in [e.reason for e in ended.events]


@pytest.mark.req("JNL-17")
def test_run_finished_under_always_names_the_policy() -> None:
    world = step(read(step(new(apply=ApplyPolicy.ALWAYS)), ready_to_plan()))
    assert status(world).phase == MigrationPhase.APPLYING
    world = step(world)
    decision = reconcile_migration(
        run_reported(world, run_block(RunOutcome.APPLIED, applied=["0002"]))
    )
    finished = entries_added(world, decision)[-1]
    assert finished.type == Entry.RUN_FINISHED
    assert finished.authorization == Authorization.POLICY
    assert finished.approval_uid is None
    assert Entry.APPROVAL_ACCEPTED not in [e.type for e in entries_added(world, decision)]


@pytest.mark.req("MIG-45")
def test_after_a_failed_run_the_next_plan_needs_its_own_approval() -> None:
    world = step(run_reported(applying(), run_block(RunOutcome.FAILED, failure=FAILURE)))
    world = step(world)  # the proof read
    world = read(world, history("ReadyToPlan", current="0001", pending_versions=["0002"]))
    world = step(world)
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    assert reconcile_migration(world).status is None
    assert job_of(reconcile_migration(world)) is None


@pytest.mark.req("JNL-05", "JNL-09")
def test_a_run_whose_job_was_never_seen_still_writes_one_approval_and_one_end() -> None:
    world = step(with_approval(awaiting_approval()))
    world = run_reported(world, run_block(RunOutcome.APPLIED, applied=["0002"]), job=None)
    world = dataclasses.replace(world, jobs={})
    # A result with no Job ever seen is no run's word (issue #18): the claim goes on, and at
    # the run's hard cap it ends Unknown, still with one approval and one end on record.
    assert entries_added(world, reconcile_migration(world)) == []
    world = later(world, RUN_CAP)
    decision = reconcile_migration(world)
    assert [e.type for e in entries_added(world, decision)] == [
        Entry.APPROVAL_ACCEPTED,
        Entry.RUN_FINISHED,
    ]
    assert status_of(world, decision).phase == MigrationPhase.BLOCKED


def _orphan_lease(world: MigrationWorld, holder_uid: str) -> MigrationWorld:
    name = realm_lease_name(world.migration.spec.target.coordination_key)
    lease = LeaseState(name, "ptah-system", "op-0000000ab0", 3, False, holder_uid=holder_uid)
    return dataclasses.replace(world, lease=lease)


def test_a_lease_this_resource_took_but_never_recorded_is_given_back() -> None:
    waiting = with_approval(awaiting_approval())
    world = _orphan_lease(waiting, str(waiting.migration.metadata.uid))
    decision = reconcile_migration(world)
    verbs = [(a.verb, a.holder) for a in decision.lease]
    assert verbs == [(LeaseVerb.RELEASE, "op-0000000ab0")], "released, and nothing taken yet"
    after = step(world)
    assert after.lease is not None
    assert after.lease.holder is None
    applying_now = reconcile_migration(after)
    assert [a.verb for a in applying_now.lease] == [LeaseVerb.ACQUIRE]


def test_a_lease_another_resource_took_is_waited_for_not_released() -> None:
    waiting = with_approval(awaiting_approval())
    world = _orphan_lease(waiting, "00000000-0000-4000-8000-00000000beef")
    decision = reconcile_migration(world)
    assert decision.lease == ()


# --- apply: Always never replays a plan a run already carried out (docs/design/lifecycle-decisions.md)


def _always_run_ended(block: dict[str, Any], **reported: Any) -> MigrationWorld:
    """apply: Always; the plan's run ended as `block` says; the next read, after
    failureRetryInterval, gives the same plan again."""
    world = step(read(step(new(apply=ApplyPolicy.ALWAYS)), ready_to_plan()))
    assert status(world).phase == MigrationPhase.APPLYING
    world = step(run_reported(step(world), block, **reported))
    first = status(world).last_run
    assert first is not None
    world = step(later(world, A_MINUTE))
    assert status(world).phase == MigrationPhase.READING, status(world).phase
    world = read(world, ready_to_plan())
    plan = status(world).plan
    assert plan is not None
    assert plan.fingerprint == first.plan.fingerprint, "the same plan, published again"
    return world


_REFUSED = run_block(RunOutcome.FAILED, selected=False, message="version 0002 needs a mode")


@pytest.mark.req("MIG-12", "MIG-44", "MIG-45")
def test_under_always_a_plan_whose_run_was_refused_for_good_is_not_started_again() -> None:
    world = _always_run_ended(_REFUSED)
    for _ in range(3):
        decision = reconcile_migration(world)
        assert job_of(decision) is None, "a refusal that will not change is not run again"
        world = step(later(world, TEN_MINUTES / 5))
    after = status(world)
    assert after.phase == MigrationPhase.AWAITING_APPROVAL
    assert after.conditions is not None
    progressing = after.condition("Progressing")
    assert progressing is not None
    assert (progressing.status.value, progressing.reason) == ("False", Reason.AWAITING_APPROVAL)
    runs = [e for e in after.journal.entries if e.type == Entry.RUN_FINISHED]  # type: ignore[union-attr]
    assert len(runs) == 1


@pytest.mark.req("MIG-14", "MIG-45")
def test_a_plan_held_from_replay_runs_on_a_persons_exact_approval() -> None:
    world = _always_run_ended(_REFUSED)
    world = step(world)
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    world = step(with_approval(world))
    assert status(world).phase == MigrationPhase.APPLYING
    claim = status(world).active_operation
    assert claim is not None
    assert claim.authorization == Authorization.APPROVAL


@pytest.mark.req("MIG-12", "MIG-44")
@pytest.mark.parametrize("reason", ["LockTimeout", "ConnectionFailed", "Interrupted"])
def test_under_always_a_run_refused_for_a_passing_reason_starts_again(reason: str) -> None:
    error = {"reason": reason, "message": "the migration lock was not free"}
    world = _always_run_ended(_REFUSED, error=error, job=JobPhase.FAILED)
    decision = reconcile_migration(world)
    assert job_of(decision) is not None, "the same plan runs again after failureRetryInterval"
    assert status_of(world, decision).active_operation is not None


@pytest.mark.req("JNL-09", "JNL-12", "JNL-21")
def test_repeated_identical_refused_runs_are_one_run_finished_entry_with_a_count() -> None:
    error = {"reason": "LockTimeout", "message": "the migration lock was not free"}
    world = _always_run_ended(_REFUSED, error=error, job=JobPhase.FAILED)
    for _ in range(3):
        world = step(run_reported(step(world), _REFUSED, error=error, job=JobPhase.FAILED))
        world = read(step(later(world, A_MINUTE)), ready_to_plan())
    journal = status(world).journal
    assert journal is not None
    runs = [e for e in journal.entries if e.type == Entry.RUN_FINISHED]
    assert len(runs) == 1, [e.type for e in journal.entries]
    assert runs[0].count == 4
    assert runs[0].reason == "LockTimeout"
    last = status(world).last_run
    assert last is not None
    assert runs[0].operation_id == last.operation_id, "the entry names the newest run"
    assert runs[0].time == last.finished_at


@pytest.mark.req("MIG-47", "RUN-06", "MIG-12")
def test_under_always_a_partial_run_a_person_acknowledged_is_not_replayed() -> None:
    world = step(read(step(new(apply=ApplyPolicy.ALWAYS)), ready_to_plan()))
    world = step(world)
    failure = {"version": "0002", "statementIndex": 1, "sqlstate": "23505", "mysqlErrno": None}
    world = step(run_reported(world, run_block(RunOutcome.PARTIAL, failure=failure)))
    assert status(world).unresolved_run is not None
    world = step(with_acknowledgment(world))
    assert status(world).unresolved_run is None
    world = read(world, ready_to_plan())
    for _ in range(2):
        decision = reconcile_migration(world)
        assert job_of(decision) is None, "a half-run file is never run again on policy alone"
        world = step(world)
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL


@pytest.mark.req("MIG-44", "PRIV-04")
def test_a_refusal_reason_outside_the_closed_set_is_no_evidence_of_what_ran() -> None:
    """Issue #18: `error.reason` is a closed code; a report giving another does not fit its
    contract, so it is no evidence the run stopped before it selected anything: the run is
    Unknown, held and read back, and nothing of the report's text is recorded."""
    error = {"reason": "lock timeout: 10s!", "message": "the migration lock was not free"}
    world = step(read(step(new(apply=ApplyPolicy.ALWAYS)), ready_to_plan()))
    world = run_reported(step(world), _REFUSED, error=error, job=JobPhase.FAILED)
    after = status_of(world, reconcile_migration(world))
    assert after.phase == MigrationPhase.BLOCKED
    assert after.last_run is not None
    assert after.last_run.outcome == RunOutcome.UNKNOWN
    assert after.last_run.reason is None
    assert after.unresolved_run is not None
    shown = after.model_dump_json()
    assert "lock timeout" not in shown
    assert "was not free" not in shown
