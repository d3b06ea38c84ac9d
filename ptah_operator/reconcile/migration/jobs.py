"""The Jobs of a PtahMigration: History and Apply against the database, Resolve and Verify
against the source.

Each is one document (contract ptah.run/operation/v1) in one of the Jobs reconcile/jobs.py builds
for any resource; see that module for the Job contract (JOB-01 to JOB-03).
"""

from __future__ import annotations

from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import OperationType, SourceKind
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.source_policy import SourcePolicy
from ptah_operator.reconcile.jobs import (
    Manifest,
    database_job,
    operation_document,
    source_block,
    source_resolve_job,
    source_verify_job,
)
from ptah_operator.reconcile.world import RunnerConfig


def _database_job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_type: OperationType,
    operation_id: str,
    record: SourceRecord,
    plan: PtahMigrationPlan | None,
) -> Manifest:
    document = operation_document(
        migration, operation_type, operation_id, record.content_digest, plan
    )
    return database_job(migration, runner, operation_type, operation_id, record, document)


def history_job(
    migration: PtahMigration, runner: RunnerConfig, operation_id: str, record: SourceRecord
) -> Manifest:
    """A read of the revision table against the bound files (no Lease: LCK-07)."""
    return _database_job(migration, runner, OperationType.HISTORY, operation_id, record, None)


def apply_job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_id: str,
    record: SourceRecord,
    plan: PtahMigrationPlan,
) -> Manifest:
    """A run of exactly the plan's sequence: the runner refuses any other selection (MIG-49)."""
    return _database_job(migration, runner, OperationType.APPLY, operation_id, record, plan)


def resolve_job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_id: str,
    source_policy: SourcePolicy | None = None,
) -> Manifest:
    """Resolve a Git ref to a commit or an OCI reference to a digest (SRC-GIT-02, SRC-OCI-01).
    Its one container holds the source credential and never the database URL (JOB-01). A
    source policy's size rule travels with it: the Job checks the commit's selected files
    against it before the commit is recorded (SRC-POL-04)."""
    document = operation_document(
        migration, OperationType.RESOLVE, operation_id, None, source=source_block(migration)
    )
    if source_policy is not None and source_policy.max_bytes is not None:
        document["sourcePolicy"] = {"maxBytes": source_policy.max_bytes}
    return source_resolve_job(migration, runner, operation_id, document)


def verify_job(
    migration: PtahMigration, runner: RunnerConfig, operation_id: str, record: SourceRecord
) -> Manifest:
    """Evaluate the verification policy against the digest Resolve pinned, and inspect that
    artifact's type (SRC-OCI-02). The policy is mounted from the ConfigMap key it names."""
    if migration.spec.artifact is None or record.kind != SourceKind.ARTIFACT:
        raise ValueError("only an OCI artifact pinned to a digest is verified")
    document = operation_document(
        migration,
        OperationType.VERIFY,
        operation_id,
        None,
        source=source_block(migration, record),
    )
    return source_verify_job(migration, runner, operation_id, record, document)
