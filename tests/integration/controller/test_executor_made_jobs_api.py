"""An Apply Job the executor created is never created again (issue #18): on the real API server.

A pass asks again for an Apply Job whose claim has no Job seen yet (the cache had not shown
it). If the Job was made, ran and was deleted before any pass saw it, a second create would
make a second Job of the same operation and run the Apply twice. The executor remembers the
create's answer; asked again, it only reads the Job, and a 404 marks it gone for the next World.
A read's Job (History, Plan...) is made again by name on its next attempt, so only Apply Jobs
are held to this.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from prometheus_client import CollectorRegistry

from ptah_operator.api.constants import LABEL_OPERATION_TYPE, LABEL_OWNER_UID
from ptah_operator.controller.executor import NAME_TAKEN, DecisionExecutor
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.reconcile.decision import ObjectRef
from ptah_operator.runtime.clock import MonotonicClock
from tests.integration.controller.test_schema_controller_api import eventually, namespace

pytestmark = pytest.mark.integration

__all__ = ["namespace"]


def job(name: str, namespace: str, operation: str) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {LABEL_OPERATION_TYPE: operation},
        },
        "spec": {
            "suspend": True,  # nothing here runs it either way
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}
            },
        },
    }


def _executor(api_client: client.ApiClient) -> DecisionExecutor:
    return DecisionExecutor(
        api_client,
        family="migration",
        operation_secret=lambda namespace, operation, owner: {},
        metrics=LifecycleMetrics(CollectorRegistry()),
        clock=MonotonicClock(),
    )


async def _uid(batch: Any, namespace: str, name: str) -> str | None:
    jobs = await batch.list_namespaced_job(namespace)
    return next((j.metadata.uid for j in jobs.items if j.metadata.name == name), None)


async def _deleted(batch: Any, namespace: str, name: str) -> None:
    """Delete the Job and wait until the API server no longer holds it."""
    await batch.delete_namespaced_job(name, namespace, propagation_policy="Background")

    async def gone() -> bool:
        return await _uid(batch, namespace, name) is None

    await eventually(gone, f"Job {name} to be gone")


async def test_an_apply_job_made_and_deleted_is_not_made_again(
    api_client: client.ApiClient, namespace: str
) -> None:
    batch: Any = client.BatchV1Api(api_client)
    executor = _executor(api_client)
    owner = {"metadata": {"name": "orders", "namespace": namespace, "uid": "u-1"}}
    key = f"{namespace}/orders"
    apply = job("ptah-apply-00000000cc", namespace, "Apply")

    assert await executor.create(owner, apply) is True
    first = await _uid(batch, namespace, "ptah-apply-00000000cc")
    made = executor.made.of(key, "u-1")["ptah-apply-00000000cc"]
    assert made.uid == first
    assert made.created_at is not None
    assert not made.gone

    # Asked again while it is there: nothing is made, and it is not gone.
    assert await executor.create(owner, apply) is True
    assert await _uid(batch, namespace, "ptah-apply-00000000cc") == first
    assert not executor.made.of(key, "u-1")["ptah-apply-00000000cc"].gone

    # Deleted (finished and removed before any pass saw it), then asked for again: still none.
    await _deleted(batch, namespace, "ptah-apply-00000000cc")
    assert await executor.create(owner, apply) is True
    assert await _uid(batch, namespace, "ptah-apply-00000000cc") is None
    gone = executor.made.of(key, "u-1")["ptah-apply-00000000cc"]
    assert gone.gone
    assert gone.uid == first
    # Another resource of the same name (a new UID) remembers nothing of it.
    assert executor.made.of(key, "u-2") == {}


async def test_a_read_job_is_made_again_by_name(
    api_client: client.ApiClient, namespace: str
) -> None:
    batch: Any = client.BatchV1Api(api_client)
    executor = _executor(api_client)
    owner = {"metadata": {"name": "orders", "namespace": namespace, "uid": "u-1"}}
    history = job("ptah-history-00000000dd", namespace, "History")
    assert await executor.create(owner, history) is True
    first = await _uid(batch, namespace, "ptah-history-00000000dd")
    await _deleted(batch, namespace, "ptah-history-00000000dd")
    assert await executor.create(owner, history) is True
    second = await _uid(batch, namespace, "ptah-history-00000000dd")
    assert second is not None
    assert second != first
    assert executor.made.of(f"{namespace}/orders", "u-1") == {}


async def test_an_apply_job_the_executor_deletes_is_gone_whatever_the_cache_shows(
    api_client: client.ApiClient, namespace: str
) -> None:
    # A Job relabelled out of the owner index is not in the resource's World; past its cap it
    # is deleted by name, and the run ends only once that delete is done.
    executor = _executor(api_client)
    owner = {"metadata": {"name": "orders", "namespace": namespace, "uid": "u-1"}}
    apply = job("ptah-apply-00000000ee", namespace, "Apply")
    assert await executor.create(owner, apply) is True
    assert not executor.made.of(f"{namespace}/orders", "u-1")["ptah-apply-00000000ee"].gone
    await executor.delete(ObjectRef("batch/v1", "Job", namespace, "ptah-apply-00000000ee"))
    assert executor.made.of(f"{namespace}/orders", "u-1")["ptah-apply-00000000ee"].gone


async def test_an_apply_job_create_that_was_answered_or_never_sent_made_nothing(
    api_client: client.ApiClient,
) -> None:
    # Remembered before it is asked for (an answer lost after the write made one all the same);
    # forgotten when the API server answered that it made none, or was never reached.
    owner = {"metadata": {"name": "orders", "namespace": "no-such-namespace", "uid": "u-1"}}
    apply = job("ptah-apply-00000000ff", "no-such-namespace", "Apply")
    executor = _executor(api_client)
    with pytest.raises(ApiException) as answered:
        await executor.create(owner, apply)
    assert answered.value.status == 404
    assert executor.made.of("no-such-namespace/orders", "u-1") == {}

    unreachable = client.Configuration(host="https://127.0.0.1:9")
    async with client.ApiClient(unreachable) as nowhere:
        executor = _executor(nowhere)
        with pytest.raises(aiohttp.ClientConnectorError):
            await executor.create(owner, apply)
        assert executor.made.of("no-such-namespace/orders", "u-1") == {}


def _apply_job(
    name: str,
    namespace: str,
    owner_uid: str,
    command: str,
    controller: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An Apply Job as the families make one: labelled with its owner, a `run` container, and
    (given `controller`) the owner's controller reference."""
    manifest = job(name, namespace, "Apply")
    manifest["metadata"]["labels"][LABEL_OWNER_UID] = owner_uid
    if controller is not None:
        manifest["metadata"]["ownerReferences"] = [controller]
    manifest["spec"]["template"]["spec"]["containers"] = [
        {"name": "run", "image": "registry.local/ptah:1", "command": ["ptah-runner", command]}
    ]
    return manifest


