"""Four eyes: admission records who last wrote a resource's spec, and under
`spec.policy.requireDistinctApprover` refuses an approval by that person (APR-04: the approver
as admission authenticated them)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ptah_operator.api.approvals import PtahSchemaApprovalSpec
from ptah_operator.api.common import ObjectReference, UserInfo
from ptah_operator.api.constants import ANNOTATION_SPEC_WRITTEN_BY
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.webhook import validators as checks
from ptah_operator.webhook.validators import check_migration_approval, check_schema_approval
from ptah_operator.webhook.writers import SpecWriter, decode, encode, writer_patch
from tests.support.migration_objects import (
    approval_spec,
    awaiting_approval,
    migration,
    plan,
    plan_spec,
)
from tests.support.schema_objects import awaiting_approval as schema_awaiting_approval
from tests.support.schema_objects import catalog_schema, schema_plan, schema_plan_spec

NS = "application"
ALICE = UserInfo(username="alice@example.com", uid="u-alice")
BOB = UserInfo(username="bob@example.com", uid="u-bob")
PATH = "/metadata/annotations/operator.ptah.run~1spec-written-by"


def _resource(
    spec: dict[str, Any], generation: int | None = None, record: str | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "orders", "namespace": NS}
    if generation is not None:
        metadata["generation"] = generation
    if record is not None:
        metadata["annotations"] = {ANNOTATION_SPEC_WRITTEN_BY: record}
    return {"kind": "PtahMigration", "metadata": metadata, "spec": spec}


@pytest.mark.req("APR-04")
def test_a_write_that_changes_the_spec_records_its_author_and_the_generation_it_gives() -> None:
    created = writer_patch("CREATE", _resource({"interval": "10m"}), None, ALICE)
    assert created == [
        {"op": "add", "path": "/metadata/annotations", "value": {}},
        {"op": "add", "path": PATH, "value": encode(SpecWriter(ALICE.username, "u-alice", 1))},
    ]
    stored = _resource({"interval": "10m"}, 3, encode(SpecWriter(ALICE.username, None, 3)))
    edited = _resource({"interval": "5m"}, 3, encode(SpecWriter(ALICE.username, None, 3)))
    (op,) = writer_patch("UPDATE", edited, stored, BOB)
    assert op["op"] == "add"
    assert decode(op["value"]) == SpecWriter(BOB.username, "u-bob", 4)


@pytest.mark.req("APR-04")
def test_any_other_write_keeps_the_stored_record_whatever_the_client_sent() -> None:
    record = encode(SpecWriter(ALICE.username, None, 3))
    stored = _resource({"interval": "10m"}, 3, record)
    forged = _resource({"interval": "10m"}, 3, encode(SpecWriter("mallory", None, 3)))
    assert writer_patch("UPDATE", forged, stored, BOB) == [
        {"op": "add", "path": PATH, "value": record}
    ]
    assert writer_patch("UPDATE", stored, stored, BOB) == []
    unrecorded = _resource({"interval": "10m"}, 3)
    added = _resource({"interval": "10m"}, 3, encode(SpecWriter("mallory", None, 3)))
    assert writer_patch("UPDATE", added, unrecorded, BOB) == [{"op": "remove", "path": PATH}]
    forged_create = _resource({"interval": "10m"}, None, encode(SpecWriter("mallory", None, 1)))
    (op,) = writer_patch("CREATE", forged_create, None, BOB)
    assert decode(op["value"]) == SpecWriter(BOB.username, "u-bob", 1)
    assert writer_patch("DELETE", stored, stored, BOB) == []


def test_a_record_that_does_not_read_as_one_is_none() -> None:
    for value in (
        None,
        "",
        "x",
        "[]",
        json.dumps({"username": "a"}),
        json.dumps({"generation": 1}),
    ):
        assert decode(value) is None
    assert decode(json.dumps({"username": "a", "generation": True})) is None


def _migration_written_by(
    writer: UserInfo | None, *, distinct: bool = True, generation: int = 2, recorded: int = 2
) -> tuple[PtahMigration, PtahMigrationPlan]:
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    m = migration(status=awaiting_approval(p))
    policy = m.spec.policy.model_copy(update={"require_distinct_approver": distinct})
    m.spec = m.spec.model_copy(update={"policy": policy})
    m.metadata.generation = generation
    if writer is not None:
        record = encode(SpecWriter(writer.username, writer.uid, recorded))
        m.metadata.annotations = {ANNOTATION_SPEC_WRITTEN_BY: record}
    return m, p


@pytest.mark.req("APR-04")
def test_under_require_distinct_approver_the_last_writer_of_the_spec_may_not_approve() -> None:
    m, p = _migration_written_by(ALICE)
    by_alice = approval_spec(m, p).model_copy(update={"approved_by": ALICE})
    findings = check_migration_approval(by_alice, NS, m, p)
    assert [f.code for f in findings] == [checks.APPROVER_NOT_DISTINCT]
    assert findings[0].message == (
        "spec.policy.requireDistinctApprover is set and alice@example.com wrote the spec of "
        "migration orders last (generation 2): another person must approve"
    )
    by_bob = approval_spec(m, p).model_copy(update={"approved_by": BOB})
    assert check_migration_approval(by_bob, NS, m, p) == []


@pytest.mark.req("APR-04")
def test_without_the_policy_the_writer_may_approve() -> None:
    m, p = _migration_written_by(ALICE, distinct=False)
    by_alice = approval_spec(m, p).model_copy(update={"approved_by": ALICE})
    assert check_migration_approval(by_alice, NS, m, p) == []


@pytest.mark.req("APR-04")
def test_under_the_policy_an_unrecorded_or_outdated_writer_refuses_every_approval() -> None:
    for m, p in (_migration_written_by(None), _migration_written_by(ALICE, recorded=1)):
        by_bob = approval_spec(m, p).model_copy(update={"approved_by": BOB})
        assert [f.code for f in check_migration_approval(by_bob, NS, m, p)] == [
            checks.SPEC_WRITER_UNKNOWN
        ]


@pytest.mark.req("APR-04")
def test_a_schema_under_the_policy_refuses_its_last_writer_too() -> None:
    s_ref = ObjectReference(name="catalog", uid="s-uid-1")
    p = schema_plan(schema_plan_spec(s_ref))
    schema = catalog_schema(status=schema_awaiting_approval(p))
    policy = schema.spec.policy.model_copy(update={"require_distinct_approver": True})
    schema.spec = schema.spec.model_copy(update={"policy": policy})
    schema.metadata.generation = 1
    schema.metadata.annotations = {
        ANNOTATION_SPEC_WRITTEN_BY: encode(SpecWriter(ALICE.username, None, 1))
    }
    assert schema.status is not None
    assert schema.status.plan is not None
    spec = PtahSchemaApprovalSpec(
        schema_ref=s_ref,
        plan_ref=ObjectReference(name="catalog-plan", uid="sp-uid-1"),
        plan_fingerprint=p.spec.fingerprint,
        plan_operation_id=schema.status.plan.operation_id,
        approved_by=ALICE,
    )
    assert [f.code for f in check_schema_approval(spec, NS, schema, p)] == [
        checks.APPROVER_NOT_DISTINCT
    ]
    by_bob = spec.model_copy(update={"approved_by": BOB})
    assert check_schema_approval(by_bob, NS, schema, p) == []
