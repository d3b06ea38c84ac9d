"""Carrying a Decision out against the API server: the part both family controllers share.

Contract (`DecisionExecutor.carry_out(obj, decision, now)`):
- The order is `reconcile/decision.py`'s: annotations (merge patch with the World's
  resourceVersion), Lease takes, the status (replaced through the status subresource with that
  resourceVersion, or the one the annotation patch returned), Lease releases, creates, deletes,
  Events, requeue. It stops at the first failure, except that a take whose status write is
  refused is given back, and a lost release or a refused Job asks for an early requeue.
- Creates are idempotent by name (AlreadyExists is success). An `OperationCredentials` entry
  becomes the operation Secret the configured factory builds. A Job the API server refuses
  (400, 403, 422: validation or admission) is remembered in `JobRefusals` with the server's
  reason, bounded and on one line, for the next World (`job_refusals`); a later create of that
  name replaces what was remembered.
- Deletes tolerate NotFound; a Job goes with propagationPolicy Background (its Pods with it).
- Events are best effort: the journal in status is the record.

Expectations (`Expectations`), as controller-runtime's: after a pass wrote the status or
created a Job, the next pass of that resource waits (requeues shortly) until the informer
caches hold the write and the Job, or `EXPECTATION_TIMEOUT` passed. A World built from a cache
one write behind would otherwise take a Job it created for absent (an undispatched Apply may
be withdrawn while its Job in fact exists) or decide from a status that is no longer current.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import ANNOTATION_LEASE_HOLDER_UID, GROUP, VERSION
from ptah_operator.api.kinds import kind_info
from ptah_operator.controller.clock import Clock
from ptah_operator.controller.controller import Result
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.store import KubeObject, metadata, object_key
from ptah_operator.controller.world_reads import lease_state
from ptah_operator.reconcile.decision import (
    Decision,
    Event,
    LeaseAction,
    LeaseVerb,
    ObjectRef,
    OperationCredentials,
)

log = structlog.get_logger(__name__)

LEASE_DURATION_SECONDS = 3900
"""An Apply Job's deadline (3600 s) plus a margin: the Lease outlives any run it covers."""
EXPECTATION_TIMEOUT = 30.0
"""Seconds a pass waits at most for the caches to show its own writes."""
EXPECTATION_POLL = 0.5
RETRY_SOON = 2.0
REFUSED_JOB_STATUSES = frozenset({400, 403, 422})
"""Answers to a Job create that mean "this Job will not exist as built": invalid, or refused
by admission (a policy engine, a namespace being terminated, a quota)."""
MAX_REFUSAL_CHARS = 300

OperationSecretFactory = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]
"""(namespace, operation id, owner reference) -> the `ptah-op-<hex>` Secret manifest."""


# --- expectations ------------------------------------------------------------------------------


@dataclass
class _Expected:
    deadline: float
    stale_versions: set[str] = field(default_factory=set)
    """The resourceVersions the pass's writes replaced: a cache showing one is behind."""
    jobs: set[str] = field(default_factory=set)
    """Keys ("namespace/name") of Jobs created and not yet seen in the cache."""


class Expectations:
    """What a resource's last pass wrote, until the caches show it."""

    def __init__(self, clock: Clock, timeout: float = EXPECTATION_TIMEOUT) -> None:
        self._clock = clock
        self._timeout = timeout
        self._by_key: dict[str, _Expected] = {}

    def _entry(self, key: str) -> _Expected:
        deadline = self._clock.now() + self._timeout
        entry = self._by_key.get(key)
        if entry is None:
            entry = self._by_key[key] = _Expected(deadline)
        entry.deadline = deadline
        return entry

    def wrote(self, key: str, replaced_version: str) -> None:
        """The resource was written over `replaced_version`."""
        self._entry(key).stale_versions.add(replaced_version)

    def created_job(self, key: str, job_key: str) -> None:
        self._entry(key).jobs.add(job_key)

    def unmet(self, key: str, obj: KubeObject, job_seen: Callable[[str], bool]) -> bool:
        """Whether the caches are still behind this resource's last pass (and not for too
        long). Met expectations are forgotten."""
        entry = self._by_key.get(key)
        if entry is None:
            return False
        if str(metadata(obj).get("resourceVersion")) not in entry.stale_versions:
            entry.stale_versions.clear()
        entry.jobs = {job for job in entry.jobs if not job_seen(job)}
        if not entry.stale_versions and not entry.jobs:
            del self._by_key[key]
            return False
        if self._clock.now() >= entry.deadline:
            log.warning("caches did not show the last pass's writes in time", key=key)
            del self._by_key[key]
            return False
        return True

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)


