"""A rate-limited work queue with client-go's semantics, for one event loop.

Contract (as `k8s.io/client-go/util/workqueue`, "fair and stingy"):
- `add(item)`: an item is queued at most once: adds of an item already waiting collapse into
  it (the "dirty" set). An item added while a worker holds it is not handed to a second
  worker; it is queued again when that worker calls `done(item)`.
- `await get()`: the oldest queued item, now "processing" until `done(item)`. Raises
  `QueueShutDownError` once the queue is shut down *and* empty (items queued before the
  shutdown are still handed out, as in client-go; a caller that must stop taking work stops
  calling `get`).
- `add_after(item, delay)`: the item is added once `delay` seconds pass on the queue's clock;
  a second `add_after` of a waiting item keeps the earlier time.
- `add_rate_limited(item)`: `add_after(item, rate_limiter.when(item))`; `forget(item)` clears
  the item's failure history; `num_requeues(item)` counts rate-limited adds since then.
- `shut_down()`: no further adds are accepted; getters waiting on an empty queue are
  released. `await shut_down_with_drain()`: the same, then waits until every item handed out
  is `done`.
- Metrics (optional, `WorkQueueMetrics`): depth, adds, time in queue, work duration, retries
  (every `add_after`, as client-go counts them), all measured on the queue's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from ptah_operator.runtime.clock import Clock, MonotonicClock
from ptah_operator.runtime.metrics import WorkQueueMetrics
from ptah_operator.runtime.ratelimit import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)


class QueueShutDownError(Exception):
    """The queue is shut down and holds nothing more to hand out."""


class WorkQueue(Generic[T]):
    """The basic queue: dedup, one worker per item, re-queue after `done`, shutdown/drain."""

    def __init__(
        self, name: str = "", *, clock: Clock | None = None, metrics: WorkQueueMetrics | None = None
    ) -> None:
        self.name = name
        self._clock: Clock = clock or MonotonicClock()
        self._metrics = metrics
        # Invariants (client-go's `queue`, `dirty` and `processing`):
        # - `_queue` is the order items are handed out in; each item stands in it at most once,
        #   and every item in it is in `_dirty` and not in `_processing`;
        # - `_dirty` is every item that needs processing: queued, or added again while a
        #   worker holds it;
        # - `_processing` is every item handed out by `get` and not yet `done`. An item may be
        #   in `_processing` and `_dirty` at once; `done` then moves it to the back of
        #   `_queue`, so no two workers ever hold one item.
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        self._processing: set[T] = set()
        self._shutting_down = False
        self._drain = False
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drainers: list[asyncio.Future[None]] = []
        self._added_at: dict[T, float] = {}
        self._started_at: dict[T, float] = {}

    def __len__(self) -> int:
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def processing(self) -> frozenset[T]:
        """Items handed out and not yet `done` (a copy)."""
        return frozenset(self._processing)

    def add(self, item: T) -> None:
        if self._shutting_down:
            return
        if item in self._dirty:
            return
        self._metric_add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one_getter()

    async def get(self) -> T:
        while not self._queue and not self._shutting_down:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    # Woken but cancelled before taking the item: pass the wake-up on.
                    self._wake_one_getter()
                else:
                    with contextlib.suppress(ValueError):
                        self._getters.remove(waiter)
                raise
        if not self._queue:
            raise QueueShutDownError(self.name)
        item = self._queue.popleft()
        self._metric_get(item)
        self._processing.add(item)
        self._dirty.discard(item)
        return item

    def done(self, item: T) -> None:
        self._metric_done(item)
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one_getter()
        elif not self._processing:
            self._wake_drainers()

    def shut_down(self) -> None:
        self._drain = False
        self._shutting_down = True
        self._wake_all_getters()
        self._wake_drainers()

    async def shut_down_with_drain(self) -> None:
        self._drain = True
        self._shutting_down = True
        self._wake_all_getters()
        while self._processing and self._drain:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._drainers.append(waiter)
            await waiter

    def _wake_one_getter(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_all_getters(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _wake_drainers(self) -> None:
        drainers, self._drainers = self._drainers, []
        for waiter in drainers:
            if not waiter.done():
                waiter.set_result(None)

    def _metric_add(self, item: T) -> None:
        if self._metrics is None:
            return
        self._metrics.adds.labels(self.name).inc()
        self._metrics.depth.labels(self.name).inc()
        self._added_at.setdefault(item, self._clock.now())

    def _metric_get(self, item: T) -> None:
        if self._metrics is None:
            return
        now = self._clock.now()
        self._metrics.depth.labels(self.name).dec()
        self._started_at[item] = now
        added = self._added_at.pop(item, None)
        if added is not None:
            self._metrics.queue_duration.labels(self.name).observe(now - added)

    def _metric_done(self, item: T) -> None:
        if self._metrics is None:
            return
        started = self._started_at.pop(item, None)
        if started is not None:
            self._metrics.work_duration.labels(self.name).observe(self._clock.now() - started)


_STALE_SLACK = 64


class DelayingQueue(WorkQueue[T]):
    """A `WorkQueue` plus `add_after`, driven by one background task on the queue's clock."""

    def __init__(
        self, name: str = "", *, clock: Clock | None = None, metrics: WorkQueueMetrics | None = None
    ) -> None:
        super().__init__(name, clock=clock, metrics=metrics)
        self._waiting: list[tuple[float, int, T]] = []
        self._ready_at: dict[T, float] = {}
        self._seq = itertools.count()
        self._waiting_changed = asyncio.Event()
        self._waiting_task: asyncio.Task[None] | None = None

    def add_after(self, item: T, delay: float) -> None:
        if self._shutting_down:
            return
        if self._metrics is not None:
            self._metrics.retries.labels(self.name).inc()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + delay
        known = self._ready_at.get(item)
        if known is not None and known <= ready_at:
            return
        self._ready_at[item] = ready_at
        heapq.heappush(self._waiting, (ready_at, next(self._seq), item))
        if len(self._waiting) > 2 * len(self._ready_at) + _STALE_SLACK:
            # Entries an earlier add_after superseded stay in the heap until their time; a key
            # requeued far ahead and then sooner, again and again (or deleted meanwhile),
            # would grow it without bound. Keep only the live ones.
            self._waiting = [
                entry for entry in self._waiting if self._ready_at.get(entry[2]) == entry[0]
            ]
            heapq.heapify(self._waiting)
        self._waiting_changed.set()
        if self._waiting_task is None or self._waiting_task.done():
            self._waiting_task = asyncio.get_running_loop().create_task(
                self._waiting_loop(), name=f"workqueue-waiting-{self.name}"
            )

    def waiting(self) -> int:
        """How many items wait for their `add_after` time."""
        return len(self._ready_at)

    def held(self) -> int:
        """Entries the waiting heap holds, superseded ones included: at most twice `waiting()`
        plus a small slack."""
        return len(self._waiting)

    def shut_down(self) -> None:
        super().shut_down()
        self._stop_waiting_loop()

    async def shut_down_with_drain(self) -> None:
        self._stop_waiting_loop()
        await super().shut_down_with_drain()

    def _stop_waiting_loop(self) -> None:
        if self._waiting_task is not None and not self._waiting_task.done():
            self._waiting_task.cancel()

    async def _waiting_loop(self) -> None:
        while not self._shutting_down:
            self._waiting_changed.clear()
            now = self._clock.now()
            while self._waiting and self._waiting[0][0] <= now:
                ready_at, _, item = heapq.heappop(self._waiting)
                # A stale heap entry (the item was moved earlier) is skipped.
                if self._ready_at.get(item) == ready_at:
                    del self._ready_at[item]
                    self.add(item)
            if not self._waiting:
                await self._waiting_changed.wait()
                continue
            sleep = asyncio.ensure_future(self._clock.sleep(self._waiting[0][0] - now))
            changed = asyncio.ensure_future(self._waiting_changed.wait())
            try:
                await asyncio.wait({sleep, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleep.cancel()
                changed.cancel()


class RateLimitingQueue(DelayingQueue[T]):
    """A `DelayingQueue` plus `add_rate_limited` / `forget` / `num_requeues`."""

    def __init__(
        self,
        name: str = "",
        *,
        clock: Clock | None = None,
        rate_limiter: RateLimiter | None = None,
        metrics: WorkQueueMetrics | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics=metrics)
        self.rate_limiter: RateLimiter = rate_limiter or default_controller_rate_limiter(
            self._clock
        )

    def add_rate_limited(self, item: T) -> None:
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)
