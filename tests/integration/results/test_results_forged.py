"""Forged results on the real API server, written by a person with ConfigMap rights only (and
the ptah-viewer rules of deploy/rbac.yaml, so they can read a PtahMigration's uid and claim).

They can write a `ptah-result-<hex>` ConfigMap owned by a running Apply, with a well-formed body,
the owner labels, even the seal copied from a genuine record of another operation. None of it is
a result: the controller's reading of its caches takes only records whose seal opens, so the
forged outcome ends no run, settles no hold and frees no Lease for a second Apply (MIG-19,
MIG-46, MIG-47; the lifecycle's side is tests/unit/reconcile/migration/
test_migration_result_safety.py). Nor does it keep the runner's real report out: a record under
the operation's name that the endpoint did not seal is left alone, even kept by a finalizer,
and the runner's goes under the fallback name only the result key gives.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.controller.world import Claimed, owned_records, unsealed_records
from ptah_operator.results.credentials import operation_token
from ptah_operator.results.endpoint import receive, record_manifest
from ptah_operator.results.records import ClaimedReport, KubernetesResultStore
from tests.support.webhook_stack import grant

pytestmark = pytest.mark.integration

MALLORY = "mallory@example.com"
KEY = secrets.token_bytes(32)
SEAL = ResultSeal.derived_from(KEY)
APPLY = "op-00000000a1"
EARLIER = "op-00000000a0"


def _viewer_rules() -> list[dict[str, Any]]:
    import yaml

    rbac = Path(__file__).resolve().parents[3] / "deploy" / "rbac.yaml"
    for doc in yaml.safe_load_all(rbac.read_text()):
        if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "ptah-viewer":
            rules: list[dict[str, Any]] = doc["rules"]
            return rules
    raise AssertionError("deploy/rbac.yaml has no ptah-viewer ClusterRole")


@pytest.fixture
async def namespace(api_client: k8s_client.ApiClient) -> AsyncIterator[str]:
    core: Any = k8s_client.CoreV1Api(api_client)
    name = f"forged-{secrets.token_hex(3)}"
    await core.create_namespace({"metadata": {"name": name}})
    yield name
    await core.delete_namespace(name)


@pytest.fixture
async def mallory(
    kube: ControlPlane, api_client: k8s_client.ApiClient, namespace: str
) -> AsyncIterator[k8s_client.ApiClient]:
    """A person who may write ConfigMaps and read Ptah resources, nothing else."""
    configmaps = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}
    await grant(api_client, namespace, MALLORY, [configmaps, *_viewer_rules()])
    configuration = k8s_client.Configuration()
    await k8s_config.load_kube_config(
        config_file=str(kube.user_kubeconfig(MALLORY)), client_configuration=configuration
    )
    async with k8s_client.ApiClient(configuration) as api:
        core: Any = k8s_client.CoreV1Api(api)
        for _ in range(50):  # until the Role takes effect
            try:
                await core.list_namespaced_config_map(namespace)
                break
            except k8s_client.ApiException:
                await asyncio.sleep(0.2)
        yield api


async def _applying(api: k8s_client.ApiClient, namespace: str) -> dict[str, Any]:
    """A PtahMigration whose status claims a running Apply."""
    custom: Any = k8s_client.CustomObjectsApi(api)
    await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "PtahMigration",
            "metadata": {"name": "orders"},
            "spec": {
                "target": {
                    "engine": "PostgreSQL",
                    "coordinationKey": f"{namespace}/orders",
                    "urlFrom": {"name": "db", "key": "url"},
                },
                "configMap": {"name": "files"},
            },
        },
    )
    claim = {"operationID": APPLY, "type": "Apply", "startedAt": "2026-12-01T12:00:00Z"}
    patched: dict[str, Any] = await custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        "orders",
        {"status": {"phase": "Applying", "activeOperation": claim}},
        _content_type="application/merge-patch+json",
    )
    return patched


def _report(migration: dict[str, Any], operation_id: str, outcome: str) -> dict[str, Any]:
    meta = migration["metadata"]
    return {
        "contract": "ptah.run/result/v1",
        "operationID": operation_id,
        "type": "Apply",
        "resource": {
            "kind": "PtahMigration",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
        },
        "run": {"outcome": outcome, "selected": True, "appliedVersions": ["0002"]},
    }


async def test_a_configmap_writer_forges_no_result_for_a_running_apply(
    crds_installed: ControlPlane,
    api_client: k8s_client.ApiClient,
    mallory: k8s_client.ApiClient,
    namespace: str,
) -> None:
    migration = await _applying(api_client, namespace)
    mallory_core: Any = k8s_client.CoreV1Api(mallory)
    # As Mallory: read the migration (viewer rules), then write the outcome she wants, with
    # the seal of a genuine record of an earlier operation copied onto it.
    custom: Any = k8s_client.CustomObjectsApi(mallory)
    seen = await custom.get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrations", "orders"
    )
    assert seen["status"]["activeOperation"]["operationID"] == APPLY
    genuine = record_manifest(_report(migration, EARLIER, "Applied"), EARLIER, SEAL)
    forged = record_manifest(_report(migration, APPLY, "Applied"), APPLY, ResultSeal())
    forged["metadata"]["annotations"] = genuine["metadata"]["annotations"]
    await mallory_core.create_namespaced_config_map(namespace, forged)

    # What the controller's caches would hold: the forged record, as the API server keeps it.
    core: Any = k8s_client.CoreV1Api(api_client)
    listed = await core.list_namespaced_config_map(namespace)
    owned = [api_client.sanitize_for_serialization(item) for item in listed.items]
    owned = [cm for cm in owned if cm["metadata"]["name"].startswith("ptah-result-")]
    assert len(owned) == 1
    _, results = owned_records(owned, SEAL)
    assert results == {}, "a forged record is no result"
    assert unsealed_records(owned, SEAL) == [forged["metadata"]["name"]]

    # The runner's real report then finds the forged record under its name: that is no
    # report, and is left alone; the runner's goes under the fallback name, and is the one
    # result the controller sees.
    store = KubernetesResultStore(api_client)
    token = operation_token(KEY, namespace, APPLY)
    real = json.dumps(_report(migration, APPLY, "Partial")).encode()
    answer = await receive(store, KEY, namespace, APPLY, f"Bearer {token}", real)
    assert answer.status == 201
    listed = await core.list_namespaced_config_map(namespace)
    owned = [api_client.sanitize_for_serialization(item) for item in listed.items]
    owned = [cm for cm in owned if cm["metadata"]["name"].startswith("ptah-result-")]
    _, results = owned_records(owned, SEAL)
    assert results[APPLY].payload["run"]["outcome"] == "Partial"
    # A report of an operation the migration does not have in flight is refused outright, and
    # a Warning Event says so by digest.
    late = await receive(
        store,
        KEY,
        namespace,
        EARLIER,
        f"Bearer {operation_token(KEY, namespace, EARLIER)}",
        json.dumps(_report(migration, EARLIER, "Applied")).encode(),
    )
    assert late.status == 409
    events = await core.list_namespaced_event(namespace)
    assert sorted(e.reason for e in events.items) == ["ResultBlocked", "ResultConflict"]
    assert not any("Applied" in e.message for e in events.items)


async def _claimed(api_client: k8s_client.ApiClient, namespace: str) -> Claimed:
    """The migration's claim as the controller reads it, the endpoint's report in it."""
    custom: Any = k8s_client.CustomObjectsApi(api_client)
    found = await custom.get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrations", "orders"
    )
    claim = ActiveOperation.model_validate(found["status"]["activeOperation"])
    return (claim.operation_id, claim.attempt, claim.report)


async def _result_records(api_client: k8s_client.ApiClient, namespace: str) -> list[Any]:
    core: Any = k8s_client.CoreV1Api(api_client)
    listed = await core.list_namespaced_config_map(namespace)
    owned = [api_client.sanitize_for_serialization(item) for item in listed.items]
    return [cm for cm in owned if cm["metadata"]["name"].startswith("ptah-result-")]


async def test_a_configmap_writer_blocks_no_report_and_a_sealed_copy_wins_nothing(
    crds_installed: ControlPlane,
    api_client: k8s_client.ApiClient,
    mallory: k8s_client.ApiClient,
    namespace: str,
) -> None:
    """Issue #18, third review, 1 and 2. Mallory pre-creates the operation's record name with a
    finalizer (a delete leaves it, being deleted): the runner's report is never answered as
    stored unless it is, and goes under the fallback name only the result key gives. A sealed
    copy of that record under another `ptah-result-*` name is no result, and a finalizer on
    the endpoint's own record does not let a second, different report win."""
    migration = await _applying(api_client, namespace)
    mallory_core: Any = k8s_client.CoreV1Api(mallory)
    hold = {"finalizers": ["example.com/hold"]}
    blocker = record_manifest(_report(migration, APPLY, "Applied"), APPLY, ResultSeal())
    blocker["metadata"].update(hold)
    await mallory_core.create_namespaced_config_map(namespace, blocker)
    primary = blocker["metadata"]["name"]
    store = KubernetesResultStore(api_client)
    bearer = f"Bearer {operation_token(KEY, namespace, APPLY)}"
    real = json.dumps(_report(migration, APPLY, "Partial")).encode()
    try:
        answer = await receive(store, KEY, namespace, APPLY, bearer, real)
        fallback = SEAL.fallback_name(namespace, APPLY, attempt=1)
        assert (answer.status, answer.body) == (201, {"record": fallback, "result": "created"})
        again = await receive(store, KEY, namespace, APPLY, bearer, real)
        assert (again.status, again.body["record"]) == (200, fallback)
        _, results = owned_records(
            await _result_records(api_client, namespace),
            SEAL,
            await _claimed(api_client, namespace),
        )
        assert results[APPLY].payload["run"]["outcome"] == "Partial"
        assert results[APPLY].record_name == fallback

        # A sealed copy of the genuine record under another name, as Mallory can make it.
        genuine = await mallory_core.read_namespaced_config_map(fallback, namespace)
        copy = mallory.sanitize_for_serialization(genuine)
        copy["metadata"] = {
            k: copy["metadata"][k] for k in ("labels", "annotations", "ownerReferences")
        }
        copy["metadata"]["name"] = f"{primary}-zz"
        await mallory_core.create_namespaced_config_map(namespace, copy)
        records = await _result_records(api_client, namespace)
        _, results = owned_records(records, SEAL, await _claimed(api_client, namespace))
        assert results[APPLY].record_name == fallback
        assert sorted(unsealed_records(records, SEAL)) == sorted([primary, f"{primary}-zz"])

        # Mallory holds the endpoint's record with a finalizer and posts a different report
        # (she has the token too): it is refused, and the conflict record cannot be left out.
        await mallory_core.patch_namespaced_config_map(fallback, namespace, {"metadata": hold})
        forged = json.dumps(_report(migration, APPLY, "Applied")).encode()
        # Her delete-and-replace of it by the conflict record leaves it being deleted, and no
        # name is free for the conflict record: 503, however often she sends it; the run has
        # no result (Unknown, held, read back), neither report believed.
        # (Since issue #18's fourth review the claim remembers the first report's digest: the
        # second is refused 409 at once, and the claim marks the conflict.)
        for _ in range(3):
            assert (await receive(store, KEY, namespace, APPLY, bearer, forged)).status == 409
        claimed = await _claimed(api_client, namespace)
        assert claimed[2] is not None
        assert claimed[2].conflict
        _, results = owned_records(
            await _result_records(api_client, namespace),
            SEAL,
            await _claimed(api_client, namespace),
        )
        assert APPLY not in results
        core: Any = k8s_client.CoreV1Api(api_client)
        events = await core.list_namespaced_event(namespace)
        reasons = {e.reason for e in events.items}
        assert {"ResultBlocked", "ResultConflict"} <= reasons
        assert not any("Partial" in e.message or "Applied" in e.message for e in events.items)
    finally:
        core = k8s_client.CoreV1Api(api_client)
        for cm in await _result_records(api_client, namespace):
            if cm["metadata"].get("finalizers"):
                await core.patch_namespaced_config_map(
                    cm["metadata"]["name"], namespace, {"metadata": {"finalizers": None}}
                )


