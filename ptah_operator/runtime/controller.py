"""A controller: informer events become keys in a rate-limited queue; workers reconcile keys.

Contract:
- `reconcile(key) -> Result` is async; the key is "namespace/name" of the primary object.
  `Result` is data, and the queue follows it as controller-runtime does:
  `Result.success()` forgets the key's failures; `Result.requeue(after=s)` forgets them and
  adds the key back after `s` seconds; `Result.retry(message)` adds it back rate-limited
  (per-key backoff 5 ms .. 1000 s, overall 10 qps / burst 100); `Result.terminal_error(message)`
  forgets it and does not retry (a later event will bring it back).
- An exception from reconcile is a rate-limited retry; an HTTP 409 Conflict is counted as
  `conflict` and retried the same way without an error log (someone else wrote first). An API
  server that cannot be reached (or answers 502/503/504) is retried by the outage limiter
  alone (`OutageRateLimiter`: per key, jittered, spread over the keys in the outage), never
  through the queue's limiter: an outage neither builds up a key's backoff nor spends the
  shared bucket, so recovery after it is prompt (issue #18). Only connection errors count as
  an outage (`is_unreachable`), logged by class, as an error every OUTAGE_ESCALATE_EVERY
  retries of a key in a row; any other OSError is a retry with backoff.
- `watch(informer)` enqueues the object's own key; `watch(informer, map_func)` any keys;
  `owns(informer, kind, api_group)` enqueues the owner named by the object's controller
  ownerReference of that kind (Jobs, ConfigMaps, plans owned by a resource).
- `run()` registers the event handlers, waits for the informers to sync, then runs `workers`
  concurrent workers; one key is never reconciled by two workers at once (the queue's rule).
- `shutdown(grace_period)` stops taking work, lets reconciles in flight finish for up to the
  grace period (then cancels them), and makes `run()` return.
- Every reconcile logs with `controller` and `key` bound (structlog contextvars, so the
  reconcile's own log lines carry them) and records `ptah_reconcile_total{controller,result}`
  and `ptah_reconcile_duration_seconds{controller}`.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

import aiohttp
import structlog
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.runtime.clock import Clock, MonotonicClock, wait_tasks
from ptah_operator.runtime.informer import ApiStatusError, EventHandler, Informer
from ptah_operator.runtime.logging import error_fields
from ptah_operator.runtime.metrics import RuntimeMetrics
from ptah_operator.runtime.ratelimit import OutageRateLimiter, RateLimiter
from ptah_operator.runtime.store import KubeObject, metadata, object_key
from ptah_operator.runtime.workqueue import QueueShutDownError, RateLimitingQueue

log = structlog.get_logger(__name__)

MapFunc = Callable[[KubeObject], Iterable[str]]


class Outcome(StrEnum):
    SUCCESS = "success"
    REQUEUE_AFTER = "requeue_after"
    ERROR = "error"
    TERMINAL_ERROR = "terminal_error"


@dataclass(frozen=True)
class Result:
    """What a reconcile asks of the queue."""

    outcome: Outcome = Outcome.SUCCESS
    requeue_after: float | None = None
    message: str | None = None

    @classmethod
    def success(cls) -> Result:
        return cls(Outcome.SUCCESS)

    @classmethod
    def requeue(cls, after: float) -> Result:
        if after <= 0:
            raise ValueError("requeue_after must be positive")
        return cls(Outcome.REQUEUE_AFTER, requeue_after=after)

    @classmethod
    def retry(cls, message: str) -> Result:
        return cls(Outcome.ERROR, message=message)

    @classmethod
    def terminal_error(cls, message: str) -> Result:
        return cls(Outcome.TERMINAL_ERROR, message=message)


Reconcile = Callable[[str], Awaitable[Result]]


def own_key(obj: KubeObject) -> list[str]:
    return [object_key(obj)]


def controller_owner(kind: str, api_group: str) -> MapFunc:
    """Map an owned object to its controlling owner's key (same namespace), by kind and group.

    Only the ownerReference with `controller: true` counts, as controller-runtime's
    `Owns()` does; the group is compared without the version.
    """

    def owners(obj: KubeObject) -> list[str]:
        meta = metadata(obj)
        namespace = meta.get("namespace")
        for ref in meta.get("ownerReferences") or []:
            if not ref.get("controller") or ref.get("kind") != kind:
                continue
            api_version = str(ref.get("apiVersion") or "")
            group = api_version.rpartition("/")[0]
            if group != api_group:
                continue
            name = ref.get("name")
            if name:
                return [f"{namespace}/{name}" if namespace else str(name)]
        return []

    return owners


def is_conflict(error: BaseException) -> bool:
    return isinstance(error, ApiException | ApiStatusError) and error.status == 409


_UNAVAILABLE = frozenset({502, 503, 504})

OUTAGE_ESCALATE_EVERY = 20
"""After this many outage retries of one key in a row (and every as many after), the outage
is logged as an error, not a warning: one key alone retries every 4-6 s, so about every 1.5
minutes of outage (longer with many keys, whose retries the limiter spreads out)."""


def outage_escalates(retries: int) -> bool:
    """Whether the `retries`-th outage retry of a key in a row is logged as an error."""
    return retries > 0 and retries % OUTAGE_ESCALATE_EVERY == 0


def is_unreachable(error: BaseException) -> bool:
    """Whether the API server could not be reached or answered that it is unavailable: 502,
    503, 504, or a connection error (refused, reset, a timeout, a name that does not resolve,
    aiohttp's connection errors). Any other OSError (a file, a permission, a certificate that
    does not verify) is a fault of the manager's own, retried with backoff and logged as an
    error, not an outage (issue #18, fifth review)."""
    if isinstance(error, ApiException | ApiStatusError):
        return error.status in _UNAVAILABLE
    if isinstance(error, ssl.SSLCertVerificationError | aiohttp.ClientConnectorCertificateError):
        return False
    return isinstance(
        error,
        aiohttp.ClientConnectionError
        | ConnectionError
        | TimeoutError
        | asyncio.TimeoutError
        | socket.gaierror,
    )


class Controller:
    """Informers -> queue -> workers -> reconcile, with client-go's queue semantics."""

    def __init__(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        workers: int = 1,
        clock: Clock | None = None,
        metrics: RuntimeMetrics | None = None,
        rate_limiter: RateLimiter | None = None,
        outage_limiter: OutageRateLimiter | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("a controller needs at least one worker")
        self.name = name
        self._reconcile = reconcile
        self._workers_wanted = workers
        self._clock: Clock = clock or MonotonicClock()
        self._metrics = metrics
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            name,
            clock=self._clock,
            rate_limiter=rate_limiter,
            metrics=metrics.workqueue if metrics is not None else None,
        )
        self.outage_limiter = outage_limiter or OutageRateLimiter()
        """The delays of retries while the API server cannot be reached (module docstring)."""
        self._watches: list[tuple[Informer, EventHandler]] = []
        self._workers: list[asyncio.Task[None]] = []
        self._stopping = False
        self._stop_requested = asyncio.Event()
        self._log = log.bind(controller=name)

    @property
    def informers(self) -> list[Informer]:
        return [informer for informer, _ in self._watches]

    def watch(self, informer: Informer, map_func: MapFunc = own_key) -> None:
        """Enqueue the keys `map_func` gives for every add, update (old and new) and delete."""

        def enqueue(obj: KubeObject) -> None:
            for key in map_func(obj):
                self.queue.add(key)

        def on_update(old: KubeObject, new: KubeObject) -> None:
            enqueue(old)
            enqueue(new)

        self._watches.append(
            (informer, EventHandler(on_add=enqueue, on_update=on_update, on_delete=enqueue))
        )

    def owns(self, informer: Informer, kind: str, api_group: str) -> None:
        """Enqueue the controlling owner (of `kind` in `api_group`) of each object seen.

        Only the ownerReference with `controller: true` counts, as in controller-runtime's
        `Owns()`; the equivalent of `watch(informer, controller_owner(kind, api_group))`.
        """
        self.watch(informer, controller_owner(kind, api_group))

    async def run(self) -> None:
        """Reconcile until `shutdown()`; informers must be running (the manager runs them)."""
        for informer, handler in self._watches:
            informer.add_handler(handler)
        try:
            loop = asyncio.get_running_loop()
            waits: list[asyncio.Task[object]] = [
                loop.create_task(self._wait_synced()),
                loop.create_task(self._stop_requested.wait()),
            ]
            try:
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in waits:
                    task.cancel()
            if self._stopping:
                return
            self._log.info("starting workers", workers=self._workers_wanted)
            self._workers = [
                loop.create_task(self._worker(), name=f"{self.name}-worker-{i}")
                for i in range(self._workers_wanted)
            ]
            await asyncio.wait(self._workers)
        finally:
            for informer, handler in self._watches:
                informer.remove_handler(handler)

    async def _wait_synced(self) -> object:
        for informer, _ in self._watches:
            await informer.wait_for_sync()
        return None

    async def shutdown(self, grace_period: float) -> None:
        """Stop taking work; give reconciles in flight `grace_period` seconds, then cancel."""
        if self._stopping:
            return
        self._stopping = True
        self._stop_requested.set()
        self.queue.shut_down()
        in_flight = sorted(self.queue.processing())
        if in_flight:
            self._log.info("waiting for reconciles in flight", keys=in_flight)
        late = await wait_tasks(self._clock, self._workers, grace_period)
        if late:
            self._log.warning(
                "grace period over, cancelling reconciles", keys=sorted(self.queue.processing())
            )
            for task in late:
                task.cancel()
            await asyncio.wait(late)

    async def _worker(self) -> None:
        while not self._stopping:
            try:
                key = await self.queue.get()
            except QueueShutDownError:
                return
            if self._stopping:
                self.queue.done(key)
                return
            try:
                await self._process(key)
            finally:
                self.queue.done(key)

    def _outage(self, key: str, error: BaseException) -> None:
        """Retry `key` from the outage limiter; the log names the error's class only (its
        message can carry what a server or a proxy said), as an error every
        OUTAGE_ESCALATE_EVERY retries in a row."""
        self.queue.add_after(key, self.outage_limiter.when(key))
        retries = self.outage_limiter.num_requeues(key)
        if outage_escalates(retries):
            log.error("API server unreachable", error=type(error).__name__, retries=retries)
        else:
            log.warning("API server unreachable, retry", error=type(error).__name__)

    async def _process(self, key: str) -> None:
        started = self._clock.now()
        outcome: str | None = None
        with structlog.contextvars.bound_contextvars(controller=self.name, key=key):
            try:
                result = await self._reconcile(key)
            except Exception as error:
                outcome = "error"
                if is_unreachable(error):
                    self._outage(key, error)
                    return
                self.outage_limiter.forget(key)
                if is_conflict(error):
                    outcome = "conflict"
                    log.info("conflict, requeue", error=type(error).__name__)
                else:
                    log.error("reconcile failed", **error_fields(error))
                self.queue.add_rate_limited(key)
            else:
                self.outage_limiter.forget(key)
                outcome = str(result.outcome)
                self._follow(key, result)
            finally:
                # A reconcile cancelled at the end of the grace period is not counted.
                if self._metrics is not None and outcome is not None:
                    self._metrics.reconcile.total.labels(self.name, outcome).inc()
                    self._metrics.reconcile.duration.labels(self.name).observe(
                        self._clock.now() - started
                    )

    def _follow(self, key: str, result: Result) -> None:
        if result.outcome is Outcome.SUCCESS:
            self.queue.forget(key)
        elif result.outcome is Outcome.REQUEUE_AFTER:
            self.queue.forget(key)
            self.queue.add_after(key, result.requeue_after or 0.0)
        elif result.outcome is Outcome.ERROR:
            self.queue.add_rate_limited(key)
            log.warning(
                "reconcile asked for a retry",
                reason=result.message,
                requeues=self.queue.num_requeues(key),
            )
        else:
            log.error("reconcile ended in a terminal error", reason=result.message)
            self.queue.forget(key)
