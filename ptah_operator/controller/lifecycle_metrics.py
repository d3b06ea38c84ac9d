"""Prometheus metrics of what the resources' lifecycles do: operations, plans, approvals, runs.

Contract: `LifecycleMetrics.observe(...)` is called once per carried-out Decision with the
status before and after it. Everything is derived from that pair, so the metrics say what the
status records and nothing the status could not show (no SQL, no names of databases):
- `ptah_operations_started_total{family,type}`: an operation claim appeared;
- `ptah_operations_finished_total{family,type,result}` and
  `ptah_operation_duration_seconds{family,type}`: a claim ended (result: the history verdict,
  the run's outcome, or `Failed` / `Withdrawn`; for a PtahSchema the Apply's outcome
  (`Succeeded` / `Unknown`), a Plan's `Changes` / `NoChanges`, or `Completed` / `Failed` /
  `Withdrawn`);
- `ptah_plans_published_total{family}`, `ptah_approvals_accepted_total{family}`,
  `ptah_runs_finished_total{family,outcome}` (RunFinished of a migration, ApplyFinished of a
  schema: the Apply runs), `ptah_operation_failures_total{family,type}`: new journal entries
  of those types;
- `ptah_resources{family,phase}`: how many resources are in each phase now.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter as Tally
from collections.abc import Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ptah_operator.api.fields import parse_time

_DURATION_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
SCHEMA_FAMILY = "PtahSchema"
_SCHEMA_WITHDRAWN_PHASES = frozenset({"Pending", "Suspended", "Blocked"})


def _schema_read_result(op_type: str, op_id: Any, after: Mapping[str, Any]) -> str:
    """How a schema read's claim ended, from the status it left (its result leaves no record
    of its own beside the plan a Plan produced)."""
    phase = after.get("phase")
    plan = after.get("plan") or {}
    if op_type == "Plan" and plan.get("operationID") == op_id:
        return "Changes"
    if op_type == "Plan" and phase == "InSync":
        return "NoChanges"
    if phase == "Failed":
        return "Failed"
    if phase in _SCHEMA_WITHDRAWN_PHASES:
        return "Withdrawn"
    return "Completed"


def _entries(status: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    journal = (status or {}).get("journal") or {}
    return list(journal.get("entries") or [])


def _entry_key(entry: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        entry.get("type"),
        entry.get("time"),
        entry.get("operationID"),
        entry.get("planName"),
        entry.get("approvalUID"),
        entry.get("count"),
    )


class LifecycleMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.operations_started = Counter(
            "ptah_operations_started",
            "Operation claims started, by family and operation type.",
            ["family", "type"],
            registry=registry,
        )
        self.operations_finished = Counter(
            "ptah_operations_finished",
            "Operation claims that ended, by family, type and result.",
            ["family", "type", "result"],
            registry=registry,
        )
        self.operation_duration = Histogram(
            "ptah_operation_duration_seconds",
            "From an operation's claim to its end.",
            ["family", "type"],
            buckets=_DURATION_BUCKETS,
            registry=registry,
        )
        self.plans_published = Counter(
            "ptah_plans_published", "Plans published.", ["family"], registry=registry
        )
        self.approvals_accepted = Counter(
            "ptah_approvals_accepted",
            "Approvals consumed by an Apply.",
            ["family"],
            registry=registry,
        )
        self.runs_finished = Counter(
            "ptah_runs_finished",
            "Apply runs that ended, by outcome.",
            ["family", "outcome"],
            registry=registry,
        )
        self.operation_failures = Counter(
            "ptah_operation_failures",
            "Failed operation attempts.",
            ["family", "type"],
            registry=registry,
        )
        self.results_unsealed = Counter(
            "ptah_result_records_unsealed",
            "ptah-result-* ConfigMaps whose seal does not open, ignored (each counted once).",
            ["family"],
            registry=registry,
        )
        self.resources = Gauge(
            "ptah_resources", "Resources by phase.", ["family", "phase"], registry=registry
        )
        self._phases: dict[tuple[str, str], str] = {}

    def observe(
        self,
        family: str,
        key: str,
        before: Mapping[str, Any] | None,
        after: Mapping[str, Any] | None,
        now: dt.datetime,
    ) -> None:
        """Record what changed between two statuses of one resource."""
        if after is None:
            return
        old_claim = (before or {}).get("activeOperation") or {}
        new_claim = after.get("activeOperation") or {}
        old_id, new_id = old_claim.get("operationID"), new_claim.get("operationID")
        if new_id and new_id != old_id:
            self.operations_started.labels(family, str(new_claim.get("type"))).inc()
        if old_id and old_id != new_id:
            self._finished(family, old_claim, after, now)
        self._journal(family, before, after)
        self.set_phase(family, key, after.get("phase"))

    def _finished(
        self, family: str, claim: Mapping[str, Any], after: Mapping[str, Any], now: dt.datetime
    ) -> None:
        op_type, op_id = str(claim.get("type")), claim.get("operationID")
        result = "Withdrawn"
        last_run = after.get("lastRun") or {}
        last_apply = after.get("lastApply") or {}
        history = after.get("history") or {}
        if last_run.get("operationID") == op_id:
            result = str(last_run.get("outcome"))
        elif last_apply.get("operationID") == op_id:
            result = str(last_apply.get("outcome") or "Unknown")
        elif history.get("operationID") == op_id and history.get("verdict"):
            result = str(history["verdict"])
        elif family == SCHEMA_FAMILY:
            result = _schema_read_result(op_type, op_id, after)
        elif any(
            c.get("type") == "ReconciliationFailed" and c.get("status") == "True"
            for c in after.get("conditions") or []
        ):
            result = "Failed"
        self.operations_finished.labels(family, op_type, result).inc()
        started = parse_time(claim.get("startedAt"))
        if started is not None:
            self.operation_duration.labels(family, op_type).observe(
                max(0.0, (now - started).total_seconds())
            )

    def _journal(
        self, family: str, before: Mapping[str, Any] | None, after: Mapping[str, Any]
    ) -> None:
        seen = Tally(_entry_key(e) for e in _entries(before))
        for entry in _entries(after):
            key = _entry_key(entry)
            if seen[key]:
                seen[key] -= 1
                continue
            kind = entry.get("type")
            if kind == "PlanPublished":
                self.plans_published.labels(family).inc()
            elif kind == "ApprovalAccepted":
                self.approvals_accepted.labels(family).inc()
            elif kind in ("RunFinished", "ApplyFinished"):
                self.runs_finished.labels(family, str(entry.get("outcome"))).inc()
            elif kind == "OperationFailed":
                self.operation_failures.labels(family, str(entry.get("operation"))).inc()

    def set_phase(self, family: str, key: str, phase: Any) -> None:
        previous = self._phases.get((family, key))
        current = str(phase) if phase else None
        if previous == current:
            return
        if previous is not None:
            self.resources.labels(family, previous).dec()
        if current is None:
            self._phases.pop((family, key), None)
        else:
            self._phases[(family, key)] = current
            self.resources.labels(family, current).inc()

    def forget(self, family: str, key: str) -> None:
        """The resource is gone: it is in no phase any more."""
        self.set_phase(family, key, None)
