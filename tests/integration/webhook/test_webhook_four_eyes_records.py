"""Four eyes on a real API server, against a writer who works around the record (issue #11's
review): a record forged while the fail-open writer webhook is down, a change laundered by
another person's trivial edit after it, and one laundered through an Apply claimed and
withdrawn with nothing run; and a record kept right when another mutating webhook changes the
spec after Ptah's sealed it. Each person is a client certificate user: alice and
bob may edit the migration and approve, carol may only approve.

The scenarios use kubectl and the admission answers only, so they read the same whatever the
record looks like inside."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from kubernetes_asyncio import client
from localstack.certs import CertificateAuthority
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ActiveOperation
from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY, GROUP, VERSION, OperationType
from ptah_operator.webhook.registration import VALIDATING_WEBHOOK_NAME, WRITER_WEBHOOK_NAME
from ptah_operator.webhook.tls import HttpsServer, start_https_server
from tests.integration.webhook.test_webhook_four_eyes import (
    ALICE,
    BOB,
    EDITOR_RULES,
    _approve,
    _migration,
    as_person,
    namespace,
    person,
    webhooks,
)
from tests.support.migration_objects import awaiting_approval, plan_spec
from tests.support.webhook_stack import (
    approval_manifest,
    approver_rules,
    create_migration,
    create_plan,
    ref,
    write_status,
)

pytestmark = pytest.mark.integration

__all__ = ["namespace", "webhooks"]

CAROL = "carol@example.com"
DENIED = f'admission webhook "{VALIDATING_WEBHOOK_NAME}" denied the request: '


async def _patch_spec(
    kube: ControlPlane, kubeconfig: Path, namespace: str, body: dict[str, Any]
) -> None:
    result = await as_person(
        kube,
        kubeconfig,
        "patch",
        "ptahmigration",
        "orders",
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps(body),
    )
    assert result.returncode == 0, result.stderr


async def _recorded(api: client.ApiClient, namespace: str) -> str:
    stored = await _migration(api, namespace)
    value = (stored["metadata"].get("annotations") or {}).get(ANNOTATION_SPEC_WRITTEN_BY)
    assert isinstance(value, str)
    return value


async def _records_writes(api: client.ApiClient, namespace: str) -> bool:
    """Whether the writer webhook rewrites a spec write's record (a server-side dry run)."""
    custom: Any = client.CustomObjectsApi(api)
    probe = {
        "metadata": {"annotations": {ANNOTATION_SPEC_WRITTEN_BY: "probe"}},
        "spec": {"interval": "17m"},
    }
    answer = await custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        "orders",
        probe,
        dry_run="All",
        _content_type="application/merge-patch+json",
    )
    return bool(answer["metadata"]["annotations"].get(ANNOTATION_SPEC_WRITTEN_BY) != "probe")


@asynccontextmanager
async def writer_webhook_down(api: client.ApiClient, namespace: str) -> AsyncIterator[None]:
    """The API server calls no writer webhook until the block ends, as while the manager is
    down (the webhook fails open)."""
    admission: Any = client.AdmissionregistrationV1Api(api)
    name = f"ptah-test-{namespace}"

    async def replace(webhooks: list[Any]) -> None:
        config = await admission.read_mutating_webhook_configuration(name)
        config.webhooks = webhooks
        await admission.replace_mutating_webhook_configuration(name, config)

    config = await admission.read_mutating_webhook_configuration(name)
    everything = list(config.webhooks)
    await replace([w for w in everything if w.name != WRITER_WEBHOOK_NAME])
    await _until(lambda: _not(_records_writes(api, namespace)), "the writer webhook to be off")
    try:
        yield
    finally:
        await replace(everything)
        await _until(lambda: _records_writes(api, namespace), "the writer webhook to be back")


async def _not(check: Any) -> bool:
    return not await check


