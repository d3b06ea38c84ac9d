"""Pure builders of a schema operation's Job and the document that tells the runner what to do.

The Job contract is the migration's (docs/design/migration-path.md), built by the same helpers
(reconcile/jobs.py): deterministic names from the operation id, `backoffLimit: 0`, a non-root
Pod with no service account token, the result token mounted from the operation Secret, and
credential separation (JOB-01):

- Resolve and Verify: one container that reads the source (and holds its credential or mounts
  the verification policy) and never the database URL.
- Observe and Plan: the `fetch` init container (Git and OCI only, holding the source
  credential) and the `source` init container, which checks the files against the bound
  content digest before copying them where the `run` container reads them (SRC-CM-08,
  SRC-GIT-06, SRC-GIT-07, SRC-OCI-06); the `run` container holds the URL and nothing else.
- Apply: only the `run` container. It reads no source files: the plan it runs is the
  published plan, which it fetches from the manager's result endpoint with its operation
  token and hashes against the digest its document names immediately before it runs it
  (SCH-57). A Git credential never reaches the Pod that changes the database.

The operation document (contract ptah.run/operation/v1, env PTAH_OPERATION) holds no SQL, no
URL and no credential.
"""

from __future__ import annotations

from typing import Any

from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import ARTIFACT_TYPE_SCHEMA, OperationType
from ptah_operator.api.contracts.operation import (
    OperationPolicy,
    OperationScope,
    SchemaDocument,
    SchemaPlanRef,
    SchemaResource,
    SourceLimits,
)
from ptah_operator.api.fields import parse_duration
from ptah_operator.api.plans import PtahSchemaPlan
from ptah_operator.api.schema import PtahSchema, SchemaPolicy
from ptah_operator.api.source_policy import SourcePolicy
from ptah_operator.reconcile.jobs import (
    Manifest,
    database_job,
    source_block,
    source_resolve_job,
    source_verify_job,
)
from ptah_operator.reconcile.world import RunnerConfig

_YEAR_SECONDS = 365 * 24 * 3600.0


def _timeouts(policy: SchemaPolicy) -> dict[str, Any]:
    """The policy's timeouts in seconds, as the runner holds every statement to them (at most
    a year: MySQL's bound, and longer than any lock is worth waiting for)."""

    def seconds(value: str) -> float:
        return min(parse_duration(value).total_seconds(), _YEAR_SECONDS)

    found: dict[str, Any] = {"lock_timeout_seconds": seconds(policy.lock_timeout)}
    if policy.statement_timeout is not None:
        found["statement_timeout_seconds"] = seconds(policy.statement_timeout)
    return found


def operation_document(
    schema: PtahSchema,
    operation_type: OperationType,
    operation_id: str,
    *,
    content_digest: str | None = None,
    source: Manifest | None = None,
    expected_target: str | None = None,
    proof: bool = False,
    plan: PtahSchemaPlan | None = None,
) -> Manifest:
    """What the runner is asked to do. `expectedTargetDigest` is the database a read is bound
    to (the runner reports the one it opened; the manager compares); an Apply's
    `plannedTargetDigest` is the database it must refuse to touch any other than."""
    spec = schema.spec
    scope = spec.scope
    fields: dict[str, Any] = {
        "operation_id": operation_id,
        "type": operation_type.value,
        "resource": SchemaResource.of(
            "PtahSchema", schema.metadata.namespace, schema.metadata.name, schema.metadata.uid
        ),
        "engine": spec.target.engine.value,
        "artifact_type": ARTIFACT_TYPE_SCHEMA,
        "scope": OperationScope.model_construct(
            schemas=tuple(scope.schemas) if scope else (),
            include_tables=tuple(scope.include_tables) if scope else (),
            exclude_tables=tuple(scope.exclude_tables) if scope else (),
        ),
        "policy": OperationPolicy.model_construct(
            allow_destructive=spec.policy.allow_destructive,
            protected_tables=tuple(spec.policy.protected_tables),
            **_timeouts(spec.policy),
        ),
    }
    if content_digest is not None:
        fields["content_digest"] = content_digest
    if source is not None:
        fields["source"] = source
    if expected_target is not None:
        fields["expected_target_digest"] = expected_target
    if proof:
        fields["proof"] = True
    if plan is not None:
        named: dict[str, Any] = {"name": plan.metadata.name, "uid": plan.metadata.uid}
        fields["plan"] = SchemaPlanRef.model_construct(
            **named,
            fingerprint=plan.spec.fingerprint,
            digest=plan.spec.digest,
            size=plan.spec.size,
            observed_fingerprint=plan.spec.observed_fingerprint,
            chunks=len(plan.spec.chunks),
        )
        fields["planned_target_digest"] = plan.spec.target_identity_digest
    return SchemaDocument.model_construct(**fields).as_json()


def read_job(
    schema: PtahSchema,
    runner: RunnerConfig,
    operation_type: OperationType,
    operation_id: str,
    record: SourceRecord,
    *,
    expected_target: str | None,
    proof: bool,
) -> Manifest:
    """An Observe or a Plan of the database against the bound files."""
    if operation_type not in (OperationType.OBSERVE, OperationType.PLAN):
        raise ValueError(f"a {operation_type.value} is not a read of the database")
    if not record.content_digest:
        raise ValueError("the source record has no content digest")
    document = operation_document(
        schema,
        operation_type,
        operation_id,
        content_digest=record.content_digest,
        expected_target=expected_target,
        proof=proof,
    )
    return database_job(schema, runner, operation_type, operation_id, record, document)


def apply_job(
    schema: PtahSchema, runner: RunnerConfig, operation_id: str, plan: PtahSchemaPlan
) -> Manifest:
    """Run exactly the published plan: no source files, the plan's bytes fetched and hashed."""
    document = operation_document(schema, OperationType.APPLY, operation_id, plan=plan)
    return database_job(schema, runner, OperationType.APPLY, operation_id, None, document)


def resolve_job(
    schema: PtahSchema,
    runner: RunnerConfig,
    operation_id: str,
    source_policy: SourcePolicy | None = None,
) -> Manifest:
    """Resolve a Git ref to a commit or an OCI reference to a digest (SCH-04); a source
    policy's size rule travels with it (SRC-POL-04)."""
    document = operation_document(
        schema, OperationType.RESOLVE, operation_id, source=source_block(schema)
    )
    if source_policy is not None and source_policy.max_bytes is not None:
        document["sourcePolicy"] = SourceLimits.model_construct(
            max_bytes=source_policy.max_bytes
        ).as_json()
    return source_resolve_job(schema, runner, operation_id, document)


def verify_job(
    schema: PtahSchema, runner: RunnerConfig, operation_id: str, record: SourceRecord
) -> Manifest:
    """Hold the pinned digest to the verification policy and inspect its artifact type, which
    for a schema must be application/vnd.stokaro.ptah.schema.v1 (SRC-OCI-02, SRC-OCI-04)."""
    document = operation_document(
        schema, OperationType.VERIFY, operation_id, source=source_block(schema, record)
    )
    return source_verify_job(schema, runner, operation_id, record, document)
