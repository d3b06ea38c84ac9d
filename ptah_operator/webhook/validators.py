"""What the validating webhook decides, as pure functions: the evidence checks.

The validating webhook refuses a decision the evidence no longer supports (APR-05..APR-10): an
approval names one exact plan, and that plan is approvable only while it is the resource's
current plan and the publication status.plan records (a plan retired and published again by a
later read is the same object, APR-12), the resource waits for a decision, and what the plan was computed from (for a
migration the history reading, for a schema the published plan's fingerprint and digest; the
database, the source, the executor) is still what the resource's status records. An
acknowledgment must name the run `status.unresolvedRun` holds.

Each refusal is a `Finding`: a stable code (for logs, metrics and tests) and a message a person
reads in kubectl's output, naming what moved. Messages name objects, versions and digests only.

`VALIDATORS` holds one validator object per kind, by Kind (controller-runtime's
`CustomValidator` behind `WithCustomValidator`): it reads what its kind names through the
`Reader` it is handed and returns the findings. No HTTP and no Kubernetes client here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, Protocol, TypeVar

from ptah_operator.api.approvals import (
    PtahMigrationApproval,
    PtahMigrationApprovalSpec,
    PtahMigrationRunAcknowledgment,
    PtahMigrationRunAcknowledgmentSpec,
    PtahSchemaApproval,
    PtahSchemaApprovalSpec,
)
from ptah_operator.api.common import (
    ExecutionBinding,
    ObjectReference,
    PlanReference,
    PlanSourceBinding,
    PublishedPlan,
    SourceRecord,
    UserInfo,
)
from ptah_operator.api.constants import (
    Kind,
    MigrationPhase,
    SchemaPhase,
)
from ptah_operator.api.fingerprints import plan_fingerprint_matches, plan_source_binding
from ptah_operator.api.kinds import from_manifest
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.objectmeta import Resource
from ptah_operator.api.plans import (
    PtahMigrationPlan,
    PtahMigrationPlanSpec,
    PtahSchemaPlan,
    PtahSchemaPlanSpec,
)
from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus, SchemaPlanStatus
from ptah_operator.reconcile.bindings import Rule, binding_changes
from ptah_operator.webhook.writers import WriterSeal, writers_since_apply


@dataclass(frozen=True)
class Finding:
    """One reason to refuse: a stable code and a readable message."""

    code: str
    message: str


OBJECT_NOT_FOUND: Final = "ObjectNotFound"
OBJECT_REPLACED: Final = "ObjectReplaced"
NOT_AWAITING_APPROVAL: Final = "NotAwaitingApproval"
NO_PLAN: Final = "NoPlan"
PLAN_REPLACED: Final = "PlanReplaced"
PLAN_REPUBLISHED: Final = "PlanRepublished"
APPROVER_NOT_DISTINCT: Final = "ApproverNotDistinct"
SPEC_WRITER_UNKNOWN: Final = "SpecWriterUnknown"
PLAN_OF_ANOTHER_RESOURCE: Final = "PlanOfAnotherResource"
FINGERPRINT_MISMATCH: Final = "FingerprintMismatch"
HISTORY_MOVED: Final = "HistoryMoved"
TARGET_CHANGED: Final = "TargetChanged"
SOURCE_CHANGED: Final = "SourceChanged"
EXECUTOR_CHANGED: Final = "ExecutorChanged"
NO_UNRESOLVED_RUN: Final = "NoUnresolvedRun"
RUN_MISMATCH: Final = "RunMismatch"
NOT_PUBLISHED: Final = "NotPublished"
DIGEST_MISMATCH: Final = "DigestMismatch"
DATABASE_MOVED: Final = "DatabaseMoved"


_FULL_DIGEST = re.compile(r"sha256:([0-9a-f]{12})[0-9a-f]{52}")


def short_digest(value: str | None) -> str:
    """A value with each digest in it as people compare them: sha256: and 12 hex digits."""
    if value is None:
        return "none"
    return _FULL_DIGEST.sub(r"sha256:\1", value)


def _resource_findings(
    kind: str,
    ref: ObjectReference,
    obj: PtahMigration | PtahSchema | None,
    namespace: str,
) -> list[Finding]:
    """The resource the decision names exists, and is the same object (not a re-created one)."""
    if obj is None:
        return [Finding(OBJECT_NOT_FOUND, f"{kind} {ref.name} does not exist in {namespace}")]
    if obj.metadata.uid != ref.uid:
        return [
            Finding(
                OBJECT_REPLACED,
                f"{kind} {ref.name} is not the one named: it was re-created "
                f"(its UID is {obj.metadata.uid}, the request names {ref.uid})",
            )
        ]
    return []


def _distinct_approver_findings(
    resource_name: str,
    resource: PtahMigration | PtahSchema,
    approver: UserInfo | None,
    seal: WriterSeal | None,
) -> list[Finding]:
    """Four eyes: under spec.policy.requireDistinctApprover, the approver wrote none of the
    resource's spec since its last Apply, as admission's sealed record names the writers (a
    record that does not open names nobody; writers.py)."""
    if not resource.spec.policy.require_distinct_approver:
        return []
    generation = resource.metadata.generation
    since = writers_since_apply(resource, seal) if seal is not None else None
    if since is None or since.unrecorded_through:
        return [
            Finding(
                SPEC_WRITER_UNKNOWN,
                f"spec.policy.requireDistinctApprover is set and admission holds no record of "
                f"who wrote the spec of {resource_name} since its last Apply (generation "
                f"{generation or 'unknown'}: a write made past admission, or a record it did "
                "not seal), so it cannot tell the approver apart from them",
            )
        ]
    who = approver.username if approver is not None else None
    mine = [w for w in since.writers if w.username == who]
    if approver is None or mine:
        at = mine[0].generation if mine else generation
        return [
            Finding(
                APPROVER_NOT_DISTINCT,
                f"spec.policy.requireDistinctApprover is set and {who or 'an unknown person'} "
                f"wrote the spec of {resource_name} since its last Apply (generation {at}): "
                "another person must approve",
            )
        ]
    return []


def _current_plan_findings(
    resource: str, ref: ObjectReference, current: PlanReference | None
) -> list[Finding]:
    """The approved plan is the resource's current status.plan (APR-05, APR-12)."""
    if current is None:
        return [Finding(NO_PLAN, f"{resource} has no plan; there is nothing to approve")]
    if current.name != ref.name:
        return [
            Finding(
                PLAN_REPLACED,
                f"plan {ref.name} was replaced: the current plan of {resource} is {current.name}",
            )
        ]
    if current.uid is not None and current.uid != ref.uid:
        return [
            Finding(
                PLAN_REPLACED,
                f"plan {ref.name} was replaced by a new plan of the same name "
                f"(UID {current.uid}, the approval names {ref.uid})",
            )
        ]
    return []


