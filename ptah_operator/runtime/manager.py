"""The manager: shared informers, controllers, leader election, probes and metrics, shutdown.

Contract:
- `informer(resource, namespace)` hands out one shared `Informer` per (resource, namespace);
  controllers built before `run()` register what they need. Every informer of a resource
  keeps its objects through one transform, whoever asks for it first:
  `ManagerOptions.transforms[resource.kind]` when the table names the kind, else
  `ManagerOptions.default_transform` (`drop_server_fields`: no managedFields, no
  last-applied annotation). Informers run on every replica,
  leader or not, so a standby's caches are warm when it takes over.
- Controllers run only while this replica leads (`ManagerOptions.leader_election`), or at
  once when leader election is off (then `ptah_leader_election_is_leader{name=""}` is 1 until
  shutdown, so "no replica leads" is never a false alarm for a single manager).
- HTTP on `metrics_bind_address` ("host:port"; ":8080" = every interface; port 0 = any free
  port, see `bound_port`; "0" = no server): `/metrics` (Prometheus text of the manager's
  registry), `/healthz` (200 while the event loop serves), `/readyz` (200 once every informer
  has synced and, with leader election, this replica is campaigning or leading; 503 with the
  reasons otherwise, and from the moment shutdown begins).
- `run(stop)` returns an exit code. When `stop` is set (SIGTERM/SIGINT in the CLI): stop
  taking work, give reconciles in flight `graceful_shutdown_timeout` seconds, then release the
  Lease, stop the informers and the server: 0. When leadership is lost, controllers are
  cancelled at once (another replica may already lead): 1. When an informer or controller
  ends unexpectedly: 1.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

import structlog
from aiohttp import web
from kubernetes_asyncio import client
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ptah_operator.runtime.clock import Clock, MonotonicClock
from ptah_operator.runtime.controller import Controller
from ptah_operator.runtime.informer import Informer, Transform, drop_server_fields
from ptah_operator.runtime.leaderelection import (
    KubernetesLeaseLock,
    LeaderElectionConfig,
    LeaderElector,
    LeaseLock,
)
from ptah_operator.runtime.logging import error_fields
from ptah_operator.runtime.metrics import RuntimeMetrics
from ptah_operator.runtime.resources import Resource, list_watch_for
from ptah_operator.runtime.store import IndexFunc

log = structlog.get_logger(__name__)

DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT = 30.0
EXIT_OK = 0
EXIT_FAILED = 1


@dataclass(frozen=True)
class ManagerOptions:
    metrics_bind_address: str = ":8080"
    leader_election: LeaderElectionConfig | None = None
    graceful_shutdown_timeout: float = DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT
    resync_period: float | None = None
    transforms: Mapping[str, Transform] = field(default_factory=dict)
    """What each kind's informers keep of an object, by kind (see `Informer`)."""
    default_transform: Transform | None = drop_server_fields
    """The transform of a kind `transforms` does not name (None: keep everything)."""


def parse_bind_address(address: str) -> tuple[str | None, int] | None:
    """(host, port) of "host:port" / ":port"; None for "0" (no server)."""
    if address in ("0", ""):
        return None
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"bind address {address!r} is not host:port")
    host = host.strip("[]")
    return (host or None), int(port)


