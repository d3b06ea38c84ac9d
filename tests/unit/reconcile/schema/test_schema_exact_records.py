"""What a schema's Apply must be, exactly, to count as succeeded, each pinned where a one-line
change to the code survived every other test (issue #11's mutation review): its report must
name the planned database, and the Lease it ran under must be the one it first held, even when
the same holder took it again."""

from __future__ import annotations

import dataclasses

import pytest

from ptah_operator.api.constants import ApplyOutcome, EventReason, Reason
from ptah_operator.reconcile.schema import reconcile_schema
from ptah_operator.reconcile.world import LeaseState
from tests.unit.reconcile.schema.worlds import (
    DB,
    OTHER_DB,
    applied,
    applying,
    claim_of,
    event_reasons,
    status_of,
    step,
)


@pytest.mark.req("SCH-59", "SCH-22")
def test_an_apply_whose_report_names_another_database_is_unknown() -> None:
    world = applied(applying(), target=OTHER_DB)
    after = status_of(world, reconcile_schema(world))
    assert after.last_apply is not None
    assert after.last_apply.outcome == ApplyOutcome.UNKNOWN
    assert after.last_apply.reason == Reason.APPLY_OUTCOME_UNKNOWN
    assert after.last_apply.target_identity_digest == DB, "the record names the planned one"
    # The same report on the planned database succeeds: the database is all that differs.
    same = applied(applying(), target=DB)
    record = status_of(same, reconcile_schema(same)).last_apply
    assert record is not None
    assert record.outcome == ApplyOutcome.SUCCEEDED


@pytest.mark.req("LCK-10", "LCK-11")
def test_a_lease_lost_and_taken_again_by_the_same_apply_is_a_changed_epoch() -> None:
    world = step(applying())
    claim = claim_of(world)
    lease = world.lease
    assert lease is not None
    assert claim.lease_epoch == lease.epoch
    again = LeaseState(lease.name, lease.namespace, lease.holder, lease.epoch + 1, False)
    world = dataclasses.replace(world, lease=again)
    decision = reconcile_schema(world)
    after = status_of(world, decision).active_operation
    assert after is not None
    assert after.lease_continuity_lost
    assert EventReason.LEASE_CONTINUITY_LOST in event_reasons(decision)
    # Its result is not read: the Apply counts as Unknown, though it says Applied.
    ended = applied(step(world))
    record = status_of(ended, reconcile_schema(ended)).last_apply
    assert record is not None
    assert record.outcome == ApplyOutcome.UNKNOWN
