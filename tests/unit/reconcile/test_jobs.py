"""The Job contract: credential separation, deterministic names, the sequence an Apply carries."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ptah_operator.api.common import ExecutionBinding, SourceRecord
from ptah_operator.api.constants import OperationType, SourceKind
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.names import job_name, operation_secret_name, realm_lease_name
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile.jobs import snapshot_configmap
from ptah_operator.reconcile.migration.jobs import apply_job, history_job
from ptah_operator.reconcile.world import RunnerConfig, SourceFiles

MIGRATION = from_manifest(
    PtahMigration,
    {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": "PtahMigration",
        "metadata": {"name": "orders", "namespace": "application", "uid": "u-1", "generation": 1},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": "prod/orders",
                "urlFrom": {"name": "orders-database", "key": "url"},
            },
            "configMap": {"name": "orders-migrations"},
        },
    },
)
RUNNER = RunnerConfig(
    image="localhost/ptah-operator:dev",
    result_url="https://127.0.0.1:9443/v1/results",
    binding=ExecutionBinding(image="localhost/ptah-operator:dev", protocol_version=1),
)
FILES = {"0000000001_init.up.sql": b"CREATE TABLE orders (id int);\n"}
DIGEST, MANIFEST = digest_of_files(FILES)
RECORD = SourceRecord(kind=SourceKind.CONFIG_MAP, snapshot_name="ptah-src-x", content_digest=DIGEST)


def _plan() -> PtahMigrationPlan:
    return from_manifest(
        PtahMigrationPlan,
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigrationPlan",
            "metadata": {"name": "orders-abc", "namespace": "application", "uid": "p-1"},
            "spec": {
                "migrationRef": {"name": "orders", "uid": "u-1"},
                "planContractVersion": 2,
                "source": {"kind": "ConfigMap", "contentDigest": DIGEST, "configMapUID": "c-1"},
                "engine": "PostgreSQL",
                "targetIdentityDigest": "sha256:" + "a" * 64,
                "historyFingerprint": "sha256:" + "b" * 64,
                "executionBinding": {"image": "localhost/ptah-operator:dev"},
                "toVersion": "0000000001",
                "versions": [
                    {
                        "version": "0000000001",
                        "description": "init",
                        "checksum": "sha256:" + "c" * 64,
                    }
                ],
                "fingerprint": "sha256:" + "d" * 64,
            },
        },
    )


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e for e in container.get("env", [])}


@pytest.mark.req("JOB-01", "JOB-02", "SRC-CM-07")
def test_only_the_run_container_holds_the_url_and_it_comes_from_the_named_secret() -> None:
    job = history_job(MIGRATION, RUNNER, "op-0123456789", RECORD)
    pod = job["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    (run,) = pod["containers"]
    assert "env" not in init
    assert {m["name"] for m in init["volumeMounts"]} == {"snapshot", "files"}
    url = _env(run)["PTAH_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert url == {"name": "orders-database", "key": "url"}
    assert "snapshot" not in {m["name"] for m in run["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["snapshot"]["configMap"]["name"] == "ptah-src-x"
    assert "orders-migrations" not in json.dumps(job)


@pytest.mark.req("JOB-03", "SRC-CM-08")
def test_the_init_container_checks_the_snapshot_against_the_bound_digest() -> None:
    job = history_job(MIGRATION, RUNNER, "op-0123456789", RECORD)
    (init,) = job["spec"]["template"]["spec"]["initContainers"]
    assert f"--digest={DIGEST}" in init["command"]


def test_names_are_deterministic_from_the_operation_id() -> None:
    job = history_job(MIGRATION, RUNNER, "op-0123456789", RECORD)
    assert job["metadata"]["name"] == job_name(OperationType.HISTORY, "op-0123456789")
    assert job["metadata"]["name"] == "ptah-history-0123456789"
    assert operation_secret_name("op-0123456789") == "ptah-op-0123456789"
    assert realm_lease_name("prod/orders") == realm_lease_name("prod/orders")
    assert realm_lease_name("prod/orders") != realm_lease_name("prod/billing")
    assert job["metadata"]["ownerReferences"][0]["uid"] == "u-1"


@pytest.mark.req("JOB-09", "MIG-49", "PRIV-02")
def test_an_apply_carries_the_approved_sequence_and_no_sql() -> None:
    job = apply_job(MIGRATION, RUNNER, "op-0123456789", RECORD, _plan())
    (run,) = job["spec"]["template"]["spec"]["containers"]
    document = json.loads(_env(run)["PTAH_OPERATION"]["value"])
    assert document["type"] == "Apply"
    assert document["expected"] == [{"version": "0000000001", "checksum": "sha256:" + "c" * 64}]
    assert "CREATE" not in json.dumps(job)
    assert job["spec"]["backoffLimit"] == 0


@pytest.mark.req("JOB-07")
def test_an_apply_job_is_made_to_keep_a_day_and_other_jobs_five_minutes() -> None:
    # Made to keep a day: the run's outcome is not known yet. A run on record as succeeded has
    # its Job removed about five minutes after it finished (test_finished_jobs.py).
    apply = apply_job(MIGRATION, RUNNER, "op-0123456789", RECORD, _plan())
    history = history_job(MIGRATION, RUNNER, "op-0123456789", RECORD)
    assert apply["spec"]["ttlSecondsAfterFinished"] == 86400
    assert history["spec"]["ttlSecondsAfterFinished"] == 300


@pytest.mark.req("SRC-CM-02", "SRC-CM-03")
def test_the_snapshot_is_immutable_owned_and_carries_its_manifest() -> None:
    source = SourceFiles("orders-migrations", "c-1", FILES, DIGEST, MANIFEST)
    snapshot = snapshot_configmap(MIGRATION, source)
    assert snapshot["immutable"] is True
    assert snapshot["metadata"]["name"].startswith("ptah-src-")
    assert snapshot["metadata"]["ownerReferences"][0]["name"] == "orders"
    assert snapshot["data"]["ptah-manifest.json"] == MANIFEST.decode()
    assert snapshot["data"]["0000000001_init.up.sql"] == FILES["0000000001_init.up.sql"].decode()


@pytest.mark.req("JOB-10", "MIG-63")
def test_no_operation_ever_carries_a_shadow_database_credential() -> None:
    """Adoption (baseline against a shadow) is a person's job: nothing the operator builds,
    and nothing its API accepts, names a shadow database."""
    from ptah_operator.api.kinds import KINDS
    from ptah_operator.cli.manager import build_parser

    for job in (
        history_job(MIGRATION, RUNNER, "op-0123456789", RECORD),
        apply_job(MIGRATION, RUNNER, "op-0123456789", RECORD, _plan()),
    ):
        text = json.dumps(job).lower()
        assert "shadow" not in text
        (run,) = job["spec"]["template"]["spec"]["containers"]
        secrets = [
            e["valueFrom"]["secretKeyRef"]
            for e in run["env"]
            if "secretKeyRef" in e.get("valueFrom", {})
        ]
        assert secrets == [{"name": "orders-database", "key": "url"}]
    for info in KINDS:
        assert "shadow" not in json.dumps(info.model.model_json_schema()).lower(), info.kind
    assert "shadow" not in build_parser().format_help().lower()


def test_every_operation_pod_asks_the_service_meshes_for_no_sidecar() -> None:
    """Issue #18: a sidecar injector that changes the reporting container makes its exit
    witness nothing, and a sidecar that never exits keeps the Job from ending."""
    for job in (
        history_job(MIGRATION, RUNNER, "op-0123456789", RECORD),
        apply_job(MIGRATION, RUNNER, "op-0123456789", RECORD, _plan()),
    ):
        template = job["spec"]["template"]["metadata"]
        assert template["labels"]["sidecar.istio.io/inject"] == "false"
        assert template["labels"]["kuma.io/sidecar-injection"] == "disabled"
        assert template["annotations"] == {
            "sidecar.istio.io/inject": "false",
            "linkerd.io/inject": "disabled",
            "kuma.io/sidecar-injection": "disabled",
            "consul.hashicorp.com/connect-inject": "false",
            "openservicemesh.io/sidecar-injection": "disabled",
        }
        # The Job's own labels, which the owner index and the cache select by, are unchanged.
        assert "sidecar.istio.io/inject" not in job["metadata"]["labels"]
