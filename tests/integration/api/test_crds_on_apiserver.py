"""The generated CRDs on a real kube-apiserver: established, the examples created for real, bad
input refused with a message a person can act on, and status written by the models read back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from localstack.controlplane import ControlPlane

from ptah_operator.api import PtahMigration, PtahSchema, from_manifest, to_manifest
from ptah_operator.api.common import ActiveOperation, Condition, PlanReference, SourceRecord
from ptah_operator.api.constants import (
    GROUP,
    ConditionStatus,
    ConditionType,
    JournalEntryType,
    JournalOutcome,
    MigrationPhase,
    OperationType,
    Reason,
    RevisionState,
    RunOutcome,
    SchemaPhase,
    Severity,
    SourceKind,
)
from ptah_operator.api.journal import Journal, JournalEntry
from ptah_operator.api.kinds import KINDS, kind_info
from ptah_operator.api.migration import (
    History,
    LastRun,
    PtahMigrationStatus,
    Revision,
    RunFailure,
    UnresolvedRun,
)
from ptah_operator.api.schema import DriftCategory, DriftSummary, PtahSchemaStatus

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
NAMESPACE = "application"
NOW = datetime(2026, 8, 30, 12, 0, tzinfo=UTC)
OURS = {info.kind.value for info in KINDS}


def _example_documents() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted(EXAMPLES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc is not None
    ]


def _our_examples() -> list[dict[str, Any]]:
    return [doc for doc in _example_documents() if doc["kind"] in OURS]


def _get(kube: ControlPlane, kind: str, name: str, namespace: str | None) -> dict[str, Any]:
    scope = ["-n", namespace] if namespace else []
    result = kube.kubectl("get", f"{kind_info(kind).plural}.{GROUP}", name, *scope, "-o", "json")
    document: dict[str, Any] = json.loads(result.stdout)
    return document


@pytest.fixture(scope="module")
def examples(crds_installed: ControlPlane) -> Iterator[ControlPlane]:
    """`kubectl apply -f crds/ -f examples/` for real; the custom resources are deleted afterwards."""
    kube = crds_installed
    kube.kubectl("apply", "-f", "crds/", "-f", "examples/")
    yield kube
    for doc in _our_examples():
        scope = ["-n", doc["metadata"]["namespace"]] if "namespace" in doc["metadata"] else []
        kube.kubectl(
            "delete",
            f"{kind_info(doc['kind']).plural}.{GROUP}",
            doc["metadata"]["name"],
            *scope,
            "--ignore-not-found",
            "--wait=false",
            check=False,
        )


def test_every_crd_is_established_and_structural(crds_installed: ControlPlane) -> None:
    for info in KINDS:
        crd = json.loads(
            crds_installed.kubectl("get", "crd", f"{info.plural}.{GROUP}", "-o", "json").stdout
        )
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions.get("Established") == "True", info.kind
        assert conditions.get("NamesAccepted") == "True", info.kind
        assert "NonStructuralSchema" not in conditions, info.kind
        assert crd["status"]["acceptedNames"]["shortNames"] == list(info.short_names)


def test_every_example_is_created_and_reads_back_into_its_model(examples: ControlPlane) -> None:
    ours = _our_examples()
    assert {doc["kind"] for doc in ours} == OURS
    for doc in ours:
        stored = _get(
            examples, doc["kind"], doc["metadata"]["name"], doc["metadata"].get("namespace")
        )
        assert stored["metadata"]["uid"]
        from_server = from_manifest(doc["kind"], stored)
        from_file = from_manifest(doc["kind"], doc)
        # The defaults the API server filled in are the ones the models assume.
        assert from_server.model_dump(exclude={"metadata"}) == from_file.model_dump(
            exclude={"metadata"}
        ), doc["metadata"]["name"]


@pytest.mark.req("APR-01", "MIG-54", "MIG-58")
def test_the_api_server_fills_the_defaults(examples: ControlPlane) -> None:
    spec = _get(examples, "PtahMigration", "orders", NAMESPACE)["spec"]
    assert spec["policy"] == {
        "apply": "OnApproval",
        "revisionTable": {"name": "schema_migrations"},
        "requireDistinctApprover": False,
    }
    assert spec["interval"] == "10m"
    assert spec["execution"] == {"failureRetryInterval": "1m"}
    assert spec["suspend"] is False
    assert spec["target"]["sharedRealm"] is False


def test_an_unsupported_engine_is_refused_readably(examples: ControlPlane) -> None:
    result = examples.kubectl("apply", "-f", "tests/data/invalid-ptahmigration.yaml", check=False)
    assert result.returncode != 0
    assert "spec.target.engine" in result.stderr
    assert 'Unsupported value: "oracle"' in result.stderr
    assert '"PostgreSQL", "MySQL", "MariaDB"' in result.stderr


def test_two_sources_at_once_are_refused_readably(examples: ControlPlane) -> None:
    result = examples.kubectl(
        "apply", "-f", "tests/data/invalid-ptahmigration-two-sources.yaml", check=False
    )
    assert result.returncode != 0
    assert "exactly one source must be set: spec.artifact, spec.configMap or spec.git" in (
        result.stderr
    )


def _seed_migration(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigration",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": "prod/application/orders-primary",
                "urlFrom": {"name": "orders-database", "key": "url"},
            },
            "artifact": {
                "ociRef": "oci://registry.example/acme/orders-migrations:stable",
                "verificationPolicyFrom": {"name": "orders-verification", "key": "policy.yaml"},
            },
        },
    }


def test_no_source_is_refused_readably(examples: ControlPlane) -> None:
    manifest = _seed_migration("no-source")
    del manifest["spec"]["artifact"]
    result = examples.kubectl("apply", "-f", "-", input=json.dumps(manifest), check=False)
    assert result.returncode != 0
    assert "exactly one source must be set" in result.stderr


def test_an_unknown_field_is_refused(examples: ControlPlane) -> None:
    manifest = _seed_migration("unknown-field")
    manifest["spec"]["transactionMode"] = "none"  # belongs under spec.policy
    result = examples.kubectl("apply", "-f", "-", input=json.dumps(manifest), check=False)
    assert result.returncode != 0
    assert 'unknown field "spec.transactionMode"' in result.stderr


def test_a_bad_oci_reference_and_interval_are_refused(examples: ControlPlane) -> None:
    manifest = _seed_migration("bad-values")
    manifest["spec"]["artifact"]["ociRef"] = "registry.example/acme/orders:stable"
    manifest["spec"]["interval"] = "ten minutes"
    result = examples.kubectl("apply", "-f", "-", input=json.dumps(manifest), check=False)
    assert result.returncode != 0
    assert "spec.artifact.ociRef" in result.stderr
    assert "spec.interval" in result.stderr


@pytest.mark.req("RETRY-12", "RETRY-01")
@pytest.mark.parametrize(
    ("kind", "path"),
    [
        ("PtahMigration", ("interval",)),
        ("PtahMigration", ("execution", "failureRetryInterval")),
        ("PtahSchema", ("interval",)),
        ("PtahSchema", ("execution", "failureRetryInterval")),
    ],
)
def test_the_two_clocks_are_refused_outside_10s_to_24h(
    examples: ControlPlane, kind: str, path: tuple[str, ...]
) -> None:
    field = "spec." + ".".join(path)
    for value, accepted in (("0s", False), ("9s", False), ("25h", False), ("10s", True)):
        manifest = _seed_migration(f"clock-{kind.lower()}-{len(path)}")
        manifest["kind"] = kind
        node = manifest["spec"]
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
        result = examples.kubectl(
            "create", "--dry-run=server", "-f", "-", input=json.dumps(manifest), check=False
        )
        if accepted:
            assert result.returncode == 0, (field, value, result.stderr)
        else:
            assert result.returncode != 0, (field, value)
            assert field in result.stderr, (field, value, result.stderr)
            assert "must be a duration between 10s and 24h" in result.stderr, (field, value)


def test_a_realms_engine_is_immutable(examples: ControlPlane) -> None:
    result = examples.kubectl(
        "patch",
        "ptahrealm",
        "catalog-primary",
        "--type=merge",
        "-p",
        '{"spec":{"engine":"MySQL"}}',
        check=False,
    )
    assert result.returncode != 0
    assert "spec.engine" in result.stderr
    assert "engine is immutable" in result.stderr


@pytest.mark.req("PATH-07")
def test_plans_and_approvals_are_immutable(examples: ControlPlane) -> None:
    for resource, name, patch in (
        ("pmigplan", "orders-20260830-4f2a9c", {"spec": {"toVersion": "20260901"}}),
        ("pschplan", "catalog-9d41be", {"spec": {"statementCount": 3}}),
        ("pschchunk", "catalog-9d41be-0", {"spec": {"data": "DROP TABLE x;"}}),
        ("pmigappr", "orders-to-20260830", {"spec": {"planRef": {"name": "other"}}}),
    ):
        result = examples.kubectl(
            "patch",
            resource,
            name,
            "-n",
            NAMESPACE,
            "--type=merge",
            "-p",
            json.dumps(patch),
            check=False,
        )
        assert result.returncode != 0, resource
        assert "spec is immutable" in result.stderr, resource


def _migration_status() -> PtahMigrationStatus:
    digest = "sha256:" + "b" * 64
    plan = PlanReference(name="orders-20260830-4f2a9c", uid="p-1", fingerprint=digest)
    return PtahMigrationStatus(
        observed_generation=1,
        phase=MigrationPhase.BLOCKED,
        conditions=[
            Condition(
                type=ConditionType.READY,
                status=ConditionStatus.FALSE,
                reason=Reason.APPLY_OUTCOME_UNKNOWN,
                message="migration 20260830 ended Partial: SQLSTATE 42P07",
                last_transition_time=NOW,
                observed_generation=1,
            ),
            Condition(
                type=ConditionType.PROGRESSING,
                status=ConditionStatus.FALSE,
                reason=Reason.APPLY_OUTCOME_UNKNOWN,
                last_transition_time=NOW,
            ),
        ],
        active_operation=ActiveOperation(
            operation_id="history-3",
            type=OperationType.HISTORY,
            job_name="ptah-history-3",
            started_at=NOW,
            attempt=2,
            source=SourceRecord(kind=SourceKind.ARTIFACT, oci_digest=digest, resolved_at=NOW),
        ),
        source=SourceRecord(
            kind=SourceKind.ARTIFACT,
            oci_ref="oci://registry.example/acme/orders-migrations:stable",
            oci_digest=digest,
        ),
        plan=plan,
        history=History(
            current_version="20260815",
            applied_count=12,
            pending_count=1,
            pending_versions=["20260830"],
            read_at=NOW,
            revisions=[
                Revision(
                    version="20260815", state=RevisionState.APPLIED, checksum="c1", applied_at=NOW
                ),
                Revision(version="20260801", state=RevisionState.APPLIED, execution_millis=12),
            ],
        ),
        last_run=LastRun(
            operation_id="apply-2",
            outcome=RunOutcome.PARTIAL,
            plan=plan,
            applied_versions=["20260815"],
            failure=RunFailure(version="20260830", statement_index=1, sqlstate="42P07"),
            finished_at=NOW,
        ),
        unresolved_run=UnresolvedRun(
            operation_id="apply-2", outcome=RunOutcome.PARTIAL, plan=plan, finished_at=NOW
        ),
        journal=Journal(
            covered_since=NOW - timedelta(days=3),
            entries=[
                JournalEntry(
                    type=JournalEntryType.RUN_FINISHED,
                    time=NOW,
                    operation_id="apply-2",
                    plan_name=plan.name,
                    plan_uid=plan.uid,
                    outcome=JournalOutcome.PARTIAL,
                    versions_applied=1,
                    stopped_at="20260830",
                )
            ],
        ),
        last_read_request="2026-08-30T11:59:00Z",
        next_reconciliation_time=NOW + timedelta(minutes=10),
    )


def _patch_status(kube: ControlPlane, resource: str, name: str, status: dict[str, Any]) -> None:
    kube.kubectl(
        "patch",
        resource,
        name,
        "-n",
        NAMESPACE,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": status}),
    )


@pytest.mark.req("PATH-20", "RUN-05", "RUN-17", "JNL-01")
def test_a_migration_status_the_models_write_reads_back_the_same(examples: ControlPlane) -> None:
    status = _migration_status()
    manifest = to_manifest(PtahMigration.model_validate({**_seed_migration("x"), "status": status}))
    _patch_status(examples, "ptahmigration", "orders", manifest["status"])

    stored = from_manifest(PtahMigration, _get(examples, "PtahMigration", "orders", NAMESPACE))
    assert stored.status == status

    table = examples.kubectl("get", "pmig", "orders", "-n", NAMESPACE).stdout.splitlines()
    assert table[0].split() == ["NAME", "PHASE", "REASON", "CURRENT", "PENDING", "PLAN", "AGE"]
    assert table[1].split()[:6] == [
        "orders",
        "Blocked",
        "ApplyOutcomeUnknown",
        "20260815",
        "1",
        "orders-20260830-4f2a9c",
    ]


@pytest.mark.req("SCH-54", "PRIV-03")
def test_a_schema_status_the_models_write_reads_back_the_same(examples: ControlPlane) -> None:
    status = PtahSchemaStatus(
        phase=SchemaPhase.AWAITING_APPROVAL,
        conditions=[
            Condition(
                type=ConditionType.READY,
                status=ConditionStatus.FALSE,
                reason=Reason.AWAITING_APPROVAL,
                last_transition_time=NOW,
            )
        ],
        drift=DriftSummary(
            digest="sha256:" + "d" * 64,
            dialect="postgres15",
            total=2,
            highest_severity=Severity.LOW,
            categories=[DriftCategory(category="columns", count=2, highest_severity=Severity.LOW)],
        ),
    )
    manifest = to_manifest(
        PtahSchema.model_validate(
            {**_get(examples, "PtahSchema", "catalog", NAMESPACE), "status": status}
        )
    )
    _patch_status(examples, "ptahschema", "catalog", manifest["status"])
    stored = from_manifest(PtahSchema, _get(examples, "PtahSchema", "catalog", NAMESPACE))
    assert stored.status == status

    table = examples.kubectl("get", "psch", "catalog", "-n", NAMESPACE).stdout.splitlines()
    assert table[0].split() == ["NAME", "PHASE", "REASON", "PLAN", "AGE"]
    assert table[1].split()[:3] == ["catalog", "AwaitingApproval", "AwaitingApproval"]


def test_status_cannot_hold_what_the_schema_refuses(examples: ControlPlane) -> None:
    result = examples.kubectl(
        "patch",
        "ptahmigration",
        "orders",
        "-n",
        NAMESPACE,
        "--subresource=status",
        "--type=merge",
        "-p",
        json.dumps({"status": {"phase": "Observing"}}),  # a schema phase, not a migration's
        check=False,
    )
    assert result.returncode != 0
    assert "status.phase" in result.stderr
    assert "Observing" in result.stderr


def test_short_names_and_the_ptah_category(examples: ControlPlane) -> None:
    namespaced = ",".join(name for info in KINDS if info.namespaced for name in info.short_names)
    listed = examples.kubectl("get", namespaced, "-n", NAMESPACE, "-o", "name").stdout
    for doc in _our_examples():
        if doc["kind"] != "PtahRealm":
            assert f"/{doc['metadata']['name']}" in listed, doc["metadata"]["name"]
    assert "catalog-primary" in examples.kubectl("get", "prealm", "-o", "name").stdout
    category = examples.kubectl("get", "ptah", "-n", NAMESPACE, "-o", "name").stdout
    assert f"ptahmigration.{GROUP}/orders" in category
    assert f"ptahschema.{GROUP}/catalog" in category
