"""What the manager remembers per resource is bounded, and forgotten once the resource is gone
(issue #17): resources created and deleted in a loop leave nothing behind in the work queue,
the expectations, the Job refusals, the Event filter or the metrics' label sets."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry

from ptah_operator.controller.executor import JobRefusals
from ptah_operator.controller.expectations import Expectations
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.world import ProblemOnsets
from ptah_operator.runtime.clock import FakeClock
from ptah_operator.runtime.event_filter import EventSpamFilter
from ptah_operator.runtime.workqueue import RateLimitingQueue


async def test_the_waiting_heap_drops_superseded_entries() -> None:
    """A key requeued far ahead (its next read) and then sooner (an expectation poll), again
    and again, or deleted meanwhile, left an entry per round in the heap until its time."""
    clock = FakeClock()
    queue: RateLimitingQueue[str] = RateLimitingQueue("bounds", clock=clock)
    for round_ in range(5_000):
        for key in ("ns/a", "ns/b"):
            queue.add_after(key, 3600.0 - round_ * 0.5)
    assert queue.waiting() == 2
    assert queue.held() <= 2 * queue.waiting() + 64
    for key in (f"ns/r-{i}" for i in range(1_000)):
        queue.add_rate_limited(key)
        queue.forget(key)
        assert queue.num_requeues(key) == 0
    assert queue.held() <= 2 * queue.waiting() + 64
    queue.shut_down()
    await asyncio.sleep(0)


def test_expectations_of_deleted_resources_are_forgotten() -> None:
    expectations = Expectations(FakeClock())
    for i in range(1_000):
        key = f"ns/r-{i}"
        expectations.wrote(key, "1")
        expectations.created_job(key, f"ns/job-{i}")
        expectations.forget(key)  # the pass that found the resource gone
    assert len(expectations) == 0


def test_refusals_keep_the_latest_per_resource_and_none_of_a_deleted_one() -> None:
    refusals = JobRefusals()
    for i in range(100):
        refusals.refused("ns/a", "uid-a", f"ptah-apply-{i:010x}", "denied")
    held = refusals.of("ns/a", "uid-a")
    assert len(held) == JobRefusals.MAX_PER_RESOURCE
    assert f"ptah-apply-{99:010x}" in held
    for i in range(1_000):
        refusals.refused(f"ns/r-{i}", f"uid-{i}", "ptah-apply-1", "denied")
        refusals.forget(f"ns/r-{i}")
    refusals.created("ns/a", f"ptah-apply-{99:010x}")
    assert len(refusals) == JobRefusals.MAX_PER_RESOURCE - 1
    for job in list(refusals.of("ns/a", "uid-a")):
        refusals.created("ns/a", job)
    assert len(refusals) == 0


def test_the_event_filter_holds_at_most_max_objects_and_forgets_deleted_ones() -> None:
    spam = EventSpamFilter(max_objects=100, clock=FakeClock())
    for i in range(10_000):
        spam.admit(f"ns/r-{i}")
    assert len(spam) == 100
    for i in range(9_900, 10_000):
        spam.forget(f"ns/r-{i}")
    assert len(spam) == 0


def test_the_phase_gauge_has_no_label_set_per_resource() -> None:
    registry = CollectorRegistry()
    metrics = LifecycleMetrics(registry)
    for i in range(1_000):
        metrics.set_phase("PtahMigration", f"ns/r-{i}", "InSync")
    for i in range(1_000):
        metrics.forget("PtahMigration", f"ns/r-{i}")
    samples = [
        sample
        for family in registry.collect()
        for sample in family.samples
        if any(value.startswith("ns/") for value in sample.labels.values())
    ]
    assert samples == []
    assert registry.get_sample_value(
        "ptah_resources", {"family": "PtahMigration", "phase": "InSync"}
    ) in (0.0, None)


def test_problem_onsets_are_dropped_once_not_seen_for_their_memory() -> None:
    import datetime as dt

    onsets = ProblemOnsets()
    start = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    for i in range(1_000):
        onsets.since(f"job-{i}", "pod", start)
    onsets.since("job-last", "pod", start + ProblemOnsets.MEMORY + dt.timedelta(seconds=1))
    assert len(onsets) == 1
