"""A PtahMigration whose Job the real API server refuses: a ResourceQuota of no Jobs (and of
no Pods, which refuses the Job's Pods instead).

The quota's admission refuses the Job's create itself (a quota on `pods` would refuse only its
Pods). The controller must not ask for the refused Job again every few seconds with nothing
on record: the read ends Failed, reason JobRefused, on the conditions and in the journal, and
no Job exists (MIG-29, JOB-06). No quota controller runs on the local control plane, so the
test writes the quota's status as that controller would.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import json
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.constants import API_VERSION, GROUP, VERSION
from tests.integration.controller.test_schema_controller_api import (
    Running,
    eventually,
    namespace,
    running,
)

pytestmark = pytest.mark.integration

__all__ = ["namespace", "running"]

MIGRATION_FILES = {"0001_create_invoices.sql": "CREATE TABLE invoices (id BIGINT PRIMARY KEY);\n"}


@pytest.fixture
async def no_jobs_quota(api_client: client.ApiClient, namespace: str) -> None:
    core: Any = client.CoreV1Api(api_client)
    hard = {"count/jobs.batch": "0"}
    await core.create_namespaced_resource_quota(
        namespace, {"metadata": {"name": "no-jobs"}, "spec": {"hard": hard}}
    )
    quota = await core.read_namespaced_resource_quota("no-jobs", namespace)
    quota.status = client.V1ResourceQuotaStatus(hard=hard, used={"count/jobs.batch": "0"})
    await core.replace_namespaced_resource_quota_status("no-jobs", namespace, quota)
    batch: Any = client.BatchV1Api(api_client)
    probe = {
        "metadata": {"name": "probe"},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
            }
        },
    }

    async def in_force() -> bool:
        try:
            await batch.create_namespaced_job(namespace, probe, dry_run="All")
        except ApiException as exc:
            return exc.status == 403 and "exceeded quota" in (exc.body or "")
        return False

    await eventually(in_force, "the quota to refuse Jobs")


@pytest.mark.req("MIG-29", "JOB-06")
async def test_a_history_job_refused_by_a_quota_ends_the_read_failed_job_refused(
    api_client: client.ApiClient, namespace: str, no_jobs_quota: None, running: Running
) -> None:
    core: Any = client.CoreV1Api(api_client)
    custom: Any = client.CustomObjectsApi(api_client)
    batch: Any = client.BatchV1Api(api_client)
    await core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "migrations"}, "data": MIGRATION_FILES}
    )
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        {
            "apiVersion": API_VERSION,
            "kind": "PtahMigration",
            "metadata": {"name": "orders"},
            "spec": {
                "target": {
                    "engine": "PostgreSQL",
                    "coordinationKey": f"{namespace}/orders",
                    "urlFrom": {"name": "orders-database", "key": "url"},
                },
                "configMap": {"name": "migrations"},
            },
        },
    )

    async def failed() -> dict[str, Any] | None:
        obj = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "ptahmigrations", "orders"
        )
        status = obj.get("status") or {}
        return status if status.get("phase") == "Failed" else None

    status = await eventually(failed, "the refused read on record")
    assert status.get("activeOperation") is None
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "JobRefused"
    reconciliation = next(c for c in status["conditions"] if c["type"] == "ReconciliationFailed")
    assert "exceeded quota" in reconciliation["message"]
    entries = status["journal"]["entries"]
    assert [(e["type"], e["reason"]) for e in entries] == [("OperationFailed", "JobRefused")]
    assert entries[0].get("count", 1) == 1

    # It stays that way until failureRetryInterval: no Job, no new attempt in a tight loop.
    await asyncio.sleep(3)
    again = await failed()
    assert again is not None
    assert again["journal"]["entries"] == entries
    assert (await batch.list_namespaced_job(namespace)).items == []


@pytest.mark.req("MIG-27")
async def test_a_job_whose_pods_a_quota_refuses_is_read_as_failed_create(
    api_client: client.ApiClient, namespace: str
) -> None:
    """A quota on pods refuses the Pod, not the Job: the Job controller starts the Job and can
    create no Pod, which the controller reads as FailedCreate (issue #11)."""
    from ptah_operator.controller.world import ProblemOnsets, job_state

    core: Any = client.CoreV1Api(api_client)
    batch: Any = client.BatchV1Api(api_client)
    hard = {"pods": "0"}
    await core.create_namespaced_resource_quota(
        namespace, {"metadata": {"name": "no-pods"}, "spec": {"hard": hard}}
    )
    quota = await core.read_namespaced_resource_quota("no-pods", namespace)
    quota.status = client.V1ResourceQuotaStatus(hard=hard, used={"pods": "0"})
    await core.replace_namespaced_resource_quota_status("no-pods", namespace, quota)
    await batch.create_namespaced_job(
        namespace,
        {
            "metadata": {"name": "ptah-history-00000000aa"},
            "spec": {
                "backoffLimit": 0,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "run", "image": "ptah"}],
                    }
                },
            },
        },
    )

    async def started() -> dict[str, Any] | None:
        response = await batch.read_namespaced_job(
            "ptah-history-00000000aa", namespace, _preload_content=False
        )
        job: dict[str, Any] = json.loads(await response.read())
        return job if (job.get("status") or {}).get("startTime") else None

    await eventually(started, "the Job controller to start the Job")
    await asyncio.sleep(2)
    job = await started()
    assert job is not None
    assert not job["status"].get("active")
    assert (await core.list_namespaced_pod(namespace)).items == []
    problem = job_state(job, []).pod_problem
    assert problem is not None
    assert problem.reason == "FailedCreate"
    assert problem.since is not None
    # The manager times it from the first pass that saw no Pod, not from the Job's start (a
    # Job whose evicted Pod's replacement is refused would otherwise be judged at once).
    first_seen = problem.since + dt.timedelta(minutes=5)
    timed = job_state(job, [], ProblemOnsets(), first_seen).pod_problem
    assert timed == dataclasses.replace(problem, since=first_seen)