def _publication_findings(
    resource: str, plan_name: str, named: str | None, current: PublishedPlan
) -> list[Finding]:
    """The approval names the publication status.plan records (APR-12): a plan retired before it
    ran and published again by a later read is the same object, and an approval of the retired
    publication (what the person reviewed then) is not an approval of this one. Admission fills
    planOperationID in when it is absent, so a value that differs was supplied or is stale."""
    if named == current.operation_id:
        return []
    return [
        Finding(
            PLAN_REPUBLISHED,
            f"plan {plan_name} was retired and published again since the publication the "
            f"approval names: {resource} publishes it from read "
            f"{current.operation_id or 'unrecorded'}, the approval names "
            f"{named or 'none'}; review it again and approve the current publication",
        )
    ]


def _plan_object_findings(
    kind: str,
    ref: ObjectReference,
    plan: PtahMigrationPlan | PtahSchemaPlan | None,
    namespace: str,
) -> list[Finding]:
    if plan is None:
        return [Finding(OBJECT_NOT_FOUND, f"{kind} {ref.name} does not exist in {namespace}")]
    if plan.metadata.uid != ref.uid:
        return [
            Finding(
                PLAN_REPLACED,
                f"{kind} {ref.name} was re-created (its UID is {plan.metadata.uid}, "
                f"the approval names {ref.uid})",
            )
        ]
    return []


