"""Parts both families share: the target, the three sources, execution settings, references,
conditions, the claim (status.activeOperation) and the record of a resolution.

A PtahSchema and a PtahMigration differ in what they plan and how they prove it, not in how they
name a database or a source, so those parts are defined once here and the family modules add
what is theirs.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from ptah_operator.api.constants import (
    DEFAULT_FAILURE_RETRY_INTERVAL,
    DEFAULT_INTERVAL,
    MAX_CARRIED_OUT_PLANS,
    MAX_CONDITIONS,
    MAX_GROUPS,
    MAX_INTERVAL,
    MAX_MESSAGE_LENGTH,
    MIN_INTERVAL,
    Authorization,
    ConditionStatus,
    Engine,
    OperationType,
    SourceKind,
)
from ptah_operator.api.fields import (
    COMMIT_PATTERN,
    CONDITION_TYPE_PATTERN,
    GIT_REPOSITORY_PATTERN,
    NO_SPACE_PATTERN,
    OCI_REF_PATTERN,
    REASON_PATTERN,
    ApiModel,
    ConditionReason,
    ConfigMapKey,
    Digest,
    Duration,
    LabelName,
    Name,
    Quantity,
    ShortText,
    Timestamp,
    Uid,
    bounded_list,
    defaulted_object,
    duration_bounds,
)

# --- references --------------------------------------------------------------------------------


class KeyReference(ApiModel):
    """One key of a Secret or ConfigMap in the resource's namespace."""

    name: Name
    """Name of the object."""
    key: ConfigMapKey
    """Key within it."""


class LocalObjectReference(ApiModel):
    """An object in the resource's namespace, by name."""

    name: Name


class ObjectReference(ApiModel):
    """An object in the resource's namespace, by name and UID, so a re-created one is not it."""

    name: Name
    uid: Uid


class PlanReference(ApiModel):
    """A plan by name, UID and the fingerprint of its spec."""

    name: Name
    uid: Uid | None = None
    fingerprint: Digest | None = None


class PublishedPlan(PlanReference):
    """A resource's current plan (status.plan): the plan, and which publication of it this is.

    A plan retired before it ran and computed again later is the same object, with the same
    name, UID and fingerprint; the reading that publishes it again is another operation, so
    operationID tells the two publications apart, and an approval names the one it was given
    for: an approval of the retired publication never carries over (APR-12)."""

    # A PlanReference is accepted where a PublishedPlan is expected, naming no publication.
    model_config = ConfigDict(from_attributes=True)

    operation_id: LabelName | None = Field(default=None, alias="operationID")
    """The read whose result published the plan (a migration's History read, a schema's
    Plan)."""


class JobReference(ApiModel):
    """A Job by name and, once it exists, its UID."""

    name: LabelName
    uid: Uid | None = None


class UserInfo(ApiModel):
    """A person as admission authenticated them."""

    username: str = Field(min_length=1, max_length=512)
    uid: str | None = Field(default=None, max_length=128)
    groups: list[ShortText] = bounded_list(MAX_GROUPS)


# --- target ------------------------------------------------------------------------------------


class Target(ApiModel):
    """The database a resource converges."""

    engine: Engine
    """The database engine."""
    coordination_key: str = Field(min_length=1, max_length=253, pattern=NO_SPACE_PATTERN)
    """Names the physical database. Every resource that addresses the same database, in any
    namespace, must use the same key: it is what makes them take turns."""
    shared_realm: bool = False
    """Whether this resource agrees to share its database with other claimants. A database
    claimed by more than one resource is refused unless every claimant sets this."""
    url_from: KeyReference
    """The Secret key that holds the database URL."""
    realm: Name | None = None
    """Name of the PtahRealm that must admit this resource's namespace."""


# --- sources -----------------------------------------------------------------------------------


class ArtifactSource(ApiModel):
    """An OCI artifact, pinned to a digest its verification policy accepts."""

    oci_ref: str = Field(max_length=512, pattern=OCI_REF_PATTERN)
    """The artifact reference, oci://registry/repository:tag or @sha256:..."""
    verification_policy_from: KeyReference
    """The ConfigMap key that holds the verification policy."""
    secret_ref: LocalObjectReference | None = None
    """A Secret with the registry credentials (keys username and password), mounted only into
    the containers that read the registry. Absent: the registry is read anonymously."""


