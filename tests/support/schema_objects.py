"""PtahSchema objects for tests, and the runner played by the test.

`catalog_schema()`, `schema_plan_spec(...)` and `awaiting_approval(plan)` are API models
consistent with one another: a status in AwaitingApproval that supports its published plan
exactly (source, database, executor); a test changes one thing to make one binding move.

`schema_manifest(...)` is a ConfigMap-sourced PostgreSQL PtahSchema; `observe_document` and
`plan_document` are the reports a runner posts (contract ptah.run/result/v1), and
`report_record` / `piece_record` the ConfigMaps the result endpoint stores them in: the report
as `ptah-result-<hex>` (key result.json), each uploaded piece of the plan file as
`ptah-result-<hex>-<index>` (one key), both owned by the schema.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

from kubernetes_asyncio import client
from kubernetes_asyncio.client.exceptions import ApiException

from ptah_operator.api.common import (
    Condition,
    ConfigMapSource,
    KeyReference,
    ObjectReference,
    PlanReference,
    SourceRecord,
    Target,
)
from ptah_operator.api.constants import (
    API_VERSION,
    GROUP,
    VERSION,
    ConditionStatus,
    Engine,
    Reason,
    SchemaPhase,
)
from ptah_operator.api.fingerprints import plan_source_binding, schema_plan_fingerprint
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.names import RESULT_KEY
from ptah_operator.api.objectmeta import ObjectMeta
from ptah_operator.api.plans import (
    ChunkReference,
    Finding,
    PtahSchemaPlan,
    PtahSchemaPlanSpec,
    SeveritySummary,
)
from ptah_operator.api.result_seal import ResultSeal, body_digest
from ptah_operator.api.schema import (
    DriftCategory,
    DriftSummary,
    PtahSchema,
    PtahSchemaSpec,
    PtahSchemaStatus,
    SchemaPlanStatus,
)
from ptah_operator.results.endpoint import record_manifest
from ptah_operator.results.plan_text import piece_manifest
from ptah_operator.results.records import ClaimedReport, KubernetesResultStore
from tests.support.migration_objects import T0, config_map_record, d, executor

PLAN_SQL = "CREATE TABLE public.order_lines (id bigint NOT NULL PRIMARY KEY);\n"
DATABASE = "sha256:" + hashlib.sha256(b"database: catalog-primary").hexdigest()
SCHEMA_FILES = {"schema.hcl": 'table "order_lines" {\n  schema = schema.public\n}\n'}


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def schema_manifest(
    name: str,
    namespace: str,
    *,
    config_map: str = "catalog-schema",
    apply: str = "OnApproval",
    coordination_key: str | None = None,
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "PtahSchema",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "target": {
                "engine": "PostgreSQL",
                "coordinationKey": coordination_key or f"{namespace}/{name}",
                "urlFrom": {"name": f"{name}-database", "key": "url"},
            },
            "configMap": {"name": config_map},
            "policy": {"apply": apply},
            "execution": {"failureRetryInterval": "1m"},
        },
    }


def _resource(schema: dict[str, Any]) -> dict[str, str]:
    meta = schema["metadata"]
    return {
        "kind": "PtahSchema",
        "namespace": meta["namespace"],
        "name": meta["name"],
        "uid": meta["uid"],
    }


def _envelope(schema: dict[str, Any], operation_id: str, operation: str) -> dict[str, Any]:
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    return {
        "contract": "ptah.run/result/v1",
        "operationID": operation_id,
        "type": operation,
        "resource": _resource(schema),
        "startedAt": (now - dt.timedelta(seconds=3)).isoformat().replace("+00:00", "Z"),
        "finishedAt": now.isoformat().replace("+00:00", "Z"),
        "targetIdentityDigest": DATABASE,
    }


def observe_document(schema: dict[str, Any], operation_id: str, total: int = 1) -> dict[str, Any]:
    document = _envelope(schema, operation_id, "Observe")
    document["drift"] = {
        "digest": digest(f"drift {total}"),
        "dialect": "postgresql",
        "total": total,
        "highestSeverity": "Low",
        "categories": [{"category": "tables_added", "count": total, "highestSeverity": "Low"}],
    }
    return document


def plan_document(
    schema: dict[str, Any], operation_id: str, pieces: list[str], *, privilege: bool = False
) -> dict[str, Any]:
    text = "".join(pieces)
    document = _envelope(schema, operation_id, "Plan")
    document["plan"] = {
        "changes": True,
        "dialect": "postgresql",
        "observedFingerprint": digest("observed"),
        "desiredFingerprint": digest("desired " + text),
        "digest": digest(text),
        "size": len(text.encode()),
        "statementCount": 1,
        "severity": {
            "highest": "High" if privilege else "Low",
            "destructive": False,
            "privilegeChange": privilege,
        },
        "findings": [
            {
                "code": "TableAdded",
                "severity": "Low",
                "category": "tables_added",
                "object": "public.order_lines",
                "statementIndex": 0,
            }
        ],
        "findingsTotal": 1,
        "protectedTables": [],
        "pieces": [
            {"index": i, "digest": digest(p), "size": len(p.encode())} for i, p in enumerate(pieces)
        ],
    }
    return document


def report_record(document: dict[str, Any], seal: ResultSeal) -> dict[str, Any]:
    """The record the result endpoint stores a report in, sealed as it seals it."""
    return record_manifest(document, str(document["operationID"]), seal)


def piece_record(
    schema: dict[str, Any], operation_id: str, index: int, piece: str
) -> dict[str, Any]:
    """The record the result endpoint stores one uploaded piece of a plan file in."""
    namespace = schema["metadata"]["namespace"]
    return piece_manifest(schema, namespace, operation_id, index, piece)


async def create_config_map(api: client.ApiClient, manifest: dict[str, Any]) -> None:
    core: Any = client.CoreV1Api(api)
    await core.create_namespaced_config_map(manifest["metadata"]["namespace"], manifest)


async def store_report(api: client.ApiClient, record: dict[str, Any]) -> None:
    """Store a report as the result endpoint does: its record, then its digest in the claim of
    the resource that owns it (status.activeOperation.report), without which the controller
    does not believe the record (docs/security.md, "A deleted and replaced record")."""
    await create_config_map(api, record)
    owner = record["metadata"]["ownerReferences"][0]
    namespace = record["metadata"]["namespace"]
    store = KubernetesResultStore(api)
    claim = await store.resource_claim(owner["kind"], namespace, owner["name"])
    assert claim is not None
    digest = ClaimedReport(body_digest(record["data"][RESULT_KEY]))
    assert await store.write_report(owner["kind"], namespace, owner["name"], claim, digest)


# --- API models --------------------------------------------------------------------------------


def catalog_spec(config_map: str = "catalog-schema") -> PtahSchemaSpec:
    return PtahSchemaSpec(
        target=Target(
            engine=Engine.POSTGRESQL,
            coordination_key="test/catalog",
            url_from=KeyReference(name="catalog-database", key="url"),
        ),
        config_map=ConfigMapSource(name=config_map),
    )


def catalog_schema(
    name: str = "catalog",
    namespace: str = "application",
    uid: str | None = "s-uid-1",
    status: PtahSchemaStatus | None = None,
) -> PtahSchema:
    return PtahSchema(
        metadata=ObjectMeta(name=name, namespace=namespace, uid=uid),
        spec=catalog_spec(),
        status=status,
    )


def schema_plan_spec(
    schema_ref: ObjectReference,
    *,
    sql: str = PLAN_SQL,
    target: str = "target-1",
    source: SourceRecord | None = None,
    destructive: bool = False,
    privilege: bool = False,
    chunks: int = 1,
) -> PtahSchemaPlanSpec:
    """A plan of `sql` in `chunks` chunks; its name is `<schema>-<10 hex>` (plan_name)."""
    record = source or config_map_record()
    size = -(-len(sql) // chunks)
    pieces = [sql[i : i + size] for i in range(0, len(sql), size)]
    spec = PtahSchemaPlanSpec(
        schema_ref=schema_ref,
        plan_contract_version=2,
        source=plan_source_binding(record),
        engine=Engine.POSTGRESQL,
        dialect="postgresql",
        target_identity_digest=d(target),
        observed_fingerprint=d("observed"),
        desired_fingerprint=d("desired"),
        execution_binding=executor(),
        digest=digest(sql),
        size=len(sql.encode()),
        statement_count=1,
        severity=SeveritySummary(
            highest="Critical" if destructive else "High" if privilege else "Low",
            destructive=destructive,
            privilege_change=privilege,
        ),
        findings=[
            Finding(
                code="TableAdded",
                severity="Low",
                category="tables_added",
                object="public.order_lines",
                statement_index=0,
            )
        ],
        findings_total=1,
        approval_required=True,
        chunks=[
            ChunkReference(name=f"{schema_ref.name}-plan-c{i:02d}", index=i, digest=digest(piece))
            for i, piece in enumerate(pieces)
        ],
        fingerprint=d("placeholder"),
    )
    return spec.model_copy(update={"fingerprint": schema_plan_fingerprint(spec)})


def plan_pieces(spec: PtahSchemaPlanSpec, sql: str = PLAN_SQL) -> list[str]:
    """The chunk texts of a plan made by `schema_plan_spec` from `sql`."""
    size = -(-len(sql) // len(spec.chunks))
    return [sql[i : i + size] for i in range(0, len(sql), size)]


def schema_plan(
    spec: PtahSchemaPlanSpec, name: str | None = None, uid: str | None = "sp-uid-1"
) -> PtahSchemaPlan:
    return PtahSchemaPlan(
        metadata=ObjectMeta(
            name=name or f"{spec.schema_ref.name}-plan", namespace="application", uid=uid
        ),
        spec=spec,
    )


def awaiting_approval(
    plan: PtahSchemaPlan, *, source: SourceRecord | None = None
) -> PtahSchemaStatus:
    """A status in AwaitingApproval that supports the published plan `plan` exactly."""
    assert plan.metadata.name is not None
    return PtahSchemaStatus(
        observed_generation=1,
        phase=SchemaPhase.AWAITING_APPROVAL,
        conditions=[
            Condition(
                type="Ready",
                status=ConditionStatus.FALSE,
                last_transition_time=T0,
                reason=Reason.AWAITING_APPROVAL,
                message=f"plan {plan.metadata.name} waits for a PtahSchemaApproval",
            ),
            Condition(
                type="Progressing",
                status=ConditionStatus.FALSE,
                last_transition_time=T0,
                reason=Reason.AWAITING_APPROVAL,
            ),
        ],
        plan=SchemaPlanStatus(
            name=plan.metadata.name,
            uid=plan.metadata.uid,
            fingerprint=plan.spec.fingerprint,
            digest=plan.spec.digest,
            approval_required=True,
            operation_id="op-00000000a1",
            planned_at=T0,
        ),
        drift=DriftSummary(
            digest=d("drift"),
            dialect="postgresql",
            total=1,
            highest_severity="Low",
            categories=[DriftCategory(category="tables_added", count=1, highest_severity="Low")],
            observed_at=T0,
            target_identity_digest=plan.spec.target_identity_digest,
        ),
        source=source or config_map_record(),
        execution_binding=plan.spec.execution_binding,
    )


def plan_reference(plan: PtahSchemaPlan) -> PlanReference:
    assert plan.metadata.name is not None
    return PlanReference(
        name=plan.metadata.name, uid=plan.metadata.uid, fingerprint=plan.spec.fingerprint
    )


# --- on the API server -------------------------------------------------------------------------


async def create_schema(api: client.ApiClient, namespace: str, name: str) -> PtahSchema:
    body = PtahSchema(metadata=ObjectMeta(name=name), spec=catalog_spec()).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    created = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahschemas", body
    )
    return from_manifest(PtahSchema, created)


async def create_schema_plan(
    api: client.ApiClient, namespace: str, spec: PtahSchemaPlanSpec, name: str
) -> PtahSchemaPlan:
    body = PtahSchemaPlan(metadata=ObjectMeta(name=name), spec=spec).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    created = await client.CustomObjectsApi(api).create_namespaced_custom_object(
        GROUP, VERSION, namespace, "ptahschemaplans", body
    )
    return from_manifest(PtahSchemaPlan, created)


async def create_chunks(
    api: client.ApiClient, namespace: str, plan: PtahSchemaPlan, pieces: list[str]
) -> None:
    """The plan's chunks, as the manager makes them."""
    custom = client.CustomObjectsApi(api)
    for chunk, piece in zip(plan.spec.chunks, pieces, strict=True):
        await custom.create_namespaced_custom_object(
            GROUP,
            VERSION,
            namespace,
            "ptahschemaplanchunks",
            {
                "apiVersion": API_VERSION,
                "kind": "PtahSchemaPlanChunk",
                "metadata": {"name": chunk.name},
                "spec": {
                    "planRef": {"name": plan.metadata.name, "uid": plan.metadata.uid},
                    "index": chunk.index,
                    "data": piece,
                    "digest": chunk.digest,
                },
            },
        )


async def write_schema_status(
    api: client.ApiClient, namespace: str, name: str, status: PtahSchemaStatus
) -> PtahSchema:
    """Replace the schema's status through the status subresource."""
    custom = client.CustomObjectsApi(api)
    for _ in range(10):
        current = await custom.get_namespaced_custom_object(
            GROUP, VERSION, namespace, "ptahschemas", name
        )
        current["status"] = status.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            replaced = await custom.replace_namespaced_custom_object_status(
                GROUP, VERSION, namespace, "ptahschemas", name, current
            )
        except ApiException as exc:
            if exc.status == 409:
                continue
            raise
        return from_manifest(PtahSchema, replaced)
    raise AssertionError(f"the status of {name} kept changing under the test")
