"""A Job whose Pod cannot start, on the stack's real Job path (`process_pods` plays the
kubelet): the controller reads the missing urlFrom Secret from the Job and its Pod by name, and
nothing else of what the Pod says (issue #11; MIG-27, PRIV-04)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.process import Process

from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.migration import PtahMigration
from ptah_operator.controller.world import job_state
from ptah_operator.reconcile.jobs import owner_reference, snapshot_configmap
from ptah_operator.reconcile.migration.jobs import history_job
from ptah_operator.reconcile.world import JobPhase, RunnerConfig, SourceFiles
from ptah_operator.results.credentials import operation_secret
from tests.integration.runner.runner_support import Endpoint, new_operation_id
from tests.integration.runner.test_runner_job import FILES, _record, _wait_job

pytestmark = pytest.mark.integration


async def _raw(call: Any, *args: Any) -> dict[str, Any]:
    response = await call(*args, _preload_content=False)
    body: dict[str, Any] = json.loads(await response.read())
    return body


@pytest.mark.req("MIG-27", "PRIV-04")
async def test_a_history_job_whose_url_secret_is_missing_names_the_secret(
    process_pods: Process,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
) -> None:
    core: Any = k8s_client.CoreV1Api(api_client)
    batch: Any = k8s_client.BatchV1Api(api_client)
    namespace = str(pg_migration.metadata.namespace)
    operation_id = new_operation_id()
    digest, manifest = digest_of_files(FILES)
    source = SourceFiles("orders-migrations", "cm-uid-1", FILES, digest, manifest)
    snapshot_cm = snapshot_configmap(pg_migration, source)
    await core.create_namespaced_config_map(namespace, snapshot_cm)
    await core.create_namespaced_secret(
        namespace,
        operation_secret(
            namespace,
            operation_id,
            endpoint.token(namespace, operation_id),
            endpoint.ca_file.read_bytes(),
            owner_reference(pg_migration),
            operation_type="History",
        ),
    )
    # No Secret under spec.target.urlFrom: the run container cannot be configured.
    runner = RunnerConfig(
        image="ptah", result_url=endpoint.base_url, binding=ExecutionBinding(image="ptah")
    )
    job = history_job(pg_migration, runner, operation_id, _record(snapshot_cm, digest))
    name = job["metadata"]["name"]
    await batch.create_namespaced_job(namespace, job)
    await _wait_job(api_client, namespace, name)

    found = await _raw(batch.read_namespaced_job, name, namespace)
    for _ in range(50):
        pods = (await _raw(core.list_namespaced_pod, namespace))["items"]
        mine = [p for p in pods if (p["metadata"].get("labels") or {}).get("job-name") == name]
        if mine and (mine[0].get("status") or {}).get("reason"):
            break
        await asyncio.sleep(0.1)
    state = job_state(found, mine)
    assert state.phase == JobPhase.FAILED
    assert state.pod_problem is not None
    assert state.pod_problem.reason == "CreateContainerConfigError"
    url_from = pg_migration.spec.target.url_from
    assert state.pod_problem.detail == f"Secret {url_from.name} not found"
    assert state.pod_problem.since is not None