async def test_a_deleted_and_replaced_record_is_refused_and_no_result(
    crds_installed: ControlPlane,
    api_client: k8s_client.ApiClient,
    mallory: k8s_client.ApiClient,
    namespace: str,
) -> None:
    """Issue #18, fourth review, finding 1 (its poc2 and poc3). Mallory, with ConfigMap rights
    and the operation's token, deletes the runner's stored report and posts her own: the
    claim remembers the first report's digest (status, which she cannot write), so hers is
    refused 409 with no record left, and the claim marks the conflict. She deletes the
    conflict record and posts again: 409. The controller takes no result (MIG-19: the Apply
    ends Unknown, held and read back)."""
    migration = await _applying(api_client, namespace)
    mallory_core: Any = k8s_client.CoreV1Api(mallory)
    store = KubernetesResultStore(api_client)
    bearer = f"Bearer {operation_token(KEY, namespace, APPLY)}"
    real = json.dumps(_report(migration, APPLY, "Partial")).encode()
    forged = json.dumps(_report(migration, APPLY, "Applied")).encode()
    read = await store.resource_claim("PtahMigration", namespace, "orders")
    assert read is not None
    assert (await receive(store, KEY, namespace, APPLY, bearer, real)).status == 201
    # The patch tests what it was read against: a stale resourceVersion, or another
    # operation's claim, and it does not land (the API server's failed `test`).
    digest = ClaimedReport("sha256:" + "f" * 64)
    assert not await store.write_report("PtahMigration", namespace, "orders", read, digest)
    other = read._replace(operation_id=EARLIER)
    conflict = ClaimedReport(digest.digest, conflict=True)
    assert not await store.write_report("PtahMigration", namespace, "orders", other, conflict)
    claimed = await _claimed(api_client, namespace)
    assert claimed[2] is not None
    assert not claimed[2].conflict
    _, results = owned_records(await _result_records(api_client, namespace), SEAL, claimed)
    assert results[APPLY].payload["run"]["outcome"] == "Partial"

    record = SEAL.record_names(namespace, APPLY, 1)[0]
    await mallory_core.delete_namespaced_config_map(record, namespace)
    answer = await receive(store, KEY, namespace, APPLY, bearer, forged)
    assert answer.status == 409
    assert await _result_records(api_client, namespace) == []
    claimed = await _claimed(api_client, namespace)
    assert claimed[2] is not None
    assert claimed[2].conflict

    # The runner's retry, or hers again, after the conflict: nothing is stored or believed.
    for body in (forged, real):
        assert (await receive(store, KEY, namespace, APPLY, bearer, body)).status == 409
    for cm in await _result_records(api_client, namespace):
        await mallory_core.delete_namespaced_config_map(cm["metadata"]["name"], namespace)
    assert (await receive(store, KEY, namespace, APPLY, bearer, forged)).status == 409
    _, results = owned_records(
        await _result_records(api_client, namespace), SEAL, await _claimed(api_client, namespace)
    )
    assert APPLY not in results or "conflict" in results[APPLY].payload
    core: Any = k8s_client.CoreV1Api(api_client)
    events = await core.list_namespaced_event(namespace)
    assert "ResultConflict" in {e.reason for e in events.items}
    assert not any("Partial" in e.message or "Applied" in e.message for e in events.items)
