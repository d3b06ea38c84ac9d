"""The work queue keeps client-go's promises; every timing runs on a fake clock."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry

from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.metrics import WorkQueueMetrics
from ptah_operator.runtime.workqueue import (
    DelayingQueue,
    QueueShutDownError,
    RateLimitingQueue,
    WorkQueue,
)


async def drain_ready(queue: WorkQueue[str]) -> list[str]:
    """Take (and finish) every item ready now, without blocking."""
    taken: list[str] = []
    while len(queue):
        item = await queue.get()
        queue.done(item)
        taken.append(item)
    return taken


async def test_duplicate_adds_collapse_into_one_item() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    for item in ("a", "b", "a", "a", "b", "c"):
        queue.add(item)
    assert len(queue) == 3
    assert await drain_ready(queue) == ["a", "b", "c"]


async def test_an_item_is_never_handed_to_two_workers_at_once() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    queue.add("a")
    first = await queue.get()
    queue.add("a")
    assert len(queue) == 0, "a held item that is added again waits for done()"
    second_worker = asyncio.create_task(queue.get())
    await clock.settle()
    assert not second_worker.done()
    queue.done(first)
    assert await asyncio.wait_for(second_worker, 1) == "a"


async def test_an_item_added_while_processing_is_processed_again_once_afterwards() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    queue.add("a")
    item = await queue.get()
    queue.add("a")
    queue.add("a")
    queue.done(item)
    assert len(queue) == 1
    assert await drain_ready(queue) == ["a"]
    assert len(queue) == 0


async def test_concurrent_workers_never_overlap_on_one_key() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    active: set[str] = set()
    overlaps: list[str] = []
    processed: list[str] = []

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDownError:
                return
            if key in active:
                overlaps.append(key)
            active.add(key)
            await clock.sleep(1)
            processed.append(key)
            active.discard(key)
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for _ in range(3):
        for key in ("a", "a", "b", "a"):
            queue.add(key)
        await clock.advance(0.5)
    await clock.advance(10)
    queue.shut_down()
    await asyncio.gather(*workers)
    assert overlaps == []
    # "a" was added again while held, so it ran again afterwards; never twice at once.
    assert processed.count("a") >= 2
    assert set(processed) == {"a", "b"}


async def test_get_waits_for_an_add() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    getter = asyncio.create_task(queue.get())
    await clock.settle()
    assert not getter.done()
    queue.add("x")
    assert await asyncio.wait_for(getter, 1) == "x"


async def test_a_cancelled_getter_does_not_swallow_the_wake_up() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await clock.settle()
    queue.add("x")
    first.cancel()
    assert await asyncio.wait_for(second, 1) == "x"


async def test_shut_down_hands_out_what_was_queued_then_refuses() -> None:
    queue: WorkQueue[str] = WorkQueue("t")
    queue.add("a")
    queue.shut_down()
    queue.add("b")
    assert queue.shutting_down
    assert await queue.get() == "a"
    with pytest.raises(QueueShutDownError):
        await queue.get()


async def test_shut_down_releases_waiting_getters() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    getter = asyncio.create_task(queue.get())
    await clock.settle()
    queue.shut_down()
    with pytest.raises(QueueShutDownError):
        await asyncio.wait_for(getter, 1)


async def test_shut_down_with_drain_waits_until_items_in_flight_are_done() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    queue.add("a")
    queue.add("b")
    a = await queue.get()
    b = await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await clock.settle()
    assert not drain.done()
    queue.done(a)
    await clock.settle()
    assert not drain.done(), "b is still in flight"
    queue.done(b)
    await asyncio.wait_for(drain, 1)


async def test_plain_shut_down_ends_a_drain_early() -> None:
    clock = FakeClock()
    queue: WorkQueue[str] = WorkQueue("t", clock=clock)
    queue.add("a")
    await queue.get()
    drain = asyncio.create_task(queue.shut_down_with_drain())
    await clock.settle()
    queue.shut_down()
    await asyncio.wait_for(drain, 1)


async def test_add_after_releases_items_in_time_order() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("t", clock=clock)
    queue.add_after("late", 3)
    queue.add_after("early", 1)
    queue.add_after("middle", 2)
    queue.add_after("now", 0)
    assert await drain_ready(queue) == ["now"]
    assert queue.waiting() == 3
    await clock.advance(0.999)
    assert await drain_ready(queue) == []
    await clock.advance(0.001)
    assert await drain_ready(queue) == ["early"]
    await clock.advance(5)
    assert await drain_ready(queue) == ["middle", "late"]
    assert queue.waiting() == 0
    queue.shut_down()


async def test_add_after_of_a_waiting_item_keeps_the_earlier_time() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("t", clock=clock)
    queue.add_after("a", 10)
    queue.add_after("a", 2)
    queue.add_after("a", 5)
    assert queue.waiting() == 1
    await clock.advance(2)
    assert await drain_ready(queue) == ["a"]
    await clock.advance(20)
    assert await drain_ready(queue) == [], "the later entries were superseded"
    queue.shut_down()


async def test_add_after_collapses_with_an_item_already_queued() -> None:
    clock = FakeClock()
    queue: DelayingQueue[str] = DelayingQueue("t", clock=clock)
    queue.add("a")
    queue.add_after("a", 1)
    await clock.advance(1)
    assert await drain_ready(queue) == ["a"]
    queue.shut_down()


async def test_add_rate_limited_backs_off_per_item_and_forget_resets() -> None:
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue("t", clock=clock)
    delays: list[float] = []
    for _ in range(4):
        queue.add_rate_limited("a")
        await clock.settle()
        deadline = clock.next_deadline()
        assert deadline is not None
        delays.append(deadline - clock.now())
        await clock.advance_to(deadline - 0.0001)
        assert len(queue) == 0, "not before its time"
        await clock.advance_to(deadline)
        assert await drain_ready(queue) == ["a"]
    assert delays == pytest.approx([0.005, 0.01, 0.02, 0.04])
    assert queue.num_requeues("a") == 4
    queue.forget("a")
    assert queue.num_requeues("a") == 0
    queue.shut_down()


async def test_metrics_count_adds_depth_latency_work_and_retries() -> None:
    clock = FakeClock()
    registry = CollectorRegistry()
    queue: RateLimitingQueue[str] = RateLimitingQueue(
        "q", clock=clock, metrics=WorkQueueMetrics(registry)
    )

    def sample(name: str) -> float:
        value = registry.get_sample_value(name, {"name": "q"})
        return value or 0.0

    queue.add("a")
    queue.add("a")
    queue.add("b")
    assert sample("workqueue_adds_total") == 2
    assert sample("workqueue_depth") == 2
    await clock.advance(3)
    item = await queue.get()
    assert sample("workqueue_depth") == 1
    assert sample("workqueue_queue_duration_seconds_sum") == pytest.approx(3)
    await clock.advance(2)
    queue.done(item)
    assert sample("workqueue_work_duration_seconds_sum") == pytest.approx(2)
    queue.add_rate_limited("c")
    assert sample("workqueue_retries_total") == 1
    queue.shut_down()
