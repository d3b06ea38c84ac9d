"""What a reconcile pass sees, the parts both families share: an immutable snapshot of everything a decision may depend on.

The controller builds a World from its informer caches (and nothing else: no API call happens
inside a decision), then calls the pure function of the family. Time and fresh identifiers come
in as fields, never from a clock or a random source, so the same World always gives the same
Decision and every seed transition is a table test.

Only what the decision needs is carried, already reduced: a Job is its state, not its manifest;
a result is the runner's report as parsed from the durable result record; the source
ConfigMap is the selected files' content digest (and the files themselves, so a snapshot can
be written), never the ConfigMap object.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ptah_operator.api.approvals import PtahMigrationApproval, PtahSchemaApproval
from ptah_operator.api.common import ExecutionBinding
from ptah_operator.api.constants import Engine
from ptah_operator.api.images import image_digest
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan
from ptah_operator.api.realm import PtahRealm
from ptah_operator.api.source_policy import SourcePolicy


class JobPhase(StrEnum):
    """What a Job's status says, reduced to what a decision can use."""

    ACTIVE = "Active"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


POD_START_REASONS = frozenset(
    {
        "CreateContainerConfigError",
        "CreateContainerError",
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
    }
)
"""The waiting reasons of a container that will not start by itself: its configuration (a
missing Secret or key) or its image. A Pod that shows one past a short grace cannot start."""

FAILED_CREATE = "FailedCreate"
"""The reason a Job's Pods cannot start when none could be created (a quota on pods, admission
refusing the Pod): the Job controller has started the Job and no Pod exists."""


@dataclass(frozen=True)
class PodProblem:
    """Why a Job's Pod cannot start, in Kubernetes' reason word and, for a missing Secret,
    ConfigMap or key, their names; never the server's message."""

    reason: str
    detail: str | None = None
    """What is missing, by name only: `Secret orders-database not found`, `Secret
    orders-database has no key url`."""
    since: dt.datetime | None = None
    """Since when the Pod has been unable to start: when the manager first saw it so (the Pod
    API has no time for a waiting reason; controller/world.py `ProblemOnsets`); the lifecycle
    waits a short grace from it."""


@dataclass(frozen=True)
class JobState:
    """A Job the resource owns, found by its deterministic name."""

    name: str
    uid: str
    operation_id: str
    phase: JobPhase
    reason: str | None = None
    """Why a Failed Job failed, its condition's reason word (BackoffLimitExceeded,
    DeadlineExceeded); the condition's message is not taken."""
    message: str | None = None
    """How the failing container ended, by its name, exit code and Kubernetes' reason word
    (`container run exited 1 (Error)`); never its termination message, which is text the
    container wrote and stays in the Pod (issue #18)."""
    finished_at: dt.datetime | None = None
    """When the Job ended (its Complete or Failed condition), for a Job that ended. A result
    the runner reported may reach the informer cache a moment after the Job's end does, so a
    Job that ended with no result is judged only after a grace period from this instant."""
    snapshot_refused: bool = False
    """The init container refused the snapshot (SRC-CM-08): the container that holds the
    database URL never started, so the operation did nothing at all."""
    pod_problem: PodProblem | None = None
    """Why its Pod cannot start (a missing Secret or key, an image that cannot be pulled, no
    Pod created), when it cannot; none of its containers has run."""
    suspended: bool = False
    """Someone set the Job's `spec.suspend`: the Job controller runs no Pod of it, and never
    ends it, while it stays so."""
    created_at: dt.datetime | None = None
    """When the Job was created (metadata.creationTimestamp, which nobody can change): a run's
    hard cap counts from it (issue #18, fourth review)."""
    deleting: bool = False
    """The Job is marked for deletion (metadata.deletionTimestamp): the Job controller starts no
    Pod of it any more, so a run whose end waits for its Job to go counts it as gone."""
    report_witnessed: bool = False
    """The Job ended, and the one container of it that reports (`run`, `resolve` or `verify`)
    ended as the runner ends once the endpoint stored its report: exit code 0 (REPORTED) or 1
    (NOT_DONE) as the kubelet saw it, never restarted, and not long after the Job's end. Only
    then is a result record of the run believed: a record alone is whatever the first holder
    of the operation's token posted, and one posted before a runner that was then killed would
    otherwise be the run's word (issue #18; docs/security.md, "The run's own exit")."""


