"""Pods as host processes (hack/localstack/processpods.py) run real Jobs: init containers first,
each container with its own environment and mounts, and the real Job controller reads the
outcome from the Pod status."""

from __future__ import annotations

import asyncio
from typing import Any

from kubernetes_asyncio import client as k8s_client
from localstack.process import Process


async def _wait_job(batch: k8s_client.BatchV1Api, name: str, ns: str) -> str:
    for _ in range(300):
        job = await batch.read_namespaced_job_status(name, ns)
        for cond in job.status.conditions or []:
            if cond.type in ("Complete", "Failed") and cond.status == "True":
                return str(cond.type)
        await asyncio.sleep(0.1)
    raise AssertionError(f"job {name} did not finish")


def _job(name: str, init_script: str, main_script: str) -> Any:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "volumes": [
                        {"name": "work", "emptyDir": {}},
                        {"name": "files", "configMap": {"name": "exec-files"}},
                    ],
                    "initContainers": [
                        {
                            "name": "fetch",
                            "image": "ptah",
                            "command": ["/bin/sh", "-c", init_script],
                            "volumeMounts": [
                                {"name": "files", "mountPath": "/ptah/in", "readOnly": True},
                                {"name": "work", "mountPath": "/ptah/work"},
                            ],
                        }
                    ],
                    "containers": [
                        {
                            "name": "main",
                            "image": "ptah",
                            "command": ["/bin/sh", "-c", main_script],
                            "env": [
                                {
                                    "name": "DATABASE_URL",
                                    "valueFrom": {
                                        "secretKeyRef": {"name": "exec-secret", "key": "url"}
                                    },
                                },
                                {
                                    "name": "POD_NAMESPACE",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                },
                            ],
                            "volumeMounts": [{"name": "work", "mountPath": "/ptah/work"}],
                        }
                    ],
                }
            },
        },
    }


async def test_jobs_run_with_separate_environments_and_mounts(
    process_pods: Process, api_client: k8s_client.ApiClient
) -> None:
    core: Any = k8s_client.CoreV1Api(api_client)
    batch = k8s_client.BatchV1Api(api_client)
    ns = "exec-process"
    await core.create_namespace({"metadata": {"name": ns}})
    await core.create_namespaced_config_map(
        ns, {"metadata": {"name": "exec-files"}, "data": {"001_init.up.sql": "SELECT 1;"}}
    )
    await core.create_namespaced_secret(
        ns, {"metadata": {"name": "exec-secret"}, "stringData": {"url": "postgresql://x"}}
    )
    # The init container sees the ConfigMap but not the Secret; the main container the
    # reverse. The main container checks what the init container copied and its own env.
    ok = _job(
        "exec-ok",
        'test -z "$DATABASE_URL" && cp /ptah/in/001_init.up.sql /ptah/work/ && ! touch /ptah/in/x',
        f'test "$DATABASE_URL" = postgresql://x && test "$POD_NAMESPACE" = {ns}'
        " && grep -q 'SELECT 1' /ptah/work/001_init.up.sql && test ! -e /ptah/in",
    )
    await batch.create_namespaced_job(ns, ok)
    assert await _wait_job(batch, "exec-ok", ns) == "Complete"

    failing = _job(
        "exec-fails",
        "true",
        "echo 'refused: 001_init.up.sql' > /dev/termination-log; exit 3",
    )
    await batch.create_namespaced_job(ns, failing)
    assert await _wait_job(batch, "exec-fails", ns) == "Failed"
    pods = await core.list_namespaced_pod(ns, label_selector="job-name=exec-fails")
    terminated = pods.items[0].status.container_statuses[0].state.terminated
    assert terminated.exit_code == 3
    assert terminated.message == "refused: 001_init.up.sql"
