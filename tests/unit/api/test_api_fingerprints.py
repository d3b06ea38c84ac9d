"""Plan fingerprints: deterministic, and different whenever anything the plan binds is different."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.fingerprints import (
    canonical_json,
    execution_binding_digest,
    migration_plan_fingerprint,
    plan_fingerprint_matches,
    repository_path_digest,
    schema_plan_fingerprint,
    sha256_digest,
    text_digest,
)
from ptah_operator.api.plans import PtahMigrationPlanSpec, PtahSchemaPlanSpec


def _d(seed: str) -> str:
    return text_digest(seed)


MIGRATION_PLAN: dict[str, Any] = {
    "migrationRef": {"name": "orders", "uid": "m-1"},
    "planContractVersion": 1,
    "source": {"kind": "Artifact", "ociDigest": _d("oci"), "verificationPolicyDigest": _d("vp")},
    "engine": "PostgreSQL",
    "targetIdentityDigest": _d("target"),
    "historyFingerprint": _d("history"),
    "revisionTable": {"name": "schema_migrations"},
    "executionBinding": {
        "image": "runner@" + _d("image"),
        "protocolVersion": 1,
        "digest": _d("eb"),
    },
    "fromVersion": "1",
    "toVersion": "3",
    "versions": [
        {"version": "2", "description": "two", "checksum": "c2"},
        {"version": "3", "description": "three", "checksum": "c3"},
    ],
    "fingerprint": _d("placeholder"),
}

SCHEMA_PLAN: dict[str, Any] = {
    "schemaRef": {"name": "catalog", "uid": "s-1"},
    "planContractVersion": 2,
    "source": {
        "kind": "Git",
        "contentDigest": _d("content"),
        "repositoryPathDigest": repository_path_digest("https://git.example/a.git", "db"),
    },
    "engine": "MariaDB",
    "targetIdentityDigest": _d("target"),
    "observedFingerprint": _d("observed"),
    "desiredFingerprint": _d("desired"),
    "executionBinding": {"digest": _d("eb")},
    "digest": _d("sql"),
    "size": 10,
    "statementCount": 1,
    "approvalRequired": True,
    "chunks": [{"name": "catalog-1-0", "index": 0, "digest": _d("chunk")}],
    "fingerprint": _d("placeholder"),
}


def _migration(changes: Callable[[dict[str, Any]], None] | None = None) -> str:
    spec = copy.deepcopy(MIGRATION_PLAN)
    if changes:
        changes(spec)
    return migration_plan_fingerprint(PtahMigrationPlanSpec.model_validate(spec))


def _schema(changes: Callable[[dict[str, Any]], None] | None = None) -> str:
    spec = copy.deepcopy(SCHEMA_PLAN)
    if changes:
        changes(spec)
    return schema_plan_fingerprint(PtahSchemaPlanSpec.model_validate(spec))


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        node = spec
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[parts[-1]] = value

    return change


def _to_configmap_contract(spec: dict[str, Any]) -> None:
    spec["planContractVersion"] = 2
    spec["source"] = {"kind": "ConfigMap", "contentDigest": _d("content"), "configMapUID": "cm-1"}


def _extend(spec: dict[str, Any]) -> None:
    spec["versions"].append({"version": "4", "checksum": "c4"})
    spec["toVersion"] = "4"


def _reorder(spec: dict[str, Any]) -> None:
    spec["versions"].reverse()
    spec["toVersion"] = "2"


MIGRATION_CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "migrationRef.name": _set("migrationRef.name", "payments"),
    "migrationRef.uid": _set("migrationRef.uid", "m-2"),
    "planContractVersion+source": _to_configmap_contract,
    "source.ociDigest": _set("source.ociDigest", _d("oci2")),
    "source.verificationPolicyDigest": _set("source.verificationPolicyDigest", _d("vp2")),
    "engine": _set("engine", "MySQL"),
    "targetIdentityDigest": _set("targetIdentityDigest", _d("target2")),
    "historyFingerprint": _set("historyFingerprint", _d("history2")),
    "revisionTable.name": _set("revisionTable.name", "revisions"),
    "revisionTable.schema": _set("revisionTable.schema", "ops"),
    "transactionMode": _set("transactionMode", "none"),
    "executionBinding.digest": _set("executionBinding.digest", _d("eb2")),
    "executionBinding.protocolVersion": _set("executionBinding.protocolVersion", 2),
    "fromVersion": _set("fromVersion", "0"),
    "toVersion+versions": _extend,
    "versions order": _reorder,
    "versions.0.checksum": _set("versions.0.checksum", "c2-modified"),
    "versions.0.description": _set("versions.0.description", "deux"),
    "versions.0.version": _set("versions.0.version", "2a"),
}


def test_the_fingerprint_is_deterministic() -> None:
    assert _migration() == _migration()
    assert _migration().startswith("sha256:")
    assert len(_migration()) == 71
    reordered = dict(reversed(list(MIGRATION_PLAN.items())))
    assert (
        migration_plan_fingerprint(PtahMigrationPlanSpec.model_validate(reordered)) == _migration()
    )
    by_name = PtahMigrationPlanSpec.model_validate(MIGRATION_PLAN)
    rebuilt = PtahMigrationPlanSpec(
        **{name: getattr(by_name, name) for name in PtahMigrationPlanSpec.model_fields}
    )
    assert migration_plan_fingerprint(rebuilt) == _migration()


def test_the_fingerprint_ignores_itself() -> None:
    assert _migration(_set("fingerprint", _d("other"))) == _migration()


@pytest.mark.req("APR-02", "APR-05", "APR-06", "APR-07", "APR-08", "APR-09", "SRC-CM-13")
@pytest.mark.parametrize("name", sorted(MIGRATION_CHANGES))
def test_any_bound_field_changes_the_migration_fingerprint(name: str) -> None:
    assert _migration(MIGRATION_CHANGES[name]) != _migration()


def test_every_migration_plan_field_is_exercised_above() -> None:
    # "toVersion+versions" changes two fields; "versions order" and "versions.0.checksum" one.
    covered = {
        part.split(".")[0].split(" ")[0] for name in MIGRATION_CHANGES for part in name.split("+")
    }
    fields = PtahMigrationPlanSpec.model_fields.items()
    aliases = {field.alias or name for name, field in fields} - {"fingerprint"}
    assert aliases <= covered, f"add a change for {sorted(aliases - covered)}"


SCHEMA_CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "schemaRef.uid": _set("schemaRef.uid", "s-2"),
    "source.contentDigest": _set("source.contentDigest", _d("content2")),
    "source.repositoryPathDigest": _set(
        "source.repositoryPathDigest", repository_path_digest("https://git.example/a.git", "db2")
    ),
    "source.sourcePolicyDigest": _set("source.sourcePolicyDigest", _d("sp")),
    "engine": _set("engine", "MySQL"),
    "dialect": _set("dialect", "mariadb10"),
    "targetIdentityDigest": _set("targetIdentityDigest", _d("target2")),
    "observedFingerprint": _set("observedFingerprint", _d("observed2")),
    "desiredFingerprint": _set("desiredFingerprint", _d("desired2")),
    "executionBinding": _set("executionBinding.digest", _d("eb2")),
    "digest": _set("digest", _d("sql2")),
    "size": _set("size", 11),
    "statementCount": _set("statementCount", 2),
    "severity": _set("severity", {"highest": "High", "destructive": True}),
    "findings": _set("findings", [{"code": "drop-column", "severity": "High"}]),
    "findingsTotal": _set("findingsTotal", 3),
    "approvalRequired": _set("approvalRequired", False),
    "chunks": _set("chunks.0.digest", _d("chunk2")),
}


@pytest.mark.req("SCH-64", "SRC-GIT-17")
@pytest.mark.parametrize("name", sorted(SCHEMA_CHANGES))
def test_any_bound_field_changes_the_schema_fingerprint(name: str) -> None:
    assert _schema(SCHEMA_CHANGES[name]) != _schema()
    assert _schema() == _schema()


def test_plan_fingerprint_matches() -> None:
    spec = PtahMigrationPlanSpec.model_validate(MIGRATION_PLAN)
    assert not plan_fingerprint_matches(spec)
    fixed = spec.model_copy(update={"fingerprint": migration_plan_fingerprint(spec)})
    assert plan_fingerprint_matches(fixed)


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": "é", "c": [2, 1]}) == '{"a":"é","b":1,"c":[2,1]}'.encode()
    value = {"z": {"y": 1, "x": [True, None]}}
    assert canonical_json(value) == canonical_json(json.loads(json.dumps(value)))
    assert sha256_digest(b"") == (
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    )


def test_a_plan_contract_matches_its_source() -> None:
    bad = copy.deepcopy(MIGRATION_PLAN)
    bad["planContractVersion"] = 2
    with pytest.raises(ValueError, match="plan contract version 1"):
        PtahMigrationPlanSpec.model_validate(bad)


def test_execution_binding_digest_covers_every_field_but_itself() -> None:
    binding = ExecutionBinding(image="runner:1", runner_version="0.1.0", protocol_version=1)
    digest = execution_binding_digest(binding)
    assert execution_binding_digest(binding.model_copy(update={"digest": digest})) == digest
    for change in (
        {"image": "runner:2"},
        {"runner_version": "0.1.1"},
        {"protocol_version": 2},
        {"engine_version": "1"},
    ):
        assert execution_binding_digest(binding.model_copy(update=change)) != digest


@pytest.mark.req("SRC-GIT-17")
def test_repository_path_digest() -> None:
    base = repository_path_digest("https://git.example/a.git", "db")
    assert base == repository_path_digest("https://git.example/a.git", "db")
    assert base != repository_path_digest("https://git.example/b.git", "db")
    assert base != repository_path_digest("https://git.example/a.git", "db2")
    assert repository_path_digest("r", None) == repository_path_digest("r", "")
