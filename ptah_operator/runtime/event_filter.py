"""A spam filter for Events, per involved object.

An Event the operator raises because someone else acted (a report refused, a record it did
not write) can be made to repeat as often as that someone likes. Like client-go's event
recorder (its spam filter keys a token bucket by the Event's source and involved object), each
object gets a bucket of `burst` Events that refills one per `refill_seconds`; an Event with no
token left is held back and counted, and the next one admitted says how many were. The table
of objects is least-recently-used and holds at most `max_objects`, so neither a flood of
Events nor a flood of objects grows memory without bound.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from ptah_operator.runtime.clock import Clock, MonotonicClock


@dataclass
class _Bucket:
    tokens: float
    stamp: float
    held_back: int = 0


class EventSpamFilter:
    """Admits or holds back Events per object key (e.g. `<namespace>/<uid>`)."""

    def __init__(
        self,
        burst: int = 10,
        refill_seconds: float = 300.0,
        max_objects: int = 4096,
        clock: Clock | None = None,
    ) -> None:
        self.burst = burst
        self.refill_seconds = refill_seconds
        self.max_objects = max_objects
        self.clock: Clock = clock or MonotonicClock()
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def admit(self, key: str) -> int | None:
        """None when the object's Event is to be held back; else how many were held back since
        the last one admitted (0 mostly), which the Event admitted should say."""
        now = self.clock.now()
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(self.burst), now)
            self._buckets[key] = bucket
            while len(self._buckets) > self.max_objects:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
            gained = (now - bucket.stamp) / self.refill_seconds
            bucket.tokens = min(float(self.burst), bucket.tokens + gained)
            bucket.stamp = now
        if bucket.tokens < 1.0:
            bucket.held_back += 1
            return None
        bucket.tokens -= 1.0
        held_back, bucket.held_back = bucket.held_back, 0
        return held_back

    def forget(self, key: str) -> None:
        """The object is gone: its bucket too."""
        self._buckets.pop(key, None)


def with_held_back(message: str, held_back: int) -> str:
    """The message of an admitted Event, saying how many like it were held back before it."""
    if not held_back:
        return message
    return f"{message} ({held_back} more like it held back)"