class ConfigMapSource(ApiModel):
    """Files held in a ConfigMap; the manager copies them into an immutable snapshot."""

    name: Name
    """Name of the source ConfigMap."""
    keys: list[ConfigMapKey] | None = Field(default=None, max_length=1024)
    """Keys to take as files. Absent: every key."""
    path: str | None = Field(default=None, max_length=256, pattern=r"^[A-Za-z0-9._/-]+$")
    """Directory the selected files are placed under in the snapshot."""
    source_policy_from: KeyReference | None = None
    """The ConfigMap key that holds a source policy to check the source against."""


class GitSource(ApiModel):
    """Files at a path of a Git repository, read only from Jobs through Ptah's pull."""

    repository: str = Field(max_length=512, pattern=GIT_REPOSITORY_PATTERN)
    """The repository URL."""
    ref: str = Field(min_length=1, max_length=256, pattern=NO_SPACE_PATTERN)
    """A branch (followed to its tip), a tag, or a commit id."""
    path: str | None = Field(default=None, max_length=256, pattern=r"^[A-Za-z0-9._/-]+$")
    """Directory within the repository. Absent: the repository root."""
    secret_ref: LocalObjectReference | None = None
    """A Secret with the credentials and known hosts the fetch uses: keys username and
    password (HTTP basic), or ssh-privatekey and known_hosts for an SSH repository (required
    there: only a host key known_hosts pins is accepted)."""
    source_policy_from: KeyReference | None = None
    """The ConfigMap key that holds a source policy to check the source against."""


SOURCE_FIELDS = ("artifact", "configMap", "git")
EXACTLY_ONE_SOURCE_RULE: JsonDict = {
    "rule": "[has(self.artifact), has(self.configMap), has(self.git)].filter(s, s).size() == 1",
    "message": "exactly one source must be set: spec.artifact, spec.configMap or spec.git",
}


# --- execution ---------------------------------------------------------------------------------


class ResourceRequirements(ApiModel):
    """core/v1 ResourceRequirements for the operation containers."""

    limits: dict[str, Quantity] | None = Field(default=None, max_length=16)
    requests: dict[str, Quantity] | None = Field(default=None, max_length=16)


class Execution(ApiModel):
    """How operations run."""

    failure_retry_interval: Duration = Field(
        DEFAULT_FAILURE_RETRY_INTERVAL,
        json_schema_extra=duration_bounds(MIN_INTERVAL, MAX_INTERVAL),
    )
    """How long a failed read waits before it runs again, from 10s to 24h."""
    image: str | None = Field(default=None, max_length=512, pattern=NO_SPACE_PATTERN)
    """The runner image, in place of the operator's: pinned by digest (name@sha256:...), and
    taken only when that digest is on the manager's allowlist (--allowed-runner-images);
    admission refuses any other, and no Job is built with it."""
    service_account_name: Name | None = None
    """The ServiceAccount the operation Pods run as."""
    resources: ResourceRequirements | None = None
    """Resources of the operation containers."""


class CommonSpec(ApiModel):
    """What every PtahSchema and PtahMigration spec holds besides its policy."""

    model_config = ConfigDict(
        json_schema_extra={"x-kubernetes-validations": [EXACTLY_ONE_SOURCE_RULE]}
    )

    target: Target
    """The database this resource converges."""
    artifact: ArtifactSource | None = None
    """An OCI artifact. Exactly one of artifact, configMap and git is set."""
    config_map: ConfigMapSource | None = None
    """A ConfigMap in the resource's namespace. Exactly one of artifact, configMap and git is
    set."""
    git: GitSource | None = None
    """A Git repository. Exactly one of artifact, configMap and git is set."""
    interval: Duration = Field(
        DEFAULT_INTERVAL, json_schema_extra=duration_bounds(MIN_INTERVAL, MAX_INTERVAL)
    )
    """How often the source and the database are read again, from 10s to 24h."""
    execution: Execution = defaulted_object(Execution)
    """How operations run."""
    suspend: bool = False
    """Start no new Job. A Job already applying is still observed to its end."""

    @model_validator(mode="after")
    def _exactly_one_source(self) -> Self:
        present = [
            name
            for name, value in zip(
                SOURCE_FIELDS, (self.artifact, self.config_map, self.git), strict=True
            )
            if value is not None
        ]
        if len(present) != 1:
            found = ", ".join(present) if present else "none"
            raise ValueError(
                f"exactly one source must be set: artifact, configMap or git (found: {found})"
            )
        return self

    @property
    def source_kind(self) -> SourceKind:
        """Which source this spec names."""
        if self.artifact is not None:
            return SourceKind.ARTIFACT
        if self.config_map is not None:
            return SourceKind.CONFIG_MAP
        return SourceKind.GIT


