"""The webhook routes speak AdmissionReview v1: patches, refusals, and the fresh re-check."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ptah_operator.api.approvals import PtahMigrationApproval
from ptah_operator.api.common import ObjectReference
from ptah_operator.api.constants import Kind, MigrationPhase
from ptah_operator.api.kinds import to_manifest
from ptah_operator.webhook.app import MUTATE_PATH, VALIDATE_PATH, Review, build_app
from ptah_operator.webhook.lookup import CachedLookup, ObjectReadError
from tests.support.migration_objects import (
    approval_spec,
    awaiting_approval,
    migration,
    plan,
    plan_spec,
)
from tests.unit.webhook.test_webhook_checks import _ack_setup, _schema_setup

NOW = datetime(2026, 8, 30, 12, 0, 0, tzinfo=UTC)


class DictLookup:
    """Objects by (kind, namespace, name); `fresh` reads can see other objects."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        self.fresh_objects: dict[tuple[str, str, str], Mapping[str, Any]] | None = None
        self.fresh_reads = 0
        self.fail = False

    async def get(
        self, kind: Kind, namespace: str, name: str, *, fresh: bool = False
    ) -> Mapping[str, Any] | None:
        if self.fail:
            raise ObjectReadError(f"reading {kind} {name} failed: HTTP 500")
        if fresh:
            self.fresh_reads += 1
            if self.fresh_objects is not None:
                return self.fresh_objects.get((kind.value, namespace, name))
        return self.objects.get((kind.value, namespace, name))


def _review(kind: str, obj: Mapping[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "req-1",
            "kind": {"group": "operator.ptah.run", "version": "v1alpha1", "kind": kind},
            "operation": operation,
            "namespace": "application",
            "object": obj,
            "userInfo": {
                "username": "alice@example.com",
                "groups": ["approvers", "system:authenticated"],
            },
        },
    }


@pytest.fixture
def lookup() -> DictLookup:
    return DictLookup()


@pytest.fixture
def reviews() -> list[Review]:
    return []


@pytest.fixture
async def http(lookup: DictLookup, reviews: list[Review]) -> AsyncIterator[TestClient[Any, Any]]:
    app = build_app(lookup, now=lambda: NOW, observer=reviews.append)
    async with TestClient(TestServer(app)) as client:
        yield client


def _world(
    lookup: DictLookup, phase: MigrationPhase = MigrationPhase.AWAITING_APPROVAL
) -> dict[str, Any]:
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    status = awaiting_approval(p).model_copy(update={"phase": phase})
    m = migration(status=status)
    lookup.objects[("PtahMigration", "application", "orders")] = to_manifest(m)
    assert p.metadata.name is not None
    lookup.objects[("PtahMigrationPlan", "application", p.metadata.name)] = to_manifest(p)
    approval = PtahMigrationApproval(spec=approval_spec(m, p))
    manifest = to_manifest(approval)
    manifest["metadata"] = {"generateName": "orders-", "namespace": "application"}
    return manifest


async def _post(http: TestClient[Any, Any], path: str, body: Any) -> dict[str, Any]:
    response = await http.post(path, json=body)
    assert response.status == 200
    answer: dict[str, Any] = await response.json()
    assert answer["apiVersion"] == "admission.k8s.io/v1"
    assert answer["kind"] == "AdmissionReview"
    inner: dict[str, Any] = answer["response"]
    assert inner["uid"] == "req-1"
    return inner


