"""Helpers for the schema path's integration tests (imported, not collected): a PtahSchema on the
real API server, its claim written into its status as the lifecycle writes it, a published
PtahSchemaPlan with its chunks made from a plan text, and the records the endpoint stores."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from typing import Any

from kubernetes_asyncio import client as k8s_client

from ptah_operator.api.constants import API_VERSION, GROUP, VERSION, OperationType
from ptah_operator.api.content import digest_of_files
from ptah_operator.api.contracts.result import SchemaOperationReport
from ptah_operator.api.fields import format_time
from ptah_operator.api.fingerprints import schema_plan_fingerprint, sha256_digest, text_digest
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.names import (
    PIECE_KEY,
    RESULT_KEY,
    chunk_name,
    plan_text_record_name,
    result_record_name,
)
from ptah_operator.api.plans import PtahSchemaPlan, PtahSchemaPlanSpec, split_plan_text
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile import reports
from ptah_operator.reconcile.reports import Unreadable
from ptah_operator.reconcile.schema.jobs import operation_document
from ptah_operator.reconcile.world import OperationResult

Manifest = dict[str, Any]


def new_operation_id() -> str:
    return "op-" + secrets.token_hex(5)


def schema_manifest(
    name: str,
    namespace: str,
    engine: str = "PostgreSQL",
    *,
    scope: Manifest | None = None,
    policy: Manifest | None = None,
) -> Manifest:
    spec: Manifest = {
        "target": {
            "engine": engine,
            "coordinationKey": f"{namespace}/{name}",
            "urlFrom": {"name": f"{name}-database", "key": "url"},
        },
        "configMap": {"name": f"{name}-schema"},
    }
    if scope is not None:
        spec["scope"] = scope
    if policy is not None:
        spec["policy"] = policy
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PtahSchema",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


async def create_schema(
    api: k8s_client.ApiClient,
    namespace: str,
    name: str = "shop",
    engine: str = "PostgreSQL",
    *,
    scope: Manifest | None = None,
    policy: Manifest | None = None,
) -> PtahSchema:
    custom: Any = k8s_client.CustomObjectsApi(api)
    created = await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahschemas",
        schema_manifest(name, namespace, engine, scope=scope, policy=policy),
    )
    return from_manifest(PtahSchema, created)


async def claim(
    api: k8s_client.ApiClient,
    schema: PtahSchema,
    operation_id: str,
    operation_type: OperationType,
    plan: PtahSchemaPlan | None = None,
) -> None:
    """Write the claim into the schema's status, as the lifecycle does before a Job."""
    active: Manifest = {
        "operationID": operation_id,
        "type": operation_type.value,
        "startedAt": format_time(dt.datetime.now(dt.UTC)),
        # A merge patch keeps what it does not name: the report the endpoint wrote into the
        # previous claim is not this one's (the lifecycle replaces status whole).
        "report": None,
    }
    if plan is not None:
        active["plan"] = {
            "name": plan.metadata.name,
            "uid": plan.metadata.uid,
            "fingerprint": plan.spec.fingerprint,
        }
    custom: Any = k8s_client.CustomObjectsApi(api)
    await custom.patch_namespaced_custom_object_status(
        GROUP,
        VERSION,
        schema.metadata.namespace,
        "ptahschemas",
        schema.metadata.name,
        {"status": {"activeOperation": active}},
        _content_type="application/merge-patch+json",
    )


def read_document(
    schema: PtahSchema,
    operation_type: OperationType,
    operation_id: str,
    files: dict[str, bytes],
    *,
    expected_target: str | None = None,
) -> Manifest:
    """The operation document the lifecycle gives an Observe or a Plan of these files."""
    digest, _ = digest_of_files(files)
    return operation_document(
        schema, operation_type, operation_id, content_digest=digest, expected_target=expected_target
    )


def apply_document(schema: PtahSchema, operation_id: str, plan: PtahSchemaPlan) -> Manifest:
    return operation_document(schema, OperationType.APPLY, operation_id, plan=plan)