# --- conditions --------------------------------------------------------------------------------


class Condition(ApiModel):
    """metav1.Condition."""

    type: str = Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)
    status: ConditionStatus
    observed_generation: int | None = Field(default=None, ge=0)
    last_transition_time: Timestamp
    reason: str = Field(min_length=1, max_length=1024, pattern=REASON_PATTERN)
    message: str = Field(default="", max_length=32768)


CONDITIONS_LIST_MAP: dict[str, Any] = {
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
}


def conditions_field() -> Any:
    """status.conditions: a list keyed by type, as metav1.Condition lists are."""
    return Field(
        default_factory=list, max_length=MAX_CONDITIONS, json_schema_extra=CONDITIONS_LIST_MAP
    )


# --- what a resolution found -------------------------------------------------------------------


class SourceRecord(ApiModel):
    """What a resolution pinned, and what the later operations are bound to."""

    kind: SourceKind
    content_digest: Digest | None = None
    """SHA-256 of the manifest of the selected files (ConfigMap and Git sources)."""
    snapshot_name: Name | None = None
    """The immutable snapshot ConfigMap, ptah-src-<hash> (ConfigMap sources)."""
    config_map_uid: Uid | None = Field(default=None, alias="configMapUID")
    """UID of the source ConfigMap the snapshot was taken from."""
    commit: str | None = Field(default=None, pattern=COMMIT_PATTERN, max_length=64)
    """The commit the ref named (Git sources)."""
    repository: str | None = Field(default=None, max_length=512)
    ref: str | None = Field(default=None, max_length=256)
    path: str | None = Field(default=None, max_length=256)
    oci_ref: str | None = Field(default=None, max_length=512)
    oci_digest: Digest | None = None
    """The manifest digest behind ociRef (OCI sources)."""
    artifact_type: str | None = Field(default=None, max_length=256)
    source_policy_digest: Digest | None = None
    """SHA-256 of the source policy the resolution was checked against."""
    verification_policy_digest: Digest | None = None
    """SHA-256 of the verification policy the digest was verified against."""
    resolved_at: Timestamp | None = None
    verified_at: Timestamp | None = None


class ExecutionBinding(ApiModel):
    """The identity of what runs operations. A change retires plans and unclaimed reads."""

    image: str | None = Field(default=None, max_length=512)
    """The runner image, by digest where known."""
    runner_version: str | None = Field(default=None, max_length=64)
    protocol_version: int | None = Field(default=None, ge=1)
    """Version of the contract between the manager and the runner."""
    engine_version: str | None = Field(default=None, max_length=64)
    digest: Digest | None = None
    """SHA-256 over the other fields; see execution_binding_digest."""


class PlanSourceBinding(ApiModel):
    """What of a resolution a plan binds (plan contract 1: OCI digest; 2: content digest)."""

    kind: SourceKind
    oci_digest: Digest | None = None
    """Contract 1: the verified artifact digest."""
    verification_policy_digest: Digest | None = None
    """Contract 1: the policy the digest was verified against."""
    content_digest: Digest | None = None
    """Contract 2: SHA-256 of the manifest of the selected files."""
    config_map_uid: Uid | None = Field(default=None, alias="configMapUID")
    """Contract 2, ConfigMap: UID of the source ConfigMap."""
    repository_path_digest: Digest | None = None
    """Contract 2, Git: SHA-256 of the repository URL and the path."""
    source_policy_digest: Digest | None = None
    """Contract 2: the source policy the resolution was checked against."""


# --- the claim ---------------------------------------------------------------------------------


