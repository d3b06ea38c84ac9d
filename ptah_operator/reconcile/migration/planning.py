"""status.plan through its life: published from a reading, kept, retired (MIG-09..MIG-16).

- A ReadyToPlan reading publishes the plan its pending list gives (plans.py). The same
  reading of the same source under the same spec is the same plan: it is kept and writes
  nothing (JNL-03, RRQ-06, RETRY-12); a different one replaces it.
- A plan is published once its object exists: its UID comes from the API server and an
  approval names it, so until then the resource rests in Planning with Progressing=True. The
  pass that sees the object fills status.plan.uid and writes the PlanPublished entry, timed by
  the plan's creation (JNL-25). A plan that does not appear within failureRetryInterval
  "could not be published": Failed (MIG-26).
- Under apply: Never the plan rests in Planning, Ready=False ApplyDisabled (MIG-13); under
  OnApproval it waits in AwaitingApproval (MIG-11); under Always the Apply is next (MIG-12),
  unless a run already carried that plan out and did not apply it (`replayed`: any run since,
  not only the last, as status.carriedOutPlans remembers, `record_end`): then it waits in
  AwaitingApproval for a person's exact approval of it, as under OnApproval, because apply:
  Always never replays a plan (docs/design/lifecycle-decisions.md). A run that stopped before
  it selected anything for a reason that passes on its own (PASSING_REASONS) is not such a
  run: the same plan starts again after failureRetryInterval (MIG-44), unless an earlier run
  carried it out. A run that ended Applied or UpToDate forgets its plan, so the same plan
  after the history moved back is a new need.
  The pass that reads a history never also starts the Apply it allows: one pass ends at most
  one operation or starts one, so the verdict is visible before the run.
- Retiring a plan a person could approve (OnApproval) or had approved (an unconsumed exact
  approval) writes a PlanStale Warning (SCH-66, MIG-16); its approval never carries over,
  because an approval names the plan by UID and fingerprint, and the publication by the read
  that published it (status.plan.operationID): the same plan object adopted again by a later
  read is another publication (APR-12).
"""

from __future__ import annotations

from ptah_operator.api.common import ActiveOperation, PlanReference, PublishedPlan
from ptah_operator.api.constants import (
    MAX_PLAN_VERSIONS,
    ApplyPolicy,
    EventReason,
    JournalEntryType,
    Reason,
    RunOutcome,
)
from ptah_operator.api.contracts.codes import ErrorReason
from ptah_operator.api.contracts.result import HistoryReport
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.migration import LastRun, PtahMigrationStatus
from ptah_operator.api.names import migration_plan_name
from ptah_operator.reconcile import approvals as shared
from ptah_operator.reconcile import journal
from ptah_operator.reconcile.draft import current_binding
from ptah_operator.reconcile.migration import approvals, standings
from ptah_operator.reconcile.migration.draft import MigrationDraft
from ptah_operator.reconcile.migration.plans import plan_manifest, plan_spec, same_spec
from ptah_operator.reconcile.schedule import PLAN_PUBLISH_CHECK, failure_retry_interval

PASSING_REASONS = frozenset(
    {
        ErrorReason.LOCK_TIMEOUT,
        ErrorReason.CONNECTION_FAILED,
        ErrorReason.DATABASE_BUSY,
        ErrorReason.INTERRUPTED,
        ErrorReason.SNAPSHOT_REFUSED,
    }
)
"""Why a run that stopped before it selected anything may stop, that passes on its own: the
lock was busy, the database or the runner went away, the database answered with a transient
refusal (DatabaseBusy: a lock or statement timeout, a deadlock, too many sessions), the
snapshot was being put back. HistoryUnreadable is not one: the runner gives it to what will
not change by itself (a revision table Ptah cannot read, a permission refused)."""

_SHOWN_DONE = frozenset({RunOutcome.APPLIED, RunOutcome.UP_TO_DATE})


def passed(run: LastRun) -> bool:
    """The run was refused before it selected anything, for a reason that passes on its own."""
    return run.outcome == RunOutcome.FAILED and run.reason in PASSING_REASONS