def _owner_findings(
    plan_name: str, owner_kind: str, plan_owner: ObjectReference, named: ObjectReference
) -> list[Finding]:
    """The plan belongs to the resource the approval names (APR-03: no conflicting value)."""
    if plan_owner.name == named.name and plan_owner.uid == named.uid:
        return []
    return [
        Finding(
            PLAN_OF_ANOTHER_RESOURCE,
            f"plan {plan_name} belongs to {owner_kind} {plan_owner.name} "
            f"(UID {plan_owner.uid}), not to {named.name} (UID {named.uid})",
        )
    ]


def _fingerprint_findings(plan_name: str, named: str, actual: str) -> list[Finding]:
    if named == actual:
        return []
    return [
        Finding(
            FINGERPRINT_MISMATCH,
            f"planFingerprint {short_digest(named)} is not the fingerprint of plan {plan_name} "
            f"({short_digest(actual)})",
        )
    ]


# --- bindings ----------------------------------------------------------------------------------


# What each bound source field means to the person reading the refusal (APR-07, APR-08).
_SOURCE_FIELDS: Final[tuple[tuple[str, str], ...]] = (
    ("kind", "source kind"),
    ("ociDigest", "artifact digest (re-resolved)"),
    ("verificationPolicyDigest", "verification policy"),
    ("contentDigest", "content of the selected files"),
    ("configMapUID", "source ConfigMap (re-created)"),
    ("repositoryPathDigest", "repository or path"),
    ("sourcePolicyDigest", "source policy"),
)

_EXECUTION_FIELDS: Final[tuple[tuple[str, str], ...]] = (
    ("image", "runner image"),
    ("runnerVersion", "runner version"),
    ("protocolVersion", "runner protocol version"),
    ("engineVersion", "engine version"),
    ("digest", "execution binding digest"),
)


def _field_rule(
    key: str, label: str, planned: Mapping[str, Any], current: Mapping[str, Any]
) -> Rule[Mapping[str, Any]]:
    """One bound field as a binding rule, its words naming both values (`label before -> after`)."""
    before, after = short_digest(_text(planned.get(key))), short_digest(_text(current.get(key)))
    return Rule(f"{label} {before} -> {after}", lambda plan, now: plan.get(key) != now.get(key))


def _changes(
    planned: Mapping[str, Any], current: Mapping[str, Any], labels: tuple[tuple[str, str], ...]
) -> list[str]:
    """Every bound field that differs, in table order, by the planning's own rule walk
    (`reconcile.bindings.binding_changes`); the fields are compared against what the status
    records, not against what would be bound now."""
    rules = [_field_rule(key, label, planned, current) for key, label in labels]
    return binding_changes(planned, current, rules)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _dump(model: PlanSourceBinding | ExecutionBinding) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def execution_changes(planned: ExecutionBinding, current: ExecutionBinding) -> list[str]:
    """How the executor differs from the one a plan was made for; empty when it is the same.

    Two bindings that carry a digest are the same exactly when the digests are: the digest is
    the binding's identity, taken over every other field.
    """
    if planned.digest is not None and planned.digest == current.digest:
        return []
    return _changes(_dump(planned), _dump(current), _EXECUTION_FIELDS)


def source_changes(planned: PlanSourceBinding, current: SourceRecord) -> list[str]:
    """How the source the status records differs from what a plan bound; empty when it does not."""
    return _changes(_dump(planned), _dump(plan_source_binding(current)), _SOURCE_FIELDS)


def _target_findings(plan_name: str, planned: str, recorded: str | None) -> list[Finding]:
    """The database the status last read is the one the plan was made for (APR-07); a status
    that records no database identity is not compared."""
    if recorded is None or recorded == planned:
        return []
    return [
        Finding(
            TARGET_CHANGED,
            f"the database changed since plan {plan_name} was made: "
            f"{short_digest(planned)} -> {short_digest(recorded)}",
        )
    ]


