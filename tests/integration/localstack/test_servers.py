"""The local stack's servers are real and answer: the ground every integration test stands on."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import aiomysql
import asyncpg
from kubernetes_asyncio import client as k8s_client
from localstack.controlplane import ControlPlane


async def test_postgres_is_a_real_server(pg_url: str) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        version = await conn.fetchval("SHOW server_version_num")
        await conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        await conn.execute("INSERT INTO t VALUES (1)")
        assert await conn.fetchval("SELECT count(*) FROM t") == 1
    finally:
        await conn.close()
    assert int(version) >= 150000


async def test_mariadb_is_a_real_server(maria_url: str) -> None:
    parts = urlsplit(maria_url)
    conn = await aiomysql.connect(
        host=parts.hostname, port=parts.port, user="root", password="", db=parts.path.lstrip("/")
    )
    try:
        async with conn.cursor() as cur:
            await cur.execute("SELECT VERSION()")
            (version,) = await cur.fetchone()
    finally:
        conn.close()
    assert "MariaDB" in version


async def test_apiserver_is_real_and_enforces_rbac(
    kube: ControlPlane, api_client: k8s_client.ApiClient
) -> None:
    version = await k8s_client.VersionApi(api_client).get_code()
    assert version.git_version.startswith("v1.")
    namespaces = await k8s_client.CoreV1Api(api_client).list_namespace()
    assert "kube-system" in {ns.metadata.name for ns in namespaces.items}
    # A person without grants is authenticated but refused by RBAC.
    person = kube.user_kubeconfig("alice@example.com", ["developers"])
    denied = kube.kubectl("get", "pods", "-n", "default", kubeconfig=person, check=False)
    assert denied.returncode != 0
    assert 'User "alice@example.com" cannot list resource "pods"' in denied.stderr


async def test_controller_manager_runs_jobs_and_collects_garbage(
    kube: ControlPlane, api_client: k8s_client.ApiClient
) -> None:
    """The real Job controller makes a Pod for a Job; deleting the Job removes it (real GC)."""
    batch = k8s_client.BatchV1Api(api_client)
    core = k8s_client.CoreV1Api(api_client)
    job: Any = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "gc-probe", "namespace": "default"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox", "command": ["true"]}],
                }
            },
        },
    }
    await batch.create_namespaced_job("default", job)
    pods: list[k8s_client.V1Pod] = []
    for _ in range(100):
        pods = (await core.list_namespaced_pod("default", label_selector="job-name=gc-probe")).items
        if pods:
            break
        await asyncio.sleep(0.1)
    assert len(pods) == 1, "the Job controller made no Pod"
    await batch.delete_namespaced_job("gc-probe", "default", propagation_policy="Foreground")
    for _ in range(150):
        pods = (await core.list_namespaced_pod("default", label_selector="job-name=gc-probe")).items
        if not pods:
            break
        await asyncio.sleep(0.1)
    assert pods == [], "the garbage collector left the Job's Pod behind"
