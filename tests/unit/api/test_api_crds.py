"""The generated CRDs: in step with the models, structural, bounded, and presented usefully."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ptah_operator.api import crdgen
from ptah_operator.api.constants import (
    GROUP,
    JOURNAL_MAX_ENTRIES,
    MAX_REVISIONS,
    VERSION,
    Kind,
    MigrationPhase,
    SchemaPhase,
)
from ptah_operator.api.kinds import KINDS, kind_info

REPO = Path(__file__).resolve().parents[3]
CRDS = REPO / "crds"
# The Helm chart's copy, written and checked by crdgen with crds/.
CHART_CRDS = REPO / "deploy" / "helm" / "ptah-operator" / "crds"


def _schema(kind: Kind) -> dict[str, Any]:
    return crdgen.openapi_schema(kind_info(kind.value))


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The schema node at a dotted path; `[]` steps into array items."""
    node = schema
    for part in path.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def _walk(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _walk(child, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], f"{path}{{}}")


def test_checked_in_crds_match_the_models() -> None:
    generated = crdgen.generate()
    differing = crdgen.differing_files(CRDS, generated)
    assert not differing, (
        f"crds/ differs from the models in {differing}: run python -m ptah_operator.api.crdgen"
    )


def test_chart_crds_are_the_generated_crds() -> None:
    differing = crdgen.differing_files(CHART_CRDS, crdgen.generate())
    assert not differing, (
        f"{CHART_CRDS} differs from the models in {differing}: "
        "run python -m ptah_operator.api.crdgen"
    )


def test_crdgen_check_covers_the_chart_crds(tmp_path: Path) -> None:
    crds, chart_crds = tmp_path / "crds", tmp_path / "chart-crds"
    both = ["--dir", str(crds), "--dir", str(chart_crds)]
    assert crdgen.main(both) == 0
    for directory in (crds, chart_crds):
        assert not crdgen.differing_files(directory, crdgen.generate())
    assert crdgen.main(["--check", *both]) == 0
    for directory in (crds, chart_crds):
        path = next(directory.iterdir())
        text = path.read_text("utf-8")
        path.write_text("drifted\n", "utf-8")
        assert crdgen.main(["--check", *both]) == 1
        path.write_text(text, "utf-8")
    # Without --dir: both crds/ and the chart's.
    assert (Path("crds"), CHART_CRDS.relative_to(REPO)) == crdgen.DEFAULT_DIRS


def test_generation_is_deterministic() -> None:
    assert crdgen.generate() == crdgen.generate()


