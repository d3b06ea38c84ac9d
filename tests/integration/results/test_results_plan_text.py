"""A schema plan's text at the result endpoint, served over TLS and storing into the real API
server: pieces stored before the answer and idempotently, a Plan report refused until its
pieces are all there, and an Apply's plan assembled from the published chunks and checked."""

from __future__ import annotations

import datetime as dt
import json
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kubernetes_asyncio import client as k8s_client
from localstack.controlplane import ControlPlane

from ptah_operator.api.constants import GROUP, VERSION, OperationType
from ptah_operator.api.contracts.result import SchemaOperationReport
from ptah_operator.api.fingerprints import sha256_digest
from ptah_operator.api.names import plan_text_record_name
from ptah_operator.api.schema import PtahSchema
from tests.integration.runner.runner_support import Endpoint, create_namespace, start_endpoint
from tests.integration.runner.schema_support import (
    claim,
    create_schema,
    new_operation_id,
    publish_plan,
    read_report,
)

pytestmark = pytest.mark.integration

PLAN_TEXT = '{"statements": ["caf\u00e9", "\U0001f600"]}\n' * 40


@pytest.fixture
async def endpoint(api_client: k8s_client.ApiClient, tmp_path: Path) -> AsyncIterator[Endpoint]:
    served = await start_endpoint(api_client, tmp_path / "endpoint")
    yield served
    await served.runner.cleanup()


@pytest.fixture
async def namespace(
    api_client: k8s_client.ApiClient, crds_installed: ControlPlane
) -> AsyncIterator[str]:
    name = await create_namespace(api_client, "plantext")
    yield name
    core: Any = k8s_client.CoreV1Api(api_client)
    await core.delete_namespace(name)


