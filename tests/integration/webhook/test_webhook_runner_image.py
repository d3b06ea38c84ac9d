"""Issue #18, attack 1 on a real API server: mallory may write ConfigMaps and PtahMigrations
only (no Secrets, no Pods, no Jobs). An image of her own is refused at admission with the rule
named and nothing of her reference or of any Secret; without an image of her own her resource
is admitted, and it runs the manager's image (the Job builder, tests/unit/reconcile)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane

from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.webhook.registration import IMAGE_WEBHOOK_NAME
from ptah_operator.webhook.tls import HttpsServer
from tests.support.webhook_stack import (
    create_namespace,
    delete_namespace,
    grant,
    running_webhooks,
)

pytestmark = pytest.mark.integration

MALLORY = "mallory@example.com"
MARKER = "billing-s3cr3t-9f1c"
AUTHOR_RULES = [
    {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "create"]},
    {"apiGroups": [GROUP], "resources": ["ptahmigrations"], "verbs": ["get", "list", "create"]},
]


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "image")
    yield name
    await delete_namespace(api_client, name)


@pytest.fixture
async def webhooks(
    api_client: client.ApiClient, namespace: str, tmp_path: Path
) -> AsyncIterator[HttpsServer]:
    async with running_webhooks(api_client, namespace, tmp_path) as server:
        yield server


async def as_mallory(
    kube: ControlPlane, kubeconfig: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(
        kube.kubectl, *args, input=input, check=False, kubeconfig=kubeconfig
    )


def migration(name: str, image: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "target": {
            "engine": "PostgreSQL",
            "coordinationKey": f"prod/{name}",
            "urlFrom": {"name": "billing-database", "key": "url"},
        },
        "configMap": {"name": "orders-migrations"},
    }
    if image is not None:
        spec["execution"] = {"image": image}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PtahMigration",
        "metadata": {"name": name},
        "spec": spec,
    }


@pytest.mark.req("JOB-01", "JOB-06", "PRIV-04")
async def test_an_author_without_secret_rights_cannot_run_an_image_of_her_own(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    core: Any = client.CoreV1Api(api_client)
    await core.create_namespaced_secret(
        namespace,
        {"metadata": {"name": "billing-database"}, "stringData": {"url": MARKER}},
    )
    await grant(api_client, namespace, MALLORY, AUTHOR_RULES)
    mallory = kube.user_kubeconfig(MALLORY, ["developers"])
    for _ in range(50):
        can = await as_mallory(
            kube, mallory, "auth", "can-i", "create", "ptahmigrations", "-n", namespace
        )
        if can.stdout.strip() == "yes":
            break
        await asyncio.sleep(0.2)
    cannot = await as_mallory(kube, mallory, "get", "secret", "billing-database", "-n", namespace)
    assert cannot.returncode != 0

    for image in ("attacker.example/reader:latest", "attacker.example/reader@sha256:" + "e" * 64):
        refused = await as_mallory(
            kube,
            mallory,
            "create",
            "-n",
            namespace,
            "-f",
            "-",
            input=json.dumps(migration("orders", image)),
        )
        assert refused.returncode != 0
        said = refused.stdout + refused.stderr
        assert f'admission webhook "{IMAGE_WEBHOOK_NAME}" denied the request' in said
        assert "spec.execution.image" in said
        assert "attacker" not in said
        assert MARKER not in said

    admitted = await as_mallory(
        kube,
        mallory,
        "create",
        "-n",
        namespace,
        "-f",
        "-",
        input=json.dumps(migration("orders", None)),
    )
    assert admitted.returncode == 0, admitted.stderr
    found = await client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrations", "orders"
    )
    assert "image" not in (found["spec"].get("execution") or {})
