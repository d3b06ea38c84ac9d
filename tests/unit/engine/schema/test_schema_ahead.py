"""`ahead.meanwhile`: the next read is sent before the work on the last one, and the
connection is free again whatever happens (a read left in flight would answer the caller's
next command, a COMMIT or a close, with the wrong result)."""

from __future__ import annotations

import asyncio

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