def _bound_findings(
    word: str,
    plan_name: str,
    plan: PtahMigrationPlanSpec | PtahSchemaPlanSpec,
    status: PtahMigrationStatus | PtahSchemaStatus,
) -> list[Finding]:
    """The source and the executor the plan binds are what the status records (APR-08,
    APR-09); `word` names the resource ("migration", "schema")."""
    findings: list[Finding] = []
    if status.source is None:
        findings.append(
            Finding(SOURCE_CHANGED, f"the {word} records no resolved source to compare with")
        )
    elif changed := source_changes(plan.source, status.source):
        findings.append(
            Finding(
                SOURCE_CHANGED,
                f"the source changed since plan {plan_name} was made: " + ", ".join(changed),
            )
        )
    if status.execution_binding is None:
        findings.append(
            Finding(EXECUTOR_CHANGED, f"the {word} records no executor to compare with")
        )
    elif changed := execution_changes(plan.execution_binding, status.execution_binding):
        findings.append(
            Finding(
                EXECUTOR_CHANGED,
                f"the executor was rolled out since plan {plan_name} was made: "
                + ", ".join(changed),
            )
        )
    return findings


def _evidence_findings(
    plan_name: str, plan: PtahMigrationPlanSpec, status: PtahMigrationStatus
) -> list[Finding]:
    """What the plan was computed from is still what the migration's status records."""
    findings: list[Finding] = []
    history = status.history
    if history is None or history.fingerprint is None:
        findings.append(
            Finding(
                HISTORY_MOVED,
                f"the migration records no reading of the history; plan {plan_name} continues "
                f"reading {short_digest(plan.history_fingerprint)}",
            )
        )
    elif history.fingerprint != plan.history_fingerprint:
        findings.append(
            Finding(
                HISTORY_MOVED,
                f"the history moved since plan {plan_name} was made: the plan continues "
                f"reading {short_digest(plan.history_fingerprint)}, the latest reading is "
                f"{short_digest(history.fingerprint)} (current version "
                f"{history.current_version or 'none'})",
            )
        )
    recorded = None if history is None else history.target_identity_digest
    findings += _target_findings(plan_name, plan.target_identity_digest, recorded)
    return findings + _bound_findings("migration", plan_name, plan, status)


def _schema_evidence_findings(
    plan_name: str, plan: PtahSchemaPlanSpec, status: PtahSchemaStatus
) -> list[Finding]:
    """What a schema plan binds is still what the schema's status records: the database its
    drift was read from, the resolved source, the executor (APR-07..APR-09)."""
    recorded = None if status.drift is None else status.drift.target_identity_digest
    findings = _target_findings(plan_name, plan.target_identity_digest, recorded)
    findings += _drift_findings(plan_name, status)
    return findings + _bound_findings("schema", plan_name, plan, status)


def _drift_findings(plan_name: str, status: PtahSchemaStatus) -> list[Finding]:
    """The database's structure is still the one the plan was computed from: status.drift is
    the observation status.plan records it was computed after. A status.plan that records none
    (written before it did) is not compared."""
    planned = None if status.plan is None else status.plan.drift_digest
    if planned is None:
        return []
    if status.drift is None:
        return [
            Finding(
                DATABASE_MOVED,
                f"the schema records no observation of the database; plan {plan_name} was "
                f"computed after observation {short_digest(planned)}",
            )
        ]
    if status.drift.digest == planned:
        return []
    return [
        Finding(
            DATABASE_MOVED,
            f"the database's structure moved since plan {plan_name} was made: the plan was "
            f"computed after observation {short_digest(planned)}, the latest is "
            f"{short_digest(status.drift.digest)}",
        )
    ]


