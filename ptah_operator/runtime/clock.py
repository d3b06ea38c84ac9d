"""Time for the controller runtime, behind a seam so tests never sleep.

Contract:
- `Clock.now()` is monotonic seconds (never the wall clock); `await Clock.sleep(s)` waits `s`
  seconds of that time. Every timing decision of the runtime (queue delays, backoff, token
  bucket, leader-election expiry) goes through a `Clock`.
- `MonotonicClock` is the real one (`time.monotonic`, `asyncio.sleep`).
- `FakeClock` only moves when a test calls `advance()` / `advance_to()`; sleepers whose deadline
  is reached wake in deadline order, and each wake is given event-loop turns before time moves
  on, so a periodic loop sees every tick it would have seen in real time.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Iterable
from typing import Any, Protocol

# Event-loop turns handed to woken tasks after each fake tick; enough for a chain of a few
# awaits (sleep returns -> queue add -> getter wakes -> handler runs).
_SETTLE_TURNS = 20


class Clock(Protocol):
    """Monotonic time and a sleep that honours it."""

    def now(self) -> float:
        """Seconds on a monotonic scale (the origin means nothing)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once `seconds` have passed on this clock."""
        ...


class MonotonicClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class FakeClock:
    """A clock whose time moves only when the test says so."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self._now + seconds, next(self._seq), fut))
        await fut

    @property
    def waiters(self) -> int:
        """How many sleeps are pending (cancelled ones excluded)."""
        return sum(1 for _, _, fut in self._sleepers if not fut.done())

    def next_deadline(self) -> float | None:
        """The earliest pending sleep's deadline, if any."""
        self._drop_cancelled()
        return self._sleepers[0][0] if self._sleepers else None

    async def settle(self) -> None:
        """Give the event loop turns so that tasks woken so far can run."""
        for _ in range(_SETTLE_TURNS):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        """Move time forward by `seconds`, waking sleepers tick by tick."""
        await self.advance_to(self._now + seconds)

    async def advance_to(self, target: float) -> None:
        """Move time to `target` (never backwards), waking sleepers in deadline order."""
        await self.settle()
        while True:
            self._drop_cancelled()
            if not self._sleepers or self._sleepers[0][0] > target:
                break
            deadline = self._sleepers[0][0]
            self._now = max(self._now, deadline)
            while self._sleepers and self._sleepers[0][0] <= self._now:
                _, _, fut = heapq.heappop(self._sleepers)
                if not fut.done():
                    fut.set_result(None)
            await self.settle()
        self._now = max(self._now, target)
        await self.settle()

    def _drop_cancelled(self) -> None:
        while self._sleepers and self._sleepers[0][2].done():
            heapq.heappop(self._sleepers)


async def wait_tasks(
    clock: Clock, tasks: Iterable[asyncio.Future[Any]], limit: float
) -> set[asyncio.Future[Any]]:
    """Wait until every task is done or `limit` seconds pass on `clock`; return those not done."""
    pending = {task for task in tasks if not task.done()}
    if not pending:
        return pending
    timer = asyncio.ensure_future(clock.sleep(limit))
    try:
        while pending and not timer.done():
            done, _ = await asyncio.wait({*pending, timer}, return_when=asyncio.FIRST_COMPLETED)
            pending -= done
    finally:
        timer.cancel()
    return pending
