"""Pure builders of the objects an operation needs: its Job, its snapshot.

The Jobs follow docs/design/migration-path.md. History and Apply: an init container that checks
the files against the bound content digest and holds no database URL, and a container that holds
the URL (from the Secret `spec.target.urlFrom` names, and nowhere else) and never a registry or
Git credential. A ConfigMap source's files come from its immutable snapshot; a Git or OCI
source's are fetched again by a first init container (`fetch`, the only one holding the source
credential) into an emptyDir, which the `source` init container checks once more before it
copies them for the run container (SRC-GIT-06, SRC-GIT-07). Resolve and Verify run one
container that reads the source and never the database. Names are deterministic from the
operation id (api/names.py), so a pass that crashed between its claim and its Job creates the
same Job again rather than a second one.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from ptah_operator.api import images, names, source_hosts
from ptah_operator.api.common import SourceRecord
from ptah_operator.api.constants import (
    API_VERSION,
    LABEL_SNAPSHOT,
    OperationType,
    SourceKind,
)
from ptah_operator.api.content import MANIFEST_KEY
from ptah_operator.api.contracts.operation import (
    ExpectedVersion,
    MigrationDocument,
    MigrationPlanRef,
    MigrationResource,
    RevisionTableRef,
)
from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.names import job_name, operation_secret_name, snapshot_name
from ptah_operator.api.plans import PtahMigrationPlan
from ptah_operator.api.schema import PtahSchema
from ptah_operator.reconcile.world import RunnerConfig, SourceFiles

RUNNER_UID = 65532
ACTIVE_DEADLINE_SECONDS = 3600
SNAPSHOT_MOUNT = "/ptah/snapshot"
FETCHED_MOUNT = "/ptah/fetched"
FILES_MOUNT = "/ptah/files"
RESULT_MOUNT = "/ptah/result"
CREDENTIALS_MOUNT = "/ptah/credentials"
POLICY_MOUNT = "/ptah/policy"
POLICY_FILE = "policy.yaml"

Manifest = dict[str, Any]

Owner = PtahMigration | PtahSchema
"""The resource an operation belongs to: its Jobs, snapshots and records are owned by it."""


NO_INJECTION_LABELS: Mapping[str, str] = {
    "sidecar.istio.io/inject": "false",
    "kuma.io/sidecar-injection": "disabled",
}
NO_INJECTION_ANNOTATIONS: Mapping[str, str] = {
    "sidecar.istio.io/inject": "false",
    "linkerd.io/inject": "disabled",
    "kuma.io/sidecar-injection": "disabled",
    "consul.hashicorp.com/connect-inject": "false",
    "openservicemesh.io/sidecar-injection": "disabled",
}
"""What every operation Pod's template says to the service meshes' sidecar injectors (Istio's
and Kuma's label and annotation, Linkerd, Consul, Open Service Mesh): no sidecar. An injector that
adds a mount or an environment variable to the reporting container makes its exit witness
nothing (controller/witness.py), and a sidecar that never exits keeps a Job from ending."""


def owner_reference(resource: Owner) -> Manifest:
    meta = resource.metadata
    return {
        "apiVersion": API_VERSION,
        "kind": resource.kind,
        "name": meta.name,
        "uid": meta.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owner_labels(resource: Owner) -> dict[str, str]:
    return names.owner_labels(
        resource.kind, str(resource.metadata.name), str(resource.metadata.uid)
    )


def snapshot_configmap(resource: Owner, source: SourceFiles) -> Manifest:
    """The immutable snapshot of the selected files, with their manifest beside them."""
    name = snapshot_name(str(resource.metadata.uid), source.content_digest)
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
            "namespace": resource.metadata.namespace,
            "labels": {**owner_labels(resource), LABEL_SNAPSHOT: "true"},
            "annotations": {"operator.ptah.run/content-digest": source.content_digest},
            "ownerReferences": [owner_reference(resource)],
        },
        "immutable": True,
        "data": data,
    }
    if binary:
        manifest["binaryData"] = binary
    return manifest


def source_block(resource: Owner, record: SourceRecord | None = None) -> Manifest:
    """What the runner reads the source from: the spec's Git or OCI source, pinned to what
    `record` resolved when there is one (the commit, the digest). No credential is in it."""
    spec = resource.spec
    if spec.git is not None:
        block: Manifest = {
            "kind": SourceKind.GIT.value,
            "repository": spec.git.repository,
            "ref": spec.git.ref,
            "path": spec.git.path,
        }
        if record is not None and record.kind == SourceKind.GIT:
            block.update(repository=record.repository, ref=record.ref, path=record.path)
            block["commit"] = record.commit
        return block
    if spec.artifact is not None:
        block = {"kind": SourceKind.ARTIFACT.value, "ociRef": spec.artifact.oci_ref}
        if record is not None and record.kind == SourceKind.ARTIFACT:
            block["ociRef"] = record.oci_ref
            block["ociDigest"] = record.oci_digest
        return block
    raise ValueError("a ConfigMap source is not read by a Job")


def operation_document(
    migration: PtahMigration,
    operation_type: OperationType,
    operation_id: str,
    content_digest: str | None,
    plan: PtahMigrationPlan | None = None,
    source: Manifest | None = None,
) -> Manifest:
    """What the runner is asked to do (contract ptah.run/operation/v1, api/contracts/
    operation.py): no SQL, no URL. Only the keys set here are sent."""
    spec = migration.spec
    table = spec.policy.revision_table
    fields: dict[str, Any] = {
        "operation_id": operation_id,
        "type": operation_type.value,
        "resource": MigrationResource.of(
            "PtahMigration",
            migration.metadata.namespace,
            migration.metadata.name,
            migration.metadata.uid,
        ),
        "engine": spec.target.engine.value,
        "revision_table": RevisionTableRef.model_construct(schema_=table.schema_, name=table.name),
        "transaction_mode": spec.policy.transaction_mode.value
        if spec.policy.transaction_mode
        else None,
    }
    if content_digest is not None:
        fields["content_digest"] = content_digest
    if source is not None:
        fields["source"] = source
    if plan is not None:
        fields["expected"] = [
            ExpectedVersion.model_construct(version=v.version, checksum=v.checksum)
            for v in plan.spec.versions
        ]
        fields["planned_target_digest"] = plan.spec.target_identity_digest
        fields["plan"] = MigrationPlanRef.model_construct(
            name=plan.metadata.name, uid=plan.metadata.uid, fingerprint=plan.spec.fingerprint
        )
    return MigrationDocument.model_construct(**fields).as_json()


_CONTAINER_SECURITY: Manifest = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def _resources(resource: Owner) -> Manifest:
    resources = resource.spec.execution.resources
    if resources is None:
        return {}
    return {"resources": resources.model_dump(by_alias=True, exclude_none=True)}


def runner_image(resource: Owner, runner: RunnerConfig) -> str:
    """The image of every container of the resource's Jobs: the manager's, or the resource's
    own when its digest is allowed; anything else raises ValueError, and no Job is built
    (issue #18, JOB-06)."""
    own = resource.spec.execution.image
    if own is None:
        return runner.image
    refused = images.refusal(own, runner.allows())
    if refused is not None:
        raise ValueError(images.refusal_words(refused))
    return own


def _container(resource: Owner, runner: RunnerConfig, name: str, **fields: Any) -> Manifest:
    return {
        "name": name,
        "image": runner_image(resource, runner),
        **fields,
        "terminationMessagePolicy": "File",
        "securityContext": _CONTAINER_SECURITY,
        **_resources(resource),
    }


def _result_env(runner: RunnerConfig) -> list[Manifest]:
    return [
        {"name": "PTAH_RESULT_URL", "value": runner.result_url},
        {"name": "PTAH_RESULT_TOKEN_FILE", "value": f"{RESULT_MOUNT}/token"},
        {"name": "PTAH_RESULT_CA_FILE", "value": f"{RESULT_MOUNT}/ca.crt"},
    ]


def _registry_env(runner: RunnerConfig) -> list[Manifest]:
    if not runner.insecure_registries:
        return []
    return [{"name": "PTAH_INSECURE_REGISTRIES", "value": ",".join(runner.insecure_registries)}]


def _credentials(
    resource: Owner, runner: RunnerConfig, record: SourceRecord | None = None
) -> tuple[list[Manifest], list[Manifest], list[str]]:
    """The source credential (spec.git.secretRef or spec.artifact.secretRef): its volume, its
    mount and the flag that points the runner at it; only the container that reads the source
    gets them (JOB-01). ValueError (no Job) when the source's host is not on the manager's
    --allowed-source-hosts: the author chooses the host, so a Secret goes only where the
    manager allows (issue #18, api/source_hosts.py). When the runner reads a recorded source
    (`record`: what an earlier read resolved) on another host than the spec names now, no
    credential goes with it: the Secret was allowed for the spec's host only."""
    spec = resource.spec
    named = spec.git or spec.artifact
    secret = named.secret_ref if named is not None else None
    if secret is None:
        return [], [], []
    if spec.git is not None:
        field, host = "spec.git.secretRef", source_hosts.git_host(spec.git.repository)
    else:
        assert spec.artifact is not None
        field, host = "spec.artifact.secretRef", source_hosts.registry_host(spec.artifact.oci_ref)
    refused = source_hosts.refusal(host, runner.allowed_source_hosts)
    if refused is not None:
        raise ValueError(source_hosts.refusal_words(field, refused))
    if record is not None and _record_host(record) != host:
        return [], [], []
    volume = {"name": "credentials", "secret": {"secretName": secret.name}}
    mount = {"name": "credentials", "mountPath": CREDENTIALS_MOUNT, "readOnly": True}
    return [volume], [mount], [f"--credentials={CREDENTIALS_MOUNT}"]


def _record_host(record: SourceRecord) -> str | None:
    """The host a fetch of `record` contacts (None for a source no host serves)."""
    if record.kind == SourceKind.GIT and record.repository:
        return source_hosts.git_host(record.repository)
    if record.kind == SourceKind.ARTIFACT and record.oci_ref:
        return source_hosts.registry_host(record.oci_ref)
    return None


def _source_containers(
    resource: Owner, runner: RunnerConfig, record: SourceRecord
) -> tuple[list[Manifest], list[Manifest]]:
    """The volumes and init containers that put the bound files in FILES_MOUNT, checked."""
    digest = record.content_digest or ""
    if record.kind == SourceKind.CONFIG_MAP:
        if not record.snapshot_name or not digest:
            raise ValueError("the source record names no snapshot")
        volumes = [{"name": "snapshot", "configMap": {"name": record.snapshot_name}}]
        checked_from = ("snapshot", SNAPSHOT_MOUNT)
        fetch: list[Manifest] = []
    else:
        if not digest:
            raise ValueError("the source record has no content digest")
        if record.kind == SourceKind.GIT and not record.commit:
            raise ValueError("the source record names no commit")
        if record.kind == SourceKind.ARTIFACT and not record.oci_digest:
            raise ValueError("the source record names no artifact digest")
        cred_volumes, cred_mounts, cred_flags = _credentials(resource, runner, record)
        volumes = [{"name": "fetched", "emptyDir": {}}, *cred_volumes]
        checked_from = ("fetched", FETCHED_MOUNT)
        block = source_block(resource, record)
        fetch = [
            _container(
                resource,
                runner,
                "fetch",
                command=[
                    "ptah-runner",
                    "fetch",
                    "--source=" + json.dumps(block, sort_keys=True, separators=(",", ":")),
                    f"--digest={digest}",
                    f"--out={FETCHED_MOUNT}",
                    *cred_flags,
                ],
                env=_registry_env(runner),
                volumeMounts=[{"name": "fetched", "mountPath": FETCHED_MOUNT}, *cred_mounts],
            )
        ]
    check = _container(
        resource,
        runner,
        "source",
        command=[
            "ptah-runner",
            "source",
            f"--snapshot={checked_from[1]}",
            f"--digest={digest}",
            f"--out={FILES_MOUNT}",
        ],
        volumeMounts=[
            {"name": checked_from[0], "mountPath": checked_from[1], "readOnly": True},
            {"name": "files", "mountPath": FILES_MOUNT},
        ],
    )
    return volumes, [*fetch, check]


def _pod_spec(
    resource: Owner,
    runner: RunnerConfig,
    operation_id: str,
    volumes: list[Manifest],
    init_containers: list[Manifest],
    container: Manifest,
) -> Manifest:
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
            *volumes,
            {"name": "result", "secret": {"secretName": operation_secret_name(operation_id)}},
        ],
        "containers": [container],
    }
    if init_containers:
        pod_spec["initContainers"] = init_containers
    service_account = resource.spec.execution.service_account_name or runner.service_account_name
    if service_account:
        pod_spec["serviceAccountName"] = service_account
    return pod_spec


