"""A pass under construction, the same for both families: one pass's working copy of the status,
and what it asks for besides (objects to create and delete, Lease actions, Events, annotations,
journal entries, when to look again).

A pass reads the World, changes a deep copy of the status and collects its effects. At the end,
`finish` turns that into a Decision, and on the way:

- stamps observedGeneration (the generation of a claim still in flight for an older spec, and for
  a migration of one ended in this pass; otherwise metadata.generation) on the status and on
  every condition;
- records the execution binding in use;
- writes the journal in the same status write (JNL-24): new entries, folded and bounded;
  a journal starts with the first status write that happens anyway (JNL-22);
- deletes what nothing names any more: snapshots not named by the stored status, the new
  status or a claim (SRC-CM-14: after the resolution that replaced them is stored), result
  records of reads that ended or were dropped and of an Apply already recorded as ended, the
  operation Secret of a claim that ended, what else the family keeps (a schema's plan texts),
  the Job of an Apply on record as having succeeded and confirmed by the reading after it
  (the schema's proof, the migration's verifying read), about five minutes after it finished
  (JOB-07: an Apply Job is created to be kept a day, since its outcome is not known then),
  and plans and spent approvals beyond the few kept (retention.py, PATH-23);
- leaves `status` None when the status did not change, so a pass that found nothing new
  writes nothing.

`Draft` is generic over the family's World, status and phases; each family's subclass
(migration/draft.py `MigrationDraft`, schema/draft.py `SchemaDraft`) supplies what differs as
data and small hooks: which records and plans its status names, which Apply ended last, and
whether a failure keeps its retry time while a claim is on record.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel

from ptah_operator.api.common import (
    ActiveOperation,
    CommonSpec,
    ExecutionBinding,
    SourceRecord,
    StatusCommon,
)
from ptah_operator.api.constants import (
    API_VERSION,
    EventReason,
    EventType,
    JournalEntryType,
    MigrationPhase,
    OperationType,
    SchemaPhase,
)
from ptah_operator.api.fingerprints import execution_binding_digest
from ptah_operator.api.journal import JournalEntry
from ptah_operator.api.migration import PtahMigration, PtahMigrationStatus
from ptah_operator.api.names import job_name, operation_secret_name, result_record_name
from ptah_operator.api.schema import PtahSchema, PtahSchemaStatus
from ptah_operator.reconcile import conditions, journal, retention
from ptah_operator.reconcile.conditions import PhaseT, Standing
from ptah_operator.reconcile.decision import (
    Decision,
    Event,
    LeaseAction,
    ObjectRef,
    OperationCredentials,
    Requeue,
)
from ptah_operator.reconcile.schedule import FINISHED_JOB_KEPT, failure_retry_interval
from ptah_operator.reconcile.world import FamilyWorld, JobPhase, RunnerConfig

Creatable = Mapping[str, Any] | OperationCredentials


class _RunsOperations(Protocol):
    @property
    def runner(self) -> RunnerConfig: ...


def current_binding(world: _RunsOperations) -> ExecutionBinding:
    """The runner's execution binding, with its digest filled in."""
    binding = world.runner.binding
    if binding.digest is not None:
        return binding
    return binding.model_copy(update={"digest": execution_binding_digest(binding)})


def new_claim(
    draft: Pass, operation: OperationType, operation_id: str, **fields: Any
) -> ActiveOperation:
    """A claim made in this pass, in the Decision that creates its Job (JOB-04): the Job's name
    made from the operation id, when and at which generation it was claimed, the execution
    binding its Job runs under; `fields` are the operation's own (its source, plan, proof...)."""
    return ActiveOperation(
        operation_id=operation_id,
        type=operation,
        job_name=job_name(operation, operation_id),
        started_at=draft.now,
        generation=draft.generation,
        execution_binding=current_binding(draft.world),
        **fields,
    )


def binding_digest(binding: ExecutionBinding | None) -> str | None:
    if binding is None:
        return None
    return binding.digest or execution_binding_digest(binding)


def wire(status: BaseModel | None) -> dict[str, Any] | None:
    """A status as it is written (camelCase, no absent fields), for comparing and writing."""
    if status is None:
        return None
    return status.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass(kw_only=True)
