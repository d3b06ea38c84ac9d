"""`ahead.meanwhile`: the next read is sent before the work on the last one, and the
connection is free again whatever happens (a read left in flight would answer the caller's
next command, a COMMIT or a close, with the wrong result)."""

from __future__ import annotations

import asyncio
import gc

import pytest

from ptah_operator.engine.schema.ahead import meanwhile


class FakeRead:
    """A read as the drivers make one: its query is sent in its first step, its answer comes
    after the server has worked it out."""

    def __init__(self, answer: object = "rows", error: BaseException | None = None) -> None:
        self.events: list[str] = []
        self.answer = answer
        self.error = error

    async def run(self) -> object:
        self.events.append("sent")
        await asyncio.sleep(0.01)
        self.events.append("answered")
        if self.error is not None:
            raise self.error
        return self.answer


async def test_the_read_is_sent_before_the_work_and_both_results_come_back() -> None:
    read = FakeRead()

    def work() -> str:
        read.events.append("work")
        return "done"

    assert await meanwhile(read.run(), work) == ("rows", "done")
    assert read.events == ["sent", "work", "answered"]


async def test_the_work_failing_waits_for_the_read_and_raises_the_works_error() -> None:
    read = FakeRead(error=RuntimeError("the read's own failure"))

    def work() -> None:
        raise ValueError("the work's failure")

    with pytest.raises(ValueError, match="the work's failure"):
        await meanwhile(read.run(), work)
    # The read ran to its end before the error reached the caller: the connection is free.
    assert read.events == ["sent", "answered"]


async def test_the_read_failing_raises_its_error() -> None:
    read = FakeRead(error=LookupError("refused"))
    with pytest.raises(LookupError, match="refused"):
        await meanwhile(read.run(), lambda: None)


async def test_being_cancelled_cancels_the_read() -> None:
    read = FakeRead()
    started = asyncio.Event()

    async def slow() -> object:
        started.set()
        read.events.append("sent")
        await asyncio.sleep(10)
        read.events.append("answered")
        return None

    caller = asyncio.ensure_future(meanwhile(slow(), lambda: None))
    await started.wait()
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0)
    assert read.events == ["sent"]
    assert not [t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__name__", "") == "slow"]


async def test_being_cancelled_before_the_work_cancels_the_read() -> None:
    # Cancelled in the turn of the loop that sends the read, before the work runs: the read
    # must not go on alone on the connection.
    read = FakeRead()
    worked: list[str] = []
    caller = asyncio.ensure_future(meanwhile(read.run(), lambda: worked.append("work")))
    await asyncio.sleep(0)  # the caller starts the read and yields
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    await asyncio.sleep(0.05)  # longer than the read takes
    assert worked == []
    assert read.events == ["sent"]


async def test_a_failed_read_beside_failed_work_leaves_no_unretrieved_error() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:

        def work() -> None:
            raise ValueError("the work's failure")

        with pytest.raises(ValueError):
            await meanwhile(FakeRead(error=RuntimeError("the read's")).run(), work)
        gc.collect()  # a task whose error nobody took reports it when it is collected
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert reported == []
