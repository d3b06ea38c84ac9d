"""A PtahSchema's operation document as the Job builder writes it and the runner reads it: the
scope and policy the engine gets, the plan an Apply is bound to, and refusals that name the
field, never its value."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ptah_operator.api.common import ExecutionBinding, SourceRecord
from ptah_operator.api.constants import OperationType, SourceKind
from ptah_operator.api.contracts.operation import OperationError, is_schema_document
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.plans import PtahSchemaPlan
from ptah_operator.api.schema import PtahSchema
from ptah_operator.engine.migrations.connection import Engine
from ptah_operator.engine.schema.scope import Scope
from ptah_operator.engine.schema.timeouts import Timeouts
from ptah_operator.reconcile.schema.jobs import apply_job, operation_document, read_job
from ptah_operator.reconcile.world import RunnerConfig
from ptah_operator.runner.schema import parse_schema_operation

DIGEST = "sha256:" + "d" * 64
TARGET = "sha256:" + "e" * 64


def _schema(spec: dict[str, Any] | None = None) -> PtahSchema:
    return from_manifest(
        PtahSchema,
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahSchema",
            "metadata": {"name": "shop", "namespace": "application", "uid": "u-1"},
            "spec": {
                "target": {
                    "engine": "PostgreSQL",
                    "coordinationKey": "prod/shop",
                    "urlFrom": {"name": "db", "key": "url"},
                },
                "configMap": {"name": "shop-schema"},
                **(spec or {}),
            },
        },
    )


def _plan() -> PtahSchemaPlan:
    return from_manifest(
        PtahSchemaPlan,
        {
            "apiVersion": "operator.ptah.run/v1alpha1",
            "kind": "PtahSchemaPlan",
            "metadata": {"name": "shop-0123456789", "namespace": "application", "uid": "p-1"},
            "spec": {
                "schemaRef": {"name": "shop", "uid": "u-1"},
                "planContractVersion": 2,
                "source": {"kind": "ConfigMap", "contentDigest": DIGEST, "configMapUID": "c"},
                "engine": "PostgreSQL",
                "targetIdentityDigest": TARGET,
                "observedFingerprint": "sha256:" + "1" * 64,
                "desiredFingerprint": "sha256:" + "2" * 64,
                "executionBinding": {"image": "ptah"},
                "digest": "sha256:" + "3" * 64,
                "size": 1234,
                "statementCount": 3,
                "approvalRequired": True,
                "chunks": [
                    {"name": "shop-0123456789-c00", "index": 0, "digest": "sha256:" + "4" * 64}
                ],
                "fingerprint": "sha256:" + "5" * 64,
            },
        },
    )


def test_an_observe_reads_scope_and_policy_as_the_engine_takes_them() -> None:
    schema = _schema(
        {
            "scope": {
                "schemas": ["public", "billing"],
                "includeTables": ["billing.*"],
                "excludeTables": ["*.audit"],
            },
            "policy": {"allowDestructive": True, "protectedTables": ["public.accounts"]},
        }
    )
    document = operation_document(
        schema, OperationType.OBSERVE, "op-0123456789", content_digest=DIGEST
    )
    text = json.dumps(document)
    assert is_schema_document(text)
    operation = parse_schema_operation(text)
    assert operation.type == "Observe"
    assert operation.engine is Engine.POSTGRESQL
    assert operation.scope == Scope(
        schemas=("public", "billing"), tables=("billing.*",), exclude=("*.audit",)
    )
    assert operation.protected_tables == ("public.accounts",)
    assert operation.allow_destructive is True
    assert operation.content_digest == DIGEST
    assert operation.plan is None
    assert not operation.is_apply


@pytest.mark.parametrize(
    ("policy", "timeouts"),
    [
        ({}, Timeouts(lock=30.0, statement=None)),
        ({"lockTimeout": "5s", "statementTimeout": "10m"}, Timeouts(lock=5.0, statement=600.0)),
        # 0s is no limit, as the servers read 0.
        ({"lockTimeout": "0s", "statementTimeout": "0s"}, Timeouts(lock=None, statement=None)),
        ({"lockTimeout": "1500ms"}, Timeouts(lock=1.5, statement=None)),
    ],
)
def test_the_policys_timeouts_reach_the_runner_in_seconds(
    policy: dict[str, str], timeouts: Timeouts
) -> None:
    document = operation_document(
        _schema({"policy": policy}), OperationType.PLAN, "op-0123456789", content_digest=DIGEST
    )
    assert parse_schema_operation(json.dumps(document)).timeouts == timeouts


def test_no_scope_is_the_engines_default_schema() -> None:
    document = operation_document(
        _schema(), OperationType.PLAN, "op-0123456789", content_digest=DIGEST, proof=True
    )
    operation = parse_schema_operation(json.dumps(document))
    assert operation.scope == Scope()
    assert operation.proof is True
    assert operation.policy.allow_destructive is False


def test_the_jobs_carry_documents_the_runner_reads() -> None:
    runner = RunnerConfig(
        image="ptah:1",
        result_url="https://ptah:9443/v1/results",
        binding=ExecutionBinding(image="ptah:1"),
    )
    record = SourceRecord(
        kind=SourceKind.CONFIG_MAP, content_digest=DIGEST, snapshot_name="ptah-src-1"
    )
    read = read_job(
        _schema(),
        runner,
        OperationType.PLAN,
        "op-0123456789",
        record,
        expected_target=TARGET,
        proof=False,
    )
    apply = apply_job(_schema(), runner, "op-9876543210", _plan())
    for job, command in (
        (read, ["ptah-runner", "plan", "--files=/ptah/files"]),
        (apply, ["ptah-runner", "apply"]),
    ):
        container = job["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == command
        env = {e["name"]: e.get("value") for e in container["env"]}
        parse_schema_operation(env["PTAH_OPERATION"])
    apply_env = {
        e["name"]: e.get("value") for e in apply["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    operation = parse_schema_operation(apply_env["PTAH_OPERATION"])
    assert operation.is_apply
    assert operation.planned_target_digest == TARGET
    assert operation.plan is not None
    assert (
        operation.plan.name,
        operation.plan.uid,
        operation.plan.size,
        operation.plan.chunks,
    ) == (
        "shop-0123456789",
        "p-1",
        1234,
        1,
    )
    assert operation.plan.digest == "sha256:" + "3" * 64
    assert operation.content_digest is None


def _apply_document() -> dict[str, Any]:
    return operation_document(_schema(), OperationType.APPLY, "op-0123456789", plan=_plan())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["resource"].update(kind="PtahMigration"), "resource.kind must be PtahSchema"),
        (lambda d: d.update(type="History"), "type must be one of Observe, Plan, Apply"),
        (lambda d: d.pop("plan"), "an Apply must name its plan"),
        (lambda d: d.update(contentDigest=DIGEST), "an Apply reads no files"),
        (lambda d: d.pop("plannedTargetDigest"), "plannedTargetDigest must be a non-empty string"),
        (lambda d: d["plan"].update(digest="md5:x"), "plan.digest is not well formed"),
        (lambda d: d["plan"].update(chunks=65), "plan.chunks must be at most 64"),
        (lambda d: d["plan"].update(size=-1), "plan.size must be an integer of at least 0"),
        (lambda d: d["scope"].update(schemas="public"), "scope.schemas must be a list"),
        (lambda d: d["policy"].update(allowDestructive="yes"), "policy.allowDestructive must be"),
        (lambda d: d["policy"].update(lockTimeoutSeconds=-1), "policy.lockTimeoutSeconds must"),
        (lambda d: d["policy"].update(lockTimeoutSeconds="30s"), "policy.lockTimeoutSeconds must"),
        (lambda d: d["policy"].update(statementTimeoutSeconds=True), "statementTimeoutSeconds"),
        (
            lambda d: d["policy"].update(statementTimeoutSeconds=400 * 86400),
            "at most a year",
        ),
        (lambda d: d.update(engine="Oracle"), "engine must be one of"),
        (lambda d: d.update(contract="v2"), "contract must be ptah.run/operation/v1"),
    ],
)
def test_a_document_that_cannot_be_trusted_is_refused(change: Any, message: str) -> None:
    document = copy.deepcopy(_apply_document())
    change(document)
    with pytest.raises(OperationError) as refused:
        parse_schema_operation(json.dumps(document))
    assert message in str(refused.value)


def test_a_read_names_no_plan_and_needs_its_content_digest() -> None:
    document = operation_document(
        _schema(), OperationType.OBSERVE, "op-0123456789", content_digest=DIGEST
    )
    with_plan = {**document, "plan": _apply_document()["plan"]}
    with pytest.raises(OperationError, match="only an Apply names a plan"):
        parse_schema_operation(json.dumps(with_plan))
    without = {k: v for k, v in document.items() if k != "contentDigest"}
    with pytest.raises(OperationError, match="contentDigest must be a non-empty string"):
        parse_schema_operation(json.dumps(without))


def test_only_a_schema_document_goes_the_schema_way() -> None:
    assert not is_schema_document("not json")
    assert not is_schema_document("[]")
    assert not is_schema_document(json.dumps({"resource": {"kind": "PtahMigration"}}))
    assert is_schema_document(json.dumps({"resource": {"kind": "PtahSchema"}}))
