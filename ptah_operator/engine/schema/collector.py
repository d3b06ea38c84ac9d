"""The cyclic garbage collector paused over the engine's bursts of allocation.

Reading a thousand tables makes hundreds of thousands of objects in a fraction of a second
(catalog rows, decoded documents, the model), nearly all of them kept: the collector, which
runs after every few hundred new objects and walks the young ones, finds nothing to free
and costs a tenth to a fifth of the whole read. `paused` turns it off for such a burst and
back on after it. Nothing is lost: reference counting still frees whatever is not in a
cycle, and the cycles made meanwhile (sqlglot's trees link each node to its parent) are
found by the next collection after the burst, so memory grows by at most the burst's own
garbage.

The switch is the process's, so pauses nest by count (the collector resumes when the last
one ends, two inspections in one event loop included), and a collector that someone else
turned off stays off.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_resume = False


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The collector off for the `with` block (and any pause begun inside it)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