async def _owner(
    api_client: client.ApiClient, namespace: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A real object to own Jobs (the garbage collector removes a Job whose owner is not
    there), as an owner the executor is given, and a controller reference to it."""
    core: Any = client.CoreV1Api(api_client)
    made = await core.create_namespaced_config_map(
        namespace, {"metadata": {"name": "orders-owner"}, "data": {}}
    )
    uid = str(made.metadata.uid)
    reference: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "orders-owner",
        "uid": uid,
        "controller": True,
    }
    return {"metadata": {"name": "orders", "namespace": namespace, "uid": uid}}, reference


async def test_an_apply_name_taken_by_a_job_ptah_did_not_make_is_refused_not_adopted(
    api_client: client.ApiClient, namespace: str
) -> None:
    """Issue #18: someone who read the claim's operation id made a Job under its Apply name
    first, with the owner's label copied; the create's 409 is not taken as the run's Job."""
    batch: Any = client.BatchV1Api(api_client)
    owner, reference = await _owner(api_client, namespace)
    uid = owner["metadata"]["uid"]
    key = f"{namespace}/orders"
    name = "ptah-apply-00000000ee"
    await batch.create_namespaced_job(namespace, _apply_job(name, namespace, uid, "other"))
    foreign = await _uid(batch, namespace, name)

    executor = _executor(api_client)
    ours = _apply_job(name, namespace, uid, "apply", reference)
    assert await executor.create(owner, ours) is False
    assert executor.refusals.of(key, uid) == {name: NAME_TAKEN}
    assert name not in executor.made.of(key, uid)
    jobs = (await batch.list_namespaced_job(namespace)).items
    assert [(j.metadata.name, j.metadata.uid) for j in jobs] == [(name, foreign)]


async def test_an_apply_job_the_owner_controls_is_taken_as_made_on_a_409(
    api_client: client.ApiClient, namespace: str
) -> None:
    """The control: a Job under the name that carries the owner's controller reference (one
    this process does not remember making) is taken as made, by its UID, and an earlier
    attempt's refusal of the name is forgotten."""
    batch: Any = client.BatchV1Api(api_client)
    owner, reference = await _owner(api_client, namespace)
    uid = owner["metadata"]["uid"]
    key = f"{namespace}/orders"
    name = "ptah-apply-00000000ef"
    ours = _apply_job(name, namespace, uid, "apply", reference)
    await batch.create_namespaced_job(namespace, ours)
    made_first = await _uid(batch, namespace, name)

    executor = _executor(api_client)  # (a process that does not remember the create)
    executor.refusals.refused(key, uid, name, "an earlier attempt's refusal")
    assert await executor.create(owner, ours) is True
    assert executor.refusals.of(key, uid) == {}
    assert executor.made.of(key, uid)[name].uid == made_first
