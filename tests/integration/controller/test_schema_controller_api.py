"""The PtahSchema controller in a running manager against the real API server.

The manager runs the PtahSchema and PtahMigration controllers (sharing the lifecycle metrics);
the test plays the runner and the result endpoint: it writes the report records and the
uploaded plan pieces a Job's runner would have made, as ConfigMaps owned by the schema. No
Pod runs (the control plane has no kubelet), so Jobs stay active; results, not Jobs' exits,
move the schema on (PATH-10).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException
from localstack.controlplane import ControlPlane

from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.constants import API_VERSION, GROUP, VERSION
from ptah_operator.api.names import realm_lease_name
from ptah_operator.api.result_seal import ResultSeal
from ptah_operator.controller.lifecycle_metrics import LifecycleMetrics
from ptah_operator.controller.migration import MigrationControllerConfig, MigrationReconciler
from ptah_operator.controller.schema import SchemaControllerConfig, SchemaReconciler
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.results.credentials import new_result_key, operation_secret_factory
from ptah_operator.runtime.manager import EXIT_OK, Manager, ManagerOptions
from tests.support.schema_objects import (
    PLAN_SQL,
    SCHEMA_FILES,
    create_config_map,
    observe_document,
    piece_record,
    plan_document,
    report_record,
    schema_manifest,
    store_report,
)

pytestmark = pytest.mark.integration

T = TypeVar("T")


def _now() -> str:
    """An instant as the API server writes one (what a kubelet puts in a container's state)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


FAKE_CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
RUNNER = RunnerConfig(
    image="localhost/ptah-operator:dev",
    result_url="https://127.0.0.1:9443/v1/results",
    binding=ExecutionBinding(
        image="localhost/ptah-operator:dev", runner_version="0.1.0", protocol_version=1
    ),
)


@pytest.fixture
async def namespace(
    crds_installed: ControlPlane, api_client: client.ApiClient
) -> AsyncIterator[str]:
    name = "schema-ctl-" + secrets.token_hex(4)
    core: Any = client.CoreV1Api(api_client)
    await core.create_namespace({"metadata": {"name": name}})
    yield name
    await core.delete_namespace(name)


RESULT_KEY = new_result_key()
SEAL = ResultSeal.derived_from(RESULT_KEY)
"""The manager's seal: the records these tests write stand for the endpoint's."""


@dataclass
class Running:
    manager: Manager
    schemas: SchemaReconciler


@pytest.fixture
async def running(api_client: client.ApiClient, namespace: str) -> AsyncIterator[Running]:
    """A manager running both family controllers, realm Leases in the test namespace."""
    manager = Manager(api_client, ManagerOptions(metrics_bind_address="0"))
    metrics = LifecycleMetrics(manager.metrics.registry)
    secret = operation_secret_factory(RESULT_KEY, FAKE_CA)
    migrations = MigrationReconciler(
        manager,
        MigrationControllerConfig(
            runner=RUNNER,
            lease_namespace=namespace,
            operation_secret=secret,
            lifecycle_metrics=metrics,
            result_seal=SEAL,
        ),
    )
    schemas = SchemaReconciler(
        manager,
        SchemaControllerConfig(
            runner=RUNNER,
            lease_namespace=namespace,
            operation_secret=secret,
            lifecycle_metrics=metrics,
            result_seal=SEAL,
        ),
    )
    manager.add_controller(migrations.controller)
    manager.add_controller(schemas.controller)
    stop = asyncio.Event()
    run = asyncio.create_task(manager.run(stop))
    try:
        yield Running(manager, schemas)
    finally:
        stop.set()
        assert await asyncio.wait_for(run, 30) == EXIT_OK


async def eventually(
    probe: Callable[[], Awaitable[T | None]], what: str, within: float = 30.0
) -> T:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = await probe()
        if value is not None and value is not False:
            return value
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


class Cluster:
    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.namespace = namespace
        self.custom: Any = client.CustomObjectsApi(api)
        self.core: Any = client.CoreV1Api(api)
        self.batch: Any = client.BatchV1Api(api)
        self.coordination: Any = client.CoordinationV1Api(api)
        self.api = api

    async def schema(self, name: str) -> dict[str, Any]:
        obj: dict[str, Any] = await self.custom.get_namespaced_custom_object(
            GROUP, VERSION, self.namespace, "ptahschemas", name
        )
        return obj

    async def listed(self, plural: str) -> list[dict[str, Any]]:
        listed = await self.custom.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, plural
        )
        items: list[dict[str, Any]] = listed["items"]
        return items

    async def job(self, name: str) -> Any:
        try:
            return await self.batch.read_namespaced_job(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    async def config_map(self, name: str) -> Any:
        try:
            return await self.core.read_namespaced_config_map(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    async def lease_holder(self, name: str) -> str | None:
        try:
            lease = await self.coordination.read_namespaced_lease(name, self.namespace)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        holder: str | None = lease.spec.holder_identity
        return holder

    async def job_succeeded(self, name: str) -> None:
        """The Job's Pod ran to success (there is no kubelet here: its status is written as
        one would), and the Job controller ends the Job: a read's result counts only once its
        Job is seen finished (issue #18)."""

        async def pods() -> list[dict[str, Any]] | None:
            response = await self.core.list_namespaced_pod(
                self.namespace, label_selector=f"job-name={name}", _preload_content=False
            )
            items: list[dict[str, Any]] = json.loads(await response.read())["items"]
            return items or None

        for pod in await eventually(pods, f"the Pod of Job {name}"):
            pod["status"] = {
                "phase": "Succeeded",
                "containerStatuses": [
                    {
                        "name": "run",
                        "image": "ptah",
                        "imageID": "",
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "terminated": {
                                "exitCode": 0,
                                "reason": "Completed",
                                "startedAt": _now(),
                                "finishedAt": _now(),
                            }
                        },
                    }
                ],
            }
            await self.core.replace_namespaced_pod_status(
                pod["metadata"]["name"], self.namespace, pod
            )

        async def complete() -> bool:
            job = await self.job(name)
            return any(
                c.type == "Complete" and c.status == "True" for c in (job.status.conditions or [])
            )

        await eventually(complete, f"Job {name} to be Complete")

    def claim_of(self, name: str, operation: str) -> Callable[[], Awaitable[Any]]:
        async def probe() -> dict[str, Any] | None:
            status = (await self.schema(name)).get("status") or {}
            claim = status.get("activeOperation") or {}
            return claim if claim.get("type") == operation else None

        return probe

    def phase_of(self, name: str, phase: str) -> Callable[[], Awaitable[Any]]:
        async def probe() -> dict[str, Any] | None:
            obj = await self.schema(name)
            return obj if (obj.get("status") or {}).get("phase") == phase else None

        return probe


async def _source(cluster: Cluster) -> None:
    await create_config_map(
        cluster.api,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "catalog-schema", "namespace": cluster.namespace},
            "data": SCHEMA_FILES,
        },
    )


