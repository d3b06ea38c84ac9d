"""The field tables `manifest` reads the read verbs' objects by: written by `shapes_gen` from
the API models (do not edit; run `python -m ptah_operator.cli.kubectl.shapes_gen`).

SHAPES: model name -> [extra keys allowed, fields]; a field is [Python name, wire name, type,
default as JSON or REQUIRED]. A type is ["str"], ["int"], ["bool"], ["time"], ["any"],
["enum", ENUM], ["literal", ENUM or null, values], ["model", MODEL], ["list", TYPE],
["dict", TYPE] or ["optional", TYPE]; ENUM names a class of api.constants. JSON in a string:
read in a millisecond, and no formatter rewrites it.
"""

from __future__ import annotations

import json
from typing import Any

REQUIRED = "<required>"

SHAPES: dict[str, Any] = json.loads(
    r"""
{
"ActiveOperation": [false, [
    ["operation_id", "operationID", ["str"], "<required>"],
    ["type", "type", ["enum", "OperationType"], "<required>"],
    ["job_name", "jobName", ["optional", ["str"]], null],
    ["job_uid", "jobUID", ["optional", ["str"]], null],
    ["job_created_at", "jobCreatedAt", ["optional", ["time"]], null],
    ["job_gone_at", "jobGoneAt", ["optional", ["time"]], null],
    ["started_at", "startedAt", ["time"], "<required>"],
    ["attempt", "attempt", ["int"], 1],
    ["retry_at", "retryAt", ["optional", ["time"]], null],
    ["last_failure_reason", "lastFailureReason", ["optional", ["str"]], null],
    ["generation", "generation", ["optional", ["int"]], null],
    ["spec_digest", "specDigest", ["optional", ["str"]], null],
    ["source", "source", ["optional", ["model", "SourceRecord"]], null],
    ["plan", "plan", ["optional", ["model", "PlanReference"]], null],
    ["approval", "approval", ["optional", ["model", "ObjectReference"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null],
    ["authorization", "authorization", ["optional", ["enum", "Authorization"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null],
    ["execution_binding", "executionBinding", ["optional", ["model", "ExecutionBinding"]], null],
    ["serves_proof", "servesProof", ["optional", ["bool"]], null],
    ["read_request", "readRequest", ["optional", ["str"]], null],
    ["lease_name", "leaseName", ["optional", ["str"]], null],
    ["lease_epoch", "leaseEpoch", ["optional", ["int"]], null],
    ["lease_continuity_lost", "leaseContinuityLost", ["optional", ["bool"]], null]
]],
"AheadVersions": [false, [
    ["database_version", "databaseVersion", ["str"], "<required>"],
    ["artifact_version", "artifactVersion", ["optional", ["str"]], null]
]],
"AppliedPlan": [false, [
    ["plan", "plan", ["model", "PlanReference"], "<required>"],
    ["digest", "digest", ["str"], "<required>"],
    ["operation_id", "operationID", ["optional", ["str"]], null],
    ["approval", "approval", ["optional", ["model", "ObjectReference"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null],
    ["applied_at", "appliedAt", ["optional", ["time"]], null],
    ["verified_at", "verifiedAt", ["optional", ["time"]], null]
]],
"ApplyRecord": [false, [
    ["operation_id", "operationID", ["str"], "<required>"],
    ["outcome", "outcome", ["optional", ["enum", "ApplyOutcome"]], null],
    ["reason", "reason", ["optional", ["str"]], null],
    ["plan", "plan", ["model", "PlanReference"], "<required>"],
    ["plan_digest", "planDigest", ["optional", ["str"]], null],
    ["approval", "approval", ["optional", ["model", "ObjectReference"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null],
    ["job", "job", ["optional", ["model", "JobReference"]], null],
    ["started_at", "startedAt", ["optional", ["time"]], null],
    ["finished_at", "finishedAt", ["optional", ["time"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null],
    ["verification", "verification", ["optional", ["model", "SchemaVerification"]], null],
    ["authorization", "authorization", ["optional", ["enum", "Authorization"]], null],
    ["source", "source", ["optional", ["model", "SourceRecord"]], null],
    ["execution_binding", "executionBinding", ["optional", ["model", "ExecutionBinding"]], null],
    ["generation", "generation", ["optional", ["int"]], null],
    ["spec_digest", "specDigest", ["optional", ["str"]], null]
]],
"ArtifactSource": [false, [
    ["oci_ref", "ociRef", ["str"], "<required>"],
    ["verification_policy_from", "verificationPolicyFrom", ["model", "KeyReference"], "<required>"],
    ["secret_ref", "secretRef", ["optional", ["model", "LocalObjectReference"]], null]
]],
"ChunkReference": [false, [
    ["name", "name", ["str"], "<required>"],
    ["index", "index", ["int"], "<required>"],
    ["digest", "digest", ["str"], "<required>"]
]],
"Condition": [false, [
    ["type", "type", ["str"], "<required>"],
    ["status", "status", ["enum", "ConditionStatus"], "<required>"],
    ["observed_generation", "observedGeneration", ["optional", ["int"]], null],
    ["last_transition_time", "lastTransitionTime", ["time"], "<required>"],
    ["reason", "reason", ["str"], "<required>"],
    ["message", "message", ["str"], ""]
]],
"ConfigMapSource": [false, [
    ["name", "name", ["str"], "<required>"],
    ["keys", "keys", ["optional", ["list", ["str"]]], null],
    ["path", "path", ["optional", ["str"]], null],
    ["source_policy_from", "sourcePolicyFrom", ["optional", ["model", "KeyReference"]], null]
]],
"DirtyRevision": [false, [
    ["version", "version", ["str"], "<required>"],
    ["description", "description", ["optional", ["str"]], null]
]],
"DriftCategory": [false, [
    ["category", "category", ["str"], "<required>"],
    ["count", "count", ["int"], "<required>"],
    ["highest_severity", "highestSeverity", ["optional", ["enum", "Severity"]], null]
]],
"DriftSummary": [false, [
    ["digest", "digest", ["str"], "<required>"],
    ["dialect", "dialect", ["str"], "<required>"],
    ["total", "total", ["int"], "<required>"],
    ["highest_severity", "highestSeverity", ["optional", ["enum", "Severity"]], null],
    ["categories", "categories", ["list", ["model", "DriftCategory"]], []],
    ["observed_at", "observedAt", ["optional", ["time"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null]
]],
"Execution": [false, [
    ["failure_retry_interval", "failureRetryInterval", ["str"], "1m"],
    ["image", "image", ["optional", ["str"]], null],
    ["service_account_name", "serviceAccountName", ["optional", ["str"]], null],
    ["resources", "resources", ["optional", ["model", "ResourceRequirements"]], null]
]],
"ExecutionBinding": [false, [
    ["image", "image", ["optional", ["str"]], null],
    ["runner_version", "runnerVersion", ["optional", ["str"]], null],
    ["protocol_version", "protocolVersion", ["optional", ["int"]], null],
    ["engine_version", "engineVersion", ["optional", ["str"]], null],
    ["digest", "digest", ["optional", ["str"]], null]
]],
"Finding": [false, [
    ["code", "code", ["str"], "<required>"],
    ["severity", "severity", ["enum", "Severity"], "<required>"],
    ["category", "category", ["optional", ["str"]], null],
    ["object", "object", ["optional", ["str"]], null],
    ["related", "related", ["optional", ["str"]], null],
    ["statement_index", "statementIndex", ["optional", ["int"]], null]
]],
"GitSource": [false, [
    ["repository", "repository", ["str"], "<required>"],
    ["ref", "ref", ["str"], "<required>"],
    ["path", "path", ["optional", ["str"]], null],
    ["secret_ref", "secretRef", ["optional", ["model", "LocalObjectReference"]], null],
    ["source_policy_from", "sourcePolicyFrom", ["optional", ["model", "KeyReference"]], null]
]],
"History": [false, [
    ["verdict", "verdict", ["optional", ["enum", "HistoryVerdict"]], null],
    ["current_version", "currentVersion", ["optional", ["str"]], null],
    ["checkpoint_version", "checkpointVersion", ["optional", ["str"]], null],
    ["applied_count", "appliedCount", ["int"], 0],
    ["pending_count", "pendingCount", ["int"], 0],
    ["pending_versions", "pendingVersions", ["list", ["str"]], []],
    ["dirty", "dirty", ["optional", ["model", "DirtyRevision"]], null],
    ["modified_versions", "modifiedVersions", ["list", ["str"]], []],
    ["out_of_order_versions", "outOfOrderVersions", ["list", ["str"]], []],
    ["ahead", "ahead", ["optional", ["model", "AheadVersions"]], null],
    ["fingerprint", "fingerprint", ["optional", ["str"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null],
    ["operation_id", "operationID", ["optional", ["str"]], null],
    ["read_at", "readAt", ["optional", ["time"]], null],
    ["revisions", "revisions", ["list", ["model", "Revision"]], []]
]],
"JobReference": [false, [
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["optional", ["str"]], null]
]],
"Journal": [false, [
    ["covered_since", "coveredSince", ["optional", ["time"]], null],
    ["entries", "entries", ["list", ["model", "JournalEntry"]], []]
]],
"JournalEntry": [false, [
    ["type", "type", ["enum", "JournalEntryType"], "<required>"],
    ["time", "time", ["time"], "<required>"],
    ["operation", "operation", ["optional", ["enum", "OperationType"]], null],
    ["operation_id", "operationID", ["optional", ["str"]], null],
    ["plan_name", "planName", ["optional", ["str"]], null],
    ["plan_uid", "planUID", ["optional", ["str"]], null],
    ["plan_fingerprint", "planFingerprint", ["optional", ["str"]], null],
    ["approval_name", "approvalName", ["optional", ["str"]], null],
    ["approval_uid", "approvalUID", ["optional", ["str"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null],
    ["acknowledgment_name", "acknowledgmentName", ["optional", ["str"]], null],
    ["acknowledgment_uid", "acknowledgmentUID", ["optional", ["str"]], null],
    ["acknowledged_by", "acknowledgedBy", ["optional", ["model", "UserInfo"]], null],
    ["job_name", "jobName", ["optional", ["str"]], null],
    ["job_uid", "jobUID", ["optional", ["str"]], null],
    ["authorization", "authorization", ["optional", ["enum", "Authorization"]], null],
    ["outcome", "outcome", ["optional", ["enum", "JournalOutcome"]], null],
    ["reason", "reason", ["optional", ["str"]], null],
    ["count", "count", ["optional", ["int"]], null],
    ["approval_required", "approvalRequired", ["optional", ["bool"]], null],
    ["replaced", "replaced", ["optional", ["model", "PlanReference"]], null],
    ["versions_applied", "versionsApplied", ["optional", ["int"]], null],
    ["stopped_at", "stoppedAt", ["optional", ["str"]], null]
]],
"KeyReference": [false, [
    ["name", "name", ["str"], "<required>"],
    ["key", "key", ["str"], "<required>"]
]],
"LastRun": [false, [
    ["operation_id", "operationID", ["str"], "<required>"],
    ["outcome", "outcome", ["enum", "RunOutcome"], "<required>"],
    ["plan", "plan", ["model", "PlanReference"], "<required>"],
    ["approval", "approval", ["optional", ["model", "ObjectReference"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null],
    ["job", "job", ["optional", ["model", "JobReference"]], null],
    ["authorization", "authorization", ["optional", ["enum", "Authorization"]], null],
    ["applied_versions", "appliedVersions", ["list", ["str"]], []],
    ["started_at", "startedAt", ["optional", ["time"]], null],
    ["finished_at", "finishedAt", ["optional", ["time"]], null],
    ["failure", "failure", ["optional", ["model", "RunFailure"]], null],
    ["reason", "reason", ["optional", ["str"]], null],
    ["stopped_at", "stoppedAt", ["optional", ["model", "RunStoppedAt"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null],
    ["source", "source", ["optional", ["model", "SourceRecord"]], null],
    ["execution_binding", "executionBinding", ["optional", ["model", "ExecutionBinding"]], null],
    ["verification", "verification", ["optional", ["model", "RunVerification"]], null],
    ["message", "message", ["optional", ["str"]], null],
    ["generation", "generation", ["optional", ["int"]], null]
]],
"LocalObjectReference": [false, [
    ["name", "name", ["str"], "<required>"]
]],
"MigrationPolicy": [false, [
    ["apply", "apply", ["enum", "ApplyPolicy"], "OnApproval"],
    ["transaction_mode", "transactionMode", ["optional", ["enum", "TransactionMode"]], null],
    ["revision_table", "revisionTable", ["model", "RevisionTable"], {"schema": null, "name": "schema_migrations"}],
    ["require_distinct_approver", "requireDistinctApprover", ["bool"], false]
]],
"ObjectMeta": [true, [
    ["name", "name", ["optional", ["str"]], null],
    ["generate_name", "generateName", ["optional", ["str"]], null],
    ["namespace", "namespace", ["optional", ["str"]], null],
    ["uid", "uid", ["optional", ["str"]], null],
    ["resource_version", "resourceVersion", ["optional", ["str"]], null],
    ["generation", "generation", ["optional", ["int"]], null],
    ["creation_timestamp", "creationTimestamp", ["optional", ["time"]], null],
    ["deletion_timestamp", "deletionTimestamp", ["optional", ["time"]], null],
    ["labels", "labels", ["optional", ["dict", ["str"]]], null],
    ["annotations", "annotations", ["optional", ["dict", ["str"]]], null],
    ["owner_references", "ownerReferences", ["optional", ["list", ["model", "OwnerReference"]]], null],
    ["finalizers", "finalizers", ["optional", ["list", ["str"]]], null]
]],
"ObjectReference": [false, [
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["str"], "<required>"]
]],
"OwnerReference": [true, [
    ["api_version", "apiVersion", ["str"], "<required>"],
    ["kind", "kind", ["str"], "<required>"],
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["str"], "<required>"],
    ["controller", "controller", ["optional", ["bool"]], null],
    ["block_owner_deletion", "blockOwnerDeletion", ["optional", ["bool"]], null]
]],
"PlanReference": [false, [
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["optional", ["str"]], null],
    ["fingerprint", "fingerprint", ["optional", ["str"]], null]
]],
"PlanSourceBinding": [false, [
    ["kind", "kind", ["enum", "SourceKind"], "<required>"],
    ["oci_digest", "ociDigest", ["optional", ["str"]], null],
    ["verification_policy_digest", "verificationPolicyDigest", ["optional", ["str"]], null],
    ["content_digest", "contentDigest", ["optional", ["str"]], null],
    ["config_map_uid", "configMapUID", ["optional", ["str"]], null],
    ["repository_path_digest", "repositoryPathDigest", ["optional", ["str"]], null],
    ["source_policy_digest", "sourcePolicyDigest", ["optional", ["str"]], null]
]],
"PlannedVersion": [false, [
    ["version", "version", ["str"], "<required>"],
    ["description", "description", ["optional", ["str"]], null],
    ["checksum", "checksum", ["str"], "<required>"]
]],
"PtahMigration": [false, [
    ["api_version", "apiVersion", ["literal", null, ["operator.ptah.run/v1alpha1"]], "operator.ptah.run/v1alpha1"],
    ["kind", "kind", ["literal", null, ["PtahMigration"]], "PtahMigration"],
    ["metadata", "metadata", ["model", "ObjectMeta"], {"name": null, "generateName": null, "namespace": null, "uid": null, "resourceVersion": null, "generation": null, "creationTimestamp": null, "deletionTimestamp": null, "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null}],
    ["spec", "spec", ["model", "PtahMigrationSpec"], "<required>"],
    ["status", "status", ["optional", ["model", "PtahMigrationStatus"]], null]
]],
"PtahMigrationPlan": [false, [
    ["api_version", "apiVersion", ["literal", null, ["operator.ptah.run/v1alpha1"]], "operator.ptah.run/v1alpha1"],
    ["kind", "kind", ["literal", null, ["PtahMigrationPlan"]], "PtahMigrationPlan"],
    ["metadata", "metadata", ["model", "ObjectMeta"], {"name": null, "generateName": null, "namespace": null, "uid": null, "resourceVersion": null, "generation": null, "creationTimestamp": null, "deletionTimestamp": null, "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null}],
    ["spec", "spec", ["model", "PtahMigrationPlanSpec"], "<required>"]
]],
"PtahMigrationPlanSpec": [false, [
    ["migration_ref", "migrationRef", ["model", "ObjectReference"], "<required>"],
    ["plan_contract_version", "planContractVersion", ["literal", null, [1, 2]], "<required>"],
    ["source", "source", ["model", "PlanSourceBinding"], "<required>"],
    ["engine", "engine", ["enum", "Engine"], "<required>"],
    ["target_identity_digest", "targetIdentityDigest", ["str"], "<required>"],
    ["history_fingerprint", "historyFingerprint", ["str"], "<required>"],
    ["revision_table", "revisionTable", ["model", "RevisionTable"], {"schema": null, "name": "schema_migrations"}],
    ["transaction_mode", "transactionMode", ["optional", ["enum", "TransactionMode"]], null],
    ["execution_binding", "executionBinding", ["model", "ExecutionBinding"], "<required>"],
    ["from_version", "fromVersion", ["optional", ["str"]], null],
    ["to_version", "toVersion", ["str"], "<required>"],
    ["versions", "versions", ["list", ["model", "PlannedVersion"]], "<required>"],
    ["fingerprint", "fingerprint", ["str"], "<required>"]
]],
"PtahMigrationSpec": [false, [
    ["target", "target", ["model", "Target"], "<required>"],
    ["artifact", "artifact", ["optional", ["model", "ArtifactSource"]], null],
    ["config_map", "configMap", ["optional", ["model", "ConfigMapSource"]], null],
    ["git", "git", ["optional", ["model", "GitSource"]], null],
    ["interval", "interval", ["str"], "10m"],
    ["execution", "execution", ["model", "Execution"], {"failureRetryInterval": "1m", "image": null, "serviceAccountName": null, "resources": null}],
    ["suspend", "suspend", ["bool"], false],
    ["policy", "policy", ["model", "MigrationPolicy"], {"apply": "OnApproval", "transactionMode": null, "revisionTable": {"schema": null, "name": "schema_migrations"}, "requireDistinctApprover": false}]
]],
"PtahMigrationStatus": [false, [
    ["observed_generation", "observedGeneration", ["optional", ["int"]], null],
    ["conditions", "conditions", ["list", ["model", "Condition"]], []],
    ["active_operation", "activeOperation", ["optional", ["model", "ActiveOperation"]], null],
    ["source", "source", ["optional", ["model", "SourceRecord"]], null],
    ["execution_binding", "executionBinding", ["optional", ["model", "ExecutionBinding"]], null],
    ["last_read_request", "lastReadRequest", ["optional", ["str"]], null],
    ["next_reconciliation_time", "nextReconciliationTime", ["optional", ["time"]], null],
    ["message", "message", ["optional", ["str"]], null],
    ["carried_out_plans", "carriedOutPlans", ["optional", ["list", ["str"]]], null],
    ["phase", "phase", ["optional", ["enum", "MigrationPhase"]], null],
    ["plan", "plan", ["optional", ["model", "PublishedPlan"]], null],
    ["history", "history", ["optional", ["model", "History"]], null],
    ["last_run", "lastRun", ["optional", ["model", "LastRun"]], null],
    ["unresolved_run", "unresolvedRun", ["optional", ["model", "UnresolvedRun"]], null],
    ["journal", "journal", ["optional", ["model", "Journal"]], null]
]],
"PtahSchema": [false, [
    ["api_version", "apiVersion", ["literal", null, ["operator.ptah.run/v1alpha1"]], "operator.ptah.run/v1alpha1"],
    ["kind", "kind", ["literal", null, ["PtahSchema"]], "PtahSchema"],
    ["metadata", "metadata", ["model", "ObjectMeta"], {"name": null, "generateName": null, "namespace": null, "uid": null, "resourceVersion": null, "generation": null, "creationTimestamp": null, "deletionTimestamp": null, "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null}],
    ["spec", "spec", ["model", "PtahSchemaSpec"], "<required>"],
    ["status", "status", ["optional", ["model", "PtahSchemaStatus"]], null]
]],
"PtahSchemaPlan": [false, [
    ["api_version", "apiVersion", ["literal", null, ["operator.ptah.run/v1alpha1"]], "operator.ptah.run/v1alpha1"],
    ["kind", "kind", ["literal", null, ["PtahSchemaPlan"]], "PtahSchemaPlan"],
    ["metadata", "metadata", ["model", "ObjectMeta"], {"name": null, "generateName": null, "namespace": null, "uid": null, "resourceVersion": null, "generation": null, "creationTimestamp": null, "deletionTimestamp": null, "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null}],
    ["spec", "spec", ["model", "PtahSchemaPlanSpec"], "<required>"]
]],
"PtahSchemaPlanChunk": [false, [
    ["api_version", "apiVersion", ["literal", null, ["operator.ptah.run/v1alpha1"]], "operator.ptah.run/v1alpha1"],
    ["kind", "kind", ["literal", null, ["PtahSchemaPlanChunk"]], "PtahSchemaPlanChunk"],
    ["metadata", "metadata", ["model", "ObjectMeta"], {"name": null, "generateName": null, "namespace": null, "uid": null, "resourceVersion": null, "generation": null, "creationTimestamp": null, "deletionTimestamp": null, "labels": null, "annotations": null, "ownerReferences": null, "finalizers": null}],
    ["spec", "spec", ["model", "PtahSchemaPlanChunkSpec"], "<required>"]
]],
"PtahSchemaPlanChunkSpec": [false, [
    ["plan_ref", "planRef", ["model", "ObjectReference"], "<required>"],
    ["index", "index", ["int"], "<required>"],
    ["data", "data", ["str"], "<required>"],
    ["digest", "digest", ["str"], "<required>"]
]],
"PtahSchemaPlanSpec": [false, [
    ["schema_ref", "schemaRef", ["model", "ObjectReference"], "<required>"],
    ["plan_contract_version", "planContractVersion", ["literal", null, [1, 2]], "<required>"],
    ["source", "source", ["model", "PlanSourceBinding"], "<required>"],
    ["engine", "engine", ["enum", "Engine"], "<required>"],
    ["dialect", "dialect", ["optional", ["str"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["str"], "<required>"],
    ["observed_fingerprint", "observedFingerprint", ["str"], "<required>"],
    ["desired_fingerprint", "desiredFingerprint", ["str"], "<required>"],
    ["execution_binding", "executionBinding", ["model", "ExecutionBinding"], "<required>"],
    ["digest", "digest", ["str"], "<required>"],
    ["size", "size", ["int"], "<required>"],
    ["statement_count", "statementCount", ["int"], "<required>"],
    ["severity", "severity", ["model", "SeveritySummary"], {"highest": null, "destructive": false, "privilegeChange": false}],
    ["findings", "findings", ["list", ["model", "Finding"]], []],
    ["findings_total", "findingsTotal", ["int"], 0],
    ["approval_required", "approvalRequired", ["bool"], "<required>"],
    ["chunks", "chunks", ["list", ["model", "ChunkReference"]], "<required>"],
    ["fingerprint", "fingerprint", ["str"], "<required>"]
]],
"PtahSchemaSpec": [false, [
    ["target", "target", ["model", "Target"], "<required>"],
    ["artifact", "artifact", ["optional", ["model", "ArtifactSource"]], null],
    ["config_map", "configMap", ["optional", ["model", "ConfigMapSource"]], null],
    ["git", "git", ["optional", ["model", "GitSource"]], null],
    ["interval", "interval", ["str"], "10m"],
    ["execution", "execution", ["model", "Execution"], {"failureRetryInterval": "1m", "image": null, "serviceAccountName": null, "resources": null}],
    ["suspend", "suspend", ["bool"], false],
    ["policy", "policy", ["model", "SchemaPolicy"], {"apply": "OnApproval", "allowDestructive": false, "protectedTables": [], "lockTimeout": "30s", "statementTimeout": null, "requireDistinctApprover": false}],
    ["scope", "scope", ["optional", ["model", "SchemaScope"]], null]
]],
"PtahSchemaStatus": [false, [
    ["observed_generation", "observedGeneration", ["optional", ["int"]], null],
    ["conditions", "conditions", ["list", ["model", "Condition"]], []],
    ["active_operation", "activeOperation", ["optional", ["model", "ActiveOperation"]], null],
    ["source", "source", ["optional", ["model", "SourceRecord"]], null],
    ["execution_binding", "executionBinding", ["optional", ["model", "ExecutionBinding"]], null],
    ["last_read_request", "lastReadRequest", ["optional", ["str"]], null],
    ["next_reconciliation_time", "nextReconciliationTime", ["optional", ["time"]], null],
    ["message", "message", ["optional", ["str"]], null],
    ["carried_out_plans", "carriedOutPlans", ["optional", ["list", ["str"]]], null],
    ["phase", "phase", ["optional", ["enum", "SchemaPhase"]], null],
    ["plan", "plan", ["optional", ["model", "SchemaPlanStatus"]], null],
    ["drift", "drift", ["optional", ["model", "DriftSummary"]], null],
    ["last_apply", "lastApply", ["optional", ["model", "ApplyRecord"]], null],
    ["applied", "applied", ["optional", ["model", "AppliedPlan"]], null],
    ["retired_plan", "retiredPlan", ["optional", ["model", "PlanReference"]], null],
    ["journal", "journal", ["optional", ["model", "Journal"]], null]
]],
"PublishedPlan": [false, [
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["optional", ["str"]], null],
    ["fingerprint", "fingerprint", ["optional", ["str"]], null],
    ["operation_id", "operationID", ["optional", ["str"]], null]
]],
"ResourceRequirements": [false, [
    ["limits", "limits", ["optional", ["dict", ["any"]]], null],
    ["requests", "requests", ["optional", ["dict", ["any"]]], null]
]],
"Revision": [false, [
    ["version", "version", ["str"], "<required>"],
    ["description", "description", ["optional", ["str"]], null],
    ["state", "state", ["enum", "RevisionState"], "<required>"],
    ["checksum", "checksum", ["optional", ["str"]], null],
    ["execution_millis", "executionMillis", ["optional", ["int"]], null],
    ["applied_at", "appliedAt", ["optional", ["time"]], null]
]],
"RevisionTable": [false, [
    ["schema_", "schema", ["optional", ["str"]], null],
    ["name", "name", ["str"], "schema_migrations"]
]],
"RunFailure": [false, [
    ["version", "version", ["str"], "<required>"],
    ["statement_index", "statementIndex", ["optional", ["int"]], null],
    ["sqlstate", "sqlstate", ["optional", ["str"]], null],
    ["mysql_errno", "mysqlErrno", ["optional", ["int"]], null]
]],
"RunStoppedAt": [false, [
    ["version", "version", ["str"], "<required>"],
    ["statements_applied", "statementsApplied", ["optional", ["int"]], null],
    ["statements_total", "statementsTotal", ["optional", ["int"]], null]
]],
"RunVerification": [false, [
    ["outcome", "outcome", ["enum", "VerifiedOutcome"], "<required>"],
    ["read_at", "readAt", ["time"], "<required>"],
    ["operation_id", "operationID", ["optional", ["str"]], null]
]],
"SchemaPlanStatus": [false, [
    ["name", "name", ["str"], "<required>"],
    ["uid", "uid", ["optional", ["str"]], null],
    ["fingerprint", "fingerprint", ["optional", ["str"]], null],
    ["operation_id", "operationID", ["optional", ["str"]], null],
    ["digest", "digest", ["optional", ["str"]], null],
    ["planned_at", "plannedAt", ["optional", ["time"]], null],
    ["approval_required", "approvalRequired", ["optional", ["bool"]], null],
    ["drift_digest", "driftDigest", ["optional", ["str"]], null],
    ["approval", "approval", ["optional", ["model", "ObjectReference"]], null],
    ["approver", "approver", ["optional", ["model", "UserInfo"]], null]
]],
"SchemaPolicy": [false, [
    ["apply", "apply", ["enum", "ApplyPolicy"], "OnApproval"],
    ["allow_destructive", "allowDestructive", ["bool"], false],
    ["protected_tables", "protectedTables", ["list", ["str"]], []],
    ["lock_timeout", "lockTimeout", ["str"], "30s"],
    ["statement_timeout", "statementTimeout", ["optional", ["str"]], null],
    ["require_distinct_approver", "requireDistinctApprover", ["bool"], false]
]],
"SchemaScope": [false, [
    ["schemas", "schemas", ["list", ["str"]], []],
    ["include_tables", "includeTables", ["list", ["str"]], []],
    ["exclude_tables", "excludeTables", ["list", ["str"]], []]
]],
"SchemaVerification": [false, [
    ["outcome", "outcome", ["enum", "VerifiedOutcome"], "<required>"],
    ["read_at", "readAt", ["time"], "<required>"],
    ["operation_id", "operationID", ["optional", ["str"]], null]
]],
"SeveritySummary": [false, [
    ["highest", "highest", ["optional", ["enum", "Severity"]], null],
    ["destructive", "destructive", ["bool"], false],
    ["privilege_change", "privilegeChange", ["bool"], false]
]],
"SourceRecord": [false, [
    ["kind", "kind", ["enum", "SourceKind"], "<required>"],
    ["content_digest", "contentDigest", ["optional", ["str"]], null],
    ["snapshot_name", "snapshotName", ["optional", ["str"]], null],
    ["config_map_uid", "configMapUID", ["optional", ["str"]], null],
    ["commit", "commit", ["optional", ["str"]], null],
    ["repository", "repository", ["optional", ["str"]], null],
    ["ref", "ref", ["optional", ["str"]], null],
    ["path", "path", ["optional", ["str"]], null],
    ["oci_ref", "ociRef", ["optional", ["str"]], null],
    ["oci_digest", "ociDigest", ["optional", ["str"]], null],
    ["artifact_type", "artifactType", ["optional", ["str"]], null],
    ["source_policy_digest", "sourcePolicyDigest", ["optional", ["str"]], null],
    ["verification_policy_digest", "verificationPolicyDigest", ["optional", ["str"]], null],
    ["resolved_at", "resolvedAt", ["optional", ["time"]], null],
    ["verified_at", "verifiedAt", ["optional", ["time"]], null]
]],
"Target": [false, [
    ["engine", "engine", ["enum", "Engine"], "<required>"],
    ["coordination_key", "coordinationKey", ["str"], "<required>"],
    ["shared_realm", "sharedRealm", ["bool"], false],
    ["url_from", "urlFrom", ["model", "KeyReference"], "<required>"],
    ["realm", "realm", ["optional", ["str"]], null]
]],
"UnresolvedRun": [false, [
    ["operation_id", "operationID", ["str"], "<required>"],
    ["outcome", "outcome", ["literal", "RunOutcome", ["Partial", "Unknown"]], "<required>"],
    ["plan", "plan", ["model", "PlanReference"], "<required>"],
    ["job", "job", ["optional", ["model", "JobReference"]], null],
    ["finished_at", "finishedAt", ["optional", ["time"]], null],
    ["stopped_at", "stoppedAt", ["optional", ["str"]], null],
    ["planned_target_digest", "plannedTargetDigest", ["optional", ["str"]], null],
    ["target_identity_digest", "targetIdentityDigest", ["optional", ["str"]], null],
    ["restored", "restored", ["optional", ["bool"]], null]
]],
"UserInfo": [false, [
    ["username", "username", ["str"], "<required>"],
    ["uid", "uid", ["optional", ["str"]], null],
    ["groups", "groups", ["list", ["str"]], []]
]]
}
"""
)
