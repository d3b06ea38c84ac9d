"""The manager's caches keep only what a decision reads (issue #17): a World built from
transformed objects is the World built from whole ones, and the transforms do drop the rest."""

from __future__ import annotations

import copy
import datetime as dt
import json
from typing import Any

from ptah_operator.api.common import ReceivedReport
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.controller.cache import CACHE_TRANSFORMS, keep_configmap, keep_job, keep_pod
from ptah_operator.controller.indexes import FamilyWatches
from ptah_operator.controller.world import SharedCaches
from ptah_operator.results.answers import canonical_json
from ptah_operator.results.endpoint import record_manifest
from ptah_operator.runtime.informer import LAST_APPLIED, Informer
from ptah_operator.runtime.manager import Manager, ManagerOptions
from ptah_operator.runtime.store import KubeObject

SEAL = ResultSeal.derived_from(b"c" * 32)
NS, UID, OP, HEX = "shop", "u-orders", "op-00a0000001", "00a0000001"
NOW = dt.datetime(2026, 12, 2, 4, 0, tzinfo=dt.UTC)
API = "operator.ptah.run/v1alpha1"
OWNER_LABELS = {
    "app.kubernetes.io/managed-by": "ptah-operator",
    "operator.ptah.run/owner-kind": "PtahMigration",
    "operator.ptah.run/owner-name": "orders",
    "operator.ptah.run/owner-uid": UID,
    "operator.ptah.run/operation-id": OP,
}
OWNER_REF = {
    "apiVersion": API,
    "kind": "PtahMigration",
    "name": "orders",
    "uid": UID,
    "controller": True,
    "blockOwnerDeletion": True,
}
MANAGED = [{"manager": "kubectl", "operation": "Update", "fieldsV1": {"f:data": {"x": {}}}}]


def _meta(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "resourceVersion": "7",
        "creationTimestamp": "2026-12-02T03:50:00Z",
        "managedFields": copy.deepcopy(MANAGED),
        **extra,
    }


MIGRATION: KubeObject = {
    "apiVersion": API,
    "kind": "PtahMigration",
    "metadata": {
        **_meta("orders", uid=UID),
        "annotations": {LAST_APPLIED: '{"spec": "..."}'},
    },
    "spec": {
        "target": {
            "engine": "PostgreSQL",
            "coordinationKey": "shop/orders",
            "urlFrom": {"name": "orders-db", "key": "url"},
        },
        "configMap": {"name": "orders-files"},
        "policy": {"apply": "Always"},
    },
}

JOB_NAME = f"ptah-apply-{HEX}"


def _job(uid: str, conditions: list[dict[str, Any]]) -> KubeObject:
    labels = dict(OWNER_LABELS)
    if uid != "j-1":  # an earlier operation's read, its Pod failed
        labels["operator.ptah.run/operation-id"] = "op-00a0000000"
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _meta(
            JOB_NAME if uid == "j-1" else "ptah-read-00a0000000",
            uid=uid,
            labels=labels,
            ownerReferences=[OWNER_REF],
        ),
        "spec": {
            "activeDeadlineSeconds": 600,
            "backoffLimit": 0,
            "ttlSecondsAfterFinished": 3600,
            "suspend": False,
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
            "template": {
                "metadata": {"labels": dict(OWNER_LABELS)},
                "spec": {
                    "containers": [
                        {
                            "name": "runner",
                            "image": "ptah@sha256:" + "0" * 64,
                            "env": [{"name": "X", "value": "y" * 500}],
                            "volumeMounts": [{"name": "snapshot", "mountPath": "/ptah"}],
                        }
                    ],
                    "volumes": [{"name": "snapshot", "configMap": {"name": "ptah-src-1"}}],
                },
            },
        },
        "status": {
            "startTime": "2026-12-02T03:55:00Z",
            "active": 1 if not conditions else 0,
            "conditions": conditions,
        },
    }


