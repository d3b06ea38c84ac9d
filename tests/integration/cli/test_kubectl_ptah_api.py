"""`kubectl ptah` against a real API server, with the approval webhooks registered.

The plugin runs in-process (`run(argv, out, err)`) in the test's event loop, next to the
webhooks; the operator's side (status writes) is played by the test.
"""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes_asyncio import client
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ActiveOperation, PlanReference
from ptah_operator.api.constants import (
    ANNOTATION_READ_REQUESTED_AT,
    GROUP,
    VERSION,
    MigrationPhase,
    OperationType,
    RunOutcome,
)
from ptah_operator.api.migration import LastRun, PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.cli.kubectl.approve import create_approval, prepare_approval
from ptah_operator.cli.kubectl.errors import CommandError
from ptah_operator.cli.kubectl.main import run
from ptah_operator.cli.kubectl.session import Session, load_configuration
from ptah_operator.webhook.tls import HttpsServer
from tests.support.migration_objects import T0, awaiting_approval, plan_spec
from tests.support.webhook_stack import (
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


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "plugin")
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
            "ptahmigrationapprovals",
            "-n",
            namespace,
            check=False,
            kubeconfig=kubeconfig,
        )
        if result.stdout.strip() == "yes":
            return kubeconfig
        await asyncio.sleep(0.2)
    raise AssertionError("the approver's Role never took effect")


class Output:
    def __init__(self) -> None:
        self.out = io.StringIO()
        self.err = io.StringIO()


async def plugin(*argv: str) -> tuple[int, str, str]:
    output = Output()
    code = await run(list(argv), output.out, output.err)
    return code, output.out.getvalue(), output.err.getvalue()


async def _approvals(api: client.ApiClient, namespace: str) -> list[dict[str, Any]]:
    listed = await client.CustomObjectsApi(api).list_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrationapprovals"
    )
    items: list[dict[str, Any]] = listed["items"]
    return items


async def _waiting(
    api: client.ApiClient, namespace: str
) -> tuple[PtahMigration, PtahMigrationPlan]:
    m = await create_migration(api, namespace, "orders")
    p = await create_plan(api, namespace, plan_spec(ref(m)))
    return await write_status(api, namespace, "orders", awaiting_approval(p)), p


# --- approve -----------------------------------------------------------------------------------