class Client:
    """Requests to the endpoint with an operation's token, as a runner makes them."""

    def __init__(self, endpoint: Endpoint, namespace: str) -> None:
        self.endpoint = endpoint
        self.namespace = namespace
        self.context = ssl.create_default_context(cafile=str(endpoint.ca_file))

    async def send(
        self,
        method: str,
        operation_id: str,
        suffix: str = "",
        body: bytes | None = None,
        token: str | None = None,
    ) -> tuple[int, bytes, str]:
        url = f"{self.endpoint.base_url}/{self.namespace}/{operation_id}{suffix}"
        bearer = token or self.endpoint.token(self.namespace, operation_id)
        connector = aiohttp.TCPConnector(ssl=self.context)
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.request(
                method, url, data=body, headers={"Authorization": f"Bearer {bearer}"}
            ) as resp,
        ):
            return resp.status, await resp.read(), resp.content_type

    async def put(
        self, operation_id: str, index: int | str, text: str | bytes, token: str | None = None
    ) -> tuple[int, dict[str, Any]]:
        body = text.encode() if isinstance(text, str) else text
        status, data, _ = await self.send("PUT", operation_id, f"/plan/{index}", body, token)
        return status, json.loads(data)

    async def post(self, operation_id: str, document: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, data, _ = await self.send("POST", operation_id, body=json.dumps(document).encode())
        return status, json.loads(data)

    async def get_plan(self, operation_id: str, token: str | None = None) -> tuple[int, bytes, str]:
        return await self.send("GET", operation_id, "/plan", token=token)


def _plan_report(schema: PtahSchema, operation_id: str, texts: list[str]) -> dict[str, Any]:
    whole = "".join(texts).encode()
    return {
        "contract": "ptah.run/result/v1",
        "operationID": operation_id,
        "type": "Plan",
        "resource": {
            "kind": "PtahSchema",
            "namespace": schema.metadata.namespace,
            "name": schema.metadata.name,
            "uid": schema.metadata.uid,
        },
        "targetIdentityDigest": "sha256:" + "a" * 64,
        "plan": {
            "changes": True,
            "dialect": "postgresql",
            "observedFingerprint": "sha256:" + "b" * 64,
            "desiredFingerprint": "sha256:" + "c" * 64,
            "digest": sha256_digest(whole),
            "size": len(whole),
            "statementCount": 2,
            "pieces": [
                {"index": i, "digest": sha256_digest(t.encode()), "size": len(t.encode())}
                for i, t in enumerate(texts)
            ],
        },
    }


async def _config_map(api: k8s_client.ApiClient, namespace: str, name: str) -> Any:
    core: Any = k8s_client.CoreV1Api(api)
    return await core.read_namespaced_config_map(name, namespace)


async def test_a_piece_is_stored_before_the_answer_and_idempotently(
    endpoint: Endpoint, api_client: k8s_client.ApiClient, namespace: str
) -> None:
    schema = await create_schema(api_client, namespace, "pieces")
    client = Client(endpoint, namespace)
    operation_id = new_operation_id()

    # No claim names the operation yet: nothing is stored.
    status, body = await client.put(operation_id, 0, "text")
    assert (status, body["error"]) == (
        404,
        "no PtahSchema in the namespace has a claim with this operation id",
    )
    await claim(api_client, schema, operation_id, OperationType.OBSERVE)
    status, body = await client.put(operation_id, 0, "text")
    assert (status, body["error"]) == (409, "the claim with this operation id is not a Plan's")

    await claim(api_client, schema, operation_id, OperationType.PLAN)
    piece = "caf\u00e9 \U0001f600 " * 10
    status, body = await client.put(operation_id, 0, piece)
    assert status == 201
    assert body == {
        "record": plan_text_record_name(operation_id, 0),
        "result": "created",
        "digest": sha256_digest(piece.encode()),
        "size": len(piece.encode()),
    }
    # Stored before the answer: the record is there as soon as the runner hears 201.
    record = await _config_map(api_client, namespace, plan_text_record_name(operation_id, 0))
    assert record.data == {"piece": piece}
    assert record.immutable is True
    assert record.metadata.labels == {
        "app.kubernetes.io/managed-by": "ptah-operator",
        "operator.ptah.run/owner-kind": "PtahSchema",
        "operator.ptah.run/owner-name": "pieces",
        "operator.ptah.run/owner-uid": schema.metadata.uid,
        "operator.ptah.run/operation-id": operation_id,
        "operator.ptah.run/operation": "Plan",
        "operator.ptah.run/plan-piece": "0",
    }
    owner = record.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.uid, owner.controller) == (
        "PtahSchema",
        "pieces",
        schema.metadata.uid,
        True,
    )

    # The same bytes again (a retry after a lost answer): 200; other bytes: 409.
    status, body = await client.put(operation_id, 0, piece)
    assert (status, body["result"]) == (200, "exists")
    status, body = await client.put(operation_id, 0, piece + "x")
    assert (status, body["error"]) == (409, "another text is stored for piece 0 of this operation")

    # 262,144 characters of 3 bytes each are stored; of 4 bytes each, the API server refuses
    # the record for good (the runner never cuts such a piece: it keeps pieces to 256 KiB).
    large = "\u20ac" * 262_144
    status, body = await client.put(operation_id, 63, large)
    assert (status, body["size"]) == (201, 786_432)
    status, body = await client.put(operation_id, 62, "\U0001f600" * 262_144)
    assert status == 413
    assert body["error"].startswith("the piece could not be stored: the API server refused")

    for index in (64, "01", "-1", "x"):
        status, body = await client.put(operation_id, index, "text")
        assert (status, body["error"]) == (400, "the piece index is not one of 0..63")
    status, body = await client.put(operation_id, 1, "x" * 262_145)
    assert status == 413
    status, body = await client.put(operation_id, 1, b"\xff\xfe")
    assert (status, body["error"]) == (400, "the piece is not UTF-8 text")
    status, body = await client.put(operation_id, 1, "text", token="0" * 64)
    assert (status, body["error"]) == (401, "the token is missing or wrong")
    core: Any = k8s_client.CoreV1Api(api_client)
    found = await core.list_namespaced_config_map(
        namespace, label_selector=f"operator.ptah.run/operation-id={operation_id}"
    )
    assert sorted(cm.metadata.name for cm in found.items) == [
        plan_text_record_name(operation_id, 0),
        plan_text_record_name(operation_id, 63),
    ]


