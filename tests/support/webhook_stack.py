"""The approval webhooks running in the test's event loop, registered with a real API server.

`running_webhooks(...)` serves the webhook application over TLS on a free port of 127.0.0.1
with a certificate for that IP, registers a Mutating and a Validating configuration that point
at it by URL (caBundle = the test CA) and match only the test's namespace, and waits until the
API server calls both. kubectl must then run off the loop (`asyncio.to_thread`), or the webhook
could not answer it.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from localstack.certs import CertificateAuthority

from ptah_operator.api.approvals import PtahMigrationApproval, PtahMigrationApprovalSpec
from ptah_operator.api.common import ObjectReference
from ptah_operator.api.constants import GROUP, VERSION
from ptah_operator.api.kinds import from_manifest, kind_info, to_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta, Resource
from ptah_operator.api.plans import PtahMigrationPlan, PtahMigrationPlanSpec
from ptah_operator.webhook.app import build_app
from ptah_operator.webhook.lookup import ApiObjectLookup
from ptah_operator.webhook.registration import (
    UrlEndpoint,
    mutating_webhook_configuration,
    validating_webhook_configuration,
)
from ptah_operator.webhook.tls import HttpsServer, start_https_server
from tests.support.migration_objects import d, migration_spec

REPO = Path(__file__).resolve().parents[2]


async def create_namespace(api: client.ApiClient, prefix: str) -> str:
    name = f"{prefix}-{secrets.token_hex(4)}"
    core: Any = client.CoreV1Api(api)
    await core.create_namespace({"metadata": {"name": name}})
    return name


async def delete_namespace(api: client.ApiClient, name: str) -> None:
    try:
        await client.CoreV1Api(api).delete_namespace(name)
    except ApiException as exc:
        if exc.status != 404:
            raise


def approver_rules() -> list[dict[str, Any]]:
    """The rules of the ptah-approver ClusterRole in deploy/rbac.yaml."""
    for doc in yaml.safe_load_all((REPO / "deploy" / "rbac.yaml").read_text()):
        if doc and doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "ptah-approver":
            rules: list[dict[str, Any]] = doc["rules"]
            return rules
    raise AssertionError("deploy/rbac.yaml has no ptah-approver ClusterRole")


async def grant(
    api: client.ApiClient, namespace: str, username: str, rules: list[dict[str, Any]]
) -> None:
    """A Role with `rules` in `namespace`, bound to the user."""
    rbac: Any = client.RbacAuthorizationV1Api(api)
    role = f"role-{secrets.token_hex(3)}"
    await rbac.create_namespaced_role(namespace, {"metadata": {"name": role}, "rules": rules})
    await rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": username}
            ],
        },
    )


# --- objects -----------------------------------------------------------------------------------


def _plural(model: type[Resource]) -> str:
    return kind_info(model).plural


async def create(api: client.ApiClient, namespace: str, resource: Resource) -> dict[str, Any]:
    body = to_manifest(resource)
    created: dict[str, Any] = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, namespace, _plural(type(resource)), body
    )
    return created


async def create_migration(api: client.ApiClient, namespace: str, name: str) -> PtahMigration:
    created = await create(
        api, namespace, PtahMigration(metadata=ObjectMeta(name=name), spec=migration_spec())
    )
    return from_manifest(PtahMigration, created)


async def create_plan(
    api: client.ApiClient, namespace: str, spec: PtahMigrationPlanSpec
) -> PtahMigrationPlan:
    name = f"{spec.migration_ref.name}-{spec.fingerprint[7:17]}"
    created = await create(
        api, namespace, PtahMigrationPlan(metadata=ObjectMeta(name=name), spec=spec)
    )
    return from_manifest(PtahMigrationPlan, created)


async def write_status(
    api: client.ApiClient, namespace: str, name: str, status: PtahMigrationStatus
) -> PtahMigration:
    """Replace the migration's status through the status subresource."""
    custom = client.CustomObjectsApi(api)
    for _ in range(10):
        current = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "ptahmigrations", name
        )
        current["status"] = status.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            replaced = await custom.replace_namespaced_custom_object_status(
                GROUP, VERSION, namespace, "ptahmigrations", name, current
            )
        except ApiException as exc:
            if exc.status == 409:  # another writer (a test's client) came between
                continue
            raise
        return from_manifest(PtahMigration, replaced)
    raise AssertionError(f"the status of {name} kept changing under the test")


def ref(obj: Resource) -> ObjectReference:
    assert obj.metadata.name is not None
    assert obj.metadata.uid is not None
    return ObjectReference(name=obj.metadata.name, uid=obj.metadata.uid)


def approval_manifest(
    namespace: str, migration: PtahMigration, plan: PtahMigrationPlan, **spec_fields: Any
) -> dict[str, Any]:
    spec = PtahMigrationApprovalSpec(
        migration_ref=ref(migration), plan_ref=ref(plan), plan_fingerprint=plan.spec.fingerprint
    )
    body = to_manifest(
        PtahMigrationApproval(
            metadata=ObjectMeta(generate_name=f"{migration.metadata.name}-", namespace=namespace),
            spec=spec,
        )
    )
    body["spec"].update(spec_fields)
    return body


# --- the server --------------------------------------------------------------------------------


async def _wait_until_called(api: client.ApiClient, namespace: str, *, validating: bool) -> None:
    """Dry-run approvals until the API server calls the webhook just registered."""
    probe = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PtahMigrationApproval",
        "metadata": {"generateName": "probe-"},
        "spec": {
            "migrationRef": {"name": "probe-absent", "uid": "probe"},
            "planRef": {"name": "probe-absent", "uid": "probe"},
            "planFingerprint": d("probe"),
            "approvedBy": {"username": "probe"},
        },
    }
    custom = client.CustomObjectsApi(api)
    for _ in range(150):
        try:
            created = await custom.create_namespaced_custom_object(
                GROUP, VERSION, namespace, "ptahmigrationapprovals", probe, dry_run="All"
            )
        except ApiException as exc:
            if validating and exc.status in (400, 403) and "denied the request" in str(exc.body):
                return
            raise
        if not validating and created["spec"]["approvedBy"]["username"] != "probe":
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the API server never called the webhook")


@asynccontextmanager
async def running_webhooks(
    api: client.ApiClient, namespace: str, workdir: Path
) -> AsyncIterator[HttpsServer]:
    """The webhooks served and registered for `namespace` until the block ends."""
    ca = CertificateAuthority(workdir / "webhook-ca", name=f"webhook-ca-{namespace}")
    pair = ca.issue("webhook", "ptah-webhook", server=True, ips=["127.0.0.1"])
    server = await start_https_server(
        build_app(ApiObjectLookup(api)), pair.cert_path, pair.key_path, reload_interval=None
    )
    admission: Any = client.AdmissionregistrationV1Api(api)
    endpoint = UrlEndpoint(server.url)
    selector = {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
    name = f"ptah-test-{namespace}"
    try:
        await admission.create_mutating_webhook_configuration(
            mutating_webhook_configuration(
                endpoint, ca.cert_pem, name=name, namespace_selector=selector
            )
        )
        await _wait_until_called(api, namespace, validating=False)
        await admission.create_validating_webhook_configuration(
            validating_webhook_configuration(
                endpoint, ca.cert_pem, name=name, namespace_selector=selector
            )
        )
        await _wait_until_called(api, namespace, validating=True)
        yield server
    finally:
        for delete in (
            admission.delete_mutating_webhook_configuration,
            admission.delete_validating_webhook_configuration,
        ):
            try:
                await delete(name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
        await server.close()