async def _until(check: Any, what: str) -> None:
    for _ in range(100):
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _naming(value: str, username: str, generation: int) -> Iterator[str]:
    """Records naming `username` as the writer of `generation`, made from a stored one the way
    a person would edit it by hand (whatever its shape)."""
    data = json.loads(value)
    forged = copy.deepcopy(data)
    forged["generation"] = generation
    if "username" in forged:
        forged["username"] = username
    if "writers" in forged:
        forged["writers"] = [{"username": username, "generation": generation}]
    yield json.dumps(forged)
    yield value


@pytest.mark.req("APR-04")
async def test_a_record_forged_while_the_writer_webhook_is_down_admits_no_approval(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    bob = await person(kube, api_client, namespace, BOB, approver_rules() + EDITOR_RULES)
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    await write_status(api_client, namespace, "orders", awaiting_approval(p))
    await _patch_spec(kube, bob, namespace, {"spec": {"policy": {"requireDistinctApprover": True}}})
    bobs = await _recorded(api_client, namespace)
    generation = (await _migration(api_client, namespace))["metadata"]["generation"]

    for forged in _naming(bobs, BOB, generation + 1):
        async with writer_webhook_down(api_client, namespace):
            # Alice changes the spec and writes a record saying Bob wrote it.
            await _patch_spec(
                kube,
                alice,
                namespace,
                {
                    "metadata": {"annotations": {ANNOTATION_SPEC_WRITTEN_BY: forged}},
                    "spec": {"interval": f"{generation + 20}m"},
                },
            )
            assert await _recorded(api_client, namespace) == forged
        generation += 1
        result = await _approve(kube, alice, approval_manifest(namespace, m, p))
        assert result.returncode != 0, "Alice approved the change she wrote past admission"
        assert DENIED in result.stderr
        assert "spec.policy.requireDistinctApprover is set" in result.stderr


@pytest.mark.req("APR-04")
async def test_a_trivial_edit_by_another_person_does_not_launder_a_change(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    bob = await person(kube, api_client, namespace, BOB, approver_rules() + EDITOR_RULES)
    carol = await person(kube, api_client, namespace, CAROL, approver_rules())
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    await write_status(api_client, namespace, "orders", awaiting_approval(p))

    # Alice changes the spec under four eyes; Bob then touches it.
    await _patch_spec(
        kube,
        alice,
        namespace,
        {"spec": {"policy": {"requireDistinctApprover": True}, "interval": "30m"}},
    )
    await _patch_spec(kube, bob, namespace, {"spec": {"interval": "31m"}})

    for who in (alice, bob):
        result = await _approve(kube, who, approval_manifest(namespace, m, p))
        assert result.returncode != 0, "a writer of the spec since the last Apply approved"
        assert DENIED in result.stderr
        assert "another person must approve" in result.stderr
    result = await _approve(kube, carol, approval_manifest(namespace, m, p))
    assert result.returncode == 0, result.stderr


@pytest.mark.req("APR-04")
async def test_an_apply_claimed_and_withdrawn_does_not_launder_a_change(
    kube: ControlPlane, api_client: client.ApiClient, namespace: str, webhooks: HttpsServer
) -> None:
    """Review finding 3: Alice's write (generation 2) is claimed by an Apply; Bob edits while
        the claim is in status; the claim is withdrawn with nothing run; and a record kept right when another mutating webhook changes the
    spec after Ptah's sealed it. Alice's change is still to
        apply, so she may not approve; Carol may."""
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    bob = await person(kube, api_client, namespace, BOB, approver_rules() + EDITOR_RULES)
    carol = await person(kube, api_client, namespace, CAROL, approver_rules())
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    waiting = awaiting_approval(p)
    await write_status(api_client, namespace, "orders", waiting)
    await _patch_spec(
        kube,
        alice,
        namespace,
        {"spec": {"policy": {"requireDistinctApprover": True}, "interval": "30m"}},
    )
    claim = ActiveOperation(
        type=OperationType.APPLY,
        operation_id="op-0000000043",
        started_at="2026-12-01T12:00:00Z",
        generation=2,
    )
    claimed = await write_status(
        api_client, namespace, "orders", waiting.model_copy(update={"active_operation": claim})
    )
    assert claimed.metadata.generation == 2
    await _patch_spec(kube, bob, namespace, {"spec": {"interval": "31m"}})
    await write_status(api_client, namespace, "orders", waiting)

    result = await _approve(kube, alice, approval_manifest(namespace, m, p))
    assert result.returncode != 0, "the writer of a change no Apply ran approved it"
    assert DENIED in result.stderr
    assert "another person must approve" in result.stderr
    result = await _approve(kube, carol, approval_manifest(namespace, m, p))
    assert result.returncode == 0, result.stderr


LATER_INTERVAL = "45m"


async def _set_interval(request: web.Request) -> web.Response:
    """A mutating webhook of somebody else's that sets spec.interval on every write."""
    review = await request.json()
    spec = (review["request"].get("object") or {}).get("spec") or {}
    response: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": True}
    if spec.get("interval") != LATER_INTERVAL:
        patch = [{"op": "add", "path": "/spec/interval", "value": LATER_INTERVAL}]
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    return web.json_response(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
    )


@asynccontextmanager
async def a_later_webhook_sets_the_interval(
    api: client.ApiClient, namespace: str, workdir: Path
) -> AsyncIterator[None]:
    """Another MutatingWebhookConfiguration, called after Ptah's (its name sorts later)."""
    ca = CertificateAuthority(workdir / "later-ca", name=f"later-ca-{namespace}")
    pair = ca.issue("later", "later-webhook", server=True, ips=["127.0.0.1"])
    app = web.Application()
    app.router.add_post("/mutate", _set_interval)
    server = await start_https_server(app, pair.cert_path, pair.key_path, reload_interval=None)
    admission: Any = client.AdmissionregistrationV1Api(api)
    name = f"zz-later-{namespace}"
    await admission.create_mutating_webhook_configuration(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name},
            "webhooks": [
                {
                    "name": "interval.later.example.com",
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {
                        "url": server.url.rstrip("/") + "/mutate",
                        "caBundle": base64.b64encode(ca.cert_pem).decode(),
                    },
                    "rules": [
                        {
                            "apiGroups": [GROUP],
                            "apiVersions": [VERSION],
                            "operations": ["CREATE", "UPDATE"],
                            "resources": ["ptahmigrations"],
                            "scope": "Namespaced",
                        }
                    ],
                    "sideEffects": "None",
                    "failurePolicy": "Fail",
                    "namespaceSelector": {
                        "matchLabels": {"kubernetes.io/metadata.name": namespace}
                    },
                }
            ],
        }
    )
    try:
        yield
    finally:
        await admission.delete_mutating_webhook_configuration(name)
        await server.close()