def carried_out(run: LastRun) -> bool:
    """Whether the run carried its plan out without showing it done: any end but a passing
    refusal (it ran nothing) and Applied or UpToDate (the engine read the revision table back
    under the lock and found the plan's versions there, RUN-02)."""
    return not passed(run) and run.outcome not in _SHOWN_DONE


def record_end(status: PtahMigrationStatus, record: LastRun) -> None:
    """Remember (or forget) the plan a run that ended carried out, before status.lastRun
    becomes `record`. A status written before carriedOutPlans existed remembers its lastRun
    first."""
    previous = status.last_run
    if status.carried_out_plans is None and previous is not None and carried_out(previous):
        shared.remember(status, previous.plan.fingerprint)
    if carried_out(record):
        shared.remember(status, record.plan.fingerprint)
    elif record.outcome in _SHOWN_DONE:
        shared.forget(status, record.plan.fingerprint)


def replayed(draft: MigrationDraft, ref: PlanReference) -> bool:
    """Whether running this plan again under apply: Always would replay it: a run carried it
    out and nothing showed it done (status.carriedOutPlans, or status.lastRun for a status
    written before that list). A run refused for a passing reason carried nothing out, so a
    plan only such runs tried starts again on policy alone (MIG-44)."""
    status = draft.status
    if shared.remembered(status, ref.fingerprint):
        return True
    last = status.last_run
    return (
        status.carried_out_plans is None
        and last is not None
        and ref.fingerprint is not None
        and last.plan.fingerprint == ref.fingerprint
        and carried_out(last)
    )


def needs_approval(draft: MigrationDraft, ref: PlanReference) -> bool:
    """Whether the plan waits for a person: OnApproval, or a replay under Always."""
    policy = draft.spec.policy.apply
    if policy == ApplyPolicy.ON_APPROVAL:
        return True
    return policy == ApplyPolicy.ALWAYS and replayed(draft, ref)


def replay_note(draft: MigrationDraft, ref: PlanReference) -> str:
    """Why a plan under apply: Always waits for a person, or "" when it is not a replay."""
    if draft.spec.policy.apply != ApplyPolicy.ALWAYS or not replayed(draft, ref):
        return ""
    last = draft.status.last_run
    if last is not None and last.plan.fingerprint == ref.fingerprint and not passed(last):
        said = (
            f"run {last.operation_id} already carried this plan out and ended {last.outcome.value}"
        )
    elif last is not None and last.plan.fingerprint == ref.fingerprint:
        said = (
            f"run {last.operation_id} of this plan was refused before it selected anything "
            f"({last.reason}), and an earlier run already carried it out"
        )
    else:
        said = "an earlier run already carried this plan out"
    return f"{said}; apply: Always never replays a plan, so it runs again only on an approval naming it"


def approvable(draft: MigrationDraft, ref: PublishedPlan) -> bool:
    """A person could approve the plan, or had approved it and it never ran."""
    if ref.uid is None:
        return False
    if needs_approval(draft, ref):
        return True
    used = approvals.consumed(draft.status)
    return approvals.exact_approval(draft.world.approvals, draft.migration, ref, used) is not None


def retire(draft: MigrationDraft, why: str) -> None:
    """Take status.plan away; a PlanStale Warning when it was approvable or approved."""
    ref = draft.status.plan
    if ref is None:
        return
    if approvable(draft, ref):
        draft.warning(
            EventReason.PLAN_STALE,
            f"plan {ref.name} is retired before it ran: {why}; an approval must name the "
            "plan that replaces it",
        )
    draft.status.plan = None


