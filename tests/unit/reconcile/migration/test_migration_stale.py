"""A retired plan's approval (seed 000, "Plan went stale": "an approval of the old plan does not
carry over"; APR-12). A plan's name comes from its fingerprint, so a plan retired before it ran
and computed again later is the same plan object, with the same name, UID and fingerprint; the
read that publishes it again is another publication, which the old approval does not name."""

from __future__ import annotations

import pytest

from ptah_operator.api.constants import EventReason, MigrationPhase
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from tests.unit.reconcile.migration.worlds import (
    EDITED_FILES,
    FILES,
    approval_of,
    awaiting_approval,
    read,
    ready_to_plan,
    source_files,
    status,
    status_of,
    step,
    with_approval,
    with_source,
)
from tests.unit.reconcile.worlds import event_reasons, job_of


def retired_and_published_again(world: MigrationWorld) -> MigrationWorld:
    """The artifact changes before the Apply starts (the plan retires), the source is moved
    back, and the next reading gives the same plan again."""
    edited = with_source(world, source_files(EDITED_FILES))
    decision = reconcile_migration(edited)
    assert EventReason.PLAN_STALE in event_reasons(decision)
    assert status_of(edited, decision).plan is None
    world = with_source(step(edited), source_files(FILES))
    for _ in range(4):
        claim = status(world).active_operation
        if claim is not None and claim.type == "History":
            break
        world = step(world)
    return read(world, ready_to_plan())


@pytest.mark.req("APR-12", "MIG-16")
def test_an_approval_of_a_retired_plan_does_not_carry_over_to_its_publication_again() -> None:
    world = with_approval(awaiting_approval())
    before = status(world).plan
    assert before is not None
    assert job_of(reconcile_migration(world)) == "Apply", "the approval was exact before"
    world = retired_and_published_again(world)
    again = status(world).plan
    assert again is not None
    assert (again.name, again.uid, again.fingerprint) == (
        before.name,
        before.uid,
        before.fingerprint,
    )
    assert status(world).phase == MigrationPhase.AWAITING_APPROVAL
    assert job_of(reconcile_migration(world)) is None, "the old approval must not authorize it"
    assert job_of(reconcile_migration(step(world))) is None
    assert again.operation_id != before.operation_id, "another read published it again"


@pytest.mark.req("APR-12", "APR-02")
def test_a_new_approval_of_the_plan_published_again_authorizes_it() -> None:
    world = retired_and_published_again(with_approval(awaiting_approval()))
    world = with_approval(world, approval_of(world, name="billing-ok-again"))
    assert job_of(reconcile_migration(world)) == "Apply"
