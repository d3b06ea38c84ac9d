"""Admission and the publication an approval names (APR-12, APR-03).

A plan retired before it ran and computed again later is the same plan object: the same name,
UID and fingerprint. What tells the two publications apart is status.plan.operationID, the read
that published it. The mutating webhook fills an approval's planOperationID from status.plan when
the approval names none; the validating webhook refuses an approval of another publication."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahSchemaApproval,
    PtahSchemaApprovalSpec,
)
from ptah_operator.api.common import ObjectReference
from ptah_operator.api.constants import Kind
from ptah_operator.api.kinds import to_manifest
from ptah_operator.webhook import validators as checks
from ptah_operator.webhook.app import MUTATE_PATH, build_app
from ptah_operator.webhook.lookup import ObjectReadError
from ptah_operator.webhook.validators import check_migration_approval, check_schema_approval
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
NOW = datetime(2026, 8, 30, 12, 30, 5, tzinfo=UTC)
M_REF = ObjectReference(name="orders", uid="m-uid-1")
FIRST = "op-0a00000001"
AGAIN = "op-0a00000007"


def _migration_published_by(operation_id: str | None) -> tuple[Any, Any]:
    p = plan(plan_spec(M_REF))
    status = awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"operation_id": operation_id})
    return migration(status=status), p


@pytest.mark.req("APR-12", "APR-05")
def test_an_approval_of_a_retired_publication_of_the_same_plan_is_refused() -> None:
    m, p = _migration_published_by(AGAIN)
    reviewed = approval_spec(m, p).model_copy(update={"plan_operation_id": FIRST})
    findings = check_migration_approval(reviewed, NS, m, p)
    assert [f.code for f in findings] == [checks.PLAN_REPUBLISHED]
    assert findings[0].message == (
        f"plan {p.metadata.name} was retired and published again since the publication the "
        f"approval names: migration orders publishes it from read {AGAIN}, the approval names "
        f"{FIRST}; review it again and approve the current publication"
    )
    current = approval_spec(m, p).model_copy(update={"plan_operation_id": AGAIN})
    assert check_migration_approval(current, NS, m, p) == []


@pytest.mark.req("APR-12")
def test_an_approval_naming_no_publication_of_a_plan_that_records_one_is_refused() -> None:
    m, p = _migration_published_by(AGAIN)
    findings = check_migration_approval(approval_spec(m, p), NS, m, p)
    assert [f.code for f in findings] == [checks.PLAN_REPUBLISHED]


@pytest.mark.req("APR-12", "APR-05")
def test_a_schema_approval_of_a_retired_publication_of_the_same_plan_is_refused() -> None:
    s_ref = ObjectReference(name="catalog", uid="s-uid-1")
    p = schema_plan(schema_plan_spec(s_ref))
    status = schema_awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"operation_id": AGAIN})
    schema = catalog_schema(status=status)
    reviewed = PtahSchemaApprovalSpec(
        schema_ref=s_ref,
        plan_ref=ObjectReference(name=status.plan.name, uid=status.plan.uid or ""),
        plan_fingerprint=p.spec.fingerprint,
        plan_operation_id=FIRST,
    )
    findings = check_schema_approval(reviewed, NS, schema, p)
    assert [f.code for f in findings] == [checks.PLAN_REPUBLISHED]
    current = reviewed.model_copy(update={"plan_operation_id": AGAIN})
    assert check_schema_approval(current, NS, schema, p) == []


# --- the mutating webhook fills it in -------------------------------------------------------


class Lookup:
    """Objects by (kind, namespace, name) as a fresh read finds them; `cached` is what a read
    from the informer cache would answer, which may be a step behind."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        self.cached: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        self.fail = False

    async def get(
        self, kind: Kind, namespace: str, name: str, *, fresh: bool = False
    ) -> Mapping[str, Any] | None:
        if self.fail:
            raise ObjectReadError(f"reading {kind} {name} failed: HTTP 500")
        return (self.objects if fresh else self.cached).get((kind.value, namespace, name))


@pytest.fixture
def lookup() -> Lookup:
    return Lookup()


@pytest.fixture
async def http(lookup: Lookup) -> AsyncIterator[TestClient[Any, Any]]:
    async with TestClient(TestServer(build_app(lookup, now=lambda: NOW))) as client:
        yield client


