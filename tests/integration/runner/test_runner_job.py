"""The real Job path: Jobs built by `reconcile.jobs`, run as host processes
(`process_pods`: each container a local process with its own env and mounts), reporting over TLS to the
result endpoint, which records into the API server."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.process import Process

from ptah_operator.api.common import ExecutionBinding, SourceRecord
from ptah_operator.api.constants import SourceKind
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.migration import PtahMigration
from ptah_operator.reconcile.jobs import owner_reference, snapshot_configmap
from ptah_operator.reconcile.migration.jobs import apply_job, history_job
from ptah_operator.reconcile.world import RunnerConfig, SourceFiles
from ptah_operator.results.credentials import operation_secret
from tests.integration.engine.migrations.mig_support import snapshot
from tests.integration.runner.runner_support import (
    Endpoint,
    new_operation_id,
    plan_for,
    read_record,
)

pytestmark = pytest.mark.integration

FILES = {
    "0000000001_users.up.sql": b"CREATE TABLE users (id INT PRIMARY KEY, email VARCHAR(100));\n",
    "0000000002_seed.up.sql": b"INSERT INTO users VALUES (1, 'a@example.com');\n",
}


async def _prepare(
    api: k8s_client.ApiClient,
    migration: PtahMigration,
    url: str,
    endpoint: Endpoint,
    operation_id: str,
    operation_type: str,
    altered: dict[str, str] | None = None,
) -> tuple[dict[str, Any], RunnerConfig, str]:
    """The snapshot, the URL Secret and the operation Secret, as the controller makes them."""
    core: Any = k8s_client.CoreV1Api(api)
    namespace = str(migration.metadata.namespace)
    # The claim the manager writes before it makes a Job: the endpoint takes only its report.
    endpoint.store.in_flight[(namespace, str(migration.metadata.name))] = operation_id
    digest, manifest = digest_of_files(FILES)
    source = SourceFiles("orders-migrations", "cm-uid-1", FILES, digest, manifest)
    snapshot_cm = snapshot_configmap(migration, source)
    snapshot_cm["data"].update(altered or {})
    await core.create_namespaced_config_map(namespace, snapshot_cm)
    url_from = migration.spec.target.url_from
    await core.create_namespaced_secret(
        namespace,
        {"metadata": {"name": url_from.name}, "stringData": {url_from.key: url}},
    )
    secret = operation_secret(
        namespace,
        operation_id,
        endpoint.token(namespace, operation_id),
        endpoint.ca_file.read_bytes(),
        owner_reference(migration),
        operation_type=operation_type,
    )
    await core.create_namespaced_secret(namespace, secret)
    runner = RunnerConfig(
        image="ptah", result_url=endpoint.base_url, binding=ExecutionBinding(image="ptah")
    )
    return snapshot_cm, runner, digest


async def _wait_job(api: k8s_client.ApiClient, namespace: str, name: str) -> str:
    batch = k8s_client.BatchV1Api(api)
    for _ in range(600):
        job = await batch.read_namespaced_job_status(name, namespace)
        for condition in job.status.conditions or []:
            if condition.type in ("Complete", "Failed") and condition.status == "True":
                return str(condition.type)
        await asyncio.sleep(0.1)
    raise AssertionError(f"Job {name} did not finish")


async def _pod(api: k8s_client.ApiClient, namespace: str, job: str) -> Any:
    core: Any = k8s_client.CoreV1Api(api)
    pods = await core.list_namespaced_pod(namespace, label_selector=f"job-name={job}")
    assert len(pods.items) == 1
    return pods.items[0]


@pytest.mark.req("JOB-01", "JOB-02", "JOB-03", "SRC-CM-07", "SRC-CM-08", "PATH-12")
async def test_a_history_job_reports_its_reading_into_a_record(
    process_pods: Process,
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
) -> None:
    namespace = str(pg_migration.metadata.namespace)
    operation_id = new_operation_id()
    snapshot_cm, runner, digest = await _prepare(
        api_client, pg_migration, pg_url, endpoint, operation_id, "History"
    )
    job = history_job(pg_migration, runner, operation_id, _record(snapshot_cm, digest))
    batch: Any = k8s_client.BatchV1Api(api_client)
    await batch.create_namespaced_job(namespace, job)
    assert await _wait_job(api_client, namespace, job["metadata"]["name"]) == "Complete"

    record = await read_record(api_client, namespace, operation_id)
    assert record is not None
    assert record["type"] == "History"
    assert record["resource"]["uid"] == pg_migration.metadata.uid
    assert record["history"]["verdict"] == "ReadyToPlan"
    assert [p["version"] for p in record["history"]["pending"]] == ["0000000001", "0000000002"]
    pod = await _pod(api_client, namespace, job["metadata"]["name"])
    init = pod.status.init_container_statuses[0].state.terminated
    assert init.exit_code == 0
    run = pod.status.container_statuses[0].state.terminated
    assert run.exit_code == 0
    assert run.message == "History ReadyToPlan"


@pytest.mark.req("SRC-CM-09", "SRC-CM-08", "JOB-03", "SRC-CM-16", "PRIV-01")
async def test_an_altered_snapshot_stops_the_pod_before_the_run_container(
    process_pods: Process,
    pg_url: str,
    pg_migration: PtahMigration,
    endpoint: Endpoint,
    api_client: k8s_client.ApiClient,
) -> None:
    namespace = str(pg_migration.metadata.namespace)
    operation_id = new_operation_id()
    changed = "0000000002_seed.up.sql"
    snapshot_cm, runner, digest = await _prepare(
        api_client,
        pg_migration,
        pg_url,
        endpoint,
        operation_id,
        "Apply",
        altered={changed: "DROP TABLE users;\n"},
    )
    versions = [
        {
            "version": name.split("_", 1)[0],
            "checksum": "sha256:" + hashlib.sha256(data).hexdigest(),
        }
        for name, data in sorted(FILES.items())
    ]
    plan = plan_for(pg_migration, FILES, versions, "sha256:" + "a" * 64, "sha256:" + "b" * 64)
    before = await snapshot(pg_url)
    job = apply_job(pg_migration, runner, operation_id, _record(snapshot_cm, digest), plan)
    batch: Any = k8s_client.BatchV1Api(api_client)
    await batch.create_namespaced_job(namespace, job)
    assert await _wait_job(api_client, namespace, job["metadata"]["name"]) == "Failed"

    pod = await _pod(api_client, namespace, job["metadata"]["name"])
    init = pod.status.init_container_statuses[0].state.terminated
    assert init.exit_code == 3
    assert init.message == f"snapshot refused: file {changed} does not match the manifest"
    # The container holding the database URL never started.
    run = pod.status.container_statuses[0]
    assert run.state.terminated is None
    assert run.state.running is None
    assert run.state.waiting is not None
    assert await read_record(api_client, namespace, operation_id) is None
    assert await snapshot(pg_url) == before


def _record(snapshot_cm: dict[str, Any], digest: str) -> SourceRecord:
    return SourceRecord(
        kind=SourceKind.CONFIG_MAP,
        snapshot_name=snapshot_cm["metadata"]["name"],
        content_digest=digest,
    )