@dataclass(frozen=True)
class MadeJob:
    """An Apply Job this manager created (the API server's 201), by the create's answer: the
    manager never creates a Job of that name again, since a second one would run the Apply
    twice (issue #18: a Job made, finished and deleted before any pass saw it)."""

    uid: str | None
    """None: asked for, and no answer came (a timeout, a 5xx, the process ended): it may have
    been made all the same."""
    created_at: dt.datetime | None
    gone: bool = False
    """Asked for again while no cache showed it, the API server answered 404: it was made and
    is gone, and the run begun with it is followed as a dispatched run whose Job is gone."""


@dataclass(frozen=True)
class OperationResult:
    """The result a runner reported for an operation, read back from its durable record."""

    operation_id: str
    operation_type: str
    received_at: dt.datetime
    payload: Mapping[str, Any]
    """The runner's report, contract `ptah.run/result/v1` (docs/design/migration-path.md)."""
    record_name: str | None = None
    """The record's name: `ptah-result-<hex>`, or the endpoint's fallback (None: the former)."""


@dataclass(frozen=True)
class SourceFiles:
    """The source ConfigMap's selected keys as files, with their content digest."""

    config_map_name: str
    config_map_uid: str
    files: Mapping[str, bytes]
    content_digest: str
    manifest: bytes
    refusal: str | None = None
    """Why these files cannot be a source (a name not allowed, too large); the rule named."""
    source_policy_digest: str | None = None
    """SHA-256 of the source policy the files were checked against, when the source names one;
    recorded beside the resolution and bound into every plan made from it (SRC-POL-06)."""


@dataclass(frozen=True)
class PolicyFile:
    """A policy held in a ConfigMap key: the verification policy of an OCI source (which the
    Verify Job evaluates; the manager only sees when it changes), or a source policy
    (sourcePolicyFrom, which the manager evaluates itself, parsed by the controller)."""

    name: str
    key: str
    digest: str | None
    """SHA-256 of the key's bytes; None when the ConfigMap or the key does not exist."""
    policy: SourcePolicy | None = None
    """A source policy, parsed; None for a verification policy or one that cannot be read."""
    error: str | None = None
    """Why a source policy cannot be read (never its content)."""


@dataclass(frozen=True)
class Claimant:
    """Another resource that names the same coordination key (the realm census)."""

    kind: str
    namespace: str
    name: str
    uid: str
    shared_realm: bool
    suspended: bool


@dataclass(frozen=True)
class LeaseState:
    """The database-realm Lease of the coordination key, as the informer cache holds it."""

    name: str
    namespace: str
    holder: str | None
    """The operation id that holds it, or None when free."""
    epoch: int
    """Incremented on every change of holder: a result produced across an epoch change is
    discarded (LCK-10, LCK-11)."""
    expired: bool
    holder_uid: str | None = None
    """The UID of the resource whose operation took it (the Lease's annotation)."""


@dataclass(frozen=True)
class RunnerConfig:
    """How this manager runs operations: fixed at start-up, the same for every pass."""

    image: str
    result_url: str
    """Where runners report, e.g. https://ptah-operator.ptah-system.svc:9443/v1/results."""
    binding: ExecutionBinding
    service_account_name: str | None = None
    job_ttl_seconds: int = 300
    failed_apply_ttl_seconds: int = 86400
    insecure_registries: tuple[str, ...] = ()
    """Registries (host:port) the runner may reach over plain HTTP (a local registry)."""
    allowed_images: frozenset[str] = frozenset()
    """The digests (`sha256:<hex>`) a resource's `spec.execution.image` may be pinned to
    besides `image`'s own; any other image is refused (issue #18, api/images.py)."""
    allowed_source_hosts: frozenset[str] = frozenset()
    """The repository and registry hosts (`host[:port]`, lowercased) a source's secretRef may
    be sent to; a credential for any other host builds no Job (api/source_hosts.py)."""

    def allows(self) -> frozenset[str]:
        """Every digest an operation Job may run: the allowlist and the manager's own image's."""
        own = image_digest(self.image)
        return self.allowed_images | {own} if own else self.allowed_images


