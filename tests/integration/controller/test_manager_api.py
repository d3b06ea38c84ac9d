"""The manager in-process against the real API server: informers, the observation
controllers for PtahMigration and PtahSchema, /metrics, /healthz, /readyz, graceful stop."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import aiohttp
import pytest
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane
from prometheus_client.parser import text_string_to_metric_families

from ptah_operator.controller.observe import PTAH_MIGRATIONS
from ptah_operator.controller.registry import default_registry
from ptah_operator.runtime.leaderelection import LeaderElectionConfig
from ptah_operator.runtime.manager import EXIT_FAILED, EXIT_OK, Manager, ManagerOptions


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = "manager-" + secrets.token_hex(4)
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


def sample(text: str, name: str, labels: dict[str, str]) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return float(s.value)
    return 0.0


async def test_manager_runs_the_observers_and_serves_metrics_and_probes(
    crds_installed: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    manager = Manager(
        api_client,
        ManagerOptions(metrics_bind_address="127.0.0.1:0", graceful_shutdown_timeout=5),
    )
    default_registry().build(manager)
    assert [c.name for c in manager.controllers] == ["ptahmigration", "ptahschema"]
    stop = asyncio.Event()
    run = asyncio.create_task(manager.run(stop))
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession() as http:

        async def get(path: str) -> tuple[int, str]:
            async with http.get(f"http://127.0.0.1:{manager.bound_port}{path}") as response:
                return response.status, await response.text()

        deadline = loop.time() + 30
        while manager.bound_port is None or (await get("/readyz"))[0] != 200:
            assert loop.time() < deadline, f"not ready: {manager.readiness()}"
            await asyncio.sleep(0.05)
        assert await get("/healthz") == (200, "ok")
        _, before = await get("/metrics")
        observed_before = sample(before, "ptah_resources_observed_total", {"kind": "PtahMigration"})

        await client.CustomObjectsApi(api_client).create_namespaced_custom_object(
            PTAH_MIGRATIONS.group,
            PTAH_MIGRATIONS.version,
            namespace,
            PTAH_MIGRATIONS.plural,
            {
                "apiVersion": "operator.ptah.run/v1alpha1",
                "kind": "PtahMigration",
                "metadata": {"name": "orders"},
                "spec": {
                    "target": {
                        "engine": "PostgreSQL",
                        "coordinationKey": f"prod/{namespace}/orders",
                        "urlFrom": {"name": "orders-database", "key": "url"},
                    },
                    "artifact": {
                        "ociRef": "oci://registry.example/acme/orders-migrations:stable",
                        "verificationPolicyFrom": {"name": "v", "key": "policy.yaml"},
                    },
                },
            },
        )
        deadline = loop.time() + 20
        while True:
            _, text = await get("/metrics")
            if (
                sample(text, "ptah_resources_observed_total", {"kind": "PtahMigration"})
                > observed_before
            ):
                break
            assert loop.time() < deadline, "the PtahMigration was not observed"
            await asyncio.sleep(0.05)
        assert (
            sample(
                text, "ptah_reconcile_total", {"controller": "ptahmigration", "result": "success"}
            )
            >= 1
        )
        assert sample(text, "workqueue_adds_total", {"name": "ptahmigration"}) >= 1
        assert "ptah_reconcile_duration_seconds_bucket" in text
        assert "workqueue_queue_duration_seconds_bucket" in text

        stop.set()
        assert await asyncio.wait_for(run, 30) == EXIT_OK
    # The status of the object is untouched: the observers write nothing.
    obj = await client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        PTAH_MIGRATIONS.group,
        PTAH_MIGRATIONS.version,
        namespace,
        PTAH_MIGRATIONS.plural,
        "orders",
    )
    assert "status" not in obj


async def test_a_leader_that_loses_its_lease_stops_its_controllers_and_exits_1(
    crds_installed: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    election = LeaderElectionConfig(
        namespace=namespace,
        name="ptah-operator-leader",
        identity="me",
        lease_duration=4,
        renew_deadline=3,
        retry_period=0.5,
    )
    manager = Manager(
        api_client, ManagerOptions(metrics_bind_address="0", leader_election=election)
    )
    default_registry().build(manager)
    run = asyncio.create_task(manager.run(asyncio.Event()))
    elector = manager.elector
    assert elector is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while not elector.is_leader:
        assert loop.time() < deadline, "never became leader"
        await asyncio.sleep(0.05)

    # Another replica writes itself into the Lease (a partition healed the wrong way round):
    # this one's renewals now conflict or find the Lease held, and it must stop.
    await client.CoordinationV1Api(api_client).patch_namespaced_lease(
        "ptah-operator-leader", namespace, {"spec": {"holderIdentity": "intruder"}}
    )
    lost_at = loop.time()
    assert await asyncio.wait_for(run, 20) == EXIT_FAILED
    assert elector.lost
    # Within the renew deadline (3 s) plus a retry.
    assert loop.time() - lost_at <= 3 + 0.5 + 1.0
