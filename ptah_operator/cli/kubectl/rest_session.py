"""The reading verbs' session: `Reads` over the small HTTP client of `rest`.

`get` is a GET on the one kept-alive connection. `observe` lists the object, then watches it
from the list's resourceVersion as `follow.observe` does over the client library (a watch the
server ends is resumed; 410 or a broken connection lists again; 401, 403 and 404 are said).
A watch blocks on its socket in a thread of its own, so the event loop (and the verb's
timeout) keeps running while it waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import quote, urlencode

from ptah_operator.api.constants import GROUP, VERSION, Kind
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.manifest import NAMES
from ptah_operator.cli.kubectl.rest import FINAL_STATUSES, ApiError, Client

WATCH_SECONDS = 60
_RETRY_SECONDS = 1.0


class _ExpiredError(Exception):
    """410 Gone on a watch: list again."""


@dataclass
class RestSession(Reads):
    """Reads through `rest.Client`, in one namespace, printing to `out`."""

    client: Client
    namespace: str
    out: TextIO

    def _path(self, plural: str, name: str | None = None) -> str:
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{quote(self.namespace, safe='')}/{plural}"
        return f"{path}/{quote(name, safe='')}" if name is not None else path

    async def get(
        self, kind: Kind, name: str, *, missing_ok: bool = False
    ) -> dict[str, Any] | None:
        info = NAMES[kind]
        try:
            obj: dict[str, Any] = self.client.get(self._path(info.plural, name))
        except ApiError as exc:
            if exc.status == 404:
                if missing_ok:
                    return None
                raise CommandError(
                    f"{info.singular} {name} not found in namespace {self.namespace}"
                ) from None
            raise CommandError(exc.message) from None
        return obj

    async def observe(self, plural: str, name: str) -> AsyncIterator[dict[str, Any] | None]:
        selector = {"fieldSelector": f"metadata.name={name}"}
        while True:
            try:
                page = self.client.get(f"{self._path(plural)}?{urlencode(selector)}")
            except ApiError as exc:
                if exc.status in FINAL_STATUSES:
                    raise CommandError(exc.message) from None
                await asyncio.sleep(_RETRY_SECONDS)
                continue
            except (OSError, http.client.HTTPException):
                await asyncio.sleep(_RETRY_SECONDS)
                continue
            items = page.get("items") or []
            for item in items:
                # Items of a list come without apiVersion and kind.
                item.setdefault("apiVersion", page.get("apiVersion"))
                item.setdefault("kind", str(page.get("kind") or "").removesuffix("List"))
            yield items[0] if items else None
            version = str((page.get("metadata") or {}).get("resourceVersion") or "")
            try:
                while True:
                    query = {
                        **selector,
                        "watch": "1",
                        "resourceVersion": version,
                        "allowWatchBookmarks": "true",
                        "timeoutSeconds": str(WATCH_SECONDS),
                    }
                    async for event in self._watch(f"{self._path(plural)}?{urlencode(query)}"):
                        obj = event.get("object") or {}
                        kind = str(event.get("type") or "")
                        if kind == "ERROR":
                            if obj.get("code") == 410:
                                raise _ExpiredError
                            raise ApiError(int(obj.get("code") or 0), str(obj.get("message")))
                        version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                        if kind == "BOOKMARK":
                            continue
                        yield None if kind == "DELETED" else obj
            except _ExpiredError:
                continue
            except ApiError as exc:
                if exc.status == 410:
                    continue
                if exc.status in FINAL_STATUSES:
                    raise CommandError(exc.message) from None
            except (OSError, http.client.HTTPException, ValueError):
                pass
            await asyncio.sleep(_RETRY_SECONDS)

    async def _watch(self, path: str) -> AsyncIterator[dict[str, Any]]:
        """The watch's events, read in a daemon thread (it never holds the process open)."""
        connection, events = self.client.stream(path, WATCH_SECONDS + 30)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def hand(kind: str, value: Any) -> None:
            # A closed loop (RuntimeError): nobody is waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        def pump() -> None:
            try:
                for event in events:
                    hand("event", event)
            except BaseException as exc:  # handed to the reader, not lost
                hand("error", exc)
            else:
                hand("end", None)

        threading.Thread(target=pump, name="kubectl-ptah-watch", daemon=True).start()
        try:
            while True:
                kind, value = await queue.get()
                if kind == "end":
                    return
                if kind == "error":
                    raise value
                yield value
        finally:
            connection.close()
