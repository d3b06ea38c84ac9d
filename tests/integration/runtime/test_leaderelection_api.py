"""Leader election on a real Lease: optimistic concurrency, acquire, renew, release."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
from kubernetes_asyncio import client

from ptah_operator.runtime.leaderelection import (
    KubernetesLeaseLock,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LockConflictError,
)


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = "lease-" + secrets.token_hex(4)
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


def elector(
    api_client: client.ApiClient, namespace: str, identity: str, leading: asyncio.Event
) -> LeaderElector:
    async def started() -> None:
        leading.set()

    config = LeaderElectionConfig(
        namespace=namespace,
        name="leader",
        identity=identity,
        lease_duration=4,
        renew_deadline=3,
        retry_period=0.5,
    )
    return LeaderElector(
        config, KubernetesLeaseLock(api_client, namespace, "leader"), on_started_leading=started
    )


async def test_lease_writes_carry_the_resource_version_they_read(
    api_client: client.ApiClient, namespace: str
) -> None:
    lock = KubernetesLeaseLock(api_client, namespace, "leader")
    assert await lock.get() is None
    record = LeaderElectionRecord("a", 15, None, None, 0)
    rv = await lock.create(record)
    with pytest.raises(LockConflictError):
        await lock.create(record)
    newer = await lock.update(LeaderElectionRecord("a", 15, None, None, 1), rv)
    with pytest.raises(LockConflictError):
        await lock.update(LeaderElectionRecord("b", 15, None, None, 2), rv)
    got = await lock.get()
    assert got is not None
    assert got[1] == newer
    assert got[0].holder_identity == "a"
    assert got[0].lease_transitions == 1


async def test_one_leads_and_a_release_hands_over_at_once(
    api_client: client.ApiClient, namespace: str
) -> None:
    a_leads, b_leads = asyncio.Event(), asyncio.Event()
    a = elector(api_client, namespace, "a", a_leads)
    b = elector(api_client, namespace, "b", b_leads)
    task_a = asyncio.create_task(a.run())
    await asyncio.wait_for(a_leads.wait(), 10)
    task_b = asyncio.create_task(b.run())
    await asyncio.sleep(2)
    assert a.is_leader
    assert not b.is_leader
    assert b.leader == "a"
    lease = await client.CoordinationV1Api(api_client).read_namespaced_lease("leader", namespace)
    assert lease.spec.holder_identity == "a"
    assert lease.spec.lease_duration_seconds == 4
    assert lease.spec.renew_time is not None

    loop = asyncio.get_running_loop()
    a.stop()
    await task_a
    released = loop.time()
    lease = await client.CoordinationV1Api(api_client).read_namespaced_lease("leader", namespace)
    assert lease.spec.holder_identity in ("", "b")
    await asyncio.wait_for(b_leads.wait(), 10)
    # One retry of b (0.5 s * (1 + 1.2)), not the 4 s lease.
    assert loop.time() - released < 0.5 * 2.2 + 0.5, "b must not wait out the lease"
    lease = await client.CoordinationV1Api(api_client).read_namespaced_lease("leader", namespace)
    assert lease.spec.holder_identity == "b"
    assert lease.spec.lease_transitions == 1
    b.stop()
    await task_b
