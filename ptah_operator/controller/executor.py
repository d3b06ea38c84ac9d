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
- An Apply Job it created (201) is remembered in `MadeJobs` by the create's answer (UID,
  creationTimestamp) for the next World (`jobs_made`), and never created again: asked for it
  once more (the cache had not shown it), the executor only reads it, and a 404 marks it gone.
  A second Apply Job of one operation would run the Apply twice (issue #18).
- Deletes tolerate NotFound; a Job goes with propagationPolicy Background (its Pods with it).
- Events are best effort: the journal in status is the record.

The executor records what it wrote in its `Expectations` (expectations.py) and carries the
Lease actions out through `RealmLease` (realm_lease.py).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Generic, TypeVar

import aiohttp
import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import GROUP, LABEL_OPERATION_TYPE, VERSION, OperationType
from ptah_operator.api.kinds import kind_info
from ptah_operator.controller.expectations import Expectations
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.realm_lease import RealmLease
from ptah_operator.reconcile.decision import (
    Decision,
    Event,
    LeaseAction,
    LeaseVerb,
    ObjectRef,
    OperationCredentials,
)
from ptah_operator.reconcile.world import MadeJob
from ptah_operator.runtime.clock import Clock
from ptah_operator.runtime.controller import Result
from ptah_operator.runtime.store import KubeObject, metadata, object_key

log = structlog.get_logger(__name__)

T = TypeVar("T")

RETRY_SOON = 2.0
NAME_TAKEN = "a Job of that name that Ptah did not make is there"
"""The refusal an Apply Job create is given when its name is taken (`_taken_name`)."""
REFUSED_JOB_STATUSES = frozenset({400, 403, 422})
"""Answers to a Job create that mean "this Job will not exist as built": invalid, or refused
by admission (a policy engine, a namespace being terminated, a quota)."""
MAX_REFUSAL_CHARS = 300

OperationSecretFactory = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]
"""(namespace, operation id, owner reference) -> the `ptah-op-<hex>` Secret manifest."""


# --- refused Jobs ------------------------------------------------------------------------------


class JobMemory(Generic[T]):
    """Something remembered of Jobs, by resource key (for the resource of that UID: one made
    again under the same name remembers nothing) and Job name: for each resource the
    `MAX_PER_RESOURCE` latest, until the resource is gone (`forget`)."""

    MAX_PER_RESOURCE = 16

    def __init__(self) -> None:
        self._by_key: dict[str, tuple[str, dict[str, T]]] = {}

    def __len__(self) -> int:
        return sum(len(jobs) for _, jobs in self._by_key.values())

    def of(self, key: str, uid: str) -> dict[str, T]:
        held = self._by_key.get(key)
        if held is None or held[0] != uid:
            return {}
        return dict(held[1])

    def remember(self, key: str, uid: str, job: str, value: T) -> None:
        held = self._by_key.get(key)
        if held is None or held[0] != uid:
            held = self._by_key[key] = (uid, {})
        held[1].pop(job, None)
        held[1][job] = value
        while len(held[1]) > self.MAX_PER_RESOURCE:
            del held[1][next(iter(held[1]))]

    def drop(self, key: str, job: str, uid: str | None = None) -> None:
        """Forget the Job (of the resource of `uid`, when given)."""
        held = self._by_key.get(key)
        if held is not None and uid in (None, held[0]):
            held[1].pop(job, None)
            if not held[1]:
                del self._by_key[key]

    def holding(self, namespace: str, job: str) -> list[tuple[str, str]]:
        """The (key, uid) of every resource in `namespace` that remembers a Job of that name."""
        return [
            (key, uid)
            for key, (uid, jobs) in self._by_key.items()
            if key.startswith(f"{namespace}/") and job in jobs
        ]

    def forget(self, key: str) -> None:
        self._by_key.pop(key, None)


class JobRefusals(JobMemory[str]):
    """Jobs the API server refused to create, with its reason; forgotten when a create of the
    same name is asked for again (a schema read keeps its claim and reuses the name)."""

    def refused(self, key: str, uid: str, job: str, reason: str) -> None:
        self.remember(key, uid, job, reason)

    def created(self, key: str, job: str) -> None:
        self.drop(key, job)


class MadeJobs(JobMemory[MadeJob]):
    """The Apply Jobs the executor created (an older one's run has long ended)."""

    def made(self, key: str, uid: str, job: str, made: MadeJob) -> None:
        self.remember(key, uid, job, made)

    def gone(self, key: str, uid: str, job: str) -> None:
        made = self.of(key, uid).get(job)
        if made is not None and not made.gone:
            self.remember(key, uid, job, replace(made, gone=True))

    def deleted(self, namespace: str, job: str) -> None:
        """A Job of that name deleted (or found gone) in `namespace`: gone, for every resource
        there that made one of that name."""
        for key, uid in self.holding(namespace, job):
            self.gone(key, uid, job)