async def test_a_plan_report_is_recorded_only_once_its_pieces_are_stored(
    endpoint: Endpoint, api_client: k8s_client.ApiClient, namespace: str
) -> None:
    schema = await create_schema(api_client, namespace, "reports")
    client = Client(endpoint, namespace)
    texts = ["first piece \u00e9", "second piece"]

    operation_id = new_operation_id()
    await claim(api_client, schema, operation_id, OperationType.PLAN)
    report = _plan_report(schema, operation_id, texts)
    status, body = await client.post(operation_id, report)
    assert (status, body["error"]) == (409, "piece 0 of the plan is not stored")
    assert (await client.put(operation_id, 0, texts[0]))[0] == 201
    status, body = await client.post(operation_id, report)
    assert (status, body["error"]) == (409, "piece 1 of the plan is not stored")
    assert await read_report(api_client, namespace, operation_id) is None
    assert (await client.put(operation_id, 1, texts[1]))[0] == 201
    status, body = await client.post(operation_id, report)
    assert (status, body["result"]) == (201, "created")
    assert await read_report(api_client, namespace, operation_id) is not None
    # A retry finds its record, even once the pieces are gone (made into chunks).
    core: Any = k8s_client.CoreV1Api(api_client)
    for index in (0, 1):
        await core.delete_namespaced_config_map(
            plan_text_record_name(operation_id, index), namespace
        )
    status, body = await client.post(operation_id, report)
    assert (status, body["result"]) == (200, "exists")

    # A piece stored with other text than the report says.
    other = new_operation_id()
    await claim(api_client, schema, other, OperationType.PLAN)
    assert (await client.put(other, 0, texts[0] + "!"))[0] == 201
    status, body = await client.post(other, _plan_report(schema, other, texts[:1]))
    assert (status, body["error"]) == (
        409,
        "piece 0 of the plan is stored with another digest or size",
    )

    # Pieces that do not give the report's own plan digest, and pieces listed out of order.
    third = new_operation_id()
    await claim(api_client, schema, third, OperationType.PLAN)
    assert (await client.put(third, 0, texts[0]))[0] == 201
    wrong = _plan_report(schema, third, texts[:1])
    wrong["plan"]["digest"] = "sha256:" + "d" * 64
    status, body = await client.post(third, wrong)
    assert (status, body["error"]) == (422, "the plan's pieces do not give its digest and size")
    unordered = _plan_report(schema, third, texts[:1])
    unordered["plan"]["pieces"][0]["index"] = 1
    status, _ = await client.post(third, unordered)
    assert status == 422

    # A Plan that changes nothing has no pieces to wait for.
    quiet = new_operation_id()
    await claim(api_client, schema, quiet, OperationType.PLAN)
    converged = _plan_report(schema, quiet, [])
    converged["plan"] = {
        "changes": False,
        "observedFingerprint": "sha256:" + "b" * 64,
        "desiredFingerprint": "sha256:" + "b" * 64,
    }
    status, body = await client.post(quiet, converged)
    assert (status, body["result"]) == (201, "created")


def _report_for_publication(text: str) -> SchemaOperationReport:
    data = text.encode()
    return SchemaOperationReport.model_validate(
        {
            "contract": "ptah.run/result/v1",
            "operationID": "op-0000000000",
            "type": "Plan",
            "resource": {"kind": "PtahSchema", "namespace": "n", "name": "n", "uid": "u"},
            "startedAt": dt.datetime.now(dt.UTC),
            "targetIdentityDigest": "sha256:" + "a" * 64,
            "plan": {
                "changes": True,
                "dialect": "postgresql",
                "observedFingerprint": "sha256:" + "b" * 64,
                "desiredFingerprint": "sha256:" + "c" * 64,
                "digest": sha256_digest(data),
                "size": len(data),
                "statementCount": 2,
            },
        }
    )


