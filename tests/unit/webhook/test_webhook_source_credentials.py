"""Admission refuses a PtahMigration or PtahSchema whose spec.git.secretRef or
spec.artifact.secretRef would send a Secret to a host not on the manager's
--allowed-source-hosts (issue #18, review finding 1); the message names the rule, never the
host or the Secret."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from ptah_operator.webhook.app import VALIDATE_RESOURCES_PATH, Review, build_app
from tests.unit.webhook.test_webhook_app import DictLookup, _post, _review
from tests.unit.webhook.test_webhook_runner_image import _update, resource


def with_source(kind: str, source: dict[str, Any]) -> dict[str, Any]:
    body = resource(kind, None)
    del body["spec"]["configMap"]
    body["spec"].update(source)
    return body


GIT_ATTACKER = {
    "git": {
        "repository": "https://attacker.example/r.git",
        "ref": "main",
        "secretRef": {"name": "other-apps-db"},
    }
}
OCI_ATTACKER = {
    "artifact": {
        "ociRef": "oci://attacker.example/r/m:latest",
        "verificationPolicyFrom": {"name": "p", "key": "policy"},
        "secretRef": {"name": "other-apps-db"},
    }
}
GIT_ALLOWED = {
    "git": {
        "repository": "https://git.internal:8443/acme/r.git",
        "ref": "main",
        "secretRef": {"name": "acme-git"},
    }
}


@pytest.fixture
def reviews() -> list[Review]:
    return []


@pytest.fixture
async def http(reviews: list[Review]) -> AsyncIterator[TestClient[Any, Any]]:
    app = build_app(
        DictLookup(),
        observer=reviews.append,
        allowed_source_hosts=frozenset({"git.internal:8443"}),
    )
    async with TestClient(TestServer(app)) as client:
        yield client


@pytest.mark.req("JOB-01")
@pytest.mark.parametrize("kind", ["PtahMigration", "PtahSchema"])
@pytest.mark.parametrize("source", [GIT_ATTACKER, OCI_ATTACKER], ids=["git", "artifact"])
async def test_a_credential_for_a_host_not_allowed_is_refused(
    http: TestClient[Any, Any], reviews: list[Review], kind: str, source: dict[str, Any]
) -> None:
    body = with_source(kind, source)
    response = await _post(http, VALIDATE_RESOURCES_PATH, _review(kind, body))
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert "secretRef" in message
    assert "attacker" not in message
    assert "other-apps-db" not in message
    assert reviews[-1].codes == ("SourceHostNotAllowed",)
    # Moving the repository of an admitted resource to another host is refused too.
    update = _update(kind, body, with_source(kind, GIT_ALLOWED))
    assert (await _post(http, VALIDATE_RESOURCES_PATH, update))["allowed"] is False


@pytest.mark.parametrize("kind", ["PtahMigration", "PtahSchema"])
async def test_an_allowed_host_or_no_credential_is_admitted(
    http: TestClient[Any, Any], kind: str
) -> None:
    for source in (GIT_ALLOWED, {"git": {"repository": "https://attacker.example/r.git"}}):
        body = with_source(kind, source)
        assert (await _post(http, VALIDATE_RESOURCES_PATH, _review(kind, body)))["allowed"]
    # An update that keeps a refused pair (the manager's own patches) passes, as for images.
    body = with_source(kind, GIT_ATTACKER)
    assert (await _post(http, VALIDATE_RESOURCES_PATH, _update(kind, body, body)))["allowed"]
