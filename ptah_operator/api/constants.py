"""The operator's vocabulary, spelled exactly as the seed documents spell it.

Every phase, condition type and reason, Event reason, annotation and label key, journal entry
type, outcome and operation type that other layers use lives here, so that a name is written
once and a misspelling is a NameError rather than a status nobody can match. Where the seeds
leave a name open, the "Decisions" section of REQUIREMENTS.md fixes it, and this module follows
that.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

GROUP: Final = "operator.ptah.run"
VERSION: Final = "v1alpha1"
API_VERSION: Final = "operator.ptah.run/v1alpha1"
CATEGORY: Final = "ptah"


class Kind(StrEnum):
    """The kinds of group operator.ptah.run."""

    PTAH_SCHEMA = "PtahSchema"
    PTAH_MIGRATION = "PtahMigration"
    PTAH_SCHEMA_PLAN = "PtahSchemaPlan"
    PTAH_SCHEMA_PLAN_CHUNK = "PtahSchemaPlanChunk"
    PTAH_MIGRATION_PLAN = "PtahMigrationPlan"
    PTAH_SCHEMA_APPROVAL = "PtahSchemaApproval"
    PTAH_MIGRATION_APPROVAL = "PtahMigrationApproval"
    PTAH_MIGRATION_RUN_ACKNOWLEDGMENT = "PtahMigrationRunAcknowledgment"
    PTAH_REALM = "PtahRealm"


# --- spec vocabulary -------------------------------------------------------------------------


class Engine(StrEnum):
    """The database engine behind spec.target."""

    POSTGRESQL = "PostgreSQL"
    MYSQL = "MySQL"
    MARIADB = "MariaDB"


class ApplyPolicy(StrEnum):
    """What a published plan may do (spec.policy.apply)."""

    ON_APPROVAL = "OnApproval"
    ALWAYS = "Always"
    NEVER = "Never"


class TransactionMode(StrEnum):
    """How Ptah wraps a migration file (spec.policy.transactionMode); unset lets Ptah pick."""

    FILE = "file"
    NONE = "none"


class Sharing(StrEnum):
    """Whether a PtahRealm lets more than one resource claim its database."""

    EXCLUSIVE = "Exclusive"
    SHARED = "Shared"


class SourceKind(StrEnum):
    """Which of spec.artifact, spec.configMap or spec.git a resolution came from."""

    ARTIFACT = "Artifact"
    CONFIG_MAP = "ConfigMap"
    GIT = "Git"


ARTIFACT_TYPE_SCHEMA: Final = "application/vnd.stokaro.ptah.schema.v1"
ARTIFACT_TYPE_MIGRATIONS: Final = "application/vnd.stokaro.ptah.migrations.v1"

DEFAULT_INTERVAL: Final = "10m"
DEFAULT_LOCK_TIMEOUT: Final = "30s"
"""How long one schema statement may wait for a lock on what it changes."""
DEFAULT_FAILURE_RETRY_INTERVAL: Final = "1m"
MIN_INTERVAL: Final = "10s"
MAX_INTERVAL: Final = "24h"
"""The bounds of spec.interval and spec.execution.failureRetryInterval, the Go peer's: shorter
reads the database in a loop, longer leaves a moved tag or a failed read unnoticed for days."""
DEFAULT_REVISION_TABLE: Final = "schema_migrations"

# Plan contract versions (Decision 21): what a plan binds in place of an artifact digest.
PLAN_CONTRACT_OCI: Final = 1
PLAN_CONTRACT_CONFIGMAP_GIT: Final = 2


# --- phases ------------------------------------------------------------------------------------


class SchemaPhase(StrEnum):
    """status.phase of a PtahSchema (SCH-01)."""

    PENDING = "Pending"
    RESOLVING = "Resolving"
    VERIFYING = "Verifying"
    OBSERVING = "Observing"
    PLANNING = "Planning"
    IN_SYNC = "InSync"
    READY_TO_APPLY = "ReadyToApply"
    AWAITING_APPROVAL = "AwaitingApproval"
    APPLYING = "Applying"
    VERIFYING_CONVERGENCE = "VerifyingConvergence"
    BLOCKED = "Blocked"
    FAILED = "Failed"
    SUSPENDED = "Suspended"


class MigrationPhase(StrEnum):
    """status.phase of a PtahMigration (MIG-01)."""

    PENDING = "Pending"
    RESOLVING = "Resolving"
    VERIFYING = "Verifying"
    READING = "Reading"
    PLANNING = "Planning"
    AWAITING_APPROVAL = "AwaitingApproval"
    APPLYING = "Applying"
    VERIFYING_HISTORY = "VerifyingHistory"
    IN_SYNC = "InSync"
    BLOCKED = "Blocked"
    FAILED = "Failed"
    SUSPENDED = "Suspended"


# --- operations --------------------------------------------------------------------------------


class OperationType(StrEnum):
    """An operation the operator runs as a Job (SCH-03, MIG-02)."""

    RESOLVE = "Resolve"
    VERIFY = "Verify"
    OBSERVE = "Observe"
    PLAN = "Plan"
    APPLY = "Apply"
    HISTORY = "History"


SCHEMA_OPERATIONS: Final = frozenset(
    {
        OperationType.RESOLVE,
        OperationType.VERIFY,
        OperationType.OBSERVE,
        OperationType.PLAN,
        OperationType.APPLY,
    }
)
MIGRATION_OPERATIONS: Final = frozenset(
    {OperationType.RESOLVE, OperationType.VERIFY, OperationType.HISTORY, OperationType.APPLY}
)


class Authorization(StrEnum):
    """What authorized an Apply: a person's approval, or the policy (apply: Always)."""

    APPROVAL = "Approval"
    POLICY = "Policy"


