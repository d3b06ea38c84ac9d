"""A Job create the real API server refuses, seen from the executor: a refusal of a Job that
already exists is no refusal.

A pass can ask again for a Job it created when the cache has not shown it yet. Admission runs
before the store's AlreadyExists: a quota on Jobs that the Job itself fills refuses the second
create with 403 "exceeded quota". Taken as a refusal, a running Apply would be recorded as
"nothing ran" and its Lease given back while its Pod works on the database (issue #11's
review). The executor reads the Job back before it believes a refusal. No quota controller
runs on the local control plane: the test writes the quota's status as that controller would.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import CollectorRegistry

from ptah_operator.controller.executor import DecisionExecutor
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.runtime.clock import MonotonicClock
from tests.integration.controller.test_migration_job_refusals_api import no_jobs_quota
from tests.integration.controller.test_schema_controller_api import eventually, namespace

pytestmark = pytest.mark.integration

__all__ = ["namespace", "no_jobs_quota"]


def job(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
            }
        },
    }


def _executor(api_client: client.ApiClient, family: str) -> DecisionExecutor:
    return DecisionExecutor(
        api_client,
        family=family,
        operation_secret=lambda namespace, operation, owner: {},
        metrics=LifecycleMetrics(CollectorRegistry()),
        clock=MonotonicClock(),
    )


@pytest.mark.req("JOB-06", "MIG-21")
async def test_a_refused_create_of_a_job_that_exists_is_taken_as_created(
    api_client: client.ApiClient, namespace: str
) -> None:
    core: Any = client.CoreV1Api(api_client)
    batch: Any = client.BatchV1Api(api_client)
    created = job("ptah-apply-00000000aa")
    created["metadata"]["namespace"] = namespace
    await batch.create_namespaced_job(namespace, created)
    # A quota the Job already there fills: one more is refused.
    hard = {"count/jobs.batch": "1"}
    await core.create_namespaced_resource_quota(
        namespace, {"metadata": {"name": "one-job"}, "spec": {"hard": hard}}
    )
    quota = await core.read_namespaced_resource_quota("one-job", namespace)
    quota.status = client.V1ResourceQuotaStatus(hard=hard, used={"count/jobs.batch": "1"})
    await core.replace_namespaced_resource_quota_status("one-job", namespace, quota)

    async def refusing_the_same_job() -> bool:
        try:
            await batch.create_namespaced_job(namespace, created, dry_run="All")
        except ApiException as exc:
            return exc.status == 403 and "exceeded quota" in (exc.body or "")
        return False

    await eventually(refusing_the_same_job, "the quota to refuse the Job already there")

    executor = _executor(api_client, "migration")
    owner = {"metadata": {"name": "orders", "namespace": namespace, "uid": "u-1"}}
    # Asked again for the Job that exists: created, not refused.
    assert await executor.create(owner, created) is True
    assert executor.refusals.of(f"{namespace}/orders", "u-1") == {}
    # A Job that does not exist, refused by the same quota: refused, and remembered.
    other = job("ptah-apply-00000000bb")
    other["metadata"]["namespace"] = namespace
    assert await executor.create(owner, other) is False
    refusals = executor.refusals.of(f"{namespace}/orders", "u-1")
    assert list(refusals) == ["ptah-apply-00000000bb"]
    assert "exceeded quota" in refusals["ptah-apply-00000000bb"]


@pytest.mark.req("SCH-36", "JOB-06")
async def test_a_read_jobs_next_create_forgets_its_earlier_refusal_even_when_it_gets_no_answer(
    api_client: client.ApiClient, namespace: str, no_jobs_quota: None
) -> None:
    """A schema read keeps its claim after a refused Job and asks for the same name again. If
    that create is never answered (a reset, the server gone), the earlier refusal must not
    stay to fail the next attempt as JobRefused with the old reason."""
    observe = job("ptah-observe-00000000cc")
    observe["metadata"]["namespace"] = namespace
    executor = _executor(api_client, "schema")
    owner = {"metadata": {"name": "catalog", "namespace": namespace, "uid": "u-3"}}
    key = f"{namespace}/catalog"
    assert await executor.create(owner, observe) is False
    assert list(executor.refusals.of(key, "u-3")) == ["ptah-observe-00000000cc"]
    # The next attempt's create reaches no API server: a real connection, refused.
    unreachable = client.Configuration(host="https://127.0.0.1:1")
    async with client.ApiClient(unreachable) as nowhere:
        executor.batch = client.BatchV1Api(nowhere)
        with pytest.raises(aiohttp.ClientConnectorError):
            await executor.create(owner, observe)
    assert executor.refusals.of(key, "u-3") == {}
