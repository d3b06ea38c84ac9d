"""A migration pass under construction: the core Draft (reconcile/draft.py) with what a
PtahMigration's status names.

Beyond the core's rules: a claim that ended in this pass with no new claim after it still
describes the generation it was made for (a spec edited while it ran is then still "not
observed", and the next pass reads it); the snapshot of the run being confirmed (lastRun, in
VerifyingHistory) is kept; a run's result record stays until its end is in lastRun; plans
named by status.plan, the claim, lastRun or the unresolved run are kept, and approvals the
journal shows consumed may go.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptah_operator.api.common import ActiveOperation, SourceRecord
from ptah_operator.api.constants import MigrationPhase, RunOutcome, VerifiedOutcome
from ptah_operator.api.migration import PtahMigration, PtahMigrationSpec, PtahMigrationStatus
from ptah_operator.reconcile import draft
from ptah_operator.reconcile.migration import approvals, standings
from ptah_operator.reconcile.migration.standings import Standing
from ptah_operator.reconcile.migration.world import MigrationWorld


@dataclass(kw_only=True)
class MigrationDraft(draft.Draft[MigrationWorld, PtahMigrationStatus, MigrationPhase]):
    FAILED = MigrationPhase.FAILED
    PLAN_KIND = "PtahMigrationPlan"
    APPROVAL_KIND = "PtahMigrationApproval"
    FAILURE_KEPT_UNDER_A_CLAIM = True

    @classmethod
    def begin(cls, world: MigrationWorld) -> MigrationDraft:
        stored = world.migration.status
        status = stored.model_copy(deep=True) if stored is not None else PtahMigrationStatus()
        return cls(world=world, status=status)

    @property
    def resource(self) -> PtahMigration:
        return self.world.migration

    @property
    def migration(self) -> PtahMigration:
        return self.world.migration

    @property
    def spec(self) -> PtahMigrationSpec:
        return self.world.migration.spec

    @property
    def stored(self) -> PtahMigrationStatus | None:
        return self.world.migration.status

    def _enter(self, phase: MigrationPhase) -> None:
        self.status.phase = phase

    def _failed(self, reason: str, message: str) -> Standing:
        return standings.failed(reason, message)

    def _observed_claims(self) -> tuple[ActiveOperation | None, ...]:
        claim = self.status.active_operation
        stored = self.stored
        ended = stored.active_operation if stored is not None and claim is None else None
        return (claim, ended)

    def _named_sources(self) -> list[SourceRecord | None]:
        last_run = self.status.last_run
        if self.status.phase == MigrationPhase.VERIFYING_HISTORY and last_run is not None:
            return [last_run.source]
        return []

    def _ended_apply(self) -> str | None:
        last_run = self.status.last_run
        return last_run.operation_id if last_run is not None else None

    def _succeeded_apply(self) -> str | None:
        """A run confirmed by its read-back (JOB-07): a run that applied or found nothing to
        apply, whose verifying reading found the history in sync, or pending only versions the
        run did not apply. Until then, or when the reading disagrees, its Job keeps its day.
        A pending list cut short (status lists the first MAX_LISTED_VERSIONS) proves nothing
        about the versions past it, so it keeps the Job too; the run's applied list is whole
        (a plan holds at most as many versions as it may name)."""
        last_run = self.status.last_run
        if last_run is None or last_run.outcome not in (RunOutcome.APPLIED, RunOutcome.UP_TO_DATE):
            return None
        verification = last_run.verification
        if verification is None:
            return None
        if verification.outcome == VerifiedOutcome.PENDING:
            history = self.status.history
            if history is None or history.pending_count > len(history.pending_versions):
                return None
            if set(history.pending_versions) & set(last_run.applied_versions):
                return None
        elif verification.outcome != VerifiedOutcome.IN_SYNC:
            return None
        return last_run.operation_id

    def _named_plans(self) -> set[str]:
        status = self.status
        claim = status.active_operation
        held = status.unresolved_run
        return {
            ref.name
            for ref in (
                status.plan,
                claim.plan if claim is not None else None,
                status.last_run.plan if status.last_run is not None else None,
                held.plan if held is not None else None,
            )
            if ref is not None
        }

    def _consumed_approvals(self) -> set[str]:
        return approvals.consumed(self.status)
