"""A schema's plan through its life: published from a Plan's result, judged, kept, retired.

Publication (PATH-07, Decision 21). A Plan that found changes reports the plan's identity and
uploads the plan file beside its report; the manager, not the runner, makes the objects:

1. the pass that adopts the result decides the PtahSchemaPlan and creates it, bound to what it
   was computed from: the source (plan contract 1 for OCI: digest and verification policy; 2
   for ConfigMap and Git: content digest, the ConfigMap's UID or the repository and path, and
   the source policy), the database (targetIdentityDigest), the observed and desired
   fingerprints, the execution binding, the plan file's digest, size and statement count, its
   severity and findings, and whether it asks for approval. status.plan names it, its UID not
   yet known;
2. the pass that sees the plan (so its UID) creates its PtahSchemaPlanChunk objects from the
   uploaded text, each piece checked against the digest the report gave, the pieces together
   against the plan's digest; each chunk names the plan by name and UID and is owned by it;
3. the pass that sees every chunk publishes it: status.plan.uid is filled, a PlanPublished
   entry written (approvalRequired, and `replaced`: the plan it took the place of when a
   person could approve that one or had approved it and it never ran, JNL-04), timed by the
   plan's creation (JNL-25).

A plan that is not published within failureRetryInterval of its Plan's end could not be
published: Failed, ConfigurationError. The same plan computed again (same fingerprint) is kept
and writes nothing (JNL-03, SCH-65); another one replaces it.

Its verdict (SCH-11..SCH-14, SCH-52), from the plan and spec.policy: a plan that would change a
protected table is Blocked ProtectedTable; a destructive plan without allowDestructive Blocked
DestructiveChangeDisallowed; under apply: Never Blocked ApplyDisabled (the plan is recorded,
nothing runs); under Always a plan with nothing destructive and no privilege change is
ReadyToApply; anything else waits in AwaitingApproval for an approval of exactly that plan
(APR-02: schema, plan name and UID, and fingerprint, which binds the digest). A plan an Apply
already carried out (status.carriedOutPlans names its fingerprint, whatever that Apply
reported, until a proof Verified InSync forgets it; `record_end`) is never replayed (SCH-59): under Always it waits in AwaitingApproval too, and only a person's
exact approval of it, or another plan, runs again (docs/design/lifecycle-decisions.md).

Retiring a plan a person could approve or had approved writes a PlanStale Warning (SCH-66) and
remembers it in status.retiredPlan for the next PlanPublished; its approval never carries over,
because an approval names the plan by UID and fingerprint (APR-12, SCH-64).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ptah_operator.api.approvals import PtahSchemaApproval
from ptah_operator.api.common import (
    ActiveOperation,
    ObjectReference,
    PlanReference,
    PlanSourceBinding,
    PublishedPlan,
    SourceRecord,
)
from ptah_operator.api.constants import (
    API_VERSION,
    LABEL_OPERATION_ID,
    LABEL_PLAN,
    MAX_CHUNK_CHARS,
    MAX_PLAN_FINDINGS,
    PLAN_CONTRACT_CONFIGMAP_GIT,
    PLAN_CONTRACT_OCI,
    ApplyPolicy,
    Engine,
    EventReason,
    JournalEntryType,
    Reason,
    SchemaPhase,
    Severity,
    SourceKind,
    VerifiedOutcome,
)
from ptah_operator.api.contracts.result import PlanReport, SchemaOperationReport
from ptah_operator.api.fingerprints import (
    model_digest,
    plan_source_binding,
    schema_plan_fingerprint,
    text_digest,
)
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.names import chunk_name, schema_plan_name
from ptah_operator.api.plans import (
    ChunkReference,
    Finding,
    PtahSchemaPlan,
    PtahSchemaPlanSpec,
    SeveritySummary,
)
from ptah_operator.api.schema import ApplyRecord, PtahSchemaStatus, SchemaPlanStatus
from ptah_operator.reconcile import approvals, journal, sources
from ptah_operator.reconcile.bindings import Rule, first_change, plan_identity
from ptah_operator.reconcile.draft import binding_digest, current_binding
from ptah_operator.reconcile.jobs import owner_labels, owner_reference
from ptah_operator.reconcile.schedule import PLAN_PUBLISH_CHECK, failure_retry_interval
from ptah_operator.reconcile.schema.draft import SchemaDraft
from ptah_operator.reconcile.schema.standings import (
    Standing,
    approved,
    awaiting_approval,
    blocked,
    publishing,
    ready_to_apply,
)

PROTECTED_TABLE = "ProtectedTable"
"""The finding code of a table the plan would change that spec.policy.protectedTables names."""

_UNSET = "sha256:" + "0" * 64
_EPOCH = dt.datetime.min.replace(tzinfo=dt.UTC)
_SHOWN_TABLES = 5


# --- approvals ---------------------------------------------------------------------------------


def consumed(draft: SchemaDraft) -> set[str]:
    """UIDs of approvals an Apply already consumed: one approval, one execution (APR-11;
    approvals.consumed, lastApply naming the ended Apply's)."""
    status = draft.status
    ended = status.last_apply.approval if status.last_apply is not None else None
    return approvals.consumed(status.journal, ended, status.active_operation)


def exact_approval(draft: SchemaDraft, ref: PublishedPlan) -> PtahSchemaApproval | None:
    """The newest unconsumed approval of exactly this plan (APR-02, APR-04), or None."""
    return approvals.newest_exact(
        draft.world.approvals, draft.uid, draft.name, ref, consumed(draft)
    )


def approval_still_there(draft: SchemaDraft, uid: str) -> bool:
    return any(
        a.metadata.uid == uid and a.metadata.deletion_timestamp is None
        for a in draft.world.approvals
    )


# --- retiring ----------------------------------------------------------------------------------


def approvable(draft: SchemaDraft, ref: SchemaPlanStatus) -> bool:
    """A person could approve the plan, or had approved it and it never ran."""
    if ref.uid is None:
        return False
    if ref.approval_required or exact_approval(draft, ref) is not None:
        return True
    plan = published(draft)
    return plan is not None and verdict(draft, plan)[0] == SchemaPhase.AWAITING_APPROVAL


def retire(draft: SchemaDraft, why: str, *, replaced: bool = True) -> None:
    """Take status.plan away before it ran. A plan a person could approve or had approved
    writes a PlanStale Warning (SCH-66) and, unless the database converged meanwhile, is
    remembered for the PlanPublished of the plan that replaces it (JNL-04)."""
    status = draft.status
    ref = status.plan
    if not replaced:
        status.retired_plan = None
    if ref is None:
        return
    if approvable(draft, ref):
        draft.warning(
            EventReason.PLAN_STALE,
            f"plan {ref.name} is retired before it ran: {why}; an approval must name the plan "
            "that replaces it",
        )
        if replaced:
            status.retired_plan = PlanReference(
                name=ref.name, uid=ref.uid, fingerprint=ref.fingerprint
            )
    status.plan = None


# --- deciding a plan ---------------------------------------------------------------------------


def _verdict_of(
    draft: SchemaDraft, severity: SeveritySummary, protected: list[str]
) -> tuple[str, str]:
    """The policy's verdict on a plan: (phase, reason)."""
    policy = draft.spec.policy
    if protected:
        return SchemaPhase.BLOCKED, Reason.PROTECTED_TABLE
    if severity.destructive and not policy.allow_destructive:
        return SchemaPhase.BLOCKED, Reason.DESTRUCTIVE_CHANGE_DISALLOWED
    if policy.apply == ApplyPolicy.NEVER:
        return SchemaPhase.BLOCKED, Reason.APPLY_DISABLED
    if policy.apply == ApplyPolicy.ALWAYS and not (
        severity.destructive or severity.privilege_change
    ):
        return SchemaPhase.READY_TO_APPLY, Reason.READY_TO_APPLY
    return SchemaPhase.AWAITING_APPROVAL, Reason.AWAITING_APPROVAL


def protected_tables(plan: PtahSchemaPlan) -> list[str]:
    return [f.object for f in plan.spec.findings if f.code == PROTECTED_TABLE and f.object]


def plan_spec(
    draft: SchemaDraft,
    report: SchemaOperationReport,
    planned: PlanReport,
    record: SourceRecord,
) -> tuple[str, PtahSchemaPlanSpec] | str:
    """The plan a Plan's result gives, and its name, or why it cannot be published."""
    if report.target_identity_digest is None:
        return "the result names no database"
    if planned.digest is None or not planned.pieces:
        return "the result names no plan file"
    severity = SeveritySummary(
        highest=planned.severity.highest,
        destructive=planned.severity.destructive,
        privilege_change=planned.severity.privilege_change,
    )
    protected = sorted(set(planned.protected_tables))
    findings = _findings(planned, protected)
    total = len(protected) + max(planned.findings_total, len(planned.findings))
    phase, _ = _verdict_of(draft, severity, protected)
    schema = draft.schema
    spec = PtahSchemaPlanSpec(
        schema_ref=ObjectReference(name=draft.name, uid=draft.uid),
        plan_contract_version=PLAN_CONTRACT_OCI
        if record.kind == SourceKind.ARTIFACT
        else PLAN_CONTRACT_CONFIGMAP_GIT,
        source=plan_source_binding(record),
        engine=schema.spec.target.engine,
        dialect=planned.dialect,
        target_identity_digest=report.target_identity_digest,
        observed_fingerprint=planned.observed_fingerprint,
        desired_fingerprint=planned.desired_fingerprint,
        execution_binding=current_binding(draft.world),
        digest=planned.digest,
        size=planned.size,
        statement_count=planned.statement_count,
        severity=severity,
        findings=findings[:MAX_PLAN_FINDINGS],
        findings_total=total,
        approval_required=phase == SchemaPhase.AWAITING_APPROVAL,
        chunks=[
            ChunkReference(name=f"chunk-{p.index}", index=p.index, digest=p.digest)
            for p in planned.pieces
        ],
        fingerprint=_UNSET,
    )
    return _named(draft, spec)


def _findings(planned: PlanReport, protected: list[str]) -> list[Finding]:
    """A protected table the plan would change is a critical finding, before the runner's."""
    return [
        Finding(code=PROTECTED_TABLE, severity=Severity.CRITICAL, object=table[:256])
        for table in protected
    ] + [
        Finding(
            code=f.code,
            severity=f.severity,
            category=f.category or None,
            object=f.object or None,
            related=f.related or None,
            statement_index=f.statement_index,
        )
        for f in planned.findings
    ]


def _named(draft: SchemaDraft, spec: PtahSchemaPlanSpec) -> tuple[str, PtahSchemaPlanSpec]:
    """The plan's name, its chunks named after it, and its fingerprint. The name comes from
    everything but the chunk names (which come from the name) and the fingerprint (which
    covers the chunk names): the same plan has the same name."""
    identity = model_digest(spec, exclude={"fingerprint", "chunks"})
    name = schema_plan_name(draft.name, identity)
    chunks = [c.model_copy(update={"name": chunk_name(name, c.index)}) for c in spec.chunks]
    spec = spec.model_copy(update={"chunks": chunks})
    return name, spec.model_copy(update={"fingerprint": schema_plan_fingerprint(spec)})


def plan_manifest(
    draft: SchemaDraft, name: str, spec: PtahSchemaPlanSpec, operation_id: str
) -> dict[str, Any]:
    """The plan object: owned by the schema, immutable once created, labelled with the Plan
    operation that produced it."""
    return {
        "apiVersion": API_VERSION,
        "kind": "PtahSchemaPlan",
        "metadata": {
            "name": name,
            "namespace": draft.namespace,
            "labels": {**owner_labels(draft.schema), LABEL_OPERATION_ID: operation_id},
            "ownerReferences": [owner_reference(draft.schema)],
        },
        "spec": spec.model_dump(mode="json", by_alias=True, exclude_none=True),
    }


def chunk_manifest(
    draft: SchemaDraft, plan: PtahSchemaPlan, chunk: ChunkReference, data: str
) -> dict[str, Any]:
    """One chunk: the plan's text, owned by the plan, so it goes with it."""
    plan_name_ = plan.metadata.name or ""
    return {
        "apiVersion": API_VERSION,
        "kind": "PtahSchemaPlanChunk",
        "metadata": {
            "name": chunk.name,
            "namespace": draft.namespace,
            "labels": {**owner_labels(draft.schema), LABEL_PLAN: plan_name_},
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": "PtahSchemaPlan",
                    "name": plan_name_,
                    "uid": plan.metadata.uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "planRef": {"name": plan_name_, "uid": plan.metadata.uid},
            "index": chunk.index,
            "data": data,
            "digest": chunk.digest,
        },
    }


def adopt(
    draft: SchemaDraft,
    claim: ActiveOperation,
    report: SchemaOperationReport,
    planned: PlanReport,
    phase: SchemaPhase,
) -> None:
    """Publish (or keep) the plan a Plan that found changes gives, and stand where it leaves
    the schema: publishing in `phase` (Planning, or VerifyingConvergence after a proof), or its
    verdict once it is published."""
    status = draft.status
    record = claim.source or status.source
    built = (
        plan_spec(draft, report, planned, record) if record is not None else "no source is bound"
    )
    if isinstance(built, str):
        retire(draft, built)
        draft.fail(Reason.CONFIGURATION_ERROR, f"the plan could not be published: {built}")
        return
    name, spec = built
    draft.verdict(
        False,
        Reason.DRIFT_REMAINS,
        f"the plan finds {spec.statement_count} statement(s) to run (plan {name})",
    )
    ref = status.plan
    if ref is None or ref.name != name or ref.fingerprint != spec.fingerprint:
        existing = draft.world.plans.get(name)
        if existing is not None and existing.spec.fingerprint != spec.fingerprint:
            retire(draft, "its name is taken")
            draft.fail(
                Reason.CONFIGURATION_ERROR,
                f"the plan could not be published: {name} already holds another plan",
            )
            return
        retire(draft, "a new plan replaces it")
        status.plan = SchemaPlanStatus(
            name=name,
            fingerprint=spec.fingerprint,
            digest=spec.digest,
            approval_required=spec.approval_required,
            operation_id=claim.operation_id,
            planned_at=report.finished_at or draft.now,
            drift_digest=status.drift.digest if status.drift is not None else None,
        )
        if existing is None:
            draft.create(plan_manifest(draft, name, spec, claim.operation_id))
    elif status.drift is not None and ref.drift_digest != status.drift.digest:
        # The same plan, computed again from a newer observation: it still holds for it.
        status.plan = ref.model_copy(update={"drift_digest": status.drift.digest})
    if progress(draft, phase):
        stand_verdict(draft)


def _overdue(draft: SchemaDraft, ref: SchemaPlanStatus) -> bool:
    since = ref.planned_at
    return since is not None and draft.now - since > failure_retry_interval(draft.schema)


def _cannot_publish(
    draft: SchemaDraft, phase: SchemaPhase, ref: SchemaPlanStatus, why: str
) -> None:
    if _overdue(draft, ref):
        retire(draft, why)
        draft.fail(Reason.CONFIGURATION_ERROR, f"plan {ref.name} could not be published: {why}")
        return
    draft.stand(publishing(phase, ref.name, why))
    draft.wake_in(PLAN_PUBLISH_CHECK)


def progress(draft: SchemaDraft, phase: SchemaPhase = SchemaPhase.PLANNING) -> bool:
    """Carry status.plan's publication one step on; True once it is published (its object and
    every chunk exist and hold what the Plan reported)."""
    status = draft.status
    ref = status.plan
    if ref is None:
        return False
    world = draft.world
    plan = world.plans.get(ref.name)
    if plan is None or plan.metadata.uid is None:
        if ref.uid is not None:
            return True  # published, and gone since: `misfit` says so
        _cannot_publish(draft, phase, ref, "its object is being created")
        return False
    if plan.spec.fingerprint != ref.fingerprint:
        _cannot_publish(draft, phase, ref, f"{ref.name} holds another plan")
        return False
    gathered = _gather_chunks(draft, phase, ref, plan)
    if gathered is None:
        return False
    pieces, missing = gathered
    if text_digest("".join(pieces)) != plan.spec.digest:
        _cannot_publish(draft, phase, ref, "its chunks do not give the plan's digest")
        return False
    if missing:
        for chunk, piece in missing:
            draft.create(chunk_manifest(draft, plan, chunk, piece))
        draft.stand(publishing(phase, ref.name, f"creating {len(missing)} chunk(s)"))
        draft.wake_in(PLAN_PUBLISH_CHECK)
        return False
    if ref.uid is None:
        _record_published(draft, ref, plan)
    return True


def _gather_chunks(
    draft: SchemaDraft, phase: SchemaPhase, ref: SchemaPlanStatus, plan: PtahSchemaPlan
) -> tuple[list[str], list[tuple[ChunkReference, str]]] | None:
    """The text of every chunk of the plan, in order, and the chunks still to create with
    their text; None (and the schema stands where it cannot publish) when a chunk holds other
    data or its text is not there."""
    world = draft.world
    pieces: list[str] = []
    missing: list[tuple[ChunkReference, str]] = []
    for chunk in plan.spec.chunks:
        existing = world.chunks.get(chunk.name)
        if existing is not None:
            if (
                existing.spec.plan_ref.uid != plan.metadata.uid
                or existing.spec.index != chunk.index
                or existing.spec.digest != chunk.digest
                or text_digest(existing.spec.data) != chunk.digest
            ):
                _cannot_publish(draft, phase, ref, f"chunk {chunk.name} holds other data")
                return None
            pieces.append(existing.spec.data)
            continue
        text = world.plan_texts.get(ref.operation_id or "")
        piece = text.pieces.get(chunk.index) if text is not None else None
        if piece is None or len(piece) > MAX_CHUNK_CHARS or text_digest(piece) != chunk.digest:
            _cannot_publish(draft, phase, ref, f"the text of chunk {chunk.name} is not there")
            return None
        pieces.append(piece)
        missing.append((chunk, piece))
    return pieces, missing


def _record_published(draft: SchemaDraft, ref: SchemaPlanStatus, plan: PtahSchemaPlan) -> None:
    """status.plan names the published object by UID; the journal and an Event say so once."""
    status = draft.status
    ref = ref.model_copy(update={"uid": plan.metadata.uid})
    status.plan = ref
    if not journal.holds_plan(status.journal, ref):
        draft.journal(
            JournalEntry(
                type=JournalEntryType.PLAN_PUBLISHED,
                time=plan.metadata.creation_timestamp or draft.now,
                plan_name=ref.name,
                plan_uid=ref.uid,
                plan_fingerprint=ref.fingerprint,
                approval_required=bool(ref.approval_required),
                replaced=status.retired_plan,
            )
        )
        draft.normal(
            EventReason.PLAN_PUBLISHED,
            f"plan {ref.name} published: {plan.spec.statement_count} statement(s) in "
            f"{len(plan.spec.chunks)} chunk(s), digest {plan.spec.digest}",
        )
    status.retired_plan = None


def published(draft: SchemaDraft) -> PtahSchemaPlan | None:
    """status.plan's object, when it is published."""
    ref = draft.status.plan
    if ref is None or ref.uid is None:
        return None
    plan = draft.world.plans.get(ref.name)
    return plan if plan is not None and plan.metadata.uid == ref.uid else None


def verdict(draft: SchemaDraft, plan: PtahSchemaPlan) -> tuple[str, Standing]:
    """The phase a published plan leaves the schema in, and the standing that says it."""
    name = plan.metadata.name or ""
    protected = protected_tables(plan)
    phase, reason = _verdict_of(draft, plan.spec.severity, protected)
    if reason == Reason.PROTECTED_TABLE:
        shown = ", ".join(protected[:_SHOWN_TABLES])
        more = len(protected) - _SHOWN_TABLES
        shown += f" and {more} more" if more > 0 else ""
        message = f"plan {name} would change protected table(s) {shown}; it is not applied"
        return phase, blocked(reason, message)
    if reason == Reason.DESTRUCTIVE_CHANGE_DISALLOWED:
        return phase, blocked(
            reason,
            f"plan {name} drops or narrows what holds data and spec.policy.allowDestructive is "
            "false; it is not applied",
        )
    if reason == Reason.APPLY_DISABLED:
        return phase, blocked(
            reason, f"plan {name} is recorded; spec.policy.apply is Never, so it runs nothing"
        )
    if reason == Reason.READY_TO_APPLY:
        last = carried_out(draft, plan)
        if last is not None:
            return SchemaPhase.AWAITING_APPROVAL, awaiting_approval(
                name,
                f"{last} already carried this plan out; apply: Always never replays a "
                "plan, so it runs again only on a PtahSchemaApproval naming it",
            )
        return phase, ready_to_apply(
            name, "apply: Always, nothing destructive, no privilege change"
        )
    return phase, awaiting_approval(name)


def carried_out(draft: SchemaDraft, plan: PtahSchemaPlan) -> str | None:
    """Which Apply already carried this plan out without a proof showing it done, said for
    the AwaitingApproval message, or None (SCH-59, "never replayed"): status.carriedOutPlans
    names its fingerprint, or, in a status written before that list, status.lastApply does.
    apply: Always does not start such a plan again; a person's exact approval of it does."""
    status = draft.status
    last = status.last_apply
    fingerprint = plan.spec.fingerprint
    named = last is not None and last.plan.fingerprint == fingerprint
    if approvals.remembered(status, fingerprint):
        return f"Apply {last.operation_id}" if last is not None and named else "an earlier Apply"
    if status.carried_out_plans is None and last is not None and named and not shown_done(last):
        return f"Apply {last.operation_id}"
    return None


def shown_done(record: ApplyRecord) -> bool:
    """The Apply's proof found the database converged (Verified InSync)."""
    verification = record.verification
    return verification is not None and verification.outcome == VerifiedOutcome.IN_SYNC


def record_end(status: PtahSchemaStatus, record: ApplyRecord) -> None:
    """Remember the plan an Apply that ended carried out, whatever it reported, before
    status.lastApply becomes `record`; its proof forgets it if it shows it done (proof.py). A
    status written before carriedOutPlans existed remembers its lastApply first."""
    previous = status.last_apply
    if status.carried_out_plans is None and previous is not None and not shown_done(previous):
        approvals.remember(status, previous.plan.fingerprint)
    approvals.remember(status, record.plan.fingerprint)


def stand_verdict(draft: SchemaDraft) -> None:
    """Stand on the published plan's verdict without starting anything: the pass that
    publishes a plan never also starts its Apply, so the verdict is in status first."""
    plan = published(draft)
    if plan is None:
        return
    phase, standing = verdict(draft, plan)
    ref = draft.status.plan
    assert ref is not None
    if phase == SchemaPhase.READY_TO_APPLY:
        draft.stand(ready_to_apply(ref.name, "the Apply starts on the next pass"))
        draft.rely_on_own_write()
    elif phase == SchemaPhase.AWAITING_APPROVAL and exact_approval(draft, ref) is not None:
        draft.stand(approved(ref.name, "the Apply starts on the next pass"))
        draft.rely_on_own_write()
    else:
        draft.stand(standing)


@dataclass(frozen=True)
class Bound:
    """What a schema plan binds beside its identity and its chunks (SCH-18, SCH-21, SCH-64)."""

    source: PlanSourceBinding | None
    """None, for what would be bound now, when no usable resolution stands: the source is
    then not compared (the next read resolves it)."""
    engine: Engine
    execution: str | None
    """The execution binding's digest."""


def _source_differs(
    differs: Callable[[PlanSourceBinding, PlanSourceBinding], bool],
) -> Callable[[Bound, Bound], bool]:
    def rule(plan: Bound, now: Bound) -> bool:
        return (
            plan.source is not None
            and now.source is not None
            and plan.source != now.source
            and differs(plan.source, now.source)
        )

    return rule


BINDING_RULES: tuple[Rule[Bound], ...] = (
    Rule("the source changed kind", _source_differs(lambda p, n: p.kind != n.kind)),
    Rule(
        "the source policy changed",
        _source_differs(lambda p, n: p.source_policy_digest != n.source_policy_digest),
    ),
    Rule(
        "the source ConfigMap was re-created (another UID)",
        _source_differs(lambda p, n: p.config_map_uid != n.config_map_uid),
    ),
    Rule(
        "the source names another repository or path",
        _source_differs(lambda p, n: p.repository_path_digest != n.repository_path_digest),
    ),
    Rule("the source files changed", _source_differs(lambda p, n: True)),
    Rule("spec.target.engine changed", lambda p, n: p.engine != n.engine),
    Rule("the execution binding changed", lambda p, n: p.execution != n.execution),
)
"""What a schema plan binds, in the order a stale plan's reason names it."""


def misfit(draft: SchemaDraft) -> str | None:
    """Why status.plan no longer fits the schema, or None: the plan went stale (SCH-18,
    SCH-21, SCH-64). What the database looks like is the next reading's to say; this checks
    everything else the plan binds against the cluster as it is now."""
    ref = draft.status.plan
    if ref is None:
        return None
    plan = draft.world.plans.get(ref.name)
    why = plan_identity(plan, ref, draft.uid, "PtahSchema")
    if why is not None or plan is None:
        return why
    if ref.uid is not None and any(c.name not in draft.world.chunks for c in plan.spec.chunks):
        return f"a chunk of plan {ref.name} is gone"
    bound = Bound(plan.spec.source, plan.spec.engine, binding_digest(plan.spec.execution_binding))
    now = Bound(
        sources.current(draft),
        draft.spec.target.engine,
        binding_digest(current_binding(draft.world)),
    )
    return first_change(bound, now, BINDING_RULES)
