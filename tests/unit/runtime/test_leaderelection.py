"""Leader election timing and Lease writes, with an in-memory Lease and a fake clock.

The in-memory Lease keeps the API server's one rule that matters here: a write carries the
resourceVersion it read, and a stale one is refused (409).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
    _micro_time,
)


class MemoryLease:
    def __init__(self) -> None:
        self.record: LeaderElectionRecord | None = None
        self.version = 0
        self.failing = False
        self.writes: list[LeaderElectionRecord] = []

    def describe(self) -> str:
        return "memory/lease"

    async def get(self) -> tuple[LeaderElectionRecord, str] | None:
        self._maybe_fail()
        if self.record is None:
            return None
        return self.record, str(self.version)

    async def create(self, record: LeaderElectionRecord) -> str:
        self._maybe_fail()
        if self.record is not None:
            raise LockConflictError("exists")
        return self._write(record)

    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str:
        self._maybe_fail()
        if resource_version != str(self.version):
            raise LockConflictError("stale resourceVersion")
        return self._write(record)

    def _write(self, record: LeaderElectionRecord) -> str:
        self.record = record
        self.version += 1
        self.writes.append(record)
        return str(self.version)

    def _maybe_fail(self) -> None:
        if self.failing:
            raise ConnectionError("API server unreachable")


class Candidate:
    def __init__(self, identity: str, lease: MemoryLease, clock: FakeClock) -> None:
        self.events: list[tuple[str, float]] = []
        self.clock = clock
        wall = datetime(2026, 11, 30, tzinfo=UTC)
        self.elector = LeaderElector(
            LeaderElectionConfig(namespace="ns", name="leader", identity=identity),
            lease,
            clock=clock,
            wall_clock=lambda: wall + timedelta(seconds=clock.now()),
            on_started_leading=self._started,
            on_stopped_leading=self._stopped,
            jitter=lambda: 1.0,  # the longest wait client-go's jitter allows: 2 s * 2.2
        )
        self.task: asyncio.Task[None] | None = None

    async def _started(self) -> None:
        self.events.append(("started", self.clock.now()))

    async def _stopped(self) -> None:
        self.events.append(("stopped", self.clock.now()))

    async def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run())
        await self.clock.settle()


def test_config_checks_the_timings_like_client_go() -> None:
    with pytest.raises(ValueError):
        LeaderElectionConfig("ns", "l", "me", lease_duration=10, renew_deadline=10)
    with pytest.raises(ValueError):
        LeaderElectionConfig("ns", "l", "me", renew_deadline=2.4, retry_period=2)
    with pytest.raises(ValueError):
        LeaderElectionConfig("ns", "l", "")
    config = LeaderElectionConfig("ns", "l", "me")
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)


def test_micro_time_always_has_six_fractional_digits() -> None:
    assert _micro_time(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000000Z"
    assert (
        _micro_time(datetime(2026, 1, 2, 3, 4, 5, 7, tzinfo=UTC)) == "2026-01-02T03:04:05.000007Z"
    )


async def test_first_candidate_creates_the_lease_and_leads() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a = Candidate("a", lease, clock)
    await a.start()
    assert a.elector.is_leader
    assert a.events == [("started", clock.now())]
    assert lease.record is not None
    assert lease.record.holder_identity == "a"
    assert lease.record.lease_duration_seconds == 15
    assert lease.record.lease_transitions == 0
    # It renews every retry period, keeping its acquire time.
    acquired = lease.record.acquire_time
    await clock.advance(6)
    assert lease.version == 5, "create, a renewal at once (as client-go), then one per 2 s"
    assert lease.record.acquire_time == acquired
    assert lease.record.renew_time is not None
    assert acquired is not None
    assert lease.record.renew_time - acquired == timedelta(seconds=6)
    a.elector.stop()
    await a.task  # type: ignore[misc]


async def test_a_standby_waits_while_the_leader_renews() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a, b = Candidate("a", lease, clock), Candidate("b", lease, clock)
    await a.start()
    await b.start()
    await clock.advance(120)
    assert a.elector.is_leader
    assert not b.elector.is_leader
    assert b.events == []
    assert b.elector.leader == "a"
    for c in (a, b):
        c.elector.stop()
        await c.task  # type: ignore[misc]


async def test_a_standby_takes_over_a_lease_nobody_renews_after_the_lease_duration() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a, b = Candidate("a", lease, clock), Candidate("b", lease, clock)
    await a.start()
    await b.start()
    await clock.advance(3)
    # The leader dies: its task ends without a word (like SIGKILL), the Lease stays as written.
    assert a.task is not None
    a.task.cancel()
    died = clock.now()
    while not b.elector.is_leader:
        await clock.advance(0.1)
        assert clock.now() - died < 60
    taken = clock.now() - died
    # a renewed at most a retry period (2 s) before it died, and b trusts a Lease for
    # lease_duration (15 s) after it saw it change: never sooner than 13 s.
    assert taken >= 13
    # b sees the last renewal within one of its retries (2 s * (1 + 1.2) = 4.4 s) and takes
    # the Lease within one more retry after it expired: 4.4 + 15 + 4.4 s at most.
    assert taken <= 23.8 + 0.1
    assert lease.record is not None
    assert lease.record.holder_identity == "b"
    assert lease.record.lease_transitions == 1
    b.elector.stop()
    await b.task  # type: ignore[misc]


async def test_a_released_lease_is_taken_at_the_next_retry() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a, b = Candidate("a", lease, clock), Candidate("b", lease, clock)
    await a.start()
    await b.start()
    await clock.advance(5)
    a.elector.stop()
    await a.task  # type: ignore[misc]
    released = clock.now()
    assert lease.record is not None
    assert lease.record.holder_identity == ""
    assert lease.record.lease_duration_seconds == 1
    assert a.events[-1] == ("stopped", released)
    while not b.elector.is_leader:
        await clock.advance(0.1)
    assert clock.now() - released <= 4.4 + 0.1, "one standby retry, not a lease duration"
    assert lease.record.holder_identity == "b"
    b.elector.stop()
    await b.task  # type: ignore[misc]


async def test_leadership_is_lost_when_renewal_fails_for_the_renew_deadline() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a = Candidate("a", lease, clock)
    await a.start()
    await clock.advance(2)
    lease.failing = True
    failing_since = clock.now()
    while a.task is not None and not a.task.done():
        await clock.advance(0.5)
        assert clock.now() - failing_since < 30
    assert a.elector.lost
    assert not a.elector.is_leader
    assert a.events[-1][0] == "stopped"
    # The last good renewal was at most one retry period before the failures began.
    assert 10 - 2 <= a.events[-1][1] - failing_since <= 10 + 2


async def test_a_stale_write_loses_to_the_one_that_came_first() -> None:
    clock = FakeClock()
    lease = MemoryLease()
    a, b = Candidate("a", lease, clock), Candidate("b", lease, clock)
    # Both read the empty Lease, a writes first; b's create then conflicts.
    assert await a.elector.try_acquire_or_renew()
    assert not await b.elector.try_acquire_or_renew()
    assert lease.record is not None
    assert lease.record.holder_identity == "a"
    # b observed a's record; an update b makes from an old version is refused too.
    with pytest.raises(LockConflictError):
        await lease.update(lease.record, "0")
