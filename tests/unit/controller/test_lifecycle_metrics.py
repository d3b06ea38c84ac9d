"""Lifecycle metrics are derived from the status before and after a Decision."""

from __future__ import annotations

import datetime as dt
from typing import Any

from prometheus_client import CollectorRegistry

from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics

NOW = dt.datetime(2026, 11, 30, 12, 0, 30, tzinfo=dt.UTC)


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_a_claim_that_starts_and_ends_is_counted_with_its_result_and_duration() -> None:
    registry = CollectorRegistry()
    metrics = LifecycleMetrics(registry)
    claim = {"operationID": "op-1", "type": "Apply", "startedAt": "2026-11-30T12:00:00Z"}
    reading: dict[str, Any] = {"phase": "Applying", "activeOperation": claim}
    metrics.observe("PtahMigration", "ns/a", {"phase": "AwaitingApproval"}, reading, NOW)
    assert (
        _value(registry, "ptah_operations_started_total", family="PtahMigration", type="Apply") == 1
    )
    done = {
        "phase": "VerifyingHistory",
        "lastRun": {"operationID": "op-1", "outcome": "Applied"},
        "journal": {"entries": [{"type": "RunFinished", "time": "t", "outcome": "Applied"}]},
    }
    metrics.observe("PtahMigration", "ns/a", reading, done, NOW)
    assert (
        _value(
            registry,
            "ptah_operations_finished_total",
            family="PtahMigration",
            type="Apply",
            result="Applied",
        )
        == 1
    )
    assert (
        _value(
            registry, "ptah_operation_duration_seconds_sum", family="PtahMigration", type="Apply"
        )
        == 30
    )
    assert (
        _value(registry, "ptah_runs_finished_total", family="PtahMigration", outcome="Applied") == 1
    )
    # The same journal seen again counts nothing twice.
    metrics.observe("PtahMigration", "ns/a", done, done, NOW)
    assert (
        _value(registry, "ptah_runs_finished_total", family="PtahMigration", outcome="Applied") == 1
    )


def test_resources_by_phase_follow_each_resource() -> None:
    registry = CollectorRegistry()
    metrics = LifecycleMetrics(registry)
    metrics.set_phase("PtahMigration", "ns/a", "Reading")
    metrics.set_phase("PtahMigration", "ns/b", "Reading")
    metrics.set_phase("PtahMigration", "ns/a", "InSync")
    assert _value(registry, "ptah_resources", family="PtahMigration", phase="Reading") == 1
    assert _value(registry, "ptah_resources", family="PtahMigration", phase="InSync") == 1
    metrics.forget("PtahMigration", "ns/b")
    assert _value(registry, "ptah_resources", family="PtahMigration", phase="Reading") == 0
