"""Issue #18, attack 1 with the manager's own runner: `spec.target.urlFrom` names another
application's Secret, whose value is no database URL of this resource (a token, or a URL with a
password). The real History Job runs on the stack's Job path (`process_pods` plays the
kubelet) and fails; nothing of the Secret's value reaches what the controller reads into status
and Events: neither the Job's state (`job_state`) nor the result record. The runner does not
even write it into its own termination message."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.process import Process

from ptah_operator.api.migration import PtahMigration
from ptah_operator.controller.world import job_state
from ptah_operator.reconcile.migration.jobs import history_job
from ptah_operator.reconcile.world import JobPhase
from tests.integration.runner.runner_support import Endpoint, new_operation_id, read_record
from tests.integration.runner.test_runner_job import _prepare, _record, _wait_job
from tests.integration.runner.test_runner_job_pods import _raw

pytestmark = pytest.mark.integration

MARKER = "zq7-billing-s3cr3t"


@pytest.mark.req("PRIV-04", "PRIV-05", "PRIV-06", "JOB-01")
@pytest.mark.parametrize(
    "value",
    [MARKER, f"postgresql://billing:{MARKER}@127.0.0.1:1/{MARKER}", f"sk_live_{MARKER}://x"],
    ids=["a token", "a URL of another database", "a scheme of its own"],
)
async def test_the_value_of_the_secret_url_from_names_never_leaves_the_pod(
    process_pods: Process,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
    value: str,
) -> None:
    core: Any = k8s_client.CoreV1Api(api_client)
    batch: Any = k8s_client.BatchV1Api(api_client)
    namespace = str(pg_migration.metadata.namespace)
    operation_id = new_operation_id()
    snapshot_cm, runner, digest = await _prepare(
        api_client, pg_migration, value, endpoint, operation_id, "History"
    )
    job = history_job(pg_migration, runner, operation_id, _record(snapshot_cm, digest))
    name = job["metadata"]["name"]
    await batch.create_namespaced_job(namespace, job)
    await _wait_job(api_client, namespace, name)

    found = await _raw(batch.read_namespaced_job, name, namespace)
    pods = [
        p
        for p in (await _raw(core.list_namespaced_pod, namespace))["items"]
        if (p["metadata"].get("labels") or {}).get("job-name") == name
    ]
    assert pods
    assert MARKER not in json.dumps(pods[0]["status"])
    state = job_state(found, pods)
    assert MARKER not in repr(state)
    record = await read_record(api_client, namespace, operation_id)
    assert MARKER not in json.dumps(record)
    if record is None:
        assert state.phase == JobPhase.FAILED
