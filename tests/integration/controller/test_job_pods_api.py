"""The Pods of a Job as the manager's caches read them from the real API server (issue #11).

A Job deleted with its Pods orphaned and made again under the same name (an operation's next
attempt reuses its Job's name) leaves a Pod that still carries `job-name`; the manager reads a
Job's Pods by the Job's UID, so the earlier Pod's problem is not blamed on the new Job. There
is no kubelet here: the test writes the earlier Pod's status as one would.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from kubernetes_asyncio import client

from ptah_operator.api.constants import LABEL_OPERATION_ID, LABEL_OWNER_UID
from ptah_operator.controller.indexes import BY_OWNER_UID, BY_POD_NAME_STEM
from ptah_operator.controller.world import running_operations
from tests.integration.controller.test_schema_controller_api import (
    Running,
    eventually,
    namespace,
    running,
)

pytestmark = pytest.mark.integration

__all__ = ["namespace", "running"]

NAME = "ptah-history-00000000cc"
OWNER_UID = "00000000-0000-4000-9000-0000000000cc"


def job_manifest() -> dict[str, Any]:
    return {
        "metadata": {"name": NAME, "labels": {LABEL_OWNER_UID: OWNER_UID}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "run", "image": "ptah"}]}
            },
        },
    }


async def _raw(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    response = await call(*args, _preload_content=False, **kwargs)
    body: dict[str, Any] = json.loads(await response.read())
    return body


@pytest.mark.req("MIG-27")
async def test_a_pod_left_by_an_earlier_job_of_the_same_name_is_not_read_as_this_ones(
    api_client: client.ApiClient, namespace: str, running: Running
) -> None:
    core: Any = client.CoreV1Api(api_client)
    batch: Any = client.BatchV1Api(api_client)
    await batch.create_namespaced_job(namespace, job_manifest())

    async def pods() -> list[dict[str, Any]]:
        return list((await _raw(core.list_namespaced_pod, namespace))["items"])

    async def one() -> list[dict[str, Any]] | None:
        found = await pods()
        return found if len(found) == 1 else None

    (earlier,) = await eventually(one, "the Job controller to make the first Job's Pod")
    earlier["status"] = {
        "phase": "Pending",
        "containerStatuses": [
            {
                "name": "run",
                "image": "ptah",
                "imageID": "",
                "ready": False,
                "restartCount": 0,
                "state": {
                    "waiting": {
                        "reason": "CreateContainerConfigError",
                        "message": 'secret "orders-database" not found',
                    }
                },
            }
        ],
    }
    await core.replace_namespaced_pod_status(earlier["metadata"]["name"], namespace, earlier)
    await batch.delete_namespaced_job(NAME, namespace, propagation_policy="Orphan")

    async def gone() -> bool:
        listed = await _raw(batch.list_namespaced_job, namespace)
        return not listed["items"]

    await eventually(gone, "the first Job to be deleted")
    await batch.create_namespaced_job(namespace, job_manifest())

    async def both() -> list[dict[str, Any]] | None:
        found = await pods()
        return found if len(found) == 2 else None

    await eventually(both, "the Job controller to make the second Job's Pod")
    job = await _raw(batch.read_namespaced_job, NAME, namespace)
    lingering = next(p for p in await pods() if p["metadata"]["uid"] == earlier["metadata"]["uid"])
    assert lingering["metadata"]["labels"]["job-name"] == NAME
    waiting = lingering["status"]["containerStatuses"][0]["state"]["waiting"]
    assert waiting["reason"] == "CreateContainerConfigError"
    assert job["metadata"]["uid"] != earlier["metadata"]["labels"]["controller-uid"]

    caches = running.schemas.caches

    async def cached() -> bool:
        cached_job = caches.jobs.store.get(f"{namespace}/{NAME}")
        return (
            cached_job is not None
            and cached_job["metadata"]["uid"] == job["metadata"]["uid"]
            and len(
                [p for p in caches.pods.store.list() if p["metadata"]["namespace"] == namespace]
            )
            == 2
        )

    await eventually(cached, "the caches to show the second Job and both Pods")
    now = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=10)
    state = caches.job_states(namespace, OWNER_UID, now)[NAME]
    assert state.uid == job["metadata"]["uid"]
    assert state.pod_problem is None


async def test_a_pod_orphaned_by_its_jobs_deletion_keeps_its_operation_running(
    api_client: client.ApiClient, namespace: str, running: Running
) -> None:
    # Issue #18: an `edit` user deletes a running Apply's Job with its Pods orphaned. The Pod
    # loses its owner reference; until it stops, its operation is running, by the Pod's name,
    # whatever labels the user then removes.
    core: Any = client.CoreV1Api(api_client)
    batch: Any = client.BatchV1Api(api_client)
    operation = "op-00000000dd"
    labels = {LABEL_OWNER_UID: OWNER_UID, LABEL_OPERATION_ID: operation}
    manifest = job_manifest()
    manifest["metadata"] = {"name": "ptah-apply-00000000dd", "labels": labels}
    manifest["spec"]["template"]["metadata"] = {"labels": labels}
    await batch.create_namespaced_job(namespace, manifest)

    async def one() -> list[dict[str, Any]] | None:
        found = (await _raw(core.list_namespaced_pod, namespace))["items"]
        return found if len(found) == 1 else None

    (made,) = await eventually(one, "the Job controller to make the Job's Pod")
    await batch.delete_namespaced_job(
        "ptah-apply-00000000dd", namespace, propagation_policy="Orphan"
    )
    caches = running.schemas.caches

    def labelled() -> list[dict[str, Any]]:
        return [
            p
            for p in caches.pods.store.by_index(BY_OWNER_UID, OWNER_UID)
            if p["metadata"]["namespace"] == namespace
        ]

    async def orphaned() -> bool:
        return bool(labelled()) and not labelled()[0]["metadata"].get("ownerReferences")

    await eventually(orphaned, "the cache to show the Pod orphaned")

    def named() -> list[tuple[str, str, list[dict[str, Any]]]]:
        key = f"{namespace}/ptah-apply-00000000dd"
        return [
            (operation, "ptah-apply-00000000dd", caches.pods.store.by_index(BY_POD_NAME_STEM, key))
        ]

    assert running_operations([], named(), namespace) == {operation}
    await core.patch_namespaced_pod(
        made["metadata"]["name"], namespace, {"metadata": {"labels": {LABEL_OPERATION_ID: None}}}
    )

    async def unlabelled() -> bool:
        return not any(
            LABEL_OPERATION_ID in (p["metadata"].get("labels") or {}) for p in labelled()
        )

    await eventually(unlabelled, "the cache to show the Pod's operation label removed")
    assert running_operations([], named(), namespace) == {operation}
    pod = await _raw(core.read_namespaced_pod, made["metadata"]["name"], namespace)
    pod["status"] = {"phase": "Succeeded"}
    await core.replace_namespaced_pod_status(pod["metadata"]["name"], namespace, pod)

    async def stopped() -> bool:
        return running_operations([], named(), namespace) == frozenset()

    await eventually(stopped, "the cache to show the Pod stopped")