def _published_findings(
    plan_name: str, current: SchemaPlanStatus, plan: PtahSchemaPlanSpec
) -> list[Finding]:
    """The plan object is the one the schema published: its fingerprint still covers its spec
    (so its digest), and it is the fingerprint and digest status.plan recorded."""
    findings: list[Finding] = []
    if current.uid is None:
        findings.append(
            Finding(
                NOT_PUBLISHED,
                f"plan {plan_name} is not published yet (its chunks are being made); "
                "approve it once the schema waits for a decision",
            )
        )
    if not plan_fingerprint_matches(plan) or (
        current.fingerprint is not None and current.fingerprint != plan.fingerprint
    ):
        findings.append(
            Finding(
                FINGERPRINT_MISMATCH,
                f"plan {plan_name} does not hold the fingerprint it was published with "
                f"({short_digest(current.fingerprint)})",
            )
        )
    if current.digest is not None and current.digest != plan.digest:
        findings.append(
            Finding(
                DIGEST_MISMATCH,
                f"plan {plan_name} holds SQL of digest {short_digest(plan.digest)}, not the "
                f"{short_digest(current.digest)} the schema published",
            )
        )
    return findings


# --- the decisions -----------------------------------------------------------------------


PlanT = TypeVar("PlanT", PtahMigrationPlan, PtahSchemaPlan)
StatusT = TypeVar("StatusT", PtahMigrationStatus, PtahSchemaStatus)


@dataclass(frozen=True)
class _Approvable(Generic[StatusT, PlanT]):
    """What approving a migration's plan and a schema's plan do not share."""

    kind: Kind
    plan_kind: Kind
    word: str
    """The resource as messages name it: "migration", "schema"."""
    awaiting: str
    """The phase in which the resource waits for a decision."""
    owner: Callable[[PlanT], ObjectReference]
    """The resource a plan belongs to."""
    evidence: Callable[[str, StatusT, PlanT], list[Finding]]
    """What else the plan must still match, once it is the named plan of the named resource."""


def _approval_findings(
    what: _Approvable[StatusT, PlanT],
    spec: PtahMigrationApprovalSpec | PtahSchemaApprovalSpec,
    named: ObjectReference,
    namespace: str,
    resource: PtahMigration | PtahSchema | None,
    status: StatusT,
    plan: PlanT | None,
    seal: WriterSeal | None = None,
) -> list[Finding]:
    """Why an approval of `what` may not be admitted; empty when it may (APR-02..APR-10).

    `named` is the resource the approval names and `status` that resource's status (its
    default when it has none).
    """
    found = _resource_findings(what.kind, named, resource, namespace)
    if found or resource is None:
        return found
    resource_name = f"{what.word} {named.name}"
    findings = _distinct_approver_findings(resource_name, resource, spec.approved_by, seal)
    if status.phase != what.awaiting:
        findings.append(
            Finding(
                NOT_AWAITING_APPROVAL,
                f"{resource_name} is not waiting for a decision: its phase is "
                f"{status.phase or 'not set yet'}, not AwaitingApproval",
            )
        )
    replaced = _current_plan_findings(resource_name, spec.plan_ref, status.plan)
    if replaced or status.plan is None:
        # Whatever else differs follows from the replacement; naming it is enough.
        return findings + replaced
    republished = _publication_findings(
        resource_name, spec.plan_ref.name, spec.plan_operation_id, status.plan
    )
    if republished:
        return findings + republished
    plan_name = spec.plan_ref.name
    missing = _plan_object_findings(what.plan_kind, spec.plan_ref, plan, namespace)
    if missing or plan is None:
        return findings + missing
    findings += _owner_findings(plan_name, what.kind, what.owner(plan), named)
    findings += _fingerprint_findings(plan_name, spec.plan_fingerprint, plan.spec.fingerprint)
    return findings + what.evidence(plan_name, status, plan)


def _schema_plan_findings(
    plan_name: str, status: PtahSchemaStatus, plan: PtahSchemaPlan
) -> list[Finding]:
    """The plan is the one the schema published, and what it binds is still what the status
    records (status.plan is set: the plan is the schema's current plan)."""
    published = (
        [] if status.plan is None else _published_findings(plan_name, status.plan, plan.spec)
    )
    return published + _schema_evidence_findings(plan_name, plan.spec, status)