def adopt(
    draft: MigrationDraft, claim: ActiveOperation, history: HistoryReport, target: str | None
) -> None:
    """Publish (or keep) the plan a ReadyToPlan reading gives, and stand where it leaves the
    resource (MIG-09)."""
    status = draft.status
    record = claim.source or status.source
    if record is None:
        retire(draft, "the reading is bound to no source")
        draft.fail(Reason.CONFIGURATION_ERROR, "the plan could not be published: no source")
        return
    if history.pending_count > MAX_PLAN_VERSIONS:
        # A plan carries the whole sequence, and at most MAX_PLAN_VERSIONS of it: this reading
        # can never be planned, and another attempt would read the same. Blocked until the
        # source or the database changes (the interval's read, or a read request).
        retire(draft, "the history has more pending migrations than a plan carries")
        draft.stand(
            standings.blocked(
                Reason.TOO_MANY_PENDING,
                f"{history.pending_count} migrations are pending; a plan carries at most "
                f"{MAX_PLAN_VERSIONS}: apply some outside the operator, or squash them",
            )
        )
        return
    spec = plan_spec(draft.migration, history, target, record, current_binding(draft.world))
    if isinstance(spec, str):
        retire(draft, spec)
        draft.fail(Reason.CONFIGURATION_ERROR, f"the plan could not be published: {spec}")
        return
    name = migration_plan_name(draft.name, spec.fingerprint)
    ref = status.plan
    if ref is None or ref.name != name or ref.fingerprint != spec.fingerprint:
        existing = draft.world.plans.get(name)
        if existing is not None and not same_spec(existing, spec):
            retire(draft, "its name is taken")
            draft.fail(
                Reason.CONFIGURATION_ERROR,
                f"the plan could not be published: {name} already holds another plan",
            )
            return
        retire(draft, "a new reading of the history gives another plan")
        status.plan = PublishedPlan(
            name=name,
            uid=existing.metadata.uid if existing is not None else None,
            fingerprint=spec.fingerprint,
            operation_id=claim.operation_id,
        )
        if existing is None:
            draft.create(plan_manifest(draft.migration, name, spec))
    if not published(draft):
        draft.stand(standings.publishing(name, len(spec.versions)))
        draft.wake_in(PLAN_PUBLISH_CHECK)
        return
    stand_after_reading(draft)


def published(draft: MigrationDraft) -> bool:
    """Whether status.plan's object exists; fills its UID and writes PlanPublished the first
    time it is seen (JNL-03)."""
    ref = draft.status.plan
    if ref is None:
        return False
    plan = draft.world.plans.get(ref.name)
    if plan is None:
        return ref.uid is not None
    if ref.uid is None:
        ref = ref.model_copy(update={"uid": plan.metadata.uid})
        draft.status.plan = ref
    noted = any(
        e.type == JournalEntryType.PLAN_PUBLISHED and e.plan_uid == ref.uid for e in draft.entries
    )
    if not noted and not journal.holds_plan(draft.status.journal, ref):
        draft.journal(
            JournalEntry(
                type=JournalEntryType.PLAN_PUBLISHED,
                time=plan.metadata.creation_timestamp or draft.now,
                plan_name=ref.name,
                plan_uid=ref.uid,
                plan_fingerprint=ref.fingerprint,
            )
        )
        draft.normal(
            EventReason.PLAN_PUBLISHED,
            f"plan {ref.name} published: {len(plan.spec.versions)} migration(s) up to "
            f"version {plan.spec.to_version}",
        )
    return True


def publication_overdue(draft: MigrationDraft) -> bool:
    """A plan decided but not in the cache after failureRetryInterval could not be published."""
    history = draft.status.history
    since = history.read_at if history is not None else None
    return since is not None and draft.now - since > failure_retry_interval(draft.migration)


def stand_after_reading(draft: MigrationDraft) -> None:
    """Where a published plan leaves the resource in the pass that read the history."""
    ref = draft.status.plan
    assert ref is not None
    policy = draft.spec.policy.apply
    if policy == ApplyPolicy.NEVER:
        draft.stand(standings.apply_disabled(ref.name))
    elif not needs_approval(draft, ref):
        draft.stand(standings.ready_to_apply(ref.name, "the Apply starts on the next pass"))
        draft.rely_on_own_write()
    else:
        used = approvals.consumed(draft.status)
        if approvals.exact_approval(draft.world.approvals, draft.migration, ref, used):
            draft.stand(standings.approved(ref.name, "the Apply starts on the next pass"))
            draft.rely_on_own_write()
        else:
            draft.stand(standings.awaiting_approval(ref.name, replay_note(draft, ref)))
