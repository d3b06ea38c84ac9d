"""Prometheus metrics of the controller runtime, registered in a registry the caller gives.

Contract: build each class once per `CollectorRegistry` (prometheus-client refuses a second
metric of the same name in one registry) and hand the instance to the parts that record.
Names follow client-go / controller-runtime where a counterpart exists (`workqueue_*`,
labelled by queue `name`); the operator's own are prefixed `ptah_`.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# client-go's workqueue buckets: 10 ns up to 1000 s, a decade apart.
_QUEUE_BUCKETS = tuple(1e-8 * 10**i for i in range(12))
_RECONCILE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class WorkQueueMetrics:
    """Depth, adds, time in queue, work duration and retries, per queue name."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.depth = Gauge(
            "workqueue_depth", "Current depth of the work queue.", ["name"], registry=registry
        )
        self.adds = Counter(
            "workqueue_adds", "Adds handled by the work queue.", ["name"], registry=registry
        )
        self.queue_duration = Histogram(
            "workqueue_queue_duration_seconds",
            "How long an item stays in the work queue before it is taken.",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=registry,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long processing an item from the work queue takes.",
            ["name"],
            buckets=_QUEUE_BUCKETS,
            registry=registry,
        )
        self.retries = Counter(
            "workqueue_retries",
            "Rate-limited re-adds to the work queue.",
            ["name"],
            registry=registry,
        )


class ReconcileMetrics:
    """Reconciles by controller and result, and their duration."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.total = Counter(
            "ptah_reconcile",
            "Reconciles by controller and result "
            "(success, requeue_after, error, conflict, terminal_error).",
            ["controller", "result"],
            registry=registry,
        )
        self.duration = Histogram(
            "ptah_reconcile_duration_seconds",
            "Duration of one reconcile, by controller.",
            ["controller"],
            buckets=_RECONCILE_BUCKETS,
            registry=registry,
        )


class RuntimeMetrics:
    """Every metric the runtime records, in one registry."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self.workqueue = WorkQueueMetrics(self.registry)
        self.reconcile = ReconcileMetrics(self.registry)
        self.resources_observed = Counter(
            "ptah_resources_observed",
            "Objects seen by a controller's reconcile, by kind.",
            ["kind"],
            registry=self.registry,
        )
        self.is_leader = Gauge(
            "ptah_leader_election_is_leader",
            "1 while this replica holds the leader Lease, else 0.",
            ["name"],
            registry=self.registry,
        )
