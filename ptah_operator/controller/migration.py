"""The PtahMigration controller: builds the World from informer caches, calls the pure
`reconcile_migration`, and carries its Decision out against the API server.

Contract:
- A pass reads only caches to build the World; the API calls it makes are the Decision's,
  in the order `reconcile/decision.py` fixes (Lease taken, status, Lease released, creates,
  deletes, Events), and it stops at the first that fails: the next pass decides again from
  what then exists.
- The status is written with the resourceVersion the World was built from, so a pass that
  raced another writer is refused (409) and simply requeued.
- Objects are created with deterministic names; AlreadyExists counts as created.
- Keys are enqueued by the resource's own events, by everything it owns (Jobs, snapshot and
  result ConfigMaps, plans), by its source ConfigMap, by approvals and acknowledgments naming
  it, by the realm it names, by the realm Lease, and by every other claimant of its
  coordination key (the census can change its verdict).
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import structlog
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationRunAcknowledgment
from ptah_operator.api.constants import (
    GROUP,
    LABEL_OPERATION_ID,
    LABEL_OWNER_UID,
    LABEL_SNAPSHOT,
    VERSION,
    Kind,
)
from ptah_operator.api.content import MAX_SNAPSHOT_BYTES, ContentError, digest_of_files
from ptah_operator.api.fields import parse_time
from ptah_operator.api.kinds import from_manifest, kind_info
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.source_policy import SourcePolicyError, parse_source_policy
from ptah_operator.controller.controller import Controller, Result
from ptah_operator.controller.informer import Informer
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.manager import Manager
from ptah_operator.controller.observe import ptah_resource
from ptah_operator.controller.resources import CONFIG_MAPS, JOBS, LEASES, PODS
from ptah_operator.controller.store import KubeObject, metadata, object_key
from ptah_operator.reconcile.decision import (
    Decision,
    Event,
    LeaseAction,
    LeaseVerb,
    ObjectRef,
    OperationCredentials,
)
from ptah_operator.reconcile.jobs import realm_lease_name
from ptah_operator.reconcile.migration import reconcile_migration
from ptah_operator.reconcile.world import (
    Claimant,
    JobPhase,
    JobState,
    LeaseState,
    MigrationWorld,
    OperationResult,
    PolicyFile,
    RunnerConfig,
    SourceFiles,
)

log = structlog.get_logger(__name__)

FAMILY = "PtahMigration"
RESULT_KEY = "result.json"
RESULT_PREFIX = "ptah-result-"
LEASE_DURATION_SECONDS = 3900
"""An Apply Job's deadline (3600 s) plus a margin: the Lease outlives any run it covers."""


MIGRATIONS = ptah_resource(Kind.PTAH_MIGRATION)
SCHEMAS = ptah_resource(Kind.PTAH_SCHEMA)
MIGRATION_PLANS = ptah_resource(Kind.PTAH_MIGRATION_PLAN)
MIGRATION_APPROVALS = ptah_resource(Kind.PTAH_MIGRATION_APPROVAL)
ACKNOWLEDGMENTS = ptah_resource(Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT)
REALMS = ptah_resource(Kind.PTAH_REALM)

OperationSecretFactory = Callable[[str, str, Mapping[str, Any]], dict[str, Any]]
"""(namespace, operation id, owner reference) -> the `ptah-op-<hex>` Secret manifest."""


@dataclass(frozen=True)
class MigrationControllerConfig:
    runner: RunnerConfig
    lease_namespace: str
    operation_secret: OperationSecretFactory
    workers: int = 4
    lifecycle_metrics: LifecycleMetrics | None = None
    """Shared with the other families' controllers; made here when not given."""


# --- indexes ----------------------------------------------------------------------------------

BY_COORDINATION_KEY = "coordination-key"
BY_SOURCE_CONFIGMAP = "source-configmap"
BY_REALM = "realm"
BY_LEASE = "realm-lease"
BY_OWNER_UID = "owner-uid"
BY_MIGRATION_NAME = "migration-name"
BY_JOB = "job-name"


