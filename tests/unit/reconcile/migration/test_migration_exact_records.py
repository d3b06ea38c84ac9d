"""What a migration's records must carry exactly, each pinned where a one-line change to the
code survived every other test (issue #11's mutation review): the acknowledgment that settles a
held run names its outcome, its Job and its plan; `lastRun.failure` keeps the MySQL error
number; a reading that finds more to apply verifies the run as Pending; and a Lease that was
lost and taken again under the same holder is a changed epoch all the same."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from ptah_operator.api.approvals import PtahMigrationRunAcknowledgment
from ptah_operator.api.common import ObjectReference
from ptah_operator.api.constants import (
    EventReason,
    JournalEntryType,
    RunOutcome,
    VerifiedOutcome,
)
from ptah_operator.api.migration import RunFailure
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.world import LeaseState
from tests.unit.reconcile.migration.worlds import (
    acknowledgment_of,
    applying,
    entries_added,
    event_reasons,
    held,
    history_reported,
    ready_to_plan,
    run_block,
    run_reported,
    status,
    status_of,
    step,
    verifying_history,
    with_acknowledgment,
)

Entry = JournalEntryType
Change = Callable[[PtahMigrationRunAcknowledgment], dict[str, object]]


def _changed(world: MigrationWorld, change: Change) -> PtahMigrationRunAcknowledgment:
    ack = acknowledgment_of(world)
    return ack.model_copy(update={"spec": ack.spec.model_copy(update=change(ack))})


OTHER_ACKNOWLEDGMENTS: dict[str, Change] = {
    "another outcome": lambda a: {"outcome": RunOutcome.UNKNOWN},
    "another Job by name": lambda a: {
        "job_ref": ObjectReference(name="ptah-apply-other", uid=a.spec.job_ref.uid)
    },
    "another Job by UID": lambda a: {
        "job_ref": ObjectReference(name=a.spec.job_ref.name, uid="another-job-uid")
    },
    "another plan by name": lambda a: {
        "plan_ref": ObjectReference(name="billing-other-plan", uid=a.spec.plan_ref.uid)
    },
    "another plan by UID": lambda a: {
        "plan_ref": ObjectReference(name=a.spec.plan_ref.name, uid="another-plan-uid")
    },
    "another migration by UID": lambda a: {
        "migration_ref": ObjectReference(name=a.spec.migration_ref.name, uid="another-uid")
    },
}


@pytest.mark.req("RUN-06", "MIG-47")
@pytest.mark.parametrize("what", sorted(OTHER_ACKNOWLEDGMENTS))
def test_an_acknowledgment_that_names_another_run_settles_nothing(what: str) -> None:
    hold = held()
    world = with_acknowledgment(hold, _changed(hold, OTHER_ACKNOWLEDGMENTS[what]))
    decision = reconcile_migration(world)
    after = status_of(world, decision)
    assert after.unresolved_run == status(world).unresolved_run, what
    assert Entry.RUN_ACKNOWLEDGED not in [e.type for e in entries_added(world, decision)], what
    # The exact one settles the same hold: the difference above is all that kept it held.
    settled = with_acknowledgment(hold, _changed(hold, lambda a: {}))
    assert status_of(settled, reconcile_migration(settled)).unresolved_run is None


@pytest.mark.req("RUN-17", "RUN-19")
def test_last_run_failure_keeps_the_mysql_error_number() -> None:
    failure = {"version": "0002", "statementIndex": 4, "sqlstate": "23000", "mysqlErrno": 1062}
    world = run_reported(applying(), run_block(RunOutcome.FAILED, failure=failure))
    run = status_of(world, reconcile_migration(world)).last_run
    assert run is not None
    assert run.failure == RunFailure(
        version="0002", statement_index=4, sqlstate="23000", mysql_errno=1062
    )


@pytest.mark.req("JNL-08", "RUN-04")
def test_a_reading_that_finds_more_to_apply_verifies_the_run_as_pending() -> None:
    world = history_reported(step(verifying_history()), ready_to_plan("0002", "0003"))
    decision = reconcile_migration(world)
    run = status_of(world, decision).last_run
    assert run is not None
    assert run.verification is not None
    assert run.verification.outcome == VerifiedOutcome.PENDING
    [verified] = [e for e in entries_added(world, decision) if e.type == Entry.VERIFIED]
    assert verified.outcome == "Pending"
    assert verified.operation_id == run.operation_id


@pytest.mark.req("LCK-10", "LCK-11")
def test_a_lease_lost_and_taken_again_by_the_same_run_is_a_changed_epoch() -> None:
    world = step(applying())  # the claim remembers the epoch it holds
    claim = status(world).active_operation
    lease = world.lease
    assert claim is not None
    assert lease is not None
    assert claim.lease_epoch == lease.epoch
    again = LeaseState(lease.name, lease.namespace, lease.holder, lease.epoch + 1, False)
    world = dataclasses.replace(world, lease=again)
    decision = reconcile_migration(world)
    after = status_of(world, decision).active_operation
    assert after is not None
    assert after.lease_continuity_lost
    assert EventReason.LEASE_CONTINUITY_LOST in event_reasons(decision)
