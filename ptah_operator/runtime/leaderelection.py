"""Leader election on a `coordination.k8s.io/v1` Lease, as client-go's leaderelection does it.

Contract:
- Candidates share one Lease. Each try reads the Lease and writes it back with the
  resourceVersion it read (optimistic concurrency: a 409 means another candidate wrote first,
  and the try fails). The leader renews every `retry_period`; if no renewal succeeds within
  `renew_deadline`, leadership is lost. A standby takes the Lease when the holder is empty
  or when it has seen no change to the Lease for `lease_duration` on its own monotonic clock
  (never by comparing the holder's timestamps with its own wall clock); standbys try every
  `retry_period * (1 + random() * jitter_factor)`.
  Defaults 15 s / 10 s / 2 s / 1.2, as client-go and controller-runtime.
- `LeaderElector.run()` campaigns, calls `on_started_leading` once the Lease is held, renews,
  and returns when leadership is lost (`lost` is then true) or after `stop()`. On `stop()` a
  held Lease is released (holderIdentity empty, leaseDurationSeconds 1) so a standby takes
  over at its next try instead of waiting out the lease. `on_stopped_leading` is called
  whenever leading ends (lost or released).
- `LeaseLock` is the seam to the API (`KubernetesLeaseLock` is the real one); the timing
  logic runs on an injectable `Clock` so tests step it.
"""

from __future__ import annotations

import asyncio
import math
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol, cast

import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.runtime.clock import Clock, MonotonicClock
from ptah_operator.runtime.metrics import RuntimeMetrics

log = structlog.get_logger(__name__)

DEFAULT_LEASE_DURATION = 15.0
DEFAULT_RENEW_DEADLINE = 10.0
DEFAULT_RETRY_PERIOD = 2.0
JITTER_FACTOR = 1.2


def default_identity() -> str:
    """hostname_uuid, as controller-runtime makes it: unique even for two replicas on one host."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


@dataclass(frozen=True)
class LeaderElectionConfig:
    namespace: str
    name: str
    identity: str
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    jitter_factor: float = JITTER_FACTOR

    def __post_init__(self) -> None:
        if not self.identity:
            raise ValueError("leader election needs an identity")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease duration must be greater than the renew deadline")
        if self.renew_deadline <= self.jitter_factor * self.retry_period:
            raise ValueError("renew deadline must be greater than retry period * jitter factor")
        if self.retry_period <= 0:
            raise ValueError("retry period must be positive")


@dataclass(frozen=True)
class LeaderElectionRecord:
    """The Lease's spec, as leader election reads and writes it."""

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: datetime | None
    renew_time: datetime | None
    lease_transitions: int


class LockConflictError(Exception):
    """The Lease changed since it was read (409), or it already exists on create."""


class LeaseLock(Protocol):
    def describe(self) -> str: ...

    async def get(self) -> tuple[LeaderElectionRecord, str] | None:
        """The record and its resourceVersion, or None if there is no Lease."""
        ...

    async def create(self, record: LeaderElectionRecord) -> str:
        """Create the Lease; returns its resourceVersion. `LockConflictError` if it exists."""
        ...

    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str:
        """Replace the Lease's spec if it is still at `resource_version`; returns the new one."""
        ...