# --- outcomes ----------------------------------------------------------------------------------


class RunOutcome(StrEnum):
    """status.lastRun.outcome of a migration run (RUN-01)."""

    UP_TO_DATE = "UpToDate"
    APPLIED = "Applied"
    FAILED = "Failed"
    PARTIAL = "Partial"
    UNKNOWN = "Unknown"


class ApplyOutcome(StrEnum):
    """How a schema Apply ended, as its ApplyFinished entry records it (JNL-06)."""

    SUCCEEDED = "Succeeded"
    UNKNOWN = "Unknown"


class VerifiedOutcome(StrEnum):
    """What the reading after an Apply or a run found (JNL-07, JNL-08)."""

    IN_SYNC = "InSync"
    DRIFT_REMAINS = "DriftRemains"
    SUPERSEDED = "Superseded"
    UNKNOWN = "Unknown"
    PENDING = "Pending"
    BLOCKED = "Blocked"


class JournalOutcome(StrEnum):
    """Every outcome a journal entry can carry; its meaning depends on the entry type (JNL-15)."""

    UP_TO_DATE = "UpToDate"
    APPLIED = "Applied"
    FAILED = "Failed"
    PARTIAL = "Partial"
    UNKNOWN = "Unknown"
    SUCCEEDED = "Succeeded"
    IN_SYNC = "InSync"
    DRIFT_REMAINS = "DriftRemains"
    SUPERSEDED = "Superseded"
    PENDING = "Pending"
    BLOCKED = "Blocked"


class HistoryVerdict(StrEnum):
    """The one of six verdicts a history read gives (MIG-33)."""

    DIRTY = "Dirty"
    MODIFIED = "Modified"
    OUT_OF_ORDER = "OutOfOrder"
    AHEAD = "Ahead"
    NOTHING_PENDING = "NothingPending"
    READY_TO_PLAN = "ReadyToPlan"


class RevisionState(StrEnum):
    """The state of one revision-table row."""

    APPLIED = "Applied"
    DIRTY = "Dirty"
    BASELINE = "Baseline"


class Severity(StrEnum):
    """Severity of a drift category or a plan finding, lowest first."""

    INFO = "Info"
    LOW = "Low"
    MEDIUM = "Medium"
    HIGH = "High"
    CRITICAL = "Critical"


# --- conditions --------------------------------------------------------------------------------


class ConditionType(StrEnum):
    """status.conditions[].type on PtahSchema and PtahMigration."""

    READY = "Ready"
    PROGRESSING = "Progressing"
    IN_SYNC = "InSync"
    RECONCILIATION_FAILED = "ReconciliationFailed"
    ARTIFACT_RESOLVED = "ArtifactResolved"
    ARTIFACT_VERIFIED = "ArtifactVerified"


