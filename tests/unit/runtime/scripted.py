"""A scripted list-watch for the informer's and controller's unit tests.

`ScriptedListWatch` is the informer's own seam (`ListWatch`) played from a script: each
`list()` takes the next `ListResult` (or raises the next exception), each `watch()` streams
the next script of events (an exception in a script is raised there) and then ends, the way
a server ends a watch. With no script left, a watch stays open until cancelled.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from typing import Any

from ptah_operator.runtime.informer import ListResult, WatchEvent


def cm(name: str, rv: str, namespace: str = "ns", **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "resourceVersion": rv}
    meta.update(extra)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}


def bookmark(rv: str) -> dict[str, Any]:
    return {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": rv}}


class ScriptedListWatch:
    def __init__(self) -> None:
        self.lists: deque[ListResult | Exception] = deque()
        self.watches: deque[list[WatchEvent | Exception]] = deque()
        self.calls: list[tuple[str, str | None]] = []
        self.watch_started = asyncio.Event()

    async def list(self) -> ListResult:
        self.calls.append(("list", None))
        if not self.lists:
            raise RuntimeError("no list scripted")
        result = self.lists.popleft()
        if isinstance(result, Exception):
            raise result
        return result

    async def watch(
        self, resource_version: str, timeout_seconds: int
    ) -> AsyncGenerator[WatchEvent, None]:
        self.calls.append(("watch", resource_version))
        self.watch_started.set()
        if not self.watches:
            await asyncio.Event().wait()
        for step in self.watches.popleft():
            if isinstance(step, Exception):
                raise step
            yield step
