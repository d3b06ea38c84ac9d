"""`kubectl ptah` on PtahSchemas against a real API server, with the approval webhooks
registered: the status made readable, the plan with its SQL, the applied plan (PLUGIN-03),
approve (with --wait) and wait.

The plugin runs in-process in the test's event loop, next to the webhooks; the operator's side
(status writes, plans and chunks) is played by the test.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ObjectReference, PlanReference, UserInfo
from ptah_operator.api.constants import GROUP, VERSION, ApplyOutcome, SchemaPhase, VerifiedOutcome
from ptah_operator.api.plans import PtahSchemaPlan
from ptah_operator.api.schema import AppliedPlan, ApplyRecord, PtahSchemaStatus, SchemaVerification
from ptah_operator.cli.kubectl.approve import create_schema_approval, prepare_schema_approval
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.main import run
from ptah_operator.cli.kubectl.session import Session, load_configuration
from ptah_operator.webhook.tls import HttpsServer
from tests.support.migration_objects import T0
from tests.support.schema_objects import (
    PLAN_SQL,
    awaiting_approval,
    create_chunks,
    create_schema,
    create_schema_plan,
    plan_pieces,
    schema_plan_spec,
    write_schema_status,
)
from tests.support.webhook_stack import (
    approver_rules,
    create_namespace,
    delete_namespace,
    grant,
    ref,
    running_webhooks,
)

pytestmark = pytest.mark.integration

ALICE = "alice@example.com"


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "plugin-schema")
    yield name
    await delete_namespace(api_client, name)


@pytest.fixture
async def webhooks(
    api_client: client.ApiClient, namespace: str, tmp_path: Path
) -> AsyncIterator[HttpsServer]:
    async with running_webhooks(api_client, namespace, tmp_path) as server:
        yield server


@pytest.fixture
async def alice(kube: ControlPlane, api_client: client.ApiClient, namespace: str) -> Path:
    await grant(api_client, namespace, ALICE, approver_rules())
    kubeconfig = kube.user_kubeconfig(ALICE, ["approvers"])
    for _ in range(50):
        result = await asyncio.to_thread(
            kube.kubectl,
            "auth",
            "can-i",
            "create",
            "ptahschemaapprovals",
            "-n",
            namespace,
            check=False,
            kubeconfig=kubeconfig,
        )
        if result.stdout.strip() == "yes":
            return kubeconfig
        await asyncio.sleep(0.2)
    raise AssertionError("the approver's Role never took effect")


async def plugin(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


async def _schema_approvals(api: client.ApiClient, namespace: str) -> list[dict[str, Any]]:
    for _ in range(50):
        try:
            listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
                GROUP, VERSION, namespace, "ptahschemaapprovals"
            )
        except ApiException as exc:
            # A kind listed for the first time in a fresh API server: its cache is starting.
            if exc.status != 429:
                raise
            await asyncio.sleep(0.2)
            continue
        items: list[dict[str, Any]] = listed["items"]
        return items
    raise AssertionError("ptahschemaapprovals could not be listed")


async def _waiting(api: client.ApiClient, namespace: str) -> PtahSchemaPlan:
    """A schema AwaitingApproval on a published plan of two chunks."""
    schema = await create_schema(api, namespace, "catalog")
    spec = schema_plan_spec(ref(schema), chunks=2)
    plan = await create_schema_plan(api, namespace, spec, "catalog-plan")
    await create_chunks(api, namespace, plan, plan_pieces(spec))
    await write_schema_status(api, namespace, "catalog", awaiting_approval(plan))
    return plan


def _reference(plan: PtahSchemaPlan) -> PlanReference:
    assert plan.metadata.name is not None
    return PlanReference(
        name=plan.metadata.name, uid=plan.metadata.uid, fingerprint=plan.spec.fingerprint
    )


def _applied(plan: PtahSchemaPlan, verified: bool = True) -> PtahSchemaStatus:
    """The status once the Apply of `plan` ended and (when `verified`) was proved InSync."""
    approval = ObjectReference(name="catalog-plan-x1", uid="a-uid-1")
    approver = UserInfo(username=ALICE, groups=["approvers"])
    record = ApplyRecord(
        operation_id="op-00000000b2",
        outcome=ApplyOutcome.SUCCEEDED,
        plan=_reference(plan),
        plan_digest=plan.spec.digest,
        approval=approval,
        approver=approver,
        started_at=T0,
        finished_at=T0,
        verification=SchemaVerification(outcome=VerifiedOutcome.IN_SYNC, read_at=T0)
        if verified
        else None,
    )
    status = awaiting_approval(plan).model_copy(
        update={
            "phase": SchemaPhase.IN_SYNC if verified else SchemaPhase.VERIFYING_CONVERGENCE,
            "plan": None,
            "last_apply": record,
        }
    )
    if verified:
        status.applied = AppliedPlan(
            plan=_reference(plan),
            digest=plan.spec.digest,
            operation_id="op-00000000b2",
            approval=approval,
            approver=approver,
            applied_at=T0,
            verified_at=T0,
        )
    return status


@pytest.mark.req("PLUGIN-04", "PLUGIN-02")
async def test_schema_and_plan_show_the_status_and_the_plan_with_its_sql(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    plan = await _waiting(api_client, namespace)
    admin = str(kube.kubeconfig)
    code, out, err = await plugin("schema", "catalog", "-n", namespace, "--kubeconfig", admin)
    assert (code, err) == (0, "")
    assert "Phase:            AwaitingApproval" in out
    assert f"Plan catalog-plan (UID {plan.metadata.uid}):" in out
    assert "Low       TableAdded  public.order_lines" in out
    assert "CREATE TABLE" not in out

    code, out, err = await plugin("plan", "schema/catalog", "-n", namespace, "--kubeconfig", admin)
    assert (code, err) == (0, "")
    assert f"Fingerprint:      {plan.spec.fingerprint}" in out
    assert "Bound to (a change to any of these retires the plan):" in out
    assert "Decision: the plan waits for a PtahSchemaApproval naming this plan" in out
    assert out.endswith(f"{PLAN_SQL.rstrip()}\n--- end of SQL ---\n")

    code, out, _ = await plugin(
        "plan", "schema/catalog", "--no-sql", "-n", namespace, "--kubeconfig", admin
    )
    assert code == 0
    assert "CREATE TABLE" not in out


@pytest.mark.req("PLUGIN-03")
async def test_plan_applied_prints_the_plan_recorded_in_status_applied(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    plan = await _waiting(api_client, namespace)
    admin = str(kube.kubeconfig)
    code, out, _ = await plugin(
        "plan", "schema/catalog", "--applied", "-n", namespace, "--kubeconfig", admin
    )
    assert (code, out) == (
        0,
        "schema catalog has no confirmed Apply yet (status.applied is empty)\n",
    )
    await write_schema_status(api_client, namespace, "catalog", _applied(plan))
    code, out, err = await plugin(
        "plan", "schema/catalog", "--applied", "-n", namespace, "--kubeconfig", admin
    )
    assert (code, err) == (0, "")
    assert out.startswith(
        f"Applied plan of schema {namespace}/catalog: catalog-plan (UID {plan.metadata.uid})\n"
    )
    assert f"Digest:           {plan.spec.digest}" in out
    assert "Operation:        op-00000000b2" in out
    assert f"Approved by:      approval catalog-plan-x1, {ALICE} (approvers)" in out
    assert PLAN_SQL.rstrip() in out
    # The current plan is gone (InSync): `plan` says so and points at --applied.
    code, out, _ = await plugin("plan", "schema/catalog", "-n", namespace, "--kubeconfig", admin)
    assert out == (
        "schema catalog has no plan published (phase InSync); "
        "the last applied plan is catalog-plan (--applied)\n"
    )


async def _play_the_apply(api: client.ApiClient, namespace: str, plan: PtahSchemaPlan) -> None:
    """What the operator would do after the approval: apply, prove, settle InSync."""
    for _ in range(300):
        if await _schema_approvals(api, namespace):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)
    waiting = awaiting_approval(plan)
    await write_schema_status(
        api, namespace, "catalog", waiting.model_copy(update={"phase": SchemaPhase.APPLYING})
    )
    await asyncio.sleep(0.3)
    await write_schema_status(api, namespace, "catalog", _applied(plan, verified=False))
    await asyncio.sleep(0.3)
    await write_schema_status(api, namespace, "catalog", _applied(plan))


@pytest.mark.req("PLUGIN-05", "PLUGIN-06", "APR-02", "APR-04")
async def test_approve_wait_approves_the_exact_plan_and_waits_for_its_proof(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    plan = await _waiting(api_client, namespace)
    operator = asyncio.create_task(_play_the_apply(api_client, namespace, plan))
    code, out, err = await plugin(
        "approve",
        "schema/catalog",
        "-n",
        namespace,
        "--kubeconfig",
        str(alice),
        "--wait",
        "--timeout=60s",
    )
    await operator
    assert (code, err) == (0, "")
    assert out.startswith(f"Approving plan catalog-plan of schema {namespace}/catalog:\n")
    assert "CREATE TABLE" not in out
    (approval,) = await _schema_approvals(api_client, namespace)
    assert approval["spec"]["planRef"] == {"name": "catalog-plan", "uid": plan.metadata.uid}
    assert approval["spec"]["planFingerprint"] == plan.spec.fingerprint
    assert approval["spec"]["approvedBy"]["username"] == ALICE
    assert f"approved: ptahschemaapproval/{approval['metadata']['name']} by {ALICE}" in out
    assert "phase Applying" in out
    assert out.endswith("apply op-00000000b2: Succeeded\nverified: InSync\nschema is InSync\n")


@pytest.mark.req("PLUGIN-05", "APR-05")
async def test_approve_approves_nothing_when_the_schema_plan_was_replaced_meanwhile(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    old = await _waiting(api_client, namespace)
    configuration, _ = await load_configuration(str(alice), None)
    async with client.ApiClient(configuration) as api:
        session = Session(api, namespace, io.StringIO())
        shown = await prepare_schema_approval(session, "catalog")
        new_spec = schema_plan_spec(old.spec.schema_ref, target="target-2")
        new = await create_schema_plan(api_client, namespace, new_spec, "catalog-plan-2")
        await write_schema_status(api_client, namespace, "catalog", awaiting_approval(new))
        with pytest.raises(CommandError) as refused:
            await create_schema_approval(session, shown)
    assert str(refused.value) == (
        "not approved: PtahSchemaApproval refused: plan catalog-plan was replaced: "
        "the current plan of schema catalog is catalog-plan-2"
    )
    assert await _schema_approvals(api_client, namespace) == []
    # Nothing waits any more: approve says so and approves nothing.
    await write_schema_status(api_client, namespace, "catalog", _applied(old))
    code, out, err = await plugin(
        "approve", "schema/catalog", "-n", namespace, "--kubeconfig", str(alice)
    )
    assert (code, out) == (1, "")
    assert err == (
        "error: schema catalog has no plan to approve (phase InSync); nothing was approved\n"
    )


@pytest.mark.req("PLUGIN-06")
async def test_wait_for_a_schema_phase(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    plan = await _waiting(api_client, namespace)
    admin = str(kube.kubeconfig)
    code, _, err = await plugin(
        "wait", "schema/catalog", "-n", namespace, "--kubeconfig", admin, "--timeout=1s"
    )
    assert code == 1
    assert err == (
        "error: timed out waiting for schema catalog to be InSync; "
        "it is in phase AwaitingApproval (AwaitingApproval)\n"
    )

    async def settle() -> None:
        await asyncio.sleep(0.5)
        await write_schema_status(api_client, namespace, "catalog", _applied(plan))

    settling = asyncio.create_task(settle())
    code, out, err = await plugin(
        "wait", "schema/catalog", "-n", namespace, "--kubeconfig", admin, "--timeout=30s"
    )
    await settling
    assert (code, err) == (0, "")
    assert out.endswith("schema catalog is InSync\n")