def test_check_names_missing_changed_and_stale_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert crdgen.main(["--check", "--dir", str(tmp_path)]) == 1
    assert "ptahmigrations.operator.ptah.run.yaml" in capsys.readouterr().err

    assert crdgen.main(["--dir", str(tmp_path)]) == 0
    assert crdgen.main(["--check", "--dir", str(tmp_path)]) == 0

    changed = tmp_path / "ptahschemas.operator.ptah.run.yaml"
    changed.write_text(changed.read_text() + "# edited by hand\n")
    stale = tmp_path / "ptaholdthings.operator.ptah.run.yaml"
    stale.write_text("{}\n")
    capsys.readouterr()
    assert crdgen.main(["--check", "--dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert changed.name in err
    assert stale.name in err
    assert "ptahmigrations" not in err

    assert crdgen.main(["--dir", str(tmp_path)]) == 0
    assert not stale.exists()
    assert crdgen.main(["--check", "--dir", str(tmp_path)]) == 0


def test_one_file_per_kind_named_after_the_plural() -> None:
    files = sorted(p.name for p in CRDS.glob("*.yaml"))
    assert files == sorted(f"{info.plural}.{GROUP}.yaml" for info in KINDS)
    for info in KINDS:
        crd = yaml.safe_load((CRDS / f"{info.plural}.{GROUP}.yaml").read_text())
        assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
        assert crd["metadata"]["name"] == f"{info.plural}.{GROUP}"
        assert crd["spec"]["group"] == GROUP
        assert crd["spec"]["names"]["kind"] == info.kind.value
        assert crd["spec"]["scope"] == ("Namespaced" if info.namespaced else "Cluster")
        assert [v["name"] for v in crd["spec"]["versions"]] == [VERSION]


@pytest.mark.parametrize("info", KINDS, ids=lambda info: info.kind.value)
def test_schemas_are_structural(info: Any) -> None:
    schema = crdgen.openapi_schema(info)
    for path, node in _walk(schema):
        where = f"{info.kind}{path or ' (root)'}"
        assert "$ref" not in node, where
        assert "allOf" not in node, where
        assert "oneOf" not in node, where
        assert "x-kubernetes-preserve-unknown-fields" not in node, where
        if "anyOf" in node:
            assert node.get("x-kubernetes-int-or-string") is True, where
            assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], where
        else:
            assert "type" in node, where
        assert node.get("additionalProperties") is not False, where
        assert not ("properties" in node and "additionalProperties" in node), where
        assert "title" not in node, where
        assert "const" not in node, where


@pytest.mark.req("PATH-23", "JNL-21")
@pytest.mark.parametrize("info", KINDS, ids=lambda info: info.kind.value)
def test_every_string_list_and_map_is_bounded(info: Any) -> None:
    schema = crdgen.openapi_schema(info)
    for path, node in _walk(schema):
        if path in (".apiVersion", ".kind"):
            continue
        where = f"{info.kind}{path}"
        kind = node.get("type")
        if kind == "string":
            assert "maxLength" in node or "enum" in node or node.get("format") == "date-time", (
                f"{where} is an unbounded string"
            )
        elif kind == "array":
            assert "maxItems" in node, f"{where} is an unbounded list"
        elif kind == "object" and "additionalProperties" in node:
            assert "maxProperties" in node, f"{where} is an unbounded map"


@pytest.mark.req("JNL-21", "PATH-20")
def test_the_journal_and_the_revisions_have_their_bounds() -> None:
    for kind in (Kind.PTAH_SCHEMA, Kind.PTAH_MIGRATION):
        entries = _at(_schema(kind), "status.journal.entries")
        assert entries["maxItems"] == JOURNAL_MAX_ENTRIES == 64
    revisions = _at(_schema(Kind.PTAH_MIGRATION), "status.history.revisions")
    assert revisions["maxItems"] == MAX_REVISIONS


@pytest.mark.req("SCH-01")
def test_schema_phase_enum_is_the_seed_list() -> None:
    phase = _at(_schema(Kind.PTAH_SCHEMA), "status.phase")
    assert phase["enum"] == [p.value for p in SchemaPhase]


@pytest.mark.req("MIG-01")
def test_migration_phase_enum_is_the_seed_list() -> None:
    phase = _at(_schema(Kind.PTAH_MIGRATION), "status.phase")
    assert phase["enum"] == [p.value for p in MigrationPhase]


@pytest.mark.req("MIG-66", "LCK-01", "LCK-02")
def test_target_shape() -> None:
    target = _at(_schema(Kind.PTAH_MIGRATION), "spec.target")
    assert set(target["properties"]) == {
        "engine",
        "coordinationKey",
        "sharedRealm",
        "urlFrom",
        "realm",
    }
    assert target["required"] == ["engine", "coordinationKey", "urlFrom"]
    assert target["properties"]["engine"]["enum"] == ["PostgreSQL", "MySQL", "MariaDB"]
    assert target["properties"]["sharedRealm"]["default"] is False
    assert target["properties"]["urlFrom"]["required"] == ["name", "key"]


@pytest.mark.req("APR-01", "MIG-54", "MIG-58", "SUS-01")
def test_defaults_are_in_the_schema() -> None:
    migration = _schema(Kind.PTAH_MIGRATION)
    assert _at(migration, "spec.policy")["default"] == {}
    assert _at(migration, "spec.policy.apply")["default"] == "OnApproval"
    assert _at(migration, "spec.policy.apply")["enum"] == ["OnApproval", "Always", "Never"]
    mode = _at(migration, "spec.policy.transactionMode")
    assert "default" not in mode, "leaving transactionMode out must keep 'Ptah picks'"
    assert mode["enum"] == ["file", "none"]
    assert _at(migration, "spec.policy.revisionTable.name")["default"] == "schema_migrations"
    assert _at(migration, "spec.interval")["default"] == "10m"
    assert _at(migration, "spec.execution")["default"] == {}
    assert _at(migration, "spec.execution.failureRetryInterval")["default"] == "1m"
    assert _at(migration, "spec.suspend")["default"] is False

    schema = _schema(Kind.PTAH_SCHEMA)
    assert _at(schema, "spec.policy.apply")["default"] == "OnApproval"
    assert _at(schema, "spec.policy.allowDestructive")["default"] is False
    assert "transactionMode" not in _at(schema, "spec.policy")["properties"]


@pytest.mark.req("RETRY-12", "RETRY-01")
def test_the_two_clocks_are_bounded_10s_to_24h_and_the_refusal_says_so() -> None:
    for kind in (Kind.PTAH_SCHEMA, Kind.PTAH_MIGRATION):
        schema = _schema(kind)
        for path in ("spec.interval", "spec.execution.failureRetryInterval"):
            [rule] = _at(schema, path)["x-kubernetes-validations"]
            assert rule == {
                "rule": "duration(self) >= duration('10s') && duration(self) <= duration('24h')",
                "message": "must be a duration between 10s and 24h",
            }, (kind, path)


@pytest.mark.req("SRC-OCI-05")
def test_sources_and_their_cel_rule() -> None:
    for kind in (Kind.PTAH_SCHEMA, Kind.PTAH_MIGRATION):
        spec = _at(_schema(kind), "spec")
        assert {"artifact", "configMap", "git"} <= set(spec["properties"])
        rules = [rule["rule"] for rule in spec["x-kubernetes-validations"]]
        assert any("has(self.artifact)" in r and "has(self.git)" in r for r in rules)
        artifact = spec["properties"]["artifact"]
        assert artifact["properties"]["ociRef"]["pattern"].startswith("^oci://")
        assert artifact["required"] == ["ociRef", "verificationPolicyFrom"]
        git = spec["properties"]["git"]
        assert {"repository", "ref", "path", "secretRef", "sourcePolicyFrom"} == set(
            git["properties"]
        )
        assert "sourcePolicyFrom" in spec["properties"]["configMap"]["properties"]
        assert "sourcePolicyFrom" not in artifact["properties"]


def test_immutability_rules() -> None:
    realm = _at(_schema(Kind.PTAH_REALM), "spec.engine")
    assert {"rule": "self == oldSelf", "message": "engine is immutable"} in realm[
        "x-kubernetes-validations"
    ]
    for kind in (
        Kind.PTAH_MIGRATION_PLAN,
        Kind.PTAH_SCHEMA_PLAN,
        Kind.PTAH_SCHEMA_PLAN_CHUNK,
        Kind.PTAH_MIGRATION_APPROVAL,
        Kind.PTAH_SCHEMA_APPROVAL,
        Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT,
    ):
        rules = _at(_schema(kind), "spec")["x-kubernetes-validations"]
        assert any(rule["rule"] == "self == oldSelf" for rule in rules), kind


def test_realm_bounds() -> None:
    spec = _at(_schema(Kind.PTAH_REALM), "spec")
    namespaces = spec["properties"]["namespaces"]
    assert (namespaces["minItems"], namespaces["maxItems"]) == (1, 256)
    assert spec["properties"]["sharing"]["enum"] == ["Exclusive", "Shared"]


def test_conditions_are_a_list_map_keyed_by_type() -> None:
    for kind in (Kind.PTAH_SCHEMA, Kind.PTAH_MIGRATION):
        conditions = _at(_schema(kind), "status.conditions")
        assert conditions["x-kubernetes-list-type"] == "map"
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]
        assert {"type", "status", "reason", "lastTransitionTime"} <= set(
            conditions["items"]["required"]
        )