@pytest.mark.req("APR-04")
async def test_a_spec_another_webhook_changes_after_the_seal_keeps_its_writers(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    tmp_path: Path,
) -> None:
    """Review finding 2: the API server calls the record's webhook again after a later webhook
    changed the spec, so the record opens over the spec stored, and names its writer."""
    alice = await person(kube, api_client, namespace, ALICE, approver_rules() + EDITOR_RULES)
    carol = await person(kube, api_client, namespace, CAROL, approver_rules())
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    await write_status(api_client, namespace, "orders", awaiting_approval(p))
    async with a_later_webhook_sets_the_interval(api_client, namespace, tmp_path):
        for _ in range(50):  # until the API server calls it
            await _patch_spec(kube, alice, namespace, {"spec": {"interval": "30m"}})
            if (await _migration(api_client, namespace))["spec"]["interval"] == LATER_INTERVAL:
                break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError("the later webhook was never called")
        await _patch_spec(
            kube, alice, namespace, {"spec": {"policy": {"requireDistinctApprover": True}}}
        )
    assert (await _migration(api_client, namespace))["spec"]["interval"] == LATER_INTERVAL

    result = await _approve(kube, alice, approval_manifest(namespace, m, p))
    assert result.returncode != 0, "the writer of the spec approved"
    assert "another person must approve" in result.stderr
    result = await _approve(kube, carol, approval_manifest(namespace, m, p))
    assert result.returncode == 0, result.stderr