def _pod(name: str, job_uid: str | None, status: dict[str, Any]) -> KubeObject:
    labels = {**OWNER_LABELS, "job-name": JOB_NAME, "batch.kubernetes.io/controller-uid": "j-1"}
    refs = (
        [
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "name": JOB_NAME,
                "uid": job_uid,
                "controller": True,
            }
        ]
        if job_uid
        else []
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": _meta(name, labels=labels, ownerReferences=refs),
        "spec": {
            "nodeName": "node-1",
            "initContainers": [{"name": "source", "image": "ptah", "args": ["source"] * 20}],
            "containers": [
                {"name": "runner", "image": "ptah", "env": [{"name": "A", "value": "b"}]}
            ],
            "volumes": [{"name": "v", "secret": {"secretName": "s"}}],
        },
        "status": {
            "hostIP": "10.0.0.1",
            "podIP": "10.1.0.9",
            "qosClass": "BestEffort",
            "conditions": [{"type": "Ready", "status": "False"}],
            "startTime": "2026-12-02T03:55:01Z",
            **status,
        },
    }


def _container(name: str, state: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "state": state,
        "lastState": {},
        "ready": False,
        "restartCount": 0,
        "image": "ptah",
        "imageID": "sha256:" + "1" * 64,
        "containerID": "containerd://" + "2" * 64,
        "started": False,
    }


PODS = [
    # The Job's Pod, its runner waiting for a Secret that is not there.
    _pod(
        f"{JOB_NAME}-abcde",
        "j-1",
        {
            "phase": "Pending",
            "initContainerStatuses": [
                _container("source", {"terminated": {"exitCode": 0, "reason": "Completed"}})
            ],
            "containerStatuses": [
                _container(
                    "runner",
                    {
                        "waiting": {
                            "reason": "CreateContainerConfigError",
                            "message": 'secret "orders-db" not found',
                        }
                    },
                )
            ],
        },
    ),
    # The read Job's Pod: its source container refused the snapshot.
    _pod(
        "ptah-read-00a0000000-fghij",
        "j-2",
        {
            "phase": "Failed",
            "initContainerStatuses": [
                _container("source", {"terminated": {"exitCode": 3, "reason": "Error"}})
            ],
        },
    ),
    # An orphan of the claim's Job (its Job deleted with --cascade=orphan), still running.
    _pod(f"{JOB_NAME}-zzzzz", None, {"phase": "Running"}),
]

JOBS = [
    _job("j-1", []),
    _job("j-2", [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]),
]


def _configmaps() -> list[KubeObject]:
    source = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta("orders-files", annotations={LAST_APPLIED: "{}"}),
        "data": {"0000000001_a.up.sql": "CREATE TABLE a (id int);\n"},
    }
    snapshot: KubeObject = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": _meta(
            "ptah-src-0123456789abcdef0123",
            labels={**OWNER_LABELS, "operator.ptah.run/snapshot": "true"},
            ownerReferences=[OWNER_REF],
        ),
        "immutable": True,
        "data": {"0000000001_a.up.sql": "CREATE TABLE a (id int);\n", "manifest": "x" * 2000},
    }
    record = record_manifest(RESULT_DOCUMENT, OP, SEAL)
    record["metadata"].update(uid="uid-record", creationTimestamp="2026-12-02T03:58:00Z")
    record["metadata"]["managedFields"] = copy.deepcopy(MANAGED)
    # A snapshot-looking ConfigMap no resource of ours controls: kept whole.
    lookalike = copy.deepcopy(snapshot)
    lookalike["metadata"].update(name="ptah-src-lookalike", ownerReferences=[])
    return [source, snapshot, record, lookalike]


RESULT_DOCUMENT = {
    "contract": "ptah.run/result/v1",
    "operationID": OP,
    "type": "History",
    "resource": {"kind": "PtahMigration", "namespace": NS, "name": "orders", "uid": UID},
    "history": {"verdict": "NothingPending", "pendingCount": 0},
}
# The claim remembers the digest of the attempt's first report (the endpoint's patch).
CLAIM = (OP, 1, ReceivedReport(attempt=1, digest=body_digest(canonical_json(RESULT_DOCUMENT))))


def _caches(options: ManagerOptions) -> SharedCaches:
    manager = Manager(object(), options)  # type: ignore[arg-type]
    caches = SharedCaches(manager, "ptah-system", SEAL)
    contents: list[tuple[Informer, list[KubeObject]]] = [
        (caches.migrations, [MIGRATION]),
        (caches.jobs, JOBS),
        (caches.pods, PODS),
        (caches.configmaps, _configmaps()),
    ]
    for informer, objs in contents:
        for obj in objs:
            held = copy.deepcopy(obj)
            informer.store.upsert(informer.transform(held) if informer.transform else held)
    return caches


