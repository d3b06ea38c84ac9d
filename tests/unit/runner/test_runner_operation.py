"""The operation document (`ptah.run/operation/v1`): what the Job builder writes, the runner
reads; anything else is refused with a message that names the field, not its value."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ptah_operator.api.common import ExecutionBinding, SourceRecord
from ptah_operator.api.constants import OperationType, SourceKind
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.contracts.operation import OperationError
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.engine.migrations.apply import ExpectedMigration, TransactionMode
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.migrations.revision_table import RevisionTable
from ptah_operator.reconcile.jobs import operation_document
from ptah_operator.reconcile.migration.jobs import apply_job
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.runner.migration import parse_operation

FILES = {"0000000001_init.up.sql": b"CREATE TABLE orders (id int);\n"}
DIGEST, _ = digest_of_files(FILES)
CHECKSUM = "sha256:" + "c" * 64


def _migration(policy: dict[str, Any] | None = None) -> PtahMigration:
    return from_manifest(
        PtahMigration,
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahMigration",
            "metadata": {"name": "orders", "namespace": "application", "uid": "u-1"},
            "spec": {
                "target": {
                    "engine": "MariaDB",
                    "coordinationKey": "prod/orders",
                    "urlFrom": {"name": "orders-database", "key": "url"},
                },
                "configMap": {"name": "orders-migrations"},
                "policy": policy or {},
            },
        },
    )


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
                "engine": "MariaDB",
                "targetIdentityDigest": "sha256:" + "a" * 64,
                "historyFingerprint": "sha256:" + "b" * 64,
                "executionBinding": {"image": "ptah"},
                "toVersion": "0000000002",
                "versions": [
                    {"version": "0000000001", "description": "init", "checksum": CHECKSUM},
                    {"version": "0000000002", "checksum": "sha256:" + "d" * 64},
                ],
                "fingerprint": "sha256:" + "d" * 64,
            },
        },
    )


def _history() -> dict[str, Any]:
    return operation_document(_migration(), OperationType.HISTORY, "op-3f9a2c7d1e", DIGEST)


def _apply() -> dict[str, Any]:
    return operation_document(
        _migration({"transactionMode": "none", "revisionTable": {"schema": "ops"}}),
        OperationType.APPLY,
        "op-3f9a2c7d1e",
        DIGEST,
        _plan(),
    )


def test_a_history_document_from_the_job_builder_is_read() -> None:
    operation = parse_operation(json.dumps(_history()))
    assert operation.operation_id == "op-3f9a2c7d1e"
    assert operation.type == "History"
    assert not operation.is_apply
    assert operation.resource.as_json() == {
        "kind": "PtahMigration",
        "namespace": "application",
        "name": "orders",
        "uid": "u-1",
    }
    assert operation.engine is Engine.MARIADB
    assert operation.revision_table == RevisionTable(name="schema_migrations", schema=None)
    assert operation.transaction_mode is None
    assert operation.content_digest == DIGEST
    assert operation.expected is None
    assert operation.expected_migrations() is None


@pytest.mark.req("MIG-49", "JOB-09", "MIG-57")
def test_an_apply_document_carries_the_sequence_the_engine_compares() -> None:
    operation = parse_operation(json.dumps(_apply()))
    assert operation.is_apply
    assert operation.transaction_mode is TransactionMode.NONE
    assert operation.revision_table == RevisionTable(name="schema_migrations", schema="ops")
    assert operation.planned_target_digest == "sha256:" + "a" * 64
    assert operation.expected_migrations() == [
        ExpectedMigration(1, "c" * 64),
        ExpectedMigration(2, "d" * 64),
    ]


def _record() -> SourceRecord:
    return SourceRecord(
        kind=SourceKind.CONFIG_MAP, snapshot_name="ptah-src-1", content_digest=DIGEST
    )


def test_the_document_inside_a_built_job_is_read() -> None:
    runner = RunnerConfig(
        image="ptah", result_url="https://x/v1/results", binding=ExecutionBinding(image="ptah")
    )
    job = apply_job(_migration(), runner, "op-3f9a2c7d1e", _record(), _plan())
    env = job["spec"]["template"]["spec"]["containers"][0]["env"]
    text = next(e["value"] for e in env if e["name"] == "PTAH_OPERATION")
    assert parse_operation(text).expected is not None


def _without(doc: dict[str, Any], key: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    del doc[key]
    return doc


def _with(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    target = doc
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return doc


BAD: list[tuple[str, Any, str]] = [
    ("not json", "{", "not JSON"),
    ("a list", [], "must be a JSON object"),
    ("another contract", _with(_history(), "contract", "ptah.run/operation/v2"), "contract"),
    ("a bad operation id", _with(_history(), "operationID", "op-XYZ"), "operationID"),
    ("another type", _with(_history(), "type", "Resolve"), "type"),
    ("another engine", _with(_history(), "engine", "Oracle"), "engine"),
    ("no resource", _without(_history(), "resource"), "resource"),
    ("another kind", _with(_history(), "resource.kind", "PtahSchema"), "resource.kind"),
    ("a bad namespace", _with(_history(), "resource.namespace", "A B"), "resource.namespace"),
    ("no uid", _with(_history(), "resource.uid", ""), "resource.uid"),
    ("no revision table", _without(_history(), "revisionTable"), "revisionTable"),
    (
        "a table name that is SQL",
        _with(_history(), "revisionTable.name", "x; DROP TABLE y"),
        "revisionTable.name",
    ),
    ("a bad transaction mode", _with(_history(), "transactionMode", "auto"), "transactionMode"),
    (
        "a URL where the digest goes",
        _with(_history(), "contentDigest", "postgresql://u:pw@db/x"),
        "contentDigest",
    ),
    ("a History with a sequence", _with(_history(), "expected", []), "only an Apply"),
    ("an Apply without a sequence", _without(_apply(), "expected"), "expected sequence"),
    ("an Apply without its target", _without(_apply(), "plannedTargetDigest"), "plannedTarget"),
    ("a version that is not digits", _with(_apply(), "expected.0.version", "v1"), "version"),
    ("a bare checksum", _with(_apply(), "expected.0.checksum", "c" * 64), "checksum"),
    (
        "a version twice",
        _with(_apply(), "expected.1", {"version": "1", "checksum": CHECKSUM}),
        "twice",
    ),
]


@pytest.mark.parametrize(("case", "document", "says"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_document_is_refused_with_a_readable_reason(
    case: str, document: Any, says: str
) -> None:
    text = document if isinstance(document, str) else json.dumps(document)
    with pytest.raises(OperationError) as refused:
        parse_operation(text)
    assert says in str(refused.value)
    assert "pw@db" not in str(refused.value)
