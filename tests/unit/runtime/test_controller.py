"""The controller follows what reconcile returns, as controller-runtime does (fake clock)."""

from __future__ import annotations

import asyncio
import random
import socket
import ssl
from collections import defaultdict
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.controller import (
    OUTAGE_ESCALATE_EVERY,
    Controller,
    Result,
    controller_owner,
    is_unreachable,
    outage_escalates,
)
from ptah_operator.runtime.informer import Informer, ListResult, WatchEvent
from ptah_operator.runtime.metrics import RuntimeMetrics
from ptah_operator.runtime.ratelimit import OUTAGE_QPS, OutageRateLimiter
from tests.unit.runtime.scripted import ScriptedListWatch, cm


class Script:
    """A reconcile that answers from a per-key list of results and records each call."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.answers: dict[str, list[Result | Exception]] = defaultdict(list)
        self.calls: list[tuple[str, float]] = []

    async def __call__(self, key: str) -> Result:
        self.calls.append((key, self.clock.now()))
        answers = self.answers[key]
        answer = answers.pop(0) if answers else Result.success()
        if isinstance(answer, Exception):
            raise answer
        return answer


async def running(
    clock: FakeClock,
    reconcile: Any,
    objects: list[dict[str, Any]],
    workers: int = 1,
    outage_limiter: OutageRateLimiter | None = None,
) -> tuple[Controller, Informer, ScriptedListWatch, RuntimeMetrics, list[asyncio.Task[None]]]:
    lw = ScriptedListWatch()
    lw.lists.append(ListResult(objects, "10"))
    informer = Informer(lw, name="cms", clock=clock)
    metrics = RuntimeMetrics(CollectorRegistry())
    controller = Controller(
        "test",
        reconcile,
        workers=workers,
        clock=clock,
        metrics=metrics,
        outage_limiter=outage_limiter,
    )
    controller.watch(informer)
    tasks = [asyncio.create_task(informer.run()), asyncio.create_task(controller.run())]
    await clock.settle()
    return controller, informer, lw, metrics, tasks


async def stop(controller: Controller, informer: Informer, tasks: list[asyncio.Task[None]]) -> None:
    await controller.shutdown(0)
    informer.stop()
    await asyncio.gather(*tasks)


def reconciles(metrics: RuntimeMetrics, result: str) -> float:
    value = metrics.registry.get_sample_value(
        "ptah_reconcile_total", {"controller": "test", "result": result}
    )
    return value or 0.0


async def test_success_forgets_and_does_not_come_back() -> None:
    clock = FakeClock()
    script = Script(clock)
    controller, informer, _, metrics, tasks = await running(clock, script, [cm("a", "1")])
    await clock.advance(3600)
    assert [key for key, _ in script.calls] == ["ns/a"]
    assert controller.queue.num_requeues("ns/a") == 0
    assert reconciles(metrics, "success") == 1
    await stop(controller, informer, tasks)


async def test_errors_retry_with_per_key_backoff_then_success_forgets() -> None:
    clock = FakeClock()
    script = Script(clock)
    script.answers["ns/a"] = [
        Result.retry("database not reachable"),
        RuntimeError("bug"),
        Result.retry("still"),
        Result.success(),
    ]
    controller, informer, _, metrics, tasks = await running(clock, script, [cm("a", "1")])
    await clock.advance(1)
    times = [t - script.calls[0][1] for _, t in script.calls]
    assert times == pytest.approx([0, 0.005, 0.015, 0.035])
    assert controller.queue.num_requeues("ns/a") == 0
    assert reconciles(metrics, "error") == 3
    assert reconciles(metrics, "success") == 1
    await stop(controller, informer, tasks)


async def test_requeue_after_forgets_failures_and_comes_back_on_time() -> None:
    clock = FakeClock()
    script = Script(clock)
    script.answers["ns/a"] = [Result.retry("x"), Result.requeue(after=30)]
    controller, informer, _, metrics, tasks = await running(clock, script, [cm("a", "1")])
    await clock.advance(0.005)
    assert len(script.calls) == 2
    assert controller.queue.num_requeues("ns/a") == 0
    await clock.advance(29.99)
    assert len(script.calls) == 2
    await clock.advance(0.02)
    assert len(script.calls) == 3
    assert reconciles(metrics, "requeue_after") == 1
    await stop(controller, informer, tasks)


async def test_terminal_error_is_not_retried() -> None:
    clock = FakeClock()
    script = Script(clock)
    script.answers["ns/a"] = [Result.terminal_error("spec can never work")]
    controller, informer, _, metrics, tasks = await running(clock, script, [cm("a", "1")])
    await clock.advance(3600)
    assert len(script.calls) == 1
    assert reconciles(metrics, "terminal_error") == 1
    await stop(controller, informer, tasks)


async def test_a_conflict_requeues_rate_limited() -> None:
    clock = FakeClock()
    script = Script(clock)
    script.answers["ns/a"] = [ApiException(status=409, reason="Conflict")]
    controller, informer, _, metrics, tasks = await running(clock, script, [cm("a", "1")])
    await clock.advance(0.005)
    assert len(script.calls) == 2
    assert reconciles(metrics, "conflict") == 1
    await stop(controller, informer, tasks)


async def test_events_while_a_key_is_reconciled_bring_it_back_once_never_in_parallel() -> None:
    clock = FakeClock()
    active: set[str] = set()
    overlaps: list[str] = []
    calls: list[str] = []

    async def slow(key: str) -> Result:
        if key in active:
            overlaps.append(key)
        active.add(key)
        calls.append(key)
        await clock.sleep(10)
        active.discard(key)
        return Result.success()

    controller, informer, lw, _, tasks = await running(clock, slow, [cm("a", "1")], workers=4)
    assert calls == ["ns/a"]
    # Three changes arrive while the first reconcile runs.
    lw.watches.append([WatchEvent("MODIFIED", cm("a", str(rv))) for rv in (11, 12, 13)])
    informer.stop()
    await tasks[0]
    tasks[0] = asyncio.create_task(informer.run())
    await clock.advance(1)
    assert calls == ["ns/a"]
    await clock.advance(30)
    assert calls == ["ns/a", "ns/a"]
    assert overlaps == []
    await stop(controller, informer, tasks)


async def test_owned_objects_enqueue_their_controlling_owner() -> None:
    owner = controller_owner("PtahSchema", "operator.ptah.run")
    job = cm(
        "apply-1",
        "1",
        ownerReferences=[
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "1"},
            {
                "apiVersion": "operator.ptah.run/v1alpha1",
                "kind": "PtahSchema",
                "name": "orders",
                "uid": "2",
                "controller": True,
            },
        ],
    )
    assert owner(job) == ["ns/orders"]
    not_controller = cm(
        "x",
        "1",
        ownerReferences=[
            {"apiVersion": "operator.ptah.run/v1alpha1", "kind": "PtahSchema", "name": "o"}
        ],
    )
    assert owner(not_controller) == []
    other_group = cm(
        "y",
        "1",
        ownerReferences=[
            {"apiVersion": "x.io/v1", "kind": "PtahSchema", "name": "o", "controller": True}
        ],
    )
    assert owner(other_group) == []


async def test_shutdown_lets_reconciles_in_flight_finish_within_the_grace_period() -> None:
    clock = FakeClock()
    finished: list[str] = []

    async def reconcile(key: str) -> Result:
        await clock.sleep(5 if key == "ns/quick" else 100)
        finished.append(key)
        return Result.success()

    controller, informer, _, _, tasks = await running(
        clock, reconcile, [cm("quick", "1"), cm("slow", "2"), cm("queued", "3")], workers=2
    )
    shutdown = asyncio.create_task(controller.shutdown(grace_period=10))
    await clock.advance(10)
    await asyncio.wait_for(shutdown, 1)
    assert finished == ["ns/quick"], "slow was cancelled at the end of the grace; queued never ran"
    await asyncio.wait_for(tasks[1], 1)
    informer.stop()
    await tasks[0]


class Outage:
    """A reconcile that cannot reach the API server until `until`, then succeeds."""

    def __init__(self, clock: FakeClock, until: float) -> None:
        self.clock = clock
        self.until = until
        self.calls: list[tuple[str, float]] = []
        self.recovered: dict[str, float] = {}

    async def __call__(self, key: str) -> Result:
        now = self.clock.now()
        self.calls.append((key, now))
        if now < self.until:
            raise ConnectionRefusedError("connection refused")
        self.recovered.setdefault(key, now)
        return Result.success()


@pytest.mark.parametrize(
    ("keys", "per_second", "peak_per_second", "back_within"),
    [(1, 1.0, 1.0, 8.0), (1000, OUTAGE_QPS, 1.25 * OUTAGE_QPS, 155.0)],
)
async def test_an_api_outage_retries_from_the_per_key_limiter_and_recovers_promptly(
    keys: int, per_second: float, peak_per_second: float, back_within: float
) -> None:
    # Issue #18 (backoff built up in an outage delayed recovery); the real limiter classes on
    # a simulated clock, 600 s without an API server. The jitter is drawn from a seeded
    # generator: unseeded, one run in six put a 10-second window of the 1,000 keys' retries
    # above 10 a second (seen in CI, session 11); the limiter holds the rate under `qps` on
    # average, and the jitter can bunch a window by a quarter.
    clock = FakeClock()
    outage = Outage(clock, until=clock.now() + 600)
    objects = [cm(f"k{i}", "1") for i in range(keys)]
    limiter = OutageRateLimiter(rng=random.Random(0))
    controller, informer, _, _, tasks = await running(
        clock, outage, objects, workers=2, outage_limiter=limiter
    )
    start = clock.now()
    for _ in range(800):
        await clock.advance(1)
    # Retries per second stay bounded (the first ten seconds hold every key's first attempt).
    windows: dict[int, int] = defaultdict(int)
    for _, at in outage.calls:
        if start + 10 <= at < outage.until:
            windows[int((at - start) // 10)] += 1
    assert sum(windows.values()) / (outage.until - start - 10) <= per_second
    assert max(windows.values()) <= peak_per_second * 10
    # Every key is back soon after the server is.
    assert len(outage.recovered) == keys
    assert max(outage.recovered.values()) - outage.until <= back_within
    # The shared bucket was not spent during the outage: a new key's first retry waits only
    # its own 5 ms.
    assert controller.queue.rate_limiter.when("ns/new") == pytest.approx(0.005)
    await stop(controller, informer, tasks)


@pytest.mark.parametrize(
    "error",
    [
        ConnectionRefusedError(111, "refused"),
        ConnectionResetError(104, "reset"),
        TimeoutError(),
        socket.gaierror(-2, "Name or service not known"),
        aiohttp.ServerDisconnectedError(),
        ApiException(status=503),
    ],
    ids=type,
)
def test_a_connection_error_is_an_outage(error: BaseException) -> None:
    assert is_unreachable(error)


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError(2, "no such file"),
        PermissionError(13, "permission denied"),
        OSError(28, "no space left on device"),
        ssl.SSLCertVerificationError("certificate verify failed"),
        ApiException(status=500),
    ],
    ids=type,
)
def test_another_os_error_is_no_outage(error: BaseException) -> None:
    # Fifth review: every OSError was taken as the API server being away, so a fault of the
    # manager's own (a file, a certificate) was retried quietly for ever as an outage.
    assert not is_unreachable(error)


def test_a_long_outage_is_escalated_every_n_retries() -> None:
    assert [n for n in range(1, 3 * OUTAGE_ESCALATE_EVERY + 1) if outage_escalates(n)] == [
        OUTAGE_ESCALATE_EVERY,
        2 * OUTAGE_ESCALATE_EVERY,
        3 * OUTAGE_ESCALATE_EVERY,
    ]


MARKER = "postgresql://app:hunter2@db/orders DROP TABLE accounts"


async def test_a_failed_reconcile_is_logged_by_class_and_frames_never_its_text() -> None:
    # Issue #18: an exception's message is whatever raised it held (an API server's answer,
    # a database's error, a Secret's value); the log gets its class and where it was raised.
    clock = FakeClock()
    script = Script(clock)
    conflict = ApiException(status=409, reason=MARKER)
    conflict.body = MARKER.encode()
    try:
        raise ValueError(MARKER) from KeyError(MARKER)
    except ValueError as raised:
        failure = raised
    script.answers["ns/a"] = [failure, conflict]
    with capture_logs() as logs:
        controller, informer, _, _, tasks = await running(clock, script, [cm("a", "1")])
        await clock.advance(1)
        await stop(controller, informer, tasks)
    assert MARKER not in repr(logs)
    failed = [e for e in logs if e["event"] == "reconcile failed"]
    assert len(failed) == 1
    assert failed[0]["error"] == "ValueError"
    assert failed[0]["cause"] == "KeyError"
    assert failed[0]["log_level"] == "error"
    assert any("test_controller.py:" in frame for frame in failed[0]["frames"])
    requeued = [e for e in logs if e["event"] == "conflict, requeue"]
    assert [e["error"] for e in requeued] == ["ApiException"]