class Manager:
    """Runs informers, controllers (while leading), leader election and the HTTP endpoints."""

    def __init__(
        self,
        api_client: client.ApiClient,
        options: ManagerOptions | None = None,
        *,
        metrics: RuntimeMetrics | None = None,
        clock: Clock | None = None,
        lease_lock: LeaseLock | None = None,
    ) -> None:
        self.api_client = api_client
        self.options = options or ManagerOptions()
        self.metrics = metrics or RuntimeMetrics()
        self.clock: Clock = clock or MonotonicClock()
        self._informers: dict[tuple[Resource, str | None], Informer] = {}
        self._controllers: list[Controller] = []
        self._controller_tasks: list[asyncio.Task[None]] = []
        self._informer_tasks: list[asyncio.Task[None]] = []
        self._elector: LeaderElector | None = None
        le = self.options.leader_election
        if le is not None:
            lock = lease_lock or KubernetesLeaseLock(
                api_client, le.namespace, le.name, request_timeout=le.renew_deadline
            )
            self._elector = LeaderElector(
                le,
                lock,
                clock=self.clock,
                on_started_leading=self._start_controllers,
                metrics=self.metrics,
            )
        self._runner: web.AppRunner | None = None
        self._shutting_down = False
        self._wake = asyncio.Event()
        self._failure: str | None = None
        self.bound_port: int | None = None

    @property
    def elector(self) -> LeaderElector | None:
        return self._elector

    @property
    def controllers(self) -> list[Controller]:
        return list(self._controllers)

    def informer(
        self,
        resource: Resource,
        namespace: str | None = None,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> Informer:
        """The shared informer of `resource` (in `namespace`, or in all namespaces)."""
        key = (resource, namespace)
        informer = self._informers.get(key)
        if informer is None:
            name = f"{resource}/{namespace}" if namespace else str(resource)
            informer = Informer(
                list_watch_for(self.api_client, resource, namespace),
                name=name,
                indexers=indexers,
                resync_period=self.options.resync_period,
                clock=self.clock,
                transform=self.options.transforms.get(
                    resource.kind, self.options.default_transform
                ),
            )
            self._informers[key] = informer
        elif indexers:
            for index_name, func in indexers.items():
                if index_name not in informer.store.index_names():
                    informer.store.add_index(index_name, func)
        return informer

    def add_controller(self, controller: Controller) -> None:
        self._controllers.append(controller)

    def readiness(self) -> list[str]:
        """Why this replica is not ready (empty when it is)."""
        reasons: list[str] = []
        if self._shutting_down:
            reasons.append("shutting down")
        reasons.extend(
            f"informer {informer.name} not synced"
            for informer in self._informers.values()
            if not informer.has_synced
        )
        if self._elector is not None and not self._elector.running:
            reasons.append("leader election not running")
        return reasons

    async def run(self, stop: asyncio.Event) -> int:
        """Run until `stop` is set or something fatal happens; returns the exit code."""
        loop = asyncio.get_running_loop()
        await self._start_http()
        stop_relay = loop.create_task(self._relay(stop))
        for informer in self._informers.values():
            task = loop.create_task(informer.run(), name=f"informer {informer.name}")
            task.add_done_callback(self._unexpected_end)
            self._informer_tasks.append(task)
        elector_task: asyncio.Task[None] | None = None
        if self._elector is not None:
            elector_task = loop.create_task(self._elector.run(), name="leader-election")
            elector_task.add_done_callback(self._elector_ended)
        else:
            # The one manager leads without an election: it says so, unnamed (no Lease).
            self.metrics.is_leader.labels("").set(1)
            await self._start_controllers()
        try:
            await self._wake.wait()
        finally:
            stop_relay.cancel()
            code = await self._shutdown(elector_task)
        return code

    async def _relay(self, stop: asyncio.Event) -> None:
        await stop.wait()
        log.info("shutdown requested")
        self._wake.set()

    def _unexpected_end(self, task: asyncio.Task[None]) -> None:
        if self._shutting_down:
            return
        error = None if task.cancelled() else task.exception()
        fields = error_fields(error) if error is not None else {"error": "cancelled"}
        self._failure = f"{task.get_name()} ended: {fields['error']}"
        log.error("runtime task ended unexpectedly", task=task.get_name(), **fields)
        self._wake.set()

    def _elector_ended(self, task: asyncio.Task[None]) -> None:
        if self._shutting_down:
            return
        if self._elector is not None and self._elector.lost:
            self._failure = "leader election lost"
        else:
            error = None if task.cancelled() else task.exception()
            self._failure = f"leader election ended: {type(error).__name__}"
        self._wake.set()

    async def _start_controllers(self) -> None:
        loop = asyncio.get_running_loop()
        for controller in self._controllers:
            task = loop.create_task(controller.run(), name=f"controller {controller.name}")
            task.add_done_callback(self._unexpected_end)
            self._controller_tasks.append(task)
        log.info("controllers started", controllers=[c.name for c in self._controllers])

    async def _shutdown(self, elector_task: asyncio.Task[None] | None) -> int:
        self._shutting_down = True
        failure = self._failure
        grace = 0.0 if failure else self.options.graceful_shutdown_timeout
        log.info("stopping", reason=failure or "requested", grace_period=grace)
        await asyncio.gather(*(c.shutdown(grace) for c in self._controllers))
        if self._controller_tasks:
            await asyncio.wait(self._controller_tasks)
        if self._elector is not None and elector_task is not None:
            # Releasing after the reconciles ended: the next leader never overlaps with them.
            self._elector.stop()
            await asyncio.wait([elector_task])
        elif self._elector is None:
            self.metrics.is_leader.labels("").set(0)
        for informer in self._informers.values():
            informer.stop()
        if self._informer_tasks:
            await asyncio.wait(self._informer_tasks)
        await self._stop_http()
        log.info("stopped", exit_code=EXIT_FAILED if failure else EXIT_OK)
        return EXIT_FAILED if failure else EXIT_OK

    async def _start_http(self) -> None:
        bind = parse_bind_address(self.options.metrics_bind_address)
        if bind is None:
            return
        host, port = bind
        app = web.Application()
        app.router.add_get("/metrics", self._metrics_handler)
        app.router.add_get("/healthz", self._healthz_handler)
        app.router.add_get("/readyz", self._readyz_handler)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host=host, port=port)
        await site.start()
        addresses = self._runner.addresses
        if addresses:
            self.bound_port = int(addresses[0][1])
        log.info("serving metrics and probes", host=host or "*", port=self.bound_port)

    async def _stop_http(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _metrics_handler(self, request: web.Request) -> web.Response:
        body = generate_latest(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz_handler(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz_handler(self, request: web.Request) -> web.Response:
        reasons = self.readiness()
        if reasons:
            return web.Response(status=503, text="\n".join(reasons))
        return web.Response(text="ok")
