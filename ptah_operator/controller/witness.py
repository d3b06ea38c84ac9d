"""What a Pod must run for its container's exit to witness a report (issue #18).

The kubelet's record of how a run's reporting container ended is the second witness of its
result (world.py `report_witnessed`). Anyone who may create Pods can make one whose owner
reference names the run's Job; its exit says nothing unless it runs what the Job runs. So a Pod
witnesses only when the reporting container (`run`, `resolve`, `verify`) and what the Pod lets
it reach are the Job template's: image, command, args, working directory, environment, the
mounts and the volumes behind them, and the Pod's host aliases, DNS and host namespaces. An
exact copy runs the real runner, which reports its own result and gets 409 against a forged
record (exit 4). `reporting_digest` reduces those fields to one digest, the same for the Job's
template and for a Pod the Job controller made from it; the informer transforms keep it
(cache.py), since they drop the template and the Pod's spec. Fields the API server or an
admission plugin fills into Pods and not templates (the ServiceAccount, tolerations,
resources, other containers) are left out; a mutating webhook that changes the reporting
container itself (a sidecar injector adding a mount to every container) makes every run of
that namespace unwitnessed, so Ptah's Jobs must be exempt from it (docs/security.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

REPORTING_CONTAINERS = frozenset({"run", "resolve", "verify"})
"""The container of each Job that runs the operation and reports its result (reconcile/jobs.py)."""

KEPT_BY_TRANSFORM = "ptahReportingDigest"
"""Where the informer transforms keep `reporting_digest` of a Job's template or a Pod's spec."""

_CONTAINER_FIELDS = ("name", "image", "command", "args", "workingDir", "env", "envFrom")
_MOUNT_FIELDS = ("name", "mountPath", "subPath", "subPathExpr", "readOnly", "mountPropagation")
_POD_FIELDS = (
    "hostAliases",
    "dnsPolicy",
    "dnsConfig",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
)


def reporting_digest(pod_spec: Any) -> str | None:
    """The digest of what the reporting container of a Pod spec runs and reaches, or None when
    the spec has no single reporting container."""
    if not isinstance(pod_spec, Mapping):
        return None
    containers = pod_spec.get("containers")
    reporting = [
        c
        for c in (containers if isinstance(containers, list) else [])
        if isinstance(c, Mapping) and c.get("name") in REPORTING_CONTAINERS
    ]
    if len(reporting) != 1:
        return None
    container = reporting[0]
    mounts = container.get("volumeMounts")
    mounts = [m for m in (mounts if isinstance(mounts, list) else []) if isinstance(m, Mapping)]
    names = {m.get("name") for m in mounts}
    volumes = pod_spec.get("volumes")
    reached = [
        v
        for v in (volumes if isinstance(volumes, list) else [])
        if isinstance(v, Mapping) and v.get("name") in names
    ]
    shape = {
        "container": {k: container.get(k) for k in _CONTAINER_FIELDS},
        "mounts": sorted(
            ({k: m.get(k) for k in _MOUNT_FIELDS} for m in mounts),
            key=lambda m: json.dumps(m, sort_keys=True, default=str),
        ),
        "volumes": sorted(reached, key=lambda v: str(v.get("name"))),
        "pod": {k: pod_spec.get(k) for k in _POD_FIELDS},
    }
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def job_reporting_digest(job: Mapping[str, Any]) -> str | None:
    """A Job's `reporting_digest`: the one its transform kept, or its template's."""
    kept = job.get(KEPT_BY_TRANSFORM)
    if isinstance(kept, str):
        return kept
    spec = job.get("spec")
    template = spec.get("template") if isinstance(spec, Mapping) else None
    return reporting_digest(template.get("spec") if isinstance(template, Mapping) else None)


def pod_reporting_digest(pod: Mapping[str, Any]) -> str | None:
    """A Pod's `reporting_digest`: the one its transform kept, or its spec's."""
    kept = pod.get(KEPT_BY_TRANSFORM)
    if isinstance(kept, str):
        return kept
    return reporting_digest(pod.get("spec"))
