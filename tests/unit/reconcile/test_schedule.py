"""The spec's two clocks, held within the bounds the CRD enforces (10s to 24h): an object
stored before the CRD's rule, with `interval: 0s`, must not read its database in a loop."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from ptah_operator.api.constants import MigrationPhase
from ptah_operator.api.migration import PtahMigration
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import failure_retry_interval, interval
from tests.unit.reconcile.migration.worlds import (
    history_reported,
    migration,
    nothing_pending,
    read_failed,
    reading,
    status_of,
)

TEN_SECONDS = dt.timedelta(seconds=10)
A_DAY = dt.timedelta(hours=24)


def _with_clocks(
    every: str = "10m", retry: str = "1m", base: PtahMigration | None = None
) -> PtahMigration:
    base = base or migration()
    execution = base.spec.execution.model_copy(update={"failure_retry_interval": retry})
    spec = base.spec.model_copy(update={"interval": every, "execution": execution})
    return base.model_copy(update={"spec": spec})


def _clocked(world: MigrationWorld, every: str = "10m", retry: str = "1m") -> MigrationWorld:
    """The world with the migration's clocks written as given (status and all else kept)."""
    return dataclasses.replace(world, migration=_with_clocks(every, retry, world.migration))


@pytest.mark.req("RETRY-12", "RETRY-01")
@pytest.mark.parametrize(
    ("written", "used"),
    [
        ("0s", TEN_SECONDS),
        ("1ms", TEN_SECONDS),
        ("10s", TEN_SECONDS),
        ("10m", dt.timedelta(minutes=10)),
        ("24h", A_DAY),
        ("9999h", A_DAY),
    ],
)
def test_both_clocks_are_held_within_10s_and_24h(written: str, used: dt.timedelta) -> None:
    resource = _with_clocks(every=written, retry=written)
    assert interval(resource) == used
    assert failure_retry_interval(resource) == used


@pytest.mark.req("RETRY-12")
def test_an_interval_of_0s_reads_again_no_sooner_than_10s_later() -> None:
    world = _clocked(reading(), every="0s")
    reported = history_reported(world, nothing_pending())
    after = status_of(reported, reconcile_migration(reported))
    assert after.phase == MigrationPhase.IN_SYNC
    assert after.next_reconciliation_time == reported.now + TEN_SECONDS


@pytest.mark.req("RETRY-01")
def test_a_failure_retry_interval_of_0s_retries_no_sooner_than_10s_later() -> None:
    world = read_failed(_clocked(reading(), retry="0s"))
    decision = reconcile_migration(world)
    claim = status_of(world, decision).active_operation
    assert claim is not None
    assert claim.retry_at == world.now + TEN_SECONDS
    assert decision.requeue_after == TEN_SECONDS