def _spec(obj: KubeObject) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _coordination_key(obj: KubeObject) -> str | None:
    target = _spec(obj).get("target") or {}
    key = target.get("coordinationKey")
    return str(key) if key else None


def index_coordination_key(obj: KubeObject) -> list[str]:
    key = _coordination_key(obj)
    return [key] if key else []


def index_lease(obj: KubeObject) -> list[str]:
    key = _coordination_key(obj)
    return [realm_lease_name(key)] if key else []


def index_source_configmap(obj: KubeObject) -> list[str]:
    """The ConfigMaps a resource reads without a Job: its source ConfigMap and the ConfigMaps
    holding its policies (a replaced policy is read at once, SRC-POL-07)."""
    spec = _spec(obj)
    config_map = spec.get("configMap") or {}
    git = spec.get("git") or {}
    names = [
        config_map.get("name"),
        (config_map.get("sourcePolicyFrom") or {}).get("name"),
        (git.get("sourcePolicyFrom") or {}).get("name"),
        ((spec.get("artifact") or {}).get("verificationPolicyFrom") or {}).get("name"),
    ]
    namespace = metadata(obj).get("namespace")
    return sorted({f"{namespace}/{name}" for name in names if name})


def index_realm(obj: KubeObject) -> list[str]:
    realm = (_spec(obj).get("target") or {}).get("realm")
    return [str(realm)] if realm else []


def index_owner_uid(obj: KubeObject) -> list[str]:
    uid = (metadata(obj).get("labels") or {}).get(LABEL_OWNER_UID)
    if uid:
        return [str(uid)]
    return [str(ref["uid"]) for ref in metadata(obj).get("ownerReferences") or [] if "uid" in ref]


def index_job_name(obj: KubeObject) -> list[str]:
    job = (metadata(obj).get("labels") or {}).get("job-name")
    return [f"{metadata(obj).get('namespace')}/{job}"] if job else []


def index_migration_name(obj: KubeObject) -> list[str]:
    ref = _spec(obj).get("migrationRef") or {}
    name = ref.get("name")
    return [f"{metadata(obj).get('namespace')}/{name}"] if name else []


# --- reading the caches into a World ----------------------------------------------------------


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def source_files(configmap: KubeObject, keys: Iterable[str] | None) -> SourceFiles:
    """The selected keys of a source ConfigMap as files, with their digest or a refusal."""
    meta = metadata(configmap)
    everything: dict[str, bytes] = {
        k: str(v).encode() for k, v in (configmap.get("data") or {}).items()
    }
    everything.update(
        {k: base64.b64decode(v) for k, v in (configmap.get("binaryData") or {}).items()}
    )
    wanted = list(keys) if keys is not None else sorted(everything)
    missing = [k for k in wanted if k not in everything]
    files = {k: everything[k] for k in wanted if k in everything}
    refusal: str | None = None
    if missing:
        refusal = f"ConfigMap {meta.get('name')} has no key {missing[0]}"
    elif sum(len(v) for v in files.values()) > MAX_SNAPSHOT_BYTES:
        refusal = f"the selected files are larger than {MAX_SNAPSHOT_BYTES} bytes"
    try:
        digest, manifest = digest_of_files(files)
    except ContentError as error:
        digest, manifest = digest_of_files({})
        refusal = refusal or str(error)
    return SourceFiles(
        config_map_name=str(meta.get("name")),
        config_map_uid=str(meta.get("uid")),
        files=files,
        content_digest=digest,
        manifest=manifest,
        refusal=refusal,
    )


SOURCE_CONTAINERS = frozenset({"source", "fetch"})
SNAPSHOT_REFUSED_EXIT = 3
"""The exit code of the runner's `source` and `fetch` init containers for files that do not
give the bound digest (or a Git commit no longer reachable)."""


def key_bytes(configmap: KubeObject | None, key: str) -> bytes | None:
    """A ConfigMap key's bytes as a Pod would see them mounted; None when absent."""
    if configmap is None:
        return None
    data = configmap.get("data") or {}
    if key in data:
        return str(data[key]).encode()
    binary = configmap.get("binaryData") or {}
    if key in binary:
        return base64.b64decode(binary[key])
    return None


