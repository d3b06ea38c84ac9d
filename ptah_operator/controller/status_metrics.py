"""Prometheus gauges read from the caches at each scrape: the facts the alert rules need.

Contract: `StatusCollector(resources, leases, annotation, jobs)` is a prometheus-client collector over the
informer stores of every family's resources (by family name) and of the realm Leases. Each
scrape reads what the statuses and Leases say now, so the numbers need no bookkeeping, are the
same on a standby (its caches are warm) and right after a restart. Labels name resources by
`namespace` and `name` (bounded by the number of resources, as kube-state-metrics does) and
never carry operation ids, plan names or free text:
- `ptah_resource_unresolved_run{family,namespace,name,outcome}`: 1 while status.unresolvedRun
  holds the resource (outcome `Partial` or `Unknown`);
- `ptah_resource_next_reconciliation_timestamp_seconds{family,namespace,name}`: the status's
  nextReconciliationTime, as Unix time;
- `ptah_operation_deadline_timestamp_seconds{family,namespace,name,type}`: when the active
  operation's Job reaches its deadline (the Job's startTime plus its activeDeadlineSeconds;
  before the Job is in the cache, a first attempt's claim startedAt plus the deadline every
  operation Job gets; an attempt waiting for its retry has none);
- `ptah_plan_awaiting_approval_since_timestamp_seconds{family,namespace,name}`: since when a
  resource in phase AwaitingApproval has waited (its current plan's PlanPublished entry,
  else the Ready condition's last transition);
- `ptah_realm_lease_held_past_run{lease}`: 1 for a realm Lease held and unexpired while the
  resource that took it has no operation in flight and no resource's claim names its holder.

`CertificateExpiry(path)` exports `ptah_webhook_certificate_expiry_timestamp_seconds`, the
serving certificate's notAfter, read from the file at each scrape (a rotated file counts).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from cryptography import x509
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from ptah_operator.api.fields import parse_time
from ptah_operator.reconcile.jobs import ACTIVE_DEADLINE_SECONDS
from ptah_operator.runtime.store import Store

AWAITING_APPROVAL = "AwaitingApproval"


def _utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def awaiting_since(status: Mapping[str, Any]) -> dt.datetime | None:
    """Since when a resource in AwaitingApproval has waited for an approval."""
    if status.get("phase") != AWAITING_APPROVAL:
        return None
    plan = status.get("plan") or {}
    entries = (status.get("journal") or {}).get("entries") or []
    published = [
        parse_time(e.get("time"))
        for e in entries
        if e.get("type") == "PlanPublished"
        and (not plan.get("operationID") or e.get("operationID") == plan.get("operationID"))
    ]
    times = [t for t in published if t is not None]
    if times:
        return max(times)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            return parse_time(condition.get("lastTransitionTime"))
    return None


def _lease_held(lease: Mapping[str, Any], now: dt.datetime) -> str | None:
    """The Lease's holder while it is held and unexpired, else None."""
    spec = lease.get("spec") or {}
    holder = spec.get("holderIdentity") or None
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    if holder is None or renewed is None or renewed + dt.timedelta(seconds=duration) < now:
        return None
    return str(holder)


class StatusCollector(Collector):
    def __init__(
        self,
        resources: Mapping[str, Store],
        leases: Store,
        holder_uid_annotation: str,
        jobs: Store | None = None,
        now: Callable[[], dt.datetime] = _utcnow,
    ) -> None:
        self.resources = resources
        self.leases = leases
        self.holder_uid_annotation = holder_uid_annotation
        self.jobs = jobs if jobs is not None else Store()
        self.now = now

    def collect(self) -> Iterator[GaugeMetricFamily]:
        resource = ["family", "namespace", "name"]
        unresolved = GaugeMetricFamily(
            "ptah_resource_unresolved_run",
            "1 while a Partial or Unknown run holds the resource (status.unresolvedRun).",
            labels=[*resource, "outcome"],
        )
        next_read = GaugeMetricFamily(
            "ptah_resource_next_reconciliation_timestamp_seconds",
            "The resource's status.nextReconciliationTime, as Unix time.",
            labels=resource,
        )
        deadline = GaugeMetricFamily(
            "ptah_operation_deadline_timestamp_seconds",
            "When the active operation's Job reaches its deadline, as Unix time.",
            labels=[*resource, "type"],
        )
        awaiting = GaugeMetricFamily(
            "ptah_plan_awaiting_approval_since_timestamp_seconds",
            "Since when a resource in AwaitingApproval has waited, as Unix time.",
            labels=resource,
        )
        busy_uids: set[str] = set()
        claimed: set[str] = set()
        for family, store in sorted(self.resources.items()):
            for obj in store.list():
                meta, status = _meta(obj), _status(obj)
                labels = [family, str(meta.get("namespace")), str(meta.get("name"))]
                run = status.get("unresolvedRun") or {}
                if run:
                    unresolved.add_metric([*labels, str(run.get("outcome"))], 1)
                upcoming = parse_time(status.get("nextReconciliationTime"))
                if upcoming is not None:
                    next_read.add_metric(labels, upcoming.timestamp())
                claim = status.get("activeOperation") or {}
                if claim:
                    busy_uids.add(str(meta.get("uid")))
                    claimed.add(str(claim.get("operationID")))
                    ends = self._deadline(labels[1], claim)
                    if ends is not None:
                        deadline.add_metric([*labels, str(claim.get("type"))], ends)
                since = awaiting_since(status)
                if since is not None:
                    awaiting.add_metric(labels, since.timestamp())
        yield from (unresolved, next_read, deadline, awaiting)
        yield self._leases(busy_uids, claimed)

    def _deadline(self, namespace: str, claim: Mapping[str, Any]) -> float | None:
        job = self.jobs.get(f"{namespace}/{claim.get('jobName')}") if claim.get("jobName") else None
        if job is not None:
            started = parse_time((job.get("status") or {}).get("startTime"))
            limit = (job.get("spec") or {}).get("activeDeadlineSeconds")
            if started is None or limit is None:
                return None
            return started.timestamp() + int(limit)
        if claim.get("retryAt") or int(claim.get("attempt") or 1) > 1:
            return None
        claimed = parse_time(claim.get("startedAt"))
        return None if claimed is None else claimed.timestamp() + ACTIVE_DEADLINE_SECONDS

    def _leases(self, busy_uids: set[str], claimed: set[str]) -> GaugeMetricFamily:
        held_past = GaugeMetricFamily(
            "ptah_realm_lease_held_past_run",
            "1 for a realm Lease held while no operation in flight accounts for it.",
            labels=["lease"],
        )
        now = self.now()
        for lease in self.leases.list():
            holder = _lease_held(lease, now)
            if holder is None or holder in claimed:
                continue
            owner = (_meta(lease).get("annotations") or {}).get(self.holder_uid_annotation)
            if owner is not None and owner in busy_uids:
                continue
            held_past.add_metric([str(_meta(lease).get("name"))], 1)
        return held_past


class CertificateExpiry(Collector):
    def __init__(self, path: Path) -> None:
        self.path = path

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "ptah_webhook_certificate_expiry_timestamp_seconds",
            "When the serving certificate of the webhooks and result endpoint expires.",
        )
        try:
            certificate = x509.load_pem_x509_certificate(self.path.read_bytes())
        except (OSError, ValueError):
            yield family
            return
        family.add_metric([], certificate.not_valid_after_utc.timestamp())
        yield family