_MIGRATION: Final = _Approvable[PtahMigrationStatus, PtahMigrationPlan](
    kind=Kind.PTAH_MIGRATION,
    plan_kind=Kind.PTAH_MIGRATION_PLAN,
    word="migration",
    awaiting=MigrationPhase.AWAITING_APPROVAL,
    owner=lambda plan: plan.spec.migration_ref,
    evidence=lambda name, status, plan: _evidence_findings(name, plan.spec, status),
)

_SCHEMA: Final = _Approvable[PtahSchemaStatus, PtahSchemaPlan](
    kind=Kind.PTAH_SCHEMA,
    plan_kind=Kind.PTAH_SCHEMA_PLAN,
    word="schema",
    awaiting=SchemaPhase.AWAITING_APPROVAL,
    owner=lambda plan: plan.spec.schema_ref,
    evidence=_schema_plan_findings,
)


def check_migration_approval(
    spec: PtahMigrationApprovalSpec,
    namespace: str,
    migration: PtahMigration | None,
    plan: PtahMigrationPlan | None,
    seal: WriterSeal | None = None,
) -> list[Finding]:
    """Why a PtahMigrationApproval may not be admitted; empty when it may (APR-02..APR-10).
    `seal` opens the record of the migration's spec writers (four eyes)."""
    status = (migration.status if migration is not None else None) or PtahMigrationStatus()
    return _approval_findings(
        _MIGRATION, spec, spec.migration_ref, namespace, migration, status, plan, seal
    )


def check_schema_approval(
    spec: PtahSchemaApprovalSpec,
    namespace: str,
    schema: PtahSchema | None,
    plan: PtahSchemaPlan | None,
    seal: WriterSeal | None = None,
) -> list[Finding]:
    """Why a PtahSchemaApproval may not be admitted; empty when it may (APR-02..APR-10).

    It must name the schema (name, UID), the plan status.plan names (name, UID) and that
    plan's fingerprint, which binds its digest; the schema must be AwaitingApproval with that
    plan published; and what the plan binds (database, source, executor) must still be what
    the schema's status records.
    """
    status = (schema.status if schema is not None else None) or PtahSchemaStatus()
    return _approval_findings(_SCHEMA, spec, spec.schema_ref, namespace, schema, status, plan, seal)


def check_run_acknowledgment(
    spec: PtahMigrationRunAcknowledgmentSpec, namespace: str, migration: PtahMigration | None
) -> list[Finding]:
    """Why a PtahMigrationRunAcknowledgment may not be admitted (RUN-06).

    It must name the run status.unresolvedRun holds: its operation, its plan, its Job and its
    outcome. A UID the status does not record (a run that left no Job UID) is not compared.
    """
    found = _resource_findings(Kind.PTAH_MIGRATION, spec.migration_ref, migration, namespace)
    if found or migration is None:
        return found
    status = migration.status or PtahMigrationStatus()
    resource = f"migration {spec.migration_ref.name}"
    run = status.unresolved_run
    if run is None:
        return [
            Finding(
                NO_UNRESOLVED_RUN,
                f"{resource} holds no unresolved run: it was settled, or never held one",
            )
        ]
    differences: list[str] = []
    if run.operation_id != spec.operation_id:
        differences.append(f"operation {run.operation_id}, not {spec.operation_id}")
    if run.plan.name != spec.plan_ref.name or (
        run.plan.uid is not None and run.plan.uid != spec.plan_ref.uid
    ):
        differences.append(
            f"plan {run.plan.name} (UID {run.plan.uid or 'unrecorded'}), not "
            f"{spec.plan_ref.name} (UID {spec.plan_ref.uid})"
        )
    if run.job is not None and (
        run.job.name != spec.job_ref.name
        or (run.job.uid is not None and run.job.uid != spec.job_ref.uid)
    ):
        differences.append(
            f"Job {run.job.name} (UID {run.job.uid or 'unrecorded'}), not "
            f"{spec.job_ref.name} (UID {spec.job_ref.uid})"
        )
    if run.outcome != spec.outcome:
        differences.append(f"outcome {run.outcome}, not {spec.outcome}")
    if not differences:
        return []
    return [
        Finding(
            RUN_MISMATCH,
            f"the unresolved run of {resource} is not the one named: it has "
            + "; ".join(differences),
        )
    ]


