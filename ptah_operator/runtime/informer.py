"""List + watch one resource into a local `Store`, and tell handlers what changed.

Contract (client-go's reflector + shared informer, for one event loop):
- `run()` lists (paginated, a consistent read), replaces the store, then watches from the
  list's resourceVersion with `allowWatchBookmarks=true`. A BOOKMARK only moves the
  resourceVersion (its object carries nothing else). When the server ends a watch normally,
  the informer watches again from the last resourceVersion it saw.
- 410 Gone, whether the HTTP status of the watch request or an ERROR event with code 410
  inside the stream, means that resourceVersion has left the server's window: the informer
  lists again. Other failures back off (0.8 s doubling to 30 s, on the informer's clock) and
  watch again from the last resourceVersion (a too-old one then earns a 410 and a relist).
- Handlers (`EventHandler`: on_add, on_update(old, new), on_delete) are called inline, in
  order, after the store holds the change. A relist delivers on_delete (with the last state
  held) for objects that vanished, on_update for those still there (changed or not) and
  on_add for new ones. An optional resync period delivers on_update(obj, obj) for every object.
  A handler added to a synced informer first gets on_add for every object held.
- An optional `transform` (client-go's `TransformFunc`) is applied to every object a list or
  a watch event brings (deleted ones included) before the store or a handler sees it: a cache
  holds only what its readers read. It must be a pure function of the object, give an object
  with the same metadata.name/namespace/resourceVersion, and may return the object it was given
  changed in place (the parsed JSON is the informer's own). `drop_server_fields` drops what no
  controller reads on any object: `metadata.managedFields` and kubectl's last-applied
  annotation.
- `has_synced` is true once the first list is in the store; `await wait_for_sync()`.
- `ListWatch` is the seam to the API: `ApiListWatch` wraps any kubernetes_asyncio list
  function (core, batch, `CustomObjectsApi.list_*_custom_object`), reading raw JSON so every
  resource is a plain dict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import aiohttp
import structlog

from ptah_operator.runtime.clock import Clock, MonotonicClock
from ptah_operator.runtime.logging import error_fields
from ptah_operator.runtime.store import (
    IndexFunc,
    KubeObject,
    Store,
    metadata,
    object_key,
    resource_version,
)

log = structlog.get_logger(__name__)

DEFAULT_MIN_WATCH_TIMEOUT = 300.0
_BACKOFF_INITIAL = 0.8
_BACKOFF_MAX = 30.0
_SHORT_WATCH = 1.0
_PAGE_SIZE = 500
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

Transform = Callable[[KubeObject], KubeObject]
"""What an informer keeps of an object (see the module contract)."""


def drop_server_fields(obj: KubeObject) -> KubeObject:
    """`obj` without `metadata.managedFields` and kubectl's last-applied annotation (in place)."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and LAST_APPLIED in annotations:
            del annotations[LAST_APPLIED]
            if not annotations:
                del meta["annotations"]
    return obj


class ResourceExpiredError(Exception):
    """410 Gone: the resourceVersion asked for is older than the server keeps."""