@dataclass(frozen=True, kw_only=True)
class FamilyWorld:
    """What a pass of either family sees besides its own resource and kinds: the fields the
    core reads (reconcile/draft.py and the rules beside it). Each family's World
    (migration/world.py `MigrationWorld`, schema/world.py `SchemaWorld`) adds its resource and
    its own objects, and narrows `plans` and `approvals` to its kinds."""

    now: dt.datetime
    new_operation_id: str
    """A fresh id the decision may claim; unused when nothing new starts."""
    runner: RunnerConfig
    source: SourceFiles | None = None
    """The ConfigMap source's files; None when the ConfigMap does not exist (or the source
    is not a ConfigMap)."""
    verification_policy: PolicyFile | None = None
    """The OCI source's verification policy; None when the source is not an OCI artifact."""
    source_policy: PolicyFile | None = None
    """The source policy a ConfigMap or Git source names (sourcePolicyFrom), parsed; None when
    it names none."""
    snapshots: frozenset[str] = frozenset()
    """Names of the snapshot ConfigMaps this resource owns that exist."""
    jobs: Mapping[str, JobState] = field(default_factory=dict)
    """The resource's Jobs by name. A Job the controller created must be here from then on:
    the controller waits for its cache to hold its own creates (as controller-runtime's
    expectations do), because an Apply claim with no Job is withdrawn when what it rests on
    moved, and only an absent Job makes that safe."""
    jobs_made: Mapping[str, MadeJob] = field(default_factory=dict)
    """The Apply Jobs this manager created for the resource, by name (`MadeJob`): a claim with
    no Job seen whose Job is here began, and is never withdrawn nor its Job made again."""
    claims_written: frozenset[str] | None = None
    """The operation ids of the claims this manager process wrote for the resource (asked to
    write: remembered before the write), or None where nobody keeps them (a table test). A
    claim on record that is not among them was written by another process (before a restart,
    or the previous leader): its Apply Job, not there and not made here (`jobs_made`), may have
    been made and removed while no one watched (runs.made_elsewhere)."""
    job_refusals: Mapping[str, str] = field(default_factory=dict)
    """Jobs the API server refused to create (admission, validation, a quota), by name, with
    the reason it gave, free of SQL and credentials. Such a Job does not exist and never will
    as built."""
    running_pods: frozenset[str] = frozenset()
    """The operations (by id) with a Pod not yet Succeeded or Failed: a Pod its Job controls,
    or one that still carries the operation's label after its Job went (orphaned, or still
    terminating). A run is over only once none of its Pods runs (issue #18)."""
    results: Mapping[str, OperationResult] = field(default_factory=dict)
    """Reported results by operation id (contract ptah.run/result/v1)."""
    plans: Mapping[str, PtahMigrationPlan | PtahSchemaPlan] = field(default_factory=dict)
    """The resource's plans by name."""
    approvals: tuple[PtahMigrationApproval | PtahSchemaApproval, ...] = ()
    """Approvals in the namespace that name this resource."""
    claimants: tuple[Claimant, ...] = ()
    """Every resource (this one included) whose coordination key digest matches."""
    realm: PtahRealm | None = None
    """The PtahRealm spec.target.realm names, when it names one and it exists."""
    realm_missing: bool = False
    """spec.target.realm names a PtahRealm that does not exist."""
    lease: LeaseState | None = None
    """The database-realm Lease of the coordination key."""
    supported_engines: frozenset[Engine] = frozenset(Engine)
    """Engines this manager's runner can operate; any other is Blocked UnsupportedEngine."""
    manager_namespace: str = "ptah-system"
    """Where the database-realm Leases live (the manager's namespace)."""
