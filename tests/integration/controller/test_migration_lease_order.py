"""The migration controller against the real API server: when it gives a realm Lease back.

A Decision that ends an Apply both writes the status that ends the claim and releases the
claim's Lease. The release comes only after that write succeeded (reconcile/decision.py): if
the write is refused (a stale resourceVersion, 409) the claim is still on record, and it must
still hold its Lease, or the next pass reads the run's own release as the Lease changing hands
under it and discards an Applied result as Unknown (LCK-10, LCK-11).
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.constants import ANNOTATION_LEASE_HOLDER_UID
from ptah_operator.api.names import realm_lease_name
from ptah_operator.controller.migration import MigrationControllerConfig, MigrationReconciler
from ptah_operator.controller.world import MIGRATIONS
from ptah_operator.reconcile.decision import Decision, LeaseAction, LeaseVerb
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.runtime.manager import Manager, ManagerOptions

HOLDER = "op-00000000aa"
NEWCOMER = "op-00000000bb"


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = "lease-order-" + secrets.token_hex(4)
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


def _reconciler(api_client: client.ApiClient, namespace: str) -> MigrationReconciler:
    manager = Manager(api_client, ManagerOptions(metrics_bind_address="127.0.0.1:0"))
    runner = RunnerConfig(
        image="localhost/ptah-operator:dev",
        result_url="https://127.0.0.1:9443/v1/results",
        binding=ExecutionBinding(
            image="localhost/ptah-operator:dev", runner_version="0.1.0", protocol_version=1
        ),
    )
    return MigrationReconciler(
        manager,
        MigrationControllerConfig(
            runner=runner, lease_namespace=namespace, operation_secret=lambda *_: {}
        ),
    )


async def _migration(custom: Any, namespace: str) -> dict[str, Any]:
    created: dict[str, Any] = await custom.create_namespaced_custom_object(
        MIGRATIONS.group,
        MIGRATIONS.version,
        namespace,
        MIGRATIONS.plural,
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
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
    return created


async def _holder(coordination: Any, name: str, namespace: str) -> str | None:
    lease = await coordination.read_namespaced_lease(name, namespace)
    return lease.spec.holder_identity  # type: ignore[no-any-return]


async def test_a_release_waits_for_the_status_write_that_ends_the_claim(
    crds_installed: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    reconciler = _reconciler(api_client, namespace)
    custom: Any = client.CustomObjectsApi(api_client)
    coordination: Any = client.CoordinationV1Api(api_client)
    obj = await _migration(custom, namespace)
    lease_name = realm_lease_name(f"{namespace}/orders")
    now = dt.datetime.now(dt.UTC)
    world = reconciler.world(obj, now)
    take = Decision(lease=(LeaseAction(LeaseVerb.ACQUIRE, lease_name, namespace, HOLDER),))
    await reconciler.carry_out(obj, world, take)
    assert await _holder(coordination, lease_name, namespace) == HOLDER
    taken = await coordination.read_namespaced_lease(lease_name, namespace)
    # The Lease names the resource that took it, so an unrecorded take can be recognized.
    assert taken.metadata.annotations[ANNOTATION_LEASE_HOLDER_UID] == obj["metadata"]["uid"]

    # The run's end, decided from a cache one write behind: the status write is refused.
    stale = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
    end = Decision(
        status={"phase": "VerifyingHistory"},
        lease=(LeaseAction(LeaseVerb.RELEASE, lease_name, namespace, HOLDER),),
    )
    with pytest.raises(ApiException) as refused:
        await reconciler.carry_out(stale, world, end)
    assert refused.value.status == 409
    assert await _holder(coordination, lease_name, namespace) == HOLDER

    # Decided again from the current object: the end is on record, then the Lease is free.
    await reconciler.carry_out(obj, world, end)
    assert await _holder(coordination, lease_name, namespace) is None
    written = await custom.get_namespaced_custom_object(
        MIGRATIONS.group, MIGRATIONS.version, namespace, MIGRATIONS.plural, "orders"
    )
    assert written["status"]["phase"] == "VerifyingHistory"


async def test_a_take_whose_claim_is_refused_gives_the_lease_back(
    crds_installed: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    reconciler = _reconciler(api_client, namespace)
    custom: Any = client.CustomObjectsApi(api_client)
    coordination: Any = client.CoordinationV1Api(api_client)
    obj = await _migration(custom, namespace)
    lease_name = realm_lease_name(f"{namespace}/orders")
    world = reconciler.world(obj, dt.datetime.now(dt.UTC))
    stale = {**obj, "metadata": {**obj["metadata"], "resourceVersion": "1"}}
    claim = Decision(
        status={"phase": "Applying"},
        lease=(LeaseAction(LeaseVerb.ACQUIRE, lease_name, namespace, NEWCOMER),),
    )
    with pytest.raises(ApiException):
        await reconciler.carry_out(stale, world, claim)
    assert await _holder(coordination, lease_name, namespace) is None
