"""The fake clock: time moves only when the test says so, sleepers wake in order."""

from __future__ import annotations

import asyncio

from ptah_operator.runtime.clock import FakeClock, wait_tasks


async def test_sleepers_wake_in_deadline_order_only_when_time_is_advanced() -> None:
    clock = FakeClock()
    woke: list[tuple[str, float]] = []

    async def sleeper(name: str, seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append((name, clock.now()))

    start = clock.now()
    tasks = [asyncio.create_task(sleeper(n, s)) for n, s in (("c", 3), ("a", 1), ("b", 2))]
    await clock.settle()
    assert woke == []
    assert clock.waiters == 3

    await clock.advance(1.5)
    assert woke == [("a", start + 1)]
    await clock.advance(10)
    assert woke == [("a", start + 1), ("b", start + 2), ("c", start + 3)]
    assert clock.now() == start + 11.5
    await asyncio.gather(*tasks)


async def test_a_periodic_loop_sees_every_tick_of_a_long_advance() -> None:
    clock = FakeClock()
    ticks: list[float] = []

    async def every_two_seconds() -> None:
        while True:
            await clock.sleep(2)
            ticks.append(clock.now())

    task = asyncio.create_task(every_two_seconds())
    start = clock.now()
    await clock.advance(9)
    assert ticks == [start + 2, start + 4, start + 6, start + 8]
    task.cancel()


async def test_wait_tasks_gives_back_what_is_still_running_after_the_limit() -> None:
    clock = FakeClock()
    quick = asyncio.create_task(clock.sleep(1))
    slow = asyncio.create_task(clock.sleep(100))
    waiting = asyncio.create_task(wait_tasks(clock, [quick, slow], 5))
    await clock.advance(5)
    assert await waiting == {slow}
    slow.cancel()