def policy_digest(configmap: KubeObject | None, key: str) -> str | None:
    """SHA-256 of a ConfigMap key's bytes; None when absent."""
    raw = key_bytes(configmap, key)
    return None if raw is None else "sha256:" + hashlib.sha256(raw).hexdigest()


def source_policy_file(configmap: KubeObject | None, name: str, key: str) -> PolicyFile:
    """A source policy as the cluster holds it: its digest, and the policy parsed (or why it
    cannot be)."""
    raw = key_bytes(configmap, key)
    if raw is None:
        return PolicyFile(name, key, None)
    digest = "sha256:" + hashlib.sha256(raw).hexdigest()
    try:
        return PolicyFile(name, key, digest, policy=parse_source_policy(raw))
    except SourcePolicyError as error:
        return PolicyFile(name, key, digest, error=str(error))


def job_state(job: KubeObject, pods: Iterable[KubeObject] = ()) -> JobState:
    """A Job reduced to what a decision uses; `pods` are the Job's Pods (for the init
    container's verdict on the snapshot, and the failing container's last line)."""
    meta = metadata(job)
    conditions = (job.get("status") or {}).get("conditions") or []
    phase, reason, message, finished = JobPhase.ACTIVE, None, None, None
    for condition in conditions:
        if condition.get("status") != "True":
            continue
        if condition.get("type") == "Complete":
            phase = JobPhase.SUCCEEDED
            finished = parse_time(condition.get("lastTransitionTime"))
        elif condition.get("type") == "Failed":
            phase, reason, message = (
                JobPhase.FAILED,
                condition.get("reason"),
                condition.get("message"),
            )
            finished = parse_time(condition.get("lastTransitionTime"))
    snapshot_refused = False
    for pod in pods:
        status = pod.get("status") or {}
        for container in status.get("initContainerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if (
                container.get("name") in SOURCE_CONTAINERS
                and terminated.get("exitCode") == SNAPSHOT_REFUSED_EXIT
            ):
                snapshot_refused = True
                message = terminated.get("message") or message
        for container in status.get("containerStatuses") or []:
            terminated = (container.get("state") or {}).get("terminated") or {}
            if terminated.get("exitCode") not in (None, 0) and terminated.get("message"):
                message = terminated["message"]
    return JobState(
        name=str(meta.get("name")),
        uid=str(meta.get("uid")),
        operation_id=str((meta.get("labels") or {}).get(LABEL_OPERATION_ID, "")),
        phase=phase,
        reason=reason,
        message=message,
        finished_at=finished,
        snapshot_refused=snapshot_refused,
    )


def operation_result(configmap: KubeObject) -> OperationResult | None:
    meta = metadata(configmap)
    try:
        payload = json.loads((configmap.get("data") or {})[RESULT_KEY])
    except (KeyError, ValueError):
        log.warning("unreadable result record", name=meta.get("name"))
        return None
    if not isinstance(payload, dict):
        return None
    return OperationResult(
        operation_id=str(payload.get("operationID", "")),
        operation_type=str(payload.get("type", "")),
        received_at=parse_time(meta.get("creationTimestamp")) or _now(),
        payload=payload,
    )


def lease_state(lease: KubeObject, now: dt.datetime) -> LeaseState:
    meta, spec = metadata(lease), _spec(lease)
    holder = spec.get("holderIdentity") or None
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    expired = holder is None or renewed is None or renewed + dt.timedelta(seconds=duration) < now
    return LeaseState(
        name=str(meta.get("name")),
        namespace=str(meta.get("namespace")),
        holder=holder,
        epoch=int(spec.get("leaseTransitions") or 0),
        expired=expired,
    )


