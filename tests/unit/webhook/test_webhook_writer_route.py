"""The resource mutating route (`MUTATE_RESOURCES_PATH`): admission records, sealed, who wrote a
PtahMigration's or PtahSchema's spec (APR-04: the writer as admission authenticated them)."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ptah_operator.api.common import ObjectReference
from ptah_operator.api.kinds import from_manifest, to_manifest
from ptah_operator.api.migration import PtahMigration
from ptah_operator.webhook.app import MUTATE_RESOURCES_PATH, Review, build_app
from ptah_operator.webhook.writers import SpecWriters, Writer, WriterSeal
from tests.support.migration_objects import awaiting_approval, migration, plan, plan_spec
from tests.unit.webhook.test_webhook_app import NOW, DictLookup, _review

SEAL = WriterSeal(b"k" * 32)
PATH = "/metadata/annotations/operator.ptah.run~1spec-written-by"


@pytest.fixture
async def http(reviews: list[Review]) -> AsyncIterator[TestClient[Any, Any]]:
    app = build_app(DictLookup(), now=lambda: NOW, observer=reviews.append, seal=SEAL)
    async with TestClient(TestServer(app)) as client:
        yield client


@pytest.fixture
def reviews() -> list[Review]:
    return []


def _migration() -> dict[str, Any]:
    p = plan(plan_spec(ObjectReference(name="orders", uid="m-uid-1")))
    return to_manifest(migration(status=awaiting_approval(p)))


async def _answer(http: TestClient[Any, Any], body: dict[str, Any]) -> dict[str, Any]:
    response = await http.post(MUTATE_RESOURCES_PATH, json=body)
    assert response.status == 200
    answer: dict[str, Any] = (await response.json())["response"]
    assert answer["uid"] == "req-1"
    return answer


@pytest.mark.req("APR-04")
async def test_a_created_migration_records_its_authenticated_writer_sealed(
    http: TestClient[Any, Any], reviews: list[Review]
) -> None:
    obj = _migration()
    answer = await _answer(http, _review("PtahMigration", obj))
    assert answer["allowed"] is True
    assert answer["patchType"] == "JSONPatch"
    patch = json.loads(base64.b64decode(answer["patch"]))
    assert patch[-1]["op"] == "add"
    assert patch[-1]["path"] == PATH
    record = SEAL.open(patch[-1]["value"], from_manifest(PtahMigration, obj))
    assert record == SpecWriters(1, (Writer("alice@example.com", None, 1),))
    assert reviews == [Review("mutate", "PtahMigration", "application", True)]


@pytest.mark.req("APR-04")
async def test_an_update_is_recorded_too(http: TestClient[Any, Any]) -> None:
    old = _migration()
    obj = json.loads(json.dumps(old))
    obj["spec"]["execution"] = {**obj["spec"].get("execution", {}), "failureRetryInterval": "7m"}
    obj["metadata"]["generation"] = 2
    body = _review("PtahMigration", obj, "UPDATE")
    body["request"]["oldObject"] = old
    answer = await _answer(http, body)
    assert answer["allowed"] is True
    patch = json.loads(base64.b64decode(answer["patch"]))
    record = SEAL.open(patch[-1]["value"], from_manifest(PtahMigration, obj))
    assert record is not None
    assert [w.username for w in record.writers] == ["alice@example.com"]


@pytest.mark.req("APR-04")
async def test_a_write_without_an_authenticated_user_is_refused(
    http: TestClient[Any, Any], reviews: list[Review]
) -> None:
    body = _review("PtahMigration", _migration())
    body["request"]["userInfo"] = {}
    answer = await _answer(http, body)
    assert answer["allowed"] is False
    assert answer["status"]["message"] == (
        "PtahMigration refused: the request carries no authenticated user to record"
    )
    assert reviews == [
        Review("mutate", "PtahMigration", "application", False, ("Unauthenticated",))
    ]


async def test_a_delete_or_another_kind_passes_unchanged(http: TestClient[Any, Any]) -> None:
    answer = await _answer(http, _review("PtahMigration", _migration(), "DELETE"))
    assert answer == {"uid": "req-1", "allowed": True}
    answer = await _answer(http, _review("PtahMigrationApproval", {"spec": {}}))
    assert answer == {"uid": "req-1", "allowed": True}
