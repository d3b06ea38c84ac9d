"""The result store and the result key on the real API server."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.controlplane import ControlPlane

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.results.endpoint import record_manifest
from ptah_operator.results.records import KubernetesResultStore, load_result_key

pytestmark = pytest.mark.integration


async def _namespace(api: k8s_client.ApiClient) -> str:
    core: Any = k8s_client.CoreV1Api(api)
    name = f"results-{secrets.token_hex(3)}"
    await core.create_namespace({"metadata": {"name": name}})
    return name


async def test_the_result_key_is_made_once_and_then_read(
    api_client: k8s_client.ApiClient, tmp_path: Path
) -> None:
    namespace = await _namespace(api_client)
    # Two managers starting at once agree on one key.
    first, second = await asyncio.gather(
        load_result_key(api_client, namespace), load_result_key(api_client, namespace)
    )
    assert first == second
    assert len(first) == 32
    assert await load_result_key(api_client, namespace) == first
    core: Any = k8s_client.CoreV1Api(api_client)
    secret = await core.read_namespaced_secret("ptah-operator-result-key", namespace)
    assert secret.immutable is True
    key_file = tmp_path / "key"
    key_file.write_bytes(b"f" * 40)
    assert await load_result_key(api_client, namespace, key_file=key_file) == b"f" * 40


async def test_the_store_finds_resources_and_records(
    api_client: k8s_client.ApiClient, crds_installed: ControlPlane
) -> None:
    namespace = await _namespace(api_client)
    custom: Any = k8s_client.CustomObjectsApi(api_client)
    migration = await custom.create_namespaced_custom_object(
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
                    "coordinationKey": "k",
                    "urlFrom": {"name": "db", "key": "url"},
                },
                "configMap": {"name": "files"},
            },
        },
    )
    uid = migration["metadata"]["uid"]
    store = KubernetesResultStore(api_client)
    assert await store.resource_uid("PtahMigration", namespace, "orders") == uid
    assert await store.resource_uid("PtahMigration", namespace, "missing") is None
    assert await store.read_record(namespace, "ptah-result-0000000000") is None
    document = {
        "contract": "ptah.run/result/v1",
        "operationID": "op-0000000000",
        "type": "History",
        "resource": {"kind": "PtahMigration", "namespace": namespace, "name": "orders", "uid": uid},
    }
    record = record_manifest(document, "op-0000000000", ResultSeal())
    assert await store.create_record(record) is True
    assert await store.create_record(record) is False
    assert (
        await store.read_record(namespace, "ptah-result-0000000000")
        == (record["data"]["result.json"])
    )