class MigrationReconciler:
    """The shell around `reconcile_migration` for one manager."""

    def __init__(self, manager: Manager, config: MigrationControllerConfig) -> None:
        self.config = config
        self.api = manager.api_client
        self.metrics = config.lifecycle_metrics or LifecycleMetrics(manager.metrics.registry)
        self.migrations = manager.informer(
            MIGRATIONS,
            indexers={
                BY_COORDINATION_KEY: index_coordination_key,
                BY_SOURCE_CONFIGMAP: index_source_configmap,
                BY_REALM: index_realm,
                BY_LEASE: index_lease,
            },
        )
        self.schemas = manager.informer(
            SCHEMAS, indexers={BY_COORDINATION_KEY: index_coordination_key}
        )
        self.configmaps = manager.informer(CONFIG_MAPS, indexers={BY_OWNER_UID: index_owner_uid})
        self.jobs = manager.informer(JOBS, indexers={BY_OWNER_UID: index_owner_uid})
        self.pods = manager.informer(PODS, indexers={BY_JOB: index_job_name})
        self.plans = manager.informer(MIGRATION_PLANS, indexers={BY_OWNER_UID: index_owner_uid})
        self.approvals = manager.informer(
            MIGRATION_APPROVALS, indexers={BY_MIGRATION_NAME: index_migration_name}
        )
        self.acknowledgments = manager.informer(
            ACKNOWLEDGMENTS, indexers={BY_MIGRATION_NAME: index_migration_name}
        )
        self.realms = manager.informer(REALMS)
        self.leases = manager.informer(LEASES, config.lease_namespace)
        # Typed as Any: the Decision's manifests are plain JSON dicts, which the client accepts
        # although its annotations name the generated model classes.
        self.custom: Any = client.CustomObjectsApi(self.api)
        self.core: Any = client.CoreV1Api(self.api)
        self.batch: Any = client.BatchV1Api(self.api)
        self.coordination: Any = client.CoordinationV1Api(self.api)
        self.controller = Controller(
            "ptahmigration",
            self.reconcile,
            workers=config.workers,
            clock=manager.clock,
            metrics=manager.metrics,
        )
        self._wire()

    # -- wiring ---------------------------------------------------------------------------

    def _wire(self) -> None:
        c = self.controller
        c.watch(self.migrations, self._self_and_claimants)
        c.watch(self.schemas, self._claimants_of)
        c.owns(self.jobs, "PtahMigration", GROUP)
        c.owns(self.plans, "PtahMigration", GROUP)
        c.watch(self.configmaps, self._configmap_keys)
        c.watch(self.approvals, index_migration_name)
        c.watch(self.acknowledgments, index_migration_name)
        c.watch(self.realms, self._realm_keys)
        c.watch(self.leases, self._lease_keys)
        c.watch(self.pods, self._pod_keys)

    def _pod_keys(self, obj: KubeObject) -> list[str]:
        """A Pod's Job's owner: an init container's verdict arrives on the Pod first."""
        meta = metadata(obj)
        job = (meta.get("labels") or {}).get("job-name")
        if not job:
            return []
        owner = self.jobs.store.get(f"{meta.get('namespace')}/{job}")
        if owner is None:
            return []
        for ref in metadata(owner).get("ownerReferences") or []:
            if ref.get("kind") == "PtahMigration" and ref.get("controller"):
                return [f"{meta.get('namespace')}/{ref.get('name')}"]
        return []

    def _claimants_of(self, obj: KubeObject) -> list[str]:
        key = _coordination_key(obj)
        if not key:
            return []
        return sorted(self.migrations.store.index_keys(BY_COORDINATION_KEY, key))

    def _self_and_claimants(self, obj: KubeObject) -> list[str]:
        return sorted({object_key(obj), *self._claimants_of(obj)})

    def _configmap_keys(self, obj: KubeObject) -> list[str]:
        keys = set(self.migrations.store.index_keys(BY_SOURCE_CONFIGMAP, object_key(obj)))
        for ref in metadata(obj).get("ownerReferences") or []:
            if ref.get("kind") == "PtahMigration" and ref.get("controller"):
                keys.add(f"{metadata(obj).get('namespace')}/{ref.get('name')}")
        return sorted(keys)

    def _realm_keys(self, obj: KubeObject) -> list[str]:
        return sorted(self.migrations.store.index_keys(BY_REALM, str(metadata(obj).get("name"))))

    def _lease_keys(self, obj: KubeObject) -> list[str]:
        return sorted(self.migrations.store.index_keys(BY_LEASE, str(metadata(obj).get("name"))))

    # -- a pass ---------------------------------------------------------------------------

    def world(self, obj: KubeObject, now: dt.datetime) -> MigrationWorld:
        migration = from_manifest(PtahMigration, obj)
        meta = migration.metadata
        namespace, uid = str(meta.namespace), str(meta.uid)
        spec = migration.spec

        source_policy: PolicyFile | None = None
        named = spec.config_map or spec.git
        policy_ref = named.source_policy_from if named is not None else None
        if policy_ref is not None:
            holder = self.configmaps.store.get(f"{namespace}/{policy_ref.name}")
            source_policy = source_policy_file(holder, policy_ref.name, policy_ref.key)
        source: SourceFiles | None = None
        if spec.config_map is not None:
            configmap = self.configmaps.store.get(f"{namespace}/{spec.config_map.name}")
            if configmap is not None:
                source = source_files(configmap, spec.config_map.keys)
                if source_policy is not None:
                    source = replace(source, source_policy_digest=source_policy.digest)
        verification_policy: PolicyFile | None = None
        if spec.artifact is not None:
            ref = spec.artifact.verification_policy_from
            holder = self.configmaps.store.get(f"{namespace}/{ref.name}")
            verification_policy = PolicyFile(ref.name, ref.key, policy_digest(holder, ref.key))

        owned_configmaps = self.configmaps.store.by_index(BY_OWNER_UID, uid)
        snapshots = frozenset(
            str(metadata(cm).get("name"))
            for cm in owned_configmaps
            if (metadata(cm).get("labels") or {}).get(LABEL_SNAPSHOT)
        )
        results: dict[str, OperationResult] = {}
        for cm in owned_configmaps:
            if str(metadata(cm).get("name", "")).startswith(RESULT_PREFIX):
                result = operation_result(cm)
                if result is not None:
                    results[result.operation_id] = result

        jobs = {
            state.name: state
            for state in (
                job_state(
                    j,
                    self.pods.store.by_index(BY_JOB, f"{namespace}/{metadata(j).get('name')}"),
                )
                for j in self.jobs.store.by_index(BY_OWNER_UID, uid)
            )
        }
        plans = {
            str(plan.metadata.name): plan
            for plan in (
                from_manifest(PtahMigrationPlan, p)
                for p in self.plans.store.by_index(BY_OWNER_UID, uid)
            )
            if plan.metadata.namespace == namespace
        }
        key = f"{namespace}/{meta.name}"
        approvals = tuple(
            from_manifest(PtahMigrationApproval, a)
            for a in self.approvals.store.by_index(BY_MIGRATION_NAME, key)
        )
        acknowledgments = tuple(
            from_manifest(PtahMigrationRunAcknowledgment, a)
            for a in self.acknowledgments.store.by_index(BY_MIGRATION_NAME, key)
        )
        claimants = tuple(
            Claimant(
                kind=str(other.get("kind")),
                namespace=str(metadata(other).get("namespace")),
                name=str(metadata(other).get("name")),
                uid=str(metadata(other).get("uid")),
                shared_realm=bool((_spec(other).get("target") or {}).get("sharedRealm")),
                suspended=bool(_spec(other).get("suspend")),
            )
            for informer in (self.migrations, self.schemas)
            for other in informer.store.by_index(BY_COORDINATION_KEY, spec.target.coordination_key)
        )
        realm: PtahRealm | None = None
        realm_missing = False
        if spec.target.realm:
            realm_obj = self.realms.store.get(spec.target.realm)
            if realm_obj is None:
                realm_missing = True
            else:
                realm = from_manifest(PtahRealm, realm_obj)
        lease_obj = self.leases.store.get(
            f"{self.config.lease_namespace}/{realm_lease_name(spec.target.coordination_key)}"
        )
        return MigrationWorld(
            migration=migration,
            now=now,
            new_operation_id="op-" + secrets.token_hex(5),
            runner=self.config.runner,
            source=source,
            verification_policy=verification_policy,
            source_policy=source_policy,
            snapshots=snapshots,
            jobs=jobs,
            results=results,
            plans=plans,
            approvals=approvals,
            acknowledgments=acknowledgments,
            claimants=claimants,
            realm=realm,
            realm_missing=realm_missing,
            lease=lease_state(lease_obj, now) if lease_obj is not None else None,
            manager_namespace=self.config.lease_namespace,
        )

    async def reconcile(self, key: str) -> Result:
        obj = self.migrations.store.get(key)
        if obj is None:
            self.metrics.forget(FAMILY, key)
            return Result.success()
        if metadata(obj).get("deletionTimestamp"):
            return Result.success()
        now = _now()
        world = self.world(obj, now)
        decision = reconcile_migration(world)
        return await self.carry_out(obj, world, decision)

    # -- carrying a Decision out --------------------------------------------------------

    async def carry_out(self, obj: KubeObject, world: MigrationWorld, decision: Decision) -> Result:
        meta = metadata(obj)
        namespace, name = str(meta["namespace"]), str(meta["name"])
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
                MIGRATIONS.plural,
                name,
                patch,
                _content_type="application/merge-patch+json",
            )
            resource_version = str(patched["metadata"]["resourceVersion"])
        taken: list[LeaseAction] = []
        for action in decision.lease:
            if action.verb is not LeaseVerb.ACQUIRE:
                continue
            if not await self._lease(action, world.now):
                await self._release_taken(taken, world.now)
                return Result.requeue(2.0)
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
                    GROUP, VERSION, namespace, MIGRATIONS.plural, name, body
                )
                self.metrics.observe(
                    FAMILY, f"{namespace}/{name}", obj.get("status"), decision.status, world.now
                )
            except ApiException:
                # The claim that would hold the Lease is not on record: give the Lease back
                # rather than leave it to an operation id no status names.
                await self._release_taken(taken, world.now)
                raise
        else:
            self.metrics.set_phase(
                FAMILY, f"{namespace}/{name}", (obj.get("status") or {}).get("phase")
            )
        # Releases follow the status write that ends their claim: a refused write leaves the
        # Lease with the claim still on record, never a claim whose Lease is gone.
        released = True
        for action in decision.lease:
            if action.verb is LeaseVerb.RELEASE and not await self._lease(action, world.now):
                released = False
        for item in decision.create:
            await self._create(item)
        for ref in decision.delete:
            await self._delete(ref)
        for event in decision.events:
            await self._event(obj, event, world.now)
        if not released:
            return Result.requeue(2.0)
        if decision.requeue_after is not None and decision.requeue_after.total_seconds() > 0:
            return Result.requeue(decision.requeue_after.total_seconds())
        return Result.success()

    async def _release_taken(self, taken: list[LeaseAction], now: dt.datetime) -> None:
        for action in taken:
            release = LeaseAction(LeaseVerb.RELEASE, action.name, action.namespace, action.holder)
            try:
                await self._lease(release, now)
            except ApiException as error:
                log.warning("lease not released", lease=action.name, status=error.status)

    async def _lease(self, action: LeaseAction, now: dt.datetime) -> bool:
        """Take or release the realm Lease; False when another operation holds it.

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
                "metadata": {"name": action.name, "namespace": action.namespace},
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
        else:
            return False
        try:
            await self.coordination.replace_namespaced_lease(action.name, action.namespace, lease)
        except ApiException as error:
            if error.status == 409:
                return False
            raise
        return True

    async def _create(self, item: Mapping[str, Any] | OperationCredentials) -> None:
        if isinstance(item, OperationCredentials):
            manifest = self.config.operation_secret(item.namespace, item.operation_id, item.owner)
        else:
            manifest = dict(item)
        kind = manifest["kind"]
        namespace = manifest["metadata"]["namespace"]
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
                raise ValueError(f"the migration controller does not create {kind}")
        except ApiException as error:
            if error.status != 409:
                raise

    async def _delete(self, ref: ObjectRef) -> None:
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

    async def _event(self, obj: KubeObject, event: Event, now: dt.datetime) -> None:
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


def migration_controller(manager: Manager, config: MigrationControllerConfig) -> Controller:
    return MigrationReconciler(manager, config).controller


__all__ = ["Informer", "MigrationControllerConfig", "MigrationReconciler", "migration_controller"]