# --- one validator per kind ------------------------------------------------------------------

R = TypeVar("R", bound=Resource)


class Reader(Protocol):
    """Reads one object of the request's namespace into its model; None when it does not exist.

    Raises `ValidationError` or `ObjectReadError` (lookup) when it cannot: the caller answers.
    """

    async def __call__(self, kind: Kind, model: type[R], name: str) -> R | None: ...


class Validator(Protocol):
    """The admission check of one kind, as controller-runtime's `CustomValidator`: the handler
    finds it by the request's Kind (`VALIDATORS`) and asks it about the object created."""

    async def validate_create(
        self, obj: Mapping[str, Any], namespace: str, read: Reader
    ) -> list[Finding]:
        """The findings against `obj` (raises ValidationError when it does not fit its model)."""
        ...


class MigrationApprovalValidator:
    """PtahMigrationApproval: the migration and the plan it names (APR-02..APR-10)."""

    def __init__(self, seal: WriterSeal | None = None) -> None:
        self.seal = seal

    async def validate_create(
        self, obj: Mapping[str, Any], namespace: str, read: Reader
    ) -> list[Finding]:
        spec = from_manifest(PtahMigrationApproval, obj).spec
        migration = await read(Kind.PTAH_MIGRATION, PtahMigration, spec.migration_ref.name)
        plan = await read(Kind.PTAH_MIGRATION_PLAN, PtahMigrationPlan, spec.plan_ref.name)
        return check_migration_approval(spec, namespace, migration, plan, self.seal)


class SchemaApprovalValidator:
    """PtahSchemaApproval: the schema and the plan it names (APR-02..APR-10)."""

    def __init__(self, seal: WriterSeal | None = None) -> None:
        self.seal = seal

    async def validate_create(
        self, obj: Mapping[str, Any], namespace: str, read: Reader
    ) -> list[Finding]:
        spec = from_manifest(PtahSchemaApproval, obj).spec
        schema = await read(Kind.PTAH_SCHEMA, PtahSchema, spec.schema_ref.name)
        plan = await read(Kind.PTAH_SCHEMA_PLAN, PtahSchemaPlan, spec.plan_ref.name)
        return check_schema_approval(spec, namespace, schema, plan, self.seal)


class RunAcknowledgmentValidator:
    """PtahMigrationRunAcknowledgment: the migration whose unresolved run it names (RUN-06)."""

    async def validate_create(
        self, obj: Mapping[str, Any], namespace: str, read: Reader
    ) -> list[Finding]:
        spec = from_manifest(PtahMigrationRunAcknowledgment, obj).spec
        migration = await read(Kind.PTAH_MIGRATION, PtahMigration, spec.migration_ref.name)
        return check_run_acknowledgment(spec, namespace, migration)


VALIDATORS: Final[Mapping[str, Validator]] = {
    Kind.PTAH_MIGRATION_APPROVAL.value: MigrationApprovalValidator(),
    Kind.PTAH_SCHEMA_APPROVAL.value: SchemaApprovalValidator(),
    Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT.value: RunAcknowledgmentValidator(),
}
"""The validator of each kind the validating webhook checks, by Kind (without a seal, no
record of spec writers opens: the webhook uses `validators(seal)`)."""


def validators(seal: WriterSeal) -> Mapping[str, Validator]:
    """VALIDATORS, the approvals' opening spec writers' records with `seal`."""
    return {
        Kind.PTAH_MIGRATION_APPROVAL.value: MigrationApprovalValidator(seal),
        Kind.PTAH_SCHEMA_APPROVAL.value: SchemaApprovalValidator(seal),
        Kind.PTAH_MIGRATION_RUN_ACKNOWLEDGMENT.value: RunAcknowledgmentValidator(),
    }


def refusal_message(kind: str, findings: list[Finding]) -> str:
    """The one message kubectl prints after `denied the request:`.

    It names the kind rather than the object: a generated name may not exist yet at admission.
    """
    return f"{kind} refused: " + "; ".join(f.message for f in findings)