class ApiStatusError(Exception):
    """A non-success answer from the API server (other than 410 on a watch)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


@dataclass(frozen=True)
class ListResult:
    items: list[KubeObject]
    resource_version: str


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK
    object: KubeObject


class ListWatch(Protocol):
    """Where an informer gets its objects."""

    async def list(self) -> ListResult: ...

    def watch(
        self, resource_version: str, timeout_seconds: int
    ) -> AsyncGenerator[WatchEvent, None]:
        """Events after `resource_version`; raises `ResourceExpiredError` on 410."""
        ...


def _status_message(body: bytes) -> str:
    try:
        status = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")
    if isinstance(status, dict):
        return str(status.get("message") or status.get("reason") or "")
    return ""


class ApiListWatch:
    """List and watch through a kubernetes_asyncio list function.

    `ApiListWatch(CoreV1Api(api).list_namespaced_config_map, "ns")`,
    `ApiListWatch(BatchV1Api(api).list_job_for_all_namespaces)`,
    `ApiListWatch(CustomObjectsApi(api).list_custom_object_for_all_namespaces, group, version,
    plural)`. Label and field selectors, if given, go to every call.
    """

    def __init__(
        self,
        list_function: Callable[..., Awaitable[Any]],
        *args: Any,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = _PAGE_SIZE,
        request_timeout: float = 60.0,
    ) -> None:
        self._function = list_function
        self._args = args
        self._kwargs: dict[str, Any] = {}
        if label_selector:
            self._kwargs["label_selector"] = label_selector
        if field_selector:
            self._kwargs["field_selector"] = field_selector
        self._page_size = page_size
        self._request_timeout = request_timeout

    async def _call(self, **kwargs: Any) -> aiohttp.ClientResponse:
        # With _preload_content=False the generated client hands back the raw aiohttp
        # response, whatever its status; its annotations claim the model type.
        response = await self._function(
            *self._args, **self._kwargs, **kwargs, _preload_content=False
        )
        return cast(aiohttp.ClientResponse, response)

    async def list(self) -> ListResult:
        items: list[KubeObject] = []
        continue_token: str | None = None
        rv = ""
        while True:
            kwargs: dict[str, Any] = {
                "limit": self._page_size,
                "_request_timeout": self._request_timeout,
            }
            if continue_token:
                kwargs["_continue"] = continue_token
            response = await self._call(**kwargs)
            try:
                body = await response.read()
            finally:
                response.release()
            if response.status == 410 and continue_token:
                # The snapshot behind the continue token expired: start the list over.
                items, continue_token, rv = [], None, ""
                continue
            if response.status == 410:
                raise ResourceExpiredError(_status_message(body))
            if not 200 <= response.status < 300:
                raise ApiStatusError(response.status, _status_message(body))
            page = json.loads(body)
            kind = str(page.get("kind") or "")
            api_version = page.get("apiVersion")
            item_kind = kind[: -len("List")] if kind.endswith("List") else kind
            for item in page.get("items") or []:
                # Items of a typed list come without apiVersion/kind; watch events carry them.
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", item_kind)
                items.append(item)
            page_meta = page.get("metadata") or {}
            if not rv:
                rv = str(page_meta.get("resourceVersion") or "")
            continue_token = page_meta.get("continue") or None
            if not continue_token:
                return ListResult(items, rv)

    async def watch(
        self, resource_version: str, timeout_seconds: int
    ) -> AsyncGenerator[WatchEvent, None]:
        response = await self._call(
            watch=True,
            resource_version=resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=timeout_seconds,
            # The server ends the watch after timeout_seconds; the read timeout only
            # catches a connection that died without a word.
            _request_timeout=aiohttp.ClientTimeout(
                sock_connect=self._request_timeout, sock_read=timeout_seconds + 60
            ),
        )
        try:
            if response.status == 410:
                raise ResourceExpiredError(_status_message(await response.read()))
            if response.status != 200:
                raise ApiStatusError(response.status, _status_message(await response.read()))
            while True:
                line = await response.content.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                event = json.loads(line)
                event_type = str(event.get("type") or "")
                obj = event.get("object") or {}
                if event_type == "ERROR":
                    code = obj.get("code")
                    if code == 410:
                        raise ResourceExpiredError(str(obj.get("message") or ""))
                    raise ApiStatusError(int(code or 0), str(obj.get("message") or ""))
                yield WatchEvent(event_type, obj)
        finally:
            response.release()


@dataclass(frozen=True)
class EventHandler:
    on_add: Callable[[KubeObject], None] | None = None
    on_update: Callable[[KubeObject, KubeObject], None] | None = None
    on_delete: Callable[[KubeObject], None] | None = None


@dataclass
class _Backoff:
    clock: Clock
    initial: float = _BACKOFF_INITIAL
    maximum: float = _BACKOFF_MAX
    _next: float = field(default=0.0, init=False)

    def reset(self) -> None:
        self._next = 0.0

    async def wait(self) -> None:
        self._next = self.initial if self._next == 0.0 else min(self._next * 2, self.maximum)
        await self.clock.sleep(self._next)


class _VeryShortWatchError(Exception):
    pass


class Informer:
    """Keeps `store` in step with the API server and notifies handlers."""

    def __init__(
        self,
        list_watch: ListWatch,
        *,
        name: str,
        indexers: Mapping[str, IndexFunc] | None = None,
        resync_period: float | None = None,
        clock: Clock | None = None,
        min_watch_timeout: float = DEFAULT_MIN_WATCH_TIMEOUT,
        transform: Transform | None = None,
    ) -> None:
        self.name = name
        self.transform = transform
        self.store = Store(indexers)
        self._list_watch = list_watch
        self._resync_period = resync_period
        self._clock: Clock = clock or MonotonicClock()
        self._min_watch_timeout = min_watch_timeout
        self._handlers: list[EventHandler] = []
        self._resource_version: str | None = None
        self._synced = asyncio.Event()
        self._inner: asyncio.Task[None] | None = None
        self._stopping = False
        self._log = log.bind(informer=name)
        self.lists = 0  # lists made, the first one included
        self.expirations = 0  # watches refused with 410 Gone

    @property
    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    @property
    def last_sync_resource_version(self) -> str | None:
        return self._resource_version

    @property
    def running(self) -> bool:
        return self._inner is not None and not self._inner.done()

    def add_handler(self, handler: EventHandler) -> EventHandler:
        self._handlers.append(handler)
        if self.has_synced and handler.on_add is not None:
            for obj in self.store.list():
                self._call(handler.on_add, obj)
        return handler

    def remove_handler(self, handler: EventHandler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)

    async def run(self) -> None:
        """List and watch until `stop()` (returns) or cancellation (raises).

        After a `stop()`, `run()` may be called again: the store is kept, and the informer
        watches from its last resourceVersion.
        """
        if self.running:
            raise RuntimeError(f"informer {self.name} is already running")
        self._stopping = False
        self._inner = asyncio.get_running_loop().create_task(
            self._run_loop(), name=f"informer-{self.name}"
        )
        try:
            await self._inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self._stopping and (current is None or current.cancelling() == 0):
                return
            raise

    def stop(self) -> None:
        self._stopping = True
        if self._inner is not None:
            self._inner.cancel()

    async def _run_loop(self) -> None:
        resync: asyncio.Task[None] | None = None
        if self._resync_period:
            resync = asyncio.get_running_loop().create_task(self._resync_loop(self._resync_period))
        try:
            await self._list_and_watch()
        finally:
            if resync is not None:
                resync.cancel()

    async def _list_and_watch(self) -> None:
        backoff = _Backoff(self._clock)
        while True:
            if self._resource_version is None:
                try:
                    await self._relist()
                except Exception as error:
                    self._log.warning("list failed", error=str(error))
                    await backoff.wait()
                    continue
                backoff.reset()
            try:
                events = await self._watch_once()
            except ResourceExpiredError as error:
                self.expirations += 1
                self._log.info("watch resourceVersion expired, relisting", error=str(error))
                self._resource_version = None
                continue
            except Exception as error:
                self._log.warning("watch failed", error=str(error) or type(error).__name__)
                await backoff.wait()
                continue
            if events:
                backoff.reset()

    async def _relist(self) -> None:
        result = await self._list_watch.list()
        self.lists += 1
        fresh = {object_key(obj): obj for obj in map(self._kept, result.items)}
        previous = {object_key(obj): obj for obj in self.store.list()}
        self.store.replace(fresh.values())
        self._resource_version = result.resource_version
        first = not self.has_synced
        self._synced.set()
        self._log.debug(
            "listed", objects=len(fresh), resource_version=result.resource_version, first=first
        )
        for key, old in previous.items():
            if key not in fresh:
                self._notify_delete(old)
        for key, obj in fresh.items():
            old_obj = previous.get(key)
            if old_obj is None:
                self._notify_add(obj)
            else:
                self._notify_update(old_obj, obj)

    async def _watch_once(self) -> int:
        assert self._resource_version is not None
        timeout = int(self._min_watch_timeout * (random.random() + 1.0))
        started = self._clock.now()
        count = 0
        async with contextlib.aclosing(
            self._list_watch.watch(self._resource_version, timeout)
        ) as events:
            async for event in events:
                count += 1
                self._apply(event)
        if count == 0 and self._clock.now() - started < _SHORT_WATCH:
            # client-go's guard against a server that closes watches at once.
            raise _VeryShortWatchError("watch ended at once without events")
        return count

    def _kept(self, obj: KubeObject) -> KubeObject:
        return self.transform(obj) if self.transform is not None else obj

    def _apply(self, event: WatchEvent) -> None:
        obj = event.object
        rv = resource_version(obj)
        if event.type == "BOOKMARK":
            if rv:
                self._resource_version = rv
            return
        obj = self._kept(obj)
        if event.type in ("ADDED", "MODIFIED"):
            old = self.store.upsert(obj)
            if rv:
                self._resource_version = rv
            if old is None:
                self._notify_add(obj)
            else:
                self._notify_update(old, obj)
        elif event.type == "DELETED":
            self.store.delete(object_key(obj))
            if rv:
                self._resource_version = rv
            self._notify_delete(obj)
        else:
            self._log.warning("unknown watch event type", type=event.type)

    async def _resync_loop(self, period: float) -> None:
        while True:
            await self._clock.sleep(period)
            if not self.has_synced:
                continue
            for obj in self.store.list():
                self._notify_update(obj, obj)

    def _notify_add(self, obj: KubeObject) -> None:
        for handler in list(self._handlers):
            if handler.on_add is not None:
                self._call(handler.on_add, obj)

    def _notify_update(self, old: KubeObject, new: KubeObject) -> None:
        for handler in list(self._handlers):
            if handler.on_update is not None:
                self._call(handler.on_update, old, new)

    def _notify_delete(self, obj: KubeObject) -> None:
        for handler in list(self._handlers):
            if handler.on_delete is not None:
                self._call(handler.on_delete, obj)

    def _call(self, func: Callable[..., None], *objs: KubeObject) -> None:
        try:
            func(*objs)
        except Exception as error:
            self._log.error(
                "event handler failed",
                object=str(metadata(objs[-1]).get("name") or ""),
                **error_fields(error),
            )