class ConditionStatus(StrEnum):
    """metav1.ConditionStatus."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Reason(StrEnum):
    """Condition reasons. The seeds' names first, then those the Decisions section fixes."""

    # Sources (SRC-CM-05, SRC-GIT-05, SRC-OCI).
    SNAPSHOT_TAKEN = "SnapshotTaken"
    COMMIT_RESOLVED = "CommitResolved"
    DIGEST_RESOLVED = "DigestResolved"
    POLICY_SATISFIED = "PolicySatisfied"
    POLICY_REFUSED = "PolicyRefused"
    SOURCE_REFUSED = "SourceRefused"
    SNAPSHOT_MISSING = "SnapshotMissing"
    # Migration history verdicts (MIG-36..MIG-39, MIG-53, PATH-18).
    HISTORY_MATCHED = "HistoryMatched"
    HISTORY_DIRTY = "HistoryDirty"
    HISTORY_MODIFIED = "HistoryModified"
    HISTORY_OUT_OF_ORDER = "HistoryOutOfOrder"
    HISTORY_AHEAD = "HistoryAhead"
    HISTORY_PENDING = "HistoryPending"
    # Policy and decision (MIG-13, MIG-53).
    APPLY_DISABLED = "ApplyDisabled"
    AWAITING_APPROVAL = "AwaitingApproval"
    READY_TO_APPLY = "ReadyToApply"
    PROTECTED_TABLE = "ProtectedTable"
    DESTRUCTIVE_CHANGE_DISALLOWED = "DestructiveChangeDisallowed"
    PLAN_PUBLISHED = "PlanPublished"
    PLAN_STALE = "PlanStale"
    # Apply, proof and unresolved outcomes (SCH-59..SCH-61, PATH-17).
    APPLY_OUTCOME_UNKNOWN = "ApplyOutcomeUnknown"
    SCOPED_CONVERGED = "ScopedConverged"
    CONVERGED_AFTER_UNKNOWN_OUTCOME = "ConvergedAfterUnknownOutcome"
    DRIFT_REMAINS = "DriftRemains"
    TARGET_IDENTITY_CHANGED = "TargetIdentityChanged"
    VERIFYING_CONVERGENCE = "VerifyingConvergence"
    VERIFYING_HISTORY = "VerifyingHistory"
    RUN_FAILED = "RunFailed"
    RUN_ACKNOWLEDGED = "RunAcknowledged"
    APPLY_SETTLED = "ApplySettled"
    # Realm and engine (LCK-04, Decision 18).
    REALM_CONFLICT = "RealmConflict"
    REALM_NOT_AUTHORIZED = "RealmNotAuthorized"
    UNSUPPORTED_ENGINE = "UnsupportedEngine"
    # Operations (Decision 15, Decision 17).
    OPERATION_IN_PROGRESS = "OperationInProgress"
    OPERATION_FAILED = "OperationFailed"
    JOB_NOT_BUILT = "JobNotBuilt"
    JOB_REFUSED = "JobRefused"
    LEASE_CONTINUITY_LOST = "LeaseContinuityLost"
    CONFIGURATION_ERROR = "ConfigurationError"
    SUSPENDED = "Suspended"
    # More pending migrations than one plan carries (MAX_PLAN_VERSIONS): Blocked, not retried.
    TOO_MANY_PENDING = "TooManyPending"


# --- Events ------------------------------------------------------------------------------------


class EventType(StrEnum):
    """core/v1 Event.type."""

    NORMAL = "Normal"
    WARNING = "Warning"


class EventReason(StrEnum):
    """Event reasons the operator writes."""

    READ_REQUESTED = "ReadRequested"
    READ_REQUEST_INVALID = "ReadRequestInvalid"
    READ_RESTARTED = "ReadRestarted"
    PLAN_STALE = "PlanStale"
    PLAN_PUBLISHED = "PlanPublished"
    APPROVAL_ACCEPTED = "ApprovalAccepted"
    OPERATION_STARTED = "OperationStarted"
    OPERATION_FAILED = "OperationFailed"
    APPLY_FINISHED = "ApplyFinished"
    RUN_FINISHED = "RunFinished"
    RUN_ACKNOWLEDGED = "RunAcknowledged"
    VERIFIED = "Verified"
    SETTLED_APPLY = "SettledApply"
    SETTLED_APPLY_INVALID = "SettledApplyInvalid"
    SNAPSHOT_TAKEN = "SnapshotTaken"
    SNAPSHOT_DELETED = "SnapshotDeleted"
    SOURCE_RESOLVED = "SourceResolved"
    ARTIFACT_VERIFIED = "ArtifactVerified"
    ARTIFACT_REFUSED = "ArtifactRefused"
    LEASE_CONTINUITY_LOST = "LeaseContinuityLost"
    LEASE_RELEASED = "LeaseReleased"
    TARGET_IDENTITY_CHANGED = "TargetIdentityChanged"
    RESULT_UNSEALED = "ResultUnsealed"
    RESULT_CONFLICT = "ResultConflict"
    RESULT_BLOCKED = "ResultBlocked"