@pytest.mark.req("APR-04")
async def test_mutate_answers_with_a_json_patch_of_the_requesting_user(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    obj = _world(lookup)
    obj["spec"]["approvedBy"] = {"username": "mallory"}
    response = await _post(http, MUTATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["allowed"] is True
    assert response["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(response["patch"]))
    assert patch == [
        {
            "op": "add",
            "path": "/spec/approvedBy",
            "value": {
                "username": "alice@example.com",
                "groups": ["approvers", "system:authenticated"],
            },
        },
        {"op": "add", "path": "/spec/approvedAt", "value": "2026-08-30T12:00:00Z"},
    ]
    assert response["warnings"] == [
        "spec.approvedBy was replaced: admission records the authenticated user alice@example.com"
    ]
    assert reviews == [Review("mutate", "PtahMigrationApproval", "application", True)]


@pytest.mark.req("APR-04")
async def test_an_approval_without_an_authenticated_user_is_refused_and_counted(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    body = _review("PtahMigrationApproval", _world(lookup))
    body["request"]["userInfo"] = {}
    response = await _post(http, MUTATE_PATH, body)
    assert response["allowed"] is False
    assert "patch" not in response
    assert response["status"]["message"] == (
        "PtahMigrationApproval refused: the request carries no authenticated user to record"
    )
    assert reviews == [
        Review("mutate", "PtahMigrationApproval", "application", False, ("Unauthenticated",))
    ]


@pytest.mark.req("APR-04")
async def test_mutate_refuses_a_request_without_a_user(http: TestClient[Any, Any]) -> None:
    body = _review("PtahMigrationApproval", {"spec": {}})
    body["request"]["userInfo"] = {}
    response = await _post(http, MUTATE_PATH, body)
    assert response["allowed"] is False
    assert "no authenticated user" in response["status"]["message"]


async def test_other_operations_and_kinds_pass_unchanged(http: TestClient[Any, Any]) -> None:
    for path in (MUTATE_PATH, VALIDATE_PATH):
        response = await _post(http, path, _review("PtahMigrationApproval", {}, "UPDATE"))
        assert response == {"uid": "req-1", "allowed": True}
        response = await _post(http, path, _review("PtahMigration", {"spec": {}}))
        assert response == {"uid": "req-1", "allowed": True}


async def test_a_body_that_is_not_an_admission_review_is_a_bad_request(
    http: TestClient[Any, Any],
) -> None:
    for body in ({"kind": "Other"}, {"apiVersion": "admission.k8s.io/v1", "request": {}}):
        response = await http.post(VALIDATE_PATH, json=body)
        assert response.status == 400
    response = await http.post(MUTATE_PATH, data=b"not json")
    assert response.status == 400


@pytest.mark.req("APR-02")
async def test_validate_admits_an_approval_the_evidence_supports(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    obj = _world(lookup)
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response == {"uid": "req-1", "allowed": True}
    assert lookup.fresh_reads == 0
    assert reviews[-1].allowed


@pytest.mark.req("APR-10")
async def test_validate_refuses_with_a_readable_message(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    obj = _world(lookup, phase=MigrationPhase.APPLYING)
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["message"] == (
        "PtahMigrationApproval refused: migration orders is not waiting for a decision: "
        "its phase is Applying, not AwaitingApproval"
    )
    assert reviews[-1].codes == ("NotAwaitingApproval",)


@pytest.mark.req("APR-10")
async def test_a_refusal_on_a_stale_cache_is_checked_again_fresh(
    http: TestClient[Any, Any], lookup: DictLookup
) -> None:
    obj = _world(lookup, phase=MigrationPhase.PLANNING)
    stale = dict(lookup.objects)  # what the cache still holds
    _world(lookup)  # what the API server holds now: waiting for the approval
    lookup.fresh_objects, lookup.objects = dict(lookup.objects), stale
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["allowed"] is True
    assert lookup.fresh_reads == 2


async def test_an_object_that_cannot_be_read_is_refused_with_500(
    http: TestClient[Any, Any], lookup: DictLookup
) -> None:
    obj = _world(lookup)
    lookup.fail = True
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["allowed"] is False
    assert response["status"]["code"] == 500
    assert response["status"]["message"] == (
        "PtahMigrationApproval could not be checked: reading PtahMigration orders failed: HTTP 500"
    )


async def test_a_malformed_stored_object_is_named_not_dumped(
    http: TestClient[Any, Any], lookup: DictLookup
) -> None:
    obj = _world(lookup)
    broken = dict(lookup.objects[("PtahMigration", "application", "orders")])
    broken["status"] = {"phase": "Sideways"}
    lookup.objects[("PtahMigration", "application", "orders")] = broken
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["status"]["code"] == 500
    assert "status.phase" in response["status"]["message"]
    assert "Sideways" not in response["status"]["message"]


async def test_cached_lookup_reads_fresh_from_its_fallback(lookup: DictLookup) -> None:
    cached = {"application/orders": {"kind": "PtahMigration", "cached": True}}
    lookup.objects[("PtahMigration", "application", "orders")] = {"fresh": True}
    cache = CachedLookup({Kind.PTAH_MIGRATION: cached.get}, lookup)
    assert (
        await cache.get(Kind.PTAH_MIGRATION, "application", "orders")
        == cached["application/orders"]
    )
    assert await cache.get(Kind.PTAH_MIGRATION, "application", "orders", fresh=True) == {
        "fresh": True
    }
    assert await cache.get(Kind.PTAH_MIGRATION_PLAN, "application", "x") is None
    no_fallback = CachedLookup({Kind.PTAH_MIGRATION: cached.get}, None)
    assert await no_fallback.get(Kind.PTAH_MIGRATION, "application", "gone", fresh=True) is None
    with pytest.raises(ObjectReadError, match=r"^no cache holds PtahMigrationPlan objects$"):
        await no_fallback.get(Kind.PTAH_MIGRATION_PLAN, "application", "x")


async def test_a_fresh_read_reaches_the_fallback_as_fresh(lookup: DictLookup) -> None:
    # The re-check after a refusal must not be answered from another cache (APR-10).
    lookup.objects[("PtahMigration", "application", "orders")] = {"cached": True}
    lookup.fresh_objects = {("PtahMigration", "application", "orders"): {"fresh": True}}
    cache = CachedLookup({}, lookup)
    assert await cache.get(Kind.PTAH_MIGRATION, "application", "orders") == {"cached": True}
    assert lookup.fresh_reads == 0
    fresh = await cache.get(Kind.PTAH_MIGRATION, "application", "orders", fresh=True)
    assert fresh == {"fresh": True}
    assert lookup.fresh_reads == 1


# --- every kind the validating webhook checks ---------------------------------------------------


def _stored(lookup: DictLookup, resource: Any) -> None:
    manifest = to_manifest(resource)
    lookup.objects[(manifest["kind"], "application", resource.metadata.name)] = manifest


def _new(kind: str, spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": kind,
        "metadata": {"generateName": "x-", "namespace": "application"},
        "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


@pytest.mark.req("APR-04")
async def test_validate_reads_the_schema_and_plan_a_schema_approval_names(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    schema, p, spec = _schema_setup()
    obj = _new("PtahSchemaApproval", spec)
    missing = await _post(http, VALIDATE_PATH, _review("PtahSchemaApproval", obj))
    assert missing["allowed"] is False
    assert missing["status"]["message"].startswith(
        "PtahSchemaApproval refused: PtahSchema catalog does not exist in application"
    )
    _stored(lookup, schema)
    _stored(lookup, p)
    response = await _post(http, VALIDATE_PATH, _review("PtahSchemaApproval", obj))
    assert response == {"uid": "req-1", "allowed": True}
    assert reviews[-1].allowed


@pytest.mark.req("RUN-06")
async def test_validate_reads_the_migration_a_run_acknowledgment_names(
    http: TestClient[Any, Any], lookup: DictLookup
) -> None:
    m, spec = _ack_setup()
    obj = _new("PtahMigrationRunAcknowledgment", spec)
    missing = await _post(http, VALIDATE_PATH, _review("PtahMigrationRunAcknowledgment", obj))
    assert missing["allowed"] is False
    assert missing["status"]["message"] == (
        "PtahMigrationRunAcknowledgment refused: PtahMigration orders does not exist in application"
    )
    _stored(lookup, m)
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationRunAcknowledgment", obj))
    assert response == {"uid": "req-1", "allowed": True}


async def test_an_object_that_does_not_fit_is_refused_by_field_path_never_by_value(
    http: TestClient[Any, Any], lookup: DictLookup, reviews: list[Review]
) -> None:
    obj = _world(lookup)
    spec = obj["spec"]
    for field in ("migrationRef", "planRef", "planFingerprint", "decision"):
        spec[field] = 7
    spec["unknownOne"] = "secret-value"
    spec["unknownTwo"] = "secret-value"
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["allowed"] is False
    assert response["status"]["code"] == 400
    message = response["status"]["message"]
    assert "secret-value" not in message
    # Five places at most, in the order the model reads them, then how many more.
    assert message == (
        "PtahMigrationApproval refused: fields that do not fit the API: spec.migrationRef, "
        "spec.planRef, spec.planFingerprint, spec.decision, spec.unknownOne and 1 more"
    )
    assert reviews[-1].codes == ("Invalid",)


async def test_five_places_that_do_not_fit_are_all_named(
    http: TestClient[Any, Any], lookup: DictLookup
) -> None:
    obj = _world(lookup)
    for field in ("migrationRef", "planRef", "planFingerprint", "decision", "unknownOne"):
        obj["spec"][field] = 7
    response = await _post(http, VALIDATE_PATH, _review("PtahMigrationApproval", obj))
    assert response["status"]["message"] == (
        "PtahMigrationApproval refused: fields that do not fit the API: spec.migrationRef, "
        "spec.planRef, spec.planFingerprint, spec.decision, spec.unknownOne"
    )