# --- refused Jobs ------------------------------------------------------------------------------


class JobRefusals:
    """Jobs the API server refused to create, by resource key and Job name."""

    def __init__(self) -> None:
        self._by_key: dict[str, tuple[str, dict[str, str]]] = {}

    def of(self, key: str, uid: str) -> dict[str, str]:
        held = self._by_key.get(key)
        if held is None or held[0] != uid:
            return {}
        return dict(held[1])

    def refused(self, key: str, uid: str, job: str, reason: str) -> None:
        held = self._by_key.get(key)
        if held is None or held[0] != uid:
            held = self._by_key[key] = (uid, {})
        held[1][job] = reason

    def created(self, key: str, job: str) -> None:
        held = self._by_key.get(key)
        if held is not None:
            held[1].pop(job, None)

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)


def refusal_reason(error: ApiException) -> str:
    """The API server's reason for refusing a create, on one line and bounded. A Job manifest
    holds no SQL and no credential (only the names of Secrets), so neither does its echo."""
    message = ""
    try:
        body = json.loads(error.body or "")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict):
        message = str(body.get("message") or "")
    if not message:
        message = f"HTTP {error.status} {error.reason or ''}".strip()
    flat = " ".join(message.split())
    return flat if len(flat) <= MAX_REFUSAL_CHARS else flat[: MAX_REFUSAL_CHARS - 3] + "..."


# --- the executor ------------------------------------------------------------------------------