class ReceivedReport(ApiModel):
    """The first report of an attempt the result endpoint stored (status.activeOperation.report),
    written by the endpoint with a JSON patch that tests the claim's operation id and attempt.

    The record ConfigMap is the report; this is the memory of it a ConfigMap writer cannot erase
    (only the manager writes status): the controller takes only a record whose digest is this
    one, and the endpoint refuses any other report of the attempt (409) even when no record is
    left (docs/security.md, "A deleted and replaced record")."""

    attempt: int = Field(ge=1)
    """The claim's attempt the report was stored under; a report of another attempt is none."""
    digest: Digest
    """SHA-256 of the stored record's result.json, sha256:<hex>."""
    conflict: bool | None = None
    """A second, different report of the attempt arrived: neither is believed."""


class ActiveOperation(ApiModel):
    """The claim: the operation in flight, written before its Job exists."""

    operation_id: LabelName = Field(alias="operationID")
    type: OperationType
    job_name: LabelName | None = None
    """The Job's reserved name, deterministic from operationID."""
    job_uid: Uid | None = Field(default=None, alias="jobUID")
    job_created_at: Timestamp | None = None
    """When the Job was created (its creationTimestamp), recorded with jobUID: an Apply's hard
    cap counts from it, and still does once the Job is gone."""
    job_gone_at: Timestamp | None = None
    """When a pass first found a dispatched run's Job gone with no result and no Pod of it in
    the cache: the run ends POD_CACHE_GRACE later, once that cache has caught up."""
    started_at: Timestamp
    attempt: int = Field(default=1, ge=1)
    retry_at: Timestamp | None = None
    """When the next attempt may start, after a failed one."""
    last_failure_reason: ConditionReason | None = None
    generation: int | None = Field(default=None, ge=0)
    """metadata.generation the claim was made for."""
    spec_digest: Digest | None = None
    """SHA-256 of the spec the claim was made under, spec.suspend left out (a schema's Apply:
    another spec taking over supersedes its proof, a suspension does not)."""
    source: SourceRecord | None = None
    """The resolution the operation is bound to."""
    plan: PlanReference | None = None
    approval: ObjectReference | None = None
    approver: UserInfo | None = None
    authorization: Authorization | None = None
    target_identity_digest: Digest | None = None
    """The database the operation is bound to, as a digest of its identity."""
    execution_binding: ExecutionBinding | None = None
    serves_proof: bool | None = None
    """This read proves an Apply: it never gives way and holds the Apply's Lease."""
    read_request: str | None = Field(default=None, max_length=71)
    """The read request this read answers."""
    lease_name: Name | None = None
    lease_epoch: int | None = Field(default=None, ge=0)
    lease_continuity_lost: bool | None = None
    """Set before any result is harvested when the epoch no longer owns an uninterrupted lock."""
    report: ReceivedReport | None = None
    """The digest of the first report the result endpoint stored for this attempt, which the
    endpoint writes, never the controller; a new attempt starts without it."""


class StatusCommon(ApiModel):
    """Status fields both families keep."""

    observed_generation: int | None = Field(default=None, ge=0)
    """The metadata.generation this status describes."""
    conditions: list[Condition] = conditions_field()
    """Ready and Progressing (kstatus), InSync, ReconciliationFailed, ArtifactResolved and
    ArtifactVerified."""
    active_operation: ActiveOperation | None = None
    """The claim: the operation in flight."""
    source: SourceRecord | None = None
    """The latest resolution of the source."""
    execution_binding: ExecutionBinding | None = None
    """What runs this resource's operations now."""
    last_read_request: str | None = Field(default=None, max_length=71)
    """The last read-requested-at value answered, or its sha256:<hex> when over 64 bytes."""
    next_reconciliation_time: Timestamp | None = None
    """When the database is read again."""
    message: str | None = Field(default=None, max_length=MAX_MESSAGE_LENGTH)
    """A short human summary of the phase, never SQL or row data."""
    carried_out_plans: list[Digest] | None = Field(default=None, max_length=MAX_CARRIED_OUT_PLANS)
    """The fingerprints of the plans an Apply carried out and nothing showed done, oldest
    first, at most 32: apply: Always starts none of them again; only a person's exact approval
    does (docs/design/lifecycle-decisions.md). Absent until an Apply ended."""

    def condition(self, condition_type: str) -> Condition | None:
        """The condition of that type, or None."""
        return next((c for c in self.conditions if c.type == condition_type), None)