async def test_an_apply_fetches_the_published_plan_from_its_chunks(
    endpoint: Endpoint, api_client: k8s_client.ApiClient, namespace: str
) -> None:
    client = Client(endpoint, namespace)
    report = _report_for_publication(PLAN_TEXT)
    schema = await create_schema(api_client, namespace, "fetch")
    plan = await publish_plan(api_client, schema, PLAN_TEXT, report, chunk_chars=500)
    assert len(plan.spec.chunks) > 2

    operation_id = new_operation_id()
    status, _, _ = await client.get_plan(operation_id)
    assert status == 404
    await claim(api_client, schema, operation_id, OperationType.PLAN)
    status, body, _ = await client.get_plan(operation_id)
    assert (status, json.loads(body)["error"]) == (
        409,
        "the claim with this operation id is not an Apply's",
    )
    await claim(api_client, schema, operation_id, OperationType.APPLY, plan)
    status, body, content_type = await client.get_plan(operation_id)
    assert (status, content_type) == (200, "text/plain")
    assert body == PLAN_TEXT.encode()
    assert sha256_digest(body) == plan.spec.digest
    status, _, _ = await client.get_plan(operation_id, token="0" * 64)
    assert status == 401
    # A token opens only its own operation.
    status, _, _ = await client.get_plan(
        new_operation_id(), token=client.endpoint.token(namespace, operation_id)
    )
    assert status == 401


async def _fetch_refusal(
    api: k8s_client.ApiClient,
    client: Client,
    schema: PtahSchema,
    plan: Any,
    claimed: Any = None,
) -> tuple[int, str]:
    operation_id = new_operation_id()
    await claim(api, schema, operation_id, OperationType.APPLY, claimed or plan)
    status, body, _ = await client.get_plan(operation_id)
    return status, json.loads(body)["error"]


async def test_an_apply_gets_no_plan_that_does_not_fit_its_claim(
    endpoint: Endpoint, api_client: k8s_client.ApiClient, namespace: str
) -> None:
    client = Client(endpoint, namespace)
    report = _report_for_publication(PLAN_TEXT)
    custom: Any = k8s_client.CustomObjectsApi(api_client)

    # A chunk whose data does not give its digest.
    schema = await create_schema(api_client, namespace, "tampered")
    tampered = await publish_plan(
        api_client, schema, PLAN_TEXT, report, chunk_chars=500, chunk_data={1: "x" * 500}
    )
    status, error = await _fetch_refusal(api_client, client, schema, tampered)
    assert (status, error) == (
        409,
        f"chunk {tampered.spec.chunks[1].name} does not hold data with its digest",
    )

    # Chunks that are right one by one but do not give the plan's digest.
    schema = await create_schema(api_client, namespace, "wrong-digest")
    wrong = await publish_plan(
        api_client, schema, PLAN_TEXT, report, spec_digest="sha256:" + "e" * 64
    )
    status, error = await _fetch_refusal(api_client, client, schema, wrong)
    assert (status, error) == (
        409,
        f"the chunks of plan {wrong.metadata.name} do not give its digest and size",
    )

    # A chunk that is gone.
    schema = await create_schema(api_client, namespace, "missing-chunk")
    missing = await publish_plan(api_client, schema, PLAN_TEXT, report, chunk_chars=500)
    gone = missing.spec.chunks[-1].name
    await custom.delete_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahschemaplanchunks", gone
    )
    status, error = await _fetch_refusal(api_client, client, schema, missing)
    assert (status, error) == (404, f"chunk {gone} of plan {missing.metadata.name} does not exist")

    # The claim names a plan by another UID (a plan made again under the same name), a plan
    # that does not exist, or another schema's plan.
    schema = await create_schema(api_client, namespace, "other-uid")
    plan = await publish_plan(api_client, schema, PLAN_TEXT, report)
    replaced = plan.model_copy(
        update={"metadata": plan.metadata.model_copy(update={"uid": "another-uid"})}
    )
    status, error = await _fetch_refusal(api_client, client, schema, plan, replaced)
    assert (status, error) == (
        409,
        f"plan {plan.metadata.name} is not the one the claim names (another UID)",
    )
    absent = plan.model_copy(
        update={"metadata": plan.metadata.model_copy(update={"name": "no-such-plan"})}
    )
    status, error = await _fetch_refusal(api_client, client, schema, plan, absent)
    assert (status, error) == (404, "plan no-such-plan does not exist")
    stranger = await create_schema(api_client, namespace, "stranger")
    status, error = await _fetch_refusal(api_client, client, stranger, plan)
    assert (status, error) == (409, f"plan {plan.metadata.name} belongs to another schema")
