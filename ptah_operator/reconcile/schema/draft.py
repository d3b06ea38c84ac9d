"""A schema pass under construction: the working copy of the status and what it asks for.

The sibling of reconcile.migration.draft.Draft. A pass changes a deep copy of the status, collects the
objects to create and delete, the Lease actions, the Events, the journal entries and when to
look again; `finish` turns that into a Decision and on the way:

- stamps observedGeneration (the generation of a claim still in flight for an older spec,
  otherwise metadata.generation) on the status and every condition, and records the execution
  binding in use;
- writes the journal in the same status write (JNL-24), folded and bounded (journal.py);
- deletes what nothing names any more: snapshots (SRC-CM-14), result records of reads that
  ended (an Apply's stays until status.lastApply records it), the uploaded text of plans whose
  chunks exist or that were retired, and the operation Secret of a claim that ended;
- leaves `status` None when nothing changed, so a pass that found nothing new writes nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ptah_operator.api.constants import (
    API_VERSION,
    ConditionStatus,
    ConditionType,
    OperationType,
    SchemaPhase,
)
from ptah_operator.api.schema import PtahSchema, PtahSchemaSpec, PtahSchemaStatus
from ptah_operator.reconcile import conditions, journal, retention
from ptah_operator.reconcile.decision import (
    Decision,
    ObjectRef,
)
from ptah_operator.reconcile.effects import Effects, current_binding, wire
from ptah_operator.reconcile.jobs import operation_secret_name, result_record_name
from ptah_operator.reconcile.schedule import failure_retry_interval
from ptah_operator.reconcile.schema.names import plan_text_record_name
from ptah_operator.reconcile.schema.standings import Standing, failed
from ptah_operator.reconcile.schema.world import SchemaWorld


@dataclass(kw_only=True)
class SchemaDraft(Effects):
    world: SchemaWorld
    status: PtahSchemaStatus

    @classmethod
    def begin(cls, world: SchemaWorld) -> SchemaDraft:
        stored = world.schema.status
        status = stored.model_copy(deep=True) if stored is not None else PtahSchemaStatus()
        return cls(world=world, status=status)

    # --- what the pass looks at ----------------------------------------------------------------

    @property
    def now(self) -> dt.datetime:
        return self.world.now

    @property
    def schema(self) -> PtahSchema:
        return self.world.schema

    @property
    def spec(self) -> PtahSchemaSpec:
        return self.world.schema.spec

    @property
    def stored(self) -> PtahSchemaStatus | None:
        return self.world.schema.status

    @property
    def namespace(self) -> str:
        return self.world.schema.metadata.namespace or ""

    @property
    def name(self) -> str:
        return self.world.schema.metadata.name or ""

    @property
    def uid(self) -> str:
        return self.world.schema.metadata.uid or ""

    @property
    def generation(self) -> int | None:
        return self.world.schema.metadata.generation

    # --- what the pass asks for ----------------------------------------------------------------

    def stand(self, standing: Standing) -> None:
        self.status.phase = standing.phase
        conditions.kstatus(
            self.status,
            standing.reason,
            standing.message,
            progressing=standing.progressing,
            ready=standing.ready,
            now=self.now,
            generation=self.generation,
        )

    def verdict(self, converged: bool, reason: str, message: str) -> None:
        """The InSync condition: what the last coherent plan said about the database."""
        conditions.set_condition(
            self.status,
            ConditionType.IN_SYNC,
            ConditionStatus.TRUE if converged else ConditionStatus.FALSE,
            reason,
            message,
            self.now,
            self.generation,
        )

    def fail(self, reason: str, message: str, *, retry: bool = True) -> None:
        """Failed with no claim: a configuration or dispatch failure; with `retry` the resource
        starts over from resolution after failureRetryInterval (SCH-44), without it it waits
        for an edit. Failing again for the same reason keeps the retry time."""
        status = self.status
        keep = (
            status.phase == SchemaPhase.FAILED
            and status.active_operation is None
            and conditions.ready_reason(status) == reason
            and status.next_reconciliation_time is not None
            and status.next_reconciliation_time > self.now
        )
        if not retry:
            status.next_reconciliation_time = None
        elif not keep:
            status.next_reconciliation_time = self.now + failure_retry_interval(self.schema)
        if status.next_reconciliation_time is not None:
            self.wake_at(status.next_reconciliation_time)
        conditions.record_failure(status, reason, message, self.now, self.generation)
        self.stand(failed(reason, message))

    # --- the end of the pass -------------------------------------------------------------------

    def finish(self) -> Decision:
        status = self.status
        claim = status.active_operation
        observed = self.generation
        if claim is not None and claim.generation is not None and observed is not None:
            observed = min(observed, claim.generation)
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
        last_apply = status.last_apply

        named: set[str] = set()
        records = [
            stored.source if stored is not None else None,
            status.source,
            old_claim.source if old_claim is not None else None,
            claim.source if claim is not None else None,
        ]
        if last_apply is not None and last_apply.verification is None:
            records.append(last_apply.source)
        for record in records:
            if record is not None and record.snapshot_name:
                named.add(record.snapshot_name)
        for name in sorted(self.world.snapshots - named):
            self.delete(ObjectRef("v1", "ConfigMap", self.namespace, name))

        claimed = claim.operation_id if claim is not None else None
        harvested = last_apply.operation_id if last_apply is not None else None
        for operation_id, result in sorted(self.world.results.items()):
            if operation_id == claimed:
                continue
            if result.operation_type == OperationType.APPLY.value and operation_id != harvested:
                # An Apply's record stays until lastApply holds its end.
                continue
            self.delete(
                ObjectRef("v1", "ConfigMap", self.namespace, result_record_name(operation_id))
            )

        needed = {claimed} if claimed is not None else set()
        plan = status.plan
        if plan is not None and plan.operation_id is not None and not _chunked(self):
            needed.add(plan.operation_id)
        for operation_id, text in sorted(self.world.plan_texts.items()):
            if operation_id in needed:
                continue
            for index in sorted(text.pieces):
                self.delete(
                    ObjectRef(
                        "v1",
                        "ConfigMap",
                        self.namespace,
                        plan_text_record_name(operation_id, index),
                    )
                )

        if old_claim is not None and old_claim.operation_id != claimed:
            self.delete(
                ObjectRef(
                    "v1", "Secret", self.namespace, operation_secret_name(old_claim.operation_id)
                )
            )
        self._retain()

    def _retain(self) -> None:
        """A bounded store of plans and approvals (PATH-23, reconcile/retention.py); a plan's
        chunks are owned by it and go with it."""
        status = self.status
        claim = status.active_operation
        last_apply = status.last_apply
        named = {
            ref.name
            for ref in (
                status.plan,
                claim.plan if claim is not None else None,
                last_apply.plan if last_apply is not None else None,
                status.applied.plan if status.applied is not None else None,
                status.retired_plan,
            )
            if ref is not None
        }
        doomed = retention.plans_to_delete(self.world.plans, named)
        for name in doomed:
            self.delete(ObjectRef(API_VERSION, "PtahSchemaPlan", self.namespace, name))
        consumed = journal.accepted_approval_uids(status.journal)
        if last_apply is not None and last_apply.approval is not None:
            consumed.add(last_apply.approval.uid)
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
            consumed=consumed,
            protected=protected,
        ):
            self.delete(ObjectRef(API_VERSION, "PtahSchemaApproval", self.namespace, name))


def _chunked(draft: SchemaDraft) -> bool:
    """Whether status.plan's object and every one of its chunks exist."""
    ref = draft.status.plan
    if ref is None:
        return False
    plan = draft.world.plans.get(ref.name)
    if plan is None or plan.metadata.uid is None:
        return False
    return all(chunk.name in draft.world.chunks for chunk in plan.spec.chunks)