def _micro_time(value: datetime | None) -> str | None:
    # MicroTime must carry exactly six fractional digits; isoformat() drops them at .000000.
    if value is None:
        return None
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class KubernetesLeaseLock:
    """A `LeaseLock` on a real Lease object."""

    def __init__(
        self,
        api_client: client.ApiClient,
        namespace: str,
        name: str,
        *,
        request_timeout: float = DEFAULT_RENEW_DEADLINE,
    ) -> None:
        self._api = client.CoordinationV1Api(api_client)
        self.namespace = namespace
        self.name = name
        self._timeout = request_timeout

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"

    async def get(self) -> tuple[LeaderElectionRecord, str] | None:
        try:
            lease = await self._api.read_namespaced_lease(
                self.name, self.namespace, _request_timeout=self._timeout
            )
        except ApiException as error:
            if error.status == 404:
                return None
            raise
        spec = lease.spec
        record = LeaderElectionRecord(
            holder_identity=(spec.holder_identity if spec else None) or "",
            lease_duration_seconds=(spec.lease_duration_seconds if spec else None) or 0,
            acquire_time=spec.acquire_time if spec else None,
            renew_time=spec.renew_time if spec else None,
            lease_transitions=(spec.lease_transitions if spec else None) or 0,
        )
        return record, str(lease.metadata.resource_version)

    def _body(self, record: LeaderElectionRecord, resource_version: str | None) -> Any:
        meta: dict[str, Any] = {"name": self.name, "namespace": self.namespace}
        if resource_version is not None:
            meta["resourceVersion"] = resource_version
        spec: dict[str, Any] = {
            "holderIdentity": record.holder_identity,
            "leaseDurationSeconds": record.lease_duration_seconds,
            "leaseTransitions": record.lease_transitions,
        }
        if record.acquire_time is not None:
            spec["acquireTime"] = _micro_time(record.acquire_time)
        if record.renew_time is not None:
            spec["renewTime"] = _micro_time(record.renew_time)
        # A plain dict body: the generated model would serialise datetimes with isoformat().
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": meta,
            "spec": spec,
        }

    async def create(self, record: LeaderElectionRecord) -> str:
        body = cast(client.V1Lease, self._body(record, None))
        return await _written(
            self._api.create_namespaced_lease(self.namespace, body, _request_timeout=self._timeout)
        )

    async def update(self, record: LeaderElectionRecord, resource_version: str) -> str:
        body = cast(client.V1Lease, self._body(record, resource_version))
        return await _written(
            self._api.replace_namespaced_lease(
                self.name, self.namespace, body, _request_timeout=self._timeout
            )
        )