async def publish_plan(
    api: k8s_client.ApiClient,
    schema: PtahSchema,
    text: str,
    report: SchemaOperationReport,
    *,
    name: str | None = None,
    chunk_chars: int | None = None,
    chunk_data: dict[int, str] | None = None,
    spec_digest: str | None = None,
) -> PtahSchemaPlan:
    """A PtahSchemaPlan of `text` and its chunks, as the manager publishes them from a Plan's
    report. `chunk_data` puts other data into chunks (their references keep the digests of
    `text`'s); `spec_digest` gives the plan another digest than its text's."""
    planned = report.plan
    assert planned is not None
    assert report.target_identity_digest is not None
    namespace = str(schema.metadata.namespace)
    plan_name = name or f"{schema.metadata.name}-{secrets.token_hex(5)}"
    pieces = split_plan_text(text, chunk_chars) if chunk_chars else split_plan_text(text)
    spec = PtahSchemaPlanSpec.model_validate(
        {
            "schemaRef": {"name": schema.metadata.name, "uid": schema.metadata.uid},
            "planContractVersion": 2,
            "source": {
                "kind": "ConfigMap",
                "contentDigest": "sha256:" + "c" * 64,
                "configMapUID": "cm-uid",
            },
            "engine": schema.spec.target.engine.value,
            "dialect": planned.dialect,
            "targetIdentityDigest": report.target_identity_digest,
            "observedFingerprint": planned.observed_fingerprint,
            "desiredFingerprint": planned.desired_fingerprint,
            "executionBinding": {"image": "ptah"},
            "digest": spec_digest or sha256_digest(text.encode()),
            "size": len(text.encode()),
            "statementCount": max(planned.statement_count, 1),
            "approvalRequired": False,
            "chunks": [
                {"name": chunk_name(plan_name, i), "index": i, "digest": text_digest(p)}
                for i, p in enumerate(pieces)
            ],
            "fingerprint": "sha256:" + "0" * 64,
        }
    )
    spec = spec.model_copy(update={"fingerprint": schema_plan_fingerprint(spec)})
    custom: Any = k8s_client.CustomObjectsApi(api)
    created = await custom.create_namespaced_custom_object(
        GROUP,
        VERSION,
        namespace,
        "ptahschemaplans",
        {
            "apiVersion": API_VERSION,
            "kind": "PtahSchemaPlan",
            "metadata": {"name": plan_name, "namespace": namespace},
            "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
        },
    )
    plan = from_manifest(PtahSchemaPlan, created)
    for index, piece in enumerate(pieces):
        data = (chunk_data or {}).get(index, piece)
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "ptahschemaplanchunks",
            {
                "apiVersion": API_VERSION,
                "kind": "PtahSchemaPlanChunk",
                "metadata": {
                    "name": chunk_name(plan_name, index),
                    "namespace": namespace,
                    "ownerReferences": [
                        {
                            "apiVersion": API_VERSION,
                            "kind": "PtahSchemaPlan",
                            "name": plan_name,
                            "uid": plan.metadata.uid,
                        }
                    ],
                },
                "spec": {
                    "planRef": {"name": plan_name, "uid": plan.metadata.uid},
                    "index": index,
                    "data": data,
                    "digest": text_digest(piece),
                },
            },
        )
    return plan


async def read_report(
    api: k8s_client.ApiClient, namespace: str, operation_id: str
) -> dict[str, Any] | None:
    core: Any = k8s_client.CoreV1Api(api)
    try:
        record = await core.read_namespaced_config_map(result_record_name(operation_id), namespace)
    except k8s_client.ApiException as exc:
        if exc.status == 404:
            return None
        raise
    result: dict[str, Any] = json.loads(record.data[RESULT_KEY])
    return result


def checked_report(
    payload: dict[str, Any], schema: PtahSchema, operation_type: OperationType
) -> SchemaOperationReport:
    """The report as the manager reads it (reconcile/reports.read_report)."""
    read = reports.read_report(
        OperationResult(
            operation_id=payload["operationID"],
            operation_type=payload["type"],
            received_at=dt.datetime.now(dt.UTC),
            payload=payload,
        ),
        SchemaOperationReport,
        payload["operationID"],
        operation_type,
        str(schema.metadata.uid),
    )
    assert not isinstance(read, Unreadable), read
    return read


async def stored_pieces(api: k8s_client.ApiClient, namespace: str, operation_id: str) -> list[Any]:
    """The piece records of one operation, in index order."""
    core: Any = k8s_client.CoreV1Api(api)
    found = await core.list_namespaced_config_map(
        namespace,
        label_selector=f"operator.ptah.run/operation-id={operation_id},operator.ptah.run/plan-piece",
    )
    items = sorted(
        found.items, key=lambda cm: int(cm.metadata.labels["operator.ptah.run/plan-piece"])
    )
    for index, item in enumerate(items):
        assert item.metadata.name == plan_text_record_name(operation_id, index)
    return items


def joined_text(pieces: list[Any]) -> str:
    return "".join(item.data[PIECE_KEY] for item in pieces)