def _whole() -> SharedCaches:
    return _caches(ManagerOptions(metrics_bind_address="0", default_transform=None))


def _kept() -> SharedCaches:
    return _caches(ManagerOptions(metrics_bind_address="0", transforms=CACHE_TRANSFORMS))


def test_a_world_from_the_transformed_caches_is_the_world_from_whole_objects() -> None:
    spec = from_manifest(PtahMigration, MIGRATION).spec
    worlds = []
    for caches in (_whole(), _kept()):
        world = caches.common(spec, NS, UID, NOW, claim=CLAIM)
        worlds.append(world)
        assert caches.configmaps.store.get(f"{NS}/orders-files") is not None
    whole, kept = worlds
    assert kept == whole
    # The fixture exercises what the World reads: a Pod problem, a refused snapshot, a run an
    # orphan keeps open, a snapshot, a sealed result, the source's files.
    assert whole.jobs[JOB_NAME].pod_problem is not None
    assert whole.jobs["ptah-read-00a0000000"].snapshot_refused
    assert whole.running_pods == {OP}
    assert whole.snapshots == {"ptah-src-0123456789abcdef0123", "ptah-src-lookalike"}
    assert list(whole.results) == [OP]
    assert whole.source is not None
    assert whole.source.refusal is None


def test_the_watches_map_transformed_objects_to_the_same_keys() -> None:
    whole, kept = _whole(), _kept()
    for caches in (whole, kept):
        caches.watches = FamilyWatches("PtahMigration", caches.migrations, caches.jobs)  # type: ignore[attr-defined]
    for pod in PODS:
        key = f"{NS}/{pod['metadata']['name']}"
        assert kept.watches.pod_keys(kept.pods.store.get(key)) == whole.watches.pod_keys(  # type: ignore[attr-defined]
            whole.pods.store.get(key)
        )


def test_the_transforms_drop_what_no_reader_reads() -> None:
    pod = keep_pod(copy.deepcopy(PODS[0]))
    assert "spec" not in pod
    assert "managedFields" not in pod["metadata"]
    assert set(pod["status"]) == {
        "phase",
        "startTime",
        "initContainerStatuses",
        "containerStatuses",
    }
    assert set(pod["status"]["containerStatuses"][0]) == {
        "name",
        "state",
        "lastState",
        "ready",
        "restartCount",
    }
    job = keep_job(copy.deepcopy(JOBS[0]))
    assert "template" not in job["spec"]
    assert "selector" not in job["spec"]
    assert job["spec"]["activeDeadlineSeconds"] == 600  # the deadline gauge reads it
    assert job["status"]["startTime"] == "2026-12-02T03:55:00Z"
    source, snapshot, record, lookalike = (keep_configmap(cm) for cm in _configmaps())
    assert LAST_APPLIED not in (source["metadata"].get("annotations") or {})
    assert "annotations" not in source["metadata"]
    assert source["data"]
    assert "data" not in snapshot
    assert snapshot["metadata"]["labels"]["operator.ptah.run/snapshot"] == "true"
    assert "managedFields" not in record["metadata"]
    assert record["data"]
    assert lookalike["data"]
    held = len(json.dumps([keep_pod(copy.deepcopy(p)) for p in PODS]))
    assert held < len(json.dumps(PODS)) / 2


def test_a_resources_jobs_are_its_controlled_ones_in_its_namespace() -> None:
    """Issue #18, from a review: a Job relabelled (its owner label changed) stays in its
    resource's World by its controller reference; a Job carrying the resource's UID in another
    namespace is not its own, though the World keys Jobs by name alone."""
    caches = _whole()
    relabelled = copy.deepcopy(_job("j-3", []))
    relabelled["metadata"].update(name="ptah-read-00a0000003")
    relabelled["metadata"]["labels"] = {**OWNER_LABELS, "operator.ptah.run/owner-uid": "other"}
    elsewhere = copy.deepcopy(_job("j-4", []))
    elsewhere["metadata"].update(name="ptah-read-00a0000004", namespace="another-namespace")
    caches.jobs.store.upsert(relabelled)
    caches.jobs.store.upsert(elsewhere)
    world = caches.common(from_manifest(PtahMigration, MIGRATION).spec, NS, UID, NOW, claim=CLAIM)
    assert "ptah-read-00a0000003" in world.jobs
    assert "ptah-read-00a0000004" not in world.jobs
