"""Pure builders of the objects an operation needs: its Job, its snapshot, its names.

The Job follows docs/design/migration-path.md: an init container that checks the snapshot
against the bound content digest and holds no database URL, and a container that holds the URL
(from the Secret `spec.target.urlFrom` names, and nowhere else) and never a registry
credential. Names are deterministic from the operation id, so a pass that crashed between its
claim and its Job creates the same Job again rather than a second one.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from ptah_operator.api.constants import (
    API_VERSION,
    LABEL_MANAGED_BY,
    LABEL_OPERATION_ID,
    LABEL_OPERATION_TYPE,
    LABEL_OWNER_KIND,
    LABEL_OWNER_NAME,
    LABEL_OWNER_UID,
    LABEL_SNAPSHOT,
    MANAGED_BY,
    OperationType,
)
from ptah_operator.api.content import MANIFEST_KEY, snapshot_name
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.reconcile.world import RunnerConfig, SourceFiles

OPERATION_CONTRACT = "ptah.run/operation/v1"
RUNNER_UID = 65532
ACTIVE_DEADLINE_SECONDS = 3600
SNAPSHOT_MOUNT = "/ptah/snapshot"
FILES_MOUNT = "/ptah/files"
RESULT_MOUNT = "/ptah/result"

Manifest = dict[str, Any]


def operation_hex(operation_id: str) -> str:
    """The hex part of an operation id (`op-3f9a2c7d1e` → `3f9a2c7d1e`)."""
    return operation_id.removeprefix("op-")


def job_name(operation_type: OperationType, operation_id: str) -> str:
    return f"ptah-{operation_type.value.lower()}-{operation_hex(operation_id)}"


def operation_secret_name(operation_id: str) -> str:
    return f"ptah-op-{operation_hex(operation_id)}"


def result_record_name(operation_id: str) -> str:
    return f"ptah-result-{operation_hex(operation_id)}"


def realm_lease_name(coordination_key: str) -> str:
    return "ptah-realm-" + hashlib.sha256(coordination_key.encode()).hexdigest()[:16]


def owner_reference(migration: PtahMigration) -> Manifest:
    meta = migration.metadata
    return {
        "apiVersion": API_VERSION,
        "kind": "PtahMigration",
        "name": meta.name,
        "uid": meta.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owner_labels(migration: PtahMigration) -> dict[str, str]:
    return {
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_OWNER_KIND: "PtahMigration",
        LABEL_OWNER_NAME: str(migration.metadata.name),
        LABEL_OWNER_UID: str(migration.metadata.uid),
    }


def snapshot_configmap(migration: PtahMigration, source: SourceFiles) -> Manifest:
    """The immutable snapshot of the selected files, with their manifest beside them."""
    name = snapshot_name(str(migration.metadata.uid), source.content_digest)
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    for path, content in sorted(source.files.items()):
        try:
            data[path] = content.decode("utf-8")
        except UnicodeDecodeError:
            binary[path] = base64.b64encode(content).decode()
    data[MANIFEST_KEY] = source.manifest.decode()
    manifest: Manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": migration.metadata.namespace,
            "labels": {**owner_labels(migration), LABEL_SNAPSHOT: "true"},
            "annotations": {"operator.ptah.run/content-digest": source.content_digest},
            "ownerReferences": [owner_reference(migration)],
        },
        "immutable": True,
        "data": data,
    }
    if binary:
        manifest["binaryData"] = binary
    return manifest


def operation_document(
    migration: PtahMigration,
    operation_type: OperationType,
    operation_id: str,
    content_digest: str,
    plan: PtahMigrationPlan | None = None,
) -> Manifest:
    """What the runner is asked to do (contract ptah.run/operation/v1): no SQL, no URL."""
    spec = migration.spec
    table = spec.policy.revision_table
    document: Manifest = {
        "contract": OPERATION_CONTRACT,
        "operationID": operation_id,
        "type": operation_type.value,
        "resource": {
            "kind": "PtahMigration",
            "namespace": migration.metadata.namespace,
            "name": migration.metadata.name,
            "uid": migration.metadata.uid,
        },
        "engine": spec.target.engine.value,
        "revisionTable": {"schema": table.schema_, "name": table.name},
        "transactionMode": spec.policy.transaction_mode.value
        if spec.policy.transaction_mode
        else None,
        "contentDigest": content_digest,
    }
    if plan is not None:
        document["expected"] = [
            {"version": v.version, "checksum": v.checksum} for v in plan.spec.versions
        ]
        document["plannedTargetDigest"] = plan.spec.target_identity_digest
        document["plan"] = {
            "name": plan.metadata.name,
            "uid": plan.metadata.uid,
            "fingerprint": plan.spec.fingerprint,
        }
    return document


def _job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_type: OperationType,
    operation_id: str,
    snapshot: str,
    content_digest: str,
    plan: PtahMigrationPlan | None,
) -> Manifest:
    spec = migration.spec
    name = job_name(operation_type, operation_id)
    labels = {
        **owner_labels(migration),
        LABEL_OPERATION_ID: operation_id,
        LABEL_OPERATION_TYPE: operation_type.value,
    }
    image = spec.execution.image or runner.image
    document = operation_document(migration, operation_type, operation_id, content_digest, plan)
    container_security = {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    resources: Manifest = {}
    if spec.execution.resources is not None:
        resources = spec.execution.resources.model_dump(by_alias=True, exclude_none=True)
    pod_spec: Manifest = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUNNER_UID,
            "runAsGroup": RUNNER_UID,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "volumes": [
            {"name": "snapshot", "configMap": {"name": snapshot}},
            {"name": "files", "emptyDir": {}},
            {"name": "result", "secret": {"secretName": operation_secret_name(operation_id)}},
        ],
        "initContainers": [
            {
                "name": "source",
                "image": image,
                "command": [
                    "ptah-runner",
                    "source",
                    f"--snapshot={SNAPSHOT_MOUNT}",
                    f"--digest={content_digest}",
                    f"--out={FILES_MOUNT}",
                ],
                "volumeMounts": [
                    {"name": "snapshot", "mountPath": SNAPSHOT_MOUNT, "readOnly": True},
                    {"name": "files", "mountPath": FILES_MOUNT},
                ],
                "terminationMessagePolicy": "File",
                "securityContext": container_security,
                **({"resources": resources} if resources else {}),
            }
        ],
        "containers": [
            {
                "name": "run",
                "image": image,
                "command": [
                    "ptah-runner",
                    operation_type.value.lower(),
                    f"--files={FILES_MOUNT}",
                ],
                "env": [
                    {
                        "name": "PTAH_DATABASE_URL",
                        "valueFrom": {
                            "secretKeyRef": {
                                "name": spec.target.url_from.name,
                                "key": spec.target.url_from.key,
                            }
                        },
                    },
                    {"name": "PTAH_OPERATION", "value": json.dumps(document, sort_keys=True)},
                    {"name": "PTAH_RESULT_URL", "value": runner.result_url},
                    {"name": "PTAH_RESULT_TOKEN_FILE", "value": f"{RESULT_MOUNT}/token"},
                    {"name": "PTAH_RESULT_CA_FILE", "value": f"{RESULT_MOUNT}/ca.crt"},
                ],
                "volumeMounts": [
                    {"name": "files", "mountPath": FILES_MOUNT, "readOnly": True},
                    {"name": "result", "mountPath": RESULT_MOUNT, "readOnly": True},
                ],
                "terminationMessagePolicy": "File",
                "securityContext": container_security,
                **({"resources": resources} if resources else {}),
            }
        ],
    }
    service_account = spec.execution.service_account_name or runner.service_account_name
    if service_account:
        pod_spec["serviceAccountName"] = service_account
    ttl = (
        runner.failed_apply_ttl_seconds
        if operation_type is OperationType.APPLY
        else runner.job_ttl_seconds
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": migration.metadata.namespace,
            "labels": labels,
            "ownerReferences": [owner_reference(migration)],
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": ttl,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def history_job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_id: str,
    snapshot_name: str,
    content_digest: str,
) -> Manifest:
    """A read of the revision table against the snapshot's files (no Lease: LCK-07)."""
    return _job(
        migration, runner, OperationType.HISTORY, operation_id, snapshot_name, content_digest, None
    )


def apply_job(
    migration: PtahMigration,
    runner: RunnerConfig,
    operation_id: str,
    snapshot_name: str,
    content_digest: str,
    plan: PtahMigrationPlan,
) -> Manifest:
    """A run of exactly the plan's sequence: the runner refuses any other selection (MIG-49)."""
    return _job(
        migration, runner, OperationType.APPLY, operation_id, snapshot_name, content_digest, plan
    )
