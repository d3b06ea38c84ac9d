"""`collector.paused`: the collector is off inside, back as it was after, across nesting,
overlapping pauses of two tasks, and errors."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from ptah_operator.engine.schema import collector


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_off_inside_and_on_after() -> None:
    gc.enable()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause is not over
    assert gc.isenabled()


def test_on_again_after_an_error() -> None:
    gc.enable()
    with pytest.raises(LookupError), collector.paused():
        raise LookupError
    assert gc.isenabled()


def test_a_collector_turned_off_by_someone_else_stays_off() -> None:
    gc.disable()
    with collector.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


async def test_overlapping_pauses_of_two_tasks_resume_after_the_last() -> None:
    gc.enable()
    first_in, second_in, first_out = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def first() -> None:
        with collector.paused():
            first_in.set()
            await second_in.wait()
        first_out.set()

    async def second() -> None:
        await first_in.wait()
        with collector.paused():
            second_in.set()
            await first_out.wait()
            assert not gc.isenabled()  # the first pause ended, this one did not
        assert gc.isenabled()

    await asyncio.gather(first(), second())
    assert gc.isenabled()
