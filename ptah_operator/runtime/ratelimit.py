"""Rate limiters for the work queue, with client-go's semantics and default numbers.

Contract (as `k8s.io/client-go/util/workqueue`):
- `RateLimiter.when(item)` returns how long (seconds) the item must wait before it is added
  again, and records that it was asked; `forget(item)` clears the item's failure history;
  `num_requeues(item)` is how many times `when` was asked since the last `forget`.
- `ItemExponentialFailureRateLimiter`: base * 2**failures, capped (defaults 5 ms and 1000 s).
- `BucketRateLimiter`: one token bucket shared by all items, `golang.org/x/time/rate`'s
  reservation arithmetic (starts full; a reservation may drive the bucket negative, the
  wait is the time until the deficit refills). Defaults 10 qps, burst 100.
- `MaxOfRateLimiter`: the longest of its limiters' answers.
- `default_controller_rate_limiter()` is the max of the two defaults, like
  `workqueue.DefaultTypedControllerRateLimiter`.
- `OutageRateLimiter`: per-key only, for retries while the API server cannot be reached; it
  shares no bucket with anything (an outage spends no tokens the queue needs afterwards). A
  key waits `base * 2**failures` up to `key_cap`, but never less than (keys in the outage) /
  `qps`, up to `max_delay`, times a jitter in [1, 1.5): once the keys have failed once each,
  the retries of all of them together stay under `qps` a second on average (the jitter can
  bunch a 10-second window by up to about a quarter), and each key is back within
  1.5 * max(key_cap, keys / qps) seconds of the server's return (issue #18).
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Protocol

from ptah_operator.runtime.clock import Clock, MonotonicClock

DEFAULT_BASE_DELAY = 0.005
DEFAULT_MAX_DELAY = 1000.0
DEFAULT_QPS = 10.0
DEFAULT_BURST = 100
OUTAGE_BASE_DELAY = 0.5
OUTAGE_KEY_CAP = 4.0
OUTAGE_QPS = 10.0
OUTAGE_MAX_DELAY = 300.0
OUTAGE_JITTER = 0.5


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...

    def forget(self, item: Hashable) -> None: ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """Per-item exponential backoff: base, 2*base, 4*base, ... never above max_delay."""

    def __init__(
        self, base_delay: float = DEFAULT_BASE_DELAY, max_delay: float = DEFAULT_MAX_DELAY
    ) -> None:
        self._base = base_delay
        self._max = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        # Past 2**1023 a float overflows; the cap has long been reached by then.
        if exp > 1000:
            return self._max
        return min(self._base * (2.0**exp), self._max)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket: `burst` adds at once, then `qps` per second."""

    def __init__(
        self, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST, clock: Clock | None = None
    ) -> None:
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock or MonotonicClock()
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        now = self._clock.now()
        tokens = self._tokens
        if self._last is not None and now > self._last:
            tokens = min(self._burst, tokens + (now - self._last) * self._qps)
        tokens -= 1.0
        self._tokens = tokens
        if self._last is None or now > self._last:
            self._last = now
        return -tokens / self._qps if tokens < 0 else 0.0

    def forget(self, item: Hashable) -> None:
        return None

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The worst (longest) answer of several limiters; all of them are asked every time."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self._limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> MaxOfRateLimiter:
    """client-go's controller default: 5 ms..1000 s per item, max with 10 qps / burst 100."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY),
        BucketRateLimiter(DEFAULT_QPS, DEFAULT_BURST, clock),
    )


class OutageRateLimiter:
    """Per-key delays while the API server cannot be reached, spread so that many keys together
    retry at most `qps` times a second; no shared bucket is spent (module docstring)."""

    def __init__(
        self,
        base_delay: float = OUTAGE_BASE_DELAY,
        key_cap: float = OUTAGE_KEY_CAP,
        qps: float = OUTAGE_QPS,
        max_delay: float = OUTAGE_MAX_DELAY,
        rng: random.Random | None = None,
    ) -> None:
        self._base = base_delay
        self._key_cap = key_cap
        self._qps = qps
        self._max = max_delay
        self._rng = rng or random.Random()
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        own = self._key_cap if exp > 64 else min(self._base * (2.0**exp), self._key_cap)
        spread = len(self._failures) / self._qps
        delay = min(max(own, spread), self._max)
        return delay * (1.0 + OUTAGE_JITTER * self._rng.random())

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)