def _approval(lookup: Lookup, published_by: str | None, **spec: Any) -> dict[str, Any]:
    m, p = _migration_published_by(published_by)
    lookup.objects[("PtahMigration", NS, "orders")] = to_manifest(m)
    # the cache still holds the publication before it
    lookup.cached[("PtahMigration", NS, "orders")] = to_manifest(_migration_published_by(FIRST)[0])
    manifest = to_manifest(PtahMigrationApproval(spec=approval_spec(m, p)))
    manifest["metadata"] = {"generateName": "orders-", "namespace": NS}
    manifest["spec"].update(spec)
    return manifest


def _review(obj: Mapping[str, Any], kind: str = "PtahMigrationApproval") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "req-1",
            "kind": {"group": "operator.ptah.run", "version": "v1alpha1", "kind": kind},
            "operation": "CREATE",
            "namespace": NS,
            "object": obj,
            "userInfo": {"username": "alice@example.com"},
        },
    }


async def _patch(
    http: TestClient[Any, Any], obj: Mapping[str, Any], kind: str = "PtahMigrationApproval"
) -> list[dict[str, Any]]:
    body = _review(obj, kind)
    response = await http.post(MUTATE_PATH, json=body)
    answer = (await response.json())["response"]
    assert answer["allowed"] is True
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(answer["patch"]))
    return [op for op in ops if op["path"] == "/spec/planOperationID"]


@pytest.mark.req("APR-12", "APR-03")
async def test_admission_fills_in_the_publication_status_plan_records(
    http: TestClient[Any, Any], lookup: Lookup
) -> None:
    ops = await _patch(http, _approval(lookup, AGAIN))
    assert ops == [{"op": "add", "path": "/spec/planOperationID", "value": AGAIN}]


@pytest.mark.req("APR-12")
async def test_admission_keeps_a_publication_the_person_named_for_the_check(
    http: TestClient[Any, Any], lookup: Lookup
) -> None:
    assert await _patch(http, _approval(lookup, AGAIN, planOperationID=FIRST)) == []


@pytest.mark.req("APR-12")
async def test_admission_fills_in_nothing_it_cannot_read(
    http: TestClient[Any, Any], lookup: Lookup
) -> None:
    assert await _patch(http, _approval(lookup, None)) == []
    obj = _approval(lookup, AGAIN)
    lookup.fail = True
    assert await _patch(http, obj) == []


@pytest.mark.req("APR-12", "APR-03")
async def test_admission_fills_in_a_schema_approval_from_the_schema_it_names(
    http: TestClient[Any, Any], lookup: Lookup
) -> None:
    s_ref = ObjectReference(name="catalog", uid="s-uid-1")
    p = schema_plan(schema_plan_spec(s_ref))
    status = schema_awaiting_approval(p)
    assert status.plan is not None
    status.plan = status.plan.model_copy(update={"operation_id": AGAIN})
    lookup.objects[("PtahSchema", NS, "catalog")] = to_manifest(catalog_schema(status=status))
    # a migration of the same name is not the resource a schema approval names
    lookup.objects[("PtahMigration", NS, "catalog")] = to_manifest(
        _migration_published_by(FIRST)[0]
    )
    spec = PtahSchemaApprovalSpec(
        schema_ref=s_ref,
        plan_ref=ObjectReference(name=status.plan.name, uid=status.plan.uid or ""),
        plan_fingerprint=p.spec.fingerprint,
    )
    manifest = to_manifest(PtahSchemaApproval(spec=spec))
    manifest["metadata"] = {"generateName": "catalog-", "namespace": NS}
    ops = await _patch(http, manifest, "PtahSchemaApproval")
    assert ops == [{"op": "add", "path": "/spec/planOperationID", "value": AGAIN}]


@pytest.mark.req("APR-12")
@pytest.mark.parametrize(
    "spec",
    ["x", None, {"migrationRef": "orders"}, {"migrationRef": {"name": 5}}, {"migrationRef": {}}],
    ids=["a string", "null", "a ref that is a string", "a name that is a number", "no name"],
)
async def test_admission_reads_nothing_for_an_approval_whose_ref_is_malformed(
    http: TestClient[Any, Any], lookup: Lookup, spec: Any
) -> None:
    lookup.fail = True  # any read would answer a 500
    body = _review({"metadata": {"generateName": "orders-", "namespace": NS}, "spec": spec})
    response = await http.post(MUTATE_PATH, json=body)
    assert response.status == 200
    answer = (await response.json())["response"]
    assert answer["allowed"] is True
    ops = json.loads(base64.b64decode(answer["patch"])) if "patch" in answer else []
    assert [op for op in ops if op["path"] == "/spec/planOperationID"] == []
