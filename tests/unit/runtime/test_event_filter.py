"""The Event spam filter: per involved object, a burst of Events and then one per refill
interval, the ones held back counted into the next; memory bounded by a least-recently-used
table of objects (as client-go's event recorder's spam filter keys a token bucket by source
and object)."""

from __future__ import annotations

from ptah_operator.runtime.event_filter import EventSpamFilter


class Clock:
    def __init__(self) -> None:
        self.at = 1000.0

    def now(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds

    async def sleep(self, seconds: float) -> None:
        self.at += seconds


def test_a_burst_then_one_per_interval_with_the_held_back_counted() -> None:
    clock = Clock()
    spam = EventSpamFilter(burst=3, refill_seconds=60.0, max_objects=10, clock=clock)
    admitted = [spam.admit("ns/u-1") for _ in range(10)]
    assert admitted[:3] == [0, 0, 0]
    assert admitted[3:] == [None] * 7
    assert spam.admit("ns/u-2") == 0, "another object has its own bucket"
    clock.advance(60.0)
    assert spam.admit("ns/u-1") == 7, "the next Event says how many were held back"
    assert spam.admit("ns/u-1") is None
    clock.advance(600.0)
    assert [spam.admit("ns/u-1") for _ in range(4)] == [1, 0, 0, None]


def test_memory_is_bounded_and_an_object_can_be_forgotten() -> None:
    clock = Clock()
    spam = EventSpamFilter(burst=1, refill_seconds=60.0, max_objects=100, clock=clock)
    for i in range(10_000):
        spam.admit(f"ns/u-{i}")
    assert len(spam) == 100
    assert spam.admit("ns/u-9999") is None
    spam.forget("ns/u-9999")
    assert spam.admit("ns/u-9999") == 0
