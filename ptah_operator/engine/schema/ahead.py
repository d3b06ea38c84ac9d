"""Work done while the server answers the next catalog read.

Inspection is a sequence of reads on one connection, and between two of them Python works
through the last one's rows (a thousand tables: tens of milliseconds) while the server sits
idle. `meanwhile` sends the next read first and does that work while the server computes
its answer; the connection still carries one command at a time, and a result is read whole
before the next command is sent, as the drivers require.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

Read = TypeVar("Read")
Done = TypeVar("Done")


async def meanwhile(read: Coroutine[Any, Any, Read], work: Callable[[], Done]) -> tuple[Read, Done]:
    """`read`'s answer and `work()`'s result, `work` run while the server answers `read`.

    `work` is synchronous, so nothing else can use the connection while `read` is in
    flight. Should `work` fail, `read` is first taken to its end (its answer or error left
    unused) so that the connection is free for whatever the caller does next, a COMMIT or a
    close; then `work`'s error is raised."""
    task = asyncio.ensure_future(read)
    try:
        # One turn of the loop: the task sends its query and waits for the answer.
        await asyncio.sleep(0)
        done = work()
    except asyncio.CancelledError:
        task.cancel()  # the caller is being stopped: so is the read
        raise
    except BaseException:
        await asyncio.wait([task])
        if not task.cancelled():
            task.exception()  # retrieved: the read's own failure is not the one to report
        raise
    return await task, done