@pytest.mark.req("PLUGIN-05", "APR-02", "APR-04", "APR-16")
async def test_approve_creates_an_approval_of_exactly_the_plan_it_showed(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    m, p = await _waiting(api_client, namespace)
    code, out, err = await plugin(
        "approve", "migration/orders", "-n", namespace, "--kubeconfig", str(alice)
    )
    assert (code, err) == (0, "")
    assert out.startswith(f"Approving plan {p.metadata.name} of migration {namespace}/orders:\n")
    assert p.spec.fingerprint in out
    assert "0000000002  " + p.spec.versions[0].checksum in out
    (approval,) = await _approvals(api_client, namespace)
    assert approval["spec"]["migrationRef"] == {"name": "orders", "uid": m.metadata.uid}
    assert approval["spec"]["planRef"] == {"name": p.metadata.name, "uid": p.metadata.uid}
    assert approval["spec"]["planFingerprint"] == p.spec.fingerprint
    assert approval["spec"]["approvedBy"]["username"] == ALICE
    assert out.endswith(
        f"approved: ptahmigrationapproval/{approval['metadata']['name']} "
        f"by {ALICE} (approvers, system:authenticated)\n"
    )


@pytest.mark.req("PLUGIN-05", "APR-05")
async def test_approve_approves_nothing_when_the_plan_was_replaced_meanwhile(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    m, old = await _waiting(api_client, namespace)
    out = io.StringIO()
    async with client.ApiClient(await _configuration(alice)) as api:
        session = Session(api, namespace, out)
        shown = await prepare_approval(session, "orders")
        assert shown.plan.metadata.uid == old.metadata.uid
        # Between showing and creating, the operator replaces the plan.
        new = await create_plan(api_client, namespace, plan_spec(ref(m), history="history-2"))
        await write_status(api_client, namespace, "orders", awaiting_approval(new))
        with pytest.raises(CommandError) as refused:
            await create_approval(session, shown)
    assert str(refused.value) == (
        f"not approved: PtahMigrationApproval refused: plan {old.metadata.name} was replaced: "
        f"the current plan of migration orders is {new.metadata.name}"
    )
    assert await _approvals(api_client, namespace) == []


@pytest.mark.req("PLUGIN-05")
async def test_approve_refuses_readably_when_nothing_waits(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    _, p = await _waiting(api_client, namespace)
    status = awaiting_approval(p).model_copy(update={"phase": MigrationPhase.APPLYING})
    await write_status(api_client, namespace, "orders", status)
    code, out, err = await plugin(
        "approve", "migration/orders", "-n", namespace, "--kubeconfig", str(alice)
    )
    assert code == 1
    assert out == ""
    assert err == (
        "error: migration orders is not waiting for an approval (phase Applying); "
        "nothing was approved\n"
    )
    code, _, err = await plugin(
        "approve", "migration/absent", "-n", namespace, "--kubeconfig", str(alice)
    )
    assert (code, err) == (1, f"error: ptahmigration absent not found in namespace {namespace}\n")
    assert await _approvals(api_client, namespace) == []


@pytest.mark.req("PLUGIN-05", "APR-12")
async def test_approve_pinned_to_the_reviewed_plan_approves_nothing_else(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    _, p = await _waiting(api_client, namespace)
    status = awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"operation_id": "op-0a00000007"})
    await write_status(api_client, namespace, "orders", status)
    base = ("approve", "migration/orders", "-n", namespace, "--kubeconfig", str(alice))
    code, out, err = await plugin(*base, "--plan", "orders-0000000000")
    assert (code, out) == (1, "")
    assert err == (
        f"error: migration orders no longer waits on the plan you reviewed: it waits on plan "
        f"{p.metadata.name}, not on orders-0000000000; read the plan again with kubectl ptah "
        "plan; nothing was approved\n"
    )
    other = "sha256:" + "0" * 12
    code, out, err = await plugin(*base, "--fingerprint", other)
    assert code == 1
    assert f"has fingerprint {p.spec.fingerprint}, not {other}" in err
    assert "Traceback" not in err
    assert await _approvals(api_client, namespace) == []
    code, out, err = await plugin(
        *base, "--plan", str(p.metadata.name), "--fingerprint", p.spec.fingerprint[:19]
    )
    assert (code, err) == (0, "")
    (approval,) = await _approvals(api_client, namespace)
    assert approval["spec"]["planRef"] == {"name": p.metadata.name, "uid": p.metadata.uid}
    assert approval["spec"]["planOperationID"] == "op-0a00000007"


async def _play_the_run(api: client.ApiClient, namespace: str, plan: PtahMigrationPlan) -> None:
    """What the operator would do after the approval: apply, verify, settle InSync."""
    for _ in range(300):
        if await _approvals(api, namespace):
            break
        await asyncio.sleep(0.1)
    # Give the plugin a moment to start watching, so it sees each phase go by.
    await asyncio.sleep(0.5)
    waiting = awaiting_approval(plan)
    await write_status(
        api, namespace, "orders", waiting.model_copy(update={"phase": MigrationPhase.APPLYING})
    )
    await asyncio.sleep(0.3)
    assert plan.metadata.name is not None
    run = LastRun(
        operation_id="op-00000000aa",
        outcome=RunOutcome.APPLIED,
        plan=PlanReference(
            name=plan.metadata.name, uid=plan.metadata.uid, fingerprint=plan.spec.fingerprint
        ),
        applied_versions=[v.version for v in plan.spec.versions],
        finished_at=T0,
    )
    await write_status(
        api,
        namespace,
        "orders",
        waiting.model_copy(update={"phase": MigrationPhase.VERIFYING_HISTORY, "last_run": run}),
    )
    await asyncio.sleep(0.3)
    await write_status(
        api,
        namespace,
        "orders",
        waiting.model_copy(update={"phase": MigrationPhase.IN_SYNC, "plan": None, "last_run": run}),
    )


@pytest.mark.req("PLUGIN-06")
async def test_approve_wait_waits_for_the_runs_verdict(
    api_client: client.ApiClient, namespace: str, webhooks: HttpsServer, alice: Path
) -> None:
    _, p = await _waiting(api_client, namespace)
    operator = asyncio.create_task(_play_the_run(api_client, namespace, p))
    code, out, err = await plugin(
        "approve",
        "migration/orders",
        "-n",
        namespace,
        "--kubeconfig",
        str(alice),
        "--wait",
        "--timeout=60s",
    )
    await operator
    assert (code, err) == (0, "")
    assert "phase Applying" in out
    assert "phase VerifyingHistory" in out
    assert out.endswith(
        "run op-00000000aa: Applied, applied 0000000002, 0000000003\nmigration is InSync\n"
    )


@pytest.mark.req("PLUGIN-06")
async def test_wait_for_a_phase_and_its_timeout(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    _, p = await _waiting(api_client, namespace)
    admin = str(kube.kubeconfig)
    code, _, err = await plugin(
        "wait", "migration/orders", "-n", namespace, "--kubeconfig", admin, "--timeout=1s"
    )
    assert code == 1
    assert err == (
        "error: timed out waiting for migration orders to be InSync; "
        "it is in phase AwaitingApproval (AwaitingApproval)\n"
    )

    async def settle() -> None:
        await asyncio.sleep(0.5)
        status = awaiting_approval(p).model_copy(update={"phase": MigrationPhase.IN_SYNC})
        await write_status(api_client, namespace, "orders", status)

    settling = asyncio.create_task(settle())
    code, out, err = await plugin(
        "wait", "migration/orders", "-n", namespace, "--kubeconfig", admin, "--timeout=30s"
    )
    await settling
    assert (code, err) == (0, "")
    assert out.endswith("migration orders is InSync\n")


# --- migration ---------------------------------------------------------------------------------


async def _configuration(kubeconfig: Path) -> client.Configuration:
    configuration, _ = await load_configuration(str(kubeconfig), None)
    return configuration


@pytest.mark.req("PLUGIN-04")
async def test_migration_shows_the_status_from_the_server_in_the_contexts_namespace(
    api_client: client.ApiClient,
    namespace: str,
    kube: ControlPlane,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, p = await _waiting(api_client, namespace)
    # A kubeconfig whose context names the namespace, found through KUBECONFIG.
    kubeconfig = yaml.safe_load(kube.kubeconfig.read_text())
    kubeconfig["contexts"][0]["context"]["namespace"] = namespace
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(kubeconfig))
    monkeypatch.setenv("KUBECONFIG", str(path))
    code, out, err = await plugin("migration", "orders")
    assert (code, err) == (0, "")
    assert f"Namespace:        {namespace}" in out
    assert "Phase:            AwaitingApproval" in out
    assert f"Plan {p.metadata.name} (UID {p.metadata.uid}):" in out
    assert p.spec.versions[1].checksum in out
    code, _, err = await plugin("migration", "orders", "--context", "nowhere")
    assert code == 1
    assert err.startswith(f"error: cannot use the kubeconfig {path}:")


# --- refresh -----------------------------------------------------------------------------------


async def _annotate(api: client.ApiClient, namespace: str, value: str) -> None:
    custom: Any = client.CustomObjectsApi(api)
    await custom.patch_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahmigrations",
        "orders",
        {"metadata": {"annotations": {ANNOTATION_READ_REQUESTED_AT: value}}},
        _content_type="application/merge-patch+json",
    )


async def _get(api: client.ApiClient, namespace: str) -> dict[str, Any]:
    obj: dict[str, Any] = await client.CustomObjectsApi(api).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahmigrations", "orders"
    )
    return obj


@pytest.mark.req("RRQ-20", "RRQ-13", "PLUGIN-07")
async def test_refresh_writes_a_value_later_than_any_the_resource_holds(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    _, p = await _waiting(api_client, namespace)
    admin = str(kube.kubeconfig)
    await _annotate(api_client, namespace, "2099-01-01T00:00:00Z")
    await write_status(
        api_client,
        namespace,
        "orders",
        awaiting_approval(p).model_copy(update={"last_read_request": "2099-06-01T00:00:00.5Z"}),
    )
    generation = (await _get(api_client, namespace))["metadata"]["generation"]
    code, out, err = await plugin(
        "refresh", "migration/orders", "-n", namespace, "--kubeconfig", admin
    )
    assert (code, err) == (0, "")
    assert out == f"read requested: {ANNOTATION_READ_REQUESTED_AT}=2099-06-01T00:00:01Z\n"
    obj = await _get(api_client, namespace)
    assert obj["metadata"]["annotations"][ANNOTATION_READ_REQUESTED_AT] == "2099-06-01T00:00:01Z"
    assert obj["metadata"]["generation"] == generation

    # Asked again: later than the value it wrote itself.
    code, out, _ = await plugin("refresh", "pmig/orders", "-n", namespace, "--kubeconfig", admin)
    assert out == f"read requested: {ANNOTATION_READ_REQUESTED_AT}=2099-06-01T00:00:02Z\n"

    # Invalid and digest values name no time: now is later than any instant held.
    await _annotate(api_client, namespace, "not a time")
    await write_status(
        api_client,
        namespace,
        "orders",
        awaiting_approval(p).model_copy(update={"last_read_request": "sha256:" + "a" * 64}),
    )
    code, out, _ = await plugin(
        "refresh", "migration/orders", "-n", namespace, "--kubeconfig", admin
    )
    written = datetime.fromisoformat(out.strip().split("=", 1)[1].replace("Z", "+00:00"))
    assert abs(written - datetime.now(UTC)) < timedelta(minutes=1)


async def _play_the_read(api: client.ApiClient, namespace: str, p: PtahMigrationPlan) -> None:
    """What the operator would do: answer the request, run a History read, record it."""
    value = None
    for _ in range(300):
        annotations = (await _get(api, namespace))["metadata"].get("annotations") or {}
        value = annotations.get(ANNOTATION_READ_REQUESTED_AT)
        if value is not None:
            break
        await asyncio.sleep(0.1)
    waiting = awaiting_approval(p)
    answered = waiting.model_copy(update={"last_read_request": value})
    await write_status(api, namespace, "orders", answered)
    await asyncio.sleep(0.3)
    claim = ActiveOperation(
        operation_id="op-00000000ff",
        type=OperationType.HISTORY,
        started_at=T0,
        read_request=value,
    )
    await write_status(
        api,
        namespace,
        "orders",
        answered.model_copy(update={"phase": MigrationPhase.READING, "active_operation": claim}),
    )
    await asyncio.sleep(0.3)
    assert waiting.history is not None
    history = waiting.history.model_copy(update={"operation_id": "op-00000000ff"})
    await write_status(api, namespace, "orders", answered.model_copy(update={"history": history}))


@pytest.mark.req("RRQ-21", "PLUGIN-07")
async def test_refresh_wait_waits_for_the_read_the_request_starts(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    _, p = await _waiting(api_client, namespace)
    operator = asyncio.create_task(_play_the_read(api_client, namespace, p))
    code, out, err = await plugin(
        "refresh",
        "migration/orders",
        "-n",
        namespace,
        "--kubeconfig",
        str(kube.kubeconfig),
        "--wait",
        "--timeout=60s",
    )
    await operator
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"read requested: {ANNOTATION_READ_REQUESTED_AT}=")
    assert lines[1:] == [
        "request answered; waiting for the read it starts",
        "read finished: operation op-00000000ff; phase AwaitingApproval",
    ]


async def _play_a_git_read(api: client.ApiClient, namespace: str, p: PtahMigrationPlan) -> None:
    """What the operator does under a Git source: the answer claims a Resolve; its result ends
    the claim, and the next pass claims the history read, whose reading says InSync."""
    value = None
    for _ in range(300):
        annotations = (await _get(api, namespace))["metadata"].get("annotations") or {}
        value = annotations.get(ANNOTATION_READ_REQUESTED_AT)
        if value is not None:
            break
        await asyncio.sleep(0.1)
    waiting = awaiting_approval(p)
    resolve = ActiveOperation(
        operation_id="op-000000001r",
        type=OperationType.RESOLVE,
        started_at=T0,
        read_request=value,
    )
    history_read = ActiveOperation(
        operation_id="op-000000001h", type=OperationType.HISTORY, started_at=T0
    )
    assert waiting.history is not None
    read = waiting.history.model_copy(
        update={"operation_id": "op-000000001h", "pending_count": 0, "pending_versions": []}
    )
    for update in (
        {
            "last_read_request": value,
            "phase": MigrationPhase.RESOLVING,
            "active_operation": resolve,
        },
        {"phase": MigrationPhase.READING, "active_operation": None},
        {"phase": MigrationPhase.READING, "active_operation": history_read},
        {"phase": MigrationPhase.IN_SYNC, "active_operation": None, "plan": None, "history": read},
    ):
        waiting = waiting.model_copy(update=update)
        await write_status(api, namespace, "orders", waiting)
        await asyncio.sleep(0.3)


@pytest.mark.req("RRQ-21", "RRQ-05", "PLUGIN-07")
async def test_refresh_wait_under_git_waits_past_the_resolve_for_the_history_read(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    _, p = await _waiting(api_client, namespace)
    operator = asyncio.create_task(_play_a_git_read(api_client, namespace, p))
    code, out, err = await plugin(
        "refresh",
        "migration/orders",
        "-n",
        namespace,
        "--kubeconfig",
        str(kube.kubeconfig),
        "--wait",
        "--timeout=60s",
    )
    await operator
    assert (code, err) == (0, "")
    assert out.splitlines()[1:] == [
        "request answered; waiting for the read it starts",
        "read finished: operation op-000000001h; phase InSync",
    ]


@pytest.mark.req("RRQ-21")
async def test_refresh_wait_says_when_the_request_was_never_answered(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    await _waiting(api_client, namespace)
    code, _, err = await plugin(
        "refresh",
        "migration/orders",
        "-n",
        namespace,
        "--kubeconfig",
        str(kube.kubeconfig),
        "--wait",
        "--timeout=1s",
    )
    assert code == 1
    assert (
        err
        == "error: timed out: the request is not answered yet (status.lastReadRequest is unset)\n"
    )


async def test_a_person_without_rights_reads_a_readable_error(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    await _waiting(api_client, namespace)
    nobody = kube.user_kubeconfig("nobody@example.com", [])
    code, _, err = await plugin("migration", "orders", "-n", namespace, "--kubeconfig", str(nobody))
    assert code == 1
    assert err.startswith('error: ptahmigrations.operator.ptah.run "orders" is forbidden: User')


@pytest.mark.req("PLUGIN-04")
async def test_kubectl_finds_the_plugin_on_its_path(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    await _waiting(api_client, namespace)
    scripts = Path(sys.executable).parent
    assert (scripts / "kubectl-ptah").exists(), "pip install -e . installs the kubectl-ptah script"
    env = {**os.environ, "PATH": f"{scripts}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = await asyncio.to_thread(
        subprocess.run,
        [
            str(kube.bindir / "kubectl"),
            "ptah",
            "migration",
            "orders",
            "-n",
            namespace,
            "--kubeconfig",
            str(kube.kubeconfig),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Phase:            AwaitingApproval" in result.stdout
    result = await asyncio.to_thread(
        subprocess.run,
        [str(kube.bindir / "kubectl"), "ptah", "approve"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


# --- set-source --------------------------------------------------------------------------------


@pytest.mark.req("PLUGIN-01")
async def test_set_source_points_a_migration_at_another_oci_artifact(
    api_client: client.ApiClient, namespace: str, kube: ControlPlane
) -> None:
    await create_migration(api_client, namespace, "orders")
    admin = str(kube.kubeconfig)
    before = await _get(api_client, namespace)
    assert "configMap" in before["spec"]
    reference = "oci://registry.example/acme/orders-migrations:v2"

    code, out, err = await plugin(
        "set-source", "migration/orders", reference, "-n", namespace, "--kubeconfig", admin
    )
    assert code == 1
    assert "--verification-policy" in err
    assert (await _get(api_client, namespace))["spec"] == before["spec"]

    code, out, err = await plugin(
        "set-source",
        "pmig/orders",
        reference,
        "--verification-policy",
        "orders-verification/policy.yaml",
        "-n",
        namespace,
        "--kubeconfig",
        admin,
    )
    assert (code, err) == (0, "")
    assert reference in out
    after = await _get(api_client, namespace)
    assert after["spec"]["artifact"] == {
        "ociRef": reference,
        "verificationPolicyFrom": {"name": "orders-verification", "key": "policy.yaml"},
    }
    assert "configMap" not in after["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"] + 1

    # Another tag keeps the policy; the same reference again changes nothing.
    moved = "oci://registry.example/acme/orders-migrations:v3"
    code, out, _ = await plugin(
        "set-source", "migration/orders", moved, "-n", namespace, "--kubeconfig", admin
    )
    assert code == 0
    again = await _get(api_client, namespace)
    assert again["spec"]["artifact"]["ociRef"] == moved
    assert again["spec"]["artifact"]["verificationPolicyFrom"]["name"] == "orders-verification"
    code, out, _ = await plugin(
        "set-source", "migration/orders", moved, "-n", namespace, "--kubeconfig", admin
    )
    assert (code, out) == (0, f"migration orders already reads {moved}\n")
    assert (await _get(api_client, namespace))["metadata"]["generation"] == again["metadata"][
        "generation"
    ]


@pytest.mark.parametrize(
    "reference",
    ["registry.example/acme/x:v1", "oci://registry.example", "oci://Registry.example/ACME:v1"],
)
async def test_set_source_refuses_what_is_not_an_oci_reference(reference: str) -> None:
    code, _, err = await plugin("set-source", "migration/orders", reference)
    assert code == 2
    assert "is not an OCI reference" in err