async def _written(write: Awaitable[Any]) -> str:
    """The resourceVersion a create or a replace of the Lease gave it. A 409 (another holder
    created it first, or it changed since it was read) is a LockConflictError."""
    try:
        lease = await write
    except ApiException as error:
        if error.status == 409:
            raise LockConflictError(str(error.reason)) from error
        raise
    return str(lease.metadata.resource_version)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LeaderElector:
    """Campaigns for a Lease and keeps it; see the module docstring for the contract."""

    def __init__(
        self,
        config: LeaderElectionConfig,
        lock: LeaseLock,
        *,
        clock: Clock | None = None,
        wall_clock: Callable[[], datetime] = _utc_now,
        on_started_leading: Callable[[], Awaitable[None]] | None = None,
        on_stopped_leading: Callable[[], Awaitable[None]] | None = None,
        on_new_leader: Callable[[str], None] | None = None,
        metrics: RuntimeMetrics | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.config = config
        self._lock = lock
        self._clock: Clock = clock or MonotonicClock()
        self._wall_clock = wall_clock
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._metrics = metrics
        self._jitter = jitter
        self._observed: LeaderElectionRecord | None = None
        self._observed_rv: str | None = None
        self._observed_time = 0.0
        self._leading = False
        self._reported_leader: str | None = None
        self._stopping = False
        self._inner: asyncio.Task[None] | None = None
        self.lost = False
        self.running = False
        self._log = log.bind(lease=lock.describe(), identity=config.identity)
        self._set_leading(False)

    @property
    def is_leader(self) -> bool:
        """True while this candidate holds the Lease (as it last saw it)."""
        return self._leading

    @property
    def leader(self) -> str | None:
        """The holder this candidate last observed ("" when the Lease was released)."""
        return self._observed.holder_identity if self._observed is not None else None

    def _lease_seconds(self) -> int:
        return max(1, math.ceil(self.config.lease_duration))

    def _observe(self, record: LeaderElectionRecord, resource_version: str | None) -> None:
        if record != self._observed:
            self._observed = record
            self._observed_time = self._clock.now()
        self._observed_rv = resource_version
        if record.holder_identity != self._reported_leader:
            self._reported_leader = record.holder_identity
            self._log.info("new leader observed", leader=record.holder_identity or None)
            if self._on_new_leader is not None:
                self._on_new_leader(record.holder_identity)

    def _held_by_other(self, now: float) -> bool:
        observed = self._observed
        if observed is None or not observed.holder_identity:
            return False
        if observed.holder_identity == self.config.identity:
            return False
        return self._observed_time + observed.lease_duration_seconds > now

    async def try_acquire_or_renew(self) -> bool:
        """One try (client-go's tryAcquireOrRenew); True if this candidate holds the Lease."""
        wall = self._wall_clock()
        desired = LeaderElectionRecord(
            holder_identity=self.config.identity,
            lease_duration_seconds=self._lease_seconds(),
            acquire_time=wall,
            renew_time=wall,
            lease_transitions=0,
        )
        observed = self._observed
        now = self._clock.now()
        # Fast path: a leader whose lease is still valid writes without reading first.
        if (
            observed is not None
            and observed.holder_identity == self.config.identity
            and self._observed_rv is not None
            and self._observed_time + observed.lease_duration_seconds > now
        ):
            renewed = replace(
                desired,
                acquire_time=observed.acquire_time,
                lease_transitions=observed.lease_transitions,
            )
            try:
                rv = await self._lock.update(renewed, self._observed_rv)
            except LockConflictError:
                pass
            else:
                self._observe(renewed, rv)
                return True

        got = await self._lock.get()
        if got is None:
            try:
                rv = await self._lock.create(desired)
            except LockConflictError:
                return False
            self._observe(desired, rv)
            return True
        current, rv = got
        self._observe(current, rv)
        if self._held_by_other(self._clock.now()):
            return False
        if current.holder_identity == self.config.identity:
            desired = replace(
                desired,
                acquire_time=current.acquire_time,
                lease_transitions=current.lease_transitions,
            )
        else:
            desired = replace(desired, lease_transitions=current.lease_transitions + 1)
        try:
            new_rv = await self._lock.update(desired, rv)
        except LockConflictError:
            return False
        self._observe(desired, new_rv)
        return True

    async def _try(self) -> bool:
        try:
            return await self.try_acquire_or_renew()
        except Exception as error:
            self._log.warning("lease try failed", error=str(error) or type(error).__name__)
            return False

    async def _try_within(self, seconds: float) -> bool:
        """One try, abandoned (as failed) if it is not done within `seconds` on the clock."""
        attempt = asyncio.ensure_future(self._try())
        timer = asyncio.ensure_future(self._clock.sleep(max(0.0, seconds)))
        try:
            await asyncio.wait({attempt, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
        if not attempt.done():
            attempt.cancel()
            return False
        return attempt.result()

    async def _acquire(self) -> None:
        self._log.info("attempting to acquire leader lease")
        while not await self._try():
            period = self.config.retry_period
            await self._clock.sleep(period + self._jitter() * self.config.jitter_factor * period)
        self._log.info("acquired leader lease")

    async def _renew(self) -> None:
        """Renew every retry period; return when renewal fails for `renew_deadline`."""
        while True:
            deadline = self._clock.now() + self.config.renew_deadline
            renewed = False
            while True:
                remaining = deadline - self._clock.now()
                if remaining <= 0:
                    break
                if await self._try_within(remaining):
                    renewed = True
                    break
                await self._clock.sleep(min(self.config.retry_period, remaining))
            if not renewed:
                return
            await self._clock.sleep(self.config.retry_period)

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        if self._metrics is not None:
            self._metrics.is_leader.labels(self.config.name).set(1 if leading else 0)

    async def _campaign(self) -> None:
        await self._acquire()
        self._set_leading(True)
        if self._on_started is not None:
            await self._on_started()
        await self._renew()
        self._set_leading(False)
        self.lost = True
        self._log.error("leader lease lost: renewal failed within the renew deadline")

    async def run(self) -> None:
        """Campaign and lead until leadership is lost or `stop()`; see the module docstring."""
        self._stopping = False
        self.running = True
        self._inner = asyncio.get_running_loop().create_task(self._campaign())
        try:
            await self._inner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._stopping or (current is not None and current.cancelling() > 0):
                raise
        finally:
            self.running = False
        was_leading = self._leading or self.lost
        if self._stopping and self._leading:
            await self.release()
        self._set_leading(False)
        if was_leading and self._on_stopped is not None:
            await self._on_stopped()

    def stop(self) -> None:
        """End `run()`: stop campaigning or renewing; a held Lease is then released."""
        self._stopping = True
        if self._inner is not None:
            self._inner.cancel()

    async def release(self) -> bool:
        """Give the Lease up at once (holder empty, duration 1 s); True if released."""
        observed = self._observed
        if (
            observed is None
            or observed.holder_identity != self.config.identity
            or self._observed_rv is None
        ):
            return True
        wall = self._wall_clock()
        record = LeaderElectionRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=wall,
            renew_time=wall,
            lease_transitions=observed.lease_transitions,
        )
        try:
            rv = await self._lock.update(record, self._observed_rv)
        except Exception as error:
            self._log.warning("failed to release leader lease", error=str(error))
            return False
        self._observe(record, rv)
        self._set_leading(False)
        self._log.info("released leader lease")
        return True
