"""The decision under construction: one pass's working copy of the status, and what it asks for.

A pass reads the World, changes a deep copy of the status and collects the objects to create
and delete, the Lease actions, the Events, the journal entries and when to look again. At
the end, `finish` turns that into a Decision, and on the way:

- stamps observedGeneration (the generation of a claim still in flight, or ended in this pass,
  for an older spec; otherwise metadata.generation) on the status and on every condition;
- records the execution binding in use;
- writes the journal in the same status write (JNL-24): new entries, folded and bounded;
  a journal starts with the first status write that happens anyway (JNL-22);
- deletes what nothing names any more: snapshots not named by the stored status, the new
  status or a claim (SRC-CM-14: after the resolution that replaced them is stored), result
  records of reads that ended or were dropped and of a run already in lastRun, the
  operation Secret of a claim that ended, and plans and spent approvals beyond the few kept
  (retention.py, PATH-23);
- leaves `status` None when the status did not change, so a pass that found nothing new
  writes nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ptah_operator.api.constants import (
    API_VERSION,
    MigrationPhase,
    OperationType,
)
from ptah_operator.api.migration import PtahMigration, PtahMigrationSpec, PtahMigrationStatus
from ptah_operator.reconcile import conditions, journal, retention
from ptah_operator.reconcile.decision import (
    Decision,
    ObjectRef,
)
from ptah_operator.reconcile.effects import Effects, current_binding, wire
from ptah_operator.reconcile.jobs import operation_secret_name, result_record_name
from ptah_operator.reconcile.migration import approvals, standings
from ptah_operator.reconcile.migration.standings import Standing
from ptah_operator.reconcile.migration.world import MigrationWorld
from ptah_operator.reconcile.schedule import failure_retry_interval


@dataclass(kw_only=True)
class Draft(Effects):
    world: MigrationWorld
    status: PtahMigrationStatus

    @classmethod
    def begin(cls, world: MigrationWorld) -> Draft:
        stored = world.migration.status
        status = stored.model_copy(deep=True) if stored is not None else PtahMigrationStatus()
        return cls(world=world, status=status)

    # --- what the pass looks at ----------------------------------------------------------------

    @property
    def now(self) -> dt.datetime:
        return self.world.now

    @property
    def migration(self) -> PtahMigration:
        return self.world.migration

    @property
    def spec(self) -> PtahMigrationSpec:
        return self.world.migration.spec

    @property
    def stored(self) -> PtahMigrationStatus | None:
        return self.world.migration.status

    @property
    def namespace(self) -> str:
        return self.world.migration.metadata.namespace or ""

    @property
    def name(self) -> str:
        return self.world.migration.metadata.name or ""

    @property
    def uid(self) -> str:
        return self.world.migration.metadata.uid or ""

    @property
    def generation(self) -> int | None:
        return self.world.migration.metadata.generation

    # --- what the pass asks for ----------------------------------------------------------------

    def stand(self, standing: Standing) -> None:
        conditions.stand(self.status, standing, self.now, self.generation)

    def fail(self, reason: str, message: str, *, retry: bool = True) -> None:
        """Failed: a configuration or dispatch failure, or a run stopped before it selected
        anything (MIG-42). With `retry`, the resource starts over from resolution after
        failureRetryInterval (MIG-31); without, it waits for an edit. Failing again for the
        same reason keeps the retry time, so a pass that finds the same failure writes nothing.
        """
        status = self.status
        keep = (
            status.phase == MigrationPhase.FAILED
            and conditions.ready_reason(status) == reason
            and status.next_reconciliation_time is not None
            and status.next_reconciliation_time > self.now
        )
        if not retry:
            status.next_reconciliation_time = None
        elif not keep:
            status.next_reconciliation_time = self.now + failure_retry_interval(self.migration)
        if status.next_reconciliation_time is not None:
            self.wake_at(status.next_reconciliation_time)
        conditions.record_failure(status, reason, message, self.now, self.generation)
        self.stand(standings.failed(reason, message))

    # --- the end of the pass -------------------------------------------------------------------

    def finish(self) -> Decision:
        status = self.status
        claim = status.active_operation
        # A claim still in flight describes the generation it was made for; so does one that
        # ended in this pass with no new claim after it: a spec edited while it ran (an Apply
        # never gives way) is then still "not observed", and the next pass reads it.
        ended = self.stored.active_operation if self.stored is not None and claim is None else None
        observed = self.generation
        for held in (claim, ended):
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
        for record in (
            stored.source if stored is not None else None,
            status.source,
            old_claim.source if old_claim is not None else None,
            claim.source if claim is not None else None,
        ):
            if record is not None and record.snapshot_name:
                named.add(record.snapshot_name)
        last_run = status.last_run
        if (
            status.phase == MigrationPhase.VERIFYING_HISTORY
            and last_run is not None
            and last_run.source is not None
            and last_run.source.snapshot_name
        ):
            named.add(last_run.source.snapshot_name)
        for name in sorted(self.world.snapshots - named):
            self.delete(ObjectRef("v1", "ConfigMap", self.namespace, name))

        claimed = claim.operation_id if claim is not None else None
        harvested = last_run.operation_id if last_run is not None else None
        for operation_id, result in sorted(self.world.results.items()):
            if operation_id == claimed:
                continue
            if result.operation_type == OperationType.APPLY.value and operation_id != harvested:
                # A run's record stays until its end is in lastRun: it may be all that is left
                # of a run whose status was lost.
                continue
            self.delete(
                ObjectRef("v1", "ConfigMap", self.namespace, result_record_name(operation_id))
            )

        if old_claim is not None and old_claim.operation_id != claimed:
            self.delete(
                ObjectRef(
                    "v1", "Secret", self.namespace, operation_secret_name(old_claim.operation_id)
                )
            )
        self._retain()

    def _retain(self) -> None:
        """A bounded store of plans and approvals (PATH-23, retention.py)."""
        status = self.status
        claim = status.active_operation
        held = status.unresolved_run
        named = {
            ref.name
            for ref in (
                status.plan,
                claim.plan if claim is not None else None,
                status.last_run.plan if status.last_run is not None else None,
                held.plan if held is not None else None,
            )
            if ref is not None
        }
        doomed = retention.plans_to_delete(self.world.plans, named)
        for name in doomed:
            self.delete(ObjectRef(API_VERSION, "PtahMigrationPlan", self.namespace, name))
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
            consumed=approvals.consumed(status),
            protected=protected,
        ):
            self.delete(ObjectRef(API_VERSION, "PtahMigrationApproval", self.namespace, name))