def _job_manifest(
    resource: Owner,
    runner: RunnerConfig,
    operation_type: OperationType,
    operation_id: str,
    pod_spec: Manifest,
) -> Manifest:
    labels = names.operation_labels(
        resource.kind,
        str(resource.metadata.name),
        str(resource.metadata.uid),
        operation_id,
        operation_type.value,
    )
    # An Apply's outcome is not known when its Job is made, so it gets the failed Apply's day;
    # the lifecycle removes it about five minutes after a run on record as succeeded (JOB-07,
    # draft.py). A read's Job goes by its TTL.
    ttl = (
        runner.failed_apply_ttl_seconds
        if operation_type is OperationType.APPLY
        else runner.job_ttl_seconds
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name(operation_type, operation_id),
            "namespace": resource.metadata.namespace,
            "labels": labels,
            "ownerReferences": [owner_reference(resource)],
        },
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
            "ttlSecondsAfterFinished": ttl,
            "template": {
                "metadata": {
                    "labels": {**labels, **NO_INJECTION_LABELS},
                    "annotations": dict(NO_INJECTION_ANNOTATIONS),
                },
                "spec": pod_spec,
            },
        },
    }


def database_job(
    resource: Owner,
    runner: RunnerConfig,
    operation_type: OperationType,
    operation_id: str,
    record: SourceRecord | None,
    document: Manifest,
) -> Manifest:
    """A Job whose `run` container opens the database: it holds the URL (from the Secret
    spec.target.urlFrom names, and nowhere else) and never a registry or Git credential
    (JOB-01). With a `record`, the bound files reach it through the init containers that
    fetch and check them (JOB-02, JOB-03); without one it reads no source files at all."""
    spec = resource.spec
    volumes: list[Manifest] = []
    init_containers: list[Manifest] = []
    mounts: list[Manifest] = []
    command = ["ptah-runner", operation_type.value.lower()]
    if record is not None:
        volumes, init_containers = _source_containers(resource, runner, record)
        volumes = [*volumes, {"name": "files", "emptyDir": {}}]
        mounts = [{"name": "files", "mountPath": FILES_MOUNT, "readOnly": True}]
        command.append(f"--files={FILES_MOUNT}")
    run = _container(
        resource,
        runner,
        "run",
        command=command,
        env=[
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
            *_result_env(runner),
        ],
        volumeMounts=[
            *mounts,
            {"name": "result", "mountPath": RESULT_MOUNT, "readOnly": True},
        ],
    )
    pod_spec = _pod_spec(resource, runner, operation_id, volumes, init_containers, run)
    return _job_manifest(resource, runner, operation_type, operation_id, pod_spec)