class DecisionExecutor:
    """Carries Decisions of one family out; one per controller."""

    def __init__(
        self,
        api_client: client.ApiClient,
        *,
        family: str,
        operation_secret: OperationSecretFactory,
        metrics: LifecycleMetrics,
        clock: Clock,
    ) -> None:
        self.family = family
        self.operation_secret = operation_secret
        self.metrics = metrics
        self.expectations = Expectations(clock)
        self.refusals = JobRefusals()
        # Typed as Any: the Decision's manifests are plain JSON dicts, which the client accepts
        # although its annotations name the generated model classes.
        self.custom: Any = client.CustomObjectsApi(api_client)
        self.core: Any = client.CoreV1Api(api_client)
        self.batch: Any = client.BatchV1Api(api_client)
        self.coordination: Any = client.CoordinationV1Api(api_client)

    def forget(self, key: str) -> None:
        """The resource is gone."""
        self.expectations.forget(key)
        self.refusals.forget(key)
        self.metrics.forget(self.family, key)

    async def carry_out(self, obj: KubeObject, decision: Decision, now: dt.datetime) -> Result:
        meta = metadata(obj)
        namespace, name = str(meta["namespace"]), str(meta["name"])
        key = object_key(obj)
        plural = kind_info(str(obj.get("kind"))).plural
        resource_version = str(meta["resourceVersion"])
        if decision.annotations:
            patch = {
                "metadata": {
                    "resourceVersion": resource_version,
                    "annotations": dict(decision.annotations),
                }
            }
            patched = await self.custom.patch_namespaced_custom_object(
                GROUP,
                VERSION,
                namespace,
                plural,
                name,
                patch,
                _content_type="application/merge-patch+json",
            )
            self.expectations.wrote(key, resource_version)
            resource_version = str(patched["metadata"]["resourceVersion"])
        taken: list[LeaseAction] = []
        for action in decision.lease:
            if action.verb is not LeaseVerb.ACQUIRE:
                continue
            if not await self.lease(action, now, owner_uid=str(meta.get("uid") or "")):
                await self._release_taken(taken, now)
                return Result.requeue(RETRY_SOON)
            taken.append(action)
        if decision.status is not None:
            body = {
                "apiVersion": obj.get("apiVersion"),
                "kind": obj.get("kind"),
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "resourceVersion": resource_version,
                },
                "spec": obj.get("spec"),
                "status": decision.status,
            }
            try:
                await self.custom.replace_namespaced_custom_object_status(
                    GROUP, VERSION, namespace, plural, name, body
                )
            except ApiException:
                # The claim that would hold the Lease is not on record: give the Lease back
                # rather than leave it to an operation id no status names.
                await self._release_taken(taken, now)
                raise
            self.expectations.wrote(key, resource_version)
            self.metrics.observe(self.family, key, obj.get("status"), decision.status, now)
        else:
            self.metrics.set_phase(self.family, key, (obj.get("status") or {}).get("phase"))
        # Releases follow the status write that ends their claim: a refused write leaves the
        # Lease with the claim still on record, never a claim whose Lease is gone.
        soon = False
        for action in decision.lease:
            if action.verb is LeaseVerb.RELEASE and not await self.lease(action, now):
                soon = True
        for item in decision.create:
            if not await self.create(obj, item):
                soon = True
        for ref in decision.delete:
            await self.delete(ref)
        for event in decision.events:
            await self.event(obj, event, now)
        if soon:
            return Result.requeue(RETRY_SOON)
        # Requeue.AFTER_OWN_WRITE adds nothing: the pass's own write comes back through a watch.
        if decision.requeue_after is not None:
            return Result.requeue(decision.requeue_after.total_seconds())
        return Result.success()

    async def _release_taken(self, taken: list[LeaseAction], now: dt.datetime) -> None:
        for action in taken:
            release = LeaseAction(LeaseVerb.RELEASE, action.name, action.namespace, action.holder)
            try:
                await self.lease(release, now)
            except ApiException as error:
                log.warning("lease not released", lease=action.name, status=error.status)

    async def lease(self, action: LeaseAction, now: dt.datetime, owner_uid: str = "") -> bool:
        """Take or release the realm Lease; False when another operation holds it. Taking it
        also records which resource took it (ANNOTATION_LEASE_HOLDER_UID).

        Bodies are plain dicts with six-digit microseconds: the API server refuses the times the
        generated models write when the microseconds are zero.
        """
        stamp = now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        # Without preloading, a non-2xx answer raises nothing: the status is ours to check.
        response = await self.coordination.read_namespaced_lease(
            action.name, action.namespace, _preload_content=False
        )
        if response.status not in (200, 404):
            raise ApiException(status=response.status, reason="reading the realm Lease failed")
        lease: dict[str, Any] = await response.json()
        if response.status == 404:
            if action.verb is LeaseVerb.RELEASE:
                return True
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": action.name,
                    "namespace": action.namespace,
                    "annotations": {ANNOTATION_LEASE_HOLDER_UID: owner_uid},
                },
                "spec": {
                    "holderIdentity": action.holder,
                    "leaseDurationSeconds": LEASE_DURATION_SECONDS,
                    "acquireTime": stamp,
                    "renewTime": stamp,
                    "leaseTransitions": 1,
                },
            }
            try:
                await self.coordination.create_namespaced_lease(action.namespace, body)
            except ApiException as conflict:
                if conflict.status == 409:
                    return False
                raise
            return True
        spec: dict[str, Any] = lease.setdefault("spec", {})
        holder = spec.get("holderIdentity")
        if action.verb is LeaseVerb.RELEASE:
            if holder != action.holder:
                return True
            spec["holderIdentity"] = None
        elif holder == action.holder:
            spec["renewTime"] = stamp
        elif lease_state(lease, now).expired:
            spec.update(
                holderIdentity=action.holder,
                acquireTime=stamp,
                renewTime=stamp,
                leaseDurationSeconds=LEASE_DURATION_SECONDS,
                leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1,
            )
            annotations = lease.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[ANNOTATION_LEASE_HOLDER_UID] = owner_uid
        else:
            return False
        try:
            await self.coordination.replace_namespaced_lease(action.name, action.namespace, lease)
        except ApiException as error:
            if error.status == 409:
                return False
            raise
        return True

    async def create(
        self, owner: KubeObject, item: Mapping[str, Any] | OperationCredentials
    ) -> bool:
        """Create one object; False only for a Job the API server refused (remembered)."""
        if isinstance(item, OperationCredentials):
            manifest = self.operation_secret(item.namespace, item.operation_id, item.owner)
        else:
            manifest = dict(item)
        kind = manifest["kind"]
        namespace = manifest["metadata"]["namespace"]
        name = str(manifest["metadata"]["name"])
        key = object_key(owner)
        try:
            if kind == "ConfigMap":
                await self.core.create_namespaced_config_map(namespace, manifest)
            elif kind == "Secret":
                await self.core.create_namespaced_secret(namespace, manifest)
            elif kind == "Job":
                await self.batch.create_namespaced_job(namespace, manifest)
            elif str(manifest["apiVersion"]).startswith(GROUP + "/"):
                plural = kind_info(kind).plural
                await self.custom.create_namespaced_custom_object(
                    GROUP, VERSION, namespace, plural, manifest
                )
            else:
                raise ValueError(f"the {self.family} controller does not create {kind}")
        except ApiException as error:
            if kind == "Job" and error.status in REFUSED_JOB_STATUSES:
                reason = refusal_reason(error)
                uid = str(metadata(owner).get("uid"))
                self.refusals.refused(key, uid, name, reason)
                log.warning("job refused", job=name, status=error.status)
                return False
            if error.status != 409:
                raise
            if kind == "Job":
                self.refusals.created(key, name)
            return True
        if kind == "Job":
            self.refusals.created(key, name)
            self.expectations.created_job(key, f"{namespace}/{name}")
        return True

    async def delete(self, ref: ObjectRef) -> None:
        try:
            if ref.kind == "ConfigMap":
                await self.core.delete_namespaced_config_map(ref.name, ref.namespace)
            elif ref.kind == "Secret":
                await self.core.delete_namespaced_secret(ref.name, ref.namespace)
            elif ref.kind == "Job":
                await self.batch.delete_namespaced_job(
                    ref.name, ref.namespace, propagation_policy="Background"
                )
            elif ref.api_version.startswith(GROUP + "/"):
                await self.custom.delete_namespaced_custom_object(
                    GROUP, VERSION, ref.namespace, kind_info(ref.kind).plural, ref.name
                )
        except ApiException as error:
            if error.status != 404:
                raise

    async def event(self, obj: KubeObject, event: Event, now: dt.datetime) -> None:
        meta = metadata(obj)
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{meta['name']}.{secrets.token_hex(8)}",
                "namespace": meta["namespace"],
            },
            "involvedObject": {
                "apiVersion": obj.get("apiVersion"),
                "kind": obj.get("kind"),
                "name": meta["name"],
                "namespace": meta["namespace"],
                "uid": meta["uid"],
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": event.reason,
            "message": event.message,
            "type": event.type.value,
            "source": {"component": "ptah-operator"},
            "reportingComponent": "ptah-operator",
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            await self.core.create_namespaced_event(meta["namespace"], body)
        except ApiException as error:  # an Event is best effort: the journal is the record
            log.warning("event not written", reason=event.reason, status=error.status)
