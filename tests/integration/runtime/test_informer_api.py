"""The informer against the real API server: list, watch, and a relist forced by a real 410.

Scenario of the 410: the informer watches Events (which kube-apiserver serves straight from
etcd, not from its watch cache), is stopped as if cut off, objects change meanwhile, etcd is
compacted past the informer's resourceVersion; when the informer comes back, the server answers
its watch with 410 Gone, and the informer must relist and report the deletion it missed.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import urllib.request
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane

from ptah_operator.runtime.informer import EventHandler, Informer
from ptah_operator.runtime.resources import CONFIG_MAPS, Resource, list_watch_for
from ptah_operator.runtime.store import NAMESPACE_INDEX, index_by_label, index_by_namespace

EVENTS = Resource("", "v1", "events", "Event")


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda o: self.events.append(("add", o["metadata"]["name"])),
            on_update=lambda old, new: self.events.append(("update", new["metadata"]["name"])),
            on_delete=lambda o: self.events.append(("delete", o["metadata"]["name"])),
        )


async def eventually(check: Callable[[], bool], what: str, within: float = 20) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"not within {within}s: {what}")
        await asyncio.sleep(0.05)


@pytest.fixture
async def namespace(api_client: client.ApiClient) -> AsyncIterator[str]:
    name = "informer-" + secrets.token_hex(4)
    core = client.CoreV1Api(api_client)
    await core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    await core.delete_namespace(name)


async def test_informer_lists_then_sees_create_update_delete_of_configmaps(
    api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    await core.create_namespaced_config_map(namespace, config_map("before", "1"))
    informer = Informer(
        list_watch_for(api_client, CONFIG_MAPS, namespace),
        name="configmaps",
        indexers={NAMESPACE_INDEX: index_by_namespace, "app": index_by_label("app")},
    )
    rec = Recorder()
    informer.add_handler(rec.handler())
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 30)
        assert rec.events == [("add", "before")]
        held = informer.store.get(f"{namespace}/before")
        assert held is not None
        assert held["kind"] == "ConfigMap"
        assert held["data"] == {"k": "1"}

        await core.create_namespaced_config_map(namespace, config_map("a", "1"))
        await eventually(lambda: ("add", "a") in rec.events, "ADDED a")
        await core.patch_namespaced_config_map("a", namespace, {"data": {"k": "2"}})
        await eventually(lambda: ("update", "a") in rec.events, "MODIFIED a")
        changed = informer.store.get(f"{namespace}/a")
        assert changed is not None
        assert changed["data"] == {"k": "2"}
        assert {o["metadata"]["name"] for o in informer.store.by_index("app", "x")} == {
            "before",
            "a",
        }
        await core.delete_namespaced_config_map("a", namespace)
        await eventually(lambda: ("delete", "a") in rec.events, "DELETED a")
        assert informer.store.keys() == [f"{namespace}/before"]
        assert informer.lists == 1, "no relist in the normal course"
    finally:
        informer.stop()
        await task


def compact_etcd(kube: ControlPlane, revision: int) -> None:
    """Compact etcd up to `revision` through its JSON gateway (what kube-apiserver does every
    5 minutes on its own): older revisions are gone, a watch from them gets 410."""
    body = json.dumps({"revision": revision, "physical": True}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{kube.etcd_port}/v3/kv/compaction", data=body, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200


def event_body(namespace: str, name: str, message: str) -> client.CoreV1Event:
    return client.CoreV1Event(
        metadata=client.V1ObjectMeta(name=name),
        involved_object=client.V1ObjectReference(
            kind="ConfigMap", name="subject", namespace=namespace, api_version="v1"
        ),
        reason="Probe",
        message=message,
        type="Normal",
    )


def config_map(name: str, value: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels={"app": "x"}), data={"k": value}
    )


async def test_a_410_gone_from_the_server_makes_the_informer_relist(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    core = client.CoreV1Api(api_client)
    for name in ("kept", "removed", "untouched"):
        await core.create_namespaced_event(namespace, event_body(namespace, name, "first"))
    informer = Informer(list_watch_for(api_client, EVENTS, namespace), name="events")
    rec = Recorder()
    informer.add_handler(rec.handler())
    task = asyncio.create_task(informer.run())
    await asyncio.wait_for(informer.wait_for_sync(), 30)
    assert sorted(informer.store.keys()) == [
        f"{namespace}/kept",
        f"{namespace}/removed",
        f"{namespace}/untouched",
    ]

    # Cut off: the informer stops watching, keeping its store and resourceVersion.
    informer.stop()
    await task
    stale_rv = informer.last_sync_resource_version
    assert stale_rv is not None
    rec.events.clear()

    await core.delete_namespaced_event("removed", namespace)
    await core.patch_namespaced_event("kept", namespace, {"message": "second"})
    await core.create_namespaced_event(namespace, event_body(namespace, "added", "first"))
    current = await core.list_namespaced_event(namespace)
    compact_etcd(kube, int(current.metadata.resource_version))

    task = asyncio.create_task(informer.run())
    try:
        await eventually(lambda: informer.lists == 2, "a relist after 410 Gone")
        assert informer.expirations == 1, "the relist was the answer to the server's 410"
        assert int(informer.last_sync_resource_version or 0) > int(stale_rv)
        assert sorted(informer.store.keys()) == [
            f"{namespace}/added",
            f"{namespace}/kept",
            f"{namespace}/untouched",
        ]
        kept = informer.store.get(f"{namespace}/kept")
        assert kept is not None
        assert kept["message"] == "second"
        assert sorted(rec.events) == [
            ("add", "added"),
            ("delete", "removed"),
            ("update", "kept"),
            ("update", "untouched"),
        ]
        # And it watches again: a change after the relist arrives as a watch event.
        await core.create_namespaced_event(namespace, event_body(namespace, "later", "first"))
        await eventually(lambda: ("add", "later") in rec.events, "ADDED after the relist")
        assert informer.lists == 2
    finally:
        informer.stop()
        await task


async def test_custom_resources_list_and_watch_through_the_custom_objects_api(
    crds_installed: ControlPlane, api_client: client.ApiClient, namespace: str
) -> None:
    from ptah_operator.controller.observe import PTAH_MIGRATIONS

    custom = client.CustomObjectsApi(api_client)
    informer = Informer(list_watch_for(api_client, PTAH_MIGRATIONS, namespace), name="pmig")
    rec = Recorder()
    informer.add_handler(rec.handler())
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 30)
        await custom.create_namespaced_custom_object(
            PTAH_MIGRATIONS.group,
            PTAH_MIGRATIONS.version,
            namespace,
            PTAH_MIGRATIONS.plural,
            seed_migration(namespace),
        )
        await eventually(lambda: ("add", "orders") in rec.events, "ADDED PtahMigration")
        held = informer.store.get(f"{namespace}/orders")
        assert held is not None
        assert held["kind"] == "PtahMigration"
        assert held["spec"]["target"]["engine"] == "PostgreSQL"
        await custom.delete_namespaced_custom_object(
            PTAH_MIGRATIONS.group,
            PTAH_MIGRATIONS.version,
            namespace,
            PTAH_MIGRATIONS.plural,
            "orders",
        )
        await eventually(lambda: ("delete", "orders") in rec.events, "DELETED PtahMigration")
    finally:
        informer.stop()
        await task


def seed_migration(namespace: str) -> dict[str, Any]:
    """The minimal PtahMigration of seed 002."""
    return {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigration",
        "metadata": {"name": "orders", "namespace": namespace},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": f"prod/{namespace}/orders-primary",
                "urlFrom": {"name": "orders-database", "key": "url"},
            },
            "artifact": {
                "ociRef": "oci://registry.example/acme/orders-migrations:stable",
                "verificationPolicyFrom": {"name": "orders-verification", "key": "policy.yaml"},
            },
        },
    }
