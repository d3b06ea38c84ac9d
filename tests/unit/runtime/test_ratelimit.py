"""Rate limiters with client-go's numbers: 5 ms doubling to 1000 s; 10 qps with burst 100."""

from __future__ import annotations

import pytest

from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)


def test_per_item_backoff_doubles_from_5ms_and_stops_at_1000s() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:6] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.16])
    # 5 ms * 2**17 = 655.36 s, the last step below the cap; 2**18 would be 1310.72 s.
    assert delays[17] == pytest.approx(655.36)
    assert delays[18] == 1000.0
    assert delays[19] == 1000.0
    assert limiter.num_requeues("a") == 20
    assert limiter.when("b") == pytest.approx(0.005), "items back off independently"


def test_backoff_never_overflows_after_many_failures() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    for _ in range(5000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_forget_starts_the_backoff_over() -> None:
    limiter = ItemExponentialFailureRateLimiter()
    limiter.when("a")
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


def test_bucket_gives_a_burst_of_100_then_10_per_second() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter(clock=clock)
    assert [bucket.when(i) for i in range(100)] == [0.0] * 100
    # The bucket is empty: each further reservation waits one more tenth of a second.
    assert [bucket.when(i) for i in range(100, 103)] == pytest.approx([0.1, 0.2, 0.3])


async def test_bucket_refills_at_10_per_second_up_to_the_burst() -> None:
    clock = FakeClock()
    bucket = BucketRateLimiter(clock=clock)
    for i in range(100):
        bucket.when(i)
    await clock.advance(1.0)
    assert [bucket.when(i) for i in range(10)] == [0.0] * 10
    assert bucket.when("x") == pytest.approx(0.1)
    await clock.advance(1000)
    assert [bucket.when(i) for i in range(100)] == [0.0] * 100, "never more than the burst"
    assert bucket.when("y") == pytest.approx(0.1)


def test_default_controller_limiter_is_the_max_of_both() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    assert isinstance(limiter, MaxOfRateLimiter)
    # 100 distinct items fail once: the bucket lets them through, the backoff says 5 ms.
    assert [limiter.when(i) for i in range(100)] == pytest.approx([0.005] * 100)
    # The 101st has to wait for a token.
    assert limiter.when(100) == pytest.approx(0.1)
    assert limiter.num_requeues(0) == 1
    limiter.forget(0)
    assert limiter.num_requeues(0) == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter()