def _made_job(answer: Any) -> MadeJob:
    """The create's answer (a V1Job) as a `MadeJob`."""
    meta = getattr(answer, "metadata", None)
    created = getattr(meta, "creation_timestamp", None)
    return MadeJob(
        uid=str(getattr(meta, "uid", "") or "") or None,
        created_at=created if isinstance(created, dt.datetime) else None,
    )


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
        self.made = MadeJobs()
        self.claims: JobMemory[bool] = JobMemory()
        """The operation ids of the claims this process asked to write (`claims_written`)."""
        # Typed as Any: the Decision's manifests are plain JSON dicts, which the client accepts
        # although its annotations name the generated model classes.
        self.custom: Any = client.CustomObjectsApi(api_client)
        self.core: Any = client.CoreV1Api(api_client)
        self.batch: Any = client.BatchV1Api(api_client)
        self.realm_lease = RealmLease(api_client)

    def forget(self, key: str) -> None:
        """The resource is gone."""
        self.expectations.forget(key)
        self.refusals.forget(key)
        self.made.forget(key)
        self.claims.forget(key)
        self.metrics.forget(self.family, key)

    async def carry_out(self, obj: KubeObject, decision: Decision, now: dt.datetime) -> Result:
        resource_version = await self._annotate(obj, decision)
        taken = await self._take(obj, decision, now)
        if taken is None:
            return Result.requeue(RETRY_SOON)
        await self._write_status(obj, decision, resource_version, taken, now)
        # Releases follow the status write that ends their claim: a refused write leaves the
        # Lease with the claim still on record, never a claim whose Lease is gone.
        soon = not await self._release(decision, now)
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

    async def _annotate(self, obj: KubeObject, decision: Decision) -> str:
        """Patch the Decision's annotations, if any, under the World's resourceVersion; the
        resourceVersion the status is then written under."""
        meta = metadata(obj)
        resource_version = str(meta["resourceVersion"])
        if not decision.annotations:
            return resource_version
        patch = {
            "metadata": {
                "resourceVersion": resource_version,
                "annotations": dict(decision.annotations),
            }
        }
        patched = await self.custom.patch_namespaced_custom_object(
            GROUP,
            VERSION,
            str(meta["namespace"]),
            kind_info(str(obj.get("kind"))).plural,
            str(meta["name"]),
            patch,
            _content_type="application/merge-patch+json",
        )
        self.expectations.wrote(object_key(obj), resource_version)
        return str(patched["metadata"]["resourceVersion"])

    async def _take(
        self, obj: KubeObject, decision: Decision, now: dt.datetime
    ) -> list[LeaseAction] | None:
        """Take the Decision's Leases; None (and every one taken given back) when one is
        held by another operation."""
        taken: list[LeaseAction] = []
        for action in decision.lease:
            if action.verb is not LeaseVerb.ACQUIRE:
                continue
            if not await self.realm_lease.carry_out(
                action, now, owner_uid=str(metadata(obj).get("uid") or "")
            ):
                await self.realm_lease.give_back(taken, now)
                return None
            taken.append(action)
        return taken

    async def _write_status(
        self,
        obj: KubeObject,
        decision: Decision,
        resource_version: str,
        taken: list[LeaseAction],
        now: dt.datetime,
    ) -> None:
        key = object_key(obj)
        if decision.status is None:
            self.metrics.set_phase(self.family, key, (obj.get("status") or {}).get("phase"))
            return
        meta = metadata(obj)
        namespace, name = str(meta["namespace"]), str(meta["name"])
        body = {
            "apiVersion": obj.get("apiVersion"),
            "kind": obj.get("kind"),
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": resource_version},
            "spec": obj.get("spec"),
            "status": decision.status,
        }
        plural = kind_info(str(obj.get("kind"))).plural
        claim = decision.status.get("activeOperation")
        if isinstance(claim, Mapping) and claim.get("operationID"):
            # Before the write: one whose answer is lost may be on record all the same.
            self.claims.remember(key, str(meta.get("uid")), str(claim["operationID"]), True)
        try:
            await self.custom.replace_namespaced_custom_object_status(
                GROUP, VERSION, namespace, plural, name, body
            )
        except ApiException:
            # The claim that would hold the Lease is not on record: give the Lease back
            # rather than leave it to an operation id no status names.
            await self.realm_lease.give_back(taken, now)
            raise
        self.expectations.wrote(key, resource_version)
        self.metrics.observe(self.family, key, obj.get("status"), decision.status, now)

    async def _release(self, decision: Decision, now: dt.datetime) -> bool:
        """Give the Decision's Leases back; False when one of them could not be (409)."""
        released = True
        for action in decision.lease:
            if action.verb is LeaseVerb.RELEASE and not await self.realm_lease.carry_out(
                action, now
            ):
                released = False
        return released

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
        owner_uid = str(metadata(owner).get("uid"))
        labels = manifest["metadata"].get("labels") or {}
        apply = kind == "Job" and labels.get(LABEL_OPERATION_TYPE) == str(OperationType.APPLY)
        if apply:
            made = self.made.of(key, owner_uid).get(name)
            if made is not None:
                # Never a second Apply Job of one operation: only whether the first is there.
                if not made.gone and not await self._job_exists(namespace, name):
                    self.made.gone(key, owner_uid, name)
                    log.warning("apply job made and gone before it was seen", job=name)
                return True
            # Remembered before it is asked for: a create the server carried out whose answer
            # was lost (a timeout, a reset, a 5xx after the write) made a Job all the same,
            # its UID unknown (issue #18, the review of session 11).
            self.made.made(key, owner_uid, name, MadeJob(uid=None, created_at=None))
        if kind == "Job":
            # An earlier create's refusal says nothing of this one: forgotten before it is
            # asked for, so a create that fails with no answer (a reset, a 5xx) leaves no
            # stale refusal to fail the next attempt of a read that kept its claim.
            self.refusals.created(key, name)
        try:
            answer = await self._post(kind, namespace, manifest)
        except aiohttp.ClientConnectorError:
            # Never connected, so never sent: nothing was made.
            self.made.drop(key, name, owner_uid)
            raise
        except ApiException as error:
            return await self._answered(error, key, owner_uid, kind, apply, namespace, name)
        if kind == "Job":
            if apply:
                self.made.made(key, owner_uid, name, _made_job(answer))
            self.refusals.created(key, name)
            self.expectations.created_job(key, f"{namespace}/{name}")
        return True

    async def _post(self, kind: str, namespace: str, manifest: Mapping[str, Any]) -> Any:
        """Send the create of one object; the API server's answer."""
        if kind == "ConfigMap":
            return await self.core.create_namespaced_config_map(namespace, manifest)
        if kind == "Secret":
            return await self.core.create_namespaced_secret(namespace, manifest)
        if kind == "Job":
            return await self.batch.create_namespaced_job(namespace, manifest)
        if str(manifest["apiVersion"]).startswith(GROUP + "/"):
            plural = kind_info(kind).plural
            return await self.custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, plural, manifest
            )
        raise ValueError(f"the {self.family} controller does not create {kind}")

    async def _answered(
        self,
        error: ApiException,
        key: str,
        owner_uid: str,
        kind: str,
        apply: bool,
        namespace: str,
        name: str,
    ) -> bool:
        """A create the API server answered with an error: False for a Job it refused (or an
        Apply Job's name taken), True for an object already there; anything else raised."""
        refused = kind == "Job" and error.status in REFUSED_JOB_STATUSES
        if refused:
            # Answered: not made by this request (a Job already there is in the cache).
            self.made.drop(key, name, owner_uid)
        if refused and not await self._job_exists(namespace, name):
            self.refusals.refused(key, owner_uid, name, refusal_reason(error))
            log.warning("job refused", job=name, status=error.status)
            return False
        if error.status != 409 and not refused:
            if isinstance(error.status, int) and error.status < 500:
                self.made.drop(key, name, owner_uid)  # (answered, and not made)
            raise error  # (a refused create of a Job that exists is taken as the 409 it hides)
        if apply and await self._taken_name(key, owner_uid, namespace, name):
            # The name is taken by a Job Ptah did not make (one made in the moment between
            # the claim's write and this create, by whoever read the claim): not the run's
            # Job, and this create made none (issue #18).
            log.warning("apply job name taken", job=name)
            return False
        if kind == "Job":
            self.refusals.created(key, name)
        return True

    async def _taken_name(self, key: str, owner_uid: str, namespace: str, name: str) -> bool:
        """After a 409 for an Apply Job: whether the Job under its name is another's. This
        create made nothing, so the name is remembered as taken (a refusal) until the Job
        there shows the owner's controller reference; then it is taken as made, by its UID (a
        Job the owner made that this process does not remember is never declared not to have
        started). A read that fails leaves the name taken, and the pass is tried again."""
        self.made.drop(key, name, owner_uid)
        self.refusals.refused(key, owner_uid, name, NAME_TAKEN)
        try:
            found = await self.batch.read_namespaced_job(name, namespace)
        except ApiException as error:
            if error.status == 404:
                return True
            raise
        owners = getattr(found.metadata, "owner_references", None) or []
        if any(ref.controller is True and ref.uid == owner_uid for ref in owners):
            self.refusals.created(key, name)
            self.made.made(key, owner_uid, name, _made_job(found))
            return False
        return True

    async def _job_exists(self, namespace: str, name: str) -> bool:
        """Whether a Job of this name exists. A create of a Job already there (asked again
        because the cache had not shown it yet) can be refused by admission before the store
        answers 409: a quota the Job itself fills refuses one more. Such a refusal is no
        refusal: the Job exists and may be running; only a Job absent is refused. An error
        reading it is raised, and the pass tried again."""
        try:
            await self.batch.read_namespaced_job(name, namespace)
        except ApiException as error:
            if error.status == 404:
                return False
            raise
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
                self.made.deleted(ref.namespace, ref.name)
            elif ref.api_version.startswith(GROUP + "/"):
                await self.custom.delete_namespaced_custom_object(
                    GROUP, VERSION, ref.namespace, kind_info(ref.kind).plural, ref.name
                )
        except ApiException as error:
            if error.status != 404:
                raise
            if ref.kind == "Job":
                # An Apply Job this executor made, deleted or found gone: gone for the next
                # World, whatever any cache shows.
                self.made.deleted(ref.namespace, ref.name)

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