class Effects:
    creates: list[Creatable] = field(default_factory=list)
    deletes: list[ObjectRef] = field(default_factory=list)
    leases: list[LeaseAction] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    annotations: dict[str, str | None] = field(default_factory=dict)
    entries: list[JournalEntry] = field(default_factory=list)
    wake: dt.datetime | None = None
    """The earliest time the pass asked to run again at, if any."""
    own_write: bool = False
    """The pass asked to run again at once, through the watch event of its own write."""

    @property
    def now(self) -> dt.datetime:
        raise NotImplementedError

    def normal(self, reason: EventReason, message: str) -> None:
        self.events.append(Event(EventType.NORMAL, reason, conditions.bounded(message)))

    def warning(self, reason: EventReason, message: str) -> None:
        self.events.append(Event(EventType.WARNING, reason, conditions.bounded(message)))

    def journal(self, entry: JournalEntry) -> None:
        self.entries.append(entry)

    def operation_failed(
        self, operation: OperationType, reason: str, when: dt.datetime | None = None
    ) -> None:
        """Journal one failed attempt; the journal folds repeats into a count (JNL-12)."""
        self.journal(
            JournalEntry(
                type=JournalEntryType.OPERATION_FAILED,
                time=when or self.now,
                operation=operation,
                reason=reason,
            )
        )

    def create(self, manifest: Creatable) -> None:
        self.creates.append(manifest)

    def delete(self, ref: ObjectRef) -> None:
        if ref not in self.deletes:
            self.deletes.append(ref)

    def wake_at(self, when: dt.datetime) -> None:
        """Run again at `when` at the latest (a time already past is due at once: see
        `rely_on_own_write`)."""
        if self.wake is None or when < self.wake:
            self.wake = when

    def wake_in(self, delay: dt.timedelta) -> None:
        self.wake_at(self.now + delay)

    def rely_on_own_write(self) -> None:
        """Run again at once: the next step is due now, and the write this pass makes (its
        status, above all) comes back through the watch and starts it. The controller adds
        nothing to its queue for this, so a pass that calls it must write something."""
        self.own_write = True

    def requeue(self) -> Requeue:
        """When to run again, from what the pass asked for: at once through its own write
        wins over any time, a time not after now is the same, and no time is none."""
        if self.own_write:
            return Requeue.AFTER_OWN_WRITE
        if self.wake is None:
            return Requeue.NONE
        return Requeue.at(self.wake, self.now)


# --- the draft of a pass ------------------------------------------------------------------------


class Pass(Protocol):
    """What the core's rules (sources.py, reads.py, leases.py, resolutions.py, approvals.py,
    realm.py) read and write of a pass of either family: a MigrationDraft or a SchemaDraft."""

    @property
    def world(self) -> FamilyWorld: ...
    @property
    def status(self) -> StatusCommon: ...
    @property
    def spec(self) -> CommonSpec: ...
    @property
    def resource(self) -> PtahMigration | PtahSchema: ...
    @property
    def namespace(self) -> str: ...
    @property
    def now(self) -> dt.datetime: ...
    @property
    def generation(self) -> int | None: ...
    @property
    def leases(self) -> list[LeaseAction]: ...

    def create(self, manifest: Creatable) -> None: ...
    def delete(self, ref: ObjectRef) -> None: ...
    def normal(self, reason: EventReason, message: str) -> None: ...
    def warning(self, reason: EventReason, message: str) -> None: ...
    def journal(self, entry: JournalEntry) -> None: ...
    def wake_at(self, when: dt.datetime) -> None: ...
    def wake_in(self, delay: dt.timedelta) -> None: ...
    def rely_on_own_write(self) -> None: ...


WorldT = TypeVar("WorldT", bound=FamilyWorld)
StatusT = TypeVar("StatusT", bound=PtahMigrationStatus | PtahSchemaStatus)