async def _new_schema(cluster: Cluster, name: str = "catalog", **kwargs: Any) -> dict[str, Any]:
    created: dict[str, Any] = await cluster.custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        cluster.namespace,
        "ptahschemas",
        schema_manifest(name, cluster.namespace, **kwargs),
    )
    return created


def _sample(manager: Manager, name: str, labels: dict[str, str]) -> float:
    value = manager.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


@pytest.mark.req("PATH-07", "SCH-05", "SCH-07", "SCH-10", "SCH-16", "APR-02", "APR-14", "LCK-08")
async def test_a_configmap_schema_is_observed_planned_published_approved_and_applied(
    api_client: client.ApiClient, namespace: str, running: Running
) -> None:
    cluster = Cluster(api_client, namespace)
    await _source(cluster)
    schema = await _new_schema(cluster)
    lease = realm_lease_name(f"{namespace}/catalog")

    # Observing: the snapshot, the operation Secret and the Observe Job, no Lease (LCK-07).
    observe = await eventually(cluster.claim_of("catalog", "Observe"), "the Observe claim")
    status = (await cluster.schema("catalog"))["status"]
    assert status["phase"] == "Observing"
    snapshot = status["source"]["snapshotName"]
    assert (await cluster.config_map(snapshot)) is not None
    job = await eventually(lambda: cluster.job(observe["jobName"]), "the Observe Job")
    assert job.metadata.owner_references[0].name == "catalog"
    secret = await cluster.core.read_namespaced_secret(
        "ptah-op-" + observe["operationID"][3:], namespace
    )
    assert set(secret.data) >= {"token", "ca.crt"}
    assert await cluster.lease_holder(lease) is None

    # The runner reports the drift: Planning, then the Plan under its own Lease (LCK-08).
    await store_report(
        api_client, report_record(observe_document(schema, observe["operationID"]), SEAL)
    )
    await cluster.job_succeeded(observe["jobName"])
    plan_claim = await eventually(cluster.claim_of("catalog", "Plan"), "the Plan claim")
    assert await eventually(lambda: cluster.job(plan_claim["jobName"]), "the Plan Job")
    assert await cluster.lease_holder(lease) == plan_claim["operationID"]

    # The runner uploads the plan file in two pieces, then reports.
    pieces = [PLAN_SQL[:20], PLAN_SQL[20:]]
    for index, piece in enumerate(pieces):
        await create_config_map(
            api_client, piece_record(schema, plan_claim["operationID"], index, piece)
        )
    await store_report(
        api_client, report_record(plan_document(schema, plan_claim["operationID"], pieces), SEAL)
    )
    await cluster.job_succeeded(plan_claim["jobName"])

    # The manager publishes: the plan, its chunks, then AwaitingApproval (SCH-16).
    waiting = await eventually(
        cluster.phase_of("catalog", "AwaitingApproval"), "AwaitingApproval", within=60
    )
    plan_ref = waiting["status"]["plan"]
    assert plan_ref["uid"]
    assert plan_ref["approvalRequired"] is True
    (plan,) = await cluster.listed("ptahschemaplans")
    assert plan["metadata"]["name"] == plan_ref["name"]
    assert plan["metadata"]["uid"] == plan_ref["uid"]
    assert plan["spec"]["digest"] == plan_document(schema, "op-0", pieces)["plan"]["digest"]
    chunks = sorted(await cluster.listed("ptahschemaplanchunks"), key=lambda c: c["spec"]["index"])
    assert [c["spec"]["data"] for c in chunks] == pieces
    assert [c["metadata"]["ownerReferences"][0]["uid"] for c in chunks] == [plan_ref["uid"]] * 2
    entries = [e["type"] for e in waiting["status"]["journal"]["entries"]]
    assert "PlanPublished" in entries
    # The plain Plan's Lease is given back; the uploaded text goes once its chunks exist.
    assert await eventually(
        lambda: _true(cluster.lease_holder(lease), None), "the Plan's Lease released"
    )
    for index in range(2):
        name = f"ptah-result-{plan_claim['operationID'][3:]}-{index}"

        async def gone(record: str = name) -> bool:
            return await cluster.config_map(record) is None

        assert await eventually(gone, f"{name} deleted")

    # A person approves the exact plan: the Apply's Lease is taken, its claim and Job made.
    approval = await cluster.custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahschemaapprovals",
        {
            "apiVersion": API_VERSION,
            "kind": "PtahSchemaApproval",
            "metadata": {"name": "catalog-approval"},
            "spec": {
                "schemaRef": {"name": "catalog", "uid": schema["metadata"]["uid"]},
                "planRef": {"name": plan_ref["name"], "uid": plan_ref["uid"]},
                "planFingerprint": plan_ref["fingerprint"],
                # No admission webhook runs here: what it fills in and stamps is written as it
                # would have been (the publication status.plan records, the approver).
                "planOperationID": plan_ref["operationID"],
                "approvedBy": {"username": "alice@example.com"},
            },
        },
    )
    apply = await eventually(cluster.claim_of("catalog", "Apply"), "the Apply claim")
    assert apply["approval"]["uid"] == approval["metadata"]["uid"]
    assert await eventually(lambda: cluster.job(apply["jobName"]), "the Apply Job")
    assert await cluster.lease_holder(lease) == apply["operationID"]
    applying = await eventually(cluster.phase_of("catalog", "Applying"), "Applying")
    entries = [e["type"] for e in applying["status"]["journal"]["entries"]]
    assert "ApprovalAccepted" in entries
    assert applying["status"]["plan"]["approval"]["uid"] == approval["metadata"]["uid"]

    metrics = running.manager
    labels = {"family": "PtahSchema"}
    assert _sample(metrics, "ptah_plans_published_total", labels) >= 1
    assert _sample(metrics, "ptah_approvals_accepted_total", labels) >= 1
    assert _sample(metrics, "ptah_operations_started_total", {**labels, "type": "Apply"}) >= 1
    assert (
        _sample(
            metrics,
            "ptah_operations_finished_total",
            {**labels, "type": "Plan", "result": "Changes"},
        )
        >= 1
    )
    assert _sample(metrics, "ptah_resources", {**labels, "phase": "Applying"}) >= 1


