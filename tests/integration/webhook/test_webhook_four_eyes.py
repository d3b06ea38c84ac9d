"""Four eyes on a real API server: admission records who last wrote a migration's spec, and
under `spec.policy.requireDistinctApprover` refuses that person's approval of its plan while
another person's is admitted. Two people, each a client certificate user: alice may edit the
migration and approve, bob may only approve."""

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

from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY, GROUP, VERSION
from ptah_operator.webhook.registration import VALIDATING_WEBHOOK_NAME
from ptah_operator.webhook.tls import HttpsServer
from tests.support.migration_objects import awaiting_approval, plan_spec
from tests.support.webhook_stack import (
    approval_manifest,
    approver_rules,
    create_migration,
    create_namespace,
    create_plan,
    delete_namespace,
    grant,
    ref,
    running_webhooks,
    write_status,
)

pytestmark = pytest.mark.integration

ALICE = "alice@example.com"
BOB = "bob@example.com"
DENIED = f'admission webhook "{VALIDATING_WEBHOOK_NAME}" denied the request: '
EDITOR_RULES = [
    {"apiGroups": [GROUP], "resources": ["ptahmigrations"], "verbs": ["get", "patch", "update"]}
]


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "foureyes")
    yield name
    await delete_namespace(api_client, name)


@pytest.fixture
async def webhooks(
    api_client: client.ApiClient, namespace: str, tmp_path: Path
) -> AsyncIterator[HttpsServer]:
    async with running_webhooks(api_client, namespace, tmp_path) as server:
        yield server


async def as_person(
    kube: ControlPlane, kubeconfig: Path, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """kubectl off the event loop, so the webhook in this loop can answer it."""
    return await asyncio.to_thread(
        kube.kubectl, *args, input=input, check=False, kubeconfig=kubeconfig
    )


async def person(
    kube: ControlPlane,
    api: client.ApiClient,
    namespace: str,
    username: str,
    rules: list[dict[str, Any]],
) -> Path:
    await grant(api, namespace, username, rules)
    kubeconfig = kube.user_kubeconfig(username, ["approvers"])
    for _ in range(50):
        result = await as_person(
            kube, kubeconfig, "auth", "can-i", "create", "ptahmigrationapprovals", "-n", namespace
        )
        if result.stdout.strip() == "yes":
            return kubeconfig
        await asyncio.sleep(0.2)
    raise AssertionError(f"the Role of {username} never took effect")


async def _migration(api: client.ApiClient, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = await client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrations", "orders"
    )
    return found


def _record(obj: dict[str, Any]) -> str | None:
    value = (obj["metadata"].get("annotations") or {}).get(ANNOTATION_SPEC_WRITTEN_BY)
    return value if isinstance(value, str) else None


def _writers(obj: dict[str, Any]) -> list[tuple[str, int]]:
    """Who the record names (sealed by the webhook's key, which this test does not hold)."""
    value = _record(obj)
    assert value is not None
    data = json.loads(value)
    assert data["generation"] == obj["metadata"]["generation"]
    return [(w["username"], w["generation"]) for w in data["writers"]]


async def _approve(
    kube: ControlPlane, kubeconfig: Path, body: dict[str, Any]
) -> subprocess.CompletedProcess[str]:
    return await as_person(kube, kubeconfig, "create", "-f", "-", input=json.dumps(body))


@pytest.mark.req("APR-04")
async def test_the_last_writer_of_the_spec_may_not_approve_when_four_eyes_are_required(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    bob = await person(kube, api_client, namespace, BOB, approver_rules())
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    await write_status(api_client, namespace, "orders", awaiting_approval(p))

    # Alice changes the spec: she asks for four eyes, and is recorded as its last writer.
    patch = json.dumps({"spec": {"policy": {"requireDistinctApprover": True}}})
    result = await as_person(
        kube,
        alice,
        "patch",
        "ptahmigration",
        "orders",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        patch,
    )
    assert result.returncode == 0, result.stderr
    stored = await _migration(api_client, namespace)
    assert (ALICE, stored["metadata"]["generation"]) in _writers(stored)

    # Nobody rewrites the record by hand: a write that leaves the spec keeps it.
    forged = json.dumps({"username": BOB, "generation": stored["metadata"]["generation"]})
    result = await as_person(
        kube,
        alice,
        "annotate",
        "--overwrite",
        "ptahmigration/orders",
        "-n",
        namespace,
        f"{ANNOTATION_SPEC_WRITTEN_BY}={forged}",
    )
    assert result.returncode == 0, result.stderr
    assert _record(await _migration(api_client, namespace)) == _record(stored)

    # Alice may not approve the plan of the spec she wrote last; Bob may.
    result = await _approve(kube, alice, approval_manifest(namespace, m, p))
    assert result.returncode != 0
    assert DENIED in result.stderr
    assert (
        f"spec.policy.requireDistinctApprover is set and {ALICE} wrote the spec of migration "
        "orders since its last Apply" in result.stderr
    )
    result = await _approve(kube, bob, approval_manifest(namespace, m, p))
    assert result.returncode == 0, result.stderr
    listed = await client.CustomObjectsApi(api_client).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrationapprovals"
    )
    assert [a["spec"]["approvedBy"]["username"] for a in listed["items"]] == [BOB]


@pytest.mark.req("APR-04")
async def test_without_the_policy_the_writer_approves_as_before(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    await write_status(api_client, namespace, "orders", awaiting_approval(p))
    patch = json.dumps({"spec": {"interval": "15m"}})
    result = await as_person(
        kube,
        alice,
        "patch",
        "ptahmigration",
        "orders",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        patch,
    )
    assert result.returncode == 0, result.stderr
    assert _record(await _migration(api_client, namespace)) is not None
    result = await _approve(kube, alice, approval_manifest(namespace, m, p))
    assert result.returncode == 0, result.stderr