@dataclass(kw_only=True)
class Draft(Effects, Generic[WorldT, StatusT, PhaseT]):
    """One pass of a resource of either family; see the module docstring."""

    world: WorldT
    status: StatusT

    FAILED: ClassVar[MigrationPhase | SchemaPhase]
    """The family's Failed phase."""
    PLAN_KIND: ClassVar[str]
    APPROVAL_KIND: ClassVar[str]
    FAILURE_KEPT_UNDER_A_CLAIM: ClassVar[bool]
    """Whether failing again for the same reason keeps the retry time while a claim is on
    record (a migration's does; a schema's keeps it only with no claim)."""

    # --- what the family supplies --------------------------------------------------------------

    @property
    def resource(self) -> PtahMigration | PtahSchema:
        raise NotImplementedError

    @property
    def spec(self) -> CommonSpec:
        return self.resource.spec

    @property
    def stored(self) -> StatusT | None:
        """The status as the World holds it."""
        raise NotImplementedError

    def _enter(self, phase: PhaseT) -> None:
        """Set status.phase."""
        raise NotImplementedError

    def _failed(self, reason: str, message: str) -> Standing[PhaseT]:
        raise NotImplementedError

    def _observed_claims(self) -> tuple[ActiveOperation | None, ...]:
        """The claims whose generation the status describes: the claim in flight."""
        return (self.status.active_operation,)

    def _named_sources(self) -> list[SourceRecord | None]:
        """Source records beyond the claims' and the status's whose snapshot is kept."""
        return []

    def _ended_apply(self) -> str | None:
        """The operation id of the Apply whose end status records (its result record may go)."""
        raise NotImplementedError

    def _succeeded_apply(self) -> str | None:
        """The operation id of the Apply status records as having succeeded, confirmed by the
        reading after it, or None."""
        return None

    def _clean_up_more(self, claimed: str | None) -> None:
        """What else the family deletes once nothing names it."""

    def _named_plans(self) -> set[str]:
        raise NotImplementedError

    def _consumed_approvals(self) -> set[str]:
        raise NotImplementedError

    # --- what the pass looks at ----------------------------------------------------------------

    @property
    def now(self) -> dt.datetime:
        return self.world.now

    @property
    def namespace(self) -> str:
        return self.resource.metadata.namespace or ""

    @property
    def name(self) -> str:
        return self.resource.metadata.name or ""

    @property
    def uid(self) -> str:
        return self.resource.metadata.uid or ""

    @property
    def generation(self) -> int | None:
        return self.resource.metadata.generation

    # --- what the pass asks for ----------------------------------------------------------------

    def stand(self, standing: Standing[PhaseT]) -> None:
        """Put the resource where the standing says: phase, message, Ready and Progressing."""
        self._enter(standing.phase)
        conditions.kstatus(
            self.status,
            standing.reason,
            standing.message,
            progressing=standing.progressing,
            ready=standing.ready,
            now=self.now,
            generation=self.generation,
        )

    def fail(self, reason: str, message: str, *, retry: bool = True) -> None:
        """Failed: a configuration or dispatch failure, or (a migration) a run stopped before
        it selected anything (MIG-42). With `retry`, the resource starts over from resolution
        after failureRetryInterval (MIG-31, SCH-44); without, it waits for an edit. Failing
        again for the same reason keeps the retry time, so a pass that finds the same failure
        writes nothing."""
        status = self.status
        keep = (
            status.phase == self.FAILED
            and (self.FAILURE_KEPT_UNDER_A_CLAIM or status.active_operation is None)
            and conditions.ready_reason(status) == reason
            and status.next_reconciliation_time is not None
            and status.next_reconciliation_time > self.now
        )
        if not retry:
            status.next_reconciliation_time = None
        elif not keep:
            status.next_reconciliation_time = self.now + failure_retry_interval(self.resource)
        if status.next_reconciliation_time is not None:
            self.wake_at(status.next_reconciliation_time)
        conditions.record_failure(status, reason, message, self.now, self.generation)
        self.stand(self._failed(reason, message))

    # --- the end of the pass -------------------------------------------------------------------

    def finish(self) -> Decision:
        status = self.status
        observed = self.generation
        for held in self._observed_claims():
            if held is not None and held.generation is not None and observed is not None:
                observed = min(observed, held.generation)
        status.observed_generation = observed
        conditions.refresh_generation(status, observed)
        status.execution_binding = current_binding(self.world)

        stored = wire(self.stored)
        if self.entries or (status.journal is None and wire(status) != stored):
            kept = journal.started(status.journal, self.now)
            for entry in self.entries:
                kept = journal.append(kept, entry)
            status.journal = journal.bound(kept, status.plan)

        self._clean_up()
        written = wire(status)
        return Decision(
            status=written if written != stored else None,
            create=tuple(self.creates),
            delete=tuple(self.deletes),
            lease=tuple(self.leases),
            events=tuple(self.events),
            requeue=self.requeue(),
            annotations=dict(self.annotations),
        )

    def _clean_up(self) -> None:
        status = self.status
        stored = self.stored
        claim = status.active_operation
        old_claim = stored.active_operation if stored is not None else None

        named: set[str] = set()
        records = [
            stored.source if stored is not None else None,
            status.source,
            old_claim.source if old_claim is not None else None,
            claim.source if claim is not None else None,
            *self._named_sources(),
        ]
        for record in records:
            if record is not None and record.snapshot_name:
                named.add(record.snapshot_name)
        for name in sorted(self.world.snapshots - named):
            self.delete(ObjectRef("v1", "ConfigMap", self.namespace, name))

        claimed = claim.operation_id if claim is not None else None
        harvested = self._ended_apply()
        for operation_id, result in sorted(self.world.results.items()):
            if operation_id == claimed:
                continue
            if result.operation_type == OperationType.APPLY.value and operation_id != harvested:
                # An Apply's record stays until its end is on record: it may be all that is
                # left of a run whose status was lost.
                continue
            kept = result.record_name or result_record_name(operation_id)
            self.delete(ObjectRef("v1", "ConfigMap", self.namespace, kept))
        self._clean_up_more(claimed)
        self._finished_apply_job(claimed)

        if old_claim is not None and old_claim.operation_id != claimed:
            self.delete(
                ObjectRef(
                    "v1", "Secret", self.namespace, operation_secret_name(old_claim.operation_id)
                )
            )
            self._dropped_read_job(old_claim)
        self._retain()

    def _dropped_read_job(self, old_claim: ActiveOperation) -> None:
        """The Job of a read whose claim ended with no result taken (dropped, given way, past
        its cap) and that still runs goes too. Nothing will read what it reports, and its
        operation Secret goes with the claim (above): a Pod that has not mounted it yet would
        wait for it until the Job's deadline, an hour. A read changes nothing in the database.
        Only the read's own Job, by the name its type and operation give: never an Apply's,
        whatever a restored or edited claim says its type is."""
        if old_claim.type == OperationType.APPLY or old_claim.operation_id in self.world.results:
            return
        own = job_name(old_claim.type, old_claim.operation_id)
        job = self.world.jobs.get(own)
        if job is not None and job.phase == JobPhase.ACTIVE and not job.deleting:
            self.delete(ObjectRef("batch/v1", "Job", self.namespace, own))

    def _finished_apply_job(self, claimed: str | None) -> None:
        """The Job of an Apply on record as having succeeded, and confirmed by the reading after
        it, goes FINISHED_JOB_KEPT after it finished (at once if the reading came later), as a
        read's does by its TTL; a failed Apply's, or one the reading contradicts, keeps its day
        (JOB-07). Never the Job of the claim in flight: its end is not on record yet."""
        succeeded = self._succeeded_apply()
        if succeeded is None or succeeded == claimed:
            return
        for job in self.world.jobs.values():
            if job.operation_id != succeeded or job.finished_at is None:
                continue
            due = job.finished_at + FINISHED_JOB_KEPT
            if self.now >= due:
                self.delete(ObjectRef("batch/v1", "Job", self.namespace, job.name))
            else:
                self.wake_at(due)

    def _retain(self) -> None:
        """A bounded store of plans and approvals (PATH-23, retention.py); a schema plan's
        chunks are owned by it and go with it."""
        status = self.status
        claim = status.active_operation
        doomed = retention.plans_to_delete(self.world.plans, self._named_plans())
        for name in doomed:
            self.delete(ObjectRef(API_VERSION, self.PLAN_KIND, self.namespace, name))
        protected = {
            a.metadata.uid or ""
            for a in self.world.approvals
            if status.plan is not None and a.spec.plan_ref.name == status.plan.name
        }
        if claim is not None and claim.approval is not None:
            protected.add(claim.approval.uid)
        for name in retention.approvals_to_delete(
            self.world.approvals,
            plan_of={a.metadata.uid or "": a.spec.plan_ref.name for a in self.world.approvals},
            live_plans=set(self.world.plans) - set(doomed),
            consumed=self._consumed_approvals(),
            protected=protected,
        ):
            self.delete(ObjectRef(API_VERSION, self.APPROVAL_KIND, self.namespace, name))