async def _true(value: Awaitable[Any], expected: Any) -> bool:
    found: Any = await value
    return bool(found == expected)


@pytest.fixture
async def jobs_refused(api_client: client.ApiClient, namespace: str) -> AsyncIterator[None]:
    """A ValidatingAdmissionPolicy refusing every Job created in the test namespace."""
    admission: Any = client.AdmissionregistrationV1Api(api_client)
    name = f"no-jobs-{namespace}"
    await admission.create_validating_admission_policy(
        {
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["batch"],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["jobs"],
                        }
                    ]
                },
                "validations": [
                    {"expression": "false", "message": "no Job is admitted in this namespace"}
                ],
            },
        }
    )
    await admission.create_validating_admission_policy_binding(
        {
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
                },
            },
        }
    )
    batch: Any = client.BatchV1Api(api_client)
    probe = {
        "metadata": {"name": "probe"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }

    async def in_force() -> bool:
        try:
            await batch.create_namespaced_job(namespace, probe, dry_run="All")
        except ApiException as exc:
            return exc.status in (400, 403, 422)
        return False

    try:
        await eventually(in_force, "the policy to refuse Jobs")
        yield
    finally:
        await admission.delete_validating_admission_policy_binding(name)
        await admission.delete_validating_admission_policy(name)


@pytest.mark.req("JOB-04")
async def test_a_job_the_api_server_refuses_is_a_failed_attempt_named_job_refused(
    api_client: client.ApiClient, namespace: str, jobs_refused: None, running: Running
) -> None:
    cluster = Cluster(api_client, namespace)
    await _source(cluster)
    await _new_schema(cluster)

    async def refused() -> dict[str, Any] | None:
        status = (await cluster.schema("catalog")).get("status") or {}
        claim = status.get("activeOperation") or {}
        return status if claim.get("lastFailureReason") == "JobRefused" else None

    status = await eventually(refused, "the refusal on record")
    assert status["phase"] == "Failed"
    failed = next(c for c in status["conditions"] if c["type"] == "ReconciliationFailed")
    assert failed["reason"] == "JobRefused"
    job = status["activeOperation"]["jobName"]
    assert f"the API server refused Job {job}: " in failed["message"]
    assert "no Job is admitted in this namespace" in failed["message"]
    assert await cluster.job(job) is None
    entries = status["journal"]["entries"]
    assert [(e["type"], e["reason"]) for e in entries] == [("OperationFailed", "JobRefused")]


async def test_a_result_record_the_endpoint_did_not_seal_is_ignored_and_reported_once(
    api_client: client.ApiClient, namespace: str, running: Running
) -> None:
    """A ConfigMap writer's `ptah-result-*` record for the Observe in flight (a valid report,
    sealed under another key) moves nothing: the claim stays, and one ResultUnsealed Warning
    and one count name the record, however many passes see it (docs/security.md)."""
    cluster = Cluster(api_client, namespace)
    await _source(cluster)
    schema = await _new_schema(cluster)
    observe = await eventually(cluster.claim_of("catalog", "Observe"), "the Observe claim")
    forged = report_record(observe_document(schema, observe["operationID"]), ResultSeal())
    await create_config_map(api_client, forged)
    name = forged["metadata"]["name"]

    async def warned() -> list[Any] | None:
        events = await cluster.core.list_namespaced_event(namespace)
        found = [e for e in events.items if e.reason == "ResultUnsealed"]
        return found or None

    found = await eventually(warned, "the ResultUnsealed Warning")
    assert name in found[0].message
    # Another pass (a touch of the source) sees it again and reports nothing more.
    await cluster.core.patch_namespaced_config_map(
        "catalog-schema", namespace, {"metadata": {"labels": {"touched": "1"}}}
    )
    await asyncio.sleep(2)
    claim = (await cluster.schema("catalog"))["status"]["activeOperation"]
    assert (claim["type"], claim["operationID"]) == ("Observe", observe["operationID"])
    assert len(await warned() or []) == 1
    unsealed = _sample(
        running.manager, "ptah_result_records_unsealed_total", {"family": "PtahSchema"}
    )
    assert unsealed == 1
