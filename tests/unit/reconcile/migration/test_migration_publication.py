"""A plan decided but whose object never shows in the cache (migration side).

Seed 000: "a plan that could not be published" ends Failed (MIG-26). The manager waits for its
own create to show for failureRetryInterval after the reading that decided the plan (1m in these
worlds), looking again every few seconds; only after it does the plan count as not published.
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import ConditionType, MigrationPhase, Reason
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import PLAN_PUBLISH_CHECK
from tests.unit.reconcile.migration.worlds import MIGRATION, planning, status
from tests.unit.reconcile.worlds import later

FAILURE_RETRY_INTERVAL = dt.timedelta(minutes=1)


def _unpublished(after: dt.timedelta) -> MigrationWorld:
    """The plan decided by the reading, its object not (yet) in the cache, `after` later."""
    world = planning()
    return later(dataclasses.replace(world, plans={}), after)


@pytest.mark.req("MIG-26")
@pytest.mark.parametrize("after", [dt.timedelta(0), FAILURE_RETRY_INTERVAL])
def test_a_plan_not_in_the_cache_yet_is_waited_for(after: dt.timedelta) -> None:
    world = _unpublished(after)
    ref = status(world).plan
    assert ref is not None
    decision = reconcile_migration(world)
    after_status = MIGRATION.status_of(world, decision)
    assert after_status.phase == MigrationPhase.PLANNING
    assert after_status.plan == ref
    assert decision.requeue_after == PLAN_PUBLISH_CHECK


@pytest.mark.req("MIG-26")
def test_a_plan_still_missing_after_failure_retry_interval_could_not_be_published() -> None:
    world = _unpublished(FAILURE_RETRY_INTERVAL + dt.timedelta(seconds=1))
    ref = status(world).plan
    assert ref is not None
    decision = reconcile_migration(world)
    after = MIGRATION.status_of(world, decision)
    assert after.phase == MigrationPhase.FAILED
    failed = after.condition(ConditionType.RECONCILIATION_FAILED)
    assert failed is not None
    assert failed.reason == Reason.CONFIGURATION_ERROR
    assert failed.message == f"plan {ref.name} could not be published"
