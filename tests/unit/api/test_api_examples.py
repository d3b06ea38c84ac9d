"""examples/: every manifest parses into its model, the plans' fingerprints and digests hold, and
the deliberately invalid manifests in tests/data are refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from ptah_operator.api import (
    PtahMigrationApproval,
    PtahMigrationPlan,
    PtahSchemaApproval,
    PtahSchemaPlan,
    PtahSchemaPlanChunk,
    from_manifest,
    to_manifest,
)
from ptah_operator.api.constants import (
    API_VERSION,
    ARTIFACT_TYPE_MIGRATIONS,
    ARTIFACT_TYPE_SCHEMA,
    Kind,
)
from ptah_operator.api.fingerprints import (
    execution_binding_digest,
    plan_fingerprint_matches,
    text_digest,
)
from ptah_operator.api.kinds import KINDS

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"
CORE_KINDS = {"Namespace", "Secret", "ConfigMap"}


def _manifest_files() -> list[Path]:
    return sorted(EXAMPLES.glob("*.yaml"))


def _documents() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}#{index}", doc)
        for path in _manifest_files()
        for index, doc in enumerate(yaml.safe_load_all(path.read_text()))
        if doc is not None
    ]


def _ours(kind: Kind) -> list[dict[str, Any]]:
    return [doc for _, doc in _documents() if doc["kind"] == kind.value]


@pytest.mark.parametrize(("where", "doc"), _documents(), ids=[w for w, _ in _documents()])
def test_every_example_parses_into_its_model(where: str, doc: dict[str, Any]) -> None:
    if doc["kind"] in CORE_KINDS:
        assert doc["apiVersion"] == "v1"
        return
    assert doc["apiVersion"] == API_VERSION
    model = from_manifest(doc["kind"], doc)
    manifest = to_manifest(model)
    assert from_manifest(doc["kind"], manifest) == model


def test_every_kind_has_an_example() -> None:
    kinds = {doc["kind"] for _, doc in _documents()}
    assert {info.kind.value for info in KINDS} <= kinds
    assert len(_ours(Kind.PTAH_MIGRATION)) >= 2


def test_namespaced_examples_live_in_application() -> None:
    for where, doc in _documents():
        namespaced = doc["kind"] not in ("Namespace", "PtahRealm")
        assert (doc["metadata"].get("namespace") == "application") == namespaced, where
    assert yaml.safe_load((EXAMPLES / "00-namespace.yaml").read_text())["metadata"] == {
        "name": "application"
    }


def test_migration_examples_cover_an_oci_and_a_configmap_source() -> None:
    sources = {
        next(iter(set(doc["spec"]) & {"artifact", "configMap", "git"}))
        for doc in _ours(Kind.PTAH_MIGRATION)
    }
    assert {"artifact", "configMap"} <= sources


def test_kubectl_apply_f_takes_the_directory_whole() -> None:
    """Every .yaml file is a Kubernetes object, and the namespace sorts first."""
    files = _manifest_files()
    assert files[0].name == "00-namespace.yaml"
    for path in files:
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc is None or {"apiVersion", "kind", "metadata"} <= set(doc), path.name


def _policy(name: str) -> Any:
    (configmap,) = [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d is not None]
    assert configmap["kind"] == "ConfigMap"
    assert configmap["immutable"] is True
    return yaml.safe_load(configmap["data"]["policy.yaml"])


@pytest.mark.req("SRC-OCI-04")
def test_each_family_has_its_own_verification_policy() -> None:
    migration = _policy("migration-verification-policy.yaml")
    assert migration == {"version": 1, "artifact_types": [ARTIFACT_TYPE_MIGRATIONS]}
    schema = _policy("schema-verification-policy.yaml")
    assert schema == {"version": 1, "artifact_types": [ARTIFACT_TYPE_SCHEMA]}
    for doc in _ours(Kind.PTAH_MIGRATION) + _ours(Kind.PTAH_SCHEMA):
        if "artifact" in doc["spec"]:
            policy = doc["spec"]["artifact"]["verificationPolicyFrom"]
            family = "migration" if doc["kind"] == "PtahMigration" else "schema"
            assert policy == {"name": f"ptah-{family}-verification-policy", "key": "policy.yaml"}


@pytest.mark.req("APR-02")
def test_example_plans_and_approvals_agree() -> None:
    (migration_plan,) = [
        from_manifest(PtahMigrationPlan, d) for d in _ours(Kind.PTAH_MIGRATION_PLAN)
    ]
    (schema_plan,) = [from_manifest(PtahSchemaPlan, d) for d in _ours(Kind.PTAH_SCHEMA_PLAN)]
    chunks = [from_manifest(PtahSchemaPlanChunk, d) for d in _ours(Kind.PTAH_SCHEMA_PLAN_CHUNK)]
    assert plan_fingerprint_matches(migration_plan.spec)
    assert plan_fingerprint_matches(schema_plan.spec)
    for plan in (migration_plan, schema_plan):
        binding = plan.spec.execution_binding
        assert binding.digest == execution_binding_digest(binding)

    sql = "".join(chunk.spec.data for chunk in sorted(chunks, key=lambda c: c.spec.index))
    assert schema_plan.spec.digest == text_digest(sql)
    assert schema_plan.spec.size == len(sql.encode())
    for ref, chunk in zip(schema_plan.spec.chunks, chunks, strict=True):
        assert ref.name == chunk.metadata.name
        assert ref.digest == chunk.spec.digest == text_digest(chunk.spec.data)
        assert chunk.spec.plan_ref.name == schema_plan.metadata.name

    (migration_approval,) = [
        from_manifest(PtahMigrationApproval, d) for d in _ours(Kind.PTAH_MIGRATION_APPROVAL)
    ]
    assert migration_approval.spec.plan_ref.name == migration_plan.metadata.name
    assert migration_approval.spec.plan_fingerprint == migration_plan.spec.fingerprint
    assert migration_approval.spec.migration_ref == migration_plan.spec.migration_ref
    (schema_approval,) = [
        from_manifest(PtahSchemaApproval, d) for d in _ours(Kind.PTAH_SCHEMA_APPROVAL)
    ]
    assert schema_approval.spec.plan_ref.name == schema_plan.metadata.name
    assert schema_approval.spec.plan_fingerprint == schema_plan.spec.fingerprint
    assert schema_approval.spec.schema_ref == schema_plan.spec.schema_ref


def test_the_approval_example_carries_the_commands_that_print_its_identifiers() -> None:
    text = (EXAMPLES / "migration-approval.yaml").read_text()
    assert "{.metadata.uid}" in text
    assert "{.status.plan.name}" in text
    assert "{.status.plan.uid}" in text
    assert "{.spec.fingerprint}" in text


def test_the_invalid_engine_is_refused_readably() -> None:
    doc = yaml.safe_load((REPO / "tests/data/invalid-ptahmigration.yaml").read_text())
    with pytest.raises(ValidationError) as caught:
        from_manifest("PtahMigration", doc)
    message = str(caught.value)
    assert "spec.target.engine" in message
    assert "'PostgreSQL', 'MySQL' or 'MariaDB'" in message
    assert not (EXAMPLES / "invalid-ptahmigration.yaml").exists()


def test_two_sources_are_refused_readably() -> None:
    doc = yaml.safe_load((REPO / "tests/data/invalid-ptahmigration-two-sources.yaml").read_text())
    with pytest.raises(ValidationError, match="exactly one source must be set"):
        from_manifest("PtahMigration", doc)