def source_resolve_job(
    resource: Owner, runner: RunnerConfig, operation_id: str, document: Manifest
) -> Manifest:
    """The Resolve Job of any resource, given its operation document: one container that
    holds the source credential and never the database URL (JOB-01)."""
    cred_volumes, cred_mounts, cred_flags = _credentials(resource, runner)
    container = _container(
        resource,
        runner,
        "resolve",
        command=["ptah-runner", "resolve", *cred_flags],
        env=[
            {"name": "PTAH_OPERATION", "value": json.dumps(document, sort_keys=True)},
            *_result_env(runner),
            *_registry_env(runner),
        ],
        volumeMounts=[
            {"name": "result", "mountPath": RESULT_MOUNT, "readOnly": True},
            *cred_mounts,
        ],
    )
    pod_spec = _pod_spec(resource, runner, operation_id, cred_volumes, [], container)
    return _job_manifest(resource, runner, OperationType.RESOLVE, operation_id, pod_spec)


def source_verify_job(
    resource: Owner,
    runner: RunnerConfig,
    operation_id: str,
    record: SourceRecord,
    document: Manifest,
) -> Manifest:
    """The Verify Job of any resource, given its operation document: the verification policy
    mounted from the ConfigMap key it names, the pinned digest read from the registry, never
    the database."""
    artifact = resource.spec.artifact
    if artifact is None or record.kind != SourceKind.ARTIFACT or not record.oci_digest:
        raise ValueError("only an OCI artifact pinned to a digest is verified")
    policy = artifact.verification_policy_from
    cred_volumes, cred_mounts, cred_flags = _credentials(resource, runner, record)
    volumes = [
        {
            "name": "policy",
            "configMap": {"name": policy.name, "items": [{"key": policy.key, "path": POLICY_FILE}]},
        },
        *cred_volumes,
    ]
    container = _container(
        resource,
        runner,
        "verify",
        command=["ptah-runner", "verify", f"--policy={POLICY_MOUNT}/{POLICY_FILE}", *cred_flags],
        env=[
            {"name": "PTAH_OPERATION", "value": json.dumps(document, sort_keys=True)},
            *_result_env(runner),
            *_registry_env(runner),
        ],
        volumeMounts=[
            {"name": "policy", "mountPath": POLICY_MOUNT, "readOnly": True},
            {"name": "result", "mountPath": RESULT_MOUNT, "readOnly": True},
            *cred_mounts,
        ],
    )
    pod_spec = _pod_spec(resource, runner, operation_id, volumes, [], container)
    return _job_manifest(resource, runner, OperationType.VERIFY, operation_id, pod_spec)
