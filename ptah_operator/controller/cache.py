"""What the manager's informers keep of each kind: only what a decision, an index, a watch or a
metric reads (issue #17).

Contract: `CACHE_TRANSFORMS` maps a kind to the transform its informers apply before an
object enters the store (`runtime.informer.Transform`); a kind it does not name keeps
everything but `drop_server_fields` drops (managedFields, kubectl's last-applied
annotation). Each transform keeps every field the readers read (world.py, indexes.py,
status_metrics.py, the executor's status write, the webhooks' cached lookups) and drops the
rest; a reader that starts to read another field adds it here (the unit test that builds the
World from transformed and from whole objects says when one is missing). No kind is watched
through a label selector: see docs/controller-runtime.md, "Memory", for why.

- Pod: all metadata; `status` with phase, reason, message, startTime and, per container, its
  name, state, lastState, ready and restartCount; no `spec`, only the digest of what its
  reporting container runs and reaches (witness.py, `ptahReportingDigest`).
- Job: all metadata; `status`; of `spec` the scalars (suspend, activeDeadlineSeconds,
  backoffLimit, ttlSecondsAfterFinished, ...), not `template` nor `selector` (the manager
  built the template; a decision reads the Job's conditions and its Pods), and the same
  digest of its template, to which a Pod's must be equal for its exit to witness a report.
- ConfigMap: kept whole (a user's source or policy ConfigMap is read from the cache, and the
  result records and plan pieces are read by their text), except a snapshot the operator made
  (`ptah-src-...`, labelled a snapshot, controlled by one of our kinds): a decision reads only
  its name, so its files are dropped (`data`, `binaryData`); the runner reads them from its
  mount, never the manager.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptah_operator.api.constants import GROUP, LABEL_SNAPSHOT, SNAPSHOT_NAME_PREFIX
from ptah_operator.controller.witness import KEPT_BY_TRANSFORM, reporting_digest
from ptah_operator.runtime.informer import Transform, drop_server_fields
from ptah_operator.runtime.store import KubeObject

POD_STATUS_KEPT = frozenset({"phase", "reason", "message", "startTime"})
CONTAINER_STATUS_KEPT = frozenset({"name", "state", "lastState", "ready", "restartCount"})
JOB_SPEC_DROPPED = frozenset({"template", "selector", "podFailurePolicy", "successPolicy"})


def _container_statuses(statuses: Any) -> list[dict[str, Any]]:
    if not isinstance(statuses, list):
        return []
    return [
        {k: v for k, v in status.items() if k in CONTAINER_STATUS_KEPT}
        for status in statuses
        if isinstance(status, dict)
    ]


def keep_pod(pod: KubeObject) -> KubeObject:
    """A Pod as the manager reads it: its metadata, phase and container states."""
    drop_server_fields(pod)
    status = pod.get("status")
    kept: dict[str, Any] = {
        k: v for k, v in pod.items() if k not in ("spec", "status", KEPT_BY_TRANSFORM)
    }
    digest = reporting_digest(pod.get("spec"))
    if digest is not None:  # (most Pods a cluster holds are not a Job's of ours)
        kept[KEPT_BY_TRANSFORM] = digest
    if isinstance(status, dict):
        trimmed = {k: v for k, v in status.items() if k in POD_STATUS_KEPT}
        for field in ("initContainerStatuses", "containerStatuses"):
            if field in status:
                trimmed[field] = _container_statuses(status[field])
        kept["status"] = trimmed
    return kept


def keep_job(job: KubeObject) -> KubeObject:
    """A Job as the manager reads it: its metadata, status and spec without its Pod template."""
    drop_server_fields(job)
    spec = job.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    digest = reporting_digest(template.get("spec") if isinstance(template, dict) else None)
    job.pop(KEPT_BY_TRANSFORM, None)
    if digest is not None:
        job[KEPT_BY_TRANSFORM] = digest
    if isinstance(spec, dict):
        job["spec"] = {k: v for k, v in spec.items() if k not in JOB_SPEC_DROPPED}
    return job


def is_own_snapshot(configmap: KubeObject) -> bool:
    """Whether a ConfigMap is a snapshot the operator made (by name, label and controller)."""
    meta = configmap.get("metadata") or {}
    if not str(meta.get("name") or "").startswith(SNAPSHOT_NAME_PREFIX):
        return False
    if not (meta.get("labels") or {}).get(LABEL_SNAPSHOT):
        return False
    return any(
        isinstance(ref, dict)
        and ref.get("controller") is True
        and str(ref.get("apiVersion") or "").startswith(f"{GROUP}/")
        for ref in meta.get("ownerReferences") or []
    )


def keep_configmap(configmap: KubeObject) -> KubeObject:
    """A ConfigMap as the manager reads it: whole, but a snapshot of ours without its files."""
    drop_server_fields(configmap)
    if is_own_snapshot(configmap):
        configmap.pop("data", None)
        configmap.pop("binaryData", None)
    return configmap


CACHE_TRANSFORMS: Mapping[str, Transform] = {
    "Pod": keep_pod,
    "Job": keep_job,
    "ConfigMap": keep_configmap,
}
"""The manager's informer transforms by kind (`ManagerOptions.transforms`)."""

TRANSFORMS_BY_PLURAL: Mapping[str, Transform] = {
    "pods": keep_pod,
    "jobs": keep_job,
    "configmaps": keep_configmap,
}
"""The same, by plural, for tests/bench/bench_memory.py (every other kind: drop_server_fields)."""
