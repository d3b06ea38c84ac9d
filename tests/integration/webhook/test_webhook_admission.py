"""The approval webhooks called by a real API server: a person's approval is stamped with who
they are, and an approval the evidence no longer supports never gets stored.

The webhooks run in the test's event loop, registered by URL with a real TLS certificate; the
person is a client certificate user with the ptah-approver rules; the migration, its plans and
its status are written directly (nothing else writes them yet).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane

from ptah_operator.api.approvals import PtahMigrationRunAcknowledgment, PtahSchemaApproval
from ptah_operator.api.constants import GROUP, VERSION, MigrationPhase, SchemaPhase
from ptah_operator.api.kinds import to_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import (
    PtahMigrationPlan,
    PtahSchemaPlan,
)
from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus, SchemaPlanStatus
from ptah_operator.webhook.registration import VALIDATING_WEBHOOK_NAME
from ptah_operator.webhook.tls import HttpsServer
from tests.support.migration_objects import (
    acknowledgment_spec,
    awaiting_approval,
    config_map_record,
    d,
    executor,
    plan_spec,
    unresolved_run,
)
from tests.support.schema_objects import awaiting_approval as schema_awaiting_approval
from tests.support.schema_objects import (
    create_schema,
    create_schema_plan,
    schema_plan_spec,
    write_schema_status,
)
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
DENIED = f'admission webhook "{VALIDATING_WEBHOOK_NAME}" denied the request: '


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "webhook")
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


@pytest.fixture
async def alice(kube: ControlPlane, api_client: client.ApiClient, namespace: str) -> Path:
    """A person with the ptah-approver rules in the test namespace."""
    await grant(api_client, namespace, ALICE, approver_rules())
    kubeconfig = kube.user_kubeconfig(ALICE, ["approvers"])
    for _ in range(50):
        result = await as_person(
            kube, kubeconfig, "auth", "can-i", "create", "ptahmigrationapprovals", "-n", namespace
        )
        if result.stdout.strip() == "yes":
            return kubeconfig
        await asyncio.sleep(0.2)
    raise AssertionError("the approver's Role never took effect")


async def _approvals(api: client.ApiClient, namespace: str) -> list[dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrationapprovals"
    )
    items: list[dict[str, Any]] = listed["items"]
    return items


async def _waiting_migration(
    api: client.ApiClient, namespace: str
) -> tuple[PtahMigration, PtahMigrationPlan]:
    m = await create_migration(api, namespace, "orders")
    p = await create_plan(api, namespace, plan_spec(ref(m)))
    m = await write_status(api, namespace, "orders", awaiting_approval(p))
    return m, p


# --- the stamp ---------------------------------------------------------------------------------


@pytest.mark.req("APR-04", "APR-02", "APR-16")
async def test_a_forged_approver_is_replaced_by_the_person_who_approved(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    alice: Path,
) -> None:
    m, p = await _waiting_migration(api_client, namespace)
    body = approval_manifest(
        namespace,
        m,
        p,
        approvedBy={"username": "mallory", "groups": ["system:masters"]},
        approvedAt="2020-01-01T00:00:00Z",
    )
    before = datetime.now(UTC).replace(microsecond=0)
    result = await as_person(kube, alice, "create", "-f", "-", "-o", "json", input=json.dumps(body))
    after = datetime.now(UTC)
    assert result.returncode == 0, result.stderr
    assert "Warning: spec.approvedBy was replaced" in result.stderr
    (stored,) = await _approvals(api_client, namespace)
    spec = stored["spec"]
    assert spec["approvedBy"]["username"] == ALICE
    assert "approvers" in spec["approvedBy"]["groups"]
    assert "system:masters" not in spec["approvedBy"]["groups"]
    approved_at = datetime.fromisoformat(spec["approvedAt"].replace("Z", "+00:00"))
    assert before <= approved_at <= after
    assert spec["planRef"] == {"name": p.metadata.name, "uid": p.metadata.uid}
    assert json.loads(result.stdout)["spec"]["approvedBy"]["username"] == ALICE


@pytest.mark.req("APR-04", "RUN-06")
async def test_an_acknowledgment_is_stamped_and_must_name_the_unresolved_run(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    alice: Path,
) -> None:
    m = await create_migration(api_client, namespace, "orders")
    p = await create_plan(api_client, namespace, plan_spec(ref(m)))
    run = unresolved_run(p)
    m = await write_status(
        api_client,
        namespace,
        "orders",
        PtahMigrationStatus(phase=MigrationPhase.BLOCKED, unresolved_run=run),
    )
    spec = acknowledgment_spec(m, run)
    wrong = PtahMigrationRunAcknowledgment(
        metadata=ObjectMeta(name="wrong-run"),
        spec=spec.model_copy(update={"operation_id": "op-0000000000"}),
    )
    result = await as_person(
        kube, alice, "create", "-n", namespace, "-f", "-", input=json.dumps(to_manifest(wrong))
    )
    assert result.returncode != 0
    assert (
        DENIED + "PtahMigrationRunAcknowledgment refused: the unresolved run of migration orders "
        "is not the one named: it has operation op-3f9a2c7d1e, not op-0000000000"
    ) in result.stderr

    body = to_manifest(PtahMigrationRunAcknowledgment(metadata=ObjectMeta(name="run"), spec=spec))
    body["spec"]["acknowledgedBy"] = {"username": "mallory"}
    result = await as_person(
        kube, alice, "create", "-n", namespace, "-f", "-", input=json.dumps(body)
    )
    assert result.returncode == 0, result.stderr
    stored = await client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrationrunacknowledgments", "run"
    )
    assert stored["spec"]["acknowledgedBy"]["username"] == ALICE
    assert stored["spec"]["acknowledgedAt"].endswith("Z")


# --- refusals ----------------------------------------------------------------------------------

Setup = Callable[
    [PtahMigration, PtahMigrationPlan, PtahMigrationPlan],
    tuple[PtahMigrationStatus, dict[str, Any]],
]


def _replaced(m: PtahMigration, old: PtahMigrationPlan, new: PtahMigrationPlan) -> Any:
    return awaiting_approval(new), {"plan": old}


def _wrong_fingerprint(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    return awaiting_approval(p), {"planFingerprint": d("not the plan")}


def _not_waiting(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    return awaiting_approval(p).model_copy(update={"phase": MigrationPhase.APPLYING}), {}


def _history_moved(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    status = awaiting_approval(p)
    assert status.history is not None
    status.history.fingerprint = d("history-2")
    return status, {}


def _source_changed(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    return awaiting_approval(p, source=config_map_record(content="files-2")), {}


def _executor_rolled_out(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    return awaiting_approval(p).model_copy(update={"execution_binding": executor("runner-2")}), {}


def _migration_recreated(m: PtahMigration, p: PtahMigrationPlan, _: PtahMigrationPlan) -> Any:
    return awaiting_approval(p), {"migrationRef": {"name": "orders", "uid": "an-older-uid"}}


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        pytest.param(
            _replaced,
            "plan {old} was replaced: the current plan of migration orders is {new}",
            id="replaced-plan",
            marks=pytest.mark.req("APR-05", "APR-12"),
        ),
        pytest.param(
            _wrong_fingerprint,
            "planFingerprint sha256:",
            id="wrong-fingerprint",
            marks=pytest.mark.req("APR-02", "APR-03"),
        ),
        pytest.param(
            _not_waiting,
            "migration orders is not waiting for a decision: its phase is Applying, "
            "not AwaitingApproval",
            id="not-waiting",
            marks=pytest.mark.req("APR-10"),
        ),
        pytest.param(
            _history_moved,
            "the history moved since plan {old} was made",
            id="history-moved",
            marks=pytest.mark.req("APR-06"),
        ),
        pytest.param(
            _source_changed,
            "the source changed since plan {old} was made: content of the selected files",
            id="source-changed",
            marks=pytest.mark.req("APR-07"),
        ),
        pytest.param(
            _executor_rolled_out,
            "the executor was rolled out since plan {old} was made: runner image",
            id="executor-rolled-out",
            marks=pytest.mark.req("APR-09"),
        ),
        pytest.param(
            _migration_recreated,
            "PtahMigration orders is not the one named: it was re-created",
            id="migration-recreated",
            marks=pytest.mark.req("APR-02", "APR-15"),
        ),
    ],
)
async def test_an_approval_the_evidence_no_longer_supports_is_refused(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    alice: Path,
    setup: Setup,
    expected: str,
) -> None:
    m = await create_migration(api_client, namespace, "orders")
    old = await create_plan(api_client, namespace, plan_spec(ref(m)))
    new = await create_plan(api_client, namespace, plan_spec(ref(m), history="history-2"))
    status, changes = setup(m, old, new)
    await write_status(api_client, namespace, "orders", status)
    approved = changes.pop("plan", old)
    body = approval_manifest(namespace, m, approved, **changes)
    result = await as_person(kube, alice, "create", "-f", "-", input=json.dumps(body))
    assert result.returncode != 0
    message = DENIED + "PtahMigrationApproval refused: "
    message += expected.format(old=old.metadata.name, new=new.metadata.name)
    assert message in result.stderr, result.stderr
    assert await _approvals(api_client, namespace) == []


# --- schema approvals --------------------------------------------------------------------------


async def _schema_approvals(api: client.ApiClient, namespace: str) -> list[dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahschemaapprovals"
    )
    items: list[dict[str, Any]] = listed["items"]
    return items


async def _waiting_schema(
    api: client.ApiClient, namespace: str
) -> tuple[PtahSchema, PtahSchemaPlan]:
    schema = await create_schema(api, namespace, "catalog")
    spec = schema_plan_spec(ref(schema))
    plan = await create_schema_plan(api, namespace, spec, "catalog-1")
    schema = await write_schema_status(api, namespace, "catalog", schema_awaiting_approval(plan))
    return schema, plan


def _schema_approval(
    schema: PtahSchema, plan: PtahSchemaPlan, name: str, **spec_fields: Any
) -> dict[str, Any]:
    body = to_manifest(
        PtahSchemaApproval.model_validate(
            {
                "metadata": {"name": name},
                "spec": {
                    "schemaRef": ref(schema).model_dump(),
                    "planRef": ref(plan).model_dump(),
                    "planFingerprint": plan.spec.fingerprint,
                },
            }
        )
    )
    body["spec"].update(spec_fields)
    return body


@pytest.mark.req("APR-04", "APR-02")
async def test_an_exact_schema_approval_is_stamped_and_admitted(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    alice: Path,
) -> None:
    schema, plan = await _waiting_schema(api_client, namespace)
    body = _schema_approval(schema, plan, "right", approvedBy={"username": "mallory"})
    result = await as_person(
        kube, alice, "create", "-n", namespace, "-f", "-", input=json.dumps(body)
    )
    assert result.returncode == 0, result.stderr
    assert "spec.approvedBy was replaced" in result.stderr
    stored = await client.CustomObjectsApi(api_client).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahschemaapprovals", "right"
    )
    assert stored["spec"]["approvedBy"]["username"] == ALICE
    assert stored["spec"]["planRef"] == {"name": "catalog-1", "uid": plan.metadata.uid}


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        pytest.param(
            lambda s, p: (schema_awaiting_approval(p), {"planFingerprint": d("other")}),
            "planFingerprint sha256:{other} is not the fingerprint of plan catalog-1 "
            "(sha256:{fingerprint})",
            id="wrong-fingerprint",
            marks=pytest.mark.req("APR-02", "APR-03"),
        ),
        pytest.param(
            lambda s, p: (
                schema_awaiting_approval(p).model_copy(update={"phase": SchemaPhase.APPLYING}),
                {},
            ),
            "schema catalog is not waiting for a decision: its phase is Applying, "
            "not AwaitingApproval",
            id="not-waiting",
            marks=pytest.mark.req("APR-10"),
        ),
        pytest.param(
            lambda s, p: (
                schema_awaiting_approval(p).model_copy(
                    update={
                        "plan": SchemaPlanStatus(
                            name="catalog-2", uid="sp-2", fingerprint=d("new plan")
                        )
                    }
                ),
                {},
            ),
            "plan catalog-1 was replaced: the current plan of schema catalog is catalog-2",
            id="replaced",
            marks=pytest.mark.req("APR-05", "APR-12"),
        ),
        pytest.param(
            lambda s, p: (
                schema_awaiting_approval(p, source=config_map_record(content="files-2")),
                {},
            ),
            "the source changed since plan catalog-1 was made: content of the selected files",
            id="source-moved",
            marks=pytest.mark.req("APR-07"),
        ),
        pytest.param(
            lambda s, p: (
                schema_awaiting_approval(p).model_copy(
                    update={"execution_binding": executor("runner-2")}
                ),
                {},
            ),
            "the executor was rolled out since plan catalog-1 was made: runner image",
            id="executor-rolled-out",
            marks=pytest.mark.req("APR-09"),
        ),
    ],
)
async def test_a_stale_or_wrong_schema_approval_is_refused_readably(
    kube: ControlPlane,
    api_client: client.ApiClient,
    namespace: str,
    webhooks: HttpsServer,
    alice: Path,
    setup: Callable[[PtahSchema, PtahSchemaPlan], tuple[PtahSchemaStatus, dict[str, Any]]],
    expected: str,
) -> None:
    schema, plan = await _waiting_schema(api_client, namespace)
    status, changes = setup(schema, plan)
    await write_schema_status(api_client, namespace, "catalog", status)
    body = _schema_approval(schema, plan, "stale", **changes)
    result = await as_person(
        kube, alice, "create", "-n", namespace, "-f", "-", input=json.dumps(body)
    )
    assert result.returncode != 0
    message = (
        DENIED
        + "PtahSchemaApproval refused: "
        + expected.format(other=d("other")[7:19], fingerprint=plan.spec.fingerprint[7:19])
    )
    assert message in result.stderr, result.stderr
    assert await _schema_approvals(api_client, namespace) == []