@pytest.mark.req("PATH-22")
def test_execution_millis_is_optional() -> None:
    revision = _at(_schema(Kind.PTAH_MIGRATION), "status.history.revisions.[]")
    assert "executionMillis" in revision["properties"]
    assert "executionMillis" not in revision.get("required", [])
    assert "default" not in revision["properties"]["executionMillis"]


def _crd(kind: Kind) -> dict[str, Any]:
    return crdgen.crd_for(kind_info(kind.value))


def test_names_short_names_and_categories() -> None:
    short_names = [name for info in KINDS for name in info.short_names]
    assert len(short_names) == len(set(short_names))
    for info in KINDS:
        names = _crd(info.kind)["spec"]["names"]
        assert names["categories"] == ["ptah"]
        assert names["singular"] == info.kind.value.lower()
        assert names["listKind"] == f"{info.kind.value}List"
    assert _crd(Kind.PTAH_SCHEMA)["spec"]["names"]["shortNames"] == ["psch"]
    assert _crd(Kind.PTAH_MIGRATION)["spec"]["names"]["shortNames"] == ["pmig"]
    assert _crd(Kind.PTAH_MIGRATION_PLAN)["spec"]["names"]["shortNames"] == ["pmigplan"]


def test_status_subresource_only_where_there_is_status() -> None:
    for info in KINDS:
        version = _crd(info.kind)["spec"]["versions"][0]
        assert ("subresources" in version) == info.has_status, info.kind
        assert ("status" in version["schema"]["openAPIV3Schema"]["properties"]) == info.has_status
    assert kind_info("PtahSchema").has_status
    assert kind_info("PtahMigration").has_status


def _columns(kind: Kind) -> dict[str, str]:
    version = _crd(kind)["spec"]["versions"][0]
    return {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}


def test_printer_columns() -> None:
    ready_reason = '.status.conditions[?(@.type=="Ready")].reason'
    schema = _columns(Kind.PTAH_SCHEMA)
    assert schema["Phase"] == ".status.phase"
    assert schema["Reason"] == ready_reason
    assert schema["Plan"] == ".status.plan.name"
    assert schema["Age"] == ".metadata.creationTimestamp"
    migration = _columns(Kind.PTAH_MIGRATION)
    assert migration["Phase"] == ".status.phase"
    assert migration["Reason"] == ready_reason
    assert migration["Current"] == ".status.history.currentVersion"
    assert migration["Plan"] == ".status.plan.name"
    assert "Age" in migration


@pytest.mark.parametrize("info", KINDS, ids=lambda info: info.kind.value)
def test_printer_columns_point_at_fields_that_exist(info: Any) -> None:
    schema = crdgen.openapi_schema(info)
    for column in crdgen.PRINTER_COLUMNS[info.kind]:
        path = column["jsonPath"].lstrip(".")
        if path.startswith("metadata."):
            continue
        if "[?" in path:  # a filtered list: the field after the filter, in the items
            before, after = path.split("[?")
            path = f"{before}.[].{after.split('].', 1)[1]}"
        node = _at(schema, path)
        expected = {"string": "string", "integer": "integer", "boolean": "boolean"}
        assert node["type"] == expected[column["type"]], (info.kind, column)
