"""Admission refuses a PtahMigration or PtahSchema whose spec.execution.image the manager does
not allow (issue #18): a new or changed image must be pinned to a digest on the manager's
allowlist; the refusal names the rule, never the reference."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ptah_operator.webhook.app import VALIDATE_RESOURCES_PATH, Review, build_app
from tests.unit.webhook.test_webhook_app import DictLookup, _post, _review

ALLOWED = "sha256:" + hashlib.sha256(b"allowed").hexdigest()
OTHER = "sha256:" + hashlib.sha256(b"other").hexdigest()


def resource(kind: str, image: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "target": {
            "engine": "PostgreSQL",
            "coordinationKey": "prod/orders",
            "urlFrom": {"name": "billing-database", "key": "url"},
        },
        "configMap": {"name": "orders-migrations"},
    }
    if image is not None:
        spec["execution"] = {"image": image}
    return {
        "apiVersion": "operator.ptah.run/v1alpha1",
        "kind": kind,
        "metadata": {"name": "orders", "namespace": "application"},
        "spec": spec,
    }


@pytest.fixture
def reviews() -> list[Review]:
    return []


@pytest.fixture
async def http(reviews: list[Review]) -> AsyncIterator[TestClient[Any, Any]]:
    app = build_app(DictLookup(), observer=reviews.append, allowed_images=frozenset({ALLOWED}))
    async with TestClient(TestServer(app)) as client:
        yield client


def _update(kind: str, new: Mapping[str, Any], old: Mapping[str, Any]) -> dict[str, Any]:
    review = _review(kind, new, "UPDATE")
    review["request"]["oldObject"] = old
    return review


@pytest.mark.req("JOB-06")
@pytest.mark.parametrize("kind", ["PtahMigration", "PtahSchema"])
@pytest.mark.parametrize(
    "image",
    ["attacker.example/reader:latest", f"attacker.example/reader@{OTHER}"],
    ids=["a tag", "a digest not allowed"],
)
async def test_an_image_the_manager_does_not_allow_is_refused(
    http: TestClient[Any, Any], reviews: list[Review], kind: str, image: str
) -> None:
    response = await _post(http, VALIDATE_RESOURCES_PATH, _review(kind, resource(kind, image)))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert "spec.execution.image" in message
    assert "attacker" not in message
    assert reviews[-1].codes[0] in {"RunnerImageNotPinned", "RunnerImageNotAllowed"}
    # An update that changes the image to it is refused too.
    update = _update(kind, resource(kind, image), resource(kind, None))
    assert (await _post(http, VALIDATE_RESOURCES_PATH, update))["allowed"] is False


@pytest.mark.parametrize("kind", ["PtahMigration", "PtahSchema"])
async def test_no_image_or_an_allowed_digest_is_admitted(
    http: TestClient[Any, Any], kind: str
) -> None:
    for image in (None, f"mirror.example/ptah@{ALLOWED}"):
        review = _review(kind, resource(kind, image))
        assert (await _post(http, VALIDATE_RESOURCES_PATH, review))["allowed"] is True


async def test_an_update_that_keeps_an_image_no_longer_allowed_is_admitted(
    http: TestClient[Any, Any],
) -> None:
    """The manager's own writes (annotations) and edits elsewhere in the spec pass: the image
    was judged when it was written, and no Job is built with it anyway."""
    kept = resource("PtahMigration", f"attacker.example/reader@{OTHER}")
    edited = resource("PtahMigration", f"attacker.example/reader@{OTHER}")
    edited["metadata"]["annotations"] = {"operator.ptah.run/read-requested-at": "now"}
    update = _update("PtahMigration", edited, kept)
    assert (await _post(http, VALIDATE_RESOURCES_PATH, update))["allowed"] is True