# --- journal -----------------------------------------------------------------------------------


class JournalEntryType(StrEnum):
    """status.journal.entries[].type (JNL-02)."""

    PLAN_PUBLISHED = "PlanPublished"
    APPROVAL_ACCEPTED = "ApprovalAccepted"
    APPLY_FINISHED = "ApplyFinished"
    VERIFIED = "Verified"
    RUN_FINISHED = "RunFinished"
    RUN_ACKNOWLEDGED = "RunAcknowledged"
    OPERATION_FAILED = "OperationFailed"


JOURNAL_MAX_ENTRIES: Final = 64
JOURNAL_MAX_AGE_DAYS: Final = 30

# --- bounds on status --------------------------------------------------------------------------

MAX_CONDITIONS: Final = 16
MAX_REVISIONS: Final = 20
MAX_LISTED_VERSIONS: Final = 100
MAX_PLAN_VERSIONS: Final = 1000
MAX_DRIFT_CATEGORIES: Final = 32
MAX_PLAN_FINDINGS: Final = 64
MAX_PLAN_CHUNKS: Final = 64
MAX_CHUNK_CHARS: Final = 262144
MAX_PROTECTED_TABLES: Final = 256
MAX_REALM_NAMESPACES: Final = 256
MAX_GROUPS: Final = 64
MAX_MESSAGE_LENGTH: Final = 1024
MAX_CARRIED_OUT_PLANS: Final = 32
READ_REQUEST_MAX_BYTES: Final = 64

# --- metadata keys -----------------------------------------------------------------------------

ANNOTATION_READ_REQUESTED_AT: Final = f"{GROUP}/read-requested-at"
ANNOTATION_SETTLED_APPLY: Final = f"{GROUP}/settled-apply"
# The hold of an unresolved run, kept in metadata too so that a restore without status brings it
# back (MIG-24, RUN-21).
ANNOTATION_UNRESOLVED_RUN: Final = f"{GROUP}/unresolved-run"
# On a database-realm Lease: the UID of the resource whose operation took it, so that resource
# can recognize a Lease it took but never recorded (the manager stopped between the two).
ANNOTATION_LEASE_HOLDER_UID: Final = f"{GROUP}/holder-uid"
# On a PtahMigration or PtahSchema: who wrote its spec since its last Apply, each with the
# generation their write gave it, as admission authenticated them, sealed with the manager's key
# (webhook/writers.py). Admission sets it on every write that changes the spec and keeps it on
# every other write; a value a client wrote past admission does not open.
ANNOTATION_SPEC_WRITTEN_BY: Final = f"{GROUP}/spec-written-by"
# On a result record: the endpoint's seal over the namespace, the operation, the owner's UID, the
# record's name, the attempt and the digest of result.json (api/result_seal.py); a record whose seal does not open is not a
# result.
ANNOTATION_RESULT_SEAL: Final = f"{GROUP}/result-seal"
# On a result record: the attempt of the claim it was stored under (the seal covers it, and the
# record's name): a saved record of a failed attempt is no result of the next one.
ANNOTATION_RESULT_ATTEMPT: Final = f"{GROUP}/result-attempt"

LABEL_MANAGED_BY: Final = "app.kubernetes.io/managed-by"
MANAGED_BY: Final = "ptah-operator"
LABEL_OWNER_KIND: Final = f"{GROUP}/owner-kind"
LABEL_OWNER_NAME: Final = f"{GROUP}/owner-name"
LABEL_OWNER_UID: Final = f"{GROUP}/owner-uid"
LABEL_OPERATION_ID: Final = f"{GROUP}/operation-id"
LABEL_OPERATION_TYPE: Final = f"{GROUP}/operation"
LABEL_PLAN: Final = f"{GROUP}/plan"
LABEL_SNAPSHOT: Final = f"{GROUP}/snapshot"
LABEL_COORDINATION_DIGEST: Final = f"{GROUP}/coordination-digest"

FINALIZER: Final = f"{GROUP}/cleanup"
SNAPSHOT_NAME_PREFIX: Final = "ptah-src-"
